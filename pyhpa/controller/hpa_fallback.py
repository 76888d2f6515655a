"""Whole-HPA fallback (KEP-5053, gate HPAFallback): once the metrics have failed to give a
replica count in more than ``behavior.fallback.failureThreshold`` syncs in a row, ``replicas``
replaces the HPA's recommendation; stabilization, policies and min/max still apply after it.

A sync "fails" as in the KEP's sketch: the metrics give no count (upstream's
``computeReplicasForMetrics`` returns an error and -1), that is every metric failed, or some
failed and the valid ones would scale down. Any other computing sync resets the count; syncs
that never reach the metrics (a failed scale read, a target at zero, a count outside min/max,
a suspended HPA) leave it as it is.

Why the count is in status (``consecutiveMetricRetrievalFailureCount``, as the KEP has it): a
restarted controller, another replica of it, ``pyhpa reconcile`` and the simulator all continue
the same run. pyhpa keeps the count and the ``FallbackActive`` condition only on HPAs that define
a fallback, so every other HPA's status stays exactly upstream's (the KEP's
``NoFallbackDefined`` reason is therefore never written; a condition left from a removed
fallback is removed). With the gate off the field is ignored and the count reported as unset (0).
"""

from __future__ import annotations

from typing import NamedTuple

from pyhpa.api.defaults import DEFAULT_FALLBACK_FAILURE_THRESHOLD
from pyhpa.api.features import FeatureGates
from pyhpa.api.types import HorizontalPodAutoscaler, HPAFallback

CONDITION = "FallbackActive"
EVENT_REACHED = "FallbackThresholdReached"  # Warning, when the fallback takes over
REASON_REACHED = "FallbackThresholdReached"
REASON_NOT_REACHED = "FallbackThresholdNotReached"
REASON_SUCCEEDED = "SucceededToComputeDesiredReplicas"
MSG_NOT_REACHED = "Threshold is set to {} failures. Current failure count is {}"
MSG_SUCCEEDED = "the HPA controller was able to compute the desired replicas"


def hpa_fallback(hpa: HorizontalPodAutoscaler, gates: FeatureGates) -> HPAFallback | None:
    """The fallback that applies to ``hpa`` (None without one or with the gate off)."""
    behavior = hpa.spec.behavior
    if not gates.hpa_fallback or behavior is None:
        return None
    return behavior.fallback


def threshold_of(fallback: HPAFallback) -> int:
    return fallback.failure_threshold or DEFAULT_FALLBACK_FAILURE_THRESHOLD


class Verdict(NamedTuple):
    """The fallback's part of one computing sync."""

    failures: int  # the new consecutiveMetricRetrievalFailureCount
    replicas: int | None  # the fallback's recommendation, None when not in fallback
    condition: tuple[str, str, str]  # FallbackActive: (status, reason, message)
    event: str | None  # the FallbackThresholdReached message, on the sync that activates it
    rescale_reason: str  # the SuccessfulRescale reason while in fallback


def judge(fallback: HPAFallback, prior_count: int, was_active: bool, error: str | None) -> Verdict:
    """``error``: why the metrics gave no count this sync (None: they gave one)."""
    if error is None:
        return Verdict(0, None, ("False", REASON_SUCCEEDED, MSG_SUCCEEDED), None, "")
    count = prior_count + 1
    threshold = threshold_of(fallback)
    if count <= threshold:  # strictly greater activates: the default 3 fires on the 4th failure
        return Verdict(count, None, ("False", REASON_NOT_REACHED, MSG_NOT_REACHED.format(threshold, count)),
                       None, "")
    replicas = fallback.replicas
    event = None if was_active else (
        f"metrics failed in {count} syncs in a row (failureThreshold {threshold}): "
        f"using the fallback of {replicas} replicas: {error}")
    return Verdict(count, replicas, ("True", REASON_REACHED, error), event,
                   f"behavior.fallback of {replicas} replicas after {count} syncs without metrics")
