"""The per-HPA reconcile over the in-memory cluster: reconcileAutoscaler branch by branch, with the
conditions, events, status and returned errors upstream produces."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

import pytest

from pyhpa.api.features import FeatureGates
from pyhpa.api.types import (
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerCondition,
    HorizontalPodAutoscalerStatus,
    HPAScalingPolicy,
    HPAScalingRules,
    LabelSelector,
    MetricSpec,
)
from pyhpa.controller.reconcile import CoroutineSuspended, reconcile_hpa, run_sync
from pyhpa.engine.state import AutoscalerState, Recommendation, ScaleEvent

from .builders import (
    CONFIG,
    NOW,
    conds,
    cluster,
    cpu_metric,
    deployment,
    external_metric,
    external_values,
    hpa,
    later,
)

CPU_NAME = "cpu resource utilization (percentage of request)"


def run(c, key="ns/web", config=CONFIG, now=NOW):
    return run_sync(reconcile_hpa(c.hpas[key], c.ports(), config, now))


def events(c):
    return [(e.type, e.reason, e.message) for e in c.events]


# --------------------------------------------------------------------------- happy paths


def test_scale_up_on_cpu():
    # upstream's TestReplicaCalcScaleUp: usage 600/1000/1400 of 2000m requests... here one container of 1 CPU per pod
    c = cluster([hpa([cpu_metric(30)])], 3, [300, 500, 700])
    r = run(c)
    assert (r.error, r.rescaled, r.desired_replicas, r.action) == (None, True, 5, "scale_up")
    assert c.workloads[("ns", "Deployment", "web")].spec.replicas == 5
    st = r.status
    assert (st.current_replicas, st.desired_replicas, st.last_scale_time) == (3, 5, NOW)
    m = st.current_metrics[0]
    assert (m.type, m.resource.name, m.resource.current.average_utilization, str(m.resource.current.average_value)) == (
        "Resource", "cpu", 50, "500m",
    )
    assert conds(r.status) == [
        ("AbleToScale", "True", "SucceededRescale"),
        ("ScalingActive", "True", "ValidMetricFound"),
        ("ScalingLimited", "False", "DesiredWithinRange"),
        ("ScaledToZero", "False", "NotScaledToZero"),  # HPAScaleToZero is on by default in pyhpa
    ]
    assert r.status.conditions[0].message == "the HPA controller was able to update the target scale to 5"
    assert r.status.conditions[1].message == f"the HPA was able to successfully calculate a replica count from {CPU_NAME}"
    assert events(c) == [("Normal", "SuccessfulRescale", f"New size: 5; reason: {CPU_NAME} above target")]
    assert r.status_written and c.status_writes[-1].status.desired_replicas == 5


def test_gate_on_adds_not_scaled_to_zero_after_rescale():
    c = cluster([hpa([cpu_metric(30)])], 3, [300, 500, 700])
    r = run(c)
    assert ("ScaledToZero", "False", "NotScaledToZero") not in conds(r.status)[:3]
    assert conds(r.status)[-1] == ("ScaledToZero", "False", "NotScaledToZero")
    c = cluster([hpa([cpu_metric(30)])], 3, [300, 500, 700])
    r = run(c, config=replace(CONFIG, gates=FeatureGates(scale_to_zero=False)))
    assert [t for t, _, _ in conds(r.status)] == ["AbleToScale", "ScalingActive", "ScalingLimited"]


def test_scale_down_all_metrics_below_target_legacy_stabilization_holds():
    # never seen: the first recommendation is the current count, so the window holds at 5
    c = cluster([hpa([cpu_metric(50)])], 5, [100, 300, 500, 250, 250])
    r = run(c)
    assert (r.rescaled, r.desired_replicas) == (False, 5)
    assert ("AbleToScale", "True", "ScaleDownStabilized") in conds(r.status)
    assert r.trace.proposal == 3
    assert [s.kind for s in r.trace.steps] == ["stabilization"]
    assert [x.replicas for x in r.state.recommendations] == [5, 3]


def test_scale_down_with_empty_memory():
    c = cluster([hpa([cpu_metric(50)])], 5, [100, 300, 500, 250, 250], states={"ns/web": AutoscalerState([], [], [])})
    r = run(c)
    assert (r.rescaled, r.desired_replicas) == (True, 3)
    assert events(c) == [("Normal", "SuccessfulRescale", "New size: 3; reason: All metrics below target")]
    assert r.state.scale_down_events == ()  # no behavior: events are not stored


def test_legacy_stabilization_worked_example():
    # upstream's TestStabilizeDownscale: current 4, CPU gives 2, history {10 @ -10 min, 4 @ -1 min}
    state = AutoscalerState([Recommendation(10, NOW - timedelta(minutes=10)), Recommendation(4, NOW - timedelta(minutes=1))])
    c = cluster([hpa([cpu_metric(50)])], 4, [250, 250, 250, 250], states={"ns/web": state})
    r = run(c)
    assert (r.rescaled, r.desired_replicas, r.trace.proposal) == (False, 4, 2)
    assert conds(r.status)[0] == ("AbleToScale", "True", "ScaleDownStabilized")
    assert [x.replicas for x in r.state.recommendations] == [2, 4]
    assert "scale-down stabilized by window 300s: held at 4" in r.trace.explain()


def test_within_tolerance_no_change_and_no_second_write():
    c = cluster([hpa([cpu_metric(50)])], 3, [520, 500, 480])
    r1 = run(c)
    assert (r1.rescaled, r1.desired_replicas, r1.status_written) == (False, 3, True)
    assert conds(r1.status) == [
        ("AbleToScale", "True", "ReadyForNewScale"),
        ("ScalingActive", "True", "ValidMetricFound"),
        ("ScalingLimited", "False", "DesiredWithinRange"),
    ]
    # the same cluster 15 s later: nothing semantically changed, so no status write
    r2 = run(c, now=later(15))
    assert (r2.status_written, len(c.status_writes)) == (False, 1)
    assert r2.status.conditions[0].last_transition_time == NOW


def test_last_transition_time_moves_only_on_status_change():
    c = cluster([hpa([cpu_metric(50)])], 3, [520, 500, 480])
    run(c)
    c.set_pod_metrics([])
    r = run(c, now=later(15))
    by_type = {x.type: x for x in r.status.conditions}
    assert by_type["ScalingActive"].last_transition_time == later(15)
    assert by_type["AbleToScale"].last_transition_time == NOW  # True -> True, reason changed
    assert by_type["AbleToScale"].reason == "SucceededGetScale"


# --------------------------------------------------------------------------- branches 2 and 3


def test_above_max_scales_to_max_without_metrics():
    c = cluster([hpa([cpu_metric(50)], min_replicas=2, max_replicas=5)], 6, [8000, 9500, 1000])
    r = run(c)
    assert (r.desired_replicas, r.rescaled, r.action) == (5, True, "scale_down")
    assert conds(r.status)[:1] == [("AbleToScale", "True", "SucceededRescale")]
    assert "ScalingActive" not in [t for t, _, _ in conds(r.status)]
    assert r.status.current_metrics is None
    assert events(c) == [("Normal", "SuccessfulRescale", "New size: 5; reason: Current number of replicas above Spec.MaxReplicas")]


def test_below_min_scales_to_min():
    c = cluster([hpa([cpu_metric(50)], min_replicas=2, max_replicas=6)], 1, [0, 0, 0, 0])
    r = run(c)
    assert (r.desired_replicas, r.rescaled) == (2, True)
    assert events(c)[0][2] == "New size: 2; reason: Current number of replicas below Spec.MinReplicas"


# --------------------------------------------------------------------------- failures


def test_missing_target_is_failed_get_scale():
    c = cluster([hpa()], 3, [100], workloads=[])
    r = run(c)
    assert r.error == 'failed to query scale subresource for Deployment/ns/web: deployments.apps "web" not found'
    assert conds(r.status) == [("AbleToScale", "False", "FailedGetScale")]
    assert r.status.conditions[0].message == (
        'the HPA controller was unable to get the target\'s current scale: deployments.apps "web" not found'
    )
    assert events(c) == [("Warning", "FailedGetScale", 'deployments.apps "web" not found')]
    assert r.state.recommendations is None  # nothing recorded before the scale was read


def test_invalid_api_version_is_a_spec_error():
    c = cluster([hpa(api_version="apps/v1/extra")], 3, [100])
    r = run(c)
    assert r.error == "invalid API version in scale target reference: unexpected GroupVersion string: apps/v1/extra"
    assert r.error_kind == "spec"


def test_unknown_kind_is_a_mapping_error():
    c = cluster([hpa(kind="Widget", api_version="example.com/v1")], 3, [100])
    r = run(c)
    assert r.error == 'unable to determine resource for scale target reference: no matches for kind "Widget" in group "example.com"'
    assert conds(r.status) == [("AbleToScale", "False", "FailedGetScale")]


def test_missing_selector():
    c = cluster([hpa()], 3, [100, 100, 100], workloads=[deployment(3, labels=None)])
    r = run(c)
    assert r.error == "failed to compute desired number of replicas based on listed metrics for Deployment/ns/web: selector is required"
    assert conds(r.status) == [("AbleToScale", "True", "SucceededGetScale"), ("ScalingActive", "False", "InvalidSelector")]
    assert r.status.conditions[1].message == "the HPA target's scale is missing a selector"
    assert events(c) == [
        ("Warning", "SelectorRequired", "selector is required"),
        ("Warning", "FailedComputeMetricsReplicas", "selector is required"),
    ]


def test_ambiguous_selector():
    c = cluster([hpa(name="a"), hpa(name="b")], 3, [100, 100, 100])
    r = run(c, key="ns/a")
    msg = "pods by selector app=web are controlled by multiple HPAs: [ns/a ns/b]"
    assert ("ScalingActive", "False", "AmbiguousSelector") in conds(r.status)
    assert ("Warning", "AmbiguousSelector", msg) in events(c)
    assert r.error.endswith(msg)


def test_no_resource_metrics_condition_chain():
    c = cluster([hpa([cpu_metric(50)])], 3, [None, None, None])
    r = run(c)
    inner = "failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API"
    assert r.status.conditions[1].message == f"the HPA was unable to compute the replica count: {inner}"
    assert conds(r.status)[1] == ("ScalingActive", "False", "FailedGetResourceMetric")
    assert events(c) == [
        ("Warning", "FailedGetResourceMetric", inner),
        ("Warning", "FailedComputeMetricsReplicas", f"invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: {inner}"),
    ]
    assert r.status.desired_replicas == 0  # the previous desiredReplicas is kept
    assert r.status.current_metrics[0].type == ""  # the failed metric's empty entry


def test_invalid_metric_blocks_scale_down():
    # upstream's TestNoScaleDownOneMetricInvalid
    state = AutoscalerState([], [], [])
    c = cluster([hpa([cpu_metric(50), MetricSpec(type="CheddarCheese")], min_replicas=2, max_replicas=6)], 5,
                [100, 300, 500, 250, 250], states={"ns/web": state})
    r = run(c)
    assert (r.rescaled, r.status.current_replicas) == (False, 5)
    assert conds(r.status) == [("AbleToScale", "True", "SucceededGetScale"), ("ScalingActive", "False", "InvalidMetricSourceType")]
    assert r.error == (
        "failed to compute desired number of replicas based on listed metrics for Deployment/ns/web: "
        'invalid metrics (1 invalid out of 2), first error is: unknown metric source type "CheddarCheese"'
    )
    assert events(c)[0] == ("Warning", "InvalidMetricSourceType", 'unknown metric source type "CheddarCheese"')


def test_invalid_metric_allows_scale_up():
    # TestScaleUpOneMetricEmpty: CPU proposes 4, the external metric fails
    ext = external_metric("qps", value="100m", selector=LabelSelector())
    c = cluster([hpa([cpu_metric(30), ext], min_replicas=2, max_replicas=6)], 3, [300, 400, 500])
    r = run(c)
    assert (r.rescaled, r.desired_replicas) == (True, 4)
    assert conds(r.status)[1] == ("ScalingActive", "True", "ValidMetricFound")
    sel = "&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}"
    assert r.error == (
        "invalid metrics (1 invalid out of 2), first error is: failed to get qps external metric value: "
        f"failed to get external metric qps: unable to get external metric ns/qps/{sel}: "
        "no metrics returned from external metrics API"
    )
    assert r.error_kind == "internal"


def test_pod_list_error_is_a_hard_failure_without_condition():
    c = cluster([hpa()], 3, [100, 100, 100])
    c.pod_list_error = "pods is forbidden"
    r = run(c)
    assert r.error.endswith(": pods is forbidden")
    assert [t for t, _, _ in conds(r.status)] == ["AbleToScale"]


def test_rescale_conflicts_are_retried_with_the_same_count():
    c = cluster([hpa([cpu_metric(30)])], 3, [300, 500, 700])
    c.conflicts_to_raise = 2
    r = run(c)
    assert (r.error, r.rescaled) == (None, True)
    assert c.scale_updates == [("ns", "Deployment", "web", 5)]


def test_rescale_failure():
    c = cluster([hpa([cpu_metric(30)])], 3, [300, 500, 700])
    c.conflicts_to_raise = 5
    r = run(c)
    assert r.error.startswith('failed to rescale Deployment/ns/web: Operation cannot be fulfilled on deployments "web"')
    assert conds(r.status)[0] == ("AbleToScale", "False", "FailedUpdateScale")
    assert r.status.desired_replicas == 0 and r.status.last_scale_time is None
    assert events(c)[0][1] == "FailedRescale"
    assert events(c)[0][2].startswith("New size: 5; reason: cpu resource utilization (percentage of request) above target; error: ")
    c = cluster([hpa([cpu_metric(30)])], 3, [300, 500, 700])
    c.scale_update_error = "boom"
    r = run(c)
    assert r.error == "failed to rescale Deployment/ns/web: boom"


def test_status_write_failure():
    c = cluster([hpa([cpu_metric(30)])], 3, [300, 500, 700])
    c.status_update_error = "etcd unavailable"
    r = run(c)
    assert r.error == "failed to update status for web: etcd unavailable"
    assert events(c)[-1] == ("Warning", "FailedUpdateStatus", "etcd unavailable")
    assert r.rescaled  # the scale was updated before the status write


# --------------------------------------------------------------------------- behavior


def test_behavior_scale_up_policy_limit_and_events_stored():
    behavior = HorizontalPodAutoscalerBehavior(
        scale_up=HPAScalingRules(stabilization_window_seconds=0, select_policy="Max",
                                 policies=[HPAScalingPolicy(type="Pods", value=1, period_seconds=60)]),
    )
    c = cluster([hpa([cpu_metric(10)], behavior=behavior)], 3, [300, 500, 700])
    r = run(c)
    assert (r.desired_replicas, r.rescaled) == (4, True)
    assert ("ScalingLimited", "True", "ScaleUpLimit") in conds(r.status)
    assert r.state.scale_up_events == (ScaleEvent(1, NOW, False),)
    assert r.state.scale_down_events is None
    # 30 s later the policy allows nothing more: the up event is still in its period
    r = run(c, now=later(30))
    assert (r.desired_replicas, r.rescaled) == (4, False)
    assert ("ScalingLimited", "True", "ScaleUpLimit") in conds(r.status)


def test_behavior_default_scale_down_window_from_flag():
    behavior = HorizontalPodAutoscalerBehavior(scale_down=HPAScalingRules(select_policy="Max"))
    state = AutoscalerState([Recommendation(5, NOW - timedelta(seconds=100))], [], [])
    c = cluster([hpa([cpu_metric(50)], behavior=behavior)], 5, [100, 100, 100, 100, 100], states={"ns/web": state})
    r = run(c, config=replace(CONFIG, downscale_stabilization=60.0))
    assert (r.desired_replicas, r.rescaled) == (1, True)  # the 100 s-old 5 is outside a 60 s window
    r2 = run(cluster([hpa([cpu_metric(50)], behavior=behavior)], 5, [100] * 5, states={"ns/web": state}))
    assert (r2.desired_replicas, r2.rescaled) == (5, False)


def test_configurable_tolerance_from_behavior():
    behavior = HorizontalPodAutoscalerBehavior(scale_up=HPAScalingRules(tolerance=__import__("pyhpa.api.quantity", fromlist=["Quantity"]).Quantity.parse("0.5")))
    c = cluster([hpa([cpu_metric(50)], behavior=behavior)], 3, [650, 650, 650])  # 130 %: within +50 %
    assert run(c).desired_replicas == 3
    c = cluster([hpa([cpu_metric(50)], behavior=behavior)], 3, [650, 650, 650])
    r = run(c, config=replace(CONFIG, gates=FeatureGates(configurable_tolerance=False)))
    assert r.desired_replicas == 4


# --------------------------------------------------------------------------- scale to zero


def _stz(status: str) -> HorizontalPodAutoscalerStatus:
    return HorizontalPodAutoscalerStatus(
        desired_replicas=0,
        current_metrics=None,
        conditions=[HorizontalPodAutoscalerCondition(type="ScaledToZero", status=status, last_transition_time=NOW - timedelta(hours=1), reason="x", message="y")],
    )


def test_scale_to_zero_and_back():
    ext = external_metric("queue", value="10")
    c = cluster([hpa([ext], min_replicas=0)], 2, [0, 0], external=[external_values("queue", ["0"])],
                states={"ns/web": AutoscalerState([], [], [])})
    r = run(c)
    assert (r.desired_replicas, r.rescaled) == (0, True)
    assert conds(r.status)[-1] == ("ScaledToZero", "True", "ScaledToZero")
    assert r.status.conditions[-1].message == "the HPA controller scaled the workload to zero"
    # at zero, with the marker, the external metric brings it back: ceil(25/10) = 3
    c2 = cluster([c.hpas["ns/web"]], 0, [], external=[external_values("queue", ["25"])], states={"ns/web": AutoscalerState([], [], [])})
    r2 = run(c2, now=later(15))
    assert (r2.desired_replicas, r2.rescaled) == (3, True)
    assert conds(r2.status)[-1] == ("ScaledToZero", "False", "NotScaledToZero")


def test_zero_replicas_without_marker_is_maintenance_mode():
    c = cluster([hpa([external_metric("queue", value="10")], min_replicas=0)], 0, [], external=[external_values("queue", ["99"])])
    r = run(c)
    assert (r.desired_replicas, r.rescaled) == (0, False)
    assert conds(r.status)[1:] == [("ScalingActive", "False", "ScalingDisabled")]
    assert r.status.current_metrics is None


def test_gate_off_removes_scaled_to_zero_in_maintenance_mode():
    c = cluster([hpa([external_metric("queue", value="10")], min_replicas=0, status=_stz("True"))], 0, [])
    r = run(c, config=replace(CONFIG, gates=FeatureGates(scale_to_zero=False)))
    assert [t for t, _, _ in conds(r.status)] == ["AbleToScale", "ScalingActive"]


def test_scale_from_zero_floor_to_min_replicas():
    # behavior path: proposal 0 == current 0 is not clamped, so the floor raises it and names the reason
    behavior = HorizontalPodAutoscalerBehavior()
    c = cluster([hpa([external_metric("queue", value="10")], min_replicas=2, status=_stz("True"), behavior=behavior)], 0, [],
                external=[external_values("queue", ["0"])], states={"ns/web": AutoscalerState([], [], [])})
    r = run(c)
    assert (r.desired_replicas, r.rescaled) == (2, True)
    assert [s.kind for s in r.trace.steps] == ["floor"]
    assert ("Normal", "SuccessfulRescale", "New size: 2; reason: Current number of replicas below Spec.MinReplicas") in events(c)
    # legacy path: the min clamp (TooFewReplicas) already gives 2, the reason stays empty as upstream's does
    c = cluster([hpa([external_metric("queue", value="10")], min_replicas=2, status=_stz("True"))], 0, [],
                external=[external_values("queue", ["0"])], states={"ns/web": AutoscalerState([], [], [])})
    r = run(c)
    assert (r.desired_replicas, r.rescaled) == (2, True)
    assert ("ScalingLimited", "True", "TooFewReplicas") in conds(r.status)
    assert ("Normal", "SuccessfulRescale", "New size: 2; reason: ") in events(c)


# --------------------------------------------------------------------------- plumbing


def test_observed_generation_with_gate():
    c = cluster([hpa(generation=7)], 3, [500, 500, 500])
    r = run(c, config=replace(CONFIG, gates=FeatureGates(hpa_generation=True)))
    assert r.status.observed_generation == 7
    c = cluster([hpa(generation=7)], 3, [500, 500, 500])
    assert run(c).status.observed_generation is None


def test_input_hpa_is_not_mutated():
    h = hpa([cpu_metric(30)])
    c = cluster([h], 3, [300, 500, 700])
    run(c)
    assert h.status.conditions is None and h.status.desired_replicas == 0


def test_a_pass_returns_the_new_status_and_leaves_the_hpa_it_read_as_it_was():
    """The live loop hands in its informer's cached object without copying it: every pass,
    with a behavior and conditions already set, must only read it."""
    from pyhpa.api.codec import to_wire

    behavior = HorizontalPodAutoscalerBehavior(scale_up=HPAScalingRules(
        policies=[HPAScalingPolicy(type="Pods", value=1, period_seconds=60)]))
    c = cluster([hpa([cpu_metric(30)], behavior=behavior)], 3, [300, 500, 700])
    desired = []
    for step in range(4):
        given = c.hpas["ns/web"]
        before = to_wire(given)
        r = run(c, now=later(61 * step))  # one pod a minute
        assert to_wire(given) == before
        assert c.hpas["ns/web"].status == r.status  # what was written is what came back
        desired.append((r.rescaled, r.status.desired_replicas, conds(r.status)[0]))
    assert desired[:2] == [(True, 4, ("AbleToScale", "True", "SucceededRescale")),
                           (True, 5, ("AbleToScale", "True", "SucceededRescale"))]


def test_run_sync_refuses_a_suspending_coroutine():
    async def waits():
        await asyncio.sleep(0)
        return 1

    with pytest.raises(CoroutineSuspended):
        run_sync(waits())


def test_reconcile_under_an_event_loop_too():
    c = cluster([hpa([cpu_metric(30)])], 3, [300, 500, 700])
    r = asyncio.run(reconcile_hpa(c.hpas["ns/web"], c.ports(), CONFIG, NOW))
    assert r.desired_replicas == 5


def test_trace_explains_the_decision():
    c = cluster([hpa([cpu_metric(30)])], 3, [300, 500, 700])
    r = run(c)
    lines = r.trace.explain()
    assert f"{CPU_NAME}: 50% of request vs target 30% → 5 replicas [used]" in lines
    assert lines[-1] == f"scaled to 5: {CPU_NAME} above target"
    d = r.trace.to_dict()
    assert (d["currentReplicas"], d["desiredReplicas"], d["proposal"], d["rescaled"]) == (3, 5, 5, True)
    assert d["metrics"][0]["used"] is True and d["metrics"][0]["replicas"] == 5


def test_trace_records_tolerance_and_rebalancing_steps():
    c = cluster([hpa([cpu_metric(50)])], 3, [520, 500, 480])
    r = run(c)
    assert [(s.kind, s.before, s.after) for s in r.trace.steps] == [("tolerance", 3, 3)]
    assert "within tolerance [0.9, 1.1]: held at 3" in r.trace.steps[0].detail
    # upstream's TestReplicaCalcMissingMetrics: two of four pods without metrics are counted at 100 % on a scale-down
    c = cluster([hpa([cpu_metric(100)])], 4, [400, 95, None, None], states={"ns/web": AutoscalerState([], [], [])})
    r = run(c)
    assert r.desired_replicas == 3
    assert [(s.kind, s.before, s.after) for s in r.trace.steps] == [("rebalance", 1, 3)]
    assert r.trace.metrics[0].to_dict()["unadjustedReplicas"] == 1
    assert "2 pods without metrics counted at 100% of request" in r.trace.steps[0].detail


def test_trace_says_each_thing_once():
    # above maxReplicas: one line for the clamp (the step), none repeated by the branch
    c = cluster([hpa([cpu_metric(50)], max_replicas=2)], 3, [500, 500, 500])
    lines = run(c).trace.explain()
    assert sum("above maxReplicas" in ln for ln in lines) == 1, lines
    # missing pods counted at 0% on a scale-up: 4 pods at 240% of target give ceil(2.4 * 4) = 10, and
    # 6 pods at 160% give ceil(1.6 * 6) = 10 too; the step says so instead of "10 → 10"
    c = cluster([hpa([cpu_metric(50)], max_replicas=20)], 6, [1200, 1200, 1200, 1200, None, None])
    r = run(c)
    assert r.desired_replicas == 10
    [step] = [s for s in r.trace.steps if s.kind == "rebalance"]
    assert (step.before, step.after) == (10, 10) and step.detail.endswith("counted at 0%: still 10"), step.detail


def test_a_release_before_1_36_never_writes_scaled_to_zero():
    # `--emulated-version 1.33 --feature-gates HPAScaleToZero=true`: the 1.33 controller scales to
    # zero but has no ScaledToZero condition, and computes metrics at zero when minReplicas is 0.
    legacy = replace(CONFIG, scaled_to_zero_condition=False)
    ext = external_metric("queue", value="10")
    c = cluster([hpa([ext], min_replicas=0)], 2, [0, 0], external=[external_values("queue", ["0"])],
                states={"ns/web": AutoscalerState([], [], [])})
    r = run(c, config=legacy)
    assert (r.desired_replicas, r.rescaled) == (0, True)
    assert "ScaledToZero" not in [t for t, _, _ in conds(r.status)]
    c2 = cluster([c.hpas["ns/web"]], 0, [], external=[external_values("queue", ["25"])],
                 states={"ns/web": AutoscalerState([], [], [])})
    r2 = run(c2, now=later(15), config=legacy)
    assert (r2.desired_replicas, r2.rescaled) == (3, True)
    assert "ScaledToZero" not in [t for t, _, _ in conds(r2.status)]
