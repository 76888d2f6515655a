"""The three metrics API groups the embedded cluster serves, read from the live simulation: the
cluster's metrics-server (and custom and external metrics adapters).

Why one module: ``metrics.k8s.io`` (what metrics-server serves, and ``kubectl top``),
``custom.metrics.k8s.io`` (what a custom metrics adapter serves) and
``external.metrics.k8s.io`` are all read-only views of the same simulation
(:mod:`~pyhpa.cluster.controllers.context`): pod usage from each workload's metrics pipeline
(averaged over ``window``, refreshed every ``resolution`` seconds, like metrics-server), custom
metrics from the ``sim.pyhpa.io/metric.<name>`` totals, external metrics from ExternalMetric
objects. The URL grammar is the one the HPA's metrics clients use (upstream's podautoscaler/metrics/client.go):

* ``/apis/metrics.k8s.io/v1beta1/[namespaces/NS/]pods[/NAME]`` and ``.../nodes[/NAME]``;
* ``/apis/custom.metrics.k8s.io/{v1beta2,v1beta1}/namespaces/NS/pods/{NAME|*}/METRIC``
  (``labelSelector``, ``metricLabelSelector``), ``.../namespaces/NS/<resource.group>/NAME/METRIC``
  for objects, ``.../namespaces/NS/metrics/METRIC`` for the namespace itself;
* ``/apis/external.metrics.k8s.io/v1beta1/namespaces/NS/METRIC`` (``labelSelector``).

:func:`install` plugs them into an :class:`~pyhpa.cluster.apiserver.server.APIServer` as providers, with
their discovery entries.
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from pyhpa.api.quantity import Quantity
from pyhpa.api.selectors import Selector, SelectorError
from pyhpa.api.timefmt import format_duration, format_epoch, format_time
from pyhpa.cluster.controllers.context import Group, SimulationContext
from pyhpa.cluster.apiserver.handlers.request import wants_table
from pyhpa.cluster.apiserver.handlers.scope import TABLE_TYPE
from pyhpa.cluster.apiserver.resources import NODES, Resource
from pyhpa.cluster.apiserver.status import APIError, status_response
from pyhpa.cluster.apiserver.tables import partial_metadata

if TYPE_CHECKING:
    from pyhpa.cluster.apiserver.server import APIServer

Obj = dict[str, Any]
_encode = msgspec.json.Encoder().encode

RESOURCE_GROUP, CUSTOM_GROUP, EXTERNAL_GROUP = \
    "metrics.k8s.io", "custom.metrics.k8s.io", "external.metrics.k8s.io"

_VIRTUAL = MappingProxyType({"virtual": True})  # served by a provider, never stored (the GC skips these)
POD_METRICS = Resource(RESOURCE_GROUP, ("v1beta1",), "pods", "PodMetrics", verbs=("get", "list"),
                       extra=_VIRTUAL)
NODE_METRICS = Resource(RESOURCE_GROUP, ("v1beta1",), "nodes", "NodeMetrics", namespaced=False,
                        verbs=("get", "list"), extra=_VIRTUAL)
# The registry's entries for the adapters' groups (v1beta2 first: the preferred version);
# their discovery lists one entry per metric instead (MetricsAPI.resource_list), as adapters do.
CUSTOM_POD_METRICS = Resource(CUSTOM_GROUP, ("v1beta2", "v1beta1"), "pods", "MetricValueList",
                              verbs=("get",), extra=_VIRTUAL)
EXTERNAL_METRICS = Resource(EXTERNAL_GROUP, ("v1beta1",), "externalmetricvalues",
                            "ExternalMetricValueList", verbs=("get",), extra=_VIRTUAL)

# custom.metrics object paths name resources as "<resource>.<group>" (client-go's GroupResource).
_OBJECT_KINDS = MappingProxyType({
    "deployments": "Deployment", "deployments.apps": "Deployment",
    "statefulsets": "StatefulSet", "statefulsets.apps": "StatefulSet",
    "replicasets": "ReplicaSet", "replicasets.apps": "ReplicaSet",
    "replicationcontrollers": "ReplicationController",
    "scalables.demo.pyhpa.io": "Scalable", "scalables": "Scalable",
})
_KIND_API_VERSION = MappingProxyType({"Deployment": "apps/v1", "StatefulSet": "apps/v1", "ReplicaSet": "apps/v1",
                                       "ReplicationController": "v1", "Scalable": "demo.pyhpa.io/v1"})


def _not_found(message: str, group: str = "", kind: str = "", name: str = "") -> APIError:
    return APIError(404, "NotFound", message, {"name": name, "group": group, "kind": kind})


def _parse_selector(text: str | None, param: str) -> Any:
    if not text:
        return Selector.everything()
    try:
        return Selector.parse(text)
    except SelectorError as exc:
        raise APIError(400, "BadRequest", f"{param}: unable to parse requirement: {exc}") from None


def _label_selector_doc(sel: Any) -> Obj | None:
    """A parsed selector as a metav1.LabelSelector (what adapters echo in ``metric.selector``)."""
    if sel is None or sel.is_empty():
        return None
    match: dict[str, str] = {}
    exprs: list[Obj] = []
    ops = {"in": "In", "notin": "NotIn", "exists": "Exists", "!": "DoesNotExist",
           "=": "In", "==": "In", "!=": "NotIn"}
    for r in sel.requirements:
        op = str(r.operator.value if hasattr(r.operator, "value") else r.operator)
        if op in ("=", "==") and len(r.values) == 1:
            match[r.key] = r.values[0]
            continue
        expr: Obj = {"key": r.key, "operator": ops.get(op, op)}
        if r.values:
            expr["values"] = list(r.values)
        exprs.append(expr)
    out: Obj = {}
    if match:
        out["matchLabels"] = match
    if exprs:
        out["matchExpressions"] = exprs
    return out


def _milli_text(value: float) -> str:
    return str(Quantity.from_milli(math.ceil(value * 1000 - 1e-6)))


class MetricsAPI:
    """The provider handler for the three groups (``handler(request, target)``)."""

    def __init__(self, sim: SimulationContext) -> None:
        self.sim = sim

    async def __call__(self, request: Request, target: Any = None) -> Response:
        try:
            return self.handle(request)
        except APIError as exc:
            return status_response(exc.status(), exc.headers)

    def handle(self, request: Request) -> Response:
        parts = [p for p in request.url.path.split("/") if p]
        if len(parts) < 3 or parts[0] != "apis":
            raise _not_found("the server could not find the requested resource")
        if request.method not in ("GET", "HEAD"):
            raise APIError(405, "MethodNotAllowed",
                           "the server does not allow this method on the requested resource")
        group, version, segs = parts[1], parts[2], parts[3:]
        q = request.query_params
        if group == RESOURCE_GROUP and version == "v1beta1":
            body = self.resource_metrics(segs, q.get("labelSelector"), q.get("fieldSelector"))
        elif group == CUSTOM_GROUP and version in ("v1beta2", "v1beta1"):
            body = self.custom_metrics(version, segs, q.get("labelSelector"),
                                       q.get("metricLabelSelector"))
        elif group == EXTERNAL_GROUP and version == "v1beta1":
            body = self.external_metrics(segs, q.get("labelSelector"))
        else:
            raise _not_found("the server could not find the requested resource")
        if group == RESOURCE_GROUP and wants_table(request.headers.get("accept")):
            body = usage_table(body, q.get("includeObject") or "Metadata")
            return Response(_encode(body), media_type=TABLE_TYPE)
        return Response(_encode(body), media_type="application/json")

    # ------------------------------------------------------------------ discovery

    def resource_list(self, group: str, version: str) -> Obj | None:
        """``/apis/<group>/<version>`` of the adapters, one entry per metric as custom-metrics-
        apiserver lists them (``pods/<metric>``, ``deployments.apps/<metric>``,
        ``namespaces/<metric>``; an external metric by its name); None: the registry's list."""
        if group == CUSTOM_GROUP and version in ("v1beta2", "v1beta1"):
            entries = self._custom_metric_resources()
            kind = "MetricValueList"
        elif group == EXTERNAL_GROUP and version == "v1beta1":
            entries = self._external_metric_resources()
            kind = "ExternalMetricValueList"
        else:
            return None
        return {"kind": "APIResourceList", "apiVersion": "v1",
                "groupVersion": f"{group}/{version}",
                "resources": [{"name": name, "singularName": "", "namespaced": namespaced,
                               "kind": kind, "verbs": ["get"]}
                              for name, namespaced in sorted(entries)]}

    def _custom_metric_resources(self) -> set[tuple[str, bool]]:
        out: set[tuple[str, bool]] = set()
        with self.sim.lock:
            for g in self.sim.groups_in(None):
                for metric in metric_names(g):
                    out.add((f"pods/{metric}", True))
                    out.add((f"namespaces/{metric}", False))
                    if g.resource in _OBJECT_KINDS:
                        out.add((f"{g.resource}/{metric}", True))
        return out

    def _external_metric_resources(self) -> set[tuple[str, bool]]:
        with self.sim.lock:
            return {(hist[-1][1].metric, True) for hist in self.sim.external_history.values()
                    if hist and hist[-1][1] is not None}

    # ------------------------------------------------------------------ metrics.k8s.io

    def resource_metrics(self, segs: list[str], label_selector: str | None,
                         field_selector: str | None) -> Obj:
        ns: str | None = None
        if len(segs) >= 3 and segs[0] == "namespaces":
            ns, segs = segs[1], segs[2:]
        if not segs or segs[0] not in ("pods", "nodes") or len(segs) > 2 \
                or (segs[0] == "nodes" and ns is not None):
            raise _not_found("the server could not find the requested resource")
        sel = _parse_selector(label_selector, "labelSelector")
        name = segs[1] if len(segs) > 1 else None
        names = _field_names(field_selector)
        if segs[0] == "pods":
            if name is not None and ns is None:
                raise _not_found("the server could not find the requested resource")
            return _get_or_list(self.pod_metrics(ns, sel, name), names, name, "pods", f"{ns}/{name}")
        return _get_or_list(self.node_metrics(sel, name), names, name, "nodes", str(name))

    def _pod_entries(self, ns: str | None) -> list[tuple[Group, Obj, Any]]:
        """(group, PodRecord, PodMetrics struct) for every pod with a full window."""
        out = []
        for g in self.sim.groups_in(ns):
            for pm in g.pipeline.pod_metrics():
                rec = self.sim.record(g.namespace, pm.metadata.name or "")
                if rec is not None:
                    out.append((g, rec, pm))
        return out

    def pod_metrics(self, ns: str | None, sel: Any = None, name: str | None = None) -> list[Obj]:
        """PodMetrics items (without kind/apiVersion), sorted by namespace and name."""
        with self.sim.lock:
            now = self.sim.refresh()
            items = []
            for g, rec, pm in self._pod_entries(ns):
                if name is not None and rec.name != name:
                    continue
                if sel is not None and not sel.matches(rec.labels):
                    continue
                items.append({
                    "metadata": {"name": rec.name, "namespace": rec.namespace,
                                 "creationTimestamp": format_epoch(now), "labels": dict(rec.labels)},
                    "timestamp": format_time(pm.timestamp),
                    "window": pm.window,
                    "containers": [{"name": c.name,
                                    "usage": {k: str(v) for k, v in c.usage.items()}}
                                   for c in pm.containers],
                })
        items.sort(key=lambda i: (i["metadata"]["namespace"], i["metadata"]["name"]))
        return items

    def node_metrics(self, sel: Any = None, name: str | None = None) -> list[Obj]:
        nodes = self.sim.store.list(NODES.key).items
        with self.sim.lock:
            now = self.sim.refresh()
            # the node's CPU is what its pods used, rounded once (as its root cgroup counts it):
            # never more than its allocatable, which they share
            usage: dict[str, list[float]] = {}
            for g, rec, pm in self._pod_entries(None):
                u = usage.setdefault(rec.node, [0.0, 0])
                u[0] += g.pipeline.pod_cpu_milli(rec.name) or 0.0
                for c in pm.containers:
                    u[1] += c.usage["memory"].value() if "memory" in c.usage else 0
            ts = format_epoch(self.sim.last_scrape(now))
        items = []
        for node in nodes:
            meta = node.get("metadata") or {}
            n = meta.get("name") or ""
            if name is not None and n != name:
                continue
            if sel is not None and not sel.matches(meta.get("labels") or {}):
                continue
            cpu, mem = usage.get(n, [0, 0])
            items.append({"metadata": {"name": n, "creationTimestamp": format_epoch(now),
                                       "labels": dict(meta.get("labels") or {})},
                          "timestamp": ts, "window": format_duration(self.sim.window),
                          "usage": {"cpu": str(Quantity.from_milli(math.ceil(cpu - 1e-6))),
                                    "memory": str(Quantity.from_milli(mem * 1000, fmt="BinarySI"))}})
        return items

    # ------------------------------------------------------------------ custom.metrics.k8s.io

    def custom_metrics(self, version: str, segs: list[str], label_selector: str | None,
                       metric_selector: str | None) -> Obj:
        msel = _parse_selector(metric_selector, "metricLabelSelector")
        ns: str | None = None
        if len(segs) == 4 and segs[0] == "namespaces" and segs[2] == "metrics":
            items = self.namespace_metric(segs[1], segs[3], msel)
        else:
            if len(segs) >= 2 and segs[0] == "namespaces":
                ns, segs = segs[1], segs[2:]
            if len(segs) != 3 or ns is None:
                raise _not_found("the server could not find the requested resource")
            resource, name, metric = segs
            if resource == "pods":
                sel = _parse_selector(label_selector, "labelSelector")
                items = self.pod_custom_metric(ns, name, metric, sel, msel)
            else:
                items = self.object_metric(ns, resource, name, metric, msel)
        if version == "v1beta1":
            items = [_to_v1beta1(i) for i in items]
        return {"kind": "MetricValueList", "apiVersion": f"{CUSTOM_GROUP}/{version}",
                "metadata": {}, "items": items}

    def pod_custom_metric(self, ns: str, name: str, metric: str, sel: Any, msel: Any) -> list[Obj]:
        """Per-pod values of ``metric`` (``name`` ``*`` for every pod matching ``sel``)."""
        series_labels: dict[str, str] = {}  # our simulated series carry no labels
        with self.sim.lock:
            self.sim.refresh()
            known = False
            items = []
            for g in self.sim.groups_in(ns):
                if not _has_metric(g, metric):
                    continue
                known = True
                if not msel.matches(series_labels):
                    continue
                pipe = g.pipeline
                for sim_pod in list(g.workload.pods):
                    rec = self.sim.pods.get(sim_pod.uid)
                    if rec is None or (name != "*" and rec.name != name):
                        continue
                    if name == "*" and not sel.matches(rec.labels):
                        continue
                    value = pipe.pod_metric(rec.name, metric)
                    if value is None or pipe.last_scrape is None:
                        continue
                    items.append(self._metric_value(
                        {"kind": "Pod", "namespace": ns, "name": rec.name, "apiVersion": "/v1"},
                        metric, msel, pipe.last_scrape, value))
        if not known:
            raise _not_found(f"the server could not find the metric {metric} for pods",
                             "", "pods", name)
        items.sort(key=lambda i: i["describedObject"]["name"])
        return items

    def object_metric(self, ns: str, resource: str, name: str, metric: str, msel: Any) -> list[Obj]:
        kind = _OBJECT_KINDS.get(resource)
        res_text = resource
        with self.sim.lock:
            self.sim.refresh()
            group = None
            if kind is not None:
                group = next((g for g in self.sim.groups_in(ns)
                              if g.kind == kind and g.name == name), None)
            if group is None or not _has_metric(group, metric) or not msel.matches({}) \
                    or group.pipeline.total(metric) is None:
                raise _not_found(f"the server could not find the metric {metric} for "
                                 f"{res_text} {name}", resource.partition(".")[2],
                                 resource.partition(".")[0], name)
            value = group.pipeline.total(metric) or 0.0
            described = {"kind": kind, "namespace": ns, "name": name,
                         "apiVersion": _KIND_API_VERSION.get(kind or "", "v1")}
            return [self._metric_value(described, metric, msel, group.pipeline.last_scrape or 0.0,
                                       value)]

    def namespace_metric(self, ns: str, metric: str, msel: Any) -> list[Obj]:
        """A Namespace object metric: the sum of the workload totals of ``metric`` in ``ns``."""
        with self.sim.lock:
            self.sim.refresh()
            total, ts, known = 0.0, None, False
            if msel.matches({}):
                for g in self.sim.groups_in(ns):
                    v = g.pipeline.total(metric)
                    if v is not None:
                        known = True
                        total += v
                        ts = max(ts or 0.0, g.pipeline.last_scrape or 0.0)
        if not known:
            raise _not_found(f"the server could not find the metric {metric} for namespaces {ns}",
                             "", "namespaces", ns)
        return [self._metric_value({"kind": "Namespace", "name": ns, "apiVersion": "/v1"},
                                   metric, msel, ts or 0.0, total)]

    def _metric_value(self, described: Obj, metric: str, msel: Any, ts: float,
                      value: float) -> Obj:
        return {"describedObject": described,
                "metric": {"name": metric, "selector": _label_selector_doc(msel)},
                "timestamp": format_epoch(ts), "windowSeconds": int(self.sim.window),
                "value": _milli_text(value)}

    # ------------------------------------------------------------------ external.metrics.k8s.io

    def external_metrics(self, segs: list[str], label_selector: str | None) -> Obj:
        if len(segs) != 3 or segs[0] != "namespaces":
            raise _not_found("the server could not find the requested resource")
        ns, metric = segs[1], segs[2]
        sel = _parse_selector(label_selector, "labelSelector")
        with self.sim.lock:
            now = self.sim.clock()
            scrape = self.sim.last_scrape(now)
            known = False
            items = []
            for (obj_ns, _name), hist in sorted(self.sim.external_history.items()):
                if obj_ns != ns:
                    continue
                current = next((s for t, s in reversed(hist) if t <= scrape), None)
                latest = hist[-1][1] if hist else None
                if latest is not None and latest.metric == metric:
                    known = True
                if current is None or current.metric != metric:
                    continue
                known = True
                if not sel.matches(current.labels):
                    continue
                items.append({"metricName": metric, "metricLabels": dict(current.labels),
                              "timestamp": format_epoch(scrape),
                              "window": int(self.sim.window),
                              "value": str(Quantity.from_milli(current.value_milli))})
        if not known:
            raise _not_found(f"the server could not find the metric {metric} for namespace {ns}: "
                             "create an ExternalMetric (pyhpa.io/v1alpha1) with spec.name "
                             f"{metric}", EXTERNAL_GROUP, metric, metric)
        return {"kind": "ExternalMetricValueList", "apiVersion": f"{EXTERNAL_GROUP}/v1beta1",
                "metadata": {}, "items": items}


# --------------------------------------------------------------------------- kubectl get


def usage_table(body: Obj, include_object: str) -> Obj:
    """What ``kubectl get pods.metrics.k8s.io`` (or ``nodes.``) prints, as metrics-server's
    table convertor builds it: NAME, one column per resource its first item uses (a pod's
    summed over its containers; sorted: CPU, MEMORY), WINDOW."""
    items = body.get("items") if "items" in body else [body]
    kind = "PodMetrics" if body["kind"].startswith("Pod") else "NodeMetrics"
    names: list[str] | None = None
    columns: list[Obj] = []
    rows = []
    for item in items:
        usage: dict[str, Quantity] = {}
        for res in ([c["usage"] for c in item["containers"]] if kind == "PodMetrics"
                    else [item["usage"]]):
            for k, v in res.items():
                usage[k] = usage.get(k, Quantity()).add(Quantity.parse(v))
        if names is None:
            names = sorted(usage)
            columns = [{"name": "Name", "type": "string", "format": "name",
                        "description": "Name of the resource", "priority": 0},
                       *({"name": n, "type": "string", "format": "quantity", "description": "",
                          "priority": 0} for n in names),
                       {"name": "Window", "type": "string", "format": "duration",
                        "description": "", "priority": 0}]
        row: Obj = {"cells": [item["metadata"]["name"],
                              *(str(usage.get(n, Quantity())) for n in names),
                              item["window"]]}
        if include_object == "Object":
            row["object"] = {"kind": kind, "apiVersion": f"{RESOURCE_GROUP}/v1beta1", **item}
        elif include_object != "None":
            row["object"] = partial_metadata(item)
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {},
            "columnDefinitions": columns, "rows": rows}


# --------------------------------------------------------------------------- helpers


def metric_names(g: Group) -> set[str]:
    """The custom metrics a workload has (or had: its older values are still reported)."""
    wl = g.workload
    return set(wl.params.metrics).union(*(p.metrics for _, p in wl._param_history))


def _has_metric(g: Group, metric: str) -> bool:
    return metric in metric_names(g)


def _to_v1beta1(item: Obj) -> Obj:
    """custom.metrics v1beta1 spells the metric as ``metricName``/``selector`` and ``window``."""
    return {"describedObject": item["describedObject"], "metricName": item["metric"]["name"],
            "timestamp": item["timestamp"], "window": item["windowSeconds"],
            "value": item["value"], "selector": item["metric"]["selector"]}


def _field_names(field_selector: str | None) -> set[str] | None:
    """``metadata.name=X`` field selectors (the only field kubectl top sends)."""
    if not field_selector:
        return None
    names = set()
    for term in field_selector.split(","):
        key, _, value = term.partition("=")
        if key.strip() == "metadata.name":
            names.add(value.lstrip("=").strip())
    return names or None


def install(server: "APIServer", sim: SimulationContext) -> MetricsAPI:
    """Serve the three metrics groups from ``sim`` on ``server`` (and list them in discovery)."""
    api = MetricsAPI(sim)
    server.add_provider(RESOURCE_GROUP, "v1beta1", [POD_METRICS, NODE_METRICS], api)
    server.add_provider(CUSTOM_GROUP, "v1beta2", [CUSTOM_POD_METRICS], api)
    server.add_provider(CUSTOM_GROUP, "v1beta1", [], api)
    server.add_provider(EXTERNAL_GROUP, "v1beta1", [EXTERNAL_METRICS], api)
    return api


def _get_or_list(items: list[Obj], names: set[str] | None, name: str | None, plural: str,
                 shown: str) -> Obj:
    """The metrics.k8s.io answer for pods or nodes: the one named (404 when it has none), or
    the list, after a ``metadata.name`` field selector."""
    kind = {"pods": "PodMetrics", "nodes": "NodeMetrics"}[plural]
    gv = f"{RESOURCE_GROUP}/v1beta1"
    if names is not None:
        items = [i for i in items if i["metadata"]["name"] in names]
    if name is None:
        return {"kind": kind + "List", "apiVersion": gv, "metadata": {}, "items": items}
    if not items:
        raise _not_found(f'{kind.lower()}.{RESOURCE_GROUP} "{shown}" not found', RESOURCE_GROUP, plural, name)
    return {"kind": kind, "apiVersion": gv, **items[0]}
