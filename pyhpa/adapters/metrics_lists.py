"""What the HPA reads of the metrics APIs' list answers, converted in one place.

The HTTP adapter (answers of a real metrics server) and the in-memory cluster (a snapshot's
PodMetrics, the simulator's metrics pipeline) both go through these functions, so upstream's
per-pod rules (sum over containers, the named container, which pods are left out) and error
texts exist once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Sequence

import msgspec

from pyhpa.api.timefmt import parse_duration
from pyhpa.api.types import MetricValue, PodMetrics
from pyhpa.controller.ports import MetricsError
from pyhpa.engine.inputs import PodMetric, PodMetricsInfo
from pyhpa.engine.pods import ZERO_TIME

NO_RESOURCE_METRICS = "no metrics returned from resource metrics API"
NO_CUSTOM_METRICS = "no metrics returned from custom metrics API"


class PodUsage(msgspec.Struct, frozen=True, gc=False):  # gc=False: a tree, never in a cycle (see View)
    """What the HPA reads of one metrics.k8s.io PodMetrics: per container, usage in milli-units,
    and when and over which window it was measured.

    ``names`` are the pods that report exactly this usage: one for a PodMetrics; the simulator
    reports the pods of one metrics cohort together (they carry equal samples by construction).
    ``window_error`` is the error text of a window that does not parse: the sample then fails
    the fetch that reads it, as upstream's conversion would.
    """

    namespace: str
    names: tuple[str, ...]
    labels: dict[str, str]
    timestamp: datetime
    window: float
    containers: tuple[tuple[str, dict[str, int]], ...]
    window_error: str | None = None

    def value(self, resource: str, container: str) -> int | None:
        """Upstream's per-pod value: the sum over containers, or the named container's; None
        where a container lacks the resource (the pod is then left out)."""
        if container:
            for name, usage in self.containers:
                if name == container:
                    return usage.get(resource)
            return None
        if not self.containers:
            return None
        total = 0
        for _, usage in self.containers:
            v = usage.get(resource)
            if v is None:
                return None
            total += v
        return total


def pod_usage(m: PodMetrics) -> PodUsage:
    """A PodMetrics as the HPA reads it."""
    window = 0.0
    window_error = None
    if m.window:
        try:
            window = parse_duration(m.window)
        except ValueError as exc:
            window_error = str(exc)
    meta = m.metadata
    return PodUsage(
        namespace=meta.namespace or "",
        names=(meta.name or "",),
        labels=meta.labels or {},
        timestamp=m.timestamp or ZERO_TIME,
        window=window,
        containers=tuple((c.name, {r: q.milli_int64() for r, q in c.usage.items()}) for c in m.containers),
        window_error=window_error,
    )


def resource_metric_info(usages: Sequence[PodUsage], resource: str, container: str) -> tuple[PodMetricsInfo, datetime]:
    """Per pod, the sample of ``resource`` (upstream's resource metrics client), and the list's
    timestamp (its first item's); ``MetricsError`` when the list is empty."""
    if not usages:
        raise MetricsError(NO_RESOURCE_METRICS)
    out: PodMetricsInfo = {}
    for u in usages:
        value = u.value(resource, container)
        if value is None:
            continue
        if u.window_error is not None:
            raise MetricsError(u.window_error)
        sample = PodMetric(value, u.timestamp, u.window)  # only read: pods reporting alike share it
        for name in u.names:
            out[name] = sample
    return out, usages[0].timestamp


def custom_metric_info(values: Sequence[MetricValue]) -> tuple[PodMetricsInfo, datetime]:
    """Per pod, the custom.metrics.k8s.io sample of the items describing pods, and the list's
    timestamp; ``MetricsError`` when there is none."""
    if not values:
        raise MetricsError(NO_CUSTOM_METRICS)
    out: PodMetricsInfo = {}
    for v in values:
        window = float(v.window_seconds) if v.window_seconds is not None else 60.0
        out[v.described_object.name] = PodMetric(v.value.milli_int64(), v.timestamp or ZERO_TIME, window)
    return out, values[0].timestamp or ZERO_TIME

