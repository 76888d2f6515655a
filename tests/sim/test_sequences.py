"""Exact replica sequences on hand-computed scenarios.

Common setup (tests/sim/scenarios.py): Deployment with 500m CPU requests, HPA on CPU 50 %,
metrics-server resolution = window = sync period = 15 s, syncs at 15, 30, ... s. The load is a
CPU total shared by Ready pods. A scrape at t covers [t-15, t]; pods created by a sync at t get
their first full window at t+30 (scrapes t+15 and t+30).
"""

from __future__ import annotations

from tests import builders
from tests.sim.scenarios import cpu_hpa, deployment, replica_changes, run, scenario, steps


def test_step_load_default_behavior_legacy_path():
    # 2 pods at 250m (50 %). Step to 2000m at 120 s, seen by the scrape at 135:
    # 135: 200 % -> ratio 4 -> 8, legacy limit max(2*2, 4) = 4.
    # 150: 2 new pods have no metrics (ratio > 1: counted as 0) -> 1000/2000 = 50 % -> keep 4;
    #      but the legacy stabilization takes the max recommendation of 5 min (8 at 135) -> 8.
    # then 8 pods x 250m = 50 %: stays.
    res = run(scenario([deployment(2), cpu_hpa()], {"load": steps(500, ("2m", 2000))}))
    assert replica_changes(res) == [(0, 2), (135, 4), (150, 8)]
    assert len(res.hpas[0].records) == 41  # the start, then 40 syncs
    rows = res.hpas[0].rows
    assert rows[9]["metrics"][0] == {"metric": "cpu", "current": 200, "target": 50, "unit": "%"}
    assert rows[9]["conditions"]["ScalingLimited"] == {"status": "True", "reason": "ScaleUpLimit"}
    assert [e.new for e in res.hpas[0].scale_events] == [4, 8]


def test_scale_down_stabilization_window():
    # 8 pods x 250m = 50 %; load halves at 120 s -> 25 % from the 135 scrape -> proposal 4.
    # Behavior path: scale down to the highest recommendation strictly inside the window.
    load = {"load": steps(2000, ("2m", 1000))}
    short = cpu_hpa(behavior={"scaleDown": {"stabilizationWindowSeconds": 60}})
    res = run(scenario([deployment(8), short], load))
    # 165: the 8 recommended at 120 is still inside (105, 165]; 180: only 4s remain.
    assert replica_changes(res) == [(0, 8), (180, 4)]
    # Without a window in the manifest the controller flag (5 min) applies: the last 8 was at
    # 120, so 420 is the first sync whose window (120, 420] holds only 4s.
    res = run(scenario([deployment(8), cpu_hpa(behavior={"scaleUp": {}})], load))
    assert replica_changes(res) == [(0, 8), (420, 4)]
    row = res.hpas[0].rows[11]  # 165 s (row 0 is the start): held back
    assert row["conditions"]["AbleToScale"]["reason"] == "ScaleDownStabilized"
    assert row["desiredReplicas"] == 8


def _policy_hpa(select: str) -> dict:
    return cpu_hpa(max_replicas=20, behavior={"scaleUp": {
        "stabilizationWindowSeconds": 0, "selectPolicy": select,
        "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60},
                     {"type": "Percent", "value": 100, "periodSeconds": 60}]}})


def test_scale_up_policies_select_max_and_min():
    # Load 20000m from 60 s: every pass proposes far above 20, so only the policies limit.
    # A scale event at t counts for passes in (t, t+60): the next step is at t+60.
    load = {"load": steps(500, ("1m", 20000))}
    res = run(scenario([deployment(2), _policy_hpa("Max")], load))
    # Max: max(start+1, 2*start): 2 -> 4 -> 8 -> 16 -> 20 (maxReplicas)
    assert replica_changes(res) == [(0, 2), (75, 4), (135, 8), (195, 16), (255, 20)]
    res = run(scenario([deployment(2), _policy_hpa("Min")], load))
    # Min: min(start+1, 2*start): one pod per minute.
    assert replica_changes(res) == [(0, 2)] + [(75 + 60 * k, 3 + k) for k in range(9)]
    limited = res.hpas[0].rows[6]  # 90 s: inside the period of the +1 at 75
    assert limited["replicas"] == 3 and limited["conditions"]["ScalingLimited"]["reason"] == "ScaleUpLimit"


def test_scale_down_policies_select_max_and_min():
    # 10 pods at 50 %, load drops to 100m at 60 s: proposal 1 from the 75 scrape (2 % of 500m).
    def hpa(select):
        return cpu_hpa(behavior={"scaleDown": {
            "stabilizationWindowSeconds": 0, "selectPolicy": select,
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60},
                         {"type": "Percent", "value": 50, "periodSeconds": 60}]}})
    load = {"load": steps(2500, ("1m", 100))}
    # Max (largest change) = min(10-1, int(10*0.5)) = 5, then one period later int(5*0.5) = 2, then 1.
    res = run(scenario([deployment(10), hpa("Max")], load))
    assert replica_changes(res) == [(0, 10), (75, 5), (135, 2), (195, 1)]
    # Min (smallest change) = max(10-1, 5) = 9, then 8, 7, ... one per minute.
    res = run(scenario([deployment(10), hpa("Min")], load))
    assert replica_changes(res) == [(0, 10)] + [(75 + 60 * k, 9 - k) for k in range(9)]


def test_startup_delay_and_unready_pods():
    # Requests 1000m, target 50 %, 2 pods at 500m. Load 3000m from 60 s; pods take 120 s to be Ready
    # (their CPU while starting is 0). Legacy path.
    # 75: 150 % -> ratio 3 -> 6, limit max(2*2, 4) = 4.
    # 90: 2 new pods have no metrics: counted 0 -> 3000/4000 = 75 % -> ceil(1.5*4) = 6, limit 8 -> 6.
    # 105..: the 75-pods report 0m but are unready (Ready=False): with ratio > 1 they count as 0,
    #      3000/6000 = 50 % -> within tolerance -> 6 (an HPA trusting them would ask for 18).
    # 195/210: the new pods turn Ready; metrics from their first Ready window onward.
    doc = scenario([deployment(2, cpu="1000m"), cpu_hpa()], {"load": steps(1000, ("1m", 3000))},
                   workload={"startup": "120s", "termination": "0s", "cpu": {"signal": "load", "per": "1m"}})
    res = run(doc)
    assert replica_changes(res) == [(0, 2), (75, 4), (90, 6)]
    ready = {rec.t - res.scenario.start: rec.ready for rec in res.hpas[0].records}
    assert (ready[180], ready[195], ready[210]) == (2, 4, 6)
    metrics = {rec["offsetSeconds"]: rec["metrics"][0]["current"] for rec in res.hpas[0].rows}
    # Reported utilization is over the pods that count (Ready ones): 150 % until new pods are Ready.
    assert metrics[105] == 150 and metrics[225] == 50


def test_scale_to_zero_on_external_metric():
    # Queue workers: External metric = queue length, AverageValue 10 per pod, minReplicas 0.
    # 3 pods, queue 30 (ratio 1). Queue empty at 120 s -> ceil(0/10) = 0, scale-down window 0.
    # At 0 replicas the controller keeps computing (ScaledToZero=True); queue 50 at 480 s:
    # ceil(50/10) = 5, scale-up policy max(0+4, 0*2) = 4; 495: 50/(10*4) -> 5.
    hpa = builders.hpa("worker", min_replicas=0, behavior={"scaleDown": {"stabilizationWindowSeconds": 0}},
                       metrics=[builders.external_metric("queue_messages", average_value="10",
                                                         selector={"matchLabels": {"queue": "jobs"}})])
    doc = scenario([deployment(3, name="worker"), hpa], {"queue": steps(30, ("2m", 0), ("8m", 50))},
                   workload={"startup": "0s", "termination": "30s",
                             "metrics": {"queue_messages": {"signal": "queue", "labels": {"queue": "jobs"}}}})
    res = run(doc)
    assert replica_changes(res) == [(0, 3), (120, 0), (480, 4), (495, 5)]
    rows = {r["offsetSeconds"]: r for r in res.hpas[0].rows}
    assert rows[300]["conditions"]["ScaledToZero"] == {"status": "True", "reason": "ScaledToZero"}
    assert rows[300]["conditions"]["ScalingActive"]["status"] == "True"
    assert rows[300]["metrics"][0]["current"] == 0


def test_metrics_outage_holds_the_replica_count():
    # Resource metrics unavailable from 2m to 4m; the load steps up at 150 s, inside the outage.
    # No scaling while metrics are missing; at 240 the same steps as the plain step test follow.
    doc = scenario([deployment(2), cpu_hpa()], {"load": steps(500, ("150s", 2000))},
                   outages=[{"from": "2m", "to": "4m", "metrics": ["resource"]}])
    res = run(doc)
    assert replica_changes(res) == [(0, 2), (240, 4), (255, 8)]
    rows = {r["offsetSeconds"]: r for r in res.hpas[0].rows}
    assert rows[180]["conditions"]["ScalingActive"] == {"status": "False", "reason": "FailedGetResourceMetric"}
    assert any("FailedGetResourceMetric" in e for e in rows[180]["events"])
    assert rows[180]["metrics"][0]["current"] is None
    assert rows[240]["conditions"]["ScalingActive"]["status"] == "True"
