"""Go durations, Kubernetes timestamps and kubectl's human-readable ages.

Why Go's exact rules: durations appear in flags (``--horizontal-pod-autoscaler-sync-period=15s``),
in metric windows and in printed output (``5m0s``), and ages appear in ``kubectl get`` tables
(``3d4h``). Users and tests compare these strings byte for byte with what the real tools print,
so parsing follows ``time.ParseDuration`` (units ``ns us µs ms s m h``, fractions, a sign, bare
``0``), formatting follows ``Duration.String()``, timestamps follow ``metav1.Time`` (RFC 3339,
seconds, UTC) and ages follow apimachinery's ``duration.HumanDuration`` /
``ShortHumanDuration``. Durations are carried as integer nanoseconds internally, like Go, and
offered as float seconds at the edges.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from types import MappingProxyType

__all__ = [
    "DurationError",
    "age_since",
    "TimeFormatError",
    "format_duration",
    "format_duration_ns",
    "format_micro_time",
    "format_prometheus_duration",
    "format_time",
    "human_duration",
    "parse_duration",
    "parse_duration_ns",
    "parse_prometheus_duration",
    "parse_time",
    "short_human_duration",
    "to_nanoseconds",
]

NANOSECOND = 1
MICROSECOND = 1000
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

_UNITS = MappingProxyType({
    "ns": NANOSECOND,
    "us": MICROSECOND,
    "µs": MICROSECOND,  # U+00B5 micro sign
    "μs": MICROSECOND,  # U+03BC Greek mu
    "ms": MILLISECOND,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
})

_TWO63 = 1 << 63

# Prometheus durations (``7d``, ``1w``, ``1y``: ``model.ParseDuration`` in prometheus/common) are
# their own syntax, with days, weeks and years that Go's time.ParseDuration has not.
_PROMETHEUS_UNITS = MappingProxyType({"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0,
                                      "w": 604800.0, "y": 31536000.0})
_PROMETHEUS_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)")


class DurationError(ValueError):
    """A string ``time.ParseDuration`` rejects; ``str()`` is Go's error text."""


class TimeFormatError(ValueError):
    """A timestamp that is not RFC 3339 as ``metav1.Time`` reads it."""


def _go_time_quote(s: str) -> str:
    # the time package's own quote(): non-ASCII and control bytes become \xNN
    out = ['"']
    for ch in s:
        if ord(ch) >= 0x80 or ch < " ":
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
        else:
            if ch in '"\\':
                out.append("\\")
            out.append(ch)
    out.append('"')
    return "".join(out)


def parse_duration_ns(s: str) -> int:
    """``time.ParseDuration`` in integer nanoseconds (range of an int64)."""
    orig = s
    invalid = "time: invalid duration " + _go_time_quote(orig)
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise DurationError(invalid)
    total = 0
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if not (c == "." or "0" <= c <= "9"):
            raise DurationError(invalid)
        # leading integer
        start = i
        v = 0
        while i < n and "0" <= s[i] <= "9":
            if v > _TWO63 // 10:
                raise DurationError(invalid)
            v = v * 10 + (ord(s[i]) - 48)
            if v > _TWO63:
                raise DurationError(invalid)
            i += 1
        pre = i != start
        # fraction
        f = 0
        scale = 1.0
        post = False
        if i < n and s[i] == ".":
            i += 1
            start = i
            overflow = False
            while i < n and "0" <= s[i] <= "9":
                if not overflow:
                    if f > (_TWO63 - 1) // 10:
                        overflow = True
                    else:
                        y = f * 10 + (ord(s[i]) - 48)
                        if y > _TWO63:
                            overflow = True
                        else:
                            f = y
                            scale *= 10
                i += 1
            post = i != start
        if not pre and not post:
            raise DurationError(invalid)
        # unit
        start = i
        while i < n and not (s[i] == "." or "0" <= s[i] <= "9"):
            i += 1
        if i == start:
            raise DurationError("time: missing unit in duration " + _go_time_quote(orig))
        u = s[start:i]
        unit = _UNITS.get(u)
        if unit is None:
            raise DurationError(f"time: unknown unit {_go_time_quote(u)} in duration {_go_time_quote(orig)}")
        if v > _TWO63 // unit:
            raise DurationError(invalid)
        v *= unit
        if f > 0:
            # float64 keeps fractions of hours nanosecond-accurate, as in Go
            v += int(float(f) * (float(unit) / scale))
            if v > _TWO63:
                raise DurationError(invalid)
        total += v
        if total > _TWO63:
            raise DurationError(invalid)
    if neg:
        return -total
    if total > _TWO63 - 1:
        raise DurationError(invalid)
    return total


def parse_duration(s: str) -> float:
    """``time.ParseDuration`` in seconds (``"1h30m"`` -> ``5400.0``)."""
    return parse_duration_ns(s) / SECOND


def parse_prometheus_duration(text: str) -> float:
    """A Prometheus duration (``7d``, ``1h30m``, ``90s``; fractions allowed) in seconds; ValueError
    when ``text`` is not one."""
    raw = text.strip()
    parts = _PROMETHEUS_PART.findall(raw)
    if not parts or "".join(n + u for n, u in parts) != raw:
        raise ValueError(f"{text!r} is not a duration such as 30s, 12h or 7d")
    return sum(float(n) * _PROMETHEUS_UNITS[u] for n, u in parts)


def format_prometheus_duration(seconds: float) -> str:
    """Seconds as a Prometheus duration: whole seconds (``604800s``, exact and always valid), else
    milliseconds."""
    return f"{int(round(seconds))}s" if abs(seconds - round(seconds)) < 1e-9 else f"{int(seconds * 1000)}ms"


def _fmt_frac(v: int, prec: int) -> tuple[str, int]:
    digits = []
    printing = False
    for _ in range(prec):
        digit = v % 10
        printing = printing or digit != 0
        if printing:
            digits.append(chr(48 + digit))
        v //= 10
    if printing:
        digits.append(".")
    return "".join(reversed(digits)), v


def format_duration_ns(ns: int) -> str:
    """``Duration.String()`` of an int64 nanosecond count: ``5m0s``, ``1.5s``, ``500ms``, ``0s``."""
    ns = int(ns)
    if not -_TWO63 <= ns < _TWO63:
        raise OverflowError("duration out of the int64 nanosecond range")
    neg = ns < 0
    u = -ns if neg else ns
    if u < SECOND:
        if u == 0:
            return "0s"
        if u < MICROSECOND:
            prec, unit = 0, "ns"
        elif u < MILLISECOND:
            prec, unit = 3, "µs"
        else:
            prec, unit = 6, "ms"
        frac, u = _fmt_frac(u, prec)
        text = f"{u}{frac}{unit}"
    else:
        frac, u = _fmt_frac(u, 9)
        text = f"{u % 60}{frac}s"
        u //= 60
        if u > 0:
            text = f"{u % 60}m" + text
            u //= 60
            if u > 0:
                text = f"{u}h" + text
    return "-" + text if neg else text


def to_nanoseconds(value: "float | int | timedelta") -> int:
    """Seconds (int/float) or a timedelta as integer nanoseconds (floats rounded to the nearest)."""
    if isinstance(value, timedelta):
        return ((value.days * 86400 + value.seconds) * 1_000_000 + value.microseconds) * 1000
    if isinstance(value, bool):
        raise TypeError("a duration cannot be a boolean")
    if isinstance(value, int):
        return value * SECOND
    return round(float(value) * SECOND)


def format_duration(seconds: "float | int | timedelta") -> str:
    """``Duration.String()`` of a number of seconds (or a timedelta): ``300`` -> ``5m0s``."""
    return format_duration_ns(to_nanoseconds(seconds))


# --------------------------------------------------------------------------- timestamps

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:\d{2})"
)


def parse_time(s: str) -> datetime:
    """An RFC 3339 timestamp (``time.RFC3339`` as Go parses it) as an aware UTC datetime.

    Fractional seconds of any length are accepted (kept to the microsecond), offsets are
    converted to UTC.
    """
    m = _RFC3339.fullmatch(s) if isinstance(s, str) else None
    if m is None:
        raise TimeFormatError(f"parsing time {s!r} as RFC 3339: cannot parse")
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    frac, zone = m.group(7), m.group(8)
    if hour > 23 or minute > 59 or second > 59:
        raise TimeFormatError(f"parsing time {s!r}: hour, minute or second out of range")
    micro = int((frac or "0")[:6].ljust(6, "0"))
    if zone == "Z":
        tz = timezone.utc
    else:
        oh, om = int(zone[1:3]), int(zone[4:6])
        if oh > 23 or om > 59:
            raise TimeFormatError(f"parsing time {s!r}: time zone offset out of range")
        delta = timedelta(hours=oh, minutes=om)
        tz = timezone(-delta if zone[0] == "-" else delta)
    try:
        dt = datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)
    except ValueError as exc:
        raise TimeFormatError(f"parsing time {s!r}: {exc}") from None
    return dt.astimezone(timezone.utc)


def _utc(dt: datetime) -> datetime:
    if dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)  # naive values are taken as UTC
    return dt.astimezone(timezone.utc)


def format_time(dt: datetime) -> str:
    """``metav1.Time`` on the wire: RFC 3339, whole seconds, UTC (``2026-01-01T00:00:00Z``)."""
    t = _utc(dt)
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}Z"


def format_epoch(ts: float, *, micro: bool = False) -> str:
    """Epoch seconds as ``metav1.Time`` (or ``MicroTime`` with ``micro``): the one formatter for
    clocks kept as floats (the store, the simulation, leases)."""
    dt = datetime.fromtimestamp(ts, tz=timezone.utc)
    return format_micro_time(dt) if micro else format_time(dt)


def format_micro_time(dt: datetime) -> str:
    """``metav1.MicroTime`` on the wire (``eventTime``): ``2026-01-01T00:00:00.000000Z``."""
    t = _utc(dt)
    return (
        f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
        f".{t.microsecond:06d}Z"
    )


# --------------------------------------------------------------------------- ages


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // b
    return q if a >= 0 else -q


def _go_seconds(ns: int) -> float:
    return float(_trunc_div(ns, SECOND)) + float(ns - _trunc_div(ns, SECOND) * SECOND) / 1e9


def _go_minutes(ns: int) -> float:
    return float(_trunc_div(ns, MINUTE)) + float(ns - _trunc_div(ns, MINUTE) * MINUTE) / (60 * 1e9)


def _go_hours(ns: int) -> float:
    return float(_trunc_div(ns, HOUR)) + float(ns - _trunc_div(ns, HOUR) * HOUR) / (60 * 60 * 1e9)


def _age(d: "float | int | timedelta") -> tuple[int, int, str]:
    """An age in nanoseconds and whole seconds, and what a negative one reads as (a clock skew
    of under two seconds as ``0s``, more as ``<invalid>``; empty for a real age)."""
    ns = to_nanoseconds(d)
    seconds = int(_go_seconds(ns))
    return ns, seconds, "<invalid>" if seconds < -1 else "0s" if seconds < 0 else ""


def human_duration(d: "float | int | timedelta") -> str:
    """``duration.HumanDuration`` (AGE columns, event ages): ``5s``, ``3m20s``, ``10m``, ``2d3h``.

    ``d`` is the elapsed time in seconds (or a timedelta). Up to two units, precision falling
    with age; a clock skew of under two seconds reads as ``0s``, more as ``<invalid>``.
    """
    ns, seconds, skewed = _age(d)
    if skewed:
        return skewed
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = ns // MINUTE
    if minutes < 10:
        s = (ns // SECOND) % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = ns // HOUR
    if hours < 8:
        m = (ns // MINUTE) % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def short_human_duration(d: "float | int | timedelta") -> str:
    """``duration.ShortHumanDuration``: one unit only (``45s``, ``12m``, ``5h``, ``3d``, ``2y``)."""
    ns, seconds, skewed = _age(d)
    if skewed:
        return skewed
    if seconds < 60:
        return f"{seconds}s"
    minutes = int(_go_minutes(ns))
    if minutes < 60:
        return f"{minutes}m"
    hours = int(_go_hours(ns))
    if hours < 24:
        return f"{hours}h"
    if hours < 24 * 365:
        return f"{hours // 24}d"
    return f"{int(_go_hours(ns) / 24 / 365)}y"


def age_since(timestamp: datetime | None, now: datetime | None = None) -> str:
    """kubectl's ``translateTimestampSince``: ``<unknown>`` for a missing timestamp, else
    :func:`human_duration` of ``now - timestamp`` (naive datetimes are taken as UTC)."""
    if timestamp is None:
        return "<unknown>"
    current = _utc(now) if now is not None else datetime.now(timezone.utc)
    return human_duration(current - _utc(timestamp))
