"""The one way from kube-controller-manager's HPA flags to ControllerConfig (pyhpa.controller.flags)."""

import pytest

from pyhpa.controller.flags import (FROM_DEFAULT, FROM_FLAGS, FlagError, FlagValues, build_config, describe_sources,
                                    published_flags, read_published_flags)


def test_config_from_kube_controller_manager_flags():
    cfg = build_config(tolerance="0.2", downscale_stabilization="2m", cpu_initialization_period="1m",
                       initial_readiness_delay="10s", sync_period="30s", feature_gates="HPAScaleToZero=false")
    assert (cfg.tolerance, cfg.downscale_stabilization, cfg.cpu_initialization_period) == (0.2, 120.0, 60.0)
    assert (cfg.initial_readiness_delay, cfg.sync_period) == (10.0, 30.0)
    assert cfg.gates.scale_to_zero is False


def test_defaults_are_upstreams():
    cfg = build_config()
    assert (cfg.tolerance, cfg.downscale_stabilization, cfg.cpu_initialization_period,
            cfg.initial_readiness_delay, cfg.sync_period) == (0.1, 300.0, 300.0, 30.0, 15.0)


def test_emulated_version_gives_the_releases_gates_conditions_and_status_format():
    cfg = build_config(emulated_version="1.33")
    assert not (cfg.gates.scale_to_zero or cfg.gates.external_metric_fallback or cfg.gates.configurable_sync_period)
    assert cfg.scaled_to_zero_condition is False
    assert cfg.memory_status_binary_si is False
    cfg = build_config(feature_gates="HPAScaleToZero=true", emulated_version="1.33")
    assert cfg.gates.scale_to_zero and not cfg.scaled_to_zero_condition
    assert build_config().scaled_to_zero_condition and build_config().memory_status_binary_si


@pytest.mark.parametrize("given,message", [
    (dict(downscale_stabilization="5x"), '--horizontal-pod-autoscaler-downscale-stabilization: invalid duration "5x"'),
    (dict(sync_period="x"), '--horizontal-pod-autoscaler-sync-period: invalid duration "x"'),
    (dict(sync_period="0s"), "--horizontal-pod-autoscaler-sync-period: invalid value \"0s\": must be greater than 0"),
    (dict(initial_readiness_delay="-1s"), "--horizontal-pod-autoscaler-initial-readiness-delay: invalid value"),
    (dict(tolerance="abc"), '--horizontal-pod-autoscaler-tolerance: invalid number "abc"'),
    (dict(tolerance="-0.1"), "--horizontal-pod-autoscaler-tolerance: invalid value"),
    (dict(feature_gates="Bogus=true"), "--feature-gates: unrecognized feature gate: Bogus"),
    (dict(emulated_version="1.26"), "--emulated-version: '1.26': must be a release from 1.27"),
    (dict(feature_gates="PodLevelResources=false", emulated_version="1.31"),
     "--feature-gates: cannot set feature gate PodLevelResources to false, feature is PreAlpha"),
])
def test_bad_flags_name_the_flag(given, message):
    with pytest.raises(FlagError) as err:
        build_config(**given)
    assert str(err.value).startswith(message)


def test_explicit_flags_win_over_published_and_say_where_each_came_from():
    running = build_config(downscale_stabilization="1m", tolerance="0.2", feature_gates="HPAFallback=false",
                           emulated_version="1.35")
    published = read_published_flags(published_flags(running, "1.35"), "controller pyhpa-a")
    merged = FlagValues.given(tolerance="0.3").over(published)
    cfg = merged.config()
    assert (cfg.downscale_stabilization, cfg.tolerance) == (60.0, 0.3)
    assert cfg.gates == running.gates
    assert not cfg.scaled_to_zero_condition  # the emulated release's switches come along
    assert merged.source("horizontal-pod-autoscaler-tolerance") == FROM_FLAGS
    assert merged.source("horizontal-pod-autoscaler-downscale-stabilization") == "controller pyhpa-a"
    assert FlagValues().source("horizontal-pod-autoscaler-sync-period") == FROM_DEFAULT
    gates = FlagValues.given(feature_gates="HPAScaleToZero=false").over(published).config().gates
    assert not gates.scale_to_zero and not gates.hpa_fallback  # the flag's gate over the controller's
    lines = describe_sources(FlagValues.given(feature_gates="HPAScaleToZero=false").over(published))
    assert lines[5].startswith("--feature-gates=") and "HPAScaleToZero=false" in lines[5]
    assert lines[5].endswith("(from flags over controller pyhpa-a)")
    assert lines[0] == "--horizontal-pod-autoscaler-sync-period=15s (from controller pyhpa-a)"


def test_published_flags_round_trip():
    cfg = build_config(sync_period="7s", initial_readiness_delay="1m30s")
    assert read_published_flags(published_flags(cfg, None), "x").config() == cfg


def test_a_newer_controllers_unknown_flags_and_gates_are_left_out():
    doc = published_flags(build_config(), None)
    doc["feature-gates"] = {**doc["feature-gates"], "HPAFuture": True}
    doc["horizontal-pod-autoscaler-future"] = "1s"
    assert read_published_flags(doc, "x").config() == build_config()
