"""The namespace controller (pkg/controller/namespace): a Terminating namespace's content is
deleted again each pass (what was created meanwhile, what finalizers released), its conditions
kept current, and the namespace removed once it is empty
(``pyhpa.cluster.apiserver.namespace_deletion``)."""

from __future__ import annotations

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.namespace_deletion import progress, terminating
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import name_of


def sync_namespaces(ctx: SimulationContext, snap: Snapshot, now: float) -> None:
    for ns in ctx.store.list(R.NAMESPACES.key).items:
        if terminating(ns) and (snap.namespaces is None or name_of(ns) in snap.namespaces):
            ctx.writes += 0 if not progress(ctx.store, name_of(ns)) else 1
