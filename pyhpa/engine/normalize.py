"""Normalization of a metric proposal: stabilization, rate limits, min/max (upstream
horizontal.go's ``normalizeDesiredReplicas`` and ``normalizeDesiredReplicasWithBehaviors``).

Two paths: *legacy* (no ``spec.behavior``: downscale window + the 2x/4 scale-up rule) and
*behavior* (both windows, Pods/Percent policies over past scale events, selectPolicy). Both
return the normalized count, the AbleToScale / ScalingLimited conditions to set, the updated
recommendation list and the trace steps; they never mutate their inputs.
"""

from __future__ import annotations

import msgspec

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Sequence

from pyhpa.api.defaults import default_scale_down_rules, default_scale_up_rules
from pyhpa.api.types import HorizontalPodAutoscalerBehavior, HPAScalingPolicy, HPAScalingRules
from pyhpa.engine.conditions import (
    MSG_READY_FOR_NEW_SCALE,
    MSG_SCALE_DOWN_STABILIZED,
    MSG_SCALE_UP_STABILIZED,
)
from pyhpa.engine.gomath import INT32_MAX, INT32_MIN, fceil, float_to_int32, wrap_int32
from pyhpa.engine.state import Recommendation, ScaleEvent
from pyhpa.engine.trace import Step

SCALE_UP_LIMIT_FACTOR = 2.0
SCALE_UP_LIMIT_MINIMUM = 4.0

MSG_SCALE_UP_LIMIT = "the desired replica count is increasing faster than the maximum scale rate"
MSG_TOO_MANY = "the desired replica count is more than the maximum replica count"
MSG_TOO_FEW = "the desired replica count is less than the minimum replica count"
MSG_SCALE_DOWN_LIMIT = "the desired replica count is decreasing faster than the maximum scale rate"
MSG_WITHIN_RANGE = "the desired count is within the acceptable range"


class Normalized(msgspec.Struct):
    """Outcome of one normalization pass."""

    replicas: int
    stabilized: int
    able_reason: str
    able_message: str
    limited: bool
    limit_reason: str
    limit_message: str
    recommendations: tuple[Recommendation, ...]
    steps: list[Step] = []


def _store(recs: Sequence[Recommendation], index: int | None, proposal: int, now: datetime) -> tuple[Recommendation, ...]:
    new = Recommendation(proposal, now)
    if index is None:
        return (*recs, new)
    out = list(recs)
    out[index] = new
    return tuple(out)


# --------------------------------------------------------------------------- legacy path


def scale_up_limit_legacy(current: int) -> int:
    return float_to_int32(max(SCALE_UP_LIMIT_FACTOR * float(current), SCALE_UP_LIMIT_MINIMUM))


def convert_with_rules(current: int, desired: int, min_replicas: int, max_replicas: int) -> tuple[int, str, str]:
    """Legacy clamp: min, max and the 2x/4 scale-up rule."""
    limit = scale_up_limit_legacy(current)
    if max_replicas > limit:
        upper, reason, message = limit, "ScaleUpLimit", MSG_SCALE_UP_LIMIT
    else:
        upper, reason, message = max_replicas, "TooManyReplicas", MSG_TOO_MANY
    if desired < min_replicas:
        return min_replicas, "TooFewReplicas", MSG_TOO_FEW
    if desired > upper:
        return upper, reason, message
    return desired, "DesiredWithinRange", MSG_WITHIN_RANGE


def normalize_legacy(
    recommendations: Sequence[Recommendation],
    current: int,
    proposal: int,
    min_replicas: int,
    max_replicas: int,
    window: float,
    now: datetime,
) -> Normalized:
    cutoff = now - timedelta(seconds=window)
    stabilized = proposal
    old: int | None = None
    for i, rec in enumerate(recommendations):
        if rec.timestamp < cutoff:
            old = i
        elif rec.replicas > stabilized:
            stabilized = rec.replicas
    recs = _store(recommendations, old, proposal, now)
    steps: list[Step] = []
    if stabilized != proposal:
        able_reason, able_msg = "ScaleDownStabilized", MSG_SCALE_DOWN_STABILIZED
        steps.append(Step("stabilization", proposal, stabilized,
                          lambda: f"scale-down stabilized by window {_secs(window)}: held at {stabilized}"))
    else:
        able_reason, able_msg = "ReadyForNewScale", MSG_READY_FOR_NEW_SCALE
    result, reason, message = convert_with_rules(current, stabilized, min_replicas, max_replicas)
    if result != stabilized:
        steps.append(Step(_limit_kind(reason), stabilized, result, lambda: _limit_detail(reason, result)))
    return Normalized(result, stabilized, able_reason, able_msg, result != stabilized, reason, message, recs, steps)


# --------------------------------------------------------------------------- behavior path


@dataclass(frozen=True, slots=True)
class Rules:
    """One direction's effective scaling rules after API defaulting."""

    window: int
    select_policy: str
    policies: tuple[HPAScalingPolicy, ...]


def effective_rules(
    behavior: HorizontalPodAutoscalerBehavior, downscale_stabilization: float
) -> tuple[Rules, Rules]:
    """Scale-up and scale-down rules with the API's defaults filled in (pyhpa.api.defaults).

    An unset scale-down window takes the controller's ``--horizontal-pod-autoscaler-downscale-
    stabilization``: upstream defaulting leaves it nil for the controller to fill. Runs at every
    sync of an HPA with a behavior: the defaults are read from constants, not rebuilt.
    """
    down_window = wrap_int32(int(downscale_stabilization))
    up = _DEFAULT_UP if behavior.scale_up is None else _effective(behavior.scale_up, _DEFAULT_UP)
    down = behavior.scale_down
    if down is None:
        return up, Rules(down_window, _DEFAULT_DOWN.select_policy, _DEFAULT_DOWN.policies)
    return up, _effective(down, Rules(down_window, _DEFAULT_DOWN.select_policy, _DEFAULT_DOWN.policies))


def _effective(rules: HPAScalingRules, defaults: Rules) -> Rules:
    window = rules.stabilization_window_seconds
    policies = rules.policies
    return Rules(
        window if window is not None else defaults.window,
        rules.select_policy or defaults.select_policy,
        tuple(policies) if policies is not None else defaults.policies,
    )


def _defaults(rules: HPAScalingRules) -> Rules:
    return Rules(rules.stabilization_window_seconds or 0, rules.select_policy or "Max", tuple(rules.policies or ()))


# The API's defaults as rules (constants: Rules and its policy tuple are only read). The
# scale-down window is the controller flag's, filled in per call.
_DEFAULT_UP = _defaults(default_scale_up_rules())
_DEFAULT_DOWN = _defaults(default_scale_down_rules())


def _change_in_period(period_seconds: int, events: Sequence[ScaleEvent] | None, now: datetime) -> int:
    cutoff = now - timedelta(seconds=period_seconds)
    total = 0
    for e in events or ():
        if e.timestamp > cutoff:
            total += e.replica_change
    return wrap_int32(total)


def _period_start(current: int, policy: HPAScalingPolicy, up_events: Sequence[ScaleEvent] | None,
                  down_events: Sequence[ScaleEvent] | None, now: datetime) -> int:
    """The replica count at the start of the policy's period: current minus the scale events since."""
    added = _change_in_period(policy.period_seconds, up_events, now)
    deleted = _change_in_period(policy.period_seconds, down_events, now)
    return wrap_int32(current - added + deleted)


def scale_up_limit(
    current: int,
    up_events: Sequence[ScaleEvent] | None,
    down_events: Sequence[ScaleEvent] | None,
    rules: Rules,
    now: datetime,
) -> int:
    """The most replicas the scale-up policies allow (upstream's calculateScaleUpLimitWithScalingRules)."""
    if rules.select_policy == "Disabled":
        return current
    proposals, proposed = [], 0  # an unknown policy type repeats the last proposal, as upstream's loop
    for policy in rules.policies:
        start = _period_start(current, policy, up_events, down_events, now)
        if policy.type == "Pods":
            proposed = wrap_int32(start + policy.value)
        elif policy.type == "Percent":
            proposed = float_to_int32(fceil(float(start) * (1 + float(policy.value) / 100)))
        proposals.append(proposed)
    if rules.select_policy == "Min":
        return min(proposals, default=INT32_MAX)
    return max(proposals, default=INT32_MIN)


def scale_down_limit(
    current: int,
    up_events: Sequence[ScaleEvent] | None,
    down_events: Sequence[ScaleEvent] | None,
    rules: Rules,
    now: datetime,
) -> int:
    """The fewest replicas the scale-down policies allow (upstream's
    calculateScaleDownLimitWithBehaviors); selectPolicy Min picks the smallest change."""
    if rules.select_policy == "Disabled":
        return current
    proposals, proposed = [], 0
    for policy in rules.policies:
        start = _period_start(current, policy, up_events, down_events, now)
        if policy.type == "Pods":
            proposed = wrap_int32(start - policy.value)
        elif policy.type == "Percent":
            proposed = float_to_int32(float(start) * (1 - float(policy.value) / 100))
        proposals.append(proposed)
    if rules.select_policy == "Min":
        return max(proposals, default=INT32_MIN)
    return min(proposals, default=INT32_MAX)


def normalize_behavior(
    recommendations: Sequence[Recommendation],
    up_events: Sequence[ScaleEvent] | None,
    down_events: Sequence[ScaleEvent] | None,
    up: Rules,
    down: Rules,
    current: int,
    proposal: int,
    min_replicas: int,
    max_replicas: int,
    now: datetime,
) -> Normalized:
    up_cutoff = now - timedelta(seconds=up.window)
    down_cutoff = now - timedelta(seconds=down.window)
    up_rec = down_rec = proposal
    old: int | None = None
    for i, rec in enumerate(recommendations):
        ts = rec.timestamp
        if ts > up_cutoff and rec.replicas < up_rec:
            up_rec = rec.replicas
        if ts > down_cutoff and rec.replicas > down_rec:
            down_rec = rec.replicas
        if ts < up_cutoff and ts < down_cutoff:
            old = i
    stabilized = current
    if stabilized < up_rec:
        stabilized = up_rec
    if stabilized > down_rec:
        stabilized = down_rec
    recs = _store(recommendations, old, proposal, now)
    steps: list[Step] = []
    if stabilized != proposal:
        if proposal >= current:
            able_reason, able_msg = "ScaleUpStabilized", MSG_SCALE_UP_STABILIZED
            steps.append(Step("stabilization", proposal, stabilized,
                              lambda: f"scale-up stabilized by window {_secs(up.window)}: held at {stabilized}"))
        else:
            able_reason, able_msg = "ScaleDownStabilized", MSG_SCALE_DOWN_STABILIZED
            steps.append(Step("stabilization", proposal, stabilized,
                              lambda: f"scale-down stabilized by window {_secs(down.window)}: held at {stabilized}"))
    else:
        able_reason, able_msg = "ReadyForNewScale", MSG_READY_FOR_NEW_SCALE

    result, reason, message = stabilized, "DesiredWithinRange", MSG_WITHIN_RANGE
    if stabilized > current:
        limit = scale_up_limit(current, up_events, down_events, up, now)
        if limit < current:
            limit = current
        if max_replicas > limit:
            upper, r, m = limit, "ScaleUpLimit", MSG_SCALE_UP_LIMIT
        else:
            upper, r, m = max_replicas, "TooManyReplicas", MSG_TOO_MANY
        if stabilized > upper:
            result, reason, message = upper, r, m
    elif stabilized < current:
        limit = scale_down_limit(current, up_events, down_events, down, now)
        if limit > current:
            limit = current
        if min_replicas < limit:
            lower, r, m = limit, "ScaleDownLimit", MSG_SCALE_DOWN_LIMIT
        else:
            lower, r, m = min_replicas, "TooFewReplicas", MSG_TOO_FEW
        if stabilized < lower:
            result, reason, message = lower, r, m
    if result != stabilized:
        steps.append(Step(_limit_kind(reason), stabilized, result, lambda: _limit_detail(reason, result)))
    return Normalized(result, stabilized, able_reason, able_msg, result != stabilized, reason, message, recs, steps)


# --------------------------------------------------------------------------- scale events


def store_scale_event(
    up_events: Sequence[ScaleEvent] | None,
    down_events: Sequence[ScaleEvent] | None,
    up: Rules,
    down: Rules,
    prev: int,
    new: int,
    now: datetime,
) -> tuple[tuple[ScaleEvent, ...] | None, tuple[ScaleEvent, ...] | None]:
    """Record a successful rescale (behavior only): flag old events, reuse the last flagged slot."""
    if new > prev:
        return _store_event(up_events, up, new - prev, now), _tuple_or_none(down_events)
    return _tuple_or_none(up_events), _store_event(down_events, down, prev - new, now)


def _tuple_or_none(events: Sequence[ScaleEvent] | None) -> tuple[ScaleEvent, ...] | None:
    return None if events is None else tuple(events)


def _store_event(events: Sequence[ScaleEvent] | None, rules: Rules, change: int, now: datetime) -> tuple[ScaleEvent, ...]:
    longest = 0
    for p in rules.policies:
        if p.period_seconds > longest:
            longest = p.period_seconds
    cutoff = now - timedelta(seconds=longest)
    out: list[ScaleEvent] = []
    last_old: int | None = None
    for i, e in enumerate(events or ()):
        if e.timestamp < cutoff and not e.outdated:
            e = ScaleEvent(e.replica_change, e.timestamp, True)
        if e.outdated:
            last_old = i
        out.append(e)
    new = ScaleEvent(change, now, False)
    if last_old is None:
        out.append(new)
    else:
        out[last_old] = new
    return tuple(out)


# --------------------------------------------------------------------------- trace wording


def _secs(seconds: float) -> str:
    s = float(seconds)
    return f"{int(s)}s" if s == int(s) else f"{s}s"


def _limit_kind(reason: str) -> str:
    return {
        "ScaleUpLimit": "policy",
        "ScaleDownLimit": "policy",
        "TooManyReplicas": "max",
        "TooFewReplicas": "min",
    }.get(reason, "limit")


def _limit_detail(reason: str, result: int) -> str:
    return {
        "ScaleUpLimit": f"scale-up rate limited to {result}",
        "ScaleDownLimit": f"scale-down rate limited to {result}",
        "TooManyReplicas": f"capped at maxReplicas {result}",
        "TooFewReplicas": f"raised to minReplicas {result}",
    }.get(reason, f"limited to {result}")

