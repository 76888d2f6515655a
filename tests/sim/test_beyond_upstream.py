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
