"""OpenAPI schemas derived from the API model's msgspec structs (:mod:`pyhpa.api.types`).

Why derive: the HPA's field names, order, nesting and types already live in the model that
decodes every request; publishing a second hand-written copy would drift. What the model cannot
say (descriptions, int32 vs int64, upstream's required list where it differs from msgspec's,
list markers, value ranges) comes from a :class:`Field` table next to the call site, and
:func:`from_model` refuses a struct field without an entry or an entry without a field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import msgspec.inspect as mi

from pyhpa.api.quantity import Quantity
from pyhpa.api.schemas.build import (
    REF_PREFIX, Schema, boolean, definition, int32, int64, quantity, quantity_map, string,
    string_map, strings, struct, time)


@dataclass(frozen=True)
class Field:
    """What the model does not say about one field."""

    description: str
    int64: bool = False
    optional: bool = False  # upstream does not require it although msgspec has no default
    enum: tuple[str, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    markers: dict[str, Any] = field(default_factory=dict)  # list/map extensions


@dataclass(frozen=True)
class Type:
    """Description and per-field facts of one struct; ``atomic`` = upstream's structType=atomic."""

    description: str
    fields: dict[str, Field]
    atomic: bool = False


class ModelError(ValueError):
    """The model and its documentation table disagree."""


def from_model(model: type, prefix: str, docs: dict[str, Type], *,
               shared: dict[type, str], gvk: tuple[str, str, str] | None = None,
               rename: Callable[[str], str] = lambda n: n) -> dict[str, Schema]:
    """Definitions ``prefix + rename(struct name)`` for ``model`` and every struct it contains.

    ``shared`` maps structs that already have a definition (ObjectMeta, LabelSelector) to its
    name; they are referenced, not generated. ``docs`` is keyed by the renamed struct name.
    """
    out: dict[str, Schema] = {}

    def walk(info: mi.StructType, top: bool) -> str:
        short = rename(info.cls.__name__)
        name = prefix + short
        if name in out:
            return name
        out[name] = {}  # placeholder against cycles
        doc = docs.get(short)
        if doc is None:
            raise ModelError(f"no documentation for {short}")
        props: dict[str, Schema] = {}
        required: list[str] = []
        names = {f.encode_name for f in info.fields}
        stray = set(doc.fields) - names
        if stray:
            raise ModelError(f"{short}: documented fields not in the model: {sorted(stray)}")
        for f in info.fields:
            fdoc = doc.fields.get(f.encode_name)
            if fdoc is None:
                raise ModelError(f"no documentation for {short}.{f.encode_name}")
            props[f.encode_name] = prop(f.type, fdoc)
            if f.required and not fdoc.optional:
                required.append(f.encode_name)
        out[name] = definition(doc.description, props, required=required, atomic=doc.atomic,
                               gvk=gvk if top else None)
        return name

    def prop(t: Any, fdoc: Field) -> Schema:
        optional = isinstance(t, mi.UnionType) and any(isinstance(u, mi.NoneType) for u in t.types)
        if isinstance(t, mi.UnionType):
            rest = [u for u in t.types if not isinstance(u, mi.NoneType)]
            if len(rest) != 1:
                raise ModelError(f"cannot publish a union of {rest}")
            t = rest[0]
        desc = fdoc.description
        if isinstance(t, mi.StructType):
            target = shared.get(t.cls) or walk(t, False)
            s = struct(target, desc, embedded=not optional)
        elif isinstance(t, mi.StrType):
            s = string(desc, enum=fdoc.enum)
        elif isinstance(t, mi.BoolType):
            s = boolean(desc)
        elif isinstance(t, mi.IntType):
            make = int64 if fdoc.int64 else int32
            s = make(desc, minimum=fdoc.minimum, maximum=fdoc.maximum)
        elif isinstance(t, mi.DateTimeType):
            s = time(desc)
        elif isinstance(t, mi.CustomType) and t.cls is Quantity:
            s = quantity(desc)
        elif isinstance(t, mi.ListType):
            s = {"type": "array", "items": item(t.item_type), "description": desc}
        elif isinstance(t, mi.DictType) and isinstance(t.value_type, mi.StrType):
            s = string_map(desc)
        elif isinstance(t, mi.DictType) and isinstance(t.value_type, mi.CustomType) \
                and t.value_type.cls is Quantity:
            s = quantity_map(desc)
        else:
            raise ModelError(f"no schema rule for {t!r}")
        s.update(fdoc.markers)
        return s

    def item(t: Any) -> Schema:
        if isinstance(t, mi.StructType):
            return {"$ref": REF_PREFIX + (shared.get(t.cls) or walk(t, False))}
        if isinstance(t, mi.StrType):
            return strings()
        raise ModelError(f"no item rule for {t!r}")

    info = mi.type_info(model)
    if not isinstance(info, mi.StructType):
        raise ModelError(f"{model!r} is not a struct")
    walk(info, True)
    return out
