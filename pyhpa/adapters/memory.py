"""In-memory implementations of every reconcile port, over typed objects.

Used by ``pyhpa reconcile`` (a snapshot of files), the simulator and the tests. No method ever
suspends, so a reconcile over this cluster can be driven with ``run_sync``.

Construction::

    cluster = MemoryCluster(
        hpas=[...],              # HorizontalPodAutoscaler (autoscaling/v2, defaulted)
        workloads=[...],         # WorkloadView or dict (Deployment, ReplicaSet, StatefulSet, RC)
        pods=[...],              # PodView or dict
        pod_metrics=[...],       # PodMetrics or dict (metrics.k8s.io)
        metric_values=[...],     # MetricValue / MetricValueList or dict (custom.metrics.k8s.io)
        external_metrics=[...],  # ExternalMetricValueList / ExternalMetricValue or dict
        states={"ns/name": AutoscalerState(...)},
    )
    result = run_sync(reconcile_hpa(hpa, cluster.ports(), config, now))

Selection rules are those of the reconcile contract: PodMetrics are selected by the HPA's pod
selector applied to the PodMetrics' own labels within the namespace; a custom metric item's
``metric.selector.matchLabels`` (or an external item's ``metricLabels``) are the series labels a
source's ``metric.selector`` is matched against; Pods items count only for pods the selector
selects; Object items must match the described object's kind, name and namespace; an external
list with ``metadata.namespace`` serves only that namespace. A metric nobody provides answers
like a metrics API that returned nothing; a missing scale target is a failed GET.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Sequence

from mypy_extensions import mypyc_attr

from pyhpa.api.codec import from_wire
from pyhpa.api.quantity import Quantity
from pyhpa.api.selectors import Selector, SelectorError, selector_from_label_selector
from pyhpa.api.timefmt import parse_duration
from pyhpa.api.types import (
    CrossVersionObjectReference,
    ExternalMetricValue,
    ExternalMetricValueList,
    HorizontalPodAutoscaler,
    LabelSelector,
    MetricValue,
    MetricValueList,
    ObjectMeta,
    PodMetrics,
    PodView,
    Scale,
    WorkloadSpecView,
    WorkloadStatusView,
    WorkloadView,
    hpa_key,
    new_scale,
)
from pyhpa.controller.ports import (
    ConflictError,
    MappingError,
    MetricsError,
    Ports,
    ScaleError,
    SelectorRegistry,
    StatusUpdateError,
)
from pyhpa.engine.inputs import PodMetric, PodMetricsInfo
from pyhpa.engine.state import AutoscalerState

ZERO_TIME = datetime(1, 1, 1, tzinfo=timezone.utc)

# kind -> (API group, resource plural) of the workloads that expose a scale subresource.
SCALABLE_KINDS: dict[str, tuple[str, str]] = {
    "Deployment": ("apps", "deployments"),
    "ReplicaSet": ("apps", "replicasets"),
    "StatefulSet": ("apps", "statefulsets"),
    "ReplicationController": ("", "replicationcontrollers"),
}


def _convert(obj: Any, typ: type) -> Any:
    """A typed object from a struct or a wire dict (Go decoding rules via the codec)."""
    if isinstance(obj, typ):
        return obj
    if typ is WorkloadView:
        return _workload_from_dict(obj)
    return from_wire(obj, typ)


def _workload_from_dict(obj: dict) -> WorkloadView:
    """WorkloadView from a dict; its selector is a LabelSelector or an RC's plain map.

    Built field by field: msgspec cannot decode the selector's struct-or-map union.
    """
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    sel = spec.get("selector")
    selector: LabelSelector | dict[str, str] | None = None
    if isinstance(sel, dict):
        if "matchLabels" in sel or "matchExpressions" in sel:
            selector = from_wire(sel, LabelSelector)
        else:
            selector = {str(k): str(v) for k, v in sel.items()}
    replicas = spec.get("replicas")
    return WorkloadView(
        api_version=obj.get("apiVersion") or "",
        kind=obj.get("kind") or "",
        metadata=from_wire(obj.get("metadata") or {}, ObjectMeta),
        spec=WorkloadSpecView(replicas=int(replicas) if replicas is not None else None, selector=selector),
        status=WorkloadStatusView(replicas=int(status.get("replicas") or 0)),
    )


def _group_of(api_version: str | None) -> str:
    if not api_version or "/" not in api_version:
        return ""
    return api_version.split("/", 1)[0]


def _milli(q: Quantity) -> int:
    return q.milli_int64()


def workload_selector_string(workload: WorkloadView) -> str:
    """The Scale's ``status.selector``: a LabelSelector rendered, or an RC map as sorted k=v."""
    sel = workload.spec.selector
    if sel is None:
        return ""
    if isinstance(sel, LabelSelector):
        return str(selector_from_label_selector(sel))
    if isinstance(sel, dict):
        if "matchLabels" in sel or "matchExpressions" in sel:
            return str(selector_from_label_selector(sel))
        return ",".join(f"{k}={sel[k]}" for k in sorted(sel))
    return ""


@dataclass
class RecordedEvent:
    """An Event the reconcile emitted on an HPA."""

    namespace: str
    hpa_name: str
    type: str
    reason: str
    message: str
    hpa_uid: str | None = None


@mypyc_attr(allow_interpreted_subclasses=True)  # the offline pass specialises it
class MemorySelectorRegistry:
    """HPA key -> selector, matched per namespace (upstream's selector BiMultimap)."""

    def __init__(self) -> None:
        self._selectors: dict[str, Selector] = {}

    def register(self, key: str) -> None:
        self._selectors.setdefault(key, Selector.nothing())

    def put_selector(self, key: str, selector: Selector) -> None:
        if key in self._selectors:
            self._selectors[key] = selector

    def hpas_selecting(self, namespace: str, labels: dict[str, str]) -> set[str]:
        prefix = namespace + "/"
        return {k for k, s in self._selectors.items() if k.startswith(prefix) and s.matches(labels)}

    def remove(self, key: str) -> None:
        self._selectors.pop(key, None)


class MemoryStateStore:
    """AutoscalerState per HPA key, in a dict."""

    def __init__(self, states: Mapping[str, AutoscalerState] | None = None) -> None:
        self.states: dict[str, AutoscalerState] = dict(states or {})

    def get(self, key: str) -> AutoscalerState | None:
        return self.states.get(key)

    def put(self, key: str, state: AutoscalerState) -> None:
        self.states[key] = state

    def delete(self, key: str) -> None:
        self.states.pop(key, None)


@mypyc_attr(allow_interpreted_subclasses=True)  # the offline pass and tests specialise it
class MemoryCluster:
    """A whole cluster in dicts; implements every port (see the module docstring)."""

    def __init__(
        self,
        hpas: Iterable[HorizontalPodAutoscaler | dict] = (),
        workloads: Iterable[WorkloadView | dict] = (),
        pods: Iterable[PodView | dict] = (),
        pod_metrics: Iterable[PodMetrics | dict] = (),
        metric_values: Iterable[MetricValue | MetricValueList | dict] = (),
        external_metrics: Iterable[ExternalMetricValueList | ExternalMetricValue | dict] = (),
        states: Mapping[str, AutoscalerState] | None = None,
        preregister_selectors: bool = True,
    ) -> None:
        self.hpas: dict[str, HorizontalPodAutoscaler] = {}
        for h in hpas:
            hpa = _convert(h, HorizontalPodAutoscaler)
            self.hpas[hpa_key(hpa)] = hpa
        # (namespace, kind, name) -> workload
        self.workloads: dict[tuple[str, str, str], WorkloadView] = {}
        for w in workloads:
            wl = _convert(w, WorkloadView)
            self.workloads[(wl.metadata.namespace or "", wl.kind, wl.metadata.name or "")] = wl
        self._resource_versions: dict[tuple[str, str, str], int] = {k: 1 for k in self.workloads}
        self.pods: list[PodView] = [_convert(p, PodView) for p in pods]
        self.pod_metrics: list[PodMetrics] = [_convert(m, PodMetrics) for m in pod_metrics]
        self.metric_values: list[MetricValue] = []
        for mv in metric_values:
            if isinstance(mv, dict):
                mv = _convert(mv, MetricValueList if "items" in mv else MetricValue)
            if isinstance(mv, MetricValueList):
                self.metric_values.extend(mv.items)
            else:
                self.metric_values.append(mv)
        # (namespace or None, value)
        self.external_values: list[tuple[str | None, ExternalMetricValue]] = []
        for em in external_metrics:
            if isinstance(em, dict):
                em = _convert(em, ExternalMetricValueList if "items" in em else ExternalMetricValue)
            if isinstance(em, ExternalMetricValueList):
                ns = em.metadata.namespace
                self.external_values.extend((ns, item) for item in em.items)
            else:
                self.external_values.append((None, em))
        self.state_store = MemoryStateStore(states)
        self.selector_registry: SelectorRegistry = MemorySelectorRegistry()
        self.events: list[RecordedEvent] = []
        self.status_writes: list[HorizontalPodAutoscaler] = []
        self.scale_updates: list[tuple[str, str, str, int]] = []
        # Failure injection for tests and the simulator.
        self.conflicts_to_raise = 0
        self.scale_update_error: str | None = None
        self.status_update_error: str | None = None
        self.pod_list_error: str | None = None
        if preregister_selectors:
            self._preregister()

    # ------------------------------------------------------------------ helpers

    def _preregister(self) -> None:
        """Know every HPA's selector up front, as a controller that has run for a while does."""
        for key, hpa in self.hpas.items():
            self.selector_registry.register(key)
            ns = hpa.metadata.namespace or ""
            ref = hpa.spec.scale_target_ref
            wl = self.workloads.get((ns, ref.kind, ref.name))
            if wl is None:
                continue
            try:
                text = workload_selector_string(wl)
                if text:
                    self.selector_registry.put_selector(key, Selector.parse(text))
            except SelectorError:
                continue

    def ports(self) -> Ports:
        return Ports(
            scales=self,
            pods=self,
            metrics=self,
            status=self,
            events=self,
            state=self.state_store,
            selectors=self.selector_registry,
        )

    def _workload_for(self, namespace: str, ref: CrossVersionObjectReference) -> tuple[tuple[str, str, str], WorkloadView]:
        kinds = SCALABLE_KINDS.get(ref.kind)
        group = _group_of(ref.api_version)
        if kinds is None or (group and group != kinds[0] and not (ref.kind != "ReplicationController" and group == "extensions")):
            raise MappingError(f'no matches for kind "{ref.kind}" in group "{group}"')
        key = (namespace, ref.kind, ref.name)
        wl = self.workloads.get(key)
        if wl is None:
            resource = kinds[1] + (f".{kinds[0]}" if kinds[0] else "")
            raise ScaleError(f'{resource} "{ref.name}" not found')
        return key, wl

    # ------------------------------------------------------------------ ScaleClient

    async def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        key, wl = self._workload_for(namespace, ref)
        replicas = wl.spec.replicas if wl.spec.replicas is not None else 1
        scale = new_scale(ref.name, namespace, replicas, wl.status.replicas, workload_selector_string(wl))
        scale.metadata.resource_version = str(self._resource_versions.get(key, 1))
        return scale

    async def update_scale(self, namespace: str, ref: CrossVersionObjectReference, scale: Scale) -> Scale:
        key, wl = self._workload_for(namespace, ref)
        if self.conflicts_to_raise > 0:
            self.conflicts_to_raise -= 1
            self._resource_versions[key] = self._resource_versions.get(key, 1) + 1
            raise ConflictError(
                f'Operation cannot be fulfilled on {SCALABLE_KINDS[ref.kind][1]} "{ref.name}": '
                "the object has been modified; please apply your changes to the latest version and try again"
            )
        if self.scale_update_error is not None:
            raise ScaleError(self.scale_update_error)
        rv = scale.metadata.resource_version
        if rv is not None and rv != str(self._resource_versions.get(key, 1)):
            raise ConflictError(
                f'Operation cannot be fulfilled on {SCALABLE_KINDS[ref.kind][1]} "{ref.name}": '
                "the object has been modified; please apply your changes to the latest version and try again"
            )
        wl.spec.replicas = scale.spec.replicas
        self._resource_versions[key] = self._resource_versions.get(key, 1) + 1
        self.scale_updates.append((namespace, ref.kind, ref.name, scale.spec.replicas))
        return await self.get_scale(namespace, ref)

    # ------------------------------------------------------------------ PodLister

    async def list_pods(self, namespace: str, selector: Selector) -> Sequence[PodView]:
        if self.pod_list_error is not None:
            from pyhpa.controller.ports import PodListError

            raise PodListError(self.pod_list_error)
        return [
            p
            for p in self.pods
            if (p.metadata.namespace or "") == namespace and selector.matches(p.metadata.labels or {})
        ]

    # ------------------------------------------------------------------ MetricsClient

    async def get_resource_metric(
        self, resource: str, namespace: str, selector: Selector, container: str = ""
    ) -> tuple[PodMetricsInfo, datetime]:
        items = [
            m
            for m in self.pod_metrics
            if (m.metadata.namespace or "") == namespace and selector.matches(m.metadata.labels or {})
        ]
        if not items:
            raise MetricsError("no metrics returned from resource metrics API")
        out: PodMetricsInfo = {}
        for m in items:
            value = _pod_usage(m, resource, container)
            if value is None:
                continue
            window = _window_seconds(m.window)
            out[m.metadata.name or ""] = PodMetric(value, m.timestamp or ZERO_TIME, window)
        return out, items[0].timestamp or ZERO_TIME

    async def get_raw_metric(
        self, metric_name: str, namespace: str, selector: Selector, metric_selector: Selector
    ) -> tuple[PodMetricsInfo, datetime]:
        selected = {
            p.metadata.name
            for p in self.pods
            if (p.metadata.namespace or "") == namespace and selector.matches(p.metadata.labels or {})
        }
        items = [
            v
            for v in self.metric_values
            if v.described_object.kind == "Pod"
            and v.metric.name == metric_name
            and (v.described_object.namespace or namespace) == namespace
            and v.described_object.name in selected
            and metric_selector.matches(_series_labels(v))
        ]
        if not items:
            raise MetricsError("no metrics returned from custom metrics API")
        out: PodMetricsInfo = {}
        for v in items:
            window = float(v.window_seconds) if v.window_seconds is not None else 60.0
            out[v.described_object.name] = PodMetric(_milli(v.value), v.timestamp or ZERO_TIME, window)
        return out, items[0].timestamp or ZERO_TIME

    async def get_object_metric(
        self,
        metric_name: str,
        namespace: str,
        ref: CrossVersionObjectReference,
        metric_selector: Selector,
    ) -> tuple[int, datetime]:
        is_namespace = ref.kind == "Namespace" and _group_of(ref.api_version) == ""
        for v in self.metric_values:
            obj = v.described_object
            if v.metric.name != metric_name or obj.kind != ref.kind:
                continue
            if is_namespace:
                if obj.name != namespace:
                    continue
            elif obj.name != ref.name or (obj.namespace or namespace) != namespace:
                continue
            if not metric_selector.matches(_series_labels(v)):
                continue
            return _milli(v.value), v.timestamp or ZERO_TIME
        name = namespace if is_namespace else ref.name
        raise MetricsError(
            "unable to fetch metrics from custom metrics API: "
            f"the server could not find the metric {metric_name} for {ref.kind.lower()}s {name}"
        )

    async def get_external_metric(
        self, metric_name: str, namespace: str, selector: Selector
    ) -> tuple[list[int], datetime]:
        items = [
            v
            for ns, v in self.external_values
            if v.metric_name == metric_name and (ns is None or ns == namespace) and selector.matches(v.metric_labels or {})
        ]
        if not items:
            raise MetricsError("no metrics returned from external metrics API")
        return [_milli(v.value) for v in items], items[0].timestamp or ZERO_TIME

    # ------------------------------------------------------------------ StatusWriter

    async def update_status(self, hpa: HorizontalPodAutoscaler) -> None:
        if self.status_update_error is not None:
            raise StatusUpdateError(self.status_update_error)
        self.hpas[hpa_key(hpa)] = hpa
        self.status_writes.append(hpa)

    # ------------------------------------------------------------------ EventRecorder

    def event(self, hpa: HorizontalPodAutoscaler, event_type: str, reason: str, message: str) -> None:
        self.events.append(
            RecordedEvent(hpa.metadata.namespace or "", hpa.metadata.name or "", event_type, reason, message, hpa.metadata.uid)
        )


_WINDOWS: dict[str, float] = {}


def _window_seconds(text: str | None) -> float:
    """A PodMetrics window in seconds (Go duration text), parsed once per distinct text."""
    if not text:
        return 0.0
    seconds = _WINDOWS.get(text)
    if seconds is None:
        seconds = parse_duration(text)
        if len(_WINDOWS) < 1024:
            _WINDOWS[text] = seconds
    return seconds


def _series_labels(v: MetricValue) -> dict[str, str]:
    sel = v.metric.selector
    if sel is None or not sel.match_labels:
        return {}
    return sel.match_labels


def _pod_usage(m: PodMetrics, resource: str, container: str) -> int | None:
    """Upstream's per-pod value: sum over containers, or the named container; None = left out."""
    if container:
        for c in m.containers:
            if c.name == container:
                q = c.usage.get(resource)
                return None if q is None else _milli(q)
        return None
    if not m.containers:
        return None
    total = 0
    for c in m.containers:
        q = c.usage.get(resource)
        if q is None:
            return None
        total += _milli(q)
    return total
