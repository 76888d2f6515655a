"""Creating and deleting the pods of a workload controller (upstream's ``PodControl``).

Why shared: the ReplicaSet, ReplicationController, scalable-kind and StatefulSet controllers all
create pods from a template the same way (defaulted spec, owner reference, our finalizer, bound
to a node when the scheduler has one), record the same Events, and tell the usage model about
each pod at once, so its times start when the pod is created.
"""

from __future__ import annotations

import json
import math

from pyhpa.api.timefmt import format_epoch
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBE_CONTROLLER_MANAGER as KCM
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import (
    FINALIZER, Obj, meta_of, name_of, namespace_of, ordinal_of, qos_class, spec_of, uid_of,
)
from pyhpa.cluster.controllers.scheduler import SCHEDULER_NAME, place, scheduled
from pyhpa.cluster.controllers.usage import top_owner_of, track
from pyhpa.cluster.apiserver.admission import admit_pod
from pyhpa.api.names import generate_name
from pyhpa.cluster.apiserver.status import APIError
from pyhpa.cluster.apiserver.workload_defaults import default_pod
from pyhpa.workload.model import SimPod


def replica_ceiling(ctx: SimulationContext, owner: Obj, desired: int, snap: Snapshot) -> int:
    """``desired`` within the simulation's pods per workload; past it, a Warning event on the
    top-level workload says how many run."""
    limit = ctx.max_pods_per_workload
    return _bounded(ctx, owner, snap, desired, limit, "TooManyReplicas",
                    f"{owner.get('kind')} {name_of(owner)} asks for {desired} replicas: the "
                    f"simulation runs at most {limit} pods per workload (pyhpa cluster "
                    f"--max-pods-per-workload)")


def pod_room(ctx: SimulationContext, owner: Obj, wanted: int, snap: Snapshot) -> int:
    """How many of ``wanted`` new pods of ``owner`` fit within the simulation's pods in all; a
    Warning event on the top-level workload names the ones that are not created."""
    room = max(ctx.max_pods - len(ctx.pods), 0)
    return _bounded(ctx, owner, snap, wanted, room, "TooManyPods",
                    f"{wanted - room} pods of {owner.get('kind')} {name_of(owner)} are not created: "
                    f"the simulation runs at most {ctx.max_pods} pods in all (pyhpa cluster "
                    f"--max-pods)")


def _bounded(ctx: SimulationContext, owner: Obj, snap: Snapshot, wanted: int, most: int, reason: str,
             message: str) -> int:
    """``wanted`` up to ``most``; past it, the Warning event ``reason`` on the top-level workload."""
    if wanted <= most:
        return wanted
    ctx.event(top_owner_of(owner, snap), reason, message, "pyhpa-simulation", "Warning")
    return most


def create_pod(ctx: SimulationContext, owner: Obj, template: Obj, snap: Snapshot, now: float, *,
               name: str | None = None, extra_labels: dict[str, str] | None = None,
               extra_spec: Obj | None = None) -> None:
    """Create a pod of ``owner`` from ``template`` (named ``name``, else generated)."""
    tmeta = meta_of(template)
    spec = json.loads(json.dumps(spec_of(template)))
    spec.update(extra_spec or {})
    default_pod({"spec": spec})
    labels = dict(tmeta.get("labels") or {})
    labels.update(extra_labels or {})
    meta: Obj = {"namespace": namespace_of(owner), "labels": labels,
                 "creationTimestamp": format_epoch(now),
                 "finalizers": [FINALIZER],
                 "ownerReferences": [{"apiVersion": owner.get("apiVersion") or "apps/v1",
                                      "kind": owner.get("kind"), "name": name_of(owner),
                                      "uid": uid_of(owner), "controller": True,
                                      "blockOwnerDeletion": True}]}
    if name:
        meta["name"] = name
    else:
        meta["generateName"] = name_of(owner) + "-"
    if tmeta.get("annotations"):
        meta["annotations"] = dict(tmeta["annotations"])
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
           "status": {"phase": "Pending", "qosClass": qos_class(spec)}}
    if not name:
        meta["name"] = generate_name(meta.pop("generateName"))
    try:
        admit_pod(ctx.store, pod)
    except APIError as exc:  # refused (quota, limits, priority): the controller's event
        ctx.event(owner, "FailedCreate", f"Error creating: {exc.message}",
                  _component(owner), "Warning")
        return
    pod["status"]["qosClass"] = qos_class(spec)
    # bound at once when the scheduler finds it a node (it would bind it right after)
    placed = None if spec.get("nodeName") or (spec.get("schedulerName") or SCHEDULER_NAME) \
        != SCHEDULER_NAME else place(ctx, snap, spec)
    if placed is not None:
        spec["nodeName"] = placed
    node = spec.get("nodeName")
    g = ctx.groups[uid_of(top_owner_of(owner, snap))]
    created = ctx.create_object(R.PODS.key, pod, manager=KCM)
    running_at, ready_at = g.workload.params.pod_times(now) if node else (math.inf, math.inf)
    sim = SimPod(name=name_of(created), uid=uid_of(created), created=now,
                 running_at=running_at, ready_at=ready_at)
    if g.kind == "StatefulSet":
        sim.ordinal = ordinal_of(sim.name, g.name)
    rec = track(ctx, created, sim, g, snap)
    if node:
        rec.scheduled_at = now
    component = _component(owner)
    if owner.get("kind") == "StatefulSet":
        ctx.event(owner, "SuccessfulCreate",
                  f"create Pod {sim.name} in StatefulSet {name_of(owner)} successful", component)
    else:
        ctx.event(owner, "SuccessfulCreate", f"Created pod: {sim.name}", component)
    if placed is not None:
        scheduled(ctx, created, placed)


def _component(owner: Obj) -> str:
    """The controller that creates ``owner``'s pods, as its events name it."""
    return {"StatefulSet": "statefulset-controller", "Job": "job-controller",
            "DaemonSet": "daemonset-controller",
            "ReplicationController": "replication-controller"}.get(
        owner.get("kind") or "", "replicaset-controller")


def delete_pod(ctx: SimulationContext, pod: Obj, now: float, owner: Obj | None = None) -> None:
    """Delete ``pod`` with its grace period; an Event on ``owner`` when one asked for it."""
    spec_grace = spec_of(pod).get("terminationGracePeriodSeconds")
    grace = spec_grace if isinstance(spec_grace, int) and spec_grace > 0 else 30
    ctx.delete_object(R.PODS.key, namespace_of(pod), name_of(pod), uid=uid_of(pod), grace=grace)
    rec = ctx.pods.get(uid_of(pod))
    if rec is not None and rec.sim.deleted_at is None:
        ctx.mark_deleted(rec, now)
    if owner is not None:
        if owner.get("kind") == "StatefulSet":
            ctx.event(owner, "SuccessfulDelete",
                      f"delete Pod {name_of(pod)} in StatefulSet {name_of(owner)} successful",
                      "statefulset-controller")
        else:
            component = {"Job": "job-controller", "DaemonSet": "daemonset-controller",
                         "ReplicationController": "replication-controller"}.get(
                owner.get("kind") or "", "replicaset-controller")
            ctx.event(owner, "SuccessfulDelete", f"Deleted pod: {name_of(pod)}", component)
