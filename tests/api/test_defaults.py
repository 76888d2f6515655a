"""Defaulting (upstream's autoscaling/v2 defaults.go)."""

from __future__ import annotations

from pyhpa.api import types as T
from pyhpa.api.codec import from_wire, to_wire
from pyhpa.api.defaults import default_hpa, default_hpa_v1
from tests import builders


def hpa(**spec):
    raw = builders.hpa("w", min_replicas=None, max_replicas=3, namespace=None, **spec)
    return default_hpa(from_wire(raw, T.HorizontalPodAutoscaler))


CPU80 = [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
UP = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
      "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]}
DOWN = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


def test_min_replicas_and_cpu_metric():
    spec = to_wire(hpa())["spec"]
    assert spec["minReplicas"] == 1
    assert spec["metrics"] == CPU80
    assert "behavior" not in spec


def test_explicit_values_are_kept():
    spec = to_wire(hpa(minReplicas=0, metrics=[{"type": "External", "external": {"metric": {"name": "q"}, "target": {"type": "Value", "value": "1"}}}]))["spec"]
    assert spec["minReplicas"] == 0 and spec["metrics"][0]["type"] == "External"


def test_empty_and_null_metrics_get_the_cpu_default():
    assert to_wire(hpa(metrics=[]))["spec"]["metrics"] == CPU80
    assert to_wire(hpa(metrics=None))["spec"]["metrics"] == CPU80


def test_empty_behavior_gets_both_directions():
    assert to_wire(hpa(behavior={}))["spec"]["behavior"] == {"scaleUp": UP, "scaleDown": DOWN}


def test_user_fields_overwrite_defaults_as_a_whole():
    b = to_wire(hpa(behavior={"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]},
                              "scaleDown": {"stabilizationWindowSeconds": 60, "tolerance": "0.05"}}))["spec"]["behavior"]
    assert b["scaleUp"] == {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}
    assert b["scaleDown"] == {"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
                              "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}], "tolerance": "50m"}


def test_empty_policies_stay_empty():
    assert hpa(behavior={"scaleDown": {"policies": []}}).spec.behavior.scale_down.policies == []


def test_defaulting_keeps_unknown_fields_of_rules():
    out = to_wire(hpa(behavior={"scaleUp": {"future": 1}}))
    assert out["spec"]["behavior"]["scaleUp"]["future"] == 1


def test_defaults_are_fresh_objects():
    a, b = hpa(behavior={}), hpa(behavior={})
    a.spec.behavior.scale_up.policies[0].value = 99
    assert b.spec.behavior.scale_up.policies[0].value == 4


def test_v1_defaults_only_min_replicas():
    v1 = from_wire({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "spec": {"maxReplicas": 2}}, T.HorizontalPodAutoscalerV1)
    default_hpa_v1(v1)
    assert v1.spec.min_replicas == 1 and v1.spec.target_cpu_utilization_percentage is None
