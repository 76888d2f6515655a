"""`pyhpa reconcile`: one reconcile pass over a cluster snapshot, offline and deterministic.

The snapshot's documents become the in-memory cluster (``MemoryCluster``); every HPA is then
reconciled once, ordered by namespace/name, through the same ``reconcile_hpa`` the live
controller runs, with the clock fixed at ``now``. The result is one ``v1 List``: the HPAs
(autoscaling/v2, new status), the scale targets, the Events emitted, and the controller's
memory (``AutoscalerState``) per HPA — the format is docs/offline.md#the-snapshot-format.

Choices the format leaves open:
* documents of other kinds are ignored, each with a warning (returned, the CLI prints them on
  stderr); an ``AutoscalerState`` whose HPA is not in the snapshot is ignored the same way;
* scale targets are printed in input order, Events in emission order;
* every HPA's selector is known before the pass (a controller that has been running), so pods
  selected by two HPAs make *both* report ``AmbiguousSelector``;
* objects without ``metadata.namespace`` are in ``default`` (as kubectl's default context).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

import msgspec

from pyhpa.adapters.memory import SCALABLE_KINDS, MemoryCluster
from pyhpa.adapters.metrics_lists import PodUsage, UsageError, pod_usages
from pyhpa.api.codec import to_wire
from pyhpa.api.loader import Document, LoadError, check_types, load_hpa
from pyhpa.api.schemas import BuiltinSchemas
from pyhpa.api.quantity import quantity_dec_hook
from pyhpa.api.timefmt import format_time
from pyhpa.api.types import (
    ExternalMetricValueList,
    HorizontalPodAutoscaler,
    LabelSelector,
    MetricValueList,
    ObjectMeta,
    PodMetricsView,
    PodView,
    WorkloadSpecView,
    WorkloadStatusView,
    WorkloadView,
)
from pyhpa.api.strategy import drop_disabled_fields
from pyhpa.controller.flags import CONFIG_API_VERSION, CONFIG_KIND, FlagValues, flags_of_document
from pyhpa.controller.reconcile import reconcile_hpa, run_sync
from pyhpa.engine.config import ControllerConfig
from pyhpa.engine.state import API_VERSION as STATE_API_VERSION
from pyhpa.engine.state import AutoscalerState, StateError
from pyhpa.engine.trace import DecisionTrace

DEFAULT_NAMESPACE = "default"
EVENT_SOURCE = "horizontal-pod-autoscaler"


def _group(api_version: Any) -> str:
    if not isinstance(api_version, str) or "/" not in api_version:
        return ""
    return api_version.split("/", 1)[0]


@dataclass
class Snapshot:
    """The typed objects of a snapshot, plus what the output echoes verbatim."""

    hpas: list[HorizontalPodAutoscaler] = field(default_factory=list)
    workloads: list[tuple[Document, WorkloadView]] = field(default_factory=list)
    pods: list[PodView] = field(default_factory=list)
    pod_usages: list[PodUsage] = field(default_factory=list)  # the PodMetrics, as the HPA reads them
    metric_values: list[MetricValueList] = field(default_factory=list)
    external_metrics: list[ExternalMetricValueList] = field(default_factory=list)
    states: dict[str, AutoscalerState] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


@dataclass
class PassResult:
    """The output List and, per HPA key, the decision trace (for ``--explain``)."""

    output: dict[str, Any]
    traces: list[tuple[str, DecisionTrace]]
    warnings: list[str]


def _convert(value: Any, type_: Any) -> Any:
    return msgspec.convert(value, type_, strict=False, dec_hook=quantity_dec_hook)


def _error_at(exc: msgspec.ValidationError) -> tuple[str, str]:
    """(message, path) of a msgspec error; the path as msgspec prints it (``$.a[0][...]``)."""
    text = str(exc)
    message, _, where = text.rpartition(" - at `")
    return (message, where.rstrip("`")) if message else (text, "")


def _path_steps(path: str) -> list[str]:
    """``$.a.b[0][cpu]`` -> ``["a", "b", "0", "cpu"]`` (msgspec's path syntax)."""
    return [name or bracket for name, bracket in re.findall(r"\.([^.\[]+)|\[([^\]]*)\]", path)]


def _step(node: Any, step: str) -> Any:
    return node[int(step)] if isinstance(node, list) else node[step]


def _name_map_keys(value: Any, type_: Any, message: str, path: str) -> str:
    """msgspec writes ``[...]`` for a map key; find the key whose entry alone gives the error.

    Only on the error path: each candidate is checked by decoding a copy that keeps that one
    entry of the map, so the message names ``requests[cpu]`` as the API server would.
    """
    while "[...]" in path:
        head, _, tail = path.partition("[...]")
        steps = _path_steps(head)
        try:
            parent = value
            for step in steps:
                parent = _step(parent, step)
        except (KeyError, IndexError, TypeError, ValueError):
            return path
        if not isinstance(parent, dict):
            return path
        found = None
        for key in parent:
            trial = copy.deepcopy(value)
            node = trial
            for step in steps:
                node = _step(node, step)
            node.clear()
            node[key] = parent[key]
            try:
                _convert(trial, type_)
            except msgspec.ValidationError as exc:
                if _error_at(exc)[0] == message:
                    found = key
                    break
        if found is None:
            return path
        path = f"{head}[{found}]{tail}"
    return path


def _decode(doc: Document, type_: type) -> Any:
    """A lenient typed view of a document; a type mismatch names file, document and field."""
    try:
        return _convert(doc.raw, type_)
    except msgspec.ValidationError as exc:
        message, where = _error_at(exc)
        if "[...]" in where:
            where = _name_map_keys(doc.raw, type_, message, where)
        path = where.removeprefix("$").lstrip(".")
        message = message if where else str(exc)
        raise LoadError(
            f"{doc.where}: {path + ': ' if path else ''}{message}",
            source=doc.source, index=doc.index, field=path or None,
        ) from None
    except (ValueError, TypeError) as exc:
        raise LoadError(f"{doc.where}: {exc}", source=doc.source, index=doc.index) from None


def _convert_at(doc: Document, value: Any, type_: Any, path: str) -> Any:
    try:
        return _convert(value, type_)
    except msgspec.ValidationError as exc:
        message, where = _error_at(exc)
        if "[...]" in where:
            where = _name_map_keys(value, type_, message, where)
        field_path = path + where.removeprefix("$")
        raise LoadError(f"{doc.where}: {field_path}: {message}", source=doc.source,
                        index=doc.index, field=field_path) from None


def _decode_workload(doc: Document) -> WorkloadView:
    """A workload view built field by field (msgspec cannot decode its selector union): the
    selector is a LabelSelector, or a plain map for a ReplicationController."""
    raw = doc.raw
    spec = raw.get("spec") if raw.get("spec") is not None else {}
    status = raw.get("status") if raw.get("status") is not None else {}
    if not isinstance(spec, dict):
        raise LoadError(f"{doc.where}: spec: expected an object", source=doc.source, index=doc.index, field="spec")
    if not isinstance(status, dict):
        raise LoadError(f"{doc.where}: status: expected an object", source=doc.source, index=doc.index, field="status")
    selector = spec.get("selector")
    if selector is not None:
        is_map = raw.get("kind") == "ReplicationController" and isinstance(selector, dict) and not (
            {"matchLabels", "matchExpressions"} & set(selector))
        selector = _convert_at(doc, selector, dict[str, str] if is_map else LabelSelector, "spec.selector")
    replicas = spec.get("replicas")
    if replicas is not None:
        replicas = _convert_at(doc, replicas, int, "spec.replicas")
        if replicas < 0:
            raise LoadError(f"{doc.where}: spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0",
                            source=doc.source, index=doc.index, field="spec.replicas")
    status_replicas = _convert_at(doc, status.get("replicas") or 0, int, "status.replicas")
    return WorkloadView(
        api_version=raw.get("apiVersion") or "",
        kind=raw.get("kind") or "",
        metadata=_convert_at(doc, raw.get("metadata") or {}, ObjectMeta, "metadata"),
        spec=WorkloadSpecView(replicas=replicas, selector=selector),
        status=WorkloadStatusView(replicas=status_replicas),
    )


def _default_namespace(obj: Any) -> Any:
    if not obj.metadata.namespace:
        obj.metadata.namespace = DEFAULT_NAMESPACE
    return obj


def _pod_usages(doc: Document) -> list[PodUsage]:
    """A PodMetrics document as the HPA reads it; a usage that is no quantity names its field."""
    try:
        return pod_usages([_default_namespace(_decode(doc, PodMetricsView))])
    except UsageError as exc:
        raise LoadError(f"{doc.where}: {exc.field}: {exc.detail}", source=doc.source, index=doc.index,
                        field=exc.field) from None


def _metadata(doc: Document) -> dict[str, Any]:
    meta = doc.raw.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise LoadError(f"{doc.where}: metadata: expected an object", source=doc.source, index=doc.index, field="metadata")
    return meta or {}


def _state_key(doc: Document) -> str:
    meta = _metadata(doc)
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise LoadError(f"{doc.where}: metadata.name: Required value", source=doc.source, index=doc.index, field="metadata.name")
    namespace = meta.get("namespace") or DEFAULT_NAMESPACE
    return f"{namespace}/{name}"


def read_snapshot(docs: list[Document], config: ControllerConfig) -> Snapshot:
    """Sort documents by kind into typed objects; raises ``LoadError`` on an invalid one (a
    value of the wrong type in Go's words, as the API server says it: :func:`check_types`)."""
    snap = Snapshot()
    gates = config.gates
    schemas = BuiltinSchemas.build()
    hpa_docs: dict[str, Document] = {}  # namespace/name -> the document that defined it
    for doc in docs:
        kind = doc.raw.get("kind")
        if not isinstance(kind, str) or not kind:
            what = "Required value" if not kind else f"expected a string, got {type(kind).__name__}"
            raise LoadError(f"{doc.where}: kind: {what}", source=doc.source, index=doc.index, field="kind")
        group = _group(doc.raw.get("apiVersion"))
        if kind == "HorizontalPodAutoscaler" and group == "autoscaling":
            check_types(doc, schemas)
            hpa = load_hpa(doc, gates, namespace=DEFAULT_NAMESPACE)
            drop_disabled_fields(hpa, None, gates)
            key = f"{hpa.metadata.namespace}/{hpa.metadata.name}"
            first = hpa_docs.get(key)
            hpa_docs.setdefault(key, doc)
            if first is not None:
                raise LoadError(f"{doc.where}: metadata.name: Duplicate value: \"{hpa.metadata.name}\": "
                                f"HorizontalPodAutoscaler {key} is also {first.where}",
                                source=doc.source, index=doc.index, field="metadata.name")
            snap.hpas.append(hpa)
        elif kind in SCALABLE_KINDS and group == SCALABLE_KINDS[kind][0]:
            check_types(doc, schemas)
            snap.workloads.append((doc, _default_namespace(_decode_workload(doc))))
        elif kind == "Pod" and group == "":
            check_types(doc, schemas)
            snap.pods.append(_default_namespace(_decode(doc, PodView)))
        elif kind == "PodMetrics" and group == "metrics.k8s.io":
            snap.pod_usages += _pod_usages(doc)
        elif kind == "MetricValueList" and group == "custom.metrics.k8s.io":
            snap.metric_values.append(_decode(_custom_v1beta2(doc), MetricValueList))
        elif kind == "ExternalMetricValueList" and group == "external.metrics.k8s.io":
            snap.external_metrics.append(_decode(doc, ExternalMetricValueList))
        elif kind == CONFIG_KIND and doc.raw.get("apiVersion") == CONFIG_API_VERSION:
            pass  # the controller's configuration: read before, by published_flags_in
        elif kind == "AutoscalerState" and doc.raw.get("apiVersion") == STATE_API_VERSION:
            key = _state_key(doc)
            try:
                snap.states[key] = AutoscalerState.from_wire(doc.raw)
            except StateError as exc:
                raise LoadError(f"{doc.where}: {exc}", source=doc.source, index=doc.index) from None
        else:
            snap.warnings.append(
                f"{doc.where}: ignoring {doc.raw.get('apiVersion')} {kind}: not used by pyhpa reconcile"
            )
    for key in sorted(set(snap.states) - set(hpa_docs)):
        snap.warnings.append(f"ignoring AutoscalerState {key}: no such HorizontalPodAutoscaler in the snapshot")
    snap.warnings.extend(missing_input_warnings(snap))
    return snap


def published_flags_in(docs: list[Document]) -> FlagValues | None:
    """The flags of the running controller's configuration a snapshot recorded (`pyhpa snapshot`
    writes it as a pyhpa.io/v1alpha1 ControllerConfiguration), None without one; an invalid or
    second one is a ``LoadError`` naming its document."""
    found: FlagValues | None = None
    for doc in docs:
        if doc.raw.get("kind") != CONFIG_KIND or doc.raw.get("apiVersion") != CONFIG_API_VERSION:
            continue
        if found is not None:
            raise LoadError(f"{doc.where}: a second {CONFIG_KIND}: a snapshot records one controller",
                            source=doc.source, index=doc.index)
        try:
            found = flags_of_document(doc.raw)
        except ValueError as exc:
            raise LoadError(f"{doc.where}: {exc}", source=doc.source, index=doc.index) from None
    return found


def _custom_v1beta2(doc: Document) -> Document:
    """custom.metrics.k8s.io/v1beta1 items name their metric ``metricName`` (+ ``selector``);
    v1beta2 nests both in ``metric``: read either, as the live adapter does."""
    items = doc.raw.get("items")
    if not doc.raw.get("apiVersion", "").endswith("/v1beta1") or not isinstance(items, list):
        return doc
    converted = []
    for it in items:
        if isinstance(it, dict) and "metric" not in it:
            it = {k: v for k, v in it.items() if k not in ("metricName", "selector")} | {
                "metric": {"name": it.get("metricName", ""), "selector": it.get("selector")}}
        converted.append(it)
    return Document(doc.source, doc.index, doc.raw | {"items": converted}, doc.item)


# Which metrics API serves each metric source type, and where the snapshot holds its answers.
_SOURCE_INPUTS = MappingProxyType({
    "Resource": ("PodMetrics", "resource metrics API"),
    "ContainerResource": ("PodMetrics", "resource metrics API"),
    "Pods": ("MetricValueList", "custom metrics API"),
    "Object": ("MetricValueList", "custom metrics API"),
    "External": ("ExternalMetricValueList", "external metrics API"),
})


def missing_input_warnings(snap: Snapshot) -> list[str]:
    """Say so when the snapshot cannot answer what its HPAs read: without it a dump of
    `kubectl get hpa,deploy,pods` makes every HPA blame the metrics API, and a first pass
    without controller memory holds a scale-down by stabilization (an artifact of the dump)."""
    held = {"PodMetrics": bool(snap.pod_usages), "MetricValueList": bool(snap.metric_values),
            "ExternalMetricValueList": bool(snap.external_metrics)}
    readers: dict[str, list[str]] = {}
    for hpa in snap.hpas:
        for spec in hpa.spec.metrics or []:
            found = _SOURCE_INPUTS.get(spec.type)
            if found is not None and not held[found[0]]:
                names = readers.setdefault(found[0], [])
                key = f"{hpa.metadata.namespace}/{hpa.metadata.name}"
                if key not in names:
                    names.append(key)
    out = []
    for kind, keys in readers.items():
        api = next(a for k, a in _SOURCE_INPUTS.values() if k == kind)
        out.append(f"the snapshot holds no {kind}, but {len(keys)} HorizontalPodAutoscaler(s) read the {api} "
                   f"({_some(keys)}): they will report that it returned no metrics; "
                   "take the snapshot with `pyhpa snapshot` or add the list from `kubectl get --raw`")
    if snap.hpas:
        keys = [f"{h.metadata.namespace}/{h.metadata.name}" for h in snap.hpas]
        stateless = [k for k in keys if k not in snap.states]
        if stateless:
            what = "no AutoscalerState" if len(stateless) == len(keys) else \
                f"no AutoscalerState for {len(stateless)} of {len(keys)} HorizontalPodAutoscalers ({_some(stateless)})"
            out.append(f"the snapshot holds {what}: the pass is a fresh controller's, whose first "
                       "recommendation is the current replica count, so a scale-down held by stabilization "
                       "is an artifact of the missing controller memory")
    return out


def _some(keys: list[str], shown: int = 3) -> str:
    return ", ".join(keys[:shown]) + (f" and {len(keys) - shown} more" if len(keys) > shown else "")


def event_object(hpa: HorizontalPodAutoscaler, seq: int, type_: str, reason: str, message: str, now: datetime) -> dict[str, Any]:
    """A ``v1 Event`` on the HPA, as the recorder would create it (named ``<hpa>.<n>``)."""
    meta = hpa.metadata
    involved: dict[str, Any] = {"kind": "HorizontalPodAutoscaler", "namespace": meta.namespace, "name": meta.name}
    if meta.uid:
        involved["uid"] = meta.uid
    involved["apiVersion"] = "autoscaling/v2"
    if meta.resource_version:
        involved["resourceVersion"] = meta.resource_version
    stamp = format_time(now)
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{meta.name}.{seq}", "namespace": meta.namespace},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "source": {"component": EVENT_SOURCE},
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
        "type": type_,
    }


def _hpa_wire(hpa: HorizontalPodAutoscaler) -> dict[str, Any]:
    out = to_wire(hpa)
    out["apiVersion"] = "autoscaling/v2"
    out["kind"] = "HorizontalPodAutoscaler"
    return out


def reconcile_snapshot(docs: list[Document], config: ControllerConfig, now: datetime) -> PassResult:
    """Run one pass over the documents; ``LoadError`` if an input is invalid."""
    snap = read_snapshot(docs, config)
    cluster = MemoryCluster(
        hpas=snap.hpas,
        workloads=[w for _, w in snap.workloads],
        pods=snap.pods,
        metric_values=snap.metric_values,
        external_metrics=snap.external_metrics,
        states=snap.states,
    )
    cluster.set_pod_usage(snap.pod_usages)
    ports = cluster.ports()
    hpa_items: list[dict[str, Any]] = []
    event_items: list[dict[str, Any]] = []
    state_items: list[dict[str, Any]] = []
    traces: list[tuple[str, DecisionTrace]] = []
    ordered = sorted(snap.hpas, key=lambda h: (h.metadata.namespace or "", h.metadata.name or ""))
    for hpa in ordered:
        key = f"{hpa.metadata.namespace}/{hpa.metadata.name}"
        result = run_sync(reconcile_hpa(hpa, ports, config, now))  # it never mutates its argument
        hpa_items.append(_hpa_wire(msgspec.structs.replace(hpa, status=result.status)))
        for seq, ev in enumerate(result.events, start=1):
            event_items.append(event_object(hpa, seq, ev.type, ev.reason, ev.message, now))
        state = ports.state.get(key) or AutoscalerState()
        state_items.append(state.to_wire(hpa.metadata.namespace, hpa.metadata.name or ""))
        traces.append((key, result.trace))
    scaled = {(ns, kind, name) for ns, kind, name, _ in cluster.scale_updates}
    workload_items = []
    for doc, wl in snap.workloads:
        raw = dict(doc.raw)  # the input stays as read: only spec.replicas changes, in copies
        key = (wl.metadata.namespace or "", wl.kind, wl.metadata.name or "")
        if key in scaled:
            spec = raw.get("spec")
            spec = raw["spec"] = dict(spec) if isinstance(spec, dict) else {}
            spec["replicas"] = cluster.workloads[key].spec.replicas
        workload_items.append(raw)
    output = {"apiVersion": "v1", "kind": "List", "metadata": {},
              "items": hpa_items + workload_items + event_items + state_items}
    return PassResult(output, traces, snap.warnings)


def explain(result: PassResult) -> str:
    """The decision of every HPA in plain words, one block per HPA."""
    blocks = []
    for key, trace in result.traces:
        lines = [f"HorizontalPodAutoscaler {key}:"]
        lines += [f"  {line}" for line in trace.explain()]
        blocks.append("\n".join(lines))
    return "\n".join(blocks) + ("\n" if blocks else "")
