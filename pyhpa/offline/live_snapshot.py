"""`pyhpa snapshot`: read a live cluster into a `pyhpa reconcile` snapshot, read-only.

Everything is read through the live controller's adapters (``KubeClient``, ``MetricsApi`` with
its custom-metrics version handling, ``LeaseStateStore.load`` for the persisted memory), so the
snapshot holds what `pyhpa run` would read on its next sync: the HPAs, their scale targets, the
pods their targets select, the PodMetrics, custom and external metric values each HPA reads, and
the controller's memory as ``AutoscalerState`` objects.

Choices:
* metric values are fetched per source with the source's own selectors, as the controller asks;
  a series whose labels the server did not echo gets labels that satisfy the source's selector,
  so the offline pass selects exactly what the server answered;
* a scale target that is not one of the four built-in workload kinds cannot be written in a
  snapshot (the contract has no kind for it): a warning says so, and the reconcile then reports
  a failed GET of its scale;
* a metrics API that fails leaves its values out with a warning: the reconcile then reports
  that the API returned nothing, which is also a failed metric to the controller.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable

from pyhpa.adapters.kube.client import ApiError, KubeClient
from pyhpa.adapters.kube.discovery import Discovery
from pyhpa.adapters.kube.metrics_api import MetricsApi
from pyhpa.adapters.kube.state import LeaseStateStore
from pyhpa.adapters.memory import SCALABLE_KINDS
from pyhpa.api.codec import to_wire
from pyhpa.api.conversion import hpa_from_any_wire
from pyhpa.api.selectors import Selector, SelectorError, selector_from_label_selector
from pyhpa.api.timefmt import format_micro_time
from pyhpa.controller.flags import CONFIG_ANNOTATION, DEFAULT_LEASE, SHARD_SET_LABEL, flags_of_document
from pyhpa.engine.state import AutoscalerState

HPA_GROUP_VERSION = "autoscaling/v2"
RESOURCE_SOURCES = ("Resource", "ContainerResource")


class SnapshotError(Exception):
    """The cluster could not be read; ``str()`` is one line for the user."""


@dataclass
class LiveSnapshot:
    """The snapshot's objects in the contract's wire form, plus what the user should know."""

    items: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    state_keys: set[str] = field(default_factory=set)  # HPAs whose persisted memory was found
    controller_config: dict[str, Any] | None = None  # the running controller's published document
    controller_config_missing: str = ""  # why none was found (for the "assuming defaults" line)

    def as_list(self) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": self.items}


def api_error_line(exc: ApiError, what: str) -> str:
    """One line for a failed read, naming what was read and RBAC when it is the cause."""
    if exc.code == 0:
        at = f" at {exc.server}" if exc.server else ""
        return f"{what}: cannot reach the API server{at}: {exc.message}"
    if exc.code == 401:
        return f"{what}: unauthorized (401): the credentials of the kubeconfig were refused"
    if exc.code == 403:
        return f"{what}: forbidden (403, RBAC): {exc.message}"
    return f"{what}: {exc.message or exc.reason} ({exc.code})"


def _clean(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        obj = dict(obj)
        obj["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return obj


def _typed(api_version: str, kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """A list item as a document: apiVersion and kind first (list items carry none), no managedFields."""
    out: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    out.update((k, v) for k, v in _clean(obj).items() if k not in ("apiVersion", "kind"))
    return out


def _workload_selector(workload: dict[str, Any]) -> Selector | None:
    """The selector the target's scale subresource shows (None: it has none usable)."""
    sel = (workload.get("spec") or {}).get("selector")
    if not sel:
        return None
    try:
        if workload.get("kind") == "ReplicationController" and not ({"matchLabels", "matchExpressions"} & set(sel)):
            return Selector.parse(",".join(f"{k}={sel[k]}" for k in sorted(sel)))
        return selector_from_label_selector(sel)
    except SelectorError:
        return None


def labels_satisfying(label_selector: Any) -> dict[str, str]:
    """Series labels a source's metric selector matches (for values the server did not label)."""
    if label_selector is None:
        return {}
    labels = dict(getattr(label_selector, "match_labels", None) or {})
    for expr in getattr(label_selector, "match_expressions", None) or []:
        if expr.operator == "In" and expr.values:
            labels[expr.key] = expr.values[0]
        elif expr.operator == "Exists":
            labels.setdefault(expr.key, "")
    return labels


def _metric_selector(label_selector: Any) -> Selector:
    return Selector.everything() if label_selector is None else selector_from_label_selector(label_selector)


def _state_wire(state: AutoscalerState, namespace: str, name: str) -> dict[str, Any]:
    """The AutoscalerState object with the persisted times to the microsecond (the reconcile
    output's form rounds to seconds, which could move a window's edge)."""
    out = state.to_wire(namespace, name)
    for key, entries in (("recommendations", state.recommendations), ("scaleUpEvents", state.scale_up_events),
                         ("scaleDownEvents", state.scale_down_events)):
        for wire, entry in zip(out.get(key) or [], entries or ()):
            wire["timestamp"] = format_micro_time(entry.timestamp)
    return out


class _Collector:
    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self.metrics = MetricsApi(client, Discovery(client))
        self.snap = LiveSnapshot()
        self.workloads: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.pods: dict[tuple[str, str], dict[str, Any]] = {}
        self.pod_metrics: dict[tuple[str, str], dict[str, Any]] = {}
        self.custom: list[dict[str, Any]] = []
        self.external: list[dict[str, Any]] = []
        self.listed_pod_metrics: dict[str, ApiError | list[Any]] = {}
        self.only: str | None = None  # the HPA asked about (`explain`): warnings about others are left out

    def warn(self, hpa_key: str, text: str) -> None:
        """A warning that concerns HPA ``hpa_key`` (once; none about HPAs other than ``only``)."""
        if (self.only is None or hpa_key == self.only) and text not in self.snap.warnings:
            self.snap.warnings.append(text)

    async def get(self, path: str, what: str, params: dict[str, str] | None = None) -> Any:
        try:
            return await self.client.get(path, dict, params)
        except ApiError as exc:
            raise SnapshotError(api_error_line(exc, what)) from None

    async def hpas(self, namespace: str | None, name: str | None) -> list[dict[str, Any]]:
        base = f"/apis/{HPA_GROUP_VERSION}"
        scope = f"{base}/namespaces/{namespace}" if namespace else base
        if name is not None:
            try:
                await self.client.get(f"{scope}/horizontalpodautoscalers/{name}", dict)
            except ApiError as exc:
                if exc.is_not_found:
                    raise SnapshotError(f'horizontalpodautoscaler "{name}" not found in namespace "{namespace}"') from None
                raise SnapshotError(api_error_line(exc, f"reading horizontalpodautoscaler {namespace}/{name}")) from None
        where = f'namespace "{namespace}"' if namespace else "all namespaces"
        listed = await self.get(f"{scope}/horizontalpodautoscalers", f"listing horizontalpodautoscalers in {where}")
        items = [_typed(HPA_GROUP_VERSION, "HorizontalPodAutoscaler", h)
                 for h in listed.get("items") or []]
        return sorted(items, key=lambda h: (h["metadata"].get("namespace", ""), h["metadata"].get("name", "")))

    async def workload(self, namespace: str, hpa_key: str, ref: dict[str, Any]) -> dict[str, Any] | None:
        kind, name, api_version = ref.get("kind", ""), ref.get("name", ""), ref.get("apiVersion", "")
        entry = SCALABLE_KINDS.get(kind)
        group = api_version.rpartition("/")[0]
        if entry is None or group != entry[0]:
            self.warn(hpa_key,
                f"{hpa_key}: scale target {api_version} {kind} {name} cannot be held by a snapshot (only "
                "Deployment, ReplicaSet, StatefulSet, ReplicationController): the reconcile reports a failed GET of its scale")
            return None
        key = (namespace, kind, name)
        if key in self.workloads:
            return self.workloads[key]
        prefix = f"/apis/{group}/v1" if group else "/api/v1"
        try:
            obj = await self.client.get(f"{prefix}/namespaces/{namespace}/{entry[1]}/{name}", dict)
        except ApiError as exc:
            if exc.is_not_found:
                return None  # as for the controller: a failed GET of the scale
            raise SnapshotError(api_error_line(exc, f"reading {entry[1]} {namespace}/{name}")) from None
        obj = _typed(f"{group}/v1" if group else "v1", kind, obj)
        self.workloads[key] = obj
        return obj

    async def select_pods(self, namespace: str, selector: Selector) -> None:
        listed = await self.get(f"/api/v1/namespaces/{namespace}/pods", f"listing pods in namespace \"{namespace}\"",
                                {"labelSelector": str(selector)})
        for pod in listed.get("items") or []:
            pod = _typed("v1", "Pod", pod)
            self.pods.setdefault((namespace, pod["metadata"]["name"]), pod)

    async def resource_metrics(self, namespace: str, hpa_key: str, selector: Selector) -> None:
        if namespace not in self.listed_pod_metrics:
            try:
                self.listed_pod_metrics[namespace] = await self.metrics.list_pod_metrics(namespace)
            except ApiError as exc:
                self.listed_pod_metrics[namespace] = exc
        listed = self.listed_pod_metrics[namespace]
        if isinstance(listed, ApiError):
            self.warn(hpa_key, api_error_line(listed, f"resource metrics API, namespace {namespace}")
                      + ": no PodMetrics in the snapshot")
            return
        for pm in listed:
            if selector.matches(pm.metadata.labels or {}):
                wire = _typed("metrics.k8s.io/v1beta1", "PodMetrics", to_wire(pm))
                self.pod_metrics.setdefault((namespace, pm.metadata.name or ""), wire)

    async def custom_and_external(self, namespace: str, hpa_key: str, spec: Any, selector: Selector | None) -> None:
        try:
            if spec.type == "Pods" and spec.pods is not None and selector is not None:
                src = spec.pods
                values = await self.metrics.custom_pods_metric(
                    namespace, src.metric.name, str(selector), str(_metric_selector(src.metric.selector)))
                self._custom(values, src.metric.selector)
            elif spec.type == "Object" and spec.object is not None:
                src, ref = spec.object, spec.object.described_object
                values = await self.metrics.custom_object_metric(
                    namespace, ref.api_version, ref.kind, ref.name, src.metric.name,
                    str(_metric_selector(src.metric.selector)))
                self._custom(values, src.metric.selector, namespace)
            elif spec.type == "External" and spec.external is not None:
                src = spec.external
                values = await self.metrics.external_metric(
                    namespace, src.metric.name, str(_metric_selector(src.metric.selector)))
                want = _metric_selector(src.metric.selector)
                items = []
                for v in values:
                    item = to_wire(v)
                    labels = v.metric_labels or {}
                    if not want.matches(labels):
                        item["metricLabels"] = labels | labels_satisfying(src.metric.selector)
                    items.append(item)
                self.external.append({"apiVersion": "external.metrics.k8s.io/v1beta1", "kind": "ExternalMetricValueList",
                                      "metadata": {"namespace": namespace}, "items": items})
        except (ApiError, SelectorError) as exc:
            text = api_error_line(exc, f"{hpa_key}: {spec.type} metric") if isinstance(exc, ApiError) else f"{hpa_key}: {exc}"
            self.warn(hpa_key, f"{text}: its values are not in the snapshot")

    def _custom(self, values: Iterable[Any], source_selector: Any, namespace: str | None = None) -> None:
        want = _metric_selector(source_selector)
        items = []
        for v in values:
            item = to_wire(v)
            series = dict((v.metric.selector.match_labels or {}) if v.metric.selector is not None else {})
            if not want.matches(series):
                item.setdefault("metric", {})["selector"] = {"matchLabels": series | labels_satisfying(source_selector)}
            if namespace and not (item.get("describedObject") or {}).get("namespace"):
                item.setdefault("describedObject", {})["namespace"] = namespace
            items.append(item)
        self.custom.append({"apiVersion": "custom.metrics.k8s.io/v1beta2", "kind": "MetricValueList",
                            "metadata": {}, "items": items})

    async def states(self, hpas: list[dict[str, Any]]) -> list[dict[str, Any]]:
        store = LeaseStateStore(self.client, group=HPA_GROUP_VERSION.split("/")[0])
        await store.load()  # reads only; an unreadable Lease means no memory, as for the controller
        out = []
        for hpa in hpas:
            meta = hpa["metadata"]
            key = f"{meta.get('namespace')}/{meta.get('name')}"
            state = store.get(key)
            recorded = store.recorded_uid(key)
            if state is None or (recorded and meta.get("uid") and recorded != meta.get("uid")):
                continue  # never seen, or memory of an earlier object of that name (pruned on start)
            self.snap.state_keys.add(key)
            out.append(_state_wire(state, meta.get("namespace", ""), meta.get("name", "")))
        return out


async def read_controller_config(client: KubeClient, lease: str) -> tuple[dict[str, Any] | None, str]:
    """The configuration a running `pyhpa run` publishes on its leader-election Lease
    (``NAMESPACE/NAME``), or None and why there is none (docs/controller.md#published-configuration).
    Sharded replicas (`--shards N`) have no Lease of that name: their shard Leases, labelled with
    it, carry it instead (docs/controller.md#sharding)."""
    namespace, _, name = lease.partition("/")
    what = f"Lease {namespace}/{name}"
    collection = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
    try:
        obj = await client.get(f"{collection}/{name}", dict)
    except ApiError as exc:
        if not exc.is_not_found:
            return None, api_error_line(exc, f"reading {what}")
        try:
            sharded = await client.get(collection, dict, {"labelSelector": f"{SHARD_SET_LABEL}={name}"})
        except ApiError as exc2:
            return None, api_error_line(exc2, f"listing the Leases labelled {SHARD_SET_LABEL}={name}")
        found = [_published_on(item, f"Lease {namespace}/{(item.get('metadata') or {}).get('name')}")
                 for item in sharded.get("items") or []]
        held = sorted((doc for doc, _ in found if doc is not None), key=lambda doc: doc["lease"])
        if held:
            return held[0], ""
        # no controller, or one without leader election (it has /debug/config only)
        return None, f"{what} not found" if not found else found[0][1]
    return _published_on(obj, what)


def _published_on(obj: dict[str, Any], what: str) -> tuple[dict[str, Any] | None, str]:
    """The published document on one Lease, when its holder is the controller that wrote it."""
    meta = obj.get("metadata") or {}
    text = (meta.get("annotations") or {}).get(CONFIG_ANNOTATION)
    if not text:
        return None, f"{what} has no {CONFIG_ANNOTATION} annotation"
    try:
        doc = json.loads(text)
        flags_of_document(doc)
    except ValueError as exc:
        return None, f"{what}: annotation {CONFIG_ANNOTATION}: {exc}"
    holder = (obj.get("spec") or {}).get("holderIdentity")
    if holder != doc.get("identity"):
        return None, f"{what} is not held by the controller that published its configuration"
    doc["lease"] = f"{meta.get('namespace')}/{meta.get('name')}"
    return doc, ""


async def collect_snapshot(client: KubeClient, namespace: str | None, hpa_name: str | None = None,
                           controller_lease: str | None = DEFAULT_LEASE) -> LiveSnapshot:
    """Read the HPAs of ``namespace`` (every namespace when None) and what they read, and the
    running controller's configuration from ``controller_lease`` (None: not read).

    ``hpa_name`` requires that HPA to exist (``SnapshotError`` otherwise); the other HPAs of its
    namespace are read too, because pods selected by two HPAs change the decision of both, but
    the warnings are only those about ``hpa_name``."""
    c = _Collector(client)
    c.only = f"{namespace}/{hpa_name}" if hpa_name is not None else None
    if controller_lease:
        c.snap.controller_config, c.snap.controller_config_missing = await read_controller_config(
            client, controller_lease)
    hpas = await c.hpas(namespace, hpa_name)
    for raw in hpas:
        ns = raw["metadata"].get("namespace", "")
        key = f"{ns}/{raw['metadata'].get('name', '')}"
        hpa = hpa_from_any_wire(raw, default=True)
        workload = await c.workload(ns, key, raw.get("spec", {}).get("scaleTargetRef") or {})
        selector = _workload_selector(workload) if workload is not None else None
        if selector is not None:
            await c.select_pods(ns, selector)
        for spec in hpa.spec.metrics or []:
            if spec.type in RESOURCE_SOURCES:
                if selector is not None:
                    await c.resource_metrics(ns, key, selector)
            else:
                await c.custom_and_external(ns, key, spec, selector)
    states = await c.states(hpas)
    c.snap.items = (hpas + list(c.workloads.values()) + list(c.pods.values()) + list(c.pod_metrics.values())
                    + c.custom + c.external + states
                    + ([c.snap.controller_config] if c.snap.controller_config is not None else []))
    return c.snap
