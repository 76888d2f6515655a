"""YAML the way Kubernetes reads and writes it: sigs.k8s.io/yaml over go-yaml v2.

Why our own rules on top of PyYAML: kubectl and the API server turn YAML into JSON with go-yaml
v2's scalar rules, which differ from PyYAML's YAML 1.1 ones. ``1e3`` is the number 1000 (PyYAML:
a string), ``0o17`` is 15, ``y``/``n`` are booleans, ``2026-01-01`` and ``1:20`` stay strings (no
timestamps, no base 60). The YAML-to-JSON step then makes every key a string, writes a whole
float as a JSON integer (``2.0`` and ``1e1`` read back as the ints 2 and 10, which is why
``maxReplicas: 1e1`` is accepted by kubectl) and refuses NaN and infinities.

Reading: PyYAML's C parser and composer (libyaml) give the node graph; one builder turns it into
JSON-compatible values, optionally with line marks (:class:`MarkedDict`, :class:`MarkedList`) so
callers can say ``file:line: field.path: message``. Choices, each as the current loader does:

* duplicate keys: the last one wins (go-yaml v2's non-strict decoding, which kubectl uses), or,
  reading with ``unique_keys``, an error naming the key and the line it was first set on (what a
  strict decoder says: upstream's ``fieldValidation=Strict`` rejects ``duplicate field "x"``);
* merge keys (``<<``): explicit keys win over merged ones, earlier merged maps over later ones;
* a ``null`` key becomes ``"null"``; a mapping or sequence key is an error;
* ``!!binary`` values become their canonical base64 text; unknown tags read as strings.

Aliases are expanded (JSON has no references), so an "alias bomb" (nested aliases doubling at
each level) would grow exponentially. Like go-yaml's decoder, the builder counts the nodes it
builds and those it builds through an alias, and refuses a document where more than 100 nodes
come through aliases and they make up more than the allowed share of all nodes: 99 % up to
400,000 nodes, falling linearly to 10 % at 4,000,000 (upstream's ``allowedAliasRatio``). A bomb
is refused after about a thousand nodes. An alias inside the node it refers to is an error.

Writing, in the style of ``kubectl -o yaml``: go-yaml picks a scalar style per string. A string
that would read back as something else (``"True"``, ``"800"``, ``""``, ``"null"``) is
double-quoted, one with a newline is a literal block, everything else is plain when YAML allows
it and single-quoted otherwise. libyaml's emitter (through PyYAML) does the layout; a container
that appears twice is written twice (JSON has no references, go-yaml writes no anchors).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from types import MappingProxyType
from typing import Any, Mapping

import yaml
from yaml.events import (
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

__all__ = ["YAMLError", "MarkedDict", "MarkedList", "load", "load_all", "load_all_marked", "dump", "go_scalar"]

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"
_BINARY = "tag:yaml.org,2002:binary"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class YAMLError(ValueError):
    """YAML that Kubernetes would not read; ``str()`` is one line naming the line and column.

    ``line``/``column`` are 1-based (None when unknown), ``document`` the 0-based index of the
    document in the stream, ``path`` the field path (``spec.metrics[0]``) for a value JSON cannot
    hold, ``syntax`` whether the parser rejected the text itself.
    """

    def __init__(self, problem: str, *, source: str = "<input>", line: int | None = None,
                 column: int | None = None, document: int = 0, path: str | None = None,
                 syntax: bool = False) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        self.column = column
        self.document = document
        self.path = path
        self.syntax = syntax
        where = source
        if line is not None:
            where += f": line {line}" + (f", column {column}" if column is not None else "")
        super().__init__(f"{where}: {path}: {problem}" if path else f"{where}: {problem}")


class MarkedDict(dict):
    """A mapping that remembers its own 1-based line and the line of each key."""

    line: int = 0
    key_lines: dict

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


class MarkedList(list):
    """A sequence that remembers its own 1-based line and the line of each item."""

    line: int = 0
    item_lines: list


# --------------------------------------------------------------------------- scalars

# go-yaml v2's table of whole-scalar spellings (YAML 1.1 plus y/n).
_GO_WORDS: Mapping[str, tuple[str, Any]] = MappingProxyType({
    **{w: (_BOOL, True) for w in ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")},
    **{w: (_BOOL, False) for w in ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")},
    **{w: (_NULL, None) for w in ("", "~", "null", "Null", "NULL")},
    **{w: (_FLOAT, math.nan) for w in (".nan", ".NaN", ".NAN")},
    **{w: (_FLOAT, math.inf) for w in (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF")},
    **{w: (_FLOAT, -math.inf) for w in ("-.inf", "-.Inf", "-.INF")},
    "<<": (_MERGE, "<<"),
})
_GO_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_GO_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?\Z")  # what ParseFloat takes after a dot
_GO_INT = re.compile(r"([-+]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)\Z")
_INT64 = 1 << 63
_NUMBER_START = frozenset("0123456789+-")
_MAYBE_NUMBER = _NUMBER_START | {"."}  # first characters of a plain scalar that may not be a string


def _go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)``, then ``ParseUint`` for what only fits unsigned."""
    m = _GO_INT.match(text)
    if m is None:
        return None
    sign, digits = m.groups()
    if digits[:2] in ("0x", "0X", "0b", "0B", "0o", "0O"):
        value = int(digits[2:], {"x": 16, "b": 2, "o": 8}[digits[1].lower()])
    elif digits[:1] == "0" and len(digits) > 1:
        value = int(digits[1:], 8)
    else:
        value = int(digits)
    if sign == "-":
        return -value if value <= _INT64 else None
    return value if value < 2 * _INT64 and (value < _INT64 or not sign) else None


def _go_float(text: str) -> float | int | None:
    """``strconv.ParseFloat(text, 64)`` then JSON: a whole number below 1e21 is written as a
    JSON integer, so it comes back as an int; out of range is Go's ErrRange (None: a string)."""
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


def go_scalar(text: str) -> tuple[str, Any]:
    """(tag, value) of a plain scalar as go-yaml v2 resolves it and JSON then holds it."""
    hit = _GO_WORDS.get(text)
    if hit is not None:
        return hit
    first = text[:1]
    if first == ".":
        f = _go_float(text) if _GO_DOT_FLOAT.match(text) else None
        if f is not None:
            return (_FLOAT, f)
    elif first in _NUMBER_START:
        plain = text.replace("_", "")
        i = _go_int(plain)
        if i is not None:
            return (_INT, i)
        if _GO_STYLE_FLOAT.match(plain):
            f = _go_float(plain)
            if f is not None:
                return (_FLOAT, f)
    return (_STR, text)


def _float_key(value: float) -> str:
    """A float map key as text: YAML's spelling for the non-finite ones."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    return repr(value)


# --------------------------------------------------------------------------- reading

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# The tags the composer gives untagged scalars. Each holds a space, so no document can spell it
# as an explicit tag, and the builder tells them apart by identity.
_STRING = "string scalar"  # quoted, or plain and nothing but a string: the text is the value
_PLAIN = "plain scalar"  # plain and maybe not a string: go_scalar decides


class _Composer(_BaseLoader):  # type: ignore[misc,valid-type]
    """PyYAML's loader used only to compose nodes.

    The composer asks ``resolve`` for the tag of every untagged node: it is where the one cheap
    question about a plain scalar is asked (could it be anything but a string?), so the builder
    takes most scalars as they are without a call of its own.
    """

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            if implicit[0] and (value in _GO_WORDS or value[:1] in _MAYBE_NUMBER):
                return _PLAIN
            return _STRING
        return _MAP if kind is MappingNode else _SEQ

    # The composer calls these around every node; with no path resolvers they do nothing, and
    # built-ins taking the same arguments cost a fraction of a Python call.
    descend_resolver = staticmethod(slice)
    ascend_resolver = staticmethod(tuple)


class _Problem(Exception):
    """A value JSON cannot hold; frames add their key on the way out to make the path."""

    def __init__(self, node: Any, message: str) -> None:
        super().__init__(message)
        self.node = node
        self.message = message
        self.keys: list[Any] = []


def _path(keys: list[Any]) -> str:
    out = ""
    for k in reversed(keys):
        out += f"[{k}]" if type(k) is int else (f"{out and '.'}{k}")
    return out


_NO_KEY = object()  # a problem before the key was known: the path stops at the mapping
_ALIAS_MIN_NODES = 1000
_ALIAS_MIN_ALIASED = 100


def _allowed_alias_ratio(nodes: int) -> float:
    """The share of nodes that may come through aliases (go-yaml v2's rule, see module doc)."""
    if nodes <= 400_000:
        return 0.99
    if nodes >= 4_000_000:
        return 0.10
    return 0.99 - 0.89 * (nodes - 400_000) / 3_600_000


class _Builder:
    """Turns one document's node graph into JSON-compatible values (marked ones on request).

    A scalar tagged :data:`_STRING` is its own value, taken inline in the loops; everything
    else goes through :meth:`value`. Aliases are counted only while one is being expanded: a
    collection met a second time is an alias (the composer hands out the node it refers to).
    """

    def __init__(self, marked: bool, unique_keys: bool = False) -> None:
        self.marked = marked
        self.unique_keys = unique_keys
        self.nodes = 1  # nodes built (the root counted here, the others by their parent)
        self.aliased = 0  # ... of which through an alias
        self.alias_depth = 0
        self.seen: set[Any] = set()  # collection nodes built so far: met again = an alias
        self.open: list[Any] = []  # collection nodes being built (an alias to one is a cycle)

    # A _Problem ends the document, so the bookkeeping below needs no try/finally.

    def value(self, node: Any) -> Any:
        cls = node.__class__
        if cls is ScalarNode:
            return self.scalar(node)
        if node in self.seen:
            return self.alias(node)
        self.seen.add(node)
        self.open.append(node)
        out = self.mapping(node) if cls is MappingNode else self.sequence(node)
        self.open.pop()
        return out

    def alias(self, node: Any) -> Any:
        if node in self.open:
            raise _Problem(node, "an alias refers to a node that contains it")
        self.alias_depth += 1
        self.nodes += 1
        self.count_aliased(node, 1)
        self.open.append(node)
        out = self.mapping(node) if node.__class__ is MappingNode else self.sequence(node)
        self.open.pop()
        self.alias_depth -= 1
        return out

    def count_aliased(self, node: Any, n: int) -> None:
        self.aliased += n
        if (self.aliased > _ALIAS_MIN_ALIASED and self.nodes > _ALIAS_MIN_NODES
                and self.aliased / self.nodes > _allowed_alias_ratio(self.nodes)):
            raise _Problem(node, "document contains excessive aliasing")

    def scalar(self, node: Any) -> Any:
        tag = node.tag
        if tag is _STRING:
            return node.value
        value = go_scalar(node.value)[1] if tag is _PLAIN else self.tagged(node)
        if value.__class__ is float and not math.isfinite(value):
            raise _Problem(node, f"{value} is not a valid JSON number")
        return value

    def tagged(self, node: Any) -> Any:
        """A scalar with an explicit tag, as go-yaml v2 decodes it into an interface{}."""
        tag, text = node.tag, node.value
        if tag in (_INT, _FLOAT, _BOOL, _NULL):
            got, value = go_scalar(text)
            if got == tag or (tag == _FLOAT and got == _INT):
                return value
            short = got.rsplit(":", 1)[-1]
            raise _Problem(node, f"cannot decode !!{short} `{text}` as a !!{tag.rsplit(':', 1)[-1]}")
        if tag == _BINARY:
            try:
                return base64.b64encode(base64.b64decode("".join(text.split()), validate=True)).decode()
            except (binascii.Error, ValueError):
                raise _Problem(node, "!!binary value contains invalid base64 data") from None
        return text  # !!str, !!timestamp, !!merge, unknown tags: the text, as go-yaml leaves it

    def key(self, node: Any) -> str:
        """A mapping key that is not a plain string, as the text JSON keys it by."""
        if node.__class__ is not ScalarNode:
            raise _Problem(node, "unsupported mapping key: a mapping or sequence")
        value = go_scalar(node.value)[1] if node.tag is _PLAIN else self.scalar(node)
        cls = value.__class__
        if cls is str:
            return value
        if cls is bool:
            return "true" if value else "false"
        if value is None:
            return "null"
        if cls is float:
            return _float_key(value)
        return str(value)

    def mapping(self, node: Any) -> dict:
        pairs = node.value
        self.nodes += 2 * len(pairs)
        if self.alias_depth:
            self.count_aliased(node, 2 * len(pairs))
        marked = self.marked
        unique = self.unique_keys
        out: dict = {}
        lines: dict = {}
        merged: list[Any] = []
        key: Any = _NO_KEY
        try:
            for knode, vnode in pairs:
                if knode.tag is _STRING:
                    key = knode.value
                else:
                    key = _NO_KEY
                    tag = knode.tag
                    if tag is _PLAIN and knode.value == "<<" or tag == _MERGE:
                        merged.append(vnode)
                        continue
                    key = self.key(knode)
                if unique and key in out:
                    first = f" (first set on line {lines[key]})" if key in lines else ""
                    raise _Problem(knode, f'duplicate field "{key}"{first}')
                tag = vnode.tag
                if tag is _STRING:
                    out[key] = vnode.value
                elif tag is _PLAIN:
                    out[key] = self.scalar(vnode)
                else:
                    out[key] = self.value(vnode)
                if marked:
                    lines[key] = knode.start_mark.line + 1
            if merged:
                key = "<<"
                out = self.merge(out, lines, merged)
        except _Problem as problem:
            if key is not _NO_KEY:
                problem.keys.append(key)
            raise
        if marked:
            marked_out = MarkedDict(out)
            marked_out.line = node.start_mark.line + 1
            marked_out.key_lines = lines
            return marked_out
        return out

    def merge(self, explicit: dict, lines: dict, values: list[Any]) -> dict:
        """``<<: *a`` / ``<<: [*a, *b]``: merged keys first; explicit keys win over merged
        ones, earlier sources over later ones (what PyYAML's loader did before)."""
        out: dict = {}
        for v in values:
            for item in v.value if v.__class__ is SequenceNode else [v]:
                if item.__class__ is not MappingNode:
                    raise _Problem(item, "map merge requires map or sequence of maps as the value")
                got = self.value(item)
                for k, x in got.items():
                    if k not in out:
                        out[k] = x
                        if self.marked and k not in lines:
                            lines[k] = got.line_of(k)
        out.update(explicit)
        return out

    def sequence(self, node: Any) -> list:
        items = node.value
        self.nodes += len(items)
        if self.alias_depth:
            self.count_aliased(node, len(items))
        out: list = []
        try:
            for item in items:
                out.append(item.value if item.tag is _STRING else self.value(item))
        except _Problem as problem:
            problem.keys.append(len(out))
            raise
        if self.marked:
            marked_out = MarkedList(out)
            marked_out.line = node.start_mark.line + 1
            marked_out.item_lines = [item.start_mark.line + 1 for item in items]
            return marked_out
        return out


def _text(data: str | bytes, source: str) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise YAMLError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", source=source) from None


def _parser_error(exc: yaml.YAMLError, text: str, source: str, document: int) -> YAMLError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        line, column = mark.line + 1, mark.column + 1
    else:  # a reader error (a character YAML does not allow) knows only its position
        position = getattr(exc, "position", None)
        before = text[:position] if isinstance(position, int) else ""
        line, column = (before.count("\n") + 1, len(before) - before.rfind("\n")) if before else (None, None)
    problem = getattr(exc, "problem", None) or getattr(exc, "reason", None) or str(exc)
    context = getattr(exc, "context", None)
    detail = f"{context}, {problem}" if context else problem
    return YAMLError(detail, source=source, line=line, column=column, document=document, syntax=True)


def _documents(data: str | bytes, source: str, marked: bool, unique_keys: bool = False) -> list[Any]:
    text = _text(data, source)
    docs: list[Any] = []
    composer = _Composer(text)
    try:
        while composer.check_node():
            node = composer.get_node()
            docs.append(_Builder(marked, unique_keys).value(node))
    except yaml.YAMLError as exc:
        raise _parser_error(exc, text, source, len(docs)) from None
    except _Problem as problem:
        mark = problem.node.start_mark
        raise YAMLError(problem.message, source=source, line=mark.line + 1, column=mark.column + 1,
                        document=len(docs), path=_path(problem.keys) or None) from None
    except RecursionError:
        raise YAMLError("document nested too deeply", source=source, document=len(docs)) from None
    finally:
        composer.dispose()
    return docs


def load_all(text: str | bytes, *, source: str = "<input>") -> list[Any]:
    """Every document of a stream as JSON-compatible values (``None`` for an empty one).

    Raises :class:`YAMLError`.
    """
    return _documents(text, source, False)


def load(text: str | bytes, *, source: str = "<input>") -> Any:
    """The one document of ``text`` (``None`` when empty); more than one is an error."""
    docs = _documents(text, source, False)
    if len(docs) > 1:
        raise YAMLError(f"expected one document, found {len(docs)}", source=source, document=1)
    return docs[0] if docs else None


def load_all_marked(text: str | bytes, *, source: str = "<input>", unique_keys: bool = False) -> list[Any]:
    """:func:`load_all` with every mapping a :class:`MarkedDict` and every sequence a
    :class:`MarkedList`, so errors found later can name the line of a field. With
    ``unique_keys`` a key set twice in one mapping is an error (see the module doc)."""
    return _documents(text, source, True, unique_keys)


# --------------------------------------------------------------------------- writing
#
# The data is turned straight into the emitter's events, with the scalar styles and implicit
# flags PyYAML's representer and serializer would choose (its output is unchanged), without
# their per-node Python work.

_Emitter = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_DUMP_RESOLVERS = _Emitter.yaml_implicit_resolvers
_STR_IMPLICIT = (True, True)  # a string: no tag, whatever the style
_TYPED_IMPLICIT = (True, False)  # a plain int/bool/null/float that reads back as itself


def _yaml11_tag(value: str) -> str:
    """What a YAML 1.1 reader (PyYAML) would read a plain scalar as: timestamps included."""
    for tag, regexp in _DUMP_RESOLVERS.get(value[:1], []) + _DUMP_RESOLVERS.get(None, []):
        if regexp.match(value):
            return tag
    return _STR


# First characters of the plain scalars that go-yaml or a YAML 1.1 reader may read as something
# other than a string (any other string needs no look-up).
_ASK_FIRST = frozenset(_DUMP_RESOLVERS) | _MAYBE_NUMBER


def _string_style(value: str) -> str | None:
    if "\n" in value:
        return "|"
    # Quoted when plain would read back as something else, for go-yaml (``y``, ``1e3``,
    # ``0o17``) or for a YAML 1.1 reader (``2026-01-01``, base 60 ``1:20``); None lets the
    # emitter write it plain, or single-quoted where plain is not allowed.
    if (value[:1] in _ASK_FIRST or value in _GO_WORDS) and (
            go_scalar(value)[0] != _STR or _yaml11_tag(value) != _STR):
        return '"'
    return None


def _float_text(value: float) -> str:
    if value != value:
        return ".nan"
    if value in (math.inf, -math.inf):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value).lower()
    return text.replace("e", ".0e", 1) if "." not in text and "e" in text else text


def _scalar_event(value: Any) -> ScalarEvent:
    if isinstance(value, str):
        return ScalarEvent(None, _STR, _STR_IMPLICIT, value, style=_string_style(value))
    if value is None:
        return ScalarEvent(None, _NULL, _TYPED_IMPLICIT, "null")
    if isinstance(value, bool):
        return ScalarEvent(None, _BOOL, _TYPED_IMPLICIT, "true" if value else "false")
    if isinstance(value, int):
        return ScalarEvent(None, _INT, _TYPED_IMPLICIT, str(value))
    if isinstance(value, float):
        text = _float_text(value)
        return ScalarEvent(None, _FLOAT, (_yaml11_tag(text) == _FLOAT, False), text)
    raise TypeError(f"cannot write a {type(value).__name__} as YAML")


# Collection events carry nothing but their kind: the same objects serve every collection.
_MAP_START = MappingStartEvent(None, _MAP, True, flow_style=False)
_MAP_END = MappingEndEvent()
_SEQ_START = SequenceStartEvent(None, _SEQ, True, flow_style=False)
_SEQ_END = SequenceEndEvent()


class _Events:
    """The event list of one document. A string's event is made once per dump and reused for
    each occurrence: keys and many values repeat in every item of a List."""

    def __init__(self, sort_keys: bool) -> None:
        self.sort_keys = sort_keys
        self.out: list[Any] = [StreamStartEvent(), DocumentStartEvent(explicit=False)]
        self.strings: dict[str, ScalarEvent] = {}

    def string(self, value: str) -> ScalarEvent:
        event = self.strings.get(value)
        if event is None:
            event = self.strings[value] = ScalarEvent(None, _STR, _STR_IMPLICIT, value, style=_string_style(value))
        return event

    def add(self, value: Any) -> None:
        out = self.out
        if value.__class__ is str:
            out.append(self.string(value))
        elif isinstance(value, dict):
            out.append(_MAP_START)
            items = value.items()
            if self.sort_keys:
                try:
                    items = sorted(items)  # type: ignore[assignment]
                except TypeError:
                    pass  # keys of different types: written in their order
            for k, v in items:
                out.append(self.string(k) if k.__class__ is str else _scalar_event(k))
                if v.__class__ is str:
                    out.append(self.string(v))
                else:
                    self.add(v)
            out.append(_MAP_END)
        elif isinstance(value, (list, tuple)):
            out.append(_SEQ_START)
            for v in value:
                self.add(v)
            out.append(_SEQ_END)
        else:
            out.append(_scalar_event(value))


def dump(data: Any, *, sort_keys: bool = False, width: int = 80) -> str:
    """Block-style YAML of JSON-like ``data`` (see the module docstring for the quoting)."""
    events = _Events(sort_keys)
    try:
        events.add(data)
    except RecursionError:
        raise ValueError("cannot write a self-containing value as YAML") from None
    events.out += [DocumentEndEvent(explicit=False), StreamEndEvent()]
    return yaml.emit(events.out, Dumper=_Emitter, width=width, allow_unicode=True)
