"""What kube-state-metrics (v2) serves for the embedded cluster's objects, read from the store.

Why: the same PromQL that reads a real cluster's object state (replicas, requests and limits, pod
readiness, the HPA's spec and status) must read the embedded one's. Each family keeps the name,
type and labels of kube-state-metrics' own (its ``internal/store/*.go``); values are those of the
stored objects at the time of the scrape.

Served where a user's Prometheus reaches kube-state-metrics on a real cluster through the API
server: the service proxy ``GET /api/v1/namespaces/kube-system/services/kube-state-metrics:
http-metrics/proxy/metrics`` (same bearer token and CA as the API; the Service
``kube-system/kube-state-metrics`` exists, as a kube-state-metrics install creates it; see
docs/prometheus-exporters.md).

Only the families listed in :func:`kube_state_metrics_text` are written (a subset of the real
exporter's); no ``kube_*_labels``/``_annotations`` families (off by default in v2 too).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from pyhpa.api.quantity import Quantity, QuantityError
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.storage import Store
from pyhpa.cluster.controllers.exposition import Exposition, Family
from pyhpa.cluster.controllers.objects import Obj, meta_of, parse_epoch, spec_of, status_of

_NONE = "<none>"  # what kube-state-metrics writes for a missing owner


def _labels_of(o: Obj, kind_label: str) -> dict[str, str]:
    meta = meta_of(o)
    return {"namespace": str(meta.get("namespace") or ""), kind_label: str(meta.get("name") or "")}


def _controller(o: Obj) -> Obj | None:
    for ref in meta_of(o).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


def _owners(fam: Family, base: dict[str, str], o: Obj) -> None:
    refs = [r for r in meta_of(o).get("ownerReferences") or [] if isinstance(r, dict)]
    if not refs:
        fam.add({**base, "owner_kind": _NONE, "owner_name": _NONE, "owner_is_controller": _NONE}, 1)
    for r in refs:
        fam.add({**base, "owner_kind": str(r.get("kind") or ""), "owner_name": str(r.get("name") or ""),
                 "owner_is_controller": "true" if r.get("controller") else "false"}, 1)


def _bool_status(fam: Family, base: dict[str, str], status: Any, key: str = "condition") -> None:
    """Three series, 1 on the one the condition's status is (``true``/``false``/``unknown``)."""
    current = str(status or "Unknown").lower()
    for s in ("true", "false", "unknown"):
        fam.add({**base, key: s}, 1 if current == s else 0)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _resource_values(resources: Any) -> Iterable[tuple[str, str, float]]:
    """(resource, unit, value) of a requests/limits map, in kube-state-metrics' units."""
    if not isinstance(resources, dict):
        return
    for name, text in sorted(resources.items()):
        try:
            q = Quantity.parse(str(text))
        except (QuantityError, ValueError):
            continue
        # kube-state-metrics reads MilliValue() and Value(), int64s: a quantity beyond them
        # (an accepted "1e309") saturates instead of failing the page
        if name == "cpu":
            yield "cpu", "core", q.milli_int64() / 1000
        elif name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
            yield name.replace("-", "_"), "byte", float(q.int64_value())
        else:
            yield (name.replace("-", "_").replace(".", "_").replace("/", "_"), "integer",
                   float(q.int64_value()))


def _quantity_float(text: Any) -> float | None:
    try:
        return Quantity.parse(str(text)).as_float()
    except (QuantityError, ValueError):
        return None


def _pods(out: Exposition, pods: list[Obj]) -> None:
    info = out.family("kube_pod_info", "gauge", "Information about pod.")
    owner = out.family("kube_pod_owner", "gauge", "Information about the Pod's owner.")
    created = out.family("kube_pod_created", "gauge", "Unix creation timestamp")
    phase = out.family("kube_pod_status_phase", "gauge", "The pods current phase.")
    ready = out.family("kube_pod_status_ready", "gauge",
                       "Describes whether the pod is ready to serve requests.")
    ready_time = out.family("kube_pod_status_ready_time", "gauge",
                            "Readiness achieved time in unix timestamp for a pod.")
    started = out.family("kube_pod_container_state_started", "gauge",
                         "Start time in unix timestamp for a pod container.")
    requests = out.family("kube_pod_container_resource_requests", "gauge",
                          "The number of requested request resource by a container. It is "
                          "recommended to use the kube_pod_resource_requests metric exposed by "
                          "kube-scheduler instead, as it is more precise.")
    limits = out.family("kube_pod_container_resource_limits", "gauge",
                        "The number of requested limit resource by a container. It is "
                        "recommended to use the kube_pod_resource_limits metric exposed by "
                        "kube-scheduler instead, as it is more precise.")
    for pod in pods:
        meta, spec, status = meta_of(pod), spec_of(pod), status_of(pod)
        base = {**_labels_of(pod, "pod"), "uid": str(meta.get("uid") or "")}
        ref = _controller(pod)
        node = str(spec.get("nodeName") or "")
        info.add({**base, "host_ip": str(status.get("hostIP") or ""),
                  "pod_ip": str(status.get("podIP") or ""), "node": node,
                  "created_by_kind": str(ref.get("kind")) if ref else _NONE,
                  "created_by_name": str(ref.get("name")) if ref else _NONE,
                  "priority_class": str(spec.get("priorityClassName") or ""),
                  "host_network": "true" if spec.get("hostNetwork") else "false"}, 1)
        _owners(owner, base, pod)
        t = parse_epoch(meta.get("creationTimestamp"))
        if t is not None:
            created.add(base, t)
        current = status.get("phase")
        if current:
            for p in ("Pending", "Succeeded", "Failed", "Unknown", "Running"):
                phase.add({**base, "phase": p}, 1 if current == p else 0)
        for c in status.get("conditions") or []:
            if isinstance(c, dict) and c.get("type") == "Ready":
                _bool_status(ready, base, c.get("status"))
                since = parse_epoch(c.get("lastTransitionTime")) if c.get("status") == "True" else None
                if since is not None:
                    ready_time.add(base, float(int(since)))  # kube-state-metrics: LastTransitionTime.Unix()
        for cs in status.get("containerStatuses") or []:
            running = ((cs.get("state") or {}).get("running") or {}) if isinstance(cs, dict) else {}
            since = parse_epoch(running.get("startedAt"))
            if since is not None:  # kube-state-metrics: State.Running.StartedAt.Unix()
                started.add({**base, "container": str(cs.get("name") or "")}, float(int(since)))
        for c in spec.get("containers") or []:
            if not isinstance(c, dict):
                continue
            res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
            labels = {**base, "container": str(c.get("name") or ""), "node": node}
            for fam, which in ((requests, "requests"), (limits, "limits")):
                for name, unit, value in _resource_values(res.get(which)):
                    fam.add({**labels, "resource": name, "unit": unit}, value)


def _replicas(o: Obj) -> int:
    """``spec.replicas``, 1 when unset (the API's default)."""
    replicas = _int(spec_of(o).get("replicas"))
    return 1 if replicas is None else replicas


def _status_count(field: str) -> Callable[[Obj], int]:
    return lambda o: _int(status_of(o).get(field)) or 0


_Gauge = tuple[str, str, Callable[[Obj], int]]  # family name, help, value of one object
_DEPLOYMENT_GAUGES: tuple[_Gauge, ...] = (
    ("kube_deployment_spec_replicas", "Number of desired pods for a deployment.", _replicas),
    ("kube_deployment_status_replicas", "The number of replicas per deployment.", _status_count("replicas")),
    ("kube_deployment_status_replicas_ready", "The number of ready replicas per deployment.",
     _status_count("readyReplicas")),
    ("kube_deployment_status_replicas_available", "The number of available replicas per deployment.",
     _status_count("availableReplicas")))
_REPLICASET_GAUGES: tuple[_Gauge, ...] = (
    ("kube_replicaset_spec_replicas", "Number of desired pods for a ReplicaSet.", _replicas),)
_STATEFULSET_GAUGES: tuple[_Gauge, ...] = (
    ("kube_statefulset_replicas", "Number of desired pods for a StatefulSet.", _replicas),
    ("kube_statefulset_status_replicas", "The number of replicas per StatefulSet.", _status_count("replicas")),
    ("kube_statefulset_status_replicas_ready", "The number of ready replicas per StatefulSet.",
     _status_count("readyReplicas")))

_HPA_STATUS_GAUGES: tuple[_Gauge, ...] = (
    ("kube_horizontalpodautoscaler_status_current_replicas",
     "Current number of replicas of pods managed by this autoscaler.", _status_count("currentReplicas")),
    ("kube_horizontalpodautoscaler_status_desired_replicas",
     "Desired number of replicas of pods managed by this autoscaler.", _status_count("desiredReplicas")))


def _gauges(out: Exposition, objects: list[Obj], kind_label: str, gauges: tuple[_Gauge, ...]) -> None:
    """One gauge family per entry of ``gauges``, a series per object."""
    families = [(out.family(name, "gauge", help_), value) for name, help_, value in gauges]
    for o in objects:
        base = _labels_of(o, kind_label)
        for family, value in families:
            family.add(base, value(o))


def _workloads(out: Exposition, deployments: list[Obj], replicasets: list[Obj],
               statefulsets: list[Obj]) -> None:
    _gauges(out, deployments, "deployment", _DEPLOYMENT_GAUGES)
    rs_owner = out.family("kube_replicaset_owner", "gauge", "Information about the ReplicaSet's owner.")
    for rs in replicasets:
        _owners(rs_owner, _labels_of(rs, "replicaset"), rs)
    _gauges(out, replicasets, "replicaset", _REPLICASET_GAUGES)
    _gauges(out, statefulsets, "statefulset", _STATEFULSET_GAUGES)


def _target_values(metric: Obj) -> tuple[str, Obj] | None:
    """(metric_name, its target) of one autoscaling/v2 MetricSpec."""
    kind = metric.get("type")
    source = metric.get({"Resource": "resource", "ContainerResource": "containerResource",
                         "Pods": "pods", "Object": "object", "External": "external"}.get(kind, ""))
    if not isinstance(source, dict):
        return None
    if kind in ("Resource", "ContainerResource"):
        name = source.get("name")
    else:
        ident = source.get("metric") if isinstance(source.get("metric"), dict) else {}
        name = ident.get("name")
    target = source.get("target")
    if not name or not isinstance(target, dict):
        return None
    return str(name), target


def _hpas(out: Exposition, hpas: list[Obj]) -> None:
    info = out.family("kube_horizontalpodautoscaler_info", "gauge",
                      "Information about this autoscaler.")
    min_r = out.family("kube_horizontalpodautoscaler_spec_min_replicas", "gauge",
                       "Lower limit for the number of pods that can be set by the autoscaler, "
                       "default 1.")
    max_r = out.family("kube_horizontalpodautoscaler_spec_max_replicas", "gauge",
                       "Upper limit for the number of pods that can be set by the autoscaler; "
                       "cannot be smaller than MinReplicas.")
    target = out.family("kube_horizontalpodautoscaler_spec_target_metric", "gauge",
                        "The metric specifications used by this autoscaler when calculating the "
                        "desired replica count.")
    for h in hpas:
        base = _labels_of(h, "horizontalpodautoscaler")
        spec = spec_of(h)
        ref = spec.get("scaleTargetRef") if isinstance(spec.get("scaleTargetRef"), dict) else {}
        info.add({**base, "scaletargetref_api_version": str(ref.get("apiVersion") or ""),
                  "scaletargetref_kind": str(ref.get("kind") or ""),
                  "scaletargetref_name": str(ref.get("name") or "")}, 1)
        lo = _int(spec.get("minReplicas"))
        min_r.add(base, 1 if lo is None else lo)
        if _int(spec.get("maxReplicas")) is not None:
            max_r.add(base, spec["maxReplicas"])
        for m in spec.get("metrics") or []:
            found = _target_values(m) if isinstance(m, dict) else None
            if found is None:
                continue
            name, t = found
            values = (("utilization", t.get("averageUtilization")),
                      ("average", _quantity_float(t["averageValue"]) if "averageValue" in t else None),
                      ("value", _quantity_float(t["value"]) if "value" in t else None))
            for kind, value in values:
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    target.add({**base, "metric_name": name, "metric_target_type": kind}, value)
    _gauges(out, hpas, "horizontalpodautoscaler", _HPA_STATUS_GAUGES)
    condition = out.family("kube_horizontalpodautoscaler_status_condition", "gauge",
                           "The condition of this autoscaler.")
    for h in hpas:
        base = _labels_of(h, "horizontalpodautoscaler")
        for c in status_of(h).get("conditions") or []:
            if isinstance(c, dict) and c.get("type"):
                _bool_status(condition, {**base, "condition": str(c["type"])}, c.get("status"),
                             key="status")


def _sorted(store: Store, key: str) -> list[Obj]:
    return store.list(key).items  # by (namespace, name)


def kube_state_metrics_text(store: Store) -> str:
    """The exposition of the stored Pods, Deployments, ReplicaSets, StatefulSets and HPAs."""
    out = Exposition()
    _pods(out, _sorted(store, R.PODS.key))
    _workloads(out, _sorted(store, R.DEPLOYMENTS.key), _sorted(store, R.REPLICA_SETS.key),
               _sorted(store, R.STATEFUL_SETS.key))
    _hpas(out, _sorted(store, R.HPAS.key))
    return out.text()
