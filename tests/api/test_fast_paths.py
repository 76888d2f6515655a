"""The API write path's shortcuts against the general paths they stand in for.

``loads_json`` decodes clean JSON straight from the bytes, ``dumps_json`` encodes a clean struct
directly, and ``validate_hpa`` accepts common valid creates in one pass. Each must give exactly
what the general path gives, so these properties feed both with near-valid HPAs: clean ones
(the shortcuts' case) and ones off by one detail (unknown fields, omitempty zeros, offset
times, bad values), where the shortcut must step aside.
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhpa.api import types as T
from pyhpa.api.codec import DecodeError, dumps_json, dumps_json_general, from_wire, has_unknown_fields, loads_json, to_wire
from pyhpa.api.defaults import default_hpa
from pyhpa.api.features import FeatureGates
from pyhpa.api.validation import plainly_valid_create, validate_hpa, validate_hpa_by_rules

from .conftest import corpus_documents
from .test_codec import _hpa_shaped

_GOOD_TARGETS = {
    "Resource": [{"type": "Utilization", "averageUtilization": 60}, {"type": "AverageValue", "averageValue": "500m"}],
    "Pods": [{"type": "AverageValue", "averageValue": "1k"}],
    "Object": [{"type": "Value", "value": "10"}, {"type": "AverageValue", "averageValue": 2}],
    "External": [{"type": "Value", "value": "1.5"}, {"type": "AverageValue", "averageValue": "250m"}],
    "ContainerResource": [{"type": "Utilization", "averageUtilization": 1}],
}
_WIRE = {"Resource": "resource", "Pods": "pods", "Object": "object", "External": "external",
         "ContainerResource": "containerResource"}


@st.composite
def _good_metric(draw) -> dict:
    kind = draw(st.sampled_from(sorted(_GOOD_TARGETS)))
    target = dict(draw(st.sampled_from(_GOOD_TARGETS[kind])))
    ident = {"name": draw(st.sampled_from(["packets", "qps"]))}
    if draw(st.booleans()):
        ident["selector"] = {"matchLabels": {"app": "web"}}
    source = {
        "Resource": {"name": "cpu", "target": target},
        "Pods": {"metric": ident, "target": target},
        "Object": {"describedObject": {"kind": "Ingress", "name": "main", "apiVersion": "networking.k8s.io/v1"},
                   "metric": ident, "target": target},
        "External": {"metric": ident, "target": target},
        "ContainerResource": {"name": "cpu", "container": "app", "target": target},
    }[kind]
    return {"type": kind, _WIRE[kind]: source}


@st.composite
def _good_rules(draw) -> dict:
    r: dict = {"policies": draw(st.lists(st.fixed_dictionaries({
        "type": st.sampled_from(["Pods", "Percent"]), "value": st.integers(1, 200),
        "periodSeconds": st.sampled_from([1, 15, 60, 1800])}), min_size=1, max_size=2))}
    if draw(st.booleans()):
        r["stabilizationWindowSeconds"] = draw(st.sampled_from([0, 60, 3600]))
    if draw(st.booleans()):
        r["selectPolicy"] = draw(st.sampled_from(["Max", "Min", "Disabled"]))
    if draw(st.booleans()):
        r["tolerance"] = draw(st.sampled_from(["0.1", "0", 0.05]))
    return r


@st.composite
def _valid_hpa(draw) -> dict:
    meta: dict = {"name": draw(st.sampled_from(["web", "a", "web-1", "x.y"])), "namespace": draw(st.sampled_from(["default", "ns-1"]))}
    if draw(st.booleans()):
        meta["labels"] = draw(st.dictionaries(st.sampled_from(["app", "tier", "example.com/x"]), st.sampled_from(["web", "", "v1"]), max_size=2))
    if draw(st.booleans()):
        meta.update(resourceVersion="12", creationTimestamp="2026-07-06T10:00:00Z", generation=1)
    spec: dict = {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                  "maxReplicas": draw(st.integers(3, 10))}
    if draw(st.booleans()):
        spec["minReplicas"] = draw(st.integers(1, 3))
    if draw(st.integers(0, 3)):
        spec["metrics"] = draw(st.lists(_good_metric(), min_size=1, max_size=3))
    if draw(st.booleans()):
        spec["behavior"] = {k: draw(_good_rules()) for k in draw(st.sets(st.sampled_from(["scaleUp", "scaleDown"])))}
    doc: dict = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": meta, "spec": spec}
    if draw(st.integers(0, 3)):
        doc["status"] = {"currentReplicas": 3, "desiredReplicas": 3, "currentMetrics": None, "conditions": [
            {"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-07-06T10:15:00Z", "reason": "R"}]}
    return doc


def _metric_of(doc: dict, draw, kinds=None) -> tuple[dict, dict]:
    """A metric of ``doc`` (one is added if needed) and its source, of one of ``kinds``."""
    metrics = doc["spec"].setdefault("metrics", [])
    fitting = [m for m in metrics if _WIRE.get(m["type"]) in m and (kinds is None or m["type"] in kinds)]
    if not fitting:
        m = draw(_good_metric().filter(lambda m: kinds is None or m["type"] in kinds))
        metrics.append(m)
        fitting = [m]
    m = draw(st.sampled_from(fitting))
    return m, m[_WIRE[m["type"]]]


def _rules_of(doc: dict, draw) -> dict:
    behavior = doc["spec"].setdefault("behavior", {})
    key = draw(st.sampled_from(["scaleUp", "scaleDown"]))
    if key not in behavior:
        behavior[key] = draw(_good_rules())
    return behavior[key]


def _set(draw, where: dict, key: str, *values) -> None:
    value = draw(st.sampled_from(values))
    if value is _DROP:
        where.pop(key, None)
    else:
        where[key] = value


_DROP = object()


def _fault(doc: dict, draw) -> None:
    """Make ``doc`` wrong (or just unusual) in one detail."""
    meta, spec = doc["metadata"], doc["spec"]
    area = draw(st.sampled_from(["meta", "labels", "replicas", "ref", "metric", "target", "rules", "wire"]))
    if area == "meta":
        key = draw(st.sampled_from(["name", "namespace", "generation", "annotations", "finalizers", "generateName",
                                    "ownerReferences", "creationTimestamp"]))
        bad = {"name": ("", "Web", "a/b", "..", "-a", "a" * 254, _DROP), "namespace": ("", "Bad_NS", "a.b", _DROP),
               "generation": (-1, 0), "annotations": ({"a": "b"}, {"a/b/c": "x"}, {}), "finalizers": (["x"], ["a/b/c"], []),
               "generateName": ("web-", "Bad-", ""), "creationTimestamp": ("2026-07-06T10:00:00.5Z", "2026-07-06T12:00:00+02:00"),
               "ownerReferences": ([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "u"}], [])}[key]
        _set(draw, meta, key, *bad)
    elif area == "labels":
        labels = meta.setdefault("labels", {})
        if draw(st.booleans()):
            labels[draw(st.sampled_from(["a//b", "", "-x", "a/b/c", "x" * 64, "/x"]))] = "v"
        else:
            labels["app"] = draw(st.sampled_from(["-x", "a b", "x" * 64, "x_"]))
    elif area == "replicas":
        _set(draw, spec, draw(st.sampled_from(["minReplicas", "maxReplicas"])), -1, 0, 1, 11, _DROP)
    elif area == "ref":
        ref = spec["scaleTargetRef"]
        key = draw(st.sampled_from(["kind", "name", "apiVersion"]))
        if key == "apiVersion" and draw(st.booleans()):
            ref["kind"] = "ReplicationController"
        _set(draw, ref, key, "", "a/b", "%", "..", "v1", "a/b/c", "/v1", _DROP)
    elif area == "metric":
        m, src = _metric_of(doc, draw)
        what = draw(st.sampled_from(["type", "drop", "extra", "name", "container"]))
        if what == "type":
            m["type"] = draw(st.sampled_from(["", "Bogus"] + sorted(_WIRE)))
        elif what == "drop":
            del m[_WIRE[m["type"]]]
        elif what == "extra":
            m[draw(st.sampled_from(sorted(_WIRE.values())))] = {"name": "cpu", "metric": {"name": "x"}, "target": {"type": "Value", "value": "1"}}
        elif what == "name":
            if "metric" in src:
                _set(draw, src["metric"], "name", "", "a/b", "..", _DROP)
            else:
                _set(draw, src, "name", "", "memory", "x/y", "hugepages-2Mi", "requests.cpu", _DROP)
        else:
            _, src = _metric_of(doc, draw, ("ContainerResource",))
            _set(draw, src, "container", "", "Bad_C", "a" * 64, _DROP)
    elif area == "target":
        _, src = _metric_of(doc, draw)
        target = src["target"]
        key = draw(st.sampled_from(["type", "averageUtilization", "averageValue", "value"]))
        if key == "type":
            _set(draw, target, key, "", "Other", "Utilization", "Value", "AverageValue")
        elif key == "averageUtilization":
            _set(draw, target, key, -1, 0, 1, 50, _DROP)
        else:
            _set(draw, target, key, "0", "-1", "1", 0, -0.5, "0.0001n", _DROP)
    elif area == "rules":
        rules = _rules_of(doc, draw)
        key = draw(st.sampled_from(["stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance", "policy"]))
        if key == "stabilizationWindowSeconds":
            _set(draw, rules, key, -1, 3601, 3600, 0)
        elif key == "selectPolicy":
            _set(draw, rules, key, "", "Most", "max")
        elif key == "policies":
            _set(draw, rules, key, [], None, _DROP)
        elif key == "tolerance":
            _set(draw, rules, key, "-0.1", "-1m", "0")
        else:
            policy = draw(st.sampled_from(rules["policies"]))
            _set(draw, policy, draw(st.sampled_from(["type", "value", "periodSeconds"])), "Other", "", 0, -1, 1801, 1800)
    else:
        where = draw(st.sampled_from([doc, meta, spec, spec["scaleTargetRef"]]))
        where[draw(st.sampled_from(["unknownField", "uid", "selfLink"]))] = draw(st.sampled_from(["", "x", 0, None]))


@st.composite
def near_valid_hpas(draw) -> dict:
    """Valid wire HPAs, most of them made wrong (or unusual) in one or two details: the edge
    where each shortcut must step aside."""
    doc = draw(_valid_hpa())
    for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2]))):
        _fault(doc, draw)
    return doc


def _general_loads(data: bytes):
    try:
        raw = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise DecodeError("", f"invalid JSON: {exc}") from None
    return from_wire(raw, T.HorizontalPodAutoscaler)


def _outcome(fn, *args):
    try:
        obj = fn(*args)
    except DecodeError as exc:
        return ("error", str(exc), exc.path)
    return ("ok", obj, to_wire(obj), has_unknown_fields(obj))


def _check_loads(data: bytes) -> None:
    fast, general = _outcome(loads_json, data, T.HorizontalPodAutoscaler), _outcome(_general_loads, data)
    assert fast == general
    if fast[0] == "ok":
        assert type(fast[1]) is T.HorizontalPodAutoscaler


def _check_write_path(raw: dict, gates: FeatureGates) -> None:
    try:
        obj = loads_json(json.dumps(raw), T.HorizontalPodAutoscaler)
    except DecodeError:
        return
    assert dumps_json(obj) == dumps_json_general(obj)
    hpa = default_hpa(obj)
    assert dumps_json(hpa) == dumps_json_general(hpa)
    if plainly_valid_create(hpa, gates):
        assert validate_hpa_by_rules(hpa, None, gates) == []
    assert validate_hpa(hpa, gates=gates) == validate_hpa_by_rules(hpa, None, gates)


_SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(near_valid_hpas())
def test_loads_json_equals_the_general_decoder_on_near_valid_hpas(doc):
    _check_loads(json.dumps(doc).encode())


@_SETTINGS
@given(_hpa_shaped())
def test_loads_json_equals_the_general_decoder_on_odd_shapes(doc):
    _check_loads(json.dumps(doc).encode())


@pytest.mark.parametrize("data", [
    b"", b"{", b"[]", b"null", b'{"spec": 1}', b'{"metadata": {"name": "a", "name": 3}}',
    b'{"metadata": {"name": 3, "name": "a"}}', b'{"spec": {"maxReplicas": 1.0}}', b'{"spec": {"maxReplicas": 10e0}}',
    b'{"spec": {"maxReplicas": 123456789012345678901234567890}}', b'\xff', b'{"metadata": {"name": "\\ud800"}}',
])
def test_loads_json_equals_the_general_decoder_on_edge_texts(data):
    _check_loads(data)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # one fault in ~40 kinds: many
@given(near_valid_hpas(), st.booleans(), st.booleans())
def test_write_path_shortcuts_equal_the_general_paths(doc, zero, tolerance):
    _check_write_path(doc, FeatureGates(scale_to_zero=zero, configurable_tolerance=tolerance))


@_SETTINGS
@given(_hpa_shaped(), st.booleans())
def test_write_path_shortcuts_equal_the_general_paths_on_odd_shapes(doc, zero):
    _check_write_path(doc, FeatureGates(scale_to_zero=zero))


@pytest.mark.parametrize("doc", corpus_documents(), ids=lambda d: f"{d.source.rsplit('/', 1)[-1]}#{d.index}")
def test_corpus_takes_the_same_paths(doc):
    if doc.raw.get("apiVersion") != "autoscaling/v2":
        return
    data = json.dumps(doc.raw).encode()
    _check_loads(data)
    _check_write_path(copy.deepcopy(doc.raw), FeatureGates())


def test_shortcuts_are_taken_for_a_typical_write():
    # Not only never wrong: actually used for the common case, or the speed is lost silently.
    data = json.dumps({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}, "maxReplicas": 10,
                 "metrics": [{"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}}],
                 "behavior": {"scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}},
    }).encode()
    from pyhpa.api import codec

    hpa = default_hpa(loads_json(data, T.HorizontalPodAutoscaler))
    assert plainly_valid_create(hpa)
    assert codec._clean_json(hpa) is not None


def test_code_built_objects_with_unclean_values_take_the_general_path():
    hpa = default_hpa(T.new_hpa(T.HorizontalPodAutoscalerSpec(
        scale_target_ref=T.CrossVersionObjectReference(kind="Deployment", name="web", api_version=""), max_replicas=3),
        metadata=T.ObjectMeta(name="web", namespace="", labels={}, creation_timestamp=datetime(
            2026, 1, 1, 12, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2))))))
    hpa.status.conditions = [T.HorizontalPodAutoscalerCondition(type="AbleToScale", status="True", last_transition_time=datetime(2026, 1, 1), reason="")]
    out = dumps_json(hpa)
    assert out == dumps_json_general(hpa)
    assert b'"namespace"' not in out and b'"apiVersion":""' not in out and b"10:00:00Z" in out


def test_unknown_fields_of_a_moved_child_are_written():
    a = loads_json(b'{"metadata": {"name": "a", "x": 1}, "spec": {"maxReplicas": 1}, "status": {"desiredReplicas": 1, "y": 2}}',
                   T.HorizontalPodAutoscaler)
    b = loads_json(b'{"metadata": {"name": "b"}, "spec": {"maxReplicas": 1}, "status": {"desiredReplicas": 1}}', T.HorizontalPodAutoscaler)
    b.status = a.status
    assert dumps_json(b) == dumps_json_general(b)
    assert b'"y":2' in dumps_json(b)
