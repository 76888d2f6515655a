"""`pyhpa snapshot` and `pyhpa explain`: the offline reconcile pointed at a live cluster, read-only.

Kept apart from the work so registering the commands costs no imports of the engine.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Awaitable, Callable, Optional, TypeVar

import typer

T = TypeVar("T")

SNAPSHOT_HELP = """Write a `pyhpa reconcile` snapshot of a live cluster (read-only).

Holds the HorizontalPodAutoscalers (of -n NS, or every namespace with -A), their scale targets, the pods those select, the PodMetrics, custom and external metric values each HPA reads, and the memory `pyhpa run` persists (as AutoscalerState objects). `pyhpa snapshot | pyhpa reconcile -f -` shows what the controller decides on that state.
"""


def _fail(message: str, code: int = 1) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def run_with_client(kubeconfig: Optional[str], context: Optional[str], work: Callable[[Any], Awaitable[T]]) -> T:
    """Run ``work(client)`` against the cluster of the kubeconfig (or in-cluster / $KUBECONFIG);
    a configuration or read failure is one line on stderr and exit code 1."""
    from pyhpa.adapters.kube.client import KubeClient, load_config
    from pyhpa.offline.live_snapshot import SnapshotError

    try:
        config = load_config(kubeconfig, context)
    except Exception as exc:  # missing file, no context, unreadable credentials
        _fail(f"kubeconfig: {exc}")

    async def main() -> T:
        client = KubeClient.from_config(config, qps=0, timeout=10.0)
        try:
            return await work(client)
        finally:
            await client.close()

    try:
        return asyncio.run(main())
    except SnapshotError as exc:
        _fail(str(exc))
    raise AssertionError("unreachable")


def _namespace(namespace: Optional[str], context: Optional[str], kubeconfig: Optional[str]) -> str:
    """-n, else the kubeconfig context's namespace, else "default" (as kubectl)."""
    if namespace:
        return namespace
    try:
        from pyhpa.adapters.kube.client import load_config

        return load_config(kubeconfig, context).namespace or "default"
    except Exception:
        return "default"


def snapshot_command(
    kubeconfig: Optional[str] = typer.Option(None, "--kubeconfig", help="Path to the kubeconfig file (default: in-cluster, $KUBECONFIG, ~/.kube/config)."),
    context: Optional[str] = typer.Option(None, "--context", help="The kubeconfig context to use."),
    namespace: Optional[str] = typer.Option(None, "-n", "--namespace", help="Namespace of the HPAs (default: the context's, else default)."),
    all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces", help="HPAs of every namespace."),
    output_file: Optional[str] = typer.Option(None, "-o", "--output", help="Write the snapshot to FILE (default: stdout)."),
) -> None:
    from pyhpa.api.codec import dumps_yaml
    from pyhpa.offline.live_snapshot import collect_snapshot

    ns = None if all_namespaces else _namespace(namespace, context, kubeconfig)
    snap = run_with_client(kubeconfig, context, lambda client: collect_snapshot(client, ns))
    for warning in snap.warnings:
        typer.echo(f"warning: {warning}", err=True)
    text = dumps_yaml(snap.as_list())
    if output_file and output_file != "-":
        try:
            with open(output_file, "w") as fh:
                fh.write(text)
        except OSError as exc:
            _fail(f"{output_file}: {exc.strerror}")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def register(app: typer.Typer) -> None:
    app.command("snapshot", help=SNAPSHOT_HELP)(snapshot_command)
