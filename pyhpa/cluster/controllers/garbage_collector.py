"""The garbage collectors: ReplicaSets and pods whose controlling owner is gone are deleted, and
pods bound to a node that is gone (upstream's pod GC).

Why only this much of upstream's: the objects the simulation creates name their controller in an
owner reference, and ``kubectl delete deployment`` (background propagation) expects its
ReplicaSets and their pods to follow; other owners and orphaning are not simulated. A node goes
when `pyhpa cluster` restarts with fewer ``--nodes`` (or ``kubectl delete node``): its pods are
deleted at once, and their workloads make new ones where there is room.
"""

from __future__ import annotations

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import (
    controller_ref,
    is_deleting,
    name_of,
    namespace_of,
    spec_of,
    uid_of,
)
from pyhpa.cluster.controllers.pod_control import delete_pod


def collect_garbage(ctx: SimulationContext, snap: Snapshot, now: float) -> None:
    for rs in snap.replicasets:
        ref = controller_ref(rs)
        if ref and ref.get("kind") == "Deployment" and ref.get("uid") not in snap.by_uid:
            ctx.delete_object(R.REPLICA_SETS.key, namespace_of(rs), name_of(rs), uid=uid_of(rs))
    owners = {"ReplicaSet", "StatefulSet", "ReplicationController"} | snap.scalable_kinds
    for pod in snap.pods:
        ref = controller_ref(pod)
        if ref and ref.get("kind") in owners and ref.get("uid") not in snap.by_uid \
                and not is_deleting(pod):
            delete_pod(ctx, pod, now)
    nodes = {name_of(n) for n in snap.nodes}
    if not nodes:
        return  # no Node objects at all: pods run on the simulation's own node
    for pod in snap.pods:
        node = spec_of(pod).get("nodeName")
        if isinstance(node, str) and node and node not in nodes and not is_deleting(pod):
            ctx.delete_object(R.PODS.key, namespace_of(pod), name_of(pod), uid=uid_of(pod),
                              grace=0)
            rec = ctx.pods.get(uid_of(pod))
            if rec is not None:
                ctx.mark_deleted(rec, now, now)  # nothing left to terminate: gone now
