"""The fast YAML reader and writer give exactly what PyYAML's own machinery gives.

(The reader's reference is PyYAML's composer and constructors with the loader's go-yaml scalar
resolution; what that resolution yields is held to go-yaml v2 in tests/api/test_loader.py.)

Both fast paths in pyhpa.api._yaml hand anything unusual back to PyYAML; these tests compare
them with plain PyYAML (the way the loader and the writer worked before) on generated values
and on hand-picked edge cases, so a shortcut can never change what a user sees.
"""

from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhpa.api import _yaml
from pyhpa.api.loader import LoadError, _jsonish, load_stream

def _convert(doc, index):
    return _jsonish(doc, "", "s.yaml", index)


def reference_load(text: str) -> list:
    """PyYAML's own composer and constructors, with the loader's go-yaml scalar resolution."""
    return [_convert(doc, i) for i, doc in enumerate(yaml.load_all(text, Loader=_yaml.KubeLoader))]


def fast_load(text: str) -> list:
    return [value for _, value in _yaml.load_all(text, _convert)]


def outcome(load, text):
    try:
        return ("ok", load(text))
    except (yaml.YAMLError, LoadError) as exc:
        return (type(exc).__name__, str(exc))
    except RecursionError:
        return ("RecursionError", "")


def same_load(text: str) -> None:
    assert outcome(fast_load, text) == outcome(reference_load, text)


WORDS = ["a", "the", "cpu", "utilization:", "#tag", "-x", "'q'", '"d"', "yes", "No", "on", "1e3", "0x1F", "1:20",
         "2026-01-01", "2026-01-01T00:00:00Z", "null", "~", "y", "n", ".inf", "-.5", "+1", "010", "0b11", "---",
         "...", "?", ":", "-", "é", "tab\there", "back\\slash", "[x]", "{y}", "&a", "*b", "!c", "|d", ">e", "%f",
         "@g", "`h", "=", "<<", "1_000", "0.5e-3", "True", "FALSE", "OFF"]

strings = st.one_of(
    st.sampled_from(WORDS),
    st.lists(st.sampled_from(WORDS + ["recommendation", "horizontally", "x" * 30]), min_size=0, max_size=25).map(" ".join),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map("  ".join),
    st.text(st.sampled_from(" :#-?'\"abc01.\\\n\tZé_,[]{}"), max_size=12),
    st.text(max_size=8),
)
scalars = st.one_of(
    strings, st.integers(), st.booleans(), st.none(),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([1e16, 1e-7, 0.1, -0.0, 2.5e300]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(strings, inner, max_size=5)),
    max_leaves=30,
)
documents = st.one_of(st.dictionaries(strings, values, max_size=6), st.lists(values, max_size=5))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.booleans())
def test_writer_matches_pyyaml(doc, sort_keys):
    assert _yaml.dump(doc, sort_keys=sort_keys) == _yaml._pyyaml_dump(doc, sort_keys=sort_keys)


def test_writer_takes_the_fast_path_for_kubectl_like_objects():
    doc = {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": [
        {"kind": "Event", "message": "the HPA was able to successfully calculate a replica count from cpu resource "
                                     "utilization (percentage of request) " * 3,
         "reason": "x: y", "count": 3, "ratio": 0.25, "empty": [], "flag": True, "none": None,
         "status": "True", "time": "2026-01-01T00:00:00Z", "nested": [[1, "a"], [], {}],
         "quote": "it's: quoted and long enough to fold somewhere past the eightieth column of text"}]}
    fast = _yaml._fast_dump(doc, False)
    assert fast == _yaml._pyyaml_dump(doc)
    assert _yaml._fast_dump(doc, True) == _yaml._pyyaml_dump(doc, sort_keys=True)


def test_writer_gives_up_on_shared_containers_as_pyyaml_writes_anchors():
    shared = {"app": "web"}
    doc = {"a": shared, "b": shared}
    assert "&id001" in _yaml.dump(doc)
    assert _yaml.dump(doc) == _yaml._pyyaml_dump(doc)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.sampled_from([None, False, True]))
def test_reader_matches_pyyaml_on_generated_documents(doc, flow):
    text = yaml.dump(doc, Dumper=yaml.SafeDumper, default_flow_style=flow, allow_unicode=True)
    same_load(text)
    same_load("---\n" + text + "---\n\n---\n" + text)


EDGE_CASES = [
    "a: 2026-01-01T00:00:00Z\nb: 2026-01-01\nc: !!timestamp 2026-01-01\n",
    "a: &x {k: 1}\nb: *x\nc:\n  <<: *x\n  d: 2\n",
    "? [1, 2]\n: x\n",
    "1: one\ntrue: t\n~: n\n1.5: f\n.inf: i\n",
    "a: .nan\n",
    "a: [1, .inf]\n",
    "a: !!binary aGVsbG8=\n",
    "a: !!set {x, y}\n",
    "a: !!omap [{x: 1}]\n",
    "a: !custom 1\n",
    "a: !!str 1\nb: !!int '7'\nc: !!float '1'\nd: !!bool yes\ne: !!null ''\n",
    "a: yes\nb: On\nc: 0x1F\nd: 0o17\ne: 017\nf: 1_000\ng: 1:20\nh: -0\ni: +.5\nj: 6.8523015e+5\n",
    "=: v\n",
    "a: {=: v}\n",
    "a: &r [*r]\n",
    "a: 1\na: 2\n",
    "- 1\n- 2\n",
    "plain\n",
    "kind: List\nitems: [{a: 1}, {b: [x, {c: ~}]}]\n",
    "a: 'quoted: yes'\nb: \"2\"\nc: |\n  block\n  text\nd: >\n  folded\n  text\n",
    "a: [\n",
    "a: 1\n---\nb: [\n",
]


@pytest.mark.parametrize("text", EDGE_CASES)
def test_reader_matches_pyyaml_on_edge_cases(text):
    same_load(text)


def test_reader_falls_back_with_the_same_errors():
    with pytest.raises(LoadError, match=r"^s\.yaml: document 0: a: nan is not a valid JSON number$"):
        load_stream("a: .nan\n", "s.yaml")
    with pytest.raises(LoadError, match=r"^s\.yaml: document 1: line 4: YAML syntax error"):
        load_stream("a: 1\n---\nb: [\n", "s.yaml")
    assert load_stream("a: !!binary aGVsbG8=\n", "s.yaml")[0].raw == {"a": "aGVsbG8="}
    assert load_stream("a: &x {k: 1}\nb:\n  <<: *x\n  d: 2\n", "s.yaml")[0].raw == {"a": {"k": 1}, "b": {"k": 1, "d": 2}}
    assert load_stream("a: 1:20.5\n", "s.yaml")[0].raw["a"] == "1:20.5"  # go-yaml v2 has no base 60
