"""API validation of HorizontalPodAutoscalers and Scales, with upstream's exact messages.

Why exact: users (and kubectl's output) see these strings verbatim, and scripts match on them.
Rules, their order, field paths and texts follow upstream's autoscaling validation.go (Kubernetes 1.37: the
declarative ``minReplicas``/``maxReplicas`` minimum rules are enforced, so their errors come
after the hand-written ones and ``maxReplicas: 0`` reads ``Required value``). Older releases'
rules are switches of :class:`~pyhpa.api.versions.ValidationRules`.

The metadata rules are in :mod:`pyhpa.api.meta_validation`, the error type and its rendering
in :mod:`pyhpa.api.field_errors`, the name rules in :mod:`pyhpa.api.names`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from pyhpa.api.features import FeatureGates
from pyhpa.api.field_errors import FieldError, dedupe, forbidden, invalid, not_supported, required
from pyhpa.api.meta_validation import validate_object_meta, validate_object_meta_update
from pyhpa.api.names import is_dns1123_label, is_qualified_name, is_valid_path_segment_name
from pyhpa.api.types import (
    CrossVersionObjectReference,
    HorizontalPodAutoscaler,
    HPAScalingRules,
    MetricIdentifier,
    MetricSpec,
    MetricTarget,
    Scale,
)
from pyhpa.api.versions import MAX_REPLICAS_DECLARATIVE, MAX_REPLICAS_GREATER_THAN_0, ValidationRules

__all__ = [
    "validate_hpa",
    "validate_hpa_status_update",
    "validate_scale",
    "validate_cross_version_object_reference",
    "validate_container_resource_name",
    "validate_scaling_rules",
]


# --------------------------------------------------------------------------- spec


@dataclass(frozen=True)
class _RefOptions:
    allow_empty_group: bool = False
    allow_invalid_api_version: bool = False


@dataclass(frozen=True)
class _Options:
    min_replicas_lower_bound: int = 1
    scale_target_ref: _RefOptions = _RefOptions()
    described_object: _RefOptions = _RefOptions(allow_empty_group=True)
    old_spec: Any = None  # for declarative ratcheting
    rules: ValidationRules = ValidationRules()


METRIC_SOURCE_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
SELECT_POLICIES = ("Disabled", "Max", "Min")
POLICY_TYPES = ("Percent", "Pods")
MAX_STABILIZATION_WINDOW_SECONDS = 3600
MAX_PERIOD_SECONDS = 1800
MIN_FALLBACK_FAILURE_DURATION_SECONDS = 180  # KEP-5679's external.fallback
SYNC_PERIOD_SECONDS_RANGE = (1, 3600)  # KEP-6003's spec.behavior.syncPeriodSeconds
FALLBACK_STRATEGIES = ("Static", "UseMax", "UseMin")  # KEP-5679's follow-up (PR #6213)


def _parse_group(api_version: str) -> tuple[str | None, str | None]:
    """(group, error) of ``schema.ParseGroupVersion``."""
    if api_version in ("", "/"):
        return "", None
    n = api_version.count("/")
    if n == 0:
        return "", None
    if n == 1:
        return api_version.split("/", 1)[0], None
    return None, f"unexpected GroupVersion string: {api_version}"


def _api_version_fails(ref: CrossVersionObjectReference, allow_empty_group: bool) -> bool:
    group, err = _parse_group(ref.api_version or "")
    return err is not None or (group == "" and not allow_empty_group)


def validate_cross_version_object_reference(
    ref: CrossVersionObjectReference, path: str, opts: _RefOptions = _RefOptions()
) -> list[FieldError]:
    errs: list[FieldError] = []
    for attr in ("kind", "name"):
        value = getattr(ref, attr)
        if not value:
            errs.append(required(f"{path}.{attr}"))
        else:
            for m in is_valid_path_segment_name(value):
                errs.append(invalid(f"{path}.{attr}", value, m))
    if not opts.allow_invalid_api_version:
        api_version = ref.api_version or ""
        group, err = _parse_group(api_version)
        if err is not None:
            errs.append(invalid(path + ".apiVersion", api_version, err))
        elif group == "" and not opts.allow_empty_group:
            errs.append(invalid(path + ".apiVersion", api_version, "apiVersion must specify API group"))
    return errs


def _validate_metric_identifier(ident: MetricIdentifier, path: str) -> list[FieldError]:
    if not ident.name:
        return [required(path + ".name", "must specify a metric name")]
    return [invalid(path + ".name", ident.name, m) for m in is_valid_path_segment_name(ident.name)]


def _validate_metric_target(t: MetricTarget, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not t.type:
        errs.append(required(path + ".type", "must specify a metric target type"))
    if t.type not in ("Utilization", "Value", "AverageValue"):
        errs.append(
            invalid(path + ".type", t.type, "must be either Utilization, Value, or AverageValue", json_value=True)
        )
    if t.value is not None and t.value.sign() != 1:
        errs.append(invalid(path + ".value", t.value, "must be positive"))
    if t.average_value is not None and t.average_value.sign() != 1:
        errs.append(invalid(path + ".averageValue", t.average_value, "must be positive"))
    if t.average_utilization is not None and t.average_utilization < 1:
        errs.append(invalid(path + ".averageUtilization", t.average_utilization, "must be greater than 0"))
    return errs


_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = frozenset(
    {
        "cpu", "memory", "ephemeral-storage",
        "requests.cpu", "requests.memory", "requests.ephemeral-storage",
        "limits.cpu", "limits.memory", "limits.ephemeral-storage",
        "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
        "persistentvolumeclaims", "storage", "requests.storage",
        "services.nodeports", "services.loadbalancers",
    }
)


def _is_standard_resource(name: str) -> bool:
    return (
        name in _STANDARD_RESOURCES
        or name.startswith("hugepages-")
        or name.startswith("requests.hugepages-")
    )


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def validate_container_resource_name(name: str, path: str) -> list[FieldError]:
    errs = [invalid(path, name, m) for m in is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name:
        if not _is_standard_resource(name):
            return [invalid(path, name, "must be a standard resource type or fully qualified", json_value=True)]
        if not (name in _STANDARD_CONTAINER_RESOURCES or name.startswith("hugepages-")):
            return [invalid(path, name, "must be a standard resource for containers", json_value=True)]
    elif not _is_native(name):
        extended = not name.startswith("requests.") and not is_qualified_name("requests." + name)
        if not extended:
            return [invalid(path, name, "doesn't follow extended resource name standard", json_value=True)]
    return []


def _validate_either_utilization(t: MetricTarget, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if t.average_utilization is None and t.average_value is None:
        errs.append(required(path + ".target.averageUtilization", "must set either a target raw value or a target utilization"))
    if t.average_utilization is not None and t.average_value is not None:
        errs.append(forbidden(path + ".target.averageValue", "may not set both a target raw value and a target utilization"))
    return errs


def _validate_source(source: str, src: Any, path: str, opts: _Options) -> list[FieldError]:
    errs: list[FieldError] = []
    if source == "object":
        errs += validate_cross_version_object_reference(src.described_object, path + ".describedObject", opts.described_object)
        errs += _validate_metric_identifier(src.metric, path + ".metric")
        errs += _validate_metric_target(src.target, path + ".target")
        if src.target.value is None and src.target.average_value is None:
            errs.append(required(path + ".target.averageValue", "must set either a target value or averageValue"))
    elif source == "external":
        errs += _validate_metric_identifier(src.metric, path + ".metric")
        errs += _validate_metric_target(src.target, path + ".target")
        if src.target.value is None and src.target.average_value is None:
            errs.append(required(path + ".target.averageValue", "must set either a target value for metric or a per-pod target"))
        if src.target.value is not None and src.target.average_value is not None:
            errs.append(forbidden(path + ".target.value", "may not set both a target value for metric and a per-pod target"))
        if src.fallback is not None:
            errs += _validate_fallback(src.fallback, path + ".fallback")
    elif source == "pods":
        errs += _validate_metric_identifier(src.metric, path + ".metric")
        errs += _validate_metric_target(src.target, path + ".target")
        if src.target.average_value is None:
            errs.append(required(path + ".target.averageValue", "must specify a positive target averageValue"))
    elif source == "resource":
        if not src.name:
            errs.append(required(path + ".name", "must specify a resource name"))
        errs += _validate_metric_target(src.target, path + ".target")
        errs += _validate_either_utilization(src.target, path)
    else:  # containerResource
        if not src.name:
            errs.append(required(path + ".name", "must specify a resource name"))
        else:
            errs += validate_container_resource_name(src.name, path + ".name")
        if not src.container:
            errs.append(required(path + ".container", "must specify a container"))
        else:
            errs += [invalid(path + ".container", src.container, m) for m in is_dns1123_label(src.container)]
        errs += _validate_metric_target(src.target, path + ".target")
        errs += _validate_either_utilization(src.target, path)
    return errs


# (wire name, attribute) in the order upstream validates the first populated source.
_SOURCES = (
    ("object", "object"),
    ("external", "external"),
    ("pods", "pods"),
    ("resource", "resource"),
    ("containerResource", "container_resource"),
)
_EXPECTED = MappingProxyType({"Object": "object", "Pods": "pods", "Resource": "resource", "External": "external",
                               "ContainerResource": "containerResource"})


def _validate_metric_spec(m: MetricSpec, path: str, opts: _Options) -> list[FieldError]:
    errs: list[FieldError] = []
    if not m.type:
        errs.append(required(path + ".type", "must specify a metric source type"))
    if m.type not in _EXPECTED:
        errs.append(not_supported(path + ".type", m.type, METRIC_SOURCE_TYPES))
    present: list[str] = []
    for wire, attr in _SOURCES:
        src = getattr(m, attr)
        if src is not None:
            present.append(wire)
            if len(present) == 1:
                errs += _validate_source(wire, src, f"{path}.{wire}", opts)
    expected = _EXPECTED.get(m.type, "")
    if expected:
        if getattr(m, "container_resource" if expected == "containerResource" else expected) is None:
            errs.append(required(f"{path}.{expected}", "must populate information for the given metric source"))
    else:
        errs.append(not_supported(path + ".type", m.type, METRIC_SOURCE_TYPES))
    # Upstream lists the extra sources from a sorted string set, and only when more than one is
    # set: a lone source under another type is only the Required error above.
    for wire in sorted(present) if len(present) > 1 else ():
        if wire != expected:
            errs.append(forbidden(f"{path}.{wire}", "must populate the given metric source only"))
    return errs


def _validate_metrics(metrics: list[MetricSpec] | None, min_replicas: int | None, opts: _Options) -> list[FieldError]:
    errs: list[FieldError] = []
    has_object_or_external = False
    for i, m in enumerate(metrics or []):
        errs += _validate_metric_spec(m, f"spec.metrics[{i}]", opts)
        if m.type in ("Object", "External"):
            has_object_or_external = True
    if min_replicas == 0 and not has_object_or_external:
        errs.append(
            forbidden("spec.metrics", "must specify at least one Object or External metric to support scaling to zero replicas")
        )
    return errs


def validate_scaling_rules(rules: HPAScalingRules | None, path: str) -> list[FieldError]:
    """One direction's behavior rules (public: ``pyhpa tune`` checks its policy flags with them)."""
    if rules is None:
        return []
    errs: list[FieldError] = []
    w = rules.stabilization_window_seconds
    if w is not None and w < 0:
        errs.append(invalid(path + ".stabilizationWindowSeconds", w, "must be greater than or equal to zero"))
    if w is not None and w > MAX_STABILIZATION_WINDOW_SECONDS:
        errs.append(
            invalid(path + ".stabilizationWindowSeconds", w, f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}")
        )
    if rules.select_policy is not None and rules.select_policy not in SELECT_POLICIES:
        errs.append(not_supported(path + ".selectPolicy", rules.select_policy, SELECT_POLICIES))
    if not rules.policies:
        errs.append(required(path + ".policies", "must specify at least one Policy"))
    for j, p in enumerate(rules.policies or []):
        pp = f"{path}.policies[{j}]"
        if p.type not in POLICY_TYPES:
            errs.append(not_supported(pp + ".type", p.type, POLICY_TYPES))
        if p.value <= 0:
            errs.append(invalid(pp + ".value", p.value, "must be greater than zero"))
        if p.period_seconds <= 0:
            errs.append(invalid(pp + ".periodSeconds", p.period_seconds, "must be greater than zero"))
        if p.period_seconds > MAX_PERIOD_SECONDS:
            errs.append(invalid(pp + ".periodSeconds", p.period_seconds, f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
    if rules.tolerance is not None and rules.tolerance.sign() < 0:
        errs.append(invalid(path + ".tolerance", str(rules.tolerance), "must be greater than or equal to 0"))
    return errs


def _validate_spec(hpa: HorizontalPodAutoscaler, opts: _Options) -> tuple[list[FieldError], list[FieldError]]:
    """(hand-written errors, declarative errors appended after them)."""
    spec = hpa.spec
    errs: list[FieldError] = []
    declarative: list[FieldError] = []
    old = opts.old_spec
    lower = opts.min_replicas_lower_bound
    # Declarative rules (enforced from 1.37) report after the hand-written list; on update an
    # unchanged value is not re-checked by them (ratcheting), so the hand-written text stays.
    enforced = opts.rules.max_replicas == MAX_REPLICAS_DECLARATIVE
    if spec.min_replicas is not None and spec.min_replicas < lower:
        e = invalid("spec.minReplicas", spec.min_replicas, f"must be greater than or equal to {lower}")
        ratcheted = old is not None and old.min_replicas == spec.min_replicas
        (declarative if enforced and not ratcheted else errs).append(e)
    if spec.max_replicas < 1:
        errs += _max_replicas_errors(spec.max_replicas, old, opts.rules, declarative)
    if spec.min_replicas is not None and spec.max_replicas < spec.min_replicas:
        errs.append(invalid("spec.maxReplicas", spec.max_replicas, "must be greater than or equal to `minReplicas`"))
    errs += validate_cross_version_object_reference(spec.scale_target_ref, "spec.scaleTargetRef", opts.scale_target_ref)
    errs += _validate_metrics(spec.metrics, spec.min_replicas, opts)
    if spec.behavior is not None:
        errs += validate_scaling_rules(spec.behavior.scale_up, "spec.behavior.scaleUp")
        errs += validate_scaling_rules(spec.behavior.scale_down, "spec.behavior.scaleDown")
        errs += _validate_sync_period(spec.behavior.sync_period_seconds)
        if spec.behavior.fallback is not None:
            errs += _validate_hpa_fallback(spec.behavior.fallback)
    return errs, declarative


def _max_replicas_errors(value: int, old: Any, rules: ValidationRules, declarative: list[FieldError]) -> list[FieldError]:
    """The hand-written errors of ``maxReplicas < 1``; the enforced declarative one goes to
    ``declarative`` (validation.go's maxReplicas rule, by release)."""
    if rules.max_replicas == MAX_REPLICAS_GREATER_THAN_0:
        return [invalid("spec.maxReplicas", value, "must be greater than 0")]
    ratcheted = old is not None and old.max_replicas == value
    if rules.max_replicas == MAX_REPLICAS_DECLARATIVE and not ratcheted:
        declarative.append(required("spec.maxReplicas") if value == 0 else
                           invalid("spec.maxReplicas", value, "must be greater than or equal to 1"))
        return []
    if value == 0:
        return [required("spec.maxReplicas", "must be set and greater than 0")]
    return [invalid("spec.maxReplicas", value, "must be greater than or equal to 1")]


def _validate_fallback(fallback: Any, path: str) -> list[FieldError]:
    """KEP-5679: replicas > 0; failureDurationSeconds >= 180 (the KEP's Risks section and its
    follow-up PR; its field comment says > 0, its tests > 180)."""
    errs: list[FieldError] = []
    seconds = fallback.failure_duration_seconds
    if seconds is not None and seconds < MIN_FALLBACK_FAILURE_DURATION_SECONDS:
        errs.append(invalid(path + ".failureDurationSeconds", seconds,
                            f"must be greater than or equal to {MIN_FALLBACK_FAILURE_DURATION_SECONDS}"))
    if fallback.replicas <= 0:
        errs.append(invalid(path + ".replicas", fallback.replicas, "must be greater than 0"))
    if fallback.strategy is not None and fallback.strategy not in FALLBACK_STRATEGIES:
        errs.append(not_supported(path + ".strategy", fallback.strategy, FALLBACK_STRATEGIES))
    return errs


def _validate_hpa_fallback(fallback: Any) -> list[FieldError]:
    """KEP-5053: failureThreshold > 0 when set, replicas > 0."""
    path = "spec.behavior.fallback"
    errs: list[FieldError] = []
    if fallback.failure_threshold is not None and fallback.failure_threshold <= 0:
        errs.append(invalid(path + ".failureThreshold", fallback.failure_threshold, "must be greater than 0"))
    if fallback.replicas <= 0:
        errs.append(invalid(path + ".replicas", fallback.replicas, "must be greater than 0"))
    return errs


def _validate_sync_period(seconds: int | None) -> list[FieldError]:
    low, high = SYNC_PERIOD_SECONDS_RANGE
    if seconds is not None and seconds < low:
        return [invalid("spec.behavior.syncPeriodSeconds", seconds, f"must be greater than or equal to {low}")]
    if seconds is not None and seconds > high:
        return [invalid("spec.behavior.syncPeriodSeconds", seconds, f"must be less than or equal to {high}")]
    return []


def _options(hpa: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler | None, gates: FeatureGates,
             rules: ValidationRules) -> _Options:
    ref = hpa.spec.scale_target_ref
    lower = 0 if gates.scale_to_zero or (old is not None and old.spec.min_replicas == 0) else 1
    # Before 1.34 no apiVersion was checked; since, an update keeps an unchanged one.
    skip_ref = not rules.scale_target_api_version or (
        old is not None
        and (old.spec.scale_target_ref.api_version or "") == (ref.api_version or "")
        and old.spec.scale_target_ref.kind == ref.kind
    )
    skip_described = not rules.scale_target_api_version or (old is not None and any(
        m.object is not None and _api_version_fails(m.object.described_object, True) for m in old.spec.metrics or []
    ))
    return _Options(
        min_replicas_lower_bound=lower,
        scale_target_ref=_RefOptions(allow_empty_group=ref.kind == "ReplicationController", allow_invalid_api_version=skip_ref),
        described_object=_RefOptions(allow_empty_group=True, allow_invalid_api_version=skip_described),
        old_spec=old.spec if old is not None else None,
        rules=rules,
    )


def validate_hpa(
    hpa: HorizontalPodAutoscaler,
    *,
    old: HorizontalPodAutoscaler | None = None,
    gates: FeatureGates = FeatureGates(),
    rules: ValidationRules = ValidationRules(),
) -> list[FieldError]:
    """Every error of a create (``old is None``) or update, in upstream order, de-duplicated.

    Expects a defaulted hub (v2) object, as the API server validates after defaulting. ``rules``
    are the release's (:mod:`pyhpa.api.versions`); the default is the newest.
    """
    if old is None:
        errs = validate_object_meta(hpa.metadata)
    else:
        errs = validate_object_meta_update(hpa.metadata, old.metadata)
    hand, declarative = _validate_spec(hpa, _options(hpa, old, gates, rules))
    return dedupe(errs + hand + declarative)


def validate_hpa_status_update(new: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler) -> list[FieldError]:
    """Errors of a ``/status`` write: metadata update rules and non-negative counters."""
    errs = validate_object_meta_update(new.metadata, old.metadata)
    status = new.status
    for i, c in enumerate(status.conditions or []):
        if c.observed_generation is not None and c.observed_generation < 0:
            errs.append(
                invalid(f"status.conditions[{i}].observedGeneration", c.observed_generation, "must be greater than or equal to 0")
            )
    if status.current_replicas < 0:
        errs.append(invalid("status.currentReplicas", status.current_replicas, "must be greater than or equal to 0"))
    if status.desired_replicas < 0:
        errs.append(invalid("status.desiredReplicas", status.desired_replicas, "must be greater than or equal to 0"))
    return dedupe(errs)


def validate_scale(scale: Scale, *, old: Scale | None = None) -> list[FieldError]:
    """Errors of a Scale write: DNS-subdomain name, ``spec.replicas >= 0``."""
    errs = validate_object_meta(scale.metadata) if old is None else []
    if scale.spec.replicas < 0:
        errs.append(invalid("spec.replicas", scale.spec.replicas, "must be greater than or equal to 0"))
    return dedupe(errs)
