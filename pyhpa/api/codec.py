"""Wire dicts (decoded JSON/YAML) to the structs of :mod:`pyhpa.api.types` and back.

Why a codec and not plain ``msgspec.convert``: the API server must behave like Go's decoder.
A missing or ``null`` required field becomes the Go zero value (so validation can later say
``spec.maxReplicas: Required value``), unknown fields survive a read-modify-write round trip,
``omitempty`` drops zero strings/maps/lists, and times come out as RFC 3339 UTC seconds.

Design. Each struct type gets a *plan* (compiled once from the struct's fields) and a *mirror*
struct type that accepts exactly the *clean* dicts (no unknown keys, no zero value in an
``omitempty`` field, every time already canonical). Checking against the mirror and then
decoding are both ``msgspec.convert`` calls in C; ``to_wire`` checks its output against the
same mirror. JSON text skips the dicts altogether: ``loads_json`` checks the bytes against the
mirror and decodes them straight into the type, ``dumps_json`` encodes a struct directly and
checks the bytes against the mirror (both fall back to the dict path). Anything else, and anything ``msgspec`` rejects, takes the slow path:
a Python decoder that fills zero values, normalises, raises :class:`DecodeError` with a
Kubernetes-style field path, and parks unknown fields in the instance ``__dict__``
(``_wire_unknown``), flagging every ancestor (``_wire_subtree``) so that :func:`to_wire` only
walks objects that carry some. Copies made with ``msgspec.structs.replace``/``copy`` drop them.

Values accepted are Go's: ints must be JSON integers (``3.0`` and ``"3"`` are errors), a
quantity may be a string or a number, times must carry a zone offset.
"""

from __future__ import annotations

import re
import types as _pytypes
import typing
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Annotated, Any, Optional, Union

import msgspec

from pyhpa.api import types as T
from pyhpa.api.quantity import Quantity, quantity_dec_hook, quantity_enc_hook

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
    # (wire, field) of every field the clean-walk must look at.
    checks: list[tuple[str, _Field]] = field(default_factory=list)
    struct_fields: list[_Field] = field(default_factory=list)
    lenient: bool = False
    required: frozenset[str] = frozenset()
    # A twin struct type that accepts exactly the *clean* wire dicts (see _mirror_of).
    mirror: Any = None
    # JSON decoders for the mirror and the type itself (see _json_decoders).
    json_mirror: Any = None
    json_type: Any = None


_PLANS: dict[type, _Plan] = {}
_DEC_HOOK = quantity_dec_hook
_convert = msgspec.convert
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
        if f.kind.code in (_STRUCT, _TIME) or f.zero_omit or f.required or (
            f.kind.code in (_LIST, _MAP) and f.kind.elem is not None and f.kind.elem.code in (_STRUCT, _TIME)
        ):
            plan.checks.append((f.wire, f))
        if _has_struct(f.kind):
            plan.struct_fields.append(f)
    plan.known = frozenset(plan.by_wire)
    plan.required = frozenset(f.wire for f in plan.fields if f.required)
    return plan


_TIME_STR = Annotated[str, msgspec.Meta(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")]
_NONEMPTY = msgspec.Meta(min_length=1)


def _mirror_type(kind: _Kind, zero_omit: bool) -> Any:
    code = kind.code
    if code == _SCALAR:
        tp: Any = kind.py
        if zero_omit and tp is str:
            tp = Annotated[str, _NONEMPTY]
        elif zero_omit and tp is int:
            tp = Annotated[int, msgspec.Meta(ge=1)]  # negative ones take the slow path too
    elif code == _TIME:
        tp = _TIME_STR
    elif code == _QTY:
        tp = Union[str, int, float]
    elif code == _STRUCT:
        tp = _mirror_of(kind.plan)  # type: ignore[arg-type]
    elif code == _LIST:
        tp = list[_mirror_type(kind.elem, False)]  # type: ignore[arg-type,misc]
        if zero_omit:
            tp = Annotated[tp, _NONEMPTY]
    elif code == _MAP:
        tp = dict[str, _mirror_type(kind.elem, False)]  # type: ignore[arg-type,misc]
        if zero_omit:
            tp = Annotated[tp, _NONEMPTY]
    else:
        tp = Any
    return Optional[tp] if kind.nullable and tp is not Any else tp


def _mirror_of(plan: _Plan) -> Any:
    """A struct type that converts without error iff a dict is clean for ``plan``: no unknown
    keys, required keys present and non-null, no omitempty zero, canonical times. msgspec
    checks all of that in C, which is what keeps the common decode fast."""
    if plan.mirror is None:
        plan.mirror = Any  # recursion guard; no HPA type is recursive
        fields = []
        for f in plan.fields:
            tp = _mirror_type(f.kind, f.zero_omit)
            if f.required:
                fields.append((f.name, tp, msgspec.field(name=f.wire)))
            else:
                fields.append((f.name, tp, msgspec.field(default=None, name=f.wire)))
        plan.mirror = msgspec.defstruct(
            "Clean" + plan.type_.__name__, fields, kw_only=True, forbid_unknown_fields=True
        )
    return plan.mirror


def _has_struct(kind: _Kind) -> bool:
    if kind.code == _STRUCT:
        return True
    return kind.code in (_LIST, _MAP) and kind.elem is not None and kind.elem.code == _STRUCT


def _is_zero(v: Any) -> bool:
    # Go's omitempty zero values; bool False is not used by any zero-omit field.
    return v == "" or (type(v) is int and v == 0) or (type(v) in (dict, list) and not v)


# --------------------------------------------------------------------------- slow path


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


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


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


def _decode_struct(raw: Any, plan: _Plan, path: str, ctx: _Ctx) -> Any:
    if raw is None:
        return _zero_struct(plan)
    if type(raw) is not dict:
        raise DecodeError(path, f"expected object, got {json_type(raw)}")
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] | None = None
    outer = ctx.unknown
    ctx.unknown = False
    for key, value in raw.items():
        f = plan.by_wire.get(key)
        if f is None:
            if extra is None:
                extra = {}
            extra[key] = value
            continue
        v = _decode_value(value, f.kind, _child(path, key), ctx)
        if f.zero_omit and v is not None and _is_zero(v):
            v = None
        kwargs[f.name] = v
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


def _decode_value(v: Any, kind: _Kind, path: str, ctx: _Ctx) -> Any:
    if v is None:
        return None if kind.nullable else _zero_of(kind)
    code = kind.code
    if code == _SCALAR:
        py = kind.py
        if type(v) is py or (py is float and type(v) is int):
            return v
        raise DecodeError(path, f"expected {py.__name__}, got {json_type(v)}")
    if code == _STRUCT:
        return _decode_struct(v, kind.plan, path, ctx)  # type: ignore[arg-type]
    if code == _LIST:
        if type(v) is not list:
            raise DecodeError(path, f"expected array, got {json_type(v)}")
        elem = kind.elem
        return [_decode_value(item, elem, f"{path}[{i}]", ctx) for i, item in enumerate(v)]  # type: ignore[arg-type]
    if code == _MAP:
        if type(v) is not dict:
            raise DecodeError(path, f"expected object, got {json_type(v)}")
        elem = kind.elem
        out = {}
        for k, item in v.items():
            if not isinstance(k, str):
                raise DecodeError(path, f"expected string keys, got {json_type(k)}")
            out[k] = _decode_value(item, elem, f"{path}[{k}]", ctx)  # type: ignore[arg-type]
        return out
    if code == _QTY:
        try:
            return quantity_dec_hook(Quantity, v)
        except (ValueError, TypeError) as exc:
            raise DecodeError(path, _quantity_message(exc, v)) from None
    if code == _TIME:
        return _decode_time(v, path)
    # _ANY
    if kind.py is not None:
        try:
            return msgspec.convert(v, kind.py, dec_hook=_DEC_HOOK)
        except msgspec.ValidationError as exc:
            raise DecodeError(path, _msgspec_message(exc)) from None
    return v


def _quantity_message(exc: Exception, v: Any) -> str:
    if isinstance(v, (str, int, float)) and not isinstance(v, bool):
        return str(exc)
    return f"expected quantity (string or number), got {json_type(v)}"


def _decode_time(v: Any, path: str) -> datetime:
    if type(v) is not str:
        raise DecodeError(path, f"expected RFC 3339 time string, got {json_type(v)}")
    try:
        dt = msgspec.convert(v, datetime)
    except msgspec.ValidationError:
        dt = None
    if dt is None or dt.tzinfo is None:
        raise DecodeError(path, f'parsing time "{v}" as RFC 3339: expected e.g. "2006-01-02T15:04:05Z"')
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
    try:
        _convert(raw, plan.mirror or _mirror_of(plan), strict=True)
        return _convert(raw, type_, strict=True, dec_hook=_DEC_HOOK)
    except msgspec.ValidationError:
        return _decode_struct(raw, plan, "", _Ctx())


def _msgspec_path(exc: msgspec.ValidationError) -> str:
    m = _PATH_RE.search(str(exc))
    return m.group(1).lstrip(".") if m else ""


def _json_decoders(plan: _Plan) -> tuple[Any, Any]:
    """(mirror decoder, type decoder) of a non-lenient plan, made once."""
    if plan.json_type is None:
        plan.json_mirror = msgspec.json.Decoder(plan.mirror or _mirror_of(plan))
        plan.json_type = msgspec.json.Decoder(plan.type_, dec_hook=_DEC_HOOK)
    return plan.json_mirror, plan.json_type


def loads_json(data: bytes | str, type_: type) -> Any:
    """Parse JSON text and decode it with :func:`from_wire`.

    Fast path: clean text (see module docstring) is checked against the mirror and decoded
    straight from the bytes, both in C, without building the intermediate dicts. It gives
    what ``from_wire`` gives for clean input; anything else (unclean, invalid, a bad value)
    takes the general path, which also raises the errors.
    """
    plan = _plan_for(type_)
    if not plan.lenient:
        mirror, decoder = plan.json_mirror, plan.json_type
        if decoder is None:
            mirror, decoder = _json_decoders(plan)
        try:
            mirror.decode(data)
            return decoder.decode(data)
        except msgspec.DecodeError:  # includes ValidationError
            pass
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
            try:
                _convert(out, plan.mirror or _mirror_of(plan), strict=True)
            except msgspec.ValidationError:
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
    for wire, f in plan.checks:
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
                out[wire] = _format_time(msgspec.convert(v, datetime))
        elif code == _LIST and f.kind.elem.code == _STRUCT:  # type: ignore[union-attr]
            for item in v:
                _fix_out(item, f.kind.elem.plan)  # type: ignore[arg-type,union-attr]
        elif code == _MAP and len(v) > 1:
            out[wire] = {k: v[k] for k in sorted(v)}


def _format_time(dt: datetime) -> str:
    return _canonical_time(dt).strftime("%Y-%m-%dT%H:%M:%SZ")


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


_json_encode_sorted = msgspec.json.Encoder(enc_hook=quantity_enc_hook, order="deterministic").encode


def _clean_json(obj: Any) -> bytes | None:
    """The JSON of a struct encoded directly, if that is what ``to_wire`` would give.

    ``to_wire`` differs from plain encoding only where the output is not clean (an omitempty
    zero to drop, a time to canonicalise) or unknown fields are restored; checking the
    encoded bytes against the mirror in C is cheaper than building the dicts. None: use
    ``to_wire`` (which also raises its own errors).
    """
    try:
        plan = _plan_for(type(obj))
        if plan.lenient or _subtree_flag(obj):
            return None
        mirror = plan.json_mirror or _json_decoders(plan)[0]
        data = _json_encode_sorted(obj)
        mirror.decode(data)
    except (msgspec.DecodeError, msgspec.EncodeError, TypeError, ValueError, OverflowError):
        return None
    return data


def dumps_json(obj: Any) -> bytes:
    """Compact JSON as Go's encoding/json writes it (``<``, ``>``, ``&`` escaped)."""
    data = _clean_json(obj) if isinstance(obj, msgspec.Struct) else None
    return _go_escape(_json_encode(_as_builtins(obj)) if data is None else data)


def dumps_json_general(obj: Any) -> bytes:
    """:func:`dumps_json` without the clean-struct shortcut (what the shortcut must equal)."""
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
