"""Codec: wire <-> struct round trips over the corpus, Go decoding rules, output formats."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone

import msgspec
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhpa.api import types as T
from pyhpa.api.codec import DecodeError, dumps_json, dumps_yaml, from_wire, has_unknown_fields, loads_json, to_wire
from pyhpa.api.defaults import default_hpa
from pyhpa.api.features import FeatureGates
from pyhpa.api.quantity import Quantity
from pyhpa.api.field_errors import InvalidError
from pyhpa.api.validation import validate_hpa

from .conftest import corpus_documents

DOCS = corpus_documents()


def _type_of(raw: dict) -> type:
    return T.HorizontalPodAutoscalerV1 if raw["apiVersion"] == "autoscaling/v1" else T.HorizontalPodAutoscaler


def _canon(value, key=None, parent=None):
    """The corpus as Kubernetes would echo it: quantities canonical."""
    if isinstance(value, dict):
        return {k: _canon(v, k, value) for k, v in value.items()}
    if isinstance(value, list):
        return [_canon(v) for v in value]
    quantity_key = key in ("averageValue", "tolerance") or (key == "value" and "periodSeconds" not in parent)
    if quantity_key and isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(Quantity.parse(value))
    return value


def test_corpus_is_large_and_varied():
    assert len(DOCS) >= 30
    kinds = {m["type"] for d in DOCS for m in d.raw.get("spec", {}).get("metrics", [])}
    assert kinds == {"Resource", "Pods", "Object", "External", "ContainerResource"}
    assert any(d.raw["apiVersion"] == "autoscaling/v1" for d in DOCS)
    assert any("managedFields" in d.raw["metadata"] for d in DOCS)
    assert any("status" in d.raw for d in DOCS)


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: f"{d.source.rsplit('/', 1)[-1]}#{d.index}:{d.raw['metadata']['name']}")
def test_corpus_round_trips_unchanged(doc):
    raw = copy.deepcopy(doc.raw)
    obj = from_wire(raw, _type_of(raw))
    out = to_wire(obj)
    expected = _canon(doc.raw)
    if "status" not in expected:  # Go always writes status (an empty one)
        expected["status"] = out["status"]
    assert out == expected
    assert raw == doc.raw, "from_wire must not mutate its input"
    # and through both text formats
    assert msgspec.json.decode(dumps_json(obj)) == out
    assert yaml.safe_load(dumps_yaml(obj)) == out
    assert to_wire(from_wire(out, _type_of(raw))) == out


def test_noncanonical_quantities_are_canonicalised():
    doc = next(d for d in DOCS if d.raw["metadata"]["name"] == "sloppy")
    out = to_wire(from_wire(doc.raw, T.HorizontalPodAutoscaler))
    metrics = out["spec"]["metrics"]
    assert metrics[0]["resource"]["target"]["averageValue"] == "1Gi"
    assert metrics[1]["pods"]["target"]["averageValue"] == "500m"
    assert metrics[2]["external"]["target"]["value"] == "1500"
    assert out["spec"]["behavior"]["scaleUp"]["tolerance"] == "50m"


def test_a_codec_decodes_only_the_wire_types_it_was_built_for():
    from pyhpa.api.codec import WireCodec

    codec = WireCodec(T.MetricTarget)
    target = codec.from_wire({"type": "AverageValue", "averageValue": "1500m", "extra": 1}, T.MetricTarget)
    assert target.average_value == Quantity.parse("1.5")
    assert codec.to_wire(target) == {"type": "AverageValue", "averageValue": "1500m", "extra": 1}
    with pytest.raises(TypeError, match="HorizontalPodAutoscaler"):
        codec.from_wire({}, T.HorizontalPodAutoscaler)
    with pytest.raises(TypeError):
        codec.plans[T.HorizontalPodAutoscaler] = codec.plans[T.MetricTarget]  # type: ignore[index]


def test_unknown_fields_survive_and_plain_objects_have_none():
    doc = next(d for d in DOCS if d.raw["metadata"]["name"] == "future")
    obj = from_wire(doc.raw, T.HorizontalPodAutoscaler)
    assert has_unknown_fields(obj)
    out = to_wire(obj)
    assert out["extraTopLevel"] is True
    assert out["metadata"]["futureMetaField"] == "kept"
    assert out["spec"]["futureSpecField"] == ["a", "b"]
    assert out["spec"]["metrics"][0]["futureSourceField"] == {"nested": True}
    assert out["spec"]["metrics"][0]["resource"]["target"]["futureTargetField"] == 7
    assert out["spec"]["behavior"]["scaleUp"]["policies"][0]["jitter"] == "5s"
    assert out["status"]["futureStatusField"] == 3
    plain = from_wire(next(d for d in DOCS if d.raw["metadata"]["name"] == "php-apache" and d.raw["apiVersion"] == "autoscaling/v2").raw, T.HorizontalPodAutoscaler)
    assert not has_unknown_fields(plain)


def test_unknown_fields_follow_a_moved_status():
    raw = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {},
           "spec": {"scaleTargetRef": {"kind": "D", "name": "x"}, "maxReplicas": 1},
           "status": {"desiredReplicas": 1, "currentMetrics": None, "extra": 1}}
    old = from_wire(raw, T.HorizontalPodAutoscaler)
    new = T.new_hpa(old.spec)
    new.status = old.status
    assert to_wire(new)["status"]["extra"] == 1


def _hpa(**spec):
    base = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3}
    base.update(spec)
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"}, "spec": base}


def test_missing_and_null_required_fields_become_go_zero_values():
    obj = from_wire({"spec": {"scaleTargetRef": None}, "status": None}, T.HorizontalPodAutoscaler)
    assert obj.api_version == "" and obj.kind == ""
    assert obj.spec.max_replicas == 0
    assert obj.spec.scale_target_ref == T.CrossVersionObjectReference(kind="", name="")
    assert obj.status.desired_replicas == 0 and obj.status.current_metrics is None
    out = to_wire(obj)
    assert out["spec"] == {"scaleTargetRef": {"kind": "", "name": ""}, "maxReplicas": 0}
    assert out["status"] == {"desiredReplicas": 0, "currentMetrics": None}
    assert out["metadata"] == {}


@pytest.mark.parametrize(
    "spec, path, detail",
    [
        ({"maxReplicas": "3"}, "spec.maxReplicas", "expected int, got str"),
        ({"maxReplicas": 3.0}, "spec.maxReplicas", "expected int, got float"),
        ({"maxReplicas": True}, "spec.maxReplicas", "expected int, got bool"),
        ({"minReplicas": [1]}, "spec.minReplicas", "expected int, got array"),
        ({"scaleTargetRef": "web"}, "spec.scaleTargetRef", "expected object, got str"),
        ({"scaleTargetRef": {"kind": 1, "name": "x"}}, "spec.scaleTargetRef.kind", "expected str, got int"),
        ({"metrics": {"type": "Resource"}}, "spec.metrics", "expected array, got object"),
        (
            {"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": "80"}}}]},
            "spec.metrics[0].resource.target.averageUtilization",
            "expected int, got str",
        ),
        (
            {"metrics": [{}, {"type": "Pods", "pods": {"metric": {"name": "x"}, "target": {"type": "AverageValue", "averageValue": True}}}]},
            "spec.metrics[1].pods.target.averageValue",
            "expected quantity (string or number), got bool",
        ),
        (
            {"behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": "4", "periodSeconds": 15}]}}},
            "spec.behavior.scaleUp.policies[0].value",
            "expected int, got str",
        ),
    ],
)
def test_wrong_types_name_the_field(spec, path, detail):
    with pytest.raises(DecodeError) as info:
        from_wire(_hpa(**spec), T.HorizontalPodAutoscaler)
    assert info.value.path == path
    assert str(info.value) == f"{path}: {detail}"


def test_bad_quantity_text_is_apimachinery_message():
    raw = _hpa(behavior={"scaleUp": {"tolerance": "5%"}})
    with pytest.raises(DecodeError) as info:
        from_wire(raw, T.HorizontalPodAutoscaler)
    assert info.value.path == "spec.behavior.scaleUp.tolerance"
    assert "quantities must match the regular expression" in str(info.value)


def test_labels_wrong_value_type_path_uses_map_key():
    raw = _hpa()
    raw["metadata"]["labels"] = {"app": 5}
    with pytest.raises(DecodeError, match=r"^metadata\.labels\[app\]: expected str, got int$"):
        from_wire(raw, T.HorizontalPodAutoscaler)


def test_top_level_must_be_an_object():
    with pytest.raises(DecodeError, match="^expected object, got array$"):
        from_wire([], T.HorizontalPodAutoscaler)


def test_omitempty_zero_values_are_dropped_like_go():
    raw = _hpa(metrics=[])
    raw["metadata"].update(labels={}, annotations={}, namespace="", generation=0, finalizers=[])
    raw["spec"]["scaleTargetRef"]["apiVersion"] = ""
    raw["status"] = {"desiredReplicas": 0, "currentMetrics": [], "currentReplicas": 0,
                     "conditions": [{"type": "AbleToScale", "status": "True", "lastTransitionTime": None, "reason": "", "message": ""}]}
    obj = from_wire(raw, T.HorizontalPodAutoscaler)
    assert obj.metadata.labels is None and obj.spec.metrics is None
    out = to_wire(obj)
    assert out["metadata"] == {"name": "web"}
    assert out["spec"]["scaleTargetRef"] == {"kind": "Deployment", "name": "web"}
    assert "metrics" not in out["spec"]
    # currentMetrics has no omitempty: an empty list stays; lastTransitionTime is written as null
    assert out["status"] == {"desiredReplicas": 0, "currentMetrics": [],
                             "conditions": [{"type": "AbleToScale", "status": "True", "lastTransitionTime": None}]}


def test_empty_policies_list_is_kept_for_defaulting():
    obj = from_wire(_hpa(behavior={"scaleUp": {"policies": []}}), T.HorizontalPodAutoscaler)
    assert obj.spec.behavior.scale_up.policies == []


def test_code_built_objects_get_go_output_too():
    cond = T.HorizontalPodAutoscalerCondition(
        type="AbleToScale", status="True",
        last_transition_time=datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc), reason="", message="m",
    )
    status = T.HorizontalPodAutoscalerStatus(desired_replicas=1, current_metrics=None, conditions=[cond])
    meta = T.ObjectMeta(name="x", labels={"b": "1", "a": "2"})
    hpa = T.new_hpa(T.HorizontalPodAutoscalerSpec(scale_target_ref=T.CrossVersionObjectReference(kind="D", name="x"), max_replicas=1), meta, status)
    out = to_wire(hpa)
    assert out["status"]["conditions"][0] == {"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-01-02T03:04:05Z", "message": "m"}
    assert list(out["metadata"]["labels"]) == ["a", "b"]


def test_times_are_utc_seconds():
    raw = _hpa()
    raw["metadata"]["creationTimestamp"] = "2026-07-06T12:00:00.123456+02:00"
    out = to_wire(from_wire(raw, T.HorizontalPodAutoscaler))
    assert out["metadata"]["creationTimestamp"] == "2026-07-06T10:00:00Z"


@pytest.mark.parametrize("bad", ["2026-07-06T12:00:00", "yesterday", 5])
def test_times_need_a_zone(bad):
    raw = _hpa()
    raw["metadata"]["creationTimestamp"] = bad
    with pytest.raises(DecodeError, match=r"^metadata\.creationTimestamp: "):
        from_wire(raw, T.HorizontalPodAutoscaler)


def test_dumps_json_is_go_like():
    raw = _hpa()
    raw["metadata"]["annotations"] = {"z": "<a&b>", "a": "x"}
    data = dumps_json(from_wire(raw, T.HorizontalPodAutoscaler))
    assert b" " not in data.replace(b"<a&b>", b"")
    assert b'"annotations":{"a":"x","z":"\\u003ca\\u0026b\\u003e"}' in data
    assert json.loads(data)["metadata"]["annotations"]["z"] == "<a&b>"


def test_dumps_yaml_is_kubectl_style():
    obj = from_wire(next(d for d in DOCS if d.source.endswith("v2-with-status.yaml")).raw, T.HorizontalPodAutoscaler)
    text = dumps_yaml(obj)
    assert text.startswith("apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n")
    assert '  resourceVersion: "123456"\n' in text
    assert '  creationTimestamp: "2026-07-06T10:00:00Z"\n' in text
    assert "  metrics:\n  - type: Resource\n    resource:\n" in text
    assert '    status: "True"\n' in text
    sorted_text = dumps_yaml(obj, sort_keys=True)
    assert sorted_text.index("maxReplicas") < sorted_text.index("scaleTargetRef")
    assert dumps_yaml({"a": "", "b": "null", "c": "1e3", "d": "y", "e": "a\nb\n"}) == 'a: ""\nb: "null"\nc: "1e3"\nd: "y"\ne: |\n  a\n  b\n'


def test_loads_json():
    obj = loads_json(b'{"spec": {"maxReplicas": 2}}', T.HorizontalPodAutoscaler)
    assert obj.spec.max_replicas == 2
    with pytest.raises(DecodeError, match="invalid JSON"):
        loads_json(b"{", T.HorizontalPodAutoscaler)


def test_scale_round_trip():
    raw = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"replicas": 3}, "status": {"replicas": 2, "selector": "app=web"}}
    assert to_wire(from_wire(raw, T.Scale)) == raw
    zero = to_wire(from_wire({"spec": {"replicas": 0}, "status": {"replicas": 0, "selector": ""}}, T.Scale))
    assert zero["spec"] == {} and zero["status"] == {"replicas": 0}


def test_views_are_lenient():
    pod = from_wire({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}, "whatever": 1}, T.PodView)
    assert pod.spec.containers[0].name == "c"


# --------------------------------------------------------------------------- properties

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.floats(allow_nan=False, allow_infinity=False),
                     st.text(max_size=8), st.sampled_from(["1", "500m", "1Gi", "-1", "0.05", "x", "2026-01-01T00:00:00Z"]))
_keys = st.sampled_from(
    ["apiVersion", "kind", "metadata", "spec", "status", "name", "namespace", "labels", "annotations", "scaleTargetRef",
     "minReplicas", "maxReplicas", "metrics", "behavior", "type", "resource", "pods", "object", "external",
     "containerResource", "target", "metric", "describedObject", "value", "averageValue", "averageUtilization",
     "scaleUp", "scaleDown", "policies", "periodSeconds", "tolerance", "selectPolicy", "stabilizationWindowSeconds",
     "currentMetrics", "conditions", "lastTransitionTime", "current", "desiredReplicas", "currentReplicas",
     "container", "selector", "matchLabels", "creationTimestamp", "generation", "unknownThing"]
)
_trees = st.recursive(_scalars, lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(_keys, children, max_size=5)), max_leaves=25)


def _hpa_shaped():
    metric = st.fixed_dictionaries({"type": st.sampled_from(T.METRIC_TYPES + ("",))}, optional={
        "resource": st.fixed_dictionaries({"name": st.sampled_from(["cpu", "memory", ""])}, optional={
            "target": st.dictionaries(st.sampled_from(["type", "averageUtilization", "averageValue", "value", "x"]), _scalars, max_size=3)}),
        "pods": _trees, "object": _trees, "external": _trees, "containerResource": _trees})
    spec = st.fixed_dictionaries({}, optional={
        "scaleTargetRef": st.one_of(_trees, st.fixed_dictionaries({"kind": st.text(max_size=5), "name": st.text(max_size=5)})),
        "minReplicas": _scalars, "maxReplicas": _scalars, "metrics": st.one_of(_trees, st.lists(metric, max_size=3)),
        "behavior": st.one_of(_trees, st.fixed_dictionaries({}, optional={"scaleUp": _trees, "scaleDown": _trees}))})
    return st.fixed_dictionaries({}, optional={
        "apiVersion": st.sampled_from(["autoscaling/v2", "autoscaling/v1", "v1", ""]), "kind": st.just("HorizontalPodAutoscaler"),
        "metadata": st.one_of(_trees, st.fixed_dictionaries({}, optional={"name": _scalars, "labels": _trees, "creationTimestamp": _scalars})),
        "spec": st.one_of(spec, _trees), "status": _trees, "unknownThing": _trees})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_hpa_shaped())
def test_from_wire_only_raises_decode_error_and_to_wire_is_a_fixed_point(raw):
    try:
        obj = from_wire(raw, T.HorizontalPodAutoscaler)
    except DecodeError:
        return
    out = to_wire(obj)
    again = to_wire(from_wire(out, T.HorizontalPodAutoscaler))
    assert again == out
    assert msgspec.json.decode(dumps_json(out)) == out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_hpa_shaped(), st.booleans(), st.booleans())
def test_defaulting_and_validation_never_raise_on_a_decoded_object(raw, gate_zero, gate_tolerance):
    # Anything the codec accepts, defaulting and validation answer with field errors, never crash
    # (also as an update against itself, and rendered as the API server's Invalid Status).
    try:
        obj = from_wire(raw, T.HorizontalPodAutoscaler)
    except DecodeError:
        return
    gates = FeatureGates(scale_to_zero=gate_zero, configurable_tolerance=gate_tolerance)
    hpa = default_hpa(obj)
    errs = validate_hpa(hpa, gates=gates)
    again = validate_hpa(hpa, old=default_hpa(from_wire(raw, T.HorizontalPodAutoscaler)), gates=gates)
    for found in (errs, again):
        assert all(e.field for e in found)
        if found:
            assert InvalidError(found, name="x", kind="HorizontalPodAutoscaler").message
