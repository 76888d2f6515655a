"""What the cluster really did: a scenario's ``observed:`` section, the yardstick of the replay check.

``pyhpa history`` writes a scenario from a workload's Prometheus history; it records the replica
count the cluster actually ran next to the load, so ``pyhpa simulate`` can say how closely the
simulated HPA follows the real one (:mod:`pyhpa.sim.replay`) and ``pyhpa tune`` how far to trust
its recommendation. Scenario syntax::

    observed:
      web:                          # a Deployment/StatefulSet of the scenario's objects
        replicas: {csv: history.csv, column: replicas}   # any series kind (pyhpa.sim.series)
        saturated:                  # optional: where observed usage is only a lower bound of demand
        - {from: 90m, to: "2026-01-05T12:00:00Z", reason: "CPU at the limit"}

``from``/``to`` take an offset from the scenario start (``90m``, ``3600``), as outages do, or an
RFC 3339 timestamp; an interval must lie in the run and end after it starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

from pyhpa.api.timefmt import format_epoch
from pyhpa.sim.scenario_fields import FieldLocator, ScenarioError, check_fields, line_at
from pyhpa.sim.series import Series, SeriesError, build_series, check_not_negative
from pyhpa.sim.traces import parse_timestamp

OBSERVED_FIELDS = ("replicas", "saturated")
SATURATED_FIELDS = ("from", "to", "reason")


@dataclass(frozen=True)
class Saturated:
    """An interval where the recorded usage was capped (CPU at its limit, pods pending): the
    demand the scenario replays there is a lower bound, so the simulated HPA may scale less."""

    start: float
    end: float
    reason: str = ""


@dataclass
class Observed:
    """One workload's observed replica count over the run, and its saturated intervals."""

    workload: tuple[str, str, str]  # (namespace, kind, name)
    replicas: Series
    saturated: list[Saturated] = field(default_factory=list)


def parse_observed(loc: FieldLocator, root: Mapping[str, Any], workloads: Sequence[Any], start: float,
                   duration: float, step: float, base_dir: Path) -> dict[tuple[str, str, str], Observed]:
    """The ``observed:`` section, keyed by workload (namespace, kind, name); empty without one."""
    raw = root.get("observed")
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or not raw:
        raise loc.fail(root, "", "observed", "expected a mapping of workload name: {replicas, saturated}")
    end = start + duration
    out: dict[tuple[str, str, str], Observed] = {}
    for name, spec in raw.items():
        path = f"observed.{name}"
        matches = [w for w in workloads if w.name == name]
        if not matches:
            names = ", ".join(sorted({w.name for w in workloads}))
            raise loc.fail(raw, "observed", name, f"Not found: no Deployment or StatefulSet named {name!r} "
                                                  f"(workloads: {names})")
        if len(matches) > 1:
            which = ", ".join(f"{w.kind} {w.namespace}/{w.name}" for w in matches)
            raise loc.fail(raw, "observed", name, f"Invalid value: {name!r} names {len(matches)} workloads ({which})")
        if not isinstance(spec, Mapping):
            raise loc.fail(raw, "observed", name, "expected a mapping with replicas, saturated")
        check_fields(loc, spec, path, OBSERVED_FIELDS)
        if spec.get("replicas") is None:
            raise loc.fail(spec, path, "replicas", "Required value: the observed replica count (a series)")

        def where(k: str, spec: Any = spec, path: str = path) -> str:
            return f"{loc.source}:{line_at(spec, 'replicas', spec['replicas'], k)}: {path}.replicas" + (f".{k}" if k else "")

        try:
            series = build_series(spec["replicas"], start=start, end=end, base_dir=base_dir, where=where)
            series.check_coverage(start, end, where(""))
            check_not_negative(series, start, end, step, where(""))
        except SeriesError as exc:
            raise ScenarioError(str(exc)) from None
        w = matches[0]
        out[(w.namespace, w.kind, w.name)] = Observed((w.namespace, w.kind, w.name), series,
                                                      _saturated(loc, spec, path, start, end))
    return out


def _saturated(loc: FieldLocator, spec: Mapping[str, Any], path: str, start: float, end: float) -> list[Saturated]:
    raw = spec.get("saturated")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise loc.fail(spec, path, "saturated", "expected a list of {from, to, reason}")
    out = []
    for i, item in enumerate(raw):
        p = f"{path}.saturated[{i}]"
        if not isinstance(item, Mapping):
            raise loc.fail(raw, f"{path}.saturated", i, "expected a mapping with from, to, reason")
        check_fields(loc, item, p, SATURATED_FIELDS)
        t0 = _time(loc, item, p, "from", start, end)
        t1 = _time(loc, item, p, "to", start, end)
        if t1 <= t0:
            raise loc.fail(item, p, "to", f"Invalid value: {item.get('to')!r}: must be after from")
        reason = item.get("reason", "")
        if not isinstance(reason, str):
            raise loc.fail(item, p, "reason", f"Invalid value: {reason!r}: expected a string")
        out.append(Saturated(t0, t1, reason))
    return out


def _time(loc: FieldLocator, node: Mapping[str, Any], path: str, key: str, start: float, end: float) -> float:
    """An offset from the start (``90m``, ``3600``) or an RFC 3339 timestamp, inside the run."""
    raw = node.get(key)
    if raw is None:
        raise loc.fail(node, path, key, "Required value: an offset from the start (90m) or an RFC 3339 time")
    try:
        if isinstance(raw, bool):
            raise ValueError("not a time")
        if isinstance(raw, datetime):
            t = (raw if raw.tzinfo else raw.replace(tzinfo=timezone.utc)).timestamp()
        else:
            t = parse_timestamp(str(raw), start)
    except Exception as exc:
        raise loc.fail(node, path, key, f"Invalid value: {raw!r}: {exc}") from None
    if not start - 1e-9 <= t <= end + 1e-9:
        raise loc.fail(node, path, key, f"Invalid value: {raw!r}: must lie in the run "
                                        f"({format_epoch(start)}..{format_epoch(end)})")
    return t
