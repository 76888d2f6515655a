"""ControllerRevisions: the snapshots of its pod template a DaemonSet or StatefulSet records,
which ``kubectl rollout history`` lists and ``kubectl rollout undo`` restores.

As upstream's controllers keep them (pkg/controller/history; pkg/controller/daemon/update.go
``constructHistory``, ``snapshot``, ``cleanupHistory``; pkg/controller/statefulset
``getStatefulSetRevisions``, ``truncateHistory``): a revision's ``data`` is the strategic merge
patch that restores the owner's template (``{"spec": {"template": {..., "$patch": "replace"}}}``,
upstream's ``getPatch``, which kubectl's rollback sends back as it is); its labels are the
template's plus ``controller-revision-hash``; its annotations the owner's (so
``kubernetes.io/change-cause`` shows in the history); it is controlled by its owner (and goes
with it). The revision equal to the current template is the latest: a new template gets
``max + 1``, and a template rolled back to an old one renumbers that one ``max + 1``. Beyond
``spec.revisionHistoryLimit`` (default 10) the oldest revisions no pod runs are deleted.

Why a memo: the revisions change only with the template, so each owner's are looked at only
when its template (by hash) differs from the one last recorded.
"""

from __future__ import annotations

import json
from typing import Any

from pyhpa.api.timefmt import format_epoch
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBE_CONTROLLER_MANAGER as KCM
from pyhpa.cluster.apiserver.storage import AlreadyExists, Conflict, NotFound
from pyhpa.cluster.controllers.context import SimulationContext
from pyhpa.cluster.controllers.objects import (Obj, controller_ref, is_deleting, meta_of, name_of,
                                               namespace_of, normal_template, spec_of, uid_of)

REVISION_HASH_LABEL = "controller-revision-hash"
DEFAULT_HISTORY_LIMIT = 10


def revision_data(template: Obj) -> Obj:
    """The patch that restores ``template`` (upstream's ``getPatch``), as Go writes it: the typed
    template (``metadata.creationTimestamp: null``), keys sorted. Byte for byte what kubectl's
    rollback computes from the owner, so ``undo`` to the current revision is skipped as upstream."""
    copy = json.loads(json.dumps(template))
    meta = copy.get("metadata")
    copy["metadata"] = {**(meta if isinstance(meta, dict) else {}), "creationTimestamp": None}
    copy["$patch"] = "replace"
    return json.loads(json.dumps({"spec": {"template": copy}}, sort_keys=True))


def recorded_template(revision: Obj) -> Any:
    """The template a revision restores (None when its data holds none)."""
    data = revision.get("data")
    template = ((data.get("spec") or {}).get("template")) if isinstance(data, dict) else None
    if not isinstance(template, dict):
        return None
    return {k: v for k, v in template.items() if k != "$patch"}


def _number(revision: Obj) -> int:
    v = revision.get("revision")
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def sync_revisions(ctx: SimulationContext, owner: Obj, template: Obj, name: str, hash_: str,
                   live: set[str], now: float) -> None:
    """Record ``template`` as ``owner``'s latest revision, named ``name`` with the hash label
    ``hash_``; delete the oldest revisions past its history limit, except those named in
    ``live`` (by name or hash: what its pods or status still point at)."""
    uid = uid_of(owner)
    if ctx.revisions_recorded.get(uid) == name:
        return
    ns = namespace_of(owner)
    owned = [cr for cr in ctx.store.list(R.CONTROLLER_REVISIONS.key, namespace=ns).items
             if (controller_ref(cr) or {}).get("uid") == uid and not is_deleting(cr)]
    want = normal_template(template)
    equal = sorted((cr for cr in owned if normal_template(recorded_template(cr)) == want),
                   key=_number)
    equal_names = {name_of(cr) for cr in equal}
    old = [cr for cr in owned if name_of(cr) not in equal_names]
    latest = 1 + max((_number(cr) for cr in old), default=0)
    try:
        if equal:
            keep = equal[-1]
            for dup in equal[:-1]:  # one revision per template (upstream's Dedup)
                ctx.delete_object(R.CONTROLLER_REVISIONS.key, ns, name_of(dup), uid=uid_of(dup))
            if _number(keep) < latest:
                def renumber(o: Obj) -> None:
                    o["revision"] = latest
                ctx.mutate_object(R.CONTROLLER_REVISIONS.key, ns, name_of(keep), renumber,
                                  manager=KCM)
        else:
            _create(ctx, owner, template, name, hash_, latest, now)
    except (AlreadyExists, Conflict, NotFound):
        return  # a revision of that name with another template, or a race: next pass
    limit = spec_of(owner).get("revisionHistoryLimit")
    limit = limit if isinstance(limit, int) and limit >= 0 else DEFAULT_HISTORY_LIMIT
    idle = sorted((cr for cr in old if name_of(cr) not in live
                   and (meta_of(cr).get("labels") or {}).get(REVISION_HASH_LABEL) not in live),
                  key=_number)
    for cr in idle[:max(0, len(idle) - limit)]:
        ctx.delete_object(R.CONTROLLER_REVISIONS.key, ns, name_of(cr), uid=uid_of(cr))
    ctx.revisions_recorded[uid] = name


def _create(ctx: SimulationContext, owner: Obj, template: Obj, name: str, hash_: str,
            revision: int, now: float) -> None:
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    labels[REVISION_HASH_LABEL] = hash_
    meta: Obj = {"name": name, "namespace": namespace_of(owner),
                 "creationTimestamp": format_epoch(now), "labels": labels,
                 "ownerReferences": [{"apiVersion": owner.get("apiVersion") or "apps/v1",
                                      "kind": owner.get("kind"), "name": name_of(owner),
                                      "uid": uid_of(owner), "controller": True,
                                      "blockOwnerDeletion": True}]}
    annotations = meta_of(owner).get("annotations")
    if annotations:
        meta["annotations"] = dict(annotations)
    ctx.create_object(R.CONTROLLER_REVISIONS.key,
                      {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": meta,
                       "data": revision_data(template), "revision": revision}, manager=KCM)
