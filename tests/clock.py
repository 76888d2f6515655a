"""A clock a test sets by hand (``clock.t``), for code that takes a ``clock`` callable."""

from __future__ import annotations


class Clock:
    """Returns ``t``, the seconds the test last set (``start`` at first)."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self.t = start

    def __call__(self) -> float:
        return self.t
