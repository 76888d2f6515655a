"""``pyhpa tune``'s choice among evaluated candidates: the Pareto frontier, the budget and the
recommendation.

The budget has three parts: the under-provisioned pod-seconds allowed (``--budget``), and caps on
flaps and on scale events per day (``--max-flaps``, ``--max-scale-events``). A flap is a rescale
that reverses the previous one's direction within 5 minutes of it (the default scale-down window),
as ``pyhpa simulate``'s summary counts them (:mod:`pyhpa.sim.report`). Unless the flags or the
``tune:`` section cap flaps, the cap is the current settings' own rate: the recommendation never
flaps more than what it replaces. The frontier stays the trade of pod-hours against
under-provisioning; the caps decide which candidates count as within the budget.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from pyhpa.sim.tune import Candidate, TuneError

DEFAULT_BUDGET = "0.5%"
NEAR_CHEAPEST = 0.01  # within budget, pod-hours this close to the cheapest: fewer scale events win
CHOICE = f"the cheapest, or one within {NEAR_CHEAPEST:.0%} of its pod-hours with fewer scale events"
DAY = 86400.0


def per_day(count: float, seconds: float) -> float:
    """A count over a run of ``seconds``, as a rate per day (3 decimals)."""
    return round(count * DAY / seconds, 3) if seconds > 0 else 0.0


def pareto(points: Sequence[tuple[float, float]]) -> list[bool]:
    """Which points no other point dominates, both coordinates minimized (a point equal to
    another is not dominated by it)."""
    order = sorted(range(len(points)), key=lambda i: points[i])
    on = [False] * len(points)
    best = math.inf  # lowest second coordinate among the points before the current group
    for _, group in itertools.groupby(order, key=lambda i: points[i]):
        idx = list(group)
        second = points[idx[0]][1]
        for i in idx:
            on[i] = second < best
        best = min(best, second)
    return on


@dataclass(frozen=True)
class Budget:
    text: str
    pod_seconds: float | None = None  # absolute
    share: float | None = None  # of the demand's pod-seconds

    def limit(self, demand_pod_seconds: float) -> float:
        return self.pod_seconds if self.pod_seconds is not None else (self.share or 0.0) * demand_pod_seconds


@dataclass(frozen=True)
class Caps:
    """Caps per day on flaps and scale events (None: no cap), and where each came from."""

    flaps_per_day: float | None = None
    scale_events_per_day: float | None = None
    flaps_from: str = ""  # "--max-flaps", "file:line: tune.maxFlaps" or "the current settings"
    scale_events_from: str = ""

    def allows(self, figures: Mapping[str, Any]) -> bool:
        for cap, key in ((self.flaps_per_day, "flapsPerDay"), (self.scale_events_per_day, "scaleEventsPerDay")):
            if cap is not None and (figures.get(key) or 0.0) > cap + 1e-9:
                return False
        return True

    def text(self) -> str:
        """``at most 1.5 flaps/day (the current settings')``-style phrases, comma separated."""
        parts = []
        if self.flaps_per_day is not None:
            parts.append(f"at most {self.flaps_per_day:g} flaps/day ({self.flaps_from})")
        if self.scale_events_per_day is not None:
            parts.append(f"at most {self.scale_events_per_day:g} scale events/day ({self.scale_events_from})")
        return ", ".join(parts)


NO_CAPS = Caps()


def parse_budget(text: str, where: str = "--budget") -> Budget:
    """``600`` (under-provisioned pod-seconds) or ``0.5%`` (of the pod-seconds the demand needs)."""
    raw = str(text).strip()

    def number(s: str) -> float:
        try:
            return float(s)
        except ValueError:
            raise ValueError("not a number") from None

    try:
        if raw.endswith("%"):
            share = number(raw[:-1]) / 100.0
            if not math.isfinite(share) or share < 0 or share > 1:
                raise ValueError("a share from 0% to 100%")
            return Budget(raw, share=share)
        value = number(raw)
        if not math.isfinite(value) or value < 0:
            raise ValueError("must be >= 0")
        return Budget(raw, pod_seconds=value)
    except ValueError as exc:
        raise TuneError(f"{where}: Invalid value: {text!r}: {exc} (pod-seconds like 600, or a share like 0.5%)") from None


def parse_cap(text: str, where: str) -> float:
    """A per-day cap (``--max-flaps 2``, ``tune.maxScaleEvents: 48``): a number >= 0."""
    try:
        value = float(str(text).strip())
    except ValueError:
        raise TuneError(f"{where}: Invalid value: {text!r}: not a number (a count per day, like 2)") from None
    if not math.isfinite(value) or value < 0:
        raise TuneError(f"{where}: Invalid value: {text!r}: must be >= 0 (a count per day)")
    return value


def within_budget(c: Candidate, limit: float, caps: Caps = NO_CAPS) -> bool:
    """Whether its under-provisioned pod-seconds stay within ``limit`` and its flaps and scale
    events per day within the caps."""
    return c.figures["underProvisionedPodSeconds"] <= limit + 1e-9 and caps.allows(c.figures)


def cheapest(cands: Sequence[Candidate], limit: float, caps: Caps = NO_CAPS) -> tuple[Candidate, bool]:
    """The cheapest candidate (pod-hours, then under-provisioning, scale events, order) within
    the budget (refinements search around it); if none, the least under-provisioned among those
    within the caps (any when none is), then the cheapest, and False."""
    ranked = list(enumerate(cands))
    inside = [(i, c) for i, c in ranked if within_budget(c, limit, caps)]
    if inside:
        return min(inside, key=lambda ic: (ic[1].figures["podHours"], ic[1].figures["underProvisionedPodSeconds"],
                                            ic[1].figures["scaleEvents"], ic[0]))[1], True
    return min(ranked, key=lambda ic: (not caps.allows(ic[1].figures), ic[1].figures["underProvisionedPodSeconds"],
                                       ic[1].figures["podHours"], ic[1].figures["scaleEvents"], ic[0]))[1], False


def choose(cands: Sequence[Candidate], limit: float, caps: Caps = NO_CAPS) -> tuple[Candidate, bool]:
    """The recommendation: the :func:`cheapest`, except that it ties with every candidate within
    the budget whose pod-hours exceed its by at most :data:`NEAR_CHEAPEST`, and the fewest scale
    events win the tie (then pod-hours, under-provisioning, order): a flapping HPA must not win by
    a hair. Only a tie-break: the search, so every other column of frontier.csv, ignores it."""
    best, inside = cheapest(cands, limit, caps)
    if not inside:
        return best, False
    top = best.figures["podHours"] * (1 + NEAR_CHEAPEST) + 1e-9
    near = [(i, c) for i, c in enumerate(cands) if within_budget(c, limit, caps) and c.figures["podHours"] <= top]
    return min(near, key=lambda ic: (ic[1].figures["scaleEvents"], ic[1].figures["podHours"],
                                      ic[1].figures["underProvisionedPodSeconds"], ic[0]))[1], True
