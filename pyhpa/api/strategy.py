"""The HPA's registry strategy (upstream's ``horizontalpodautoscaler/strategy.go``): what a
create, an update and a ``/status`` write keep, and the fields a disabled feature gate drops.

Why in the API model: the embedded API server and ``pyhpa reconcile`` (which re-applies the
gates to objects it reads) must agree on these rules.
"""

from __future__ import annotations

from pyhpa.api.features import FeatureGates
from pyhpa.api.types import HorizontalPodAutoscaler, HorizontalPodAutoscalerStatus

__all__ = ["drop_disabled_fields", "prepare_for_create", "prepare_for_update", "prepare_for_status_update"]



def _tolerance_in_use(hpa: HorizontalPodAutoscaler | None) -> bool:
    if hpa is None or hpa.spec.behavior is None:
        return False
    b = hpa.spec.behavior
    return any(r is not None and r.tolerance is not None for r in (b.scale_up, b.scale_down))


def _fallback_in_use(hpa: HorizontalPodAutoscaler | None) -> bool:
    return hpa is not None and any(
        m.external is not None and m.external.fallback is not None for m in hpa.spec.metrics or ())


def _hpa_fallback_in_use(hpa: HorizontalPodAutoscaler | None) -> bool:
    return hpa is not None and hpa.spec.behavior is not None and hpa.spec.behavior.fallback is not None


def drop_disabled_fields(new: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler | None, gates: FeatureGates) -> None:
    """Clear ``tolerance`` (``syncPeriodSeconds``, ``external.fallback``, ``behavior.fallback``)
    when HPAConfigurableTolerance (HPAConfigurableSyncPeriod, HPAExternalMetricFallback,
    HPAFallback) is off, unless the stored object uses it."""
    if new.spec.behavior is not None and not gates.hpa_fallback and not _hpa_fallback_in_use(old):
        new.spec.behavior.fallback = None
    if not gates.external_metric_fallback and not _fallback_in_use(old):
        for m in new.spec.metrics or ():
            if m.external is not None:
                m.external.fallback = None
    if new.spec.behavior is not None and not gates.configurable_sync_period and (
            old is None or old.spec.behavior is None or old.spec.behavior.sync_period_seconds is None):
        new.spec.behavior.sync_period_seconds = None
    if gates.configurable_tolerance or _tolerance_in_use(old) or new.spec.behavior is None:
        return
    for rules in (new.spec.behavior.scale_up, new.spec.behavior.scale_down):
        if rules is not None:
            rules.tolerance = None


def _empty_status() -> HorizontalPodAutoscalerStatus:
    return HorizontalPodAutoscalerStatus(desired_replicas=0, current_metrics=None)


def prepare_for_create(hpa: HorizontalPodAutoscaler, gates: FeatureGates = FeatureGates()) -> HorizontalPodAutoscaler:
    """Create: status cleared, ``generation = 1`` under HPAGeneration, disabled fields dropped."""
    hpa.status = _empty_status()
    if gates.hpa_generation:
        hpa.metadata.generation = 1
    drop_disabled_fields(hpa, None, gates)
    return hpa


def prepare_for_update(
    new: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler, gates: FeatureGates = FeatureGates()
) -> HorizontalPodAutoscaler:
    """Update of the main resource: the stored status wins, generation is the stored one and,
    under HPAGeneration, goes up by one when the spec changed; an empty resourceVersion takes
    the stored one (unconditional updates are allowed)."""
    new.status = old.status
    new.metadata.generation = old.metadata.generation
    if not new.metadata.resource_version:
        new.metadata.resource_version = old.metadata.resource_version
    drop_disabled_fields(new, old, gates)
    if gates.hpa_generation and new.spec != old.spec:
        new.metadata.generation = (old.metadata.generation or 0) + 1
    return new


def prepare_for_status_update(new: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler) -> HorizontalPodAutoscaler:
    """``/status`` write: the stored spec wins; metadata edits are kept."""
    new.spec = old.spec
    new.metadata.generation = old.metadata.generation
    if not new.metadata.resource_version:
        new.metadata.resource_version = old.metadata.resource_version
    return new
