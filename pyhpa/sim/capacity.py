"""The capacity model: the demand a workload's Ready pods serve, from the CPU model that makes
their usage.

Why one place: the summary's yardstick (under-provisioning, unserved demand, time to capacity)
must agree with the CPU the HPA sees. A Ready pod saturates where the workload model stops
giving it CPU (:meth:`pyhpa.workload.model.Workload.cpu_saturation`): at its CPU limit (when
every container has one), else at ``cpuCapacity`` (with both, the lower); with neither, at its
CPU request (the CPU it is guaranteed: the ceiling the summary counts served demand against).
Through the CPU map ``cpu = base + per x demand``, N Ready pods at ceiling P each serve
``(N x P - base) / per`` of demand (the base is a workload total, paid once).

``capacityPerReplica`` stays an explicit override (``Ready x capacityPerReplica``);
:func:`capacity_warnings` says when it disagrees with the CPU model at an HPA's CPU target.
"""

from __future__ import annotations

import math
from typing import Any

from pyhpa.api.quantity import Quantity
from pyhpa.workload.model import ContainerTemplate, ResourceLimits, Workload
from pyhpa.workload.params import WorkloadParams
from pyhpa.sim.results import Capacity
from pyhpa.sim.scenario import Scenario, ScenarioError, WorkloadModel, WorkloadObject

SOURCE_LIMIT = "CPU limit"
SOURCE_CPU_CAPACITY = "cpuCapacity"
SOURCE_REQUEST = "CPU request"
SOURCE_OVERRIDE = "capacityPerReplica"


def demand_signal(model: WorkloadModel) -> str | None:
    """The load signal the summary compares with capacity: ``demand``, else the CPU map's signal,
    else the first custom metric's."""
    if model.demand:
        return model.demand
    if model.cpu.signal:
        return model.cpu.signal
    for sm in model.metrics.values():
        if sm.signal:
            return sm.signal
    return None


def container_templates(obj: WorkloadObject) -> list[ContainerTemplate]:
    """The pod template's containers with their CPU/memory requests and limits."""
    containers = (((obj.manifest.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    limits_of: dict[str, dict[str, str]] = {}
    for i, c in enumerate(containers):
        resources = c.get("resources") if isinstance(c, dict) else None
        limits = resources.get("limits") if isinstance(resources, dict) else None
        if limits is None:
            continue
        where = f"{obj.kind}/{obj.name}: spec.template.spec.containers[{i}].resources.limits"
        if not isinstance(limits, dict):
            raise ScenarioError(f"{where}: expected a mapping")
        for key, value in limits.items():
            try:
                Quantity.parse(str(value))
            except Exception as exc:
                raise ScenarioError(f"{where}.{key}: Invalid value: {value!r}: {exc}") from None
        limits_of[str(c.get("name"))] = {str(k): str(v) for k, v in limits.items()}
    return [ContainerTemplate(name, requests, limits_of.get(name, {})) for name, requests in obj.containers]


def cpu_request_milli(obj: WorkloadObject) -> float | None:
    """The pod's CPU request (the sum over its containers), None without one."""
    total = sum(Quantity.parse(r["cpu"]).milli_value() for _, r in obj.containers if "cpu" in r)
    return float(total) if total else None


def cpu_ceiling(obj: WorkloadObject) -> tuple[float, str] | None:
    """(millicores, where from) at which one Ready pod saturates (see the module docstring)."""
    templates = container_templates(obj)
    params = WorkloadParams(cpu_capacity_milli=obj.model.cpu_capacity_milli)
    probe = Workload(obj.namespace, obj.name, kind=obj.kind, containers=templates, params=params, replicas=0)
    saturation = probe.cpu_saturation(params)
    if math.isfinite(saturation):
        limits = ResourceLimits.of(templates, "cpu")
        limit_sum = sum(limits.caps) if limits is not None else math.inf
        cap = obj.model.cpu_capacity_milli
        return saturation, SOURCE_LIMIT if cap is None or limit_sum <= cap else SOURCE_CPU_CAPACITY
    request = cpu_request_milli(obj)
    return (request, SOURCE_REQUEST) if request else None


def capacity_of(obj: WorkloadObject) -> Capacity | None:
    """The workload's capacity: ``capacityPerReplica`` when set; else from the CPU model, when
    the demand signal drives CPU; else None (no yardstick)."""
    model = obj.model
    if model.capacity_per_replica is not None:
        return Capacity(model.capacity_per_replica, source=SOURCE_OVERRIDE)
    sig = demand_signal(model)
    if sig is None or model.cpu.signal != sig or model.cpu.per <= 0:
        return None
    ceiling = cpu_ceiling(obj)
    if ceiling is None:
        return None
    per_pod, source = ceiling
    return Capacity(per_pod / model.cpu.per, max(0.0, model.cpu.base) / model.cpu.per, source)


def capacity_per_replica(obj: WorkloadObject) -> float | None:
    """Demand one more Ready replica serves (see :func:`capacity_of`)."""
    cap = capacity_of(obj)
    return cap.per_replica if cap is not None else None


def _cpu_targets(hpa: Any, request: float | None) -> list[tuple[str, float]]:
    """The HPA's ``Resource`` cpu targets as (how the spec says it, millicores per pod there):
    ``Utilization`` (a percentage of the pod's request; skipped without one) or ``AverageValue``."""
    out = []
    for m in hpa.spec.metrics or ():
        if not (m.type == "Resource" and m.resource is not None and m.resource.name == "cpu"):
            continue
        target = m.resource.target
        if target is None:
            continue
        if target.type == "Utilization" and target.average_utilization is not None and request:
            out.append((f"{target.average_utilization}%", target.average_utilization / 100.0 * request))
        elif target.type == "AverageValue" and target.average_value is not None:
            out.append((str(target.average_value), float(target.average_value.milli_value())))
    return out


def capacity_warnings(scenario: Scenario, hpas: list[Any]) -> list[str]:
    """Where the yardstick and the CPU model disagree at an HPA's CPU target: a declared
    ``capacityPerReplica`` below what a pod at the target serves (pods meeting the target would
    count as under-provisioned) or above what a saturated pod serves; a target above where the
    pods saturate."""
    by_key = {(o.namespace, o.kind, o.name): o for o in scenario.workloads}
    tolerance = scenario.config.tolerance
    out: list[str] = []
    for hpa in hpas:
        ns = hpa.metadata.namespace or "default"
        ref = hpa.spec.scale_target_ref
        obj = by_key.get((ns, ref.kind, ref.name))
        if obj is None:
            continue
        model = obj.model
        sig = demand_signal(model)
        if sig is None or model.cpu.signal != sig or model.cpu.per <= 0:
            continue  # the demand does not drive CPU: nothing to compare with
        ceiling = cpu_ceiling(obj)
        request = cpu_request_milli(obj)
        name = f"HPA {ns}/{hpa.metadata.name}"
        per = model.cpu.per
        declared = model.capacity_per_replica
        for u, at_target in _cpu_targets(hpa, request):
            if ceiling is not None and at_target > ceiling[0] * (1 + 1e-9):
                out.append(f"{name}: its {u} CPU target ({at_target:g}m per pod) is above where a pod of "
                           f"{ref.kind}/{ref.name} saturates ({ceiling[0]:g}m, its {ceiling[1]}): pods at the "
                           "target count as under-provisioned")
            served = at_target / per
            if declared is not None and declared < served * (1 - tolerance):
                out.append(f"{name}: capacityPerReplica {declared:g} {sig} of {ref.kind}/{ref.name} is below what "
                           f"a pod serves at the {u} CPU target by the CPU model ({served:.4g} {sig} at "
                           f"{at_target:g}m): pods that meet the target count as under-provisioned")
        if declared is not None and ceiling is not None and declared > ceiling[0] / per * (1 + tolerance):
            out.append(f"{name}: capacityPerReplica {declared:g} {sig} of {ref.kind}/{ref.name} is above what a "
                       f"saturated pod serves by the CPU model ({ceiling[0] / per:.4g} {sig} at {ceiling[0]:g}m, "
                       f"its {ceiling[1]}): pods saturate before the summary counts a shortfall")
    return list(dict.fromkeys(out))
