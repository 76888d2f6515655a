"""The scheduler: which node a pod runs on, with the events ``kubectl describe pod`` shows.

Why its own module: pods are bound to a node before the kubelet starts them, as kube-scheduler
binds them, whoever made them (our controllers, or ``kubectl run``). Where a pod fits and which
node it goes to is :mod:`pyhpa.workload.placement`'s (the simulator places its pods with it
too); this module keeps the nodes' loads from the store and writes the outcome. A pod that
fits nowhere stays Pending with upstream's ``FailedScheduling`` message and is bound, oldest
first, once room appears. The controllers ask :func:`place` when they create a pod, so a pod
that fits is created bound (one write, not two); :func:`schedule_pods` binds the others.
"""

from __future__ import annotations

import math
from typing import Iterable

from pyhpa.api.timefmt import format_epoch
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBE_SCHEDULER
from pyhpa.cluster.controllers.context import PodRecord, SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import Obj, meta_of, name_of, namespace_of, spec_of, status_of
from pyhpa.cluster.apiserver.storage import Conflict, NotFound
from pyhpa.workload.placement import NodeLoad, choose_node, pod_requests, quantity

SCHEDULER_NAME = "default-scheduler"


def node_cpu_milli(node: Obj) -> float:
    """A Node's allocatable CPU in millicores (its capacity without one; inf without either)."""
    alloc = status_of(node).get("allocatable") or status_of(node).get("capacity") or {}
    return float(quantity(alloc["cpu"], True)) if "cpu" in alloc else math.inf


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
        loads[name_of(n)] = NodeLoad.of(alloc)
    snap.waiting = 0
    for rec in ctx.pods.values():
        load = loads.get(rec.node) if rec.node else None
        if load is not None:
            load.take(rec.requests)
        elif not rec.node and rec.schedulable and rec.sim.deleted_at is None:
            snap.waiting += 1
    snap.node_load = loads
    return loads


def _choose(ctx: SimulationContext, snap: Snapshot, requests: tuple[int, int]) -> str | None:
    """The node a pod of ``requests`` goes to, counted on it; None when it fits nowhere."""
    loads = node_loads(ctx, snap)
    if not snap.nodes:
        return ctx.node_names[0]  # no Node objects at all: the simulation's own node
    return choose_node(loads, requests)


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
            why = load.misfits(requests)
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
    pod leaves in one is room for another's), oldest first; mark the others Unschedulable.

    Why two ways: with thousands of pods Pending, a look at all of them for every new one
    (each pod ``pyhpa cluster`` adopts while the nodes are full) held the GIL for ~10 ms per
    pass at 10,000 pods, delaying the API server's watch events. When the waiting pods are
    settled (each found no node against the loads as they are, and told so) and no room was
    freed, none of them can fit now (loads only grew), and if no new pod fits either, the look
    at all of them would bind nothing and only report the new ones: then only those are
    looked at, with the same messages and writes in the same order."""
    nodes = tuple((name_of(n), meta_of(n).get("resourceVersion")) for n in snap.nodes)
    fresh, ctx.new_waiting = ctx.new_waiting, []
    if not ctx.room_freed and not fresh and nodes == ctx.nodes_seen:
        return  # nothing changed that could let a waiting pod fit
    settled = ctx.waiting_settled and not ctx.room_freed and nodes == ctx.nodes_seen
    ctx.room_freed, ctx.nodes_seen = False, nodes
    if settled and snap.nodes and _report_new(ctx, snap, fresh, now):
        return
    waiting = sorted(_waiting(ctx.pods.values()), key=lambda r: (r.sim.created, r.name))
    # nodes only fill up during a pass: what found no node once finds none again (many pending
    # pods of one workload cost one look)
    failed: dict[tuple[int, int], str] = {}
    settled = True  # no pod was bound after a message was worded, and every report stuck
    for rec in waiting:
        node = _choose(ctx, snap, rec.requests) if rec.requests not in failed else None
        if node is not None:
            _bind(ctx, rec, node, now)
            settled = settled and not failed
            continue
        settled = _report(ctx, snap, rec, failed, now) and settled
    ctx.waiting_settled = settled


def _report_new(ctx: SimulationContext, snap: Snapshot, fresh: list[PodRecord], now: float) -> bool:
    """Report the new waiting pods Unschedulable if none of them fits (False, doing nothing,
    when one does: then every waiting pod needs its look)."""
    loads = node_loads(ctx, snap)
    fresh = sorted((r for r in _waiting(fresh) if r.sim.uid in ctx.pods),  # not gone since
                   key=lambda r: (r.sim.created, r.name))
    if any(not load.misfits(r.requests) for r in fresh for load in loads.values()):
        return False
    failed: dict[tuple[int, int], str] = {}
    for rec in fresh:
        if not _report(ctx, snap, rec, failed, now):
            ctx.waiting_settled = False
    return True


def _report(ctx: SimulationContext, snap: Snapshot, rec: PodRecord, failed: dict[tuple[int, int], str],
            now: float) -> bool:
    """Report ``rec`` Unschedulable with the message for its requests (worded once per pass in
    ``failed``); whether the report stuck (the pod now carries that message)."""
    message = failed.get(rec.requests)
    if message is None:
        message = failed[rec.requests] = failure_message(ctx, snap, rec.requests)
    _unschedulable(ctx, rec, message, now)
    return rec.unschedulable == message


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
