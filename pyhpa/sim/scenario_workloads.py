"""The workloads of a scenario: the model of how their pods behave, and the Deployment and
StatefulSet manifests that name them.

Why apart from :mod:`pyhpa.sim.scenario`: the workload model has a vocabulary of its own
(``startup``, ``cpu: {base, signal, per}``, ``capacityPerReplica`` ...), read once for the
scenario's ``workload:`` and again for each override under ``workloads:``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from pyhpa.sim.scenario_fields import (NOT_NEGATIVE, FieldLocator, LineDict, check_fields, plain, read_duration,
                                       read_quantity)

__all__ = ["SignalMap", "WorkloadModel", "WorkloadObject", "WORKLOAD_FIELDS", "read_workload_model",
           "read_workload_object"]


@dataclass(frozen=True)
class SignalMap:
    """``value = base + per * signal``; without a signal, just ``base``."""

    base: float = 0.0
    signal: str | None = None
    per: float = 1.0
    labels: Mapping[str, str] = field(default_factory=dict)

    def evaluate(self, signals: Mapping[str, float]) -> float:
        if self.signal is None:
            return self.base
        return self.base + self.per * signals[self.signal]


@dataclass(frozen=True)
class WorkloadModel:
    """How one workload's pods behave and how load signals map onto them.

    CPU in millicores (a workload total shared by Ready pods), memory in bytes (``memory`` per pod,
    ``memorySharedBytes`` shared by Ready pods), custom metrics as workload totals in plain units.
    ``demand``/``capacityPerReplica`` feed the summary's under-provisioning figures.
    """

    startup_seconds: float = 0.0
    pending_seconds: float = 0.0
    termination_seconds: float = 30.0
    cpu: SignalMap = field(default_factory=SignalMap)
    cpu_capacity_milli: float | None = None
    startup_cpu_milli: float = 0.0
    memory: SignalMap = field(default_factory=SignalMap)
    metrics: Mapping[str, SignalMap] = field(default_factory=dict)
    demand: str | None = None
    capacity_per_replica: float | None = None


@dataclass
class WorkloadObject:
    kind: str
    namespace: str
    name: str
    replicas: int
    labels: dict[str, str]
    selector: dict[str, Any]
    containers: list[tuple[str, dict[str, str]]]  # (name, requests)
    pod_management_policy: str
    annotations: dict[str, str]
    model: WorkloadModel
    manifest: dict[str, Any]


# --------------------------------------------------------------------------- reading


def _not_negative(loc: FieldLocator, node: Any, path: str, key: str, value: float) -> float:
    if value < 0:
        raise loc.fail(node, path, key, f"Invalid value: {node[key]!r}: {NOT_NEGATIVE}")
    return value


def _signal_map(loc: FieldLocator, parent: Any, path: str, key: str, signals: set[str], *, milli: bool,
                signed: bool = False) -> SignalMap:
    """``{base, signal, per, labels}`` or a fixed quantity; ``base`` and ``per`` may be negative
    only when ``signed`` (custom metrics): CPU and memory grow with load and are never negative."""
    raw = parent.get(key)
    if raw is None:
        return SignalMap()
    if not isinstance(raw, Mapping):
        value = read_quantity(loc, parent, path, key, milli=milli)
        if value < 0:
            raise loc.fail(parent, path, key, f"Invalid value: {raw!r}: must be >= 0")
        return SignalMap(base=value)
    sub = f"{path}.{key}" if path else key
    check_fields(loc, raw, sub, ("base", "signal", "per", "labels"))
    base = read_quantity(loc, raw, sub, "base", milli=milli) if raw.get("base") is not None else 0.0
    signal = raw.get("signal")
    if signal is not None and signal not in signals:
        known = ", ".join(sorted(signals)) or "none"
        raise loc.fail(raw, sub, "signal", f"Not found: {signal!r} (load signals: {known})")
    per = read_quantity(loc, raw, sub, "per", milli=milli) if raw.get("per") is not None else (1.0 if not milli else 1.0)
    if not signed:
        for name, value in (("base", base), ("per", per)):
            if raw.get(name) is not None:
                _not_negative(loc, raw, sub, name, value)
    labels = raw.get("labels") or {}
    if not isinstance(labels, Mapping):
        raise loc.fail(raw, sub, "labels", "expected a mapping of label: value")
    return SignalMap(base=base, signal=signal, per=per, labels={str(k): str(v) for k, v in labels.items()})


WORKLOAD_FIELDS = frozenset({"startup", "pending", "termination", "cpu", "cpuCapacity", "startupCpu", "memory", "metrics",
                             "demand", "capacityPerReplica", "podManagementPolicy"})


def read_workload_model(loc: FieldLocator, node: Any, path: str, signals: set[str], base: WorkloadModel) -> WorkloadModel:
    if node is None:
        return base
    if not isinstance(node, Mapping):
        raise loc.fail(node, path, None, "expected a mapping")
    check_fields(loc, node, path, WORKLOAD_FIELDS)
    changes: dict[str, Any] = {}
    if "startup" in node:
        changes["startup_seconds"] = read_duration(loc, node, path, "startup", allow_zero=True)
    if "pending" in node:
        changes["pending_seconds"] = read_duration(loc, node, path, "pending", allow_zero=True)
    if "termination" in node:
        changes["termination_seconds"] = read_duration(loc, node, path, "termination", allow_zero=True)
    if "cpu" in node:
        changes["cpu"] = _signal_map(loc, node, path, "cpu", signals, milli=True)
    if "memory" in node:
        changes["memory"] = _signal_map(loc, node, path, "memory", signals, milli=False)
    if "cpuCapacity" in node:
        value = read_quantity(loc, node, path, "cpuCapacity", milli=True)
        if value <= 0:
            raise loc.fail(node, path, "cpuCapacity", f"Invalid value: {node['cpuCapacity']!r}: must be > 0")
        changes["cpu_capacity_milli"] = value
    if "startupCpu" in node:
        changes["startup_cpu_milli"] = _not_negative(loc, node, path, "startupCpu",
                                                     read_quantity(loc, node, path, "startupCpu", milli=True))
    if "metrics" in node:
        raw = node["metrics"]
        if not isinstance(raw, Mapping):
            raise loc.fail(node, path, "metrics", "expected a mapping of metric name: {signal, per, base, labels}")
        metrics = dict(base.metrics)
        for name in raw:
            metrics[str(name)] = _signal_map(loc, raw, f"{path}.metrics", name, signals, milli=False, signed=True)
        changes["metrics"] = metrics
    if "demand" in node:
        if node["demand"] not in signals:
            raise loc.fail(node, path, "demand", f"Not found: {node['demand']!r} (load signals: {', '.join(sorted(signals))})")
        changes["demand"] = node["demand"]
    if "capacityPerReplica" in node:
        value = read_quantity(loc, node, path, "capacityPerReplica", milli=False)
        if value <= 0:
            raise loc.fail(node, path, "capacityPerReplica", f"Invalid value: {node['capacityPerReplica']!r}: must be > 0")
        changes["capacity_per_replica"] = value
    return replace(base, **changes)


def read_workload_object(loc: FieldLocator, doc: LineDict, path: str, model: WorkloadModel, policy_default: str) -> WorkloadObject:
    meta = doc.get("metadata")
    if not isinstance(meta, Mapping) or not meta.get("name"):
        raise loc.fail(meta if isinstance(meta, Mapping) else doc, path, "metadata.name", "Required value")
    spec = doc.get("spec")
    if not isinstance(spec, Mapping):
        raise loc.fail(doc, path, "spec", "Required value")
    replicas = spec.get("replicas", 1)
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
        raise loc.fail(spec, f"{path}.spec", "replicas", f"Invalid value: {replicas!r}: must be an integer >= 0")
    selector = spec.get("selector")
    if not isinstance(selector, Mapping) or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        raise loc.fail(spec, f"{path}.spec", "selector", "Required value")
    template = spec.get("template")
    if not isinstance(template, Mapping):
        raise loc.fail(spec, f"{path}.spec", "template", "Required value")
    tmeta = template.get("metadata") or {}
    labels = dict(tmeta.get("labels") or {}) if isinstance(tmeta, Mapping) else {}
    if not labels:
        raise loc.fail(template, f"{path}.spec.template", "metadata.labels", "Required value")
    match = selector.get("matchLabels") or {}
    for k, v in match.items():
        if labels.get(k) != v:
            raise loc.fail(
                selector, f"{path}.spec.selector", "matchLabels",
                "Invalid value: selector does not match template labels",
            )
    tspec = template.get("spec")
    containers = tspec.get("containers") if isinstance(tspec, Mapping) else None
    if not isinstance(containers, list) or not containers:
        raise loc.fail(template, f"{path}.spec.template", "spec.containers", "Required value")
    out_containers = []
    for i, c in enumerate(containers):
        cpath = f"{path}.spec.template.spec.containers[{i}]"
        if not isinstance(c, Mapping) or not c.get("name"):
            raise loc.fail(containers, f"{path}.spec.template.spec.containers", i, "name: Required value")
        resources = c.get("resources") or {}
        requests = resources.get("requests") or {} if isinstance(resources, Mapping) else {}
        if not isinstance(requests, Mapping):
            raise loc.fail(c, cpath, "resources.requests", "expected a mapping")
        from pyhpa.api.quantity import Quantity

        for rname, rval in requests.items():
            try:
                amount = Quantity.parse(str(rval)).as_float()
            except Exception as exc:
                raise loc.fail(requests, f"{cpath}.resources.requests", rname, f"Invalid value: {rval!r}: {exc}") from None
            if amount < 0:  # a CPU request is a pod's capacity when cpuCapacity is not set
                raise loc.fail(requests, f"{cpath}.resources.requests", rname, f"Invalid value: {rval!r}: {NOT_NEGATIVE}")
        out_containers.append((str(c["name"]), {str(k): str(v) for k, v in requests.items()}))
    policy = spec.get("podManagementPolicy", policy_default) if doc["kind"] == "StatefulSet" else "Parallel"
    if policy not in ("OrderedReady", "Parallel"):
        raise loc.fail(spec, f"{path}.spec", "podManagementPolicy",
                       f"Unsupported value: {policy!r}: supported values: OrderedReady, Parallel")
    annotations = dict(meta.get("annotations") or {})
    return WorkloadObject(
        kind=doc["kind"],
        namespace=str(meta.get("namespace") or "default"),
        name=str(meta["name"]),
        replicas=replicas,
        labels=labels,
        selector=plain(selector),
        containers=out_containers,
        pod_management_policy=policy,
        annotations=annotations,
        model=model,
        manifest=plain(doc),
    )
