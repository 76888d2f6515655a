"""The ``pyhpa simulate`` command (registered in :mod:`pyhpa.cli`); heavy imports stay lazy.
Exit codes: :mod:`pyhpa.sim.exit_codes` (2 for bad flags and scenario errors, 1 for a failure to
write the outputs or of the Dask cluster)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Mapping, Optional

import typer

from pyhpa.controller.flag_options import given_flags, with_controller_flags
from pyhpa.sim.exit_codes import RUNTIME_FAILURE, USAGE


@with_controller_flags
def simulate_command(
    scenario: Path = typer.Argument(..., help="Scenario file (YAML); see examples/."),
    more: Optional[List[Path]] = typer.Argument(
        None, help="Further HPA manifests for --compare (`--compare a.yaml b.yaml` works).", show_default=False
    ),
    output: Path = typer.Option(Path("sim-out"), "-o", "--output", help="Directory for timeline, summary and plot."),
    compare: Optional[List[Path]] = typer.Option(
        None, "--compare", help="HPA manifest to run on the same trace (repeatable); writes compare.* too."
    ),
    progress: Optional[bool] = typer.Option(
        None, "--progress/--no-progress", help="Progress on stderr: a bar on a terminal (default: for long runs), else a line "
        "every 10 s (default: on)."
    ),
    timeline: str = typer.Option(
        "csv", "--timeline", help="Timeline output: csv (timeline.csv), json (timeline.json) or none.",
    ),
    jobs: int = typer.Option(
        1, "-j", "--jobs", help="Worker processes: independent namespaces and --compare variants run in "
        "parallel; the outputs are the same as with one.",
    ),
    dask_scheduler: Optional[str] = typer.Option(
        None, "--dask-scheduler", help="Run the scenario's independent parts (namespaces, --compare variants) on the "
        "Dask cluster at this address (tcp://host:8786) instead of --jobs; its workers need pyhpa installed. The "
        "outputs are the same.", show_default=False,
    ),
    phases: int = typer.Option(
        1, "--phases", help="Also run at N offsets of the sync and scrape phases against the load, spread over "
        "one sync period, and report each summary figure as min / median / max (summary.json's `phases`): "
        "N times the runs. Default 1: the plain run only.",
    ),
    strict: bool = typer.Option(
        False, "--strict", help="Exit with code 2 when an HPA never computed a scale (ScalingActive=False "
        "at every sync: a missing CPU request, a metric nobody serves, two HPAs on one target).",
    ),
    *,
    controller_flags: Mapping[str, Optional[str]],
) -> None:
    """Simulate HPAs on a virtual clock over a load trace: timeline, summary and plot in DIR."""
    from pyhpa.sim.dask_run import RunFailure
    from pyhpa.sim.health import never_computed, warnings
    from pyhpa.sim.scenario import ScenarioError
    from pyhpa.sim.simulate import simulate

    if jobs < 1:
        typer.echo(f"error: --jobs: Invalid value: {jobs}: must be 1 or more", err=True)
        raise typer.Exit(USAGE)
    if timeline not in ("csv", "json", "none"):
        typer.echo(f"error: --timeline: Unsupported value: {timeline!r}: supported values: csv, json, none", err=True)
        raise typer.Exit(USAGE)
    if phases < 1:
        typer.echo(f"error: --phases: Invalid value: {phases}: must be 1 or more", err=True)
        raise typer.Exit(USAGE)
    if more and not compare:
        typer.echo(f"error: unexpected extra arguments {[str(m) for m in more]} (did you mean --compare?)", err=True)
        raise typer.Exit(USAGE)
    flags = given_flags(**controller_flags)  # over the scenario's `controller:` mapping
    try:
        out = simulate(scenario, output, [*(compare or ()), *(more or ())], progress=progress, jobs=jobs,
                       timeline=timeline, phases=phases, controller_flags=flags, dask_scheduler=dask_scheduler)
    except ScenarioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(USAGE) from None
    except RunFailure as exc:  # the Dask scheduler or a worker
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(RUNTIME_FAILURE) from None
    except OSError as exc:  # writing the outputs (a full disk, a path that changed during the run)
        if exc.filename is None:
            raise
        typer.echo(f"error: -o: {exc.filename}: {exc.strerror or exc}", err=True)
        raise typer.Exit(RUNTIME_FAILURE) from None
    for warning in out.get("warnings", ()):
        typer.echo(f"warning: {warning}", err=True)
    results = out["results"]
    wall = out["wall"]
    sim = sum(r.scenario.duration for r in results)
    typer.echo(out["table"], nl=False)
    if out["band"]:
        typer.echo("\n" + out["band"], nl=False)
    runs = (f" x {len(results)} variants" if len(results) > 1 else "") + (f" x {phases} phases" if phases > 1 else "")
    sim *= phases
    typer.echo(f"simulated {results[0].scenario.duration / 3600:.1f} h{runs} in {wall:.2f} s wall "
               f"({sim / wall if wall else 0:,.0f} simulated s per wall s); outputs in {output}/")
    from pyhpa.sim.replay import replay_lines

    for line in replay_lines(out["summaries"]):  # with observed replicas: how closely the replay followed them
        typer.echo(line, err=True)
    for line in warnings(results):
        typer.echo(line, err=True)
    broken = [s["hpa"] + (f" ({s['label']})" if s.get("label") else "") for s in out["summaries"] if never_computed(s)]
    if strict and broken:
        typer.echo(f"error: --strict: {len(broken)} HPA(s) never computed a scale: {', '.join(broken)}", err=True)
        raise typer.Exit(USAGE)
