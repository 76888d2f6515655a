"""`pyhpa snapshot` and `pyhpa explain`: the offline reconcile pointed at a live cluster, read-only.

Kept apart from the work so registering the commands costs no imports of the engine.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Awaitable, Callable, Mapping, Optional, TypeVar

import typer

from pyhpa.controller.flag_options import DEFAULT_LEASE, ControllerLease, given_flags, with_controller_flags

T = TypeVar("T")

SNAPSHOT_HELP = """Write a `pyhpa reconcile` snapshot of a live cluster (read-only).

Holds the HorizontalPodAutoscalers (of -n NS, or every namespace with -A), their scale targets, the pods those select, the PodMetrics, custom and external metric values each HPA reads, and the memory `pyhpa run` persists (as AutoscalerState objects). `pyhpa snapshot | pyhpa reconcile -f -` shows what the controller decides on that state. The running controller's published configuration (its flags, from --controller-lease) is recorded as a pyhpa.io/v1alpha1 ControllerConfiguration, which `pyhpa reconcile` then uses.
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


def _lease(text: str) -> str | None:
    """`--controller-lease NAMESPACE/NAME` ("": none)."""
    if not text:
        return None
    namespace, slash, name = text.partition("/")
    if not (namespace and slash and name) or "/" in name:
        _fail(f'--controller-lease: invalid value "{text}": expected NAMESPACE/NAME', 2)
    return text


def snapshot_command(
    kubeconfig: Optional[str] = typer.Option(None, "--kubeconfig", help="Path to the kubeconfig file (default: in-cluster, $KUBECONFIG, ~/.kube/config)."),
    context: Optional[str] = typer.Option(None, "--context", help="The kubeconfig context to use."),
    namespace: Optional[str] = typer.Option(None, "-n", "--namespace", help="Namespace of the HPAs (default: the context's, else default)."),
    all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces", help="HPAs of every namespace."),
    output_file: Optional[str] = typer.Option(None, "-o", "--output", help="Write the snapshot to FILE (default: stdout)."),
    controller_lease: ControllerLease = DEFAULT_LEASE,
) -> None:
    from pyhpa.api.codec import dumps_yaml
    from pyhpa.offline.live_snapshot import collect_snapshot

    lease = _lease(controller_lease)
    ns = None if all_namespaces else _namespace(namespace, context, kubeconfig)
    snap = run_with_client(kubeconfig, context, lambda client: collect_snapshot(client, ns, controller_lease=lease))
    for warning in snap.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if lease and snap.controller_config is None:
        typer.echo(f"note: no controller configuration recorded: {snap.controller_config_missing}", err=True)
    text = dumps_yaml(snap.as_list())
    if output_file and output_file != "-":
        try:
            with open(output_file, "w") as fh:
                fh.write(text)
        except OSError as exc:
            _fail(f"-o: {output_file}: {exc.strerror}")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


EXPLAIN_HELP = """Why one live HPA decides what it decides, with the full arithmetic (read-only).

TARGET is hpa/NAME or NAME. Reads the HPA's namespace through the same adapters as `pyhpa run` and runs the controller's reconcile in memory (nothing is written): per metric the formula with its numbers and each pod's class and rule, the stabilization window's stored recommendations and their expiry, the policies with the scale events in their periods, min/max clamping, and the decision with its KEP-6107 reason. Uses the memory `pyhpa run` persists when it is there, and the configuration it publishes on its leader-election Lease (--controller-lease): each controller flag not given here takes the running controller's value, and the output says where each value came from; without one, a note on stderr says which defaults are assumed. -o json prints the KEP-6107 decision trace.
"""

_HPA_RESOURCES = ("hpa", "horizontalpodautoscaler", "horizontalpodautoscalers", "hpa.autoscaling",
                  "horizontalpodautoscaler.autoscaling", "horizontalpodautoscalers.autoscaling")


@with_controller_flags
def explain_command(
    target: str = typer.Argument(..., help="hpa/NAME or NAME."),
    namespace: Optional[str] = typer.Option(None, "-n", "--namespace", help="Namespace of the HPA (default: the context's, else default)."),
    kubeconfig: Optional[str] = typer.Option(None, "--kubeconfig", help="Path to the kubeconfig file."),
    context: Optional[str] = typer.Option(None, "--context", help="The kubeconfig context to use."),
    output: str = typer.Option("text", "-o", "--output", help="text or json (the KEP-6107 decision trace)."),
    controller_lease: ControllerLease = DEFAULT_LEASE,
    *,
    controller_flags: Mapping[str, Optional[str]],
) -> None:
    import json
    from datetime import datetime, timezone

    from pyhpa.api.loader import LoadError
    from pyhpa.controller.flags import FlagError, assumed_defaults, describe_sources, flags_of_document
    from pyhpa.offline.explain import explain_hpa
    from pyhpa.offline.live_snapshot import collect_snapshot

    if output not in ("text", "json"):
        _fail(f'--output: unsupported value "{output}": supported values: "json", "text"', 2)
    resource, slash, name = target.rpartition("/")
    if slash and resource.lower() not in _HPA_RESOURCES:
        _fail(f'{target}: only HorizontalPodAutoscalers can be explained (hpa/NAME or NAME)', 2)
    if not name:
        _fail("an HPA name is required (hpa/NAME or NAME)", 2)
    flags = given_flags(**controller_flags)
    lease = _lease(controller_lease)
    ns = _namespace(namespace, context, kubeconfig)
    snap = run_with_client(kubeconfig, context,
                           lambda client: collect_snapshot(client, ns, hpa_name=name, controller_lease=lease))
    for warning in snap.warnings:
        typer.echo(f"warning: {warning}", err=True)
    key = f"{ns}/{name}"
    try:
        effective = flags.over(flags_of_document(snap.controller_config)) if snap.controller_config else flags
        config = effective.config()
    except (ValueError, FlagError) as exc:  # a flag the running controller's release refuses
        _fail(str(exc), 2)
    if snap.controller_config is None and (assumed := assumed_defaults(flags)):
        missing = snap.controller_config_missing or "--controller-lease is empty"
        typer.echo(f"note: no published controller configuration ({missing}): assuming {assumed}", err=True)
    try:
        ex = explain_hpa(snap.items, key, config, datetime.now(timezone.utc), key in snap.state_keys,
                         describe_sources(effective))
    except LoadError as exc:
        _fail(" ".join(str(exc).split()))
    if output == "json":
        sys.stdout.write(json.dumps(ex.to_json(), indent=2) + "\n")
    else:
        sys.stdout.write("\n".join(ex.lines) + "\n")


def register(app: typer.Typer) -> None:
    app.command("snapshot", help=SNAPSHOT_HELP)(snapshot_command)
    app.command("explain", help=EXPLAIN_HELP)(explain_command)
