"""The block YAML reader against PyYAML: where it answers, it must answer what PyYAML (with
go-yaml scalar resolution) answers, and it must step aside for anything PyYAML rejects."""

from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhpa.api import _yaml
from pyhpa.api._yaml_block import read_documents
from pyhpa.api.codec import dumps_yaml


def _typed(v):
    """A value with its types spelled out (``1 == True == 1.0`` in Python, not in YAML)."""
    if isinstance(v, dict):
        return ("map", [(_typed(k), _typed(x)) for k, x in v.items()])
    if isinstance(v, list):
        return ("seq", [_typed(x) for x in v])
    if isinstance(v, float) and math.isnan(v):
        return ("float", "nan")
    return (type(v).__name__, v)


def _pyyaml(text: str):
    try:
        return ("ok", [_typed(v) for _, v in _yaml.load_all_pyyaml(text, lambda doc, at: doc)])
    except yaml.YAMLError:
        return ("error",)
    except ValueError:  # e.g. a non-finite float the loader's converter refuses
        return ("error",)


def _check(text: str) -> bool:
    """Compare on ``text``; True if the block reader answered."""
    fast = read_documents(text)
    if fast is None:
        return False
    assert _pyyaml(text) == ("ok", [_typed(v) for v in fast]), text
    return True


_tricky = st.sampled_from([
    "web", "True", "true", "y", "n", "no", "on", "null", "~", "", " ", "1", "-1", "+1", "0o17", "0x1f", "017", "1e3", "1.5",
    ".5", "1_000", ".inf", "-.inf", ".nan", "2026-01-01T00:00:00Z", "2026-01-01", "1:20", "a: b", "a:b", "a #b", "#x",
    "'q'", '"d"', "- x", "-x", "-", "---", "...", "? x", "@x", "%x", "`x", "a  b", " lead", "trail ", "x\ny", "ü", "a'b",
    'a"b', "a\\b", "{}", "[]", "{a}", "[a]", "a,b", "*a", "&a", "!x", "|", ">", "<<", "=", "500m", "1Gi", "a" * 90 + " b",
    "x" * 130,
])
_simple = st.sampled_from(["web", "500m", "Running", "2026-01-01T00:00:00Z", "True", "a b", "x:y", "app-1", "10", "1.5"])
_scalars = st.one_of(_simple, _simple, _simple, _tricky, st.integers(-10**20, 10**20), st.floats(), st.booleans(),
                     st.none(), st.text(max_size=6))
_keys = st.one_of(_tricky, *[st.sampled_from(["apiVersion", "kind", "metadata", "name", "spec", "a.b/c", "_x"])] * 6)
_trees = st.recursive(_scalars, lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(_keys, c, max_size=4)),
                      max_leaves=20)
_docs = st.lists(st.one_of(st.dictionaries(_keys, _trees, min_size=1, max_size=4), st.lists(_trees, min_size=1, max_size=3),
                           _trees), min_size=0, max_size=3)


def _dump(docs, how: int) -> str:
    if how == 0:
        return "---\n".join(dumps_yaml(d) if d not in ({}, []) else "{}\n" for d in docs)
    dumper = [yaml.CSafeDumper, yaml.SafeDumper][how % 2]
    return yaml.dump_all(docs, Dumper=dumper, default_flow_style=False, sort_keys=how > 2,
                         explicit_start=how == 3, allow_unicode=how == 4, indent=4 if how == 5 else None)


_SETTINGS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(_docs, st.integers(0, 5))
def test_block_reader_equals_pyyaml_on_written_yaml(docs, how):
    _check(_dump(docs, how))


_edits = st.sampled_from([" ", "  ", "#", "-", "- ", ":", ": ", "'", '"', "\t", "\n", "\n  ", "---\n", "\n---", "...",
                          "? ", "&a ", "*a", "!!str ", "|", ">", "{", "[", ",", "%", "\\", "\r", "x", "1", "~", "\n-"])


@_SETTINGS
@given(_docs, st.integers(0, 5), st.lists(st.tuples(st.floats(0, 1), _edits), min_size=1, max_size=3))
def test_block_reader_steps_aside_for_what_it_does_not_read(docs, how, edits):
    text = _dump(docs, how)
    for where, edit in edits:
        i = int(where * len(text))
        text = text[:i] + edit + text[i:]
    _check(text)


@pytest.mark.parametrize("text", [
    "", "\n", "---\n", "---\n---\n", "a: 1\n---\n", "---\na: 1\n", "a: 1\n---\nb: 2\n", "a:\nb: 1\n", "a:\n- 1\n- 2\nb: 3\n",
    "a:\n  - 1\n", "- a: 1\n  b: 2\n- c\n", "- - a\n  - b\n", "-\n- a\n", "- -\n", "a:\n  b:\n    c: {}\n  d: []\n",
    "- ---\n", "  a: 1\n  b: 2\n", "a: 'x'\nb: \"y\"\n", "a: x:y\n", "a: (x)\n", "a: x y  z\n", "key: 2.0\n",
])
def test_block_reader_answers_and_agrees_on_plain_shapes(text):
    assert _check(text)


@pytest.mark.parametrize("text", [
    "a: 1\n b: 2\n", "a: b\n  c\n", "a: 1 # c\n", "a:\n\tb: 1\n", "a: &x 1\n", "a: !!str 1\n", "a: |\n  x\n", "a: {b: 1}\n",
    "1: a\n", "y: a\n", "'a': 1\n", "a: 'it''s'\n", 'a: "x\\ty"\n', "a\n", "--- a\n", "...\n", "%YAML 1.1\n---\na: 1\n",
    "a: .inf\n", "<<: {}\n", "a: -\n", "a: b:\n", "- a\n  - b\n", "a: 1\nb\n", "a: ü\n",
])
def test_block_reader_steps_aside(text):
    assert read_documents(text) is None
    _pyyaml(text)  # and PyYAML decides, error or not


def test_a_snapshot_like_stream_is_read_by_the_block_reader():
    docs = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p-{i}", "labels": {"app": "a"}},
             "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z",
                        "conditions": [{"type": "Ready", "status": "True"}]}} for i in range(3)]
    for how in range(5):  # (indent=4 writes `-   key`, which it leaves to PyYAML)
        assert _check(_dump(docs, how))


_plain_keys = st.sampled_from(["apiVersion", "kind", "metadata", "name", "spec", "example.com/x", "_x", "a-b", "Z9"])
_plain_scalars = st.one_of(_simple, st.integers(-10**20, 10**20), st.booleans(), st.none(),
                           st.sampled_from(["", "x y z", "(x)", "a=b", "1:20", "~x", "+1", "0o17", "1e3", ".5", "-x", "a'b"]))
_plain_trees = st.recursive(_plain_scalars, lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(_plain_keys, c, max_size=4)),
                            max_leaves=30)


@_SETTINGS
@given(st.lists(st.dictionaries(_plain_keys, _plain_trees, min_size=1, max_size=5), max_size=3), st.integers(0, 4))
def test_block_reader_answers_manifest_like_yaml(docs, how):
    # Not only never wrong: it must actually read what kubectl and PyYAML write for manifests.
    assert _check(_dump(docs, how))


@_SETTINGS
@given(st.lists(st.dictionaries(_plain_keys, _plain_trees, min_size=1, max_size=5), min_size=1, max_size=3), st.integers(0, 4),
       st.lists(st.tuples(st.floats(0, 1), _edits), min_size=1, max_size=2))
def test_block_reader_steps_aside_for_edited_manifests(docs, how, edits):
    # Edits of YAML it reads: each must either still read as PyYAML reads it, or be left to PyYAML.
    text = _dump(docs, how)
    for where, edit in edits:
        i = int(where * len(text))
        text = text[:i] + edit + text[i:]
    _check(text)
