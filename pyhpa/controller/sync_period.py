"""How often each HPA is reconciled: its own ``spec.behavior.syncPeriodSeconds`` (KEP-6003,
proposed upstream, gate HPAConfigurableSyncPeriod) or the controller's
``--horizontal-pod-autoscaler-sync-period``.

One place for the rule, because two schedulers apply it: the live work queue and the
simulator's clock. The reconcile itself does not depend on it: a shorter period only puts more
recommendations into the same stabilization windows (upstream's semantics: the lowest of the
window for scale-up, the highest for scale-down).
"""

from __future__ import annotations

from pyhpa.api.features import FeatureGates
from pyhpa.api.types import HorizontalPodAutoscaler
from pyhpa.api.validation import SYNC_PERIOD_SECONDS_RANGE
from pyhpa.engine.config import ControllerConfig


def own_sync_period(hpa: HorizontalPodAutoscaler, gates: FeatureGates) -> float | None:
    """The HPA's own period in seconds, or None when it has none (or the gate is off): then the
    controller's global period applies. So does a value outside 1..3600, which only an object no
    API server validated can hold (a ``pyhpa.io`` CRD object: reported as InvalidSpec); taken as
    is, 0 would reconcile it in a busy loop."""
    behavior = hpa.spec.behavior
    if not gates.configurable_sync_period or behavior is None or behavior.sync_period_seconds is None:
        return None
    low, high = SYNC_PERIOD_SECONDS_RANGE
    if not low <= behavior.sync_period_seconds <= high:
        return None
    return float(behavior.sync_period_seconds)


def sync_period_of(hpa: HorizontalPodAutoscaler, config: ControllerConfig) -> float:
    """Seconds between two reconciles of ``hpa``."""
    own = own_sync_period(hpa, config.gates)
    return config.sync_period if own is None else own
