"""The decision trace: why the HPA chose its replica count, as data.

Shaped after upstream's proposed ``status.lastScaleDecision``: every metric's proposal, then
each step that changed the number (tolerance, rebalancing, stabilization, policy, min/max) with
before/after, then the final outcome. ``to_dict()`` is the machine form, ``explain()`` the
plain-words form users read.
"""

from __future__ import annotations

import msgspec

from datetime import datetime
from typing import Any, Callable

from pyhpa.api.timefmt import format_time


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
        self.kind = kind  # tolerance | rebalance | stabilization | policy | min | max | floor | range
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
