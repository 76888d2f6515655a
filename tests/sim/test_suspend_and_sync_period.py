"""The simulator honours KEP-3428 suspend and KEP-6003 per-HPA sync periods.

Setup of tests/sim/scenarios.py: 500m requests, CPU target 50 %, resolution = window = 15 s.
"""

from __future__ import annotations

from tests.sim.scenarios import cpu_hpa, deployment, replica_changes, run, scenario, steps

SUSPEND = "autoscaling.kubernetes.io/suspend"


def test_a_suspended_hpa_never_scales_and_says_why():
    # 8 pods x 250m = 50 %; the load halves at 120 s (proposal 4) and then quadruples at 300 s
    # (proposal 16): a suspended HPA follows neither.
    load = {"load": steps(2000, ("2m", 1000), ("5m", 8000))}
    hpa = cpu_hpa(max_replicas=20)
    hpa["metadata"]["annotations"] = {SUSPEND: "true"}
    res = run(scenario([deployment(8), hpa], load))
    assert replica_changes(res) == [(0, 8)]
    rows = res.hpas[0].rows
    assert len(rows) == 41 and res.hpas[0].scale_events == []
    for row in rows[1:]:
        assert row["conditions"]["ScalingActive"] == {"status": "False", "reason": "Suspended"}
        assert row["desiredReplicas"] == 8
    # The same HPA without the annotation: the drop is held by the 5 min legacy window, the rise
    # is followed (200 % -> 32, limit 2 x 8 = 16; then 100 % at 16 -> 32, maxReplicas 20).
    del hpa["metadata"]["annotations"]
    assert [n for _, n in replica_changes(run(scenario([deployment(8), hpa], load)))] == [8, 16, 20]


def _two_hpas(**extra):
    """web: syncPeriodSeconds 5; api: the global 15 s, and `behavior: {}` so that both take the
    behavior path with default rules (a behavior holding only syncPeriodSeconds is defaulted like
    any other). Both Deployments 2 x 250m (50 %); the load (each Deployment's CPU total) steps to
    2000m at 60 s; metrics resolution = window = 5 s."""
    fast = cpu_hpa(behavior={"syncPeriodSeconds": 5})
    plain = cpu_hpa(name="api", behavior={})
    doc = scenario([deployment(2), deployment(2, name="api"), fast, plain], {"load": steps(500, ("1m", 2000))},
                   duration="2m", **extra)
    doc["metrics"] = {"resolution": "5s", "window": "5s"}
    return doc


def _run_of(result, name):
    return next(i for i, r in enumerate(result.hpas) if r.name == f"default/{name}")


def test_each_hpa_syncs_at_its_own_period():
    # The scrape at 65 s covers [60, 65]: 1000m per pod = 200 % -> 8, limited by the default
    # scale-up policies to max(2 + 4 pods, 2 x 100 %) = 6. web syncs at 65 and scales then; api
    # syncs at 60 (before the step) and 75.
    res = run(_two_hpas())
    web, api = _run_of(res, "web"), _run_of(res, "api")
    assert [r.t - res.scenario.start for r in res.hpas[web].records][:4] == [0, 5, 10, 15]
    assert len(res.hpas[web].records) == 1 + 24 and len(res.hpas[api].records) == 1 + 8
    assert replica_changes(res, web)[:2] == [(0, 2), (65, 6)]
    assert replica_changes(res, api)[:2] == [(0, 2), (75, 6)]
    assert res.reconciles == 24 + 8


def test_the_gate_off_ignores_sync_period_seconds():
    res = run(_two_hpas(controller={"feature-gates": "HPAConfigurableSyncPeriod=false"}))
    web, api = _run_of(res, "web"), _run_of(res, "api")
    assert len(res.hpas[web].records) == len(res.hpas[api].records) == 1 + 8
    assert replica_changes(res, web)[:2] == replica_changes(res, api)[:2] == [(0, 2), (75, 6)]


def test_stabilization_keeps_its_meaning_at_a_shorter_period():
    # Upstream's code (not the KEP's reversed wording): scale-down takes the highest recommendation
    # of the window. 8 pods x 250m (50 %); the load halves at 120 s; with 5 s scrapes the last 8 is
    # recommended at 120 and the first 4 at 125 (web) or 135 (api). A 62 s window drops the 8 at
    # the first sync t with t - 62 >= 120: 185 on a 5 s grid, 195 on the 15 s one.
    down = {"scaleDown": {"stabilizationWindowSeconds": 62}}
    doc = scenario([deployment(8), deployment(8, name="api"),
                    cpu_hpa(behavior={**down, "syncPeriodSeconds": 5}), cpu_hpa(name="api", behavior=down)],
                   {"load": steps(2000, ("2m", 1000))}, duration="5m")
    doc["metrics"] = {"resolution": "5s", "window": "5s"}
    res = run(doc)
    assert replica_changes(res, _run_of(res, "web")) == [(0, 8), (185, 4)]
    assert replica_changes(res, _run_of(res, "api")) == [(0, 8), (195, 4)]
