"""The patch formats kubectl sends: JSON merge patch, JSON patch and strategic merge patch.

Why generic strategic-merge: upstream derives list merge keys from Go struct tags; for the kinds we
serve the tags collapse to a short table by field name (containers merge by ``name``, ports by
``containerPort``, conditions by ``type``...), and every other list (HPA ``spec.metrics``,
``behavior.*.policies``) is atomic, i.e. replaced (``+listType=atomic`` in k8s.io/api autoscaling/v2 types.go).
"""

from __future__ import annotations

import copy
from types import MappingProxyType
from typing import Any, Mapping

import msgspec


class PatchError(ValueError):
    """A patch that cannot be applied (bad JSON pointer, failed test, wrong shape)."""


class PatchTooLarge(PatchError):
    """A JSON patch beyond upstream's bounds (operations, bytes copied): a 413."""


# upstream's bounds on one JSON patch: operations, and bytes its "copy" operations may add
# (JSONPatchMaxCopyBytes, the request body limit), so a short patch cannot double a document
# over and over
MAX_JSON_PATCH_OPERATIONS = 10_000
MAX_COPY_BYTES = 3 * 1024 * 1024


# --------------------------------------------------------------------------- RFC 7386


def merge_patch(target: Any, patch: Any) -> Any:
    """JSON merge patch: maps merge recursively, ``null`` deletes, everything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# --------------------------------------------------------------------------- RFC 6902


def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str):
        raise PatchError(f"invalid JSON pointer {path!r}: must be a string")
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}: must start with '/'")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc: Any, parts: list[str], path: str) -> Any:
    cur = doc
    for p in parts:
        if isinstance(cur, dict):
            if p not in cur:
                raise PatchError(f"path {path!r} not found: missing key {p!r}")
            cur = cur[p]
        elif isinstance(cur, list):
            if not p.isdigit() or int(p) >= len(cur):
                raise PatchError(f"path {path!r} not found: bad index {p!r}")
            cur = cur[int(p)]
        else:
            raise PatchError(f"path {path!r} not found")
    return cur


def _add(doc: Any, parts: list[str], value: Any, path: str) -> Any:
    if not parts:
        return value
    parent = _walk(doc, parts[:-1], path)
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        else:
            if not last.isdigit():
                raise PatchError(f"invalid index {last!r} in {path!r}")
            i = int(last)
            if i > len(parent):
                raise PatchError(f"index {i} out of range in {path!r}")
            parent.insert(i, value)
    else:
        raise PatchError(f"cannot add at {path!r}: parent is not a container")
    return doc


def _remove(doc: Any, parts: list[str], path: str) -> tuple[Any, Any]:
    if not parts:
        raise PatchError("cannot remove the whole document")
    parent = _walk(doc, parts[:-1], path)
    last = parts[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"unable to remove nonexistent key {last!r} at {path!r}")
        return doc, parent.pop(last)
    if isinstance(parent, list):
        if not last.isdigit() or int(last) >= len(parent):
            raise PatchError(f"unable to remove index {last!r} at {path!r}")
        return doc, parent.pop(int(last))
    raise PatchError(f"cannot remove at {path!r}")


def json_patch(doc: Any, ops: Any) -> Any:
    """RFC 6902: add, remove, replace, move, copy, test, applied in order on a copy."""
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be a list of operations")
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise PatchTooLarge(f"The allowed maximum operations in a JSON patch is "
                            f"{MAX_JSON_PATCH_OPERATIONS}, got {len(ops)}")
    doc = copy.deepcopy(doc)
    copied = 0
    for i, op in enumerate(ops):
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"operation {i}: needs 'op' and 'path'")
        kind, path = op["op"], op["path"]
        parts = _pointer(path)
        if kind == "add":
            doc = _add(doc, parts, copy.deepcopy(op.get("value")), path)
        elif kind == "remove":
            doc, _ = _remove(doc, parts, path)
        elif kind == "replace":
            doc, _ = _remove(doc, parts, path)
            doc = _add(doc, parts, copy.deepcopy(op.get("value")), path)
        elif kind in ("move", "copy"):
            src = op.get("from")
            if src is None:
                raise PatchError(f"operation {i}: {kind} needs 'from'")
            sparts = _pointer(src)
            if kind == "move":
                doc, value = _remove(doc, sparts, src)
            else:
                value = _walk(doc, sparts, src)
                copied += len(msgspec.json.encode(value))
                if copied > MAX_COPY_BYTES:
                    raise PatchTooLarge(f"Unable to complete the copy, the accumulated size "
                                        f"increase of copy is {copied}, exceeding the limit "
                                        f"{MAX_COPY_BYTES}")
                value = copy.deepcopy(value)
            doc = _add(doc, parts, value, path)
        elif kind == "test":
            if _walk(doc, parts, path) != op.get("value"):
                raise PatchError(f"testing value {path!r} failed")
        else:
            raise PatchError(f"operation {i}: unknown op {kind!r}")
    return doc


# --------------------------------------------------------------------------- strategic merge
#
# Which lists merge, and by which key, is what the kind's schema says (x-kubernetes-patch-strategy
# and x-kubernetes-patch-merge-key, the markers kubectl computes its patches from): a Service's
# ports merge by port, a container's by containerPort. For a kind without a published schema the
# field-name table below is the guess.

# List fields that merge by a key, by field name (kinds without a schema only).
MERGE_KEYS: Mapping[str, str] = MappingProxyType({
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "env": "name", "ports": "containerPort", "volumeMounts": "mountPath", "volumes": "name",
    "volumeDevices": "devicePath", "imagePullSecrets": "name", "hostAliases": "ip",
    "conditions": "type", "ownerReferences": "uid", "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
})
# Primitive lists that merge as sets (kinds without a schema only).
SET_LISTS = frozenset({"finalizers"})

_MERGE_KEY = "x-kubernetes-patch-merge-key"
_STRATEGY = "x-kubernetes-patch-strategy"
_LIST_TYPE = "x-kubernetes-list-type"
_LIST_MAP_KEYS = "x-kubernetes-list-map-keys"
_MAP_TYPE = "x-kubernetes-map-type"
_REF = "#/components/schemas/"


class SchemaView:
    """A position in a kind's schema (definitions resolved through ``$ref``/one-element
    ``allOf``), or ``None`` for a kind without one. Strategic merge reads its patch markers,
    server-side apply (:mod:`.fieldpath`) its list and map types: one source of list keys."""

    __slots__ = ("schema", "defs")

    def __init__(self, schema: dict[str, Any], defs: dict[str, Any]) -> None:
        while True:
            target = schema.get("$ref")
            if target is None and len(schema.get("allOf") or ()) == 1:
                target = schema["allOf"][0].get("$ref")
            if not (isinstance(target, str) and target.startswith(_REF)):
                break
            schema = defs.get(target[len(_REF):], {})
        self.schema = schema
        self.defs = defs

    def field(self, key: str) -> "SchemaView | None":
        sub = (self.schema.get("properties") or {}).get(key)
        if sub is None:
            extra = self.schema.get("additionalProperties")
            sub = extra if isinstance(extra, dict) else None
        return None if sub is None else SchemaView(sub, self.defs)

    def items(self) -> "SchemaView | None":
        sub = self.schema.get("items")
        return SchemaView(sub, self.defs) if isinstance(sub, dict) else None

    def list_type(self) -> str | None:
        """``map`` (items keyed by :meth:`map_keys`), ``set`` (unique scalars), ``atomic`` or
        None (unmarked: atomic too), as server-side apply reads it."""
        return self.schema.get(_LIST_TYPE)

    def map_keys(self) -> tuple[str, ...]:
        return tuple(self.schema.get(_LIST_MAP_KEYS) or ())

    def atomic_map(self) -> bool:
        """Whether this object is owned and replaced as a whole (a label selector)."""
        return self.schema.get(_MAP_TYPE) == "atomic"

    def list_merge(self) -> tuple[bool, str | None]:
        """(whether patches merge into this list, the key its items merge by)."""
        strategy = str(self.schema.get(_STRATEGY) or "")
        return "merge" in strategy.split(","), self.schema.get(_MERGE_KEY)


def strategic_merge_patch(target: Any, patch: Any, schema: SchemaView | None = None) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return None
    out = dict(target)
    retain = patch.get("$retainKeys")
    for k, v in patch.items():
        if k.startswith("$setElementOrder/") or k in ("$patch", "$retainKeys"):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            field = k.split("/", 1)[1]
            if isinstance(out.get(field), list) and isinstance(v, list):
                out[field] = [x for x in out[field] if x not in v]
            continue
        if k.startswith("$"):
            continue  # unknown directive: ignore rather than store
        sub = schema.field(k) if schema is not None else None
        if v is None:
            out.pop(k, None)
        elif isinstance(v, list):
            out[k] = _merge_list(k, out.get(k), v, sub, schema is not None)
        elif isinstance(v, dict):
            merged = strategic_merge_patch(out.get(k), v, sub)
            if merged is None:
                out.pop(k, None)
            else:
                out[k] = merged
        else:
            out[k] = v
    if isinstance(retain, list):
        out = {k: v for k, v in out.items() if k in retain}
    return out


def _merge_list(field: str, current: Any, patch: list[Any], schema: SchemaView | None,
                typed: bool) -> list[Any]:
    if typed:  # the kind has a schema: its markers decide (no marker: the list is replaced)
        merge, key = schema.list_merge() if schema is not None else (False, None)
        items = schema.items() if schema is not None else None
    else:
        merge, key, items = field in SET_LISTS or field in MERGE_KEYS, MERGE_KEYS.get(field), None
    if not merge or not isinstance(current, list):
        return [_strip_directives(x) for x in patch]
    if key is None:  # a set of primitives: the patch's values are added
        out = list(current)
        for x in patch:
            if x not in out:
                out.append(x)
        return out
    if not all(isinstance(x, dict) for x in patch):
        return [_strip_directives(x) for x in patch]
    if any(x.get("$patch") == "replace" for x in patch):
        return [_strip_directives(x) for x in patch if x.get("$patch") != "replace"]
    out = [copy.deepcopy(x) for x in current]
    for item in patch:
        kv = item.get(key)
        idx = next((i for i, x in enumerate(out) if isinstance(x, dict) and x.get(key) == kv), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append(_strip_directives(item))
        else:
            out[idx] = strategic_merge_patch(out[idx], item, items)
    return out


def _strip_directives(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _strip_directives(v) for k, v in x.items() if not k.startswith("$")}
    if isinstance(x, list):
        return [_strip_directives(v) for v in x]
    return x


# --------------------------------------------------------------------------- dispatch

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
APPLY_CBOR = "application/apply-patch+cbor"
PATCH_TYPES = (JSON_PATCH, MERGE, STRATEGIC, APPLY)


def apply_patch(content_type: str, current: dict[str, Any], patch: Any,
                schema: SchemaView | None = None) -> dict[str, Any]:
    """Apply a merge/strategic/json patch (server-side apply is handled by the server);
    ``schema`` is the kind's, for strategic merge."""
    if content_type == MERGE:
        if not isinstance(patch, dict):
            raise PatchError("a merge patch must be a JSON object")
        return merge_patch(current, patch)
    if content_type == STRATEGIC:
        if not isinstance(patch, dict):
            raise PatchError("a strategic merge patch must be a JSON object")
        return strategic_merge_patch(current, patch, schema) or {}
    if content_type == JSON_PATCH:
        out = json_patch(current, patch)
        if not isinstance(out, dict):
            raise PatchError("the patched document is not an object")
        return out
    raise PatchError(f"unsupported patch type {content_type!r}")
