"""``pyhpa history``: a workload's history read from Prometheus, as the figures a scenario needs.

What is read (the PromQL is in :mod:`pyhpa.sim.history_queries`, the scenario written by
:mod:`pyhpa.sim.history_write`): the observed replica count, the demand of each metric the HPA
scales on, the intervals where the pods were saturated, requests and limits, the time from a pod's
creation to Ready, and the HPA (from kube-state-metrics, or whole from the cluster). What the data
cannot say is reported, one line each, through ``warn``: gaps (filled, and how), counter resets,
several series where one was expected, an assumed HPA metric type. What makes a scenario
impossible (no Prometheus, no such workload, no data) raises :class:`HistoryError`.

Saturation: where the workload's containers were throttled in more than :data:`THROTTLED_SHARE`
of their CFS periods (the threshold of the kubernetes-mixin ``CPUThrottlingHigh`` alert), or used
at least :data:`AT_LIMIT` of their summed CPU limits, observed usage is only a lower bound on
demand. There demand is estimated as the larger of the observed usage and the straight line
between the last unsaturated value before the interval and the first one after it (the load the
workload had on both sides); docs/history.md says why and what it misses.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator

from pyhpa.adapters.prometheus import PrometheusClient, RangeSeries, one_line
from pyhpa.api.timefmt import format_epoch, parse_duration
from pyhpa.sim.history_demand import add_stopped_pods, locate_steps, resample
from pyhpa.sim.history_hpa import ClusterTimes, read_hpa
from pyhpa.sim.history_queries import HistoryError, WorkloadQueries

THROTTLED_SHARE = 0.25  # kubernetes-mixin CPUThrottlingHigh: throttled in > 25 % of CFS periods
AT_LIMIT = 0.95  # usage at >= 95 % of the summed CPU limits counts as at the limit
GAP_STEPS = 2  # a run of more missing steps than this is reported (shorter ones: a missed scrape)
SYNC_PERIOD = 15.0  # --horizontal-pod-autoscaler-sync-period's upstream default
MIN_RATE_WINDOW = 120.0  # when the scrape interval cannot be measured: >= 2 scrapes at a 1m interval
READY_ROUNDING = 0.5  # kube_pod_status_ready_time is to the second (truncated): Ready in [t, t + 1)
STALENESS = 300.0  # Prometheus's lookback delta: a counter not seen for this long is gone
INTERVAL_PROBE = 3600.0  # the scrape interval is measured over the last hour of the range at most

Warn = Callable[[str], None]


@dataclass
class HistoryRequest:
    prometheus: str
    kind: str  # Deployment or StatefulSet
    name: str
    namespace: str
    start: float
    end: float
    step: float
    queries: dict[str, str] = field(default_factory=dict)  # metric name -> PromQL overriding ours
    hpa: str | None = None  # which HPA, when several scale the workload
    kubeconfig: str | None = None
    context: str | None = None
    # --horizontal-pod-autoscaler-* flags given (name without "--" -> value), written into the
    # scenario's controller: section in place of the assumed upstream defaults
    controller: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)  # metrics-server resolution/window given

    @property
    def sync_period(self) -> float:
        given = self.controller.get("horizontal-pod-autoscaler-sync-period")
        return parse_duration(str(given)) if given is not None else SYNC_PERIOD

    @property
    def target(self) -> str:
        return f"{self.kind.lower()}/{self.name} in namespace {self.namespace}"


@dataclass
class Interval:
    start: float
    end: float
    reason: str


@dataclass
class History:
    request: HistoryRequest
    times: list[float]
    replicas: list[int]
    demand: dict[str, list[float]]  # load signal -> values on `times` (cpu in cores, memory in bytes)
    cpu_observed: list[float] | None
    saturated: list[bool]
    intervals: list[Interval]
    requests: dict[str, dict[str, float]]  # container -> resource -> amount (cores, bytes)
    limits: dict[str, dict[str, float]]
    startup: float | None  # median creation -> Ready (s)
    startup_p90: float | None
    pods_started: int
    hpa: dict[str, Any]  # the HPA manifest
    hpa_source: str  # "kube-state-metrics" or "cluster"
    metric_signals: dict[str, tuple[str, dict[str, str]]]  # HPA metric name -> (type, labels), non-resource
    assumed: list[str]
    warnings: list[str]
    demand_added: dict[str, float] = field(default_factory=dict)  # signal -> largest estimate above observed
    synced: ClusterTimes = field(default_factory=ClusterTimes)  # the real controller's syncs the cluster holds
    sync_interval: float | None = None  # the time between its syncs, measured from its rescale events
    sync_anchor: float | None = None  # an instant it synced at (from the cluster)
    pending: float | None = None  # median creation -> first container start (s), when exported


UNAMBIGUOUS = 0.25  # two rescales this close to a whole number of periods apart: that many syncs apart
LAST_SCALE_ROUNDING = 0.5  # lastScaleTime is written to the second (truncated): the sync was in [t, t + 1)


def sync_timing(synced: ClusterTimes, period: float) -> tuple[float | None, float | None]:
    """(an instant the real controller synced at, the time between its syncs) from what the
    cluster holds, to set the simulated syncs: they fall at that instant + k x that time.

    Upstream requeues an HPA a sync period after its reconcile *ended*
    (pkg/controller/podautoscaler/horizontal.go, processNextWorkItem), so its syncs come a period
    plus a reconcile's time apart and drift later; a stabilization window a whole number of periods
    long then never holds the recommendation of that many syncs before, where syncs exactly a
    period apart would hold it. With two rescale events timed exactly, the time between syncs is
    measured (their spacing over the syncs between them) and the instant fitted to all of them;
    else the instant is the circular mean of the events' times over one period, or
    ``status.lastScaleTime`` (to the second), and the time between syncs the period (None)."""
    exact = [t for t, _, known in synced.rescales if known]
    if len(exact) >= 2:
        spans = [(b - a, round((b - a) / period)) for a, b in zip(exact, exact[1:])]
        sure = [(d, k) for d, k in spans if k >= 1 and abs(d / period - k) < UNAMBIGUOUS]
        if sure:
            interval = sum(d for d, _ in sure) / sum(k for _, k in sure)
            index = [0]
            for a, b in zip(exact, exact[1:]):
                index.append(index[-1] + max(1, round((b - a) / interval)))
            return exact[0] + statistics.fmean(t - exact[0] - k * interval for t, k in zip(exact, index)), interval
    times = exact or [t for t, _, _ in synced.rescales]  # to the second only: still nearer than lastScaleTime
    if times:
        angles = [2 * math.pi * (t % period) / period for t in times]
        x = sum(math.cos(a) for a in angles)
        y = sum(math.sin(a) for a in angles)
        phase = (math.atan2(y, x) / (2 * math.pi) * period) % period
        return times[0] - ((times[0] - phase) % period), None
    if synced.last_scale is not None:
        return synced.last_scale + LAST_SCALE_ROUNDING, None
    return None, None


def rate_window(step: float, scrape: float | None) -> float:
    """The rate() window: max(step + scrape interval, 2 x scrape interval), the shortest that holds
    the two samples rate() needs wherever it falls and leaves no step's usage between two windows
    (a longer one blurs a load step into a ramp that long, docs/history.md); at least
    :data:`MIN_RATE_WINDOW` when the scrape interval is unknown."""
    if scrape is None:
        return max(MIN_RATE_WINDOW, 4 * step)
    return max(step + scrape, 2 * scrape)


def rate_shift(window: float, step: float) -> float:
    """How far after a step's time its rate() is evaluated: the window then covers the middle of
    [t, t + step), the time the scenario holds the step's value, instead of ending at t (which
    lags the demand by half a window)."""
    return window / 2 + step / 2


class _Reader:
    """One history's reading: the client, the queries and the lines said so far."""

    def __init__(self, client: PrometheusClient, req: HistoryRequest, warn: Warn,
                 progress: Callable[[int], None] | None) -> None:
        self.client, self.req, self.progress = client, req, progress
        self.warnings: list[str] = []
        self._warn = warn
        self.regrid(0.0, req.step)
        self.q = WorkloadQueries(req.namespace, req.kind, req.name, MIN_RATE_WINDOW, self.end - self.start, req.step)
        self.scrape = self.scrape_interval("container_cpu_usage_seconds_total")
        self.q = replace(self.q, window=rate_window(req.step, self.scrape))
        self.shift = rate_shift(self.q.window, req.step)

    def regrid(self, anchor: float, period: float) -> None:
        """The history's steps: every step from the first instant at or after the range's start
        that is a whole number of ``period`` from ``anchor``, up to one step before the range's end."""
        req = self.req
        self.start = anchor + math.ceil((req.start - anchor) / period - 1e-9) * period
        # [start, end): the last step evaluated is one before the end, so N steps cover N x step
        self.end = self.start + math.floor((req.end - self.start) / req.step + 1e-9) * req.step - req.step
        if self.end < self.start - 1e-9:
            raise HistoryError(f"empty range: {format_epoch(req.start)}..{format_epoch(req.end)} holds no step of "
                               f"{req.step:g}s (check --since and --until)")
        self.times = [self.start + k * req.step for k in range(int(round((self.end - self.start) / req.step)) + 1)]

    def scrape_interval(self, metric: str) -> float | None:
        """How often ``metric``'s exporter was scraped: the probe span over the most samples one of
        its series has in it (a series alive all along has the most; one that is not only
        overestimates it); None with fewer than 2."""
        probe = min(INTERVAL_PROBE, self.end - self.start + self.req.step)
        found = self.client.query(self.q.samples(metric, probe), self.end)
        most = max((s.value for s in found), default=0.0)
        return probe / most if most >= 2 else None

    def warn(self, line: str) -> None:
        self.warnings.append(line)
        self._warn(line)

    def range(self, promql: str, shift: float = 0.0) -> list[RangeSeries]:
        """Evaluated at each step's time + ``shift`` and reported at the step's time."""
        found = self.client.query_range(promql, self.start + shift, self.end + shift, self.req.step, self.progress)
        if shift:
            for s in found:
                s.times = [t - shift for t in s.times]
        return found

    def instant(self, promql: str) -> list[Any]:
        return self.client.query(promql, self.end)

    def grid(self, series: RangeSeries) -> list[float | None]:
        out: list[float | None] = [None] * len(self.times)
        for t, v in zip(series.times, series.values):
            k = int(round((t - self.start) / self.req.step))
            if 0 <= k < len(out) and math.isfinite(v):
                out[k] = v
        return out

    def single(self, promql: str, what: str, shift: float = 0.0) -> list[float | None] | None:
        """A range query expected to give one series: None without any; several are merged by
        their maximum at each step, and said so."""
        found = self.range(promql, shift)
        if not found:
            return None
        grids = [self.grid(s) for s in found]
        if len(found) > 1:
            differ = sorted({k for s in found for k in s.labels if len({str(o.labels.get(k)) for o in found}) > 1})
            self.warn(f"warning: {what}: {len(found)} series match {one_line(promql)} (they differ in "
                      f"{', '.join(differ) or 'nothing'}; several exporters?): using their maximum at each step")
        return [max((g[k] for g in grids if g[k] is not None), default=None) for k in range(len(self.times))]

    def filled(self, values: list[float | None], what: str, hold: bool = False) -> list[float]:
        """``values`` with its holes filled (``hold``: the last value; else the straight line
        between the hole's edges); a hole longer than :data:`GAP_STEPS` steps is reported."""
        known = [k for k, v in enumerate(values) if v is not None]
        if not known:
            raise HistoryError(f"{what}: no sample between {format_epoch(self.start)} and {format_epoch(self.end)}")
        out = list(values)
        how = "held at the last value" if hold else "filled with the straight line between its edges"
        runs: list[tuple[int, int]] = []
        k = 0
        while k < len(out):
            if out[k] is not None:
                k += 1
                continue
            j = k
            while j < len(out) and out[j] is None:
                j += 1
            runs.append((k, j))
            k = j
        for a, b in runs:
            before = out[a - 1] if a > 0 else None
            after = values[b] if b < len(values) else None
            for i in range(a, b):
                if before is None:
                    out[i] = after
                elif after is None or hold:
                    out[i] = before
                else:
                    out[i] = before + (after - before) * (i - a + 1) / (b - a + 1)
            if b - a > GAP_STEPS:
                self.warn(f"warning: gap in {what}: no sample from {format_epoch(self.times[a])} to "
                          f"{format_epoch(self.times[b - 1])} ({(b - a) * self.req.step:g}s, {b - a} steps): {how}")
        return [float(v) for v in out]  # type: ignore[arg-type]

    def exists(self, metric: str) -> bool:
        found = self.instant(self.q.any_series(metric))
        return bool(found) and found[0].value > 0


def read_history(client: PrometheusClient, req: HistoryRequest, warn: Warn,
                 progress: Callable[[int], None] | None = None) -> History:
    """Read everything; raises :class:`HistoryError` or :class:`PrometheusError` (one line each)."""
    r = _Reader(client, req, warn, progress)
    assumed: list[str] = []
    sync = req.sync_period
    if req.step > sync:
        given = "horizontal-pod-autoscaler-sync-period" in req.controller
        r.warn(f"warning: --step {req.step:g}s is coarser than the HPA sync period ({sync:g}s, "
               f"{'given' if given else 'upstream default'}): "
               "the load is held between samples, so changes faster than the step are not in the history")

    raw_replicas = r.single(r.q.replicas(), "observed replicas")
    if raw_replicas is None:
        raise _unknown_workload(r)

    hpa, hpa_source, metrics, synced = read_hpa(r, assumed)
    anchor, interval = sync_timing(synced, sync)
    replicas = _with_rescales(r, [int(round(v)) for v in r.filled(raw_replicas, "observed replicas", hold=True)],
                              synced)
    names = {m[0] for m in metrics}
    demand: dict[str, list[float]] = {}
    cpu_observed: list[float] | None = None
    saturated = [False] * len(r.times)
    needs_cpu = "cpu" in names
    cpu_raw = _cpu_usage(r, _scale_downs(r, synced, replicas))
    if cpu_raw is None:
        line = (f"missing series: no cAdvisor CPU usage (container_cpu_usage_seconds_total) for the pods of "
                f"{req.target} (is the kubelet's /metrics/cadvisor scraped?)")
        if needs_cpu:
            raise HistoryError(line)
        r.warn(f"warning: {line}: the scenario has no CPU demand")
    else:
        cpu_observed = r.filled(cpu_raw, "cpu usage")
        saturated = _saturation(r, cpu_observed)
        demand["cpu"] = cpu_observed
    _report_resets(r)
    if "memory" in names:
        mem = r.single(r.q.memory_usage(), "memory working set")
        if mem is None:
            raise HistoryError(f"missing series: no cAdvisor memory (container_memory_working_set_bytes) for the "
                               f"pods of {req.target}, which the HPA's memory metric needs")
        demand["memory"] = r.filled(mem, "memory working set")
    signals: dict[str, tuple[str, dict[str, str]]] = {}
    for name, kind, labels in metrics:
        if name in ("cpu", "memory") and kind == "Resource":
            continue
        promql = req.queries.get(name) or (r.q.pods_metric(name, labels) if kind == "Pods"
                                           else r.q.namespace_metric(name, labels))
        got = r.single(promql, f"metric {name}")
        if got is None:
            raise HistoryError(f"missing series: metric {name} ({kind}): no data for {one_line(promql)} "
                               f"(pass --query {name}=PROMQL)")
        demand[name] = r.filled(got, f"metric {name}")
        signals[name] = (kind, labels)
    unknown = set(req.queries) - {m[0] for m in metrics}
    if unknown:
        raise HistoryError(f"--query {sorted(unknown)[0]}: the HPA has no metric of that name "
                           f"(its metrics: {', '.join(sorted(names)) or 'none'})")

    intervals = _intervals(r, saturated)
    added: dict[str, float] = {}
    if cpu_observed is not None and intervals:
        demand["cpu"], added["cpu"] = _estimate_saturated(cpu_observed, saturated)
        _report_saturated(r, intervals, cpu_observed, demand["cpu"])
    created = {s.labels.get("pod", ""): s.value for s in r.instant(r.q.pods_created())}
    requests = _resources(r, "requests", hpa, metrics, created)
    limits = _resources(r, "limits", hpa, metrics, created)
    startup, p90, started = _startup(r, created)
    pending = _pending(r, created)
    return History(request=req, times=r.times, replicas=replicas, demand=demand, cpu_observed=cpu_observed,
                   saturated=saturated, intervals=intervals, requests=requests, limits=limits, startup=startup,
                   startup_p90=p90, pods_started=started, hpa=hpa, hpa_source=hpa_source, metric_signals=signals,
                   assumed=assumed, warnings=r.warnings, demand_added=added, synced=synced, sync_interval=interval,
                   sync_anchor=anchor,
                   pending=pending)


def _with_rescales(r: _Reader, replicas: list[int], synced: ClusterTimes) -> list[int]:
    """The replica count at each step: kube-state-metrics' latest sample before it, which is up to
    a scrape interval old, updated by the HPA's rescales (its events) since that sample, so a
    rescale shows at the first step after it rather than up to a scrape later."""
    if not synced.rescales:
        return replicas
    seen = r.single(f"timestamp({r.q.replicas()})", "observed replicas samples")
    if seen is None:
        return replicas
    out = list(replicas)
    for k, t in enumerate(r.times):
        since = seen[k]
        after = [n for when, n, _ in synced.rescales if since is not None and since < when <= t]
        if after:
            out[k] = after[-1]
    return out


def _cpu_usage(r: _Reader, scale_downs: list[float]) -> list[float | None] | None:
    """The workload's CPU usage (cores) held over each step. When the step is a whole number of
    cAdvisor scrape intervals: the counters' increase between the samples nearest the step's two
    ends (evaluated half a scrape interval after each end) over the step, which counts a new
    container's usage from its start and averages over exactly one step, and a stopped pod's
    usage after its last sample; else rate() over the centred window (docs/history.md, "Where
    each figure comes from")."""
    step, scrape = r.req.step, r.scrape
    if scrape is None or step < scrape or abs(step / scrape - round(step / scrape)) > 0.05:
        return r.single(r.q.cpu_usage(), "cpu usage", r.shift)
    lookback = max(STALENESS, 3 * scrape)
    used = _per_pod(r, r.q.cpu_increase(lookback), step + scrape / 2)
    if not used:
        return None
    # each pod's latest sample half a scrape after each step's start, and after the last step's end
    sampled = _per_pod(r, r.q.cpu_sampled_at(), scrape / 2, 1)
    total: list[float | None] = [None] * len(r.times)
    for points in used.values():
        for k, v in points.items():
            total[k] = v + (total[k] or 0.0)
    at: list[float | None] = [None] * (len(r.times) + 1)
    for points in sampled.values():
        for k, v in points.items():
            seen = at[k]
            at[k] = v if seen is None else max(seen, v)
    spans: list[list[float]] = []  # [from, to, core-seconds, step]: the usage between two sample instants
    for k, v in enumerate(total):
        a, b = at[k], at[k + 1]
        if v is None:
            continue
        if a is None or b is None or not b > a:  # no instants: the step itself
            a, b = r.times[k], r.times[k] + step
        spans.append([a, b, v, k])
    add_stopped_pods(spans, used, sampled, scrape, scale_downs)
    _spread_first_samples(r, spans, lookback, scrape)
    # to whole millicores, the resolution of the HPA's CPU metrics (a metric's MilliValue, rounded
    # up): below it the measuring noise (sample instants to the millisecond) would round a pod's
    # share up a millicore where the cluster's was exact
    return [None if v is None else round(v, 3)
            for v in resample(locate_steps([(a, b, v / (b - a)) for a, b, v, _ in spans]), r.times, step)]


def _per_pod(r: _Reader, promql: str, shift: float, more: int = 0) -> dict[str, dict[int, float]]:
    """A range query with a series per pod, as pod -> step index -> value, over the history's
    steps and ``more`` steps after them, each evaluated ``shift`` after its step."""
    step = r.req.step
    out: dict[str, dict[int, float]] = {}
    for series in r.client.query_range(promql, r.start + shift, r.end + more * step + shift, step, r.progress):
        points = out.setdefault(series.labels.get("pod", ""), {})
        for t, v in zip(series.times, series.values):
            if math.isfinite(v):
                points[int(round((t - shift - r.start) / step))] = v
    return out


def _scale_downs(r: _Reader, synced: ClusterTimes, replicas: list[int]) -> list[float]:
    """The instants the HPA scaled the workload down at, from its rescale events (one known to
    the second is taken in the middle of it): a Deployment deletes its surplus pods then."""
    out: list[float] = []
    size: int | None = None
    for t, n, exact in synced.rescales:
        if size is None:
            k = math.ceil((t - r.start) / r.req.step) - 1  # the last step before it
            size = replicas[k] if 0 <= k < len(replicas) else None
        if size is not None and n < size:
            out.append(t if exact else t + LAST_SCALE_ROUNDING)
        size = n
    return out


def _spread_first_samples(r: _Reader, spans: list[list[float]], lookback: float, scrape: float) -> None:
    """A new pod's first counter value holds its usage since it started, partly before the span it
    is measured in: the part since it turned Ready (when it began to take its share of the load,
    which the other pods' usage lost then) is spread back evenly over the time since then.

    Ready is known to the second (``kube_pod_status_ready_time``), which moves up to a second's
    share of the load between two spans: within that second, the instant taken is the one that
    keeps the span before as high as the steady one before it (a pod turning Ready does not
    change the load: as high as the span after, or before), else the middle of the second."""
    ready = {s.labels.get("pod", ""): s.value for s in r.instant(r.q.pods_ready_time())}
    if not ready or not spans:
        return
    of_row = {int(span[3]): i for i, span in enumerate(spans)}
    firsts = [(t, value, ready.get(series.labels.get("pod", "")))
              for series in r.range(r.q.cpu_first_seen(lookback), r.req.step + scrape / 2)
              for t, value in zip(series.times, series.values)]
    # the latest first: a span's level is then clean of the later pods' early parts when an
    # earlier pod's is fitted to it
    for t, value, second in sorted(firsts, key=lambda f: -f[0]):
        k = of_row.get(int(round((t - r.start) / r.req.step)))
        if second is None or k is None or not math.isfinite(value) or value <= 0 or second >= spans[k][0]:
            continue
        a, b = spans[k][0], spans[k][1]
        early = _early_part(spans, k, value, second)
        since = (a * value - early * b) / (value - early) if early < value else second
        spans[k][2] -= early
        for span in spans[:k]:
            overlap = min(span[1], a) - max(span[0], since)
            if overlap > 0:
                span[2] += early * overlap / (a - since)


def _early_part(spans: list[list[float]], k: int, value: float, second: float) -> float:
    """How much of a first counter ``value`` measured in span ``k`` was used before it began, the
    pod having turned Ready within ``[second, second + 1)``."""
    a, b = spans[k][0], spans[k][1]

    def early(since: float) -> float:
        return value * (a - since) / (b - since) if since < a else 0.0

    most, least = early(second), early(min(second + READY_ROUNDING * 2, a))
    middle = early(second + READY_ROUNDING)
    # the load the pod came to share: the span after (the nearest whole one), else the one before
    near = [i for i in (k + 1, k - 2) if 0 <= i < len(spans) and k >= 1
            and all(abs(spans[j][1] - spans[j + 1][0]) < 1e-6 for j in range(min(i, k - 1), max(i, k)))]
    if not near:
        return middle
    level = spans[near[0]][2] / (spans[near[0]][1] - spans[near[0]][0])
    missing = level * (spans[k - 1][1] - spans[k - 1][0]) - spans[k - 1][2]
    return min(most, max(least, missing))


def _unknown_workload(r: _Reader) -> HistoryError:
    metric = r.q.replicas().split("{")[0]
    if not r.exists(metric):
        return HistoryError(f"missing series: no kube-state-metrics ({metric}) in prometheus {r.client.url} between "
                            f"{format_epoch(r.start)} and {format_epoch(r.end)} (is kube-state-metrics scraped?)")
    label = "statefulset" if r.req.kind == "StatefulSet" else "deployment"
    seen = sorted({s.labels.get(label, "") for s in r.instant(r.q.workloads_in_namespace())} - {""})
    return HistoryError(f"unknown workload: no {r.req.kind} {r.req.namespace}/{r.req.name} in {metric} between "
                        f"{format_epoch(r.start)} and {format_epoch(r.end)} ({r.req.kind}s in {r.req.namespace}: "
                        f"{', '.join(seen[:10]) or 'none'})")


def _saturation(r: _Reader, cpu: list[float]) -> list[bool]:
    """Per step: throttled in more than THROTTLED_SHARE of the CFS periods, or at the CPU limit."""
    out = [False] * len(r.times)
    throttled = r.single(r.q.throttled_share(), "throttled share", r.shift)
    limits = r.single(r.q.cpu_limits(), "cpu limits")
    if throttled is None and limits is None:
        r.warn("warning: no CFS throttling series and no CPU limits for the pods: saturation cannot be seen "
               "(containers without a CPU limit are never throttled); no interval is marked saturated")
        return out
    for k in range(len(out)):
        share = throttled[k] if throttled is not None else None
        limit = limits[k] if limits is not None else None
        out[k] = bool((share is not None and share > THROTTLED_SHARE)
                      or (limit is not None and limit > 0 and cpu[k] >= AT_LIMIT * limit))
    return out


def _saturated_runs(saturated: list[bool]) -> Iterator[tuple[int, int]]:
    """``(k, j)`` of each run of saturated steps, ``saturated[k:j]`` all true."""
    k = 0
    while k < len(saturated):
        if not saturated[k]:
            k += 1
            continue
        j = k
        while j < len(saturated) and saturated[j]:
            j += 1
        yield k, j
        k = j


def _intervals(r: _Reader, saturated: list[bool]) -> list[Interval]:
    return [Interval(r.times[k], r.times[j - 1] + r.req.step,
                     f"cpu throttled in > {THROTTLED_SHARE:.0%} of CFS periods or at >= {AT_LIMIT:.0%} of "
                     "the CPU limits: observed usage is a lower bound on demand")
            for k, j in _saturated_runs(saturated)]


SATURATED_LINES = 5  # intervals reported one by one; the rest in one line


def _report_saturated(r: _Reader, intervals: list[Interval], observed: list[float], estimate: list[float]) -> None:
    for i in intervals[:SATURATED_LINES]:
        a, b = (int(round((t - r.start) / r.req.step)) for t in (i.start, i.end))
        extra = max((e - o for e, o in zip(estimate[a:b], observed[a:b])), default=0.0)
        r.warn(f"warning: saturated from {format_epoch(i.start)} to {format_epoch(i.end)} (cpu throttled in > "
               f"{THROTTLED_SHARE:.0%} of CFS periods or at >= {AT_LIMIT:.0%} of the CPU limits): observed usage is a "
               "lower bound on demand; demand there estimated as max(observed, the straight line between the "
               f"unsaturated values on both sides), {extra:.3g} cores above the usage at most")
    if len(intervals) > SATURATED_LINES:
        rest = intervals[SATURATED_LINES:]
        r.warn(f"warning: saturated in {len(rest)} more intervals ({sum(i.end - i.start for i in rest):g}s in all), "
               "estimated the same way; all are listed under observed.saturated in the scenario")


def _estimate_saturated(cpu: list[float], saturated: list[bool]) -> tuple[list[float], float]:
    """Demand in each saturated run: max(observed, the straight line between its unsaturated edges)."""
    out = list(cpu)
    most = 0.0
    for k, j in _saturated_runs(saturated):
        before = cpu[k - 1] if k > 0 else cpu[j] if j < len(cpu) else cpu[k]
        after = cpu[j] if j < len(cpu) else before
        for i in range(k, j):
            line = before + (after - before) * (i - k + 1) / (j - k + 1)
            out[i] = max(cpu[i], line)
            most = max(most, out[i] - cpu[i])
    return out, most


def _report_resets(r: _Reader) -> None:
    found = r.range(r.q.resets())
    for s in found:
        times = [t for t, v in zip(s.times, s.values) if v > 0]
        if times:
            pod, container = s.labels.get("pod", "?"), s.labels.get("container", "?")
            r.warn(f'warning: counter reset of container_cpu_usage_seconds_total{{pod="{pod}", container="{container}"}} '
                   f"near {format_epoch(times[0])}: rate() counts from the reset, so usage there is kept as "
                   "Prometheus computes it")


def _resources(r: _Reader, which: str, hpa: dict[str, Any], metrics: list[tuple[str, str, dict[str, str]]],
               created: dict[str, float]) -> dict[str, dict[str, float]]:
    """The latest pod's per-container requests (or limits); a change over the range is said."""
    found = r.instant(r.q.resources(which))
    per_pod: dict[str, dict[str, dict[str, float]]] = {}
    for s in found:
        pod, container, resource = s.labels.get("pod", ""), s.labels.get("container", ""), s.labels.get("resource", "")
        per_pod.setdefault(pod, {}).setdefault(container, {})[resource] = s.value
    if not per_pod:
        utilization = [m for m in metrics if m[1] == "Resource" and m[0] in ("cpu", "memory")]
        if which == "requests" and any(_is_utilization(hpa, m[0]) for m in utilization):
            raise HistoryError(f"missing series: no kube_pod_container_resource_requests for the pods of "
                               f"{r.req.target}, which the HPA's Utilization target needs")
        r.warn(f"warning: no kube_pod_container_resource_{which} for the pods of {r.req.target}: "
               f"the scenario's containers have no {which}")
        return {}
    latest = max(per_pod, key=lambda p: (created.get(p, 0.0), p))
    shapes = {tuple(sorted((c, tuple(sorted(v.items()))) for c, v in per_pod[p].items())) for p in per_pod}
    if len(shapes) > 1:
        r.warn(f"warning: {which} differ across the {len(per_pod)} pods of the range (a rollout?): using those of "
               f"the latest pod, {latest}")
    return per_pod[latest]


def _is_utilization(hpa: dict[str, Any], resource: str) -> bool:
    for m in (hpa.get("spec") or {}).get("metrics") or []:
        block = m.get("resource") or m.get("containerResource") or {}
        if block.get("name") == resource and (block.get("target") or {}).get("type") == "Utilization":
            return True
    return False


def _startup(r: _Reader, created: dict[str, float]) -> tuple[float | None, float | None, int]:
    """Median and 90th percentile of first-Ready minus creation over the pods created in the range:
    first Ready from ``kube_pod_status_ready_time`` (exact to the second), else the first step
    that sees a Ready sample."""
    ready = {s.labels.get("pod", ""): s.value for s in r.instant(r.q.pods_first_ready())}
    ready.update({s.labels.get("pod", ""): s.value for s in r.instant(r.q.pods_ready_time())})
    if not created:
        r.warn(f"warning: missing series: no kube_pod_created for the pods of {r.req.target}: startup not measured, "
               "0s assumed")
        return None, None, 0
    spans = sorted(ready[p] - c for p, c in created.items() if c >= r.start and p in ready and ready[p] >= c)
    if not spans:
        r.warn("warning: no pod of the workload was created and became Ready within the range: startup not "
               "measured, 0s assumed")
        return None, None, 0
    p90 = spans[min(len(spans) - 1, int(math.ceil(0.9 * len(spans))) - 1)]
    return float(statistics.median(spans)), float(p90), len(spans)


def _pending(r: _Reader, created: dict[str, float]) -> float | None:
    """Median of first container start minus creation over the pods created in the range (the
    metrics window of a new pod starts when it runs, here as in the simulator); None without
    ``kube_pod_container_state_started``."""
    running = {s.labels.get("pod", ""): s.value for s in r.instant(r.q.pods_running())}
    spans = [running[p] - c for p, c in created.items() if c >= r.start and p in running and running[p] >= c]
    return float(statistics.median(spans)) if spans else None


__all__ = ["History", "HistoryError", "HistoryRequest", "Interval", "read_history"]
