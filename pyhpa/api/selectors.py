"""Label selectors: apimachinery's ``labels.Parse``, ``LabelSelectorAsSelector`` and ``String()``.

Why exact: the HPA reads its pods through the target's ``status.selector`` *string*, writes the
selector string into events and conditions (``couldn't convert selector into a corresponding
internal selector object: <err>``), registers selectors to detect pods claimed by two HPAs, and
``kubectl describe`` prints selectors. Every one of those surfaces shows apimachinery's exact
text: requirements sorted by key, values sorted, ``in``/``notin`` with ``(a,b)``, and Go's error
messages (``unable to parse requirement: <nil>: Invalid value: ...``). The lexer and parser below
follow the upstream grammar token by token, including its corner cases (``x in ()`` means the
empty value, ``in`` is an ordinary word in value position, a NUL byte separates tokens).

Matching semantics: ``!=`` and ``notin`` match when the key is absent; ``gt``/``lt`` need the
label to parse as a 64-bit integer.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from pyhpa.api.field_errors import INVALID, FieldError, go_json, go_quote
from pyhpa.api.names import is_label_key, is_valid_label_value

__all__ = [
    "Operator",
    "Requirement",
    "Selector",
    "SelectorError",
    "format_label_selector",
    "label_selector_string",
    "parse_selector",
    "selector_from_label_selector",
    "selector_from_set",
]


class SelectorError(ValueError):
    """A selector string or LabelSelector that apimachinery rejects; ``str()`` is Go's text."""


class Operator(str, enum.Enum):
    """``selection.Operator`` values (their string form is the upstream constant)."""

    DOES_NOT_EXIST = "!"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    IN = "in"
    NOT_EQUALS = "!="
    NOT_IN = "notin"
    EXISTS = "exists"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"

    def __str__(self) -> str:
        return self.value


# upstream order of ``validRequirementOperators`` (used in NotSupported details)
_BINARY_OPS = ("in", "notin", "=", "==", "!=", "gt", "lt")
_VALID_OPS = (*_BINARY_OPS, "exists", "!")

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1

# --------------------------------------------------------------------------- Go-style messages


def _invalid(path: str, bad: str, detail: str) -> str:
    return str(FieldError(INVALID, path, bad, detail))


def _aggregate(errs: list[str]) -> str:
    seen: list[str] = []
    for e in errs:
        if e not in seen:
            seen.append(e)
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


def _parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``; None when it fails."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    v = int(text)
    return v if _INT64_MIN <= v <= _INT64_MAX else None


# --------------------------------------------------------------------------- requirements


def _op_error(op: Any) -> str:
    return "operator: Unsupported value: %s: supported values: %s" % (
        go_quote(str(op)),
        ", ".join(go_quote(o) for o in _VALID_OPS),
    )


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``key op values`` term. Build through :meth:`new` to get upstream validation."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    @classmethod
    def new(cls, key: str, operator: "Operator | str", values: Iterable[str] | None = None) -> "Requirement":
        """``labels.NewRequirement``: validates key, operator, value count and values.

        ``values=None`` stands for Go's nil slice (it prints as ``null`` in errors).
        """
        vals = None if values is None else list(values)
        errs: list[str] = []
        kerrs = is_label_key(key)
        if kerrs:
            errs.append(_invalid("key", key, "; ".join(kerrs)))
        try:
            op: Operator | None = operator if operator.__class__ is Operator else Operator(operator)
        except ValueError:
            op = None
            errs.append(_op_error(operator))
        n = len(vals or ())
        if op is None:
            pass
        elif op in (Operator.IN, Operator.NOT_IN):
            if n == 0:
                errs.append(f"values: Invalid value: {go_json(vals)}: for 'in', 'notin' operators, values set can't be empty")
        elif op in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS):
            if n != 1:
                errs.append(f"values: Invalid value: {go_json(vals)}: exact-match compatibility requires one single value")
        elif op in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
            if n != 0:
                errs.append(
                    f"values: Invalid value: {go_json(vals)}: values set must be empty for exists and does not exist"
                )
        else:  # gt / lt
            if n != 1:
                errs.append(
                    f"values: Invalid value: {go_json(vals)}: for 'Gt', 'Lt' operators, exactly one value is required"
                )
            for i, v in enumerate(vals or ()):
                if _parse_int64(v) is None:
                    errs.append(
                        _invalid(f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer")
                    )
        for i, v in enumerate(vals or ()):
            verrs = is_valid_label_value(v)
            if verrs:
                errs.append(_invalid(f"values[{i}][{key}]", v, "; ".join(verrs)))
        if errs or op is None:
            raise SelectorError(_aggregate(errs))
        return cls(key, op, tuple(vals or ()))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """``Requirement.Matches``: absent keys satisfy ``!=``, ``notin`` and ``!``."""
        op = self.operator
        if op in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (Operator.NOT_IN, Operator.NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op is Operator.EXISTS:
            return self.key in labels
        if op is Operator.DOES_NOT_EXIST:
            return self.key not in labels
        if self.key not in labels or len(self.values) != 1:
            return False
        have = _parse_int64(labels[self.key])
        want = _parse_int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if op is Operator.GREATER_THAN else have < want

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        vals = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if op is Operator.IN:
            return f"{self.key} in ({vals})"
        if op is Operator.NOT_IN:
            return f"{self.key} notin ({vals})"
        sym = {Operator.EQUALS: "=", Operator.DOUBLE_EQUALS: "==", Operator.NOT_EQUALS: "!=",
               Operator.GREATER_THAN: ">", Operator.LESS_THAN: "<"}[op]
        return f"{self.key}{sym}{vals}"


# --------------------------------------------------------------------------- selector


@dataclass(frozen=True, slots=True)
class Selector:
    """A conjunction of requirements (sorted by key), or the select-nothing selector.

    ``str()`` is upstream's ``Selector.String()`` (``""`` for everything and for nothing).
    """

    requirements: tuple[Requirement, ...] = ()
    nothing_: bool = False

    @staticmethod
    def everything() -> "Selector":
        """``labels.Everything()``: matches every label set."""
        return _EVERYTHING

    @staticmethod
    def nothing() -> "Selector":
        """``labels.Nothing()``: matches no label set (also what a nil LabelSelector gives)."""
        return _NOTHING

    @staticmethod
    def parse(text: str) -> "Selector":
        """``labels.Parse``; raises :class:`SelectorError` with upstream's message."""
        return parse_selector(text)

    @staticmethod
    def from_label_selector(ls: Any) -> "Selector":
        """``metav1.LabelSelectorAsSelector``; see :func:`selector_from_label_selector`."""
        return selector_from_label_selector(ls)

    @staticmethod
    def from_set(labels: Mapping[str, str]) -> "Selector":
        """``labels.SelectorFromSet`` (no validation): ``k=v`` for each pair."""
        return selector_from_set(labels)

    @staticmethod
    def of(requirements: Iterable[Requirement]) -> "Selector":
        """A selector from requirements, sorted by key (stable), as ``Selector.Add`` does."""
        return Selector(tuple(sorted(requirements, key=lambda r: r.key)))

    def add(self, *requirements: Requirement) -> "Selector":
        """``Selector.Add``: a copy with more requirements (a nothing-selector stays nothing)."""
        if self.nothing_:
            return self
        return Selector.of(self.requirements + tuple(requirements))

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing_:
            return False
        labels = labels or {}
        for r in self.requirements:
            if not r.matches(labels):
                return False
        return True

    def is_empty(self) -> bool:
        """``Empty()``: True only for a selector that does not restrict (not for nothing)."""
        return not self.nothing_ and not self.requirements

    def is_nothing(self) -> bool:
        return self.nothing_

    def requires_exact_match(self, label: str) -> str | None:
        """``RequiresExactMatch``: the value a selector pins ``label`` to, if any."""
        for r in self.requirements:
            if r.key == label:
                if r.operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


_EVERYTHING = Selector()
_NOTHING = Selector((), True)


# --------------------------------------------------------------------------- lexer / parser

_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_SYMBOLS = MappingProxyType({")": "closed", ",": "comma", "!": "not", "==": "deq", "=": "eq", ">": "gt", "in": "in",
                              "<": "lt", "!=": "neq", "notin": "notin", "(": "open"})
_TWO_CHAR_SYMBOLS = ("==", "!=")
_WORD = re.compile(r"[^=!(),>< \t\r\n\0]*")  # an identifier runs up to a special, a space or a NUL
_ID = "id"
_EOS = "eos"


def _lex(s: str) -> list[tuple[str, str]]:
    """Upstream's lexer. Its reader returns ``0`` at the end of input, so a NUL byte ends the
    input where a token would start, and is consumed (separating tokens) right after one.

    Every special character is a symbol alone, and ``==``/``!=`` are the only longer ones, so
    the longest-match scan upstream does over special characters takes one or two of them.
    """
    items: list[tuple[str, str]] = []
    pos = 0
    n = len(s)
    while True:
        while pos < n and s[pos] in _WHITESPACE:
            pos += 1
        if pos >= n or s[pos] == "\0":
            items.append((_EOS, ""))
            return items
        if s[pos] in _SPECIAL:
            text = s[pos:pos + 2]
            if text not in _TWO_CHAR_SYMBOLS:
                text = s[pos]
            pos += len(text)
            items.append((_SYMBOLS[text], text))
        else:
            end = _WORD.match(s, pos).end()  # type: ignore[union-attr]
            word = s[pos:end]
            pos = end
            tok = _SYMBOLS.get(word)
            items.append((tok, word) if tok in ("in", "notin") else (_ID, word))
        if pos < n and s[pos] == "\0":
            pos += 1


_BINARY_TOKENS = MappingProxyType({"in": Operator.IN, "eq": Operator.EQUALS, "deq": Operator.DOUBLE_EQUALS,
                                    "gt": Operator.GREATER_THAN, "lt": Operator.LESS_THAN, "notin": Operator.NOT_IN,
                                    "neq": Operator.NOT_EQUALS})


class _Parser:
    def __init__(self, items: list[tuple[str, str]]) -> None:
        self.items = items
        self.pos = 0

    def _tok(self, i: int, values: bool) -> tuple[str, str]:
        tok, lit = self.items[i]
        if values and tok in ("in", "notin"):
            tok = _ID
        return tok, lit

    def look(self, values: bool = True) -> tuple[str, str]:
        return self._tok(self.pos, values)

    def take(self, values: bool = True) -> tuple[str, str]:
        self.pos += 1
        return self._tok(self.pos - 1, values)

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.look()
            if tok in (_ID, "not"):
                try:
                    reqs.append(self.requirement())
                except SelectorError as exc:
                    raise SelectorError(f"unable to parse requirement: {exc}") from None
                t, lit2 = self.take()
                if t == _EOS:
                    return reqs
                if t == "comma":
                    t2, l2 = self.look()
                    if t2 not in (_ID, "not"):
                        raise SelectorError(f"found '{l2}', expected: identifier after ','")
                else:
                    raise SelectorError(f"found '{lit2}', expected: ',' or 'end of string'")
            elif tok == _EOS:
                return reqs
            else:
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Requirement:
        op: Operator | None = None
        tok, lit = self.take()
        if tok == "not":
            op = Operator.DOES_NOT_EXIST
            tok, lit = self.take()
        if tok != _ID:
            raise SelectorError(f"found '{lit}', expected: identifier")
        kerrs = is_label_key(lit)
        if kerrs:
            raise SelectorError(_invalid("<nil>", lit, "; ".join(kerrs)))
        key = lit
        t, _ = self.look()
        if t in (_EOS, "comma"):
            return Requirement.new(key, op or Operator.EXISTS, [])
        if op is Operator.DOES_NOT_EXIST:
            return Requirement.new(key, op, [])
        tok, lit = self.take(values=False)
        if tok not in _BINARY_TOKENS:
            raise SelectorError(f"found '{lit}', expected: {', '.join(_BINARY_OPS)}")
        op = _BINARY_TOKENS[tok]
        if op in (Operator.IN, Operator.NOT_IN):
            values = self.set_values()
        else:
            values = self.exact_value()
        return Requirement.new(key, op, sorted(values))

    def set_values(self) -> set[str]:
        tok, lit = self.take()
        if tok != "open":
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.look()
        if tok in (_ID, "comma"):
            values = self.identifiers()
            tok2, _ = self.take()
            if tok2 != "closed":
                raise SelectorError(f"found '{lit}', expected: ')'")
            return values
        if tok == "closed":
            self.take()
            return {""}
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def identifiers(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self.take()
            if tok == _ID:
                values.add(lit)
                tok2, lit2 = self.look()
                if tok2 == "comma":
                    continue
                if tok2 == "closed":
                    return values
                raise SelectorError(f"found '{lit2}', expected: ',' or ')'")
            if tok == "comma":
                if not values:
                    values.add("")
                tok2, _ = self.look()
                if tok2 == "closed":
                    values.add("")
                    return values
                if tok2 == "comma":
                    self.take()
                    values.add("")
            else:
                raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        tok, _ = self.look()
        if tok in (_EOS, "comma"):
            return {""}
        tok, lit = self.take()
        if tok == _ID:
            return {lit}
        raise SelectorError(f"found '{lit}', expected: identifier")


def parse_selector(text: str) -> Selector:
    """``labels.Parse(text)``: the string form (``app=web,tier in (a,b),!x``) to a Selector."""
    reqs = _Parser(_lex(text)).parse()
    return Selector.of(reqs)


# --------------------------------------------------------------------------- LabelSelector


def _field(obj: Any, camel: str, snake: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(camel, obj.get(snake))
    return getattr(obj, snake, getattr(obj, camel, None))


_LS_OPS = MappingProxyType({"In": Operator.IN, "NotIn": Operator.NOT_IN, "Exists": Operator.EXISTS,
                             "DoesNotExist": Operator.DOES_NOT_EXIST})


def selector_from_label_selector(ls: Any) -> Selector:
    """``metav1.LabelSelectorAsSelector``: None -> nothing, empty -> everything.

    ``ls`` is a dict (``matchLabels``/``matchExpressions``, camelCase or snake_case) or any
    object with ``match_labels``/``match_expressions`` attributes; expressions likewise carry
    ``key``, ``operator`` and ``values``. Raises :class:`SelectorError` with Go's message.
    """
    if ls is None:
        return _NOTHING
    if isinstance(ls, str):
        raise TypeError("a LabelSelector is a mapping or an object; parse selector strings with parse_selector")
    labels = _field(ls, "matchLabels", "match_labels") or {}
    exprs = _field(ls, "matchExpressions", "match_expressions") or []
    if not labels and not exprs:
        return _EVERYTHING
    reqs: list[Requirement] = []
    for k in sorted(labels):  # Go walks a map (random order); sorted keeps errors deterministic
        reqs.append(Requirement.new(k, Operator.EQUALS, [labels[k]]))
    for expr in exprs:
        op_name = _field(expr, "operator", "operator")
        op_name = getattr(op_name, "value", op_name)
        op = _LS_OPS.get(op_name) if isinstance(op_name, str) else None
        if op is None:
            raise SelectorError(f"{go_quote(str(op_name if op_name is not None else ''))} is not a valid label selector operator")
        values = _field(expr, "values", "values")
        key = _field(expr, "key", "key") or ""
        reqs.append(Requirement.new(key, op, list(values) if values else None))
    return Selector.of(reqs)


def label_selector_string(ls: Any) -> str:
    """``LabelSelectorAsSelector(ls).String()`` (raises :class:`SelectorError`)."""
    return str(selector_from_label_selector(ls))


def format_label_selector(ls: Any) -> str:
    """``metav1.FormatLabelSelector`` as kubectl describe prints it: ``<none>``/``<error>``."""
    try:
        text = str(selector_from_label_selector(ls))
    except SelectorError:
        return "<error>"
    return text or "<none>"


def selector_from_set(labels: Mapping[str, str] | None) -> Selector:
    """``labels.SelectorFromSet``: ``k=v`` requirements, sorted, not validated."""
    if not labels:
        return _EVERYTHING
    return Selector(tuple(Requirement(k, Operator.EQUALS, (labels[k],)) for k in sorted(labels)))

