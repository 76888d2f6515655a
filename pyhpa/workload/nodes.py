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

import bisect
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

    A pod is on the node its :attr:`SimPod.node` names. :meth:`on_node` gives the usage of each
    running pod on a node at an instant, by (workload uid, Ready); the pods of one workload that
    are on one node and equally Ready use the same. :meth:`breakpoints` gives the instants where
    any member workload's pods or load change.

    Every workload's pipeline asks these questions in turn, and a member workload changes
    whenever one of its pods is created, bound, Ready or deleted (``pyhpa cluster`` adopting a
    bare pod is a workload joining). Why the answers are kept by node and the instants in one
    sorted list, both brought up to date per changed workload: with one generation for
    everything, each change made the next question walk every workload (O(workloads) per pod
    written; with 10,000 bare pods that held the GIL for tens of ms and delayed the API
    server's watch events). A node's answers depend only on its capacity and on the workloads
    with pods on it, so a change drops only those nodes' answers (a node's generation), and a
    changed workload only moves its own instants in and out of the sorted list, so the
    instants in an interval are two bisections. Changes are noted when they happen
    (:meth:`changed`) and applied at the next question: a pod's node may be set right after
    the change that created it.
    """

    def __init__(self) -> None:
        self.capacity: dict[str, float] = {}
        self.workloads: dict[str, Workload] = {}
        # workload uid -> when it joined: a node's claims go in the order of self.workloads, as
        # cfs_divide's sums (floating point) depend on their order
        self._joined: dict[str, int] = {}
        self._joins = 0
        # workload uid -> whether its pods' usage may have changed (else only its instants):
        # changes not yet applied
        self._dirty: dict[str, bool] = {}
        self._placed: dict[str, dict[str, list[SimPod]]] = {}  # workload uid -> node -> its pods there
        self._members: dict[str, set[str]] = {}  # node -> uids of the workloads with pods on it
        # node -> instant -> (workload uid, Ready) -> usage: the answers of the node's generation
        self._answers: dict[str, dict[float, dict[tuple[str, bool], float]]] = {}
        self._kept = 0  # answers kept (bounded in horizon)
        self._oldest = math.inf  # the earliest instant of a kept answer
        # The instants of every member (each counted once per workload that has it), sorted
        # and distinct in _instants; _own is each workload's part.
        self._own: dict[str, frozenset[float]] = {}
        self._counts: dict[float, int] = {}
        self._instants: list[float] = []
        # workload uid -> the instant its pipeline has integrated up to, and how many pipelines
        # stand at each such instant: parameter history and answers before the earliest of them
        # are no longer read by anyone
        self.integrated: dict[str, float] = {}
        self._standing: dict[float, int] = {}

    def set_capacity(self, node: str, cpu_milli: float) -> None:
        if self.capacity.get(node) != cpu_milli:
            self.capacity[node] = cpu_milli
            self._drop(node)

    def forget_node(self, node: str) -> None:
        if self.capacity.pop(node, None) is not None:
            self._drop(node)

    def join(self, workload: Workload) -> None:
        """Count ``workload``'s pods as using the nodes' CPU."""
        if workload.uid not in self.workloads:
            self._joins += 1
            self._joined[workload.uid] = self._joins
        self.workloads[workload.uid] = workload
        workload.sharing = self
        self.changed(workload)

    def leave(self, workload: Workload) -> None:
        uid = workload.uid
        if self.workloads.pop(uid, None) is not None:
            self._unstand(uid)
            workload.sharing = None
            del self._joined[uid]
            self._dirty.pop(uid, None)
            self._place(uid, {})
            self._count(self._own.pop(uid, frozenset()), -1)

    def changed(self, workload: Workload, usage: bool = True) -> None:
        """``workload``'s pods, their times or nodes, its shares or load changed (``usage``
        False: only the instants it keeps, as when old parameter history is dropped)."""
        uid = workload.uid
        self._dirty[uid] = usage or self._dirty.get(uid, False)

    def contended(self, pod: SimPod) -> bool:
        """Whether ``pod`` is on a node whose CPU it shares."""
        return bool(pod.node) and pod.node in self.capacity

    def on_node(self, node: str, at: float) -> dict[tuple[str, bool], float]:
        """(workload uid, Ready) -> what such a running pod on ``node`` uses at ``at``
        (millicores); empty for a node whose CPU nobody shares."""
        if self._dirty:
            self._apply()
        capacity = self.capacity.get(node)
        if capacity is None:
            return {}
        by_at = self._answers.get(node)
        if by_at is None:
            by_at = self._answers[node] = {}
        out = by_at.get(at)
        if out is None:
            out = by_at[at] = self._divide(node, capacity, at)
            self._kept += 1
            self._oldest = min(self._oldest, at)
        return out

    def _divide(self, node: str, capacity: float, at: float) -> dict[tuple[str, bool], float]:
        wants: dict[tuple[str, bool], float] = {}
        counts: dict[tuple[str, bool], int] = {}
        for uid in sorted(self._members.get(node, ()), key=self._joined.__getitem__):
            wl = self.workloads[uid]
            ready_n = None
            for pod in self._placed[uid][node]:
                if not pod.running(at):
                    continue
                if ready_n is None:
                    ready_n = wl.ready_count(at)
                k = (uid, pod.ready(at))
                if k not in wants:  # the same for every pod of the workload equally Ready
                    wants[k] = wl.cpu_rate(pod, at, ready_n)
                counts[k] = counts.get(k, 0) + 1
        keys = list(counts)
        got = cfs_divide(capacity, [(self.workloads[uid].cpu_shares, wants[(uid, ready)], counts[(uid, ready)])
                                    for uid, ready in keys])
        return dict(zip(keys, got))

    def breakpoints(self, start: float, end: float) -> list[float]:
        """Instants in (start, end) where some pod's usage on a shared node may change: any
        workload's (a pod of another workload starting on the node changes everyone's part)."""
        if self._dirty:
            self._apply()
        times = self._instants
        return times[bisect.bisect_right(times, start):bisect.bisect_left(times, end)]

    def _apply(self) -> None:
        """Bring the nodes' answers and the instants up to the changes noted."""
        dirty, self._dirty = self._dirty, {}
        for uid, usage in dirty.items():
            wl = self.workloads.get(uid)
            if wl is None:
                continue
            if usage:
                placed: dict[str, list[SimPod]] = {}
                for pod in wl.pods:
                    if pod.node:
                        placed.setdefault(pod.node, []).append(pod)
                self._place(uid, placed)
            own = frozenset(wl.own_times())
            old = self._own.get(uid, frozenset())
            if own != old:
                self._own[uid] = own
                self._count(old - own, -1)
                self._count(own - old, 1)

    def _place(self, uid: str, placed: dict[str, list[SimPod]]) -> None:
        """Record where ``uid``'s pods are; the nodes it was or is on start a new generation."""
        old = self._placed.pop(uid, {})
        if placed:
            self._placed[uid] = placed
        for node in old.keys() | placed.keys():
            self._drop(node)
            members = self._members.setdefault(node, set())
            if node in placed:
                members.add(uid)
            else:
                members.discard(uid)
                if not members:
                    del self._members[node]

    def _count(self, times: Iterable[float], delta: int) -> None:
        counts, instants = self._counts, self._instants
        for t in times:
            n = counts.get(t, 0) + delta
            if n:
                if t not in counts:
                    bisect.insort(instants, t)
                counts[t] = n
            else:
                del counts[t]
                del instants[bisect.bisect_left(instants, t)]

    def _drop(self, node: str) -> None:
        """A new generation of ``node``: its answers no longer hold."""
        by_at = self._answers.pop(node, None)
        if by_at:
            self._kept -= len(by_at)

    def horizon(self, uid: str, now: float) -> float:
        """Record that ``uid``'s pipeline integrated up to ``now``; the earliest instant any
        workload's pipeline may still integrate from (parameter history before it is not read)."""
        self._unstand(uid)
        self.integrated[uid] = now
        self._standing[now] = self._standing.get(now, 0) + 1
        earliest = min(self._standing)  # a handful of distinct instants: those of one step
        # A workload that has not integrated yet will still ask from where it started: answers
        # are dropped once every workload has passed them, and all of them when many are kept
        # (an answer dropped too early is only computed again, the same).
        if len(self.integrated) == len(self.workloads) or self._kept > 512:
            if self._oldest < earliest:
                self._prune(earliest)
            if self._kept > 512:
                self._prune(math.inf)
        return earliest

    def _prune(self, before: float) -> None:
        """Drop the answers for instants before ``before``."""
        kept, oldest = 0, math.inf
        for node in list(self._answers):
            by_at = {at: r for at, r in self._answers[node].items() if at >= before}
            if by_at:
                self._answers[node] = by_at
                kept += len(by_at)
                oldest = min(oldest, min(by_at))
            else:
                del self._answers[node]
        self._kept, self._oldest = kept, oldest

    def _unstand(self, uid: str) -> None:
        was = self.integrated.pop(uid, None)
        if was is not None:
            left = self._standing[was] - 1
            if left:
                self._standing[was] = left
            else:
                del self._standing[was]
