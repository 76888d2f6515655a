"""Go's numeric conversions, so Python ints and floats round exactly as upstream.

Upstream mixes int32, int64 and float64; Python ints never overflow, so every conversion that
upstream performs is spelled out here once.
"""

from __future__ import annotations

import math

INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def wrap_int32(x: int) -> int:
    """Go ``int32(int64)``: keep the low 32 bits."""
    return ((x + 2**31) & 0xFFFFFFFF) - 2**31


def float_to_int32(x: float) -> int:
    """Go ``int32(float64)`` on amd64: truncation; NaN/Inf/out of range give MinInt32."""
    return _truncate(x, INT32_MIN, INT32_MAX)


def float_to_int64(x: float) -> int:
    """Go ``int64(float64)`` on amd64: truncation; NaN/Inf/out of range give MinInt64."""
    return _truncate(x, INT64_MIN, INT64_MAX)


def _truncate(x: float, low: int, high: int) -> int:
    # amd64's CVTTSD2SI answers the "integer indefinite" value (the type's minimum) for NaN, ±Inf
    # and anything out of range
    if not math.isfinite(x):
        return low
    t = int(x)
    return t if low <= t <= high else low


def ceil_int32(x: float) -> int:
    """Go ``int32(math.Ceil(x))``."""
    if not math.isfinite(x):
        return INT32_MIN
    t = math.ceil(x)  # the exact integer value of Go's float64 Ceil
    return t if INT32_MIN <= t <= INT32_MAX else INT32_MIN


def fdiv(a: float, b: float) -> float:
    """IEEE float division as Go does it: x/0 is ±Inf, 0/0 is NaN."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * (math.copysign(1.0, b))
    return a / b


def idiv(a: int, b: int) -> int:
    """Go int64 division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def fceil(x: float) -> float:
    """Go ``math.Ceil``: a float, Inf and NaN pass through."""
    if not math.isfinite(x):  # NaN and ±Inf pass through
        return x
    return float(math.ceil(x))
