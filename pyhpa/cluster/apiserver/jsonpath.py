"""The JSONPath subset CRDs use: ``additionalPrinterColumns[].jsonPath`` and ``selectableFields``.

Why our own: those paths are short (``.spec.replicas``, ``.status.conditions[?(@.type=="Ready")]
.status``, ``.metadata.labels['app\\.kubernetes\\.io/name']``), and only the first result is
used, so a small evaluator is enough: ``.name``, ``['name']``/``["name"]``, ``[N]`` (negative
from the end), ``[*]``/``.*`` and a filter ``[?(@.a.b == "v")]`` with ``==``/``!=`` against a
string, number or boolean literal.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any


class JSONPathError(ValueError):
    """A path outside the supported subset (CRD validation reports it on the field)."""


@dataclass(frozen=True)
class _Step:
    kind: str  # "key" | "index" | "all" | "filter"
    key: str = ""
    index: int = 0
    filter_path: tuple[str, ...] = ()
    op: str = "=="
    literal: Any = None


_NAME = re.compile(r"[A-Za-z0-9_\-$]+")
_FILTER = re.compile(r"\?\(@((?:\.[A-Za-z0-9_\-$]+)+)\s*(==|!=)\s*(.+)\)$")


def _literal(text: str) -> Any:
    text = text.strip()
    if text[:1] in ("'", '"') and text[-1:] == text[:1] and len(text) >= 2:
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        raise JSONPathError(f"unsupported filter value {text!r}") from None


def _bracket_end(path: str, start: int) -> int:
    """Index of the ``]`` closing the bracket opened at ``start`` (quotes respected)."""
    quote = ""
    i = start + 1
    while i < len(path):
        ch = path[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in ("'", '"'):
            quote = ch
        elif ch == "]":
            return i
        i += 1
    raise JSONPathError(f"unterminated '[' in {path!r}")


def parse(path: str) -> tuple[_Step, ...]:
    """Parse ``path`` (optionally wrapped in ``{}``); raises :class:`JSONPathError`."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if not text.startswith(".") and not text.startswith("["):
        raise JSONPathError(f"{path!r} must start with '.' or '['")
    steps: list[_Step] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == ".":
            i += 1
            if i < len(text) and text[i] == "*":
                steps.append(_Step("all"))
                i += 1
                continue
            m = _NAME.match(text, i)
            if m is None:
                raise JSONPathError(f"expected a field name at position {i} of {path!r}")
            steps.append(_Step("key", key=m.group(0)))
            i = m.end()
        elif ch == "[":
            end = _bracket_end(text, i)
            inner = text[i + 1:end].strip()
            i = end + 1
            if inner == "*":
                steps.append(_Step("all"))
            elif inner[:1] in ("'", '"'):
                steps.append(_Step("key", key=_literal(inner).replace("\\.", ".")))
            elif re.fullmatch(r"-?[0-9]+", inner):
                steps.append(_Step("index", index=int(inner)))
            else:
                m = _FILTER.match(inner)
                if m is None:
                    raise JSONPathError(f"unsupported expression [{inner}] in {path!r}")
                steps.append(_Step("filter", filter_path=tuple(m.group(1)[1:].split(".")),
                                   op=m.group(2), literal=_literal(m.group(3))))
        else:
            raise JSONPathError(f"unexpected {ch!r} at position {i} of {path!r}")
    return tuple(steps)


def _dig(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def evaluate(steps: tuple[_Step, ...], obj: Any) -> list[Any]:
    """Every value ``steps`` reach in ``obj`` (missing keys simply reach nothing)."""
    current = [obj]
    for step in steps:
        nxt: list[Any] = []
        for value in current:
            if step.kind == "key":
                if isinstance(value, dict) and step.key in value:
                    nxt.append(value[step.key])
            elif step.kind == "index":
                if isinstance(value, list) and -len(value) <= step.index < len(value):
                    nxt.append(value[step.index])
            elif step.kind == "all":
                if isinstance(value, list):
                    nxt.extend(value)
                elif isinstance(value, dict):
                    nxt.extend(value.values())
            else:
                items = value if isinstance(value, list) else \
                    list(value.values()) if isinstance(value, dict) else []
                for item in items:
                    got = _dig(item, step.filter_path)
                    if (got == step.literal) == (step.op == "=="):
                        nxt.append(item)
        current = nxt
    return current


def first(steps: tuple[_Step, ...], obj: Any) -> Any:
    """The first value ``steps`` reach, or None."""
    found = evaluate(steps, obj)
    return found[0] if found else None
