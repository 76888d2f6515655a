"""The disruption controller: each PodDisruptionBudget's status (healthy, desired and expected
pods, disruptions allowed), as ``kubectl get pdb`` shows it.

Why: a typical application manifest carries a budget, and on a real cluster its ALLOWED
DISRUPTIONS column counts the ready pods above what the budget keeps. The numbers are
upstream's: ``minAvailable`` as a count expects the pods that match; a percentage, or
``maxUnavailable``, expects the replicas of the pods' controllers (a Deployment's for its
ReplicaSets' pods), rounding the percentage up. A pod with no controller here counts as one
expected pod, where upstream reports the budget as failing to sync.
"""

from __future__ import annotations

import math
from typing import Any

from pyhpa.api.selectors import selector_from_label_selector
from pyhpa.api.timefmt import format_epoch
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBE_CONTROLLER_MANAGER as KCM
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import (
    Obj, controller_ref, is_deleting, meta_of, name_of, namespace_of, replicas_of, spec_of, status_of,
)


def sync_disruption_budgets(ctx: SimulationContext, snap: Snapshot, now: float) -> None:
    scopes = sorted(snap.namespaces) if snap.namespaces is not None else [None]
    for ns in scopes:
        for pdb in ctx.store.list(R.PDBS.key, ns).items:
            status = budget_status(pdb, snap, now)
            if status is None or status == status_of(pdb):
                continue

            def put(o: Obj, status: Obj = status) -> None:
                o["status"] = status
            ctx.mutate_object(R.PDBS.key, namespace_of(pdb), name_of(pdb), put, manager=KCM,
                              subresource="status")


def budget_status(pdb: Obj, snap: Snapshot, now: float) -> Obj | None:
    """The status of ``pdb`` over the pods of ``snap``; None when its selector cannot be read."""
    spec = spec_of(pdb)
    try:
        selector = selector_from_label_selector(spec.get("selector"))
    except (ValueError, TypeError):
        return None
    ns = namespace_of(pdb)
    pods = [p for p in snap.pods if namespace_of(p) == ns and not is_deleting(p)
            and selector.matches(meta_of(p).get("labels") or {})]
    healthy = sum(1 for p in pods if _ready(p))
    min_available, max_unavailable = spec.get("minAvailable"), spec.get("maxUnavailable")
    if isinstance(min_available, int) and not isinstance(min_available, bool):
        expected, desired = len(pods), min_available
    else:
        expected = _controller_scale(pods, snap)
        if max_unavailable is not None:
            desired = max(0, expected - _scaled(max_unavailable, expected))
        elif min_available is not None:
            desired = _scaled(min_available, expected)
        else:
            return None
    allowed = healthy - desired if expected > 0 and healthy > desired else 0
    generation = meta_of(pdb).get("generation")
    observed = {"observedGeneration": generation} if isinstance(generation, int) else {}
    state = "True" if allowed > 0 else "False"
    old = next((c for c in status_of(pdb).get("conditions") or []
                if isinstance(c, dict) and c.get("type") == "DisruptionAllowed"), {})
    condition = {"type": "DisruptionAllowed", "status": state, **observed,
                 "lastTransitionTime": old.get("lastTransitionTime") if old.get("status") == state
                 else format_epoch(now),
                 "reason": "SufficientPods" if allowed > 0 else "InsufficientPods", "message": ""}
    return {**observed, "disruptionsAllowed": allowed, "currentHealthy": healthy,
            "desiredHealthy": desired, "expectedPods": expected, "conditions": [condition]}


def _ready(pod: Obj) -> bool:
    return any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
               for c in status_of(pod).get("conditions") or [])


def _scaled(value: Any, total: int) -> int:
    """An IntOrString count: itself, or a percentage of ``total`` rounded up."""
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        return math.ceil(int(value[:-1]) * total / 100)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _controller_scale(pods: list[Obj], snap: Snapshot) -> int:
    """The replicas of the pods' controllers, each counted once (a pod without one: 1)."""
    counted: dict[str, int] = {}
    bare = 0
    for p in pods:
        ref = controller_ref(p)
        owner = snap.by_uid.get((ref or {}).get("uid") or "")
        if owner is None:
            bare += 1
            continue
        top = snap.by_uid.get((controller_ref(owner) or {}).get("uid") or "")
        if top is not None and top.get("kind") == "Deployment":
            owner = top
        counted[meta_of(owner).get("uid") or ""] = replicas_of(owner)
    return sum(counted.values()) + bare
