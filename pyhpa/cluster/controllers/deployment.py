"""The Deployment controller: a ReplicaSet per pod template, rollouts between them, revisions,
history cleanup and the status ``kubectl rollout status`` reads.

Why this much of upstream's: ``kubectl rollout status/undo/history``, ``scale`` and the HPA's
scale subresource all see the Deployment through its ReplicaSets (pod-template-hash names,
revision annotations, surge and unavailability limits), so those must be the ones upstream's
controller would produce. A rolling update honours maxSurge/maxUnavailable; Recreate waits for
the old pods to go.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pyhpa.api.timefmt import format_epoch
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBE_CONTROLLER_MANAGER as KCM
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import (
    DESIRED_ANN, HASH_LABEL, MAX_ANN, NOT_COPIED_ANNS, REVISION_ANN, REVISION_HISTORY_ANN, Obj,
    controller_ref, is_deleting, meta_of, name_of, namespace_of, normal_template, replicas_of, set_nonzero,
    spec_of, status_of, template_hash, uid_of,
)
from pyhpa.cluster.apiserver.workload_defaults import default_pod_spec
from pyhpa.cluster.apiserver.storage import AlreadyExists


def sync_deployment(ctx: SimulationContext, dep: Obj, snap: Snapshot, now: float) -> None:
    if is_deleting(dep):
        return
    spec = spec_of(dep)
    desired = replicas_of(dep, 1)
    template = spec.get("template") or {}
    ns = namespace_of(dep)
    owned = sorted((rs for rs in snap.replicasets
                    if (controller_ref(rs) or {}).get("uid") == uid_of(dep)),
                   key=lambda o: (meta_of(o).get("creationTimestamp") or "", name_of(o)))
    normal = _comparable(template)
    new = next((rs for rs in owned
                if _comparable(_strip_hash(spec_of(rs).get("template"))) == normal), None)
    olds = [rs for rs in owned if new is None or uid_of(rs) != uid_of(new)]
    strategy = spec.get("strategy") or {}
    rolling = (strategy.get("type") or "RollingUpdate") == "RollingUpdate"
    ru = strategy.get("rollingUpdate") or {}
    surge = _int_or_percent(ru.get("maxSurge"), desired, True, "25%") if rolling else 0
    unavailable = _int_or_percent(ru.get("maxUnavailable"), desired, False, "25%") if rolling else 0
    if rolling and surge == 0 and unavailable == 0:
        unavailable = 1
    paused = bool(spec.get("paused"))
    olds_running = [rs for rs in olds if replicas_of(rs, 0) > 0 or status_of(rs).get("replicas")]

    if new is None:
        if paused:
            _deployment_status(ctx, dep, owned, None, desired, unavailable, now)
            return
        revision = 1 + max([_revision(rs) for rs in owned] or [0])
        collision = int(status_of(dep).get("collisionCount") or 0)
        h = template_hash(normal_template(template), collision)
        rs_template = json.loads(json.dumps(template))
        rs_template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = h
        selector = json.loads(json.dumps(spec.get("selector") or {}))
        selector.setdefault("matchLabels", {})[HASH_LABEL] = h
        start = 0 if olds_running else desired  # Recreate: wait for the old pods to go
        if rolling and olds_running:
            total = sum(replicas_of(rs, 0) for rs in owned)
            start = max(0, min(desired + surge - total, desired))
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
              "metadata": {"name": f"{name_of(dep)}-{h}", "namespace": ns,
                           "creationTimestamp": format_epoch(now),
                           "labels": dict(meta_of(rs_template).get("labels") or {}),
                           "annotations": {**_copied_annotations(dep, {}),
                                           REVISION_ANN: str(revision),
                                           DESIRED_ANN: str(desired),
                                           MAX_ANN: str(desired + surge)},
                           "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                                "name": name_of(dep), "uid": uid_of(dep),
                                                "controller": True,
                                                "blockOwnerDeletion": True}]},
              "spec": {"replicas": start, "minReadySeconds": spec.get("minReadySeconds") or 0,
                       "selector": selector, "template": rs_template},
              "status": {"replicas": 0}}
        try:
            ctx.create_object(R.REPLICA_SETS.key, rs, manager=KCM)
        except AlreadyExists:  # a hash collision with a different template: bump the count
            def bump(o: Obj) -> None:
                o.setdefault("status", {})["collisionCount"] = collision + 1
            ctx.mutate_object(R.DEPLOYMENTS.key, ns, name_of(dep), bump, manager=KCM,
                              subresource="status")
            return
        if start:
            ctx.event(dep, "ScalingReplicaSet",
                      f"Scaled up replica set {rs['metadata']['name']} from 0 to {start}",
                      "deployment-controller")
        _set_revision(ctx, dep, revision)
        return  # the next pass sees the new ReplicaSet

    # the new ReplicaSet follows the Deployment's annotations, and when an old template is back
    # (rollout undo) takes the next revision, remembering the ones it had
    newest = max([_revision(rs) for rs in olds] or [0])
    annotations = _new_rs_annotations(dep, new, newest + 1)
    if annotations != (meta_of(new).get("annotations") or {}):
        def annotate(o: Obj) -> None:
            o.setdefault("metadata", {})["annotations"] = annotations
        ctx.mutate_object(R.REPLICA_SETS.key, namespace_of(new), name_of(new), annotate,
                          manager=KCM)
        return  # the next pass sees the ReplicaSet as updated
    _set_revision(ctx, dep, _revision(new))
    if not paused:
        if not rolling:  # Recreate: old pods all gone before the new ones start
            if any(replicas_of(rs, 0) > 0 for rs in olds):
                for rs in olds:
                    _scale_rs(ctx, dep, rs, 0, desired, surge)
            elif not any(snap.pods_by_owner.get(uid_of(rs)) for rs in olds):
                _scale_rs(ctx, dep, new, desired, desired, surge)
        elif not olds_running:
            _scale_rs(ctx, dep, new, desired, desired, surge)
        else:
            _roll(ctx, dep, new, olds, owned, desired, surge, unavailable)
    _cleanup_history(ctx, dep, olds)
    _deployment_status(ctx, dep, owned, new, desired, unavailable, now)


def _roll(ctx: SimulationContext, dep: Obj, new: Obj, olds: list[Obj], owned: list[Obj], desired: int,
          surge: int, unavailable: int) -> None:
    """One step of the rolling update (upstream's reconcileNewReplicaSet / reconcileOldReplicaSets)."""
    total = sum(replicas_of(rs, 0) for rs in owned)
    new_n = replicas_of(new, 0)
    if new_n > desired:
        _scale_rs(ctx, dep, new, desired, desired, surge)
        return
    if new_n < desired:
        allowed = desired + surge - total
        target = new_n + max(0, min(allowed, desired - new_n))
        if target != new_n:
            _scale_rs(ctx, dep, new, target, desired, surge)
            return
    min_available = desired - unavailable
    new_unavailable = new_n - int(status_of(new).get("availableReplicas") or 0)
    max_down = total - min_available - new_unavailable
    if max_down <= 0:
        return
    targets = {uid_of(rs): replicas_of(rs, 0) for rs in olds}
    cleaned = 0
    for rs in olds:  # unhealthy old replicas first
        unhealthy = targets[uid_of(rs)] - int(status_of(rs).get("availableReplicas") or 0)
        down = max(0, min(max_down - cleaned, unhealthy))
        targets[uid_of(rs)] -= down
        cleaned += down
    available = sum(int(status_of(rs).get("availableReplicas") or 0) for rs in owned)
    budget = available - min_available - cleaned
    for rs in olds:
        if budget <= 0:
            break
        down = min(targets[uid_of(rs)], budget)
        targets[uid_of(rs)] -= down
        budget -= down
    for rs in olds:
        if targets[uid_of(rs)] != replicas_of(rs, 0):
            _scale_rs(ctx, dep, rs, targets[uid_of(rs)], desired, surge)


def _scale_rs(ctx: SimulationContext, dep: Obj, rs: Obj, replicas: int, desired: int, surge: int) -> None:
    before = replicas_of(rs, 0)
    anns = meta_of(rs).get("annotations") or {}
    if before == replicas and anns.get(DESIRED_ANN) == str(desired) \
            and anns.get(MAX_ANN) == str(desired + surge):
        return

    def scale(o: Obj) -> None:
        o.setdefault("spec", {})["replicas"] = replicas
        a = o.setdefault("metadata", {}).setdefault("annotations", {})
        a[DESIRED_ANN] = str(desired)
        a[MAX_ANN] = str(desired + surge)
    ctx.mutate_object(R.REPLICA_SETS.key, namespace_of(rs), name_of(rs), scale, manager=KCM)
    if before != replicas:
        word = "up" if replicas > before else "down"
        ctx.event(dep, "ScalingReplicaSet",
                  f"Scaled {word} replica set {name_of(rs)} from {before} to {replicas}",
                  "deployment-controller")


def _set_revision(ctx: SimulationContext, dep: Obj, revision: int) -> None:
    if (meta_of(dep).get("annotations") or {}).get(REVISION_ANN) == str(revision):
        return

    def put(o: Obj) -> None:
        o.setdefault("metadata", {}).setdefault("annotations", {})[REVISION_ANN] = str(revision)
    ctx.mutate_object(R.DEPLOYMENTS.key, namespace_of(dep), name_of(dep), put, manager=KCM)


def _copied_annotations(dep: Obj, rs_annotations: dict[str, str]) -> dict[str, str]:
    """``rs_annotations`` with the Deployment's on top, but for those upstream never copies:
    the ReplicaSet keeps what the Deployment said while it was the new one, which is what
    ``kubectl rollout undo`` copies back (the ``sim.pyhpa.io/*`` load settings among them)."""
    out = dict(rs_annotations)
    for k, v in (meta_of(dep).get("annotations") or {}).items():
        if k not in NOT_COPIED_ANNS and isinstance(v, str):
            out[k] = v
    return out


# How long the comma-separated list of a ReplicaSet's earlier revisions may grow (upstream's).
_REVISION_HISTORY_CHARS = 2000


def _new_rs_annotations(dep: Obj, rs: Obj, revision: int) -> dict[str, str]:
    """The annotations of the Deployment's current ReplicaSet (upstream's
    SetNewReplicaSetAnnotations): the Deployment's copied, the revision raised to ``revision``
    when lower, the revision it had appended to ``revision-history`` then."""
    out = _copied_annotations(dep, meta_of(rs).get("annotations") or {})
    old = out.get(REVISION_ANN)
    if _revision(rs) >= revision:
        return out
    out[REVISION_ANN] = str(revision)
    if old:
        history = out.get(REVISION_HISTORY_ANN) or ""
        kept = history.split(",") if history else []
        total = len(history) + len(old) + 1 if history else len(old)
        while kept and total > _REVISION_HISTORY_CHARS:  # the oldest go first
            total -= len(kept.pop(0)) + 1
        if total <= _REVISION_HISTORY_CHARS:
            out[REVISION_HISTORY_ANN] = ",".join([*kept, old])
    return out


def _cleanup_history(ctx: SimulationContext, dep: Obj, olds: list[Obj]) -> None:
    limit = spec_of(dep).get("revisionHistoryLimit")
    limit = 10 if not isinstance(limit, int) or limit < 0 else limit
    idle = [rs for rs in olds if replicas_of(rs, 0) == 0 and not status_of(rs).get("replicas")]
    idle.sort(key=_revision)
    for rs in idle[:max(0, len(idle) - limit)]:
        ctx.delete_object(R.REPLICA_SETS.key, namespace_of(rs), name_of(rs), uid=uid_of(rs))


def _deployment_status(ctx: SimulationContext, dep: Obj, owned: list[Obj], new: Obj | None, desired: int,
                       unavailable: int, now: float) -> None:
    def total(field_: str) -> int:
        return sum(int(status_of(rs).get(field_) or 0) for rs in owned)

    replicas = total("replicas")
    updated = int(status_of(new).get("replicas") or 0) if new is not None else 0
    ready, available = total("readyReplicas"), total("availableReplicas")
    spec_total = sum(replicas_of(rs, 0) for rs in owned)
    old = status_of(dep)
    status: Obj = {"observedGeneration": meta_of(dep).get("generation") or 1}
    set_nonzero(status, replicas=replicas, updatedReplicas=updated, readyReplicas=ready,
                availableReplicas=available)
    if max(0, spec_total - available):
        status["unavailableReplicas"] = max(0, spec_total - available)
    if old.get("collisionCount"):
        status["collisionCount"] = old["collisionCount"]
    ts = format_epoch(now)
    conds = {c.get("type"): c for c in old.get("conditions") or []}

    def cond(type_: str, status_: str, reason: str, message: str) -> Obj:
        prev = conds.get(type_)
        if prev and prev.get("status") == status_ and prev.get("reason") == reason \
                and prev.get("message") == message:
            return prev
        transition = prev.get("lastTransitionTime") if prev and prev.get("status") == status_ \
            else ts
        return {"type": type_, "status": status_, "lastUpdateTime": ts,
                "lastTransitionTime": transition, "reason": reason, "message": message}

    if available >= desired - unavailable:
        avail = cond("Available", "True", "MinimumReplicasAvailable",
                     "Deployment has minimum availability.")
    else:
        avail = cond("Available", "False", "MinimumReplicasUnavailable",
                     "Deployment does not have minimum availability.")
    name = name_of(new) if new is not None else name_of(dep)
    done = new is not None and updated == desired and replicas == desired \
        and available >= desired
    if spec_of(dep).get("paused"):
        prog = cond("Progressing", "Unknown", "DeploymentPaused", "Deployment is paused")
    elif done:
        prog = cond("Progressing", "True", "NewReplicaSetAvailable",
                    f'ReplicaSet "{name}" has successfully progressed.')
    else:
        prog = cond("Progressing", "True", "ReplicaSetUpdated",
                    f'ReplicaSet "{name}" is progressing.')
    status["conditions"] = [avail, prog]
    if status != old:
        def put(o: Obj) -> None:
            o["status"] = status
        ctx.mutate_object(R.DEPLOYMENTS.key, namespace_of(dep), name_of(dep), put, manager=KCM,
                          subresource="status")


def _strip_hash(template: Any) -> Any:
    """A ReplicaSet's template without its pod-template-hash label (to compare with the Deployment's)."""
    if not isinstance(template, dict):
        return template
    out = json.loads(json.dumps(template))
    labels = (out.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(HASH_LABEL, None)
        if not labels:
            out["metadata"].pop("labels")
        if not out["metadata"]:
            out.pop("metadata")
    return out


def _comparable(template: Any) -> Any:
    """A pod template defaulted and normalised, so templates stored before the server defaulted
    them still match their ReplicaSets' (no rollout when a later write adds the defaults)."""
    if not isinstance(template, dict):
        return template
    out = json.loads(json.dumps(template))
    default_pod_spec(out.get("spec"))
    return normal_template(out)


def _int_or_percent(value: Any, total: int, round_up: bool, default: str) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if value is None:
        value = default
    if isinstance(value, int) and not isinstance(value, bool):
        return max(0, value)
    text = str(value).strip()
    if text.endswith("%"):
        try:
            pct = float(text[:-1])
        except ValueError:
            pct = float(default.rstrip("%"))
        raw = pct * total / 100
        return max(0, math.ceil(raw - 1e-9) if round_up else math.floor(raw + 1e-9))
    try:
        return max(0, int(text))
    except ValueError:
        return 0


def _revision(rs: Obj) -> int:
    try:
        return int((meta_of(rs).get("annotations") or {}).get(REVISION_ANN) or 0)
    except ValueError:
        return 0
