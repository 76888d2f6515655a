"""``pyhpa simulate``: load a scenario, run it (or several HPA variants on its trace), write outputs.

Outputs in the output directory: ``timeline.csv``/``timeline.json``, ``summary.json``/``.md``/``.csv``
and ``plot.png``; with ``--compare`` one sub-directory per variant plus ``compare.*`` and
``compare.png``. The scenario's own HPAs are the first variant (``scenario``).
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

from pyhpa.sim.plot import plot_compare, plot_run
from pyhpa.sim.report import summarize, summary_table, write_summary, write_timeline
from pyhpa.sim.runner import SimResult, run_scenario
from pyhpa.sim.scenario import Scenario, ScenarioError, load_hpa_file, load_scenario

# Show a progress bar when a run will take this many reconciles or more.
PROGRESS_THRESHOLD = 20_000


def _variant_hpas(scenario: Scenario, path: Path) -> list[Any]:
    """HPAs of a compare file; a missing namespace takes the namespace of the scenario's first HPA."""
    default_ns = scenario.hpas[0].metadata.namespace or "default"
    return [hpa for hpa, _ in load_hpa_file(path, scenario.config.gates, scenario.workloads, default_ns)]


@contextmanager
def _progress(enabled: bool, label: str, total: float) -> Iterator[Any]:
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.percentage:>5.1f}%"),
                  TimeElapsedColumn(), TimeRemainingColumn(), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda done: bar.update(task, completed=done)


def _run(scenario: Scenario, hpas: list[Any] | None, label: str, progress: bool | None) -> SimResult:
    n_hpas = len(hpas if hpas is not None else scenario.hpas)
    work = n_hpas * scenario.duration / scenario.config.sync_period
    show = progress if progress is not None else work >= PROGRESS_THRESHOLD
    with _progress(show, f"simulating {label or scenario.name}", scenario.duration) as cb:
        return run_scenario(scenario, hpas=hpas, label=label, progress=cb)


def write_outputs(result: SimResult, out_dir: Path) -> dict[str, Any]:
    write_timeline(result, out_dir)
    summaries = summarize(result)
    write_summary(summaries, out_dir)
    plot_run(result, out_dir / "plot.png", summaries)
    return {"summaries": summaries}


def simulate(scenario_path: str | Path, out_dir: str | Path, compare: Sequence[str | Path] = (),
             progress: bool | None = None) -> dict[str, Any]:
    """Run a scenario and write its outputs; returns summaries and the results."""
    scenario = load_scenario(scenario_path)
    out = Path(out_dir)
    if not compare:
        result = _run(scenario, None, "", progress)
        written = write_outputs(result, out)
        return {"results": [result], "summaries": written["summaries"], "table": summary_table(written["summaries"])}
    variants: list[tuple[str, list[Any] | None]] = [("scenario", None)]
    seen = {"scenario"}
    for p in compare:
        path = Path(p)
        label = path.stem
        n = 2
        while label in seen:
            label = f"{path.stem}-{n}"
            n += 1
        seen.add(label)
        variants.append((label, _variant_hpas(scenario, path)))
    results = []
    all_summaries: list[dict[str, Any]] = []
    for label, hpas in variants:
        result = _run(scenario, hpas, label, progress)
        written = write_outputs(result, out / label)
        results.append(result)
        all_summaries.extend(written["summaries"])
    write_summary(all_summaries, out, stem="compare")
    plot_compare(results, out / "compare.png")
    return {"results": results, "summaries": all_summaries, "table": summary_table(all_summaries)}


__all__ = ["simulate", "write_outputs", "ScenarioError"]
