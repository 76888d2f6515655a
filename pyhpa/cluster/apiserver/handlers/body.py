"""A request body's bytes as JSON data, with bounds on what untrusted bytes can make us build.

Why bounds here: a body is at most :data:`~.request.MAX_BODY_BYTES`, but a few hundred bytes can
still ask for more than that: thousands of nested brackets (Python's parser and every walker
after it recurse), a YAML alias bomb (a 443-byte document expanding to 47 MB), a lone UTF-16
surrogate escape (valid JSON that no encoder can write back), ``NaN`` (not JSON at all). Each is
refused here with a message, or repaired as Go's decoder repairs it, before any handler sees it.

Upstream's limits differ in size, not in kind: Go's JSON decoder stops at 10,000 levels and
go-yaml refuses documents whose nodes come mostly from aliases. Our depth limit is lower because
this server's walkers use Python's stack; no Kubernetes object comes near it.
"""

from __future__ import annotations

import datetime
import json
import math
from typing import Any

from pyhpa.api import goyaml

# Levels of nested objects and arrays a body may have (Go allows 10,000; the deepest built-in
# object, a CRD's schema, rarely passes 40).
MAX_DEPTH = 100


class BodyError(ValueError):
    """Bytes that are not a JSON (or YAML) document we accept; a 400 BadRequest."""


def _reject_constant(name: str) -> Any:
    raise BodyError(f"invalid character '{name[0]}' looking for beginning of value")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise BodyError(f"json: cannot unmarshal number {text} into Go value of type float64")
    return value


def _go_char(byte: int) -> str:
    """Go's ``quoteChar`` of one byte, as its JSON scanner names an unexpected character."""
    c = chr(byte)
    if c.isprintable():
        return f"'{c}'"
    named = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r"}
    return "'" + named.get(byte, f"\\x{byte:02x}") + "'"


def _refuse_other_encodings(raw: bytes) -> None:
    """Go reads a JSON body as UTF-8 bytes: a byte-order mark or UTF-16/32 text (a NUL among
    the first bytes of a document that must start with ASCII) is a syntax error there, while
    Python's ``json.loads`` would quietly decode it."""
    head = raw.lstrip(b" \t\r\n")[:4]
    if head[:1] in (b"\xef", b"\xfe", b"\xff"):
        raise BodyError(f"invalid character {_go_char(head[0])} looking for beginning of value")
    if b"\x00" in head:
        raise BodyError(f"invalid character {_go_char(0)} looking for beginning of value"
                        if head[:1] == b"\x00" else
                        f"invalid character {_go_char(0)} after top-level value"
                        if head[:1] not in (b"{", b"[") else
                        f"invalid character {_go_char(0)} looking for beginning of object key "
                        f"string" if head[:1] == b"{" else
                        f"invalid character {_go_char(0)} looking for beginning of value")


class _Duplicated(dict):  # type: ignore[type-arg]
    """An object of a JSON body that set some keys more than once (the last value kept)."""

    repeated: list[str]


def _marked(out: dict[str, Any], pairs: list[tuple[str, Any]]) -> "_Duplicated":
    marked = _Duplicated(out)
    seen: set[str] = set()
    marked.repeated = []
    for k, _ in pairs:
        if k in seen:
            marked.repeated.append(k)
        seen.add(k)
    return marked


def _duplicate_paths(data: Any) -> tuple[Any, list[str]]:
    """``data`` with plain dicts again, and where keys were repeated, as Go's strict decoder
    names them (``duplicate field "spec.replicas"``: the path of each repeat, in order)."""
    found: list[str] = []
    root: list[Any] = [data]
    stack: list[tuple[Any, str, Any, Any]] = [(data, "", root, 0)]
    while stack:
        value, path, parent, slot = stack.pop()
        if isinstance(value, dict):
            if isinstance(value, _Duplicated):
                found += [f"{path}.{k}" if path else k for k in value.repeated]
                value = parent[slot] = dict(value)
            for k in reversed(list(value)):
                stack.append((value[k], f"{path}.{k}" if path else k, value, k))
        elif isinstance(value, list):
            for i in reversed(range(len(value))):
                stack.append((value[i], f"{path}[{i}]", value, i))
    return root[0], found


def decode_json(raw: bytes, duplicates: list[str] | None = None) -> Any:
    """Strict JSON: no NaN/Infinity, at most :data:`MAX_DEPTH` levels; lone surrogate escapes
    become U+FFFD, as Go's decoder makes them; UTF-8 only. Keys set twice keep their last value,
    as in Go; given a ``duplicates`` list, their paths are added to it."""
    if not raw.strip():
        raise BodyError("unexpected end of JSON input")
    _refuse_other_encodings(raw)
    repeats: list[bool] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) == len(items):
            return out
        repeats.append(True)
        return _marked(out, items)
    hook = pairs if duplicates is not None else None
    try:
        data = json.loads(raw, parse_constant=_reject_constant, parse_float=_finite,
                          object_pairs_hook=hook)
    except RecursionError:
        raise BodyError(f"exceeded max depth of {MAX_DEPTH}") from None
    except UnicodeDecodeError as exc:
        raise BodyError(f"invalid UTF-8 at byte {exc.start}") from None
    except ValueError as exc:  # json.JSONDecodeError and BodyError
        raise BodyError(str(exc)) from None
    if repeats and duplicates is not None:
        data, paths = _duplicate_paths(data)
        duplicates += paths
    surrogates = b"\\ud" in raw or b"\\uD" in raw
    # a bracket inside a string only overcounts: few brackets in all means a shallow document
    if surrogates or raw.count(b"{") + raw.count(b"[") > MAX_DEPTH:
        data = _bounded_copy(data, surrogates=surrogates)
    return data


def decode_yaml(raw: bytes) -> Any:
    """YAML as sigs.k8s.io/yaml reads it into JSON (the one YAML reader, :mod:`pyhpa.api.goyaml`,
    which refuses alias bombs as go-yaml does), then bounded in depth like a JSON body."""
    try:
        text = raw.decode()
    except UnicodeDecodeError as exc:
        raise BodyError(f"invalid UTF-8 at byte {exc.start}") from None
    if not text.strip():
        return None
    try:
        data = goyaml.load(text)
    except RecursionError:
        raise BodyError(f"exceeded max depth of {MAX_DEPTH}") from None
    except ValueError as exc:
        raise BodyError(f"error converting YAML to JSON: {exc}") from None
    return _bounded_copy(data, surrogates=True, yaml_values=True)


def yaml_duplicates(raw: bytes) -> list[str]:
    """The first key a YAML body (already read by :func:`decode_yaml`) sets twice, as a path
    (``spec.replicas``); empty when none is."""
    try:
        goyaml.load_all_marked(raw.decode(), unique_keys=True)
    except goyaml.YAMLError as exc:
        if str(getattr(exc, "problem", "")).startswith("duplicate field"):
            return [str(getattr(exc, "path", "") or "")]
    except (ValueError, RecursionError):
        pass
    return []


def _scalar(value: Any, yaml_values: bool) -> Any:
    if isinstance(value, str):
        if any("\ud800" <= c <= "\udfff" for c in value):
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return value
    if not yaml_values or value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise BodyError(f"error converting YAML to JSON: json: unsupported value: {value}")
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        import base64
        return base64.b64encode(value).decode()
    raise BodyError(f"error converting YAML to JSON: unsupported value of type "
                    f"{type(value).__name__}")


def _key(key: Any) -> str:
    if isinstance(key, str):
        return _scalar(key, False)
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, (int, float)):
        return str(key)
    raise BodyError(f"error converting YAML to JSON: unsupported map key of type "
                    f"{type(key).__name__}")


def _bounded_copy(data: Any, *, surrogates: bool, yaml_values: bool = False) -> Any:
    """A tree copy of ``data`` (a YAML alias becomes a copy of what it names), refusing more than
    :data:`MAX_DEPTH` levels; strings are repaired when ``surrogates``, YAML-only values turned
    into JSON ones when ``yaml_values``."""
    fix = surrogates or yaml_values
    root: list[Any] = [None]
    # (source, depth, target container, key or index in it)
    stack: list[tuple[Any, int, Any, Any]] = [(data, 1, root, 0)]
    while stack:
        value, depth, parent, slot = stack.pop()
        if isinstance(value, dict):
            if depth > MAX_DEPTH:
                raise BodyError(f"exceeded max depth of {MAX_DEPTH}")
            out: Any = {}
            for k, v in value.items():
                key = _key(k) if fix else k
                out[key] = None
                stack.append((v, depth + 1, out, key))
            parent[slot] = out
        elif isinstance(value, list):
            if depth > MAX_DEPTH:
                raise BodyError(f"exceeded max depth of {MAX_DEPTH}")
            out = [None] * len(value)
            for i, v in enumerate(value):
                stack.append((v, depth + 1, out, i))
            parent[slot] = out
        else:
            parent[slot] = _scalar(value, yaml_values) if fix else value
    return root[0]
