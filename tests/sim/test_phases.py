"""The phase band (pyhpa/sim/phases.py): the same scenario at N offsets of the sync and scrape
phases against the load; a step whose peak depends on the phase gives a band with both peaks."""

from __future__ import annotations

import csv
import json

import pytest
import yaml
from typer.testing import CliRunner

from pyhpa.cli import app
from pyhpa.sim.phases import ShiftedSeries, band, worst_figures
from pyhpa.sim.series import Steps
from tests.sim.scenarios import cpu_hpa, deployment, scenario, steps


def _step_doc() -> dict:
    """CPU load steps from 400m to 3700m at 2m8s, with 3900m for its first 5 s (target 50 % of 500m:
    250m a pod). A sync that reads the 5 s overshoot scales 2 -> 16 pods (3900 / 250 = 15.6); one
    that falls after it scales to 15 (14.8); at 16 pods, 3700m is within the 10 % tolerance, so 16
    stays. Syncs every 15 s (at 2m, 2m15s): the plain run misses the overshoot (15), the phase
    whose sync falls in it catches it (16)."""
    return scenario([deployment(2), cpu_hpa(target=50, max_replicas=30)],
                    {"load": steps(400, ("2m8s", 3900), ("2m13s", 3700))}, duration="8m",
                    workload={"startup": "0s", "termination": "0s", "cpu": {"signal": "load", "per": "1m"}})


def _simulate(tmp_path, name: str, *args: str):
    path = tmp_path / "step.yaml"
    path.write_text(yaml.safe_dump(_step_doc(), sort_keys=False))
    out = tmp_path / name
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", str(out), "--no-progress", *args])
    assert result.exit_code == 0, result.output
    return path, out, result


def test_shifted_series_reads_the_load_ahead_and_band_takes_min_median_max():
    s = ShiftedSeries(Steps(1.0, [10.0], [5.0]), 3.0)
    assert [s.value(t) for t in (6.0, 7.0, 10.0)] == [1.0, 5.0, 5.0]
    assert band([15, 16, None, 16]) == {"min": 15, "median": 16, "max": 16}
    assert band([None]) is None
    assert worst_figures([{"podHours": 1.0, "demandPodSeconds": 5.0, "flaps": None},
                          {"podHours": 1.5, "demandPodSeconds": 7.0, "flaps": 2}]) == \
        {"podHours": 1.5, "demandPodSeconds": 5.0, "flaps": None}


def test_four_phases_of_a_step_give_a_band_with_both_peaks(tmp_path):
    _, plain, _ = _simulate(tmp_path, "plain")
    _, out, result = _simulate(tmp_path, "band", "--phases", "4")
    [s] = json.loads((out / "summary.json").read_text())
    block = s["phases"]
    assert block["offsetsSeconds"] == [0.0, 3.75, 7.5, 11.25]  # evenly over the 15 s sync period
    assert sorted(set(block["values"]["peakReplicas"])) == [15, 16]
    assert block["figures"]["peakReplicas"] == {"min": 15, "median": 15, "max": 16}
    # The first phase is the plain run: its summary is the one written without --phases.
    [alone] = json.loads((plain / "summary.json").read_text())
    assert {k: v for k, v in s.items() if k != "phases"} == alone
    assert block["values"]["peakReplicas"][0] == alone["peakReplicas"]
    assert block["values"]["podHours"][0] == alone["podHours"]
    assert "Phase band over 4 offsets" in result.stdout and "| 15 / 15 / 16 |" in result.stdout
    assert "| 15 / 15 / 16 |" in (out / "summary.md").read_text()
    assert "Phase band" not in (plain / "summary.md").read_text()
    assert "x 4 phases" in result.stdout


def test_compare_variants_each_get_their_band(tmp_path):
    hpa = tmp_path / "calm.yaml"
    hpa.write_text(yaml.safe_dump(cpu_hpa(target=70, max_replicas=30)))
    _, out, _ = _simulate(tmp_path, "cmp", "--phases", "2", "--compare", str(hpa))
    rows = json.loads((out / "compare.json").read_text())
    assert [r["label"] for r in rows] == ["scenario", "calm"]
    assert all(len(r["phases"]["values"]["podHours"]) == 2 for r in rows)
    assert "Phase band over 2 offsets" in (out / "compare.md").read_text()


@pytest.mark.parametrize("command", ["simulate", "tune"])
def test_phases_below_1_is_a_usage_error(tmp_path, command):
    path = tmp_path / "step.yaml"
    path.write_text(yaml.safe_dump(_step_doc(), sort_keys=False))
    result = CliRunner().invoke(app, [command, str(path), "-o", str(tmp_path / "o"), "--phases", "0"])
    assert result.exit_code == 2 and result.output == "error: --phases: Invalid value: 0: must be 1 or more\n"


def test_tune_judges_each_candidate_by_its_worst_phase(tmp_path):
    path, out, _ = _simulate(tmp_path, "band", "--phases", "4")
    [s] = json.loads((out / "summary.json").read_text())
    result = CliRunner().invoke(app, ["tune", str(path), "-o", str(tmp_path / "t"), "--no-progress", "--phases", "4",
                                      "--target", "50,60", "--min-replicas", "1", "--scale-down-window", "300",
                                      "--refine", "0", "--budget", "100%"])
    assert result.exit_code == 0, result.output
    assert "each judged by its worst of 4 sync/scrape phases" in result.output
    with (tmp_path / "t" / "frontier.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    current = rows[0]
    worst = s["phases"]["figures"]
    assert float(current["pod_hours"]) == worst["podHours"]["max"]
    assert float(current["under_provisioned_pod_seconds"]) == worst["underProvisionedPodSeconds"]["max"]
    assert int(current["scale_events"]) == worst["scaleEvents"]["max"]
    assert s["phases"]["values"]["podHours"][0] < worst["podHours"]["max"]  # the worst phase, not the plain run
