"""Reconcile-level properties over random clusters."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhpa.api.types import HorizontalPodAutoscalerBehavior
from pyhpa.controller.reconcile import reconcile_hpa, run_sync

from .builders import CONFIG, NOW, cluster, cpu_metric, hpa


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 20).flatmap(lambda hi: st.tuples(st.integers(0, hi), st.just(hi))).flatmap(
        lambda b: st.tuples(st.just(b[0]), st.just(b[1]), st.integers(max(b[0], 1), b[1]))
    ),
    st.lists(st.one_of(st.none(), st.integers(0, 5000)), min_size=0, max_size=8),
    st.integers(1, 200),
    st.booleans(),
)
def test_desired_within_min_max(bounds, usages, target, with_behavior):
    lo, hi, current = bounds
    behavior = HorizontalPodAutoscalerBehavior() if with_behavior else None
    c = cluster([hpa([cpu_metric(target)], min_replicas=lo, max_replicas=hi, behavior=behavior)], current, usages)
    r = run_sync(reconcile_hpa(c.hpas["ns/web"], c.ports(), CONFIG, NOW))
    if r.error is None or not r.error.startswith("failed to compute"):
        assert lo <= r.desired_replicas <= hi
        assert r.status.desired_replicas == r.desired_replicas
        assert c.workloads[("ns", "Deployment", "web")].spec.replicas == r.desired_replicas
    else:
        assert not r.rescaled
