"""A scenario's `controller:` mapping is read by the commands' flag parser, with the command
line's flags over it (pyhpa.controller.flags)."""

from __future__ import annotations

import pytest

from pyhpa.controller.flags import FlagValues
from pyhpa.sim.scenario import ScenarioError, load_scenario
from tests.sim.test_scenario_errors import _line_of, _write, good


def test_emulated_release_in_the_file_sets_what_the_release_implies(tmp_path):
    path = _write(tmp_path, good(controller={"emulated-version": "1.33",
                                             "horizontal-pod-autoscaler-downscale-stabilization": "1m"}))
    cfg = load_scenario(path).config
    assert cfg.downscale_stabilization == 60.0
    assert not cfg.scaled_to_zero_condition and not cfg.memory_status_binary_si
    assert not cfg.gates.external_metric_fallback  # 1.33's gate defaults


def test_command_line_flags_win_over_the_file(tmp_path):
    path = _write(tmp_path, good(controller={"horizontal-pod-autoscaler-tolerance": 0.2,
                                             "feature-gates": "HPAScaleToZero=false"}))
    cfg = load_scenario(path, controller_flags=FlagValues.given(tolerance="0.05")).config
    assert cfg.tolerance == 0.05 and cfg.gates.scale_to_zero is False


def test_a_bad_value_names_file_line_and_flag(tmp_path):
    path = _write(tmp_path, good(controller={"horizontal-pod-autoscaler-sync-period": "soon"}))
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    line = _line_of(path, "horizontal-pod-autoscaler-sync-period: soon")
    assert str(err.value) == (f'{path}:{line}: controller.horizontal-pod-autoscaler-sync-period: '
                              'Invalid value: invalid duration "soon"')


def test_a_command_line_flag_the_files_release_refuses_names_the_flag(tmp_path):
    path = _write(tmp_path, good(controller={"emulated-version": "1.31"}))
    with pytest.raises(ScenarioError, match="--feature-gates: cannot set feature gate PodLevelResources"):
        load_scenario(path, controller_flags=FlagValues.given(feature_gates="PodLevelResources=true"))


def test_tune_candidates_run_with_the_command_lines_flags():
    from pathlib import Path

    from pyhpa.sim.scenario import load_scenario
    from pyhpa.sim.tune_run import Job, evaluate

    path = Path(__file__).resolve().parents[2] / "examples" / "queue-outage.yaml"
    manifests = tuple(load_scenario(path).hpa_manifests)

    def job(*flags):
        return Job(path.read_text(), str(path), str(path.parent), "current", manifests, tuple(flags))

    with_fallback = evaluate(job())["underProvisionedPodSeconds"]
    without = evaluate(job(("feature-gates", "HPAExternalMetricFallback=false")))["underProvisionedPodSeconds"]
    assert without > with_fallback  # the outage is covered only by the fallback
