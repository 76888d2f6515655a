"""External-metric fallback (KEP-5679, gate HPAExternalMetricFallback): once an External metric
with ``fallback`` has failed without a break for ``failureDurationSeconds``, it proposes exactly
``fallback.replicas``, which joins the other metrics through the usual maximum.

Why the state is in status (``firstFailureTime`` and ``fallbackStatus`` of the metric's entry in
``status.currentMetrics``): a restarted controller, another replica of it, ``pyhpa reconcile`` and
the simulator all see the same failure run, so the duration is counted once, from the first
failure. Before the duration runs out the metric fails as it always did (it blocks scale-down).
Times are kept to whole seconds, as the API server stores them, so every path counts alike.

``strategy`` (the KEP's open follow-up, PR #6213) says what the fallback proposes: ``Static``
(the default) exactly ``replicas``, ``UseMax`` / ``UseMin`` the larger / smaller of ``replicas``
and the current count (KEDA's currentReplicasIfHigher / currentReplicasIfLower).
"""

from __future__ import annotations

from datetime import datetime

from pyhpa.api.defaults import DEFAULT_FALLBACK_FAILURE_DURATION_SECONDS, DEFAULT_FALLBACK_STRATEGY
from pyhpa.api.features import FeatureGates
from pyhpa.api.timefmt import format_duration, format_time
from pyhpa.api.types import (
    ExternalMetricFallback,
    ExternalMetricStatus,
    HorizontalPodAutoscaler,
    MetricIdentifier,
    MetricSpec,
    MetricStatus,
    MetricValueStatus,
)
from pyhpa.engine.metrics import MetricResult
from pyhpa.engine.trace import MetricTrace

CONDITION = "ExternalMetricFallbackActive"
EVENT_ACTIVATED = "ExternalMetricFallbackActivated"
NORMAL, FALLBACK = "Normal", "Fallback"
# The KEP names the condition but not its reasons or messages: these are ours.
REASON_ACTIVE, REASON_INACTIVE = "FallbackActive", "NoFallbackActive"


def uses_fallback(hpa: HorizontalPodAutoscaler, gates: FeatureGates) -> bool:
    """Whether any External metric of ``hpa`` has a fallback that applies (the gate is on)."""
    if not gates.external_metric_fallback:
        return False
    for m in hpa.spec.metrics or ():  # a loop, not any(): no generator per sync
        if m.external is not None and m.external.fallback is not None:
            return True
    return False


class FallbackPass:
    """The fallback decisions of one reconcile pass; ``adjust`` is given to the engine's
    ``combine``, ``conclude`` reports on the HPA afterwards."""

    def __init__(self, hpa: HorizontalPodAutoscaler, now: datetime, current: int) -> None:
        self.now = now.replace(microsecond=0)
        self.current = current
        self.previous = [m.external for m in hpa.status.current_metrics or () if m.external is not None]
        self.active: list[str] = []  # metric names in fallback this pass
        self.activated: list[str] = []  # event messages: fallbacks that began this pass

    def _previous(self, metric: MetricIdentifier) -> ExternalMetricStatus | None:
        for status in self.previous:
            if status.metric.name == metric.name and status.metric.selector == metric.selector:
                return status
        return None

    def adjust(self, spec: MetricSpec, result: MetricResult) -> MetricResult:
        ext = spec.external
        if spec.type != "External" or ext is None or ext.fallback is None:
            return result
        if result.error is None:  # success: a failure run ends here
            if result.status.external is not None:
                result.status.external.fallback_status = NORMAL
                result.status.external.first_failure_time = None
            return result
        previous = self._previous(ext.metric)
        first = previous.first_failure_time if previous is not None and previous.first_failure_time else self.now
        duration = ext.fallback.failure_duration_seconds or DEFAULT_FALLBACK_FAILURE_DURATION_SECONDS
        failing_for = (self.now - first).total_seconds()
        in_fallback = failing_for >= duration
        result.status = MetricStatus(type="External", external=ExternalMetricStatus(
            metric=MetricIdentifier(name=ext.metric.name, selector=ext.metric.selector),
            current=MetricValueStatus(),  # nothing was read
            fallback_status=FALLBACK if in_fallback else NORMAL,
            first_failure_time=first,
        ))
        if not in_fallback:
            return result  # still counts as failed, as without a fallback
        replicas, how = self._proposal(ext.fallback)
        self.active.append(ext.metric.name)
        if previous is None or previous.fallback_status != FALLBACK:
            self.activated.append(
                f"external metric {ext.metric.name} has failed for {format_duration(duration)}: "
                f"using its fallback of {replicas} replicas{how}")
        name = result.trace.name if result.trace is not None else f"external metric {ext.metric.name}"
        trace = MetricTrace(type="External", name=name, replicas=replicas, notes=[
            f"failing for {format_duration(failing_for)} (since {format_time(first)}): "
            f"fallback of {replicas} replicas{how} (last error: {result.error})"])
        # what the rescale reason, ScalingActive and explain say (the failure duration, not the
        # time failing so far, so the condition does not change at every sync)
        used = f"external metric {ext.metric.name} has failed for {format_duration(duration)}: fallback {replicas} replicas{how}"
        return MetricResult(replicas, name, None, result.status, trace=trace, fallback=used)

    def _proposal(self, fallback: ExternalMetricFallback) -> tuple[int, str]:
        """(replicas proposed, how they were chosen when not Static) under ``strategy``."""
        strategy = fallback.strategy or DEFAULT_FALLBACK_STRATEGY
        if strategy == "UseMax":
            chosen = max(self.current, fallback.replicas)
        elif strategy == "UseMin":
            chosen = min(self.current, fallback.replicas)
        else:
            return fallback.replicas, ""
        return chosen, f" ({strategy} of current {self.current} and fallback.replicas {fallback.replicas})"

    def condition(self) -> tuple[str, str, str]:
        """(status, reason, message) of the ExternalMetricFallbackActive condition."""
        if self.active:
            return ("True", REASON_ACTIVE,
                    f"the HPA is using the fallback replicas of external metric(s): {', '.join(self.active)}")
        return "False", REASON_INACTIVE, "no external metric is in fallback"
