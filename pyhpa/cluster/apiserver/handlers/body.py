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

import yaml
from yaml.nodes import MappingNode, ScalarNode

# Levels of nested objects and arrays a body may have (Go allows 10,000; the deepest built-in
# object, a CRD's schema, rarely passes 40).
MAX_DEPTH = 100
# go-yaml v2's alias rule (decode.go): once over 100 alias nodes and 1,000 nodes in all, at most
# this share of the nodes may come from aliases (99% up to 400,000 nodes, 10% from 4,000,000).
_ALIAS_LOW, _ALIAS_HIGH = 400_000, 4_000_000


# libyaml's parser when PyYAML has it: it refuses deep nesting at once, where the pure-Python
# parser takes most of a second to unwind its recursion.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class BodyError(ValueError):
    """Bytes that are not a JSON (or YAML) document we accept; a 400 BadRequest."""


def _reject_constant(name: str) -> Any:
    raise BodyError(f"invalid character '{name[0]}' looking for beginning of value")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise BodyError(f"json: cannot unmarshal number {text} into Go value of type float64")
    return value


def decode_json(raw: bytes) -> Any:
    """Strict JSON: no NaN/Infinity, at most :data:`MAX_DEPTH` levels; lone surrogate escapes
    become U+FFFD, as Go's decoder makes them."""
    if not raw.strip():
        raise BodyError("unexpected end of JSON input")
    try:
        data = json.loads(raw, parse_constant=_reject_constant, parse_float=_finite)
    except RecursionError:
        raise BodyError(f"exceeded max depth of {MAX_DEPTH}") from None
    except UnicodeDecodeError as exc:
        raise BodyError(f"invalid UTF-8 at byte {exc.start}") from None
    except ValueError as exc:  # json.JSONDecodeError and BodyError
        raise BodyError(str(exc)) from None
    surrogates = b"\\ud" in raw or b"\\uD" in raw
    # a bracket inside a string only overcounts: few brackets in all means a shallow document
    if surrogates or raw.count(b"{") + raw.count(b"[") > MAX_DEPTH:
        data = _bounded_copy(data, surrogates=surrogates)
    return data


def decode_yaml(raw: bytes) -> Any:
    """YAML as sigs.k8s.io/yaml reads it into JSON: string keys, no alias bombs, bounded depth;
    timestamps and binary become strings, non-finite floats are refused."""
    try:
        text = raw.decode()
    except UnicodeDecodeError as exc:
        raise BodyError(f"invalid UTF-8 at byte {exc.start}") from None
    if not text.strip():
        return None
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_aliases(node)
        data = loader.construct_document(node)
    except RecursionError:
        raise BodyError(f"exceeded max depth of {MAX_DEPTH}") from None
    except BodyError:
        raise
    except (ValueError, yaml.YAMLError) as exc:
        raise BodyError(f"error converting YAML to JSON: {exc}") from None
    finally:
        loader.dispose()
    return _bounded_copy(data, surrogates=True, yaml_values=True)


def _check_aliases(root: Any) -> None:
    """go-yaml v2's alias rule over the composed nodes, where an alias is the very node it names:
    counting stops as soon as too many of the nodes came through aliases."""
    seen: set[Any] = set()  # collection nodes met once (nodes hash by identity)
    nodes = aliased = 0
    stack: list[tuple[Any, bool, int]] = [(root, False, 1)]
    while stack:
        node, in_alias, depth = stack.pop()
        nodes += 1
        aliased += in_alias
        if aliased > 100 and nodes > 1000 and aliased / nodes > _allowed_alias_ratio(nodes):
            raise BodyError("error converting YAML to JSON: yaml: document contains "
                            "excessive aliasing")
        if isinstance(node, ScalarNode):
            continue
        if depth > MAX_DEPTH:
            raise BodyError(f"exceeded max depth of {MAX_DEPTH}")
        inner = in_alias or node in seen
        seen.add(node)
        if isinstance(node, MappingNode):
            for key, value in node.value:
                stack.append((key, inner, depth + 1))
                stack.append((value, inner, depth + 1))
        else:
            stack.extend((item, inner, depth + 1) for item in node.value)


def _allowed_alias_ratio(nodes: int) -> float:
    if nodes <= _ALIAS_LOW:
        return 0.99
    if nodes >= _ALIAS_HIGH:
        return 0.10
    return 0.99 - 0.89 * (nodes - _ALIAS_LOW) / (_ALIAS_HIGH - _ALIAS_LOW)


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
