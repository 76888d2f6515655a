"""The garbage collectors: ReplicaSets and pods whose controlling owner is gone are deleted,
pods bound to a node that is gone (upstream's pod GC), and a workload deleted in the foreground
goes once its dependents have.

Why only this much of upstream's: the server deletes or orphans dependents with their owner
(:mod:`pyhpa.cluster.apiserver.garbage_collector`); what is left here is what happens over
time: the objects the simulation creates name their controller in an owner reference, and a
foreground delete waits for terminating pods, which only their node ends. A node goes
when `pyhpa cluster` restarts with fewer ``--nodes`` (or ``kubectl delete node``): its pods are
deleted at once, and their workloads make new ones where there is room.
"""

from __future__ import annotations

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.garbage_collector import FOREGROUND, release_foreground
from pyhpa.cluster.apiserver.managed_fields import KUBE_CONTROLLER_MANAGER as KCM
from pyhpa.cluster.apiserver.storage import Conflict, NotFound
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import (
    controller_ref, is_deleting, meta_of, name_of, namespace_of, spec_of, uid_of,
)
from pyhpa.cluster.controllers.pod_control import delete_pod


def collect_garbage(ctx: SimulationContext, snap: Snapshot, now: float) -> None:
    release_foreground_owners(ctx, snap)
    for rs in snap.replicasets:
        ref = controller_ref(rs)
        if ref and ref.get("kind") == "Deployment" and ref.get("uid") not in snap.by_uid:
            ctx.delete_object(R.REPLICA_SETS.key, namespace_of(rs), name_of(rs), uid=uid_of(rs))
    for job in snap.jobs:  # a CronJob's Jobs go with it
        ref = controller_ref(job)
        if ref and ref.get("kind") == "CronJob" and ref.get("uid") not in snap.by_uid \
                and not is_deleting(job):
            ctx.delete_object(R.JOBS.key, namespace_of(job), name_of(job), uid=uid_of(job))
    owners = {"ReplicaSet", "StatefulSet", "ReplicationController", "Job", "DaemonSet"} | \
        snap.scalable_kinds
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


def release_foreground_owners(ctx: SimulationContext, snap: Snapshot) -> None:
    """End the foreground deletion of each workload none of whose dependents is left: drop its
    ``foregroundDeletion`` finalizer (its ReplicaSets wait for their pods, then it for them)."""
    owners = {ref.get("uid") for o in (*snap.replicasets, *snap.pods, *snap.jobs)
              for ref in meta_of(o).get("ownerReferences") or [] if isinstance(ref, dict)}
    kinds = ((R.DEPLOYMENTS, snap.deployments), (R.REPLICA_SETS, snap.replicasets),
             (R.STATEFUL_SETS, snap.statefulsets), (R.REPLICATION_CONTROLLERS, snap.rcs),
             (R.DAEMON_SETS, snap.daemonsets), (R.JOBS, snap.jobs), (R.CRONJOBS, snap.cronjobs))
    held = [(res, o) for res, objs in kinds for o in objs]
    held += [(snap.scalable_of[uid_of(o)], o) for o in snap.scalables
             if uid_of(o) in snap.scalable_of]
    for res, o in held:
        if is_deleting(o) and FOREGROUND in (meta_of(o).get("finalizers") or []) \
                and uid_of(o) not in owners:
            try:
                ctx.mutate_object(res.key, namespace_of(o), name_of(o), release_foreground,
                                  manager=KCM)
            except (NotFound, Conflict):
                ctx.writes += 1
