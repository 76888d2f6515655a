"""The replay check: how closely a simulated HPA followed what the cluster really did.

A scenario from ``pyhpa history`` holds the replicas the cluster ran (``observed:``,
:mod:`pyhpa.sim.observed`). Replaying the real load with the real HPA settings should give back
those replicas; how far it does not says how far to trust what ``pyhpa simulate`` and
``pyhpa tune`` predict for other settings. Per HPA whose scale target has observed replicas
(summary key ``replay``):

* ``withinOneReplica`` -- the share (0..1) of the run's time where |simulated - observed| <= 1,
  sampled on the simulator's step grid (each tick weighs until the next tick, the last until the
  end); the observed series is read as steps (its last sample holds until the next);
* scale events -- an observed event is a change of the observed series between two consecutive
  samples (t_prev, t] (the samples of a recorded trace, else the step grid): its true time is only
  known to lie in that interval. It is *matched* when a simulated scale event in the same
  direction lies in [t_prev - P, t + P], P the HPA's sync period (``matchWindowSeconds``). Each
  simulated event matches at most one observed event: observed events are taken in time order and
  each takes the earliest unused simulated event in its window (which matches as many as any
  assignment can). ``observedScaleEvents``, ``matchedScaleEvents``, ``simulatedScaleEvents`` and
  ``unmatchedObservedScaleEvents`` (each ``{after, at, from, to}``: the samples around the change
  and the replicas before and after it);
* ``maxDeviation`` -- the largest |simulated - observed| on the step grid (replicas),
  ``maxDeviationAt`` / ``maxDeviationOffsetSeconds`` the first tick it happened;
* ``saturatedIntervals`` / ``saturatedSeconds`` -- the observed intervals where usage was capped
  (demand there is a lower bound: the simulated HPA scales less than the real one did).
"""

from __future__ import annotations

import bisect
from typing import Any, Sequence

from pyhpa.api.timefmt import format_duration, format_epoch
from pyhpa.sim.traces import Trace

NEAR = 1e-9  # replica counts closer than this are equal (observed counts may be averages)


def observed_samples(series: Any, start: float, end: float, step: float) -> tuple[list[float], list[float]]:
    """The observed series as steps over [start, end]: (times, values), the first at ``start``.
    A recorded trace keeps its own points (a change is only known to lie between two of them);
    a generated series is sampled on the step grid."""
    if isinstance(series, Trace):
        i = bisect.bisect_right(series.times, start) - 1
        times, values = [start], [series.values[max(i, 0)]]
        for t, v in zip(series.times[i + 1:], series.values[i + 1:]):
            if t > end:
                break
            if t > start:
                times.append(t)
                values.append(v)
        return times, values
    n = int(round((end - start) / step))
    times = [min(start + k * step, end) for k in range(n + 1)]
    return times, [series.value(t) for t in times]


def observed_of(scenario: Any, target: tuple[str, str, str]) -> tuple[list[float], list[float], list[Any]] | None:
    """For the plots: a target's observed replicas as steps ending at the run's end (times,
    values) and its saturated intervals; None without observed replicas."""
    observed = scenario.observed.get(target) if scenario.observed else None
    if observed is None:
        return None
    times, values = observed_samples(observed.replicas, scenario.start, scenario.end, scenario.step)
    if times[-1] < scenario.end:
        times, values = [*times, scenario.end], [*values, values[-1]]
    return times, values, list(observed.saturated)


def step_value(times: Sequence[float], values: Sequence[float], t: float) -> float:
    """The observed value at ``t``: the last sample at or before it (the first before any)."""
    return values[max(bisect.bisect_right(times, t) - 1, 0)]


def observed_events(times: Sequence[float], values: Sequence[float]) -> list[tuple[float, float, float, float]]:
    """Each change of the samples: (previous sample's time, the changed sample's time, old, new)."""
    return [(times[k - 1], times[k], values[k - 1], values[k])
            for k in range(1, len(times)) if abs(values[k] - values[k - 1]) > NEAR]


def match_events(observed: Sequence[tuple[float, float, float, float]], simulated: Sequence[Any],
                 window: float) -> list[bool]:
    """Per observed event: whether a simulated event (``t``, ``old``, ``new``) in its direction lies
    in [t_prev - window, t + window]; each simulated event matches at most one observed event."""
    by_dir: dict[bool, list[float]] = {True: [], False: []}
    for e in sorted(simulated, key=lambda e: e.t):
        if e.new != e.old:
            by_dir[e.new > e.old].append(e.t)
    used: dict[bool, set[int]] = {True: set(), False: set()}
    matched = [False] * len(observed)
    for k in sorted(range(len(observed)), key=lambda k: (observed[k][1], observed[k][0])):
        t_prev, t, old, new = observed[k]
        up = new > old
        times = by_dir[up]
        j = bisect.bisect_left(times, t_prev - window - NEAR)
        while j < len(times) and times[j] <= t + window + NEAR:
            if j not in used[up]:
                used[up].add(j)
                matched[k] = True
                break
            j += 1
    return matched


def sync_period(run: Any, default: float) -> float:
    """The HPA's sync period: its timeline has a row at the start, then one per sync (KEP-6003: an
    HPA may have its own period); ``default`` for a run shorter than one period."""
    t = run.log.t
    return round(t[1] - t[0], 6) if len(t) >= 2 else default  # the grid is in whole milliseconds


def _number(x: float) -> float | int:
    return int(round(x)) if abs(x - round(x)) <= NEAR else round(x, 3)


def replay_check(result: Any, run: Any) -> dict[str, Any] | None:
    """The ``replay`` object of one HPA's summary (module docstring); None when its target has
    no observed replicas or no trace."""
    scenario = result.scenario
    observed = scenario.observed.get(run.target) if scenario.observed else None
    trace = result.workloads.get(run.target)
    if observed is None or trace is None or not len(trace.times):
        return None
    start, end = scenario.start, scenario.end
    times, values = observed_samples(observed.replicas, start, end, scenario.step)
    ticks = trace.times
    within = total = 0.0
    worst, worst_at = -1.0, start
    for i, t in enumerate(ticks):
        dt = (ticks[i + 1] if i + 1 < len(ticks) else end) - t
        dev = abs(trace.replicas[i] - step_value(times, values, t))
        total += dt
        if dev <= 1 + NEAR:
            within += dt
        if dev > worst + NEAR:
            worst, worst_at = dev, t
    window = sync_period(run, scenario.config.sync_period)
    events = observed_events(times, values)
    matched = match_events(events, run.scale_events, window)
    return {
        "withinOneReplica": round(within / total, 4) if total > 0 else None,
        "observedScaleEvents": len(events),
        "matchedScaleEvents": sum(matched),
        "simulatedScaleEvents": len(run.scale_events),
        "matchWindowSeconds": window,
        "unmatchedObservedScaleEvents": [{"after": format_epoch(a), "at": format_epoch(b), "from": _number(old),
                                          "to": _number(new)}
                                         for (a, b, old, new), ok in zip(events, matched) if not ok],
        "maxDeviation": _number(worst),
        "maxDeviationAt": format_epoch(worst_at),
        "maxDeviationOffsetSeconds": round(worst_at - start, 3),
        "saturatedIntervals": len(observed.saturated),
        "saturatedSeconds": round(sum(s.end - s.start for s in observed.saturated), 3),
    }


def replay_summary(result: Any, run: Any) -> dict[str, Any]:
    """``{"replay": ...}`` for :func:`pyhpa.sim.report.summarize`, or nothing."""
    check = replay_check(result, run)
    return {} if check is None else {"replay": check}


def replay_of_result(result: Any) -> list[dict[str, Any]]:
    """``{"hpa", "replay"}`` for each HPA of a run with a replay check (``pyhpa tune``: the run of
    the current settings, the replay of what happened)."""
    out = []
    for run in result.hpas:
        check = replay_check(result, run)
        if check is not None:
            out.append({"hpa": run.key, "replay": check})
    return out


def replay_text(check: dict[str, Any]) -> str:
    """The figures of a ``replay`` object in one line (without the HPA's name)."""
    share = check["withinOneReplica"]
    dev = check["maxDeviation"]
    text = (f"within ±1 replica {share * 100:.1f}% of the time; " if share is not None else "") + (
        f"{check['matchedScaleEvents']}/{check['observedScaleEvents']} observed scale events matched within "
        f"{format_duration(check['matchWindowSeconds'])}; largest deviation {dev:g} replica{'' if dev == 1 else 's'} "
        f"at {check['maxDeviationAt']}")
    if check["saturatedIntervals"]:
        n = check["saturatedIntervals"]
        text += (f"; observed usage saturated in {n} interval{'' if n == 1 else 's'} "
                 f"({format_duration(check['saturatedSeconds'])}): demand there is a lower bound")
    return text


def replay_lines(summaries: Sequence[dict[str, Any]], prefix: str = "replay") -> list[str]:
    """One line per HPA summary with a replay check, e.g. ``replay shop/web: within ±1 replica
    93.4% of the time; 12/12 observed scale events matched within 15s; largest deviation 3
    replicas at 2026-01-05T14:03:00Z``."""
    return [f"{prefix} {s['hpa']}" + (f" ({s['label']})" if s.get("label") else "") + f": {replay_text(s['replay'])}"
            for s in summaries if s.get("replay")]
