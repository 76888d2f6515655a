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

Pods and PodMetrics can be replaced later (``set_pods``, ``set_pod_metrics``; the simulator does
at each step). Selection rules are those of docs/offline.md#how-metrics-are-matched: PodMetrics are selected by the HPA's pod
selector applied to the PodMetrics' own labels within the namespace; a custom metric item's
``metric.selector.matchLabels`` (or an external item's ``metricLabels``) are the series labels a
source's ``metric.selector`` is matched against; Pods items count only for pods the selector
selects; Object items must match the described object's kind, name and namespace; an external
list with ``metadata.namespace`` serves only that namespace. A metric nobody provides answers
like a metrics API that returned nothing; a missing scale target is a failed GET.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping, TypeVar

from pyhpa.adapters.label_index import LabelIndex
from pyhpa.adapters.metrics_lists import ZERO_TIME, PodUsage, custom_metric_info, pod_usages, resource_metric_info
from pyhpa.adapters.selector_index import IndexedSelectorRegistry
from pyhpa.api.codec import from_wire
from pyhpa.api.selectors import Selector, SelectorError, selector_from_label_selector
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
    PodMetricsView,
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
    PodListError,
    Ports,
    ScaleError,
    StatusUpdateError,
)
from pyhpa.engine.inputs import PodMetricsInfo
from pyhpa.engine.pods import EMPTY_PODS, PodSet
from pyhpa.engine.state import AutoscalerState

T = TypeVar("T")


# kind -> (API group, resource plural) of the workloads that expose a scale subresource.
SCALABLE_KINDS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "Deployment": ("apps", "deployments"),
    "ReplicaSet": ("apps", "replicasets"),
    "StatefulSet": ("apps", "statefulsets"),
    "ReplicationController": ("", "replicationcontrollers"),
})


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
    if not api_version:
        return ""
    group, slash, _ = api_version.partition("/")
    return group if slash else ""


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


def _pod_index(pods: Iterable[PodView]) -> LabelIndex[PodView]:
    """One namespace's pods by label set, each group's ``PodSet`` computed with it; the groups of
    each selector kept (every sync lists them, until the pods change)."""
    return LabelIndex(pods, _labels_of, PodSet.of, keep_selections=True)


def _selected_pods(index: LabelIndex[PodView], selector: Selector) -> PodSet:
    groups = index.select(selector)
    if not groups:
        return EMPTY_PODS
    if len(groups) == 1:  # a workload's pods mostly share one label set
        return groups[0].summary
    return PodSet.of(p for g in groups for p in g.items)


def _labels_of(obj: Any) -> Mapping[str, str] | None:
    return obj.metadata.labels


def _usage_labels(usage: PodUsage) -> Mapping[str, str]:
    return usage.labels


class MemoryCluster:
    """A whole cluster in memory; implements every port (see the module docstring).

    Pods and resource metrics are kept per namespace in label indexes rebuilt whenever they are
    replaced (``set_pods``, ``set_pod_metrics``, ``set_pod_usage``): the index is where the
    engine's pod facts (``PodSet``) are computed. Workloads are typed views, changed in place
    (``spec.replicas``, ``status.replicas``); their Scale selector is rendered when they are
    stored (``put_workload``).
    """

    def __init__(
        self,
        hpas: Iterable[HorizontalPodAutoscaler | dict] = (),
        workloads: Iterable[WorkloadView | dict] = (),
        pods: Iterable[PodView | dict] = (),
        pod_metrics: Iterable[PodMetrics | PodMetricsView | dict] = (),
        metric_values: Iterable[MetricValue | MetricValueList | dict] = (),
        external_metrics: Iterable[ExternalMetricValueList | ExternalMetricValue | dict] = (),
        states: Mapping[str, AutoscalerState] | None = None,
        keep_status_writes: bool = True,
    ) -> None:
        self.hpas: dict[str, HorizontalPodAutoscaler] = {}
        for h in hpas:
            hpa = _convert(h, HorizontalPodAutoscaler)
            self.hpas[hpa_key(hpa)] = hpa
        # (namespace, kind, name) -> workload, and the selector its Scale shows (or why it has none)
        self.workloads: dict[tuple[str, str, str], WorkloadView] = {}
        self._scale_selectors: dict[tuple[str, str, str], str | SelectorError] = {}
        self._resource_versions: dict[tuple[str, str, str], int] = {}
        for w in workloads:
            self.put_workload(_convert(w, WorkloadView))
        self._pods: dict[str, LabelIndex[PodView]] = {}
        self._usage: dict[str, LabelIndex[PodUsage]] = {}
        self.set_pods([_convert(p, PodView) for p in pods])
        self.set_pod_metrics([m if isinstance(m, (PodMetrics, PodMetricsView)) else _convert(m, PodMetricsView)
                              for m in pod_metrics])
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
        self.selector_registry = IndexedSelectorRegistry()
        self.events: list[RecordedEvent] = []
        self.keep_status_writes = keep_status_writes  # a long simulation would hold every write
        self.status_writes: list[HorizontalPodAutoscaler] = []
        self.scale_updates: list[tuple[str, str, str, int]] = []
        # Failure injection for tests and the simulator.
        self.conflicts_to_raise = 0
        self.scale_update_error: str | None = None
        self.status_update_error: str | None = None
        self.pod_list_error: str | None = None
        self.resource_metrics_error: str | None = None
        self._preregister()

    # ------------------------------------------------------------------ contents

    def put_workload(self, wl: WorkloadView) -> None:
        """Store (or replace) a scale target; its Scale selector is rendered here."""
        key = (wl.metadata.namespace or "", wl.kind, wl.metadata.name or "")
        self.workloads[key] = wl
        try:
            self._scale_selectors[key] = workload_selector_string(wl)
        except SelectorError as exc:  # a GET of its scale fails
            self._scale_selectors[key] = exc
        self._resource_versions.setdefault(key, 1)

    def set_pods(self, pods: Iterable[PodView], namespace: str | None = None) -> None:
        """Replace the pods of ``namespace`` (every namespace when None) by ``pods``."""
        if namespace is not None:
            self._pods[namespace] = _pod_index(pods)
            return
        self._pods = {ns: _pod_index(items) for ns, items in _by_namespace(pods, _namespace_of).items()}

    def pods(self, namespace: str) -> tuple[PodView, ...]:
        """The pods of ``namespace``, grouped by label set."""
        index = self._pods.get(namespace)
        return () if index is None else tuple(p for g in index.groups for p in g.items)

    def set_pod_metrics(self, items: Iterable[PodMetrics | PodMetricsView], namespace: str | None = None) -> None:
        """Replace the resource metrics (metrics.k8s.io PodMetrics) of ``namespace`` (every
        namespace when None)."""
        self.set_pod_usage(pod_usages(list(items)), namespace)

    def set_pod_usage(self, usages: Iterable[PodUsage], namespace: str | None = None) -> None:
        """``set_pod_metrics`` with the PodMetrics already read (``pod_usages``)."""
        if namespace is not None:
            self._usage[namespace] = LabelIndex(usages, _usage_labels)
            return
        self._usage = {ns: LabelIndex(items, _usage_labels)
                       for ns, items in _by_namespace(usages, _usage_namespace).items()}

    def _preregister(self) -> None:
        """Know every HPA's selector up front, as a controller that has run for a while does."""
        for key, hpa in self.hpas.items():
            self.selector_registry.register(key)
            ns = hpa.metadata.namespace or ""
            ref = hpa.spec.scale_target_ref
            text = self._scale_selectors.get((ns, ref.kind, ref.name))
            if not isinstance(text, str) or not text:
                continue
            try:
                self.selector_registry.put_selector(key, Selector.parse(text), text)
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
        selector = self._scale_selectors[key]
        if isinstance(selector, SelectorError):
            raise ScaleError(str(selector))
        replicas = wl.spec.replicas if wl.spec.replicas is not None else 1
        return new_scale(ref.name, namespace, replicas, wl.status.replicas, selector, str(self._resource_versions[key]))

    async def update_scale(self, namespace: str, ref: CrossVersionObjectReference, scale: Scale) -> Scale:
        key, wl = self._workload_for(namespace, ref)
        if self.conflicts_to_raise > 0:
            self.conflicts_to_raise -= 1
            self._resource_versions[key] += 1
            raise ConflictError(_conflict_text(ref))
        if self.scale_update_error is not None:
            raise ScaleError(self.scale_update_error)
        rv = scale.metadata.resource_version
        if rv is not None and rv != str(self._resource_versions[key]):
            raise ConflictError(_conflict_text(ref))
        wl.spec.replicas = scale.spec.replicas
        self._resource_versions[key] += 1
        self.scale_updates.append((namespace, ref.kind, ref.name, scale.spec.replicas))
        return await self.get_scale(namespace, ref)

    # ------------------------------------------------------------------ PodLister

    async def list_pods(self, namespace: str, selector: Selector) -> PodSet:
        if self.pod_list_error is not None:
            raise PodListError(self.pod_list_error)
        index = self._pods.get(namespace)
        return EMPTY_PODS if index is None else _selected_pods(index, selector)

    # ------------------------------------------------------------------ MetricsClient

    async def get_resource_metric(
        self, resource: str, namespace: str, selector: Selector, container: str = ""
    ) -> tuple[PodMetricsInfo, datetime]:
        if self.resource_metrics_error is not None:
            raise MetricsError(self.resource_metrics_error)
        index = self._usage.get(namespace)
        groups = index.select(selector) if index is not None else []
        usages = groups[0].items if len(groups) == 1 else [u for g in groups for u in g.items]
        return resource_metric_info(usages, resource, container)

    async def get_raw_metric(
        self, metric_name: str, namespace: str, selector: Selector, metric_selector: Selector
    ) -> tuple[PodMetricsInfo, datetime]:
        index = self._pods.get(namespace)
        selected = set() if index is None else {p.metadata.name for g in index.select(selector) for p in g.items}
        return custom_metric_info([
            v
            for v in self.metric_values
            if v.described_object.kind == "Pod"
            and v.metric.name == metric_name
            and (v.described_object.namespace or namespace) == namespace
            and v.described_object.name in selected
            and metric_selector.matches(_series_labels(v))
        ])

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
            return v.value.milli_int64(), v.timestamp or ZERO_TIME
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
        return [v.value.milli_int64() for v in items], items[0].timestamp or ZERO_TIME

    # ------------------------------------------------------------------ StatusWriter

    async def update_status(self, hpa: HorizontalPodAutoscaler) -> None:
        if self.status_update_error is not None:
            raise StatusUpdateError(self.status_update_error)
        self.hpas[hpa_key(hpa)] = hpa
        if self.keep_status_writes:
            self.status_writes.append(hpa)

    # ------------------------------------------------------------------ EventRecorder

    def event(self, hpa: HorizontalPodAutoscaler, event_type: str, reason: str, message: str,
              at: datetime | None = None) -> None:
        self.events.append(
            RecordedEvent(hpa.metadata.namespace or "", hpa.metadata.name or "", event_type, reason, message, hpa.metadata.uid)
        )


def _conflict_text(ref: CrossVersionObjectReference) -> str:
    return (f'Operation cannot be fulfilled on {SCALABLE_KINDS[ref.kind][1]} "{ref.name}": '
            "the object has been modified; please apply your changes to the latest version and try again")


def _namespace_of(obj: Any) -> str:
    return obj.metadata.namespace or ""


def _usage_namespace(usage: PodUsage) -> str:
    return usage.namespace


def _by_namespace(items: Iterable[T], namespace_of: Callable[[T], str]) -> dict[str, list[T]]:
    out: dict[str, list[T]] = {}
    for item in items:
        out.setdefault(namespace_of(item), []).append(item)
    return out


def _series_labels(v: MetricValue) -> dict[str, str]:
    sel = v.metric.selector
    if sel is None or not sel.match_labels:
        return {}
    return sel.match_labels
