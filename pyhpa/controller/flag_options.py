"""The typer declarations of the controller flags (:mod:`pyhpa.controller.flags`), shared by every
command that takes them, so each has the same names, help and "not given" default.

Each is ``Optional[str]`` with default None: a command knows which flags were given (explicit
flags win over a running controller's published configuration, see `pyhpa explain`) and hands
the texts to :meth:`FlagValues.given`, which parses and validates them.
"""

from __future__ import annotations

import functools
import inspect
from typing import Annotated, Any, Callable, Optional

import typer

from pyhpa.controller.flags import DEFAULT_LEASE, EMULATED_VERSION, FEATURE_GATES, FLAGS_BY_NAME, FlagError, FlagValues


def _option(name: str, help: str) -> typer.models.OptionInfo:
    return typer.Option(f"--{name}", help=help, show_default=False)


def _hpa(name: str, default: str | None = None) -> typer.models.OptionInfo:
    flag = FLAGS_BY_NAME[name]
    return _option(name, f"{flag.help} Default: {default or flag.default}.")


def hpa_flag(name: str, default: str) -> object:
    """The declaration of flag ``name`` for a command whose default differs (`pyhpa demo`'s,
    scaled to its duration): same name and parsing, that default in the help."""
    return Annotated[Optional[str], _hpa(name, default)]


SyncPeriod = Annotated[Optional[str], _hpa("horizontal-pod-autoscaler-sync-period")]
Tolerance = Annotated[Optional[str], _hpa("horizontal-pod-autoscaler-tolerance")]
DownscaleStabilization = Annotated[Optional[str], _hpa("horizontal-pod-autoscaler-downscale-stabilization")]
CpuInitializationPeriod = Annotated[Optional[str], _hpa("horizontal-pod-autoscaler-cpu-initialization-period")]
InitialReadinessDelay = Annotated[Optional[str], _hpa("horizontal-pod-autoscaler-initial-readiness-delay")]
# Deprecated in kube-controller-manager and without effect there; accepted so its command lines run.
UpscaleDelay = Annotated[Optional[str], _option("horizontal-pod-autoscaler-upscale-delay",
                                                "Deprecated, no-op (as upstream).")]
DownscaleDelay = Annotated[Optional[str], _option("horizontal-pod-autoscaler-downscale-delay",
                                                  "Deprecated, no-op (as upstream).")]
FeatureGatesOption = Annotated[Optional[str], _option(
    FEATURE_GATES, "Name=bool,... (HPAScaleToZero, HPAConfigurableTolerance, HPAGeneration, PodLevelResources, "
    "HPAConfigurableSyncPeriod, HPAExternalMetricFallback, HPAFallback, HPAStatusDecisionTrace).")]
EmulatedVersion = Annotated[Optional[str], _option(
    EMULATED_VERSION, "Behave as this upstream release's controller (1.27 to 1.37): its gate defaults, "
    "conditions and status formats.")]

ControllerLease = Annotated[str, typer.Option(
    "--controller-lease", help="NAMESPACE/NAME of the running controller's leader-election Lease, where it "
    f"publishes its configuration (`pyhpa run`'s --leader-elect-resource-namespace/-name); \"\" reads none. "
    f"Default: {DEFAULT_LEASE}.", show_default=False)]


def given_flags(*, tolerance: str | None = None, downscale_stabilization: str | None = None,
                cpu_initialization_period: str | None = None, initial_readiness_delay: str | None = None,
                sync_period: str | None = None, feature_gates: str | None = None,
                emulated_version: str | None = None) -> FlagValues:
    """The flags a command was given, every one checked: a bad one is one line on stderr naming
    it, and exit code 2 (a usage error, docs/exit-codes.md)."""
    flags = FlagValues.given(
        tolerance=tolerance, downscale_stabilization=downscale_stabilization,
        cpu_initialization_period=cpu_initialization_period, initial_readiness_delay=initial_readiness_delay,
        sync_period=sync_period, feature_gates=feature_gates, emulated_version=emulated_version)
    try:
        flags.config()
    except FlagError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    return flags


# The --horizontal-pod-autoscaler-* flags by parameter name (the flag is the name with dashes).
_HPA_FLAGS = (("sync_period", SyncPeriod), ("tolerance", Tolerance),
              ("downscale_stabilization", DownscaleStabilization),
              ("cpu_initialization_period", CpuInitializationPeriod),
              ("initial_readiness_delay", InitialReadinessDelay))
_PROCESS_FLAGS = (("feature_gates", FeatureGatesOption), ("emulated_version", EmulatedVersion))


def hpa_flag_name(parameter: str) -> str:
    """The kube-controller-manager flag of a :func:`with_hpa_flags` parameter, without dashes."""
    return "horizontal-pod-autoscaler-" + parameter.replace("_", "-")


def _flag_parameters(kinds: tuple[tuple[str, object], ...]) -> tuple[inspect.Parameter, ...]:
    """Flags as keyword parameters of a command, in the order of its help."""
    return tuple(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=kind)
                 for name, kind in kinds)


def with_controller_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """A typer command that takes every controller flag: they are declared here once, after the
    command's own parameters, and handed to it as ``controller_flags``, the texts given by name
    (None: not given), for :func:`given_flags` when the command is ready to check them."""
    return _with_flags(command, _HPA_FLAGS + _PROCESS_FLAGS)


def with_hpa_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """As :func:`with_controller_flags`, the --horizontal-pod-autoscaler-* flags only: for a
    command that records how a controller ran (`pyhpa history`) rather than running one."""
    return _with_flags(command, _HPA_FLAGS)


def _with_flags(command: Callable[..., Any], kinds: tuple[tuple[str, object], ...]) -> Callable[..., Any]:
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "controller_flags"]
    flags = _flag_parameters(kinds)

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        given = {p.name: kwargs.pop(p.name, None) for p in flags}
        return command(*args, controller_flags=given, **kwargs)

    run.__signature__ = signature.replace(parameters=[*own, *flags])  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in (*own, *flags)
                           if p.annotation is not inspect.Parameter.empty}
    return run
