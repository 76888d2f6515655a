"""API defaulting of HorizontalPodAutoscalers, as the API server applies it on decode.

Why here and not in the controller: what a user reads back (``kubectl get -o yaml``) must show
the defaulted object, and validation runs on it. Both functions change the object in place
(keeping any unknown wire fields the codec parked on it) and return it for chaining.
"""

from __future__ import annotations

from pyhpa.api.types import (
    HorizontalPodAutoscaler,
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerV1,
    HPAScalingPolicy,
    HPAScalingRules,
    MetricSpec,
    MetricTarget,
    ResourceMetricSource,
)

DEFAULT_CPU_UTILIZATION = 80


DEFAULT_FALLBACK_FAILURE_DURATION_SECONDS = 180  # KEP-5679
DEFAULT_FALLBACK_STRATEGY = "Static"  # KEP-5679's follow-up (PR #6213)
DEFAULT_FALLBACK_FAILURE_THRESHOLD = 3  # KEP-5053's behavior.fallback


def default_cpu_metric() -> MetricSpec:
    """``{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}``."""
    return MetricSpec(
        type="Resource",
        resource=ResourceMetricSource(
            name="cpu", target=MetricTarget(type="Utilization", average_utilization=DEFAULT_CPU_UTILIZATION)
        ),
    )


def default_scale_up_rules() -> HPAScalingRules:
    """Scale-up defaults: no stabilization, the larger of +4 pods or +100% per 15 s."""
    return HPAScalingRules(
        stabilization_window_seconds=0,
        select_policy="Max",
        policies=[
            HPAScalingPolicy(type="Pods", value=4, period_seconds=15),
            HPAScalingPolicy(type="Percent", value=100, period_seconds=15),
        ],
    )


def default_scale_down_rules() -> HPAScalingRules:
    """Scale-down defaults: down by 100% per 15 s; the window is left to the controller flag."""
    return HPAScalingRules(
        select_policy="Max",
        policies=[HPAScalingPolicy(type="Percent", value=100, period_seconds=15)],
    )


def _complete(rules: HPAScalingRules | None, defaults: HPAScalingRules) -> HPAScalingRules:
    # Every field the user set wins as a whole (a policies list replaces the default list, even
    # when empty); unset ones take the default. Filling in place keeps unknown wire fields.
    if rules is None:
        return defaults
    if rules.stabilization_window_seconds is None:
        rules.stabilization_window_seconds = defaults.stabilization_window_seconds
    if rules.select_policy is None:
        rules.select_policy = defaults.select_policy
    if rules.policies is None:
        rules.policies = defaults.policies
    if rules.tolerance is None:
        rules.tolerance = defaults.tolerance
    return rules


def default_behavior(behavior: HorizontalPodAutoscalerBehavior) -> HorizontalPodAutoscalerBehavior:
    """Fill both directions of a non-null behavior (upstream SetDefaults_HorizontalPodAutoscalerBehavior)."""
    behavior.scale_up = _complete(behavior.scale_up, default_scale_up_rules())
    behavior.scale_down = _complete(behavior.scale_down, default_scale_down_rules())
    if behavior.fallback is not None and behavior.fallback.failure_threshold is None:
        behavior.fallback.failure_threshold = DEFAULT_FALLBACK_FAILURE_THRESHOLD
    return behavior


def default_hpa(hpa: HorizontalPodAutoscaler) -> HorizontalPodAutoscaler:
    """autoscaling/v2 defaulting: minReplicas 1, the 80% CPU metric, behavior completion."""
    spec = hpa.spec
    if spec.min_replicas is None:
        spec.min_replicas = 1
    if not spec.metrics:
        spec.metrics = [default_cpu_metric()]
    if spec.behavior is not None:
        default_behavior(spec.behavior)
    for m in spec.metrics:
        fallback = m.external.fallback if m.external is not None else None
        if fallback is not None and fallback.failure_duration_seconds is None:
            fallback.failure_duration_seconds = DEFAULT_FALLBACK_FAILURE_DURATION_SECONDS
        if fallback is not None and fallback.strategy is None:
            fallback.strategy = DEFAULT_FALLBACK_STRATEGY
    return hpa


def default_hpa_v1(hpa: HorizontalPodAutoscalerV1) -> HorizontalPodAutoscalerV1:
    """autoscaling/v1 defaulting: only minReplicas (the CPU target comes from conversion)."""
    if hpa.spec.min_replicas is None:
        hpa.spec.min_replicas = 1
    return hpa
