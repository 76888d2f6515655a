"""Recorded load traces for the simulator: CSV files and Prometheus range-query responses.

Traces are checked when read: times must increase, values must parse and may not be negative (a
load is a rate or a count; a part of a sum may be), and consecutive points may not be further
apart than the series' ``maxGap``. Without ``maxGap`` the limit is 3 x the trace's typical
spacing, taken as the lower quartile of its spacings (a trace with a few long holes still has
mostly short spacings, so the holes cannot raise the limit the way they raise a mean or even a
median of few points). An error names the file, the line and the field (for Prometheus JSON,
the line of the value in the file). The series built from a scenario's ``load:`` mapping, traces
and generators, are in :mod:`pyhpa.sim.series`.
"""

from __future__ import annotations

import bisect
import csv
import io
import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from pyhpa.api.timefmt import format_epoch
from pyhpa.sim.scenario_fields import NOT_NEGATIVE


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


def parse_value(text: str) -> float:
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
            v = parse_value(row[value_index])
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
                t = _finite(point[0])
            except (TypeError, ValueError):
                raise fail([*at, 0], f"Invalid value: {point[0]!r}: not a unix time") from None
            try:
                v = _finite(point[1])
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


def _finite(raw: Any) -> float:
    """A JSON number or numeric string as a finite float (ValueError for a bool, NaN or ±Inf)."""
    value = float(raw)
    if isinstance(raw, bool) or not math.isfinite(value):
        raise ValueError(raw)
    return value
