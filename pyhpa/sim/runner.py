"""The simulation loop: a virtual clock driving the workload model and the real reconcile.

Nothing here sleeps. Time advances over a merged grid of *ticks* (every ``scenario.step`` on the
epoch's grid, and the start: load series are sampled and the workload model updated) and *syncs* (every sync period, starting one
period after the start, as a controller that has just listed its HPAs; an HPA with its own
``spec.behavior.syncPeriodSeconds`` at that period instead: each HPA is reconciled by
the same ``reconcile_hpa`` the live controller runs, over the in-memory cluster). Between ticks
the workload model integrates usage exactly, and the metrics pipeline scrapes on its own grid.

Before each HPA's sync, its namespace's pods and resource metrics are handed to the in-memory
cluster when they changed (new pod views, a new scrape); the cluster indexes them then.

The initial pods are created far enough before the start (startup + CPU initialization period +
one metrics window) that the run begins in a steady state: Ready pods with full metric windows.
"""

from __future__ import annotations

import gc
import math
import time
from array import array
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

from pyhpa.adapters.memory import MemoryCluster
from pyhpa.adapters.metrics_lists import NO_RESOURCE_METRICS
from pyhpa.api.types import HorizontalPodAutoscaler, ObjectReferenceView
from pyhpa.workload.model import to_datetime
from pyhpa.adapters.heap import young_generation
from pyhpa.sim.admission import PodAdmission
from pyhpa.sim.report import metric_columns, metric_currents
from pyhpa.sim.results import HpaRun, ScaleEvent, SimResult, SyncLog
from pyhpa.sim.schedule import UNIT, SyncTimes, period_ms, sync_offsets, sync_period_ms
from pyhpa.sim.scenario import Scenario, WorkloadObject
from pyhpa.sim.targets import SimTarget, demand_signal, params_for


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
    # load ticks on the epoch's grid of the step, as the metrics pipeline scrapes, whatever the
    # start (a replay starts at the real controller's sync phase, a fraction into a step of its
    # history): each tick then holds a step of the load as recorded; the start is a tick too.
    # A tick's time is the grid's own (whole milliseconds from the epoch), not the start plus an
    # offset, which a start with a fraction of a millisecond would put just before a load sample.
    # Distinct grid points round to distinct offsets (they are >= 1 ms apart), save one that
    # rounds to 0: the start keeps that offset.
    start_ms = scenario.start * unit
    ticks = {max(0, int(round(at - start_ms))): at / unit
             for at in range(math.ceil(start_ms / step - 1e-6) * step, math.floor(start_ms + total) + 1, step)}
    ticks[0] = scenario.start
    none: frozenset[int] = frozenset()
    return [(ticks.get(off, scenario.start + off / unit), off in ticks, due.get(off, none))
            for off in sorted(ticks.keys() | due.keys())]


@dataclass
class _Served:
    """What the cluster holds for one namespace: the versions of its targets' pod views and
    their latest scrape times when they were handed over."""

    views: list[int] = field(default_factory=list)
    scrapes: list[float | None] = field(default_factory=list)


@dataclass
class _StatusRead:
    """What the last timeline row read from an HPA's status, reused while no sync wrote a new
    one (the reconcile's result says when it did): currents in ``SyncLog.columns`` form."""

    read: bool = False  # once the first row after a sync read it
    conditions: tuple = ()  # (type, status, reason) of each condition
    listed: list | None = None  # a copy of the status' conditions list they were read from
    desired: int | None = None
    columns: tuple = ((), ())
    condition_id: int = 0


@dataclass
class _Placed:
    """One HPA of the run with its scale target (None when missing) and its namespace's targets."""

    run: HpaRun
    target: SimTarget | None
    local: list[SimTarget]
    period: int  # its sync period on the grid (KEP-6003)
    read: _StatusRead = field(default_factory=_StatusRead)
    failed_creates: int = 0  # its target's FailedCreate events already on its timeline


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
    # Only the signals this run's workloads read (a run of some parts of a scenario reads fewer).
    read = _signals_read(scenario.workloads)
    signal_names = [s for s in scenario.load if s in read]
    signals = {s: scenario.load[s].value(scenario.start) for s in signal_names}
    targets: dict[tuple[str, str, str], SimTarget] = {}
    admission = PodAdmission(scenario.nodes, scenario.quotas)  # the nodes their pods share, the quotas
    for obj in scenario.workloads:
        tgt = SimTarget(obj, scenario, signals, admission, warm=False)
        targets[tgt.key] = tgt
    target_list = list(targets.values())
    for tgt in target_list:  # once all exist: pods on one node share its CPU from their birth
        tgt.warm_up(scenario.start)
    by_ns: dict[str, list[SimTarget]] = {}
    for tgt in target_list:
        by_ns.setdefault(tgt.key[0], []).append(tgt)
    # Workloads of equal models share their parameters at each tick (the maps are pure functions
    # of the signals).
    models: list[Any] = []
    for tgt in target_list:
        if tgt.obj.model not in models:
            models.append(tgt.obj.model)
    model_of = [models.index(tgt.obj.model) for tgt in target_list]

    cluster = MemoryCluster(hpas=hpas, workloads=[t.view for t in target_list], keep_status_writes=False)
    for tgt in target_list:  # the view the cluster serves (and the reconcile scales) is the target's
        tgt.view = cluster.workloads[tgt.key]
    tick_times = array("d")
    for tgt in target_list:
        tgt.trace.times = tick_times
    periods = {key: sync_period_ms(hpa, scenario.config) for key, hpa in cluster.hpas.items()}  # KEP-6003
    # Without HPAs the controller still wakes every global period (the grid stays as it was).
    sync_periods = set(periods.values()) or {period_ms(scenario.config.sync_period)}
    sync_times = SyncTimes(sync_periods)
    placed: list[_Placed] = []
    for hpa_key, hpa in cluster.hpas.items():
        ns = hpa.metadata.namespace or ""
        ref = hpa.spec.scale_target_ref
        columns = metric_columns(hpa)
        target = targets.get((ns, ref.kind, ref.name))
        cap = target.trace.capacity if target is not None else None
        run = HpaRun(key=hpa_key, target=(ns, ref.kind, ref.name), start=scenario.start,
                     name=f"{hpa.metadata.namespace}/{hpa.metadata.name}", metrics=columns,
                     log=SyncLog(sync_times.by_period[periods[hpa_key]], [c["unit"] for c in columns], cap),
                     custom_metrics=[m for m in hpa.spec.metrics or [] if m.type in ("Pods", "Object", "External")])
        placed.append(_Placed(run, target, by_ns.get(ns, []), periods[hpa_key]))
    ports = cluster.ports()
    served: dict[str, _Served] = {}
    reconciles = 0
    grid = _grid(scenario, sync_periods)
    report_every = max(1, len(grid) // 200)

    # The timeline's first row: the state at the start, before any sync (no decision yet).
    sync_times.append(scenario.start)  # every period's timeline
    for p in placed:
        run, target = p.run, p.target
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
    with young_generation(_YOUNG_GENERATION):
        try:
            for i, (t, is_tick, is_sync) in enumerate(grid):
                if admission.waiting:  # pods that found no node: bound where room appeared
                    admission.schedule(t)
                if is_tick:
                    signals = {s: scenario.load[s].value(t) for s in signal_names}
                    params = [params_for(model, signals) for model in models]
                    tick_times.append(t)
                    for tgt, m in zip(target_list, model_of):  # the targets are independent: one pass does each in turn
                        wl = tgt.workload
                        wl.set_params(params[m], t)
                        tgt.record(wl.advance(t))
                        tgt.pipeline.advance(t)
                        tr = tgt.trace
                        tr.demand.append(signals[tr.demand_signal] if tr.demand_signal else 0.0)
                        tr.replicas.append(wl.replicas)
                        ready = wl.ready_count(t)
                        tr.ready.append(ready)
                        p_m = params[m]
                        tr.ready_pod_cpu.append(wl.ready_cpu(p_m.cpu_milli / ready, p_m) if ready else 0.0)
                    if admission.nodes:  # on shared nodes a Ready pod gets its part: every workload's load counts
                        for tgt in target_list:
                            tgt.trace.ready_pod_cpu[-1] = tgt.contended_ready_cpu(t)
                else:
                    for tgt in target_list:
                        tgt.record(tgt.workload.advance(t))
                        tgt.pipeline.advance(t)
                if is_sync:
                    now = to_datetime(t)
                    sync_times.append(t, is_sync)
                    # Load series are pure functions of t: evaluated once per instant for all HPAs.
                    signals_now: dict[str, float] = dict(signals) if is_tick else {}
                    for p in placed:
                        if p.period not in is_sync:
                            continue
                        reconciles += 1
                        _reconcile_one(p, cluster, ports, served, targets, scenario, t, now, reconcile_hpa,
                                       run_sync, signals_now)
                    if freezing and reconciles - frozen_at >= _FREEZE_EVERY:
                        gc.freeze()
                        frozen_at = reconciles
                if progress is not None and (i % report_every == 0 or i == len(grid) - 1):
                    progress(t - scenario.start)

        finally:
            if freezing:
                gc.unfreeze()

    return SimResult(
        scenario=scenario,
        label=label,
        hpas=[p.run for p in placed],
        workloads={k: t.trace for k, t in targets.items()},
        wall_seconds=time.perf_counter() - started,
        reconciles=reconciles,
    )


def _serve_namespace(cluster: MemoryCluster, served: dict[str, _Served], ns: str, local: list[SimTarget],
                     t: float, now: datetime) -> None:
    """Hand the namespace's pods and resource metrics at ``t`` (``now``) to the cluster, where they changed."""
    views: list[int] = []
    scrapes: list[float | None] = []
    for tgt in local:
        wl = tgt.workload
        view = tgt.view  # the scale target's view follows the model
        view.spec.replicas = wl.replicas
        view.status.replicas = wl.status_replicas()
        views.append(tgt.refresh_views(t))
        scrapes.append(tgt.pipeline.last_scrape)
    held = served.get(ns)
    if held is None:
        held = served[ns] = _Served()
    if views != held.views:
        cluster.set_pods([v for tgt in local for v in tgt.views], ns)
        held.views = views
    if scrapes != held.scrapes:
        cluster.set_pod_usage([u for tgt in local for u in tgt.pod_usage(t, now)], ns)
        held.scrapes = scrapes


def _reconcile_one(p: _Placed, cluster: MemoryCluster, ports: Any, served: dict[str, _Served],
                   targets: dict, scenario: Scenario, t: float, now: datetime, reconcile_hpa: Any,
                   run_sync: Any, signals_now: dict[str, float]) -> None:
    """One HPA's sync."""
    run, target, local = p.run, p.target, p.local
    hpa = cluster.hpas[run.key]
    ns = run.target[0]
    _serve_namespace(cluster, served, ns, local, t, now)
    outage = bool(scenario.outages) and scenario.outage(t, "resource")
    cluster.resource_metrics_error = NO_RESOURCE_METRICS if outage else None
    if run.custom_metrics:  # only Pods/Object/External metrics read these (a Resource-only HPA never does)
        _serve_custom_metrics(cluster, run, target, local, targets, scenario, t, ns)
    old = target.workload.replicas if target is not None else None
    outcome = None  # None after a failed pass: the status is read again
    try:
        outcome = run_sync(reconcile_hpa(hpa, ports, scenario.config, now))
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
                # The metrics' proposal, kept where stabilization or a limit changed it (the report's hover).
                proposal = outcome.trace.proposal if outcome is not None else None
                run.scale_events.append(ScaleEvent(t, old, target.workload.replicas, ev.reason, ev.message,
                                                   proposal if proposal != target.workload.replicas else None))
    demand = ready = replicas = None
    if target is not None:
        sig = target.trace.demand_signal
        if sig:
            demand = signals_now.get(sig)
            if demand is None:
                demand = signals_now[sig] = scenario.load[sig].value(t)
        ready = target.workload.ready_count(t)
        replicas = target.workload.replicas
    # What the timeline shows of the status, read again only when this sync wrote a new one.
    last = p.read
    if outcome is None or outcome.status_written or not last.read:
        status = cluster.hpas[run.key].status
        listed = status.conditions if status is not None else None
        # A sync mostly writes new metrics under the same conditions (the reconcile hands the
        # old list on, never changing a condition in place): compared by value, not re-read.
        if not last.read or listed != last.listed:
            conditions = tuple((c.type, c.status, c.reason) for c in listed or ())
            if not last.read or conditions != last.conditions:
                last.condition_id = run.log.condition_id(conditions)
            last.conditions, last.listed = conditions, None if listed is None else list(listed)
        last.read = True
        last.desired = status.desired_replicas if status is not None else None
        last.columns = run.log.columns(metric_currents(run.metrics, status))
    events = tuple(f"{e.type} {e.reason}: {e.message}" for e in new_events) if new_events else ()
    if target is not None and len(target.trace.failed_creates) > p.failed_creates:  # a quota refused pods
        events += tuple(f"Warning FailedCreate: {m}" for _, m in target.trace.failed_creates[p.failed_creates:])
        p.failed_creates = len(target.trace.failed_creates)
    run.log.append_columns(demand, replicas, ready, last.desired, last.columns, last.condition_id, events)


def _serve_custom_metrics(cluster: MemoryCluster, run: HpaRun, target: SimTarget | None, local: list[SimTarget],
                          targets: dict, scenario: Scenario, t: float, ns: str) -> None:
    """The custom and external metric values this HPA's Pods/Object/External metrics read at ``t``."""
    cluster.metric_values = []
    cluster.external_values = []
    order: list[SimTarget] = []  # where Object/External metrics are looked up first (built on demand)
    for spec in run.custom_metrics:
        if spec.type in ("Object", "External") and not order:
            order = ([target] if target is not None else []) + \
                [x for x in local if target is None or x.key != target.key]
        if spec.type == "Pods" and spec.pods is not None \
                and not scenario.outage(t, "pods", spec.pods.metric.name):
            name = spec.pods.metric.name
            for tgt in local:
                if name in tgt.obj.model.metrics:
                    cluster.metric_values.extend(tgt.pipeline.pods_custom_metric(name))
        elif spec.type == "Object" and spec.object is not None \
                and not scenario.outage(t, "object", spec.object.metric.name):
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
        elif spec.type == "External" and spec.external is not None \
                and not scenario.outage(t, "external", spec.external.metric.name):
            name = spec.external.metric.name
            for tgt in order + [x for x in targets.values() if x not in order]:
                sm = tgt.obj.model.metrics.get(name)
                if sm is not None:
                    ev = tgt.pipeline.external_metric(name, sm.labels)
                    if ev is not None:
                        cluster.external_values.append((None, ev))
                    break


def _is_reconcile_error(exc: Exception) -> bool:
    from pyhpa.controller.ports import PortError

    return isinstance(exc, PortError) or type(exc).__module__.startswith("pyhpa.controller")
