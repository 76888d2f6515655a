"""Field selectors (`fieldSelector=metadata.name=web,involvedObject.kind=HorizontalPodAutoscaler`).

Why generic: kubectl only uses a few fields (``metadata.name``, ``metadata.namespace``,
``involvedObject.*``, ``status.phase``, ``spec.nodeName``), and the order of terms varies between
runs, so we parse terms into (path, op, value) and compare against the dotted path of the object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class FieldSelectorError(ValueError):
    """A fieldSelector that cannot be parsed."""


@dataclass(frozen=True)
class Term:
    path: tuple[str, ...]
    op: str  # "=" or "!="
    value: str


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, cur, esc = [], [], False
    for ch in text:
        if esc:
            cur.append(ch)
            esc = False
        elif ch == "\\":
            cur.append(ch)
            esc = True
        elif ch == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _unescape(text: str) -> str:
    out, esc = [], False
    for ch in text:
        if esc:
            out.append(ch)
            esc = False
        elif ch == "\\":
            esc = True
        else:
            out.append(ch)
    return "".join(out)


def _render(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class FieldSelector:
    def __init__(self, terms: list[Term]) -> None:
        self.terms = terms

    @classmethod
    def parse(cls, text: str) -> "FieldSelector":
        terms: list[Term] = []
        for raw in _split_unescaped(text or "", ","):
            part = raw.strip()
            if not part:
                continue
            for op in ("!=", "==", "="):
                idx = part.find(op)
                if idx > 0:
                    key = part[:idx].strip()
                    value = _unescape(part[idx + len(op):].strip())
                    terms.append(Term(tuple(key.split(".")), "!=" if op == "!=" else "=", value))
                    break
            else:
                raise FieldSelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        return cls(terms)

    def empty(self) -> bool:
        return not self.terms

    def value_of(self, obj: dict[str, Any], path: tuple[str, ...]) -> str:
        cur: Any = obj
        for p in path:
            if not isinstance(cur, dict):
                return ""
            cur = cur.get(p)
        return _render(cur)

    def matches(self, obj: dict[str, Any]) -> bool:
        for t in self.terms:
            got = self.value_of(obj, t.path)
            if (got == t.value) != (t.op == "="):
                return False
        return True

    def requires(self, dotted: str) -> str | None:
        """The value an equality term demands for ``dotted`` (e.g. metadata.name), if any."""
        path = tuple(dotted.split("."))
        for t in self.terms:
            if t.path == path and t.op == "=":
                return t.value
        return None

    def __str__(self) -> str:
        return ",".join(f"{'.'.join(t.path)}{t.op}{t.value}" for t in self.terms)
