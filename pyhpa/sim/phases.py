"""The phase band: how much a run's figures depend on where the load falls between syncs.

The simulated controller syncs every period from the start, and the metrics pipeline scrapes on
its own grid from the start; a live controller's syncs fall anywhere relative to the load. A load
step landing just before a sync or just after it can change the peak by a replica. ``--phases N``
runs the scenario at N offsets of the sync and scrape phases against the load, spread evenly over
one (global) sync period: offset ``o`` shifts the whole load ``o`` seconds earlier (every load
series read at ``t + o``), which is the same as syncing and scraping ``o`` seconds later. Offset 0
is the plain run. Each summary figure is then reported as min / median / max over the N runs:
N times the work of one run.
"""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass
from typing import Any, Sequence

from pyhpa.sim.scenario import Scenario
from pyhpa.sim.traces import Series

# The summary figures given a band (summary.json's ``phases.figures``), with their table headings.
BAND_FIGURES = (("podHours", "pod-hours"), ("underProvisionedSeconds", "under-prov s"),
                ("underProvisionedPodSeconds", "under-prov pod-s"), ("peakReplicas", "peak"),
                ("scaleEvents", "scale events"), ("flaps", "flaps"), ("maxSecondsToCapacity", "max s to capacity"),
                ("unservedDemand", "unserved demand"))


@dataclass
class ShiftedSeries(Series):
    """A load series read ``offset`` seconds ahead."""

    inner: Series
    offset: float

    def value(self, t: float) -> float:
        return self.inner.value(t + self.offset)


def phase_offsets(scenario: Scenario, n: int) -> list[float]:
    """``n`` offsets (seconds) spread evenly over one sync period, the first 0."""
    period = scenario.config.sync_period
    return [round(k * period / n, 6) for k in range(n)]


def shifted(scenario: Scenario, offset: float) -> Scenario:
    """The scenario with its load ``offset`` seconds earlier against the sync and scrape grids."""
    if not offset:
        return scenario
    return dataclasses.replace(scenario, load={k: ShiftedSeries(s, offset) for k, s in scenario.load.items()})


def band(values: Sequence[Any]) -> dict[str, Any] | None:
    """min / median / max of the values that are not None (None when none is)."""
    nums = [v for v in values if v is not None]
    if not nums:
        return None
    med = statistics.median(nums)
    return {"min": min(nums), "median": round(med, 6) if isinstance(med, float) else med, "max": max(nums)}


def phase_block(offsets: Sequence[float], per_phase: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One HPA's ``phases`` block of summary.json from its summary at each offset."""
    return {"offsetsSeconds": list(offsets),
            "figures": {key: band([s.get(key) for s in per_phase]) for key, _ in BAND_FIGURES},
            "values": {key: [s.get(key) for s in per_phase] for key, _ in BAND_FIGURES}}


def attach_bands(offsets: Sequence[float], summaries_by_phase: Sequence[list[dict[str, Any]]]) -> None:
    """Give each summary of the first phase (the plain run) its ``phases`` block; the lists are
    the same runs' summaries in the same order at each offset."""
    first = summaries_by_phase[0]
    for i, s in enumerate(first):
        s["phases"] = phase_block(offsets, [phase[i] for phase in summaries_by_phase])


def _cell(b: dict[str, Any] | None) -> str:
    if b is None:
        return "-"

    def one(v: Any) -> str:
        return f"{v:.2f}" if isinstance(v, float) and not v.is_integer() else f"{v:g}"

    return f"{one(b['min'])} / {one(b['median'])} / {one(b['max'])}"


def band_table(summaries: Sequence[dict[str, Any]]) -> str:
    """The band of every summary with a ``phases`` block, as Markdown (empty without any)."""
    rows = [s for s in summaries if s.get("phases")]
    if not rows:
        return ""
    offsets = rows[0]["phases"]["offsetsSeconds"]
    labels = any(s.get("label") for s in rows)
    head = [*(["variant"] if labels else []), "hpa", *(h for _, h in BAND_FIGURES)]
    lines = [f"Phase band over {len(offsets)} offsets of the sync and scrape phases against the load "
             f"({', '.join(f'{o:g}' for o in offsets)} s): min / median / max", "",
             "| " + " | ".join(head) + " |", "|" + "|".join(" --- " for _ in head) + "|"]
    for s in rows:
        cells = [*([s.get("label") or ""] if labels else []), s["hpa"],
                 *(_cell(s["phases"]["figures"].get(key)) for key, _ in BAND_FIGURES)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def worst_figures(per_phase: Sequence[dict[str, Any]], keep: Sequence[str] = ("demandPodSeconds",)) -> dict[str, Any]:
    """A tune candidate's figures over its phases: each figure's worst (highest) value, those
    in ``keep`` from the plain run (offset 0)."""
    out = dict(per_phase[0])
    for key in out:
        if key in keep:
            continue
        values = [f.get(key) for f in per_phase]
        out[key] = None if any(v is None for v in values) else max(values)
    return out
