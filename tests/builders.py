"""The Kubernetes manifests tests send to a cluster, a simulation or `pyhpa reconcile`, as plain
dicts in the wire's camelCase: one place that knows what a Deployment or an HPA looks like.

Each builder takes the few things tests vary; a keyword of the spec's own name (``selector=...``,
``minReplicas=...``) replaces that field, and ``None`` leaves a field out, for tests of what a
server does with an incomplete object. The typed objects the reconcile tests hand to the
in-memory ports come from tests/controller/builders.py; upstream-shaped pods for the engine from
tests/engine/helpers.py.
"""

from __future__ import annotations

from typing import Any

Manifest = dict[str, Any]


def _metadata(name: str, namespace: str | None, labels: dict | None = None,
              annotations: dict | None = None) -> Manifest:
    meta: Manifest = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    return meta


def container(name: str = "app", *, image: str | None = "nginx", cpu: str | None = None,
              **requests: str) -> Manifest:
    """One container; ``cpu`` and any other keyword become its resource requests."""
    out: Manifest = {"name": name}
    if image is not None:
        out["image"] = image
    reqs = ({"cpu": cpu} if cpu is not None else {}) | requests
    if reqs:
        out["resources"] = {"requests": reqs}
    return out


def deployment(name: str = "web", replicas: int | None = 1, *, namespace: str | None = "default",
               containers: list[Manifest] | None = None, cpu: str | None = "100m",
               image: str | None = "nginx", labels: dict | None = None,
               annotations: dict | None = None, pod_labels: dict | None = None,
               status: dict | None = None, **spec: Any) -> Manifest:
    """An apps/v1 Deployment whose pods carry ``app: <name>`` (or ``pod_labels``) and are
    selected by it; by default one container ``app`` requesting ``cpu``. A snapshot's
    Deployment has a ``status`` and may leave its template out (``template=None``)."""
    body: Manifest = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name} if pod_labels is None else pod_labels},
                     "spec": {"containers": containers if containers is not None
                              else [container("app", image=image, cpu=cpu)]}},
    }
    body.update(spec)
    out = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": _metadata(name, namespace, labels, annotations),
           "spec": {k: v for k, v in body.items() if v is not None}}
    if status is not None:
        out["status"] = status
    return out


def pod(name: str, *, namespace: str | None = "default", labels: dict | None = None,
        containers: list[Manifest] | None = None, cpu: str = "100m", phase: str = "Running",
        ready: str = "True", started: str = "2026-01-01T00:00:00Z", ready_since: str | None = None,
        **metadata: Any) -> Manifest:
    """A Pod as a cluster reports it (labels ``app: web`` by default): started at ``started``,
    its Ready condition ``ready`` since ``ready_since`` (default: the start); more metadata
    (``deletionTimestamp=...``) by keyword."""
    meta = _metadata(name, namespace, {"app": "web"} if labels is None else labels) | metadata
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": containers if containers is not None
                     else [container("app", image=None, cpu=cpu)]},
            "status": {"phase": phase, "startTime": started, "conditions": [
                {"type": "Ready", "status": ready, "lastTransitionTime": ready_since or started}]}}


def pod_metrics(name: str, cpu: str, *, namespace: str | None = "default", labels: dict | None = None,
                container_name: str = "app", timestamp: str = "2026-01-01T00:09:45Z",
                window: str = "30s") -> Manifest:
    """The metrics.k8s.io PodMetrics of a one-container pod using ``cpu``."""
    return {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
            "metadata": _metadata(name, namespace, {"app": "web"} if labels is None else labels),
            "timestamp": timestamp, "window": window,
            "containers": [{"name": container_name, "usage": {"cpu": cpu}}]}


def cpu_metric(utilization: int = 50) -> Manifest:
    """A Resource metric: average CPU utilization ``utilization`` %."""
    return {"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": utilization}}}


def external_metric(name: str = "queue", value: str | None = None, *, average_value: str | None = None,
                    selector: dict | None = None, **source: Any) -> Manifest:
    """An External metric (series selected by ``selector``): a Value target (``value``, default
    "10") or an AverageValue one; other keywords (``fallback=...``) join the metric source."""
    target = ({"type": "AverageValue", "averageValue": average_value} if average_value is not None
              else {"type": "Value", "value": "10" if value is None else value})
    metric: Manifest = {"name": name} if selector is None else {"name": name, "selector": selector}
    return {"type": "External", "external": {"metric": metric, "target": target, **source}}


def hpa(name: str = "web", target: str | None = None, *, metrics: list[Manifest] | None = None,
        min_replicas: int | None = 1, max_replicas: int = 10, namespace: str | None = "default",
        behavior: dict | None = None, target_kind: str = "Deployment",
        target_api_version: str | None = "apps/v1", api_version: str = "autoscaling/v2",
        **spec: Any) -> Manifest:
    """A HorizontalPodAutoscaler over the workload ``target`` (default: its own name)."""
    ref: Manifest = {"apiVersion": target_api_version, "kind": target_kind, "name": target or name}
    body: Manifest = {"scaleTargetRef": {k: v for k, v in ref.items() if v is not None},
                      "minReplicas": min_replicas, "maxReplicas": max_replicas,
                      "metrics": metrics, "behavior": behavior}
    body.update(spec)
    return {"apiVersion": api_version, "kind": "HorizontalPodAutoscaler",
            "metadata": _metadata(name, namespace),
            "spec": {k: v for k, v in body.items() if v is not None}}


def cpu_hpa(name: str = "web", target: str | None = None, *, utilization: int = 50,
            **kwargs: Any) -> Manifest:
    """An HPA on one CPU utilization target: the commonest HPA of all."""
    return hpa(name, target, metrics=[cpu_metric(utilization)], **kwargs)
