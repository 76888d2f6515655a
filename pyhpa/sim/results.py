"""What a simulation run produces: per-HPA sync columns, per-workload traces, the whole result.

Each HPA's timeline has a row for the start (before any sync) and one per sync, kept as numbers
in arrays (``SyncLog``), not as objects: a long run with many HPAs keeps a few dozen bytes per
sync. These objects cross process boundaries (``pyhpa simulate --jobs``) pickled.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterator, NamedTuple

from pyhpa.workload.model import SimPod
from pyhpa.sim.scenario import Scenario


@dataclass
class ScaleEvent:
    t: float
    old: int
    new: int
    reason: str
    message: str
    proposal: int | None = None  # the metrics' proposal, where stabilization or a limit made it differ from new


class SyncRecord(NamedTuple):
    """One HPA after one sync, as the timeline shows it (rebuilt from the run's columns)."""

    t: float
    demand: float | None
    capacity: float | None
    replicas: int | None
    ready: int | None
    desired: int | None
    currents: tuple[Any, ...]  # each metric's current value (None when the status has none)
    conditions: tuple[tuple[str, str, str | None], ...]  # (type, status, reason)
    events: tuple[str, ...]  # "type reason: message"


_NONE_INT = -(2**63)  # None in a 64-bit integer column
_NONE_COUNT = -1  # None in a count column (counts are never negative)


class SyncLog:
    """One HPA's per-sync figures in two arrays (floats; counts and whole percents), a row of
    each per sync: a long run with many HPAs keeps a few dozen bytes per sync instead of objects
    (``record(i)`` gives the row form). The sync times are one array shared by every HPA of the
    run (each is reconciled at every sync)."""

    def __init__(self, times: array, metric_units: list[str], capacity: Capacity | None) -> None:
        self.t = times
        self.capacity = capacity
        # Utilization currents are whole percents (ints), other targets quantities (floats).
        self._is_int = [unit == "%" for unit in metric_units]
        self._floats = array("d")  # per sync: demand (NaN: none), then the float currents (NaN: none)
        self._ints = array("q")  # per sync: replicas, ready, desired (-1: none), conditions, int currents
        self._nf = 1 + sum(1 for x in self._is_int if not x)
        self._ni = 4 + sum(1 for x in self._is_int if x)
        self.condition_sets: list[tuple[tuple[str, str, str | None], ...]] = []
        self._condition_ids: dict[tuple, int] = {}
        self.events: dict[int, tuple[str, ...]] = {}  # sync index -> event lines (most syncs have none)

    def __len__(self) -> int:
        return len(self._ints) // self._ni

    def condition_id(self, conditions: tuple[tuple[str, str, str | None], ...]) -> int:
        i = self._condition_ids.get(conditions)
        if i is None:
            i = self._condition_ids[conditions] = len(self.condition_sets)
            self.condition_sets.append(conditions)
        return i

    def columns(self, currents: tuple[Any, ...]) -> tuple[tuple[float, ...], tuple[int, ...]]:
        """The metric currents as stored: (float currents, int currents), None encoded."""
        floats: list[float] = []
        ints: list[int] = []
        for is_int, value in zip(self._is_int, currents):
            if is_int:
                ints.append(_NONE_INT if value is None else value)
            else:
                floats.append(math.nan if value is None else value)
        return tuple(floats), tuple(ints)

    def append(self, demand: float | None, replicas: int | None, ready: int | None, desired: int | None,
               currents: tuple[Any, ...], condition_id: int, events: tuple[str, ...]) -> None:
        self.append_columns(demand, replicas, ready, desired, self.columns(currents), condition_id, events)

    def append_columns(self, demand: float | None, replicas: int | None, ready: int | None, desired: int | None,
                       columns: tuple[tuple[float, ...], tuple[int, ...]], condition_id: int,
                       events: tuple[str, ...]) -> None:
        """``append`` with the currents already in ``columns`` form (a status' are reused while it holds)."""
        if events:
            self.events[len(self)] = events
        floats, ints = columns
        self._floats.append(math.nan if demand is None else demand)
        if floats:
            self._floats.extend(floats)
        self._ints.extend((_NONE_COUNT if replicas is None else replicas, _NONE_COUNT if ready is None else ready,
                           _NONE_COUNT if desired is None else desired, condition_id))
        if ints:
            self._ints.extend(ints)

    def condition_set_counts(self, first: int = 0) -> dict[tuple[tuple[str, str, str | None], ...], int]:
        """How many rows from ``first`` on carried each set of conditions (one pass over the column)."""
        ids = self._ints[first * self._ni + 3::self._ni]
        counts = Counter(ids)
        return {self.condition_sets[i]: n for i, n in counts.items()}

    def raw_columns(self) -> tuple[array, array, int, int, list[bool]]:
        """(floats, ints, floats per sync, ints per sync, which metric currents are ints) for
        the columnar writers: per sync, floats hold demand then the float currents (NaN: none),
        ints hold replicas, ready, desired (-1: none), the condition set, then the int currents
        (``-2**63``: none)."""
        return self._floats, self._ints, self._nf, self._ni, list(self._is_int)

    def record(self, i: int) -> SyncRecord:
        nf, ni = self._nf, self._ni
        floats = self._floats[i * nf:(i + 1) * nf]
        ints = self._ints[i * ni:(i + 1) * ni]
        ready = _count(ints[1])
        cap = self.capacity
        demand = floats[0]
        currents: list[Any] = []
        fi, ii = 1, 4
        for is_int in self._is_int:
            if is_int:
                v = ints[ii]
                currents.append(None if v == _NONE_INT else v)
                ii += 1
            else:
                x = floats[fi]
                currents.append(None if x != x else x)
                fi += 1
        return SyncRecord(
            self.t[i], None if demand != demand else demand,
            cap.of(ready) if cap is not None and ready is not None else None,
            _count(ints[0]), ready, _count(ints[2]), tuple(currents),
            self.condition_sets[ints[3]], self.events.get(i, ()),
        )


def _count(x: int) -> int | None:
    return None if x == _NONE_COUNT else x


@dataclass
class HpaRun:
    """One HPA's timeline: its per-sync columns, rendered as rows on demand (``report.timeline_row``)."""

    key: str
    target: tuple[str, str, str]  # (namespace, kind, name)
    start: float = 0.0
    name: str = ""  # "namespace/name" as the timeline shows it
    metrics: list[dict[str, Any]] = field(default_factory=list)  # per spec metric: metric, target, unit
    log: SyncLog = field(default_factory=lambda: SyncLog(array("d"), [], None))
    scale_events: list[ScaleEvent] = field(default_factory=list)
    custom_metrics: list[Any] = field(default_factory=list)  # the spec's Pods/Object/External metrics

    @property
    def records(self) -> list[SyncRecord]:
        return [self.log.record(i) for i in range(len(self.log))]

    def iter_rows(self) -> Iterator[dict[str, Any]]:
        from pyhpa.sim.report import timeline_row

        for i in range(len(self.log)):
            yield timeline_row(self, self.log.record(i))

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every row, built on each access (long runs should use ``iter_rows``)."""
        return list(self.iter_rows())

    @property
    def metric_labels(self) -> list[str]:
        return [m["metric"] for m in self.metrics]


@dataclass
class WorkloadTrace:
    """Per tick: demand (in the model's demand units), spec replicas, pods, Ready pods, and the
    CPU one Ready pod uses (millicores, by the workload model; its utilization is that over
    ``cpu_request``)."""

    key: tuple[str, str, str]
    demand_signal: str | None
    capacity: Capacity | None
    cpu_request: float | None = None  # the pod's CPU request (millicores)
    times: array = field(default_factory=lambda: array("d"))  # shared by the run's workloads
    demand: array = field(default_factory=lambda: array("d"))
    replicas: array = field(default_factory=lambda: array("i"))
    ready: array = field(default_factory=lambda: array("i"))
    ready_pod_cpu: array = field(default_factory=lambda: array("d"))
    pods: list[SimPod] = field(default_factory=list)  # every pod that existed during the run
    # (t, message) of each FailedCreate event: a quota refused its pods (pyhpa.sim.admission)
    failed_creates: list[tuple[float, str]] = field(default_factory=list)

    @property
    def capacity_per_replica(self) -> float | None:
        return self.capacity.per_replica if self.capacity is not None else None

    def ready_capacity(self) -> list[float] | None:
        """Demand the Ready pods served at each tick (None without a capacity)."""
        cap = self.capacity
        return None if cap is None else [cap.of(r) for r in self.ready]


@dataclass
class SimResult:
    scenario: Scenario
    label: str
    hpas: list[HpaRun]
    workloads: dict[tuple[str, str, str], WorkloadTrace]
    wall_seconds: float = 0.0
    reconciles: int = 0

    @property
    def sim_seconds_per_wall_second(self) -> float:
        return self.scenario.duration / self.wall_seconds if self.wall_seconds > 0 else math.inf


@dataclass(frozen=True)
class Capacity:
    """Demand the Ready pods of a workload serve: ``ready x per_replica - overhead``, never below 0.

    ``overhead`` is demand-equivalent CPU the workload needs whatever its load (the CPU map's
    ``base``, a workload total shared by the Ready pods): it is paid once, not per replica.
    """

    per_replica: float
    overhead: float = 0.0
    source: str = ""  # what sets it: capacityPerReplica, or the pod's CPU limit, cpuCapacity or CPU request

    def of(self, ready: int) -> float:
        if not self.overhead:
            return ready * self.per_replica
        return max(0.0, ready * self.per_replica - self.overhead)

    def pods_for(self, demand: float) -> int:
        """The fewest Ready pods whose capacity covers ``demand``."""
        return math.ceil((demand + self.overhead) / self.per_replica - 1e-9)
