"""Wire dicts (decoded JSON/YAML) to the structs of :mod:`pyhpa.api.types` and back.

Why a codec and not plain ``msgspec.convert``: the API server must behave like Go's decoder.
A missing or ``null`` required field becomes the Go zero value (so validation can later say
``spec.maxReplicas: Required value``), unknown fields survive a read-modify-write round trip,
``omitempty`` drops zero strings/maps/lists, and times come out as RFC 3339 UTC seconds.

Design. A :class:`WireCodec` holds a *plan* for each struct type it knows, worked out once
from the types' fields when it is built (the module's own codec, for the types of
:mod:`pyhpa.api.types`, at import); plans never change afterwards. Decoding walks the wire dict
with them: zero values filled in, values normalised, :class:`DecodeError` raised with a
Kubernetes-style field path (built only on the way out of an error), unknown fields parked in
the instance ``__dict__`` (``_wire_unknown``) and every ancestor flagged (``_wire_subtree``) so
that :func:`to_wire` only walks objects that carry some. Copies made with
``msgspec.structs.replace``/``copy`` drop them. Encoding is ``msgspec.to_builtins`` followed
by a walk over the fields Go would write differently (omitempty zeros, times).

Values accepted are Go's: ints must be JSON integers (``3.0`` and ``"3"`` are errors), a
quantity may be a string or a number, times must carry a zone offset. Views (lenient partial
types of other kinds) and non-wire structs go through ``msgspec`` as they are.
"""

from __future__ import annotations

import re
import types as _pytypes
import typing
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, Mapping, Union

import msgspec

from pyhpa.api import types as T
from pyhpa.api.quantity import Quantity, quantity_dec_hook, quantity_enc_hook
from pyhpa.api.timefmt import format_time

__all__ = ["DecodeError", "WireCodec", "from_wire", "to_wire", "has_unknown_fields", "loads_json",
           "dumps_json", "dumps_yaml", "json_type"]


class DecodeError(ValueError):
    """A wire value of the wrong type; ``path`` is the Kubernetes field path (``""`` = root)."""

    def __init__(self, path: str, detail: str) -> None:
        self.path = path
        self.detail = detail
        super().__init__(f"{path}: {detail}" if path else detail)


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


class _Ctx:
    """One decode call's bookkeeping: how many objects with unknown fields were met so far."""

    __slots__ = ("unknown",)

    def __init__(self) -> None:
        self.unknown = 0


_DEC_HOOK = quantity_dec_hook
_to_builtins = msgspec.to_builtins

# --------------------------------------------------------------------------- kinds
#
# A kind says how one field's value is decoded. ``accept`` is the class a wire value may have to
# be taken as it is (str, int, bool, float): the struct loop checks it inline, and calls
# ``decode`` only for anything else (null, a struct, a list, a wrong type).


class _Kind:
    __slots__ = ("nullable",)
    accept: type | None = None

    def __init__(self, nullable: bool) -> None:
        self.nullable = nullable

    def zero(self) -> Any:
        """Go's zero value for a missing or null field of this kind."""
        return None

    def decode(self, v: Any, ctx: _Ctx) -> Any:
        raise NotImplementedError


class _Scalar(_Kind):
    __slots__ = ("accept",)

    def __init__(self, py: type, nullable: bool) -> None:
        super().__init__(nullable)
        self.accept = py  # type: ignore[misc]

    def zero(self) -> Any:
        return None if self.nullable else self.accept()  # type: ignore[misc]

    def decode(self, v: Any, ctx: _Ctx) -> Any:
        py = self.accept
        if v is None:
            return self.zero()
        if v.__class__ is py or (py is float and v.__class__ is int):
            return v
        raise DecodeError("", f"expected {py.__name__}, got {json_type(v)}")  # type: ignore[union-attr]


class _Time(_Kind):
    __slots__ = ()

    def decode(self, v: Any, ctx: _Ctx) -> Any:
        if v is None:
            return None
        if v.__class__ is not str:
            raise DecodeError("", f"expected RFC 3339 time string, got {json_type(v)}")
        try:
            dt = msgspec.convert(v, datetime)
        except msgspec.ValidationError:
            dt = None
        if dt is None or dt.tzinfo is None:
            raise DecodeError("", f'parsing time "{v}" as RFC 3339: expected e.g. "2006-01-02T15:04:05Z"')
        return _canonical_time(dt)


class _Quantity(_Kind):
    __slots__ = ()

    def zero(self) -> Any:
        return None if self.nullable else Quantity.parse("0")

    def decode(self, v: Any, ctx: _Ctx) -> Any:
        if v is None:
            return self.zero()
        try:
            return quantity_dec_hook(Quantity, v)
        except (ValueError, TypeError) as exc:
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                raise DecodeError("", str(exc)) from None
            raise DecodeError("", f"expected quantity (string or number), got {json_type(v)}") from None


class _Any(_Kind):
    """``Any``, or a union msgspec decides (e.g. ``LabelSelector | dict[str, str]``)."""

    __slots__ = ("py",)

    def __init__(self, py: Any, nullable: bool) -> None:
        super().__init__(nullable)
        self.py = py

    def decode(self, v: Any, ctx: _Ctx) -> Any:
        if v is None or self.py is None:
            return v
        try:
            return msgspec.convert(v, self.py, dec_hook=_DEC_HOOK)
        except msgspec.ValidationError as exc:
            raise DecodeError("", _msgspec_message(exc)) from None


class _List(_Kind):
    __slots__ = ("elem",)

    def __init__(self, elem: _Kind, nullable: bool) -> None:
        super().__init__(nullable)
        self.elem = elem

    def zero(self) -> Any:
        return None if self.nullable else []

    def decode(self, v: Any, ctx: _Ctx) -> Any:
        if v.__class__ is not list:
            if v is None:
                return self.zero()
            raise DecodeError("", f"expected array, got {json_type(v)}")
        accept = self.elem.accept
        decode = self.elem.decode
        out: list = []
        for item in v:
            if item.__class__ is accept:
                out.append(item)
                continue
            try:
                out.append(decode(item, ctx))
            except DecodeError as exc:
                raise _within(f"[{len(out)}]", exc) from None
        return out


class _Map(_Kind):
    __slots__ = ("elem",)

    def __init__(self, elem: _Kind, nullable: bool) -> None:
        super().__init__(nullable)
        self.elem = elem

    def zero(self) -> Any:
        return None if self.nullable else {}

    def decode(self, v: Any, ctx: _Ctx) -> Any:
        if v.__class__ is not dict:
            if v is None:
                return self.zero()
            raise DecodeError("", f"expected object, got {json_type(v)}")
        accept = self.elem.accept
        decode = self.elem.decode
        out: dict = {}
        for k, item in v.items():
            if k.__class__ is not str and not isinstance(k, str):
                raise DecodeError("", f"expected string keys, got {json_type(k)}")
            if item.__class__ is accept:
                out[k] = item
                continue
            try:
                out[k] = decode(item, ctx)
            except DecodeError as exc:
                raise _within(f"[{k}]", exc) from None
        return out


class _Field:
    """One struct field: its names, kind and Go omit rule."""

    __slots__ = ("name", "wire", "kind", "required", "zero_omit")

    def __init__(self, name: str, wire: str, kind: _Kind, required: bool, zero_omit: bool) -> None:
        self.name = name
        self.wire = wire
        self.kind = kind
        self.required = required
        self.zero_omit = zero_omit


class _Struct(_Kind):
    """A wire struct type: the decode loop, and what the encoder's walk looks at.

    ``by_wire`` maps a wire key to ``(attribute, accept, decode, zero_omit)``: a tuple, as the
    loop unpacks one per key. Every table here is filled while the codec is built, then left as
    it is.
    """

    __slots__ = ("type_", "fields", "by_wire", "required", "struct_fields", "checks", "check_keys")

    def __init__(self, type_: type, nullable: bool) -> None:
        super().__init__(nullable)
        self.type_ = type_
        self.fields: tuple[_Field, ...] = ()
        self.by_wire: dict[str, tuple[str, Any, Any, bool]] = {}
        self.required: frozenset[str] = frozenset()
        self.struct_fields: tuple[_Field, ...] = ()  # fields holding structs (to restore unknowns)
        # wire -> (zero_omit, look, sub-plan) of the fields whose to_builtins output may differ
        # from Go's (see _fix_out)
        self.checks: dict[str, tuple[bool, str | None, _Struct | None]] = {}
        self.check_keys: frozenset[str] = frozenset()

    def zero(self) -> Any:
        if self.nullable:
            return None
        return self.type_(**{f.name: f.kind.zero() for f in self.fields if f.required})

    def decode(self, raw: Any, ctx: _Ctx) -> Any:
        if raw.__class__ is not dict:
            if raw is None:
                return self.zero()
            raise DecodeError("", f"expected object, got {json_type(raw)}")
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] | None = None
        unknown_before = ctx.unknown
        by_wire = self.by_wire
        for key, value in raw.items():
            f = by_wire.get(key)
            if f is None:
                if extra is None:
                    extra = {}
                extra[key] = value
                continue
            name, accept, decode, zero_omit = f
            if value.__class__ is not accept:
                try:
                    value = decode(value, ctx)
                except DecodeError as exc:
                    raise _within(key, exc) from None
            # Go's omitempty zero values ("", 0, empty list or map) read as absent.
            if zero_omit and not value:
                value = None
            kwargs[name] = value
        required = self.required
        if required and not required <= raw.keys():  # a missing required field is Go's zero value
            for f in self.fields:
                if f.required and f.name not in kwargs:
                    kwargs[f.name] = f.kind.zero()
        obj = self.type_(**kwargs)
        if extra is not None:
            obj._wire_unknown = extra
            ctx.unknown += 1
        if ctx.unknown != unknown_before:
            obj._wire_subtree = True
        return obj


# --------------------------------------------------------------------------- building plans

# Go fields that are *values* with ``omitempty`` (not pointers): their zero value ("", 0, empty
# map/list) is never emitted, and decoding one is the same as the field being absent. types.py
# models them as ``X | None = None``; the codec maps the zero to None both ways.
# HPAScalingRules.policies is deliberately absent: defaulting tells ``[]`` from absent (SetDefaults_HorizontalPodAutoscalerBehavior).
_ZERO_OMIT: Mapping[type, frozenset[str]] = MappingProxyType({
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
})


def _is_wire_struct(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, T.K8s)


class _PlanBuilder:
    """Works out the plans of a closed set of wire struct types (and those they hold)."""

    def __init__(self) -> None:
        self.plans: dict[tuple[type, bool], _Struct] = {}

    def kind(self, tp: Any) -> _Kind:
        nullable = False
        origin = typing.get_origin(tp)
        if origin is Union or origin is _pytypes.UnionType:
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            nullable = len(args) != len(typing.get_args(tp))
            if len(args) != 1:  # e.g. LabelSelector | dict[str, str]: let msgspec decide
                return _Any(tp, nullable)
            tp = args[0]
            origin = typing.get_origin(tp)
        if origin is list:
            (elem,) = typing.get_args(tp)
            return _List(self.kind(elem), nullable)
        if origin is dict:
            _key, val = typing.get_args(tp)
            return _Map(self.kind(val), nullable)
        if tp is Any:
            return _Any(None, True)
        if tp is datetime:
            return _Time(nullable)
        if tp is Quantity:
            return _Quantity(nullable)
        if _is_wire_struct(tp):
            return self.struct(tp, nullable)
        if tp in (str, int, bool, float):
            return _Scalar(tp, nullable)
        raise TypeError(f"codec: unsupported field type {tp!r}")

    def struct(self, type_: type, nullable: bool) -> _Struct:
        plan = self.plans.get((type_, nullable))
        if plan is not None:
            return plan
        plan = self.plans[(type_, nullable)] = _Struct(type_, nullable)
        if nullable:  # the same fields as the non-null kind
            base = self.struct(type_, False)
            for attr in _Struct.__slots__:
                setattr(plan, attr, getattr(base, attr))
            return plan
        zero_omit = _ZERO_OMIT.get(type_, frozenset())
        fields = []
        for info in msgspec.structs.fields(type_):
            kind = self.kind(info.type)
            omit = info.name in zero_omit
            if omit and not (isinstance(kind, (_List, _Map)) or kind.accept in (str, int)):
                raise TypeError(f"codec: {type_.__name__}.{info.name}: omitempty zero of {kind.accept}")
            fields.append(_Field(info.name, info.encode_name, kind, info.required, omit))
        plan.fields = tuple(fields)
        plan.by_wire = {f.wire: (f.name, f.kind.accept, f.kind.decode, f.zero_omit) for f in fields}
        plan.required = frozenset(f.wire for f in fields if f.required)
        plan.struct_fields = tuple(f for f in fields if _holds_struct(f.kind))
        checks = {}
        for f in fields:
            look, sub = _output_look(f.kind)
            if f.zero_omit or look is not None:
                checks[f.wire] = (f.zero_omit, look, sub)
        plan.checks = checks
        plan.check_keys = frozenset(checks)
        return plan


def _holds_struct(kind: _Kind) -> bool:
    return isinstance(kind, _Struct) or (isinstance(kind, (_List, _Map)) and isinstance(kind.elem, _Struct))


# What the encoder's walk looks at in a field's output (besides an omitempty zero).
_LOOK_TIME = "time"  # a time: whole seconds, UTC
_LOOK_STRUCT = "struct"  # a struct that has checks of its own
_LOOK_ITEMS = "items"  # a list of such structs


def _output_look(kind: _Kind) -> tuple[str | None, _Struct | None]:
    if isinstance(kind, _Time):
        return _LOOK_TIME, None
    if isinstance(kind, _Struct) and kind.checks:
        return _LOOK_STRUCT, kind
    if isinstance(kind, _List) and isinstance(kind.elem, _Struct) and kind.elem.checks:
        return _LOOK_ITEMS, kind.elem
    return None, None


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


def _msgspec_path(exc: msgspec.ValidationError) -> str:
    m = _PATH_RE.search(str(exc))
    return m.group(1).lstrip(".") if m else ""


# --------------------------------------------------------------------------- encoding walk

_TIME_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")


def _fix_out(out: dict, plan: _Struct) -> None:
    """Make ``to_builtins`` output what Go writes: omitempty zeros dropped, times in whole
    seconds UTC (values built in code may hold any datetime)."""
    checks = plan.checks
    for wire in out.keys() & plan.check_keys:
        v = out[wire]
        if v is None:
            continue
        zero_omit, look, sub = checks[wire]
        if zero_omit and not v:
            del out[wire]
        elif look is _LOOK_STRUCT:
            _fix_out(v, sub)
        elif look is _LOOK_ITEMS:
            for item in v:
                _fix_out(item, sub)
        elif look is _LOOK_TIME and _TIME_RE.match(v) is None:
            out[wire] = format_time(msgspec.convert(v, datetime))


def _restore(obj: Any, out: dict, plan: _Struct) -> None:
    """Put back the unknown fields :meth:`WireCodec.from_wire` parked in ``obj`` and below."""
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
        if isinstance(kind, _Struct):
            if getattr(val, "_wire_subtree", False):
                _restore(val, out[f.wire], kind)
        elif isinstance(kind, _List):
            for item, item_out in zip(val, out[f.wire]):
                if getattr(item, "_wire_subtree", False):
                    _restore(item, item_out, kind.elem)  # type: ignore[arg-type]
        elif isinstance(kind, _Map):
            for k, item in val.items():
                if getattr(item, "_wire_subtree", False) and k in out[f.wire]:
                    _restore(item, out[f.wire][k], kind.elem)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the codec


class WireCodec:
    """Go's JSON decoding and encoding rules for a closed set of wire struct types.

    ``WireCodec(*types)`` works out the plans of ``types`` and of every struct they hold, once;
    the module's functions use the codec of :mod:`pyhpa.api.types`. A module with wire structs
    of its own (the v1 annotation payloads) builds one for them at import.
    """

    def __init__(self, *types: type) -> None:
        builder = _PlanBuilder()
        for type_ in types:
            builder.struct(type_, False)
        self.plans: Mapping[type, _Struct] = MappingProxyType(
            {type_: plan for (type_, nullable), plan in builder.plans.items() if not nullable})

    def _plan(self, type_: type) -> _Struct | None:
        """The plan of a wire struct; None for views and other structs (decoded by msgspec)."""
        plan = self.plans.get(type_)
        if plan is None and _is_wire_struct(type_):
            raise TypeError(f"codec: {type_.__name__} is not one of this codec's types")
        return plan

    def from_wire(self, raw: Any, type_: type) -> Any:
        """Decode a wire dict into ``type_`` as Go's JSON decoder would (see the module doc).

        Raises :class:`DecodeError` (a ``ValueError``) naming the field path of a value of the
        wrong type. Missing/null required fields become zero values; unknown fields are kept.
        """
        plan = self._plan(type_)
        if plan is None:
            try:
                return msgspec.convert(raw, type_, strict=False, dec_hook=_DEC_HOOK)
            except msgspec.ValidationError as exc:
                raise DecodeError(_msgspec_path(exc), _msgspec_message(exc)) from None
        return plan.decode(raw, _Ctx())

    def to_wire(self, obj: Any) -> Any:
        """A struct as builtins, the way Go would marshal it (canonical quantities, RFC 3339 Z
        seconds, ``omitempty`` honoured, unknown fields from :meth:`from_wire` restored)."""
        # "deterministic" sorts map keys (labels, annotations...) as Go's encoder does.
        out = _to_builtins(obj, enc_hook=quantity_enc_hook, order="deterministic")
        if isinstance(obj, msgspec.Struct):
            plan = self._plan(type(obj))
            if plan is not None:
                _fix_out(out, plan)
                if self._carries_unknown(obj, plan):
                    _restore(obj, out, plan)
        return out

    def has_unknown_fields(self, obj: Any) -> bool:
        """Whether a decoded object (or a direct child) carries unknown wire fields."""
        if not isinstance(obj, msgspec.Struct):
            return False
        plan = self._plan(type(obj))
        return plan is not None and self._carries_unknown(obj, plan)

    @staticmethod
    def _carries_unknown(obj: Any, plan: _Struct) -> bool:
        # The top object, or a direct child moved in from another decoded object (e.g. the
        # stored status on update), may carry unknown fields.
        if getattr(obj, "_wire_subtree", False):
            return True
        for f in plan.struct_fields:
            if isinstance(f.kind, _Struct) and getattr(getattr(obj, f.name), "_wire_subtree", False):
                return True
        return False


_CODEC = WireCodec(*(tp for tp in vars(T).values() if _is_wire_struct(tp) and tp is not T.K8s))


def from_wire(raw: Any, type_: type) -> Any:
    """:meth:`WireCodec.from_wire` for the types of :mod:`pyhpa.api.types`."""
    return _CODEC.from_wire(raw, type_)


def to_wire(obj: Any) -> Any:
    """:meth:`WireCodec.to_wire` for the types of :mod:`pyhpa.api.types`."""
    return _CODEC.to_wire(obj)


def has_unknown_fields(obj: Any) -> bool:
    """Whether a decoded object (or a direct child) carries unknown wire fields."""
    return _CODEC.has_unknown_fields(obj)


def loads_json(data: bytes | str, type_: type) -> Any:
    """Parse JSON text and decode it with :func:`from_wire`."""
    try:
        raw = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise DecodeError("", f"invalid JSON: {exc}") from None
    return from_wire(raw, type_)


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
