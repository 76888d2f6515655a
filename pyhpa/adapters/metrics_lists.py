"""What the HPA reads of the metrics APIs' list answers, converted in one place.

The HTTP adapter (answers of a real metrics server) and the in-memory cluster (a snapshot's
PodMetrics, the simulator's metrics pipeline) both go through these functions, so upstream's
per-pod rules (sum over containers, the named container, which pods are left out) and error
texts exist once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

import msgspec

from pyhpa.api.quantity import Quantity, quantity_dec_hook
from pyhpa.api.timefmt import parse_duration
from pyhpa.api.types import MetricValue, PodMetrics, PodMetricsView
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


class UsageError(ValueError):
    """A usage quantity that does not parse: ``index`` is its item in the list, ``field`` names it
    within the item (``containers[0].usage[cpu]``); ``str()`` says both in msgspec's words."""

    def __init__(self, detail: str, index: int, field: str) -> None:
        self.detail, self.index, self.field = detail, index, field
        super().__init__(f"{detail} - at `$.items[{index}].{field}`")


def pod_usages(items: Sequence[PodMetricsView | PodMetrics]) -> list[PodUsage]:
    """PodMetrics as the HPA reads them: decoded (`PodMetricsView`, quantities as text) or built
    in memory (`PodMetrics`). A list repeats few texts: each distinct quantity, window and
    container set is read once per call, and equal label sets, timestamps and namespaces are one
    object each (the pods of a workload, of a scrape), which is most of the usages' memory.
    ``UsageError`` names the first quantity that does not parse."""
    milli: dict[Any, int] = {}
    windows: dict[str | None, tuple[float, str | None]] = {}
    containers_seen: dict[tuple[Any, ...], tuple[tuple[str, dict[str, int]], ...]] = {}
    labels_seen: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
    timestamps: dict[tuple[datetime, Any], datetime] = {}
    namespaces: dict[str, str] = {}
    out = []
    for i, item in enumerate(items):
        key = tuple((c.name, tuple(c.usage.items())) for c in item.containers)
        containers = containers_seen.get(key)
        if containers is None:
            parts = []
            for j, c in enumerate(item.containers):
                usage = {}
                for resource, text in c.usage.items():
                    value = milli.get(text)
                    if value is None:
                        try:
                            value = milli[text] = quantity_dec_hook(Quantity, text).milli_int64()
                        except (ValueError, TypeError) as exc:
                            raise UsageError(str(exc), i, f"containers[{j}].usage[{resource}]") from None
                    usage[resource] = value
                parts.append((c.name, usage))
            containers = containers_seen[key] = tuple(parts)
        window = windows.get(item.window)
        if window is None:
            window = windows[item.window] = _read_window(item.window)
        meta = item.metadata
        labels = meta.labels or {}
        if labels:
            labels = labels_seen.setdefault(tuple(labels.items()), labels)
        timestamp = item.timestamp or ZERO_TIME
        timestamp = timestamps.setdefault((timestamp, timestamp.utcoffset()), timestamp)
        namespace = meta.namespace or ""
        out.append(PodUsage(
            namespace=namespaces.setdefault(namespace, namespace),
            names=(meta.name or "",),
            labels=labels,
            timestamp=timestamp,
            window=window[0],
            containers=containers,
            window_error=window[1],
        ))
    return out


def _read_window(text: str | None) -> tuple[float, str | None]:
    """(seconds, None), or (0.0, the error) for a window that does not parse: the sample then
    fails the fetch that reads it, as upstream's conversion would."""
    if not text:
        return 0.0, None
    try:
        return parse_duration(text), None
    except ValueError as exc:
        return 0.0, str(exc)


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

