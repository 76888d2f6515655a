"""The HPA as it was, for ``pyhpa history``: from kube-state-metrics, or whole from the cluster.

kube-state-metrics exports an HPA's target, bounds and metric targets, but not its ``behavior``
nor the controller's flags, nor a metric's type (Pods, Object or External) beyond the target type.
What is then assumed (upstream defaults; ``average`` targets as Pods metrics, ``value`` targets as
External ones) is said in a warning and kept as a comment in the written scenario. With
``--kubeconfig`` the HPA object is read from the API server instead (its whole spec); the
controller's flags stay assumed unless given as ``--horizontal-pod-autoscaler-*``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from pyhpa.sim.history_queries import HistoryError

# Upstream defaults (kube-controller-manager flags; autoscaling/v2 behavior, KEP-853).
CONTROLLER_DEFAULTS = MappingProxyType({
    "horizontal-pod-autoscaler-sync-period": "15s",
    "horizontal-pod-autoscaler-tolerance": 0.1,
    "horizontal-pod-autoscaler-downscale-stabilization": "5m",
    "horizontal-pod-autoscaler-cpu-initialization-period": "5m",
    "horizontal-pod-autoscaler-initial-readiness-delay": "30s",
})
def defaults_left(given: dict[str, Any]) -> str:
    """The controller flags not given (``pyhpa history --horizontal-pod-autoscaler-*``) with their
    upstream defaults, e.g. ``sync period 15s, tolerance 0.1``; empty when all were given."""
    return ", ".join(f"{name.removeprefix('horizontal-pod-autoscaler-').replace('-', ' ')} {value}"
                     for name, value in CONTROLLER_DEFAULTS.items() if name not in given)


ASSUMED_BEHAVIOR = ("behavior: upstream defaults (scaleUp: no stabilization, max of 100% or 4 pods per 15s; "
                    "scaleDown: 300s stabilization, 100% per 15s)")

Metric = tuple[str, str, dict[str, str]]  # (metric name, type, labels of its selector)


def read_hpa(r: Any, assumed: list[str]) -> tuple[dict[str, Any], str, list[Metric], "ClusterTimes"]:
    """(the HPA manifest, where it was read, its metrics, the real controller's sync times the
    cluster holds: none from kube-state-metrics)."""
    synced = ClusterTimes()
    left = defaults_left(r.req.controller)
    flags = [f"controller flags: upstream defaults ({left})"] if left else []
    if r.req.kubeconfig:
        manifest, synced = _from_cluster(r)
        source = "cluster"
        assumed.extend(flags)
        if left:
            r.warn(f"warning: HPA {manifest['metadata']['name']} read from the cluster; the controller's flags are "
                   f"not in it: assumed upstream defaults ({left}; pass --horizontal-pod-autoscaler-* as the "
                   "controller ran)")
    else:
        manifest = _from_kube_state_metrics(r, assumed)
        source = "kube-state-metrics"
        assumed[:0] = [ASSUMED_BEHAVIOR, *flags]
        r.warn("warning: kube-state-metrics has no HPA behavior" + (" and no controller flags" if left else "")
               + ": assumed upstream defaults (behavior: scaleUp 100% or 4 pods per 15s, scaleDown 100% per 15s "
               f"after 300s stabilization{'; ' + left if left else ''}); pass --kubeconfig to read the HPA's spec")
    return manifest, source, metrics_of(manifest), synced


def metrics_of(manifest: dict[str, Any]) -> list[Metric]:
    out: list[Metric] = []
    for m in (manifest.get("spec") or {}).get("metrics") or []:
        kind = m.get("type")
        if kind in ("Resource", "ContainerResource"):
            block = m.get("resource") or m.get("containerResource") or {}
            out.append((str(block.get("name")), "Resource", {}))
        elif kind in ("Pods", "Object", "External"):
            metric = (m.get(kind.lower()) or {}).get("metric") or {}
            labels = ((metric.get("selector") or {}).get("matchLabels")) or {}
            out.append((str(metric.get("name")), kind, {str(k): str(v) for k, v in labels.items()}))
    return out


def _pick(r: Any, names: list[str], where: str) -> str:
    if r.req.hpa:
        if r.req.hpa not in names:
            raise HistoryError(f"--hpa {r.req.hpa}: no such HPA scales {r.req.target} ({where}: "
                               f"{', '.join(names) or 'none'})")
        return r.req.hpa
    if not names:
        raise HistoryError(f"no HPA scales {r.req.target} ({where}, between the range's ends); "
                           "pass --kubeconfig to read it from the cluster")
    if len(names) > 1:
        raise HistoryError(f"{len(names)} HPAs scale {r.req.target} ({where}: {', '.join(names)}): "
                           "name the one to replay with --hpa NAME")
    return names[0]


def _value(r: Any, metric: str, hpa: str) -> float | None:
    found = r.instant(r.q.hpa_series(metric, hpa))
    return max((s.value for s in found), default=None)


def _from_kube_state_metrics(r: Any, assumed: list[str]) -> dict[str, Any]:
    names = sorted({s.labels.get("horizontalpodautoscaler", "") for s in r.instant(r.q.hpas())} - {""})
    name = _pick(r, names, "kube_horizontalpodautoscaler_info")
    low, high = _value(r, "spec_min_replicas", name), _value(r, "spec_max_replicas", name)
    if high is None:
        raise HistoryError(f"missing series: kube_horizontalpodautoscaler_spec_max_replicas of HPA "
                           f"{r.req.namespace}/{name}")
    targets = r.instant(r.q.hpa_series("spec_target_metric", name))
    metrics: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for s in sorted(targets, key=lambda s: (s.labels.get("metric_name", ""), s.labels.get("metric_target_type", ""))):
        metric, kind = s.labels.get("metric_name", ""), s.labels.get("metric_target_type", "")
        if (metric, kind) in seen or not metric:
            continue
        seen.add((metric, kind))
        metrics.append(_metric_spec(r, metric, kind, s.value, assumed))
    if not metrics:
        raise HistoryError(f"missing series: kube_horizontalpodautoscaler_spec_target_metric of HPA "
                           f"{r.req.namespace}/{name}: its metrics are unknown (pass --kubeconfig)")
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": r.req.kind, "name": r.req.name},
        "minReplicas": int(low) if low is not None else 1,
        "maxReplicas": int(high),
        "metrics": metrics,
    }
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": r.req.namespace}, "spec": spec}


def _metric_spec(r: Any, metric: str, kind: str, value: float, assumed: list[str]) -> dict[str, Any]:
    if metric in ("cpu", "memory"):
        if kind == "utilization":
            return {"type": "Resource", "resource": {"name": metric, "target": {
                "type": "Utilization", "averageUtilization": int(round(value))}}}
        return {"type": "Resource", "resource": {"name": metric, "target": {
            "type": "AverageValue", "averageValue": _quantity(value)}}}
    if kind == "value":
        line = f"metric {metric}: a Value target taken as an External metric without selector"
        assumed.append(line)
        r.warn(f"warning: kube-state-metrics does not give a metric's type: {line} (pass --kubeconfig for the spec)")
        return {"type": "External", "external": {"metric": {"name": metric}, "target": {
            "type": "Value", "value": _quantity(value)}}}
    line = f"metric {metric}: an AverageValue target taken as a Pods metric"
    assumed.append(line)
    r.warn(f"warning: kube-state-metrics does not give a metric's type: {line} (pass --kubeconfig for the spec)")
    return {"type": "Pods", "pods": {"metric": {"name": metric}, "target": {
        "type": "AverageValue", "averageValue": _quantity(value)}}}


def _quantity(value: float) -> str | int:
    """A target as an HPA manifest holds it: a whole number plain, else its canonical quantity."""
    from pyhpa.api.quantity import Quantity

    text = Quantity.from_milli(round(value * 1000)).canonical()
    return int(text) if text.isdigit() else text


@dataclass
class ClusterTimes:
    """When the real controller synced, as the cluster records it: ``status.lastScaleTime``
    (whole seconds) and the HPA's ``SuccessfulRescale`` events (time, new size). client-go's
    recorder names an event ``<object>.<UnixNano in hex>`` (tools/record/event.go, makeEvent),
    which gives the rescale's instant to the nanosecond where ``lastTimestamp`` has seconds."""

    last_scale: float | None = None
    rescales: list[tuple[float, int, bool]] = field(default_factory=list)  # (time, new size, exact)


RESCALE = re.compile(r"New size: (\d+)")


def rescale_events(listing: dict[str, Any], hpa: str) -> list[tuple[float, int, bool]]:
    """(time, new size, whether the time is exact) of each ``SuccessfulRescale`` event of ``hpa`` in an event list, in time
    order: the time from the event's name (client-go's), else its ``eventTime``, else its
    ``lastTimestamp`` plus half a second (written to the second, truncated); an event repeated
    (``count`` > 1: the recorder patches the first one) also at its ``lastTimestamp``."""
    out = []
    for ev in listing.get("items") or []:
        involved = ev.get("involvedObject") or {}
        if ev.get("reason") != "SuccessfulRescale" or involved.get("name") != hpa:
            continue
        size = RESCALE.search(str(ev.get("message") or ""))
        if size is None:
            continue
        last = parse_time(ev.get("lastTimestamp"))
        first = _name_time(str((ev.get("metadata") or {}).get("name") or ""), hpa)
        if first is None:
            first = parse_time(ev.get("eventTime"))
        if first is not None:
            out.append((first, int(size.group(1)), True))
        elif last is not None:
            out.append((last + 0.5, int(size.group(1)), False))
        if last is not None and (ev.get("count") or 1) > 1 and last + 0.5 > (first or 0) + 1:
            out.append((last + 0.5, int(size.group(1)), False))  # a repeat: the recorder kept the first's name
    return sorted(out)


def _name_time(name: str, hpa: str) -> float | None:
    prefix, _, stamp = name.rpartition(".")
    if prefix != hpa or not stamp:
        return None
    try:
        return int(stamp, 16) / 1e9
    except ValueError:
        return None


def _from_cluster(r: Any) -> tuple[dict[str, Any], ClusterTimes]:
    import asyncio

    from pyhpa.adapters.kube.client import ApiError, KubeClient, load_config

    try:
        config = load_config(r.req.kubeconfig, r.req.context)
    except (OSError, ValueError) as exc:
        text = str(exc)
        raise HistoryError(text if text.startswith("--kubeconfig") else f"--kubeconfig: {text}") from None

    async def fetch() -> tuple[dict[str, Any], dict[str, Any]]:
        client = KubeClient.from_config(config, qps=0, timeout=15.0)
        try:
            hpas = await client.get(f"/apis/autoscaling/v2/namespaces/{r.req.namespace}/horizontalpodautoscalers")
            try:
                events = await client.get(f"/api/v1/namespaces/{r.req.namespace}/events",
                                          params={"fieldSelector": "involvedObject.kind=HorizontalPodAutoscaler"})
            except ApiError as exc:  # the HPA is enough; its events only refine the sync times
                r.warn(f"warning: kubernetes {config.cluster.server}: cannot list the HPA's events ({exc}): "
                       "the real controller's sync times are taken from status.lastScaleTime alone")
                events = {}
            return hpas, events
        finally:
            await client.close()

    try:
        listing, events = asyncio.run(fetch())
    except ApiError as exc:
        raise HistoryError(f"kubernetes {config.cluster.server}: {exc}") from None
    items = {}
    for item in listing.get("items") or []:
        ref = (item.get("spec") or {}).get("scaleTargetRef") or {}
        if ref.get("kind") == r.req.kind and ref.get("name") == r.req.name:
            items[item["metadata"]["name"]] = item
    name = _pick(r, sorted(items), f"HPAs in the cluster's namespace {r.req.namespace}")
    spec = dict(items[name]["spec"])
    last = parse_time((items[name].get("status") or {}).get("lastScaleTime"))
    rescales = [e for e in rescale_events(events, name) if r.start - 1 <= e[0] <= r.end + r.req.step + 1]
    return ({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
             "metadata": {"name": name, "namespace": r.req.namespace}, "spec": spec},
            ClusterTimes(last, rescales))


def parse_time(text: Any) -> float | None:
    """An RFC 3339 time as epoch seconds; None when absent or unreadable."""
    from datetime import datetime, timezone

    if not isinstance(text, str):
        return None
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)).timestamp()
