"""Engine throughput: HPA decisions per second on one core.

A *decision* is what the engine does per HPA per pass once the data is fetched: one CPU
utilization metric over N pods (grouping, requests, utilization, rebalancing), the multi-metric
combination and normalization. ``reconcile_*`` also counts the whole per-HPA reconcile over the
in-memory ports (scale read, selector and ambiguity check, fetch, status build and diff).
Goals: >= 20,000 decisions/s with 10 pods, >= 5,000/s with 100 pods.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

from pyhpa.adapters.memory import MemoryCluster
from pyhpa.api.quantity import Quantity
from pyhpa.api.types import (
    ContainerMetrics,
    ContainerView,
    CrossVersionObjectReference,
    HorizontalPodAutoscalerSpec,
    LabelSelector,
    MetricSpec,
    MetricTarget,
    ObjectMeta,
    PodCondition,
    PodMetrics,
    PodSpecView,
    PodStatusView,
    PodView,
    ResourceMetricSource,
    ResourceRequirements,
    WorkloadSpecView,
    WorkloadStatusView,
    WorkloadView,
    new_hpa,
)
from pyhpa.controller.reconcile import reconcile_hpa, run_sync
from pyhpa.engine.calculator import Tolerances
from pyhpa.engine.config import ControllerConfig
from pyhpa.engine.inputs import PodMetric
from pyhpa.engine.metrics import MetricContext, MetricFetch, combine
from pyhpa.engine.normalize import normalize_legacy
from pyhpa.engine.pods import PodSet
from pyhpa.engine.state import Recommendation

NOW = datetime(2026, 1, 1, 12, tzinfo=timezone.utc)
START = NOW - timedelta(hours=1)
LABELS = {"app": "web"}
CONFIG = ControllerConfig()
SPEC = MetricSpec(type="Resource", resource=ResourceMetricSource(name="cpu", target=MetricTarget(type="Utilization", average_utilization=50)))


def _pods(n: int) -> list[PodView]:
    req = ResourceRequirements(requests={"cpu": Quantity.parse("500m")})
    return [
        PodView(
            metadata=ObjectMeta(name=f"web-{i}", namespace="ns", labels=dict(LABELS)),
            spec=PodSpecView(containers=[ContainerView(name="app", resources=req)]),
            status=PodStatusView(phase="Running", start_time=START, conditions=[PodCondition(type="Ready", status="True", last_transition_time=START)]),
        )
        for i in range(n)
    ]


def _usage(i: int) -> int:
    return 300 + (i * 37) % 200


def _time(fn, min_seconds: float = 1.0) -> float:
    """Calls per second of ``fn`` over at least ``min_seconds``."""
    fn()
    count = 0
    batch = 100
    start = time.perf_counter()
    while True:
        for _ in range(batch):
            fn()
        count += batch
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return count / elapsed


def engine_decisions_per_second(n_pods: int) -> float:
    pods = _pods(n_pods)
    fetched = {p.metadata.name: PodMetric(_usage(i), NOW, 30.0) for i, p in enumerate(pods)}
    fetch = MetricFetch(pod_metrics=fetched, timestamp=NOW)
    ctx = MetricContext("ns", n_pods, n_pods, PodSet.of(pods), Tolerances(), CONFIG, NOW)
    recs = (Recommendation(n_pods, NOW - timedelta(seconds=60)),)

    def decide() -> None:
        out = combine([SPEC], [fetch], ctx)
        normalize_legacy(recs, n_pods, out.replicas, 1, 1000, CONFIG.downscale_stabilization, NOW)

    return _time(decide)


def reconcile_per_second(n_pods: int) -> float:
    pods = _pods(n_pods)
    metrics = [
        PodMetrics(
            metadata=ObjectMeta(name=p.metadata.name, namespace="ns", labels=dict(LABELS)),
            timestamp=NOW, window="30s",
            containers=[ContainerMetrics(name="app", usage={"cpu": Quantity.from_milli(_usage(i))})],
        )
        for i, p in enumerate(pods)
    ]
    hpa = new_hpa(
        HorizontalPodAutoscalerSpec(
            scale_target_ref=CrossVersionObjectReference(kind="Deployment", name="web", api_version="apps/v1"),
            min_replicas=1, max_replicas=1000, metrics=[SPEC],
        ),
        metadata=ObjectMeta(name="web", namespace="ns"),
    )
    wl = WorkloadView(
        api_version="apps/v1", kind="Deployment", metadata=ObjectMeta(name="web", namespace="ns"),
        spec=WorkloadSpecView(replicas=n_pods, selector=LabelSelector(match_labels=dict(LABELS))),
        status=WorkloadStatusView(replicas=n_pods),
    )
    cluster = MemoryCluster(hpas=[hpa], workloads=[wl], pods=pods, pod_metrics=metrics)
    ports = cluster.ports()
    run_sync(reconcile_hpa(hpa, ports, CONFIG, NOW))  # settle the status once
    current = cluster.hpas["ns/web"]
    clock = [NOW]
    step = timedelta(seconds=15)

    def one() -> None:
        # the clock advances one sync period per pass, as in the live loop, so the
        # recommendation history stays bounded (old slots are reused)
        clock[0] += step
        run_sync(reconcile_hpa(current, ports, CONFIG, clock[0]))

    return _time(one)


def run() -> list[tuple[str, float, str]]:
    return [
        ("engine_cpu_10_pods", engine_decisions_per_second(10), "decisions/s (goal >= 20,000)"),
        ("engine_cpu_100_pods", engine_decisions_per_second(100), "decisions/s (goal >= 5,000)"),
        ("reconcile_cpu_10_pods", reconcile_per_second(10), "reconciles/s"),
        ("reconcile_cpu_100_pods", reconcile_per_second(100), "reconciles/s"),
    ]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name}: {value:,.0f} {unit}")
