"""The scheduler: which node a pod runs on, with the events ``kubectl describe pod`` shows.

Why its own module: pods are bound to a node before the kubelet starts them, as kube-scheduler
binds them, whoever made them (our controllers, or ``kubectl run``). A pod fits a node when the
node's allocatable CPU, memory and pod count cover what its pods already request plus this
pod's requests (upstream's NodeResourcesFit); among the nodes it fits, the one with the fewest
pods (by name on a tie), as a scheduler with nothing else to weigh would spread them. A pod that
fits nowhere stays Pending with upstream's ``FailedScheduling`` message and is bound, oldest
first, once room appears. The controllers ask :func:`place` when they create a pod, so a pod
that fits is created bound (one write, not two); :func:`schedule_pods` binds the others.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from pyhpa.api.quantity import Quantity
from pyhpa.api.timefmt import format_epoch
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBE_SCHEDULER
from pyhpa.cluster.controllers.context import NodeLoad, PodRecord, SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import Obj, meta_of, name_of, namespace_of, spec_of, status_of
from pyhpa.cluster.apiserver.storage import Conflict, NotFound

SCHEDULER_NAME = "default-scheduler"


def pod_requests(spec: Obj) -> tuple[int, int]:
    """(CPU milli, memory bytes) a pod takes on its node: its containers' requests (their limits
    where a request is missing), at least any init container's, plus the pod's overhead."""
    def of(c: Any) -> tuple[int, int]:
        res = c.get("resources") if isinstance(c, dict) else None
        res = res if isinstance(res, dict) else {}
        req, lim = res.get("requests"), res.get("limits")
        req = req if isinstance(req, dict) else {}
        lim = lim if isinstance(lim, dict) else {}
        return (_quantity(req.get("cpu", lim.get("cpu")), True),
                _quantity(req.get("memory", lim.get("memory")), False))

    cpu = memory = 0
    for c in spec.get("containers") or []:
        c_cpu, c_memory = of(c)
        cpu, memory = cpu + c_cpu, memory + c_memory
    for c in spec.get("initContainers") or []:
        c_cpu, c_memory = of(c)
        cpu, memory = max(cpu, c_cpu), max(memory, c_memory)
    overhead = spec.get("overhead")
    if isinstance(overhead, dict):
        cpu += _quantity(overhead.get("cpu"), True)
        memory += _quantity(overhead.get("memory"), False)
    return cpu, memory


def _quantity(text: Any, milli: bool) -> int:
    if text is None:
        return 0
    try:
        q = Quantity.parse(str(text))
    except Exception:  # noqa: BLE001 - not a quantity: validation's business, nothing here
        return 0
    return q.milli_value() if milli else q.value()


def node_cpu_milli(node: Obj) -> float:
    """A Node's allocatable CPU in millicores (its capacity without one; inf without either)."""
    alloc = status_of(node).get("allocatable") or status_of(node).get("capacity") or {}
    return float(_quantity(alloc["cpu"], True)) if "cpu" in alloc else math.inf


def node_loads(ctx: SimulationContext, snap: Snapshot) -> dict[str, NodeLoad]:
    """Each schedulable node's allocatable resources and what its pods request, and how many
    pods wait for a node; counted once per pass (a pod counts on its node until it is gone),
    then kept up to date here."""
    if snap.node_load is not None:
        return snap.node_load
    loads: dict[str, NodeLoad] = {}
    for n in snap.nodes:
        if spec_of(n).get("unschedulable"):
            continue
        alloc = status_of(n).get("allocatable") or status_of(n).get("capacity") or {}
        loads[name_of(n)] = NodeLoad(*(
            float(_quantity(alloc[k], k == "cpu")) if k in alloc else math.inf
            for k in ("cpu", "memory", "pods")))
    snap.waiting = 0
    for rec in ctx.pods.values():
        load = loads.get(rec.node) if rec.node else None
        if load is not None:
            _take(load, rec.requests)
        elif not rec.node and rec.schedulable and rec.sim.deleted_at is None:
            snap.waiting += 1
    snap.node_load = loads
    return loads


def _take(load: NodeLoad, requests: tuple[int, int]) -> None:
    load.used_cpu += requests[0]
    load.used_memory += requests[1]
    load.used_pods += 1


def _misfits(load: NodeLoad, requests: tuple[int, int]) -> list[str]:
    """Why a pod does not fit a node (upstream's reasons), none when it does."""
    cpu, memory = requests
    out = []
    if load.used_pods + 1 > load.pods:
        out.append("Too many pods")
    if cpu and load.used_cpu + cpu > load.cpu:
        out.append("Insufficient cpu")
    if memory and load.used_memory + memory > load.memory:
        out.append("Insufficient memory")
    return out


def _choose(ctx: SimulationContext, snap: Snapshot, requests: tuple[int, int]) -> str | None:
    """The node a pod of ``requests`` goes to, counted on it; None when it fits nowhere."""
    loads = node_loads(ctx, snap)
    if not snap.nodes:
        return ctx.node_names[0]  # no Node objects at all: the simulation's own node
    fits = [n for n in sorted(loads) if not _misfits(loads[n], requests)]
    if not fits:
        return None
    node = min(fits, key=lambda n: loads[n].used_pods)
    _take(loads[node], requests)
    return node


def place(ctx: SimulationContext, snap: Snapshot, spec: Obj) -> str | None:
    """The node a new pod of ``spec`` is created on, or None to create it Pending: when it fits
    nowhere, or older pods wait for room (they come first)."""
    node_loads(ctx, snap)
    node = None if snap.waiting else _choose(ctx, snap, pod_requests(spec))
    if node is None:
        snap.waiting += 1
    return node


def _waiting(recs: Iterable[PodRecord]) -> Iterable[PodRecord]:
    return (r for r in recs if not r.node and r.schedulable and r.sim.deleted_at is None)


def failure_message(ctx: SimulationContext, snap: Snapshot, requests: tuple[int, int]) -> str:
    """Why a pod fits no node, worded as kube-scheduler's FitError (with its preemption part:
    every pod here has the same priority, so there is never a victim)."""
    loads = node_loads(ctx, snap)
    total = len(snap.nodes)
    reasons: dict[str, int] = {}
    preemption: dict[str, int] = {}
    for n in snap.nodes:
        load = loads.get(name_of(n))
        if load is None:  # cordoned
            why = ["node(s) were unschedulable"]
            preemption["Preemption is not helpful for scheduling"] = \
                preemption.get("Preemption is not helpful for scheduling", 0) + 1
        else:
            why = _misfits(load, requests)
            preemption["No preemption victims found for incoming pod"] = \
                preemption.get("No preemption victims found for incoming pod", 0) + 1
        for r in why:
            reasons[r] = reasons.get(r, 0) + 1
    found = ", ".join(sorted(f"{v} {k}" for k, v in reasons.items()))
    after = ", ".join(sorted(f"{v} {k}" for k, v in preemption.items()))
    return (f"0/{total} nodes are available: {found}. "
            f"preemption: 0/{total} nodes are available: {after}.")


def scheduled(ctx: SimulationContext, pod: Obj, node: str) -> None:
    """The Scheduled event of ``pod``, bound to ``node``."""
    ctx.event(pod, "Scheduled", f"Successfully assigned {namespace_of(pod)}/{name_of(pod)} "
              f"to {node}", SCHEDULER_NAME)


def schedule_pods(ctx: SimulationContext, snap: Snapshot, now: float) -> None:
    """Bind the pods that wait for a node (the default scheduler's, of every namespace: room a
    pod leaves in one is room for another's), oldest first; mark the others Unschedulable."""
    nodes = tuple((name_of(n), meta_of(n).get("resourceVersion")) for n in snap.nodes)
    if not ctx.room_freed and nodes == ctx.nodes_seen:
        return  # nothing changed that could let a waiting pod fit
    ctx.room_freed, ctx.nodes_seen = False, nodes
    waiting = sorted(_waiting(ctx.pods.values()), key=lambda r: (r.sim.created, r.name))
    # nodes only fill up during a pass: what found no node once finds none again (many pending
    # pods of one workload cost one look)
    failed: dict[tuple[int, int], str] = {}
    for rec in waiting:
        message = failed.get(rec.requests)
        node = _choose(ctx, snap, rec.requests) if message is None else None
        if node is not None:
            _bind(ctx, rec, node, now)
            continue
        if message is None:
            message = failed[rec.requests] = failure_message(ctx, snap, rec.requests)
        _unschedulable(ctx, rec, message, now)


def _bind(ctx: SimulationContext, rec: PodRecord, node: str, now: float) -> None:
    """What a Binding does: ``spec.nodeName`` set, the PodScheduled condition True; the pod's
    times in the model start now."""
    def bind(o: Obj) -> None:
        o.setdefault("spec", {})["nodeName"] = node
        status = o.get("status")
        if isinstance(status, dict) and status.get("conditions"):
            status["conditions"] = [c for c in status["conditions"]
                                    if c.get("type") != "PodScheduled"]
    try:
        # a Binding: upstream records it in no managedFields entry
        bound = ctx.mutate_object(R.PODS.key, rec.namespace, rec.name, bind, manager="")
    except (NotFound, Conflict):
        ctx.writes += 1
        ctx.room_freed = True  # try again next pass
        return
    ctx.start_pod(rec, node, now)
    scheduled(ctx, bound, node)


def _unschedulable(ctx: SimulationContext, rec: PodRecord, message: str, now: float) -> None:
    """The pod's PodScheduled condition False with why, and a FailedScheduling event, when the
    reason is new."""
    if rec.unschedulable == message:
        return
    pod = ctx.store.try_get(R.PODS.key, rec.namespace, rec.name)
    if pod is None:
        return
    cond = next((c for c in status_of(pod).get("conditions") or []
                 if c.get("type") == "PodScheduled"), None)
    if cond is not None and cond.get("status") == "False" and cond.get("message") == message:
        rec.unschedulable = message  # reported before (by an earlier run of ours)
        return
    new = {"type": "PodScheduled", "status": "False", "lastProbeTime": None,
           "lastTransitionTime": format_epoch(now), "reason": "Unschedulable", "message": message}

    def put(o: Obj) -> None:
        status = o.setdefault("status", {})
        status.setdefault("phase", "Pending")
        status["conditions"] = [c for c in status.get("conditions") or []
                                if c.get("type") != "PodScheduled"] + [new]
    try:
        pod = ctx.mutate_object(R.PODS.key, rec.namespace, rec.name, put,
                                manager=KUBE_SCHEDULER, subresource="status")
    except (NotFound, Conflict):
        ctx.writes += 1
        return
    rec.unschedulable = message
    ctx.event(pod, "FailedScheduling", message, SCHEDULER_NAME, "Warning")
