"""KEP-5053's whole-HPA fallback in `pyhpa simulate`: a metrics outage under an HPA with
`behavior.fallback`, hand-computed (setup of tests/sim/scenarios.py: 2 pods at 50 % of 500m,
CPU target 50 %, a sync every 15 s)."""

from __future__ import annotations

from tests.sim.scenarios import cpu_hpa, deployment, replica_changes, run, scenario, steps


def test_outage_scales_to_the_fallback_after_the_threshold():
    # Resource metrics are down from 2m to 4m: the syncs at 120, 135, 150 fail (count 1..3, not
    # above failureThreshold 3); at 165 the count is 4 > 3, so fallback.replicas 6 replaces the
    # recommendation: scale-up limit max(2 + 4, 2 x 2) = 6 lets it through, 2 -> 6.
    hpa = cpu_hpa(behavior={"fallback": {"replicas": 6}})
    doc = scenario([deployment(2), hpa], {"load": steps(500, ("4m", 500))}, duration="5m",
                   outages=[{"from": "2m", "to": "4m", "metrics": ["resource"]}])
    res = run(doc)
    assert replica_changes(res)[:2] == [(0, 2), (165, 6)]
    rows = {r["offsetSeconds"]: r for r in res.hpas[0].rows}
    assert rows[105]["conditions"]["FallbackActive"] == {
        "status": "False", "reason": "SucceededToComputeDesiredReplicas"}
    assert rows[150]["conditions"]["FallbackActive"] == {"status": "False", "reason": "FallbackThresholdNotReached"}
    assert rows[165]["conditions"]["FallbackActive"] == {"status": "True", "reason": "FallbackThresholdReached"}
    assert any("FallbackThresholdReached" in e for e in rows[165]["events"])
    assert not any("FallbackThresholdReached" in e for e in rows[180]["events"])  # once, on activation
    # Metrics back at 240: the count is reset, the fallback is over (the window keeps the 6).
    assert rows[240]["conditions"]["FallbackActive"]["reason"] == "SucceededToComputeDesiredReplicas"
    assert rows[240]["replicas"] == 6


def test_without_the_fallback_the_outage_holds():
    doc = scenario([deployment(2), cpu_hpa(behavior={"scaleUp": {}})], {"load": steps(500, ("4m", 500))}, duration="5m",
                   outages=[{"from": "2m", "to": "4m", "metrics": ["resource"]}])
    res = run(doc)
    assert replica_changes(res) == [(0, 2)]
    assert all("FallbackActive" not in r["conditions"] for r in res.hpas[0].rows)


def test_gate_off_ignores_the_fallback():
    doc = scenario([deployment(2), cpu_hpa(behavior={"fallback": {"replicas": 6}})], {"load": steps(500, ("4m", 500))},
                   duration="5m", outages=[{"from": "2m", "to": "4m", "metrics": ["resource"]}],
                   controller={"feature-gates": "HPAFallback=false"})
    assert replica_changes(run(doc)) == [(0, 2)]


def test_the_threshold_counts_syncs_so_a_shorter_sync_period_falls_back_sooner():
    # KEP-6003 with KEP-5053: web syncs every 5 s, api every 15 s (the flag); metrics (resolution 5 s)
    # are down from 60 s. The 4th failed sync in a row is at 60, 65, 70, 75 -> 75 s for web and at
    # 60, 75, 90, 105 -> 105 s for api: both go 2 -> 6 there.
    fb = {"replicas": 6}
    doc = scenario([deployment(2), deployment(2, name="api"),
                    cpu_hpa(behavior={"syncPeriodSeconds": 5, "fallback": fb}),
                    cpu_hpa(name="api", behavior={"fallback": fb})],
                   {"load": steps(500, ("4m", 500))}, duration="2m",
                   outages=[{"from": "1m", "to": "2m", "metrics": ["all"]}])
    doc["metrics"] = {"resolution": "5s", "window": "5s"}
    res = run(doc)
    runs = {r.name: i for i, r in enumerate(res.hpas)}
    assert replica_changes(res, runs["default/web"]) == [(0, 2), (75, 6)]
    assert replica_changes(res, runs["default/api"]) == [(0, 2), (105, 6)]
