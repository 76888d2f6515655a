"""Kubernetes ``resource.Quantity``, exact.

Why a port and not ``Decimal``: every number an HPA reads or writes (targets, usages, requests,
tolerances) is a Quantity, and what the API server echoes back, what ``kubectl get hpa`` prints
and what the controller computes all depend on apimachinery's precise rules: which suffix family
an input belongs to, rounding up to nano, capping binary values at 2^63-1, rounding ``MilliValue``
up, and the canonical spelling (``1.5`` -> ``1500m``, ``1024Mi`` -> ``1Gi``). A generic decimal type
gets several of these subtly wrong, so the rules are reproduced here one by one.

Model. A Quantity keeps the value the way Go keeps it: an integer ``unscaled`` and a base-10
exponent (value = unscaled * 10**exponent), plus the *format* (``DecimalSI``, ``BinarySI`` or
``DecimalExponent``) that the input's suffix selected. Go's exact internal pair is kept (not a
normalised one) because ``AsApproximateFloat64`` - used for ``behavior.*.tolerance`` - multiplies
exactly that pair, and ``3 * 0.1`` is not ``0.3`` in floating point.

Printing. ``canonical()`` is apimachinery's canonical form. ``str(q)`` is what Go's ``String()``
(and so ``MarshalJSON``) returns: for inputs taken by the parser's fast path whose digits look
canonical Go remembers and re-emits the *input text* verbatim, even when it is not canonical
(``"1.250"``, ``"+1"``, ``"01"``, ``"1E3"``; kubernetes#138165). We reproduce that, because it is what
a real API server stores and echoes.
"""

from __future__ import annotations

import math
import re
import sys
from decimal import Decimal
from types import MappingProxyType
from typing import Any

__all__ = [
    "BINARY_SI",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "FORMATS",
    "Quantity",
    "QuantityError",
    "quantity_dec_hook",
    "quantity_enc_hook",
]

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"
FORMATS = frozenset({DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT})

# The three error texts of apimachinery's ParseQuantity, verbatim: API servers put them in
# their 400/422 responses when a manifest carries a bad quantity.
ERR_FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)

_DEC_SUFFIXES = MappingProxyType({"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18})
_BIN_SUFFIXES = MappingProxyType({"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60})
_DEC_BY_EXP = MappingProxyType({v: k for k, v in _DEC_SUFFIXES.items()})
_BIN_BY_TIMES = MappingProxyType({0: "", 1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi", 6: "Ei"})

# Same language as Go's hand-written scanner (sign, digits, optional fraction, suffix letters,
# optional sign and digits); a string that does not match is ErrFormatWrong.
_SHAPE = re.compile(r"([+-]?)(0*)([0-9]*)(?:(\.)([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)")

# Python refuses int<->str conversions beyond 4300 digits by default; quantities have no such
# limit in Go, so longer digit strings are converted piecewise.
_CHUNK = 4000
# Beyond this many decimal digits an integer conversion (value(), milli_value(), binary
# printing) would take a noticeable time and memory; Go's int64 results are long garbage there.
_MAX_INT_DIGITS = 100_000


class QuantityError(ValueError):
    """A string that apimachinery's ``ParseQuantity`` rejects.

    ``go_message`` is Go's error text (what an API server reports); ``str()`` adds the input.
    """

    def __init__(self, go_message: str, text: Any = None) -> None:
        self.go_message = go_message
        self.input = text
        detail = go_message if text is None else f"invalid quantity {text!r}: {go_message}"
        super().__init__(detail)

    def __reduce__(self):  # keep pickling working with the two-argument constructor
        return (type(self), (self.go_message, self.input))


def _int_from_digits(digits: str) -> int:
    if len(digits) <= _CHUNK:
        return int(digits)
    value = 0
    for start in range(0, len(digits), _CHUNK):
        chunk = digits[start : start + _CHUNK]
        value = value * 10 ** len(chunk) + int(chunk)
    return value


def _int_to_str(n: int) -> str:
    if n.bit_length() < 13_000:  # < 4000 digits: str() is allowed and fast
        return str(n)
    sign = "-" if n < 0 else ""
    n = abs(n)
    parts: list[str] = []
    base = 10**_CHUNK
    while n:
        n, rem = divmod(n, base)
        parts.append(str(rem))
    out = parts[-1] + "".join(p.zfill(_CHUNK) for p in reversed(parts[:-1]))
    return sign + out


def _ndigits(n: int) -> int:
    """Decimal digits of ``abs(n)`` (n != 0) without converting to text."""
    n = abs(n)
    t = ((n.bit_length() - 1) * 1233) >> 12  # floor((bits-1)*log10 2), never too large
    while n >= 10 ** (t + 1):
        t += 1
    return t + 1


def _strip_zeros(m: int, e: int) -> tuple[int, int]:
    """Normalise ``m * 10**e`` so that ``m`` has no trailing zero (zero is ``(0, 0)``)."""
    if m == 0:
        return 0, 0
    if m % 10:
        return m, e
    while m % 1_000_000 == 0:
        m //= 1_000_000
        e += 6
    while m % 10 == 0:
        m //= 10
        e += 1
    return m, e


def _go_pow10(n: int) -> float:
    """Go's ``math.Pow10``: table products, so rounding matches Go bit for bit."""
    if 0 <= n <= 308:
        return float(f"1e{32 * (n // 32)}") * float(f"1e{n % 32}")
    if -323 <= n < 0:
        n = -n
        return float(f"1e-{32 * (n // 32)}") / float(f"1e{n % 32}")
    return math.inf if n > 0 else 0.0


def _go_json_float(f: float) -> str:
    """The text Go's ``encoding/json`` writes for a float64 (what a Go client would send)."""
    if math.isnan(f) or math.isinf(f):
        raise QuantityError(f"json: unsupported value: {f!r}", f)
    dec = Decimal(repr(f)).normalize()
    a = abs(f)
    if a == 0 or 1e-6 <= a < 1e21:
        return format(dec, "f")
    sign, digits, exp = dec.as_tuple()
    d = "".join(map(str, digits))
    sci = len(d) - 1 + int(exp)
    mant = d[0] + ("." + d[1:] if len(d) > 1 else "")
    tail = f"e-{-sci}" if sci < 0 else f"e+{sci:02d}"
    return ("-" if sign else "") + mant + tail


_osa = object.__setattr__


def _make(u: int, x: int, fmt: str, s: str | None = None) -> "Quantity":
    q = object.__new__(Quantity)
    _osa(q, "_u", u)
    _osa(q, "_x", x)
    _osa(q, "_fmt", fmt)
    _osa(q, "_s", s)
    _osa(q, "_canon", None)
    _osa(q, "_normc", None)
    _osa(q, "_milli", None)
    return q


def _parse_text(text: str) -> "Quantity":
    """``ParseQuantity``, step by step."""
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG, text)
    if text == "0":
        return _make(0, 0, DECIMAL_SI, "0")

    # Go returns zero straight away when everything after the sign is '0' (or nothing).
    rest = text[1:] if text[0] in "+-" else text
    if not rest.strip("0"):
        return _make(0, 0, DECIMAL_SI)

    m = _SHAPE.fullmatch(text)
    if m is None:
        raise QuantityError(ERR_FORMAT_WRONG, text)
    sign_s, zeros, num, dot, denom, suffix = m.groups()
    negative = sign_s == "-"
    if not num:
        num = "0"
    denom = denom or ""

    # interpret the suffix
    if suffix in _DEC_SUFFIXES:
        base, exponent, fmt = 10, _DEC_SUFFIXES[suffix], DECIMAL_SI
    elif suffix in _BIN_SUFFIXES:
        base, exponent, fmt = 2, _BIN_SUFFIXES[suffix], BINARY_SI
    else:
        em = _EXPONENT.fullmatch(suffix)
        if em is None:
            raise QuantityError(ERR_SUFFIX, text)
        parsed = int(em.group(1))
        if not _INT64_MIN <= parsed <= _INT64_MAX:  # strconv.ParseInt range error
            raise QuantityError(ERR_SUFFIX, text)
        exponent = ((parsed + (1 << 31)) % (1 << 32)) - (1 << 31)  # Go's int32(...) conversion
        base, fmt = 10, DECIMAL_EXPONENT

    # Fast path: small enough to live in an int64 with scale >= nano.
    if base == 10:
        precision = 18 - (len(num) + len(denom))
        scale = exponent
    elif len(denom) == 0:
        precision = 14 - len(num) - exponent * 3 // 10
        scale = 0
    else:
        precision = -1
        scale = 0
    if precision >= 0:
        scale -= len(denom)
        if scale >= -9:
            shifted = num + denom
            value = int(shifted)
            result = value << exponent if base == 2 else value
            if result <= _INT64_MAX:
                if negative:
                    result = -result
                cached = None
                if base == 2:
                    if value & 0x07:
                        cached = text
                elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                    cached = text
                return _make(result, scale, fmt, cached)

    # Slow path: arbitrary precision, rounded up to nano, binary capped at 2^63-1.
    all_digits = m.group(3) + denom
    if not (zeros or all_digits):
        raise QuantityError(ERR_NUMERIC, text)  # inf.Dec: "no digits read"
    mag = _int_from_digits(all_digits) if all_digits else 0
    if base == 10:
        e = exponent - len(denom)
    else:
        mag <<= exponent
        e = -len(denom)
    if mag == 0:
        return _make(0, e, fmt)
    if e < -9:
        shift = -9 - e
        if shift > _ndigits(mag):
            mag = 1
        else:
            q, r = divmod(mag, 10**shift)
            mag = q + (1 if r else 0)
        u, x = mag, -9
    elif e + 9 <= 400:
        u, x = mag * 10 ** (e + 9), -9  # inf.Dec.Round rescales to exactly nano
    else:
        u, x = mag, e  # same value; Go would expand, the float view is +Inf either way
    if fmt == BINARY_SI:
        n = _strip_zeros(u, x)
        if _cmp_norm(n, (_INT64_MAX, 0)) > 0:
            u, x = _INT64_MAX, 0
        elif _cmp_norm(n, (1, 0)) < 0:
            fmt = DECIMAL_SI  # 0 < |v| < 1: avoids rounding the binary form
    if negative:
        u = -u
    return _make(u, x, fmt)


def _cmp_norm(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Compare two normalised ``(m, e)`` pairs numerically without expanding huge exponents."""
    am, ae = a
    bm, be = b
    sa = (am > 0) - (am < 0)
    sb = (bm > 0) - (bm < 0)
    if sa != sb:
        return 1 if sa > sb else -1
    if sa == 0:
        return 0
    if ae == be:
        return (am > bm) - (am < bm)
    d = ae - be
    if abs(d) > 40:
        na = _ndigits(am) + ae
        nb = _ndigits(bm) + be
        if na != nb:
            return sa if na > nb else -sa
    if d > 0:
        am = am * 10**d
    else:
        bm = bm * 10 ** (-d)
    return (am > bm) - (am < bm)


class Quantity:
    """An immutable, hashable ``resource.Quantity``; ``==``, ``<`` and ``hash`` are numeric.

    Build with :meth:`parse`, :meth:`from_int` (``NewQuantity``) or :meth:`from_milli`
    (``NewMilliQuantity``). Compares with other quantities and with ints.
    """

    __slots__ = ("_u", "_x", "_fmt", "_s", "_canon", "_normc", "_milli")

    _u: int
    _x: int
    _fmt: str
    _s: str | None
    _canon: str | None
    _normc: tuple[int, int] | None
    _milli: int | None  # milli_int64(), remembered: the controller reads the same requests every sync

    def __init__(self, value: "str | int | float | Quantity" = 0) -> None:
        q = Quantity.parse(value)
        for name in self.__slots__:
            _osa(self, name, getattr(q, name))

    # ------------------------------------------------------------------ construction

    @staticmethod
    def parse(value: "str | int | float | Quantity") -> "Quantity":
        """``ParseQuantity`` for strings; ints and floats are read as JSON numbers are.

        A float is first spelled the way Go's JSON encoder spells it (``0.05``, ``1e+21``), so
        ``0.05`` gives ``50m`` and ``1e21`` gives ``1e+21`` just as a Go client's request would.
        """
        if isinstance(value, str):
            return _parse_text(value)
        if isinstance(value, Quantity):
            return value
        if isinstance(value, bool):
            raise TypeError("a quantity cannot be a boolean")
        if isinstance(value, int):
            return _parse_text(_int_to_str(value))
        if isinstance(value, float):
            return _parse_text(_go_json_float(value))
        raise TypeError(f"cannot make a quantity from {type(value).__name__}")

    @staticmethod
    def from_int(value: int, fmt: str = DECIMAL_SI) -> "Quantity":
        """``resource.NewQuantity(value, fmt)``."""
        _check_int(value)
        return _make(value, 0, _check_format(fmt))

    @staticmethod
    def from_milli(milli: int, fmt: str = DECIMAL_SI) -> "Quantity":
        """``resource.NewMilliQuantity(milli, fmt)``: the value is ``milli / 1000``."""
        if type(milli) is not int:  # an int subclass (not bool) passes too
            _check_int(milli)
        return _make(milli, -3, fmt if fmt in FORMATS else _check_format(fmt))

    # ------------------------------------------------------------------ pickling / copying

    def __reduce__(self):
        return (_make, (self._u, self._x, self._fmt, self._s))

    def __copy__(self) -> "Quantity":
        return self

    def __deepcopy__(self, memo: Any) -> "Quantity":
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Quantity is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Quantity is immutable")

    # ------------------------------------------------------------------ views

    @property
    def format(self) -> str:
        """``DecimalSI``, ``BinarySI`` or ``DecimalExponent``."""
        return self._fmt

    def _norm(self) -> tuple[int, int]:
        n = self._normc
        if n is None:
            n = _strip_zeros(self._u, self._x)
            _osa(self, "_normc", n)
        return n

    def is_zero(self) -> bool:
        return self._u == 0

    def sign(self) -> int:
        """-1, 0 or 1."""
        u = self._u
        return (u > 0) - (u < 0)

    def _scaled(self, scale: int) -> int:
        m, e = self._u, self._x  # value = m * 10**e (normalising first would change nothing below)
        if m == 0:
            return 0
        shift = e - scale
        if shift >= 0:
            if shift > 30 and shift + _ndigits(m) > _MAX_INT_DIGITS:
                raise OverflowError("quantity is too large to convert to an integer")
            return m * 10**shift
        d = -shift
        a = abs(m)
        if d > 30 and d > _ndigits(a):
            q = 1
        else:
            q, r = divmod(a, 10**d)
            if r:
                q += 1
        return q if m > 0 else -q

    def value(self) -> int:
        """``Value()``: the value rounded up to an integer (away from zero).

        Exact Python int; Go's int64 result overflows silently above 2^63-1 (callers that must
        mimic that apply the caps themselves).
        """
        return self._scaled(0)

    def milli_value(self) -> int:
        """``MilliValue()``: ``ceil(q * 1000)`` (away from zero for negatives), exact."""
        return self._scaled(-3)

    def int64_value(self) -> int:
        """``Value()`` as an int64, saturating at its bounds as the newest apimachinery does
        (what an exporter reports for a quantity beyond int64, such as ``1e309``)."""
        m, e = self._u, self._x
        if m == 0:
            return 0
        if _ndigits(abs(m)) + e > 19:  # |value| >= 10**19 > 2**63
            return _INT64_MAX if m > 0 else _INT64_MIN
        v = self._scaled(0)
        return _INT64_MAX if v > _INT64_MAX else _INT64_MIN if v < _INT64_MIN else v

    def milli_int64(self) -> int:
        """``MilliValue()`` as an int64, saturating at its bounds as the newest apimachinery does.

        What the controller reads: a target or sample beyond int64 must not crash a reconcile
        (older apimachinery wrapped silently; newer saturates, and saturation keeps the sign).
        """
        v = self._milli
        if v is not None:
            return v
        m, e = self._u, self._x
        if m == 0:
            v = 0
        elif _ndigits(m) + e + 3 > 20:  # |value * 1000| >= 10**19 > 2**63
            v = _INT64_MAX if m > 0 else _INT64_MIN
        else:
            v = self._scaled(-3)
            v = _INT64_MAX if v > _INT64_MAX else _INT64_MIN if v < _INT64_MIN else v
        _osa(self, "_milli", v)
        return v

    def scaled_value(self, scale: int) -> int:
        """``ScaledValue(scale)``: the value in units of ``10**scale``, rounded up."""
        return self._scaled(scale)

    def as_float(self) -> float:
        """``AsApproximateFloat64()``, bit for bit (``unscaled * Pow10(exponent)``)."""
        u = self._u
        try:
            base = float(u)
        except OverflowError:
            base = math.inf if u > 0 else -math.inf
        if self._x == 0:
            return base
        return base * _go_pow10(self._x)

    def as_decimal(self) -> Decimal:
        """The exact value as a :class:`decimal.Decimal`."""
        m, e = self._norm()
        return Decimal(f"{_int_to_str(m)}e{e}")

    # ------------------------------------------------------------------ text

    def canonical(self) -> str:
        """apimachinery's canonical form (``CanonicalizeBytes``), whatever the input spelling."""
        c = self._canon
        if c is None:
            c = self._compute_canonical()
            _osa(self, "_canon", c)
        return c

    def _compute_canonical(self) -> str:
        m, e = self._norm()
        if m == 0:
            return "0"
        fmt = self._fmt
        if fmt == BINARY_SI:
            if e < 0 or e > _MAX_INT_DIGITS:
                fmt = DECIMAL_SI  # not an integer: don't lose precision
            else:
                v = m * 10**e
                if -1024 < v < 1024:
                    fmt = DECIMAL_SI
                else:
                    a = abs(v)
                    times = 0
                    while a % 1024 == 0:
                        a //= 1024
                        times += 1
                    if times > 6:
                        # Go drops the suffix beyond Ei (a value-corrupting bug); keep "Ei".
                        a <<= 10 * (times - 6)
                        times = 6
                    return ("-" if v < 0 else "") + _int_to_str(a) + _BIN_BY_TIMES[times]
        r = e % 3  # lower the exponent to a multiple of three
        if r:
            m *= 10**r
            e -= r
        number = _int_to_str(m)
        if fmt == DECIMAL_SI:
            suffix = _DEC_BY_EXP.get(e)
            if suffix is not None:
                return number + suffix
        if e == 0:
            return number
        return f"{number}e{e}"

    def __str__(self) -> str:
        s = self._s
        return s if s is not None else self.canonical()

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    # ------------------------------------------------------------------ arithmetic

    def add(self, other: "Quantity") -> "Quantity":
        """``q.Add(y)`` on a copy. A zero receiver takes ``other``'s format."""
        fmt = other._fmt if self._u == 0 else self._fmt
        if other._u == 0:
            u, x = self._u, self._x
        elif self._u == 0:
            u, x = other._u, other._x
        else:
            u, x = _aligned_sum(self._u, self._x, other._u, other._x)
        return _make(u, x, fmt)

    def sub(self, other: "Quantity") -> "Quantity":
        """``q.Sub(y)`` on a copy. A zero receiver takes ``other``'s format."""
        fmt = other._fmt if self._u == 0 else self._fmt
        if other._u == 0:
            u, x = self._u, self._x
        elif self._u == 0:
            u, x = -other._u, other._x
        else:
            u, x = _aligned_sum(self._u, self._x, -other._u, other._x)
        return _make(u, x, fmt)

    def neg(self) -> "Quantity":
        """``q.Neg()`` on a copy."""
        return _make(-self._u, self._x, self._fmt)

    def cmp(self, other: "Quantity | int") -> int:
        """``q.Cmp(y)``: -1, 0 or 1 by numeric value."""
        o = _other_norm(other)
        if o is None:
            raise TypeError(f"cannot compare a quantity with {type(other).__name__}")
        return _cmp_norm(self._norm(), o)

    def __add__(self, other: "Quantity") -> "Quantity":
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.add(other)

    def __sub__(self, other: "Quantity") -> "Quantity":
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.sub(other)

    def __neg__(self) -> "Quantity":
        return self.neg()

    # ------------------------------------------------------------------ comparison

    def __eq__(self, other: object) -> bool:
        if type(other) is Quantity and other._x == self._x:  # one exponent: the mantissas decide
            return self._u == other._u
        o = _other_norm(other)
        if o is None:
            return NotImplemented
        return self._norm() == o

    def __ne__(self, other: object) -> bool:
        o = _other_norm(other)
        if o is None:
            return NotImplemented
        return self._norm() != o

    def __lt__(self, other: object) -> bool:
        o = _other_norm(other)
        return NotImplemented if o is None else _cmp_norm(self._norm(), o) < 0

    def __le__(self, other: object) -> bool:
        o = _other_norm(other)
        return NotImplemented if o is None else _cmp_norm(self._norm(), o) <= 0

    def __gt__(self, other: object) -> bool:
        o = _other_norm(other)
        return NotImplemented if o is None else _cmp_norm(self._norm(), o) > 0

    def __ge__(self, other: object) -> bool:
        o = _other_norm(other)
        return NotImplemented if o is None else _cmp_norm(self._norm(), o) >= 0

    def __hash__(self) -> int:
        m, e = self._norm()
        if e < 0:
            return hash((m, e))
        if e < 20:
            return hash(m * 10**e)
        # equal to hash(int(m * 10**e)) without building the integer
        modulus = sys.hash_info.modulus
        h = (abs(m) % modulus) * pow(10, e, modulus) % modulus
        if m < 0:
            h = -h
        return -2 if h == -1 else h


def _aligned_sum(au: int, ax: int, bu: int, bx: int) -> tuple[int, int]:
    if ax == bx:
        return au + bu, ax
    if ax > bx:
        return au * 10 ** (ax - bx) + bu, bx
    return au + bu * 10 ** (bx - ax), ax


def _other_norm(other: object) -> tuple[int, int] | None:
    if isinstance(other, Quantity):
        return other._norm()
    if isinstance(other, int) and not isinstance(other, bool):
        return _strip_zeros(other, 0)
    return None


def _check_int(value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"expected an int, got {type(value).__name__}")


def _check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise QuantityError(f"unknown quantity format {fmt!r} (want DecimalSI, BinarySI or DecimalExponent)")
    return fmt


# ---------------------------------------------------------------------- msgspec integration

# what Go's strings.TrimSpace removes (unicode.IsSpace); Python's str.strip() would also eat \x1c-\x1f
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def quantity_dec_hook(type_: Any, obj: Any) -> Any:
    """msgspec ``dec_hook``: a ``Quantity`` field accepts a JSON string or number.

    Strings are trimmed first, as Go's ``UnmarshalJSON`` does. Other types raise
    ``NotImplementedError`` so hooks can be chained.
    """
    if type_ is Quantity:
        if isinstance(obj, str):
            return _parse_text(obj.strip(_GO_SPACE))
        if isinstance(obj, (int, float, Quantity)) and not isinstance(obj, bool):
            return Quantity.parse(obj)
        raise TypeError(f"Expected a quantity string or number, got {type(obj).__name__}")
    raise NotImplementedError(f"no decoder for {type_!r}")


def quantity_enc_hook(obj: Any) -> Any:
    """msgspec ``enc_hook``: a ``Quantity`` encodes as the string Go would write."""
    if isinstance(obj, Quantity):
        return str(obj)
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")
