"""Lossless ``autoscaling/v1`` <-> ``autoscaling/v2`` (hub) conversion, as the API server does it.

Why annotations: v1 has only a CPU target, so everything else (other metrics, their status,
behavior, conditions) travels in four ``autoscaling.alpha.kubernetes.io/*`` annotations holding
JSON. A v1 client that reads, edits and writes back an HPA therefore loses nothing
(hpa-api.md §4). v2 clients never see those annotations: they are dropped on every conversion.

The annotation payloads use the v1 "annotation-only" metric shapes (private structs below)
and, for behavior, the field names of the Go internal type (``ScaleUp``, ``StabilizationWindowSeconds``).
Reading them follows Go's ``json.Unmarshal``: keys match case-insensitively, unknown keys are
ignored, and a payload that does not parse is silently ignored.
"""

from __future__ import annotations

from typing import Any

import msgspec

from pyhpa.api import codec
from pyhpa.api.codec import DecodeError, dumps_json, from_wire, to_wire
from pyhpa.api.defaults import default_hpa, default_hpa_v1, default_scale_down_rules, default_scale_up_rules
from pyhpa.api.quantity import Quantity
from pyhpa.api.types import (
    ContainerResourceMetricSource,
    ContainerResourceMetricStatus,
    CrossVersionObjectReference,
    ExternalMetricSource,
    ExternalMetricStatus,
    HorizontalPodAutoscaler,
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerCondition,
    HorizontalPodAutoscalerSpec,
    HorizontalPodAutoscalerSpecV1,
    HorizontalPodAutoscalerStatus,
    HorizontalPodAutoscalerStatusV1,
    HorizontalPodAutoscalerV1,
    HPAScalingPolicy,
    HPAScalingRules,
    K8s,
    LabelSelector,
    MetricIdentifier,
    MetricSpec,
    MetricStatus,
    MetricTarget,
    MetricValueStatus,
    ObjectMeta,
    ObjectMetricSource,
    ObjectMetricStatus,
    PodsMetricSource,
    PodsMetricStatus,
    ResourceMetricSource,
    ResourceMetricStatus,
)

__all__ = [
    "METRICS_ANNOTATION",
    "CURRENT_METRICS_ANNOTATION",
    "BEHAVIOR_ANNOTATION",
    "CONDITIONS_ANNOTATION",
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
ROUND_TRIP_ANNOTATIONS = (
    METRICS_ANNOTATION,
    CURRENT_METRICS_ANNOTATION,
    BEHAVIOR_ANNOTATION,
    CONDITIONS_ANNOTATION,
    "autoscaling.alpha.kubernetes.io/scale-down-tolerance",
    "autoscaling.alpha.kubernetes.io/scale-up-tolerance",
)
V1 = "autoscaling/v1"
V2 = "autoscaling/v2"
KIND = "HorizontalPodAutoscaler"

# --------------------------------------------------------------------------- annotation-only v1 types
# Field order and omit rules of k8s.io/api/autoscaling/v1 (hpa-api.md §1.2).


class _V1ObjectMetricSource(K8s, kw_only=True):
    target: CrossVersionObjectReference
    metric_name: str
    target_value: Quantity
    selector: LabelSelector | None = None
    average_value: Quantity | None = None


class _V1PodsMetricSource(K8s, kw_only=True):
    metric_name: str
    target_average_value: Quantity
    selector: LabelSelector | None = None


class _V1ResourceMetricSource(K8s, kw_only=True):
    name: str
    target_average_utilization: int | None = None
    target_average_value: Quantity | None = None


class _V1ContainerResourceMetricSource(K8s, kw_only=True):
    name: str
    target_average_utilization: int | None = None
    target_average_value: Quantity | None = None
    container: str


class _V1ExternalMetricSource(K8s, kw_only=True):
    metric_name: str
    metric_selector: LabelSelector | None = None
    target_value: Quantity | None = None
    target_average_value: Quantity | None = None


class _V1MetricSpec(K8s, kw_only=True):
    type: str
    object: _V1ObjectMetricSource | None = None
    pods: _V1PodsMetricSource | None = None
    resource: _V1ResourceMetricSource | None = None
    container_resource: _V1ContainerResourceMetricSource | None = None
    external: _V1ExternalMetricSource | None = None


class _V1ObjectMetricStatus(K8s, kw_only=True):
    target: CrossVersionObjectReference
    metric_name: str
    current_value: Quantity
    selector: LabelSelector | None = None
    average_value: Quantity | None = None


class _V1PodsMetricStatus(K8s, kw_only=True):
    metric_name: str
    current_average_value: Quantity
    selector: LabelSelector | None = None


class _V1ResourceMetricStatus(K8s, kw_only=True):
    name: str
    current_average_utilization: int | None = None
    current_average_value: Quantity


class _V1ContainerResourceMetricStatus(K8s, kw_only=True):
    name: str
    current_average_utilization: int | None = None
    current_average_value: Quantity
    container: str


class _V1ExternalMetricStatus(K8s, kw_only=True):
    metric_name: str
    metric_selector: LabelSelector | None = None
    current_value: Quantity
    current_average_value: Quantity | None = None


class _V1MetricStatus(K8s, kw_only=True):
    type: str
    object: _V1ObjectMetricStatus | None = None
    pods: _V1PodsMetricStatus | None = None
    resource: _V1ResourceMetricStatus | None = None
    container_resource: _V1ContainerResourceMetricStatus | None = None
    external: _V1ExternalMetricStatus | None = None


# The Go *internal* behavior type has no JSON tags: keys are the Go field names, every field is
# written (null when unset).


class _GoStruct(msgspec.Struct, rename="pascal", kw_only=True):
    pass


class _InternalPolicy(_GoStruct, kw_only=True):
    type: str = ""
    value: int = 0
    period_seconds: int = 0


class _InternalRules(_GoStruct, kw_only=True):
    stabilization_window_seconds: int | None = None
    select_policy: str | None = None
    policies: list[_InternalPolicy] | None = None
    tolerance: Quantity | None = None


class _InternalBehavior(_GoStruct, kw_only=True):
    scale_up: _InternalRules | None = None
    scale_down: _InternalRules | None = None
    sync_period_seconds: int | None = None  # KEP-6003; written only when set (see hub_to_v1)


# --------------------------------------------------------------------------- Go-style annotation reading


class _Unparsable(Exception):
    pass


def _fold(value: Any, type_: Any) -> Any:
    """Rewrite decoded JSON for ``type_`` the way Go's decoder reads it: keys matched
    case-insensitively (exact match first), unknown keys and nulls in non-pointer fields dropped."""
    origin = getattr(type_, "__origin__", None)
    args = getattr(type_, "__args__", ())
    if args and type(None) in args:  # X | None
        inner = [a for a in args if a is not type(None)]
        return None if value is None else _fold(value, inner[0])
    if origin is list:
        if not isinstance(value, list):
            raise _Unparsable
        return [_fold(v, args[0]) for v in value]
    if isinstance(type_, type) and issubclass(type_, msgspec.Struct):
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise _Unparsable
        fields = {f.encode_name: f for f in msgspec.structs.fields(type_)}
        lower = {k.lower(): k for k in fields}
        out: dict[str, Any] = {}
        for key, v in value.items():
            wire = key if key in fields else lower.get(key.lower())
            if wire is None:
                continue
            f = fields[wire]
            if v is None and f.required:
                continue
            out[wire] = _fold(v, f.type)
        return out
    return value


def _read_annotation(text: str, type_: Any) -> Any:
    """Parse one annotation as Go would; None when it does not parse (upstream ignores it)."""
    try:
        raw = msgspec.json.decode(text)
        folded = _fold(raw, type_)
        if getattr(type_, "__origin__", None) is list:
            (elem,) = type_.__args__
            return [_convert(item, elem) for item in folded]
        return _convert(folded, type_)
    except (msgspec.DecodeError, _Unparsable, DecodeError, msgspec.ValidationError, ValueError, TypeError):
        return None


def _convert(value: Any, type_: Any) -> Any:
    if issubclass(type_, K8s):
        return from_wire(value, type_)
    return msgspec.convert(value, type_, strict=True, dec_hook=codec._DEC_HOOK)


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


_ZERO = Quantity.parse("0")

# --------------------------------------------------------------------------- v1 -> hub


def _metric_from_v1(m: _V1MetricSpec) -> MetricSpec:
    out = MetricSpec(type=m.type)
    if m.object is not None:
        o = m.object
        out.object = ObjectMetricSource(
            described_object=o.target,
            metric=MetricIdentifier(name=o.metric_name, selector=o.selector),
            target=MetricTarget(
                type="AverageValue" if o.average_value is not None else "Value",
                value=o.target_value,
                average_value=o.average_value,
            ),
        )
    if m.pods is not None:
        p = m.pods
        out.pods = PodsMetricSource(
            metric=MetricIdentifier(name=p.metric_name, selector=p.selector),
            target=MetricTarget(type="AverageValue", average_value=p.target_average_value),
        )
    if m.resource is not None:
        r = m.resource
        out.resource = ResourceMetricSource(name=r.name, target=_utilization_target(r))
    if m.container_resource is not None:
        c = m.container_resource
        out.container_resource = ContainerResourceMetricSource(
            name=c.name, target=_utilization_target(c), container=c.container
        )
    if m.external is not None:
        e = m.external
        out.external = ExternalMetricSource(
            metric=MetricIdentifier(name=e.metric_name, selector=e.metric_selector),
            target=MetricTarget(
                type="Value" if e.target_value is not None else "AverageValue",
                value=e.target_value,
                average_value=e.target_average_value,
            ),
        )
    return out


def _utilization_target(r: Any) -> MetricTarget:
    return MetricTarget(
        type="Utilization" if r.target_average_utilization is not None else "AverageValue",
        average_utilization=r.target_average_utilization,
        average_value=r.target_average_value,
    )


def _status_from_v1(m: _V1MetricStatus) -> MetricStatus:
    out = MetricStatus(type=m.type)
    if m.object is not None:
        o = m.object
        out.object = ObjectMetricStatus(
            metric=MetricIdentifier(name=o.metric_name, selector=o.selector),
            current=MetricValueStatus(value=o.current_value, average_value=o.average_value),
            described_object=o.target,
        )
    if m.pods is not None:
        p = m.pods
        out.pods = PodsMetricStatus(
            metric=MetricIdentifier(name=p.metric_name, selector=p.selector),
            current=MetricValueStatus(average_value=p.current_average_value),
        )
    if m.resource is not None:
        r = m.resource
        out.resource = ResourceMetricStatus(
            name=r.name,
            current=MetricValueStatus(average_value=r.current_average_value, average_utilization=r.current_average_utilization),
        )
    if m.container_resource is not None:
        c = m.container_resource
        out.container_resource = ContainerResourceMetricStatus(
            name=c.name,
            current=MetricValueStatus(average_value=c.current_average_value, average_utilization=c.current_average_utilization),
            container=c.container,
        )
    if m.external is not None:
        e = m.external
        out.external = ExternalMetricStatus(
            metric=MetricIdentifier(name=e.metric_name, selector=e.metric_selector),
            current=MetricValueStatus(value=e.current_value, average_value=e.current_average_value),
        )
    return out


def _rules_from_internal(r: _InternalRules | None) -> HPAScalingRules | None:
    if r is None:
        return None
    return HPAScalingRules(
        stabilization_window_seconds=r.stabilization_window_seconds,
        select_policy=r.select_policy,
        policies=None if r.policies is None else [
            HPAScalingPolicy(type=p.type, value=p.value, period_seconds=p.period_seconds) for p in r.policies
        ],
        tolerance=r.tolerance,
    )


def v1_to_hub(v1: HorizontalPodAutoscalerV1) -> HorizontalPodAutoscaler:
    """autoscaling/v1 -> hub (v2 shape), merging the round-trip annotations (§4.2)."""
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
        parsed = _read_annotation(ann[METRICS_ANNOTATION], list[_V1MetricSpec])
        if parsed is not None:
            metrics = [_metric_from_v1(m) for m in parsed] + cpu
    if BEHAVIOR_ANNOTATION in ann:
        b = _read_annotation(ann[BEHAVIOR_ANNOTATION], _InternalBehavior)
        if b is not None and (b.scale_up is not None or b.scale_down is not None or b.sync_period_seconds is not None):
            # kubernetes#107038: upstream leaves a null direction null; we fill it with the
            # API defaults so the object stays valid (the recommended fix in hpa-api.md §4.3).
            behavior = HorizontalPodAutoscalerBehavior(
                scale_up=_rules_from_internal(b.scale_up) or default_scale_up_rules(),
                scale_down=_rules_from_internal(b.scale_down) or default_scale_down_rules(),
                sync_period_seconds=b.sync_period_seconds,
            )
    if CURRENT_METRICS_ANNOTATION in ann:
        parsed_status = _read_annotation(ann[CURRENT_METRICS_ANNOTATION], list[_V1MetricStatus])
        if parsed_status is not None:
            current = [_status_from_v1(m) for m in parsed_status]
    if not metrics:
        metrics = [_cpu_metric(80)]
    if CONDITIONS_ANNOTATION in ann:
        parsed_conditions = _read_annotation(ann[CONDITIONS_ANNOTATION], list[HorizontalPodAutoscalerCondition])
        if parsed_conditions is not None:
            conditions = parsed_conditions or None
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


# --------------------------------------------------------------------------- hub -> v1


def _metric_to_v1(m: MetricSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"type": m.type}
    if m.object is not None:
        o = m.object
        out["object"] = _V1ObjectMetricSource(
            target=o.described_object,
            metric_name=o.metric.name,
            target_value=o.target.value if o.target.value is not None else _ZERO,
            selector=o.metric.selector,
            average_value=o.target.average_value,
        )
    if m.pods is not None:
        p = m.pods
        out["pods"] = _V1PodsMetricSource(
            metric_name=p.metric.name,
            target_average_value=p.target.average_value if p.target.average_value is not None else _ZERO,
            selector=p.metric.selector,
        )
    if m.resource is not None:
        r = m.resource
        out["resource"] = _V1ResourceMetricSource(
            name=r.name,
            target_average_utilization=r.target.average_utilization,
            target_average_value=r.target.average_value,
        )
    if m.container_resource is not None:
        c = m.container_resource
        out["containerResource"] = _V1ContainerResourceMetricSource(
            name=c.name,
            target_average_utilization=c.target.average_utilization,
            target_average_value=c.target.average_value,
            container=c.container,
        )
    if m.external is not None:
        e = m.external
        out["external"] = _V1ExternalMetricSource(
            metric_name=e.metric.name,
            metric_selector=e.metric.selector,
            target_value=e.target.value,
            target_average_value=e.target.average_value,
        )
    return out


def _status_to_v1(m: MetricStatus) -> dict[str, Any]:
    out: dict[str, Any] = {"type": m.type}
    if m.object is not None:
        o = m.object
        out["object"] = _V1ObjectMetricStatus(
            target=o.described_object,
            metric_name=o.metric.name,
            current_value=o.current.value if o.current.value is not None else _ZERO,
            selector=o.metric.selector,
            average_value=o.current.average_value,
        )
    if m.pods is not None:
        p = m.pods
        out["pods"] = _V1PodsMetricStatus(
            metric_name=p.metric.name,
            current_average_value=p.current.average_value if p.current.average_value is not None else _ZERO,
            selector=p.metric.selector,
        )
    if m.resource is not None:
        r = m.resource
        out["resource"] = _V1ResourceMetricStatus(
            name=r.name,
            current_average_utilization=r.current.average_utilization,
            current_average_value=r.current.average_value if r.current.average_value is not None else _ZERO,
        )
    if m.container_resource is not None:
        c = m.container_resource
        out["containerResource"] = _V1ContainerResourceMetricStatus(
            name=c.name,
            current_average_utilization=c.current.average_utilization,
            current_average_value=c.current.average_value if c.current.average_value is not None else _ZERO,
            container=c.container,
        )
    if m.external is not None:
        e = m.external
        out["external"] = _V1ExternalMetricStatus(
            metric_name=e.metric.name,
            metric_selector=e.metric.selector,
            current_value=e.current.value if e.current.value is not None else _ZERO,
            current_average_value=e.current.average_value,
        )
    return out


def _rules_to_internal(r: HPAScalingRules | None) -> _InternalRules | None:
    if r is None:
        return None
    return _InternalRules(
        stabilization_window_seconds=r.stabilization_window_seconds,
        select_policy=r.select_policy,
        policies=None if r.policies is None else [
            _InternalPolicy(type=p.type, value=p.value, period_seconds=p.period_seconds) for p in r.policies
        ],
        tolerance=r.tolerance,
    )


def _annotation_json(value: Any) -> str:
    return dumps_json(_to_builtins_deep(value)).decode()


def _to_builtins_deep(value: Any) -> Any:
    if isinstance(value, list):
        return [_to_builtins_deep(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_builtins_deep(v) for k, v in value.items()}
    if isinstance(value, K8s):
        return to_wire(value)
    if isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value, enc_hook=codec.quantity_enc_hook)
    return value


def hub_to_v1(hub: HorizontalPodAutoscaler) -> HorizontalPodAutoscalerV1:
    """Hub -> autoscaling/v1: CPU target in the spec, the rest in annotations (§4.3)."""
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
        extra[METRICS_ANNOTATION] = _annotation_json([_metric_to_v1(m) for m in rest])
    current_cpu: int | None = None
    st = hub.status
    if st.current_metrics:
        extra[CURRENT_METRICS_ANNOTATION] = _annotation_json([_status_to_v1(m) for m in st.current_metrics])
        for m in st.current_metrics:
            if (
                m.type == "Resource"
                and m.resource is not None
                and m.resource.name == "cpu"
                and m.resource.current.average_utilization is not None
            ):
                current_cpu = m.resource.current.average_utilization
    if spec.behavior is not None:
        internal = _to_builtins_deep(_InternalBehavior(
            scale_up=_rules_to_internal(spec.behavior.scale_up),
            scale_down=_rules_to_internal(spec.behavior.scale_down),
            sync_period_seconds=spec.behavior.sync_period_seconds,
        ))
        if internal["SyncPeriodSeconds"] is None:  # HPAs without it keep the annotation they always had
            del internal["SyncPeriodSeconds"]
        extra[BEHAVIOR_ANNOTATION] = _annotation_json(internal)
    if st.conditions:
        extra[CONDITIONS_ANNOTATION] = _annotation_json(list(st.conditions))
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
        raise DecodeError("", f"expected object, got {codec.json_type(raw)}")
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
    server (v1: minReplicas only; the CPU metric comes from conversion; v2: §2.1).
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
