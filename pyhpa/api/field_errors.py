"""Field errors (apimachinery's ``field.Error``) and how the API server and kubectl print them.

Why exact: users, kubectl's output and scripts see these strings verbatim
(``spec.maxReplicas: Invalid value: 0: must be greater than or equal to 1``), including Go's
quoting of the bad value and the aggregate ``[e1, e2]`` form.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterable, Iterator

from pyhpa.api.quantity import Quantity

__all__ = [
    "FieldError",
    "InvalidError",
    "Verbatim",
    "REQUIRED",
    "INVALID",
    "NOT_SUPPORTED",
    "FORBIDDEN",
    "INTERNAL",
    "TOO_LONG",
    "DUPLICATE",
    "cause",
    "object_items",
    "required",
    "invalid",
    "forbidden",
    "not_supported",
    "dedupe",
    "render",
    "go_quote",
    "go_json",
]

REQUIRED = "Required"
INVALID = "Invalid"
NOT_SUPPORTED = "NotSupported"
FORBIDDEN = "Forbidden"
INTERNAL = "Internal"
TOO_LONG = "TooLong"
DUPLICATE = "Duplicate"

_WORDS = MappingProxyType({
    REQUIRED: "Required value",
    INVALID: "Invalid value",
    NOT_SUPPORTED: "Unsupported value",
    FORBIDDEN: "Forbidden",
    INTERNAL: "Internal error",
    TOO_LONG: "Too long",
    DUPLICATE: "Duplicate value",
})
_CAUSE = MappingProxyType({
    REQUIRED: "FieldValueRequired",
    INVALID: "FieldValueInvalid",
    NOT_SUPPORTED: "FieldValueNotSupported",
    FORBIDDEN: "FieldValueForbidden",
    INTERNAL: "InternalError",
    TOO_LONG: "FieldValueTooLong",
    DUPLICATE: "FieldValueDuplicate",
})
_NO_VALUE = (REQUIRED, FORBIDDEN, INTERNAL, TOO_LONG)


def go_quote(s: str) -> str:
    """Go's ``%q`` / ``strconv.Quote`` for a string."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif 0xD800 <= o <= 0xDFFF:
            out.append("\\ufffd")  # lone surrogate: not valid UTF-8, Go sees U+FFFD
        elif o < 0x80:
            out.append(f"\\x{o:02x}")
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


_GO_ESCAPES = MappingProxyType({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"})


def go_json(value: Any) -> str:
    """Go's ``json.Marshal`` of a plain value (``<``, ``>``, ``&`` escaped)."""
    if isinstance(value, Quantity):
        value = str(value)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return (
        text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    )


@dataclass(frozen=True)
class FieldError:
    """One ``field.Error``: ``type`` is REQUIRED/INVALID/NOT_SUPPORTED/FORBIDDEN/INTERNAL/TOO_LONG.

    ``json_value`` marks bad values Go prints through JSON (named string types such as enums,
    structs, lists); plain strings print Go-quoted, ints and bools bare, Quantities as JSON.
    """

    type: str
    field: str
    bad_value: Any = None
    detail: str = ""
    json_value: bool = False

    def body(self) -> str:
        """The text after ``<path>: `` (the ``message`` of a Status cause)."""
        s = _WORDS[self.type]
        if self.type not in _NO_VALUE:
            s += ": " + self._value_text()
        if self.detail:
            s += ": " + self.detail
        return s

    def _value_text(self) -> str:
        v = self.bad_value
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, Verbatim):
            return v.text
        if isinstance(v, (int, float)):
            return str(v)
        if isinstance(v, str) and not self.json_value:
            return go_quote(v)
        return go_json(v)

    def cause(self) -> dict[str, str]:
        """The error as a ``metav1.Status`` cause."""
        return {"reason": _CAUSE[self.type], "message": self.body(), "field": self.field}

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}" if self.field else self.body()


@dataclass(frozen=True)
class Verbatim:
    """A bad value Go prints through its ``String()`` method (e.g. a ``metav1.Time``)."""

    text: str

    def __str__(self) -> str:
        return self.text


def cause(field: str, type_: str, value: Any = None, detail: str = "", *,
          shown: str | None = None) -> dict[str, str]:
    """One field error as a Status cause; ``shown`` is the bad value already written as Go
    prints it (``[]string{"Al"}``), for values that are not a string or a number."""
    return FieldError(type_, field, Verbatim(shown) if shown is not None else value, detail).cause()


def object_items(items: Iterable[Any], path: str, out: list[dict[str, str]]) -> Iterator[tuple[str, dict]]:
    """``(path[i], item)`` of each mapping item of a list field at ``path``; any other item adds
    its "must be an object" cause to ``out`` instead."""
    for i, item in enumerate(items):
        if isinstance(item, dict):
            yield f"{path}[{i}]", item
        else:
            out.append(cause(f"{path}[{i}]", INVALID, None, "must be an object"))


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(REQUIRED, path, None, detail)


def invalid(path: str, value: Any, detail: str, *, json_value: bool = False) -> FieldError:
    return FieldError(INVALID, path, value, detail, json_value)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(FORBIDDEN, path, None, detail)


def not_supported(path: str, value: Any, supported: Iterable[str]) -> FieldError:
    detail = "supported values: " + ", ".join(go_quote(s) for s in supported)
    return FieldError(NOT_SUPPORTED, path, value, detail, json_value=True)


def dedupe(errors: Iterable[FieldError]) -> list[FieldError]:
    """Drop errors whose rendered text repeats an earlier one (``ToAggregate`` does the same)."""
    seen: set[str] = set()
    out = []
    for e in errors:
        text = str(e)
        if text not in seen:
            seen.add(text)
            out.append(e)
    return out


def render(errors: list[FieldError]) -> str:
    """The aggregate text: one error alone, several as ``[e1, e2]``."""
    texts = [str(e) for e in dedupe(errors)]
    if len(texts) == 1:
        return texts[0]
    return "[" + ", ".join(texts) + "]"


class InvalidError(Exception):
    """A rejected write: carries the field errors and renders them as the API server and
    kubectl do."""

    def __init__(
        self,
        errors: list[FieldError],
        *,
        name: str | None = "",
        kind: str = "HorizontalPodAutoscaler",
        group: str = "autoscaling",
    ) -> None:
        self.errors = dedupe(errors)
        self.name = name or ""
        self.kind = kind
        self.group = group
        super().__init__(self.kubectl_text())

    @property
    def message(self) -> str:
        """The Status ``message``: ``HorizontalPodAutoscaler.autoscaling "web" is invalid: ...``."""
        qualified = f"{self.kind}.{self.group}" if self.group else self.kind
        return f"{qualified} {go_quote(self.name)} is invalid: {render(self.errors)}"

    def status(self) -> dict[str, Any]:
        """The 422 ``Status`` body, keys in Go's order."""
        details: dict[str, Any] = {}
        if self.name:
            details["name"] = self.name
        if self.group:
            details["group"] = self.group
        details["kind"] = self.kind
        details["causes"] = [e.cause() for e in self.errors]
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": "Invalid",
            "details": details,
            "code": 422,
        }

    def kubectl_text(self) -> str:
        """What kubectl prints for this response (without the ``error: `` prefix)."""
        head = f"The {self.kind} {go_quote(self.name)} is invalid: "
        if len(self.errors) == 1:
            return head + str(self.errors[0])
        return head + "".join("\n* " + str(e) for e in self.errors)

    def __str__(self) -> str:
        return self.kubectl_text()
