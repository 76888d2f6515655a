"""Go durations, metav1 timestamps and kubectl ages, checked against Go's own tables."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyhpa.api.timefmt import (
    HOUR,
    MICROSECOND,
    MILLISECOND,
    MINUTE,
    NANOSECOND,
    SECOND,
    DurationError,
    age_since,
    format_prometheus_duration,
    parse_prometheus_duration,
    TimeFormatError,
    format_duration,
    format_duration_ns,
    format_micro_time,
    format_time,
    human_duration,
    parse_duration,
    parse_duration_ns,
    parse_time,
    short_human_duration,
    to_nanoseconds,
)

# ------------------------------------------------------------------ ParseDuration

PARSE = [
    ("0", 0),
    ("5s", 5 * SECOND),
    ("30s", 30 * SECOND),
    ("1478s", 1478 * SECOND),
    ("-5s", -5 * SECOND),
    ("+5s", 5 * SECOND),
    ("-0", 0),
    ("+0", 0),
    ("5.0s", 5 * SECOND),
    ("5.6s", 5 * SECOND + 600 * MILLISECOND),
    ("5.s", 5 * SECOND),
    (".5s", 500 * MILLISECOND),
    ("1.0s", SECOND),
    ("1.00s", SECOND),
    ("1.004s", SECOND + 4 * MILLISECOND),
    ("1.0040s", SECOND + 4 * MILLISECOND),
    ("100.00100s", 100 * SECOND + MILLISECOND),
    ("10ns", 10 * NANOSECOND),
    ("11us", 11 * MICROSECOND),
    ("12µs", 12 * MICROSECOND),
    ("12μs", 12 * MICROSECOND),
    ("13ms", 13 * MILLISECOND),
    ("14s", 14 * SECOND),
    ("15m", 15 * MINUTE),
    ("16h", 16 * HOUR),
    ("3h30m", 3 * HOUR + 30 * MINUTE),
    ("1h30m", 90 * MINUTE),
    ("10.5s4m", 4 * MINUTE + 10 * SECOND + 500 * MILLISECOND),
    ("-2m3.4s", -(2 * MINUTE + 3 * SECOND + 400 * MILLISECOND)),
    ("1h2m3s4ms5us6ns", HOUR + 2 * MINUTE + 3 * SECOND + 4 * MILLISECOND + 5 * MICROSECOND + 6),
    ("39h9m14.425s", 39 * HOUR + 9 * MINUTE + 14 * SECOND + 425 * MILLISECOND),
    ("52763797000ns", 52763797000),
    ("0.3333333333333333333h", 20 * MINUTE),
    ("9007199254740993ns", (1 << 53) + 1),
    ("9223372036854775807ns", (1 << 63) - 1),
    ("9223372036854775.807us", (1 << 63) - 1),
    ("9223372036s854ms775us807ns", (1 << 63) - 1),
    ("-9223372036854775808ns", -(1 << 63)),
    ("-9223372036854775.808us", -(1 << 63)),
    ("-9223372036s854ms775us808ns", -(1 << 63)),
    ("-2562047h47m16.854775808s", -(1 << 63)),
    ("0.100000000000000000000h", 6 * MINUTE),
    ("0.830103483285477580700h", 49 * MINUTE + 48 * SECOND + 372539827),
    ("1.5h", 90 * MINUTE),
]


@pytest.mark.parametrize("text,ns", PARSE)
def test_parse_duration(text, ns):
    assert parse_duration_ns(text) == ns
    assert parse_duration(text) == ns / 1e9


PARSE_ERRORS = [
    ("", 'time: invalid duration ""'),
    ("3", 'time: missing unit in duration "3"'),
    ("-", 'time: invalid duration "-"'),
    ("s", 'time: invalid duration "s"'),
    (".", 'time: invalid duration "."'),
    ("-.", 'time: invalid duration "-."'),
    (".s", 'time: invalid duration ".s"'),
    ("+.s", 'time: invalid duration "+.s"'),
    ("1d", 'time: unknown unit "d" in duration "1d"'),
    ("1.2.3s", 'time: missing unit in duration "1.2.3s"'),
    ("1hh", 'time: unknown unit "hh" in duration "1hh"'),
    ("5 s", 'time: unknown unit " s" in duration "5 s"'),
    ("\ufffd", 'time: invalid duration "\\xef\\xbf\\xbd"'),
    ("\ufffd hello \ufffd world", 'time: invalid duration "\\xef\\xbf\\xbd hello \\xef\\xbf\\xbd world"'),
    ("1é", 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'),
    ('1"', 'time: unknown unit "\\"" in duration "1\\""'),
    ("9223372036854775810ns", 'time: invalid duration "9223372036854775810ns"'),
    ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
    ("-9223372036854775809ns", 'time: invalid duration "-9223372036854775809ns"'),
    ("9223372036854776us", 'time: invalid duration "9223372036854776us"'),
    ("3000000h", 'time: invalid duration "3000000h"'),
    ("9223372036854775.808us", 'time: invalid duration "9223372036854775.808us"'),
    ("9223372036854ms775us808ns", 'time: invalid duration "9223372036854ms775us808ns"'),
    ("99999999999999999999999s", 'time: invalid duration "99999999999999999999999s"'),
]


@pytest.mark.parametrize("text,message", PARSE_ERRORS)
def test_parse_duration_errors(text, message):
    with pytest.raises(DurationError) as info:
        parse_duration_ns(text)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)


# ------------------------------------------------------------------ Duration.String()

FORMAT = [
    ("0s", 0),
    ("1ns", 1),
    ("1.1µs", 1100),
    ("2.2ms", 2200 * MICROSECOND),
    ("3.3s", 3300 * MILLISECOND),
    ("4m5s", 4 * MINUTE + 5 * SECOND),
    ("4m5.001s", 4 * MINUTE + 5001 * MILLISECOND),
    ("5h6m7.001s", 5 * HOUR + 6 * MINUTE + 7001 * MILLISECOND),
    ("8m0.000000001s", 8 * MINUTE + 1),
    ("2562047h47m16.854775807s", (1 << 63) - 1),
    ("-2562047h47m16.854775808s", -(1 << 63)),
    ("5m0s", 5 * MINUTE),
    ("30s", 30 * SECOND),
    ("1h0m0s", HOUR),
    ("1.5s", 1500 * MILLISECOND),
    ("500ms", 500 * MILLISECOND),
    ("-1.5s", -1500 * MILLISECOND),
    ("15s", 15 * SECOND),
    ("25h0m1s", 25 * HOUR + SECOND),
    ("999ns", 999),
    ("1µs", 1000),
    ("1.000001ms", MILLISECOND + 1),
]


@pytest.mark.parametrize("text,ns", FORMAT)
def test_format_duration_ns(text, ns):
    assert format_duration_ns(ns) == text


@pytest.mark.parametrize(
    "seconds,text",
    [(0, "0s"), (300, "5m0s"), (30, "30s"), (3600, "1h0m0s"), (1.5, "1.5s"), (0.5, "500ms"), (0.1, "100ms"),
     (15.0, "15s"), (5400, "1h30m0s"), (-2, "-2s"), (timedelta(minutes=5), "5m0s"),
     (timedelta(microseconds=1500), "1.5ms"), (1e-9, "1ns")],
)
def test_format_duration_seconds(seconds, text):
    assert format_duration(seconds) == text


def test_format_duration_rejects_out_of_range():
    with pytest.raises(OverflowError):
        format_duration_ns(1 << 63)
    with pytest.raises(TypeError):
        format_duration(True)


@settings(max_examples=500, deadline=None)
@given(st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1))
def test_duration_text_round_trip(ns):
    assert parse_duration_ns(format_duration_ns(ns)) == ns


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789.+-hmsunµ ", max_size=12))
def test_parse_duration_only_raises_duration_error(text):
    try:
        ns = parse_duration_ns(text)
    except DurationError:
        return
    assert -(1 << 63) <= ns < (1 << 63)


# ------------------------------------------------------------------ timestamps


@pytest.mark.parametrize(
    "text,expected",
    [
        ("2026-01-01T00:00:00Z", datetime(2026, 1, 1, tzinfo=timezone.utc)),
        ("2026-07-06T10:15:00Z", datetime(2026, 7, 6, 10, 15, tzinfo=timezone.utc)),
        ("2026-07-06T10:15:00.5Z", datetime(2026, 7, 6, 10, 15, 0, 500000, tzinfo=timezone.utc)),
        ("2026-07-06T10:15:00.123456789Z", datetime(2026, 7, 6, 10, 15, 0, 123456, tzinfo=timezone.utc)),
        ("2026-07-06T10:15:00,25Z", datetime(2026, 7, 6, 10, 15, 0, 250000, tzinfo=timezone.utc)),
        ("2026-07-06T12:15:00+02:00", datetime(2026, 7, 6, 10, 15, tzinfo=timezone.utc)),
        ("2026-07-06T08:45:00-01:30", datetime(2026, 7, 6, 10, 15, tzinfo=timezone.utc)),
        ("2024-02-29T23:59:59Z", datetime(2024, 2, 29, 23, 59, 59, tzinfo=timezone.utc)),
    ],
)
def test_parse_time(text, expected):
    got = parse_time(text)
    assert got == expected
    assert got.tzinfo == timezone.utc


@pytest.mark.parametrize(
    "text",
    ["", "2026-01-01", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00", "2026-01-01t00:00:00Z",
     "2026-01-01T00:00:00z", "2026-13-01T00:00:00Z", "2025-02-29T00:00:00Z", "2026-01-01T24:00:00Z",
     "2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z", "2026-01-01T00:00:00+2:00", "2026-01-01T00:00:00+24:00",
     "2026-01-01T00:00:00.Z", "20260101T000000Z", " 2026-01-01T00:00:00Z", "null"],
)
def test_parse_time_rejects(text):
    with pytest.raises(TimeFormatError):
        parse_time(text)


def test_format_time():
    assert format_time(datetime(2026, 1, 1, tzinfo=timezone.utc)) == "2026-01-01T00:00:00Z"
    assert format_time(datetime(2026, 7, 6, 12, 15, 0, 999999, tzinfo=timezone(timedelta(hours=2)))) == "2026-07-06T10:15:00Z"
    assert format_time(datetime(2026, 7, 6, 10, 15)) == "2026-07-06T10:15:00Z"  # naive = UTC
    assert format_micro_time(datetime(2026, 7, 6, 10, 15, 0, 5, tzinfo=timezone.utc)) == "2026-07-06T10:15:00.000005Z"
    assert format_time(parse_time("2026-07-06T08:45:00.7-01:30")) == "2026-07-06T10:15:00Z"


@settings(max_examples=300, deadline=None)
@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(timezone.utc)))
def test_time_round_trip(dt):
    assert parse_time(format_time(dt)) == dt.replace(microsecond=0)
    assert parse_time(format_micro_time(dt)) == dt


# ------------------------------------------------------------------ ages


HUMAN = [
    (-3, "<invalid>", "<invalid>"),
    (-2, "<invalid>", "<invalid>"),
    (-1.5, "0s", "0s"),
    (-1, "0s", "0s"),
    (-0.5, "0s", "0s"),
    (0, "0s", "0s"),
    (1, "1s", "1s"),
    (5, "5s", "5s"),
    (59.9, "59s", "59s"),
    (70, "70s", "1m"),
    (119, "119s", "1m"),
    (120, "2m", "2m"),
    (190, "3m10s", "3m"),
    (200, "3m20s", "3m"),
    (599, "9m59s", "9m"),
    (600, "10m", "10m"),
    (659, "10m", "10m"),
    (70 * 60, "70m", "1h"),
    (179 * 60 + 59, "179m", "2h"),
    (3 * 3600, "3h", "3h"),
    (3 * 3600 + 1800, "3h30m", "3h"),
    (7 * 3600 + 59 * 60, "7h59m", "7h"),
    (8 * 3600, "8h", "8h"),
    (47 * 3600, "47h", "1d"),
    (48 * 3600, "2d", "2d"),
    (49 * 3600, "2d1h", "2d"),
    (51 * 3600, "2d3h", "2d"),
    (76 * 3600, "3d4h", "3d"),
    ((8 * 24 + 2) * 3600, "8d", "8d"),
    (367 * 24 * 3600, "367d", "1y"),
    (364 * 24 * 3600, "364d", "364d"),
    (365 * 24 * 3600, "365d", "1y"),
    ((365 * 2 * 24 + 25) * 3600, "2y1d", "2y"),
    (365 * 2 * 24 * 3600, "2y", "2y"),
    ((365 * 8 * 24 + 2) * 3600, "8y", "8y"),
    (365 * 20 * 24 * 3600, "20y", "20y"),
]


@pytest.mark.parametrize("seconds,human,short", HUMAN)
def test_human_durations(seconds, human, short):
    assert human_duration(seconds) == human
    assert short_human_duration(seconds) == short
    assert human_duration(timedelta(seconds=seconds)) == human


def test_to_nanoseconds():
    assert to_nanoseconds(1) == SECOND
    assert to_nanoseconds(0.1) == 100 * MILLISECOND
    assert to_nanoseconds(timedelta(days=1, microseconds=1)) == 24 * HOUR + MICROSECOND


def test_age_since():
    now = datetime(2026, 7, 6, 10, 15, tzinfo=timezone.utc)
    assert age_since(None, now) == "<unknown>"
    assert age_since(datetime(2026, 7, 6, 10, 3, tzinfo=timezone.utc), now) == "12m"
    assert age_since(datetime(2026, 7, 3, 6, 15), now) == "3d4h"  # naive = UTC
    assert age_since(datetime(2026, 7, 6, 10, 15, 5, tzinfo=timezone.utc), now) == "<invalid>"
    assert age_since(datetime.now(timezone.utc)) in ("0s", "1s")


@pytest.mark.parametrize("text, seconds", [("30s", 30.0), ("1h30m", 5400.0), ("7d", 604800.0),
                                           ("1w", 604800.0), ("1y", 31536000.0), ("250ms", 0.25),
                                           ("1.5h", 5400.0)])
def test_prometheus_durations_have_days_weeks_and_years(text, seconds):
    assert parse_prometheus_duration(text) == seconds
    assert parse_prometheus_duration(format_prometheus_duration(seconds)) == seconds


@pytest.mark.parametrize("text", ["", "7", "1h 30m", "5x", "h", "-1h"])
def test_prometheus_duration_refuses_what_is_not_one(text):
    with pytest.raises(ValueError):
        parse_prometheus_duration(text)
