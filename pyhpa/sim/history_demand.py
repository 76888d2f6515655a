"""The arithmetic of ``pyhpa history``'s CPU demand on measured usage intervals (pure): usage
between two sample instants as ``(from, to, value)`` pieces, a load step inside one interval put
where it was (:func:`locate_steps`), the intervals averaged back over each step
(:func:`resample`), and a stopped pod's usage after its last sample (:func:`stopped_at`,
:func:`add_usage`). Every interval's usage is kept; docs/history.md, "Usage between samples",
says why each is done.
"""

from __future__ import annotations

import bisect

STEADY = 0.05  # a level is steady when it moves by less than this share of the step next to it


def locate_steps(pieces: list[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """Each measured interval that lies between two steady levels and averages between them split
    where one step from the level before to the level after gives that average: a load that
    steps inside a scrape interval steps there, instead of ramping over the whole interval
    (which moves part of the step into the metrics-server scrapes before it). The usage of
    every interval is kept; other intervals are left as measured."""
    out: list[tuple[float, float, float]] = []
    for k, (a, b, m) in enumerate(pieces):
        if 2 <= k < len(pieces) - 2 and _between_steady(pieces, k):
            low, high = pieces[k - 1][2], pieces[k + 1][2]
            cut = a + (b - a) * (high - m) / (high - low)
            out += [(a, cut, low), (cut, b, high)]
        else:
            out.append((a, b, m))
    return out


def _between_steady(pieces: list[tuple[float, float, float]], k: int) -> bool:
    before, after = pieces[k - 1][2], pieces[k + 1][2]
    rise = after - before
    if abs(rise) <= 1e-9 or not (min(before, after) < pieces[k][2] < max(before, after)):
        return False
    contiguous = all(abs(pieces[i][1] - pieces[i + 1][0]) < 1e-6 for i in range(k - 2, k + 2))
    return (contiguous and abs(pieces[k - 2][2] - before) < STEADY * abs(rise)
            and abs(pieces[k + 2][2] - after) < STEADY * abs(rise))


def resample(pieces: list[tuple[float, float, float]], times: list[float], step: float) -> list[float | None]:
    """The average over each step [t, t + step) of piecewise-constant values ``(from, to, value)``
    (in time order); None for a step no piece covers. The samples' instants rarely fall on the
    steps (Prometheus scrapes at its own phase): this puts each measured interval where it was."""
    out: list[float | None] = []
    j = 0
    for t in times:
        end = t + step
        while j < len(pieces) and pieces[j][1] <= t:
            j += 1
        total = covered = 0.0
        i = j
        while i < len(pieces) and pieces[i][0] < end:
            a, b, v = pieces[i]
            span = min(b, end) - max(a, t)
            if span > 0:
                total += v * span
                covered += span
            i += 1
        out.append(total / covered if covered > 1e-9 else None)
    return out


SHORT = 0.05  # a pod's last interval this far below its siblings' usage: it stopped within it


def stopped_at(before: float, last: float, scrape: float, scale_downs: list[float], share: float = 1.0) -> float:
    """When a pod whose usage samples end at ``last`` (the one before at ``before``) stopped using
    CPU, which no sample holds after ``last``; ``share`` is its usage between those two samples
    over its siblings' (the median pod's).

    ``last`` itself (nothing is missing) when it stopped within its last interval: its usage
    there fell short of its siblings' by more than :data:`SHORT` (its last sample was taken while
    it terminated, its counter already still), or the workload scaled down within that interval
    and not after it. Else it stopped after its last sample: at the workload's scale-down within
    the scrape interval after it (a Deployment's surplus pods are deleted when it scales down, and
    a deleted pod takes no more load), else in the middle of that interval (it was gone by the
    next scrape)."""
    if share < 1 - SHORT:
        return last
    after = [t for t in scale_downs if last < t < last + scrape]
    if after:
        return min(after)
    if any(before < t <= last for t in scale_downs):
        return last
    return last + scrape / 2


def add_usage(spans: list[list[float]], start: float, end: float, rate: float) -> None:
    """Adds ``rate`` cores over ``[start, end)`` to the measured intervals ``spans``
    (``[from, to, core-seconds, ...]``, in time order) it overlaps; what falls outside every
    interval is not measured there and is left out."""
    if not (rate > 0 and end > start):
        return
    i = bisect.bisect_right(spans, start, key=lambda s: s[1])  # the first that ends after start
    while i < len(spans) and spans[i][0] < end:
        overlap = min(spans[i][1], end) - max(spans[i][0], start)
        if overlap > 0:
            spans[i][2] += rate * overlap
        i += 1


STOPPED_AFTER = 1.5  # a pod unsampled this many scrape intervals while others still were has stopped


def add_stopped_pods(spans: list[list[float]], used: dict[str, dict[int, float]],
                     sampled: dict[str, dict[int, float]], scrape: float, scale_downs: list[float]) -> None:
    """A pod that stops (deleted: cAdvisor no longer reports it) used CPU after its last sample,
    which no later sample holds: that usage is added at its rate over its last interval (between
    its last two samples) until it stopped (:func:`stopped_at`). ``used`` is each pod's usage
    (core-seconds) per step, ``sampled`` its latest sample's instant at each step's start (the
    per-pod data the demand is read from, so this costs no query)."""
    latest = max((v for points in sampled.values() for v in points.values()), default=None)
    for pod, points in used.items():
        if not points:
            continue
        k = max(points)
        before, last = sampled.get(pod, {}).get(k), sampled.get(pod, {}).get(k + 1)
        if latest is None or before is None or last is None or not last > before \
                or latest < last + STOPPED_AFTER * scrape:
            continue  # its first sample (no interval), or still sampled at the range's end
        rate = points[k] / (last - before)
        others = sorted(r for other in used if other != pod and k in used[other]
                        for r in [_rate(used, sampled, other, k)] if r is not None)
        share = rate / others[len(others) // 2] if others and others[len(others) // 2] > 0 else 1.0
        add_usage(spans, last, stopped_at(before, last, scrape, scale_downs, share), rate)


def _rate(used: dict[str, dict[int, float]], sampled: dict[str, dict[int, float]], pod: str, k: int) -> float | None:
    """A pod's usage (cores) over step ``k``, between its samples at the step's two ends; None
    for its first sample (its whole counter, not an interval's)."""
    a, b = sampled.get(pod, {}).get(k), sampled.get(pod, {}).get(k + 1)
    return used[pod][k] / (b - a) if a is not None and b is not None and b > a else None
