"""KEP-6003's spec.behavior.syncPeriodSeconds in the API: wire form, validation (1..3600, the
field named), the gate's field dropping, and autoscaling/v1's behavior annotation."""

from __future__ import annotations

import json

import pytest

from pyhpa.api import types as T
from pyhpa.api.codec import from_wire, to_wire
from pyhpa.api.conversion import BEHAVIOR_ANNOTATION, convert_hpa_wire, hub_to_v1, v1_to_hub
from pyhpa.api.defaults import default_hpa
from pyhpa.api.features import FeatureGates
from pyhpa.api.strategy import prepare_for_create, prepare_for_update
from pyhpa.api.validation import validate_hpa

from .test_validation import base

GATE_OFF = FeatureGates(configurable_sync_period=False)


def hub(behavior: dict | None) -> T.HorizontalPodAutoscaler:
    raw = base()
    if behavior is not None:
        raw["spec"]["behavior"] = behavior
    return default_hpa(from_wire(raw, T.HorizontalPodAutoscaler))


def test_wire_form_round_trips():
    h = hub({"syncPeriodSeconds": 5})
    assert h.spec.behavior.sync_period_seconds == 5
    assert to_wire(h)["spec"]["behavior"]["syncPeriodSeconds"] == 5
    assert "syncPeriodSeconds" not in to_wire(hub({}))["spec"]["behavior"]


@pytest.mark.parametrize("value,message", [
    (0, "spec.behavior.syncPeriodSeconds: Invalid value: 0: must be greater than or equal to 1"),
    (-15, "spec.behavior.syncPeriodSeconds: Invalid value: -15: must be greater than or equal to 1"),
    (3601, "spec.behavior.syncPeriodSeconds: Invalid value: 3601: must be less than or equal to 3600"),
])
def test_out_of_range_is_rejected_naming_the_field(value, message):
    h = hub({"syncPeriodSeconds": value})
    assert [str(e) for e in validate_hpa(h)] == [message]


@pytest.mark.parametrize("value", [1, 15, 3600])
def test_the_range_is_inclusive(value):
    h = hub({"syncPeriodSeconds": value})
    assert validate_hpa(h) == []


def test_gate_off_drops_the_field_on_create_and_keeps_a_stored_one_on_update():
    assert prepare_for_create(hub({"syncPeriodSeconds": 5}), GATE_OFF).spec.behavior.sync_period_seconds is None
    assert prepare_for_create(hub({"syncPeriodSeconds": 5})).spec.behavior.sync_period_seconds == 5
    stored = hub({"syncPeriodSeconds": 5})
    kept = prepare_for_update(hub({"syncPeriodSeconds": 9}), stored, GATE_OFF)
    assert kept.spec.behavior.sync_period_seconds == 9  # the object already uses it: not dropped
    dropped = prepare_for_update(hub({"syncPeriodSeconds": 9}), hub({}), GATE_OFF)
    assert dropped.spec.behavior.sync_period_seconds is None


def test_v1_carries_it_in_the_behavior_annotation_only_when_set():
    v1 = hub_to_v1(hub({"syncPeriodSeconds": 30}))
    annotation = json.loads(v1.metadata.annotations[BEHAVIOR_ANNOTATION])
    assert annotation["SyncPeriodSeconds"] == 30
    assert v1_to_hub(v1).spec.behavior.sync_period_seconds == 30
    # HPAs without it keep the annotation text they always had
    plain = json.loads(hub_to_v1(hub({})).metadata.annotations[BEHAVIOR_ANNOTATION])
    assert set(plain) == {"ScaleUp", "ScaleDown"}


def test_v1_annotation_with_only_the_period_becomes_a_defaulted_behavior():
    raw = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "web", "namespace": "default",
                        "annotations": {BEHAVIOR_ANNOTATION: '{"SyncPeriodSeconds":12}'}},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "maxReplicas": 5}}
    behavior = convert_hpa_wire(raw, "autoscaling/v2")["spec"]["behavior"]
    assert behavior["syncPeriodSeconds"] == 12
    assert behavior["scaleUp"]["selectPolicy"] == "Max" and behavior["scaleDown"]["policies"]
