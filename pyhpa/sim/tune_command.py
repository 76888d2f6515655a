"""The ``pyhpa tune`` command (registered in :mod:`pyhpa.cli`); heavy imports stay lazy.

Exit codes (:mod:`pyhpa.sim.exit_codes`): 0 done; 1 a runtime failure (the outputs could not be
written, the Dask scheduler or its workers failed, or with ``--prometheus`` the history could not
be read); 2 bad flags, or a scenario, ``tune:`` section or search space that cannot be used; 3 done,
but no candidate stays within the budget (the outputs recommend the least under-provisioned one).

With ``--prometheus URL deployment/NAME``, the scenario is first written by ``pyhpa history``
(:mod:`pyhpa.sim.history_command`) as ``DIR/history.yaml`` (and its CSV), then tuned as any other.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List, Mapping, Optional

import typer

from pyhpa.controller.flag_options import given_flags, hpa_flag_name, with_controller_flags
from pyhpa.sim.history_command import MetricsResolution, MetricsWindow
from pyhpa.sim.exit_codes import INTERRUPTED, NO_CANDIDATE_WITHIN_BUDGET, RUNTIME_FAILURE, USAGE

if TYPE_CHECKING:
    from pyhpa.sim.tune_run import TuneOutcome


@with_controller_flags
def tune_command(
    scenario: str = typer.Argument(..., metavar="SCENARIO|WORKLOAD", help="Scenario file (YAML); its `tune:` section "
                                   "declares the search space. With --prometheus: the workload whose history to tune "
                                   "(deployment/NAME or statefulset/NAME)."),
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
    max_flaps: Optional[str] = typer.Option(
        None, "--max-flaps", help="Flaps per day allowed (a rescale reversing the previous one within 5 minutes). "
        "Default: the scenario's tune.maxFlaps, else the current settings' own rate (the recommendation never "
        "flaps more than what it replaces).", show_default=False),
    max_scale_events: Optional[str] = typer.Option(
        None, "--max-scale-events", help="Scale events per day allowed. Default: the scenario's "
        "tune.maxScaleEvents, else no cap.", show_default=False),
    phases: int = typer.Option(1, "--phases", help="Run each candidate at N offsets of the sync and scrape "
                               "phases against the load (spread over one sync period) and rank it by its worst "
                               "phase: each figure's highest value over the N runs. N times the runs; default 1."),
    progress: Optional[bool] = typer.Option(None, "--progress/--no-progress",
                                            help="Progress on stderr: a bar on a terminal, else a line every 10 s "
                                            "(default: on)."),
    prometheus: Optional[str] = typer.Option(None, "--prometheus", help="Read the workload's history from this "
                                             "Prometheus first (as `pyhpa history`), into DIR/history.yaml.",
                                             show_default=False),
    namespace: str = typer.Option("default", "-n", "--namespace", help="With --prometheus: the workload's namespace."),
    since: str = typer.Option("7d", "--since", help="With --prometheus: how far back from --until."),
    until: Optional[str] = typer.Option(None, "--until", help="With --prometheus: end of the range (default: now).",
                                        show_default=False),
    step: str = typer.Option("30s", "--step", help="With --prometheus: resolution of the history."),
    kubeconfig: Optional[str] = typer.Option(None, "--kubeconfig", help="With --prometheus: read the HPA's spec from "
                                             "this cluster.", show_default=False),
    context: Optional[str] = typer.Option(None, "--context", help="kubeconfig context.", show_default=False),
    query: Optional[List[str]] = typer.Option(None, "--query", metavar="NAME=PROMQL", help="With --prometheus: "
                                              "PromQL for the HPA metric NAME; repeat for more.", show_default=False),
    hpa: Optional[str] = typer.Option(None, "--hpa", help="With --prometheus: the HPA to replay when several scale "
                                      "the workload.", show_default=False),
    metrics_resolution: MetricsResolution = None,
    metrics_window: MetricsWindow = None,
    *,
    controller_flags: Mapping[str, Optional[str]],
) -> None:
    """Search HPA settings over a scenario's load: the Pareto frontier of pod-hours against
    under-provisioning, and the cheapest HPA within a budget (fewer scale events break a near tie),
    ready to apply."""
    from pyhpa.sim.scenario_fields import ScenarioError
    from pyhpa.sim.tune import parse_list, parse_policies
    from pyhpa.sim.tune_choice import parse_budget, parse_cap
    from pyhpa.sim.dask_run import RunFailure
    from pyhpa.sim.tune_run import tune

    if jobs < 1:
        typer.echo(f"error: --jobs: Invalid value: {jobs}: must be 1 or more", err=True)
        raise typer.Exit(USAGE)
    if phases < 1:
        typer.echo(f"error: --phases: Invalid value: {phases}: must be 1 or more", err=True)
        raise typer.Exit(USAGE)
    if refine < 0:
        typer.echo(f"error: --refine: Invalid value: {refine}: must be 0 or more", err=True)
        raise typer.Exit(USAGE)
    try:
        space = {fld: parse_list(text, fld) for fld, text in (
            ("target", target), ("minReplicas", min_replicas), ("scaleUp.stabilizationWindowSeconds", scale_up_window),
            ("scaleDown.stabilizationWindowSeconds", scale_down_window)) if text is not None}
        space.update({fld: parse_policies(texts, fld) for fld, texts in (
            ("scaleUp.policies", scale_up_policies), ("scaleDown.policies", scale_down_policies)) if texts})
        if budget is not None:
            parse_budget(budget, "--budget")  # a bad flag (exit 2) before the scenario is read
        for value, flag in ((max_flaps, "--max-flaps"), (max_scale_events, "--max-scale-events")):
            if value is not None:
                parse_cap(value, flag)
    except ScenarioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(USAGE) from None
    flags = given_flags(**controller_flags)  # over the scenario's `controller:` mapping
    from pyhpa.sim.progress import progress_mode

    show = progress_mode(progress)
    if prometheus is not None:
        from pyhpa.sim.history_command import HistoryFlags, run_history

        # the controller's flags as it ran: written into the history (and its sync phase) as
        # `pyhpa history` writes them, besides overriding the scenario's below
        ran = {hpa_flag_name(name): text for name, text in controller_flags.items()
               if text is not None and name not in ("feature_gates", "emulated_version")}
        path = run_history(HistoryFlags(prometheus, scenario, namespace, since, until, step, kubeconfig, context,
                                        query, hpa, progress, ran, metrics_resolution, metrics_window),
                           output / "history.yaml")
    elif metrics_resolution is not None or metrics_window is not None:
        flag = "--metrics-resolution" if metrics_resolution is not None else "--metrics-window"
        typer.echo(f"error: {flag}: only with --prometheus (a scenario file sets its own metrics: section)", err=True)
        raise typer.Exit(USAGE)
    else:
        path = Path(scenario)
    try:
        out = tune(path, output, space, budget, jobs, dask_scheduler, show, refine, max_flaps, max_scale_events,
                   phases, controller_flags=dict(flags.values))
    except ScenarioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(USAGE) from None
    except RunFailure as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(RUNTIME_FAILURE) from None
    except OSError as exc:  # writing the outputs
        if exc.filename is None:
            raise
        typer.echo(f"error: -o: {exc.filename}: {exc.strerror or exc}", err=True)
        raise typer.Exit(RUNTIME_FAILURE) from None
    except KeyboardInterrupt:
        typer.echo("interrupted: no outputs written", err=True)
        raise typer.Exit(INTERRUPTED) from None
    from pyhpa.sim.health import warnings

    for warning in warnings(out.results):  # a broken HPA makes every candidate alike: say so
        typer.echo(warning, err=True)
    from pyhpa.sim.replay import replay_lines

    # With observed replicas, above the table: how closely the current settings replay what
    # happened, i.e. how far to trust the figures below.
    for replay in replay_lines(out.replay, "replay of the current settings,"):
        typer.echo(replay)
    typer.echo(frontier_table(out), nl=False)
    rec = out.recommended
    f = rec.figures
    from pyhpa.sim.tune_choice import CHOICE
    from pyhpa.sim.tune_report import budget_text, settings_text

    line = f"{rec.name}: {settings_text(rec)}: {_figures_text(f)}"
    typer.echo(f"current: {_figures_text(out.candidates[0].figures)}")
    if out.within_budget:
        typer.echo(f"recommended (within the budget of {budget_text(out)}, {CHOICE}): {line}")
    else:
        typer.echo(f"no candidate is within the budget of {budget_text(out)}; "
                   f"recommended (the least under-provisioned): {line}", err=True)
    judged = f", each judged by its worst of {phases} sync/scrape phases" if phases > 1 else ""
    typer.echo(f"{len(out.candidates)} candidates{judged}; outputs in {output}/ (frontier.csv, recommended.yaml, "
               "report.html)")
    if not out.within_budget:
        raise typer.Exit(NO_CANDIDATE_WITHIN_BUDGET)


def _figures_text(f: dict) -> str:
    return (f"{f['podHours']} pod-hours, {f['underProvisionedPodSeconds']} under-provisioned pod-s, "
            f"{f['scaleEvents']} scale events ({f['scaleEventsPerDay']:g}/day), {f['flaps']} flaps "
            f"({f['flapsPerDay']:g}/day)")


def frontier_table(out: "TuneOutcome") -> str:
    """The frontier's candidates as a Markdown table, and the recommended one (off the frontier when
    fewer scale events chose it over a cheaper candidate)."""
    from pyhpa.sim.tune_report import settings_text

    cands = [c for c in out.candidates if c.on_frontier or c.name == out.recommended.name]  # names are unique
    cands.sort(key=lambda c: c.figures["podHours"])
    lines = ["| candidate | settings | pod-hours | under-prov pod-s | scale events | scale events/day | flaps | flaps/day |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for c in cands:
        mark = (" (recommended)" if c.on_frontier else " (recommended, off the frontier)") if c.name == out.recommended.name else ""
        lines.append(f"| {c.name}{mark} | {settings_text(c)} | {c.figures['podHours']:.2f} | "
                     f"{c.figures['underProvisionedPodSeconds']:.0f} | {c.figures['scaleEvents']} | "
                     f"{c.figures['scaleEventsPerDay']:g} | {c.figures['flaps']} | {c.figures['flapsPerDay']:g} |")
    return "\n".join(lines) + "\n"
