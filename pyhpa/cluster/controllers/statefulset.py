"""The StatefulSet controller: ordinal pods (``web-0``, ``web-1``, ...), one at a time under
``OrderedReady`` or all at once under ``Parallel``, rolling updates by revision from the highest
ordinal down to the partition, and the status ``kubectl rollout status`` reads. Each template
is recorded as a ControllerRevision (:mod:`.history`), named as the pods' revision label and the
status' revisions name it, for ``kubectl rollout history`` and ``undo``.
"""

from __future__ import annotations

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBE_CONTROLLER_MANAGER as KCM
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import (
    STS_POD_INDEX_LABEL, STS_POD_NAME_LABEL, STS_REVISION_LABEL, Obj, is_deleting, meta_of, name_of,
    namespace_of, ordinal_of, replicas_of, set_nonzero, spec_of, status_of, template_hash, uid_of,
)
from pyhpa.cluster.controllers.history import sync_revisions
from pyhpa.cluster.controllers.pod_control import create_pod, delete_pod, pod_room, replica_ceiling
from pyhpa.cluster.controllers.volume import ensure_claims


def sync_statefulset(ctx: SimulationContext, sts: Obj, snap: Snapshot, now: float) -> None:
    if is_deleting(sts):
        return
    spec = spec_of(sts)
    desired = replica_ceiling(ctx, sts, replicas_of(sts, 1), snap)
    template = spec.get("template") or {}
    ordered = (spec.get("podManagementPolicy") or "OrderedReady") == "OrderedReady"
    name = name_of(sts)
    hash_ = template_hash(template)
    revision = f"{name}-{hash_}"
    pods: dict[int, Obj] = {}
    for p in snap.pods_by_owner.get(uid_of(sts), []):
        i = ordinal_of(name_of(p), name)
        if i is not None:
            pods[i] = p
    live = {(meta_of(p).get("labels") or {}).get(STS_REVISION_LABEL) or "" for p in pods.values()}
    live |= {status_of(sts).get("currentRevision") or "", status_of(sts).get("updateRevision") or ""}
    sync_revisions(ctx, sts, template, revision, hash_, live, now)
    min_ready = float(spec.get("minReadySeconds") or 0)

    def healthy(p: Obj) -> bool:
        return not is_deleting(p) and ctx.pod_ready(p, now)

    acted = False
    for i in range(desired):  # create missing ordinals (in order when OrderedReady)
        p = pods.get(i)
        if p is None:
            if not pod_room(ctx, sts, 1, snap):
                break
            extra: Obj = {"hostname": f"{name}-{i}"}
            if spec.get("serviceName"):
                extra["subdomain"] = spec["serviceName"]
            claims = ensure_claims(ctx, sts, i)
            if claims:  # the claim volumes replace template volumes of the same name
                named = {v["name"] for v in claims}
                extra["volumes"] = [v for v in spec_of(template).get("volumes") or []
                                    if isinstance(v, dict) and v.get("name") not in named] \
                    + claims
            create_pod(ctx, sts, template, snap, now, name=f"{name}-{i}", extra_spec=extra,
                       extra_labels={STS_REVISION_LABEL: revision,
                                     STS_POD_NAME_LABEL: f"{name}-{i}",
                                     STS_POD_INDEX_LABEL: str(i)})
            acted = True
            if ordered:
                break
        elif ordered and not healthy(p):
            acted = True  # wait for this one before touching the next
            break
    condemned = sorted((i for i in pods if i >= desired), reverse=True)
    if condemned and not (ordered and acted):
        terminating = any(is_deleting(p) for p in pods.values())
        if not ordered:
            for i in condemned:
                if not is_deleting(pods[i]):
                    delete_pod(ctx, pods[i], now, sts)
        elif not terminating and all(healthy(pods[i]) for i in pods if i < desired):
            delete_pod(ctx, pods[condemned[0]], now, sts)
        acted = True
    strategy = (spec.get("updateStrategy") or {})
    if not acted and (strategy.get("type") or "RollingUpdate") == "RollingUpdate":
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        stale = sorted((i for i, p in pods.items() if i < desired and i >= partition
                        and (meta_of(p).get("labels") or {}).get(STS_REVISION_LABEL) != revision),
                       reverse=True)
        if stale and all(healthy(p) for p in pods.values()):
            delete_pod(ctx, pods[stale[0]], now, sts)
    # status
    existing = list(pods.values())
    old = status_of(sts)
    updated = sum(1 for p in existing
                  if (meta_of(p).get("labels") or {}).get(STS_REVISION_LABEL) == revision)
    current_rev = old.get("currentRevision") or revision
    if updated == desired and len(existing) == desired and all(healthy(p) for p in existing):
        current_rev = revision
    current = sum(1 for p in existing
                  if (meta_of(p).get("labels") or {}).get(STS_REVISION_LABEL) == current_rev)
    status: Obj = {"observedGeneration": meta_of(sts).get("generation") or 1,
                   "replicas": len(existing)}
    ready = sum(1 for p in existing if healthy(p))
    set_nonzero(status, readyReplicas=ready, currentReplicas=current, updatedReplicas=updated)
    status["currentRevision"] = current_rev
    status["updateRevision"] = revision
    status["collisionCount"] = 0
    status["availableReplicas"] = sum(
        1 for p in existing if not is_deleting(p) and ctx.pod_available(p, now, min_ready))
    if status != old:
        def put(o: Obj) -> None:
            o["status"] = status
        ctx.mutate_object(R.STATEFUL_SETS.key, namespace_of(sts), name, put, manager=KCM,
                          subresource="status")
