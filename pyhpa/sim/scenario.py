"""Scenario files: what to simulate, read from YAML with errors that name file, line and field.

A scenario holds the run's start and duration, the controller flags, the objects (Deployments or
StatefulSets and HPA manifests as users write them), the workload model, the metrics pipeline,
the load series and optional metrics outages. See ``examples/*.yaml`` for complete files.

Fields (durations as ``30s``/``5m``/``1h`` or seconds; quantities as ``500m``/``256Mi``)::

    apiVersion: pyhpa.io/v1alpha1   # optional
    kind: Scenario                  # optional
    start: "2026-01-01T00:00:00Z"   # default shown
    duration: 24h                   # required, > 0
    step: 15s                       # load sampling tick (default: min(resolution, sync period))
    controller: {<kube-controller-manager flag without -->: value}   # the five HPA flags + feature-gates
    metrics: {resolution: 15s, window: <resolution>}                  # metrics-server scrape grid / average
    workload:                       # the model of every workload (override per name under `workloads:`)
      startup: 30s                  # creation -> Ready;  pending: 0s (creation -> Running)
      termination: 30s              # deletion -> gone
      cpu: {base: 100m, signal: rps, per: 2m}   # total CPU, shared by Ready pods (or a fixed quantity)
      cpuCapacity: 1                # per-pod CPU cap;  startupCpu: 0 (CPU of a starting pod)
      memory: {base: 256Mi, signal: rps, per: 64Ki}   # per pod: base + its share of per x signal
      metrics: {<name>: {signal: q, per: 1, labels: {k: v}}}   # workload totals: Pods metrics share
                                    # them over Ready pods; Object/External metrics see the total
      demand: rps                   # signal the summary compares with capacity (default: cpu's)
      capacityPerReplica: 150       # demand one Ready pod serves; Ready capacity = Ready x this.
                                    # Default, when demand drives cpu: N Ready pods serve
                                    # (N x P - cpu.base) / cpu.per, P = cpuCapacity or the CPU request
    workloads: {<workload name>: {<workload fields>}}
    load: {<signal>: <series>}      # csv / prometheus / constant / step / steps / ramp / sine /
                                    # diurnal / spikes / randomWalk / sum (see pyhpa.sim.series)
    outages: [{from: 10m, to: 15m, metrics: [resource|pods|object|external|all]}]
                                    # or duration: 5m; a single metric: external/<name> (sim.outages)
    summary:                        # how the summary finds demand steps (defaults shown):
      demandStepRise: 20%           # a tick where demand rose above the previous tick and above
      demandStepWithin: 5m          # 120 % of the lowest demand of the 5 minutes before; a run of
                                    # such ticks is one step (report.demand_steps)
    objects: [<Deployment|StatefulSet|HorizontalPodAutoscaler manifest> | {file: other.yaml}]

Every HPA's ``scaleTargetRef`` must name a Deployment or StatefulSet of the scenario.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

from pyhpa.api import goyaml
from pyhpa.engine.config import ControllerConfig
from pyhpa.sim.outages import Outage, parse_outages
from pyhpa.sim.series import Series, SeriesError, build_series

SCENARIO_API_VERSION = "pyhpa.io/v1alpha1"
SCENARIO_KIND = "Scenario"
WORKLOAD_KINDS = ("Deployment", "StatefulSet")
DEFAULT_START = "2026-01-01T00:00:00Z"
DEFAULT_STEP_RISE = 0.2
DEFAULT_STEP_WITHIN = 300.0

CONTROLLER_FLAGS = {
    "horizontal-pod-autoscaler-sync-period": "sync_period",
    "horizontal-pod-autoscaler-tolerance": "tolerance",
    "horizontal-pod-autoscaler-downscale-stabilization": "downscale_stabilization",
    "horizontal-pod-autoscaler-cpu-initialization-period": "cpu_initialization_period",
    "horizontal-pod-autoscaler-initial-readiness-delay": "initial_readiness_delay",
    "feature-gates": "gates",
}


class ScenarioError(ValueError):
    """A scenario that cannot be run; the message starts with ``file:line: field:``."""


# --------------------------------------------------------------------------- YAML with line numbers

# Mappings and sequences of a scenario carry the lines of their keys and items (for messages).
LineDict = goyaml.MarkedDict
LineList = goyaml.MarkedList


def load_yaml_documents(text: str, source: str) -> list[Any]:
    """The non-empty documents of a file, read as kubectl reads YAML (``1e1`` is 10, ``0o17``
    is 15, dates stay strings), with line marks."""
    try:
        return [d for d in goyaml.load_all_marked(text, source=source) if d is not None]
    except goyaml.YAMLError as exc:
        line = f":{exc.line}" if exc.line is not None else ""
        field = f" {exc.path}:" if exc.path else ""
        raise ScenarioError(f"{source}{line}: invalid YAML:{field} {exc.problem}") from None


def plain(obj: Any) -> Any:
    """LineDict/LineList -> dict/list (for handing manifests to other modules)."""
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [plain(v) for v in obj]
    return obj


class _Loc:
    """Renders ``file:line: path`` for a field of a LineDict."""

    def __init__(self, source: str) -> None:
        self.source = source

    def at(self, node: Any, path: str, key: str | int | None = None) -> str:
        line = 0
        if isinstance(node, LineDict):
            line = node.line_of(key) if isinstance(key, str) else node.line
        elif isinstance(node, LineList):
            line = node.item_lines[key] if isinstance(key, int) and key < len(node.item_lines) else node.line
        full = path if key is None else (f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else key))
        return f"{self.source}:{line}: {full}" if line else f"{self.source}: {full}"

    def fail(self, node: Any, path: str, key: str | int | None, message: str) -> ScenarioError:
        return ScenarioError(f"{self.at(node, path, key)}: {message}")


# --------------------------------------------------------------------------- the model


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


@dataclass
class Scenario:
    source: str
    name: str
    start: float
    duration: float
    step: float
    config: ControllerConfig
    resolution: float
    window: float
    workloads: list[WorkloadObject]
    hpas: list[Any]  # HorizontalPodAutoscaler (autoscaling/v2, defaulted)
    hpa_manifests: list[dict[str, Any]]
    load: dict[str, Series]
    outages: list[Outage]
    base_dir: Path
    step_rise: float = DEFAULT_STEP_RISE  # a demand step: a rise by more than this fraction ...
    step_within: float = DEFAULT_STEP_WITHIN  # ... over the lowest demand of this many seconds before

    @property
    def end(self) -> float:
        return self.start + self.duration

    def outage(self, t: float, kind: str, name: str = "") -> bool:
        """Whether ``kind`` metrics (or the one named ``name``) are out at ``t``."""
        return bool(self.outages) and any(o.covers(t, kind, name) for o in self.outages)


# --------------------------------------------------------------------------- reading


def _line_at(parent: Any, key: str, node: Any, path: str) -> int:
    """Line of the deepest node along ``path`` (``a.b[2].c``) below ``node`` (itself ``parent[key]``)."""
    import re

    line = parent.line_of(key) if isinstance(parent, LineDict) else getattr(node, "line", 0)
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path):
        if name and isinstance(node, LineDict) and name in node:
            line, node = node.line_of(name), node[name]
        elif index and isinstance(node, LineList) and int(index) < len(node):
            line, node = node.item_lines[int(index)], node[int(index)]
        else:
            break
    return line


def _duration(loc: _Loc, node: Any, path: str, key: str, default: float | None = None, *,
              allow_zero: bool = False) -> float:
    raw = node.get(key) if isinstance(node, Mapping) else None
    if raw is None:
        if default is None:
            raise loc.fail(node, path, key, "Required value")
        return default
    try:
        if isinstance(raw, bool):
            raise ValueError("not a duration")
        if isinstance(raw, (int, float)):
            value = float(raw)
        else:
            from pyhpa.api.timefmt import parse_duration

            text = str(raw).strip()
            value = parse_duration(text[1:]) * -1 if text.startswith("-") else parse_duration(text)
    except Exception as exc:
        raise loc.fail(node, path, key, f"Invalid value: {raw!r}: {exc}") from None
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise loc.fail(node, path, key, f"Invalid value: {raw!r}: must be " + (">= 0" if allow_zero else "> 0"))
    return value


def _quantity(loc: _Loc, node: Any, path: str, key: str, *, milli: bool) -> float:
    raw = node.get(key)
    try:
        if isinstance(raw, bool):
            raise ValueError("not a quantity")
        if isinstance(raw, (int, float)):
            value = float(raw)
        else:
            from pyhpa.api.quantity import Quantity

            value = Quantity.parse(str(raw).strip()).as_float()
        if not math.isfinite(value):
            raise ValueError("not finite")
    except Exception as exc:
        raise loc.fail(node, path, key, f"Invalid value: {raw!r}: {exc}") from None
    return value * 1000.0 if milli else value


def _signal_map(loc: _Loc, parent: Any, path: str, key: str, signals: set[str], *, milli: bool) -> SignalMap:
    raw = parent.get(key)
    if raw is None:
        return SignalMap()
    if not isinstance(raw, Mapping):
        value = _quantity(loc, parent, path, key, milli=milli)
        if value < 0:
            raise loc.fail(parent, path, key, f"Invalid value: {raw!r}: must be >= 0")
        return SignalMap(base=value)
    sub = f"{path}.{key}" if path else key
    for k in raw:
        if k not in ("base", "signal", "per", "labels"):
            raise loc.fail(raw, sub, k, "unknown field (expected base, signal, per, labels)")
    base = _quantity(loc, raw, sub, "base", milli=milli) if raw.get("base") is not None else 0.0
    signal = raw.get("signal")
    if signal is not None and signal not in signals:
        known = ", ".join(sorted(signals)) or "none"
        raise loc.fail(raw, sub, "signal", f"Not found: {signal!r} (load signals: {known})")
    per = _quantity(loc, raw, sub, "per", milli=milli) if raw.get("per") is not None else (1.0 if not milli else 1.0)
    labels = raw.get("labels") or {}
    if not isinstance(labels, Mapping):
        raise loc.fail(raw, sub, "labels", "expected a mapping of label: value")
    return SignalMap(base=base, signal=signal, per=per, labels={str(k): str(v) for k, v in labels.items()})


WORKLOAD_FIELDS = {"startup", "pending", "termination", "cpu", "cpuCapacity", "startupCpu", "memory", "metrics",
                   "demand", "capacityPerReplica", "podManagementPolicy"}


def _workload_model(loc: _Loc, node: Any, path: str, signals: set[str], base: WorkloadModel) -> WorkloadModel:
    if node is None:
        return base
    if not isinstance(node, Mapping):
        raise loc.fail(node, path, None, "expected a mapping")
    for k in node:
        if k not in WORKLOAD_FIELDS:
            raise loc.fail(node, path, k, f"unknown field (expected one of: {', '.join(sorted(WORKLOAD_FIELDS))})")
    changes: dict[str, Any] = {}
    if "startup" in node:
        changes["startup_seconds"] = _duration(loc, node, path, "startup", allow_zero=True)
    if "pending" in node:
        changes["pending_seconds"] = _duration(loc, node, path, "pending", allow_zero=True)
    if "termination" in node:
        changes["termination_seconds"] = _duration(loc, node, path, "termination", allow_zero=True)
    if "cpu" in node:
        changes["cpu"] = _signal_map(loc, node, path, "cpu", signals, milli=True)
    if "memory" in node:
        changes["memory"] = _signal_map(loc, node, path, "memory", signals, milli=False)
    if "cpuCapacity" in node:
        value = _quantity(loc, node, path, "cpuCapacity", milli=True)
        if value <= 0:
            raise loc.fail(node, path, "cpuCapacity", f"Invalid value: {node['cpuCapacity']!r}: must be > 0")
        changes["cpu_capacity_milli"] = value
    if "startupCpu" in node:
        changes["startup_cpu_milli"] = _quantity(loc, node, path, "startupCpu", milli=True)
    if "metrics" in node:
        raw = node["metrics"]
        if not isinstance(raw, Mapping):
            raise loc.fail(node, path, "metrics", "expected a mapping of metric name: {signal, per, base, labels}")
        metrics = dict(base.metrics)
        for name in raw:
            metrics[str(name)] = _signal_map(loc, raw, f"{path}.metrics", name, signals, milli=False)
        changes["metrics"] = metrics
    if "demand" in node:
        if node["demand"] not in signals:
            raise loc.fail(node, path, "demand", f"Not found: {node['demand']!r} (load signals: {', '.join(sorted(signals))})")
        changes["demand"] = node["demand"]
    if "capacityPerReplica" in node:
        value = _quantity(loc, node, path, "capacityPerReplica", milli=False)
        if value <= 0:
            raise loc.fail(node, path, "capacityPerReplica", f"Invalid value: {node['capacityPerReplica']!r}: must be > 0")
        changes["capacity_per_replica"] = value
    return replace(base, **changes)


def _workload_object(loc: _Loc, doc: LineDict, path: str, model: WorkloadModel, policy_default: str) -> WorkloadObject:
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
                Quantity.parse(str(rval))
            except Exception as exc:
                raise loc.fail(requests, f"{cpath}.resources.requests", rname, f"Invalid value: {rval!r}: {exc}") from None
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


def _objects(loc: _Loc, root: LineDict, base_dir: Path) -> list[tuple[Any, str, Any, Any]]:
    """(document, path for messages, container node, key) for every object, files included."""
    raw = root.get("objects")
    if not isinstance(raw, list) or not raw:
        raise loc.fail(root, "", "objects", "Required value: a list of Deployment/StatefulSet and HPA manifests")
    out = []
    for i, item in enumerate(raw):
        if isinstance(item, Mapping) and set(item) == {"file"}:
            path = base_dir / str(item["file"])
            try:
                text = path.read_text()
            except OSError as exc:
                raise loc.fail(item, f"objects[{i}]", "file", f"cannot read {path}: {exc.strerror}") from None
            docs = load_yaml_documents(text, str(path))
            sub = _Loc(str(path))
            for j, d in enumerate(docs):
                for k, flat in enumerate(d.get("items") if isinstance(d, Mapping) and d.get("kind") == "List" else [d]):
                    out.append((flat, f"document[{j}]" + (f".items[{k}]" if flat is not d else ""), sub, flat))
        else:
            out.append((item, f"objects[{i}]", loc, item))
    return out


def parse_scenario(text: str, source: str = "<scenario>", base_dir: Path | None = None,
                   hpa_loader: Callable[[Mapping[str, Any], str, Any], Any] | None = None) -> Scenario:
    """Read a scenario; ``hpa_loader(manifest, where)`` turns an HPA manifest into a defaulted v2 HPA."""
    base_dir = base_dir or Path(".")
    loc = _Loc(source)
    docs = load_yaml_documents(text, source)
    if len(docs) != 1 or not isinstance(docs[0], Mapping):
        raise ScenarioError(f"{source}: expected one YAML mapping (a Scenario)")
    root: LineDict = docs[0]
    known = {"apiVersion", "kind", "metadata", "name", "start", "duration", "step", "controller", "metrics",
             "workload", "workloads", "objects", "load", "outages", "summary"}
    for k in root:
        if k not in known:
            raise loc.fail(root, "", k, f"unknown field (expected one of: {', '.join(sorted(known))})")
    if root.get("kind", SCENARIO_KIND) != SCENARIO_KIND:
        raise loc.fail(root, "", "kind", f"Unsupported value: {root.get('kind')!r}: expected {SCENARIO_KIND}")
    if root.get("apiVersion", SCENARIO_API_VERSION) != SCENARIO_API_VERSION:
        raise loc.fail(root, "", "apiVersion", f"Unsupported value: {root.get('apiVersion')!r}: expected {SCENARIO_API_VERSION}")
    meta = root.get("metadata") or {}
    name = str(root.get("name") or (meta.get("name") if isinstance(meta, Mapping) else None) or Path(source).stem)

    # time
    start_raw = root.get("start", DEFAULT_START)
    try:
        start_dt = datetime.fromisoformat(str(start_raw).replace("Z", "+00:00"))
        if start_dt.tzinfo is None:
            start_dt = start_dt.replace(tzinfo=timezone.utc)
    except ValueError as exc:
        raise loc.fail(root, "", "start", f"Invalid value: {start_raw!r}: {exc}") from None
    start = start_dt.timestamp()
    duration = _duration(loc, root, "", "duration")

    # controller flags
    config = ControllerConfig()
    flags = root.get("controller") or {}
    if not isinstance(flags, Mapping):
        raise loc.fail(root, "", "controller", "expected a mapping of kube-controller-manager flag: value")
    cfg_changes: dict[str, Any] = {}
    for flag, value in flags.items():
        key = str(flag).lstrip("-")
        attr = CONTROLLER_FLAGS.get(key)
        if attr is None:
            raise loc.fail(flags, "controller", flag, f"unknown flag (supported: {', '.join(CONTROLLER_FLAGS)})")
        if attr == "gates":
            from pyhpa.api.features import FeatureGateError

            try:
                cfg_changes["gates"] = config.gates.with_overrides(str(value))
            except FeatureGateError as exc:
                raise loc.fail(flags, "controller", flag, str(exc)) from None
        elif attr == "tolerance":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise loc.fail(flags, "controller", flag, f"Invalid value: {value!r}: must be a number >= 0")
            cfg_changes[attr] = float(value)
        else:
            cfg_changes[attr] = _duration(loc, flags, "controller", flag, allow_zero=attr != "sync_period")
    config = replace(config, **cfg_changes)

    # metrics pipeline
    mp = root.get("metrics") or {}
    if not isinstance(mp, Mapping):
        raise loc.fail(root, "", "metrics", "expected a mapping with resolution, window")
    for k in mp:
        if k not in ("resolution", "window"):
            raise loc.fail(mp, "metrics", k, "unknown field (expected resolution, window)")
    resolution = _duration(loc, mp, "metrics", "resolution", 15.0)
    window = _duration(loc, mp, "metrics", "window", resolution)
    if abs(window / resolution - round(window / resolution)) > 1e-9:
        raise loc.fail(mp, "metrics", "window", f"Invalid value: must be a multiple of resolution ({resolution:g}s)")
    step = _duration(loc, root, "", "step", min(resolution, config.sync_period))

    # load signals
    load_raw = root.get("load") or {}
    if not isinstance(load_raw, Mapping):
        raise loc.fail(root, "", "load", "expected a mapping of signal name: series")
    load: dict[str, Series] = {}
    for sig, spec in load_raw.items():
        def where(k: str, sig: str = sig, spec: Any = spec) -> str:
            line = _line_at(load_raw, sig, spec, k)
            return f"{source}:{line}: load.{sig}" + (f".{k}" if k else "")

        try:
            series = build_series(spec, start=start, end=start + duration, base_dir=base_dir, where=where)
            series.check_coverage(start, start + duration, where(""))
        except SeriesError as exc:
            raise ScenarioError(str(exc)) from None
        load[str(sig)] = series
    signals = set(load)

    # workload model(s)
    model = _workload_model(loc, root.get("workload"), "workload", signals, WorkloadModel())
    policy_default = "OrderedReady"
    if isinstance(root.get("workload"), Mapping) and root["workload"].get("podManagementPolicy"):
        policy_default = root["workload"]["podManagementPolicy"]
    per_name = root.get("workloads") or {}
    if not isinstance(per_name, Mapping):
        raise loc.fail(root, "", "workloads", "expected a mapping of workload name: model overrides")

    # objects
    workloads: list[WorkloadObject] = []
    hpas: list[Any] = []
    hpa_nodes: list[tuple[Any, _Loc, str]] = []  # (document, its file, path for messages) per HPA
    manifests: list[dict[str, Any]] = []
    for doc, path, dloc, node in _objects(loc, root, base_dir):
        if not isinstance(doc, Mapping):
            raise dloc.fail(node, path, None, "expected a Kubernetes object")
        kind = doc.get("kind")
        if kind in WORKLOAD_KINDS:
            name_ = (doc.get("metadata") or {}).get("name")
            wl_model = _workload_model(dloc if name_ not in per_name else loc,
                                       per_name.get(name_), f"workloads.{name_}", signals, model)
            workloads.append(_workload_object(dloc, doc, path, wl_model, policy_default))
        elif kind == "HorizontalPodAutoscaler":
            hpas.append(_load_hpa_node(hpa_loader or default_hpa_loader, doc, dloc, path, config.gates))
            hpa_nodes.append((doc, dloc, path))
            manifests.append(plain(doc))
        else:
            raise dloc.fail(node, path, "kind",
                            f"Unsupported value: {kind!r}: supported kinds: Deployment, StatefulSet, HorizontalPodAutoscaler")
    if not workloads:
        raise loc.fail(root, "", "objects", "Required value: at least one Deployment or StatefulSet")
    if not hpas:
        raise loc.fail(root, "", "objects", "Required value: at least one HorizontalPodAutoscaler")
    seen = set()
    for w in workloads:
        key = (w.namespace, w.kind, w.name)
        if key in seen:
            raise loc.fail(root, "", "objects", f"Duplicate value: {w.kind} {w.namespace}/{w.name}")
        seen.add(key)
        for mname, sm in w.model.metrics.items():
            if sm.signal is None and sm.base == 0:
                raise loc.fail(root, "", f"workload.metrics.{mname}", "Required value: signal or base")
    check_scale_targets(workloads, [(hpa, *node) for hpa, node in zip(hpas, hpa_nodes)])

    outages = parse_outages(loc, root, start, _duration)

    # summary options
    summary = root.get("summary") or {}
    if not isinstance(summary, Mapping):
        raise loc.fail(root, "", "summary", "expected a mapping with demandStepRise, demandStepWithin")
    for k in summary:
        if k not in ("demandStepRise", "demandStepWithin"):
            raise loc.fail(summary, "summary", k, "unknown field (expected demandStepRise, demandStepWithin)")
    step_rise = DEFAULT_STEP_RISE
    if summary.get("demandStepRise") is not None:
        step_rise = _fraction(loc, summary, "summary", "demandStepRise")
    step_within = _duration(loc, summary, "summary", "demandStepWithin", DEFAULT_STEP_WITHIN)

    return Scenario(
        source=source, name=name, start=start, duration=duration, step=step, config=config,
        resolution=resolution, window=window, workloads=workloads, hpas=hpas, hpa_manifests=manifests,
        load=load, outages=outages, base_dir=base_dir, step_rise=step_rise, step_within=step_within,
    )


def _fraction(loc: _Loc, node: Any, path: str, key: str) -> float:
    """A positive fraction: ``0.2`` or ``"20%"``."""
    raw = node.get(key)
    try:
        if isinstance(raw, bool):
            raise ValueError("not a number")
        text = str(raw).strip()
        value = float(text[:-1]) / 100.0 if text.endswith("%") else float(text)
    except ValueError as exc:
        raise loc.fail(node, path, key, f"Invalid value: {raw!r}: {exc}") from None
    if not math.isfinite(value) or value <= 0:
        raise loc.fail(node, path, key, f"Invalid value: {raw!r}: must be > 0")
    return value


class HpaFieldError(ScenarioError):
    """An HPA manifest that does not load; ``field`` is the (first) bad field's path in it."""

    def __init__(self, message: str, field: str | None, detail: str) -> None:
        super().__init__(message)
        self.field = field
        self.detail = detail  # the message without the location prefix


def default_hpa_loader(manifest: Mapping[str, Any], where: str, gates: Any = None) -> Any:
    """Decode, convert (v1 -> v2), default and validate with :func:`pyhpa.api.loader.load_hpa`."""
    from pyhpa.api.features import FeatureGates
    from pyhpa.api.loader import Document, LoadError, load_hpa

    doc = Document(source="scenario", index=0, raw=dict(manifest))
    try:
        return load_hpa(doc, gates or FeatureGates())
    except LoadError as exc:
        text = str(exc)
        prefix = doc.where + ": "
        text = text[len(prefix):] if text.startswith(prefix) else text
        raise HpaFieldError(f"{where}: {text}", exc.field, text) from None


def _load_hpa_node(loader: Callable[[Mapping[str, Any], str, Any], Any], doc: Any, loc: _Loc, path: str,
                   gates: Any) -> Any:
    """Load one HPA document; an error names the line of the bad field (not the object's first line)."""
    where = loc.at(doc, path)
    try:
        return loader(plain(doc), where, gates)
    except HpaFieldError as exc:
        if not exc.field:
            raise
        line = _line_at(None, "", doc, exc.field)
        raise ScenarioError(f"{loc.source}:{line}: {path}.{exc.detail}" if line else str(exc)) from None
    except ScenarioError:
        raise
    except Exception as exc:
        raise ScenarioError(f"{where}: {exc}") from None


def check_scale_targets(workloads: list[WorkloadObject], hpas: list[tuple[Any, Any, _Loc, str]]) -> None:
    """Every HPA (with its document, file and path) must scale a workload of the scenario: an HPA
    whose target is missing would only report FailedGetScale for the whole run."""
    known = {(w.namespace, w.kind, w.name) for w in workloads}
    for hpa, doc, loc, path in hpas:
        ns = hpa.metadata.namespace or "default"
        ref = hpa.spec.scale_target_ref
        if (ns, ref.kind, ref.name) in known:
            continue
        names = ", ".join(f"{k} {n}/{name}" for n, k, name in sorted(known)) or "none"
        field = "spec.scaleTargetRef.name" if any(k == ref.kind for _, k, _ in known) else "spec.scaleTargetRef.kind"
        line = _line_at(None, "", doc, field)
        raise ScenarioError(f"{loc.source}:{line}: {path}.{field}: Not found: {ref.kind} {ns}/{ref.name} is not "
                            f"in the scenario (workloads: {names})")


def load_scenario(path: str | Path, hpa_loader: Callable[[Mapping[str, Any], str, Any], Any] | None = None) -> Scenario:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read: {exc.strerror or exc}") from None
    return parse_scenario(text, str(p), p.parent, hpa_loader)


def load_hpa_file(path: str | Path, gates: Any = None, workloads: list[WorkloadObject] | None = None,
                  namespace: str | None = None) -> list[tuple[Any, dict[str, Any]]]:
    """HPAs of a manifest file (for ``--compare``): (defaulted v2 HPA, manifest) pairs. With
    ``workloads``, each must scale one of them (a missing namespace means ``namespace``)."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read: {exc.strerror or exc}") from None
    out = []
    nodes: list[tuple[Any, _Loc, str]] = []
    loc = _Loc(str(p))
    for i, doc in enumerate(load_yaml_documents(text, str(p))):
        if not isinstance(doc, Mapping) or doc.get("kind") != "HorizontalPodAutoscaler":
            raise loc.fail(doc, f"document[{i}]", "kind",
                           f"Unsupported value: {doc.get('kind') if isinstance(doc, Mapping) else doc!r}: expected HorizontalPodAutoscaler")
        hpa = _load_hpa_node(default_hpa_loader, doc, loc, f"document[{i}]", gates)
        if namespace and not ((doc.get("metadata") or {}).get("namespace") if isinstance(doc.get("metadata"), Mapping) else None):
            import msgspec

            hpa = msgspec.structs.replace(hpa, metadata=msgspec.structs.replace(hpa.metadata, namespace=namespace))
        out.append((hpa, plain(doc)))
        nodes.append((doc, loc, f"document[{i}]"))
    if workloads is not None:
        check_scale_targets(workloads, [(hpa, *node) for (hpa, _), node in zip(out, nodes)])
    if not out:
        raise ScenarioError(f"{p}: no HorizontalPodAutoscaler in the file")
    return out
