"""Field ownership (``metadata.managedFields``) for server-side apply and every other write.

Each manager owns a set of field paths (:mod:`.fieldpath`), kept in FieldsV1 shape: maps by
field, ``x-kubernetes-list-type: map`` lists by element key (``k:{"name":"web"}``), sets by
value (``v:"x"``), atomic lists and maps as one leaf, as the kind's schema says. An apply merges
the applied config into the live object (keyed lists element by element, so two managers can
each own a container of one Deployment), drops what the manager applied before and no longer
sends unless another manager owns it too, and answers 409 naming each changed field another
manager owns (``.spec.template.spec.containers[name="web"].image``) unless ``force``.

Every writer is recorded, under the names upstream's components use: a request names its
manager with ``fieldManager`` or else by its User-Agent; the simulated controllers write as
``kube-controller-manager``, ``kubelet`` and ``kube-scheduler`` (status writes with subresource
``status``), and a ``/scale`` write owns the parent's replicas with subresource ``scale``. So a
server-side apply of ``replicas`` after the HPA scaled conflicts as on a real cluster.
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from typing import Any, Callable

from pyhpa.api.timefmt import format_time
from pyhpa.cluster.apiserver.fieldpath import (Path, Shape, Shapes, changed_leaves, describe,
                                               from_fields_v1, get_path, leaves, merge, no_shapes,
                                               prune, to_fields_v1)

Obj = dict[str, Any]
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# The manager whose applies may take over client-side-applied fields (upstream's rule: only
# `kubectl apply --server-side` with its default field manager upgrades from client-side apply).
UPGRADING_MANAGER = "kubectl"
# upstream's FieldManagerMaxLength
MAX_MANAGER_LENGTH = 128
# The managers upstream's components write as (their User-Agent's product).
KUBE_CONTROLLER_MANAGER = "kube-controller-manager"
KUBELET = "kubelet"
KUBE_SCHEDULER = "kube-scheduler"
KUBE_APISERVER = "kube-apiserver"  # the objects the server makes for itself


def _now() -> str:
    return format_time(datetime.now(timezone.utc))


def entries(obj: Obj) -> list[Obj]:
    """The entries of ``obj`` (objects only: a stored object from before entries were checked
    on the way in may hold others)."""
    return [e for e in (obj.get("metadata") or {}).get("managedFields") or []
            if isinstance(e, dict)]


def _owned(e: Any) -> set[Path] | None:
    """The fields entry ``e`` owns, or None when upstream's decoder refuses it
    (``decodeManagedFieldsEntrySet``: fieldsType FieldsV1, an Apply or Update operation and a
    FieldsV1 set)."""
    if not isinstance(e, dict) or e.get("fieldsType") != "FieldsV1" \
            or e.get("operation") not in ("Apply", "Update"):
        return None
    try:
        return from_fields_v1(e.get("fieldsV1"))
    except (AttributeError, TypeError):  # a member that is not an object
        return None


def _is_reset(sent: list[Any]) -> bool:
    """upstream's isResetManagedFields: one empty entry (``[{}]``, or ``[null]``, which Go
    decodes into an empty entry) clears an object's managedFields."""
    return len(sent) == 1 and (sent[0] in (None, {}) or (
        isinstance(sent[0], dict) and not any(v not in (None, "") for v in sent[0].values())))


def take_request_entries(new: Obj, old: Obj | None, subresource: str = "") -> None:
    """The managedFields a write starts from (upstream's ``decodeLiveOrNew``, run before
    validation): the request's own when every entry decodes and they own something, none when
    it sends the reset, else the live object's (none on create), so a client that does not
    understand them neither drops them nor stores entries no later write can read. A
    subresource write always starts from the live object's."""
    meta = new.setdefault("metadata", {})
    sent = meta.get("managedFields")
    live = copy.deepcopy(((old or {}).get("metadata") or {}).get("managedFields"))
    if not subresource and isinstance(sent, list) and _is_reset(sent):
        meta.pop("managedFields", None)
        return
    if not subresource and isinstance(sent, list) and sent:
        owned = [_owned(e) for e in sent]
        if all(o is not None for o in owned) and any(owned):
            return
    if live:
        meta["managedFields"] = live
    else:
        meta.pop("managedFields", None)


def manager_from_user_agent(user_agent: str) -> str:
    """The manager of a write that names none: the User-Agent's product, before the first
    ``/``, without unprintable characters (``kubectl.1.33/v1.33.1 (linux/amd64) ...`` ->
    ``kubectl.1.33``), as upstream names it."""
    name = "".join(ch for ch in user_agent.split("/", 1)[0] if ch.isprintable())
    return name[:MAX_MANAGER_LENGTH]


def _same_manager(e: Obj, manager: str, operation: str, api_version: str,
                  subresource: str) -> bool:
    """Whether entry ``e`` is this writer's: upstream keys an entry by manager, operation and
    subresource, and an Update's also by its apiVersion (an applier keeps one entry)."""
    return (e.get("manager") == manager and e.get("operation") == operation
            and e.get("subresource", "") == subresource
            and (operation == "Apply" or e.get("apiVersion") == api_version))


ChangedIn = Callable[[str], set[Path]]


def record(obj: Obj, manager: str, operation: str, api_version: str, paths: set[Path],
           *, changed_in: ChangedIn | None = None, replace: bool = False,
           subresource: str = "") -> None:
    """Give ``manager`` ownership of ``paths`` (leaf paths in ``api_version``'s terms).

    ``changed_in(v)`` is what the write changed, seen in apiVersion ``v``: every other entry
    loses those fields (recorded in its own apiVersion's terms), and so does this manager's
    unless they are in ``paths`` (a field the write removed is nobody's any more). Without
    it, ``paths`` is what changed, in ``api_version``'s terms.
    ``replace`` (an apply) makes ``paths`` the manager's whole set instead of adding to it.
    """
    if not manager:
        return
    if changed_in is None:
        def changed_in(v: str) -> set[Path]:
            return paths if v == api_version else set()
    out = []
    mine: set[Path] = set()
    for e in entries(obj):
        owned = from_fields_v1(e.get("fieldsV1"))
        if _same_manager(e, manager, operation, api_version, subresource):
            mine = set() if replace else owned
            continue
        owned -= changed_in(e.get("apiVersion", ""))
        if owned:
            e = dict(e)
            e["fieldsV1"] = to_fields_v1(owned)
            out.append(e)
    mine = (mine - changed_in(api_version)) | paths
    if mine:
        entry: Obj = {"manager": manager, "operation": operation, "apiVersion": api_version,
                      "time": _now(), "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(mine)}
        if subresource:
            entry["subresource"] = subresource
        out.append(entry)
    obj.setdefault("metadata", {})["managedFields"] = out


def record_update(new: Obj, old: Obj, manager: str, api_version: str,
                  subresource: str = "", shape: Shape = None) -> None:
    """An Update by ``manager`` (a controller writing the stored object ``old`` as ``new``, of
    ``api_version``, its storage version, whose schema is at ``shape``): it owns the fields it
    changed."""
    changed = changed_leaves(old, new, shape)
    if changed:
        meta = new.setdefault("metadata", {})
        if "managedFields" not in meta and "managedFields" in (old.get("metadata") or {}):
            meta["managedFields"] = copy.deepcopy(old["metadata"]["managedFields"])
        record(new, manager, "Update", api_version,
               {p for p in changed if get_path(new, p, shape)[0]},
               changed_in=lambda v: changed if v == api_version else set(),
               subresource=subresource)


def record_create(obj: Obj, manager: str, api_version: str, shape: Shape = None) -> None:
    """A controller's create: ``manager`` owns every field it set but the status (reset on
    create for the kinds with a status subresource: nobody owns it yet)."""
    record(obj, manager, "Update", api_version,
           {p for p in leaves(obj, shape) if p[0] != "status"})


def owned_by(obj: Obj, manager: str, operation: str | None = None) -> set[Path]:
    out: set[Path] = set()
    for e in entries(obj):
        if e.get("manager") == manager and (operation is None or e.get("operation") == operation):
            out |= from_fields_v1(e.get("fieldsV1"))
    return out


Conflict = tuple[Obj, Path]  # (the other manager's entry, the field in its apiVersion's terms)


def conflicts(obj: Obj, manager: str, changed_in: ChangedIn) -> list[Conflict]:
    """The fields an apply by ``manager`` would change that another manager owns. Each entry
    is compared in its own apiVersion (``changed_in``), as upstream compares."""
    out = []
    for e in entries(obj):
        if e.get("manager") == manager and e.get("operation") == "Apply":
            continue
        owned = from_fields_v1(e.get("fieldsV1"))
        out += [(e, p) for p in sorted(owned & changed_in(e.get("apiVersion", "")))]
    return out


def describe_manager(e: Obj) -> str:
    """How a conflict names a manager: ``"kube-controller-manager" with subresource "scale"
    using apps/v1`` (an Update names its apiVersion; an apply only its name)."""
    out = json.dumps(e.get("manager", ""))
    if e.get("subresource"):
        out += f" with subresource {json.dumps(e['subresource'])}"
    if e.get("operation") == "Update":
        out += f" using {e.get('apiVersion', '')}"
    return out


def conflict_error(found: list[Conflict]) -> tuple[str, list[Obj]]:
    """The message and ``details.causes`` of a 409 for ``found``, worded as upstream words
    them (one conflict on one line; several grouped per manager)."""
    causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {describe_manager(e)}",
               "field": describe(p)} for e, p in found]
    if len(found) == 1:
        return f"Apply failed with 1 conflict: {causes[0]['message']}: {causes[0]['field']}", causes
    grouped: dict[str, list[str]] = {}
    for e, p in found:
        grouped.setdefault(describe_manager(e), []).append(describe(p))
    lines = []
    for who in sorted(grouped):
        lines.append(f"conflicts with {who}:")
        lines += [f"- {f}" for f in grouped[who]]
    return f"Apply failed with {len(found)} conflicts: " + "\n".join(lines), causes


def apply(live: Obj, manager: str, applied: Obj, shape: Shape = None) -> Obj:
    """The object after ``manager`` applies ``applied`` (``shape``: where the kind sits in its
    schema): the applied fields merged (keyed lists element by element), and the fields it
    applied before and no longer sends removed, unless another manager owns them too."""
    before = owned_by(live, manager, "Apply")
    others: set[Path] = set()
    for e in entries(live):
        if not (e.get("manager") == manager and e.get("operation") == "Apply"):
            others |= from_fields_v1(e.get("fieldsV1"))
    now = leaves(applied, shape)
    out = merge(copy.deepcopy(live), applied, shape)
    prune(out, before - now - others, now | others, shape)
    return out


class Versions:
    """A write's object before and after, as each apiVersion shows it: managed fields are
    recorded in the apiVersion of the request that wrote them (an HPA created through
    autoscaling/v1 owns ``f:targetCPUUtilizationPercentage``, not ``f:metrics``), so each entry
    is compared in its own terms. ``view(obj, apiVersion)`` converts a stored object (None: not
    a version of this kind); ``known`` gives views already at hand, by apiVersion."""

    def __init__(self, old: Obj, new: Obj, view: Callable[[Obj, str], Obj | None],
                 known: dict[str, tuple[Obj, Obj]] | None = None,
                 shapes: Shapes = no_shapes) -> None:
        self.old, self.new, self.view, self.shapes = old, new, view, shapes
        self._views: dict[str, tuple[Obj, Obj] | None] = dict(known or {})
        self._changed: dict[str, set[Path]] = {}

    def views(self, api_version: str) -> tuple[Obj, Obj] | None:
        if api_version not in self._views:
            a, b = self.view(self.old, api_version), self.view(self.new, api_version)
            self._views[api_version] = None if a is None or b is None else (a, b)
        return self._views[api_version]

    def changed(self, api_version: str) -> set[Path]:
        if api_version not in self._changed:
            both = self.views(api_version)
            self._changed[api_version] = set() if both is None else \
                changed_leaves(*both, self.shapes(api_version))
        return self._changed[api_version]

    def kept(self, api_version: str) -> set[Path]:
        """What changed and is still there: what an Update's manager comes to own."""
        both = self.views(api_version)
        if both is None:
            return set()
        shape = self.shapes(api_version)
        return {p for p in self.changed(api_version) if get_path(both[1], p, shape)[0]}


def _last_applied(obj: Obj) -> Obj | None:
    text = ((obj.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    if not isinstance(text, str):
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def upgradable_from_client_side(live: Obj, shape: Shape = None) -> set[Path]:
    """Leaves of the last-applied-configuration annotation whose live value still equals it.

    Those fields were set by client-side apply and nobody changed them since, so a server-side
    apply by ``kubectl`` may take them over without a conflict (the CSA -> SSA upgrade path).
    """
    last = _last_applied(live)
    if last is None:
        return set()
    return {p for p in leaves(last, shape)
            if get_path(live, p, shape) == get_path(last, p, shape)}


def upgrade_conflicts(live: Obj, manager: str, found: list[Conflict],
                      shape: Shape = None) -> list[Conflict]:
    """The conflicts that remain once ``kubectl`` may take over unchanged client-side fields."""
    if manager != UPGRADING_MANAGER or not found:
        return found
    allowed = upgradable_from_client_side(live, shape)
    return [c for c in found if c[1] not in allowed]


def sync_last_applied(merged: Obj, live: Obj, manager: str, applied: Obj) -> None:
    """After a ``kubectl`` server-side apply, a last-applied-configuration annotation (if the
    object has one) becomes the applied config, so a later client-side apply diffs against it."""
    if manager != UPGRADING_MANAGER or _last_applied(live) is None:
        return
    doc = copy.deepcopy(applied)
    meta = doc.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("annotations"), dict):
        meta["annotations"].pop(LAST_APPLIED, None)
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    merged.setdefault("metadata", {}).setdefault("annotations", {})[LAST_APPLIED] = text
