"""YAML the way Kubernetes reads and writes it (sigs.k8s.io/yaml over go-yaml v2).

Reading: PyYAML's safe loader (the C parser when libyaml is there) minus the timestamp
resolver, since Go's YAML-to-JSON step keeps times as strings. Plain scalars resolve through a
cache and documents are built straight from the composed nodes; anything unusual (explicit
tags, merge keys, non-string keys, non-finite floats, binary) falls back to PyYAML's own
constructor so the result never differs from it.

Writing, in the style of ``kubectl -o yaml``: go-yaml picks a scalar style per string: a string
that would read back as something else (``"True"``, ``"800"``, ``""``, ``"null"``) is
double-quoted, one with a newline is a literal block, everything else is plain when YAML allows
it and single-quoted otherwise. PyYAML's emitter (the C one when libyaml is there) does the
layout; a representer chooses the styles.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterator

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from pyhpa.api._yaml_block import read_documents

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"

# --------------------------------------------------------------------------- reading

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"

# go-yaml v2's table of whole-scalar spellings (YAML 1.1 plus y/n); no timestamps: Go's
# YAML-to-JSON keeps them as strings, and no base-60 numbers: v2 reads "1:20" as a string.
_GO_WORDS: dict[str, tuple[str, Any]] = {
    **{w: (_BOOL, True) for w in ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")},
    **{w: (_BOOL, False) for w in ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")},
    **{w: (_NULL, None) for w in ("", "~", "null", "Null", "NULL")},
    **{w: (_FLOAT, math.nan) for w in (".nan", ".NaN", ".NAN")},
    **{w: (_FLOAT, math.inf) for w in (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF")},
    **{w: (_FLOAT, -math.inf) for w in ("-.inf", "-.Inf", "-.INF")},
    "<<": (_MERGE, "<<"),
}
_GO_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_GO_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?\Z")  # what ParseFloat takes after a dot
_GO_INT = re.compile(r"([-+]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)\Z")
_INT64 = 1 << 63


def _go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)``, then ``ParseUint`` for what only fits unsigned."""
    m = _GO_INT.match(text)
    if m is None:
        return None
    sign, digits = m.groups()
    if digits[:2] in ("0x", "0X", "0b", "0B", "0o", "0O"):
        base = {"x": 16, "b": 2, "o": 8}[digits[1].lower()]
        value = int(digits[2:], base)
    elif digits[:1] == "0" and len(digits) > 1:
        value = int(digits[1:], 8)
    else:
        value = int(digits)
    if sign == "-":
        return -value if value <= _INT64 else None
    return value if value < 2 * _INT64 and (value < _INT64 or not sign) else None


def _go_float(text: str) -> float | int | None:
    """``strconv.ParseFloat(text, 64)`` for the spellings go-yaml hands it; a value out of
    range is Go's ErrRange (the scalar then stays a string).

    A whole number below 1e21 comes back as an int: Go's YAML-to-JSON step writes it as a JSON
    integer (``2.0`` -> ``2``), which is why ``maxReplicas: 2.0`` is accepted by kubectl.
    """
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


def go_scalar(text: str) -> tuple[str, Any]:
    """(tag, value) of a plain scalar as go-yaml v2 resolves it, so ``1e3`` is the number 1000
    (Kubernetes stores ``1k``) and ``0o17`` is 15, where PyYAML's YAML 1.1 rules say strings."""
    hit = _go_scalars.get(text)
    if hit is not None:
        return hit
    hit = _GO_WORDS.get(text)
    if hit is None:
        hit = (_STR, text)
        first = text[:1]
        if first == ".":
            f = _go_float(text) if _GO_DOT_FLOAT.match(text) else None
            if f is not None:
                hit = (_FLOAT, f)
        elif first.isdigit() and first.isascii() or first in "+-":
            plain = text.replace("_", "")
            i = _go_int(plain)
            if i is not None:
                hit = (_INT, i)
            elif _GO_STYLE_FLOAT.match(plain):
                f = _go_float(plain)
                if f is not None:
                    hit = (_FLOAT, f)
    if len(_go_scalars) >= _PLAIN_CACHE_MAX:
        _go_scalars.clear()
        _go_tags.clear()
    _go_scalars[text] = hit
    _go_tags[text] = hit[0]
    return hit


# Most values of a manifest repeat ("True", "Running", "cpu"): resolution is cached by text.
_go_scalars: dict[str, tuple[str, Any]] = {}
_go_tags: dict[str, str] = {}  # the tags alone: what the composer asks for every scalar
_PLAIN_CACHE_MAX = 1 << 16


class KubeLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """PyYAML's safe loader (the C parser when there) resolving plain scalars as go-yaml v2.

    No path resolvers exist, so resolution depends on the scalar alone (what BaseResolver does
    then, without its per-node bookkeeping calls). The scalar constructors read Go's spellings.
    """

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            if implicit[0]:
                return _go_tags.get(value) or go_scalar(value)[0]
            return _STR
        return _MAP if kind is MappingNode else _SEQ

    # The composer calls these around every node; with no path resolvers they do nothing.
    # Built-ins taking the same arguments cost a fraction of a Python call.
    descend_resolver = staticmethod(slice)
    ascend_resolver = staticmethod(tuple)

    def _go_typed(self, node: Any, tag: str) -> Any:
        got_tag, value = go_scalar(self.construct_scalar(node))
        if got_tag == tag:
            return value
        if tag == _FLOAT and got_tag == _INT:  # !!float 1: JSON's number 1 all the same
            return value
        raise yaml.constructor.ConstructorError(
            None, None, f"cannot read {node.value!r} as {tag.rsplit(':', 1)[-1]}", node.start_mark)


for _tag in (_INT, _FLOAT, _BOOL, _NULL):
    KubeLoader.add_constructor(_tag, lambda loader, node, _tag=_tag: loader._go_typed(node, _tag))


class _Unusual(Exception):
    """A node the fast builder leaves to PyYAML's constructor."""


def _scalar(loader: Any, node: Any) -> Any:
    hit = _go_scalars.get(node.value) or go_scalar(node.value)
    if hit[0] is not node.tag and hit[0] != node.tag:
        raise _Unusual  # explicitly tagged (or an unknown tag): PyYAML's constructor decides
    value = hit[1]
    if value.__class__ is float and not math.isfinite(value):
        raise _Unusual  # a number JSON has not: the slow path names the field
    return value


def _build(loader: Any, node: Any) -> Any:
    """The JSON-compatible value of a node, exactly as construct + Go's YAML-to-JSON would give."""
    cls = node.__class__
    if cls is ScalarNode:
        return node.value if node.tag == _STR else _scalar(loader, node)
    if cls is MappingNode:
        if node.tag != _MAP:
            raise _Unusual
        out = {}
        for knode, vnode in node.value:
            if knode.__class__ is not ScalarNode or knode.tag != _STR:
                raise _Unusual  # merge keys, `=`, non-string or complex keys
            if vnode.__class__ is ScalarNode and vnode.tag == _STR:
                out[knode.value] = vnode.value
            else:
                out[knode.value] = _build(loader, vnode)
        return out
    if cls is SequenceNode and node.tag == _SEQ:
        return [_build(loader, item) for item in node.value]
    raise _Unusual


def load_all(text: str, convert: Any) -> Iterator[tuple[int, Any]]:
    """``(index, value)`` of every document; ``convert(value, index)`` turns what PyYAML's own
    constructor gives for an unusual document into the JSON-compatible value (or raises).

    Empty documents yield ``None``. PyYAML errors (``yaml.YAMLError``) propagate.
    Plain block YAML (what kubectl and PyYAML write) is read without PyYAML, see
    :mod:`pyhpa.api._yaml_block`; anything else goes through PyYAML as a whole.
    """
    docs = read_documents(text)
    if docs is not None:
        yield from enumerate(docs)
        return
    yield from load_all_pyyaml(text, convert)


def load_all_pyyaml(text: str, convert: Any) -> Iterator[tuple[int, Any]]:
    """:func:`load_all` through PyYAML alone (what the block reader must equal)."""
    loader = KubeLoader(text)
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            try:
                value = _build(loader, node)
            except (_Unusual, RecursionError):
                value = convert(loader.construct_document(node), index)
            yield index, value
            index += 1
    finally:
        loader.dispose()


# --------------------------------------------------------------------------- writing

_Base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _KubeDumper(_Base):  # type: ignore[misc,valid-type]
    pass


def _reads_back_as_other(s: str) -> bool:
    """Whether a plain ``s`` would read back as something other than a string: for go-yaml
    (``y``, ``1e3``, ``0o17``) or for a YAML 1.1 reader (``2026-01-01``, base 60 ``1:20``)."""
    return go_scalar(s)[0] != _STR or _resolve_dump(s) != _STR


def _str(dumper: Any, value: str) -> Any:
    tag = _STR
    if "\n" in value:
        return dumper.represent_scalar(tag, value, style="|")
    if _reads_back_as_other(value):
        return dumper.represent_scalar(tag, value, style='"')
    return dumper.represent_scalar(tag, value)


_KubeDumper.add_representer(str, _str)


# --------------------------------------------------------------------------- fast block writer
#
# kubectl-style output is block YAML of plain JSON values, so most of PyYAML's machinery
# (representer, serializer, two resolver calls per scalar) can be skipped. The writer below
# reproduces libyaml's layout for that case: two-space indents, sequences inside mappings not
# indented, ``{}``/``[]`` for empty containers, plain scalars unless a plain scalar would read
# back differently (then single quotes), folding of long plain and single-quoted values at a
# single space once the column passes 80. Anything it does not cover (line breaks, non-ASCII
# or control characters, double-quoted strings with spaces or escapes, long keys, shared
# containers that PyYAML writes as anchors, types other than JSON's) makes it give up, and
# PyYAML writes the whole document: the output is the same either way.

_WIDTH = 80
_MAX_SIMPLE_KEY = 128
_PRINTABLE_ASCII = re.compile(r"[ -~]*\Z")
_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")


class _GiveUp(Exception):
    """Input the fast writer does not cover; PyYAML writes the document instead."""


def _plain_allowed(s: str) -> bool:
    """libyaml's ``block_plain_allowed`` for a non-empty single-line printable ASCII string."""
    if s[0] == " " or s[-1] == " " or s[0] in _FIRST_INDICATORS or s[:3] in ("---", "..."):
        return False
    if s[0] in "?:-" and (len(s) == 1 or s[1] == " "):
        return False
    if s[-1] == ":" or ": " in s or " #" in s:
        return False
    return True


# Per string: (rendered text, whether it contains a space and so may fold, quoting style).
_styles: dict[str, tuple[str, bool, str]] = {}


def _style(s: str) -> tuple[str, bool, str]:
    got = _styles.get(s)
    if got is not None:
        return got
    if not _PRINTABLE_ASCII.match(s):
        raise _GiveUp  # line breaks (literal blocks), escapes, non-ASCII
    if _reads_back_as_other(s):
        if " " in s or '"' in s or "\\" in s:
            raise _GiveUp  # double-quoted with folding or escapes
        got = ('"' + s + '"', False, '"')
    elif _plain_allowed(s):
        got = (s, " " in s, "")
    else:
        got = ("'" + s.replace("'", "''") + "'", " " in s, "'")
    if len(_styles) >= _PLAIN_CACHE_MAX:
        _styles.clear()
    _styles[s] = got
    return got


_DUMP_RESOLVERS = _KubeDumper.yaml_implicit_resolvers


def _resolve_dump(value: str) -> str:
    """What a plain scalar would read back as (the dumper's resolver: timestamps included)."""
    for tag, regexp in _DUMP_RESOLVERS.get(value[:1], []) + _DUMP_RESOLVERS.get(None, []):
        if regexp.match(value):
            return tag
    return _STR


_FLOAT_TAG = "tag:yaml.org,2002:float"


def _other_scalar(v: Any) -> str:
    t = type(v)
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if v is None:
        return "null"
    if t is float:
        if v != v:
            return ".nan"
        if v in (math.inf, -math.inf):
            return ".inf" if v > 0 else "-.inf"
        text = repr(v).lower()
        if "." not in text and "e" in text:
            text = text.replace("e", ".0e", 1)
        if _resolve_dump(text) != _FLOAT_TAG:
            raise _GiveUp  # PyYAML would add an explicit tag
        return text
    raise _GiveUp


def _fold(text: str, column: int, indent: int, quoted: bool) -> str:
    """libyaml's line folding: at a single space (not the first or last character of a quoted
    scalar), once the column has passed the width, break and continue at ``indent``."""
    out = []
    pos = 0
    last = len(text) - 1
    for run in re.finditer(" +", text):
        a, b = run.span()
        if b - a != 1 or column + (a - pos) <= _WIDTH:
            continue
        if indent >= column + (a - pos):
            raise _GiveUp  # libyaml would pad instead of breaking
        if quoted and (a == 1 or a == last - 1):  # first/last character of the value itself
            continue
        out.append(text[pos:a])
        out.append("\n" + " " * indent)
        column = indent
        pos = b
    out.append(text[pos:])
    return "".join(out)


def _value(v: Any, column: int, indent: int) -> str:
    """A scalar after ``key:`` or ``-`` (which end at ``column``), with its separating space."""
    if type(v) is str:
        text, spaced, quote = _style(v)
        if spaced and column + 1 + len(text) > _WIDTH:
            return " " + _fold(text, column + 1, indent, quote == "'")
        return " " + text
    return " " + _other_scalar(v)


class _Writer:
    def __init__(self, sort_keys: bool) -> None:
        self.lines: list[str] = []
        self.sort_keys = sort_keys
        self.seen: set[int] = set()

    def container(self, v: Any) -> None:
        if id(v) in self.seen:
            raise _GiveUp  # PyYAML writes an anchor and an alias
        self.seen.add(id(v))

    def mapping(self, m: dict, indent: int, prefix: str) -> None:
        lines = self.lines
        pad = " " * indent
        keys = m.keys()
        for k in keys:
            if type(k) is not str:
                raise _GiveUp
        if self.sort_keys:
            keys = sorted(keys)  # type: ignore[assignment]
        lead = prefix
        for k in keys:
            v = m[k]
            text, _, _ = _style(k)
            if len(k) > _MAX_SIMPLE_KEY:
                raise _GiveUp  # a complex key (`? `)
            head = lead + text + ":"
            lead = pad
            t = type(v)
            if t is dict:
                self.container(v)
                if v:
                    lines.append(head)
                    self.mapping(v, indent + 2, pad + "  ")
                else:
                    lines.append(head + " {}")
            elif t is list:
                self.container(v)
                if v:
                    lines.append(head)
                    self.sequence(v, indent, pad)
                else:
                    lines.append(head + " []")
            else:
                lines.append(head + _value(v, len(head), indent + 2))

    def sequence(self, seq: list, indent: int, prefix: str) -> None:
        lines = self.lines
        pad = " " * indent
        lead = prefix + "-"
        for v in seq:
            t = type(v)
            if t is dict:
                self.container(v)
                if v:
                    self.mapping(v, indent + 2, lead + " ")
                else:
                    lines.append(lead + " {}")
            elif t is list:
                self.container(v)
                if v:
                    self.sequence(v, indent + 2, lead + " ")
                else:
                    lines.append(lead + " []")
            else:
                lines.append(lead + _value(v, len(lead), indent + 2))
            lead = pad + "-"


def _fast_dump(data: Any, sort_keys: bool) -> str:
    w = _Writer(sort_keys)
    t = type(data)
    if t is dict and data:
        w.container(data)
        w.mapping(data, 0, "")
    elif t is list and data:
        w.container(data)
        w.sequence(data, 0, "")
    else:
        raise _GiveUp  # empty or scalar documents: rare, and PyYAML adds document markers
    w.lines.append("")
    return "\n".join(w.lines)


def _pyyaml_dump(data: Any, *, sort_keys: bool = False) -> str:
    return yaml.dump(
        data,
        Dumper=_KubeDumper,
        default_flow_style=False,
        sort_keys=sort_keys,
        allow_unicode=True,
        width=_WIDTH,
    )


def dump(data: Any, *, sort_keys: bool = False) -> str:
    try:
        return _fast_dump(data, sort_keys)
    except (_GiveUp, RecursionError):
        return _pyyaml_dump(data, sort_keys=sort_keys)
