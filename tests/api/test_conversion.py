"""v1 <-> v2 conversion through the alpha annotations (upstream's autoscaling/v1 conversion.go)."""

from __future__ import annotations

import copy
import json
import pathlib

import pytest
import yaml

from pyhpa.api import types as T
from pyhpa.api.codec import DecodeError, from_wire, to_wire
from pyhpa.api.conversion import (
    BEHAVIOR_ANNOTATION,
    CONDITIONS_ANNOTATION,
    CURRENT_METRICS_ANNOTATION,
    DECISION_ANNOTATION,
    METRICS_ANNOTATION,
    convert_hpa_wire,
    hpa_from_any_wire,
    hub_to_v1,
    v1_to_hub,
)

from .conftest import corpus_documents

HUB_44 = yaml.safe_load("""
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
  - type: Pods
    pods: {metric: {name: packets-per-second}, target: {type: AverageValue, averageValue: 1k}}
  behavior:
    scaleUp: {stabilizationWindowSeconds: 0, selectPolicy: Max, policies: [{type: Pods, value: 4, periodSeconds: 15}, {type: Percent, value: 100, periodSeconds: 15}]}
    scaleDown: {stabilizationWindowSeconds: 120, selectPolicy: Max, policies: [{type: Pods, value: 1, periodSeconds: 60}]}
status:
  currentReplicas: 3
  desiredReplicas: 3
  currentMetrics:
  - {type: Resource, resource: {name: cpu, current: {averageUtilization: 45, averageValue: 45m}}}
  - {type: Pods, pods: {metric: {name: packets-per-second}, current: {averageValue: "800"}}}
  conditions:
  - {type: AbleToScale, status: "True", lastTransitionTime: "2026-07-06T10:15:00Z", reason: ReadyForNewScale, message: recommended size matches current size}
""")

V1_44_ANNOTATIONS = {
    METRICS_ANNOTATION: '[{"type":"Pods","pods":{"metricName":"packets-per-second","targetAverageValue":"1k"}}]',
    CURRENT_METRICS_ANNOTATION: '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":45,"currentAverageValue":"45m"}},{"type":"Pods","pods":{"metricName":"packets-per-second","currentAverageValue":"800"}}]',
    BEHAVIOR_ANNOTATION: '{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},"ScaleDown":{"StabilizationWindowSeconds":120,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":60}],"Tolerance":null}}',
    CONDITIONS_ANNOTATION: '[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-07-06T10:15:00Z","reason":"ReadyForNewScale","message":"recommended size matches current size"}]',
}


def test_spec_example_hub_to_v1_exactly():
    v1 = convert_hpa_wire(HUB_44, "autoscaling/v1")
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["metadata"] == {"name": "web", "namespace": "default", "annotations": V1_44_ANNOTATIONS}
    assert v1["spec"] == {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                          "minReplicas": 2, "maxReplicas": 10, "targetCPUUtilizationPercentage": 60}
    assert v1["status"] == {"currentReplicas": 3, "desiredReplicas": 3, "currentCPUUtilizationPercentage": 45}


def test_spec_example_v1_back_to_hub_moves_cpu_last():
    v1 = convert_hpa_wire(HUB_44, "autoscaling/v1")
    back = convert_hpa_wire(v1, "autoscaling/v2")
    expected = to_wire(from_wire(HUB_44, T.HorizontalPodAutoscaler))
    expected["spec"]["metrics"] = expected["spec"]["metrics"][::-1]
    assert back == expected
    assert "annotations" not in back["metadata"]


def test_v1_without_target_gets_cpu_80_and_reads_back_as_80():
    raw = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "p"},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "p"}, "maxReplicas": 3}}
    hub = hpa_from_any_wire(raw, default=True)
    assert hub.spec.min_replicas == 1
    assert to_wire(hub)["spec"]["metrics"] == [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    assert convert_hpa_wire(to_wire(hub), "autoscaling/v1")["spec"]["targetCPUUtilizationPercentage"] == 80


def test_second_cpu_metric_is_lost_through_v1():
    raw = copy.deepcopy(HUB_44)
    raw["spec"]["metrics"].append({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 90}}})
    v1 = convert_hpa_wire(raw, "autoscaling/v1")
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 60
    back = convert_hpa_wire(v1, "autoscaling/v2")
    assert [m["type"] for m in back["spec"]["metrics"]] == ["Pods", "Resource"]


def test_current_cpu_comes_from_last_cpu_status():
    raw = copy.deepcopy(HUB_44)
    raw["status"]["currentMetrics"].append({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 70, "averageValue": "70m"}}})
    assert convert_hpa_wire(raw, "autoscaling/v1")["status"]["currentCPUUtilizationPercentage"] == 70


def test_all_metric_kinds_round_trip_through_v1():
    for doc in corpus_documents():
        if doc.raw["apiVersion"] != "autoscaling/v2" or doc.raw["metadata"]["name"] == "future":
            continue  # unknown fields nested in metrics/behavior do not survive v1 (top-level ones do)
        hub = to_wire(hpa_from_any_wire(doc.raw, default=True))
        back = convert_hpa_wire(convert_hpa_wire(hub, "autoscaling/v1"), "autoscaling/v2")
        metrics = hub["spec"]["metrics"]
        cpu = [m for m in metrics if m["type"] == "Resource" and m["resource"]["name"] == "cpu" and "averageUtilization" in m["resource"]["target"]]
        expected = copy.deepcopy(hub)
        expected["spec"]["metrics"] = [m for m in metrics if m not in cpu] + cpu[:1]
        # v1's Object source has a non-optional targetValue: an unset value comes back as "0"
        for m in expected["spec"]["metrics"]:
            if m["type"] == "Object":
                m["object"]["target"].setdefault("value", "0")
        if expected["status"].get("currentMetrics") == []:
            expected["status"]["currentMetrics"] = None  # an empty list is not written to v1
        for m in expected["status"].get("currentMetrics") or []:
            if m["type"] in ("Object", "External"):  # currentValue is not optional in v1 either
                m[m["type"].lower()]["current"].setdefault("value", "0")
            if m["type"] == "Resource":
                m["resource"]["current"].setdefault("averageValue", "0")
        assert back == expected, doc.source


def test_v1_corpus_round_trips_through_hub():
    for doc in corpus_documents():
        if doc.raw["apiVersion"] == "autoscaling/v1" and "targetCPUUtilizationPercentage" in doc.raw["spec"]:
            hub = convert_hpa_wire(doc.raw, "autoscaling/v2")
            back = convert_hpa_wire(hub, "autoscaling/v1")
            original = to_wire(from_wire(doc.raw, T.HorizontalPodAutoscalerV1))
            assert back["spec"] == original["spec"] and back["status"] == original["status"], doc.source
            # v1 readers also see the status metrics in the current-metrics annotation
            annotations = dict(back["metadata"].pop("annotations", {}))
            annotations.pop(CURRENT_METRICS_ANNOTATION, None)
            original_annotations = original["metadata"].pop("annotations", {})
            assert annotations == {k: v for k, v in original_annotations.items() if k != CURRENT_METRICS_ANNOTATION}
            assert back["metadata"] == original["metadata"]


def test_v1_annotation_object_external_container_resource():
    doc = next(d for d in corpus_documents() if d.raw["metadata"]["name"] == "mixed")
    metrics = convert_hpa_wire(doc.raw, "autoscaling/v2")["spec"]["metrics"]
    assert metrics == [
        {"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "front", "apiVersion": "v1"},
                                      "target": {"type": "Value", "value": "10k"}, "metric": {"name": "rps"}}},
        {"type": "External", "external": {"metric": {"name": "queue", "selector": {"matchLabels": {"q": "orders"}}},
                                          "target": {"type": "AverageValue", "averageValue": "30"}}},
        {"type": "ContainerResource", "containerResource": {"name": "memory", "target": {"type": "Utilization", "averageUtilization": 70}, "container": "app"}},
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 75}}},
    ]


def test_v1_object_without_target_value_gets_zero():
    raw = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "x", "annotations": {
        METRICS_ANNOTATION: '[{"type":"Object","object":{"target":{"kind":"S","name":"s"},"metricName":"m","averageValue":"5"}}]'}},
        "spec": {"scaleTargetRef": {"kind": "D", "name": "x"}, "maxReplicas": 2}}
    target = convert_hpa_wire(raw, "autoscaling/v2")["spec"]["metrics"][0]["object"]["target"]
    assert target == {"type": "AverageValue", "value": "0", "averageValue": "5"}


def test_annotations_read_case_insensitively_and_ignore_unknown_keys():
    raw = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "x", "annotations": {
        BEHAVIOR_ANNOTATION: '{"scaleDown":{"stabilizationWindowSeconds":30,"policies":[{"type":"Pods","value":1,"periodSeconds":60}],"bogus":1}}',
        "keep": "me"}},
        "spec": {"scaleTargetRef": {"kind": "D", "name": "x"}, "maxReplicas": 2}}
    hub = convert_hpa_wire(raw, "autoscaling/v2")
    assert hub["metadata"]["annotations"] == {"keep": "me"}
    assert hub["spec"]["behavior"]["scaleDown"] == {"stabilizationWindowSeconds": 30, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}
    # kubernetes#107038: a null direction is filled with the API defaults
    assert hub["spec"]["behavior"]["scaleUp"]["policies"][0] == {"type": "Pods", "value": 4, "periodSeconds": 15}


@pytest.mark.parametrize("bad", ["not json", '{"ScaleUp": 5}', "[]", '{"ScaleUp":null,"ScaleDown":null}'])
def test_unparsable_or_empty_annotations_are_ignored(bad):
    raw = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "x", "annotations": {
        BEHAVIOR_ANNOTATION: bad, METRICS_ANNOTATION: bad, CONDITIONS_ANNOTATION: bad, CURRENT_METRICS_ANNOTATION: bad}},
        "spec": {"scaleTargetRef": {"kind": "D", "name": "x"}, "maxReplicas": 2, "targetCPUUtilizationPercentage": 40}}
    hub = convert_hpa_wire(raw, "autoscaling/v2")
    assert "behavior" not in hub["spec"] and "annotations" not in hub["metadata"]
    assert hub["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] in (40,)


def test_v2_clients_never_see_round_trip_annotations():
    raw = copy.deepcopy(HUB_44)
    raw["metadata"]["annotations"] = dict(V1_44_ANNOTATIONS)
    assert "annotations" not in convert_hpa_wire(raw, "autoscaling/v2")["metadata"]


def test_tolerance_travels_in_behavior_annotation():
    raw = copy.deepcopy(HUB_44)
    raw["spec"]["behavior"]["scaleUp"]["tolerance"] = "0.05"
    v1 = convert_hpa_wire(raw, "autoscaling/v1")
    assert json.loads(v1["metadata"]["annotations"][BEHAVIOR_ANNOTATION])["ScaleUp"]["Tolerance"] == "50m"
    assert convert_hpa_wire(v1, "autoscaling/v2")["spec"]["behavior"]["scaleUp"]["tolerance"] == "50m"


def test_bad_api_version_or_kind():
    with pytest.raises(DecodeError, match="^apiVersion: "):
        hpa_from_any_wire({"apiVersion": "autoscaling/v2beta2", "kind": "HorizontalPodAutoscaler"})
    with pytest.raises(DecodeError, match="^kind: "):
        hpa_from_any_wire({"apiVersion": "autoscaling/v2", "kind": "Deployment"})
    with pytest.raises(ValueError):
        convert_hpa_wire(HUB_44, "autoscaling/v3")


def test_struct_level_functions_are_inverse_on_the_example():
    hub = from_wire(HUB_44, T.HorizontalPodAutoscaler)
    again = v1_to_hub(hub_to_v1(hub))
    assert again.spec.behavior == hub.spec.behavior
    assert again.status.conditions == hub.status.conditions
    assert again.status.current_metrics == hub.status.current_metrics


DECISION = {"time": "2026-07-06T10:15:00Z", "observedGeneration": 2, "currentReplicas": 3,
            "recommendedReplicas": 1, "desiredReplicas": 3, "reason": "Stabilized",
            "metrics": [{"metricIndex": 0, "proposedReplicas": 1, "status": "Used", "reason": "Computed"},
                        {"metricIndex": 1, "status": "Invalid", "reason": "FetchFailed"}],
            "constraints": ["Stabilization"]}


def test_last_scale_decision_travels_through_v1_in_an_annotation():
    raw = copy.deepcopy(HUB_44)
    raw["status"]["lastScaleDecision"] = copy.deepcopy(DECISION)
    v1 = convert_hpa_wire(raw, "autoscaling/v1")
    assert "lastScaleDecision" not in v1["status"]
    assert json.loads(v1["metadata"]["annotations"][DECISION_ANNOTATION]) == DECISION
    back = convert_hpa_wire(v1, "autoscaling/v2")
    assert back["status"]["lastScaleDecision"] == DECISION
    assert "annotations" not in back["metadata"]
    # an unreadable annotation is ignored, like the other round-trip annotations
    v1["metadata"]["annotations"][DECISION_ANNOTATION] = "{not json"
    assert "lastScaleDecision" not in convert_hpa_wire(v1, "autoscaling/v2")["status"]
