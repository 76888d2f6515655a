"""Nodes that share their CPU among the pods bound to them, as the kernel's CFS divides it.

Why: a pod's CPU demand is what it would use alone; on a node it never gets more than the
node's allocatable CPU in total with the other pods there. The kubelet gives each pod's cgroup
``cpu.shares`` equal to its CPU requests in millicores (at least 2, the kernel's minimum, which
is what a pod without requests gets: upstream's ``MilliCPUToShares`` in
pkg/kubelet/cm/helpers_linux.go), and under contention CFS divides the CPU in proportion to the
shares of the cgroups that want it; a pod that wants less than its proportion (or is held at its
limit) leaves the rest to the others. That is a water-filling: :func:`cfs_divide`.

:class:`NodeShares` holds the nodes' allocatable CPU and the workloads whose pods may run there;
the metrics pipelines (:mod:`pyhpa.workload.pipeline`) read each running pod's contended usage
from it, so ``kubectl top``, the metrics APIs, the HPA's view and the cAdvisor counters all show
the same. A pod on no node, or on a node it does not know, is not contended.
"""

from __future__ import annotations

import math
from typing import Iterable

from pyhpa.workload.model import SimPod, Workload

MIN_SHARES = 2.0  # the kernel's minimum cpu.shares (a pod without CPU requests gets it)


def cfs_divide(capacity: float, claims: Iterable[tuple[float, float, int]]) -> list[float]:
    """What each claim's pods get of ``capacity``: claims are (shares, want, count) -- ``count``
    pods with those shares, each wanting ``want`` (already held at its limits). CPU goes in
    proportion to shares; a pod that wants less than its proportion gets what it wants and
    the others divide the rest the same way. Per pod, in the claims' order."""
    claims = list(claims)
    out = [0.0] * len(claims)
    total_want = sum(w * n for _s, w, n in claims)
    if total_want <= capacity or not math.isfinite(capacity):
        return [w for _s, w, _n in claims]
    left = capacity
    shares_left = sum(s * n for s, _w, n in claims if n > 0)
    # The claims by want per share: those below the level are filled, the rest share the level.
    order = sorted((i for i, c in enumerate(claims) if c[2] > 0), key=lambda i: claims[i][1] / claims[i][0])
    for k, i in enumerate(order):
        shares, want, count = claims[i]
        level = left / shares_left if shares_left > 0 else 0.0
        if want <= level * shares:
            out[i] = want
            left -= want * count
            shares_left -= shares * count
            continue
        for j in order[k:]:
            out[j] = level * claims[j][0]
        break
    return out


class NodeShares:
    """The nodes' allocatable CPU (millicores) and the workloads whose pods they run.

    A pod is on the node its :attr:`SimPod.node` names. :meth:`rates` gives each running pod's
    usage at an instant, by (workload uid, node, Ready); the pods of one workload that are on
    one node and equally Ready use the same.

    Every workload's pipeline asks for the same instants in turn, and each answer depends on
    all workloads: walking them all for every pipeline's question cost O(workloads²) a step.
    So the answers are kept per :attr:`generation` -- a count every member workload (and every
    capacity change) bumps when its pods, their times or its load change -- and computed once
    per instant and generation: the rates by instant and the breakpoints by segment,
    dropped when the generation moves or every pipeline has integrated past them.
    """

    def __init__(self) -> None:
        self.capacity: dict[str, float] = {}
        self.workloads: dict[str, Workload] = {}
        self.generation = 0
        # workload uid -> the instant its pipeline has integrated up to, and how many pipelines
        # stand at each such instant: parameter history and rates before the earliest of them
        # are no longer read by anyone
        self.integrated: dict[str, float] = {}
        self._standing: dict[float, int] = {}
        # answers of the current generation (see _current)
        self._answers_generation = -1
        self._rates: dict[float, dict[tuple[str, str, bool], float]] = {}
        self._breakpoints: dict[tuple[float, float], list[float]] = {}

    def set_capacity(self, node: str, cpu_milli: float) -> None:
        if self.capacity.get(node) != cpu_milli:
            self.capacity[node] = cpu_milli
            self.generation += 1

    def forget_node(self, node: str) -> None:
        if self.capacity.pop(node, None) is not None:
            self.generation += 1

    def join(self, workload: Workload) -> None:
        """Count ``workload``'s pods as using the nodes' CPU."""
        self.workloads[workload.uid] = workload
        workload.sharing = self
        self.generation += 1

    def leave(self, workload: Workload) -> None:
        if self.workloads.pop(workload.uid, None) is not None:
            self._unstand(workload.uid)
            workload.sharing = None
            self.generation += 1

    def contended(self, pod: SimPod) -> bool:
        """Whether ``pod`` is on a node whose CPU it shares."""
        return bool(pod.node) and pod.node in self.capacity

    def rates(self, at: float) -> dict[tuple[str, str, bool], float]:
        """(workload uid, node, Ready) -> what such a running pod uses at ``at`` (millicores)."""
        self._current()
        out = self._rates.get(at)
        if out is None:
            out = self._rates[at] = self._divide(at)
        return out

    def _divide(self, at: float) -> dict[tuple[str, str, bool], float]:
        counts: dict[str, dict[tuple[str, bool], int]] = {}
        wants: dict[tuple[str, bool], float] = {}
        for uid, wl in self.workloads.items():
            ready_n = None
            for pod in wl.pods:
                node = pod.node
                if not node or node not in self.capacity or not pod.running(at):
                    continue
                if ready_n is None:
                    ready_n = wl.ready_count(at)
                ready = pod.ready(at)
                k = (uid, ready)
                if k not in wants:
                    wants[k] = wl.cpu_rate(pod, at, ready_n)
                per_node = counts.setdefault(node, {})
                per_node[k] = per_node.get(k, 0) + 1
        out: dict[tuple[str, str, bool], float] = {}
        for node, per_node in counts.items():
            keys = list(per_node)
            got = cfs_divide(self.capacity[node], [
                (self.workloads[uid].cpu_shares, wants[(uid, ready)], per_node[(uid, ready)])
                for uid, ready in keys])
            for (uid, ready), v in zip(keys, got):
                out[(uid, node, ready)] = v
        return out

    def breakpoints(self, start: float, end: float) -> list[float]:
        """Instants in (start, end) where some pod's usage on a shared node may change: any
        workload's (a pod of another workload starting on the node changes everyone's part)."""
        self._current()
        times = self._breakpoints.get((start, end))
        if times is None:
            out: set[float] = set()
            for wl in self.workloads.values():
                out.update(wl.own_breakpoints(start, end))
            times = self._breakpoints[(start, end)] = sorted(out)
        return times

    def _current(self) -> None:
        """Forget the answers of an older generation."""
        if self._answers_generation != self.generation:
            self._answers_generation = self.generation
            self._rates, self._breakpoints = {}, {}

    def horizon(self, uid: str, now: float) -> float:
        """Record that ``uid``'s pipeline integrated up to ``now``; the earliest instant any
        workload's pipeline may still integrate from (parameter history before it is not read)."""
        self._unstand(uid)
        self.integrated[uid] = now
        self._standing[now] = self._standing.get(now, 0) + 1
        earliest = min(self._standing)  # a handful of distinct instants: those of one step
        # A workload that has not integrated yet will still ask from where it started: answers
        # are dropped once every workload has passed them (or, as a bound, when many are kept;
        # an answer dropped too early is only computed again).
        if len(self.integrated) == len(self.workloads) or len(self._rates) + len(self._breakpoints) > 512:
            if self._rates and min(self._rates) < earliest:
                self._rates = {at: r for at, r in self._rates.items() if at >= earliest}
            if self._breakpoints and min(self._breakpoints)[0] < earliest:
                self._breakpoints = {k: v for k, v in self._breakpoints.items() if k[0] >= earliest}
        return earliest

    def _unstand(self, uid: str) -> None:
        was = self.integrated.pop(uid, None)
        if was is not None:
            left = self._standing[was] - 1
            if left:
                self._standing[was] = left
            else:
                del self._standing[was]
