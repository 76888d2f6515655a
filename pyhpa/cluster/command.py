"""`pyhpa cluster`: serve the embedded Kubernetes API until interrupted."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

if TYPE_CHECKING:
    from pyhpa.api.versions import VersionProfile


def _parse_listen(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    if not sep:
        raise typer.BadParameter(f"--listen {listen!r}: expected HOST:PORT, e.g. 127.0.0.1:6443")
    host = host.strip("[]") or "127.0.0.1"
    try:
        port_n = int(port)
    except ValueError:
        raise typer.BadParameter(f"--listen {listen!r}: port {port!r} is not a number") from None
    if not 0 <= port_n <= 65535:
        raise typer.BadParameter(f"--listen {listen!r}: port must be 0-65535")
    return host, port_n


# The simulation runs on a thread of the server's process and shares its GIL. A thread that
# gives the GIL up for I/O (the event loop, at every socket read, write and SQLite commit) gets
# it back only when the one holding it reaches its switch interval: at CPython's default of
# 5 ms, a request that does I/O a few times waited tens of ms behind a busy simulation pass
# (watch p99 135 ms, GET 660/s at 10,000 pods in docs/benchmarks.md); at 0.5 ms those waits
# shrink tenfold, for a few more switches between two busy threads.
SWITCH_INTERVAL = 0.0005


def _bounds(max_pods_per_workload: int | None, max_pods: int | None) -> dict[str, int]:
    """The simulation's bounds given on the command line (the rest keep its defaults, which
    live in pyhpa.cluster.controllers.context)."""
    given = {"max_pods_per_workload": max_pods_per_workload, "max_pods": max_pods}
    return {k: v for k, v in given.items() if v is not None}


def _profile(emulated_version: str | None, feature_gates: str | None) -> VersionProfile:
    """The server's version profile: an upstream release's (`--emulated-version`, upstream's
    flag name) or pyhpa's own, with `--feature-gates` on top (kube-apiserver's syntax)."""
    from pyhpa.api.features import FeatureGateError
    from pyhpa.api.versions import EmulatedVersionError, parse_emulated_version, pyhpa_profile

    try:
        profile = pyhpa_profile() if emulated_version is None else parse_emulated_version(emulated_version)
        return profile.with_feature_gates(feature_gates)
    except EmulatedVersionError as exc:
        message = str(exc)
    except FeatureGateError as exc:
        message = f"--feature-gates: {exc}"
    typer.echo(f"pyhpa cluster: {message}", err=True)
    raise typer.Exit(2)


MAX_NODES = 1000  # each node is an object, a Lease and a renewal every 10 s


def _nodes(nodes: int, node_capacity: str | None) -> dict[str, object]:
    """The simulated nodes asked for; a value that cannot be used ends the command with one
    line naming the flag."""
    from pyhpa.cluster.controllers.node import NodeCapacityError, parse_node_capacity

    if not 1 <= nodes <= MAX_NODES:
        typer.echo(f"pyhpa cluster: --nodes {nodes}: must be 1 to {MAX_NODES}", err=True)
        raise typer.Exit(2)
    out: dict[str, object] = {"nodes": nodes}
    if node_capacity is not None:
        try:
            out["node_capacity"] = parse_node_capacity(node_capacity)
        except NodeCapacityError as exc:
            typer.echo(f"pyhpa cluster: --node-capacity {exc}", err=True)
            raise typer.Exit(2) from None
    return out


def _prometheus_config(url: str, data_dir: Path, nodes: list[str]) -> str:
    """The scrape configuration for the cluster at ``url`` with its credentials in ``data_dir``
    (docs/prometheus-exporters.md)."""
    from pyhpa.api import goyaml
    from pyhpa.cluster.controllers.exporters import scrape_config

    data_dir = data_dir.expanduser().resolve()
    doc = scrape_config(url, data_dir / "tls" / "ca.crt", data_dir / "token", nodes)
    return ("# Prometheus scrape configuration for the pyhpa cluster at " + url + "\n"
            "# (written by `pyhpa cluster --prometheus-config`; the token and CA files are the\n"
            "# cluster's own, readable by their owner only: run Prometheus as that user)\n"
            + goyaml.dump(doc, width=120))


def _print_prometheus_config(host: str, port: int, data_dir: Path, nodes: list[str]) -> None:
    """`--prometheus-config -`: the configuration for the cluster at --listen and --data-dir on
    stdout, without starting a server (it may be running already)."""
    if port == 0:
        typer.echo("pyhpa cluster: --prometheus-config -: needs the port the cluster listens on "
                   "(--listen HOST:PORT, not port 0); write it to a file instead", err=True)
        raise typer.Exit(2)
    if not (data_dir / "token").exists():
        typer.echo(f"pyhpa cluster: warning: no credentials in {data_dir} yet; the first "
                   "`pyhpa cluster` with this --data-dir creates them", err=True)
    shown = f"[{host}]" if ":" in host else ("127.0.0.1" if host in ("0.0.0.0", "") else host)
    typer.echo(_prometheus_config(f"https://{shown}:{port}", data_dir, nodes), nl=False)


def cluster_command(
    listen: str = typer.Option("127.0.0.1:6443", "--listen",
                               help="HOST:PORT to serve HTTPS on (port 0 picks a free one)."),
    data_dir: Optional[Path] = typer.Option(
        None, "--data-dir", help="Where objects, the CA and the token live.",
        show_default="~/.local/share/pyhpa/cluster"),
    kubeconfig: Optional[Path] = typer.Option(
        None, "--kubeconfig", help="Where to write the kubeconfig.",
        show_default="DATA_DIR/kubeconfig"),
    max_pods_per_workload: Optional[int] = typer.Option(
        None, "--max-pods-per-workload", min=0, show_default="1000",
        help="The most pods the simulation runs for one ReplicaSet, StatefulSet, "
             "ReplicationController or scalable object (a Warning event past it)."),
    max_pods: Optional[int] = typer.Option(
        None, "--max-pods", min=0, show_default="5000",
        help="The most pods the simulation runs in all; it creates none beyond."),
    emulated_version: Optional[str] = typer.Option(
        None, "--emulated-version", show_default="pyhpa's own profile",
        help="Behave as this upstream release (1.27 to 1.37): its feature-gate defaults, "
             "validation rules and conditions, and report it as the server version."),
    feature_gates: Optional[str] = typer.Option(
        None, "--feature-gates",
        help="Gate=true|false,... over the profile's defaults (kube-apiserver's syntax)."),
    nodes: int = typer.Option(1, "--nodes", help="How many simulated nodes (pyhpa-node, "
                                                  "pyhpa-node-2, ...) the scheduler places pods on."),
    node_capacity: Optional[str] = typer.Option(
        None, "--node-capacity", show_default="cpu=8,memory=32Gi,pods=250",
        help="What each node has, e.g. cpu=8,memory=32Gi,pods=110 (the resources left out keep "
             "their defaults)."),
    prometheus_config: Optional[str] = typer.Option(
        None, "--prometheus-config", metavar="FILE",
        help="Write a Prometheus scrape configuration for this cluster (cAdvisor, "
             "kube-state-metrics, application metrics; token and CA included) to FILE once it "
             "listens, then serve; '-': print it to stdout for --listen and --data-dir and exit."),
) -> None:
    """Run an embedded Kubernetes API server (HPA, workloads, Events, Leases) for kubectl."""
    from pyhpa.adapters.listen import ListenError
    from pyhpa.cluster.controllers.objects import node_names
    from pyhpa.adapters.heap import freeze_when, server_process
    from pyhpa.adapters.tasks import StopSignals, cancel_and_wait
    from pyhpa.cluster.apiserver.kubeconfig import KubeconfigError
    from pyhpa.cluster.apiserver.private_files import DataDirError
    from pyhpa.cluster.embedded import DEFAULT_DATA_DIR, EmbeddedCluster

    host, port = _parse_listen(listen)
    profile = _profile(emulated_version, feature_gates)
    node_options = _nodes(nodes, node_capacity)
    if prometheus_config == "-":
        _print_prometheus_config(host, port, data_dir or DEFAULT_DATA_DIR, node_names(nodes))
        return
    cluster = EmbeddedCluster(data_dir or DEFAULT_DATA_DIR, host=host, port=port,
                              kubeconfig_path=kubeconfig, profile=profile,
                              simulation_options={**_bounds(max_pods_per_workload, max_pods),
                                                  **node_options})

    async def run() -> None:
        sys.setswitchinterval(SWITCH_INTERVAL)
        main = asyncio.current_task()
        assert main is not None
        # SIGTERM or Ctrl-C: stop cleanly (README: within 10 s); a second one exits at once
        signals = StopSignals(main.cancel).install()
        await cluster.start()
        freeze = None if cluster.simulation is None else \
            asyncio.get_running_loop().create_task(freeze_when(cluster.simulation.started_up.is_set))
        typer.echo(f"pyhpa cluster {profile.git_version} serving {cluster.url} "
                   f"(data in {cluster.data_dir})")
        typer.echo(f"kubeconfig written to {cluster.kubeconfig_path}; use it with:")
        typer.echo(f"  export KUBECONFIG={cluster.kubeconfig_path}")
        typer.echo(f"  kubectl get hpa     # or: kubectl --kubeconfig {cluster.kubeconfig_path} ...")
        if prometheus_config:
            try:
                Path(prometheus_config).write_text(
                    _prometheus_config(cluster.url, cluster.data_dir, node_names(nodes)))
            except OSError as exc:
                typer.echo(f"pyhpa cluster: --prometheus-config {prometheus_config}: "
                           f"{exc.strerror or exc}", err=True)
                raise typer.Exit(1) from None
            typer.echo(f"Prometheus scrape configuration written to {prometheus_config}")
        typer.echo("Press Ctrl-C to stop.")
        try:
            # shielded: a signal ends this wait, and cluster.stop() then closes the server
            # gracefully (cancelling the server's task would cut open requests short)
            await asyncio.shield(cluster.serve_forever())
        except asyncio.CancelledError:
            pass  # the first signal: the cleanup below is the clean stop
        finally:
            await cancel_and_wait(freeze)
            await cluster.stop()
            signals.remove()

    try:
        # a list's buffers reused, a request's burst dying young; the modelled cluster is
        # frozen once built (adapters/heap.py)
        with server_process():
            try:
                import uvloop
                with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                    runner.run(run())
            except ImportError:
                asyncio.run(run())
    except KeyboardInterrupt:
        pass
    except ListenError as exc:  # e.g. the port is busy: say so, no traceback
        typer.echo(f"pyhpa cluster: {exc.strerror}", err=True)
        raise typer.Exit(1) from None
    except (DataDirError, KubeconfigError) as exc:  # --data-dir or --kubeconfig unusable
        typer.echo(f"pyhpa cluster: {exc}", err=True)
        raise typer.Exit(1) from None
