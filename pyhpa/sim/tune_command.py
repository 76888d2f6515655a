"""The ``pyhpa tune`` command (registered in :mod:`pyhpa.cli`); heavy imports stay lazy.

Exit codes: 0 done; 1 a scenario or search space that cannot be used; 2 bad flags; 3 done, but no
candidate stays within the budget (the outputs recommend the least under-provisioned one).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import typer

if TYPE_CHECKING:
    from pyhpa.sim.tune_run import TuneOutcome

NO_CANDIDATE_WITHIN_BUDGET = 3


def tune_command(
    scenario: Path = typer.Argument(..., help="Scenario file (YAML); its `tune:` section declares the search space."),
    output: Path = typer.Option(Path("tune-out"), "-o", "--output",
                                help="Directory for frontier.csv, recommended.yaml and report.html."),
    budget: Optional[str] = typer.Option(
        None, "--budget", help="Under-provisioning allowed: pod-seconds (600) or a share of the pod-seconds the "
        "demand needs (0.5%). Default: the scenario's tune.budget, else 0.5%.", show_default=False),
    target: Optional[str] = typer.Option(None, "--target", help="Metric targets to try, e.g. 50,60,70 (percent "
                                         "for Utilization targets, quantities otherwise).", show_default=False),
    min_replicas: Optional[str] = typer.Option(None, "--min-replicas", help="minReplicas values to try, e.g. 1,2,3.",
                                               show_default=False),
    scale_up_window: Optional[str] = typer.Option(None, "--scale-up-window",
                                                  help="Scale-up stabilizationWindowSeconds to try, e.g. 0,60.",
                                                  show_default=False),
    scale_down_window: Optional[str] = typer.Option(None, "--scale-down-window",
                                                    help="Scale-down stabilizationWindowSeconds to try, e.g. 0,60,300.",
                                                    show_default=False),
    scale_up_policies: Optional[List[str]] = typer.Option(
        None, "--scale-up-policies", metavar="<str>", help="One scaleUp policies alternative to try, e.g. "
        "Pods=4/60s,Percent=100/15s:Max (TYPE=VALUE/PERIOD, comma separated, then :Max, :Min or :Disabled, "
        "optional); repeat for more.", show_default=False),
    scale_down_policies: Optional[List[str]] = typer.Option(
        None, "--scale-down-policies", metavar="<str>", help="One scaleDown policies alternative to try, e.g. "
        "Percent=10/60s; repeat for more.", show_default=False),
    jobs: int = typer.Option(1, "-j", "--jobs", help="Local worker processes simulating candidates in parallel."),
    dask_scheduler: Optional[str] = typer.Option(
        None, "--dask-scheduler", help="Run the candidates on the Dask cluster at this address (tcp://host:8786) "
        "instead of local processes; the results are the same.", show_default=False),
    refine: int = typer.Option(2, "--refine", help="Rounds of refinement: after the grid, midpoints of each "
                               "numeric field next to the values of the cheapest candidate within the budget "
                               "(0: the grid only)."),
    progress: Optional[bool] = typer.Option(None, "--progress/--no-progress",
                                            help="Progress bar (default: on when stderr is a terminal)."),
) -> None:
    """Search HPA settings over a scenario's load: the Pareto frontier of pod-hours against
    under-provisioning, and the cheapest HPA within a budget (fewer scale events break a near tie),
    ready to apply."""
    from pyhpa.sim.scenario_fields import ScenarioError
    from pyhpa.sim.tune import parse_budget, parse_list, parse_policies
    from pyhpa.sim.tune_run import tune

    if jobs < 1:
        typer.echo(f"error: --jobs: Invalid value: {jobs}: must be 1 or more", err=True)
        raise typer.Exit(2)
    if refine < 0:
        typer.echo(f"error: --refine: Invalid value: {refine}: must be 0 or more", err=True)
        raise typer.Exit(2)
    try:
        space = {fld: parse_list(text, fld) for fld, text in (
            ("target", target), ("minReplicas", min_replicas), ("scaleUp.stabilizationWindowSeconds", scale_up_window),
            ("scaleDown.stabilizationWindowSeconds", scale_down_window)) if text is not None}
        space.update({fld: parse_policies(texts, fld) for fld, texts in (
            ("scaleUp.policies", scale_up_policies), ("scaleDown.policies", scale_down_policies)) if texts})
        if budget is not None:
            parse_budget(budget, "--budget")  # a bad flag (exit 2) before the scenario is read
    except ScenarioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    show = progress if progress is not None else sys.stderr.isatty()
    try:
        out = tune(scenario, output, space, budget, jobs, dask_scheduler, show, refine)
    except ScenarioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        typer.echo("interrupted: no outputs written", err=True)
        raise typer.Exit(130) from None
    from pyhpa.sim.health import warnings

    for warning in warnings(out.results):  # a broken HPA makes every candidate alike: say so
        typer.echo(warning, err=True)
    typer.echo(frontier_table(out), nl=False)
    rec = out.recommended
    f = rec.figures
    from pyhpa.sim.tune import CHOICE
    from pyhpa.sim.tune_report import settings_text

    line = (f"{rec.name}: {settings_text(rec)}: {f['podHours']} pod-hours, {f['underProvisionedPodSeconds']} "
            f"under-provisioned pod-s, {f['scaleEvents']} scale events")
    cur = out.candidates[0].figures
    typer.echo(f"current: {cur['podHours']} pod-hours, {cur['underProvisionedPodSeconds']} under-provisioned pod-s, "
               f"{cur['scaleEvents']} scale events")
    if out.within_budget:
        typer.echo(f"recommended (within the budget of {out.budget.text} = {out.limit:g} pod-s, {CHOICE}): {line}")
    else:
        typer.echo(f"no candidate is within the budget of {out.budget.text} = {out.limit:g} under-provisioned pod-s; "
                   f"recommended (the least under-provisioned): {line}", err=True)
    typer.echo(f"{len(out.candidates)} candidates; outputs in {output}/ (frontier.csv, recommended.yaml, report.html)")
    if not out.within_budget:
        raise typer.Exit(NO_CANDIDATE_WITHIN_BUDGET)


def frontier_table(out: "TuneOutcome") -> str:
    """The frontier's candidates as a Markdown table, and the recommended one (off the frontier when
    fewer scale events chose it over a cheaper candidate)."""
    from pyhpa.sim.tune_report import settings_text

    cands = [c for c in out.candidates if c.on_frontier or c.name == out.recommended.name]  # names are unique
    cands.sort(key=lambda c: c.figures["podHours"])
    lines = ["| candidate | settings | pod-hours | under-prov pod-s | scale events |", "| --- | --- | --- | --- | --- |"]
    for c in cands:
        mark = (" (recommended)" if c.on_frontier else " (recommended, off the frontier)") if c.name == out.recommended.name else ""
        lines.append(f"| {c.name}{mark} | {settings_text(c)} | {c.figures['podHours']:.2f} | "
                     f"{c.figures['underProvisionedPodSeconds']:.0f} | {c.figures['scaleEvents']} |")
    return "\n".join(lines) + "\n"
