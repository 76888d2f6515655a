"""Feature-gate parsing: kube's `Name=bool,...` syntax with Go's bool spellings."""

from __future__ import annotations

import pytest

from pyhpa.api.features import FeatureGateError, FeatureGates, go_parse_bool, parse_feature_gates


@pytest.mark.parametrize("text,value", [
    ("1", True), ("t", True), ("T", True), ("TRUE", True), ("true", True), ("True", True),
    ("0", False), ("f", False), ("F", False), ("FALSE", False), ("false", False), ("False", False),
])
def test_go_bool_spellings(text, value):
    assert go_parse_bool(text) is value


@pytest.mark.parametrize("text", ["", "yes", "tRuE", "2", "on"])
def test_other_spellings_are_rejected_with_go_text(text):
    with pytest.raises(ValueError, match=f'parsing "{text}": invalid syntax'):
        go_parse_bool(text)


def test_gates_accept_go_bools_and_name_the_bad_value():
    gates = parse_feature_gates("HPAScaleToZero=0, HPAConfigurableTolerance=F")
    assert gates.scale_to_zero is False and gates.configurable_tolerance is False
    assert parse_feature_gates("HPAScaleToZero=1").scale_to_zero is True
    with pytest.raises(FeatureGateError, match=r'invalid value of HPAScaleToZero=yes, err: strconv.ParseBool: parsing "yes"'):
        parse_feature_gates("HPAScaleToZero=yes")
    with pytest.raises(FeatureGateError, match="unrecognized feature gate: Bogus"):
        parse_feature_gates("Bogus=true")
    with pytest.raises(FeatureGateError, match="missing bool value for HPAScaleToZero"):
        parse_feature_gates("HPAScaleToZero")


@pytest.mark.parametrize("name, attribute", [
    ("HPAExternalMetricFallback", "external_metric_fallback"),  # KEP-5679
    ("HPAFallback", "hpa_fallback"),  # KEP-5053
    ("HPAConfigurableSyncPeriod", "configurable_sync_period"),  # KEP-6003
])
def test_the_gate_is_on_by_default_and_named_as_in_the_kep(name, attribute):
    assert getattr(FeatureGates(), attribute) is True
    assert getattr(parse_feature_gates(f"{name}=false"), attribute) is False
    assert FeatureGates().as_dict()[name] is True
