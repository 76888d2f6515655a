"""`pyhpa tune`: the frontier against an exhaustive grid, the recommended HPA re-simulated by
`pyhpa simulate`, the Dask path against --jobs, the HTML report in headless Chromium, and the
search space's errors."""

from __future__ import annotations

import csv
import itertools
import json
import random
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from typer.testing import CliRunner

from pyhpa.cli import app
from pyhpa.sim.tune import Candidate
from pyhpa.sim.tune_choice import Caps, cheapest, choose, pareto
from pyhpa.sim.tune_command import frontier_table
from tests.sim.scenarios import cpu_hpa, deployment, scenario

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
GRID = {"target": [50, 70, 90], "minReplicas": [1, 2], "scaleDown.stabilizationWindowSeconds": [0, 300]}
GRID_FLAGS = ["--target", "50,70,90", "--min-replicas", "1,2", "--scale-down-window", "0,300"]


def _doc(**extra):
    """One hour of a wave of load on a Deployment whose pods take a minute to start: the targets
    trade pod-hours against under-provisioning."""
    load = {"sine": {"mean": 1100, "amplitude": 900, "period": "20m", "peak": "5m"}}
    workload = {"startup": "60s", "termination": "0s", "cpu": {"signal": "load", "per": "1m"},
                "demand": "load", "capacityPerReplica": 450}
    return scenario([deployment(2), cpu_hpa(target=60, min_replicas=2, max_replicas=10)], {"load": load},
                    duration="1h", workload=workload, **extra)


def _write(path: Path, doc) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _rows(out: Path) -> list[dict[str, str]]:
    with (out / "frontier.csv").open() as fh:
        return list(csv.DictReader(fh))


def _recommended_row(rows: list[dict[str, str]]) -> dict[str, str]:
    """The documented choice, from frontier.csv's figures: within the budget, the fewest scale
    events among the rows within 1% of the cheapest's pod-hours (then pod-hours,
    under-provisioning, order)."""
    inside = [r for r in rows if r["within_budget"] == "true"]
    cheapest = min(float(r["pod_hours"]) for r in inside)
    near = [r for r in inside if float(r["pod_hours"]) <= cheapest * 1.01 + 1e-9]
    return min(near, key=lambda r: (int(r["scale_events"]), float(r["pod_hours"]),
                                    float(r["under_provisioned_pod_seconds"])))


def _tune(args: list[str]):
    return CliRunner().invoke(app, ["tune", *args, "--no-progress"])


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """The small grid tuned once with --jobs 2 (shared by the tests that read its outputs)."""
    base = tmp_path_factory.mktemp("tune")
    path = _write(base / "s.yaml", _doc())
    out = base / "jobs"
    result = _tune([str(path), "-o", str(out), "-j", "2", "--budget", "1%", *GRID_FLAGS])
    assert result.exit_code == 0, result.output
    return path, out, result.output


def test_pareto_matches_brute_force_on_random_points_with_ties():
    rng = random.Random(5)
    for _ in range(200):
        pts = [(rng.choice([1.0, 2.0, 3.0, 4.0]), rng.choice([0.0, 5.0, 10.0])) for _ in range(rng.randint(1, 12))]
        brute = [not any(q[0] <= p[0] and q[1] <= p[1] and q != p for q in pts) for p in pts]
        assert pareto(pts) == brute, pts


def _candidate(name: str, pod_hours: float, under: float, events: int, flaps: int = 0) -> Candidate:
    """A candidate of a one-day run."""
    return Candidate(name, {}, [], figures={"podHours": pod_hours, "underProvisionedPodSeconds": under,
                                            "scaleEvents": events, "scaleEventsPerDay": float(events),
                                            "flaps": flaps, "flapsPerDay": float(flaps)})


def test_caps_on_flaps_and_scale_events_exclude_candidates_from_the_budget():
    flapping = _candidate("flapping", 10.0, 40.0, 30, flaps=9)
    calm = _candidate("calm", 11.0, 60.0, 12, flaps=1)
    busy = _candidate("busy", 10.5, 10.0, 50, flaps=0)
    cands = [flapping, calm, busy]
    assert choose(cands, limit=100) == (flapping, True)
    assert choose(cands, limit=100, caps=Caps(flaps_per_day=1)) == (busy, True)
    assert choose(cands, limit=100, caps=Caps(flaps_per_day=1, scale_events_per_day=20)) == (calm, True)
    assert choose(cands, limit=100, caps=Caps(flaps_per_day=0)) == (busy, True)
    # Nothing meets every cap and the pod-s: among those within the caps, the least under-provisioned.
    assert choose(cands, limit=5, caps=Caps(flaps_per_day=1)) == (busy, False)
    assert choose(cands, limit=100, caps=Caps(flaps_per_day=0, scale_events_per_day=5))[1] is False


def test_fewer_scale_events_break_a_tie_within_one_percent_of_the_cheapest():
    flapping = _candidate("flapping", 10.0, 40.0, 90)
    calm = _candidate("calm", 10.09, 60.0, 12)
    calmer_but_dearer = _candidate("dearer", 10.2, 0.0, 2)
    over = _candidate("over", 9.0, 500.0, 1)  # outside the budget: never the choice
    assert choose([over, flapping, calm, calmer_but_dearer], limit=100) == (calm, True)
    assert cheapest([over, flapping, calm, calmer_but_dearer], limit=100) == (flapping, True)  # what refines
    # Beyond 1% of the cheapest, pod-hours decide as before.
    assert choose([over, flapping, calmer_but_dearer], limit=100) == (flapping, True)
    # Equal scale events: the cheaper, then the less under-provisioned, then the first.
    twin = _candidate("twin", 10.05, 40.0, 90)
    assert choose([twin, flapping], limit=100) == (flapping, True)
    same = _candidate("same", 10.0, 40.0, 90)
    assert choose([flapping, same], limit=100)[0] is flapping
    # Nothing within the budget: the least under-provisioned, scale events do not matter.
    assert choose([flapping, calm], limit=10) == (flapping, False)


def test_frontier_table_shows_a_recommended_candidate_off_the_frontier():
    cheap, calm = _candidate("c0001", 10.0, 40.0, 90), _candidate("c0002", 10.05, 60.0, 3)
    cheap.on_frontier = True  # calm is dominated by cheap (more pod-hours and under-provisioning)
    table = frontier_table(SimpleNamespace(candidates=[cheap, calm], recommended=calm))
    assert "| c0002 (recommended, off the frontier) |" in table and "| c0001 |" in table


def test_frontier_of_an_exhaustive_grid_is_its_non_dominated_set(tuned):
    _, out, output = tuned
    rows = _rows(out)
    assert rows[0]["candidate"] == "current"
    assert (rows[0]["target"], rows[0]["minReplicas"], rows[0]["scaleDown.stabilizationWindowSeconds"]) == ("60", "2", "300")
    # Every combination of the grid, once, in product order; then the refinements.
    grid = [r for r in rows[1:] if r["round"] == "0"]
    combos = [tuple(int(r[k]) for k in GRID) for r in grid]
    assert combos == list(itertools.product(*GRID.values()))
    assert [r["candidate"] for r in rows[1:]] == [f"c{i:04d}" for i in range(1, len(rows))]
    pts = [(float(r["pod_hours"]), float(r["under_provisioned_pod_seconds"])) for r in rows]
    brute = [not any(q[0] <= p[0] and q[1] <= p[1] and q != p for q in pts) for p in pts]
    assert [r["on_frontier"] == "true" for r in rows] == brute
    # The grid really trades one against the other: more than one point on the frontier.
    assert sum(brute) >= 2 and len({p[1] for p in pts}) >= 3
    assert "(recommended)" in output


def test_refinement_tries_midpoints_next_to_the_grids_recommendation(tuned):
    _, out, _ = tuned
    rows = _rows(out)
    first = [r for r in rows if r["round"] == "0"]
    # Around the cheapest within the budget (the tie-break between near-cheapest ones only picks).
    key = lambda r: (float(r["pod_hours"]), float(r["under_provisioned_pod_seconds"]), int(r["scale_events"]))
    best = min((r for r in first if r["within_budget"] == "true"), key=key)
    assert best["candidate"] != "current"
    refined = [r for r in rows if r["round"] == "1"]
    assert refined, "the grid's recommendation has untried midpoints"
    for r in refined:
        changed = [k for k in GRID if r[k] != best[k]]
        assert len(changed) == 1, (r, best)
        k = changed[0]
        values = sorted({int(g[k]) for g in first if g["candidate"] != "current"})
        at = values.index(int(best[k]))
        neighbours = [values[i] for i in (at - 1, at + 1) if 0 <= i < len(values)]
        assert int(r[k]) in [(int(best[k]) + n) // 2 for n in neighbours]


def test_recommended_is_the_cheapest_within_budget_and_simulates_to_its_row(tuned, tmp_path):
    path, out, _ = tuned
    rows = _rows(out)
    rec = [r for r in rows if r["recommended"] == "true"]
    assert len(rec) == 1
    rec = rec[0]
    assert rec == _recommended_row(rows)
    inside = [r for r in rows if r["within_budget"] == "true"]
    assert float(rec["pod_hours"]) <= 1.01 * min(float(r["pod_hours"]) for r in inside)
    assert any(r["within_budget"] == "false" for r in rows)  # the budget excludes some candidates
    manifests = list(yaml.safe_load_all((out / "recommended.yaml").read_text()))
    assert [m["apiVersion"] for m in manifests] == ["autoscaling/v2"]
    spec = manifests[0]["spec"]
    assert spec["metrics"][0]["resource"]["target"]["averageUtilization"] == int(rec["target"])
    assert spec["minReplicas"] == int(rec["minReplicas"])
    assert spec["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == int(rec["scaleDown.stabilizationWindowSeconds"])
    sim = tmp_path / "sim"
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", str(sim), "--compare", str(out / "recommended.yaml")])
    assert result.exit_code == 0, result.output
    table = {s["label"]: s for s in json.loads((sim / "compare.json").read_text())}
    assert table["recommended"]["podHours"] == float(rec["pod_hours"])
    assert table["recommended"]["underProvisionedPodSeconds"] == float(rec["under_provisioned_pod_seconds"])
    assert table["recommended"]["scaleEvents"] == int(rec["scale_events"])
    current = rows[0]
    assert table["scenario"]["podHours"] == float(current["pod_hours"])


def test_dask_cluster_gives_the_same_files_as_jobs(tuned, tmp_path):
    distributed = pytest.importorskip("distributed")
    path, out, _ = tuned
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster:
        result = _tune([str(path), "-o", str(tmp_path), "--budget", "1%", "--dask-scheduler",
                        cluster.scheduler_address, *GRID_FLAGS])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "frontier.csv").read_bytes() == (out / "frontier.csv").read_bytes()
    assert (tmp_path / "recommended.yaml").read_bytes() == (out / "recommended.yaml").read_bytes()


def test_unreachable_dask_scheduler_is_an_error_naming_the_flag(tuned, tmp_path, monkeypatch):
    monkeypatch.setattr("pyhpa.sim.tune_run.DASK_CONNECT_SECONDS", 1.0)
    path, _, _ = tuned
    result = _tune([str(path), "-o", str(tmp_path), "--target", "60", "--dask-scheduler", "tcp://127.0.0.1:9"])
    assert result.exit_code == 1  # a runtime failure, not an input error
    assert "--dask-scheduler" in result.output and "Traceback" not in result.output


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_report_renders_in_headless_chromium(tuned, tmp_path):
    _, out, _ = tuned
    url = (out / "report.html").resolve().as_uri()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    assert 'class="main-svg"' in dom
    for name in ("Pareto frontier", "current settings", "recommended", "replicas, recommended", "demand"):
        assert name in dom, name
    for unit in (">under-provisioned pod-s<", ">demand (load)<", ">pods<"):  # every y-axis says its unit
        assert unit in dom, unit
    shot = tmp_path / "shot.png"
    subprocess.run([CHROMIUM, *flags, "--window-size=1200,1000", f"--screenshot={shot}", url],
                   capture_output=True, timeout=120)
    from PIL import Image

    with Image.open(shot) as img:
        colors = img.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > 50  # text, markers and lines, not a blank page


def test_no_candidate_within_budget_exits_3_and_recommends_the_least_under_provisioned(tmp_path):
    path = _write(tmp_path / "s.yaml", _doc())
    result = _tune([str(path), "-o", str(tmp_path / "o"), "--budget", "0", "--target", "80,90",
                    "--min-replicas", "1", "--scale-down-window", "0"])
    assert result.exit_code == 3, result.output
    assert "no candidate is within the budget" in result.output
    rows = _rows(tmp_path / "o")
    assert all(float(r["under_provisioned_pod_seconds"]) > 0 for r in rows)
    rec = next(r for r in rows if r["recommended"] == "true")
    assert float(rec["under_provisioned_pod_seconds"]) == min(float(r["under_provisioned_pod_seconds"]) for r in rows)
    assert "NO candidate stays within the budget" in (tmp_path / "o" / "recommended.yaml").read_text()


def test_scenario_tune_section_declares_ranges_per_hpa_fields_and_policies(tmp_path):
    tune = {"target": {"from": 60, "to": 80, "step": 10},
            "scaleUp": {"policies": [[{"type": "Pods", "value": 1, "periodSeconds": 60}],
                                     {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100,
                                                                            "periodSeconds": 15}]}]},
            "hpas": {"default/web": {"minReplicas": [2, 3]}}, "budget": "100"}
    path = _write(tmp_path / "s.yaml", _doc(tune=tune))
    result = _tune([str(path), "-o", str(tmp_path / "o"), "--refine", "0"])
    assert result.exit_code in (0, 3), result.output
    rows = _rows(tmp_path / "o")
    assert len(rows) == 1 + 3 * 2 * 2
    assert list(rows[0])[:4] == ["candidate", "target", "scaleUp.policies", "default/web:minReplicas"]
    assert [r["target"] for r in rows[1:5]] == ["60", "60", "60", "60"]
    assert "budget of 100 " in result.output
    doc = yaml.safe_load((tmp_path / "o" / "recommended.yaml").read_text())
    rec = next(r for r in rows if r["recommended"] == "true")
    assert doc["spec"]["behavior"]["scaleUp"]["policies"] == json.loads(rec["scaleUp.policies"])["policies"]
    # The command line replaces the scenario's values of a field.
    result = _tune([str(path), "-o", str(tmp_path / "o2"), "--target", "70", "--refine", "0"])
    assert len(_rows(tmp_path / "o2")) == 1 + 1 * 2 * 2


def test_current_row_and_candidates_keep_the_scenarios_starting_status(tmp_path):
    """queue-workers starts scaled to zero (the HPA's status says so): tune's runs start there too."""
    example = Path(__file__).resolve().parents[2] / "examples" / "queue-workers.yaml"
    result = _tune([str(example), "-o", str(tmp_path / "o"), "--min-replicas", "0", "--refine", "0", "--budget", "100%"])
    assert result.exit_code == 0, result.output
    rows = _rows(tmp_path / "o")
    sim = tmp_path / "sim"
    result = CliRunner().invoke(app, ["simulate", str(example), "-o", str(sim)])
    assert result.exit_code == 0, result.output
    own = json.loads((sim / "summary.json").read_text())[0]
    for row in rows:  # minReplicas 0 is the scenario's own: every row is the same run
        assert (float(row["pod_hours"]), float(row["under_provisioned_pod_seconds"])) == \
            (own["podHours"], own["underProvisionedPodSeconds"]), row
    assert own["podHours"] > 0
    assert "ScaledToZero" in (tmp_path / "o" / "recommended.yaml").read_text()


@pytest.mark.parametrize("tune, message", [
    ({"targets": [50]}, "tune.targets: unknown field"),
    ({"scaleDown": {"window": [0]}}, "tune.scaleDown.window: unknown field"),
    ({"minReplicas": [1, "two"]}, "tune.minReplicas[1]: Invalid value: 'two'"),
    ({"target": {"from": 80, "to": 50}}, "tune.target: Invalid value"),
    ({"hpas": {"default/api": {"target": [50]}}}, "tune.hpas.default/api: Not found"),
    ({"target": ["500m"]}, "the target is a Utilization"),
    ({"minReplicas": [11]}, "minReplicas"),
    ({"budget": "lots"}, "tune.budget: Invalid value: 'lots'"),
    ({"scaleUp": {"policies": [[{"type": "Pods", "value": 1, "period": 60}]]}}, "tune.scaleUp.policies[0].policies[0].period"),
])
def test_bad_tune_sections_name_the_field(tmp_path, tune, message):
    path = _write(tmp_path / "s.yaml", _doc(tune=tune))
    result = _tune([str(path), "-o", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output  # an input error, as a bad flag
    assert message in result.output and "Traceback" not in result.output
    assert f"{path}:" in result.output


# Two alternatives per direction, as flags and as the equivalent `tune:` section's alternatives.
UP = {"Pods=4/60s,Percent=100/15s:Max": {"selectPolicy": "Max", "policies": [
          {"type": "Pods", "value": 4, "periodSeconds": 60}, {"type": "Percent", "value": 100, "periodSeconds": 15}]},
      "Pods=1/1m": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}
DOWN = {"Percent=10/60s": {"policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}]},
        "Pods=1/30s:Disabled": {"selectPolicy": "Disabled", "policies": [{"type": "Pods", "value": 1,
                                                                          "periodSeconds": 30}]}}


def test_policy_flags_give_the_same_candidates_as_the_equivalent_tune_section(tmp_path):
    section = {"target": [50, 70], "scaleUp": {"policies": [UP[k] for k in UP]},
               "scaleDown": {"policies": [DOWN[k] for k in DOWN]}}
    declared = _write(tmp_path / "declared.yaml", _doc(tune=section))
    result = _tune([str(declared), "-o", str(tmp_path / "section"), "--budget", "100%"])
    assert result.exit_code == 0, result.output
    flagged = _write(tmp_path / "flagged.yaml", _doc())
    flags = ["--target", "50,70"] + [a for k in UP for a in ("--scale-up-policies", k)] + \
        [a for k in DOWN for a in ("--scale-down-policies", k)]
    result = _tune([str(flagged), "-o", str(tmp_path / "flags"), "--budget", "100%", *flags])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "flags" / "frontier.csv").read_bytes() == (tmp_path / "section" / "frontier.csv").read_bytes()
    rows = _rows(tmp_path / "flags")
    assert len([r for r in rows if r["round"] == "0"]) == 1 + 2 * 2 * 2
    # recommended.yaml carries the recommended row's alternatives, as the flags spelled them.
    rec = next(r for r in rows if r["recommended"] == "true")
    behavior = yaml.safe_load((tmp_path / "flags" / "recommended.yaml").read_text())["spec"]["behavior"]
    for rules, alternatives, column in (("scaleUp", UP, "scaleUp.policies"), ("scaleDown", DOWN, "scaleDown.policies")):
        chosen = {k: v for k, v in behavior[rules].items() if k in ("policies", "selectPolicy")}
        assert chosen in alternatives.values()
        assert chosen == json.loads(rec[column])
    # A flag replaces the scenario's alternatives of its field (and only those).
    result = _tune([str(declared), "-o", str(tmp_path / "one"), "--budget", "100%", "--refine", "0",
                    "--scale-down-policies", "Pods=1/30s:Disabled"])
    assert result.exit_code == 0, result.output
    rows = _rows(tmp_path / "one")
    assert len(rows) == 1 + 2 * 2 * 1
    assert {json.loads(r["scaleDown.policies"])["selectPolicy"] for r in rows[1:]} == {"Disabled"}


@pytest.mark.parametrize("args, line", [
    (["--scale-up-policies", "Pods=4/60"], '--scale-up-policies "Pods=4/60": period must be a duration like 60s'),
    (["--scale-up-policies", "Pods=4/60s", "--scale-up-policies", "Pods=4/60s,Percent=0/15s"],
     '--scale-up-policies "Pods=4/60s,Percent=0/15s": Percent=0/15s: value: Invalid value: 0: must be greater than zero'),
    (["--scale-down-policies", "Pods=1/31m"],
     '--scale-down-policies "Pods=1/31m": periodSeconds: Invalid value: 1860: must be less than or equal to 1800'),
    (["--scale-down-policies", "pods=1/60s"],
     '--scale-down-policies "pods=1/60s": type: Unsupported value: "pods": supported values: "Percent", "Pods"'),
    (["--scale-up-policies", "Pods=2/60s:Maximum"], '--scale-up-policies "Pods=2/60s:Maximum": selectPolicy: '
     'Unsupported value: "Maximum": supported values: "Disabled", "Max", "Min"'),
    (["--scale-up-policies", "Pods 4/60s"], '--scale-up-policies "Pods 4/60s": expected TYPE=VALUE/PERIOD, like Pods=4/60s'),
    (["--scale-up-policies", "Pods=1.5/60s"], '--scale-up-policies "Pods=1.5/60s": value must be a whole number'),
])
def test_bad_policy_flags_are_one_line_errors_before_any_run(tmp_path, args, line):
    path = _write(tmp_path / "s.yaml", _doc())
    result = _tune([str(path), "-o", str(tmp_path / "o"), *args])
    assert result.exit_code == 2, result.output
    assert result.output == f"error: {line}\n"
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("args, message", [
    (["--target", "x"], "--target: Invalid value: 'x'"),
    (["--min-replicas", ","], "--min-replicas: Required value"),
    (["--scale-down-window", "-5"], "--scale-down-window: Invalid value: '-5'"),
    (["--budget", "5 pods"], "--budget: Invalid value: '5 pods': not a number"),
    (["--budget", "-5"], "--budget: Invalid value: '-5': must be >= 0"),
    (["--jobs", "0"], "--jobs: Invalid value: 0"),
    (["--max-flaps", "-1"], "--max-flaps: Invalid value: '-1': must be >= 0"),
    (["--max-scale-events", "lots"], "--max-scale-events: Invalid value: 'lots': not a number"),
])
def test_bad_flags_are_errors_naming_the_flag(tmp_path, args, message):
    path = _write(tmp_path / "s.yaml", _doc())
    result = _tune([str(path), "-o", str(tmp_path / "o"), *args])
    assert result.exit_code == 2, result.output  # bad flags: exit code 2, as documented
    assert message in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("command", ["simulate", "tune"])
def test_an_output_where_no_directory_can_be_made_is_a_usage_error_naming_o(tmp_path, command):
    path = _write(tmp_path / "s.yaml", _doc())
    (tmp_path / "file").write_text("")
    result = CliRunner().invoke(app, [command, str(path), "-o", str(tmp_path / "file" / "sub"), "--no-progress"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: -o: {tmp_path / 'file' / 'sub'}: ") and "Traceback" not in result.output
    result = CliRunner().invoke(app, [command, str(path), "-o", "/proc/nope", "--no-progress"])
    assert result.exit_code == 2, result.output
    assert result.output == "error: -o: /proc/nope: cannot create a directory: No such file or directory\n"
    made = tmp_path / "new" / "dir"
    result = CliRunner().invoke(app, [command, str(_write(tmp_path / "bad.yaml", {"duration": "-5m"})), "-o", str(made)])
    assert result.exit_code == 2 and not (tmp_path / "new").exists()  # the check leaves nothing behind


def test_min_replicas_0_without_the_gate_exits_2_like_other_bad_values(tmp_path):
    path = _write(tmp_path / "s.yaml", _doc())
    result = _tune([str(path), "-o", str(tmp_path / "o"), "--min-replicas", "0"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: --min-replicas: Invalid value: 0 for HPA default/web:"), result.output


def test_output_naming_a_file_is_refused_before_any_candidate_runs(tmp_path, monkeypatch):
    path = _write(tmp_path / "s.yaml", _doc())
    (tmp_path / "o").write_text("")
    monkeypatch.setattr("pyhpa.sim.tune_run.run_local", lambda *a: pytest.fail("a candidate ran"))
    result = _tune([str(path), "-o", str(tmp_path / "o"), "--target", "60"])
    assert result.exit_code == 2, result.output
    assert result.output == f"error: -o: {tmp_path / 'o'}: exists and is not a directory\n"


def test_an_hpa_that_never_computes_is_a_warning(tmp_path):
    doc = _doc()
    doc["objects"][0]["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"memory": "64Mi"}}
    path = _write(tmp_path / "s.yaml", doc)
    result = _tune([str(path), "-o", str(tmp_path / "o"), "--target", "60", "--refine", "0", "--budget", "100%"])
    assert result.exit_code == 0, result.output
    assert ("warning: HPA default/web (current) was unable to compute a scale in 100% of its syncs "
            "(ScalingActive=False: FailedGetResourceMetric): failed to get cpu utilization: missing request for cpu"
            in result.output)


def test_value_targets_take_quantities_and_refuse_percents(tmp_path):
    example = Path(__file__).resolve().parents[2] / "examples" / "queue-workers.yaml"
    result = _tune([str(example), "-o", str(tmp_path / "bad"), "--target", "20%"])
    assert result.exit_code == 2
    assert "--target: Invalid value: '20%': the target is an AverageValue (a quantity)" in result.output
    result = _tune([str(example), "-o", str(tmp_path / "o"), "--target", "20,45", "--refine", "0", "--budget", "100%"])
    assert result.exit_code == 0, result.output
    rows = _rows(tmp_path / "o")
    assert [r["target"] for r in rows] == ["30", "20", "45"]
    doc = yaml.safe_load((tmp_path / "o" / "recommended.yaml").read_text())
    rec = next(r for r in rows if r["recommended"] == "true")
    assert doc["spec"]["metrics"][0]["external"]["target"]["averageValue"] == rec["target"]
    # Fewer messages per worker means more workers: more pod-hours.
    assert float(rows[1]["pod_hours"]) > float(rows[2]["pod_hours"])


def test_flaps_and_scale_events_per_day_are_columns_and_cap_the_budget_by_default(tuned):
    _, out, output = tuned
    rows = _rows(out)
    header = list(rows[0])
    assert header[header.index("scale_events"):header.index("on_frontier")] == [
        "scale_events", "scale_events_per_day", "flaps", "flaps_per_day"]
    for r in rows:  # a one-hour run: per day is 24 times the count
        assert float(r["flaps_per_day"]) == 24 * int(r["flaps"]) and float(r["scale_events_per_day"]) == 24 * int(r["scale_events"])
    current = float(rows[0]["flaps_per_day"])
    # Without --max-flaps, a candidate flapping more than the current settings is not within the budget.
    assert any(float(r["flaps_per_day"]) > current for r in rows)
    assert all(float(r["flaps_per_day"]) <= current for r in rows if r["within_budget"] == "true")
    rec = next(r for r in rows if r["recommended"] == "true")
    assert float(rec["flaps_per_day"]) <= current
    assert "| flaps | flaps/day |" in output and "flaps/day (the current settings')" in output
    page = (out / "report.html").read_text()
    assert "flaps/day" in page and "under-provisioned, current, shaded" in page
    assert '"fillcolor":"rgba(214,39,40,0.18)"' in page  # the current settings' intervals, shaded


@pytest.mark.parametrize("budget", ["1%", "100%"])
def test_max_flaps_0_is_honoured_or_exits_3(tmp_path, budget):
    path = _write(tmp_path / "s.yaml", _doc())
    result = _tune([str(path), "-o", str(tmp_path / "o"), "--budget", budget, "--max-flaps", "0", *GRID_FLAGS])
    rows = _rows(tmp_path / "o")
    rec = next(r for r in rows if r["recommended"] == "true")
    inside = [r for r in rows if r["within_budget"] == "true"]
    assert all(r["flaps"] == "0" for r in inside)
    if inside:
        assert result.exit_code == 0, result.output
        assert rec["flaps"] == "0" and "at most 0 flaps/day (--max-flaps)" in result.output
    else:
        assert result.exit_code == 3, result.output
    # 1% leaves no candidate without flaps within the pod-s (the fallback still flaps least); 100% does.
    assert result.exit_code == (3 if budget == "1%" else 0)
    assert rec["flaps"] == "0"


def test_caps_in_the_tune_section_and_flags_replacing_them(tmp_path):
    path = _write(tmp_path / "s.yaml", _doc(tune={"maxFlaps": 72, "maxScaleEvents": 600, "budget": "100%"}))
    result = _tune([str(path), "-o", str(tmp_path / "o"), "--refine", "0", *GRID_FLAGS])
    assert result.exit_code == 0, result.output
    assert "at most 72 flaps/day (" in result.output and "tune.maxFlaps)" in result.output
    assert "at most 600 scale events/day (" in result.output
    rows = _rows(tmp_path / "o")
    inside = [r for r in rows if r["within_budget"] == "true"]
    assert inside and all(int(r["flaps"]) <= 3 and int(r["scale_events"]) <= 25 for r in inside)
    assert len(inside) < len(rows) - 1  # the caps exclude some candidates
    result = _tune([str(path), "-o", str(tmp_path / "o2"), "--refine", "0", "--max-flaps", "1000", *GRID_FLAGS])
    assert "at most 1000 flaps/day (--max-flaps)" in result.output
    bad = _write(tmp_path / "bad.yaml", _doc(tune={"maxFlaps": "many"}))
    result = _tune([str(bad), "-o", str(tmp_path / "o3")])
    assert "tune.maxFlaps: Invalid value: 'many'" in result.output and "Traceback" not in result.output
