"""Lossless ``autoscaling/v1`` <-> ``autoscaling/v2`` (hub) conversion, as the API server does it.

Why annotations: v1 has only a CPU target, so everything else (other metrics, their status,
behavior, conditions) travels in four ``autoscaling.alpha.kubernetes.io/*`` annotations holding
JSON. A v1 client that reads, edits and writes back an HPA therefore loses nothing
(upstream's pkg/apis/autoscaling/v1/conversion.go). v2 clients never see those annotations: they are dropped on every conversion.

The payloads themselves (their shapes, read and written as Go does) are in
:mod:`pyhpa.api.v1_annotations`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from pyhpa.api import v1_annotations as annotations
from pyhpa.api.codec import DecodeError, from_wire, json_type, to_wire
from pyhpa.api.defaults import default_hpa, default_hpa_v1
from pyhpa.api.types import (
    HorizontalPodAutoscaler,
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerCondition,
    HorizontalPodAutoscalerSpec,
    HorizontalPodAutoscalerSpecV1,
    HorizontalPodAutoscalerStatus,
    HorizontalPodAutoscalerStatusV1,
    HorizontalPodAutoscalerV1,
    MetricSpec,
    MetricStatus,
    MetricTarget,
    MetricValueStatus,
    ObjectMeta,
    ResourceMetricSource,
    ResourceMetricStatus,
)

__all__ = [
    "METRICS_ANNOTATION",
    "CURRENT_METRICS_ANNOTATION",
    "BEHAVIOR_ANNOTATION",
    "CONDITIONS_ANNOTATION",
    "DECISION_ANNOTATION",
    "ROUND_TRIP_ANNOTATIONS",
    "v1_to_hub",
    "hub_to_v1",
    "hpa_from_any_wire",
    "convert_hpa_wire",
    "drop_round_trip_annotations",
]

METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/current-metrics"
BEHAVIOR_ANNOTATION = "autoscaling.alpha.kubernetes.io/behavior"
CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions"
# KEP-6107's status.lastScaleDecision: v1 has no field, so it travels like the conditions (our
# key: upstream has not named one, the KEP being provisional).
DECISION_ANNOTATION = "autoscaling.alpha.kubernetes.io/last-scale-decision"
ROUND_TRIP_ANNOTATIONS = (
    METRICS_ANNOTATION,
    CURRENT_METRICS_ANNOTATION,
    BEHAVIOR_ANNOTATION,
    CONDITIONS_ANNOTATION,
    DECISION_ANNOTATION,
    "autoscaling.alpha.kubernetes.io/scale-down-tolerance",
    "autoscaling.alpha.kubernetes.io/scale-up-tolerance",
)
V1 = "autoscaling/v1"
V2 = "autoscaling/v2"
KIND = "HorizontalPodAutoscaler"

# --------------------------------------------------------------------------- helpers


def _copy_struct(obj: Any, **changes: Any) -> Any:
    """``structs.replace`` that keeps the unknown wire fields the codec parked on ``obj``."""
    new = msgspec.structs.replace(obj, **changes)
    extra = getattr(obj, "__dict__", None)
    if extra:
        new.__dict__.update(extra)
    return new


def _meta_without_round_trip(meta: ObjectMeta, extra: dict[str, str] | None = None) -> ObjectMeta:
    annotations = {k: v for k, v in (meta.annotations or {}).items() if k not in ROUND_TRIP_ANNOTATIONS}
    if extra:
        annotations.update(extra)
    return _copy_struct(meta, annotations=annotations or None)


def drop_round_trip_annotations(hpa: HorizontalPodAutoscaler) -> HorizontalPodAutoscaler:
    """Remove the v1 round-trip annotations (what v2<->hub conversion does), in place."""
    ann = hpa.metadata.annotations
    if ann and any(k in ann for k in ROUND_TRIP_ANNOTATIONS):
        hpa.metadata = _meta_without_round_trip(hpa.metadata)
    return hpa


def _cpu_metric(utilization: int) -> MetricSpec:
    return MetricSpec(
        type="Resource",
        resource=ResourceMetricSource(name="cpu", target=MetricTarget(type="Utilization", average_utilization=utilization)),
    )


def _is_cpu_utilization(m: MetricSpec) -> bool:
    return (
        m.type == "Resource"
        and m.resource is not None
        and m.resource.name == "cpu"
        and m.resource.target.average_utilization is not None
    )




def v1_to_hub(v1: HorizontalPodAutoscalerV1) -> HorizontalPodAutoscaler:
    """autoscaling/v1 -> hub (v2 shape), merging the round-trip annotations (Convert_v1_HorizontalPodAutoscaler_To_autoscaling_...)."""
    spec = v1.spec
    metrics: list[MetricSpec] = []
    cpu: list[MetricSpec] = []
    if spec.target_cpu_utilization_percentage is not None:
        cpu = [_cpu_metric(spec.target_cpu_utilization_percentage)]
    metrics = list(cpu)
    st = v1.status
    current: list[MetricStatus] | None = None
    if st.current_cpu_utilization_percentage is not None:
        current = [
            MetricStatus(
                type="Resource",
                resource=ResourceMetricStatus(
                    name="cpu", current=MetricValueStatus(average_utilization=st.current_cpu_utilization_percentage)
                ),
            )
        ]
    behavior: HorizontalPodAutoscalerBehavior | None = None
    conditions: list[HorizontalPodAutoscalerCondition] | None = None
    ann = v1.metadata.annotations or {}
    if METRICS_ANNOTATION in ann:
        parsed = annotations.read_metrics(ann[METRICS_ANNOTATION])
        if parsed is not None:
            metrics = parsed + cpu
    if BEHAVIOR_ANNOTATION in ann:
        behavior = annotations.read_behavior(ann[BEHAVIOR_ANNOTATION])
    if CURRENT_METRICS_ANNOTATION in ann:
        parsed_status = annotations.read_current_metrics(ann[CURRENT_METRICS_ANNOTATION])
        if parsed_status is not None:
            current = parsed_status
    if not metrics:
        metrics = [_cpu_metric(80)]
    if CONDITIONS_ANNOTATION in ann:
        parsed_conditions = annotations.read_conditions(ann[CONDITIONS_ANNOTATION])
        if parsed_conditions is not None:
            conditions = parsed_conditions or None
    decision = annotations.read_decision(ann[DECISION_ANNOTATION]) if DECISION_ANNOTATION in ann else None
    hub = HorizontalPodAutoscaler(
        api_version=V2,
        kind=KIND,
        metadata=_meta_without_round_trip(v1.metadata),
        spec=HorizontalPodAutoscalerSpec(
            scale_target_ref=spec.scale_target_ref,
            min_replicas=spec.min_replicas,
            max_replicas=spec.max_replicas,
            metrics=metrics,
            behavior=behavior,
        ),
        status=HorizontalPodAutoscalerStatus(
            observed_generation=st.observed_generation,
            last_scale_time=st.last_scale_time,
            current_replicas=st.current_replicas,
            desired_replicas=st.desired_replicas,
            current_metrics=current,
            conditions=conditions,
            last_scale_decision=decision,
        ),
    )
    _carry_unknown(v1, hub)
    return hub


def _carry_unknown(src: Any, dst: Any) -> None:
    # Unknown top-level/spec/status fields survive a version change the way they survive a
    # plain round trip (they would have been dropped by a real server; we keep them visible).
    for a, b in ((src, dst), (src.spec, dst.spec), (src.status, dst.status)):
        extra = getattr(a, "_wire_unknown", None)
        if extra:
            b._wire_unknown = dict(extra)
            b._wire_subtree = True
            dst._wire_subtree = True
    if getattr(src.metadata, "_wire_subtree", False):
        dst._wire_subtree = True



def hub_to_v1(hub: HorizontalPodAutoscaler) -> HorizontalPodAutoscalerV1:
    """Hub -> autoscaling/v1: CPU target in the spec, the rest in annotations (Convert_autoscaling_HorizontalPodAutoscaler_To_v1_...)."""
    spec = hub.spec
    target_cpu: int | None = None
    rest: list[MetricSpec] = []
    for m in spec.metrics or []:
        if _is_cpu_utilization(m):
            if target_cpu is None:
                target_cpu = m.resource.target.average_utilization  # type: ignore[union-attr]
        else:
            rest.append(m)
    extra: dict[str, str] = {}
    if rest:
        extra[METRICS_ANNOTATION] = annotations.metrics_json(rest)
    current_cpu: int | None = None
    st = hub.status
    if st.current_metrics:
        extra[CURRENT_METRICS_ANNOTATION] = annotations.current_metrics_json(st.current_metrics)
        for m in st.current_metrics:
            if (
                m.type == "Resource"
                and m.resource is not None
                and m.resource.name == "cpu"
                and m.resource.current.average_utilization is not None
            ):
                current_cpu = m.resource.current.average_utilization
    if spec.behavior is not None:
        extra[BEHAVIOR_ANNOTATION] = annotations.behavior_json(spec.behavior)
    if st.conditions:
        extra[CONDITIONS_ANNOTATION] = annotations.conditions_json(st.conditions)
    if st.last_scale_decision is not None:
        extra[DECISION_ANNOTATION] = annotations.decision_json(st.last_scale_decision)
    v1 = HorizontalPodAutoscalerV1(
        api_version=V1,
        kind=KIND,
        metadata=_meta_without_round_trip(hub.metadata, extra),
        spec=HorizontalPodAutoscalerSpecV1(
            scale_target_ref=spec.scale_target_ref,
            min_replicas=spec.min_replicas,
            max_replicas=spec.max_replicas,
            target_cpu_utilization_percentage=target_cpu,
        ),
        status=HorizontalPodAutoscalerStatusV1(
            observed_generation=st.observed_generation,
            last_scale_time=st.last_scale_time,
            current_replicas=st.current_replicas,
            desired_replicas=st.desired_replicas,
            current_cpu_utilization_percentage=current_cpu,
        ),
    )
    _carry_unknown(hub, v1)
    return v1


# --------------------------------------------------------------------------- wire entry points


def _api_version(raw: Any) -> str:
    if not isinstance(raw, dict):
        raise DecodeError("", f"expected object, got {json_type(raw)}")
    api_version = raw.get("apiVersion")
    if api_version not in (V1, V2):
        raise DecodeError(
            "apiVersion", f"unsupported value {api_version!r} for a HorizontalPodAutoscaler (want {V1} or {V2})"
        )
    kind = raw.get("kind")
    if kind != KIND:
        raise DecodeError("kind", f"expected {KIND!r}, got {kind!r}")
    return api_version


def hpa_from_any_wire(raw: Any, *, default: bool = False) -> HorizontalPodAutoscaler:
    """Decode an autoscaling/v1 or v2 HPA into the hub (v2) struct.

    With ``default``, the defaulting of the version it was written in runs first, as in the API
    server (v1: minReplicas only; the CPU metric comes from conversion; v2: SetDefaults_HorizontalPodAutoscaler).
    """
    if _api_version(raw) == V1:
        v1 = from_wire(raw, HorizontalPodAutoscalerV1)
        if default:
            default_hpa_v1(v1)
        return v1_to_hub(v1)
    hub = drop_round_trip_annotations(from_wire(raw, HorizontalPodAutoscaler))
    return default_hpa(hub) if default else hub


def convert_hpa_wire(raw: dict[str, Any], to_api_version: str) -> dict[str, Any]:
    """An HPA wire dict of either version, as ``to_api_version`` (``autoscaling/v1``/``v2``) shows it."""
    if to_api_version not in (V1, V2):
        raise ValueError(f"cannot convert a HorizontalPodAutoscaler to {to_api_version!r}")
    hub = hpa_from_any_wire(raw)
    return to_wire(hub_to_v1(hub) if to_api_version == V1 else hub)
