"""When the simulated controller reconciles each HPA: every sync period from the start, the
HPA's own ``spec.behavior.syncPeriodSeconds`` (KEP-6003) or the scenario's global period.

Times are whole milliseconds so the grids of several periods (and the tick grid) merge without
float drift.
"""

from __future__ import annotations

from array import array

from pyhpa.api.types import HorizontalPodAutoscaler
from pyhpa.controller.sync_period import sync_period_of
from pyhpa.engine.config import ControllerConfig

UNIT = 1000  # grid units per second


def period_ms(seconds: float) -> int:
    """A period on the grid (at least one unit)."""
    return max(1, int(round(seconds * UNIT)))


def sync_period_ms(hpa: HorizontalPodAutoscaler, config: ControllerConfig) -> int:
    """The HPA's sync period on the grid."""
    return period_ms(sync_period_of(hpa, config))


def sync_offsets(periods_ms: set[int], total_ms: int) -> dict[int, frozenset[int]]:
    """Grid offset -> the periods due there: each period's multiples in (0, total]. Offsets with
    the same periods due share one frozenset (a run has a few such sets, and ~40,000 offsets a week)."""
    if len(periods_ms) == 1:  # the usual case: one global sync period
        (period,) = periods_ms
        return dict.fromkeys(range(period, total_ms + 1, period), frozenset(periods_ms))
    due: dict[int, set[int]] = {}
    for period in periods_ms:
        for off in range(period, total_ms + 1, period):
            due.setdefault(off, set()).add(period)
    shared: dict[frozenset[int], frozenset[int]] = {}
    return {off: shared.setdefault(frozenset(ps), frozenset(ps)) for off, ps in due.items()}


class SyncTimes:
    """One array of sync times per distinct period, shared by the HPAs that have it (each HPA's
    timeline rows line up with its own syncs)."""

    def __init__(self, periods_ms: set[int]) -> None:
        self.by_period = {p: array("d") for p in periods_ms}

    def append(self, t: float, periods_ms: frozenset[int] | set[int] | None = None) -> None:
        """Record a sync at ``t`` for ``periods_ms`` (None: every period, e.g. the start row)."""
        for p in self.by_period if periods_ms is None else periods_ms:
            self.by_period[p].append(t)
