"""The simulator's nodes and quotas: which new pods are created, where they run, and the CPU
they share there.

Why: the embedded cluster admits a ReplicaSet's pod through the ResourceQuota plugin and binds
it with its scheduler; the simulator does the same with the same rules
(:mod:`pyhpa.workload.quota`, :mod:`pyhpa.workload.placement`) on its virtual clock, and its
pipelines read contended usage from the same :class:`~pyhpa.workload.nodes.NodeShares`. A pod a
quota refuses is not created: the workload records upstream's ``FailedCreate`` event once per
new reason and runs fewer pods than its replicas, retrying as the model advances (as the
ReplicaSet controller retries). A pod that fits no node is created Pending, with no node, and is
bound oldest first once room appears, at the next instant of the run's grid (its startup counts
from then).

A pod counts on its node and against its quota until it is gone (termination included).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from pyhpa.api.quantity import Quantity
from pyhpa.workload.model import SimPod, Workload
from pyhpa.workload.nodes import NodeShares
from pyhpa.workload.placement import NodeLoad, Requests, choose_node, pod_requests, quantity
from pyhpa.workload.quota import add_usage, forbidden_message, pod_usage, refusal
from pyhpa.sim.scenario_nodes import NodeSpec, QuotaSpec

__all__ = ["PodAdmission", "PodGate"]


def _exists(pod: SimPod, now: float) -> bool:
    return pod.gone_at is None or now < pod.gone_at


@dataclass
class PodGate:
    """One workload's door: its pod template, what a pod of it requests and counts against a
    quota; :class:`~pyhpa.workload.model.Workload` asks it before and after creating a pod."""

    admission: "PodAdmission"
    key: tuple[str, str, str]  # (namespace, kind, name)
    pod: dict[str, Any]  # {"spec": the pod template's spec}
    requests: Requests = (0, 0)
    usage: dict[str, Quantity] = field(default_factory=dict)
    refused: str | None = None  # the reason of the refusal in force (None once a pod is created)
    failed_creates: list[tuple[float, str]] = field(default_factory=list)  # (t, event message)

    def admit(self, wl: Workload, now: float) -> bool:
        return self.admission.admit(self, wl, now)

    def place(self, wl: Workload, pod: SimPod, now: float) -> None:
        self.admission.place(self, wl, pod, now)


class PodAdmission:
    """The run's nodes and quotas, and the workloads whose pods they hold."""

    def __init__(self, nodes: list[NodeSpec], quotas: list[QuotaSpec]) -> None:
        self.nodes = {n.name: n.allocatable for n in nodes}
        self.quotas: dict[str, list[QuotaSpec]] = {}
        for quota in sorted(quotas, key=lambda x: x.name):  # as the API server lists them
            self.quotas.setdefault(quota.namespace, []).append(quota)
        self.shares = NodeShares()
        for name, alloc in self.nodes.items():
            self.shares.set_capacity(name, float(quantity(alloc["cpu"], True)) if "cpu" in alloc else math.inf)
        self.members: list[tuple[PodGate, Workload]] = []
        self._joined: set[str] = set()  # the members' uids
        self.waiting: list[tuple[PodGate, Workload, SimPod]] = []  # created Pending, oldest first

    @property
    def active(self) -> bool:
        """Whether it changes anything (else the simulator runs without it, as it always did)."""
        return bool(self.nodes or self.quotas)

    def gate(self, key: tuple[str, str, str], template: Mapping[str, Any]) -> PodGate:
        """The gate of the workload ``key`` whose pods are made from ``template`` (its pod template)."""
        spec = dict(template.get("spec") or {})
        pod = {"spec": spec}
        return PodGate(self, key, pod, pod_requests(spec), pod_usage(pod))

    def _join(self, gate: PodGate, wl: Workload) -> None:
        if wl.uid not in self._joined:
            self._joined.add(wl.uid)
            self.members.append((gate, wl))
            if self.nodes:
                self.shares.join(wl)

    # ----------------------------------------------------------------- quota

    def admit(self, gate: PodGate, wl: Workload, now: float) -> bool:
        """Whether the namespace's quotas admit one more pod of ``wl``; a new refusal is
        recorded as the workload controller's FailedCreate event."""
        self._join(gate, wl)
        quotas = self.quotas.get(wl.namespace)
        if not quotas:
            return True
        used: dict[str, Quantity] = {}
        for g, w in self.members:
            if w.namespace == wl.namespace:
                add_usage(used, g.usage, sum(1 for p in w.pods if _exists(p, now)))
        for quota in quotas:
            reason = refusal(quota.name, quota.hard, used, gate.pod)
            if reason is None:
                continue
            if reason != gate.refused:
                gate.refused = reason
                refused = forbidden_message(wl.generate_name(), reason)
                message = (f"create Pod {wl.generate_name()} in StatefulSet {wl.name} failed error: {refused}"
                           if wl.kind == "StatefulSet" else f"Error creating: {refused}")
                gate.failed_creates.append((now, message))
            return False
        gate.refused = None
        return True

    # ----------------------------------------------------------------- nodes

    def _loads(self, now: float) -> dict[str, NodeLoad]:
        """Each node with what the pods bound to it (and not gone) request."""
        loads = {name: NodeLoad.of(alloc) for name, alloc in self.nodes.items()}
        for g, w in self.members:
            for p in w.pods:
                load = loads.get(p.node) if p.node else None
                if load is not None and _exists(p, now):
                    load.take(g.requests)
        return loads

    def place(self, gate: PodGate, wl: Workload, pod: SimPod, now: float) -> None:
        """Bind a new pod to the node it fits best; Pending with no node when it fits none, or
        older pods wait for room (they come first)."""
        if not self.nodes:
            return
        node = None if self.waiting else choose_node(self._loads(now), gate.requests)
        if node is None:
            wl.set_times(pod, math.inf, math.inf)
            self.waiting.append((gate, wl, pod))
            return
        pod.node = node

    def schedule(self, now: float) -> None:
        """Bind the pods that wait for a node, oldest first, where they fit now."""
        if not self.waiting:
            return
        loads = self._loads(now)
        still = []
        for gate, wl, pod in self.waiting:
            if pod.deleted_at is not None:
                continue  # deleted while Pending: it never runs
            node = choose_node(loads, gate.requests)
            if node is None:
                still.append((gate, wl, pod))
                continue
            pod.node = node
            wl.set_times(pod, *wl.params.pod_times(now))
        self.waiting = still
