"""KEP-5679's external.fallback in the API: defaults, validation naming the field, the gate's
field dropping, the status fields, and autoscaling/v1's metrics annotations."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from pyhpa.api import types as T
from pyhpa.api.codec import from_wire, to_wire
from pyhpa.api.conversion import hub_to_v1, v1_to_hub
from pyhpa.api.defaults import default_hpa
from pyhpa.api.features import FeatureGates
from pyhpa.api.strategy import prepare_for_create, prepare_for_update
from pyhpa.api.validation import validate_hpa

from .test_validation import base

GATE_OFF = FeatureGates(external_metric_fallback=False)


def hub(fallback: dict | None) -> T.HorizontalPodAutoscaler:
    raw = base()
    external = {"metric": {"name": "queue_depth"}, "target": {"type": "AverageValue", "averageValue": "30"}}
    if fallback is not None:
        external["fallback"] = fallback
    raw["spec"]["metrics"] = [raw["spec"]["metrics"][0], {"type": "External", "external": external}]
    return default_hpa(from_wire(raw, T.HorizontalPodAutoscaler))


def fallback_of(h: T.HorizontalPodAutoscaler) -> T.ExternalMetricFallback | None:
    return next(m.external.fallback for m in h.spec.metrics if m.type == "External")


def test_failure_duration_defaults_to_180_and_round_trips():
    h = hub({"replicas": 4})
    assert fallback_of(h) == T.ExternalMetricFallback(failure_duration_seconds=180, replicas=4, strategy="Static")
    assert to_wire(h)["spec"]["metrics"][1]["external"]["fallback"] == {
        "failureDurationSeconds": 180, "replicas": 4, "strategy": "Static"}
    assert "fallback" not in to_wire(hub(None))["spec"]["metrics"][1]["external"]
    assert validate_hpa(h) == []


@pytest.mark.parametrize("fallback,messages", [
    ({"replicas": 0}, ["spec.metrics[1].external.fallback.replicas: Invalid value: 0: must be greater than 0"]),
    ({"replicas": -2}, ["spec.metrics[1].external.fallback.replicas: Invalid value: -2: must be greater than 0"]),
    ({}, ["spec.metrics[1].external.fallback.replicas: Invalid value: 0: must be greater than 0"]),
    ({"replicas": 3, "failureDurationSeconds": 179},
     ["spec.metrics[1].external.fallback.failureDurationSeconds: Invalid value: 179: must be greater than or equal to 180"]),
    ({"replicas": 3, "strategy": "Max"},
     ['spec.metrics[1].external.fallback.strategy: Unsupported value: "Max": supported values: "Static", "UseMax", "UseMin"']),
])
def test_invalid_fallbacks_are_rejected_naming_the_field(fallback, messages):
    assert [str(e) for e in validate_hpa(hub(fallback))] == messages


def test_the_minimum_is_inclusive():
    assert validate_hpa(hub({"replicas": 1, "failureDurationSeconds": 180})) == []


@pytest.mark.parametrize("strategy", ["Static", "UseMax", "UseMin"])
def test_the_follow_ups_strategies_are_accepted_and_kept(strategy):
    h = hub({"replicas": 2, "strategy": strategy})
    assert validate_hpa(h) == [] and fallback_of(h).strategy == strategy


def test_gate_off_drops_the_field_on_create_and_keeps_a_stored_one_on_update():
    assert fallback_of(prepare_for_create(hub({"replicas": 4}), GATE_OFF)) is None
    assert fallback_of(prepare_for_create(hub({"replicas": 4}))).replicas == 4
    kept = prepare_for_update(hub({"replicas": 9}), hub({"replicas": 4}), GATE_OFF)
    assert fallback_of(kept).replicas == 9
    assert fallback_of(prepare_for_update(hub({"replicas": 9}), hub(None), GATE_OFF)) is None


def test_v1_carries_spec_and_status_in_the_metrics_annotations():
    h = hub({"replicas": 4, "failureDurationSeconds": 300})
    first = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    h.status = T.HorizontalPodAutoscalerStatus(desired_replicas=4, current_replicas=2, current_metrics=[
        T.MetricStatus(type="External", external=T.ExternalMetricStatus(
            metric=T.MetricIdentifier(name="queue_depth"), current=T.MetricValueStatus(),
            fallback_status="Fallback", first_failure_time=first))])
    v1 = hub_to_v1(h)
    spec_note = json.loads(v1.metadata.annotations["autoscaling.alpha.kubernetes.io/metrics"])
    assert spec_note[0]["external"]["fallback"] == {"failureDurationSeconds": 300, "replicas": 4, "strategy": "Static"}
    status_note = json.loads(v1.metadata.annotations["autoscaling.alpha.kubernetes.io/current-metrics"])
    assert status_note[0]["external"]["fallbackStatus"] == "Fallback"
    assert status_note[0]["external"]["firstFailureTime"] == "2026-01-02T03:04:05Z"
    back = v1_to_hub(v1)
    assert fallback_of(back) == T.ExternalMetricFallback(failure_duration_seconds=300, replicas=4, strategy="Static")
    ext = back.status.current_metrics[0].external
    assert (ext.fallback_status, ext.first_failure_time) == ("Fallback", first)
