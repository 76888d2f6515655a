"""The payloads of the autoscaling/v1 round-trip annotations, read and written as Go does.

Why apart from the conversion: v1 keeps what it has no field for (other metrics, their status,
behavior, conditions) as JSON in ``autoscaling.alpha.kubernetes.io/*`` annotations. Their
payloads use v1's "annotation-only" metric shapes (private structs below) and, for behavior, the
field names of the Go *internal* type (``ScaleUp``, ``StabilizationWindowSeconds``). Reading
follows Go's ``json.Unmarshal``: keys match case-insensitively, unknown keys are ignored, and a
payload that does not parse is ignored (None). :mod:`pyhpa.api.conversion` decides where the
results go.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from pyhpa.api.codec import DecodeError, WireCodec, dumps_json
from pyhpa.api.defaults import default_scale_down_rules, default_scale_up_rules
from pyhpa.api.quantity import Quantity, quantity_dec_hook, quantity_enc_hook
from pyhpa.api.types import (
    ContainerResourceMetricSource,
    ContainerResourceMetricStatus,
    CrossVersionObjectReference,
    ExternalMetricFallback,
    ExternalMetricSource,
    ExternalMetricStatus,
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerCondition,
    HorizontalPodAutoscalerScaleDecision,
    HPAFallback,
    HPAScalingPolicy,
    HPAScalingRules,
    K8s,
    LabelSelector,
    MetricIdentifier,
    MetricSpec,
    MetricStatus,
    MetricTarget,
    MetricValueStatus,
    ObjectMetricSource,
    ObjectMetricStatus,
    PodsMetricSource,
    PodsMetricStatus,
    ResourceMetricSource,
    ResourceMetricStatus,
)

__all__ = [
    "read_metrics",
    "read_current_metrics",
    "read_behavior",
    "read_conditions",
    "metrics_json",
    "current_metrics_json",
    "behavior_json",
    "conditions_json",
]

# --------------------------------------------------------------------------- annotation-only v1 types
# Field order and omit rules of k8s.io/api/autoscaling/v1 (its types.go).


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
    fallback: ExternalMetricFallback | None = None  # KEP-5679: omitted when unset


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
    fallback_status: str | None = None  # KEP-5679: omitted when unset
    first_failure_time: datetime | None = None


class _V1MetricStatus(K8s, kw_only=True):
    type: str
    object: _V1ObjectMetricStatus | None = None
    pods: _V1PodsMetricStatus | None = None
    resource: _V1ResourceMetricStatus | None = None
    container_resource: _V1ContainerResourceMetricStatus | None = None
    external: _V1ExternalMetricStatus | None = None


# Go's decoding rules for the shapes above (and the hub types they hold), worked out at import.
_WIRE = WireCodec(_V1MetricSpec, _V1MetricStatus, HorizontalPodAutoscalerCondition,
                  HorizontalPodAutoscalerScaleDecision)

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


class _InternalFallback(_GoStruct, kw_only=True):
    failure_threshold: int | None = None
    replicas: int = 0


class _InternalBehavior(_GoStruct, kw_only=True):
    scale_up: _InternalRules | None = None
    scale_down: _InternalRules | None = None
    sync_period_seconds: int | None = None  # KEP-6003; written only when set (see hub_to_v1)
    fallback: _InternalFallback | None = None  # KEP-5053; written only when set


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
        return _WIRE.from_wire(value, type_)
    return msgspec.convert(value, type_, strict=True, dec_hook=quantity_dec_hook)


# --------------------------------------------------------------------------- annotation shapes -> hub

_ZERO = Quantity.parse("0")


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
            fallback=e.fallback,
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
            fallback_status=e.fallback_status,
            first_failure_time=e.first_failure_time,
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


# --------------------------------------------------------------------------- hub -> annotation shapes


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
            fallback=e.fallback,
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
            fallback_status=e.fallback_status,
            first_failure_time=e.first_failure_time,
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
        return _WIRE.to_wire(value)
    if isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value, enc_hook=quantity_enc_hook)
    return value

# --------------------------------------------------------------------------- the four payloads


def read_metrics(text: str) -> list[MetricSpec] | None:
    """The metrics v1 has no field for (``.../metrics``), as hub metrics."""
    parsed = _read_annotation(text, list[_V1MetricSpec])
    return None if parsed is None else [_metric_from_v1(m) for m in parsed]


def read_current_metrics(text: str) -> list[MetricStatus] | None:
    """The current metrics (``.../current-metrics``), as hub metric statuses."""
    parsed = _read_annotation(text, list[_V1MetricStatus])
    return None if parsed is None else [_status_from_v1(m) for m in parsed]


def read_behavior(text: str) -> HorizontalPodAutoscalerBehavior | None:
    """The behavior (``.../behavior``); None when absent, unreadable or both directions null."""
    b = _read_annotation(text, _InternalBehavior)
    if b is None or (b.scale_up is None and b.scale_down is None and b.sync_period_seconds is None
                     and b.fallback is None):
        return None
    # kubernetes#107038: upstream leaves a null direction null; we fill it with the API defaults
    # so the object stays valid (the fix proposed on that issue).
    return HorizontalPodAutoscalerBehavior(
        scale_up=_rules_from_internal(b.scale_up) or default_scale_up_rules(),
        scale_down=_rules_from_internal(b.scale_down) or default_scale_down_rules(),
        sync_period_seconds=b.sync_period_seconds,
        fallback=None if b.fallback is None else HPAFallback(
            failure_threshold=b.fallback.failure_threshold, replicas=b.fallback.replicas),
    )


def read_conditions(text: str) -> list[HorizontalPodAutoscalerCondition] | None:
    """The conditions (``.../conditions``)."""
    return _read_annotation(text, list[HorizontalPodAutoscalerCondition])


def read_decision(text: str) -> HorizontalPodAutoscalerScaleDecision | None:
    """KEP-6107's decision (``.../last-scale-decision``); None when unreadable."""
    return _read_annotation(text, HorizontalPodAutoscalerScaleDecision)


def metrics_json(metrics: list[MetricSpec]) -> str:
    return _annotation_json([_metric_to_v1(m) for m in metrics])


def current_metrics_json(statuses: list[MetricStatus]) -> str:
    return _annotation_json([_status_to_v1(m) for m in statuses])


def behavior_json(behavior: HorizontalPodAutoscalerBehavior) -> str:
    internal = _to_builtins_deep(_InternalBehavior(
        scale_up=_rules_to_internal(behavior.scale_up),
        scale_down=_rules_to_internal(behavior.scale_down),
        sync_period_seconds=behavior.sync_period_seconds,
        fallback=None if behavior.fallback is None else _InternalFallback(
            failure_threshold=behavior.fallback.failure_threshold, replicas=behavior.fallback.replicas),
    ))
    for added in ("SyncPeriodSeconds", "Fallback"):  # HPAs without them keep the annotation they always had
        if internal[added] is None:
            del internal[added]
    return _annotation_json(internal)


def conditions_json(conditions: list[HorizontalPodAutoscalerCondition]) -> str:
    return _annotation_json(list(conditions))


def decision_json(decision: HorizontalPodAutoscalerScaleDecision) -> str:
    return _annotation_json(decision)
