"""KEP-5053's whole-HPA ``spec.behavior.fallback`` in the API: the gate, defaults, validation
naming the field, the gate's field dropping, the status counter's wire name, and the trip
through autoscaling/v1's behavior annotation."""

from __future__ import annotations

import json

import pytest

from pyhpa.api import types as T
from pyhpa.api.codec import from_wire, to_wire
from pyhpa.api.conversion import hub_to_v1, v1_to_hub
from pyhpa.api.defaults import default_hpa
from pyhpa.api.features import FeatureGates
from pyhpa.api.strategy import prepare_for_create, prepare_for_update
from pyhpa.api.validation import validate_hpa

from .test_validation import base

GATE_OFF = FeatureGates(hpa_fallback=False)


def hub(fallback: dict | None) -> T.HorizontalPodAutoscaler:
    raw = base()
    raw["spec"]["behavior"] = {} if fallback is None else {"fallback": fallback}
    return default_hpa(from_wire(raw, T.HorizontalPodAutoscaler))


def test_failure_threshold_defaults_to_3_and_round_trips():
    h = hub({"replicas": 5})
    assert h.spec.behavior.fallback == T.HPAFallback(failure_threshold=3, replicas=5)
    assert to_wire(h)["spec"]["behavior"]["fallback"] == {"failureThreshold": 3, "replicas": 5}
    assert "fallback" not in to_wire(hub(None))["spec"]["behavior"]
    assert validate_hpa(h) == []


@pytest.mark.parametrize("fallback,messages", [
    ({"replicas": 0}, ["spec.behavior.fallback.replicas: Invalid value: 0: must be greater than 0"]),
    ({}, ["spec.behavior.fallback.replicas: Invalid value: 0: must be greater than 0"]),
    ({"replicas": 2, "failureThreshold": 0},
     ["spec.behavior.fallback.failureThreshold: Invalid value: 0: must be greater than 0"]),
    ({"replicas": -1, "failureThreshold": -4},
     ["spec.behavior.fallback.failureThreshold: Invalid value: -4: must be greater than 0",
      "spec.behavior.fallback.replicas: Invalid value: -1: must be greater than 0"]),
])
def test_invalid_fallbacks_are_rejected_naming_the_field(fallback, messages):
    assert [str(e) for e in validate_hpa(hub(fallback))] == messages


def test_gate_off_drops_the_field_on_create_and_keeps_a_stored_one_on_update():
    assert prepare_for_create(hub({"replicas": 4}), GATE_OFF).spec.behavior.fallback is None
    assert prepare_for_create(hub({"replicas": 4})).spec.behavior.fallback.replicas == 4
    kept = prepare_for_update(hub({"replicas": 9}), hub({"replicas": 4}), GATE_OFF)
    assert kept.spec.behavior.fallback.replicas == 9
    assert prepare_for_update(hub({"replicas": 9}), hub(None), GATE_OFF).spec.behavior.fallback is None


def test_the_status_counter_has_the_kep_name_and_is_omitted_when_unset():
    h = hub({"replicas": 4})
    assert "consecutiveMetricRetrievalFailureCount" not in to_wire(h)["status"]
    h.status.consecutive_metric_retrieval_failure_count = 2
    wire = to_wire(h)
    assert wire["status"]["consecutiveMetricRetrievalFailureCount"] == 2
    assert from_wire(wire, T.HorizontalPodAutoscaler).status.consecutive_metric_retrieval_failure_count == 2


def test_v1_carries_the_fallback_in_the_behavior_annotation():
    v1 = hub_to_v1(hub({"replicas": 4, "failureThreshold": 6}))
    note = json.loads(v1.metadata.annotations["autoscaling.alpha.kubernetes.io/behavior"])
    assert note["Fallback"] == {"FailureThreshold": 6, "Replicas": 4}
    assert v1_to_hub(v1).spec.behavior.fallback == T.HPAFallback(failure_threshold=6, replicas=4)
    plain = json.loads(hub_to_v1(hub(None)).metadata.annotations["autoscaling.alpha.kubernetes.io/behavior"])
    assert "Fallback" not in plain
