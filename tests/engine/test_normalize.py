"""Normalization: upstream's TestNormalizeDesiredReplicas, TestScalingWithRules,
TestStoreScaleEvents, TestNormalizeDesiredReplicasWithBehavior, TestConvertDesiredReplicasWithRules
and the scale-limit helpers, as tables."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pyhpa.api.defaults import default_behavior
from pyhpa.api.types import HorizontalPodAutoscalerBehavior, HPAScalingPolicy, HPAScalingRules
from pyhpa.engine.normalize import (
    Rules,
    convert_with_rules,
    effective_rules,
    normalize_behavior,
    normalize_legacy,
    scale_down_limit,
    scale_up_limit,
    store_scale_event,
)
from pyhpa.engine.state import Recommendation, ScaleEvent

from .helpers import NOW

MIN = timedelta(minutes=1)
SEC = timedelta(seconds=1)


def recs(*pairs):
    return [Recommendation(r, NOW + offset) for r, offset in pairs]


def rules(pods=0, pods_period=0, percent=0, percent_period=0, window=0, select="Max") -> HPAScalingRules:
    """Upstream's generateScalingRules."""
    policies = []
    if pods:
        policies.append(HPAScalingPolicy(type="Pods", value=pods, period_seconds=pods_period))
    if percent:
        policies.append(HPAScalingPolicy(type="Percent", value=percent, period_seconds=percent_period))
    return HPAScalingRules(stabilization_window_seconds=window, select_policy=select, policies=policies)


def uniform(changes, period):
    """Upstream's generateEventsUniformDistribution, relative to NOW."""
    seg = period / len(changes)
    return [
        ScaleEvent(c, NOW - timedelta(seconds=period - seg * (i + 1) + seg / 2), False) for i, c in enumerate(changes)
    ]


# --------------------------------------------------------------------------- legacy


@pytest.mark.parametrize(
    "history, proposal, expected, log_len",
    [
        ([], 5, 5, 1),
        ([(4, -2 * MIN), (5, -1 * MIN)], 3, 5, 3),
        ([(1, -2 * MIN), (2, -1 * MIN)], 3, 3, 3),
        ([(10, -10 * MIN), (9, -9 * MIN)], 3, 3, 2),
        ([(10, -10 * MIN), (4, -1 * MIN), (5, -2 * MIN), (9, -9 * MIN)], 3, 5, 4),
    ],
    ids=["empty log", "stabilize", "no stabilize", "no stabilize - old recommendations",
         "stabilize - old recommendations"],  # TestNormalizeDesiredReplicas
)
def test_legacy_stabilization(history, proposal, expected, log_len):
    n = normalize_legacy(recs(*history), 100, proposal, 1, 1000, 300.0, NOW)
    assert n.stabilized == expected
    assert len(n.recommendations) == log_len
    assert Recommendation(proposal, NOW) in n.recommendations


def test_legacy_overwrites_last_old_slot():
    n = normalize_legacy(recs((10, -10 * MIN), (4, -1 * MIN), (9, -9 * MIN)), 100, 3, 1, 1000, 300.0, NOW)
    assert [r.replicas for r in n.recommendations] == [10, 4, 3]
    assert n.recommendations[2].timestamp == NOW


@pytest.mark.parametrize(
    "current, desired, lo, hi, expected, reason",
    [
        (5, 7, 3, 8, 7, "DesiredWithinRange"),
        (3, 1, 2, 8, 2, "TooFewReplicas"),
        (1, 0, 0, 10, 0, "DesiredWithinRange"),
        (20, 1000, 1, 10, 10, "TooManyReplicas"),
        (3, 1000, 1, 2000, 6, "ScaleUpLimit"),  # production factor 2: max(2*3, 4)
        (1, 1000, 1, 2000, 4, "ScaleUpLimit"),
    ],
)
def test_convert_with_rules(current, desired, lo, hi, expected, reason):
    assert convert_with_rules(current, desired, lo, hi)[:2] == (expected, reason)


def test_legacy_conditions_worked_example():
    # upstream's TestStabilizeDownscale: current 4, CPU gives 2, history {10 @ -10min, 4 @ -1min}, window 5 min
    n = normalize_legacy(recs((10, -10 * MIN), (4, -1 * MIN)), 4, 2, 1, 10, 300.0, NOW)
    assert n.replicas == 4
    assert (n.able_reason, n.limited, n.limit_reason) == ("ScaleDownStabilized", False, "DesiredWithinRange")
    assert n.able_message == "recent recommendations were higher than current one, applying the highest recent recommendation"


# --------------------------------------------------------------------------- behavior rate limits

UP_DEFAULT = effective_rules(HorizontalPodAutoscalerBehavior(), 300)[0]


def eff(up: HPAScalingRules | None, down: HPAScalingRules | None) -> tuple[Rules, Rules]:
    return effective_rules(HorizontalPodAutoscalerBehavior(scale_up=up, scale_down=down), 300.0)


SCALING_WITH_RULES = [
    # name, up events, down events, min, max, up rules, down rules, current, desired, expected, reason
    ("prenormalized desired replicas within range", None, None, 3, 8, None, None, 5, 7, 7, "DesiredWithinRange"),
    ("prenormalized desired replicas < minReplicas", None, None, 2, 8, None, None, 3, 1, 2, "TooFewReplicas"),
    ("prenormalized desired replicas within range when minReplicas is 0", None, None, 0, 10, None, None, 1, 0, 0, "DesiredWithinRange"),
    ("maxReplicas is the limit because maxReplicas < scaleUpLimit", None, None, 1, 10, None, None, 20, 1000, 10, "TooManyReplicas"),
    ("desired replica count is more than the maximum replica count", None, None, 100, 150, None, None, 100, 1000, 150, "TooManyReplicas"),
    ("scaleUpLimit is the limit because scaleUpLimit < maxReplicas with user policies", None, None, 1, 2000, rules(0, 0, 1, 60), None, 3, 1000, 4, "ScaleUpLimit"),
    ("user pods down policy", None, None, 3, 2000, None, rules(20, 60), 1000, 3, 980, "ScaleDownLimit"),
    ("scaleUp with default behavior", None, None, 1, 1000, None, None, 10, 50, 20, "ScaleUpLimit"),
    ("scaleUp with pods policy larger than percent policy", None, None, 1, 1000, rules(100, 60, 100, 60), None, 10, 500, 110, "ScaleUpLimit"),
    ("scaleUp with percent policy larger than pods policy", None, None, 1, 1000, rules(2, 60, 100, 60), None, 10, 500, 20, "ScaleUpLimit"),
    ("scaleUp with spec MaxReplicas limitation with large pod policy", None, None, 1, 1000, rules(100, 60), None, 10, 50, 50, "DesiredWithinRange"),
    ("scaleUp with spec MaxReplicas limitation with large percent policy", None, None, 1, 1000, rules(10000, 60), None, 10, 50, 50, "DesiredWithinRange"),
    ("scaleUp with pod policy limitation", None, None, 1, 1000, rules(30, 60), None, 10, 50, 40, "ScaleUpLimit"),
    ("scaleUp with percent policy limitation", None, None, 1, 1000, rules(0, 0, 200, 60), None, 10, 50, 30, "ScaleUpLimit"),
    ("scaleDown with percent policy larger than pod policy", None, None, 1, 1000, None, rules(20, 60, 1, 60, 300), 100, 2, 80, "ScaleDownLimit"),
    ("scaleDown with pod policy larger than percent policy", None, None, 1, 1000, None, rules(2, 60, 1, 60, 300), 100, 2, 98, "ScaleDownLimit"),
    ("scaleDown with spec MinReplicas limitation with large pod policy", None, None, 1, 1000, None, rules(100, 60, 0, 0, 300), 10, 0, 1, "TooFewReplicas"),
    ("scaleDown with spec MinReplicas limitation with large percent policy", None, None, 5, 1000, None, rules(0, 0, 100, 60, 300), 10, 2, 5, "TooFewReplicas"),
    ("scaleDown with pod policy limitation", None, None, 1, 1000, None, rules(5, 60, 0, 0, 300), 10, 2, 5, "ScaleDownLimit"),
    ("scaleDown with percent policy limitation", None, None, 1, 1000, None, rules(0, 0, 50, 60, 300), 10, 5, 5, "DesiredWithinRange"),
    ("scaleUp with spec MaxReplicas limitation with large pod policy and events", uniform([1, 5, 9], 120), None, 1, 200, rules(300, 60), None, 100, 500, 200, "TooManyReplicas"),
    ("scaleUp with spec MaxReplicas limitation with large percent policy and events", uniform([1, 5, 9], 120), None, 1, 200, rules(0, 0, 10000, 60), None, 100, 500, 200, "TooManyReplicas"),
    ("scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent scale up events", uniform([1, 5, 9], 120), None, 1, 1000, rules(5, 120), None, 100, 500, 100, "ScaleUpLimit"),
    ("scaleUp with pod policy and previous scale up events", uniform([1, 5, 9], 120), None, 1, 1000, rules(150, 120), None, 100, 500, 235, "ScaleUpLimit"),
    ("scaleUp with percent policy and previous scale up events", uniform([1, 5, 9], 120), None, 1, 1000, rules(0, 0, 200, 120), None, 100, 500, 255, "ScaleUpLimit"),
    ("scaleUp with percent policy and previous scale up and down events", uniform([4], 120), uniform([2], 120), 1, 1000, rules(0, 0, 300, 300), None, 6, 24, 16, "ScaleUpLimit"),
    ("scaleDown with default policy and previous events", None, uniform([1, 5, 9], 120), 1, 1000, None, None, 10, 5, 5, "DesiredWithinRange"),
    ("scaleDown with spec MinReplicas=nil limitation with large pod policy and previous events", None, uniform([1, 5, 9], 120), 1, 1000, None, rules(115, 120, 0, 0, 300), 100, 0, 1, "TooFewReplicas"),
    ("scaleDown with spec MinReplicas limitation with large pod policy and previous events", None, uniform([1, 5, 9], 120), 5, 1000, None, rules(130, 120, 0, 0, 300), 100, 0, 5, "TooFewReplicas"),
    ("scaleDown with spec MinReplicas limitation with large percent policy and previous events", None, uniform([1, 5, 9], 120), 5, 1000, None, rules(0, 0, 100, 120, 300), 100, 2, 5, "TooFewReplicas"),
    ("scaleDown with pod policy limitation and previous events", None, uniform([1, 5, 9], 120), 1, 1000, None, rules(5, 120, 0, 0, 300), 100, 2, 100, "ScaleDownLimit"),
    ("scaleDown with percent policy limitation and previous events", None, uniform([2, 4, 6], 120), 1, 1000, None, rules(0, 0, 50, 120, 300), 100, 0, 56, "ScaleDownLimit"),
    ("scaleDown with percent policy and previous scale up and down events", uniform([2], 120), uniform([4], 120), 1, 1000, None, rules(0, 0, 50, 180), 10, 1, 6, "ScaleDownLimit"),
    ("scaleDown with previous events preventing further scale down", None, uniform([10, 10, 10], 120), 1, 1000, None, rules(0, 0, 10, 120, 300), 100, 0, 100, "ScaleDownLimit"),
    ("scaleDown with with previous events still allowing more scale down", None, uniform([10, 10, 10], 120), 1, 1000, None, rules(0, 0, 1000, 120, 300), 10, 5, 5, "DesiredWithinRange"),
    ("check 'outdated' flag for events for one behavior for up", uniform([8, 12, 9, 11], 120), None, 1, 1000, rules(1000, 60), None, 100, 200, 200, "DesiredWithinRange"),
    ("check that events were not marked 'outdated' for two different policies in the behavior for up", uniform([8, 12, 9, 11], 120), None, 1, 1000, rules(1000, 120, 100, 60), None, 100, 200, 200, "DesiredWithinRange"),
    ("check that events were marked 'outdated' for two different policies in the behavior for up", uniform([8, 12, 9, 11], 120), None, 1, 1000, rules(1000, 30, 100, 60), None, 100, 200, 200, "DesiredWithinRange"),
    ("check 'outdated' flag for events for one behavior for down", None, uniform([8, 12, 9, 11], 120), 1, 1000, None, rules(1000, 60, 0, 0, 300), 100, 5, 5, "DesiredWithinRange"),
    ("check that events were not marked 'outdated' for two different policies in the behavior for down", None, uniform([8, 12, 9, 11], 120), 1, 1000, None, rules(1000, 120, 100, 60, 300), 100, 5, 5, "DesiredWithinRange"),
    ("check that events were marked 'outdated' for two different policies in the behavior for down", None, uniform([8, 12, 9, 11], 120), 1, 1000, None, rules(1000, 30, 100, 60, 300), 100, 5, 5, "DesiredWithinRange"),
]


@pytest.mark.parametrize("case", SCALING_WITH_RULES, ids=[c[0] for c in SCALING_WITH_RULES])
def test_scaling_with_rules(case):
    _, ups, downs, lo, hi, up, down, current, desired, expected, reason = case
    up_rules, down_rules = eff(up, down)
    # windows 0 and a history holding only this proposal isolate the rate step
    up_rules = Rules(0, up_rules.select_policy, up_rules.policies)
    down_rules = Rules(0, down_rules.select_policy, down_rules.policies)
    n = normalize_behavior([], ups, downs, up_rules, down_rules, current, desired, lo, hi, NOW)
    assert n.stabilized == desired
    assert (n.replicas, n.limit_reason) == (expected, reason)
    assert n.limited == (expected != desired)


def test_limit_helpers_min_select_policy():
    """TestCalculateScaleUpLimitWithScalingRules and TestCalculateScaleDownLimitWithBehaviors
    (selectPolicy Min over Pods 2 / Percent 50 %), and a Disabled direction."""
    policies = (HPAScalingPolicy(type="Pods", value=2, period_seconds=60), HPAScalingPolicy(type="Percent", value=50, period_seconds=60))
    r = Rules(300, "Min", policies)
    assert scale_up_limit(1, [], [], r, NOW) == 2
    assert scale_down_limit(5, [], [], r, NOW) == 3
    disabled = Rules(0, "Disabled", policies)
    assert scale_up_limit(7, [], [], disabled, NOW) == 7
    assert scale_down_limit(7, [], [], disabled, NOW) == 7


def test_disabled_scale_down_holds_current():
    up, _ = eff(None, None)
    down = Rules(0, "Disabled", ())
    n = normalize_behavior([], None, None, up, down, 10, 2, 1, 20, NOW)
    assert (n.replicas, n.limit_reason, n.limited) == (10, "ScaleDownLimit", True)


# --------------------------------------------------------------------------- scale events

STORE_CASES = [
    # name, previous events (change, seconds ago), rules, expected stored (change, outdated), change in last 60s before
    ("empty entries with default behavior", [], None, [], 0),
    ("one outdated entry to be kept untouched without behavior", [(7, 61)], None, [(7, False)], 0),
    ("empty entries with two-policy-behavior", [], rules(10, 60, 100, 60), [(5, False)], 0),
    ("one outdated entry to be replaced with behavior", [(7, 61)], rules(10, 60, 100, 60), [(5, False)], 0),
    ("one actual entry to be not touched with behavior", [(7, 58)], rules(10, 60, 100, 60), [(7, False), (5, False)], 7),
    ("two entries, one of them to be replaced", [(7, 61), (6, 59)], rules(10, 60), [(5, False), (6, False)], 6),
    ("replace one entry, use policies with different periods", [(8, 29), (6, 59), (7, 61), (9, 61)], rules(10, 60, 100, 30), [(8, False), (6, False), (7, True), (5, False)], 14),
    ("two entries, both actual", [(7, 58), (6, 59)], rules(10, 120, 100, 30), [(7, False), (6, False), (5, False)], 13),
]


@pytest.mark.parametrize("case", STORE_CASES, ids=[c[0] for c in STORE_CASES])
def test_store_scale_events(case):
    from pyhpa.engine.normalize import _change_in_period

    _, prev, r, expected, change_before = case
    events = [ScaleEvent(c, NOW - timedelta(seconds=s), False) for c, s in prev]
    assert _change_in_period(60, events, NOW) == change_before
    if r is None:  # no behavior: upstream stores nothing and leaves the list alone
        assert [(e.replica_change, e.outdated) for e in events] == expected
        return
    up_rules, down_rules = eff(r, r)
    ups, downs = store_scale_event(events, None, up_rules, down_rules, 10, 15, NOW)
    assert [(e.replica_change, e.outdated) for e in ups] == expected
    assert downs is None
    ups, downs = store_scale_event(None, events, up_rules, down_rules, 10, 5, NOW)
    assert [(e.replica_change, e.outdated) for e in downs] == expected
    assert ups is None
    assert [(e.replica_change, e.outdated) for e in events] == [(c, False) for c, _ in prev]  # input untouched


# --------------------------------------------------------------------------- behavior stabilization

STABILIZE_CASES = [
    # name, history, current, proposal, up window, down window, expected, stored
    ("empty recommendations for scaling down", [], 100, 5, 0, 0, 5, [5]),
    ("simple scale down stabilization", [(4, -2 * MIN), (5, -1 * MIN)], 100, 3, 0, 180, 5, [4, 5, 3]),
    ("simple scale up stabilization", [(4, -2 * MIN), (5, -1 * MIN)], 1, 7, 300, 0, 4, [4, 5, 7]),
    ("no scale down stabilization", [(1, -2 * MIN), (2, -1 * MIN)], 100, 3, 300, 0, 3, [1, 2, 3]),
    ("no scale up stabilization", [(4, -2 * MIN), (5, -1 * MIN)], 1, 3, 0, 300, 3, [4, 5, 3]),
    ("no scale down stabilization, reuse recommendation element", [(10, -10 * MIN), (9, -9 * MIN)], 100, 3, 0, 0, 3, [10, 3]),
    ("no scale up stabilization, reuse recommendation element", [(10, -10 * MIN), (9, -9 * MIN)], 1, 100, 0, 0, 100, [10, 100]),
    ("scale down stabilization, reuse one of obsolete recommendation element", [(10, -10 * MIN), (4, -1 * MIN), (5, -2 * MIN), (9, -9 * MIN)], 100, 3, 0, 180, 5, [10, 4, 5, 3]),
    ("scale up stabilization, reuse one of obsolete recommendation element", [(10, -100 * MIN), (6, -1 * MIN), (5, -2 * MIN), (9, -3 * MIN)], 1, 100, 300, 0, 5, [100, 6, 5, 9]),
    ("scale up and down stabilization, do not scale up when prenormalized rec goes down", [(2, -100 * MIN), (3, -3 * MIN)], 2, 1, 300, 300, 2, None),
    ("scale up and down stabilization, do not scale down when prenormalized rec goes up", [(2, -100 * MIN), (1, -3 * MIN)], 2, 3, 300, 300, 2, None),
]


@pytest.mark.parametrize("case", STABILIZE_CASES, ids=[c[0] for c in STABILIZE_CASES])
def test_behavior_stabilization(case):
    _, history, current, proposal, up_w, down_w, expected, stored = case
    up = Rules(up_w, "Max", UP_DEFAULT.policies)
    down = Rules(down_w, "Max", UP_DEFAULT.policies)
    n = normalize_behavior(recs(*history), None, None, up, down, current, proposal, 0, 10**6, NOW)
    assert n.stabilized == expected
    if stored is not None:
        assert [r.replicas for r in n.recommendations] == stored


def test_behavior_stabilization_reasons():
    up = Rules(300, "Max", UP_DEFAULT.policies)
    down = Rules(300, "Max", UP_DEFAULT.policies)
    n = normalize_behavior(recs((4, -2 * MIN), (5, -1 * MIN)), None, None, up, down, 1, 7, 1, 10, NOW)
    assert (n.stabilized, n.able_reason) == (4, "ScaleUpStabilized")
    n = normalize_behavior(recs((4, -2 * MIN), (5, -1 * MIN)), None, None, up, down, 10, 3, 1, 10, NOW)
    assert (n.stabilized, n.able_reason) == (5, "ScaleDownStabilized")
    n = normalize_behavior([], None, None, up, down, 3, 3, 1, 10, NOW)
    assert (n.stabilized, n.able_reason, n.able_message) == (3, "ReadyForNewScale", "recommended size matches current size")


def test_effective_rules_defaults():
    up, down = effective_rules(HorizontalPodAutoscalerBehavior(), 300.0)
    assert (up.window, up.select_policy, [(p.type, p.value, p.period_seconds) for p in up.policies]) == (
        0, "Max", [("Pods", 4, 15), ("Percent", 100, 15)],
    )
    assert (down.window, down.select_policy, [(p.type, p.value, p.period_seconds) for p in down.policies]) == (
        300, "Max", [("Percent", 100, 15)],
    )
    _, down = effective_rules(HorizontalPodAutoscalerBehavior(scale_down=HPAScalingRules(select_policy="Min")), 120.7)
    assert (down.window, down.select_policy) == (120, "Min")


def test_effective_rules_agree_with_api_defaulting():
    """An API-defaulted behavior and a bare one give the engine the same rules (one set of defaults)."""
    assert effective_rules(default_behavior(HorizontalPodAutoscalerBehavior()), 300.0) == effective_rules(
        HorizontalPodAutoscalerBehavior(), 300.0
    )
