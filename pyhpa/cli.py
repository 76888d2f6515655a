"""The `pyhpa` command line.

Each command is a thin wrapper: it parses flags (kube-controller-manager names where upstream has
them) and hands over to the module that does the work, imported lazily so `pyhpa --help` stays fast.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup


class _Commands(TyperGroup):
    """The command list of plain help with each command's summary whole (wrapped to the
    terminal), where click would cut it to one line with "..."."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = [(name, cmd.get_short_help_str(limit=1000)) for name in self.list_commands(ctx)
                if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


app = typer.Typer(
    name="pyhpa",
    cls=_Commands,
    help="The Kubernetes HorizontalPodAutoscaler, rebuilt in Python.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # click's plain help: rich's option table cuts long flag names (e.g. kube-controller-manager's
    # --horizontal-pod-autoscaler-...) to fit narrow terminals; click keeps them whole.
    rich_markup_mode=None,
)


@app.callback()
def _root() -> None:
    """pyhpa: engine, live controller, embedded cluster and simulator for the HPA."""


def _register_simulate() -> None:
    from pyhpa.sim.command import simulate_command

    app.command("simulate")(simulate_command)


_register_simulate()


def _register_tune() -> None:
    from pyhpa.sim.tune_command import tune_command

    app.command("tune")(tune_command)


_register_tune()


def _register_history() -> None:
    from pyhpa.sim.history_command import history_command

    app.command("history")(history_command)


_register_history()


def _register_cluster() -> None:
    from pyhpa.cluster.command import cluster_command

    app.command("cluster")(cluster_command)


_register_cluster()


def _start_local_cluster(data_dir: str | None, profile: Any) -> Any:
    """`pyhpa run --embedded`: the embedded cluster, started in this process (with the
    controller's version profile and gates)."""
    from pyhpa.cluster.embedded import EmbeddedCluster

    return EmbeddedCluster(data_dir, profile=profile).start()


def _register_controller() -> None:
    from pyhpa.live.commands import register

    register(app, _start_local_cluster)  # `pyhpa run`


_register_controller()


def _register_demo() -> None:
    from pyhpa.demo import register

    register(app)  # `pyhpa demo`


_register_demo()


def _register_reconcile() -> None:
    from pyhpa.offline.command import register

    register(app)  # `pyhpa reconcile`


_register_reconcile()


def _register_live_reads() -> None:
    from pyhpa.offline.live_commands import register

    register(app)  # `pyhpa snapshot`, `pyhpa explain`


_register_live_reads()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
