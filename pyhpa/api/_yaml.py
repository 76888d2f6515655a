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

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"

# --------------------------------------------------------------------------- reading

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_PLAIN_RESOLVERS = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}
_WILDCARD_RESOLVERS = _PLAIN_RESOLVERS.get(None, [])
# Tag of a plain scalar by its text: most values of a manifest repeat ("True", "Running", "cpu").
_plain_tags: dict[str, str] = {}
_PLAIN_CACHE_MAX = 1 << 16


def _resolve_plain(value: str) -> str:
    tag = _plain_tags.get(value)
    if tag is None:
        tag = _STR
        for candidate, regexp in _PLAIN_RESOLVERS.get(value[:1], []) + _WILDCARD_RESOLVERS:
            if regexp.match(value):
                tag = candidate
                break
        if len(_plain_tags) >= _PLAIN_CACHE_MAX:
            _plain_tags.clear()
        _plain_tags[value] = tag
    return tag


class KubeLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader without the timestamp resolver: Go's YAML-to-JSON keeps times as strings.

    No path resolvers exist, so resolution depends on the scalar alone (what BaseResolver does
    then, without its per-node bookkeeping calls).
    """

    yaml_implicit_resolvers = _PLAIN_RESOLVERS

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            if implicit[0]:
                return _plain_tags.get(value) or _resolve_plain(value)
            return _STR
        return _MAP if kind is MappingNode else _SEQ

    # The composer calls these around every node; with no path resolvers they do nothing.
    # Built-ins taking the same arguments cost a fraction of a Python call.
    descend_resolver = staticmethod(slice)
    ascend_resolver = staticmethod(tuple)


class _Unusual(Exception):
    """A node the fast builder leaves to PyYAML's constructor."""


_SCALAR_TAGS = frozenset({
    "tag:yaml.org,2002:int", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null", "tag:yaml.org,2002:float",
})
_scalar_values: dict[tuple[str, str], Any] = {}


def _scalar(loader: Any, node: Any) -> Any:
    key = (node.tag, node.value)
    try:
        return _scalar_values[key]
    except KeyError:
        pass
    if node.tag not in _SCALAR_TAGS:
        raise _Unusual
    value = loader.yaml_constructors[node.tag](loader, node)
    if isinstance(value, float) and not math.isfinite(value):
        raise _Unusual  # JSON has no such number: the slow path names the field
    if len(_scalar_values) >= _PLAIN_CACHE_MAX:
        _scalar_values.clear()
    _scalar_values[key] = value
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
    """
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


# Plain scalars go-yaml v2 reads as non-strings although PyYAML's resolver says str.
_GO_BOOLS = frozenset({"y", "Y", "n", "N"})
_GO_FLOAT = re.compile(
    r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z"  # 1e3
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?\Z"  # base 60: 1:20
)


def _str(dumper: Any, value: str) -> Any:
    tag = _STR
    if "\n" in value:
        return dumper.represent_scalar(tag, value, style="|")
    implicit = dumper.resolve(yaml.ScalarNode, value, (True, False))
    if implicit != tag or value == "" or value in _GO_BOOLS or _GO_FLOAT.match(value):
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
    if (
        s == "" or s in _GO_BOOLS or _GO_FLOAT.match(s)
        or _resolve_dump(s) != _STR
    ):
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
