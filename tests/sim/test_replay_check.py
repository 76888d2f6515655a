"""The replay check: a scenario's ``observed:`` replicas against the simulated ones.

One small run is the yardstick throughout (see test_summary_counts_a_flap): 2 pods, load 500m,
2000m from 60 s, 500m from 120 s, scale-down window 0, 15 s everywhere. Its HPA scales up at 75 s
(2 -> 6) and 105 s (6 -> 8) and down at 135 s (8 -> 2); spec replicas per tick: 2 until 75 s,
6 at 90-105 s, 8 at 120-135 s, 2 from 150 s. Observed series are CSV files in ``tmp_path``.
"""

from __future__ import annotations

import base64
import json
import re
import struct
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pyhpa.cli import app
from pyhpa.sim.report import summarize
from pyhpa.sim.scenario import ScenarioError, parse_scenario
from tests.sim.scenarios import WEB_SCENARIO_YAML, cpu_hpa, deployment, run, scenario, steps

START = 1767225600.0  # 2026-01-01T00:00:00Z

REPLAY_KEYS = {"withinOneReplica", "observedScaleEvents", "matchedScaleEvents", "simulatedScaleEvents",
               "matchWindowSeconds", "unmatchedObservedScaleEvents", "maxDeviation", "maxDeviationAt",
               "maxDeviationOffsetSeconds", "saturatedIntervals", "saturatedSeconds"}

# The hand-worked case: every kind of tick and event at once.
OBSERVED = [(0, 2), (60, 2), (75, 6), (90, 6), (120, 9), (150, 9), (165, 2), (300, 2), (315, 5), (600, 5)]


def _csv(tmp_path: Path, rows: list[tuple[float, float]], name: str = "observed.csv") -> str:
    (tmp_path / name).write_text("time,replicas\n" + "".join(f"{t:g},{v:g}\n" for t, v in rows))
    return name


def _doc(tmp_path: Path, rows: list[tuple[float, float]] | None, saturated: list | None = None) -> dict:
    extra = {}
    if rows is not None:
        observed: dict = {"replicas": {"csv": _csv(tmp_path, rows), "column": "replicas", "maxGap": "10m"}}
        if saturated is not None:
            observed["saturated"] = saturated
        extra["observed"] = {"web": observed}
    hpa = cpu_hpa(behavior={"scaleDown": {"stabilizationWindowSeconds": 0}})
    return scenario([deployment(2), hpa], {"load": steps(500, ("1m", 2000), ("2m", 500))}, **extra)


def _replay(tmp_path: Path, rows: list[tuple[float, float]], saturated: list | None = None) -> dict:
    result = run(_doc(tmp_path, rows, saturated), tmp_path)
    assert [(e.t - START, e.old, e.new) for e in result.hpas[0].scale_events] == [(75, 2, 6), (105, 6, 8), (135, 8, 2)]
    return summarize(result)[0]["replay"]


# --------------------------------------------------------------------------- reading `observed:`

BASE = WEB_SCENARIO_YAML


@pytest.mark.parametrize("section, needle, message", [
    ("observd:\n  web: {replicas: 2}\n", "observd:", 'observd: unknown field "observd" (did you mean observed?'),
    ("observed:\n  web: {replica: 2}\n", "replica: 2", 'observed.web.replica: unknown field "replica" (did you mean '
                                                       "replicas? allowed: replicas, saturated)"),
    ("observed:\n  web:\n    replicas: 2\n    replicas: 3\n", "replicas: 3",
     'observed.web.replicas: duplicate field "replicas" (first set on line 29)'),
    ("observed:\n  api: {replicas: 2}\n", "api:", "observed.api: Not found: no Deployment or StatefulSet named 'api' "
                                                  "(workloads: web)"),
    ("observed:\n  web: {replicas: -1}\n", "replicas: -1", "observed.web.replicas: Invalid value: -1: must be greater "
                                                           "than or equal to 0"),
    ("observed:\n  web:\n    replicas: {constant: 2, colum: x}\n", "colum", "observed.web.replicas.colum: unknown "
                                                                            'field "colum"'),
    ("observed:\n  web: {saturated: []}\n", "saturated: []", "observed.web.replicas: Required value"),
    ("observed: {}\n", "observed: {}", "observed: expected a mapping of workload name"),
    ("observed:\n  web:\n    replicas: 2\n    saturated:\n    - {from: 1m, to: 2m, reasn: cpu}\n", "reasn",
     'observed.web.saturated[0].reasn: unknown field "reasn" (did you mean reason?'),
    ("observed:\n  web:\n    replicas: 2\n    saturated:\n    - {from: 3m, to: 2m}\n", "from: 3m",
     "observed.web.saturated[0].to: Invalid value: '2m': must be after from"),
    ("observed:\n  web:\n    replicas: 2\n    saturated:\n    - {from: 1m, to: 6m}\n", "from: 1m",
     "observed.web.saturated[0].to: Invalid value: '6m': must lie in the run "
     "(2026-01-01T00:00:00Z..2026-01-01T00:05:00Z)"),
    ("observed:\n  web:\n    replicas: 2\n    saturated:\n    - {from: '2025-12-31T23:59:00Z', to: 2m}\n", "from:",
     "observed.web.saturated[0].from: Invalid value: '2025-12-31T23:59:00Z': must lie in the run"),
    ("observed:\n  web:\n    replicas: 2\n    saturated:\n    - {from: soon, to: 2m}\n", "from: soon",
     "observed.web.saturated[0].from: Invalid value: 'soon'"),
    ("observed:\n  web:\n    replicas: 2\n    saturated:\n    - {to: 2m}\n", "to: 2m",
     "observed.web.saturated[0].from: Required value"),
])
def test_bad_observed_sections_are_one_line_errors_with_the_line(tmp_path, section, needle, message):
    text = BASE + section
    line = [i for i, x in enumerate(text.splitlines(), 1) if needle in x][-1]
    with pytest.raises(ScenarioError) as err:
        parse_scenario(text, "scn.yaml", tmp_path)
    assert str(err.value).startswith(f"scn.yaml:{line}: {message}"), str(err.value)
    assert "\n" not in str(err.value)


def test_a_bad_observed_section_fails_simulate_with_one_line_before_any_run(tmp_path):
    path = tmp_path / "scn.yaml"
    path.write_text(BASE + "observed:\n  web: {replicas: 2, saturatd: []}\n")
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", str(tmp_path / "out"), "--no-progress"])
    assert (result.exit_code, result.stdout) == (2, "")  # an input error
    assert result.stderr == (f"error: {path}:{len(BASE.splitlines()) + 2}: observed.web.saturatd: unknown field "
                             '"saturatd" (did you mean saturated? allowed: replicas, saturated)\n')
    assert not (tmp_path / "out").exists()


def test_saturated_times_take_offsets_and_rfc3339(tmp_path):
    text = BASE + ("observed:\n  web:\n    replicas: 3\n    saturated:\n"
                   "    - {from: 90s, to: '2026-01-01T00:02:00Z', reason: CPU at its limit}\n"
                   "    - {from: 150, to: 4m}\n")
    sc = parse_scenario(text, "scn.yaml", tmp_path)
    (obs,) = sc.observed.values()
    assert obs.workload == ("default", "Deployment", "web")
    assert [(s.start - START, s.end - START, s.reason) for s in obs.saturated] == [(90, 120, "CPU at its limit"),
                                                                                    (150, 240, "")]
    assert obs.replicas.value(START + 200) == 3


# --------------------------------------------------------------------------- the figures


def test_replay_figures_of_a_hand_worked_case(tmp_path):
    r = _replay(tmp_path, OBSERVED, [{"from": "1m", "to": "2026-01-01T00:03:00Z", "reason": "cpu"}])
    assert set(r) == REPLAY_KEYS
    # Within one replica: ticks 0-60 (2 vs 2), 90-135 (6/6, 6/6, 8/9, 8/9), 165-300 (2 vs 2):
    # 75 + 60 + 150 = 285 s of 600; off at 75 (2 vs 6), 150 (2 vs 9) and 315-585 (2 vs 5).
    assert r["withinOneReplica"] == pytest.approx(285 / 600)
    # Observed: up (60,75], up (90,120], down (150,165], up (300,315]; the first three are met
    # by the simulated 75 up, 105 up and 135 down (the last at the window's very edge, 150 - 15).
    assert (r["observedScaleEvents"], r["matchedScaleEvents"], r["simulatedScaleEvents"]) == (4, 3, 3)
    assert r["matchWindowSeconds"] == 15
    assert r["unmatchedObservedScaleEvents"] == [{"after": "2026-01-01T00:05:00Z", "at": "2026-01-01T00:05:15Z",
                                                  "from": 2, "to": 5}]
    assert (r["maxDeviation"], r["maxDeviationAt"], r["maxDeviationOffsetSeconds"]) == (7, "2026-01-01T00:02:30Z", 150)
    assert (r["saturatedIntervals"], r["saturatedSeconds"]) == (1, 120)


@pytest.mark.parametrize("rows, observed, matched", [
    ([(0, 2), (60, 2), (75, 6), (600, 6)], 1, 1),  # up in (60, 75]: the simulated 75 s up
    ([(0, 2), (300, 2), (315, 5), (600, 5)], 1, 0),  # up in (300, 315]: nothing simulated near
    ([(0, 2), (60, 2), (75, 1), (600, 1)], 1, 0),  # down in (60, 75]: the 75 s event went up
    ([(0, 8), (150, 8), (165, 2), (600, 2)], 1, 1),  # down in (150, 165]: 135 s is 150 - 15, in
    ([(0, 8), (151, 8), (166, 2), (600, 2)], 1, 0),  # down in (151, 166]: 135 s is 1 s too early
    ([(0, 2), (60, 2), (75, 4), (80, 6), (600, 6)], 2, 1),  # two ups, one simulated up near both
])
def test_scale_event_matching(tmp_path, rows, observed, matched):
    r = _replay(tmp_path, rows)
    assert (r["observedScaleEvents"], r["matchedScaleEvents"]) == (observed, matched)
    assert len(r["unmatchedObservedScaleEvents"]) == observed - matched


def test_a_matched_simulated_event_is_not_matched_again(tmp_path):
    r = _replay(tmp_path, [(0, 2), (60, 2), (75, 4), (80, 6), (600, 6)])
    # (60,75] takes the 75 s up; (75,80] would take it too, and the 105 s up is outside [60, 95].
    assert r["unmatchedObservedScaleEvents"] == [{"after": "2026-01-01T00:01:15Z", "at": "2026-01-01T00:01:20Z",
                                                  "from": 4, "to": 6}]


def test_no_replay_without_observed_replicas(tmp_path):
    assert "replay" not in summarize(run(_doc(tmp_path, None)))[0]


# --------------------------------------------------------------------------- outputs


def _write(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "scn.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _trace(page: str, name: str) -> dict:
    """The plotly trace named ``name`` in a report's inlined figure JSON."""
    [at] = [m.start() for m in re.finditer(r'\{"legendgroup":"' + re.escape(name) + '"', page)]
    return json.JSONDecoder().raw_decode(page, at)[0]


def test_simulate_writes_the_replay_to_summary_stderr_and_the_report(tmp_path):
    path = _write(tmp_path, _doc(tmp_path, OBSERVED, [{"from": "1m", "to": "3m", "reason": "cpu"}]))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        "replay default/web: within ±1 replica 47.5% of the time; 3/4 observed scale events matched within 15s; "
        "largest deviation 7 replicas at 2026-01-01T00:02:30Z; observed usage saturated in 1 interval (2m0s): "
        "demand there is a lower bound"]
    [summary] = json.loads((out / "summary.json").read_text())
    assert set(summary["replay"]) == REPLAY_KEYS and summary["replay"]["matchedScaleEvents"] == 3
    page = (out / "report.html").read_text()
    trace = _trace(page, "observed replicas")
    # The observed steps: where the series changes, held to the end of the run, on the pods panel.
    assert trace["yaxis"] == "y2" and trace["line"]["shape"] == "hv"
    assert trace["x"] == [f"2026-01-01T00:{m}.000" for m in ("00:00", "01:15", "02:00", "02:45", "05:15", "10:00")]
    assert list(struct.unpack("<6d", base64.b64decode(trace["y"]["bdata"]))) == [2, 6, 9, 2, 5, 5]
    assert '"name":"observed usage saturated, shaded (1)"' in page
    assert "within ±1 replica 47.5% of the time" in page
    assert (out / "plot.png").stat().st_size > 0


def test_simulate_without_observed_prints_no_replay(tmp_path):
    path = _write(tmp_path, _doc(tmp_path, None))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "replay" not in result.stderr
    assert "replay" not in json.loads((out / "summary.json").read_text())[0]
    assert "observed replicas" not in (out / "report.html").read_text()


def test_tune_shows_the_current_settings_replay_beside_the_recommendation(tmp_path):
    doc = _doc(tmp_path, OBSERVED)
    doc["workload"]["capacityPerReplica"] = 500
    path = _write(tmp_path, doc)
    out = tmp_path / "tune"
    result = CliRunner().invoke(app, ["tune", str(path), "-o", str(out), "--no-progress", "--target", "50,80",
                                      "--min-replicas", "1", "--scale-down-window", "0", "--refine", "0",
                                      "--budget", "100%"])
    assert result.exit_code == 0, result.output
    line = ("replay of the current settings, default/web: within ±1 replica 47.5% of the time; 3/4 observed scale "
            "events matched within 15s; largest deviation 7 replicas at 2026-01-01T00:02:30Z")
    stdout = result.stdout.splitlines()
    assert stdout[0] == line and stdout[1].startswith("| candidate |")  # the table's header
    page = (out / "report.html").read_text()
    assert "Replay check" in page and line in page
    assert '"name":"observed replicas"' in page
    header = (out / "frontier.csv").read_text().splitlines()[0]
    assert "replay" not in header and "within" not in header.replace("within_budget", "")


def test_the_match_window_is_the_hpas_own_sync_period(tmp_path):
    # KEP-6003: an HPA syncing every 5 s is held to 5 s, not the global 15 s.
    doc = _doc(tmp_path, [(0, 2), (600, 2)])
    doc["objects"][1]["spec"]["behavior"]["syncPeriodSeconds"] = 5
    [s] = summarize(run(doc, tmp_path))
    assert s["replay"]["matchWindowSeconds"] == 5
    assert s["replay"]["simulatedScaleEvents"] == s["scaleEvents"] > 0


def test_an_observed_name_of_two_workloads_is_an_error(tmp_path):
    other = deployment(2)
    other["metadata"]["namespace"] = "shop"
    doc = _doc(tmp_path, [(0, 2), (600, 2)])
    doc["objects"].insert(1, other)
    with pytest.raises(ScenarioError, match=r"observed\.web: Invalid value: 'web' names 2 workloads "
                                            r"\(Deployment default/web, Deployment shop/web\)"):
        parse_scenario(yaml.safe_dump(doc, sort_keys=False), "scn.yaml", tmp_path)
