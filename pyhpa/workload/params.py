"""What a simulated workload does: CPU demand, memory, startup and termination times, custom
metric totals.

Why its own module: the same knobs come from two places -- ``sim.pyhpa.io/*`` annotations on the
embedded cluster's workload objects (:func:`params_from_annotations`) and the simulator's
scenario files -- and both must validate them the same way, naming the field that is wrong.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import msgspec

from pyhpa.api.quantity import Quantity
from pyhpa.api.timefmt import parse_duration

ANNOTATION_PREFIX = "sim.pyhpa.io/"
ANN_CPU = ANNOTATION_PREFIX + "cpu"
ANN_CPU_CAPACITY = ANNOTATION_PREFIX + "cpu-capacity"
ANN_MEMORY = ANNOTATION_PREFIX + "memory"
ANN_STARTUP = ANNOTATION_PREFIX + "startup-seconds"
ANN_PENDING = ANNOTATION_PREFIX + "pending-seconds"
ANN_TERMINATION = ANNOTATION_PREFIX + "termination-seconds"
ANN_METRIC = ANNOTATION_PREFIX + "metric."
ANN_RUN_DURATION = ANNOTATION_PREFIX + "run-duration"
ANN_EXIT_CODE = ANNOTATION_PREFIX + "exit-code"


class WorkloadParamError(ValueError):
    """A workload parameter (annotation or scenario field) that cannot be used; names the field."""


class WorkloadParams(msgspec.Struct, frozen=True):
    """How the workload behaves. Units: CPU in millicores, memory in bytes, time in seconds.

    ``cpu_milli`` and ``metrics`` are *workload totals* shared equally by the Ready pods (the
    Service spreads requests over ready endpoints); ``memory_bytes`` is per pod.
    """

    cpu_milli: float = 0.0
    cpu_capacity_milli: float | None = None  # per-pod usage cap (a CPU limit / saturation point)
    startup_cpu_milli: float = 0.0  # usage of a Running pod that is not Ready yet
    memory_bytes: float = 0.0  # per pod
    memory_shared_bytes: float = 0.0  # a total spread over the Ready pods (request buffers, caches)
    startup_seconds: float = 0.0  # creation -> Ready (never before Running)
    pending_seconds: float = 0.0  # creation -> Running
    termination_seconds: float = 30.0  # deletion -> gone (terminationGracePeriodSeconds)
    metrics: Mapping[str, float] = {}  # custom metric totals, plain units
    # Running -> Succeeded (a Job's pods finish); None: runs until deleted
    run_seconds: float | None = None
    exit_code: int = 0  # how the containers exit after run_seconds: 0 Succeeded, else Failed

    def pod_times(self, start: float) -> tuple[float, float]:
        """(running_at, ready_at) of a pod that starts at ``start``: Running after
        ``pending_seconds``, Ready after ``startup_seconds`` but not before it runs."""
        return start + self.pending_seconds, start + max(self.startup_seconds, self.pending_seconds)

    def validate(self) -> "WorkloadParams":
        inf = math.inf
        if (0.0 <= self.cpu_milli < inf and 0.0 <= self.startup_cpu_milli < inf and 0.0 <= self.memory_bytes < inf
                and 0.0 <= self.memory_shared_bytes < inf and 0.0 <= self.startup_seconds < inf
                and 0.0 <= self.pending_seconds < inf and 0.0 <= self.termination_seconds < inf
                and (self.cpu_capacity_milli is None or self.cpu_capacity_milli > 0)
                and (not self.metrics or all(-inf < v < inf for v in self.metrics.values()))):
            return self  # every check below passes (the comparisons fail for NaN): the usual case
        for name in ("cpu_milli", "startup_cpu_milli", "memory_bytes", "memory_shared_bytes", "startup_seconds", "pending_seconds",
                     "termination_seconds"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise WorkloadParamError(f"{name}: Invalid value: {value!r}: must be a finite number >= 0")
        if self.cpu_capacity_milli is not None and not (self.cpu_capacity_milli > 0):
            raise WorkloadParamError(f"cpu_capacity_milli: Invalid value: {self.cpu_capacity_milli!r}: must be > 0")
        for key, value in self.metrics.items():
            if not math.isfinite(value):
                raise WorkloadParamError(f"metrics[{key}]: Invalid value: {value!r}: must be finite")
        return self


def _quantity_milli(text: str, field_name: str) -> float:
    try:
        return float(Quantity.parse(text.strip()).milli_value())
    except Exception as exc:
        raise WorkloadParamError(f"{field_name}: Invalid value: {text!r}: {exc}") from None


def _seconds(text: str, field_name: str) -> float:
    raw = text.strip()
    try:
        value = float(raw)
    except ValueError:
        try:
            value = parse_duration(raw)
        except Exception as exc:
            raise WorkloadParamError(f"{field_name}: Invalid value: {text!r}: {exc}") from None
    if not math.isfinite(value) or value < 0:
        raise WorkloadParamError(f"{field_name}: Invalid value: {text!r}: must be >= 0")
    return value


def params_from_annotations(
    annotations: Mapping[str, str] | None, base: WorkloadParams | None = None
) -> WorkloadParams:
    """Read ``sim.pyhpa.io/*`` annotations over ``base`` (defaults when None).

    ``sim.pyhpa.io/cpu`` (e.g. ``1500m``: total demand), ``sim.pyhpa.io/memory`` (per pod, e.g.
    ``256Mi``), ``sim.pyhpa.io/startup-seconds`` (``30`` or ``30s``), ``sim.pyhpa.io/metric.<name>``
    (workload total of a custom metric), plus ``cpu-capacity``, ``pending-seconds``,
    ``termination-seconds``, ``run-duration`` (from Running to Succeeded) and ``exit-code``
    (non-zero: Failed instead). Unknown ``sim.pyhpa.io/`` keys are errors, so typos do not go unnoticed.
    """
    params = base or WorkloadParams()
    if not annotations:
        return params
    changes: dict[str, Any] = {}
    metrics = dict(params.metrics)
    for key, text in annotations.items():
        if not key.startswith(ANNOTATION_PREFIX):
            continue
        where = f"metadata.annotations[{key}]"
        if not isinstance(text, str):
            raise WorkloadParamError(f"{where}: Invalid value: {text!r}: must be a string")
        if key == ANN_CPU:
            changes["cpu_milli"] = _quantity_milli(text, where)
        elif key == ANN_CPU_CAPACITY:
            changes["cpu_capacity_milli"] = _quantity_milli(text, where) or None
        elif key == ANN_MEMORY:
            changes["memory_bytes"] = _quantity_milli(text, where) / 1000.0
        elif key == ANN_STARTUP:
            changes["startup_seconds"] = _seconds(text, where)
        elif key == ANN_PENDING:
            changes["pending_seconds"] = _seconds(text, where)
        elif key == ANN_TERMINATION:
            changes["termination_seconds"] = _seconds(text, where)
        elif key == ANN_RUN_DURATION:
            changes["run_seconds"] = _seconds(text, where)
        elif key == ANN_EXIT_CODE:
            if not text.strip().isdigit() or not 0 <= int(text) <= 255:
                raise WorkloadParamError(f"{where}: Invalid value: {text!r}: must be an exit "
                                         "code from 0 to 255")
            changes["exit_code"] = int(text)
        elif key.startswith(ANN_METRIC) and len(key) > len(ANN_METRIC):
            metrics[key[len(ANN_METRIC):]] = _quantity_milli(text, where) / 1000.0
        else:
            raise WorkloadParamError(f"{where}: Unsupported value: unknown simulation annotation")
    for name, value in changes.items():
        if isinstance(value, float) and value < 0:
            raise WorkloadParamError(f"{name}: Invalid value: {value!r}: must be >= 0")
    return msgspec.structs.replace(params, metrics=metrics, **changes).validate()
