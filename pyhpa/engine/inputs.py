"""Fetched data the engine works on: per-pod metric samples.

Values are int milli-units (upstream's ``MilliValue()``), timestamps aware datetimes and
windows float seconds, so the calculator never re-parses quantities.
"""

from __future__ import annotations

import msgspec

from datetime import datetime


class PodMetric(msgspec.Struct):
    """One pod's sample: value in milli-units, when it was taken and over which window."""

    value: int
    timestamp: datetime
    window: float = 60.0


# pod name -> sample, as upstream's PodMetricsInfo.
PodMetricsInfo = dict[str, PodMetric]
