"""Wire dicts (decoded JSON/YAML) to the structs of :mod:`pyhpa.api.types` and back.

Why a codec and not plain ``msgspec.convert``: the API server must behave like Go's decoder.
A missing or ``null`` required field becomes the Go zero value (so validation can later say
``spec.maxReplicas: Required value``), unknown fields survive a read-modify-write round trip,
``omitempty`` drops zero strings/maps/lists, and times come out as RFC 3339 UTC seconds.

Design. Each struct type gets a *plan* (compiled once from the struct's fields). Decoding walks
the wire dict with it: zero values filled in, values normalised, :class:`DecodeError` raised
with a Kubernetes-style field path, unknown fields parked in the instance ``__dict__``
(``_wire_unknown``) and every ancestor flagged (``_wire_subtree``) so that :func:`to_wire` only
walks objects that carry some. Copies made with ``msgspec.structs.replace``/``copy`` drop them.
Encoding is ``msgspec.to_builtins`` followed by a walk over the fields Go would write
differently (omitempty zeros, times).

Values accepted are Go's: ints must be JSON integers (``3.0`` and ``"3"`` are errors), a
quantity may be a string or a number, times must carry a zone offset.
"""

from __future__ import annotations

import re
import types as _pytypes
import typing
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Union

import msgspec

from pyhpa.api import types as T
from pyhpa.api.quantity import Quantity, quantity_dec_hook, quantity_enc_hook
from pyhpa.api.timefmt import format_time

__all__ = ["DecodeError", "from_wire", "to_wire", "loads_json", "dumps_json", "dumps_yaml", "json_type"]


class DecodeError(ValueError):
    """A wire value of the wrong type; ``path`` is the Kubernetes field path (``""`` = root)."""

    def __init__(self, path: str, detail: str) -> None:
        self.path = path
        self.detail = detail
        super().__init__(f"{path}: {detail}" if path else detail)


# --------------------------------------------------------------------------- plans

_SCALAR, _TIME, _QTY, _ANY, _STRUCT, _LIST, _MAP = range(7)
_TIME_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")
_MISSING = object()

# Go fields that are *values* with ``omitempty`` (not pointers): their zero value ("", 0, empty
# map/list) is never emitted, and decoding one is the same as the field being absent. types.py
# models them as ``X | None = None``; the codec maps the zero to None both ways.
# HPAScalingRules.policies is deliberately absent: defaulting tells ``[]`` from absent (§2.1).
_ZERO_OMIT: dict[type, frozenset[str]] = {
    T.ObjectMeta: frozenset(
        "name generate_name namespace self_link uid resource_version generation labels annotations "
        "owner_references finalizers managed_fields".split()
    ),
    T.ListMeta: frozenset({"self_link", "resource_version", "continue_"}),
    T.LabelSelectorRequirement: frozenset({"values"}),
    T.LabelSelector: frozenset({"match_labels", "match_expressions"}),
    T.CrossVersionObjectReference: frozenset({"api_version"}),
    T.HorizontalPodAutoscalerSpec: frozenset({"metrics"}),
    T.HorizontalPodAutoscalerCondition: frozenset({"reason", "message"}),
    T.HorizontalPodAutoscalerStatus: frozenset({"conditions"}),
    T.ScaleStatus: frozenset({"selector"}),
}


@dataclass(eq=False)
class _Kind:
    """How one value is decoded: ``code`` is one of the _SCALAR.. constants."""

    code: int
    py: Any = None  # _SCALAR: the Python type (str/int/bool/float)
    elem: "_Kind | None" = None  # _LIST/_MAP element
    plan: "_Plan | None" = None  # _STRUCT
    nullable: bool = False


@dataclass(eq=False)
class _Field:
    name: str
    wire: str
    kind: _Kind
    required: bool
    zero_omit: bool
    default: Any
    default_factory: Any


@dataclass(eq=False)
class _Plan:
    type_: type
    fields: list[_Field] = field(default_factory=list)
    by_wire: dict[str, _Field] = field(default_factory=dict)
    known: frozenset[str] = frozenset()
    # (wire, field) of every field the encoder's walk must look at (see _output_checks).
    checks: list[tuple[str, _Field]] | None = None
    struct_fields: list[_Field] = field(default_factory=list)
    lenient: bool = False
    required: frozenset[str] = frozenset()


_PLANS: dict[type, _Plan] = {}
_DEC_HOOK = quantity_dec_hook
_to_builtins = msgspec.to_builtins


def _kind_of(tp: Any) -> _Kind:
    nullable = False
    origin = typing.get_origin(tp)
    if origin is Union or origin is _pytypes.UnionType:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        nullable = len(args) != len(typing.get_args(tp))
        if len(args) != 1:  # e.g. LabelSelector | dict[str, str] in a view: let msgspec decide
            return _Kind(_ANY, py=tp, nullable=nullable)
        tp = args[0]
        origin = typing.get_origin(tp)
    if origin is list:
        (elem,) = typing.get_args(tp)
        return _Kind(_LIST, elem=_kind_of(elem), nullable=nullable)
    if origin is dict:
        _key, val = typing.get_args(tp)
        return _Kind(_MAP, elem=_kind_of(val), nullable=nullable)
    if tp is Any:
        return _Kind(_ANY, nullable=True)
    if tp is datetime:
        return _Kind(_TIME, nullable=nullable)
    if tp is Quantity:
        return _Kind(_QTY, nullable=nullable)
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return _Kind(_STRUCT, plan=_plan_for(tp), nullable=nullable)
    if tp in (str, int, bool, float):
        return _Kind(_SCALAR, py=tp, nullable=nullable)
    raise TypeError(f"codec: unsupported field type {tp!r}")


def _plan_for(type_: type) -> _Plan:
    plan = _PLANS.get(type_)
    if plan is not None:
        return plan
    plan = _Plan(type_=type_, lenient=issubclass(type_, T.View))
    _PLANS[type_] = plan  # before recursing: types may nest
    zero_omit = _ZERO_OMIT.get(type_, frozenset())
    for info in msgspec.structs.fields(type_):
        f = _Field(
            name=info.name,
            wire=info.encode_name,
            kind=_kind_of(info.type),
            required=info.required,
            zero_omit=info.name in zero_omit,
            default=info.default,
            default_factory=info.default_factory,
        )
        plan.fields.append(f)
        plan.by_wire[f.wire] = f
        if _has_struct(f.kind):
            plan.struct_fields.append(f)
    plan.known = frozenset(plan.by_wire)
    plan.required = frozenset(f.wire for f in plan.fields if f.required)
    return plan


def _output_checks(plan: _Plan) -> list[tuple[str, _Field]]:
    """The fields where ``to_builtins`` output may differ from Go's: omitempty ones, times, and
    structs (or lists of them) that hold some. Worked out once per plan."""
    if plan.checks is None:
        plan.checks = []  # recursion guard; no HPA type is recursive
        checks = []
        for f in plan.fields:
            code = f.kind.code
            sub = f.kind.plan if code == _STRUCT else (
                f.kind.elem.plan if code == _LIST and f.kind.elem is not None and f.kind.elem.code == _STRUCT else None)
            if f.zero_omit or code == _TIME or (sub is not None and _output_checks(sub)):
                checks.append((f.wire, f))
        plan.checks = checks
    return plan.checks


def _has_struct(kind: _Kind) -> bool:
    if kind.code == _STRUCT:
        return True
    return kind.code in (_LIST, _MAP) and kind.elem is not None and kind.elem.code == _STRUCT


def _is_zero(v: Any) -> bool:
    # Go's omitempty zero values; bool False is not used by any zero-omit field.
    return v == "" or (type(v) is int and v == 0) or (type(v) in (dict, list) and not v)


# --------------------------------------------------------------------------- decoding


def json_type(v: Any) -> str:
    """The JSON type name of a decoded value, in msgspec's words (``str``, ``object``...)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "str"
    if isinstance(v, dict):
        return "object"
    if isinstance(v, (list, tuple)):
        return "array"
    return type(v).__name__


def _within(segment: str, exc: DecodeError) -> DecodeError:
    """``exc`` seen from one level up: paths are built only when something is wrong."""
    sub = exc.path
    path = segment if not sub else segment + sub if sub[0] == "[" or not segment else f"{segment}.{sub}"
    return DecodeError(path, exc.detail)


def _zero_of(kind: _Kind) -> Any:
    if kind.nullable:
        return None
    code = kind.code
    if code == _SCALAR:
        return kind.py()
    if code == _STRUCT:
        return _zero_struct(kind.plan)  # type: ignore[arg-type]
    if code == _LIST:
        return []
    if code == _MAP:
        return {}
    if code == _QTY:
        return Quantity.parse("0")
    return None


def _zero_struct(plan: _Plan) -> Any:
    kwargs = {f.name: _zero_of(f.kind) for f in plan.fields if f.required}
    return plan.type_(**kwargs)


class _Ctx:
    __slots__ = ("unknown",)

    def __init__(self) -> None:
        self.unknown = False


def _decode_struct(raw: Any, plan: _Plan, ctx: _Ctx) -> Any:
    if raw is None:
        return _zero_struct(plan)
    if type(raw) is not dict:
        raise DecodeError("", f"expected object, got {json_type(raw)}")
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] | None = None
    outer = ctx.unknown
    ctx.unknown = False
    by_wire = plan.by_wire
    for key, value in raw.items():
        f = by_wire.get(key)
        if f is None:
            if extra is None:
                extra = {}
            extra[key] = value
            continue
        kind = f.kind
        if kind.code == _SCALAR and type(value) is kind.py:  # the common case, inline
            v = value
        else:
            try:
                v = _decode_value(value, kind, ctx)
            except DecodeError as exc:
                raise _within(key, exc) from None
        if f.zero_omit and v is not None and _is_zero(v):
            v = None
        kwargs[f.name] = v
    if not plan.required <= raw.keys():  # a missing required field is Go's zero value
        for f in plan.fields:
            if f.required and f.name not in kwargs:
                kwargs[f.name] = _zero_of(f.kind)
    obj = plan.type_(**kwargs)
    if extra:
        obj._wire_unknown = extra
        ctx.unknown = True
    if ctx.unknown:
        obj._wire_subtree = True
    ctx.unknown = ctx.unknown or outer
    return obj


def _decode_value(v: Any, kind: _Kind, ctx: _Ctx) -> Any:
    """One value decoded as ``kind``; a DecodeError's path is relative to the value."""
    if v is None:
        return None if kind.nullable else _zero_of(kind)
    code = kind.code
    if code == _SCALAR:
        py = kind.py
        if type(v) is py or (py is float and type(v) is int):
            return v
        raise DecodeError("", f"expected {py.__name__}, got {json_type(v)}")
    if code == _STRUCT:
        return _decode_struct(v, kind.plan, ctx)  # type: ignore[arg-type]
    if code == _LIST:
        if type(v) is not list:
            raise DecodeError("", f"expected array, got {json_type(v)}")
        elem = kind.elem
        out_list = []
        for i, item in enumerate(v):
            try:
                out_list.append(_decode_value(item, elem, ctx))  # type: ignore[arg-type]
            except DecodeError as exc:
                raise _within(f"[{i}]", exc) from None
        return out_list
    if code == _MAP:
        if type(v) is not dict:
            raise DecodeError("", f"expected object, got {json_type(v)}")
        elem = kind.elem
        out = {}
        for k, item in v.items():
            if not isinstance(k, str):
                raise DecodeError("", f"expected string keys, got {json_type(k)}")
            try:
                out[k] = _decode_value(item, elem, ctx)  # type: ignore[arg-type]
            except DecodeError as exc:
                raise _within(f"[{k}]", exc) from None
        return out
    if code == _QTY:
        try:
            return quantity_dec_hook(Quantity, v)
        except (ValueError, TypeError) as exc:
            raise DecodeError("", _quantity_message(exc, v)) from None
    if code == _TIME:
        return _decode_time(v)
    # _ANY
    if kind.py is not None:
        try:
            return msgspec.convert(v, kind.py, dec_hook=_DEC_HOOK)
        except msgspec.ValidationError as exc:
            raise DecodeError("", _msgspec_message(exc)) from None
    return v


def _quantity_message(exc: Exception, v: Any) -> str:
    if isinstance(v, (str, int, float)) and not isinstance(v, bool):
        return str(exc)
    return f"expected quantity (string or number), got {json_type(v)}"


def _decode_time(v: Any) -> datetime:
    if type(v) is not str:
        raise DecodeError("", f"expected RFC 3339 time string, got {json_type(v)}")
    try:
        dt = msgspec.convert(v, datetime)
    except msgspec.ValidationError:
        dt = None
    if dt is None or dt.tzinfo is None:
        raise DecodeError("", f'parsing time "{v}" as RFC 3339: expected e.g. "2006-01-02T15:04:05Z"')
    return _canonical_time(dt)


def _canonical_time(dt: datetime) -> datetime:
    """What a Go metav1.Time marshals to: UTC, whole seconds (naive means UTC)."""
    if dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc, microsecond=0)
    if dt.tzinfo is not timezone.utc:
        dt = dt.astimezone(timezone.utc)
    return dt.replace(microsecond=0) if dt.microsecond else dt


_PATH_RE = re.compile(r" - at `\$(.*)`$")


def _msgspec_message(exc: msgspec.ValidationError) -> str:
    text = str(exc)
    m = _PATH_RE.search(text)
    if m:
        text = text[: m.start()]
    return text.replace("`", "")


# --------------------------------------------------------------------------- public API


def from_wire(raw: Any, type_: type) -> Any:
    """Decode a wire dict into ``type_`` as Go's JSON decoder would (see module docstring).

    Raises :class:`DecodeError` (a ``ValueError``) naming the field path of a value of the
    wrong type. Missing/null required fields become zero values; unknown fields are kept.
    """
    plan = _plan_for(type_)
    if plan.lenient:
        try:
            return msgspec.convert(raw, type_, strict=False, dec_hook=_DEC_HOOK)
        except msgspec.ValidationError as exc:
            raise DecodeError(_msgspec_path(exc), _msgspec_message(exc)) from None
    return _decode_struct(raw, plan, _Ctx())


def _msgspec_path(exc: msgspec.ValidationError) -> str:
    m = _PATH_RE.search(str(exc))
    return m.group(1).lstrip(".") if m else ""


def loads_json(data: bytes | str, type_: type) -> Any:
    """Parse JSON text and decode it with :func:`from_wire`."""
    try:
        raw = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise DecodeError("", f"invalid JSON: {exc}") from None
    return from_wire(raw, type_)


def to_wire(obj: Any) -> Any:
    """A struct as builtins, the way Go would marshal it (canonical quantities, RFC 3339 Z
    seconds, ``omitempty`` honoured, unknown fields from :func:`from_wire` restored)."""
    # "deterministic" sorts map keys (labels, annotations...) as Go's encoder does.
    out = _to_builtins(obj, enc_hook=quantity_enc_hook, order="deterministic")
    if isinstance(obj, msgspec.Struct):
        plan = _plan_for(type(obj))
        if not plan.lenient:
            _fix_out(out, plan)
            if _subtree_flag(obj):
                _restore(obj, out, plan)
    return out


def _subtree_flag(obj: Any) -> bool:
    # The top object, or a direct child moved in from another decoded object (e.g. the stored
    # status on update), may carry unknown fields.
    if getattr(obj, "_wire_subtree", False):
        return True
    for f in _plan_for(type(obj)).struct_fields:
        if f.kind.code == _STRUCT and getattr(getattr(obj, f.name), "_wire_subtree", False):
            return True
    return False


def _fix_out(out: dict, plan: _Plan) -> None:
    """Make ``to_builtins`` output what Go writes: omitempty zeros dropped, times in whole
    seconds UTC (values built in code may hold any datetime)."""
    for wire, f in plan.checks if plan.checks is not None else _output_checks(plan):
        v = out.get(wire, _MISSING)
        if v is _MISSING or v is None:
            continue
        if f.zero_omit and _is_zero(v):
            del out[wire]
            continue
        code = f.kind.code
        if code == _STRUCT:
            _fix_out(v, f.kind.plan)  # type: ignore[arg-type]
        elif code == _TIME:
            if _TIME_RE.match(v) is None:
                out[wire] = format_time(msgspec.convert(v, datetime))
        elif code == _LIST and f.kind.elem.code == _STRUCT:  # type: ignore[union-attr]
            for item in v:
                _fix_out(item, f.kind.elem.plan)  # type: ignore[arg-type,union-attr]


def _restore(obj: Any, out: dict, plan: _Plan) -> None:
    extra = getattr(obj, "_wire_unknown", None)
    if extra:
        for k, v in extra.items():
            if k not in out:
                out[k] = v
    for f in plan.struct_fields:
        val = getattr(obj, f.name)
        if val is None or f.wire not in out:
            continue
        kind = f.kind
        if kind.code == _STRUCT:
            if getattr(val, "_wire_subtree", False):
                _restore(val, out[f.wire], kind.plan)  # type: ignore[arg-type]
        elif kind.code == _LIST:
            eplan = kind.elem.plan  # type: ignore[union-attr]
            for item, item_out in zip(val, out[f.wire]):
                if getattr(item, "_wire_subtree", False):
                    _restore(item, item_out, eplan)  # type: ignore[arg-type]
        elif kind.code == _MAP:
            eplan = kind.elem.plan  # type: ignore[union-attr]
            for k, item in val.items():
                if getattr(item, "_wire_subtree", False) and k in out[f.wire]:
                    _restore(item, out[f.wire][k], eplan)  # type: ignore[arg-type]


def has_unknown_fields(obj: Any) -> bool:
    """Whether a decoded object (or a direct child) carries unknown wire fields."""
    return isinstance(obj, msgspec.Struct) and _subtree_flag(obj)


# --------------------------------------------------------------------------- text output

_GO_ESCAPES = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"),
               ("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))
_json_encode = msgspec.json.Encoder(enc_hook=quantity_enc_hook).encode


def _as_builtins(obj: Any) -> Any:
    return to_wire(obj) if isinstance(obj, msgspec.Struct) else obj


def dumps_json(obj: Any) -> bytes:
    """Compact JSON as Go's encoding/json writes it (``<``, ``>``, ``&`` escaped)."""
    return _go_escape(_json_encode(_as_builtins(obj)))


def _go_escape(data: bytes) -> bytes:
    if b"<" in data or b">" in data or b"&" in data or b"\xe2\x80" in data:
        for a, b in _GO_ESCAPES:
            data = data.replace(a, b)
    return data


def dumps_yaml(obj: Any, *, sort_keys: bool = False) -> str:
    """Block-style YAML like ``kubectl -o yaml`` (go-yaml v2 quoting: strings that would read
    back as another type are double-quoted, multi-line strings use ``|``).

    Keys stay in wire order unless ``sort_keys`` (real kubectl sorts every key, as it goes
    through a Go map).
    """
    from pyhpa.api import goyaml

    return goyaml.dump(_as_builtins(obj), sort_keys=sort_keys)
