"""Prometheus text exposition format 0.0.4, as the embedded cluster's exporters write it.

Why our own writer: three small exporters (:mod:`.cadvisor`, :mod:`.kube_state_metrics`,
:mod:`.app_metrics`) write a few families each; the format is one page of rules (the Prometheus
"Exposition formats" document): a ``# HELP`` and ``# TYPE`` line per family, then its samples,
label values escaped (backslash, double quote, line feed), values as Go's ``strconv.FormatFloat``
writes them (``+Inf``, ``-Inf``, ``NaN``), an optional timestamp in milliseconds.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Mapping

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def valid_metric_name(name: str) -> bool:
    return bool(_NAME.match(name))


def escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


@dataclass
class Family:
    """One metric family: its samples are (labels, value, timestamp in ms or None)."""

    name: str
    type: str  # counter | gauge | untyped
    help: str
    samples: list[tuple[Mapping[str, str], float, int | None]] = field(default_factory=list)

    def add(self, labels: Mapping[str, str], value: float, timestamp_ms: int | None = None) -> None:
        self.samples.append((labels, value, timestamp_ms))


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

    def text(self) -> str:
        out: list[str] = []
        for fam in self._families.values():
            out.append(f"# HELP {fam.name} {_escape_help(fam.help)}")
            out.append(f"# TYPE {fam.name} {fam.type}")
            for labels, value, ts in fam.samples:
                pairs = ",".join(f'{k}="{escape_label(str(v))}"' for k, v in labels.items()
                                 if _LABEL.match(k))
                line = f"{fam.name}{{{pairs}}} {format_value(value)}" if pairs else \
                    f"{fam.name} {format_value(value)}"
                out.append(line if ts is None else f"{line} {ts}")
        return "\n".join(out) + "\n" if out else ""
