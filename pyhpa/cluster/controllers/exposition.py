"""Prometheus text exposition format 0.0.4 for the embedded cluster's exporters, written by
``prometheus_client`` (the library the live controller's own ``/metrics`` uses).

Why a thin layer: the exporters (:mod:`.cadvisor`, :mod:`.kube_state_metrics`,
:mod:`.app_metrics`) build families sample by sample from the simulation and the store at scrape
time; this gathers them and has the library write them (``# HELP``/``# TYPE``, escaping,
Go-style values, timestamps in milliseconds). Names and types are the real exporters', so a
counter is named with its ``_total`` as they write it.
"""

from __future__ import annotations

import re
from typing import Iterator, Mapping

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def valid_metric_name(name: str) -> bool:
    return bool(_NAME.match(name))


class Family:
    """One metric family; :meth:`add` one sample (timestamp in milliseconds, or None)."""

    def __init__(self, name: str, type_: str, help_: str) -> None:
        self.name = name
        # the library names a counter family without its _total and writes it back on
        base = name[:-len("_total")] if type_ == "counter" and name.endswith("_total") else name
        self.metric = Metric(base, help_, type_)

    def add(self, labels: Mapping[str, str], value: float, timestamp_ms: int | None = None) -> None:
        self.metric.add_sample(self.name, {k: str(v) for k, v in labels.items()}, float(value),
                               None if timestamp_ms is None else timestamp_ms / 1000)


class Exposition:
    """The families of one scrape, written in the order they were first asked for."""

    def __init__(self) -> None:
        self._families: dict[str, Family] = {}

    def family(self, name: str, type_: str, help_: str) -> Family:
        fam = self._families.get(name)
        if fam is None:
            if not valid_metric_name(name):
                raise ValueError(f"not a Prometheus metric name: {name!r}")
            fam = self._families[name] = Family(name, type_, help_)
        return fam

    def collect(self) -> Iterator[Metric]:
        for fam in self._families.values():
            yield fam.metric

    def text(self) -> str:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(self)
        return generate_latest(registry).decode()
