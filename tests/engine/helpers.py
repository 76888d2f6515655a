"""Builders shaped like upstream's test fixtures: pods with two containers named
container1/container2, per-container usage levels, Ready conditions and start times."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Sequence

from pyhpa.api.quantity import Quantity
from pyhpa.api.types import (
    ContainerView,
    ObjectMeta,
    PodCondition,
    PodSpecView,
    PodStatusView,
    PodView,
    ResourceRequirements,
)
from pyhpa.engine.inputs import PodMetric, PodMetricsInfo
from pyhpa.engine.pods import ZERO_TIME, PodSet

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
CPU_INIT = 120.0  # upstream's defaultTestingCPUInitializationPeriod
READINESS_DELAY = 10.0  # upstream's defaultTestingDelayOfInitialReadinessStatus
HOT = NOW  # a pod that just started: still in its CPU initialization period
COOL = NOW - timedelta(minutes=3)  # a pod past its CPU initialization period


def q(text: str) -> Quantity:
    return Quantity.parse(text)


def pod(
    name: str,
    *,
    request: str | None = None,
    ready: str | None = "True",
    start: datetime | None = ZERO_TIME,
    transition: datetime | None = None,
    phase: str = "Running",
    deleted: bool = False,
    containers: int = 2,
    labels: dict[str, str] | None = None,
    namespace: str = "test-namespace",
) -> PodView:
    reqs = ResourceRequirements(requests={"cpu": q(request)}) if request is not None else None
    conds = [PodCondition(type="Ready", status=ready, last_transition_time=transition)] if ready else None
    return PodView(
        metadata=ObjectMeta(
            name=name,
            namespace=namespace,
            labels=labels if labels is not None else {"name": "test-pod"},
            deletion_timestamp=NOW if deleted else None,
        ),
        spec=PodSpecView(containers=[ContainerView(name=f"container{i + 1}", resources=reqs) for i in range(containers)]),
        status=PodStatusView(phase=phase, start_time=start, conditions=conds),
    )


def pods(
    n: int,
    *,
    requests: Sequence[str] | None = None,
    readiness: Sequence[str] | None = None,
    start_times: Sequence[datetime] | None = None,
    phases: Sequence[str] | None = None,
    deleted: Sequence[bool] | None = None,
) -> PodSet:
    """n pods as the engine receives them (with their facts computed)."""
    out = []
    for i in range(n):
        out.append(
            pod(
                f"test-pod-{i}",
                request=requests[i] if requests is not None and i < len(requests) else None,
                ready=readiness[i] if readiness is not None and i < len(readiness) else "True",
                start=start_times[i] if start_times is not None else ZERO_TIME,
                phase=phases[i] if phases is not None else "Running",
                deleted=deleted[i] if deleted is not None else False,
            )
        )
    return PodSet.of(out)


def levels(*per_pod: int) -> list[list[int]]:
    """Upstream's makePodMetricLevels: every container of pod i reports per_pod[i]."""
    return [[v, v] for v in per_pod]


def resource_metrics(
    per_container: Sequence[Sequence[int]],
    container: str = "",
    timestamp: datetime = ZERO_TIME,
    names: Sequence[str] | None = None,
) -> PodMetricsInfo:
    """What the resource metrics client returns for these container levels."""
    out: PodMetricsInfo = {}
    for i, values in enumerate(per_container):
        name = names[i] if names is not None and i < len(names) else f"test-pod-{i}"
        if container:
            idx = int(container.removeprefix("container")) - 1
            if idx >= len(values):
                continue
            out[name] = PodMetric(values[idx], timestamp, 60.0)
        else:
            out[name] = PodMetric(sum(values), timestamp, 60.0)
    return out


def pod_values(values: Sequence[int], timestamp: datetime = ZERO_TIME) -> PodMetricsInfo:
    """Custom Pods metric values for test-pod-0..n."""
    return {f"test-pod-{i}": PodMetric(v, timestamp, 60.0) for i, v in enumerate(values)}
