"""Small builders for reconcile tests: one Deployment `web` in namespace `ns`, its pods and
their PodMetrics, and HPAs over it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Sequence

from pyhpa.adapters.memory import MemoryCluster
from pyhpa.api.quantity import Quantity
from pyhpa.api.types import (
    ContainerMetrics,
    ContainerView,
    CrossVersionObjectReference,
    ExternalMetricSource,
    ExternalMetricValue,
    ExternalMetricValueList,
    HorizontalPodAutoscaler,
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerSpec,
    HorizontalPodAutoscalerStatus,
    LabelSelector,
    MetricIdentifier,
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
from pyhpa.engine.config import ControllerConfig
from pyhpa.engine.pods import ZERO_TIME

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
CONFIG = ControllerConfig(cpu_initialization_period=120.0, initial_readiness_delay=10.0)
LABELS = {"app": "web"}


def q(text: str | int) -> Quantity:
    return Quantity.parse(text)


def cpu_metric(target: int) -> MetricSpec:
    return MetricSpec(
        type="Resource",
        resource=ResourceMetricSource(name="cpu", target=MetricTarget(type="Utilization", average_utilization=target)),
    )


def external_metric(name: str, value: str | None = None, average: str | None = None, selector: LabelSelector | None = None) -> MetricSpec:
    target = MetricTarget(
        type="Value" if value is not None else "AverageValue",
        value=q(value) if value is not None else None,
        average_value=q(average) if average is not None else None,
    )
    return MetricSpec(type="External", external=ExternalMetricSource(metric=MetricIdentifier(name=name, selector=selector), target=target))


def hpa(
    metrics: Sequence[MetricSpec] | None = None,
    *,
    name: str = "web",
    target: str = "web",
    kind: str = "Deployment",
    api_version: str = "apps/v1",
    min_replicas: int | None = 1,
    max_replicas: int = 10,
    behavior: HorizontalPodAutoscalerBehavior | None = None,
    status: HorizontalPodAutoscalerStatus | None = None,
    generation: int | None = None,
) -> HorizontalPodAutoscaler:
    return new_hpa(
        HorizontalPodAutoscalerSpec(
            scale_target_ref=CrossVersionObjectReference(kind=kind, name=target, api_version=api_version),
            min_replicas=min_replicas,
            max_replicas=max_replicas,
            metrics=list(metrics) if metrics is not None else [cpu_metric(50)],
            behavior=behavior,
        ),
        metadata=ObjectMeta(name=name, namespace="ns", generation=generation, uid="uid-" + name),
        status=status,
    )


def deployment(replicas: int, *, name: str = "web", status_replicas: int | None = None, labels: dict | None = LABELS) -> WorkloadView:
    return WorkloadView(
        api_version="apps/v1",
        kind="Deployment",
        metadata=ObjectMeta(name=name, namespace="ns"),
        spec=WorkloadSpecView(replicas=replicas, selector=LabelSelector(match_labels=labels) if labels else None),
        status=WorkloadStatusView(replicas=replicas if status_replicas is None else status_replicas),
    )


def web_pod(i: int, request: str = "1", ready: str = "True", start: datetime = ZERO_TIME, phase: str = "Running", labels: dict | None = None) -> PodView:
    reqs = ResourceRequirements(requests={"cpu": q(request)})
    return PodView(
        metadata=ObjectMeta(name=f"web-{i}", namespace="ns", labels=labels or dict(LABELS)),
        spec=PodSpecView(containers=[ContainerView(name="app", resources=reqs)]),
        status=PodStatusView(phase=phase, start_time=start, conditions=[PodCondition(type="Ready", status=ready)]),
    )


def web_metrics(i: int, cpu_milli: int, timestamp: datetime = NOW, labels: dict | None = None) -> PodMetrics:
    return PodMetrics(
        metadata=ObjectMeta(name=f"web-{i}", namespace="ns", labels=labels or dict(LABELS)),
        timestamp=timestamp,
        window="30s",
        containers=[ContainerMetrics(name="app", usage={"cpu": Quantity.from_milli(cpu_milli)})],
    )


def cluster(
    hpas: Sequence[HorizontalPodAutoscaler],
    replicas: int,
    usages: Sequence[int | None] = (),
    *,
    requests: Sequence[str] | None = None,
    readiness: Sequence[str] | None = None,
    workloads: Sequence[Any] | None = None,
    external: Sequence[Any] = (),
    **kwargs: Any,
) -> MemoryCluster:
    """`len(usages)` pods; a usage of None means the pod has no PodMetrics."""
    plist = [
        web_pod(i, request=requests[i] if requests else "1", ready=readiness[i] if readiness else "True")
        for i in range(len(usages))
    ]
    metrics = [web_metrics(i, u) for i, u in enumerate(usages) if u is not None]
    return MemoryCluster(
        hpas=hpas,
        workloads=workloads if workloads is not None else [deployment(replicas)],
        pods=plist,
        pod_metrics=metrics,
        external_metrics=external,
        **kwargs,
    )


def external_values(name: str, values: Sequence[str], labels: dict | None = None, namespace: str | None = None) -> ExternalMetricValueList:
    return ExternalMetricValueList(
        metadata=ObjectMeta(namespace=namespace),
        items=[ExternalMetricValue(metric_name=name, metric_labels=labels, timestamp=NOW, value=q(v)) for v in values],
    )


def conds(status: HorizontalPodAutoscalerStatus) -> list[tuple[str, str, str]]:
    """(type, status, reason) of each condition of a status (a reconcile result's)."""
    return [(c.type, c.status, c.reason or "") for c in status.conditions or ()]


def later(seconds: float) -> datetime:
    return NOW + timedelta(seconds=seconds)
