"""Load series for the simulator: a scenario's ``load:`` series, recorded traces (read by
:mod:`pyhpa.sim.traces`) or generators.

A series is a function of time (epoch seconds) -> float. A load is a rate or a count, so a series
may not go negative: a negative point of a trace, a generator whose values reach below 0, or a
sum that does at some tick of the run is an error. The parts of a sum may be negative (a random
walk around 0 added to a diurnal wave). A field a series does not take is an error too
(``interpolation: linear`` would otherwise give steps).
"""

from __future__ import annotations

import bisect
import math
import random
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping, Sequence

from pyhpa.api.timefmt import format_epoch
from pyhpa.sim.scenario_fields import NOT_NEGATIVE, unknown_field
from pyhpa.sim.traces import Series, SeriesError, parse_timestamp, parse_value, read_csv, read_prometheus

SERIES_KINDS = ("csv", "prometheus", "constant", "step", "steps", "ramp", "sine", "diurnal", "spikes", "randomWalk", "sum")
_TRACE_FIELDS = ("interpolate", "maxGap", "align", "scale")
# The fields a series mapping takes besides its kind (generators: none) ...
SERIES_FIELDS = MappingProxyType({"csv": (*_TRACE_FIELDS, "column"), "prometheus": (*_TRACE_FIELDS, "match", "aggregate")})
# ... and the fields of each generator's own mapping.
GENERATOR_FIELDS = MappingProxyType({
    "step": ("before", "after", "at"),
    "steps": ("initial", "changes"),
    "ramp": ("from", "to", "start", "end"),
    "sine": ("mean", "amplitude", "period", "peak"),
    "diurnal": ("min", "max", "peak", "period"),
    "spikes": ("base", "height", "length", "times", "every", "jitter", "seed", "first"),
    "randomWalk": ("start", "stddev", "interval", "min", "max", "seed"),
})
STEP_CHANGE_FIELDS = ("at", "value")


# --------------------------------------------------------------------------- generators


@dataclass
class Constant(Series):
    v: float

    def value(self, t: float) -> float:
        return self.v


@dataclass
class Steps(Series):
    """Piecewise constant: ``initial`` until the first change, then each change's value."""

    initial: float
    at: list[float]
    values: list[float]

    def value(self, t: float) -> float:
        i = bisect.bisect_right(self.at, t) - 1
        return self.initial if i < 0 else self.values[i]


@dataclass
class Ramp(Series):
    start_value: float
    end_value: float
    t0: float
    t1: float

    def value(self, t: float) -> float:
        if t <= self.t0:
            return self.start_value
        if t >= self.t1:
            return self.end_value
        return self.start_value + (self.end_value - self.start_value) * (t - self.t0) / (self.t1 - self.t0)


@dataclass
class Sine(Series):
    mean: float
    amplitude: float
    period: float
    t_peak: float  # an instant where the wave peaks

    def value(self, t: float) -> float:
        return self.mean + self.amplitude * math.cos(2 * math.pi * (t - self.t_peak) / self.period)


@dataclass
class Spikes(Series):
    base: float
    height: float
    starts: list[float]
    length: float

    def value(self, t: float) -> float:
        i = bisect.bisect_right(self.starts, t) - 1
        if i >= 0 and t < self.starts[i] + self.length:
            return self.base + self.height
        return self.base


@dataclass
class RandomWalk(Series):
    t0: float
    interval: float
    points: list[float]

    def value(self, t: float) -> float:
        i = int((t - self.t0) // self.interval)
        return self.points[min(max(i, 0), len(self.points) - 1)]


@dataclass
class Sum(Series):
    parts: list[Series]

    def value(self, t: float) -> float:
        return sum([p.value(t) for p in self.parts])  # a list: no generator to resume per part

    def check_coverage(self, start: float, end: float, where: str) -> None:
        for p in self.parts:
            p.check_coverage(start, end, where)


# --------------------------------------------------------------------------- building from a spec


class _Spec:
    """Field access over one series mapping that reports errors as ``where.field``; ``level``
    (``number(key, level=True)``) reads a load level: not negative unless ``signed``."""

    def __init__(self, spec: Mapping[str, Any], where: Callable[[str], str], start: float,
                 signed: bool = False) -> None:
        self.spec = spec
        self.where = where
        self.start = start
        self.signed = signed

    def check_fields(self, allowed: Sequence[str]) -> None:
        for k in self.spec:
            if k not in allowed:
                raise self.fail(str(k), unknown_field(k, allowed))

    def level(self, key: str, default: float | None = None) -> float:
        return self.number(key, default, minimum=None if self.signed else 0.0)

    def fail(self, key: str, message: str) -> SeriesError:
        return SeriesError(f"{self.where(key)}: {message}")

    def number(self, key: str, default: float | None = None, *, minimum: float | None = None,
               positive: bool = False) -> float:
        def parse(raw: Any) -> float:
            value = parse_value(str(raw)) if not isinstance(raw, (int, float)) or isinstance(raw, bool) else float(raw)
            if isinstance(raw, bool) or not math.isfinite(value):
                raise ValueError("not a finite number")
            if positive and value <= 0:
                raise ValueError("must be > 0")
            if minimum == 0 and value < 0:
                raise ValueError(NOT_NEGATIVE)
            if minimum is not None and value < minimum:
                raise ValueError(f"must be >= {minimum:g}")
            return value
        return self._read(key, default, parse)

    def duration(self, key: str, default: float | None = None) -> float:
        def parse(raw: Any) -> float:
            value = _duration_value(raw)
            if value <= 0:
                raise ValueError("must be > 0")
            return value
        return self._read(key, default, parse)

    def time(self, key: str, default: float | None = None) -> float:
        def parse(raw: Any) -> float:
            if isinstance(raw, datetime):
                return (raw if raw.tzinfo else raw.replace(tzinfo=timezone.utc)).timestamp()
            return parse_timestamp(str(raw), self.start)
        return self._read(key, default, parse)

    def _read(self, key: str, default: float | None, parse: Callable[[Any], float]) -> float:
        """``key``'s value as ``parse`` reads it (what it raises names the field), or ``default``
        when unset (without a default the field is required)."""
        raw = self.spec.get(key)
        if raw is None:
            if default is None:
                raise self.fail(key, "Required value")
            return default
        try:
            return parse(raw)
        except Exception as exc:
            raise self.fail(key, f"Invalid value: {raw!r}: {exc}") from None


def _duration_value(raw: Any) -> float:
    if isinstance(raw, bool):
        raise ValueError("not a duration")
    if isinstance(raw, (int, float)):
        return float(raw)
    from pyhpa.api.timefmt import parse_duration

    return parse_duration(str(raw).strip())


def build_series(spec: Any, *, start: float, end: float, base_dir: Path,
                 where: Callable[[str], str], signed: bool = False) -> Series:
    """One series from its scenario mapping; ``where(field)`` renders an error location. Its
    values may be negative only when ``signed`` (a part of a sum)."""
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        if spec < 0 and not signed:
            raise SeriesError(f"{where('')}: Invalid value: {spec!r}: {NOT_NEGATIVE}")
        return Constant(float(spec))
    if not isinstance(spec, Mapping):
        raise SeriesError(f"{where('')}: expected a mapping with one of: {', '.join(SERIES_KINDS)}, or a number")
    kinds = [k for k in SERIES_KINDS if k in spec]
    if len(kinds) != 1:
        found = ", ".join(kinds) or "none"
        raise SeriesError(f"{where('')}: exactly one of {', '.join(SERIES_KINDS)} is required (found: {found})")
    kind = kinds[0]
    s = _Spec(spec, where, start, signed)
    s.check_fields((kind, *SERIES_FIELDS.get(kind, ())))
    interpolate = spec.get("interpolate", "step")
    if interpolate not in ("step", "linear"):
        raise s.fail("interpolate", f"Unsupported value: {interpolate!r}: supported values: step, linear")
    max_gap = s.duration("maxGap") if spec.get("maxGap") is not None else None
    series_field = where("").split(": ", 1)[-1]
    gap_hint = f"set {series_field}.maxGap to accept longer gaps"
    align = spec.get("align")
    if align not in (None, "start"):
        raise s.fail("align", f"Unsupported value: {align!r}: supported values: start")
    if kind in ("csv", "prometheus"):
        raw_path = spec[kind]
        if not isinstance(raw_path, str) or not raw_path:
            raise s.fail(kind, "Required value: a file path")
        path = (base_dir / raw_path) if not Path(raw_path).is_absolute() else Path(raw_path)
        if kind == "csv":
            column = spec.get("column")
            trace = read_csv(path, start, interpolate=interpolate, max_gap=max_gap, align=align == "start",
                             column=column, gap_hint=gap_hint, signed=signed)
        else:
            match = spec.get("match")
            if match is not None and not isinstance(match, Mapping):
                raise s.fail("match", "expected a mapping of label: value")
            trace = read_prometheus(path, start, interpolate=interpolate, max_gap=max_gap,
                                    align=align == "start", match=match, aggregate=spec.get("aggregate"),
                                    gap_hint=gap_hint, signed=signed)
        scale = s.number("scale", 1.0, minimum=0.0)
        if scale != 1.0:
            trace.values = [v * scale for v in trace.values]
        return trace
    if kind == "constant":
        return Constant(s.level("constant"))
    if kind == "step":
        # step: {before: 1, after: 5, at: 10m}
        if not isinstance(spec["step"], Mapping):
            raise s.fail("step", "expected a mapping with before, after, at")
        inner = _sub(spec, "step", where, start, signed)
        return Steps(inner.level("before"), [inner.time("at")], [inner.level("after")])
    if kind == "steps":
        # steps: {initial: 1, changes: [{at: 10m, value: 5}, ...]}  or a list of {at, value}
        raw = spec["steps"]
        initial = 0.0
        if isinstance(raw, Mapping):
            initial = _sub(spec, "steps", where, start, signed).level("initial", 0.0)
            raw = raw.get("changes")
        if not isinstance(raw, list) or not raw:
            raise s.fail("steps", "expected a non-empty list of {at, value}")
        at, values = [], []
        for i, item in enumerate(raw):
            if not isinstance(item, Mapping):
                raise SeriesError(f"{where(f'steps[{i}]')}: expected a mapping with at, value")
            inner = _Spec(item, lambda k, i=i: where(f"steps[{i}].{k}"), start, signed)
            inner.check_fields(STEP_CHANGE_FIELDS)
            t = inner.time("at")
            if at and t <= at[-1]:
                raise inner.fail("at", "times must increase")
            at.append(t)
            values.append(inner.level("value"))
        return Steps(initial, at, values)
    if kind == "ramp":
        inner = _sub(spec, "ramp", where, start, signed)
        t0 = inner.time("start", start)
        t1 = inner.time("end", end)
        if t1 <= t0:
            raise inner.fail("end", "must be after start")
        return Ramp(inner.level("from"), inner.level("to"), t0, t1)
    if kind == "sine":
        inner = _sub(spec, "sine", where, start, signed)
        mean, amplitude = inner.number("mean"), inner.number("amplitude")
        if not signed and mean - abs(amplitude) < 0:
            raise inner.fail("amplitude", f"Invalid value: {spec['sine']['amplitude']!r}: the wave reaches "
                                          f"{mean - abs(amplitude):g}; mean - |amplitude| {NOT_NEGATIVE}")
        return Sine(mean, amplitude, inner.duration("period"), inner.time("peak", start))
    if kind == "diurnal":
        # diurnal: {min: 100, max: 1000, peak: "14:00", period: 24h}
        inner = _sub(spec, "diurnal", where, start, signed)
        lo, hi = inner.level("min"), inner.number("max")
        if hi < lo:
            raise inner.fail("max", "must be >= min")
        period = inner.duration("period", 86400.0)
        peak_raw = spec["diurnal"].get("peak", "14:00")
        try:
            hh, mm = str(peak_raw).split(":")
            peak_offset = int(hh) * 3600 + int(mm) * 60
        except Exception:
            raise inner.fail("peak", f"Invalid value: {peak_raw!r}: expected HH:MM (UTC)") from None
        day0 = start - (start % 86400)
        return Sine((lo + hi) / 2, (hi - lo) / 2, period, day0 + peak_offset)
    if kind == "spikes":
        # spikes: {base: 100, height: 900, every: 1h, length: 5m, jitter: 10m, seed: 1} or times: [..]
        inner = _sub(spec, "spikes", where, start, signed)
        base, height = inner.level("base", 0.0), inner.number("height")
        if not signed and base + height < 0:
            raise inner.fail("height", f"Invalid value: {spec['spikes']['height']!r}: a spike reaches "
                                       f"{base + height:g}; base + height {NOT_NEGATIVE}")
        length = inner.duration("length")
        raw = spec["spikes"]
        if raw.get("times") is not None:
            if not isinstance(raw["times"], list):
                raise inner.fail("times", "expected a list of times")
            starts = sorted(_Spec({"t": x}, lambda k, i=i: where(f"spikes.times[{i}]"), start).time("t")
                            for i, x in enumerate(raw["times"]))
        else:
            every = inner.duration("every")
            jitter = inner.number("jitter", 0.0, minimum=0.0) if not isinstance(raw.get("jitter"), str) else inner.duration("jitter")
            rng = random.Random(int(inner.number("seed", 0.0)))
            first = inner.time("first", start + every)
            starts, t = [], first
            while t < end:
                starts.append(t + (rng.uniform(-jitter, jitter) if jitter else 0.0))
                t += every
            starts.sort()
        return Spikes(base, height, starts, length)
    if kind == "randomWalk":
        # randomWalk: {start: 100, stddev: 5, interval: 1m, min: 0, max: 1000, seed: 42}
        inner = _sub(spec, "randomWalk", where, start, signed)
        v = inner.level("start")
        sd = inner.number("stddev", minimum=0.0)
        interval = inner.duration("interval", 60.0)
        lo = inner.number("min", -math.inf) if spec["randomWalk"].get("min") is not None else -math.inf
        hi = inner.number("max", math.inf) if spec["randomWalk"].get("max") is not None else math.inf
        if hi < lo:
            raise inner.fail("max", "must be >= min")
        rng = random.Random(int(inner.number("seed", 0.0)))
        n = int((end - start) // interval) + 2
        points = []
        for _ in range(n):
            points.append(v)
            v = min(hi, max(lo, v + rng.gauss(0.0, sd)))
        in_run = points[:int((end - start) // interval) + 1]  # the points the run reads
        low = min(in_run)
        if low < 0 and not signed:
            at = format_epoch(start + in_run.index(low) * interval)
            raise inner.fail("min", f"Required value: the walk reaches {low:g} at {at}; set min: 0 "
                                    "(a load may not be negative)")
        return RandomWalk(start, interval, points)
    if kind == "sum":
        parts = spec["sum"]
        if not isinstance(parts, list) or not parts:
            raise s.fail("sum", "expected a non-empty list of series")
        return Sum([build_series(p, start=start, end=end, base_dir=base_dir,
                                 where=lambda k, i=i: where(f"sum[{i}]" + (f".{k}" if k else "")), signed=True)
                    for i, p in enumerate(parts)])
    raise s.fail(kind, "unsupported")  # pragma: no cover


def _sub(spec: Mapping[str, Any], key: str, where: Callable[[str], str], start: float, signed: bool) -> _Spec:
    """The generator mapping ``spec[key]``, its fields checked."""
    inner = spec[key]
    if not isinstance(inner, Mapping):
        raise SeriesError(f"{where(key)}: expected a mapping")
    out = _Spec(inner, lambda k: where(f"{key}.{k}"), start, signed)
    out.check_fields(GENERATOR_FIELDS[key])
    return out


def check_not_negative(series: Series, start: float, end: float, step: float, where: str) -> None:
    """A sum (its parts may be negative) must not be at any tick of the run: ``start``,
    ``start + step`` ... ``end``, where the run samples its loads."""
    if not isinstance(series, Sum):
        return
    n = int(round((end - start) / step))
    for i in range(n + 1):
        t = min(start + i * step, end)
        v = series.value(t)
        if v < -1e-9:
            raise SeriesError(f"{where}: Invalid value: the sum is {v:g} at {format_epoch(t)}: {NOT_NEGATIVE}")


def sample(series: Series, times: Sequence[float]) -> list[float]:
    return [series.value(t) for t in times]
