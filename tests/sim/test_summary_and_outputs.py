"""Summary figures against hand-computed values; output files; the CLI; the served metrics; the examples."""

from __future__ import annotations

import asyncio
import json
import struct

import pytest
import yaml
from typer.testing import CliRunner

from pyhpa.adapters.memory import MemoryCluster
from pyhpa.api.selectors import Selector
from pyhpa.cli import app
from pyhpa.sim.report import summarize
from pyhpa.sim.targets import SimTarget
from tests.sim.scenarios import cpu_hpa, deployment, run, scenario, steps


def test_summary_of_a_startup_delay_run():
    # See test_startup_delay_and_unready_pods: 2 pods (1000m request = capacity per replica),
    # demand 3000m from 60 s; +2 pods at 75 s and +2 at 90 s, Ready 120 s later (195 s, 210 s).
    doc = scenario([deployment(2, cpu="1000m"), cpu_hpa()], {"load": steps(1000, ("1m", 3000))},
                   workload={"startup": "120s", "termination": "0s", "cpu": {"signal": "load", "per": "1m"}})
    s = summarize(run(doc))[0]
    # pods: 2 x 600 s + 2 x (600-75) + 2 x (600-90) = 3270 s
    assert s["podHours"] == pytest.approx(3270 / 3600)
    # ticks 60..180 have 2 Ready pods (2000m) for 3000m of demand: 9 ticks x 15 s, 1 pod short
    assert s["underProvisionedSeconds"] == 135
    assert s["underProvisionedPodSeconds"] == 135
    assert [e["secondsToCapacity"] for e in s["timeToCapacity"]] == [135]
    assert s["timeToCapacity"][0]["offsetSeconds"] == 60
    assert (s["peakReplicas"], s["scaleEvents"], s["scaleUps"], s["scaleDowns"], s["flaps"]) == (6, 2, 2, 0, 0)


def test_summary_counts_a_flap():
    # Up at 60 s, down at 120 s, scale-down window 0, startup 0:
    # 75: 200 % -> 8, policy max(2+4, 2*2) = 6.   90: 4 new pods without metrics -> direction flip -> 6.
    # 105: 6 x 333m = 66 % -> ceil(1.33*6) = 8.    120: ratio 1.0 (missing pods stay out) -> 8.
    # 135: 500m/8 = 63m -> 12 % -> ceil(0.24*8) = 2: a scale-down 30 s after a scale-up: one flap.
    hpa = cpu_hpa(behavior={"scaleDown": {"stabilizationWindowSeconds": 0}})
    res = run(scenario([deployment(2), hpa], {"load": steps(500, ("1m", 2000), ("2m", 500))}))
    events = [(e.t - res.scenario.start, e.old, e.new) for e in res.hpas[0].scale_events]
    assert events == [(75, 2, 6), (105, 6, 8), (135, 8, 2)]
    s = summarize(res)[0]
    assert (s["scaleEvents"], s["flaps"], s["peakReplicas"]) == (3, 1, 8)
    # Pods: the 2 originals stay (oldest Ready); 4 pods live 75..135, 2 live 105..135.
    assert s["podHours"] == pytest.approx((2 * 600 + 4 * 60 + 2 * 30) / 3600)
    # Demand 2000m vs 2 x 500m at ticks 60 and 75 (the 75 tick is before that sync's scale-up).
    assert s["underProvisionedSeconds"] == 30
    assert s["underProvisionedPodSeconds"] == 60
    assert s["maxSecondsToCapacity"] == 30


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_cli_writes_timeline_summary_and_plot(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario([deployment(2), cpu_hpa()], {"load": steps(500, ("2m", 2000))})))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "default/web" in result.output
    header = (out / "timeline.csv").read_text().splitlines()[0]
    assert header.startswith("time,offset_seconds,hpa,demand,capacity,replicas,ready_replicas,desired_replicas,cpu current")
    assert not (out / "timeline.json").exists()  # CSV by default; JSON only when asked
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", str(out), "--timeline", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads((out / "timeline.json").read_text())
    assert len(rows) == 41 and rows[9]["replicas"] == 4
    # The first row is the start (offset 0), before any sync: no decision, no metric reading yet.
    assert (rows[0]["offsetSeconds"], rows[0]["demand"], rows[0]["replicas"], rows[0]["readyReplicas"]) == (0, 500, 2, 2)
    assert rows[0]["desiredReplicas"] is None and rows[0]["metrics"][0]["current"] is None and not rows[0]["events"]
    assert rows[1]["offsetSeconds"] == 15
    summary = json.loads((out / "summary.json").read_text())
    assert summary[0]["peakReplicas"] == 8
    assert "simulated 0.2 h in " in result.output
    width, height = _png_size(out / "plot.png")
    assert width > 500 and height > 500


def test_cli_compare_runs_each_manifest_on_the_same_trace(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario([deployment(2), cpu_hpa()], {"load": steps(500, ("2m", 2000))})))
    fast = cpu_hpa(target=25)
    del fast["metadata"]["namespace"]
    (tmp_path / "fast.yaml").write_text(yaml.safe_dump(fast))
    (tmp_path / "slow.yaml").write_text(yaml.safe_dump(cpu_hpa(target=80)))
    out = tmp_path / "cmp"
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", str(out), "--compare",
                                      str(tmp_path / "fast.yaml"), str(tmp_path / "slow.yaml")])
    assert result.exit_code == 0, result.output
    table = json.loads((out / "compare.json").read_text())
    assert [s["label"] for s in table] == ["scenario", "fast", "slow"]
    # The trace's length, then how many variants ran on it (not their sum).
    assert "simulated 0.2 h x 3 variants in " in result.output
    peaks = {s["label"]: s["peakReplicas"] for s in table}
    # 2000m over 500m requests: 25 % target -> 16 pods, capped at maxReplicas 10; 80 % -> ceil(2000/400) = 5.
    assert peaks == {"scenario": 8, "fast": 10, "slow": 5}
    assert (out / "compare.md").read_text().startswith("| variant |")
    _png_size(out / "compare.png")
    assert (out / "fast" / "timeline.csv").exists()


def test_cli_reports_bad_scenarios_with_exit_code(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("duration: -5m\nobjects: []\n")
    result = CliRunner().invoke(app, ["simulate", str(path)])
    assert result.exit_code == 2  # an input error (pyhpa/sim/exit_codes.py)
    assert f"{path}:1: duration" in result.output


def _served_usage_cluster(tgt):
    cluster = MemoryCluster()
    cluster.set_pod_usage(tgt.pod_usage(), tgt.key[0])
    return cluster


@pytest.mark.parametrize("kind, containers", [("Deployment", 1), ("StatefulSet", 1), ("Deployment", 2)])
def test_served_resource_metrics_equal_the_pipelines_pod_metrics(kind, containers):
    # What the simulator hands the cluster per scrape (the pipeline's cohorts) must read as the
    # pipeline's PodMetrics objects read through the one PodMetrics conversion.
    wl = deployment(2)
    wl["kind"] = kind
    wl["spec"]["template"]["spec"]["containers"] = [
        {"name": f"c{i}", "resources": {"requests": {"cpu": "250m"}}} for i in range(containers)]
    doc = scenario([wl, cpu_hpa()], {"load": steps(500, ("1m", 2000))},
                   workload={"startup": "30s", "termination": "0s", "cpu": {"signal": "load", "per": "1m"},
                             "memory": {"base": "100Mi"}})
    doc["objects"][1]["spec"]["scaleTargetRef"]["kind"] = kind
    res = run(doc)
    sc = res.scenario
    signals = {s: sc.load[s].value(sc.end) for s in sc.load}
    tgt = SimTarget(sc.workloads[0], sc, signals)
    tgt.workload.scale(5, sc.end)
    sel = Selector.parse("app=web")
    checked = 0
    for dt in (15, 30, 45, 60, 75, 90, 105, 120):
        tgt.workload.advance(sc.end + dt)
        tgt.pipeline.advance(sc.end + dt)
        served = _served_usage_cluster(tgt)
        plain = MemoryCluster(pod_metrics=tgt.pipeline.pod_metrics())
        for resource, container in (("cpu", ""), ("memory", ""), ("cpu", "c0"), ("memory", "c1"), ("cpu", "nope"),
                                    ("gpu", "")):
            a = asyncio.run(served.get_resource_metric(resource, "default", sel, container))
            b = asyncio.run(plain.get_resource_metric(resource, "default", sel, container))
            assert a == b
            checked += len(a[0])
    assert checked > 0


EXAMPLES = __import__("pathlib").Path(__file__).resolve().parents[2] / "examples"

# Each example over its full duration: figures of a run checked by hand for plausibility (e.g.
# batch-ramp's ramp to 2,200 records/s at 150 per Ready worker needs ~15 workers: it peaks at 18
# and is under-provisioned for 45 s, where the pod starting up takes 90 s).
EXAMPLE_FIGURES = {
    "web-diurnal": dict(scaleEvents=47, scaleUps=21, scaleDowns=26, flaps=0, podHours=367.758333, peakReplicas=13,
                        underProvisionedSeconds=0.0, underProvisionedPodSeconds=0.0, maxSecondsToCapacity=None,
                        demandStepCount=120, maxSecondsFromStepToCapacity=0.0),
    "queue-workers": dict(scaleEvents=58, scaleUps=12, scaleDowns=46, flaps=2, podHours=21.108333, peakReplicas=30,
                          underProvisionedSeconds=240.0, underProvisionedPodSeconds=1635.0, maxSecondsToCapacity=90.0,
                          demandStepCount=3, maxSecondsFromStepToCapacity=90.0),
    # Capacity from the CPU model (no capacityPerReplica): a pod saturates at its 750m cpuCapacity,
    # (N x 750m - 100m) / 1.5m rps. The rps metric keeps pods near 120 rps (~36 % CPU): never short.
    "spiky-api": dict(scaleEvents=139, scaleUps=31, scaleDowns=108, flaps=2, podHours=115.068056, peakReplicas=21,
                      underProvisionedSeconds=0.0, underProvisionedPodSeconds=0.0, maxSecondsToCapacity=None,
                      demandStepCount=15, maxSecondsFromStepToCapacity=0.0, unservedDemand=0.0,
                      cpuUtilizationP50=35.47, cpuUtilizationP95=41.58, capacitySource="cpuCapacity"),
    "batch-ramp": dict(scaleEvents=14, scaleUps=13, scaleDowns=1, flaps=0, podHours=89.3375, peakReplicas=18,
                       underProvisionedSeconds=45.0, underProvisionedPodSeconds=45.0, maxSecondsToCapacity=45.0,
                       demandStepCount=13, maxSecondsFromStepToCapacity=165.0),
    # spiky-api's trace with the HPA of spiky-api-hpa-cpu-only.yaml (docs/simulator.md's --compare): pods at a
    # median 61 % CPU against the 70 % target are not short; only in spikes, while the pods sit at
    # their 750m saturation until the scale-up is Ready (at most 45 s), is demand unserved.
    "spiky-api-hpa-cpu-only": dict(scaleEvents=75, scaleUps=43, scaleDowns=32, flaps=1, podHours=59.823611,
                                   peakReplicas=11, underProvisionedSeconds=675.0, underProvisionedPodSeconds=1080.0,
                                   maxSecondsToCapacity=45.0, demandStepCount=15, maxSecondsFromStepToCapacity=45.0,
                                   unservedDemand=342587.236, cpuUtilizationP50=60.67, cpuUtilizationP95=73.62),
    # KEP-5679: a 30 min outage of the queue-depth adapter from 2h, a burst of 270 messages from
    # 2h10m to 2h50m (420 need 14 workers). With the fallback the HPA goes to 16 workers 3 min into
    # the outage; without it, it holds 6 until the metric is back at 2h30m.
    "queue-outage": dict(scaleEvents=8, scaleUps=4, scaleDowns=4, flaps=0, podHours=40.729167, peakReplicas=16,
                         underProvisionedSeconds=1860.0, underProvisionedPodSeconds=1860.0),
    "queue-outage-no-fallback": dict(scaleEvents=8, scaleUps=4, scaleDowns=4, flaps=0, podHours=36.229167,
                                     peakReplicas=16, underProvisionedSeconds=3495.0,
                                     underProvisionedPodSeconds=14610.0),
}
# HPA manifests run on another example's scenario (as `--compare` does).
VARIANT_OF = {"spiky-api-hpa-cpu-only": "spiky-api", "queue-outage-no-fallback": "queue-outage"}


def test_every_example_has_figures():
    assert {p.stem for p in EXAMPLES.glob("*.yaml")} == set(EXAMPLE_FIGURES)


@pytest.mark.parametrize("name", sorted(EXAMPLE_FIGURES))
def test_examples_run_in_full_with_their_figures(name):
    """About 5 s for all of them together on one core (48 h of web-diurnal is the longest)."""
    from pyhpa.sim.runner import run_scenario
    from pyhpa.sim.scenario import load_hpa_file, load_scenario

    if name in VARIANT_OF:
        sc = load_scenario(EXAMPLES / f"{VARIANT_OF[name]}.yaml")
        hpas = [h for h, _ in load_hpa_file(EXAMPLES / f"{name}.yaml", sc.config.gates, sc.workloads, "default")]
        res = run_scenario(sc, hpas=hpas)
    else:
        sc = load_scenario(EXAMPLES / f"{name}.yaml")
        res = run_scenario(sc)
    assert sc.duration >= 6 * 3600
    assert len(res.hpas[0].log) == 1 + int(sc.duration // sc.config.sync_period)  # the start, then every sync
    [summary] = summarize(res)
    figures = {k: summary[k] for k in EXAMPLE_FIGURES[name]}
    expected = dict(EXAMPLE_FIGURES[name])
    assert figures.pop("podHours") == pytest.approx(expected.pop("podHours"), abs=1e-6)
    assert figures == expected
    trace = res.workloads[res.hpas[0].target]
    cap = trace.capacity
    if cap is not None and cap.source != "capacityPerReplica":
        # The yardstick is the CPU model: short exactly where a Ready pod's CPU demand is past its ceiling.
        ceiling = cap.per_replica * sc.workloads[0].model.cpu.per
        for demand, ready, cpu in zip(trace.demand, trace.ready, trace.ready_pod_cpu):
            if ready and demand > cap.of(ready) + 1e-9:
                assert cpu >= ceiling - 1e-6
            elif ready and cpu < ceiling - 1e-6:
                assert demand <= cap.of(ready) + 1e-9
