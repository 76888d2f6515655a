"""``timedelta`` values for the few durations the engine uses, built once.

Every sync compares times against the same handful of configured windows (CPU initialization
period, readiness delay, stabilization windows, policy periods, metric windows); building a
``timedelta`` costs more than the comparison itself, so each distinct value is built once.
"""

from __future__ import annotations

from datetime import timedelta

_BUILT: dict[float, timedelta] = {}
_MAX_KEPT = 1024


def seconds(value: float) -> timedelta:
    """``timedelta(seconds=value)``, the same object for the same value."""
    d = _BUILT.get(value)
    if d is None:
        d = timedelta(seconds=value)
        if len(_BUILT) < _MAX_KEPT:
            _BUILT[value] = d
    return d
