"""``pyhpa tune``'s runs: each candidate simulated by the engine ``pyhpa simulate`` uses, in local
worker processes (``--jobs``) or on a Dask cluster (``--dask-scheduler``), then the outputs.

A candidate travels as a :class:`Job`: the scenario's text and directory and the candidate's HPA
manifests, plain data that pickles anywhere (no live objects), and :func:`evaluate` (a pure
function of the job) parses, simulates and summarizes it. Results are put back in the
candidates' order, whatever order they finish in, so both ways give the same files.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterator, Mapping, Sequence

from pyhpa.sim.dask_run import CONNECT_SECONDS, dask_map
from pyhpa.sim.parts import run_variants
from pyhpa.sim.phases import phase_offsets, shifted, worst_figures
from pyhpa.sim.progress import Progress
from pyhpa.sim.replay import replay_of_result
from pyhpa.sim.report import summarize
from pyhpa.controller.flags import FlagValues
from pyhpa.sim.scenario import default_hpa_loader, parse_scenario
from pyhpa.sim.scenario_fields import ScenarioError
from pyhpa.sim.tune import (
    DEFAULT_REFINE,
    Candidate,
    TuneError,
    candidates,
    default_dimensions,
    make_candidate,
    merge_space,
    read_tune_section,
    refinements,
    space_from_section,
)
from pyhpa.sim.tune_choice import (
    DEFAULT_BUDGET,
    Budget,
    Caps,
    cheapest,
    choose,
    pareto,
    parse_budget,
    parse_cap,
    per_day,
)

# The figures a candidate is judged by: summed over its HPAs (peakReplicas: the highest).
DASK_CONNECT_SECONDS = CONNECT_SECONDS  # how long to keep trying to reach --dask-scheduler

SUMMED = ("podHours", "underProvisionedPodSeconds", "underProvisionedSeconds", "scaleEvents", "flaps")


@dataclass(frozen=True)
class Job:
    scenario_text: str
    source: str  # the scenario's path as given (for messages)
    base_dir: str  # absolute: files the scenario names are read from here
    name: str  # the candidate's name
    manifests: tuple[Mapping[str, Any], ...]
    controller_flags: tuple[tuple[str, Any], ...] = ()  # the command line's, over the scenario's
    phases: int = 1  # sync/scrape phases to run it at (pyhpa.sim.phases)


def evaluate(job: Job) -> dict[str, Any]:
    """One candidate's figures: the scenario with the candidate's HPAs, run as ``pyhpa simulate
    --compare`` runs a variant, summed over the HPAs by :func:`figures`; with several phases, each
    figure's worst over them (:func:`pyhpa.sim.phases.worst_figures`)."""
    scenario = parse_scenario(job.scenario_text, job.source, Path(job.base_dir),
                              controller_flags=FlagValues(dict(job.controller_flags)))
    hpas = [default_hpa_loader(dict(m), f"{job.name}: HPA {i}", scenario.config.gates)
            for i, m in enumerate(job.manifests)]
    per_phase = []
    for offset in phase_offsets(scenario, job.phases):
        (result,) = run_variants(shifted(scenario, offset), [(job.name, hpas)], jobs=1)
        per_phase.append(figures(result))
    return worst_figures(per_phase)


def figures(result: Any) -> dict[str, Any]:
    """A run's headline figures from :func:`pyhpa.sim.report.summarize`, summed over its HPAs, and
    the pod-seconds the demand needed (the yardstick of a share budget)."""
    summaries = summarize(result)
    out: dict[str, Any] = {}
    for key in SUMMED:
        values = [s.get(key) for s in summaries]
        out[key] = None if any(v is None for v in values) else sum(values)
    for key, digits in (("podHours", 6), ("underProvisionedPodSeconds", 3), ("underProvisionedSeconds", 3)):
        if out[key] is not None:
            out[key] = round(out[key], digits)
    peaks = [s.get("peakReplicas") for s in summaries if s.get("peakReplicas") is not None]
    out["peakReplicas"] = max(peaks) if peaks else None
    out["demandPodSeconds"] = round(sum(demand_pod_seconds(result, run.target) for run in result.hpas), 3)
    duration = result.scenario.duration
    for key in ("scaleEvents", "flaps"):
        out[f"{key}PerDay"] = None if out[key] is None else per_day(out[key], duration)
    return out


def demand_pod_seconds(result: Any, target: Any) -> float:
    """Pod-seconds the demand needed: per tick, the fewest Ready pods whose capacity covers it."""
    trace = result.workloads.get(target)
    if trace is None or trace.capacity is None:
        return 0.0
    times, end = trace.times, result.scenario.end
    return sum(trace.capacity.pods_for(d) * ((times[i + 1] if i + 1 < len(times) else end) - t)
               for i, (t, d) in enumerate(zip(times, trace.demand)))


# --------------------------------------------------------------------------- running the jobs


def _init_worker() -> None:
    # Ctrl-C reaches the whole process group: a worker just ends (the parent reports the stop).
    signal.signal(signal.SIGINT, lambda *_: os._exit(130))


ProgressScope = Callable[[], ContextManager[Callable[[], None]]]


def run_local(jobs: Sequence[Job], workers: int, progress_scope: ProgressScope) -> list[dict[str, Any]]:
    """Every job's figures, in order: in this process (``workers`` = 1) or in forked workers.

    The workers are forked at the first submit, before ``progress_scope`` is entered (a progress
    bar's thread must not exist when they fork, as in :mod:`pyhpa.sim.parts`); it yields the
    callback told of each finished job."""
    if workers <= 1 or len(jobs) <= 1:
        out = []
        with progress_scope() as tick:
            for job in jobs:
                out.append(evaluate(job))
                tick()
        return out
    ctx = multiprocessing.get_context("fork")  # no __main__ guard needed in the caller, as in parts
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=ctx, initializer=_init_worker) as pool:
        futures = [pool.submit(evaluate, job) for job in jobs]  # the first forks every worker
        with progress_scope() as tick:
            for f in as_completed(futures):
                f.result()  # a worker's exception, raised here
                tick()
        return [f.result() for f in futures]


def run_dask(jobs: Sequence[Job], address: str, progress_scope: ProgressScope) -> list[dict[str, Any]]:
    """Every job's figures, in order, from the workers of the Dask scheduler at ``address`` (they
    need pyhpa installed, and the files the scenario names at the same paths)."""
    with progress_scope() as tick:
        return dask_map(evaluate, [(job,) for job in jobs], address, what="a candidate",
                        hint="pyhpa and the scenario's files", on_done=lambda _: tick(),
                        connect_seconds=DASK_CONNECT_SECONDS)


@contextmanager
def _progress(mode: str, total: int, what: str) -> Iterator[Callable[[], None]]:
    """Candidates done out of ``total`` (:mod:`pyhpa.sim.progress`; ``mode`` "bar", "lines" or "off")."""
    with Progress(what, total, "candidates", mode) as shown:
        yield shown.advance


# --------------------------------------------------------------------------- the whole run


@dataclass
class TuneOutcome:
    candidates: list[Candidate]
    columns: list[str]  # the settings columns (dimensions)
    recommended: Candidate
    within_budget: bool
    budget: Budget
    limit: float  # the budget in under-provisioned pod-seconds
    caps: Caps  # the budget's caps on flaps and scale events per day
    demand_pod_seconds: float
    results: list[Any]  # SimResult of the current settings and of the recommended ones
    files: list[Path]
    replay: list[dict[str, Any]] = field(default_factory=list)  # the current settings' replay check (sim.replay)
    phases: int = 1  # each candidate judged by its worst over this many sync/scrape phases


def tune(scenario_path: str | Path, out_dir: str | Path, space: Mapping[str, tuple[Any, ...]] | None = None,
         budget: str | None = None, jobs: int = 1, dask_scheduler: str | None = None,
         progress: str = "off", refine: int = DEFAULT_REFINE, max_flaps: str | None = None,
         max_scale_events: str | None = None, phases: int = 1,
         controller_flags: Mapping[str, Any] | None = None) -> TuneOutcome:
    """Search the space, write ``frontier.csv``, ``recommended.yaml`` and ``report.html`` in
    ``out_dir``. ``progress``: "bar", "lines" or "off" (:func:`pyhpa.sim.progress.progress_mode`).
    ``space``: command-line lists by field (replacing the scenario's); ``refine``:
    rounds of :func:`~pyhpa.sim.tune.refinements` around the cheapest candidate within the budget;
    ``max_flaps``, ``max_scale_events``: the caps per day (flags' text, replacing the scenario's);
    ``phases``: judge each candidate by its worst figures over that many sync/scrape phases."""
    from pyhpa.sim.simulate import check_output_dir
    from pyhpa.sim.tune_report import write_outputs

    check_output_dir(Path(out_dir))  # before the search, not after it
    path = Path(scenario_path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc.strerror or exc}") from None
    base_dir = str(path.parent.resolve())
    flags = tuple(sorted((controller_flags or {}).items()))  # by flag name, as given on the command line
    scenario = parse_scenario(text, str(path), Path(base_dir), controller_flags=FlagValues(dict(flags)))
    section, loc = read_tune_section(text, str(path))
    section_dims, declared = space_from_section(section, loc, scenario)
    dims = merge_space(section_dims, dict(space or {}), default_dimensions(scenario))
    if budget is not None or "budget" not in declared:
        chosen_budget = parse_budget(budget if budget is not None else DEFAULT_BUDGET, "--budget")
    else:
        chosen_budget = parse_budget(*declared["budget"])
    caps_given = {}  # "maxFlaps"/"maxScaleEvents" -> (per day, where it came from)
    for key, flag, value in (("maxFlaps", "--max-flaps", max_flaps), ("maxScaleEvents", "--max-scale-events",
                                                                          max_scale_events)):
        if value is not None:
            caps_given[key] = (parse_cap(value, flag), flag)
        elif key in declared:
            caps_given[key] = (parse_cap(*declared[key]), declared[key][1])
    cands = candidates(scenario, dims)

    def run(batch: list[Candidate], what: str) -> None:
        work = [Job(text, str(path), base_dir, c.name, tuple(c.manifests), flags, phases) for c in batch]
        where = f"on {dask_scheduler}" if dask_scheduler else f"{jobs} jobs"
        def scope() -> ContextManager[Callable[[], None]]:
            return _progress(progress, len(work), f"tuning: {len(work)} {what} ({where})")

        found = run_dask(work, dask_scheduler, scope) if dask_scheduler else run_local(work, jobs, scope)
        for c, figs in zip(batch, found):
            c.figures = figs

    run(cands, "candidates")
    if cands[0].figures["underProvisionedPodSeconds"] is None:
        raise TuneError(f"{path}: tune needs the workload's capacity (workload.capacityPerReplica, or demand "
                        "driving cpu) to measure under-provisioning")
    demand = cands[0].figures["demandPodSeconds"]
    limit = chosen_budget.limit(demand)
    # By default the recommendation flaps no more than the current settings.
    flaps = caps_given.get("maxFlaps", (cands[0].figures["flapsPerDay"], "the current settings'"))
    events = caps_given.get("maxScaleEvents", (None, ""))
    caps = Caps(flaps[0], events[0], flaps[1], events[1])
    center, _ = cheapest(cands, limit, caps)
    for round_ in range(1, refine + 1):  # closer values around the cheapest candidate within the budget
        combos = refinements(dims, cands, center)
        if not combos:
            break
        more = [make_candidate(scenario, dims, combo, len(cands) + i, round_) for i, combo in enumerate(combos)]
        run(more, f"refinements (round {round_})")
        cands += more
        center, _ = cheapest(cands, limit, caps)
    rec, inside = choose(cands, limit, caps)
    for c, on in zip(cands, pareto([(c.figures["podHours"], c.figures["underProvisionedPodSeconds"]) for c in cands])):
        c.on_frontier = on
    rec_hpas = [default_hpa_loader(dict(m), f"{rec.name}", scenario.config.gates) for m in rec.manifests]
    # Forking after a Dask client ran (its threads) is not safe: then one after another.
    pair_jobs = 1 if dask_scheduler else min(max(jobs, 1), 2)
    results = run_variants(scenario, [("current", None), ("recommended", rec_hpas)], jobs=pair_jobs)
    outcome = TuneOutcome(cands, [d.column for d in dims], rec, inside, chosen_budget, limit, caps, demand, results,
                          [], replay_of_result(results[0]), phases)
    outcome.files = write_outputs(outcome, scenario, Path(out_dir))
    return outcome
