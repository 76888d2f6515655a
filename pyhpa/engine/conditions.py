"""HPA status conditions with upstream's setting semantics (upstream's horizontal.go setCondition).

A new type is appended (order = first-set order); ``lastTransitionTime`` moves only when the
status value changes; reason and message are always overwritten.
"""

from __future__ import annotations

from datetime import datetime

from pyhpa.api.types import HorizontalPodAutoscalerCondition

Conditions = list[HorizontalPodAutoscalerCondition]

# Messages spelled once.
MSG_UNABLE_GET_SCALE = "the HPA controller was unable to get the target's current scale: {}"
MSG_SUCCEEDED_GET_SCALE = "the HPA controller was able to get the target's current scale"
MSG_READY_FOR_NEW_SCALE = "recommended size matches current size"
MSG_SCALE_DOWN_STABILIZED = (
    "recent recommendations were higher than current one, applying the highest recent recommendation"
)
MSG_SCALE_UP_STABILIZED = (
    "recent recommendations were lower than current one, applying the lowest recent recommendation"
)
MSG_SUCCEEDED_RESCALE = "the HPA controller was able to update the target scale to {}"
MSG_FAILED_UPDATE_SCALE = "the HPA controller was unable to update the target scale: {}"
MSG_VALID_METRIC_FOUND = "the HPA was able to successfully calculate a replica count from {}"
# pyhpa's (KEP-5679 names no text): the count came from an External metric's fallback
MSG_FALLBACK_USED = "the HPA is using a fallback for its replica count: {}"
MSG_UNABLE_COMPUTE = "the HPA was unable to compute the replica count: {}"
MSG_SCALING_DISABLED = "scaling is disabled since the replica count of the target is zero"
MSG_SCALED_TO_ZERO = "the HPA controller scaled the workload to zero"
MSG_NOT_SCALED_TO_ZERO = "the HPA controller did not scale the workload to zero"


def set_condition(
    conditions: Conditions, type_: str, status: str, reason: str, message: str, now: datetime
) -> None:
    """Set (in place) the condition of ``type_``, appending it if new."""
    for c in conditions:
        if c.type == type_:
            if c.status != status:
                c.last_transition_time = now
            c.status = status
            c.reason = reason
            c.message = message
            return
    conditions.append(
        HorizontalPodAutoscalerCondition(
            type=type_, status=status, last_transition_time=now, reason=reason, message=message
        )
    )


def set_from(conditions: Conditions, cond: HorizontalPodAutoscalerCondition, now: datetime) -> None:
    """Set a condition built elsewhere (e.g. a metric's failure condition)."""
    set_condition(conditions, cond.type, cond.status, cond.reason or "", cond.message or "", now)


def remove_condition(conditions: Conditions, type_: str) -> None:
    conditions[:] = [c for c in conditions if c.type != type_]


def get_condition(conditions: Conditions | None, type_: str) -> HorizontalPodAutoscalerCondition | None:
    for c in conditions or ():
        if c.type == type_:
            return c
    return None


def copy_conditions(conditions: Conditions | None) -> Conditions:
    """A deep enough copy: the reconcile mutates conditions, never the caller's objects."""
    return [
        HorizontalPodAutoscalerCondition(
            type=c.type,
            status=c.status,
            last_transition_time=c.last_transition_time,
            reason=c.reason,
            message=c.message,
            observed_generation=c.observed_generation,
        )
        for c in conditions or ()
    ]
