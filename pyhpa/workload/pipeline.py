"""A metrics-server-like view of one simulated workload: counters scraped on a fixed grid and
reported as averages over a window.

Why a pipeline and not the instantaneous usage: the HPA reads metrics-server, which scrapes every
``resolution`` seconds and averages over ``window``, so a new pod shows up late and a load change
reaches the HPA in steps; both the embedded cluster and the simulator must show that lag.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

import msgspec

from pyhpa.api.quantity import Quantity
from pyhpa.api.timefmt import format_duration
from pyhpa.api.types import (
    ContainerMetrics,
    ExternalMetricValue,
    MetricIdentifierView,
    MetricValue,
    ObjectMeta,
    ObjectReferenceView,
    PodMetrics,
)
from pyhpa.workload.model import SimPod, Workload, to_datetime
from pyhpa.workload.params import WorkloadParamError


class _Scrape(msgspec.Struct):
    ts: float
    cpu: float  # milli-core-seconds used since the scrape before (the counter's increment)
    metrics: dict[str, float]  # value-seconds per custom metric since the scrape before
    memory: float  # instantaneous bytes


@dataclass(slots=True, eq=False)
class _Cohort:
    """Pods that receive exactly the same increments and hold the same scrape history, so they
    share one counter list and one history (the same list objects under each member's name in
    ``_cum`` / ``_history``): pods whose counters started together and that run, become Ready
    and are deleted at the same instants; and pods that have been Ready through a whole equal
    history, which :meth:`MetricsPipeline._merge_settled` joins (their times then read as the
    latest of the members': every later instant compares the same with either)."""

    running_at: float
    ready_at: float
    deleted_at: float | None
    cum: list[float]
    hist: list[_Scrape]
    members: list[SimPod] = field(default_factory=list)
    # running totals since the counters started (see ContainerCounters): [running seconds,
    # CPU milli-core-seconds per container..., seconds at the CPU limit per container...]
    totals: list[float] = field(default_factory=list)
    node: str = ""  # the node its members run on (their CPU may be contended there)


@dataclass(frozen=True, slots=True)
class ContainerCounters:
    """What cAdvisor reports of one pod's containers: cumulative since the pod's counters
    started (when it began to run), so a rate over them is the usage the windowed samples
    average. Per container (in the workload's container order)."""

    at: float  # the instant they are current at
    running_seconds: float  # how long the pod has run
    cpu_seconds: tuple[float, ...]  # core-seconds used
    throttled_seconds: tuple[float, ...]  # time held at the CPU limit (0 without one)
    memory_bytes: tuple[int, ...]  # working set at the scrape


class MetricsPipeline:
    """A metrics-server-like view of one workload.

    Every pod carries counters (CPU milli-core-seconds; value-seconds per custom metric),
    integrated exactly. Scrapes happen at multiples of ``resolution`` (aligned to the epoch, as one
    metrics-server scrapes all nodes together). A pod's sample at the latest scrape ``t`` is the
    counter difference to the scrape ``window`` seconds earlier divided by the window, with
    ``timestamp = t`` and ``window``; a pod needs both scrapes while Running, so a new pod shows up
    one window after it started. Memory is the working set at the scrape instant. Workload-level
    totals (for External/Object metrics) are the values at the latest scrape.

    The history keeps each scrape's counter *increment* (the counters restart from zero at every
    scrape), and a window's difference is the sum of its increments: pods that were Ready through
    the same history then hold bit-identical histories, whenever they started, and share one.
    """

    def __init__(self, workload: Workload, *, resolution: float = 15.0, window: float | None = None,
                 now: float | None = None, counters: bool = True) -> None:
        """``counters``: keep each pod's running totals for :meth:`container_counters` (the
        embedded cluster's cAdvisor reads them; the simulator, which reads only the windowed
        samples, spares their bookkeeping at every scrape)."""
        if not resolution > 0:
            raise WorkloadParamError(f"resolution: Invalid value: {resolution!r}: must be > 0")
        window = resolution if window is None else window
        steps = window / resolution
        if window <= 0 or abs(steps - round(steps)) > 1e-9:
            raise WorkloadParamError(f"window: Invalid value: {window!r}: must be a positive multiple of resolution ({resolution})")
        self.workload = workload
        self.counters = counters
        self.resolution = float(resolution)
        self.window = float(window)
        self._keep = int(round(steps)) + 1
        self._last = workload._param_history[0][0] if now is None else now
        self._cum: dict[str, list[float]] = {}  # pod name -> [cpu, metric...] since the latest scrape
        self._metric_names: list[str] = []
        self._history: dict[str, list[_Scrape]] = {}  # pod name -> recent scrapes (oldest first)
        self._cohorts: list[_Cohort] = []
        # a pod's running totals are its cohort's plus this offset (cohorts merge pods whose
        # totals differ; see _merge_settled)
        self._offsets: dict[str, list[float]] = {}
        self._counted_to = self._last  # where the totals' latest increment ends
        self._waiting: list[SimPod] = []  # pods without counters yet, by running_at
        self._grouped = -1  # the workload version the cohorts were built for
        self._totals: Mapping[str, float] = {}
        self.last_scrape: float | None = None
        self._usage: list[tuple[int, int, list[SimPod]]] = []  # cohort_usage's answer at _usage_at
        self._usage_at: float | None = None
        self._window_text = format_duration(self.window)
        if abs(self._last / self.resolution - round(self._last / self.resolution)) < 1e-9:
            self._metric_names = sorted(workload.params.metrics)
            self._scrape(self._last, self._metric_names)  # starting on the grid: scrape now

    def advance(self, now: float) -> None:
        """Integrate usage from the last call up to ``now``, scraping at every grid point passed."""
        if now <= self._last:
            return
        wl = self.workload
        names = self._metric_names
        for _, params in wl._param_history:
            if params.metrics and any(n not in names for n in params.metrics):
                names = sorted(set(names) | set(params.metrics))
        self._metric_names = names
        grid = math.floor(self._last / self.resolution + 1e-9) * self.resolution + self.resolution
        if grid <= self._last + 1e-9:
            grid += self.resolution
        t = self._last
        while t < now:
            seg_end = now if now < grid else grid
            for b in wl.breakpoints(t, seg_end):  # usage is constant between breakpoints
                self._integrate(t, b - t, names)
                t = b
            self._integrate(t, seg_end - t, names)
            t = seg_end
            if abs(t - grid) < 1e-9:
                self._scrape(grid, names)
                grid += self.resolution
        self._last = now
        # on shared nodes the others' pipelines read this workload's parameters up to where
        # they have integrated: keep those
        wl.forget_params_before(now if wl.sharing is None else wl.sharing.horizon(wl.uid, now))

    def _regroup(self) -> None:
        """Cohorts and waiting pods after a pod-set or deletion change; the counters and histories
        of pods no longer in the workload are dropped (a later pod of the same name starts fresh).
        A cohort keeps its times; pods of one that are deleted at different instants split."""
        wl = self.workload
        cums, history = self._cum, self._history
        # Which cohort (by position) counts each pod name, and the uid of the pod it counts: a pod
        # under a reused name is another pod (another uid) and starts fresh.
        cohort_of = {m.name: i for i, c in enumerate(self._cohorts) for m in c.members}
        counted = {m.name: m.uid for c in self._cohorts for m in c.members}
        live = {p.name for p in wl.pods}
        for pod in wl.pods:
            if pod.name in cums and counted.get(pod.name) != pod.uid:
                del cums[pod.name]
                self._offsets.pop(pod.name, None)
        for name in [n for n in cums if n not in live]:
            del cums[name]
        for name in [n for n in self._offsets if n not in live]:
            del self._offsets[name]
        for name in [n for n in history if n not in live]:
            del history[name]
        cohorts: dict[tuple, _Cohort] = {}
        waiting: list[SimPod] = []
        for pod in wl.pods:
            cum = cums.get(pod.name)
            if cum is None:
                waiting.append(pod)
                history.pop(pod.name, None)
                continue
            key = (cohort_of[pod.name], pod.deleted_at)
            c = cohorts.get(key)
            if c is None:
                hist = history.get(pod.name)
                old = self._cohorts[key[0]]
                totals = old.totals
                if any(k[0] == key[0] for k in cohorts):  # members now differ: split off a copy
                    cum, hist, totals = list(cum), list(hist or ()), list(totals)
                c = cohorts[key] = _Cohort(old.running_at, old.ready_at, pod.deleted_at, cum,
                                           hist if hist is not None else [], totals=totals,
                                           node=old.node)
            c.members.append(pod)
            cums[pod.name] = c.cum
            history[pod.name] = c.hist
        waiting.sort(key=lambda p: p.running_at)
        self._cohorts = list(cohorts.values())
        self._waiting = waiting
        self._grouped = wl._version

    def _join(self, at: float, width: int) -> None:
        """Give counters (from zero) to the waiting pods running at ``at``; a waiting pod deleted
        before it ever ran never will."""
        still: list[SimPod] = []
        fresh: dict[tuple, _Cohort] = {}
        for i, pod in enumerate(self._waiting):
            if pod.running_at > at:
                still.extend(self._waiting[i:])
                break
            deleted = pod.deleted_at
            if deleted is not None and at >= deleted:
                continue
            key = (pod.running_at, pod.ready_at, deleted, pod.node)
            c = fresh.get(key)
            if c is None:
                c = fresh[key] = _Cohort(pod.running_at, pod.ready_at, deleted, [0.0] * width, [],
                                         node=pod.node)
                self._cohorts.append(c)
            c.members.append(pod)
            self._cum[pod.name] = c.cum
            self._history[pod.name] = c.hist
            self._offsets.pop(pod.name, None)
        self._waiting = still

    def _integrate(self, at: float, dt: float, names: list[str]) -> None:
        if dt <= 0:
            return
        wl = self.workload
        if self._grouped != wl._version:
            self._regroup()
        width = 1 + len(names)
        if self._waiting and self._waiting[0].running_at <= at:
            self._join(at, width)
        ready_n = wl.ready_count(at)
        params = wl.params_at(at)
        # Every Ready pod has the same rates, every Running-not-Ready pod too: compute them once,
        # and add them once per cohort (the same additions, in the same order, as per pod).
        ready_cpu = wl.ready_cpu(params.cpu_milli / ready_n if ready_n else 0.0, params) * dt
        start_cpu = wl.cpu_used(params.startup_cpu_milli) * dt
        ready_metrics = [params.metrics.get(n, 0.0) / ready_n * dt if ready_n else 0.0 for n in names] if names else ()
        sharing = wl.sharing
        shared = sharing.capacity if sharing is not None else {}
        for c in self._cohorts:
            deleted = c.deleted_at
            if at < c.running_at or (deleted is not None and at >= deleted):
                continue  # not running
            cum = c.cum
            if len(cum) < width:
                cum.extend([0.0] * (width - len(cum)))
            ready = at >= c.ready_at  # running, so not deleted yet: ready
            if c.node and c.node in shared:  # on a node whose CPU it shares: its CFS part
                cum[0] += sharing.on_node(c.node, at).get((wl.uid, ready), 0.0) * dt
            else:
                cum[0] += ready_cpu if ready else start_cpu
            if ready and ready_metrics:
                for i, v in enumerate(ready_metrics, 1):
                    cum[i] += v

    def _scrape(self, ts: float, names: list[str]) -> None:
        wl = self.workload
        if self._grouped != wl._version:
            self._regroup()
        if self._waiting and self._waiting[0].running_at <= ts:
            self._join(ts, 1 + len(names))  # a pod running since ts: its first sample reads zero counters
        ready_n = wl.ready_count(ts)
        params = wl.params_at(ts)
        mem_unready = wl.memory_used(params.memory_bytes)
        mem_ready = wl.memory_used(params.memory_bytes + (params.memory_shared_bytes / ready_n if ready_n else 0.0))
        keep = self._keep
        no_metrics: dict[str, float] = {}  # shared by this scrape's samples: they are only read
        settled = 0
        counting = self.counters
        since, self._counted_to = self._counted_to, ts
        for c in self._cohorts:
            hist = c.hist
            deleted = c.deleted_at
            cum = c.cum
            if counting and (deleted is None or deleted > since):
                self._count(c, since, ts)
            if ts < c.running_at or (deleted is not None and ts >= deleted):
                hist.clear()  # not running: no sample, and the next one needs a fresh window
                cum[:] = [0.0] * len(cum)
                continue
            metrics = {n: cum[i] for i, n in enumerate(names, 1) if i < len(cum)} if names else no_metrics
            hist.append(_Scrape(ts, cum[0], metrics, mem_ready if ts >= c.ready_at else mem_unready))
            cum[:] = [0.0] * len(cum)  # in place: the members' names point at this list
            if len(hist) > keep:
                del hist[0]
            if deleted is None and ts >= c.ready_at:
                settled += 1
        self._totals = params.metrics
        self.last_scrape = ts
        if settled > 1:
            self._merge_settled(ts)

    def _merge_settled(self, ts: float) -> None:
        """Join the cohorts that are Ready, not deleted and hold equal histories (one window's
        increments, the window's timestamps and the latest memory; the oldest increment of a full
        history is never read again): from now on they receive the same increments too."""
        first: dict[tuple, _Cohort] = {}
        kept: list[_Cohort] = []
        for c in self._cohorts:
            hist = c.hist
            if c.deleted_at is not None or ts < c.ready_at or not hist:
                kept.append(c)
                continue
            sig = (c.node, len(c.cum), tuple([h.ts for h in hist]), hist[-1].memory,
                   tuple([(h.cpu, tuple(h.metrics.items())) for h in hist[1:]]))
            into = first.get(sig)
            if into is None:
                first[sig] = c
                kept.append(c)
                continue
            into.members.extend(c.members)
            width = max(len(c.totals), len(into.totals))
            into.totals.extend([0.0] * (width - len(into.totals)))
            shift = [mine - theirs for mine, theirs in
                     zip(c.totals + [0.0] * (width - len(c.totals)), into.totals)]
            for pod in c.members:  # each keeps its own totals: the difference moves to its offset
                off = self._offsets.get(pod.name)
                self._offsets[pod.name] = list(shift) if off is None else \
                    [a + b for a, b in zip(shift, off + [0.0] * (width - len(off)))]
            into.running_at = max(into.running_at, c.running_at)
            into.ready_at = max(into.ready_at, c.ready_at)
            for pod in c.members:
                self._cum[pod.name] = into.cum
                self._history[pod.name] = into.hist
        self._cohorts = kept

    def _add_increment(self, c: _Cohort, since: float, end: float, into: list[float]) -> None:
        """Add to ``into`` (running totals, ``1 + 2n`` long) what the cohort gained over
        (since, end], where its counters ``cum`` hold the CPU used since ``since``: the time it
        ran, that CPU split over the containers as their limits allow, and the time each
        container spent at its CPU limit."""
        if c.deleted_at is not None and c.deleted_at < end:
            end = c.deleted_at
        ran = end - (since if since > c.running_at else c.running_at)
        used = c.cum[0] if c.cum else 0.0
        if ran <= 0:
            if used <= 0:
                return
            ran = 0.0
        into[0] += ran
        n = (len(into) - 1) // 2
        limits = self.workload.cpu_limits
        if limits is None or len(limits.caps) != n:
            part = used / n
            for i in range(1, n + 1):
                into[i] += part
            return
        for i, (part, cap) in enumerate(zip(limits.fill(used, ran), limits.caps)):
            into[1 + i] += part
            if ran > 0 and part >= cap * ran * (1 - 1e-9):  # never for an infinite cap
                into[1 + n + i] += ran

    def _count(self, c: _Cohort, since: float, ts: float) -> None:
        """Add the increment that ends at scrape ``ts`` to the cohort's running totals."""
        width = 1 + 2 * (len(self.workload.containers) or 1)
        if len(c.totals) != width:
            c.totals[:] = (c.totals + [0.0] * width)[:width]
        self._add_increment(c, since, ts, c.totals)

    def container_counters(self) -> dict[str, ContainerCounters]:
        """The cAdvisor counters of every pod running at the latest scrape, by pod name, as of
        the last :meth:`advance` (the usage since the latest scrape included, so they read as a
        continuously updated counter); memory as of the latest scrape."""
        if not self.counters:
            raise WorkloadParamError("container_counters: this pipeline keeps no counters (counters=False)")
        if self.last_scrape is None:
            return {}
        wl = self.workload
        if self._grouped != wl._version:
            self._regroup()
        n = len(wl.containers) or 1
        width = 1 + 2 * n
        out: dict[str, ContainerCounters] = {}
        for c in self._cohorts:
            hist = c.hist
            if not hist or hist[-1].ts != self.last_scrape:
                continue  # not running at the latest scrape
            memory = int(round(hist[-1].memory))
            mem = tuple(wl.split("memory", memory, n, i) for i in range(n))
            base = (c.totals + [0.0] * width)[:width]
            self._add_increment(c, self._counted_to, self._last, base)
            for pod in c.members:
                off = self._offsets.get(pod.name)
                t = base if off is None else [a + b for a, b in zip(base, off + [0.0] * width)]
                out[pod.name] = ContainerCounters(
                    self._last, t[0], tuple(v / 1000 for v in t[1:1 + n]),
                    tuple(t[1 + n:1 + 2 * n]), mem)
        return out

    # ----------------------------------------------------------------- samples

    def _window(self, pod_name: str) -> list[_Scrape] | None:
        """The pod's history when it spans a full window ending at the latest scrape, else None."""
        hist = self._history.get(pod_name)
        if not hist or len(hist) < self._keep or hist[-1].ts != self.last_scrape:
            return None
        if abs((hist[-1].ts - hist[0].ts) - self.window) > 1e-6:
            return None
        return hist

    def pod_cpu_milli(self, pod_name: str) -> float | None:
        hist = self._window(pod_name)
        return None if hist is None else _window_sum(hist) / self.window

    def pod_metric(self, pod_name: str, metric: str) -> float | None:
        hist = self._window(pod_name)
        return None if hist is None else _window_sum(hist, metric) / self.window

    def pod_metrics(self) -> list[PodMetrics]:
        """metrics.k8s.io PodMetrics of every pod with a full window at the latest scrape."""
        if self.last_scrape is None:
            return []
        wl = self.workload
        ts = to_datetime(self.last_scrape)
        out: list[PodMetrics] = []
        n_containers = len(wl.containers)
        for pod in wl.pods:
            hist = self._window(pod.name)
            if hist is None:
                continue
            last = hist[-1]
            cpu = _window_sum(hist) / self.window
            containers = []
            for i, c in enumerate(wl.containers):
                # Split evenly; the first container takes the rounding remainder.
                cpu_milli = wl.split("cpu", math.ceil(cpu - 1e-9), n_containers, i)
                mem = wl.split("memory", int(round(last.memory)), n_containers, i)
                containers.append(
                    ContainerMetrics(
                        name=c.name,
                        usage={"cpu": Quantity.from_milli(cpu_milli), "memory": Quantity.from_milli(mem * 1000, fmt="BinarySI")},
                    )
                )
            out.append(
                PodMetrics(
                    metadata=ObjectMeta(name=pod.name, namespace=wl.namespace, labels=wl.pod_labels(pod),
                                        creation_timestamp=ts),
                    timestamp=ts,
                    window=self._window_text,
                    containers=containers,
                )
            )
        return out

    def cohort_usage(self) -> list[tuple[int, int, list[SimPod]]]:
        """The pods with a PodMetrics at the latest scrape as (CPU milli-value, memory bytes,
        pods), summed over containers: one group per cohort (pods with one counter history),
        without building objects (the simulator's path; ``Workload.split`` gives a container's
        part). One pass for both resources, computed once per scrape (what that scrape reported)."""
        wl = self.workload
        if self._usage_at == self.last_scrape and self._usage_at is not None:
            return self._usage
        out: list[tuple[int, int, list[SimPod]]] = []
        if self.last_scrape is not None:
            if self._grouped != wl._version:
                self._regroup()
            keep, last_scrape, window = self._keep, self.last_scrape, self.window
            for c in self._cohorts:
                hist = c.hist
                # _window, inlined
                if len(hist) < keep or hist[-1].ts != last_scrape:
                    continue
                first, last = hist[0], hist[-1]
                if abs((last.ts - first.ts) - window) > 1e-6:
                    continue
                out.append((math.ceil(_window_sum(hist) / window - 1e-9), int(round(last.memory)), c.members))
        self._usage, self._usage_at = out, self.last_scrape
        return out

    def resource_usage(self, resource: str, container: str = "") -> list[tuple[int | None, list[SimPod]]]:
        """:meth:`cohort_usage` for one resource: the milli-value each group's PodMetrics carries
        for ``resource``, summed over containers or the named container's part; None where the
        PodMetrics has no such value (another resource, a container the pods do not have)."""
        wl = self.workload
        names = [c.name for c in wl.containers]
        n = len(names)
        index = names.index(container) if container in names else (-1 if container else None)
        if resource not in ("cpu", "memory") or index == -1:
            return [(None, members) for _, _, members in self.cohort_usage()]
        scale = 1 if resource == "cpu" else 1000  # memory in bytes, as milli-units
        return [(scale * (total if index is None else wl.split(resource, total, n, index)), members)
                for total, members in ((cpu if resource == "cpu" else memory, members)
                                       for cpu, memory, members in self.cohort_usage())]

    def pods_custom_metric(self, metric: str) -> list[MetricValue]:
        """custom.metrics.k8s.io values of ``metric`` for every pod with a full window."""
        if self.last_scrape is None:
            return []
        wl = self.workload
        ts = to_datetime(self.last_scrape)
        out = []
        for pod in wl.pods:
            value = self.pod_metric(pod.name, metric)
            if value is None:
                continue
            out.append(
                MetricValue(
                    described_object=ObjectReferenceView(kind="Pod", namespace=wl.namespace, name=pod.name, api_version="/v1"),
                    metric=MetricIdentifierView(name=metric),
                    timestamp=ts,
                    window_seconds=int(self.window),
                    value=Quantity.from_milli(math.ceil(value * 1000 - 1e-6)),
                )
            )
        return out

    def total(self, metric: str) -> float | None:
        """The workload total of ``metric`` at the latest scrape (None before the first scrape)."""
        if self.last_scrape is None or metric not in self._totals:
            return None
        return self._totals[metric]

    def object_metric(self, metric: str, described: ObjectReferenceView) -> MetricValue | None:
        value = self.total(metric)
        if value is None:
            return None
        return MetricValue(
            described_object=described,
            metric=MetricIdentifierView(name=metric),
            timestamp=to_datetime(self.last_scrape),  # type: ignore[arg-type]
            window_seconds=int(self.window),
            value=Quantity.from_milli(math.ceil(value * 1000 - 1e-6)),
        )

    def external_metric(self, metric: str, labels: Mapping[str, str] | None = None) -> ExternalMetricValue | None:
        value = self.total(metric)
        if value is None:
            return None
        return ExternalMetricValue(
            metric_name=metric,
            metric_labels=dict(labels) if labels else None,
            timestamp=to_datetime(self.last_scrape),  # type: ignore[arg-type]
            window=int(self.window),
            value=Quantity.from_milli(math.ceil(value * 1000 - 1e-6)),
        )


# --------------------------------------------------------------------------- helpers


def _window_sum(hist: list[_Scrape], metric: str | None = None) -> float:
    """CPU milli-core-seconds (or ``metric``'s value-seconds) over a full history's window: its
    increments after the oldest, added in order (the same additions for every pod holding that
    history; not ``sum()``, whose float rounding differs between Python versions)."""
    total = 0.0
    if metric is None:
        for h in hist[1:]:
            total += h.cpu
    else:
        for h in hist[1:]:
            total += h.metrics.get(metric, 0.0)
    return total
