"""Suspending an HPA with an annotation (KEP-3428, proposed upstream, not merged).

Why an annotation: it works on every cluster as it is (no schema change), which is the shape the
KEP proposes. A suspended HPA reads its target's scale (so ``status.currentReplicas`` stays
true) but computes nothing and scales nothing; ``ScalingActive`` says why. Its memory
(recommendations, scale events) is left as it was, so on resume the stabilization windows and
policies still count what happened before the suspension.

The KEP names no feature gate (its kep.yaml has the gate commented out and its PRR says the
annotation alone turns the behaviour on), so there is none here either.
"""

from __future__ import annotations

from pyhpa.api.features import go_parse_bool
from pyhpa.api.types import HorizontalPodAutoscaler

SUSPEND_ANNOTATION = "autoscaling.kubernetes.io/suspend"
REASON_SUSPENDED = "Suspended"
# The KEP gives the reason only; the message is ours, in the style of upstream's ScalingDisabled.
MSG_SUSPENDED = f"scaling is suspended by the {SUSPEND_ANNOTATION} annotation"


def is_suspended(hpa: HorizontalPodAutoscaler) -> bool:
    """True when the annotation says true, in any spelling Go's ParseBool reads as true
    ("true", "True", "TRUE", "t", "T", "1"); anything else (absent, "false", junk) syncs."""
    value = (hpa.metadata.annotations or {}).get(SUSPEND_ANNOTATION)
    if value is None:
        return False
    try:
        return go_parse_bool(value.strip())
    except ValueError:
        return False
