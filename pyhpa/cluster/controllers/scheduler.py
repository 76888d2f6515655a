"""The scheduler: which node a pod runs on, with the events ``kubectl describe pod`` shows.

Why its own module: pods are bound to a node before the kubelet starts them, as kube-scheduler
binds them, whoever made them (our controllers, or ``kubectl run``). The controllers ask
:func:`place` when they create a pod, so it is created bound (one write, not two); a pod that
comes unbound is bound by :func:`schedule_pods`. Placement spreads pods over the schedulable
nodes (the fewest pods first), as a scheduler with nothing else to weigh would.
"""

from __future__ import annotations

import math

from pyhpa.cluster import resources as R
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import (
    Obj,
    is_deleting,
    meta_of,
    name_of,
    namespace_of,
    spec_of,
    status_of,
    uid_of,
)
from pyhpa.cluster.store import Conflict, NotFound

SCHEDULER_NAME = "default-scheduler"


def place(ctx: SimulationContext, snap: Snapshot, spec: Obj) -> str | None:
    """The node a pod of ``spec`` goes to: the schedulable node with the fewest pods (by name
    on a tie); our own when there is none. Counts the pod on that node."""
    ready = [n for n in snap.nodes if not spec_of(n).get("unschedulable")]
    if not ready:
        return ctx.node_name
    load = snap.node_load
    if load is None:  # counted once per pass, then kept up to date here
        load = snap.node_load = {name_of(n): 0 for n in ready}
        for rec in ctx.pods.values():
            if rec.node in load:
                load[rec.node] += 1
    node = min(sorted(load), key=lambda n: load[n])
    load[node] += 1
    return node


def scheduled(ctx: SimulationContext, pod: Obj, node: str) -> None:
    """The Scheduled event of ``pod``, bound to ``node``."""
    ctx.event(pod, "Scheduled", f"Successfully assigned {namespace_of(pod)}/{name_of(pod)} "
              f"to {node}", SCHEDULER_NAME)


def schedule_pods(ctx: SimulationContext, snap: Snapshot, now: float) -> None:
    """Bind every pod that waits for a node (ours to schedule: the default scheduler's) to one."""
    for pod in snap.pods:
        spec = spec_of(pod)
        if spec.get("nodeName") or is_deleting(pod) \
                or (spec.get("schedulerName") or SCHEDULER_NAME) != SCHEDULER_NAME \
                or status_of(pod).get("phase") in ("Succeeded", "Failed"):
            continue
        rec = ctx.pods.get(uid_of(pod))
        if rec is None:
            continue
        node = place(ctx, snap, spec)
        if node is None:
            continue
        _bind(ctx, pod, node, now)


def _bind(ctx: SimulationContext, pod: Obj, node: str, now: float) -> None:
    """What a Binding does: ``spec.nodeName`` set; the pod's times in the model start now."""
    def bind(o: Obj) -> None:
        o.setdefault("spec", {})["nodeName"] = node
    try:
        bound = ctx.mutate_object(R.PODS.key, namespace_of(pod), name_of(pod), bind)
    except (NotFound, Conflict):
        ctx.writes += 1
        return
    rec = ctx.pods.get(uid_of(pod))
    if rec is not None and math.isinf(rec.sim.running_at):
        ctx.start_pod(rec, node, now)
    scheduled(ctx, bound if meta_of(bound) else pod, node)
