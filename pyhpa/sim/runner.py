"""The simulation loop: a virtual clock driving the workload model and the real reconcile.

Nothing here sleeps. Time advances over a merged grid of *ticks* (every ``scenario.step``: load
series are sampled and the workload model updated) and *syncs* (every sync period, starting one
period after the start, as a controller that has just listed its HPAs; an HPA with its own
``spec.behavior.syncPeriodSeconds`` at that period instead: each HPA is reconciled by
the same ``reconcile_hpa`` the live controller runs, over the in-memory adapters). Between ticks
the workload model integrates usage exactly, and the metrics pipeline scrapes on its own grid.

The initial pods are created far enough before the start (startup + CPU initialization period +
one metrics window) that the run begins in a steady state: Ready pods with full metric windows.
Each HPA's timeline has a row for the start (before any sync) and one per sync, kept as numbers
in arrays (``SyncLog``), not as objects.
"""

from __future__ import annotations

import gc
import math
import time
from array import array
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Sequence

from mypy_extensions import mypyc_attr

from pyhpa.adapters.memory import MemoryCluster, workload_selector_string
from pyhpa.adapters.selector_index import IndexedSelectorRegistry
from pyhpa.api.picklable import picklable
from pyhpa.controller.ports import MetricsError
from pyhpa.engine.inputs import PodMetric
from pyhpa.api.types import (
    HorizontalPodAutoscaler,
    ObjectReferenceView,
    PodView,
    WorkloadView,
    hpa_key,
    new_scale,
)
from pyhpa.workload.model import ContainerTemplate, SimPod, Workload, to_datetime
from pyhpa.workload.params import WorkloadParams
from pyhpa.workload.pipeline import MetricsPipeline
from pyhpa.sim.report import metric_columns, metric_currents
from pyhpa.sim.schedule import UNIT, SyncTimes, period_ms, sync_offsets, sync_period_ms
from pyhpa.sim.scenario import Scenario, WorkloadModel, WorkloadObject


# --------------------------------------------------------------------------- results


@mypyc_attr(serializable=True)  # crosses process boundaries (--jobs)
@dataclass
class ScaleEvent:
    t: float
    old: int
    new: int
    reason: str
    message: str


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


@mypyc_attr(serializable=True)  # crosses process boundaries (--jobs)
class SyncLog:
    """One HPA's per-sync figures in two arrays (floats; counts and whole percents), a row of
    each per sync: a long run with many HPAs keeps a few dozen bytes per sync instead of objects
    (``record(i)`` gives the row form). The sync times are one array shared by every HPA of the
    run with the same sync period (each is reconciled at every sync of its period)."""

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


@mypyc_attr(serializable=True)  # crosses process boundaries (--jobs)
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
    # what the last record read from the status (currents in SyncLog.columns form), reused while
    # the status object is the same
    _last: tuple[Any, Any, int | None, tuple, int] | None = None

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


@mypyc_attr(serializable=True)  # crosses process boundaries (--jobs)
@dataclass
class WorkloadTrace:
    """Per tick: demand (in the model's demand units), spec replicas, pods, Ready pods."""

    key: tuple[str, str, str]
    demand_signal: str | None
    capacity: Capacity | None
    times: array = field(default_factory=lambda: array("d"))  # shared by the run's workloads
    demand: array = field(default_factory=lambda: array("d"))
    replicas: array = field(default_factory=lambda: array("i"))
    ready: array = field(default_factory=lambda: array("i"))
    pods: list[SimPod] = field(default_factory=list)  # every pod that existed during the run

    @property
    def capacity_per_replica(self) -> float | None:
        return self.capacity.per_replica if self.capacity is not None else None

    def ready_capacity(self) -> list[float] | None:
        """Demand the Ready pods served at each tick (None without a capacity)."""
        cap = self.capacity
        return None if cap is None else [cap.of(r) for r in self.ready]


@mypyc_attr(serializable=True)  # crosses process boundaries (--jobs)
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


# --------------------------------------------------------------------------- model plumbing


def params_for(model: WorkloadModel, signals: dict[str, float]) -> WorkloadParams:
    """The workload parameters at one instant, from the load signals through the model's maps."""
    return WorkloadParams(
        cpu_milli=max(0.0, model.cpu.evaluate(signals)),
        cpu_capacity_milli=model.cpu_capacity_milli,
        startup_cpu_milli=model.startup_cpu_milli,
        memory_bytes=max(0.0, model.memory.base),
        memory_shared_bytes=max(0.0, model.memory.evaluate(signals) - model.memory.base),
        startup_seconds=model.startup_seconds,
        pending_seconds=model.pending_seconds,
        termination_seconds=model.termination_seconds,
        metrics={name: max(0.0, sm.evaluate(signals)) for name, sm in model.metrics.items()},
    )


def demand_signal(model: WorkloadModel) -> str | None:
    if model.demand:
        return model.demand
    if model.cpu.signal:
        return model.cpu.signal
    for sm in model.metrics.values():
        if sm.signal:
            return sm.signal
    return None


@dataclass(frozen=True)
class Capacity:
    """Demand the Ready pods of a workload serve: ``ready x per_replica - overhead``, never below 0.

    ``overhead`` is demand-equivalent CPU the workload needs whatever its load (the CPU map's
    ``base``, a workload total shared by the Ready pods): it is paid once, not per replica.
    """

    per_replica: float
    overhead: float = 0.0

    def of(self, ready: int) -> float:
        if not self.overhead:
            return ready * self.per_replica
        return max(0.0, ready * self.per_replica - self.overhead)

    def pods_for(self, demand: float) -> int:
        """The fewest Ready pods whose capacity covers ``demand``."""
        return math.ceil((demand + self.overhead) / self.per_replica - 1e-9)


def capacity_of(obj: WorkloadObject) -> Capacity | None:
    """The workload's capacity: ``capacityPerReplica`` when set; else from the CPU map, when the
    demand signal drives CPU: N Ready pods with CPU capacity P each (``cpuCapacity``, else the pod's
    CPU request) serve demand d while ``base + per x d <= N x P``, i.e. ``N x P/per - base/per``."""
    model = obj.model
    if model.capacity_per_replica is not None:
        return Capacity(model.capacity_per_replica)
    sig = demand_signal(model)
    if sig is None or model.cpu.signal != sig or model.cpu.per <= 0:
        return None
    per_pod = model.cpu_capacity_milli
    if per_pod is None:
        from pyhpa.api.quantity import Quantity

        per_pod = sum(Quantity.parse(r["cpu"]).milli_value() for _, r in obj.containers if "cpu" in r) or None
    if per_pod is None:
        return None
    return Capacity(per_pod / model.cpu.per, max(0.0, model.cpu.base) / model.cpu.per)


def capacity_per_replica(obj: WorkloadObject) -> float | None:
    """Demand one more Ready replica serves (see :func:`capacity_of`)."""
    cap = capacity_of(obj)
    return cap.per_replica if cap is not None else None


class _SimTarget:
    """One workload: the model, its pipeline, and the view the in-memory adapters serve."""

    def __init__(self, obj: WorkloadObject, scenario: Scenario, signals0: dict[str, float]) -> None:
        self.obj = obj
        self.key = (obj.namespace, obj.kind, obj.name)
        model = obj.model
        warmup = (model.startup_seconds + scenario.config.cpu_initialization_period
                  + scenario.window + 2 * scenario.resolution)
        born = scenario.start - warmup
        born -= born % scenario.resolution  # on the scrape grid, so the first scrape is at birth
        self.workload = Workload(
            obj.namespace, obj.name, kind=obj.kind, labels=obj.labels,
            containers=[ContainerTemplate(n, r) for n, r in obj.containers],
            params=params_for(model, signals0), replicas=obj.replicas, now=born,
            pod_management_policy=obj.pod_management_policy,
        )
        self.pipeline = MetricsPipeline(self.workload, resolution=scenario.resolution, window=scenario.window, now=born)
        t = born
        while self.workload.next_change_after(t) is not None and t < scenario.start:
            t = min(self.workload.next_change_after(t) or scenario.start, scenario.start)
            self.workload.advance(t)
        self.workload.advance(scenario.start)
        self.pipeline.advance(scenario.start)
        manifest = obj.manifest
        self.view = WorkloadView(
            api_version=str(manifest.get("apiVersion") or "apps/v1"),
            kind=obj.kind,
            metadata=_meta(obj),
            spec=_spec_view(obj),
        )
        self.view.status.replicas = self.workload.status_replicas()
        self.trace = WorkloadTrace(self.key, demand_signal(model), capacity_of(obj))
        self.trace.pods.extend(self.workload.pods)
        self._view_cache: dict[tuple, PodView] = {}
        self._views_state: list[tuple] | None = None
        self._views_epoch: tuple[int, int] | None = None
        self._views: list[PodView] = []
        self._label_sets: dict[tuple, dict[str, str]] = {}
        self._groups: dict[int, tuple[list[SimPod], list[str], dict[str, str] | None]] = {}
        self._shared: tuple[int, dict[str, str] | None] = (-1, None)
        self._metrics_cache: tuple[float | None, list] = (None, [])
        self._labels: dict[str, dict[str, str]] = {}
        self.ts_cache: tuple[float | None, Any] = (None, None)

    def labels_of(self, pod: SimPod) -> dict[str, str]:
        """The pod's labels; pods with equal labels (a Deployment's) get the same, never mutated
        dict, so a selector's answer is looked up once per label set."""
        labels = self._labels.get(pod.name)
        if labels is None:
            fresh = self.workload.pod_labels(pod)
            labels = self._label_sets.setdefault(tuple(sorted(fresh.items())), fresh)
            self._labels[pod.name] = labels
            if len(self._labels) > 4 * len(self.workload.pods) + 16:
                live = {p.name for p in self.workload.pods}
                self._labels = {k: v for k, v in self._labels.items() if k in live}
                kept = {id(v) for v in self._labels.values()}
                self._label_sets = {k: v for k, v in self._label_sets.items() if id(v) in kept}
        return labels

    def shared_labels(self) -> dict[str, str] | None:
        """The one label dict every pod of the workload carries (a Deployment's pods share their
        labels), or None; found again only when the pod set changes."""
        version = self.workload._version
        if self._shared[0] != version:
            labels = [self.labels_of(p) for p in self.workload.pods]
            shared = labels[0] if labels and all(x is labels[0] for x in labels) else None
            self._shared = (version, shared)
        return self._shared[1]

    def group_labels(self, pods: list[SimPod]) -> tuple[list[str], dict[str, str] | None]:
        """(names, the label dict all of them share, or None) of a cohort's member list (lists the
        pipeline never changes once built; remembered per list)."""
        hit = self._groups.get(id(pods))
        if hit is None or hit[0] is not pods:
            labels = [self.labels_of(p) for p in pods]
            shared = labels[0] if labels and all(x is labels[0] for x in labels) else None
            hit = (pods, [p.name for p in pods], shared)
            if len(self._groups) >= 4 * len(self.workload.pods) + 16:
                self._groups.clear()
            self._groups[id(pods)] = hit
        return hit[1], hit[2]

    def pod_views(self, now: float) -> list[PodView]:
        """The pods as the API shows them at ``now``: the same list while the workload's epoch
        (pod set, and which pods run, are Ready or deleted) holds; a view is rebuilt only when
        what it shows changes (phase, readiness, deletion)."""
        epoch = self.workload.epoch(now)
        if epoch == self._views_epoch:
            return self._views
        # (name, phase is Running, Ready condition True, deletionTimestamp) per pod, in order.
        state = [(p.name, now >= p.running_at, now >= p.ready_at, p.deleted_at) for p in self.workload.pods]
        self._views_epoch = epoch
        if state == self._views_state:
            return self._views
        out = []
        cache = self._view_cache
        fresh: dict[tuple, PodView] = {}
        for pod, k in zip(self.workload.pods, state):
            view = cache.get(k)
            if view is None:
                view = self.workload.pod_view(pod, now)
                view.metadata.labels = self.labels_of(pod)  # equal content, shared dict: cheaper matching
            fresh[k] = view
            out.append(view)
        self._view_cache = fresh
        self._views_state, self._views = state, out
        return out

    def pod_metrics(self) -> list:
        ts = self.pipeline.last_scrape
        if self._metrics_cache[0] != ts:
            self._metrics_cache = (ts, self.pipeline.pod_metrics())
        return self._metrics_cache[1]

    def record(self, changes: Any) -> None:
        if changes.created:
            self.trace.pods.extend(changes.created)


class SimCluster(MemoryCluster):
    """The in-memory adapters, with shortcuts over the workload model for speed.

    ``get_resource_metric`` reads the pipeline's per-pod numbers directly instead of filtering
    PodMetrics objects; ``get_scale`` reuses each workload's rendered selector and an unchanged
    Scale; ``list_pods`` answers an unchanged pod list and selector with the list it answered
    before. Each returns what the plain :class:`MemoryCluster` returns over the same objects
    (tested); returned objects are shared, so callers must not mutate them (reconcile does not).
    Status writes replace the HPA without keeping a history (a long run would hold every one).
    """

    local: list["_SimTarget"]
    resource_outage: bool = False

    def __init__(self, hpas: Iterable[HorizontalPodAutoscaler] = (), workloads: Iterable[WorkloadView] = ()) -> None:
        super().__init__(hpas=hpas, workloads=workloads, preregister_selectors=False)
        # The live controller's namespace-indexed registry: ambiguity checks stay O(HPAs per namespace).
        self.selector_registry = _SimSelectorRegistry()
        self._preregister()
        self.local = []
        self._selector_strings: dict[int, tuple[Any, str]] = {}
        # (id(selector), id(labels)) -> (selector, labels, matches): the label dicts the model hands
        # out are never mutated and parsed selectors are interned, so a pod's answer holds until its
        # view is rebuilt. The entry keeps both objects alive, so their ids cannot be reused.
        self._matches: dict[tuple[int, int], tuple[Any, Any, bool]] = {}
        self._targets_by_ref: dict[tuple, tuple[tuple[str, str, str], WorkloadView]] = {}
        self._scales: dict[tuple, tuple] = {}  # reference -> (replicas, status replicas, rv, selector, Scale)
        # namespace -> (its targets' pod lists, their concatenation): the same list while none changed
        self.namespace_pods: dict[str, tuple[list[list[PodView]], list[PodView]]] = {}
        # (id(pod list), namespace, id(selector)) -> (pod list, selector, answer)
        self._listed: dict[tuple[int, str, int], tuple[list, Any, tuple]] = {}

    def _selects(self, selector: Any, labels: dict[str, str]) -> bool:
        hit = self._matches.get((id(selector), id(labels)))
        if hit is not None:
            return hit[2]
        ok = selector.matches(labels)
        if len(self._matches) >= 200_000:
            self._matches.clear()
        self._matches[(id(selector), id(labels))] = (selector, labels, ok)
        return ok

    async def list_pods(self, namespace: str, selector: Any) -> Sequence[PodView]:
        if self.pod_list_error is not None:
            return await super().list_pods(namespace, selector)
        pods = self.pods
        key = (id(pods), namespace, id(selector))
        hit = self._listed.get(key)
        if hit is not None and hit[0] is pods and hit[1] is selector:
            return hit[2]
        selects = self._selects
        out = []
        prev: dict[str, str] | None = None
        ok = False
        for p in pods:
            meta = p.metadata
            if (meta.namespace or "") != namespace:
                continue
            labels = meta.labels or _NO_LABELS
            if labels is not prev:
                prev, ok = labels, selects(selector, labels)
            if ok:
                out.append(p)
        answer = tuple(out)  # immutable: the engine recognises the same tuple on the next sync
        if len(self._listed) >= 10_000:
            self._listed.clear()
        self._listed[key] = (pods, selector, answer)
        return answer

    async def get_scale(self, namespace: str, ref: Any) -> Any:
        # The simulated workloads are fixed for the run: resolve each reference once (failures,
        # which raise, are not remembered).
        ref_key = (namespace, ref.kind, ref.name, ref.api_version)
        found = self._targets_by_ref.get(ref_key)
        if found is None:
            found = self._targets_by_ref[ref_key] = self._workload_for(namespace, ref)
        key, wl = found
        cached = self._selector_strings.get(id(wl))
        if cached is None or cached[0] is not wl.spec.selector:
            cached = (wl.spec.selector, workload_selector_string(wl))
            self._selector_strings[id(wl)] = cached
        replicas = wl.spec.replicas if wl.spec.replicas is not None else 1
        rv = self._resource_versions.get(key, 1)
        last = self._scales.get(ref_key)  # the reference fixes name and namespace
        if (last is not None and last[0] == replicas and last[1] == wl.status.replicas and last[2] == rv
                and last[3] is cached[1]):
            return last[4]
        scale = new_scale(ref.name, namespace, replicas, wl.status.replicas, cached[1])
        scale.metadata.resource_version = str(rv)
        self._scales[ref_key] = (replicas, wl.status.replicas, rv, cached[1], scale)
        return scale

    async def update_status(self, hpa: HorizontalPodAutoscaler) -> None:
        if self.status_update_error is not None:
            await super().update_status(hpa)  # raises
        self.hpas[hpa_key(hpa)] = hpa

    async def get_resource_metric(self, resource: str, namespace: str, selector: Any, container: str = "") -> Any:
        if self.resource_outage:
            raise MetricsError("no metrics returned from resource metrics API")
        out: dict[str, PodMetric] = {}
        first_ts = None
        found = False
        for tgt in self.local:
            if tgt.key[0] != namespace:
                continue
            pipeline = tgt.pipeline
            if pipeline.last_scrape is None:
                continue
            ts = to_datetime(pipeline.last_scrape) if tgt.ts_cache[0] != pipeline.last_scrape else tgt.ts_cache[1]
            tgt.ts_cache = (pipeline.last_scrape, ts)
            window = pipeline.window
            shared = tgt.shared_labels()
            if shared is not None:
                # Every pod carries the same label dict (a Deployment's): one selector check for all,
                # and one (never mutated) sample object per run of equal values.
                if not self._selects(selector, shared):
                    continue
                usage = pipeline.resource_usage(resource, container)
                sample: PodMetric | None = None
                for value, pods in usage:
                    found = True
                    if value is None:
                        continue
                    if sample is None or sample.value != value:
                        sample = PodMetric(value, ts, window)
                    for pod in pods:
                        out[pod.name] = sample
                if found and first_ts is None:
                    first_ts = ts
                continue
            for value, pods in pipeline.resource_usage(resource, container):
                names, labels = tgt.group_labels(pods)
                if labels is not None:  # one label dict for the whole group: one selector check
                    if not self._selects(selector, labels):
                        continue
                    found = True
                    if value is not None:
                        # A group's pods carry equal values: one (never mutated) sample serves them.
                        out.update(dict.fromkeys(names, PodMetric(value, ts, window)))
                    continue
                sample = PodMetric(value, ts, window) if value is not None else None
                for pod in pods:
                    if not self._selects(selector, tgt.labels_of(pod)):
                        continue
                    found = True
                    if sample is not None:
                        out[pod.name] = sample
            if found and first_ts is None:
                first_ts = ts
        if not found:
            raise MetricsError("no metrics returned from resource metrics API")
        return out, first_ts


_NO_LABELS: dict[str, str] = {}


class _SimSelectorRegistry(IndexedSelectorRegistry):
    """The namespace-indexed registry, answering ``hpas_selecting`` per pod label dict from a memo.

    The simulator's label dicts are never mutated and its parsed selectors are interned, so an
    answer holds until some HPA's selector actually changes; the memo is then dropped.
    """

    def __init__(self) -> None:
        super().__init__()
        self._memo: dict[tuple[str, int], tuple[dict[str, str], frozenset[str]]] = {}
        self._put: dict[str, Any] = {}  # key -> the selector object it holds (after a put)

    def register(self, key: str) -> None:
        super().register(key)
        self._memo.clear()

    def put_selector(self, key: str, selector: Any) -> None:
        if self._put.get(key) is selector:  # each HPA puts its unchanged selector every sync
            return
        bucket = self._by_ns.get(self._ns(key))
        old = bucket.get(key) if bucket is not None else None
        super().put_selector(key, selector)
        if bucket is not None and bucket.get(key) is selector:
            self._put[key] = selector
        if old is not None and old is not selector and old != selector:
            self._memo.clear()

    def remove(self, key: str) -> None:
        super().remove(key)
        self._put.pop(key, None)
        self._memo.clear()

    def hpas_selecting(self, namespace: str, labels: dict[str, str]) -> set[str]:
        hit = self._memo.get((namespace, id(labels)))
        if hit is None:
            hit = (labels, frozenset(super().hpas_selecting(namespace, labels)))
            if len(self._memo) >= 100_000:
                self._memo.clear()
            self._memo[(namespace, id(labels))] = hit
        return set(hit[1])


def _meta(obj: WorkloadObject):
    from pyhpa.api.types import ObjectMeta

    return ObjectMeta(name=obj.name, namespace=obj.namespace, labels=dict(obj.labels), annotations=obj.annotations or None)


def _spec_view(obj: WorkloadObject):
    from pyhpa.api.types import LabelSelector, LabelSelectorRequirement, WorkloadSpecView

    sel = obj.selector
    exprs = [LabelSelectorRequirement(key=e["key"], operator=e["operator"], values=e.get("values"))
             for e in sel.get("matchExpressions") or []]
    return WorkloadSpecView(
        replicas=obj.replicas,
        selector=LabelSelector(match_labels=dict(sel.get("matchLabels") or {}) or None, match_expressions=exprs or None),
    )


# --------------------------------------------------------------------------- the loop


_FREEZE_EVERY = 5000  # reconciles between two gc.freeze() calls
_YOUNG_GENERATION = 20000  # gc threshold 0 (allocations between young collections) during a run


def _signals_read(workloads: list[WorkloadObject]) -> set[str]:
    """The load signals the workloads' models map onto CPU, memory, custom metrics or demand."""
    out: set[str] = set()
    for obj in workloads:
        model = obj.model
        for sm in (model.cpu, model.memory, *model.metrics.values()):
            if sm.signal:
                out.add(sm.signal)
        sig = demand_signal(model)
        if sig:
            out.add(sig)
    return out


def _grid(scenario: Scenario, sync_periods: set[int]) -> list[tuple[float, bool, frozenset[int]]]:
    """(time, is_tick, the sync periods due then) over the run, merged and in order."""
    unit = UNIT  # milliseconds, to merge grids without float drift
    total = int(round(scenario.duration * unit))
    step = max(1, int(round(scenario.step * unit)))
    due = sync_offsets(sync_periods, total)
    ticks = set(range(0, total + 1, step))
    return [(scenario.start + off / unit, off in ticks, frozenset(due.get(off, ())))
            for off in sorted(ticks.union(due))]


def run_scenario(
    scenario: Scenario,
    *,
    hpas: list[HorizontalPodAutoscaler] | None = None,
    label: str = "",
    progress: Callable[[float], None] | None = None,
) -> SimResult:
    """Run ``scenario`` (optionally with other HPAs on the same trace) and return the timelines."""
    from pyhpa.controller.reconcile import reconcile_hpa, run_sync

    started = time.perf_counter()
    hpas = list(hpas if hpas is not None else scenario.hpas)
    config = scenario.config
    # Only the signals this run's workloads read (a run of some parts of a scenario reads fewer).
    read = _signals_read(scenario.workloads)
    signal_names = [s for s in scenario.load if s in read]
    signals = {s: scenario.load[s].value(scenario.start) for s in signal_names}
    targets = {}
    for obj in scenario.workloads:
        tgt = _SimTarget(obj, scenario, signals)
        targets[tgt.key] = tgt
    target_list = list(targets.values())
    by_ns: dict[str, list[_SimTarget]] = {}
    for tgt in targets.values():
        by_ns.setdefault(tgt.key[0], []).append(tgt)

    cluster = SimCluster(hpas=hpas, workloads=[t.view for t in targets.values()])
    # The cluster converted/keyed our views; keep using its objects.
    for key, tgt in targets.items():
        tgt.view = cluster.workloads[key]
    tick_times = array("d")
    for tgt in targets.values():
        tgt.trace.times = tick_times
    periods = {key: sync_period_ms(hpa, config) for key, hpa in cluster.hpas.items()}  # KEP-6003
    # Without HPAs the controller still wakes every global period (the grid stays as it was).
    sync_periods = set(periods.values()) or {period_ms(config.sync_period)}
    sync_times = SyncTimes(sync_periods)
    runs: list[HpaRun] = []
    for hpa_key, hpa in cluster.hpas.items():
        ns = hpa.metadata.namespace or ""
        ref = hpa.spec.scale_target_ref
        columns = metric_columns(hpa)
        target = targets.get((ns, ref.kind, ref.name))
        cap = target.trace.capacity if target is not None else None
        runs.append(HpaRun(key=hpa_key, target=(ns, ref.kind, ref.name), start=scenario.start,
                           name=f"{hpa.metadata.namespace}/{hpa.metadata.name}", metrics=columns,
                           log=SyncLog(sync_times.by_period[periods[hpa_key]], [c["unit"] for c in columns], cap),
                           custom_metrics=[m for m in hpa.spec.metrics or [] if m.type in ("Pods", "Object", "External")]))
    ports = cluster.ports()
    # Each HPA with its scale target and the targets of its namespace, looked up once for the run.
    placed = [(run, targets.get(run.target), by_ns.get(run.target[0], []), periods[run.key]) for run in runs]
    reconciles = 0
    grid = _grid(scenario, sync_periods)
    report_every = max(1, len(grid) // 200)

    # The timeline's first row: the state at the start, before any sync (no decision yet).
    sync_times.append(scenario.start)  # every period's timeline
    for run in runs:
        target = targets.get(run.target)
        sig = target.trace.demand_signal if target is not None else None
        status = cluster.hpas[run.key].status
        conditions = tuple((c.type, c.status, c.reason) for c in ((status.conditions or []) if status is not None else []))
        run.log.append(signals[sig] if sig else None,
                       target.workload.replicas if target is not None else None,
                       target.workload.ready_count(scenario.start) if target is not None else None,
                       None, tuple(None for _ in run.metrics), run.log.condition_id(conditions), ())

    # The timelines grow for the whole run and are kept to the end: freezing them now and then
    # spares the cyclic collector from rescanning them (a few % of the run). Only when nobody
    # else froze objects, so the unfreeze at the end gives back exactly what was frozen here.
    # Each sync allocates a few hundred short-lived objects; a larger young generation lets the
    # collector run ~30 times less often (another few %). Both settings are restored at the end.
    freezing = gc.get_freeze_count() == 0
    frozen_at = 0
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], _YOUNG_GENERATION), *thresholds[1:])
    try:
        models = {id(tgt.obj.model): tgt.obj.model for tgt in target_list}
        for i, (t, is_tick, is_sync) in enumerate(grid):
            if is_tick:
                signals = {s: scenario.load[s].value(t) for s in signal_names}
                # One parameter object per model (the maps are pure functions of the signals).
                params_by_model = {k: params_for(model, signals) for k, model in models.items()}
                tick_times.append(t)
                for tgt in target_list:  # the targets are independent: one pass does each in turn
                    wl = tgt.workload
                    wl.set_params(params_by_model[id(tgt.obj.model)], t)
                    tgt.record(wl.advance(t))
                    tgt.pipeline.advance(t)
                    tr = tgt.trace
                    tr.demand.append(signals[tr.demand_signal] if tr.demand_signal else 0.0)
                    tr.replicas.append(wl.replicas)
                    tr.ready.append(wl.ready_count(t))
            else:
                for tgt in target_list:
                    tgt.record(tgt.workload.advance(t))
                    tgt.pipeline.advance(t)
            if is_sync:
                now = to_datetime(t)
                sync_times.append(t, is_sync)
                # Load series are pure functions of t: evaluated once per instant for all HPAs.
                signals_now: dict[str, float] = dict(signals) if is_tick else {}
                for run, target, local, period in placed:
                    if period not in is_sync:
                        continue
                    reconciles += 1
                    _reconcile_one(run, target, local, cluster, ports, targets, scenario, t, now, reconcile_hpa,
                                   run_sync, signals_now)
                if freezing and reconciles - frozen_at >= _FREEZE_EVERY:
                    gc.freeze()
                    frozen_at = reconciles
            if progress is not None and (i % report_every == 0 or i == len(grid) - 1):
                progress(t - scenario.start)

    finally:
        gc.set_threshold(*thresholds)
        if freezing:
            gc.unfreeze()

    return SimResult(
        scenario=scenario,
        label=label,
        hpas=runs,
        workloads={k: t.trace for k, t in targets.items()},
        wall_seconds=time.perf_counter() - started,
        reconciles=reconciles,
    )


def _reconcile_one(run: HpaRun, target: _SimTarget | None, local: list[_SimTarget], cluster: SimCluster,
                   ports: Any, targets: dict, scenario: Scenario, t: float, now: datetime, reconcile_hpa: Any,
                   run_sync: Any, signals_now: dict[str, float] | None = None) -> None:
    """One HPA's sync: ``target`` is its scale target (None when missing), ``local`` the targets
    of its namespace."""
    hpa = cluster.hpas[run.key]
    ns = run.target[0]
    # Sync the scale targets' views with the model, then serve this namespace's pods and metrics.
    for tgt in local:
        wl = tgt.workload
        view = tgt.view
        view.spec.replicas = wl.replicas
        view.status.replicas = wl.status_replicas()
    if len(local) == 1:
        cluster.pods = local[0].pod_views(t)  # the same list while nothing changed (list_pods memo)
    else:
        views = [tgt.pod_views(t) for tgt in local]
        joined = cluster.namespace_pods.get(ns)
        if joined is None or len(joined[0]) != len(views) or any(a is not b for a, b in zip(joined[0], views)):
            joined = cluster.namespace_pods[ns] = (views, [v for vs in views for v in vs])
        cluster.pods = joined[1]
    cluster.local = local
    cluster.resource_outage = bool(scenario.outages) and scenario.outage(t, "resource")
    if run.custom_metrics:  # only Pods/Object/External metrics read these (a Resource-only HPA never does)
        cluster.metric_values = []
        cluster.external_values = []
    order: list[_SimTarget] = []  # where Object/External metrics are looked up first (built on demand)
    for spec in run.custom_metrics:
        if spec.type in ("Object", "External") and not order:
            order = ([target] if target is not None else []) + [x for x in local if x is not target]
        if spec.type == "Pods" and spec.pods is not None and not scenario.outage(t, "pods"):
            name = spec.pods.metric.name
            for tgt in local:
                if name in tgt.obj.model.metrics:
                    cluster.metric_values.extend(tgt.pipeline.pods_custom_metric(name))
        elif spec.type == "Object" and spec.object is not None and not scenario.outage(t, "object"):
            name = spec.object.metric.name
            ref = spec.object.described_object
            for tgt in order + [x for x in targets.values() if x not in order]:
                if name in tgt.obj.model.metrics:
                    described = ObjectReferenceView(kind=ref.kind, name=ref.name, api_version=ref.api_version,
                                                    namespace=None if ref.kind == "Namespace" else ns)
                    mv = tgt.pipeline.object_metric(name, described)
                    if mv is not None:
                        cluster.metric_values.append(mv)
                    break
        elif spec.type == "External" and spec.external is not None and not scenario.outage(t, "external"):
            name = spec.external.metric.name
            for tgt in order + [x for x in targets.values() if x not in order]:
                sm = tgt.obj.model.metrics.get(name)
                if sm is not None:
                    ev = tgt.pipeline.external_metric(name, sm.labels)
                    if ev is not None:
                        cluster.external_values.append((None, ev))
                    break
    old = target.workload.replicas if target is not None else None
    try:
        run_sync(reconcile_hpa(hpa, ports, scenario.config, now))
    except Exception as exc:  # the reconcile reports errors in status/events; keep going like the loop does
        if not _is_reconcile_error(exc):
            raise
    new_events = cluster.events
    if new_events:
        cluster.events = []
    if target is not None:
        new = target.view.spec.replicas
        if new is not None and new != target.workload.replicas:
            target.record(target.workload.scale(new, t))
        for ev in new_events:
            if ev.reason == "SuccessfulRescale" and old is not None:
                run.scale_events.append(ScaleEvent(t, old, target.workload.replicas, ev.reason, ev.message))
    demand = ready = replicas = None
    if target is not None:
        sig = target.trace.demand_signal
        if sig:
            demand = signals_now.get(sig) if signals_now is not None else None
            if demand is None:
                demand = scenario.load[sig].value(t)
                if signals_now is not None:
                    signals_now[sig] = demand
        ready = target.workload.ready_count(t)
        replicas = target.workload.replicas
    # What the timeline shows of the status, read again only when the status object changed.
    status = cluster.hpas[run.key].status
    last = run._last
    if last is None or last[0] is not status:
        conditions = status.conditions if status is not None else None
        if last is not None and last[1] is conditions:
            cond_id = last[4]  # a condition list is never mutated once in a status
        else:
            cond_id = run.log.condition_id(tuple((c.type, c.status, c.reason) for c in conditions or ()))
        desired = status.desired_replicas if status is not None else None
        last = run._last = (status, conditions, desired, run.log.columns(metric_currents(run.metrics, status)),
                            cond_id)
    run.log.append_columns(demand, replicas, ready, last[2], last[3], last[4],
                           tuple(f"{e.type} {e.reason}: {e.message}" for e in new_events) if new_events else ())


def _is_reconcile_error(exc: Exception) -> bool:
    from pyhpa.controller.ports import PortError

    return isinstance(exc, PortError) or type(exc).__module__.startswith("pyhpa.controller")


picklable(Capacity)
