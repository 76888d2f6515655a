"""A CRD's structural schema applied to its objects: defaulting, pruning and value validation.

Why: the apiserver treats custom resources through the ``openAPIV3Schema`` of their version.
Fields the schema does not know are dropped (pruning; ``fieldValidation=Strict`` turns them into
an error instead), absent fields with a ``default`` get it, ``null`` in a non-nullable field
counts as absent, and values are checked against ``type``, ``required``, ``enum``, bounds,
lengths, ``pattern`` and the ``allOf``/``anyOf``/``oneOf``/``not`` combinators. The messages
follow upstream's (``spec.replicas in body must be of type integer: "string"``).
Not evaluated: ``x-kubernetes-validations`` (CEL rules) and ``format`` beyond int32/int64 ranges.
"""

from __future__ import annotations

import copy
import re
from types import MappingProxyType
from typing import Any

from pyhpa.api.codec import json_type
from pyhpa.api.field_errors import cause
from pyhpa.api.schemas.conform import INT_RANGES

Obj = dict[str, Any]
Cause = dict[str, str]

_TYPES = ("object", "array", "string", "integer", "number", "boolean")
_ROOT_KEPT = ("apiVersion", "kind", "metadata")
_OPENAPI_TYPES = MappingProxyType({"null": "null", "bool": "boolean", "int": "integer", "float": "number",
                                   "str": "string", "array": "array"})


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _preserve(schema: Obj) -> bool:
    return bool(schema.get("x-kubernetes-preserve-unknown-fields"))


def _embedded(schema: Obj) -> bool:
    return bool(schema.get("x-kubernetes-embedded-resource"))


# --------------------------------------------------------------------------- defaulting


def apply_defaults(obj: Any, schema: Obj) -> None:
    """Fill ``default`` values in place (absent or null-but-not-nullable properties)."""
    if not isinstance(schema, dict):
        return
    if isinstance(obj, dict):
        props = schema.get("properties")
        if isinstance(props, dict):
            for key, sub in props.items():
                if not isinstance(sub, dict):
                    continue
                if "default" in sub and (key not in obj or (obj[key] is None
                                                             and not sub.get("nullable"))):
                    obj[key] = copy.deepcopy(sub["default"])
                if key in obj:
                    apply_defaults(obj[key], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key, value in obj.items():
                if not isinstance(props, dict) or key not in props:
                    apply_defaults(value, extra)
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        for item in obj:
            apply_defaults(item, schema["items"])


# --------------------------------------------------------------------------- pruning


def prune(obj: Any, schema: Obj, *, root: bool = True, path: str = "", dry_run: bool = False) -> list[str]:
    """Drop fields the schema does not specify (in place); returns their paths.

    ``null`` values of non-nullable fields without a default are dropped too (not reported),
    as upstream does before validating. ``dry_run``: only report, leave ``obj`` as it is.
    """
    removed: list[str] = []
    if not isinstance(schema, dict):
        return removed
    if isinstance(obj, dict):
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        extra = schema.get("additionalProperties")
        keep_meta = root or _embedded(schema)
        for key in list(obj):
            value = obj[key]
            sub = props.get(key)
            if keep_meta and key in _ROOT_KEPT:
                if key != "metadata" and isinstance(sub, dict):
                    removed += prune(value, sub, root=False, dry_run=dry_run, path=_join(path, key))
                continue
            if isinstance(sub, dict):
                if value is None and not sub.get("nullable") and "default" not in sub:
                    if not dry_run:
                        del obj[key]
                    continue
                removed += prune(value, sub, root=False, dry_run=dry_run, path=_join(path, key))
            elif isinstance(extra, dict):
                if value is None and not extra.get("nullable"):
                    if not dry_run:
                        del obj[key]
                    continue
                removed += prune(value, extra, root=False, dry_run=dry_run, path=f"{path}[{key}]")
            elif extra is True or _preserve(schema):
                continue
            else:
                if not dry_run:
                    del obj[key]
                removed.append(_join(path, key))
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(obj):
            removed += prune(item, schema["items"], root=False, dry_run=dry_run, path=f"{path}[{i}]")
    return removed


def unknown_fields(obj: Obj, schema: Obj) -> list[str]:
    """What :func:`prune` would drop from ``obj`` (left untouched)."""
    return prune(obj, schema, dry_run=True)


# --------------------------------------------------------------------------- validation


def _type_name(value: Any) -> str:
    """The OpenAPI type of a decoded JSON value."""
    return _OPENAPI_TYPES.get(json_type(value), "object")


def _is_type(value: Any, want: str) -> bool:
    got = _type_name(value)
    return got == want or (want == "number" and got == "integer")


def _regex(pattern: str) -> re.Pattern[str] | None:
    """The compiled ``pattern`` (``re`` keeps recent ones compiled), None when it is invalid."""
    try:
        return re.compile(pattern)
    except re.error:
        return None


def _shown(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value).lower() \
        if isinstance(value, bool) else str(value)


def validate(obj: Any, schema: Obj, path: str = "") -> list[Cause]:
    """Field errors of ``obj`` against ``schema`` (Status causes, upstream's wording)."""
    if not isinstance(schema, dict):
        return []
    out: list[Cause] = []
    if obj is None:
        if schema.get("nullable") or not schema.get("type"):
            return []
        return [cause(path, "Invalid", "null",
                      f'{path or "body"} in body must be of type {schema["type"]}: "null"')]
    where = f"{path} in body" if path else "body"
    want = schema.get("type")
    if schema.get("x-kubernetes-int-or-string"):
        if _type_name(obj) not in ("integer", "string"):
            return [cause(path, "Invalid", _type_name(obj),
                          f'{where} must be of type integer or string: "{_type_name(obj)}"')]
    elif want in _TYPES and not _is_type(obj, want):
        return [cause(path, "Invalid", _type_name(obj),
                      f'{where} must be of type {want}: "{_type_name(obj)}"')]
    enum = schema.get("enum")
    if isinstance(enum, list) and obj not in enum:
        out.append(cause(path, "NotSupported", obj,
                         "supported values: " + ", ".join(_shown(v) for v in enum)))
    if isinstance(obj, str):
        out += _validate_string(obj, schema, path, where)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        out += _validate_number(obj, schema, path, where)
    elif isinstance(obj, list):
        out += _validate_array(obj, schema, path, where)
    elif isinstance(obj, dict):
        out += _validate_object(obj, schema, path, where)
    out += _validate_combinators(obj, schema, path, where)
    return out


def _validate_string(obj: str, schema: Obj, path: str, where: str) -> list[Cause]:
    out = []
    max_len, min_len = schema.get("maxLength"), schema.get("minLength")
    if isinstance(max_len, int) and len(obj) > max_len:
        out.append(cause(path, "Invalid", obj, f"may not be longer than {max_len}"))
    if isinstance(min_len, int) and len(obj) < min_len:
        out.append(cause(path, "Invalid", obj, f"{where} should be at least {min_len} chars long"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        rx = _regex(pattern)
        if rx is not None and rx.search(obj) is None:
            out.append(cause(path, "Invalid", obj, f"{where} should match '{pattern}'"))
    return out


def _validate_number(obj: float, schema: Obj, path: str, where: str) -> list[Cause]:
    out = []
    hi, lo = schema.get("maximum"), schema.get("minimum")
    if isinstance(hi, (int, float)):
        if schema.get("exclusiveMaximum") and obj >= hi:
            out.append(cause(path, "Invalid", obj, f"{where} should be less than {hi}"))
        elif obj > hi:
            out.append(cause(path, "Invalid", obj,
                             f"{where} should be less than or equal to {hi}"))
    if isinstance(lo, (int, float)):
        if schema.get("exclusiveMinimum") and obj <= lo:
            out.append(cause(path, "Invalid", obj, f"{where} should be greater than {lo}"))
        elif obj < lo:
            out.append(cause(path, "Invalid", obj,
                             f"{where} should be greater than or equal to {lo}"))
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0 and (obj / step) % 1:
        out.append(cause(path, "Invalid", obj, f"{where} should be a multiple of {step}"))
    bounds = INT_RANGES.get(schema.get("format") or "")
    if bounds and isinstance(obj, int) and not bounds[0] <= obj <= bounds[1]:
        out.append(cause(path, "Invalid", obj, f"{where} must be a valid {schema['format']}"))
    return out


def _validate_array(obj: list[Any], schema: Obj, path: str, where: str) -> list[Cause]:
    out = []
    hi, lo = schema.get("maxItems"), schema.get("minItems")
    if isinstance(hi, int) and len(obj) > hi:
        out.append(cause(path, "Invalid", len(obj), f"must have at most {hi} items"))
    if isinstance(lo, int) and len(obj) < lo:
        out.append(cause(path, "Invalid", len(obj), f"{where} should have at least {lo} items"))
    list_type = schema.get("x-kubernetes-list-type")
    if schema.get("uniqueItems") or list_type == "set":
        seen: list[Any] = []
        for i, item in enumerate(obj):
            if item in seen:
                out.append(cause(f"{path}[{i}]", "Duplicate", item))
            seen.append(item)
    elif list_type == "map":
        keys = schema.get("x-kubernetes-list-map-keys") or []
        seen_keys: set[str] = set()
        for i, item in enumerate(obj):
            if isinstance(item, dict):
                k = repr([item.get(key) for key in keys])
                if k in seen_keys:
                    out.append(cause(f"{path}[{i}]", "Duplicate",
                                     {key: item.get(key) for key in keys}))
                seen_keys.add(k)
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(obj):
            out += validate(item, items, f"{path}[{i}]")
    return out


def _validate_object(obj: Obj, schema: Obj, path: str, where: str) -> list[Cause]:
    out = []
    for key in schema.get("required") or []:
        if key not in obj:
            out.append(cause(_join(path, key), "Required"))
    hi, lo = schema.get("maxProperties"), schema.get("minProperties")
    if isinstance(hi, int) and len(obj) > hi:
        out.append(cause(path, "Invalid", len(obj), f"must have at most {hi} properties"))
    if isinstance(lo, int) and len(obj) < lo:
        out.append(cause(path, "Invalid", len(obj),
                         f"{where} should have at least {lo} properties"))
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    extra = schema.get("additionalProperties")
    for key, value in obj.items():
        if not path and key in ("apiVersion", "kind", "metadata"):
            continue
        if key in props:
            out += validate(value, props[key], _join(path, key))
        elif isinstance(extra, dict):
            out += validate(value, extra, f"{path}[{key}]")
    return out


def _validate_combinators(obj: Any, schema: Obj, path: str, where: str) -> list[Cause]:
    out = []
    for sub in schema.get("allOf") or []:
        out += validate(obj, sub, path)
    any_of = schema.get("anyOf")
    if isinstance(any_of, list) and any_of and all(validate(obj, s, path) for s in any_of):
        out.append(cause(path, "Invalid", _type_name(obj) if not isinstance(obj, str) else obj,
                         f"{where} must validate at least one schema (anyOf)"))
    one_of = schema.get("oneOf")
    if isinstance(one_of, list) and one_of:
        passing = sum(1 for s in one_of if not validate(obj, s, path))
        if passing != 1:
            out.append(cause(path, "Invalid", _type_name(obj) if not isinstance(obj, str) else obj,
                             f"{where} must validate one and only one schema (oneOf)"))
    negated = schema.get("not")
    if isinstance(negated, dict) and not validate(obj, negated, path):
        out.append(cause(path, "Invalid", _type_name(obj) if not isinstance(obj, str) else obj,
                         f"{where} must not validate the schema (not)"))
    return out


# --------------------------------------------------------------------------- the schema itself


def structural_errors(schema: Any, path: str, *, root: bool = True) -> list[Cause]:
    """Why ``schema`` is not a structural schema (the parts we rely on), as CRD field causes."""
    if not isinstance(schema, dict):
        return [cause(path, "Invalid", None, "must be an object")]
    out: list[Cause] = []
    if "$ref" in schema:
        out.append(cause(f"{path}.$ref", "Forbidden", detail="$ref is not supported"))
    typ = schema.get("type")
    if typ is not None and typ not in _TYPES:
        out.append(cause(f"{path}.type", "NotSupported", typ,
                         "supported values: " + ", ".join(f'"{t}"' for t in _TYPES)))
    if root and typ != "object":
        out.append(cause(f"{path}.type", "Invalid", typ, 'must be "object" at the root'))
    if typ is None and not (schema.get("x-kubernetes-int-or-string")
                            or _preserve(schema)):
        out.append(cause(f"{path}.type", "Required",
                         detail="must not be empty for specified object fields"))
    props = schema.get("properties")
    if props is not None:
        if not isinstance(props, dict):
            out.append(cause(f"{path}.properties", "Invalid", None, "must be an object"))
        else:
            for key, sub in props.items():
                out += structural_errors(sub, f"{path}.properties[{key}]", root=False)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        out += structural_errors(extra, f"{path}.additionalProperties", root=False)
        if props:
            out.append(cause(f"{path}.additionalProperties", "Forbidden",
                             detail="additionalProperties and properties are mutually exclusive"))
    items = schema.get("items")
    if isinstance(items, dict):
        out += structural_errors(items, f"{path}.items", root=False)
    elif typ == "array":
        out.append(cause(f"{path}.items", "Required", detail="must be specified for arrays"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and _regex(pattern) is None:
        out.append(cause(f"{path}.pattern", "Invalid", pattern, "not a valid regular expression"))
    if "default" in schema and not root:
        default = copy.deepcopy(schema["default"])
        prune(default, schema, root=False)
        for c in validate(default, schema, ""):
            out.append(cause(f"{path}.default", "Invalid", None, c["message"]))
    return out
