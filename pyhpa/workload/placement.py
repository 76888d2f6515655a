"""Which node a pod goes to: what it requests, whether it fits a node, and the node chosen.

Why here: the embedded cluster's scheduler (:mod:`pyhpa.cluster.controllers.scheduler`) and the
simulator's nodes (:mod:`pyhpa.sim.nodes`) place pods alike, with this one implementation. A pod
fits a node when the node's allocatable CPU, memory and pod count cover what its pods already
request plus this pod's requests (upstream's NodeResourcesFit plugin,
pkg/scheduler/framework/plugins/noderesources/fit.go); among the nodes it fits, the one with the
fewest pods (by name on a tie), as a scheduler with nothing else to weigh would spread them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from pyhpa.api.quantity import Quantity

Requests = tuple[int, int]  # (CPU milli, memory bytes)


@dataclass
class NodeLoad:
    """A node's allocatable resources and what the pods bound to it request."""

    cpu: float  # milli (inf: not limited)
    memory: float  # bytes
    pods: float
    used_cpu: int = 0
    used_memory: int = 0
    used_pods: int = 0

    @staticmethod
    def of(allocatable: Mapping[str, Any]) -> "NodeLoad":
        """A node with ``allocatable`` (``cpu``/``memory``/``pods`` quantities; a missing one
        is not limited) and no pods yet."""
        cpu, memory, pods = (float(quantity(allocatable[k], k == "cpu")) if k in allocatable else math.inf
                             for k in ("cpu", "memory", "pods"))
        return NodeLoad(cpu, memory, pods)

    def take(self, requests: Requests) -> None:
        """Count a pod of ``requests`` on the node."""
        self.used_cpu += requests[0]
        self.used_memory += requests[1]
        self.used_pods += 1

    def misfits(self, requests: Requests) -> list[str]:
        """Why a pod of ``requests`` does not fit (upstream's reasons), none when it does."""
        cpu, memory = requests
        out = []
        if self.used_pods + 1 > self.pods:
            out.append("Too many pods")
        if cpu and self.used_cpu + cpu > self.cpu:
            out.append("Insufficient cpu")
        if memory and self.used_memory + memory > self.memory:
            out.append("Insufficient memory")
        return out


def choose_node(loads: Mapping[str, NodeLoad], requests: Requests) -> str | None:
    """The node a pod of ``requests`` goes to, counted on it there; None when it fits nowhere."""
    fits = [n for n in sorted(loads) if not loads[n].misfits(requests)]
    if not fits:
        return None
    node = min(fits, key=lambda n: loads[n].used_pods)
    loads[node].take(requests)
    return node


def pod_requests(spec: Mapping[str, Any]) -> Requests:
    """(CPU milli, memory bytes) a pod of ``spec`` takes on its node: its containers' requests
    (their limits where a request is missing), at least any init container's, plus the pod's
    overhead."""
    def of(c: Any) -> Requests:
        res = c.get("resources") if isinstance(c, dict) else None
        res = res if isinstance(res, dict) else {}
        req, lim = res.get("requests"), res.get("limits")
        req = req if isinstance(req, dict) else {}
        lim = lim if isinstance(lim, dict) else {}
        return (quantity(req.get("cpu", lim.get("cpu")), True),
                quantity(req.get("memory", lim.get("memory")), False))

    cpu = memory = 0
    for c in spec.get("containers") or []:
        c_cpu, c_memory = of(c)
        cpu, memory = cpu + c_cpu, memory + c_memory
    for c in spec.get("initContainers") or []:
        c_cpu, c_memory = of(c)
        cpu, memory = max(cpu, c_cpu), max(memory, c_memory)
    overhead = spec.get("overhead")
    if isinstance(overhead, dict):
        cpu += quantity(overhead.get("cpu"), True)
        memory += quantity(overhead.get("memory"), False)
    return cpu, memory


def quantity(text: Any, milli: bool) -> int:
    """A quantity in milli-units (``milli``) or units; 0 when absent or not a quantity."""
    if text is None:
        return 0
    try:
        q = Quantity.parse(str(text))
    except Exception:  # noqa: BLE001 - not a quantity: validation's business, nothing here
        return 0
    return q.milli_value() if milli else q.value()
