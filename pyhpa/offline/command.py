"""The `pyhpa reconcile` command: flags of kube-controller-manager, then `snapshot` does the work.

Kept apart from `snapshot` so registering the command costs no imports of the engine.
"""

from __future__ import annotations

import gc
import sys
from typing import List, Mapping, Optional

import typer

from pyhpa.controller.flag_options import given_flags, with_controller_flags

HELP = """One reconcile pass of the HPA controller over a cluster snapshot, offline.

Reads Kubernetes objects (YAML stream or JSON, `v1 List` flattened) from every -f FILE (`-` is stdin): HorizontalPodAutoscalers (autoscaling/v2 or v1), their scale targets (Deployment, ReplicaSet, StatefulSet, ReplicationController), Pods, PodMetrics, custom MetricValueLists, ExternalMetricValueLists, pyhpa.io/v1alpha1 AutoscalerState (the controller's memory) and pyhpa.io/v1alpha1 ControllerConfiguration (the running controller's flags, as `pyhpa snapshot` records them: used where no flag is given). Other kinds are ignored with a warning on stderr.

Prints one `v1 List`: the HPAs with their new status, the scale targets after the pass, the Events emitted, and one AutoscalerState per HPA. Exit code 0 when the pass ran; 2 with one line naming the flag, or the file, document and field, when a flag or an input is invalid.

--explain adds, on stderr, each HPA's decision in plain words (what every metric proposed, what limited it, what was done); stdout stays exactly the List.
"""


@with_controller_flags
def reconcile_command(
    files: List[str] = typer.Option(..., "-f", "--filename", help="Snapshot file (YAML or JSON); repeatable; - for stdin."),
    now: Optional[str] = typer.Option(None, "--now", help="The controller's clock for this pass (RFC 3339); default: the current time."),
    output: str = typer.Option("yaml", "-o", "--output", help="yaml or json."),
    explain: bool = typer.Option(False, "--explain", help="Also print each HPA's decision in plain words on stderr."),
    *,
    controller_flags: Mapping[str, Optional[str]],
) -> None:
    from datetime import datetime, timezone

    from pyhpa.api.codec import dumps_json, dumps_yaml
    from pyhpa.api.loader import LoadError, load_files
    from pyhpa.api.timefmt import parse_time
    from pyhpa.offline.snapshot import explain as explain_text
    from pyhpa.controller.flags import FlagError, assumed_defaults, describe_sources
    from pyhpa.offline.snapshot import published_flags_in, reconcile_snapshot

    def fail(message: str, code: int = 1) -> None:
        typer.echo(f"error: {message}", err=True)
        raise typer.Exit(code)

    if output not in ("yaml", "json"):
        fail(f'--output: unsupported value "{output}": supported values: "json", "yaml"', 2)
    flags = given_flags(**controller_flags)
    if now is None:
        clock = datetime.now(timezone.utc)  # not truncated: a state persisted this second is not "in the future"
    else:
        try:
            clock = parse_time(now)
        except ValueError as exc:
            fail(f"--now: {exc}", 2)
    # The snapshot and the output are a large heap of acyclic objects that live until the end:
    # the cyclic collector would only rescan it again and again (a third of the run time).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        try:
            docs = load_files(list(files))
            published = published_flags_in(docs)
            effective = flags.over(published) if published is not None else flags
            result = reconcile_snapshot(docs, effective.config(), clock)
        except LoadError as exc:
            fail(" ".join(str(exc).split("\n")), 2)
        except FlagError as exc:  # a flag against the recorded configuration (a gate its release lacks)
            fail(str(exc), 2)
        if published is None and (assumed := assumed_defaults(flags)):
            typer.echo(f"note: no controller configuration in the snapshot: assuming {assumed}", err=True)
        for warning in result.warnings:
            typer.echo(f"warning: {warning}", err=True)
        if output == "json":
            sys.stdout.write(dumps_json(result.output).decode() + "\n")
        else:
            sys.stdout.write(dumps_yaml(result.output))
        sys.stdout.flush()
    finally:
        if gc_was_enabled:
            gc.enable()
    if explain:
        sys.stderr.write("controller flags:\n" + "".join(f"  {line}\n" for line in describe_sources(effective)))
        sys.stderr.write(explain_text(result))


def register(app: typer.Typer) -> None:
    app.command("reconcile", help=HELP)(reconcile_command)
