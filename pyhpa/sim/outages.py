"""Metrics outages of a scenario: windows in which a metrics API, or one metric, answers nothing.

Why a metric by name: an outage of one adapter (say the queue-depth source of an External metric)
is the failure KEP-5679's fallback is for, and it should be shown without taking every other
metric of that API down with it. A name is written as the summary's columns name the metric:
``external/queue_depth``, ``pods/http_requests``, ``object/hits`` (``resource`` stays whole).

Scenario syntax (``outages:``; one of ``to`` and ``duration``)::

    outages:
    - {from: 10m, to: 15m, metrics: [resource, pods, object, external, all, external/<name>]}
    - {from: 30m, duration: 8m, metrics: external/queue_depth}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Collection, Mapping

from pyhpa.api.timefmt import format_duration
from pyhpa.sim.scenario_fields import check_fields

OUTAGE_KINDS = ("resource", "pods", "object", "external", "all")
NAMED_KINDS = ("pods", "object", "external")  # kinds whose metrics can be named one by one


@dataclass(frozen=True)
class Outage:
    start: float
    end: float
    kinds: frozenset[str]  # whole APIs, and "<kind>/<metric name>" for single metrics

    def covers(self, t: float, kind: str, name: str = "") -> bool:
        if not self.start <= t < self.end:
            return False
        return kind in self.kinds or "all" in self.kinds or (bool(name) and f"{kind}/{name}" in self.kinds)


def _valid_kind(text: str) -> bool:
    kind, sep, name = text.partition("/")
    return (not sep and kind in OUTAGE_KINDS) or (bool(sep) and kind in NAMED_KINDS and bool(name))


def parse_outages(loc: Any, root: Mapping[str, Any], start: float, duration: Callable[..., float],
                  length: float, served: Collection[str]) -> list[Outage]:
    """The ``outages:`` of a scenario; ``loc.fail`` names file, line and field of a bad one,
    ``duration(loc, node, path, key, ...)`` reads a duration field as the rest of the scenario.
    An outage that starts after the run (``length`` seconds) or names a metric no workload serves
    (``served``) would change nothing: a typo, so an error."""
    outages: list[Outage] = []
    raw = root.get("outages") or []
    if not isinstance(raw, list):
        raise loc.fail(root, "", "outages", "expected a list of {from, to, metrics}")
    for i, o in enumerate(raw):
        if not isinstance(o, Mapping):
            raise loc.fail(raw, "outages", i, "expected a mapping with from, to, metrics")
        p = f"outages[{i}]"
        check_fields(loc, o, p, ("from", "to", "duration", "metrics"))
        t0 = duration(loc, o, p, "from", allow_zero=True)
        if t0 >= length:
            raise loc.fail(o, p, "from", f"Invalid value: {o.get('from')!r}: must be before the end of the run "
                                         f"({format_duration(length)})")
        if o.get("duration") is not None:
            if o.get("to") is not None:
                raise loc.fail(o, p, "duration", "Forbidden: give to or duration, not both")
            t1 = t0 + duration(loc, o, p, "duration")
        else:
            t1 = duration(loc, o, p, "to")
            if t1 <= t0:
                raise loc.fail(o, p, "to", "must be after from")
        kinds = o.get("metrics", ["all"])
        if isinstance(kinds, str):
            kinds = [kinds]
        for k in kinds:
            if not isinstance(k, str) or not _valid_kind(k):
                raise loc.fail(o, p, "metrics", f"Unsupported value: {k!r}: supported values: "
                               f"{', '.join(OUTAGE_KINDS)}, or {'|'.join(NAMED_KINDS)}/<metric name>")
            name = k.partition("/")[2]
            if name and name not in served:
                raise loc.fail(o, p, "metrics", f"Not found: {k!r}: no workload serves a metric named {name!r} "
                                                f"(workload metrics: {', '.join(sorted(served)) or 'none'})")
        outages.append(Outage(start + t0, start + t1, frozenset(kinds)))
    return outages
