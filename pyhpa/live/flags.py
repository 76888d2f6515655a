"""Command-line conventions of Kubernetes components (spf13/pflag and klog) on top of typer.

kube-controller-manager's boolean flags take `--flag`, `--flag=true` and `--flag=false` (any
value Go's strconv.ParseBool reads); typer only knows `--flag`/`--no-flag`. `PflagCommand`
rewrites the `=value` forms before parsing, so manifests written for kube-controller-manager
(`--leader-elect=true`) work unchanged, and the `--no-flag` forms keep working.
"""

from __future__ import annotations

import logging
from typing import Any

import typer.core

from pyhpa.api.features import go_parse_bool

def parse_bool(flag: str, text: str) -> bool:
    """pflag's reading of ``--flag=text``: Go's ParseBool, its error text on anything else."""
    try:
        return go_parse_bool(text)
    except ValueError as exc:
        raise ValueError(f'invalid argument "{text}" for "{flag}" flag: {exc}') from None


def rewrite_bool_flags(args: list[str], params: list[Any]) -> list[str]:
    """`--x=true` -> `--x`, `--x=false` -> `--no-x` (or nothing when the flag has no negative form)."""
    flags: dict[str, list[str]] = {}
    for p in params:
        if getattr(p, "is_flag", False) and getattr(p, "opts", None):
            for name in p.opts:
                if name.startswith("--"):
                    flags[name] = list(getattr(p, "secondary_opts", None) or [])
    out: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i:]
        name, eq, value = arg.partition("=")
        if not eq or name not in flags:
            out.append(arg)
            continue
        if parse_bool(name, value):
            out.append(name)
        elif flags[name]:
            out.append(flags[name][0])
    return out


class PflagCommand(typer.core.TyperCommand):
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            args = rewrite_bool_flags(list(args), self.params)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
        return super().parse_args(ctx, args)


def log_level(verbosity: int | None, level: str) -> str:
    """klog's `-v N` as a logging level: 4 and above is debug (klog's convention for debug
    detail); below that, the `--log-level` value."""
    if verbosity is None:
        return level
    if verbosity < 0:
        raise ValueError(f"--v: must be 0 or greater, got {verbosity}")
    return logging.getLevelName(logging.DEBUG) if verbosity >= 4 else "INFO"
