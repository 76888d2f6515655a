"""Field paths as server-side apply sees them: maps by field, keyed lists by element.

Why schema-driven: which lists are keyed, and by what, is the kind's schema's to say (the same
definitions strategic merge reads, through :class:`~pyhpa.cluster.apiserver.patch.SchemaView`),
as structured-merge-diff reads it. ``x-kubernetes-list-type: map`` lists are tracked per element,
named by its ``x-kubernetes-list-map-keys`` (``k:{"name":"web"}``; a missing key field takes its
schema default, so a port without a protocol is ``k:{"containerPort":80,"protocol":"TCP"}``), and
``set`` lists per value (``v:"foregroundDeletion"``). One leaf each: every other list, a keyed
list whose items lack their keys or repeat one, an object marked ``x-kubernetes-map-type: atomic``
(a label selector, an owner reference, autoscaling/v1's ``scaleTargetRef``), and the lists of a
kind without a schema (a custom kind's schema is its CRD's).

A path is a tuple of field names (``str``) and :class:`Item` list elements.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Union

from pyhpa.api.schemas import BuiltinSchemas
from pyhpa.cluster.apiserver.patch import SchemaView

Obj = dict[str, Any]
Shape = Union[SchemaView, None]  # where a value sits in its kind's schema; None: unknown
# The metadata fields the server owns: never anyone's managed fields.
SKIP_META = frozenset({"name", "namespace", "uid", "resourceVersion", "generation",
                       "creationTimestamp", "managedFields", "selfLink", "deletionTimestamp",
                       "deletionGracePeriodSeconds", "generateName"})
_ABSENT: Any = object()


@dataclass(frozen=True)
class Item:
    """One list element in a path: ``k`` (its key fields as compact JSON, sorted by name),
    ``v`` (a set's value as JSON) or ``i`` (an index), spelled as FieldsV1 spells it."""

    kind: str
    text: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.text}"

    def describe(self) -> str:
        """As a conflict names it: ``[name="web"]``, ``[containerPort=80,protocol="TCP"]``,
        ``[="foregroundDeletion"]``."""
        if self.kind == "k":
            fields = json.loads(self.text)
            return "[" + ",".join(f"{k}={_json(v)}" for k, v in fields.items()) + "]"
        if self.kind == "v":
            return f"[={self.text}]"
        return f"[{self.text}]"


Elem = Union[str, Item]
Path = tuple[Elem, ...]


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def child(shape: Shape, key: str) -> Shape:
    return shape.field(key) if shape is not None else None


def _atomic(shape: Shape) -> bool:
    return shape is not None and shape.atomic_map()


def elements(shape: Shape, items: list[Any]) -> list[Item] | None:
    """Each item's path element, or None when the list is one leaf (atomic, unmarked, or
    items without their keys or with a repeated one)."""
    kind = shape.list_type() if shape is not None else None
    if kind not in ("map", "set") or shape is None:
        return None
    out: list[Item] = []
    if kind == "set":
        for x in items:
            if isinstance(x, (dict, list)):
                return None
            out.append(Item("v", _json(x)))
    else:
        keys, item_shape = sorted(shape.map_keys()), shape.items()
        for x in items:
            if not isinstance(x, dict):
                return None
            fields = {}
            for k in keys:
                if k in x:
                    fields[k] = x[k]
                else:
                    sub = child(item_shape, k)
                    if sub is not None and "default" in sub.schema:
                        fields[k] = sub.schema["default"]
            if not fields:
                return None
            out.append(Item("k", _json(fields)))
    return out if len(set(out)) == len(out) else None


def skipped(path: Path) -> bool:
    """apiVersion, kind and the server's metadata fields: nobody's."""
    return (len(path) == 1 and path[0] in ("apiVersion", "kind")) or \
        (len(path) == 2 and path[0] == "metadata" and path[1] in SKIP_META)


def leaves(obj: Any, shape: Shape = None) -> set[Path]:
    """The paths a manifest sets: its scalars, atomic lists and maps, empty maps, and each
    element of a keyed list or set (with the fields inside it)."""
    out: set[Path] = set()
    _leaves(obj, shape, (), out)
    return out


def _leaves(value: Any, shape: Shape, path: Path, out: set[Path]) -> None:
    if isinstance(value, dict) and value and not _atomic(shape):
        for k, v in value.items():
            p = path + (k,)
            if not skipped(p):
                _leaves(v, child(shape, k), p, out)
        return
    found = elements(shape, value) if isinstance(value, list) and value else None
    if found is None:
        if path:
            out.add(path)
        return
    item_shape = shape.items() if shape is not None else None
    for e, x in zip(found, value):
        out.add(path + (e,))
        if e.kind == "k":
            _leaves(x, item_shape, path + (e,), out)


def changed_leaves(old: Any, new: Any, shape: Shape = None) -> set[Path]:
    """The paths (of either side) whose values differ; equal parts are not descended, so a
    controller's small change to a large object costs little."""
    out: set[Path] = set()
    _changed(old or {}, new or {}, shape, (), out)
    return out


def _changed(a: Any, b: Any, shape: Shape, path: Path, out: set[Path]) -> None:
    if a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict) and (a and b or not path) \
            and not _atomic(shape):
        for k in a.keys() | b.keys():
            p = path + (k,)
            if not skipped(p):
                _changed(a.get(k, _ABSENT), b.get(k, _ABSENT), child(shape, k), p, out)
        return
    if isinstance(a, list) and isinstance(b, list) and a and b:
        ea, eb = elements(shape, a), elements(shape, b)
        if ea is not None and eb is not None:
            item_shape = shape.items() if shape is not None else None
            by_a, by_b = dict(zip(ea, a)), dict(zip(eb, b))
            for e in by_a.keys() | by_b.keys():
                x, y = by_a.get(e, _ABSENT), by_b.get(e, _ABSENT)
                if x == y:
                    continue
                if x is _ABSENT or y is _ABSENT:
                    out.add(path + (e,))
                if e.kind == "k":
                    _changed(x, y, item_shape, path + (e,), out)
            return
    for side in (a, b):
        if side is not _ABSENT:
            _leaves(side, shape, path, out)


def _find(items: list[Any], e: Item, shape: Shape) -> int | None:
    found = elements(shape, items)
    if found is not None:
        return next((i for i, x in enumerate(found) if x == e), None)
    if e.kind == "i":
        return int(e.text) if e.text.isdigit() and int(e.text) < len(items) else None
    want = json.loads(e.text)  # no schema at hand: match the fields the key names
    for i, x in enumerate(items):
        if e.kind == "v" and x == want:
            return i
        if e.kind == "k" and isinstance(x, dict) and all(x.get(k) == v for k, v in want.items()):
            return i
    return None


def get_path(obj: Any, path: Path, shape: Shape = None) -> tuple[bool, Any]:
    cur = obj
    for part in path:
        if isinstance(part, Item):
            i = _find(cur, part, shape) if isinstance(cur, list) else None
            if i is None:
                return False, None
            cur, shape = cur[i], shape.items() if shape is not None else None
        else:
            if not isinstance(cur, dict) or part not in cur:
                return False, None
            cur, shape = cur[part], child(shape, part)
    return True, cur


def del_path(obj: Obj, path: Path, shape: Shape = None) -> None:
    """Remove a field or a list element; maps left empty by it go too (not top sections)."""
    stack: list[tuple[Any, Any]] = []
    cur: Any = obj
    for part in path:
        if isinstance(part, Item):
            i = _find(cur, part, shape) if isinstance(cur, list) else None
            if i is None:
                return
            stack.append((cur, i))
            cur, shape = cur[i], shape.items() if shape is not None else None
        else:
            if not isinstance(cur, dict) or part not in cur:
                return
            stack.append((cur, part))
            cur, shape = cur[part], child(shape, part)
    parent, key = stack.pop()
    parent.pop(key)
    while len(stack) > 1 and isinstance(parent, dict) and not parent:
        parent, key = stack.pop()
        if not isinstance(parent, dict):
            break
        parent.pop(key, None)


def merge(live: Any, applied: Any, shape: Shape = None) -> Any:
    """``applied`` over ``live``: maps merge by field, keyed lists and sets by element (the
    live order kept, new elements where the applied list puts them); the rest is replaced."""
    if isinstance(applied, dict) and isinstance(live, dict) and not _atomic(shape):
        out = dict(live)
        for k, v in applied.items():
            out[k] = merge(live.get(k, _ABSENT), v, child(shape, k))
        return out
    if isinstance(applied, list) and isinstance(live, list):
        ea, el = elements(shape, applied), elements(shape, live)
        if ea is not None and el is not None:
            return _merge_items(live, el, applied, ea, shape.items() if shape else None)
    return copy.deepcopy(applied)


def _merge_items(live: list[Any], el: list[Item], applied: list[Any], ea: list[Item],
                 shape: Shape) -> list[Any]:
    """Upstream's order: walk both lists; an element only live has stays where it is, the
    elements both have come in the applied order (merged), new ones where the applied list
    has them relative to those."""
    live_by, applied_by = dict(zip(el, live)), dict(zip(ea, applied))
    shared = [e for e in ea if e in live_by]  # in the applied order
    out: list[Any] = []
    done: set[Item] = set()
    i = j = s = 0  # s: the next shared element the applied order wants
    while i < len(el) or j < len(ea):
        if i < len(el) and j < len(ea):
            if el[i] == ea[j]:
                out.append(merge(live[i], applied[j], shape))
                done.add(el[i])
                i, j, s = i + 1, j + 1, s + 1
                continue
            if el[i] in applied_by and s < len(shared) and shared[s] != el[i]:
                i += 1  # a shared element the applied list puts later
                continue
        if i < len(el) and (el[i] not in applied_by or el[i] in done):
            if el[i] not in applied_by:
                out.append(live[i])
            i += 1
            continue
        if j < len(ea):
            e = ea[j]
            out.append(merge(live_by.get(e, _ABSENT), applied[j], shape))
            done.add(e)
            j += 1
            if s < len(shared) and shared[s] == e:
                s += 1
    return out


def prune(obj: Obj, gone: set[Path], kept: Iterable[Path], shape: Shape = None) -> None:
    """Remove the ``gone`` paths from ``obj``, but not those that lead to a ``kept`` one."""
    inner = {q[:n] for q in kept for n in range(1, len(q))}
    removed: set[Path] = set()
    for p in sorted(gone, key=len):  # an element before its fields (which name it)
        if p not in inner and not any(p[:n] in removed for n in range(1, len(p))):
            del_path(obj, p, shape)
            removed.add(p)


def describe(path: Path) -> str:
    """As a conflict names a field: ``.spec.template.spec.containers[name="web"].image``."""
    return "".join(e.describe() if isinstance(e, Item) else "." + e for e in path)


# --------------------------------------------------------------------------- FieldsV1


def to_fields_v1(paths: Iterable[Path]) -> Obj:
    """The FieldsV1 document of ``paths``: ``{"f:spec": {"f:containers": {"k:{...}": {".":
    {}, "f:image": {}}}}}`` (``"."``: the element itself is owned, beside fields inside it)."""
    root: Obj = {}
    for p in paths:
        cur = root
        for part in p:
            cur = cur.setdefault(_key(part), {})
        cur["."] = {}
    return _tidy(root)


def _key(e: Elem) -> str:
    return str(e) if isinstance(e, Item) else f"f:{e}"


def _tidy(node: Obj) -> Obj:
    out: Obj = {}
    if "." in node and len(node) > 1:
        out["."] = {}
    for k in sorted(k for k in node if k != "."):
        out[k] = _tidy(node[k])
    return out


def from_fields_v1(doc: Obj | None, prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    for k, v in (doc or {}).items():
        if k == ".":
            if prefix:
                out.add(prefix)
            continue
        kind, _, text = k.partition(":")
        if kind == "f":
            p = prefix + (text,)
        elif kind in ("k", "v", "i"):
            p = prefix + (Item(kind, text),)
        else:
            continue
        if v:
            out |= from_fields_v1(v, p)
        else:
            out.add(p)
    return out


# --------------------------------------------------------------------------- shapes

Shapes = Callable[[str], Shape]  # apiVersion -> where a kind's object sits in its schema


def shapes_of(schemas: BuiltinSchemas | None, kind: str) -> Shapes:
    """The root shape of ``kind`` in each apiVersion (None: a kind without a built-in schema,
    whose lists are each one leaf)."""
    def shape(api_version: str) -> Shape:
        if schemas is None:
            return None
        group, _, version = api_version.rpartition("/")
        name = schemas.of_kind(group, version, kind)
        return None if name is None else SchemaView(schemas.definitions[name],
                                                    schemas.definitions)
    return shape


def no_shapes(_api_version: str) -> Shape:
    return None
