"""Go's numeric conversions (NaN/Inf and overflow to the minimum) against their definitions."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from pyhpa.api.quantity import Quantity
from pyhpa.engine import gomath


def _reference_float_to_int32(x: float) -> int:
    if math.isnan(x) or math.isinf(x):
        return gomath.INT32_MIN
    t = int(x)
    return gomath.INT32_MIN if t > gomath.INT32_MAX or t < gomath.INT32_MIN else t


@settings(max_examples=500, deadline=None)
@given(x=st.floats(allow_nan=True, allow_infinity=True) | st.floats(min_value=-3e9, max_value=3e9))
def test_go_conversions_equal_their_definitions(x):
    assert gomath.float_to_int32(x) == _reference_float_to_int32(x)
    assert gomath.ceil_int32(x) == (gomath.INT32_MIN if math.isnan(x) or math.isinf(x)
                                    else _reference_float_to_int32(float(math.ceil(x))))
    expected64 = gomath.INT64_MIN if math.isnan(x) or math.isinf(x) else (
        gomath.INT64_MIN if not gomath.INT64_MIN <= int(x) <= gomath.INT64_MAX else int(x))
    assert gomath.float_to_int64(x) == expected64
    f = gomath.fceil(x)
    assert (math.isnan(f) and math.isnan(x)) or f == (x if math.isinf(x) else float(math.ceil(x)))


def test_quantity_remembers_its_milli_value():
    q = Quantity.parse("1500m")
    assert q.milli_int64() == 1500 and q.milli_int64() == 1500
    assert Quantity.parse("1e20").milli_int64() == gomath.INT64_MAX
    assert Quantity.parse("-1e20").milli_int64() == gomath.INT64_MIN
