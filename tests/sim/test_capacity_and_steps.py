"""Ready capacity derived from the CPU map, and demand steps with their time to capacity (hand-computed)."""

from __future__ import annotations

import pytest

from pyhpa.sim.report import demand_steps, seconds_to_capacity, summarize
from pyhpa.sim.results import Capacity
from pyhpa.sim.capacity import capacity_of
from tests.sim.scenarios import cpu_hpa, deployment, run, scenario, steps


def test_default_capacity_pays_the_cpu_base_once():
    # 500m request per pod, 1m CPU per rps, a 1000m base for the whole workload:
    # N Ready pods serve d while 1000 + d <= 500 N, i.e. 500 N - 1000 rps.
    doc = scenario([deployment(2, cpu="500m"), cpu_hpa(target=90)], {"rps": {"constant": 1400}},
                   duration="5m",
                   workload={"startup": "30s", "termination": "0s", "cpu": {"base": "1000m", "signal": "rps", "per": "1m"},
                             "demand": "rps"})
    res = run(doc)
    cap = res.workloads[res.hpas[0].target].capacity
    assert (cap.per_replica, cap.overhead) == (500.0, 1000.0)
    assert [cap.of(n) for n in (1, 2, 3, 5, 6)] == [0.0, 0.0, 500.0, 1500.0, 2000.0]
    assert cap.pods_for(1400) == 5  # ceil((1400 + 1000) / 500)
    # 2400m over 2 pods = 240 % of request, target 90 %: 15 s -> 4 (legacy limit), 30 s -> 6;
    # 30 s startup: Ready 2, 2, 2, 4, 6 at 0, 15, 30, 45, 60.
    rows = res.hpas[0].rows
    assert [(r["offsetSeconds"], r["readyReplicas"], r["capacity"]) for r in rows[:5]] == [
        (0, 2, 0.0), (15, 2, 0.0), (30, 2, 0.0), (45, 4, 1000.0), (60, 6, 2000.0)]
    s = summarize(res)[0]
    assert (s["capacityPerReplica"], s["capacityOverhead"]) == (500.0, 1000.0)
    # short at 0, 15, 30, 45 by 3, 3, 3, 1 pods (5 needed)
    assert s["underProvisionedSeconds"] == 60
    assert s["underProvisionedPodSeconds"] == (3 + 3 + 3 + 1) * 15
    assert [e["secondsToCapacity"] for e in s["timeToCapacity"]] == [60]


def test_capacity_from_cpu_capacity_and_explicit_value():
    doc = scenario([deployment(2, cpu="500m"), cpu_hpa()], {"rps": {"constant": 100}}, duration="1m",
                   workload={"cpu": {"base": "200m", "signal": "rps", "per": "2m"}, "cpuCapacity": "1",
                             "demand": "rps"})
    sc = run(doc).scenario
    assert capacity_of(sc.workloads[0]) == Capacity(500.0, 100.0, "cpuCapacity")  # 1000m / 2m, 200m / 2m
    doc["workload"]["capacityPerReplica"] = 150
    sc = run(doc).scenario
    assert capacity_of(sc.workloads[0]) == Capacity(150.0, source="capacityPerReplica")
    assert Capacity(150.0).of(3) == 450.0


def test_capacity_follows_the_cpu_model_limit_then_cpu_capacity_then_request():
    # The pod saturates where the workload model stops giving it CPU; that ceiling is its capacity.
    def capacity(limits, cpu_capacity=None):
        d = deployment(2, cpu="500m")
        if limits is not None:
            d["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] = {"cpu": limits}
        workload = {"cpu": {"signal": "rps", "per": "1m"}, "demand": "rps", "startup": "0s"}
        if cpu_capacity is not None:
            workload["cpuCapacity"] = cpu_capacity
        res = run(scenario([d, cpu_hpa()], {"rps": {"constant": 3000}}, duration="30s", workload=workload))
        return res, res.workloads[res.hpas[0].target].capacity

    res, cap = capacity("800m")
    assert (cap.per_replica, cap.source) == (800.0, "CPU limit")
    # the same model throttles the usage the HPA sees: 3000m over 2 pods, each at its 800m limit
    assert list(res.workloads[res.hpas[0].target].ready_pod_cpu)[:1] == [800.0]
    assert capacity("800m", "600m")[1] == Capacity(600.0, 0.0, "cpuCapacity")  # the lower bound wins
    assert capacity("800m", "1")[1] == Capacity(800.0, 0.0, "CPU limit")
    cap = capacity(None, "700m")[1]
    assert (cap.per_replica, cap.source) == (pytest.approx(700.0), "cpuCapacity")
    res, cap = capacity(None)
    assert (cap.per_replica, cap.source) == (500.0, "CPU request")  # the documented request ceiling
    assert list(res.workloads[res.hpas[0].target].ready_pod_cpu)[:1] == [1500.0]  # usage itself is not capped


def test_bad_cpu_limit_names_the_field():
    from pyhpa.sim.scenario import ScenarioError

    d = deployment(2)
    d["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "lots"}
    with pytest.raises(ScenarioError, match=r"containers\[0\]\.resources\.limits\.cpu: Invalid value"):
        run(scenario([d, cpu_hpa()], {"load": {"constant": 1}}))


def test_warning_when_capacity_per_replica_disagrees_with_the_cpu_model():
    from pyhpa.sim.capacity import capacity_warnings
    from pyhpa.sim.scenario import parse_scenario
    import yaml

    def warnings(capacity_per_replica, target=70, cpu_capacity="1500m"):
        workload = {"cpu": {"signal": "rps", "per": "1500u"}, "cpuCapacity": cpu_capacity, "demand": "rps",
                    "capacityPerReplica": capacity_per_replica}
        hpa = cpu_hpa(target=target if isinstance(target, int) else 50)
        if not isinstance(target, int):
            hpa["spec"]["metrics"][0]["resource"]["target"] = target
        doc = scenario([deployment(2, cpu="500m"), hpa], {"rps": {"constant": 100}}, workload=workload)
        sc = parse_scenario(yaml.safe_dump(doc), "test.yaml")
        return capacity_warnings(sc, sc.hpas)

    # at 70 % of 500m a pod uses 350m: 233 rps by the CPU map; 150 would flag a met target
    [w] = warnings(150)
    assert "capacityPerReplica 150 rps of Deployment/web is below" in w and "233.3 rps at 350m" in w
    assert warnings(240) == []
    [w] = warnings(2000)  # a saturated pod (1500m) serves 1000 rps
    assert "is above what a saturated pod serves" in w and "1000 rps at 1500m, its cpuCapacity" in w
    [w] = warnings(380, target=120, cpu_capacity="550m")  # 600m at the target, saturating at 550m
    assert "120% CPU target (600m per pod) is above where a pod of Deployment/web saturates (550m" in w
    # an AverageValue CPU target: 300m per pod serves 200 rps
    [w] = warnings(150, target={"type": "AverageValue", "averageValue": "300m"})
    assert "below what a pod serves at the 300m CPU target by the CPU model (200 rps at 300m)" in w


def test_demand_steps_rule():
    times = [15.0 * i for i in range(10)]
    # 100 -> ramp 130, 160, 200 (ticks 2..4), plateau, a dip to 120, then 132 and 150: above 120 %
    # of the lowest demand of the 5 minutes before (100) and rising: a second step, from 120.
    demand = [100, 100, 130, 160, 200, 200, 120, 132, 150, 150]
    found = demand_steps(times, demand, 0.2, 300.0)
    assert [(s["first"], s["last"], s["from"], s["to"]) for s in found] == [(2, 4, 100, 200), (7, 8, 120, 150)]
    assert demand_steps(times[:4], [100, 100, 110, 119], 0.2, 300.0) == []  # +19 %: no step
    assert len(demand_steps(times[:4], [0, 0, 0, 1], 0.2, 300.0)) == 1  # from zero, any rise
    # Ready capacity short at ticks 3..5: from tick 2 until tick 6 covers demand again.
    covered = [True, True, True, False, False, False, True, True, True, True]
    assert seconds_to_capacity(times, covered, found[0]) == 60.0
    assert seconds_to_capacity(times, covered, found[1]) == 0.0  # covered all through its rise
    assert seconds_to_capacity(times, [True] * 8 + [False] * 2, found[1]) is None  # never caught up
    # The window: a 30 % rise spread over 10 minutes is no step with a 5-minute window.
    slow = [100 + 30 * i / 40 for i in range(41)]
    assert demand_steps([15.0 * i for i in range(41)], slow, 0.2, 300.0) == []
    assert len(demand_steps([15.0 * i for i in range(41)], slow, 0.2, 900.0)) == 1


def test_summary_reports_time_from_each_demand_step():
    # The startup-delay scenario (see test_summary_of_a_startup_delay_run) with a small first step:
    # 1000 -> 1080 at 30 s (8 %: inside the HPA's tolerance, no scaling; capacity 2 x 1000 covers it),
    # 1080 -> 3000 at 60 s: 2 Ready pods (2000) until 4 are Ready at 195 s.
    doc = scenario([deployment(2, cpu="1000m"), cpu_hpa()], {"load": steps(1000, ("30s", 1080), ("1m", 3000))},
                   workload={"startup": "120s", "termination": "0s", "cpu": {"signal": "load", "per": "1m"}},
                   summary={"demandStepRise": "5%", "demandStepWithin": "5m"})
    s = summarize(run(doc))[0]
    assert [(d["offsetSeconds"], d["from"], d["to"], d["secondsToCapacity"]) for d in s["demandSteps"]] == [
        (30, 1000, 1080, 0), (60, 1080, 3000, 135)]
    assert (s["demandStepCount"], s["maxSecondsFromStepToCapacity"], s["meanSecondsFromStepToCapacity"]) == (2, 135, 67.5)
    # the per-episode figures stay: one episode, 60 s .. 195 s
    assert [(e["offsetSeconds"], e["secondsToCapacity"]) for e in s["timeToCapacity"]] == [(60, 135)]
    # With the default rule (a rise of more than 20 %) the 8 % rise is no step.
    del doc["summary"]
    s = summarize(run(doc))[0]
    assert [(d["offsetSeconds"], d["secondsToCapacity"]) for d in s["demandSteps"]] == [(60, 135)]


@pytest.mark.parametrize("summary, message", [
    ({"demandStepRise": 0}, "summary.demandStepRise: Invalid value"),
    ({"demandStepRise": "x%"}, "summary.demandStepRise: Invalid value"),
    ({"demandStepWithin": "-1m"}, "summary.demandStepWithin: Invalid value"),
    ({"other": 1}, "summary.other: unknown field"),
])
def test_summary_options_are_checked(summary, message):
    from pyhpa.sim.scenario import ScenarioError

    doc = scenario([deployment(2), cpu_hpa()], {"load": {"constant": 1}}, summary=summary)
    with pytest.raises(ScenarioError, match=message):
        run(doc)


def test_simulate_prints_the_capacity_warning_and_puts_it_in_the_report(tmp_path):
    import yaml
    from typer.testing import CliRunner

    from pyhpa.cli import app

    workload = {"cpu": {"signal": "rps", "per": "1500u"}, "cpuCapacity": "750m", "demand": "rps",
                "capacityPerReplica": 150, "startup": "0s"}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario([deployment(2, cpu="500m"), cpu_hpa(target=70)],
                                            {"rps": {"constant": 100}}, duration="1m", workload=workload)))
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", str(tmp_path / "out"), "--timeline", "none"])
    assert result.exit_code == 0, result.output
    assert "warning: HPA default/web: capacityPerReplica 150 rps of Deployment/web is below" in result.stderr
    assert "capacityPerReplica 150 rps of Deployment/web is below" in (tmp_path / "out" / "report.html").read_text()


def test_time_to_capacity_is_not_reached_when_demand_simply_falls(tmp_path):
    # 2 pods of 500 rps (capacityPerReplica), maxReplicas 2: a 3 min spike to 1500 rps cannot be
    # served; capacity stays at 1000 and the episode ends only because demand falls back to 800.
    doc = scenario([deployment(2), cpu_hpa(target=50, min_replicas=2, max_replicas=2)],
                   {"rps": steps(800, ("2m", 1500), ("5m", 800))}, duration="8m",
                   workload={"startup": "30s", "termination": "0s", "cpu": {"signal": "rps", "per": "0.5m"},
                             "demand": "rps", "capacityPerReplica": 500})
    [s] = summarize(run(doc))
    [episode] = s["timeToCapacity"]
    assert (episode["offsetSeconds"], episode["durationSeconds"]) == (120, 180)
    assert (episode["secondsToCapacity"], episode["capacityReached"]) == (None, False)
    assert (s["maxSecondsToCapacity"], s["timeToCapacityNotReached"]) == (None, 1)
    assert [d["secondsToCapacity"] for d in s["demandSteps"]] == [None]
    from pyhpa.sim.report import summary_table

    header, _, row = summary_table([s]).splitlines()
    cells = dict(zip(header.split(" | "), row.split(" | ")))
    assert cells["max s to capacity"] == cells["mean s to capacity"] == "not reached"
    # With room to scale, the same spike is met by new pods: reached, with its seconds.
    doc["objects"][1]["spec"]["maxReplicas"] = 10
    [s] = summarize(run(doc))
    assert [(e["capacityReached"], e["secondsToCapacity"] is not None) for e in s["timeToCapacity"]] == [(True, True)]
    assert s["timeToCapacityNotReached"] == 0
