"""The ``pyhpa history`` command (registered in :mod:`pyhpa.cli`), also run by ``pyhpa tune --prometheus``.

Exit codes: 0 written (warnings on stderr, one line each); 1 Prometheus or the cluster cannot give
the history (unreachable, unknown workload, no data, an empty range); 2 bad flags.
"""

from __future__ import annotations

import time
from types import MappingProxyType
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, List, Mapping, Optional

import typer

from pyhpa.api.timefmt import parse_prometheus_duration
from pyhpa.controller.flag_options import hpa_flag_name, with_hpa_flags
from pyhpa.sim.progress import Progress, progress_mode

KINDS = MappingProxyType({"deployment": "Deployment", "deployments": "Deployment", "deploy": "Deployment",
                          "statefulset": "StatefulSet", "statefulsets": "StatefulSet", "sts": "StatefulSet"})


class FlagError(ValueError):
    """A bad flag value; the message names the flag."""


def parse_span(text: str, flag: str) -> float:
    """A Prometheus duration (``7d``, ``1h30m``, ``90s``) or plain seconds, > 0."""
    raw = text.strip()
    try:
        value = float(raw)
    except ValueError:
        try:
            value = parse_prometheus_duration(raw)
        except ValueError:
            raise FlagError(f"{flag}: Invalid value: {text!r}: expected a duration such as 30s, 12h or 7d") from None
    if not value > 0:
        raise FlagError(f"{flag}: Invalid value: {text!r}: must be > 0")
    return value


def parse_instant(text: str | None, now: float) -> float:
    """``--until``: RFC 3339, epoch seconds, ``now``, or a duration before now (``2h``)."""
    if text is None or text == "now":
        return now
    raw = text.strip()
    try:
        return float(raw)
    except ValueError:
        pass
    if "T" in raw:
        try:
            dt = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError as exc:
            raise FlagError(f"--until: Invalid value: {text!r}: {exc}") from None
        return (dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)).timestamp()
    return now - parse_span(raw, "--until")


def parse_target(text: str) -> tuple[str, str]:
    kind, _, name = text.partition("/")
    if kind.lower() not in KINDS or not name:
        raise FlagError(f"WORKLOAD: Invalid value: {text!r}: expected deployment/NAME or statefulset/NAME")
    return KINDS[kind.lower()], name


def parse_queries(items: list[str] | None) -> dict[str, str]:
    out = {}
    for item in items or []:
        name, sep, promql = item.partition("=")
        if not sep or not name.strip() or not promql.strip():
            raise FlagError(f"--query: Invalid value: {item!r}: expected NAME=PROMQL")
        out[name.strip()] = promql.strip()
    return out


@dataclass
class HistoryFlags:
    prometheus: str
    workload: str
    namespace: str
    since: str
    until: Optional[str]
    step: str
    kubeconfig: Optional[str]
    context: Optional[str]
    queries: Optional[List[str]]
    hpa: Optional[str]
    progress: Optional[bool]
    controller: Optional[dict[str, str]] = None  # --horizontal-pod-autoscaler-* given: name -> text
    metrics_resolution: Optional[str] = None
    metrics_window: Optional[str] = None


DURATION_FLAGS = ("horizontal-pod-autoscaler-sync-period", "horizontal-pod-autoscaler-downscale-stabilization",
                  "horizontal-pod-autoscaler-cpu-initialization-period",
                  "horizontal-pod-autoscaler-initial-readiness-delay")
TOLERANCE_FLAG = "horizontal-pod-autoscaler-tolerance"


def parse_controller(given: dict[str, str] | None) -> dict[str, Any]:
    """The controller flags given, as the scenario's ``controller:`` section takes them (durations in
    seconds as ``5s``, the tolerance a number); Go durations (``5m0s``) as ``pyhpa run`` takes them."""
    from pyhpa.api.timefmt import parse_duration

    out: dict[str, Any] = {}
    for name, text in (given or {}).items():
        if text is None:
            continue
        if name == TOLERANCE_FLAG:
            try:
                value = float(text)
            except ValueError:
                raise FlagError(f"--{name}: Invalid value: {text!r}: expected a number") from None
            if not value >= 0:
                raise FlagError(f"--{name}: Invalid value: {text!r}: must be >= 0")
            out[name] = value
            continue
        try:
            seconds = parse_duration(text)
        except ValueError:
            try:
                seconds = parse_span(text, f"--{name}")
            except FlagError:
                raise FlagError(f"--{name}: Invalid value: {text!r}: expected a duration such as 15s or 5m0s") from None
        if seconds < 0 or (name.endswith("sync-period") and seconds <= 0):
            raise FlagError(f"--{name}: Invalid value: {text!r}: must be > 0" if name.endswith("sync-period")
                            else f"--{name}: Invalid value: {text!r}: must be >= 0")
        out[name] = f"{seconds:g}s"
    return out


def parse_metrics(resolution: str | None, window: str | None) -> dict[str, float]:
    """``--metrics-resolution``/``--metrics-window``: the scenario's ``metrics:`` section (the
    window a whole number of resolutions, as the simulator's pipeline needs)."""
    out: dict[str, float] = {}
    if resolution is not None:
        out["resolution"] = parse_span(resolution, "--metrics-resolution")
    if window is not None:
        out["window"] = parse_span(window, "--metrics-window")
        res = out.get("resolution", 15.0)
        if abs(out["window"] / res - round(out["window"] / res)) > 1e-9:
            raise FlagError(f"--metrics-window: Invalid value: {window!r}: must be a multiple of the metrics "
                            f"resolution ({res:g}s)")
    return out


def run_history(flags: HistoryFlags, output: Path) -> Path:
    """Read the history and write ``output`` (and its CSV); one line and ``typer.Exit`` on failure."""
    from pyhpa.adapters.prometheus import PrometheusClient, PrometheusError, chunks
    from pyhpa.sim.history import HistoryError, HistoryRequest, read_history
    from pyhpa.sim.history_write import write_history

    try:
        kind, name = parse_target(flags.workload)
        end = parse_instant(flags.until, time.time())
        span = parse_span(flags.since, "--since")
        step = parse_span(flags.step, "--step")
        queries = parse_queries(flags.queries)
        controller = parse_controller(flags.controller)
        metrics = parse_metrics(flags.metrics_resolution, flags.metrics_window)
        client = PrometheusClient(flags.prometheus)
    except FlagError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except PrometheusError as exc:
        typer.echo(f"error: --prometheus: {exc}", err=True)
        raise typer.Exit(2) from None
    req = HistoryRequest(prometheus=client.url, kind=kind, name=name, namespace=flags.namespace, start=end - span,
                         end=end, step=step, queries=queries, hpa=flags.hpa, kubeconfig=flags.kubeconfig,
                         context=flags.context, controller=controller, metrics=metrics)
    progress = Progress("history", total=len(chunks(req.start, req.end, step)) * 5, unit="range-query chunks",
                        mode=progress_mode(flags.progress))
    started = time.monotonic()
    try:
        with client, progress:
            # the total is a guess (5 queries a chunk); a query may need more, or fewer
            history = read_history(client, req, lambda line: typer.echo(line, err=True),
                                   lambda n: progress.update(progress.done + n, max(progress.total, progress.done + n)))
    except (HistoryError, PrometheusError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    csv_path = write_history(history, output)
    peak = max(history.replicas)
    typer.echo(f"history: {req.target}: {len(history.times)} steps of {step:g}s, replicas {min(history.replicas)}.."
               f"{peak}, {len(history.intervals)} saturated interval(s), read in {time.monotonic() - started:.1f}s; "
               f"wrote {output} and {csv_path}", err=True)
    return output


WORKLOAD_HELP = "The scale target: deployment/NAME or statefulset/NAME."
PROMETHEUS_HELP = "Prometheus base URL (http://127.0.0.1:9090) whose HTTP API holds the workload's history."
# metrics-server's settings the history's metrics: section records (`pyhpa tune` takes them with
# --prometheus only)
MetricsResolution = Annotated[Optional[str], typer.Option(
    "--metrics-resolution", help="How often metrics-server scraped the kubelets (its --metric-resolution), for "
    "the history's metrics: section (default: the simulator's, 15s).", show_default=False)]
MetricsWindow = Annotated[Optional[str], typer.Option(
    "--metrics-window", help="The window metrics-server's usage averages over (default: the resolution).",
    show_default=False)]


@with_hpa_flags
def history_command(
    workload: str = typer.Argument(..., metavar="WORKLOAD", help=WORKLOAD_HELP),
    prometheus: str = typer.Option(..., "--prometheus", help=PROMETHEUS_HELP),
    namespace: str = typer.Option("default", "-n", "--namespace", help="The workload's namespace."),
    since: str = typer.Option("7d", "--since", help="How far back from --until: 7d, 36h, 90m."),
    until: Optional[str] = typer.Option(None, "--until", help="End of the range: RFC 3339, epoch seconds, now, or "
                                        "a duration before now (default: now).", show_default=False),
    step: str = typer.Option("30s", "--step", help="Resolution of the history (range-query step)."),
    kubeconfig: Optional[str] = typer.Option(None, "--kubeconfig", help="Read the HPA's whole spec (behavior "
                                             "included) from this cluster instead of kube-state-metrics.",
                                             show_default=False),
    context: Optional[str] = typer.Option(None, "--context", help="kubeconfig context.", show_default=False),
    query: Optional[List[str]] = typer.Option(None, "--query", metavar="NAME=PROMQL", help="PromQL giving the "
                                              "workload total of the HPA metric NAME (e.g. a rate() of a counter); "
                                              "repeat for more.", show_default=False),
    hpa: Optional[str] = typer.Option(None, "--hpa", help="The HPA to replay when several scale the workload.",
                                      show_default=False),
    output: Path = typer.Option(Path("history.yaml"), "-o", "--output", help="Scenario to write; its CSV goes beside "
                                "it (same name, .csv)."),
    progress: Optional[bool] = typer.Option(None, "--progress/--no-progress",
                                            help="Progress bar (default: on when stderr is a terminal)."),
    metrics_resolution: MetricsResolution = None,
    metrics_window: MetricsWindow = None,
    *,
    controller_flags: Mapping[str, Optional[str]],
) -> None:
    """Read a workload's history from Prometheus (cAdvisor + kube-state-metrics) and write a scenario
    that `pyhpa simulate` and `pyhpa tune` take: the demand, the workload model, the HPA as it was
    and the replicas observed."""
    # the flags as the controller ran with them: written into the scenario's controller: section
    # instead of the upstream defaults, which Prometheus cannot tell
    controller = {hpa_flag_name(name): text for name, text in controller_flags.items() if text is not None}
    run_history(HistoryFlags(prometheus, workload, namespace, since, until, step, kubeconfig, context, query, hpa,
                             progress, controller, metrics_resolution, metrics_window), output)
