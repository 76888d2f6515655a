"""Fetch what one metric source needs from the metrics client (the only I/O of the metric path).

Which API serves which source is decided by ``pyhpa.engine.metrics.fetch_kind``; errors are
captured as text in the ``MetricFetch`` so the engine can wrap them exactly as upstream does.
"""

from __future__ import annotations

from pyhpa.api.selectors import Selector, SelectorError, selector_from_label_selector
from pyhpa.api.types import LabelSelector, MetricSpec
from pyhpa.controller.ports import MetricsClient
from pyhpa.engine.metrics import MetricFetch, fetch_kind


def metric_selector(sel: LabelSelector | None) -> Selector:
    """A metric's label selector; absent selects every series (upstream sends no selector)."""
    if sel is None:
        return Selector.everything()
    return selector_from_label_selector(sel)


async def fetch_metric(spec: MetricSpec, client: MetricsClient, namespace: str, selector: Selector) -> MetricFetch | None:
    kind = fetch_kind(spec)
    if kind is None:
        return None
    try:
        if kind == "resource":
            if spec.type == "ContainerResource":
                cr_src = spec.container_resource
                name, container = cr_src.name, cr_src.container  # type: ignore[union-attr]
            else:
                name, container = spec.resource.name, ""  # type: ignore[union-attr]
            info, ts = await client.get_resource_metric(name, namespace, selector, container)
            return MetricFetch(pod_metrics=info, timestamp=ts)
        source = spec.pods if kind == "raw" else spec.object if kind == "object" else spec.external
        try:
            msel = metric_selector(source.metric.selector)  # type: ignore[union-attr]
        except SelectorError as bad_selector:
            return MetricFetch(selector_error=str(bad_selector))
        metric = source.metric.name  # type: ignore[union-attr]
        if kind == "raw":
            info, ts = await client.get_raw_metric(metric, namespace, selector, msel)
            return MetricFetch(pod_metrics=info, timestamp=ts)
        if kind == "object":
            value, ts = await client.get_object_metric(metric, namespace, spec.object.described_object, msel)  # type: ignore[union-attr]
            return MetricFetch(value=value, timestamp=ts)
        values, ts = await client.get_external_metric(metric, namespace, msel)
        return MetricFetch(values=list(values), timestamp=ts)
    except Exception as exc:  # any port failure becomes upstream's error path for this metric
        return MetricFetch(error=str(exc))
