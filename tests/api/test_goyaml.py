"""goyaml: YAML read and written as kubectl does (sigs.k8s.io/yaml over go-yaml v2)."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhpa.api import goyaml
from pyhpa.api.loader import LoadError, load_stream


def test_dates_stay_strings_and_go_numbers_are_numbers():
    assert goyaml.load("annotations: {note: 2026-01-01}\n") == {"annotations": {"note": "2026-01-01"}}
    doc = goyaml.load("a: 1e1\nb: 0o17\nc: 2026-01-01T00:00:00Z\nd: 1:20\ne: 2.0\nf: 0.5\ng: y\n")
    assert doc == {"a": 10, "b": 15, "c": "2026-01-01T00:00:00Z", "d": "1:20", "e": 2, "f": 0.5, "g": True}
    # Go's YAML-to-JSON step writes a whole float as a JSON integer: an int, not 10.0.
    assert type(doc["a"]) is int and type(doc["e"]) is int


def test_keys_become_strings_as_in_json():
    doc = goyaml.load("1: one\ntrue: t\n~: n\n1.5: f\n0x1F: h\nY: yes\n'2': q\n")
    assert doc == {"1": "one", "true": True, "null": False, "1.5": "f", "31": "h", "2": "q"}  # Y is true too
    with pytest.raises(goyaml.YAMLError, match="unsupported mapping key"):
        goyaml.load("? [1, 2]\n: x\n")


def test_duplicate_keys_last_one_wins():
    # go-yaml v2's non-strict decoding (what kubectl's YAML-to-JSON uses) keeps the last value.
    assert goyaml.load("a: 1\nb: 2\na: 3\n") == {"a": 3, "b": 2}


def test_tags():
    doc = goyaml.load("a: !!str 1\nb: !!int '7'\nc: !!float '1'\nd: !!bool yes\ne: !!null ''\n"
                      "f: !!binary aGVs\n  bG8=\ng: !custom 1\nh: !!timestamp 2026-01-01\n")
    assert doc == {"a": "1", "b": 7, "c": 1, "d": True, "e": None, "f": "aGVsbG8=", "g": "1", "h": "2026-01-01"}
    with pytest.raises(goyaml.YAMLError, match=r"^<input>: line 1, column 4: a: cannot decode !!str `x` as a !!int$"):
        goyaml.load("a: !!int x\n")


def test_anchors_aliases_and_merge_keys():
    doc = goyaml.load("base: &b {k: 1, j: 2}\nsame: *b\nover:\n  j: 5\n  <<: [*b, {z: 3, k: 9}]\n")
    assert doc == {"base": {"k": 1, "j": 2}, "same": {"k": 1, "j": 2}, "over": {"k": 1, "j": 5, "z": 3}}
    assert doc["same"] is not doc["base"]  # expanded, as JSON has no references
    with pytest.raises(goyaml.YAMLError, match="map merge requires map or sequence of maps"):
        goyaml.load("a:\n  <<: 1\n")


def test_an_alias_bomb_is_refused_fast():
    # Nine levels of nine aliases: 9**9 (387 million) strings if expanded.
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    started = time.perf_counter()
    with pytest.raises(goyaml.YAMLError, match="document contains excessive aliasing"):
        goyaml.load("\n".join(lines) + "\n")
    assert time.perf_counter() - started < 1.0


def test_aliases_below_the_limit_are_expanded():
    # 200 aliases of a small map: a normal use of anchors, far from the ratio limit.
    text = "base: &b {cpu: 500m, memory: 1Gi}\nitems:\n" + "".join(f"- {{n: {i}, r: *b}}\n" for i in range(200))
    doc = goyaml.load(text)
    assert len(doc["items"]) == 200 and doc["items"][199]["r"] == {"cpu": "500m", "memory": "1Gi"}


def test_an_alias_inside_its_own_anchor_is_refused():
    with pytest.raises(goyaml.YAMLError, match=r"a\[0\]: an alias refers to a node that contains it"):
        goyaml.load("a: &r [*r]\n")


def test_numbers_json_cannot_hold_name_the_field_and_line():
    with pytest.raises(goyaml.YAMLError) as info:
        goyaml.load("a:\n  - 1\n  - {b: .inf}\n", source="s.yaml")
    assert str(info.value) == "s.yaml: line 3, column 9: a[1].b: inf is not a valid JSON number"
    assert (info.value.path, info.value.line, info.value.column) == ("a[1].b", 3, 9)
    with pytest.raises(LoadError, match=r"^s\.yaml: document 0: a: nan is not a valid JSON number$"):
        load_stream("a: .nan\n", "s.yaml")


def test_syntax_errors_name_document_line_and_column():
    with pytest.raises(goyaml.YAMLError) as info:
        goyaml.load_all("a: 1\n---\nb: [\n", source="s.yaml")
    exc = info.value
    assert (exc.document, exc.line, exc.column, exc.syntax) == (1, 4, 1, True)
    assert str(exc).startswith("s.yaml: line 4, column 1: ") and "\n" not in str(exc)
    with pytest.raises(LoadError, match=r"^s\.yaml: document 1: line 4: YAML syntax error"):
        load_stream("a: 1\n---\nb: [\n", "s.yaml")
    with pytest.raises(goyaml.YAMLError, match="not UTF-8"):
        goyaml.load(b"a: \xff\n")


def test_load_takes_one_document_and_load_all_every_one():
    assert goyaml.load("") is None
    assert goyaml.load(b"\xef\xbb\xbfa: 1\n") == {"a": 1}
    assert goyaml.load_all("a: 1\n---\n---\n- 2\n") == [{"a": 1}, None, [2]]
    with pytest.raises(goyaml.YAMLError, match="expected one document, found 2"):
        goyaml.load("a: 1\n---\nb: 2\n")


def test_marked_documents_carry_lines():
    (doc,) = goyaml.load_all_marked("a:\n  b: 1\n  c:\n  - x\n  - {d: 2}\nm: &m {k: 1}\nq:\n  <<: *m\n")
    assert doc == {"a": {"b": 1, "c": ["x", {"d": 2}]}, "m": {"k": 1}, "q": {"k": 1}}
    assert isinstance(doc, goyaml.MarkedDict) and isinstance(doc["a"]["c"], goyaml.MarkedList)
    assert doc.line_of("a") == 1 and doc["a"].line_of("c") == 3 and doc["a"]["c"].item_lines == [4, 5]
    assert doc["a"]["c"][1].line == 5 and doc["a"].line_of("missing") == doc["a"].line == 2
    assert doc["q"].line_of("k") == 6  # a merged key points at its source


def test_unique_keys_refuses_a_key_set_twice():
    text = "a: 1\nb:\n  c: 2\n  d: 3\n  c: 4\n"
    assert goyaml.load_all_marked(text) == [{"a": 1, "b": {"c": 4, "d": 3}}]  # kubectl's reading: the last wins
    with pytest.raises(goyaml.YAMLError) as err:
        goyaml.load_all_marked(text, source="x.yaml", unique_keys=True)
    assert (err.value.line, err.value.path, err.value.problem) == (5, "b.c", 'duplicate field "c" (first set on line 3)')
    # a merged key that an explicit key overrides is not a duplicate
    assert goyaml.load_all_marked("m: &m {k: 1}\nq:\n  <<: *m\n  k: 2\n", unique_keys=True)[0]["q"] == {"k": 2}


def test_deep_nesting_is_an_error_not_a_crash():
    with pytest.raises(goyaml.YAMLError):
        goyaml.load("[" * 100_000)


# --------------------------------------------------------------------------- writing


def test_dump_quotes_what_would_read_back_as_another_type():
    text = goyaml.dump({"a": "", "b": "null", "c": "1e3", "d": "y", "e": "a\nb\n", "f": "2026-01-01", "g": "web",
                        "h": "it's: x", "i": [], "j": {}, "k": 1.5, "l": None, "m": True})
    assert text == ('a: ""\nb: "null"\nc: "1e3"\nd: "y"\ne: |\n  a\n  b\nf: "2026-01-01"\ng: web\n'
                    "h: 'it''s: x'\ni: []\nj: {}\nk: 1.5\nl: null\nm: true\n")
    assert goyaml.dump({"b": 1, "a": 2}, sort_keys=True) == "a: 2\nb: 1\n"


def test_dump_of_a_kubectl_like_object_folds_long_text_and_reads_back():
    doc = {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": [
        {"kind": "Event", "message": "the HPA was able to successfully calculate a replica count from cpu resource "
                                     "utilization (percentage of request) " * 3,
         "reason": "x: y", "count": 3, "ratio": 0.25, "empty": [], "flag": True, "none": None,
         "status": "True", "time": "2026-01-01T00:00:00Z", "nested": [[1, "a"], [], {}]}]}
    text = goyaml.dump(doc)
    assert max(len(line) for line in text.splitlines()) <= 90
    assert "  status: \"True\"\n" in text and "  reason: 'x: y'\n" in text
    assert goyaml.load(text) == doc


def test_dump_writes_shared_containers_twice_and_refuses_cycles():
    shared = {"app": "web"}
    assert goyaml.dump({"a": shared, "b": [shared]}) == "a:\n  app: web\nb:\n- app: web\n"
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="self-containing"):
        goyaml.dump(loop)
    with pytest.raises(TypeError, match="cannot write a set as YAML"):
        goyaml.dump({"a": {1, 2}})


def test_dump_of_scalars_and_empty_documents():
    assert goyaml.dump({}) == "{}\n" and goyaml.dump([]) == "[]\n"
    assert goyaml.dump("web") == "web\n" and goyaml.dump(3) == "3\n" and goyaml.dump(None) == "null\n"
    assert goyaml.dump([1.0, 1e16, float("inf"), "x" * 3]) == "- 1.0\n- 1.0e+16\n- .inf\n- xxx\n"


_WORDS = ["a", "the", "cpu", "utilization:", "#tag", "-x", "'q'", '"d"', "yes", "No", "on", "1e3", "0x1F", "1:20",
          "2026-01-01", "2026-01-01T00:00:00Z", "null", "~", "y", "n", ".inf", "-.5", "+1", "010", "0b11", "---",
          "...", "?", ":", "-", "é", "tab\there", "back\\slash", "[x]", "{y}", "&a", "*b", "!c", "|d", ">e", "%f",
          "@g", "`h", "=", "<<", "1_000", "0.5e-3", "True", "FALSE", "OFF", " lead", "trail ", "x\ny", "x" * 130]
_strings = st.one_of(
    st.sampled_from(_WORDS),
    st.lists(st.sampled_from(_WORDS + ["recommendation", "horizontally", "x" * 30]), max_size=25).map(" ".join),
    st.text(st.sampled_from(" :#-?'\"abc01.\\\n\tZé_,[]{}"), max_size=12),
    st.text(max_size=8),
)
_scalars = st.one_of(_strings, st.integers(-(2**63), 2**63 - 1), st.booleans(), st.none(),
                     st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()))
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(_strings, inner, max_size=5)), max_leaves=30)


def _typed(v):
    """A value with its types spelled out (``1 == True == 1.0`` in Python, not in JSON)."""
    if isinstance(v, dict):
        return ("map", sorted((k, _typed(x)) for k, x in v.items()))
    if isinstance(v, list):
        return ("seq", [_typed(x) for x in v])
    return (type(v).__name__, v)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.dictionaries(_strings, _values, max_size=6), st.lists(_values, max_size=5)), st.booleans())
def test_what_dump_writes_load_reads_back(doc, sort_keys):
    text = goyaml.dump(doc, sort_keys=sort_keys)
    assert _typed(goyaml.load(text)) == _typed(doc)
