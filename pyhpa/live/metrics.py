"""The controller's Prometheus metrics (upstream's names, podautoscaler/monitor/metrics.go), plus API request counts.

A private registry per controller so tests and the demo can run several controllers in one
process. The API request counter is read from the adapter's RequestCounter at scrape time
(a collector, not a second count on the hot path).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics, generate_latest
from prometheus_client.core import CounterMetricFamily

SUBSYSTEM = "horizontal_pod_autoscaler_controller"
disable_created_metrics()  # upstream exposes no *_created series
BUCKETS = tuple(0.001 * 2**k for k in range(15))  # 0.001 ... 16.384


class ControllerMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.reconciliations = Counter(
            "reconciliations", "Number of reconciliations of HPA controller.",
            ["action", "error"], subsystem=SUBSYSTEM, registry=r)
        self.reconciliation_duration = Histogram(
            "reconciliation_duration_seconds", "The time(seconds) that the HPA controller takes to reconcile once.",
            ["action", "error"], subsystem=SUBSYSTEM, buckets=BUCKETS, registry=r)
        self.metric_computation = Counter(
            "metric_computation", "Number of metric computations.",
            ["action", "error", "metric_type"], subsystem=SUBSYSTEM, registry=r)
        self.metric_computation_duration = Histogram(
            "metric_computation_duration_seconds", "The time(seconds) that the HPA controller takes to calculate one metric.",
            ["action", "error", "metric_type"], subsystem=SUBSYSTEM, buckets=BUCKETS, registry=r)
        self.num_hpas = Gauge(
            "num_horizontal_pod_autoscalers", "Current number of controlled HPA objects.",
            subsystem=SUBSYSTEM, registry=r)
        self.desired_replicas = Gauge(
            "desired_replicas", "Current desired replica count for HPA objects.",
            ["namespace", "hpa_name"], subsystem=SUBSYSTEM, registry=r)
        self.is_leader = Gauge("pyhpa_leader", "1 while this replica holds the leader Lease.", registry=r)
        self.shards_owned = Gauge("pyhpa_shards_owned", "Shards whose Lease this replica holds (--shards).",
                                  registry=r)
        self.shard_handovers = Counter(
            "pyhpa_shard_handovers", "Shards this replica acquired, released to another or lost (--shards).",
            ["event"], registry=r)
        self.requests_per_hpa_per_sync = Gauge(
            "pyhpa_api_requests_per_hpa_per_sync_period",
            "API requests (watches excluded) in the last sync period divided by the number of HPAs.", registry=r)

    # The monitor interface the reconcile reports through.

    def observe_reconciliation(self, action: str, error: str, seconds: float) -> None:
        self.reconciliations.labels(action, error).inc()
        self.reconciliation_duration.labels(action, error).observe(seconds)

    def observe_metric_computation(self, action: str, error: str, seconds: float, metric_type: str) -> None:
        self.metric_computation.labels(action, error, metric_type).inc()
        self.metric_computation_duration.labels(action, error, metric_type).observe(seconds)

    def observe_hpa_addition(self) -> None:
        self.num_hpas.inc()

    def observe_hpa_deletion(self, namespace: str = "", name: str = "") -> None:
        self.num_hpas.dec()
        if name:
            try:
                self.desired_replicas.remove(namespace, name)
            except KeyError:
                pass

    def observe_desired_replicas(self, namespace: str, name: str, replicas: int) -> None:
        self.desired_replicas.labels(namespace, name).set(replicas)

    def register_request_counts(self, snapshot: Callable[[], dict[Any, int]]) -> None:
        self.registry.register(_RequestCollector(snapshot))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _RequestCollector:
    def __init__(self, snapshot: Callable[[], dict[Any, int]]) -> None:
        self.snapshot = snapshot

    def collect(self) -> Iterable[Any]:
        fam = CounterMetricFamily("pyhpa_api_requests", "Requests this controller sent to the API server.",
                                  labels=["verb", "resource"])
        for key, n in sorted(self.snapshot().items(), key=lambda kv: (kv[0].verb, kv[0].resource)):
            fam.add_metric([key.verb, key.resource], n)
        yield fam

    def describe(self) -> Iterable[Any]:
        return []
