"""The `pyhpa` command line.

Each command is a thin wrapper: it parses flags (kube-controller-manager names where upstream has
them) and hands over to the module that does the work.
"""

from __future__ import annotations

import importlib
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


# Commands whose function is the whole command: (name, module, function).
_COMMANDS = (
    ("simulate", "pyhpa.sim.command", "simulate_command"),
    ("tune", "pyhpa.sim.tune_command", "tune_command"),
    ("history", "pyhpa.sim.history_command", "history_command"),
    ("cluster", "pyhpa.cluster.command", "cluster_command"),
)
# Modules that register their own commands with `register(app)`: `pyhpa demo`, `pyhpa reconcile`,
# `pyhpa snapshot` and `pyhpa explain`.
_REGISTRARS = ("pyhpa.demo", "pyhpa.offline.command", "pyhpa.offline.live_commands")


def _start_local_cluster(data_dir: str | None, profile: Any) -> Any:
    """`pyhpa run --embedded`: the embedded cluster, started in this process (with the
    controller's version profile and gates)."""
    from pyhpa.cluster.embedded import EmbeddedCluster

    return EmbeddedCluster(data_dir, profile=profile).start()


def _register_commands() -> None:
    from pyhpa.live.commands import register

    for name, module, function in _COMMANDS:
        app.command(name)(getattr(importlib.import_module(module), function))
    register(app, _start_local_cluster)  # `pyhpa run`
    for module in _REGISTRARS:
        importlib.import_module(module).register(app)


_register_commands()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
