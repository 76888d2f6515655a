"""Properties: bounds, robustness against any input, and the tolerance band."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhpa.api.quantity import Quantity
from pyhpa.api.types import (
    CrossVersionObjectReference,
    ExternalMetricSource,
    MetricIdentifier,
    MetricSpec,
    MetricTarget,
    ObjectMetricSource,
    PodsMetricSource,
    ResourceMetricSource,
)
from pyhpa.engine.calculator import Tolerances, resource_utilization_replicas
from pyhpa.engine.config import ControllerConfig
from pyhpa.engine.gomath import INT64_MAX
from pyhpa.engine.metrics import MetricContext, MetricFetch, combine
from pyhpa.engine.normalize import Rules, normalize_behavior, normalize_legacy
from pyhpa.engine.pods import PodSet
from pyhpa.api.types import HPAScalingPolicy
from pyhpa.engine.inputs import PodMetric
from pyhpa.engine.state import Recommendation, ScaleEvent

from .helpers import CPU_INIT, NOW, READINESS_DELAY, pod, resource_metrics

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ages = st.integers(min_value=0, max_value=3600)
recs_st = st.lists(st.tuples(st.integers(0, 1000), ages), max_size=8).map(
    lambda xs: [Recommendation(r, NOW - timedelta(seconds=a)) for r, a in xs]
)
events_st = st.one_of(
    st.none(),
    st.lists(st.tuples(st.integers(0, 500), ages, st.booleans()), max_size=6).map(
        lambda xs: [ScaleEvent(c, NOW - timedelta(seconds=a), o) for c, a, o in xs]
    ),
)
policy_st = st.builds(
    HPAScalingPolicy,
    type=st.sampled_from(["Pods", "Percent"]),
    value=st.integers(1, 1000),
    period_seconds=st.integers(1, 1800),
)
rules_st = st.builds(
    Rules,
    window=st.integers(0, 3600),
    select_policy=st.sampled_from(["Max", "Min", "Disabled"]),
    policies=st.lists(policy_st, max_size=3).map(tuple),
)


@st.composite
def bounds(draw):
    lo = draw(st.integers(0, 50))
    hi = draw(st.integers(max(lo, 1), 200))
    current = draw(st.integers(lo, hi))
    proposal = draw(st.integers(0, 10_000))
    return lo, hi, current, proposal


@SETTINGS
@given(bounds(), recs_st, st.floats(0, 3600))
def test_legacy_result_within_min_max(b, recs, window):
    lo, hi, current, proposal = b
    n = normalize_legacy(recs, current, proposal, lo, hi, window, NOW)
    assert lo <= n.replicas <= hi
    assert n.limited == (n.replicas != n.stabilized)


@SETTINGS
@given(bounds(), recs_st, events_st, events_st, rules_st, rules_st)
def test_behavior_result_within_min_max(b, recs, ups, downs, up, down):
    lo, hi, current, proposal = b
    n = normalize_behavior(recs, ups, downs, up, down, current, proposal, lo, hi, NOW)
    assert lo <= n.replicas <= hi
    # stabilization only ever holds the count between current and the proposal
    assert min(current, proposal) <= n.stabilized <= max(current, proposal)
    # and the rate step never moves past the stabilized value
    assert min(current, n.stabilized) <= n.replicas <= max(current, n.stabilized) or n.replicas in (lo, hi)


@SETTINGS
@given(
    st.integers(1, 20).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.integers(1, 4000), min_size=n, max_size=n),
            st.integers(1, 300),
        )
    ),
    st.floats(0.0, 0.5),
)
def test_no_change_inside_tolerance_band(data, tol):
    n, reqs, target = data
    # usage chosen so the utilization ratio is exactly 1: every pod at target % of its request
    plist = PodSet.of(pod(f"test-pod-{i}", request=f"{r}m", containers=1) for i, r in enumerate(reqs))
    fetched = {f"test-pod-{i}": PodMetric(r * target // 100 * 1, NOW, 60.0) for i, r in enumerate(reqs)}
    p = resource_utilization_replicas(n, target, "cpu", Tolerances(tol, tol), fetched, plist, "", CPU_INIT, READINESS_DELAY, NOW)
    if Tolerances(tol, tol).within(p.ratio):
        assert p.replicas == n and p.held == "tolerance"


quantities = st.one_of(
    st.integers(0, 10**6).map(lambda m: Quantity.from_milli(m)),
    st.sampled_from(["0", "1", "1Ki", "9223372036854775807", "0.0001"]).map(Quantity.parse),
)
targets = st.builds(
    MetricTarget,
    type=st.sampled_from(["Utilization", "Value", "AverageValue", "Bogus"]),
    value=st.one_of(st.none(), quantities),
    average_value=st.one_of(st.none(), quantities),
    average_utilization=st.one_of(st.none(), st.integers(-5, 500)),
)
ident = st.builds(MetricIdentifier, name=st.sampled_from(["qps", "jobs"]))
specs = st.one_of(
    st.builds(MetricSpec, type=st.just("Resource"), resource=st.builds(ResourceMetricSource, name=st.sampled_from(["cpu", "memory"]), target=targets)),
    st.builds(MetricSpec, type=st.just("Pods"), pods=st.builds(PodsMetricSource, metric=ident, target=targets)),
    st.builds(MetricSpec, type=st.just("Object"), object=st.builds(
        ObjectMetricSource, described_object=st.just(CrossVersionObjectReference(kind="Service", name="s")), target=targets, metric=ident)),
    st.builds(MetricSpec, type=st.just("External"), external=st.builds(ExternalMetricSource, metric=ident, target=targets)),
    st.builds(MetricSpec, type=st.sampled_from(["Weird", "Resource", "Pods"])),
)
big = st.integers(-10, INT64_MAX)
fetches = st.one_of(
    st.none(),
    st.builds(MetricFetch, error=st.just("boom")),
    st.builds(MetricFetch, pod_metrics=st.lists(st.integers(0, 10**7), max_size=6).map(lambda xs: resource_metrics([[x] for x in xs])), timestamp=st.just(NOW)),
    st.builds(MetricFetch, value=big, timestamp=st.just(NOW)),
    st.builds(MetricFetch, values=st.lists(big, max_size=4), timestamp=st.just(NOW)),
)
pod_st = st.builds(
    lambda i, ready, phase, deleted, req: pod(f"test-pod-{i}", ready=ready, phase=phase, deleted=deleted, request=req),
    st.integers(0, 6),
    st.sampled_from([None, "True", "False", "Unknown"]),
    st.sampled_from(["Running", "Pending", "Failed", "Succeeded"]),
    st.booleans(),
    st.sampled_from([None, "0", "100m", "1"]),
)


@SETTINGS
@given(
    st.lists(st.tuples(specs, fetches), min_size=1, max_size=4),
    st.lists(pod_st, max_size=6),
    st.integers(0, 100),
    st.integers(0, 100),
)
def test_engine_never_crashes(pairs, plist, current, status):
    ctx = MetricContext("ns", current, status, PodSet.of(plist), Tolerances(), ControllerConfig(), NOW)
    out = combine([s for s, _ in pairs], [f for _, f in pairs], ctx)
    assert out.replicas == -1 or out.replicas >= -(2**31)
    assert len(out.statuses) == len(pairs)
    if out.replicas == -1:
        assert out.error is not None
