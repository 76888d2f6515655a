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
from typing import List, Optional

import typer

from pyhpa.api.timefmt import parse_prometheus_duration
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
        client = PrometheusClient(flags.prometheus)
    except FlagError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except PrometheusError as exc:
        typer.echo(f"error: --prometheus: {exc}", err=True)
        raise typer.Exit(2) from None
    req = HistoryRequest(prometheus=client.url, kind=kind, name=name, namespace=flags.namespace, start=end - span,
                         end=end, step=step, queries=queries, hpa=flags.hpa, kubeconfig=flags.kubeconfig,
                         context=flags.context)
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
) -> None:
    """Read a workload's history from Prometheus (cAdvisor + kube-state-metrics) and write a scenario
    that `pyhpa simulate` and `pyhpa tune` take: the demand, the workload model, the HPA as it was
    and the replicas observed."""
    run_history(HistoryFlags(prometheus, workload, namespace, since, until, step, kubeconfig, context, query, hpa,
                             progress), output)
