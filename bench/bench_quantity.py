"""Quantity parse+format throughput.

Why measure it: every HPA, pod metric and resource request crossing the API server, the
controller or the simulator goes through ``Quantity.parse`` and ``str()``. ``run()`` reports
operations per second for a few spellings repeated (the common case on the wire) and for
distinct spellings. There is no parse cache: both parse every time.
"""

from __future__ import annotations

import time

from pyhpa.api.quantity import Quantity

_SAMPLES = ["100m", "500Mi", "1", "0.5", "1Gi", "250m", "2", "1536Ki", "50k", "1.5", "128974848", "0.05"]


def _rate(fn, n: int) -> float:
    started = time.perf_counter()
    fn(n)
    return n / (time.perf_counter() - started)


def _repeated(n: int) -> None:
    samples = _SAMPLES
    k = len(samples)
    for i in range(n):
        str(Quantity.parse(samples[i % k]))


def _distinct(n: int) -> None:
    parse = Quantity.parse
    for i in range(n):
        q = parse(f"{i % 100000}.{i % 7}{'m' if i & 1 else 'Mi'}")
        q.canonical()


def _milli(n: int) -> None:
    qs = [Quantity.parse(f"{i}m") for i in range(1000)]
    for i in range(n):
        qs[i % 1000].milli_value()


def _from_milli(n: int) -> None:
    for i in range(n):
        str(Quantity.from_milli(i * 1000, "BinarySI"))


def run() -> list[tuple[str, float, str]]:
    _repeated(2000)  # warm up
    return [
        ("parse_format_repeated", _rate(_repeated, 200_000), "ops/s"),
        ("parse_format_distinct", _rate(_distinct, 50_000), "ops/s"),
        ("milli_value", _rate(_milli, 200_000), "ops/s"),
        ("from_milli_format", _rate(_from_milli, 50_000), "ops/s"),
    ]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name}: {value:,.0f} {unit}")
