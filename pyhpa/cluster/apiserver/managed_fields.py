"""Field ownership (``metadata.managedFields``) for server-side apply, approximated.

Why an approximation: exact structured-merge-diff (list element keys, atomicity per schema) is a
project of its own; kubectl only needs apply to (a) create when absent, (b) drop fields this
manager applied before but no longer sends, (c) 409 on a changed field owned by another manager
unless ``force``. We track owned *leaf paths* per manager in FieldsV1 shape
(``{"f:spec": {"f:maxReplicas": {}}}``), treating every list as one atomic leaf.
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from typing import Any, Iterable

from pyhpa.api.timefmt import format_time

Path = tuple[str, ...]
Obj = dict[str, Any]
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# The manager whose applies may take over client-side-applied fields (upstream's rule: only
# `kubectl apply --server-side` with its default field manager upgrades from client-side apply).
UPGRADING_MANAGER = "kubectl"
_SKIP_META = {"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
              "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds",
              "generateName"}


def leaves(obj: Any, prefix: Path = ()) -> set[Path]:
    """Leaf paths of a manifest (maps are descended; scalars and lists are leaves)."""
    out: set[Path] = set()
    if not isinstance(obj, dict):
        return {prefix} if prefix else out
    for k, v in obj.items():
        if not prefix and k in ("apiVersion", "kind"):
            continue
        if prefix == ("metadata",) and k in _SKIP_META:
            continue
        if isinstance(v, dict) and v:
            out |= leaves(v, prefix + (k,))
        else:
            out.add(prefix + (k,))
    return out


def to_fields_v1(paths: Iterable[Path]) -> Obj:
    root: Obj = {}
    for p in sorted(paths):
        cur = root
        for part in p:
            cur = cur.setdefault(f"f:{part}", {})
    return root


def from_fields_v1(doc: Obj | None, prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    for k, v in (doc or {}).items():
        if not k.startswith("f:"):
            continue
        p = prefix + (k[2:],)
        if v:
            out |= from_fields_v1(v, p)
        else:
            out.add(p)
    return out


def get_path(obj: Any, path: Path) -> tuple[bool, Any]:
    cur = obj
    for part in path:
        if not isinstance(cur, dict) or part not in cur:
            return False, None
        cur = cur[part]
    return True, cur


def set_path(obj: Obj, path: Path, value: Any) -> None:
    cur = obj
    for part in path[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = cur[part] = {}
        cur = nxt
    cur[path[-1]] = copy.deepcopy(value)


def del_path(obj: Obj, path: Path) -> None:
    stack = []
    cur: Any = obj
    for part in path[:-1]:
        if not isinstance(cur, dict) or part not in cur:
            return
        stack.append((cur, part))
        cur = cur[part]
    if isinstance(cur, dict):
        cur.pop(path[-1], None)
    # prune maps left empty by the removal (not the top-level sections)
    while stack and isinstance(cur, dict) and not cur and len(stack) > 1:
        parent, key = stack.pop()
        parent.pop(key, None)
        cur = parent


def changed_leaves(old: Any, new: Any) -> set[Path]:
    a, b = leaves(old or {}), leaves(new or {})
    out = set()
    for p in a | b:
        if get_path(old, p) != get_path(new, p):
            out.add(p)
    return out


def _now() -> str:
    return format_time(datetime.now(timezone.utc))


def entries(obj: Obj) -> list[Obj]:
    return list((obj.get("metadata") or {}).get("managedFields") or [])


def record(obj: Obj, manager: str, operation: str, api_version: str, paths: set[Path],
           *, replace: bool = False, subresource: str = "") -> None:
    """Give ``manager`` ownership of ``paths`` (taken away from every other manager)."""
    if not manager:
        return
    out = []
    mine: set[Path] = set()
    for e in entries(obj):
        owned = from_fields_v1(e.get("fieldsV1"))
        same = (e.get("manager") == manager and e.get("operation") == operation
                and e.get("subresource", "") == subresource)
        if same:
            mine = set() if replace else owned
            continue
        owned -= paths
        if owned:
            e = dict(e)
            e["fieldsV1"] = to_fields_v1(owned)
            out.append(e)
    mine |= paths
    if mine:
        entry: Obj = {"manager": manager, "operation": operation, "apiVersion": api_version,
                      "time": _now(), "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(mine)}
        if subresource:
            entry["subresource"] = subresource
        out.append(entry)
    obj.setdefault("metadata", {})["managedFields"] = out


def owned_by(obj: Obj, manager: str, operation: str | None = None) -> set[Path]:
    out: set[Path] = set()
    for e in entries(obj):
        if e.get("manager") == manager and (operation is None or e.get("operation") == operation):
            out |= from_fields_v1(e.get("fieldsV1"))
    return out


def conflicts(obj: Obj, manager: str, applied: Obj) -> list[tuple[str, str, Path]]:
    """(other manager, its apiVersion, path) for applied leaves that change a field it owns."""
    out = []
    applied_leaves = leaves(applied)
    for e in entries(obj):
        if e.get("manager") == manager:
            continue
        owned = from_fields_v1(e.get("fieldsV1"))
        for p in sorted(applied_leaves & owned):
            if get_path(obj, p) != get_path(applied, p):
                out.append((e.get("manager", ""), e.get("apiVersion", ""), p))
    return out


def apply(live: Obj, manager: str, applied: Obj) -> Obj:
    """The object after ``manager`` applies ``applied``: its dropped fields removed, new merged."""
    out = copy.deepcopy(live)
    before = owned_by(live, manager, "Apply")
    now = leaves(applied)
    for p in before - now:
        del_path(out, p)
    for p in now:
        found, value = get_path(applied, p)
        if found:
            set_path(out, p, value)
    return out


def _last_applied(obj: Obj) -> Obj | None:
    text = ((obj.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    if not isinstance(text, str):
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def upgradable_from_client_side(live: Obj) -> set[Path]:
    """Leaves of the last-applied-configuration annotation whose live value still equals it.

    Those fields were set by client-side apply and nobody changed them since, so a server-side
    apply by ``kubectl`` may take them over without a conflict (the CSA -> SSA upgrade path).
    """
    last = _last_applied(live)
    if last is None:
        return set()
    return {p for p in leaves(last) if get_path(live, p) == get_path(last, p)}


def upgrade_conflicts(live: Obj, manager: str, found: list[tuple[str, str, Path]]
                      ) -> list[tuple[str, str, Path]]:
    """The conflicts that remain once ``kubectl`` may take over unchanged client-side fields."""
    if manager != UPGRADING_MANAGER or not found:
        return found
    allowed = upgradable_from_client_side(live)
    return [c for c in found if c[2] not in allowed]


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
