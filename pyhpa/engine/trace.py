"""The decision trace: why the HPA chose its replica count, as data.

Shaped after upstream's proposed ``status.lastScaleDecision``: every metric's proposal, then
each step that changed the number (tolerance, rebalancing, stabilization, policy, min/max) with
before/after, then the final outcome. ``to_dict()`` is the machine form, ``explain()`` the
plain-words form users read.
"""

from __future__ import annotations

import msgspec

from datetime import datetime
from types import MappingProxyType
from typing import Any, Callable

from pyhpa.api.timefmt import format_time
from pyhpa.api.types import HorizontalPodAutoscalerScaleDecision


def _time(t: datetime | None) -> str | None:
    if t is None:
        return None
    return format_time(t)


class Step:
    """One thing that changed (or held) the replica count.

    ``detail`` may be given as a function that renders it: most passes hold by tolerance, and
    few traces are ever read, so the text is formatted on first read only.
    """

    __slots__ = ("kind", "before", "after", "_detail")

    def __init__(self, kind: str, before: int, after: int, detail: str | Callable[[], str]) -> None:
        self.kind = kind  # tolerance | rebalance | stabilization | policy | min | max | floor | range | fallback
        self.before = before
        self.after = after
        self._detail = detail

    @property
    def detail(self) -> str:
        d = self._detail
        if not isinstance(d, str):
            d = self._detail = d()
        return d

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Step):
            return NotImplemented
        return (self.kind, self.before, self.after, self.detail) == (other.kind, other.before, other.after, other.detail)

    def __repr__(self) -> str:
        return f"Step(kind={self.kind!r}, before={self.before!r}, after={self.after!r}, detail={self.detail!r})"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "before": self.before, "after": self.after, "detail": self.detail}


class MetricTrace(msgspec.Struct):
    """One metric source's proposal, or why it had none."""

    type: str
    name: str  # upstream's metric name for messages, e.g. "cpu resource utilization (percentage of request)"
    current: str | None = None  # rendered current value, e.g. "90%" or "500m"
    target: str | None = None
    replicas: int | None = None
    ratio: float | None = None
    timestamp: datetime | None = None
    used: bool = False
    invalid: bool = False
    error: str | None = None
    held: str | None = None  # "tolerance" | "direction"
    notes: list[str] = []
    unadjusted: int | None = None  # the naive proposal before tolerance / rebalancing

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type, "name": self.name}
        for key, value in (
            ("current", self.current),
            ("target", self.target),
            ("replicas", self.replicas),
            ("ratio", None if self.ratio is None or self.ratio != self.ratio else round(self.ratio, 6)),
            ("timestamp", _time(self.timestamp)),
        ):
            if value is not None:
                d[key] = value
        d["used"] = self.used
        d["invalid"] = self.invalid
        if self.error is not None:
            d["error"] = self.error
        if self.held is not None:
            d["heldBy"] = self.held
        if self.unadjusted is not None and self.unadjusted != self.replicas:
            d["unadjustedReplicas"] = self.unadjusted
        if self.notes:
            d["notes"] = list(self.notes)
        return d

    def explain(self) -> str:
        if self.invalid:
            return f"{self.name or self.type}: invalid: {self.error}"
        text = self.name
        if self.current is not None and self.target is not None:
            text += f": {self.current} vs target {self.target}"
        text += f" → {self.replicas} replicas"
        if self.held == "tolerance":
            text += " (within tolerance: no change)"
        elif self.held == "direction":
            text += " (rebalancing would reverse the direction: no change)"
        for note in self.notes:
            text += f"; {note}"
        if self.used:
            text += " [used]"
        return text


class DecisionTrace(msgspec.Struct):
    """The whole decision of one reconcile pass."""

    time: datetime
    current_replicas: int | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None
    # metrics | disabled | suspended | above-max | below-min | failed-get-scale | failed-metrics
    # | fallback (KEP-5053: the metrics failed, behavior.fallback's replicas were used)
    branch: str = "metrics"
    metrics: list[MetricTrace] = []
    proposal: int | None = None
    steps: list[Step] = []
    desired_replicas: int | None = None
    reason: str = ""
    rescaled: bool = False
    error: str | None = None

    def step(self, kind: str, before: int, after: int, detail: str | Callable[[], str]) -> None:
        self.steps.append(Step(kind, before, after, detail))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"time": _time(self.time), "branch": self.branch}
        if self.current_replicas is not None:
            d["currentReplicas"] = self.current_replicas
        if self.min_replicas is not None:
            d["minReplicas"] = self.min_replicas
        if self.max_replicas is not None:
            d["maxReplicas"] = self.max_replicas
        d["metrics"] = [m.to_dict() for m in self.metrics]
        if self.proposal is not None:
            d["proposal"] = self.proposal
        d["steps"] = [s.to_dict() for s in self.steps]
        if self.desired_replicas is not None:
            d["desiredReplicas"] = self.desired_replicas
        d["reason"] = self.reason
        d["rescaled"] = self.rescaled
        if self.error is not None:
            d["error"] = self.error
        return d

    def explain(self) -> list[str]:
        lines: list[str] = []
        if self.branch == "failed-get-scale":
            return [f"could not read the target's scale: {self.error}"]
        if self.current_replicas is not None:
            lines.append(
                f"current replicas {self.current_replicas} (min {self.min_replicas}, max {self.max_replicas})"
            )
        if self.branch == "disabled":
            lines.append("scaling is disabled: the target's replica count is zero")
        if self.branch == "suspended":
            lines.append("scaling is suspended by the autoscaling.kubernetes.io/suspend annotation")
        # above-max / below-min: their one step (below) says it, with the numbers
        for m in self.metrics:
            lines.append(m.explain())
        if self.proposal is not None and self.metrics:
            lines.append(f"largest proposal: {self.proposal}")
        for s in self.steps:
            lines.append(s.detail)
        if self.branch == "failed-metrics":
            lines.append(f"no decision: {self.error}")
        elif self.desired_replicas is not None:
            if self.rescaled:
                lines.append(f"scaled to {self.desired_replicas}: {self.reason}")
            else:
                lines.append(f"no change: stays at {self.desired_replicas}")
        if self.error and self.branch != "failed-metrics":
            lines.append(f"error: {self.error}")
        return lines


# KEP-6107 (revision 20752d3 of kubernetes/enhancements PR #6111): the trace in `status.lastScaleDecision`'s shape.
_STEP_REASON = MappingProxyType({"tolerance": "WithinTolerance", "stabilization": "Stabilized", "policy": "PolicyLimited",
                "min": "ReplicaLimit", "max": "ReplicaLimit", "floor": "ReplicaLimit", "limit": "ReplicaLimit",
                "rebalance": "MetricRecommendation"})
_STEP_CONSTRAINT = MappingProxyType({"tolerance": "Tolerance", "stabilization": "Stabilization", "policy": "ScalingPolicy",
                    "min": "MinReplicas", "floor": "MinReplicas", "max": "MaxReplicas"})
_FETCH_FAILED = ("unable to fetch", "no metrics returned", "unable to get metric", "unable to get metrics")


def _metric_reason(m: MetricTrace, guarded: bool) -> str:
    if not (m.invalid or m.error):
        return "SkippedScaleDown" if guarded else "Computed"
    text = m.error or ""
    if "did not receive metrics for targeted pods" in text or "no pods" in text:
        return "NoMatchingPods"
    if any(s in text for s in _FETCH_FAILED):
        return "FetchFailed"
    return "InvalidMetricValue"


def kep6107_decision(trace: DecisionTrace, observed_generation: int | None = None) -> dict[str, Any]:
    """The decision as KEP-6107's ``HorizontalPodAutoscalerScaleDecision``.

    Which reason wins when several apply is left open by the KEP; here it is the last step that
    changed the count (the one that had the final word), else the metrics' recommendation.
    ``metricIndex`` is the position in ``spec.metrics`` (one trace entry per source). Branches
    the KEP's vocabulary has no word for (scaling disabled: a target at zero replicas without
    HPAScaleToZero) report ``RecommendationFailed``: no metric produced the count."""
    current = trace.current_replicas
    desired = trace.desired_replicas if trace.desired_replicas is not None else current
    constraints: set[str] = set()
    invalid = any(m.invalid or m.error for m in trace.metrics)
    valid = [m for m in trace.metrics if not (m.invalid or m.error)]
    # Invalid metrics block a scale-down some valid metric proposed (upstream returns an error).
    guarded = (trace.branch == "failed-metrics" and invalid and bool(valid) and current is not None
               and all(m.replicas is not None and m.replicas < current for m in valid))
    if guarded:
        constraints.add("InvalidMetricGuard")
    recommended = trace.proposal if trace.branch == "metrics" and trace.proposal is not None else None
    if trace.branch in ("above-max", "below-min"):
        reason = "ReplicaLimit"
        constraints.add("MaxReplicas" if trace.branch == "above-max" else "MinReplicas")
    elif trace.branch == "failed-metrics":
        reason = "InvalidMetrics" if invalid else "RecommendationFailed"
    elif trace.branch != "metrics" or recommended is None:
        reason = "RecommendationFailed"
    else:
        reason = "MetricRecommendation"
        for s in trace.steps:
            if s.before != s.after or s.kind == "tolerance":
                if s.kind in _STEP_CONSTRAINT:
                    constraints.add(_STEP_CONSTRAINT[s.kind])
                reason = _STEP_REASON.get(s.kind, reason)
    out: dict[str, Any] = {"time": _time(trace.time)}
    if observed_generation is not None:
        out["observedGeneration"] = observed_generation
    out["currentReplicas"] = current
    if recommended is not None:
        out["recommendedReplicas"] = recommended
    out["desiredReplicas"] = desired
    out["reason"] = reason
    metrics = []
    for i, m in enumerate(trace.metrics):
        entry: dict[str, Any] = {"metricIndex": i}
        if m.replicas is not None and not (m.invalid or m.error):
            entry["proposedReplicas"] = m.replicas
        entry["status"] = "Used" if m.used else "Invalid" if (m.invalid or m.error) else "Valid"
        entry["reason"] = _metric_reason(m, guarded)
        metrics.append(entry)
    out["metrics"] = metrics
    out["constraints"] = sorted(constraints)
    return out


def scale_decision(trace: DecisionTrace, observed_generation: int | None = None) -> HorizontalPodAutoscalerScaleDecision:
    """``kep6107_decision`` as the typed status field (one shape, built in one place)."""
    return msgspec.convert(kep6107_decision(trace, observed_generation), HorizontalPodAutoscalerScaleDecision)
