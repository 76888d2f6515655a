"""The replica calculator (upstream's replica_calculator.go): from fetched samples to a replica proposal.

Pure functions over already-fetched data. Values are int milli-units; float arithmetic is done
in the same order as upstream so ``ceil`` lands on the same integer. Each function returns a
``Proposal`` that also carries what the trace needs (ratios, pod groups, why it held).
"""

from __future__ import annotations

import operator

import msgspec

from datetime import datetime
from typing import Callable, Sequence

from pyhpa.engine.gomath import (
    INT32_MAX,
    INT64_MAX,
    ceil_int32,
    fceil,
    fdiv,
    float_to_int64,
    idiv,
    wrap_int32,
)
from pyhpa.engine.inputs import PodMetric, PodMetricsInfo
from pyhpa.engine.pods import CalculationError, PodGroups, PodSet, group_pods, pod_requests


class Tolerances(msgspec.Struct, frozen=True):
    """Usage-ratio band inside which nothing changes: ``[1 - down, 1 + up]`` inclusive."""

    down: float = 0.1
    up: float = 0.1

    def within(self, ratio: float) -> bool:
        return (1.0 - self.down) <= ratio <= (1.0 + self.up)


class Proposal(msgspec.Struct):
    """A calculator's answer plus the facts behind it."""

    replicas: int
    usage: int = 0  # status value: utilization percent, average or total, per source
    raw: int = 0  # raw average (utilization sources only)
    ratio: float = 0.0
    new_ratio: float | None = None  # after rebalancing missing/unready pods
    ready: int | None = None
    unready: int = 0
    missing: int = 0
    ignored: int = 0
    held: str | None = None  # "tolerance" | "direction" | None: why current replicas were kept
    unadjusted: int | None = None  # the naive proposal, before tolerance and rebalancing
    notes: list[str] = []


_VALUE = operator.attrgetter("value")


def _utilization(metrics: PodMetricsInfo, requests: dict[str, int], target: int) -> tuple[float, int, int]:
    if metrics.keys() <= requests.keys():
        # Every sample has a request (the usual case): the same integer sums, taken in C.
        total = sum(map(_VALUE, metrics.values()))
        req_total = sum(map(requests.__getitem__, metrics))
        n = len(metrics)
    else:
        total = req_total = n = 0
        for name, m in metrics.items():
            req = requests.get(name)
            if req is None:
                continue
            total += m.value
            req_total += req
            n += 1
    if req_total == 0:
        raise CalculationError("no metrics returned matched known pods")
    util = wrap_int32(idiv(total * 100, req_total))
    return fdiv(float(util), float(target)), util, idiv(total, n)


def _naive(ratio: float, ready: int) -> int:
    x = ratio * float(ready)
    return INT32_MAX if x > INT32_MAX else ceil_int32(x)


def _usage(metrics: PodMetricsInfo, target: int) -> tuple[float, int]:
    total = 0
    for m in metrics.values():
        total += m.value
    usage = idiv(total, len(metrics))
    return fdiv(float(usage), float(target)), usage


def _rebalanced(
    ratio: float,
    new_ratio: float,
    size: int,
    current: int,
    tolerances: Tolerances,
    p: Proposal,
) -> Proposal:
    p.new_ratio = new_ratio
    if tolerances.within(new_ratio):
        p.replicas, p.held = current, "tolerance"
        return p
    if (ratio < 1.0 and new_ratio > 1.0) or (ratio > 1.0 and new_ratio < 1.0):
        p.replicas, p.held = current, "direction"
        return p
    n = ceil_int32(new_ratio * float(size))
    if (new_ratio < 1.0 and n > current) or (new_ratio > 1.0 and n < current):
        p.replicas, p.held = current, "direction"
        return p
    p.replicas = n
    return p


def _counted_metrics(
    pods: PodSet,
    fetched: PodMetricsInfo,
    resource: str,
    cpu_initialization_period: float,
    initial_readiness_delay: float,
    now: datetime,
) -> tuple[dict[str, PodMetric], PodGroups]:
    """The pods' grouping, and the fetched metrics of the pods that count (ignored and unready
    ones left out), as both pod-metric calculations begin."""
    if not pods:
        raise CalculationError("no pods returned by selector while calculating replica count")
    metrics = dict(fetched)
    g = group_pods(pods, metrics, resource, cpu_initialization_period, initial_readiness_delay, now)
    if g.ignored or g.unready:  # mostly neither: every pod counts
        for name in (*g.ignored, *g.unready):
            metrics.pop(name, None)
    if not metrics:
        raise CalculationError("did not receive metrics for targeted pods (pods might be unready)")
    return metrics, g


def _proposal_from_pods(
    p: Proposal,
    g: PodGroups,
    metrics: dict[str, PodMetric],
    ratio: float,
    current: int,
    tolerances: Tolerances,
    now: datetime,
    missing_low: Callable[[str], int],
    words: tuple[str, str],
    recompute: Callable[[dict[str, PodMetric]], float],
) -> Proposal:
    """The replica count from the usage ``ratio`` of the pods with metrics, or, when pods are
    missing metrics or unready while scaling up, from the ratio recomputed with them counted
    conservatively (upstream's rebalancing): missing ones at ``missing_low(name)`` below target
    (``words[0]`` says what), at zero above; unready ones at zero (``words[1]``: zero's unit)."""
    scale_up_with_unready = bool(g.unready) and ratio > 1.0
    if not scale_up_with_unready and not g.missing:
        if tolerances.within(ratio):
            p.held = "tolerance"
            return p
        p.replicas = ceil_int32(ratio * float(g.ready_count))
        return p
    low, zero = words
    if g.missing:
        if ratio < 1.0:
            for name in g.missing:
                metrics[name] = PodMetric(missing_low(name), now, 0.0)
            p.notes.append(f"{len(g.missing)} pods without metrics counted at {low}")
        elif ratio > 1.0:
            for name in g.missing:
                metrics[name] = PodMetric(0, now, 0.0)
            p.notes.append(f"{len(g.missing)} pods without metrics counted at {zero}")
    if scale_up_with_unready:
        for name in g.unready:
            metrics[name] = PodMetric(0, now, 0.0)
        p.notes.append(f"{len(g.unready)} unready pods counted at {zero}")
    return _rebalanced(ratio, recompute(metrics), len(metrics), current, tolerances, p)


def resource_utilization_replicas(
    current: int,
    target_utilization: int,
    resource: str,
    tolerances: Tolerances,
    fetched: PodMetricsInfo,
    pods: PodSet,
    container: str,
    cpu_initialization_period: float,
    initial_readiness_delay: float,
    now: datetime,
    pod_level_resources: bool = False,
) -> Proposal:
    """Resource / ContainerResource with an ``averageUtilization`` target (upstream's
    GetResourceReplicas)."""
    metrics, g = _counted_metrics(pods, fetched, resource, cpu_initialization_period,
                                  initial_readiness_delay, now)
    requests = pod_requests(pods, resource, container, pod_level_resources)
    ratio, util, raw = _utilization(metrics, requests, target_utilization)
    p = Proposal(
        current, util, raw, ratio, None, g.ready_count, len(g.unready), len(g.missing), len(g.ignored)
    )
    p.unadjusted = _naive(ratio, g.ready_count)
    fallback = max(100, target_utilization)
    return _proposal_from_pods(
        p, g, metrics, ratio, current, tolerances, now,
        lambda name: idiv(requests[name] * fallback, 100), (f"{fallback}% of request", "0%"),
        lambda counted: _utilization(counted, requests, target_utilization)[0])


def plain_metric_replicas(
    current: int,
    target: int,
    resource: str,
    tolerances: Tolerances,
    fetched: PodMetricsInfo,
    pods: PodSet,
    cpu_initialization_period: float,
    initial_readiness_delay: float,
    now: datetime,
) -> Proposal:
    """Pods metrics and Resource/ContainerResource ``averageValue`` targets (upstream's
    calcPlainMetricReplicas)."""
    metrics, g = _counted_metrics(pods, fetched, resource, cpu_initialization_period,
                                  initial_readiness_delay, now)
    ratio, usage = _usage(metrics, target)
    p = Proposal(current, usage, 0, ratio, None, g.ready_count, len(g.unready), len(g.missing), len(g.ignored))
    p.unadjusted = _naive(ratio, g.ready_count)
    return _proposal_from_pods(p, g, metrics, ratio, current, tolerances, now,
                               lambda name: target, ("the target", "0"),
                               lambda counted: _usage(counted, target)[0])


def _ready_pods_count(pods: PodSet) -> int:
    if not pods:
        raise CalculationError(
            "unable to calculate ready pods: no pods returned by selector while calculating replica count"
        )
    return pods.running_and_ready


def _usage_ratio_replicas(current: int, ratio: float, tolerances: Tolerances, pods: PodSet, p: Proposal) -> Proposal:
    """Object/External Value targets: ratio times ready pods; ``ceil(ratio)`` from zero."""
    if current != 0:
        if tolerances.within(ratio):
            p.replicas, p.held = current, "tolerance"
            if pods:  # only for the trace: upstream lists no pods here
                p.unadjusted = _naive(ratio, pods.running_and_ready)
            return p
        ready = _ready_pods_count(pods)
        p.ready = ready
        x = ratio * float(ready)
        p.replicas = INT32_MAX if x > INT32_MAX else ceil_int32(x)
        p.unadjusted = p.replicas
        return p
    p.replicas = ceil_int32(ratio)
    p.notes.append("target at zero replicas: proposal is ceil(ratio), no tolerance")
    return p


def object_value_replicas(
    current: int, usage: int, target: int, tolerances: Tolerances, pods: PodSet
) -> Proposal:
    """Object metric with a ``Value`` target (GetObjectMetricReplicas)."""
    ratio = fdiv(float(usage), float(target))
    return _usage_ratio_replicas(current, ratio, tolerances, pods, Proposal(current, usage, ratio=ratio))


def object_average_replicas(status_replicas: int, usage: int, target: int, tolerances: Tolerances) -> Proposal:
    """Object metric with an ``AverageValue`` target, over ``status.replicas`` (GetObjectPerPodMetricReplicas)."""
    ratio = fdiv(float(usage), float(target) * float(status_replicas))
    p = Proposal(status_replicas, usage, ratio=ratio)
    p.unadjusted = ceil_int32(fdiv(float(usage), float(target)))
    if not tolerances.within(ratio):
        p.replicas = p.unadjusted
    else:
        p.held = "tolerance"
    p.usage = _average(usage, status_replicas)
    return p


def _average(usage: int, status_replicas: int) -> int:
    # With zero status replicas upstream divides by zero; we report the usage itself.
    if status_replicas == 0:
        return usage
    return float_to_int64(fceil(float(usage) / float(status_replicas)))


def external_value_replicas(
    current: int, values: Sequence[int], target: int, tolerances: Tolerances, pods: PodSet
) -> Proposal:
    """External metric with a ``Value`` target: the sum of all series (GetExternalMetricReplicas)."""
    usage = 0
    for v in values:
        if v > 0 and usage > INT64_MAX - v:
            usage = INT64_MAX
            break
        usage += v
    ratio = fdiv(float(usage), float(target))
    return _usage_ratio_replicas(current, ratio, tolerances, pods, Proposal(current, usage, ratio=ratio))


def external_average_replicas(status_replicas: int, values: Sequence[int], target: int, tolerances: Tolerances) -> Proposal:
    """External metric with an ``AverageValue`` target, over ``status.replicas`` (GetExternalPerPodMetricReplicas)."""
    usage = 0
    for v in values:
        usage += v
        if usage > INT64_MAX or usage < 0:
            usage = INT64_MAX
            break
    ratio = fdiv(float(usage), float(target) * float(status_replicas))
    p = Proposal(status_replicas, usage, ratio=ratio)
    x = fceil(fdiv(float(usage), float(target)))
    p.unadjusted = INT32_MAX if x > float(INT32_MAX) else ceil_int32(x)
    if not tolerances.within(ratio):
        p.replicas = p.unadjusted
    else:
        p.held = "tolerance"
    if float(usage) >= float(INT64_MAX):
        p.usage = INT64_MAX
    else:
        p.usage = _average(usage, status_replicas)
    return p

