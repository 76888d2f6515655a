"""The DaemonSet controller (pkg/controller/daemon): one pod on each node the template's
``nodeSelector`` matches, replaced node by node when the template changes.

Each pod is bound to its node at creation (upstream sets a node affinity on ``metadata.name``
and tolerates the node conditions' taints, including ``unschedulable``: a cordoned node keeps its
daemon pod). A rolling update (``updateStrategy.rollingUpdate.maxUnavailable``, default 1)
deletes an old pod only while fewer than that many nodes lack an available pod, and makes the new
one once the old is gone; ``OnDelete`` waits for the user to delete it. The pods carry
``controller-revision-hash`` (the template's hash) and ``pod-template-generation``; each
template is recorded as a ControllerRevision (:mod:`.history`) for ``kubectl rollout history``
and ``undo``.
"""

from __future__ import annotations

import math
from typing import Any

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBE_CONTROLLER_MANAGER as KCM
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import (Obj, is_deleting, meta_of, name_of, namespace_of,
                                               normal_template, spec_of, status_of,
                                               template_hash, uid_of)
from pyhpa.cluster.controllers.history import REVISION_HASH_LABEL, sync_revisions
from pyhpa.cluster.controllers.pod_control import create_pod, delete_pod

REVISION_LABEL = REVISION_HASH_LABEL
GENERATION_LABEL = "pod-template-generation"
TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"))


def _eligible(ds: Obj, nodes: list[Obj]) -> list[str]:
    selector = (spec_of(spec_of(ds).get("template") or {}).get("nodeSelector") or {})
    out = []
    for n in nodes:
        labels = meta_of(n).get("labels") or {}
        if not is_deleting(n) and all(labels.get(k) == v for k, v in selector.items()):
            out.append(name_of(n))
    return out


def _max_unavailable(ds: Obj, desired: int) -> int:
    ru = (spec_of(ds).get("updateStrategy") or {}).get("rollingUpdate") or {}
    v: Any = ru.get("maxUnavailable", 1)
    if isinstance(v, str) and v.endswith("%"):
        try:
            return max(1, math.ceil(desired * int(v[:-1]) / 100))
        except ValueError:
            return 1
    return v if isinstance(v, int) and v > 0 else 1


def sync_daemonset(ctx: SimulationContext, ds: Obj, snap: Snapshot, now: float) -> None:
    if is_deleting(ds):
        return
    spec = spec_of(ds)
    template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
    revision = template_hash(normal_template(template))
    generation = str(meta_of(ds).get("generation") or 1)
    pods = snap.pods_by_owner.get(uid_of(ds), [])
    sync_revisions(ctx, ds, template, f"{name_of(ds)}-{revision}", revision,
                   {(meta_of(p).get("labels") or {}).get(REVISION_LABEL) or "" for p in pods}, now)
    nodes = _eligible(ds, snap.nodes) or ([] if snap.nodes else [ctx.node_names[0]])
    live = [p for p in pods if status_of(p).get("phase") not in ("Succeeded", "Failed")]
    by_node: dict[str, list[Obj]] = {}
    for p in live:
        by_node.setdefault(spec_of(p).get("nodeName") or "", []).append(p)
    min_ready = float(spec.get("minReadySeconds") or 0)
    rolling = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
    unavailable = sum(1 for n in nodes if not any(
        not is_deleting(p) and ctx.pod_available(p, now, min_ready) for p in by_node.get(n, [])))
    budget = _max_unavailable(ds, len(nodes)) - unavailable
    for node in nodes:
        mine = [p for p in by_node.get(node, []) if not is_deleting(p)]
        if not mine:
            if not by_node.get(node):  # an old pod still terminating: wait for it
                _create(ctx, ds, template, node, revision, generation, snap, now)
            continue
        old = [p for p in mine if (meta_of(p).get("labels") or {}).get(REVISION_LABEL) != revision]
        if old and rolling:
            available = any(ctx.pod_available(p, now, min_ready) for p in mine)
            if not available or budget > 0:
                for p in old:
                    delete_pod(ctx, p, now, ds)
                if available:
                    budget -= 1
        for extra in mine[1:] if not old else []:  # one pod per node
            delete_pod(ctx, extra, now, ds)
    for node, extra in by_node.items():  # pods on nodes no longer eligible
        if node not in nodes:
            for p in extra:
                if not is_deleting(p):
                    delete_pod(ctx, p, now, ds)
    _status(ctx, ds, nodes, by_node, revision, min_ready, now)


def _create(ctx: SimulationContext, ds: Obj, template: Obj, node: str, revision: str,
            generation: str, snap: Snapshot, now: float) -> None:
    tolerations = list(spec_of(template).get("tolerations") or [])
    for key, effect in TOLERATIONS:
        if not any(isinstance(t, dict) and t.get("key") == key for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": effect})
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                "values": [node]}]}]}}}
    create_pod(ctx, ds, template, snap, now,
               extra_labels={REVISION_LABEL: revision, GENERATION_LABEL: generation},
               extra_spec={"nodeName": node, "tolerations": tolerations, "affinity": affinity})


def _status(ctx: SimulationContext, ds: Obj, nodes: list[str], by_node: dict[str, list[Obj]],
            revision: str, min_ready: float, now: float) -> None:
    current = [p for n in nodes for p in by_node.get(n, [])[:1] if not is_deleting(p)]
    ready = sum(1 for p in current if ctx.pod_ready(p, now))
    available = sum(1 for p in current if ctx.pod_available(p, now, min_ready))
    updated = sum(1 for p in current
                  if (meta_of(p).get("labels") or {}).get(REVISION_LABEL) == revision)
    status: Obj = {"currentNumberScheduled": len(current), "numberMisscheduled": 0,
                   "desiredNumberScheduled": len(nodes), "numberReady": ready,
                   "observedGeneration": meta_of(ds).get("generation") or 1,
                   "updatedNumberScheduled": updated, "numberAvailable": available}
    if len(nodes) - available:
        status["numberUnavailable"] = len(nodes) - available
    if not available:
        del status["numberAvailable"]
    if not updated:
        del status["updatedNumberScheduled"]
    if status != status_of(ds):
        def put(o: Obj) -> None:
            o["status"] = status
        ctx.mutate_object(R.DAEMON_SETS.key, namespace_of(ds), name_of(ds), put, manager=KCM,
                          subresource="status")
