"""Load series for the simulator: recorded traces (CSV, Prometheus range queries) and generators.

A series is a function of time (epoch seconds) -> float. Traces are checked when read: times must
increase, values must parse, and consecutive points may not be further apart than the series'
``maxGap``. Without ``maxGap`` the limit is 3 x the trace's typical spacing, taken as the lower
quartile of its spacings (a trace with a few long holes still has mostly short spacings, so the
holes cannot raise the limit the way they raise a mean or even a median of few points). An error
names the file, the line and the field (for Prometheus JSON, the line of the value in the file).

A load is a rate or a count, so a series may not go negative: a negative point of a trace, a
generator whose values reach below 0, or a sum that does at some tick of the run is an error.
The parts of a sum may be negative (a random walk around 0 added to a diurnal wave). A field a
series does not take is an error too (``interpolation: linear`` would otherwise give steps).
"""

from __future__ import annotations

import bisect
import csv
import io
import json
import math
import random
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from pyhpa.api.timefmt import format_epoch
from pyhpa.sim.scenario_fields import NOT_NEGATIVE, unknown_field

SERIES_KINDS = ("csv", "prometheus", "constant", "step", "steps", "ramp", "sine", "diurnal", "spikes", "randomWalk", "sum")
_TRACE_FIELDS = ("interpolate", "maxGap", "align", "scale")
# The fields a series mapping takes besides its kind (generators: none) ...
SERIES_FIELDS = {"csv": (*_TRACE_FIELDS, "column"), "prometheus": (*_TRACE_FIELDS, "match", "aggregate")}
# ... and the fields of each generator's own mapping.
GENERATOR_FIELDS = {
    "step": ("before", "after", "at"),
    "steps": ("initial", "changes"),
    "ramp": ("from", "to", "start", "end"),
    "sine": ("mean", "amplitude", "period", "peak"),
    "diurnal": ("min", "max", "peak", "period"),
    "spikes": ("base", "height", "length", "times", "every", "jitter", "seed", "first"),
    "randomWalk": ("start", "stddev", "interval", "min", "max", "seed"),
}
STEP_CHANGE_FIELDS = ("at", "value")


class SeriesError(ValueError):
    """A load series that cannot be used; the message names file, line and field."""


class Series:
    """Base: ``value(t)`` at epoch seconds ``t``."""

    def value(self, t: float) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    def check_coverage(self, start: float, end: float, where: str) -> None:
        """Raise when the series has no data for part of [start, end] (traces only)."""


# --------------------------------------------------------------------------- traces


@dataclass
class Trace(Series):
    """Recorded points; ``step`` holds each value until the next point, ``linear`` interpolates."""

    times: list[float]
    values: list[float]
    interpolate: str = "step"
    source: str = "trace"
    max_gap: float | None = None

    def value(self, t: float) -> float:
        times = self.times
        i = bisect.bisect_right(times, t) - 1
        if i < 0:
            return self.values[0]
        if i >= len(times) - 1 or self.interpolate == "step":
            return self.values[i]
        t0, t1 = times[i], times[i + 1]
        v0, v1 = self.values[i], self.values[i + 1]
        return v0 + (v1 - v0) * (t - t0) / (t1 - t0)

    def check_coverage(self, start: float, end: float, where: str) -> None:
        gap = self.max_gap if self.max_gap is not None else 0.0
        first, last = self.times[0], self.times[-1]
        if first > start + gap or last < end - gap:
            raise SeriesError(
                f"{where}: trace {self.source} covers {format_epoch(first)}..{format_epoch(last)} but the scenario runs "
                f"{format_epoch(start)}..{format_epoch(end)} (set `align: start` to shift it, or shorten the duration)"
            )


def parse_timestamp(text: str, start: float) -> float:
    """RFC 3339, epoch seconds (>= 1e9), or an offset from the scenario start (number or duration)."""
    raw = text.strip()
    try:
        number = float(raw)
    except ValueError:
        number = None
    if number is not None:
        if not math.isfinite(number):
            raise ValueError(f"not a finite time: {raw!r}")
        return number if number >= 1e9 else start + number
    if "T" in raw or (len(raw) >= 10 and raw[4] == "-"):
        dt = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
        return dt.timestamp()
    from pyhpa.api.timefmt import parse_duration

    return start + parse_duration(raw)


def _parse_value(text: str) -> float:
    raw = text.strip()
    try:
        value = float(raw)
    except ValueError:
        from pyhpa.api.quantity import Quantity

        value = Quantity.parse(raw).as_float()
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {raw!r}")
    return value


GAP_FACTOR = 3.0  # default maxGap: this many times the typical spacing


def typical_spacing(times: Sequence[float]) -> float | None:
    """The lower quartile of the spacings between consecutive times (None with fewer than 2)."""
    steps = sorted(b - a for a, b in zip(times, times[1:]))
    return steps[len(steps) // 4] if steps else None


def _check_points(times: list[float], where: Callable[[int], str], max_gap: float | None,
                  hint: str = "") -> float:
    """Times must increase strictly, and no spacing may exceed ``max_gap`` (default: GAP_FACTOR x
    the typical spacing). Returns the limit used; ``where(i)`` locates point ``i``."""
    for i in range(1, len(times)):
        if times[i] <= times[i - 1]:
            raise SeriesError(f"{where(i)}: timestamp: times must increase (got {format_epoch(times[i])} after {format_epoch(times[i - 1])})")
    typical = typical_spacing(times)
    if typical is None:
        return max_gap or 0.0
    limit = max_gap if max_gap is not None else GAP_FACTOR * typical
    for i in range(1, len(times)):
        if times[i] - times[i - 1] > limit + 1e-9:
            why = f"maxGap {limit:g}s" if max_gap is not None else (
                f"the default maxGap {limit:g}s ({GAP_FACTOR:g} x the trace's typical spacing of {typical:g}s)")
            raise SeriesError(
                f"{where(i)}: timestamp: gap of {times[i] - times[i - 1]:g}s after {format_epoch(times[i - 1])} "
                f"exceeds {why}" + (f"; {hint}" if hint else "")
            )
    return limit


def read_csv(path: Path, start: float, *, interpolate: str = "step", max_gap: float | None = None,
             align: bool = False, column: str | None = None, gap_hint: str = "", signed: bool = False) -> Trace:
    """``timestamp,value`` lines (an optional header line is skipped; ``#`` lines are comments);
    a negative value is an error unless ``signed``."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise SeriesError(f"{path}: cannot read: {exc.strerror or exc}") from None
    times: list[float] = []
    values: list[float] = []
    lines: list[int] = []
    value_index = 1
    reader = csv.reader(io.StringIO(text))
    for row in reader:
        lineno = reader.line_num  # the record's last line: its line unless a quoted field spans lines
        if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
            continue
        if not times and not lines:
            header = [c.strip() for c in row]
            if column is not None:
                if column not in header:
                    raise SeriesError(f"{path}:{lineno}: column: {column!r} not in header {header}")
                value_index = header.index(column)
                lines.append(-lineno)  # header consumed
                continue
            try:
                parse_timestamp(row[0], start)
            except Exception:
                lines.append(-lineno)  # a header line
                continue
        if len(row) <= value_index:
            raise SeriesError(f"{path}:{lineno}: value: Required value (expected `timestamp,value`)")
        try:
            t = parse_timestamp(row[0], start)
        except Exception as exc:
            raise SeriesError(f"{path}:{lineno}: timestamp: Invalid value: {row[0].strip()!r}: {exc}") from None
        try:
            v = _parse_value(row[value_index])
        except Exception as exc:
            raise SeriesError(f"{path}:{lineno}: value: Invalid value: {row[value_index].strip()!r}: {exc}") from None
        if v < 0 and not signed:
            raise SeriesError(f"{path}:{lineno}: value: Invalid value: {row[value_index].strip()}: {NOT_NEGATIVE}")
        times.append(t)
        values.append(v)
        lines.append(lineno)
    if not times:
        raise SeriesError(f"{path}: no data points")
    data_lines = [n for n in lines if n > 0]
    limit = _check_points(times, lambda i: f"{path}:{data_lines[i]}", max_gap, gap_hint)
    if align:
        shift = start - times[0]
        times = [t + shift for t in times]
    return Trace(times, values, interpolate, str(path), limit)


def json_line(text: str, path: Sequence[str | int]) -> int:
    """The 1-based line where the value at ``path`` (keys and indices) starts in JSON ``text``,
    or of the deepest container on the way that exists (the document must be valid JSON)."""
    decoder = json.JSONDecoder()
    ws = " \t\n\r"
    n = len(text)

    def skip(i: int) -> int:
        while i < n and text[i] in ws:
            i += 1
        return i

    i = skip(0)
    for step in path:
        if isinstance(step, str) and i < n and text[i] == "{":
            j, found = skip(i + 1), None
            while j < n and text[j] != "}":
                key, j = json.decoder.scanstring(text, j + 1)
                j = skip(skip(j) + 1)  # past ':'
                if key == step:
                    found = j  # keep looking: a later duplicate wins, as in json.loads
                _, j = decoder.raw_decode(text, j)
                j = skip(j)
                if j < n and text[j] == ",":
                    j = skip(j + 1)
            if found is None:
                break
            i = found
        elif isinstance(step, int) and i < n and text[i] == "[":
            j, k = skip(i + 1), 0
            while j < n and text[j] != "]" and k < step:
                _, j = decoder.raw_decode(text, j)
                j = skip(j)
                if j < n and text[j] == ",":
                    j = skip(j + 1)
                k += 1
            if j >= n or text[j] == "]":
                break
            i = j
        else:
            break
    return text.count("\n", 0, i) + 1


def read_prometheus(path: Path, start: float, *, interpolate: str = "step", max_gap: float | None = None,
                    align: bool = False, match: Mapping[str, str] | None = None,
                    aggregate: str | None = None, gap_hint: str = "", signed: bool = False) -> Trace:
    """A ``/api/v1/query_range`` response: ``data.result[].values`` = ``[[unix, "value"], ...]``;
    a negative value is an error unless ``signed``.

    Errors name the file, the line of the offending value and its JSON path."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise SeriesError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SeriesError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None

    def fail(steps: Sequence[str | int], message: str) -> SeriesError:
        field = "".join(f"[{x}]" if isinstance(x, int) else (f".{x}" if k else x) for k, x in enumerate(steps))
        return SeriesError(f"{path}:{json_line(text, steps)}: {field}: {message}")

    if not isinstance(doc, dict) or doc.get("status") not in ("success", None):
        got = doc.get("status") if isinstance(doc, dict) else doc
        raise fail(["status"] if isinstance(doc, dict) else [], f"expected \"success\", got {got!r}")
    data = doc.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("result"), list):
        raise fail(["data", "result"], "Required value (not a query_range response)")
    if data.get("resultType", "matrix") != "matrix":
        raise fail(["data", "resultType"], f"expected \"matrix\", got {data.get('resultType')!r}")
    result = data["result"]
    chosen = []
    for i, series in enumerate(result):
        labels = series.get("metric") or {} if isinstance(series, dict) else {}
        if match and any(labels.get(k) != v for k, v in match.items()):
            continue
        chosen.append((i, series))
    if not chosen:
        raise fail(["data", "result"], "no series" + (f" matching {dict(match)}" if match else ""))
    if len(chosen) > 1 and aggregate is None:
        raise fail(["data", "result"], f"{len(chosen)} series; select one with `match: {{label: value}}` "
                                       "or combine them with `aggregate: sum|max|min|avg`")
    per_series: list[tuple[list[float], list[float]]] = []
    limits: list[float] = []
    for i, series in chosen:
        raw = series.get("values") if isinstance(series, dict) else None
        if not isinstance(raw, list) or not raw:
            raise fail(["data", "result", i, "values"], "Required value")
        ts: list[float] = []
        vs: list[float] = []
        for j, point in enumerate(raw):
            at = ["data", "result", i, "values", j]
            if not isinstance(point, list) or len(point) != 2:
                raise fail(at, "expected [unixTime, \"value\"]")
            try:
                t = float(point[0])
                if isinstance(point[0], bool) or not math.isfinite(t):
                    raise ValueError
            except (TypeError, ValueError):
                raise fail([*at, 0], f"Invalid value: {point[0]!r}: not a unix time") from None
            try:
                v = float(point[1])
                if isinstance(point[1], bool) or not math.isfinite(v):
                    raise ValueError
            except (TypeError, ValueError):
                raise fail([*at, 1], f"Invalid value: {point[1]!r}: not a finite number") from None
            if v < 0 and not signed:
                raise fail([*at, 1], f"Invalid value: {point[1]!r}: {NOT_NEGATIVE}")
            ts.append(t)
            vs.append(v)

        def where(j: int, i: int = i) -> str:
            return f"{path}:{json_line(text, ['data', 'result', i, 'values', j])}: data.result[{i}].values[{j}]"

        limits.append(_check_points(ts, where, max_gap, gap_hint))
        per_series.append((ts, vs))
    if len(per_series) == 1:
        times, values = per_series[0]
    else:
        combine = {"sum": sum, "max": max, "min": min, "avg": lambda xs: sum(xs) / len(xs)}.get(aggregate or "")
        if combine is None:
            raise SeriesError(f"{path}: aggregate: Unsupported value: {aggregate!r}: supported values: sum, max, min, avg")
        # Each series passed its own checks; their union of times increases and has no longer gaps.
        times = sorted({t for ts, _ in per_series for t in ts})
        traces = [Trace(ts, vs, interpolate) for ts, vs in per_series]
        values = [combine([tr.value(t) for tr in traces]) for t in times]
    limit = max(limits)
    if align:
        shift = start - times[0]
        times = [t + shift for t in times]
    return Trace(times, values, interpolate, str(path), limit)


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
        return sum(p.value(t) for p in self.parts)

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
        raw = self.spec.get(key)
        if raw is None:
            if default is None:
                raise self.fail(key, "Required value")
            return default
        try:
            value = _parse_value(str(raw)) if not isinstance(raw, (int, float)) or isinstance(raw, bool) else float(raw)
            if isinstance(raw, bool) or not math.isfinite(value):
                raise ValueError("not a finite number")
        except Exception as exc:
            raise self.fail(key, f"Invalid value: {raw!r}: {exc}") from None
        if positive and value <= 0:
            raise self.fail(key, f"Invalid value: {raw!r}: must be > 0")
        if minimum == 0 and value < 0:
            raise self.fail(key, f"Invalid value: {raw!r}: {NOT_NEGATIVE}")
        if minimum is not None and value < minimum:
            raise self.fail(key, f"Invalid value: {raw!r}: must be >= {minimum:g}")
        return value

    def duration(self, key: str, default: float | None = None) -> float:
        raw = self.spec.get(key)
        if raw is None:
            if default is None:
                raise self.fail(key, "Required value")
            return default
        try:
            value = _duration_value(raw)
        except Exception as exc:
            raise self.fail(key, f"Invalid value: {raw!r}: {exc}") from None
        if value <= 0:
            raise self.fail(key, f"Invalid value: {raw!r}: must be > 0")
        return value

    def time(self, key: str, default: float | None = None) -> float:
        raw = self.spec.get(key)
        if raw is None:
            if default is None:
                raise self.fail(key, "Required value")
            return default
        if isinstance(raw, datetime):
            return (raw if raw.tzinfo else raw.replace(tzinfo=timezone.utc)).timestamp()
        try:
            return parse_timestamp(str(raw), self.start)
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
        low = min(points)
        if low < 0 and not signed:
            at = format_epoch(start + points.index(low) * interval)
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
