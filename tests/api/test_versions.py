"""Version profiles (`--emulated-version`): each release's gate defaults and validation rules."""

from __future__ import annotations

import pytest

from pyhpa.api import types as T
from pyhpa.api.codec import from_wire
from pyhpa.api.defaults import default_hpa
from pyhpa.api.features import GATE_NAMES, FeatureGateError
from pyhpa.api.validation import validate_hpa
from pyhpa.api.versions import (
    NEWEST_MINOR,
    OLDEST_MINOR,
    EmulatedVersionError,
    VersionProfile,
    emulated_profile,
    parse_emulated_version,
    pyhpa_profile,
)
from tests import builders

# Gates of KEPs pyhpa builds ahead of upstream: never on in an upstream release (issue #19).
BEYOND_UPSTREAM = ("HPAExternalMetricFallback", "HPAConfigurableSyncPeriod", "HPAStatusDecisionTrace",
                   "HPAFallback")
RELEASES = range(OLDEST_MINOR, NEWEST_MINOR + 1)


def gate(profile: VersionProfile, name: str) -> bool:
    return profile.gates.as_dict()[name]


def hpa(min_replicas: int | None = 1, max_replicas: int = 5, ref: dict | None = None,
        metrics: list | None = None) -> T.HorizontalPodAutoscaler:
    raw = builders.hpa("web", min_replicas=min_replicas, max_replicas=max_replicas,
                       metrics=metrics or [builders.external_metric()], **({"scaleTargetRef": ref} if ref else {}))
    return default_hpa(from_wire(raw, T.HorizontalPodAutoscaler))


def errors(obj: T.HorizontalPodAutoscaler, profile: VersionProfile) -> list[str]:
    return [str(e) for e in validate_hpa(obj, gates=profile.gates, rules=profile.rules)]


# --------------------------------------------------------------------------- the table

@pytest.mark.parametrize("minor", RELEASES)
def test_beyond_upstream_gates_are_off_in_every_release(minor):
    profile = emulated_profile(minor)
    for name in BEYOND_UPSTREAM:
        if name in GATE_NAMES:  # HPAFallback arrives with KEP-5053's branch
            assert gate(profile, name) is False, name


def test_gate_defaults_follow_each_release():
    on = {minor: {n for n, v in emulated_profile(minor).gates.as_dict().items() if v} for minor in RELEASES}
    assert on[27] == on[33] == set()
    assert on[34] == {"PodLevelResources"}
    assert on[35] == on[36] == {"PodLevelResources", "HPAConfigurableTolerance"}
    assert on[37] == {"PodLevelResources", "HPAConfigurableTolerance", "HPAScaleToZero"}


def test_pyhpa_profile_keeps_its_own_defaults_and_says_so():
    own = pyhpa_profile()
    assert gate(own, "HPAScaleToZero") and gate(own, "HPAExternalMetricFallback")
    assert own.scaled_to_zero_condition
    assert own.git_version == f"v1.{NEWEST_MINOR}.0-pyhpa"
    assert emulated_profile(33).git_version == "v1.33.0"


def test_scaled_to_zero_condition_from_1_36():
    assert [m for m in RELEASES if emulated_profile(m).scaled_to_zero_condition] == list(range(36, NEWEST_MINOR + 1))


@pytest.mark.parametrize("text, minor", [("1.33", 33), ("v1.27", 27), ("kube=1.30", 30),
                                         (f"1.{NEWEST_MINOR}", NEWEST_MINOR)])
def test_parse_emulated_version(text, minor):
    profile = parse_emulated_version(text)
    assert (profile.minor, profile.emulated) == (minor, True)


@pytest.mark.parametrize("text", ["1.26", f"1.{NEWEST_MINOR + 1}", "2.0", "1", "1.x", "", "1.33.1",
                                  "wardle=1.2"])
def test_other_versions_are_one_line_errors_naming_the_flag_and_range(text):
    with pytest.raises(EmulatedVersionError) as info:
        parse_emulated_version(text)
    assert str(info.value) == (f"--emulated-version {text!r}: must be a release from 1.{OLDEST_MINOR} "
                               f"to 1.{NEWEST_MINOR} (MAJOR.MINOR, e.g. 1.33)")


def test_feature_gates_override_either_profile():
    assert gate(emulated_profile(33).with_feature_gates("HPAScaleToZero=true"), "HPAScaleToZero")
    assert not gate(pyhpa_profile().with_feature_gates("HPAScaleToZero=false"), "HPAScaleToZero")
    with pytest.raises(FeatureGateError, match="unrecognized feature gate: Nope"):
        emulated_profile(33).with_feature_gates("Nope=true")


@pytest.mark.parametrize("minor, spec", [
    (30, "HPAConfigurableTolerance=true"), (32, "HPAConfigurableTolerance=false"),
    (31, "PodLevelResources=true"), (27, "HPAScaleToZero=false,PodLevelResources=1"),
])
def test_a_gate_the_emulated_release_does_not_have_yet_cannot_be_set(minor, spec):
    name, value = spec.split(",")[-1].split("=")
    with pytest.raises(FeatureGateError) as info:
        emulated_profile(minor).with_feature_gates(spec)
    assert str(info.value) == (f"cannot set feature gate {name} to {'true' if value == '1' else value}, "
                               f"feature is PreAlpha at emulated version 1.{minor}")


def test_gates_are_settable_from_the_release_that_has_them():
    assert gate(emulated_profile(33).with_feature_gates("HPAConfigurableTolerance=true"),
                "HPAConfigurableTolerance")
    assert gate(emulated_profile(32).with_feature_gates("PodLevelResources=true"), "PodLevelResources")
    for minor in RELEASES:  # HPAScaleToZero since 1.16; HPAGeneration taken to be in every release
        assert gate(emulated_profile(minor).with_feature_gates("HPAScaleToZero=true,HPAGeneration=true"),
                    "HPAGeneration")


@pytest.mark.parametrize("name", [n for n in BEYOND_UPSTREAM if n in GATE_NAMES])
def test_beyond_upstream_gates_stay_settable_under_the_oldest_release(name):
    assert gate(emulated_profile(OLDEST_MINOR).with_feature_gates(f"{name}=true"), name)


def test_pyhpa_profile_refuses_no_gate():
    own = pyhpa_profile().with_feature_gates(",".join(f"{n}=false" for n in GATE_NAMES))
    assert not any(own.gates.as_dict().values())


# --------------------------------------------------------------------------- validation per release

def test_min_replicas_0_is_rejected_by_1_33_and_accepted_by_pyhpa():
    assert errors(hpa(min_replicas=0), emulated_profile(33)) == [
        "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"]
    assert errors(hpa(min_replicas=0), pyhpa_profile()) == []
    assert errors(hpa(min_replicas=0), emulated_profile(33).with_feature_gates("HPAScaleToZero=true")) == []


@pytest.mark.parametrize("minor, expected", [
    (33, ["spec.maxReplicas: Invalid value: 0: must be greater than 0",
          "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`"]),
    (27, ["spec.maxReplicas: Invalid value: 0: must be greater than 0",
          "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`"]),
    (36, ["spec.maxReplicas: Required value: must be set and greater than 0",
          "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`"]),
    (37, ["spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`",
          "spec.maxReplicas: Required value"]),
])
def test_max_replicas_0_message_by_release(minor, expected):
    assert errors(hpa(max_replicas=0), emulated_profile(minor)) == expected


def test_negative_max_replicas_before_1_36():
    assert errors(hpa(min_replicas=None, max_replicas=-1), emulated_profile(35))[0] == \
        "spec.maxReplicas: Invalid value: -1: must be greater than 0"


@pytest.mark.parametrize("ref", [{"kind": "Deployment", "name": "web"},
                                 {"apiVersion": "v1", "kind": "Deployment", "name": "web"},
                                 {"apiVersion": "a/b/c", "kind": "Deployment", "name": "web"}])
def test_scale_target_api_version_is_checked_from_1_34(ref):
    assert errors(hpa(ref=ref), emulated_profile(33)) == []
    assert errors(hpa(ref=ref), emulated_profile(27)) == []
    assert len(errors(hpa(ref=ref), emulated_profile(34))) == 1
    assert errors(hpa(ref=ref), pyhpa_profile())[0].startswith("spec.scaleTargetRef.apiVersion: Invalid value")


def test_described_object_api_version_is_not_checked_by_1_33():
    metrics = [{"type": "Object", "object": {
        "describedObject": {"apiVersion": "a/b/c", "kind": "Service", "name": "s"},
        "metric": {"name": "rps"}, "target": {"type": "Value", "value": "10"}}}]
    assert errors(hpa(metrics=metrics), emulated_profile(33)) == []
    assert errors(hpa(metrics=metrics), pyhpa_profile()) == [
        'spec.metrics[0].object.describedObject.apiVersion: Invalid value: "a/b/c": '
        "unexpected GroupVersion string: a/b/c"]


def test_fields_newer_than_a_release_are_unknown_unless_their_gate_is_on():
    def unknown(profile: VersionProfile) -> set[str]:
        return {".".join(p) for p in profile.unknown_hpa_fields()}
    beyond = {"spec.behavior.syncPeriodSeconds", "spec.metrics.*.external.fallback", "spec.behavior.fallback"}
    assert unknown(pyhpa_profile()) == unknown(pyhpa_profile().with_feature_gates("HPAConfigurableSyncPeriod=false")) == set()
    assert unknown(emulated_profile(33)) == unknown(emulated_profile(NEWEST_MINOR)) == beyond
    assert unknown(emulated_profile(32)) == beyond | {"spec.behavior.scaleUp.tolerance",
                                                      "spec.behavior.scaleDown.tolerance"}
    assert unknown(emulated_profile(33).with_feature_gates("HPAExternalMetricFallback=true")) == \
        {"spec.behavior.syncPeriodSeconds", "spec.behavior.fallback"}


def test_memory_statuses_are_binary_si_from_1_34_and_in_pyhpas_profile():
    from pyhpa.api.versions import emulated_profile, pyhpa_profile
    assert [emulated_profile(m).memory_status_binary_si for m in (27, 33, 34, 37)] == [False, False, True, True]
    assert pyhpa_profile().memory_status_binary_si
