"""The ReplicaSet and ReplicationController controllers, and the same for any kind with a scale
subresource and a pod template (our Scalable, or a CRD's).

Why together: all three keep a number of interchangeable pods from one template and delete in
the ReplicaSet controller's order (Pending before Running, unready before Ready, the most
recently Ready first, the newest first); they differ only in where replicas and status live.
"""

from __future__ import annotations

import json

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBE_CONTROLLER_MANAGER as KCM
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import (
    Obj, is_deleting, meta_of, name_of, namespace_of, replicas_of, set_nonzero, spec_of, status_of, uid_of,
)
from pyhpa.cluster.controllers.pod_control import create_pod, delete_pod, pod_room, replica_ceiling
from pyhpa.cluster.apiserver.scale import read_path, write_path
from pyhpa.cluster.apiserver.columns import label_selector_string
from pyhpa.workload.model import scale_down_victims


def _replicate(ctx: SimulationContext, owner: Obj, template: Obj, desired: int, snap: Snapshot,
               now: float) -> list[Obj]:
    """Create or delete pods of ``owner`` towards ``desired``; returns the active ones."""
    pods = snap.pods_by_owner.get(uid_of(owner), [])
    active = [p for p in pods if not is_deleting(p)
              and status_of(p).get("phase") not in ("Succeeded", "Failed")]
    diff = replica_ceiling(ctx, owner, desired, snap) - len(active)
    if diff > 0:
        for _ in range(pod_room(ctx, owner, diff, snap)):
            create_pod(ctx, owner, template, snap, now)
    elif diff < 0:
        modelled = [s for p in active if (s := ctx.sim_pod(p)) is not None]
        by_uid = {uid_of(p): p for p in active}  # a pod's model carries the pod's uid
        for sim in scale_down_victims(modelled, -diff, now):
            delete_pod(ctx, by_uid[sim.uid], now, owner)
    return active


def sync_replica_owner(ctx: SimulationContext, owner: Obj, kind: str, snap: Snapshot,
                       now: float) -> None:
    """One ReplicaSet or ReplicationController: its pods towards ``spec.replicas``, its status."""
    if is_deleting(owner):
        return
    key = {"ReplicaSet": R.REPLICA_SETS.key,
           "ReplicationController": R.REPLICATION_CONTROLLERS.key}[kind]
    template = spec_of(owner).get("template")
    desired = replicas_of(owner, 1)
    if isinstance(template, dict):
        active = _replicate(ctx, owner, template, desired, snap, now)
    else:
        active = [p for p in snap.pods_by_owner.get(uid_of(owner), []) if not is_deleting(p)
                  and status_of(p).get("phase") not in ("Succeeded", "Failed")]
    min_ready = float(spec_of(owner).get("minReadySeconds") or 0)
    tlabels = meta_of(template).get("labels") or {} if isinstance(template, dict) else {}
    status: Obj = {"replicas": len(active) if isinstance(template, dict) else desired}
    status["fullyLabeledReplicas"] = sum(
        1 for p in active if all((meta_of(p).get("labels") or {}).get(k) == v
                                 for k, v in tlabels.items()))
    ready = sum(1 for p in active if ctx.pod_ready(p, now))
    avail = sum(1 for p in active if ctx.pod_available(p, now, min_ready))
    set_nonzero(status, readyReplicas=ready, availableReplicas=avail)
    status["observedGeneration"] = meta_of(owner).get("generation") or 1
    old = status_of(owner)
    keep = {k: v for k, v in old.items() if k not in (
        "replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
        "observedGeneration", "selector")}
    new_status = {**keep, **status}
    if new_status != old:
        def put(o: Obj) -> None:
            o["status"] = new_status
        ctx.mutate_object(key, namespace_of(owner), name_of(owner), put, manager=KCM,
                          subresource="status")


def sync_scalable(ctx: SimulationContext, owner: Obj, res: R.Resource, snap: Snapshot,
                  now: float) -> None:
    """A kind with a scale subresource (our Scalable, or a CRD's) whose objects carry a pod
    template at ``spec.template``: pods follow the replicas at its ``specReplicasPath``, and
    its ``statusReplicasPath`` (and a ``.status`` ``labelSelectorPath``) report them."""
    template = spec_of(owner).get("template")
    if is_deleting(owner) or not isinstance(template, dict) or res.scale is None:
        return  # without a pod template the object is someone else's: its status is theirs
    paths = res.scale
    desired = read_path(owner, paths.spec_replicas)
    if not isinstance(desired, int) or isinstance(desired, bool) or desired < 0:
        desired = 0
    active = _replicate(ctx, owner, template, desired, snap, now)
    after = {"status": json.loads(json.dumps(status_of(owner)))}
    write_path(after, paths.status_replicas, len(active))
    if paths.label_selector and paths.label_selector.startswith(".status."):
        sel = spec_of(owner).get("selector")
        if isinstance(sel, str):
            selector = sel
        elif isinstance(sel, dict):
            selector = label_selector_string(sel)
        else:
            selector = read_path(owner, paths.label_selector) or \
                _selector_from_template(template)
        write_path(after, paths.label_selector, selector)
    if after["status"] != status_of(owner):
        def put(o: Obj) -> None:
            o["status"] = after["status"]
        ctx.mutate_object(res.key, namespace_of(owner), name_of(owner), put, manager=KCM,
                          subresource="status")


def _selector_from_template(template: Obj) -> str:
    labels = meta_of(template).get("labels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
