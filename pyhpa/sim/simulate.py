"""``pyhpa simulate``: load a scenario, run it (or several HPA variants on its trace), write outputs.

Outputs in the output directory: ``timeline.csv`` (or ``timeline.json``, or none: ``--timeline``),
``summary.json``/``.md``/``.csv``, ``plot.png`` and ``report.html``; with ``--compare`` one
sub-directory per variant (without a report.html) plus ``compare.*``, ``compare.png`` and a
``report.html`` with the variants overlaid. The scenario's own HPAs are the first variant (``scenario``).
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

from pyhpa.sim.capacity import capacity_warnings
from pyhpa.sim.html_report import write_html_report
from pyhpa.sim.plot import plot_compare, plot_run
from pyhpa.sim.report import summarize, summary_table, write_summary
from pyhpa.sim.parts import run_variants
from pyhpa.sim.phases import attach_bands, band_table, phase_offsets, shifted
from pyhpa.sim.progress import Progress, progress_mode
from pyhpa.sim.results import SimResult
from pyhpa.sim.scenario import Scenario, ScenarioError, load_hpa_file, load_scenario
from pyhpa.sim.timeline_files import TIMELINE_FORMATS, write_timeline

# On a terminal, show a progress bar when a run will take this many reconciles or more.
PROGRESS_THRESHOLD = 20_000


def _variant_hpas(scenario: Scenario, path: Path) -> list[Any]:
    """HPAs of a compare file; a missing namespace takes the namespace of the scenario's first HPA."""
    default_ns = scenario.hpas[0].metadata.namespace or "default"
    return [hpa for hpa, _ in load_hpa_file(path, scenario.config.gates, scenario.workloads, default_ns)]


def check_output_dir(out: Path, subdirs: Sequence[str] = ()) -> None:
    """``-o`` (and the variants' sub-directories) must be directories, or creatable as ones: a
    path that is a file, or where no directory can be made, is refused before the run, not after
    it (by making the missing directories and removing them again)."""
    import os

    for d in (out, *(out / s for s in subdirs)):
        if d.exists() and not d.is_dir():
            raise ScenarioError(f"-o: {d}: exists and is not a directory")
    existing = out
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        raise ScenarioError(f"-o: {out}: cannot create a directory under {existing}: it is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ScenarioError(f"-o: {out}: cannot write in {existing}: permission denied")
    made: list[Path] = []
    try:
        for d in reversed([out, *out.parents][:len(out.parts) - len(existing.parts)]):
            d.mkdir()
            made.append(d)
    except OSError as exc:
        raise ScenarioError(f"-o: {out}: cannot create a directory: {exc.strerror or exc}") from None
    finally:
        for d in reversed(made):
            d.rmdir()


@contextmanager
def _progress(mode: str, label: str, total: float) -> Iterator[Any]:
    """The run's progress (:mod:`pyhpa.sim.progress`), told the simulated seconds done."""
    if mode == "off":
        yield None
        return
    with Progress(label, total, "h simulated", mode, show=lambda s: f"{s / 3600:.1f}") as shown:
        yield shown.update


def write_outputs(result: SimResult, out_dir: Path, timeline: str = "csv", report: bool = True,
                  warnings: Sequence[str] = (), summaries: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A run's timeline, summary (``summaries``, else the result's), ``plot.png`` and
    (``report``) ``report.html``."""
    write_timeline(result, out_dir, timeline)
    summaries = summaries if summaries is not None else summarize(result)
    write_summary(summaries, out_dir)
    plot_run(result, out_dir / "plot.png", summaries)
    if report:
        write_html_report([result], out_dir / "report.html", summaries, warnings)
    return {"summaries": summaries}


def _run(scenario: Scenario, variants: list[tuple[str, list[Any] | None]], jobs: int,
         progress: bool | None, phase: str = "", dask_scheduler: str | None = None) -> tuple[list[SimResult], float]:
    """Every variant's result (see :mod:`pyhpa.sim.parts`) and the wall seconds they took
    together (each merged result carries that figure)."""
    n_hpas = sum(len(h if h is not None else scenario.hpas) for _, h in variants)
    work = n_hpas * scenario.duration / scenario.config.sync_period
    # Not asked for: a bar on a terminal for long runs; lines (one per 10 s at most) elsewhere.
    show = progress_mode(progress)
    if progress is None and show == "bar" and work < PROGRESS_THRESHOLD:
        show = "off"
    what = (variants[0][0] or scenario.name) if len(variants) == 1 else f"{len(variants)} variants"
    where = f" (on {dask_scheduler})" if dask_scheduler else f" ({jobs} jobs)" if jobs > 1 else ""
    jobs_text = where + (f", {phase}" if phase else "")
    results = run_variants(scenario, variants, jobs,
                           progress_scope=lambda: _progress(show, f"simulating {what}{jobs_text}", scenario.duration),
                           dask_scheduler=dask_scheduler)
    return results, results[0].wall_seconds


def _with_bands(scenario: Scenario, variants: list[tuple[str, list[Any] | None]], jobs: int, progress: bool | None,
                phases: int, dask_scheduler: str | None = None) -> tuple[list[SimResult], list[list[dict[str, Any]]], float]:
    """Every variant's result at offset 0 with its summaries, each summary given its phase band
    (:mod:`pyhpa.sim.phases`) when ``phases`` > 1, and the wall seconds of all the runs."""
    offsets = phase_offsets(scenario, phases)
    results, wall = _run(scenario, variants, jobs, progress, dask_scheduler=dask_scheduler)
    summaries = [summarize(r) for r in results]
    if phases > 1:
        by_phase = [[s for ss in summaries for s in ss]]
        for k, offset in enumerate(offsets[1:], start=2):
            more, took = _run(shifted(scenario, offset), variants, jobs, progress, f"phase {k}/{phases}", dask_scheduler)
            wall += took
            by_phase.append([s for r in more for s in summarize(r)])
        attach_bands(offsets, by_phase)
    return results, summaries, wall


def simulate(scenario_path: str | Path, out_dir: str | Path, compare: Sequence[str | Path] = (),
             progress: bool | None = None, jobs: int = 1, timeline: str = "csv", phases: int = 1,
             controller_flags: Any = None, dask_scheduler: str | None = None) -> dict[str, Any]:
    """Run a scenario (and the ``compare`` variants on its trace) and write the outputs; returns
    summaries, results, the wall seconds and the capacity model's warnings. ``jobs`` > 1: worker
    processes share the work (``dask_scheduler``: the workers of that Dask cluster do).
    ``timeline``: ``csv``, ``json`` or ``none`` (timeline_files).
    ``phases`` > 1: also run at that many sync/scrape phases and give each summary its band.
    ``controller_flags``: the command line's FlagValues, over the scenario's `controller:`."""
    if timeline not in TIMELINE_FORMATS:
        raise ValueError(f"--timeline: Unsupported value: {timeline!r}: supported values: {', '.join(TIMELINE_FORMATS)}")
    scenario = load_scenario(scenario_path, controller_flags=controller_flags)
    out = Path(out_dir)
    if not compare:
        check_output_dir(out)
        warnings = capacity_warnings(scenario, scenario.hpas)
        (result,), (summaries,), wall = _with_bands(scenario, [("", None)], jobs, progress, phases,
                                                                   dask_scheduler)
        written = write_outputs(result, out, timeline, warnings=warnings, summaries=summaries)
        _write_band(written["summaries"], out / "summary.md")
        return {"results": [result], "summaries": written["summaries"], "table": summary_table(written["summaries"]),
                "band": band_table(written["summaries"]), "wall": wall, "warnings": warnings}
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
    check_output_dir(out, [label for label, _ in variants])
    warnings = list(dict.fromkeys(w for _, hpas in variants
                                  for w in capacity_warnings(scenario, hpas if hpas is not None else scenario.hpas)))
    results, summaries_of, wall = _with_bands(scenario, variants, jobs, progress, phases, dask_scheduler)
    all_summaries: list[dict[str, Any]] = []
    for (label, _), result, summaries in zip(variants, results, summaries_of):
        written = write_outputs(result, out / label, timeline, report=False, summaries=summaries)
        _write_band(written["summaries"], out / label / "summary.md")
        all_summaries.extend(written["summaries"])
    write_summary(all_summaries, out, stem="compare")
    _write_band(all_summaries, out / "compare.md")
    plot_compare(results, out / "compare.png")
    write_html_report(results, out / "report.html", all_summaries, warnings)
    return {"results": results, "summaries": all_summaries, "table": summary_table(all_summaries),
            "band": band_table(all_summaries), "wall": wall, "warnings": warnings}


def _write_band(summaries: list[dict[str, Any]], md: Path) -> None:
    """The phase band, after the summary table of ``md`` (nothing without one)."""
    table = band_table(summaries)
    if table:
        with md.open("a") as fh:
            fh.write("\n" + table)


__all__ = ["simulate", "write_outputs", "check_output_dir", "ScenarioError"]
