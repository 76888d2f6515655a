"""Manifest loading: streams, Lists, errors naming file/document/line/field, load_hpa."""

from __future__ import annotations

import io
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhpa.api.features import FeatureGates
from pyhpa.api.loader import LoadError, load_files, load_hpa, load_stream

from .conftest import CORPUS

HPA = """apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: %s}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: %s
"""


def test_multi_document_indexes_count_empty_documents():
    text = HPA % ("a", 3) + "---\n---\n# only a comment\n---\n" + HPA % ("b", 3)
    docs = load_stream(text, "hpa.yaml")
    assert [(d.index, d.raw["metadata"]["name"]) for d in docs] == [(0, "a"), (3, "b")]
    assert all(d.source == "hpa.yaml" for d in docs)


def test_lists_are_flattened_keeping_the_document_index():
    docs = load_files([str(CORPUS / "v2-list.yaml")])
    assert [(d.index, d.raw["metadata"]["name"]) for d in docs] == [(0, "a"), (0, "b")]
    text = '{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscalerList", "items": [{"kind": "HorizontalPodAutoscaler", "apiVersion": "autoscaling/v2", "metadata": {"name": "j"}}]}'
    assert [d.raw["metadata"]["name"] for d in load_stream(text, "x.json")] == ["j"]


def test_json_and_yaml_scalars_like_kubectl():
    docs = load_stream("a: 2026-01-01T00:00:00Z\nb: 1\n2: x\ntrue: y\n", "s.yaml")
    assert docs[0].raw == {"a": "2026-01-01T00:00:00Z", "b": 1, "2": "x", "true": True}  # go-yaml v2: y is true


def test_yaml_syntax_error_names_file_document_and_line():
    with pytest.raises(LoadError) as info:
        load_stream(HPA % ("a", 3) + "---\nkind: [a,\nb: 1\n", "hpa.yaml")
    # lines count from the top of the file
    assert str(info.value).startswith("hpa.yaml: document 1: line 10: YAML syntax error: ")
    assert info.value.index == 1 and info.value.line == 10


def test_non_object_document():
    with pytest.raises(LoadError, match=r"^s\.yaml: document 0: expected an object with apiVersion and kind, got array$"):
        load_stream("- 1\n- 2\n", "s.yaml")
    with pytest.raises(LoadError, match=r"^s\.yaml: document 0: items\[1\]: expected an object, got int$"):
        load_stream("kind: List\nitems: [{a: 1}, 2]\n", "s.yaml")


def test_load_hpa_reports_validation_errors_with_document():
    docs = load_stream(HPA % ("a", 3) + "---\n---\n" + HPA % ("b", 0), "hpa.yaml")
    assert load_hpa(docs[0]).metadata.namespace == "default"
    with pytest.raises(LoadError) as info:
        load_hpa(docs[1])
    assert str(info.value) == (
        "hpa.yaml: document 2: spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`; "
        "spec.maxReplicas: Required value"
    )
    assert info.value.field == "spec.maxReplicas" and len(info.value.errors) == 2


def test_load_hpa_decode_error_names_field():
    doc = load_stream(HPA % ("a", '"three"'), "hpa.yaml")[0]
    with pytest.raises(LoadError, match=r"^hpa\.yaml: document 0: spec\.maxReplicas: expected int, got str$"):
        load_hpa(doc)


def test_load_hpa_v1_and_gates():
    doc = load_stream(
        "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: v}\n"
        "spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: v}, minReplicas: 0, maxReplicas: 2}\n", "v1.yaml")[0]
    with pytest.raises(LoadError, match="Forbidden: must specify at least one Object or External metric"):
        load_hpa(doc)
    with pytest.raises(LoadError, match="must be greater than or equal to 1"):
        load_hpa(doc, FeatureGates(scale_to_zero=False))


def test_every_corpus_manifest_loads():
    docs = load_files([str(CORPUS)])
    assert len(docs) >= 30
    for d in docs:
        load_hpa(d)


def test_missing_file_and_stdin(monkeypatch):
    with pytest.raises(LoadError, match=r"^nope\.yaml: no such file or directory$"):
        load_files(["nope.yaml"])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((HPA % ("s", 2)).encode())))
    docs = load_files(["-"])
    assert docs[0].source == "<stdin>" and docs[0].raw["metadata"]["name"] == "s"


def test_bad_utf8():
    with pytest.raises(LoadError, match="not UTF-8"):
        load_stream(b"a: \xff\n", "b.yaml")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("abc:-[]{}\n #'\"0123456789.,&*!|>%@`")) | st.characters(), max_size=120))
def test_random_text_only_raises_load_error(text):
    try:
        docs = load_stream(text, "r.yaml")
    except LoadError:
        return
    for d in docs:
        try:
            load_hpa(d)
        except LoadError:
            pass


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([p.read_text() for p in sorted(CORPUS.iterdir())]), st.data())
def test_mutated_corpus_only_raises_load_error(text, data):
    lines = text.splitlines()
    i = data.draw(st.integers(0, len(lines) - 1))
    junk = data.draw(st.sampled_from(["", "  x: 1", "- 3", "maxReplicas: -1", "  averageValue: abc", "value: 0", "  type: Foo", ": :", "\t"]))
    lines[i] = junk if data.draw(st.booleans()) else lines[i] + junk
    try:
        docs = load_stream("\n".join(lines), "m.yaml")
        for d in docs:
            try:
                load_hpa(d)
            except LoadError:
                pass
    except LoadError:
        pass


# What go-yaml v2 (through sigs.k8s.io/yaml, as kubectl and the API server read YAML) makes of
# plain scalars, where PyYAML's YAML 1.1 rules differ: exponents without a dot are numbers,
# Go's 0o/leading-zero/0b ints, y/n booleans, no base 60, and out-of-range floats stay strings.
@pytest.mark.parametrize("text,value", [
    ("1e3", 1000), ("5e-1", 0.5), ("1e16", 10**16), ("1e21", 1e21), ("2.0", 2), ("-3.", -3), (".5", 0.5),
    ("0o17", 15), ("017", 15), ("0b101", 5), ("-0b11", -3), ("0x1F", 31), ("1_000", 1000), ("+5", 5),
    ("09", 9), ("9223372036854775808", 2**63), ("y", True), ("N", False), ("off", False), ("~", None),
    ("1:20", "1:20"), ("1e400", "1e400"), ("0x", "0x"), ("2026-01-01", "2026-01-01"), ("nan", "nan"),
    (".5_0", ".5_0"), ("1.5", 1.5), ("0O", "0O"), ("0o", "0o"), ("0b", "0b"), ("-0x", "-0x"),
])
def test_plain_scalars_read_as_go_yaml_does(text, value):
    got = load_stream(f"a: {text}\n", "s.yaml")[0].raw["a"]
    assert got == value and type(got) is type(value), (got, value)


def test_yaml_numbers_reach_quantities_and_ints_as_kubectl_sends_them():
    text = HPA % ("web", "2.0") + (
        "  metrics:\n"
        "  - {type: External, external: {metric: {name: q}, target: {type: Value, value: 1e3}}}\n"
        "  - {type: External, external: {metric: {name: q}, target: {type: AverageValue, averageValue: 5e-1}}}\n"
        "  - {type: External, external: {metric: {name: q}, target: {type: Value, value: 1e16}}}\n")
    hpa = load_hpa(load_stream(text, "q.yaml")[0])
    assert hpa.spec.max_replicas == 2
    assert [str(m.external.target.value or m.external.target.average_value) for m in hpa.spec.metrics] == ["1k", "500m", "10P"]
    with pytest.raises(LoadError, match=r"spec\.maxReplicas"):
        load_hpa(load_stream(HPA % ("web", "2.5"), "q.yaml")[0])


@settings(max_examples=500, deadline=None)
@given(st.from_regex(r"[-+]?(0[xXbBoO]?)?[0-9a-fA-F_.eE+-]{0,6}", fullmatch=True) | st.text(max_size=6))
def test_go_scalar_resolution_never_raises(text):
    from pyhpa.api.goyaml import go_scalar

    tag, value = go_scalar(text)
    assert tag.startswith("tag:yaml.org,2002:")
    assert tag != "tag:yaml.org,2002:str" or value == text
