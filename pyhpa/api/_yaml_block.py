"""A reader for the plain block YAML that kubectl and PyYAML write, without PyYAML.

Why: reading a large snapshot spends most of its time in PyYAML itself (libyaml's events,
then a Python node object and a resolver call per scalar), not in what we do with the values.
Manifests written by ``kubectl -o yaml``, ``yaml.dump`` or pyhpa use a small part of YAML:
block mappings and sequences, ``key: value`` lines, plain or simply quoted one-line scalars,
``{}``/``[]``, ``---`` between documents. This module reads exactly that part line by line.

It answers ``None`` at the first thing outside that part (comments, tabs, anchors, tags, flow
collections, block scalars, multi-line or escaped scalars, keys that are not plain strings,
non-ASCII text, odd indentation...), and the caller then reads the whole stream with PyYAML,
so errors and unusual documents behave exactly as before. Where it answers, the values are
those of PyYAML's composer with go-yaml scalar resolution (:func:`pyhpa.api._yaml.go_scalar`);
differential tests hold it to that.
"""

from __future__ import annotations

import math
import re
from typing import Any

_STR = "tag:yaml.org,2002:str"

# Characters outside printable ASCII (tabs, CR, control characters, non-ASCII) and comment
# marks: any of them anywhere and PyYAML reads the stream.
_OUTSIDE = re.compile(r"[^\n -\"$-~]")
# `key:` or `key: value` (key: a plain word that cannot be an indicator or a YAML marker).
_ENTRY = re.compile(r"([A-Za-z0-9_/][A-Za-z0-9_./-]{0,127}):(?: (.*))?\Z")
# A plain one-line scalar that PyYAML scans as exactly this text: no leading indicator, no
# ": " inside, no trailing ":" or space (a " #" cannot occur: '#' is refused above).
_INNER = r"A-Za-z0-9_./+=()~@,;%$<>^'\"!&*?|\-"
_PLAIN = re.compile(rf"(?:[A-Za-z0-9_/.+(~]|-(?=[^ ]))[{_INNER} ]*(?::[{_INNER}][{_INNER} ]*)*\Z")
_SINGLE = re.compile(r"'([^']*)'\Z")
_DOUBLE = re.compile(r'"([^"\\]*)"\Z')


class _Outside(Exception):
    """Text outside the block subset: PyYAML reads the stream instead."""


def _resolver() -> Any:
    from pyhpa.api._yaml import go_scalar  # late: _yaml imports this module

    return go_scalar


_scalar_cache: dict[str, tuple[Any]] = {}
_key_ok: dict[str, bool] = {}
_CACHE_MAX = 1 << 16


def _scalar(text: str) -> Any:
    """The value of a scalar written after ``key: `` or ``- `` (not ``{}``/``[]``, see _value)."""
    hit = _scalar_cache.get(text)
    if hit is not None:
        return hit[0]
    first = text[0]
    if first == "'":
        m = _SINGLE.match(text)
        if m is None:
            raise _Outside
        value: Any = m.group(1)
    elif first == '"':
        m = _DOUBLE.match(text)
        if m is None:
            raise _Outside
        value = m.group(1)
    else:
        if _PLAIN.match(text) is None or text[-1] == " ":
            raise _Outside
        tag, value = _resolver()(text)
        if tag != _STR and type(value) is float and not math.isfinite(value):
            raise _Outside  # PyYAML's path names the field of a number JSON lacks
        if tag == "tag:yaml.org,2002:merge":
            raise _Outside
    if len(_scalar_cache) >= _CACHE_MAX:
        _scalar_cache.clear()
    _scalar_cache[text] = (value,)
    return value


def _key(text: str) -> str:
    ok = _key_ok.get(text)
    if ok is None:
        ok = _resolver()(text)[0] == _STR  # `1:`, `true:`, `null:`, `<<:` are not plain string keys
        if len(_key_ok) >= _CACHE_MAX:
            _key_ok.clear()
        _key_ok[text] = ok
    if not ok:
        raise _Outside
    return text


# Line kinds. A line `- X` (X a key line or another item) is an _OPEN item followed by X
# two columns in: YAML reads both spellings the same way.
_KEY, _KEY_OPEN, _ITEM, _OPEN, _SEP = range(5)
_EMPTY_MAP, _EMPTY_LIST = object(), object()  # `{}`/`[]`: a fresh container each time


def _tokens_of(line: str) -> tuple:
    """The tokens of one line: ((indent, kind, key, value), ...); raises _Outside."""
    content = line.lstrip(" ")
    if not content:
        return ()
    indent = len(line) - len(content)
    if indent == 0 and (content[:3] == "---" or content[:3] == "..." or content[0] == "%"):
        if content != "---":
            raise _Outside  # `--- value`, `...`, a directive
        return ((0, _SEP, None, None),)
    out = []
    while content[:2] == "- ":
        out.append((indent, _OPEN, None, None))
        content = content[2:]
        indent += 2
        if content[:1] == " " or not content:
            raise _Outside
    if content == "-":
        out.append((indent, _OPEN, None, None))
        return tuple(out)
    m = _ENTRY.match(content)
    if m is not None:
        key = _key(m.group(1))
        value = m.group(2)
        if value is None:
            out.append((indent, _KEY_OPEN, key, None))
        elif value:
            out.append((indent, _KEY, key, _value(value)))
        else:
            raise _Outside  # `key: ` with a trailing space
    elif out:  # `- scalar`
        indent, _, _, _ = out.pop()
        out.append((indent, _ITEM, None, _value(content)))
    else:
        raise _Outside  # a bare scalar line: a scalar document or a continuation
    return tuple(out)


def _value(text: str) -> Any:
    if text == "{}":
        return _EMPTY_MAP
    if text == "[]":
        return _EMPTY_LIST
    return _scalar(text)


_line_cache: dict[str, tuple] = {}


def _fresh(value: Any) -> Any:
    if value is _EMPTY_MAP:
        return {}
    if value is _EMPTY_LIST:
        return []
    return value


class _Doc:
    """One document's tokens and a cursor: a recursive descent over block collections."""

    __slots__ = ("toks", "pos", "n")

    def __init__(self, toks: list[tuple]) -> None:
        self.toks = toks
        self.pos = 0
        self.n = len(toks)

    def child(self, indent: int, seq_same_level: bool) -> Any:
        """What follows a ``key:`` or ``-`` with nothing after it on its line."""
        if self.pos < self.n:
            at, kind, _, _ = self.toks[self.pos]
            if at > indent:
                return self.sequence(at) if kind == _OPEN or kind == _ITEM else self.mapping(at)
            if seq_same_level and at == indent and (kind == _OPEN or kind == _ITEM):
                return self.sequence(indent)
        return None  # an empty value is null

    def mapping(self, indent: int) -> dict:
        out: dict = {}
        toks, n = self.toks, self.n
        while self.pos < n:
            at, kind, key, value = toks[self.pos]
            if at != indent:
                if at < indent:
                    break
                raise _Outside  # a continuation line or bad indentation
            if kind == _KEY:
                self.pos += 1
                out[key] = value if value.__class__ is not object else _fresh(value)
            elif kind == _KEY_OPEN:
                self.pos += 1
                out[key] = self.child(indent, True)
            else:
                break  # `- item` at the key's indent: the parent's sequence
        return out

    def sequence(self, indent: int) -> list:
        out: list = []
        toks, n = self.toks, self.n
        while self.pos < n:
            at, kind, _, value = toks[self.pos]
            if at != indent:
                if at < indent:
                    break
                raise _Outside
            if kind == _ITEM:
                self.pos += 1
                out.append(value if value.__class__ is not object else _fresh(value))
            elif kind == _OPEN:
                self.pos += 1
                out.append(self.child(indent, False))
            else:
                break  # back to the parent mapping's keys
        return out


def _document(toks: list[tuple]) -> Any:
    if not toks:
        return None
    doc = _Doc(toks)
    value = doc.child(-1, False)
    if doc.pos != doc.n:
        raise _Outside  # lines left over: bad indentation
    return value


def read_documents(text: str) -> list[Any] | None:
    """Every document of ``text`` (``None`` for an empty one), or None if the text is outside
    the block subset (then PyYAML must read it)."""
    if _OUTSIDE.search(text) is not None:
        return None
    cache = _line_cache  # lines repeat a lot across the objects of a snapshot
    docs: list[Any] = []
    toks: list[tuple] = []
    explicit = False  # whether the current document began with `---`
    try:
        for line in text.split("\n"):
            got = cache.get(line)
            if got is None:
                got = _tokens_of(line)
                if len(cache) < _CACHE_MAX:
                    cache[line] = got
            if len(got) == 1:
                tok = got[0]
                if tok[1] == _SEP:
                    if explicit or toks:
                        docs.append(_document(toks))
                    toks = []
                    explicit = True
                else:
                    toks.append(tok)
            elif got:
                toks.extend(got)
        if explicit or toks:
            docs.append(_document(toks))
    except (_Outside, RecursionError):
        return None
    return docs
