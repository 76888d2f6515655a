"""Running a scenario as independent parts: one after another, or in worker processes.

HPAs meet only inside a namespace (the pods a selector lists, the ambiguity check, the
namespace's scale targets), through Object/External metrics, which a sync may read from a
workload of another namespace, and through the scenario's nodes, whose CPU the pods of every
namespace share. Namespaces joined by such a metric name (all, with nodes) form one *part*; parts
share nothing, so each runs through the same :func:`~pyhpa.sim.runner.run_scenario` and the
merged result is the one a single run of everything computes (tested).

Why run in parts at all, on one core: a run's objects for a few dozen HPAs stay in the CPU's
caches through the whole trace, while a sync over a thousand HPAs walks through megabytes of
them on every period. Measured on the fleet benchmark (200 HPAs, 6 h): ~9–10k reconciles per
CPU second in one run, ~12–16k in chunks of 10–40 HPAs. Chunks of about ``CHUNK_HPAS`` HPAs
therefore run one after another (``jobs`` = 1), or go to a pool of ``jobs`` worker processes
(``pyhpa simulate --jobs N``), or to the workers of a Dask cluster (``--dask-scheduler``,
:mod:`pyhpa.sim.dask_run`); ``--compare`` variants are split the same way.

Workers are forked, all at once before anything else starts a thread here (so a progress bar is
opened only once they run: ``progress_scope``); forking needs no ``__main__`` guard in the
caller's script, unlike spawning. Tasks and results travel pickled; results come back without
their scenario, which the parent puts back.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import time
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from contextlib import nullcontext
from typing import Any, Callable, ContextManager, Sequence

from pyhpa.api.types import hpa_key
from pyhpa.sim.results import SimResult
from pyhpa.sim.runner import run_scenario
from pyhpa.sim.scenario import Scenario

Variant = tuple[str, "list[Any] | None"]  # (label, HPAs; None: the scenario's own)

CHUNK_HPAS = 16  # HPAs per chunk (whole parts: a larger namespace is one larger chunk)

_PROGRESS: Any = None  # the shared per-task progress array, in a worker (set by _init_worker)


def partition(scenario: Scenario, hpas: Sequence[Any]) -> list[tuple[list[Any], list[Any]]]:
    """The run's independent parts, each (workloads, HPAs) in the scenario's order, largest first.

    Namespaces are joined when an HPA of one reads an Object or External metric that a workload
    of the other defines (the runner may look that metric up there); a superset of the reads
    that happen, so no part ever needs another's workload.
    """
    parent: dict[str, str] = {}

    def find(ns: str) -> str:
        parent.setdefault(ns, ns)
        while parent[ns] != ns:
            parent[ns] = parent[parent[ns]]
            ns = parent[ns]
        return ns

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    defined_in: dict[str, set[str]] = {}
    for obj in scenario.workloads:
        find(obj.namespace)
        for name in obj.model.metrics:
            defined_in.setdefault(name, set()).add(obj.namespace)
    for hpa in hpas:
        ns = hpa.metadata.namespace or ""
        find(ns)
        for m in hpa.spec.metrics or ():
            source = m.object if m.type == "Object" else m.external if m.type == "External" else None
            if source is None:
                continue
            for other in defined_in.get(source.metric.name, ()):
                union(ns, other)
    if scenario.nodes:  # the pods of every namespace share the nodes: one part
        for ns in list(parent):
            union(next(iter(parent)), ns)
    parts: dict[str, tuple[list[Any], list[Any]]] = {}
    for obj in scenario.workloads:
        parts.setdefault(find(obj.namespace), ([], []))[0].append(obj)
    for hpa in hpas:
        parts.setdefault(find(hpa.metadata.namespace or ""), ([], []))[1].append(hpa)
    # Workloads no HPA scales still tick (their traces are part of the result).
    return sorted(parts.values(), key=lambda p: -_weight(p))


def _weight(part: tuple[list[Any], list[Any]]) -> float:
    """Work of a part, for balancing: its HPAs' syncs dominate, a workload's ticks cost less."""
    return len(part[1]) + 0.25 * len(part[0])


def chunks(parts: list[tuple[list[Any], list[Any]]], size: int = CHUNK_HPAS) -> list[tuple[list[Any], list[Any]]]:
    """Consecutive parts joined until a chunk holds ``size`` HPAs (the last one may hold fewer)."""
    out: list[tuple[list[Any], list[Any]]] = []
    for workloads, hpas in parts:
        if not out or len(out[-1][1]) >= size:
            out.append(([], []))
        out[-1][0].extend(workloads)
        out[-1][1].extend(hpas)
    return out


def _init_worker(progress: Any) -> None:
    global _PROGRESS
    _PROGRESS = progress
    # Ctrl-C reaches the whole process group: a worker just ends (the parent reports the stop).
    signal.signal(signal.SIGINT, lambda *_: os._exit(130))


def _run_task(slot: int, scenario: Scenario, hpas: list[Any], label: str) -> SimResult:
    def report(done: float) -> None:
        _PROGRESS[slot] = done

    result = run_scenario(scenario, hpas=hpas, label=label, progress=report)
    _PROGRESS[slot] = scenario.duration
    result.scenario = None  # type: ignore[assignment]  # the parent has it; spare the pipe
    return result


def run_part(scenario: Scenario, hpas: list[Any], label: str) -> SimResult:
    """One chunk on a Dask worker: its result without the scenario (the caller has it)."""
    result = run_scenario(scenario, hpas=hpas, label=label)
    result.scenario = None  # type: ignore[assignment]
    return result


def run_variants(
    scenario: Scenario,
    variants: Sequence[Variant],
    jobs: int = 1,
    progress: Callable[[float], None] | None = None,
    progress_scope: Callable[[], ContextManager[Callable[[float], None] | None]] | None = None,
    chunk_hpas: int = CHUNK_HPAS,
    dask_scheduler: str | None = None,
) -> list[SimResult]:
    """Each variant's result, its chunks run one after another (``jobs`` = 1), by up to
    ``jobs`` worker processes, or (``dask_scheduler``, over ``jobs``) by the workers of the Dask
    scheduler at that address (``RunFailure`` when it cannot be reached or a worker fails).

    ``progress`` is told the simulated seconds done, averaged over the chunks by their weight
    (0 .. duration); ``progress_scope``, when given, is entered once the workers run and yields
    that callback (a progress bar whose thread must not exist when the workers fork)."""
    tasks: list[tuple[int, Scenario, list[Any], str, float]] = []  # (variant index, scenario, HPAs, label, weight)
    chosen_of: list[list[Any]] = []
    for vi, (label, hpas) in enumerate(variants):
        chosen = list(hpas if hpas is not None else scenario.hpas)
        chosen_of.append(chosen)
        pieces_of = chunks(partition(scenario, chosen), chunk_hpas)
        if len(pieces_of) <= 1:  # one piece: the whole scenario, as it is
            tasks.append((vi, scenario, chosen, label, _weight((scenario.workloads, chosen))))
            continue
        for workloads, part_hpas in pieces_of:
            sub = dataclasses.replace(scenario, workloads=workloads, hpas=part_hpas)
            tasks.append((vi, sub, part_hpas, label, _weight((workloads, part_hpas))))
    scope = progress_scope if progress_scope is not None else (lambda: nullcontext(progress))
    total_weight = sum(t[4] for t in tasks) or 1.0
    pieces: list[list[SimResult]] = [[] for _ in variants]
    started = time.perf_counter()
    if dask_scheduler:
        from pyhpa.sim.dask_run import dask_map

        with scope() as report:
            done = [0.0]

            def finished(i: int) -> None:
                done[0] += tasks[i][4]
                if report is not None:
                    report(done[0] / total_weight * scenario.duration)

            found = dask_map(run_part, [(sub, part_hpas, label) for _, sub, part_hpas, label, _ in tasks],
                             dask_scheduler, what="a part of the scenario", on_done=finished)
        for (vi, *_), part in zip(tasks, found):
            pieces[vi].append(part)
        return _merged(scenario, variants, chosen_of, pieces, time.perf_counter() - started)
    if jobs <= 1 or len(tasks) <= 1:
        with scope() as report:
            done_weight = 0.0
            for vi, sub, part_hpas, label, weight in tasks:
                part = run_scenario(sub, hpas=part_hpas, label=label,
                                    progress=_share(report, done_weight, weight, total_weight, scenario.duration))
                done_weight += weight
                pieces[vi].append(part)
        return _merged(scenario, variants, chosen_of, pieces, time.perf_counter() - started)
    ctx = multiprocessing.get_context("fork")
    shared = ctx.Array("d", len(tasks), lock=False)
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=ctx, initializer=_init_worker,
                             initargs=(shared,)) as pool:
        futures = [pool.submit(_run_task, slot, sub, part_hpas, label)
                   for slot, (_, sub, part_hpas, label, _) in enumerate(tasks)]  # the first forks them all
        pending = set(futures)
        with scope() as report:
            while pending:
                done, pending = wait(pending, timeout=0.25, return_when=FIRST_EXCEPTION)
                for f in done:
                    f.result()  # a worker's exception, raised here
                if report is not None:
                    report(sum(shared[i] * tasks[i][4] for i in range(len(tasks))) / total_weight)
        for (vi, *_), f in zip(tasks, futures):
            pieces[vi].append(f.result())
    return _merged(scenario, variants, chosen_of, pieces, time.perf_counter() - started)


def _share(report: Callable[[float], None] | None, before: float, weight: float, total: float,
           duration: float) -> Callable[[float], None] | None:
    """A chunk's progress callback: the run's simulated seconds done (0 .. duration), counting the
    chunks run before it (``before``, by weight) as done."""
    if report is None:
        return None
    return lambda done: report((before * duration + weight * done) / total)


def _merged(scenario: Scenario, variants: Sequence[Variant], chosen_of: list[list[Any]],
            pieces: list[list[SimResult]], wall: float) -> list[SimResult]:
    return [merge(scenario, chosen, label, parts, wall)
            for (label, _), chosen, parts in zip(variants, chosen_of, pieces)]


def merge(scenario: Scenario, hpas: Sequence[Any], label: str, parts: Sequence[SimResult], wall: float) -> SimResult:
    """One result from the parts' results, in the order a single run gives (HPAs as listed, a
    repeated key at its first place; workloads as the scenario lists them)."""
    runs = {run.key: run for part in parts for run in part.hpas}
    traces = {key: trace for part in parts for key, trace in part.workloads.items()}
    order = list(dict.fromkeys(hpa_key(h) for h in hpas))
    workload_order = [(o.namespace, o.kind, o.name) for o in scenario.workloads]
    return SimResult(
        scenario=scenario,
        label=label,
        hpas=[runs[k] for k in order if k in runs],
        workloads={k: traces[k] for k in workload_order if k in traces},
        wall_seconds=wall,
        reconciles=sum(p.reconciles for p in parts),
    )
