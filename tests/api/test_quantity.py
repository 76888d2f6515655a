"""Quantity parsing, canonical text, arithmetic and msgspec hooks, against apimachinery behaviour.

Expected values come from apimachinery's own quantity tests (parse/emit tables, String()
tables, NewMilliQuantity tables) and from the documented rules; where Go's String() re-emits
the input verbatim (kubernetes#138165) the table says so.
"""

from __future__ import annotations

import copy
import math
import pickle
import re
from decimal import Decimal
from fractions import Fraction

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhpa.api.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_SUFFIX,
    Quantity,
    QuantityError,
    quantity_dec_hook,
    quantity_enc_hook,
)

Q = Quantity.parse

# input, String() (what Go emits), format, MilliValue(), Value()
TABLE = [
    ("0", "0", DECIMAL_SI, 0, 0),
    ("0n", "0", DECIMAL_SI, 0, 0),
    ("0u", "0", DECIMAL_SI, 0, 0),
    ("0m", "0", DECIMAL_SI, 0, 0),
    ("0Ki", "0", BINARY_SI, 0, 0),
    ("0k", "0", DECIMAL_SI, 0, 0),
    ("0Mi", "0", BINARY_SI, 0, 0),
    ("0M", "0", DECIMAL_SI, 0, 0),
    ("0Gi", "0", BINARY_SI, 0, 0),
    ("0T", "0", DECIMAL_SI, 0, 0),
    ("-0", "0", DECIMAL_SI, 0, 0),
    ("1", "1", DECIMAL_SI, 1000, 1),
    ("9", "9", DECIMAL_SI, 9000, 9),
    ("1Ki", "1Ki", BINARY_SI, 1024000, 1024),
    ("8Ki", "8Ki", BINARY_SI, 8192000, 8192),
    ("7Mi", "7Mi", BINARY_SI, 7340032000, 7340032),
    ("6Gi", "6Gi", BINARY_SI, 6442450944000, 6442450944),
    ("5Ti", "5Ti", BINARY_SI, 5497558138880000, 5497558138880),
    ("4Pi", "4Pi", BINARY_SI, 4503599627370496000, 4503599627370496),
    ("3Ei", "3Ei", BINARY_SI, 3458764513820540928000, 3458764513820540928),
    ("100Mi", "100Mi", BINARY_SI, 104857600000, 104857600),
    ("1536Ki", "1536Ki", BINARY_SI, 1572864000, 1572864),
    ("1024Mi", "1Gi", BINARY_SI, 1073741824000, 1073741824),
    ("2048Ki", "2Mi", BINARY_SI, 2097152000, 2097152),
    ("1.5Gi", "1536Mi", BINARY_SI, 1610612736000, 1610612736),
    ("0.5Mi", "512Ki", BINARY_SI, 524288000, 524288),
    ("100.035Ki", "102435840m", BINARY_SI, 102435840, 102436),
    ("0.05Gi", "53687091200m", BINARY_SI, 53687091200, 53687092),
    ("0.025Ti", "27487790694400m", BINARY_SI, 27487790694400, 27487790695),
    ("0.1Ki", "102400m", BINARY_SI, 102400, 103),
    (".001Ki", "1024m", BINARY_SI, 1024, 2),
    (".000001Ki", "1024u", DECIMAL_SI, 2, 1),
    (".000000001Ki", "1024n", DECIMAL_SI, 1, 1),
    (".000000000001Ki", "2n", DECIMAL_SI, 1, 1),
    ("0.000000000001Ki", "2n", DECIMAL_SI, 1, 1),
    ("5n", "5n", DECIMAL_SI, 1, 1),
    ("4u", "4u", DECIMAL_SI, 1, 1),
    ("3m", "3m", DECIMAL_SI, 3, 1),
    ("8k", "8k", DECIMAL_SI, 8000000, 8000),
    ("50k", "50k", DECIMAL_SI, 50000000, 50000),
    ("7M", "7M", DECIMAL_SI, 7000000000, 7000000),
    ("6G", "6G", DECIMAL_SI, 6000000000000, 6000000000),
    ("5T", "5T", DECIMAL_SI, 5 * 10**15, 5 * 10**12),
    ("40T", "40T", DECIMAL_SI, 4 * 10**16, 4 * 10**13),
    ("300T", "300T", DECIMAL_SI, 3 * 10**17, 3 * 10**14),
    ("2P", "2P", DECIMAL_SI, 2 * 10**18, 2 * 10**15),
    ("1E", "1E", DECIMAL_SI, 10**21, 10**18),
    ("12E", "12E", DECIMAL_SI, 12 * 10**21, 12 * 10**18),
    ("1000M", "1G", DECIMAL_SI, 10**12, 10**9),
    ("1000m", "1", DECIMAL_SI, 1000, 1),
    ("0.05", "50m", DECIMAL_SI, 50, 1),
    ("0.5", "500m", DECIMAL_SI, 500, 1),
    ("1.5", "1500m", DECIMAL_SI, 1500, 2),
    ("9.01", "9010m", DECIMAL_SI, 9010, 10),
    ("0.001", "1m", DECIMAL_SI, 1, 1),
    ("0.005", "5m", DECIMAL_SI, 5, 1),
    ("0.00500", "5m", DECIMAL_SI, 5, 1),
    ("0.0005k", "500m", DECIMAL_SI, 500, 1),
    ("0.00050k", "500m", DECIMAL_SI, 500, 1),
    (".0001k", "100m", DECIMAL_SI, 100, 1),
    ("8.1k", "8100", DECIMAL_SI, 8100000, 8100),
    ("7.123456M", "7.123456M", DECIMAL_SI, 7123456000, 7123456),
    ("6.987654321G", "6.987654321G", DECIMAL_SI, 6987654321000, 6987654321),
    ("5.444T", "5.444T", DECIMAL_SI, 5444 * 10**12, 5444 * 10**9),
    ("40.1T", "40100G", DECIMAL_SI, 401 * 10**14, 401 * 10**11),
    ("2.5P", "2500T", DECIMAL_SI, 25 * 10**17, 25 * 10**14),
    ("1.01E", "1010P", DECIMAL_SI, 101 * 10**19, 101 * 10**16),
    ("10.035M", "10.035M", DECIMAL_SI, 10035 * 10**6, 10035 * 10**3),
    ("1e3", "1e3", DECIMAL_EXPONENT, 1000000, 1000),
    ("1E6", "1E6", DECIMAL_EXPONENT, 10**9, 10**6),
    ("1e9", "1e9", DECIMAL_EXPONENT, 10**12, 10**9),
    ("1E-3", "1E-3", DECIMAL_EXPONENT, 1, 1),
    ("1e14", "100e12", DECIMAL_EXPONENT, 10**17, 10**14),
    ("1e13", "10e12", DECIMAL_EXPONENT, 10**16, 10**13),
    ("0.5e0", "500e-3", DECIMAL_EXPONENT, 500, 1),
    ("0.5e-1", "50e-3", DECIMAL_EXPONENT, 50, 1),
    ("0.5e-2", "5e-3", DECIMAL_EXPONENT, 5, 1),
    ("1.2e3", "1200", DECIMAL_EXPONENT, 1200000, 1200),
    ("1.3E+6", "1300e3", DECIMAL_EXPONENT, 1300000000, 1300000),
    ("1.40e9", "1400e6", DECIMAL_EXPONENT, 14 * 10**11, 14 * 10**8),
    ("1.53E12", "1530e9", DECIMAL_EXPONENT, 153 * 10**13, 153 * 10**10),
    ("1.7E18", "1700e15", DECIMAL_EXPONENT, 17 * 10**20, 17 * 10**17),
    # rounding up to nano
    ("3.001n", "4n", DECIMAL_SI, 1, 1),
    ("1.1E-9", "2e-9", DECIMAL_EXPONENT, 1, 1),
    ("0.0000000001", "1n", DECIMAL_SI, 1, 1),
    ("0.0000000005", "1n", DECIMAL_SI, 1, 1),
    ("0.00000000050", "1n", DECIMAL_SI, 1, 1),
    ("0.5e-9", "1e-9", DECIMAL_EXPONENT, 1, 1),
    ("0.9n", "1n", DECIMAL_SI, 1, 1),
    ("0.00000012345", "124n", DECIMAL_SI, 1, 1),
    ("0.00000012354", "124n", DECIMAL_SI, 1, 1),
    # binary values are capped at 2^63-1 (which has no binary suffix)
    ("9Ei", "9223372036854775807", BINARY_SI, 9223372036854775807000, 9223372036854775807),
    ("9223372036854775807Ki", "9223372036854775807", BINARY_SI, 9223372036854775807000, 9223372036854775807),
    # decimal values are not capped; beyond "E" the exponent form takes over
    ("1000E", "1e21", DECIMAL_SI, 10**24, 10**21),
    ("5000E", "5e21", DECIMAL_SI, 5 * 10**24, 5 * 10**21),
    ("18446744073709551616", "18446744073709551616", DECIMAL_SI, 18446744073709551616000, 18446744073709551616),
    ("1.2345", "1234500u", DECIMAL_SI, 1235, 2),
    ("1.", "1.", DECIMAL_SI, 1000, 1),
    ("1.G", "1.G", DECIMAL_SI, 10**12, 10**9),
    ("-1.5", "-1500m", DECIMAL_SI, -1500, -2),
    ("-1Ki", "-1Ki", BINARY_SI, -1024000, -1024),
    ("-9.01", "-9010m", DECIMAL_SI, -9010, -10),
    ("-0.5", "-500m", DECIMAL_SI, -500, -1),
    ("-", "0", DECIMAL_SI, 0, 0),
    ("+", "0", DECIMAL_SI, 0, 0),
    (".", "0", DECIMAL_SI, 0, 0),
]


@pytest.mark.parametrize("text,want,fmt,milli,value", TABLE, ids=[t[0] for t in TABLE])
def test_parse_table(text, want, fmt, milli, value):
    q = Q(text)
    assert str(q) == want
    assert q.format == fmt
    assert q.milli_value() == milli
    assert q.value() == value
    # the emitted text reads back as the same number
    assert Q(want) == q


def test_table_is_large_enough():
    assert len(TABLE) >= 60


# Go's String() re-emits fast-path inputs whose digits look canonical, verbatim
# (kubernetes#138165 and the golden tests of kubernetes#142052); canonical() does not.
VERBATIM = [
    ("1.001", "1.001", "1001m"),
    ("1.250", "1.250", "1250m"),
    ("1.000000001", "1.000000001", "1000000001n"),
    ("100.035k", "100.035k", "100035"),
    ("+1", "+1", "1"),
    ("01", "01", "1"),
    ("010", "010", "10"),
    ("1E3", "1E3", "1e3"),
    ("1e+21", "1e+21", "1e21"),
    ("1e03", "1e03", "1e3"),
    ("+1Ki", "+1Ki", "1Ki"),
    ("1.", "1.", "1"),
    ("1.G", "1.G", "1G"),
    ("7.123456M", "7.123456M", "7123456"),
    ("6.987654321G", "6.987654321G", "6987654321"),
    ("5.444T", "5.444T", "5444G"),
    ("10.035M", "10.035M", "10035k"),
    ("1E-3", "1E-3", "1e-3"),
]


@pytest.mark.parametrize("text,go_string,canonical", VERBATIM)
def test_verbatim_cache(text, go_string, canonical):
    q = Q(text)
    assert str(q) == go_string
    assert q.canonical() == canonical
    assert Q(canonical) == q


@pytest.mark.parametrize(
    "text",
    ["1Ki", "1Mi", "100Mi", "1023Ki", "1G", "300M", "1234567M", "3k", "1m", "80m", "1080m", "1n", "80n", "1080n",
     "1u", "1080u", "1e9", "1e-3", "1e-9", "80e-3", "300e6", "1e12", "3e3", "0"],
)
def test_canonical_inputs_are_kept(text):
    q = Q(text)
    assert str(q) == text
    assert q.canonical() == text


@pytest.mark.parametrize(
    "alternate,canonical",
    [
        ("1024Mi", "1Gi"),
        ("307200Ki", "300Mi"),
        ("1025024Mi", "1001Gi"),
        ("1024Gi", "1Ti"),
        ("1000M", "1G"),
        ("0.001T", "1G"),
        ("1000u", "1m"),
        ("1.08", "1080m"),
        ("1080000000n", "1080m"),
        ("1000000E", "1e24"),
        ("1000e-12", "1e-9"),
        ("0.001e0", "1e-3"),
        (".001e12", "1e9"),
        ("00", "0"),
        ("0.000", "0"),
    ],
)
def test_alternate_spellings_canonicalize(alternate, canonical):
    assert str(Q(alternate)) == canonical
    assert Q(alternate).canonical() == canonical


BAD = [
    ("", ERR_FORMAT_WRONG),
    ("1.1.M", ERR_FORMAT_WRONG),
    ("1+1.0M", ERR_FORMAT_WRONG),
    ("0.1mi", ERR_SUFFIX),
    ("0.1am", ERR_FORMAT_WRONG),
    ("aoeu", ERR_FORMAT_WRONG),
    (".5i", ERR_SUFFIX),
    ("1i", ERR_SUFFIX),
    ("-3.01i", ERR_SUFFIX),
    ("-3.01e-", ERR_SUFFIX),
    (" 1", ERR_FORMAT_WRONG),
    ("1 ", ERR_FORMAT_WRONG),
    ("1e", ERR_SUFFIX),
    ("1K", ERR_SUFFIX),
    ("1ki", ERR_SUFFIX),
    ("1KiB", ERR_FORMAT_WRONG),
    ("1e3e3", ERR_FORMAT_WRONG),
    ("1ee3", ERR_SUFFIX),
    ("1e+-3", ERR_FORMAT_WRONG),
    ("1-5", ERR_SUFFIX),
    ("1e99999999999999999999", ERR_SUFFIX),
    ("0x10", ERR_FORMAT_WRONG),
    ("1,5", ERR_FORMAT_WRONG),
    ("１", ERR_FORMAT_WRONG),
    ("-.e-20", ERR_NUMERIC),
    ("NaN", ERR_FORMAT_WRONG),
    ("Infinity", ERR_FORMAT_WRONG),
]


@pytest.mark.parametrize("text,go_message", BAD)
def test_bad_inputs(text, go_message):
    with pytest.raises(QuantityError) as info:
        Q(text)
    assert info.value.go_message == go_message
    assert info.value.input == text
    assert isinstance(info.value, ValueError)
    assert repr(text) in str(info.value)


def test_error_pickles():
    err = pickle.loads(pickle.dumps(QuantityError(ERR_SUFFIX, "1i")))
    assert err.go_message == ERR_SUFFIX and err.input == "1i"


def test_non_text_types_are_type_errors():
    for bad in (True, None, [1], b"1"):
        with pytest.raises(TypeError):
            Q(bad)


# ------------------------------------------------------------------ numbers as JSON sends them


@pytest.mark.parametrize(
    "number,want",
    [
        (0, "0"),
        (1, "1"),
        (-1, "-1"),
        (10, "10"),
        (1000, "1k"),
        (1024, "1024"),
        (123456789012345678901234567890, "123456789012345678901234567890"),
        (0.05, "50m"),
        (1.5, "1500m"),
        (100.0, "100"),
        (-0.0, "0"),
        (0.3, "300m"),
        (1e-7, "100e-9"),
        (1e16, "10P"),
        (1e21, "1e+21"),  # Go's JSON spelling, cached verbatim like a Go client's request
        (2.5e-7, "250e-9"),
    ],
)
def test_json_numbers(number, want):
    assert str(Q(number)) == want


def test_floats_reject_nan_and_inf():
    for f in (math.nan, math.inf, -math.inf):
        with pytest.raises(QuantityError):
            Q(f)


# ------------------------------------------------------------------ constructors


@pytest.mark.parametrize(
    "milli,fmt,want",
    [
        (1, DECIMAL_SI, "1m"),
        (1000, DECIMAL_SI, "1"),
        (1234000, DECIMAL_SI, "1234"),
        (1024, BINARY_SI, "1024m"),
        (1000000, DECIMAL_EXPONENT, "1e3"),
        (1024 * 1024, BINARY_SI, "1048576m"),
        (1073741824000, BINARY_SI, "1Gi"),
        (52428800000, BINARY_SI, "50Mi"),
        (51200000000, DECIMAL_SI, "51200k"),
        (0, BINARY_SI, "0"),
        (-1500, DECIMAL_SI, "-1500m"),
        (2**63 - 1, DECIMAL_SI, "9223372036854775807m"),
    ],
)
def test_from_milli(milli, fmt, want):
    q = Quantity.from_milli(milli, fmt)
    assert str(q) == want
    assert q.milli_value() == milli
    assert q.format == fmt


@pytest.mark.parametrize(
    "value,fmt,want",
    [
        (1, DECIMAL_SI, "1"),
        (1000, DECIMAL_SI, "1k"),
        (1234000, DECIMAL_SI, "1234k"),
        (1024, BINARY_SI, "1Ki"),
        (1000000, DECIMAL_EXPONENT, "1e6"),
        (1024 * 1024, BINARY_SI, "1Mi"),
        (1023, BINARY_SI, "1023"),
        (1025, BINARY_SI, "1025"),
        (5, BINARY_SI, "5"),
        (-2048, BINARY_SI, "-2Ki"),
    ],
)
def test_from_int(value, fmt, want):
    q = Quantity.from_int(value, fmt)
    assert str(q) == want
    assert q.value() == value


def test_constructor_validation():
    with pytest.raises(QuantityError):
        Quantity.from_int(1, "Decimal")
    with pytest.raises(TypeError):
        Quantity.from_milli(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Quantity.from_int(True)  # type: ignore[arg-type]
    assert str(Quantity("100m")) == "100m"
    assert Quantity() == 0


# ------------------------------------------------------------------ accessors


@pytest.mark.parametrize(
    "text,milli",
    [
        ("1.0005", 1001),  # MilliValue rounds fractional milli-units up
        ("1.0001", 1001),
        ("1n", 1),
        ("999999n", 1),
        ("1000001n", 2),
        ("999999999n", 1000),
        ("1000000001n", 1001),
        ("1Ki", 1024000),
        ("-1.0005", -1001),  # away from zero (int64 path of ScaledValue)
        ("-1n", -1),
    ],
)
def test_milli_value_rounds_up(text, milli):
    assert Q(text).milli_value() == milli


def test_scaled_value():
    assert Q("1").scaled_value(-3) == 1000
    assert Q("1").scaled_value(-9) == 10**9
    assert Q("1500m").scaled_value(3) == 1
    assert Q("1M").scaled_value(3) == 1000
    assert Q("1e400").value() == 10**400


def test_overflowing_integer_view_raises():
    with pytest.raises(OverflowError):
        Q("1e200000").value()
    assert Q("1e-200000").value() == 1  # far below 1: rounds up to one


@pytest.mark.parametrize(
    "text,expected",
    [
        ("0.05", 0.05),
        ("0.3", 3 * 0.1),  # Go: unscaled 3 times Pow10(-1)
        ("1.001", 1001 * 0.001),
        ("1.5Gi", 1610612736.0),
        ("100m", 0.1),
        ("1e400", math.inf),
        ("-1e400", -math.inf),
        ("0e400", math.nan),  # Go computes 0 * Pow10(400) = 0 * +Inf
        ("1e-400", 1e-9),
        ("0", 0.0),
    ],
)
def test_as_float_matches_go(text, expected):
    got = Q(text).as_float()
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == expected


def test_as_float_of_tolerance_spelling_differs_like_go():
    # AsApproximateFloat64 multiplies Go's own (unscaled, exponent) pair
    assert Q("0.3").as_float() == 0.30000000000000004
    assert Q("300m").as_float() == 300 * 0.001
    assert Q("0.1").as_float() == 0.1


def test_sign_and_zero():
    assert Q("-1m").sign() == -1
    assert Q("0Ki").sign() == 0
    assert Q("5").sign() == 1
    assert Q("0").is_zero() and not Q("1n").is_zero()


def test_as_decimal():
    from decimal import Decimal

    assert Q("1.5Ki").as_decimal() == Decimal("1536")
    assert Q("3.001n").as_decimal() == Decimal("4e-9")


# ------------------------------------------------------------------ arithmetic


@pytest.mark.parametrize("text", ["100m", "1Gi"])
def test_add_and_sub_zero_preserve_suffix(text):
    zero = Q("0")
    value = Q(text)
    assert str(value.add(zero)) == text
    assert str(zero.add(value)) == text
    assert str(value.sub(zero)) == text
    assert str(zero.sub(value)) == str(value.neg())


def test_add_sub_values_and_formats():
    assert str(Q("1Gi").add(Q("512Mi"))) == "1536Mi"
    assert str(Q("100m") + Q("900m")) == "1"
    assert str(Q("1") - Q("1500m")) == "-500m"
    assert str(Q("1Ki") + Q("1")) == "1025"
    assert str(Q("1k") + Q("1Ki")) == "2024"
    assert (Q("1k") + Q("1Ki")).format == DECIMAL_SI
    assert (Q("0") + Q("1Ki")).format == BINARY_SI
    assert str(Q("4Ei") + Q("4Ei")) == "8Ei"
    assert str(Q("1e-9") + Q("1")) == "1000000001e-9"
    assert str(Q("+1") + Q("0")) == "1"  # arithmetic drops the remembered spelling


def test_neg():
    assert str(Q("9.01").neg()) == "-9010m"
    assert str(-Q("9.01")) == "-9010m"
    assert str(-Q("1.001")) == "-1001m"
    assert -(-Q("1Ki")) == Q("1Ki")


def test_binary_sum_beyond_ei_keeps_its_value():
    big = Q("1Ei")
    total = Q("0Ki")
    for _ in range(1024):
        total = total + big
    assert total == Quantity.from_int(1 << 70)
    assert str(total) == "1024Ei"


@pytest.mark.parametrize(
    "x,y,want",
    [("0", "0", 0), ("100m", "50m", 1), ("50m", "100m", -1), ("10000T", "100Gi", 1), ("1Ki", "1024", 0),
     ("-1", "1", -1), ("1e100", "1e99", 1), ("1e-9", "0", 1), ("-1e100", "-1e99", -1), ("999e97", "1e100", -1)],
)
def test_cmp(x, y, want):
    assert Q(x).cmp(Q(y)) == want
    assert Q(y).cmp(Q(x)) == -want
    assert (Q(x) < Q(y)) == (want < 0)
    assert (Q(x) <= Q(y)) == (want <= 0)
    assert (Q(x) > Q(y)) == (want > 0)
    assert (Q(x) >= Q(y)) == (want >= 0)
    assert (Q(x) == Q(y)) == (want == 0)
    assert (Q(x) != Q(y)) == (want != 0)


def test_equality_and_hash_are_numeric():
    assert Q("1") == Q("1000m") == Q("1e0") == Q("+1") == Q("01")
    assert hash(Q("1")) == hash(Q("1000m")) == hash(1)
    assert Q("1k") == 1000 and hash(Q("1k")) == hash(1000)
    assert hash(Q("1e30")) == hash(10**30)
    assert hash(Q("-1e30")) == hash(-(10**30))
    assert Q("1Ki") == 1024 and Q("1500m") != 1
    assert Q("1") != "1" and Q("1") != 1.0  # no silent mixing with text or floats
    assert Q("2") > 1 and Q("-1") < 0
    assert len({Q("1Gi"), Q("1024Mi"), Q("1073741824")}) == 1
    assert sorted([Q("1Gi"), Q("1"), Q("500m"), Q("1k")]) == [Q("500m"), Q("1"), Q("1k"), Q("1Gi")]
    with pytest.raises(TypeError):
        _ = Q("1") < 1.5  # type: ignore[operator]
    with pytest.raises(TypeError):
        Q("1").cmp("1")  # type: ignore[arg-type]


def test_immutable_copyable_picklable():
    q = Q("1.5Gi")
    with pytest.raises(AttributeError):
        q._u = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        q.foo = 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        del q._u
    assert copy.copy(q) is q and copy.deepcopy(q) is q
    for text in ["1.5Gi", "+1", "1.250", "0.3", "9Ei"]:
        p = pickle.loads(pickle.dumps(Q(text)))
        assert p == Q(text) and str(p) == str(Q(text)) and p.format == Q(text).format
        assert p.as_float() == Q(text).as_float()
    assert repr(Q("100m")) == "Quantity('100m')"
    assert f"{Q('1024Mi')}" == "1Gi"


# ------------------------------------------------------------------ msgspec


class Target(msgspec.Struct, rename="camel", omit_defaults=True):
    value: Quantity | None = None
    average_value: Quantity | None = None
    limits: dict[str, Quantity] = {}


def test_msgspec_convert_and_encode():
    raw = {"value": "1024Mi", "averageValue": 0.05, "limits": {"cpu": 2, "memory": " 1Gi "}}
    t = msgspec.convert(raw, Target, dec_hook=quantity_dec_hook)
    assert t.value == Q("1Gi") and str(t.value) == "1Gi"
    assert str(t.average_value) == "50m"
    assert str(t.limits["cpu"]) == "2" and str(t.limits["memory"]) == "1Gi"
    assert msgspec.to_builtins(t, enc_hook=quantity_enc_hook) == {
        "value": "1Gi",
        "averageValue": "50m",
        "limits": {"cpu": "2", "memory": "1Gi"},
    }
    out = msgspec.json.encode(t, enc_hook=quantity_enc_hook)
    assert out == b'{"value":"1Gi","averageValue":"50m","limits":{"cpu":"2","memory":"1Gi"}}'


def test_msgspec_json_decode_numbers_and_whitespace():
    dec = msgspec.json.Decoder(Target, dec_hook=quantity_dec_hook)
    t = dec.decode(b'{"value": 1, "averageValue": " 1", "limits": {"a": -1, "b": "1 ", "c": 10}}')
    assert str(t.value) == "1" and str(t.average_value) == "1"
    assert {k: str(v) for k, v in t.limits.items()} == {"a": "-1", "b": "1", "c": "10"}
    t = dec.decode(b'{"value": 1.5, "averageValue": null}')
    assert str(t.value) == "1500m" and t.average_value is None


def test_msgspec_errors_carry_the_path():
    with pytest.raises(msgspec.ValidationError) as info:
        msgspec.convert({"limits": {"cpu": "1.1.M"}}, Target, dec_hook=quantity_dec_hook)
    assert "quantities must match the regular expression" in str(info.value)
    assert "$.limits" in str(info.value)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"value": True}, Target, dec_hook=quantity_dec_hook)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"value": [1]}, Target, dec_hook=quantity_dec_hook)


def test_hooks_decline_other_types():
    with pytest.raises(NotImplementedError):
        quantity_dec_hook(complex, 1)
    with pytest.raises(NotImplementedError):
        quantity_enc_hook(object())
    assert quantity_dec_hook(Quantity, Q("1")) == Q("1")


# ------------------------------------------------------------------ properties

_SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]


@st.composite
def quantity_texts(draw):
    sign = draw(st.sampled_from(["", "", "-", "+"]))
    whole = draw(st.text("0123456789", max_size=22))
    frac = draw(st.one_of(st.none(), st.text("0123456789", max_size=14)))
    if draw(st.booleans()):
        suffix = draw(st.sampled_from(_SUFFIXES))
    else:
        suffix = draw(st.sampled_from("eE")) + draw(st.sampled_from(["", "+", "-"])) + str(draw(st.integers(0, 40)))
    text = sign + whole + ("" if frac is None else "." + frac) + suffix
    return text


def _parsed(text):
    try:
        return Q(text)
    except QuantityError:
        return None


def _reparse_keeps_text(q: Quantity) -> bool:
    """False only where Go's own String() is not a fixed point.

    A BinarySI integer >= 1024 that is not a multiple of 1024 prints as bare digits
    ("3000000"); those digits parse back as DecimalSI, which prints "3M".
    """
    return not (q.format == BINARY_SI and re.fullmatch(r"-?[0-9]+", str(q)) and str(q).endswith("000"))


def _check_text_round_trip(q: Quantity) -> None:
    s = str(q)
    again = Q(s)
    assert again == q
    if _reparse_keeps_text(q):
        assert str(again) == s
    else:
        assert str(again) == again.canonical() and again.format == DECIMAL_SI
    # after one trip the text is always a fixed point
    assert str(Q(str(again))) == str(again)
    c = q.canonical()
    assert Q(c) == q
    if _reparse_keeps_text(q):
        assert Q(c).canonical() == c
        assert str(Q(c)) == c


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(quantity_texts())
def test_round_trip_through_text(text):
    q = _parsed(text)
    if q is None:
        return
    _check_text_round_trip(q)


def test_binary_integer_text_is_not_a_fixed_point_in_go_either():
    q = Q("2929.6875Ki")
    assert q == 3000000 and q.format == BINARY_SI
    assert str(q) == "3000000"
    assert str(Q(str(q))) == "3M"
    assert str(Quantity.from_milli(3125000000, BINARY_SI)) == "3125000"
    assert str(Q("3125000")) == "3125k"


def _exact(text: str) -> Fraction:
    """Reference value of a grammar-valid text, before nano rounding and binary capping."""
    neg = text.startswith("-")
    body = text.lstrip("+-")
    i = 0
    while i < len(body) and (body[i].isdigit() or body[i] == "."):
        i += 1
    number, suffix = body[:i], body[i:]
    value = Fraction(number) if number not in ("", ".") else Fraction(0)
    if suffix in ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"):
        value *= 1024 ** ("KMGTPE".index(suffix[0]) + 1)
    elif suffix and suffix[0] in "eE" and len(suffix) > 1:
        value *= Fraction(10) ** int(suffix[1:])
    elif suffix:
        value *= Fraction(10) ** {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}[suffix]
    return -value if neg else value


def _ceil_away(x: Fraction) -> int:
    return math.ceil(x) if x >= 0 else math.floor(x)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(quantity_texts())
def test_value_matches_reference(text):
    q = _parsed(text)
    if q is None:
        return
    exact = _exact(text)
    got = Fraction(q.as_decimal())
    magnitude = abs(exact)
    if magnitude != 0 and magnitude < Fraction(1, 10**9):
        assert abs(got) == Fraction(1, 10**9)
    elif q.format == BINARY_SI and magnitude > 2**63 - 1:
        assert abs(got) == 2**63 - 1
    else:
        rounded = Fraction(math.ceil(magnitude * 10**9), 10**9)
        assert abs(got) == rounded
    assert q.milli_value() == _ceil_away(got * 1000)
    assert q.value() == _ceil_away(got)
    assert q.sign() == (got > 0) - (got < 0)


@settings(max_examples=300, deadline=None)
@given(quantity_texts(), quantity_texts())
def test_arithmetic_and_order_match_reference(a, b):
    qa, qb = _parsed(a), _parsed(b)
    if qa is None or qb is None:
        return
    fa, fb = Fraction(qa.as_decimal()), Fraction(qb.as_decimal())
    assert Fraction((qa + qb).as_decimal()) == fa + fb
    assert Fraction((qa - qb).as_decimal()) == fa - fb
    assert qa.cmp(qb) == (fa > fb) - (fa < fb)
    assert (qa == qb) == (fa == fb)
    if qa == qb:
        assert hash(qa) == hash(qb)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=30))
def test_arbitrary_text_only_raises_quantity_error(text):
    try:
        q = Q(text)
    except QuantityError:
        return
    assert Q(str(q)) == q


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="0123456789.+-eEinumkKMGTP ", max_size=16))
def test_grammar_alphabet_only_raises_quantity_error(text):
    try:
        q = Q(text)
    except QuantityError:
        return
    assert Q(str(q)) == q
    assert Q(q.canonical()) == q


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(2**63), max_value=2**63 - 1), st.sampled_from([DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT]))
def test_from_milli_round_trips(milli, fmt):
    # int64 like Go's NewMilliQuantity: larger BinarySI values would be capped on re-parse
    q = Quantity.from_milli(milli, fmt)
    assert q.milli_value() == milli
    _check_text_round_trip(q)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_parse_like_their_json_text(f):
    q = Q(f)
    shortest = Fraction(Decimal(repr(f)))  # the digits a JSON encoder writes
    nanos = abs(shortest) * 10**9
    want = Fraction(math.ceil(nanos), 10**9) * (1 if shortest >= 0 else -1)
    assert Fraction(q.as_decimal()) == want
    _check_text_round_trip(q)


@pytest.mark.parametrize("text,milli", [
    ("1", 1000), ("1.5", 1500), ("0.1m", 1), ("-0.1m", -1), ("9223372036854775", 9223372036854775000),
    ("9223372036854776", 2**63 - 1), ("1e308", 2**63 - 1), ("1e400", 2**63 - 1), ("-1e400", -(2**63)),
    ("16Ei", 2**63 - 1), ("1n", 1), ("0", 0),
])
def test_milli_int64_saturates_like_newest_apimachinery(text, milli):
    assert Q(text).milli_int64() == milli
