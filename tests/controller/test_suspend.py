"""KEP-3428 suspend: the annotation stops calculation and scaling; the memory survives the resume.

Hand-computed: 5 pods of 1 CPU at 100m each against a 50 % CPU target propose
ceil(5 * 0.10 / 0.50) = 1; the legacy scale-down window is the flag's 300 s.
"""

from __future__ import annotations

from datetime import timedelta

import msgspec

from pyhpa.controller.reconcile import reconcile_hpa, run_sync
from pyhpa.controller.suspend import MSG_SUSPENDED, SUSPEND_ANNOTATION, is_suspended
from pyhpa.engine.state import AutoscalerState, Recommendation

from .builders import CONFIG, NOW, cluster, conds, cpu_metric, hpa, later


def run(c, now=NOW, key="ns/web"):
    return run_sync(reconcile_hpa(c.hpas[key], c.ports(), CONFIG, now))


def annotate(c, value, key="ns/web"):
    """What `kubectl annotate` does to the stored HPA (None removes the annotation)."""
    h = c.hpas[key]
    ann = dict(h.metadata.annotations or {})
    if value is None:
        ann.pop(SUSPEND_ANNOTATION, None)
    else:
        ann[SUSPEND_ANNOTATION] = value
    c.hpas[key] = msgspec.structs.replace(h, metadata=msgspec.structs.replace(h.metadata, annotations=ann or None))


def workload_replicas(c):
    return c.workloads[("ns", "Deployment", "web")].spec.replicas


def test_suspend_during_a_scale_down_window_then_resume_keeps_the_window():
    # The controller remembers 5 recommended a minute ago; the load has dropped to 1's worth.
    memory = AutoscalerState([Recommendation(5, NOW - timedelta(seconds=60))])
    c = cluster([hpa([cpu_metric(50)])], 5, [100] * 5, states={"ns/web": memory})
    annotate(c, "true")

    r = run(c)  # suspended: nothing computed, nothing scaled, nothing remembered
    assert (r.rescaled, r.desired_replicas, r.action, r.error) == (False, 5, "none", None)
    assert workload_replicas(c) == 5
    assert conds(r.status) == [("AbleToScale", "True", "SucceededGetScale"), ("ScalingActive", "False", "Suspended")]
    active = r.status.conditions[1]
    assert (active.message, active.last_transition_time) == (MSG_SUSPENDED, NOW)
    st = r.status
    assert (st.current_replicas, st.desired_replicas, st.current_metrics, st.last_scale_time) == (5, 5, None, None)
    assert c.state_store.get("ns/web") == memory  # untouched: no recommendation of this pass
    assert c.events == []
    assert r.trace.branch == "suspended"
    assert "scaling is suspended by the autoscaling.kubernetes.io/suspend annotation" in r.trace.explain()

    r = run(c, now=later(60))  # still suspended a minute later: the same status, not written again
    assert (r.status_written, workload_replicas(c)) == (False, 5)

    annotate(c, None)  # resume at +120 s: the 5 of -60 s is inside the 300 s window
    r = run(c, now=later(120))
    assert (r.trace.proposal, r.desired_replicas, r.rescaled) == (1, 5, False)
    assert ("AbleToScale", "True", "ScaleDownStabilized") in conds(r.status)
    assert ("ScalingActive", "True", "ValidMetricFound") in conds(r.status)
    assert [(x.replicas, x.timestamp) for x in r.state.recommendations] == [(5, NOW - timedelta(seconds=60)),
                                                                          (1, later(120))]
    # +240 s: cutoff -60 s, the 5 still counts (only samples before the cutoff drop out); +241 s: gone
    assert run(c, now=later(240)).desired_replicas == 5
    r = run(c, now=later(241))
    assert (r.desired_replicas, r.rescaled, workload_replicas(c)) == (1, True, 1)


def test_a_never_seen_hpa_suspended_first_records_nothing_until_resumed():
    c = cluster([hpa([cpu_metric(50)])], 5, [100] * 5)
    annotate(c, "true")
    r = run(c)
    assert r.state.recommendations is None and c.state_store.get("ns/web") is None
    annotate(c, "false")  # "false" syncs normally: the first real pass records the current 5
    r = run(c, now=later(30))
    assert (r.desired_replicas, [x.replicas for x in r.state.recommendations]) == (5, [5, 1])


def test_suspended_hpa_is_not_clamped_to_its_bounds_nor_disabled_at_zero():
    c = cluster([hpa([cpu_metric(50)], max_replicas=3)], 5, [100] * 5)
    annotate(c, "True")
    r = run(c)
    assert (r.desired_replicas, workload_replicas(c)) == (5, 5)
    c = cluster([hpa([cpu_metric(50)])], 0, [])
    annotate(c, "1")
    assert ("ScalingActive", "False", "Suspended") in conds(run(c).status)


def test_other_conditions_stay_as_the_last_pass_left_them():
    c = cluster([hpa([cpu_metric(50)], max_replicas=3)], 3, [900, 900, 900])  # wants 6, limited at 3
    r = run(c)
    assert ("ScalingLimited", "True", "TooManyReplicas") in conds(r.status)
    annotate(c, "true")
    r = run(c, now=later(15))
    assert conds(r.status) == [("AbleToScale", "True", "SucceededGetScale"), ("ScalingActive", "False", "Suspended"),
                            ("ScalingLimited", "True", "TooManyReplicas")]
    annotate(c, None)
    r = run(c, now=later(30))
    active = next(x for x in r.status.conditions if x.type == "ScalingActive")
    assert (active.status, active.reason, active.last_transition_time) == ("True", "ValidMetricFound", later(30))


def test_annotation_values():
    def with_value(v):
        h = hpa()
        h.metadata.annotations = None if v is None else {SUSPEND_ANNOTATION: v}
        return is_suspended(h)

    assert [with_value(v) for v in ("true", "True", "TRUE", "t", "1", " true ")] == [True] * 6
    assert [with_value(v) for v in (None, "false", "0", "", "yes", "suspend")] == [False] * 6
