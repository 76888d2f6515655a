"""Raw GETs of the three metrics APIs the HPA reads (upstream's podautoscaler/metrics), plus a per-namespace cache.

Resource metrics (`metrics.k8s.io`) are listed once per namespace and shared by every HPA there
for `ttl` seconds (the loop sets it just under the sync period): with many HPAs per namespace
this turns N list calls into one. metrics-server copies pod labels onto PodMetrics, so the HPA's
selector is applied locally to the cached list, exactly as the server would apply it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable, Generic, TypeVar
from urllib.parse import quote

import msgspec

from pyhpa.adapters.kube.client import KubeClient
from pyhpa.adapters.kube.discovery import Discovery
from pyhpa.adapters.label_index import LabelIndex
from pyhpa.adapters.metrics_lists import PodUsage, pod_usages
from pyhpa.api.types import (
    ExternalMetricValue,
    ExternalMetricValueList,
    LabelSelector,
    MetricValue,
    MetricValueList,
    PodMetricsView,
    PodMetricsViewList,
)

T = TypeVar("T")

RESOURCE_METRICS = "/apis/metrics.k8s.io/v1beta1"
EXTERNAL_METRICS = "/apis/external.metrics.k8s.io/v1beta1"
CUSTOM_GROUP = "custom.metrics.k8s.io"
_POD_METRICS_LIST = msgspec.json.Decoder(PodMetricsViewList)


def selector_string(sel: LabelSelector | dict[str, Any] | None) -> str:
    """The query-string form of a metric's LabelSelector ("" for none)."""
    if sel is None:
        return ""
    from pyhpa.api.selectors import selector_from_label_selector

    return str(selector_from_label_selector(sel))


class MetricsApi:
    """Raw reads of metrics.k8s.io, custom.metrics.k8s.io (preferred version) and external.metrics.k8s.io."""

    def __init__(self, client: KubeClient, discovery: Discovery) -> None:
        self.client = client
        self.discovery = discovery

    async def list_pod_metrics(self, namespace: str, label_selector: str = "") -> list[PodMetricsView]:
        params = {"labelSelector": label_selector} if label_selector else None
        data = await self.client.request("GET", f"{RESOURCE_METRICS}/namespaces/{namespace}/pods", params=params)
        return _POD_METRICS_LIST.decode(data).items

    async def _custom_base(self) -> str:
        version = await self.discovery.preferred_version(CUSTOM_GROUP) or "v1beta2"
        return f"/apis/{CUSTOM_GROUP}/{version}"

    async def _custom_get(self, path: str, params: dict[str, str]) -> list[MetricValue]:
        base = await self._custom_base()
        data = await self.client.request("GET", base + path, params=params or None)
        if base.endswith("/v1beta1"):
            raw = self.client.decoder(dict).decode(data)
            items = []
            for it in raw.get("items") or []:
                conv = dict(it)
                conv["metric"] = {"name": it.get("metricName", ""), "selector": it.get("selector")}
                conv.pop("metricName", None)
                conv.pop("selector", None)
                items.append(conv)
            raw["items"] = items
            data = msgspec.json.encode(raw)
        return self.client.decoder(MetricValueList).decode(data).items

    async def custom_pods_metric(self, namespace: str, metric: str, selector: str, metric_selector: str) -> list[MetricValue]:
        params = {"labelSelector": selector}
        if metric_selector:
            params["metricLabelSelector"] = metric_selector
        return await self._custom_get(f"/namespaces/{namespace}/pods/*/{quote(metric, safe='')}", params)

    async def custom_object_metric(
        self, namespace: str, api_version: str | None, kind: str, name: str, metric: str, metric_selector: str
    ) -> list[MetricValue]:
        params = {"metricLabelSelector": metric_selector} if metric_selector else {}
        m = quote(metric, safe="")
        group = (api_version or "").split("/")[0] if "/" in (api_version or "") else ""
        if kind == "Namespace" and group == "":
            return await self._custom_get(f"/namespaces/{namespace}/metrics/{m}", params)
        mapping = await self.discovery.mapping_for(api_version, kind)
        resource = mapping.group_resource if mapping else (kind.lower() + "s" + (f".{group}" if group else ""))
        return await self._custom_get(f"/namespaces/{namespace}/{resource}/{quote(name, safe='')}/{m}", params)

    async def external_metric(self, namespace: str, metric: str, metric_selector: str) -> list[ExternalMetricValue]:
        params = {"labelSelector": metric_selector} if metric_selector else None
        path = f"{EXTERNAL_METRICS}/namespaces/{namespace}/{quote(metric, safe='')}"
        return (await self.client.get(path, ExternalMetricValueList, params)).items


class TTLCache(Generic[T]):
    """One value per key, fetched at most once per `ttl` seconds; concurrent callers share the fetch."""

    def __init__(self, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self._clock = clock
        self._values: dict[str, tuple[float, T]] = {}
        self._inflight: dict[str, asyncio.Future[T]] = {}

    async def get(self, key: str, fetch: Callable[[], Any]) -> T:
        now = self._clock()
        hit = self._values.get(key)
        if hit is not None and now - hit[0] < self.ttl:
            return hit[1]
        fut = self._inflight.get(key)
        if fut is not None:
            return await asyncio.shield(fut)
        fut = asyncio.get_running_loop().create_future()
        self._inflight[key] = fut
        try:
            value = await fetch()
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        else:
            self._values[key] = (now, value)
            fut.set_result(value)
            return value
        finally:
            self._inflight.pop(key, None)

    def invalidate(self, key: str | None = None) -> None:
        if key is None:
            self._values.clear()
        else:
            self._values.pop(key, None)


class SharedPodMetrics:
    """PodMetrics listed once per namespace per TTL, read as the HPA reads them (`pod_usages`)
    once, and filtered locally by the pod selector through a label index: with 1,000 HPAs in a
    namespace of 10,000 pods, testing every item for every HPA was a quadratic cost (100 million
    selector tests per sync period). Only the usages are kept, not the decoded list."""

    def __init__(self, api: MetricsApi, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.api = api
        self.cache: TTLCache[LabelIndex[PodUsage]] = TTLCache(ttl, clock)

    async def _indexed(self, namespace: str) -> LabelIndex[PodUsage]:
        return LabelIndex(pod_usages(await self.api.list_pod_metrics(namespace)), lambda usage: usage.labels)

    async def pod_usages(self, namespace: str, selector: Any) -> list[PodUsage]:
        """The usage of the namespace's pods `selector` matches; the first is the list's first match
        (its timestamp is the list's, as upstream reads it)."""
        index = await self.cache.get(namespace, lambda: self._indexed(namespace))
        return [usage for group in index.select(selector) for usage in group.items]
