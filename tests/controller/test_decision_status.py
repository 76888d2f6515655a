"""KEP-6107's `status.lastScaleDecision` as the reconcile writes it (HPAStatusDecisionTrace).

Hand-computed: 5 pods of 1 CPU at 500m each against a 50 % CPU target give ratio 1.0: held
by tolerance at 5. At 100m each they propose ceil(5 * 0.10 / 0.50) = 1, which the legacy
300 s scale-down window (holding the 5 of the first pass) stabilizes at 5.
"""

from __future__ import annotations

from dataclasses import replace

from pyhpa.controller.reconcile import reconcile_hpa, run_sync

from .builders import CONFIG, NOW, cluster, cpu_metric, hpa, later, web_metrics

GATED = replace(CONFIG, gates=replace(CONFIG.gates, status_decision_trace=True))


def run(c, config=GATED, now=NOW):
    return run_sync(reconcile_hpa(c.hpas["ns/web"], c.ports(), config, now))


def test_written_once_kept_while_it_means_the_same_rewritten_on_a_new_reason():
    c = cluster([hpa([cpu_metric(50)])], 5, [500] * 5)
    r = run(c)
    d = r.status.last_scale_decision
    assert r.status_written and d is not None
    assert (d.time, d.current_replicas, d.recommended_replicas, d.desired_replicas) == (NOW, 5, 5, 5)
    assert (d.reason, d.constraints) == ("WithinTolerance", ["Tolerance"])
    assert [(m.metric_index, m.proposed_replicas, m.status, m.reason) for m in d.metrics] == [(0, 5, "Used", "Computed")]

    r = run(c, now=later(15))  # the same decision: nothing written, the first pass's time kept
    assert not r.status_written
    assert c.hpas["ns/web"].status.last_scale_decision == d

    c.set_pod_metrics([web_metrics(i, 100, timestamp=later(30)) for i in range(5)])
    r = run(c, now=later(30))
    d2 = c.hpas["ns/web"].status.last_scale_decision
    assert r.status_written and r.desired_replicas == 5
    assert (d2.time, d2.recommended_replicas, d2.reason, d2.constraints) == (later(30), 1, "Stabilized", ["Stabilization"])


def test_without_the_gate_there_is_none_and_a_stored_one_is_dropped():
    c = cluster([hpa([cpu_metric(50)])], 5, [500] * 5)
    assert run(c, config=CONFIG).status.last_scale_decision is None
    assert run(c, now=later(15)).status.last_scale_decision is not None
    r = run(c, config=CONFIG, now=later(30))
    assert r.status_written and c.hpas["ns/web"].status.last_scale_decision is None
