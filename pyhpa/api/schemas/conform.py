"""An object checked against its kind's published schema, the way upstream's decoder reads it.

Why from the schemas: a real API server decodes a request into Go structs, so a value of the
wrong JSON type fails the request (400, ``json: cannot unmarshal string into Go struct field
DeploymentSpec.spec.replicas of type int32``), a field the struct lacks is dropped (with a warning,
or a 400 under ``fieldValidation=Strict``: ``unknown field "spec.foo"``), and a ``null`` leaves
the field unset. The schemas kubectl explains and validates against are the ones checked here, so
the server and its documents cannot disagree. Objects marked ``x-kubernetes-preserve-unknown-
fields`` keep whatever they hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from pyhpa.api.schemas.build import (
    INT_OR_STRING, MICRO_TIME, OBJECT_META, PRESERVE, QUANTITY, TIME, Schema, ref, ref_name)

# What a kind without a schema of its own (a custom kind) is read as: upstream's metadata.
METADATA_ONLY: Mapping[str, Any] = MappingProxyType({
    "type": "object", "properties": {"metadata": ref(OBJECT_META)}, "additionalProperties": True})
INT_RANGES = MappingProxyType({"int32": (-(2 ** 31), 2 ** 31 - 1), "int64": (-(2 ** 63), 2 ** 63 - 1)})
_QUANTITY_ERROR = ("quantities must match the regular expression "
                   "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z")


@dataclass
class Conformed:
    """What checking one object found: ``error`` is the first value of a wrong type, in Go's
    words (None when every value fits); ``unknown`` the paths of dropped fields, in order;
    ``allowed`` the field names the object holding each of them has (for "did you mean")."""

    error: str | None = None
    unknown: list[str] = field(default_factory=list)
    allowed: dict[str, tuple[str, ...]] = field(default_factory=dict)


class _Mismatch(Exception):
    pass


def go_type(name: str) -> str:
    """The Go type a definition name stands for: ``io.k8s.api.apps.v1.DeploymentSpec`` ->
    ``v1.DeploymentSpec``."""
    parts = name.split(".")
    return ".".join(parts[-2:]) if len(parts) > 1 else name


def _json_kind(value: Any, number_text: bool) -> str:
    """How Go's decoder names a JSON value in ``cannot unmarshal <value>``."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return f"number {value}" if number_text else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


class _Walker:
    def __init__(self, defs: dict[str, Schema], drop: bool, types: bool) -> None:
        self.defs = defs
        self.drop = drop
        self.types = types
        self.unknown: list[str] = []
        self.allowed: dict[str, tuple[str, ...]] = {}

    def resolve(self, schema: Schema) -> tuple[Schema, str | None]:
        name = None
        target = ref_name(schema)
        while target is not None:
            name = target
            schema = self.defs.get(target, {})
            target = ref_name(schema)
        return schema, name

    def mismatch(self, value: Any, go: str, struct: str, go_path: str,
                 number_text: bool = False) -> Any:
        """A value of the wrong type: an error, or (not checking types) the value as it is."""
        if not self.types:
            return value
        where = f"Go struct field {struct}.{go_path}" if struct and go_path else "Go value"
        raise _Mismatch(f"json: cannot unmarshal {_json_kind(value, number_text)} into {where} "
                        f"of type {go}")

    def type_of(self, schema: Schema, name: str | None) -> str:
        """The Go type of a schema position (for messages)."""
        if name is not None:
            return {QUANTITY: "resource.Quantity", INT_OR_STRING: "intstr.IntOrString",
                    TIME: "v1.Time", MICRO_TIME: "v1.MicroTime"}.get(name, go_type(name))
        kind = schema.get("type")
        if kind == "string":
            return "string"
        if kind == "integer":
            return schema.get("format") or "int64"
        if kind == "number":
            return "float64"
        if kind == "boolean":
            return "bool"
        if kind == "array":
            items = schema.get("items")
            if isinstance(items, dict):
                inner, inner_name = self.resolve(items)
                return "[]" + self.type_of(inner, inner_name)
            return "[]interface {}"
        if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
            inner, inner_name = self.resolve(schema["additionalProperties"])
            return "map[string]" + self.type_of(inner, inner_name)
        return "map[string]interface {}"

    def walk(self, value: Any, schema: Schema, path: str, struct: str, go_path: str) -> Any:
        """``value`` checked against ``schema``; returns it with unknown fields and nulls gone
        (when dropping). ``path`` names fields for warnings, ``go_path`` for Go's messages."""
        schema, name = self.resolve(schema)
        if name == QUANTITY:
            return self.quantity(value)
        if name == INT_OR_STRING:
            if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)
                                          and _fits(value, "int32")):
                return value
            return self.mismatch(value, "int32", "", "", number_text=isinstance(value, float)
                            or isinstance(value, int) and not isinstance(value, bool))
        kind = schema.get("type")
        if schema.get(PRESERVE) and kind != "object":
            return value
        if kind == "string":
            if not isinstance(value, str):
                return self.mismatch(value, "string", struct, go_path)
            if schema.get("format") == "date-time" and not _RFC3339.match(value) and self.types:
                raise _Mismatch(f'parsing time "{value}" as "2006-01-02T15:04:05Z07:00": '
                                f'cannot parse "{value}" as "2006"')
            return value
        if kind == "integer":
            fmt = schema.get("format") or "int64"
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return self.mismatch(value, fmt, struct, go_path)
            if isinstance(value, float) or not _fits(value, fmt):
                return self.mismatch(value, fmt, struct, go_path, number_text=True)
            return value
        if kind == "number":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return self.mismatch(value, "float64", struct, go_path)
            return value
        if kind == "boolean":
            if not isinstance(value, bool):
                return self.mismatch(value, "bool", struct, go_path)
            return value
        if kind == "array":
            if not isinstance(value, list):
                return self.mismatch(value, self.type_of(schema, name), struct, go_path)
            items = schema.get("items")
            if isinstance(items, dict):
                inner, inner_name = self.resolve(items)
                # Go decodes a null element into the element type's zero value (an empty
                # struct, "" in a []string): every later stage (validation, the controllers)
                # then reads a value of the element's type, as upstream's do
                null_item = {} if inner_name is not None and "properties" in inner else \
                    self.zero(items)
                out = []
                for i, item in enumerate(value):
                    if item is None:
                        out.append(dict(null_item) if isinstance(null_item, dict) else null_item)
                        continue
                    out.append(self.walk(item, items, f"{path}[{i}]", struct, go_path))
                return out
            return value
        if kind == "object" or "properties" in schema:
            if not isinstance(value, dict):
                return self.mismatch(value, self.type_of(schema, name), struct, go_path)
            if schema.get(PRESERVE):
                return value
            return self.fields(value, schema, name, path, struct, go_path)
        return value

    def fields(self, value: dict[str, Any], schema: Schema, name: str | None, path: str,
               struct: str, go_path: str) -> dict[str, Any]:
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        inner_struct = name.rsplit(".", 1)[-1] if name is not None and props is not None else struct
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = f"{path}.{key}" if path else key
            if props is not None and key in props:
                if item is None and self.drop:
                    continue  # a null leaves the field unset
                if item is None:
                    out[key] = item
                    continue
                sub_go = f"{go_path}.{key}" if go_path else key
                out[key] = self.walk(item, props[key], sub, inner_struct, sub_go)
            elif isinstance(extra, dict):
                out[key] = self.zero(extra) if item is None else \
                    self.walk(item, extra, sub, struct, go_path)
            elif props is not None and extra is not True:
                self.unknown.append(sub)
                self.allowed[sub] = tuple(props)
                if not self.drop:
                    out[key] = item
            else:
                out[key] = item
        return out

    def zero(self, schema: Schema) -> Any:
        """What a ``null`` map value decodes to in Go: the element type's zero value (a
        ``resource.Quantity`` reads ``null`` as zero, ``Quantity.UnmarshalJSON``)."""
        resolved, name = self.resolve(schema)
        if name == QUANTITY:
            return "0"
        kind = resolved.get("type")
        return {"string": "", "integer": 0, "number": 0, "boolean": False}.get(kind)

    def quantity(self, value: Any) -> Any:
        from pyhpa.api.quantity import Quantity

        if not self.types:
            return value
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise _Mismatch(_QUANTITY_ERROR)
        try:
            Quantity.parse(value)
        except (ValueError, TypeError, OverflowError):
            raise _Mismatch(_QUANTITY_ERROR) from None
        return value


def _fits(value: int, fmt: str) -> bool:
    low, high = INT_RANGES.get(fmt, INT_RANGES["int64"])
    return low <= value <= high


def conform(obj: dict[str, Any], schema: Schema, defs: dict[str, Schema], *,
            drop: bool = True, types: bool = True) -> tuple[dict[str, Any], Conformed]:
    """``obj`` read by ``schema`` (usually a reference to the kind's definition): the object as
    upstream would keep it (unknown fields and null fields gone when ``drop``) and what was
    found. On a type error the object is returned unchanged. Without ``types`` a value of the
    wrong type is kept as it is (for kinds whose validation names such fields itself)."""
    walker = _Walker(defs, drop, types)
    try:
        out = walker.walk(obj, schema, "", "", "")
    except _Mismatch as exc:
        return obj, Conformed(str(exc), walker.unknown, walker.allowed)
    return out, Conformed(None, walker.unknown, walker.allowed)


def unknown_fields(obj: Any, name: str, defs: dict[str, Schema]) -> list[str]:
    """Paths in ``obj`` (``spec.foo``, ``spec.template.spec.containers[0].bar``) that the
    definition ``name`` has no field for, in document order (nothing is changed)."""
    return conform(obj, ref(name), defs, drop=False)[1].unknown
