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
                                    # (N x P - cpu.base) / cpu.per, P = CPU limit, cpuCapacity or request (sim.capacity)
    workloads: {<workload name>: {<workload fields>}}
    load: {<signal>: <series>}      # csv / prometheus / constant / step / steps / ramp / sine /
                                    # diurnal / spikes / randomWalk / sum (see pyhpa.sim.series)
    outages: [{from: 10m, to: 15m, metrics: [resource|pods|object|external|all]}]
                                    # or duration: 5m; a single metric: external/<name> (sim.outages)
    summary:                        # how the summary finds demand steps (defaults shown):
      demandStepRise: 20%           # a tick where demand rose above the previous tick and above
      demandStepWithin: 5m          # 120 % of the lowest demand of the 5 minutes before; a run of
                                    # such ticks is one step (report.demand_steps)
    objects: [<Deployment|StatefulSet|HorizontalPodAutoscaler|ResourceQuota manifest> | {file: other.yaml}]
    nodes:                          # optional: the nodes pods are placed on and share CPU of
    - {name: big, cpu: 4, memory: 16Gi, pods: 110}   # one node (memory, pods optional)
    - {count: 3, cpu: 2}            # or `count` alike ones: node-1, node-2, node-3
    observed:                       # what the cluster really did (sim.observed); written by `pyhpa history`
      <workload name>:
        replicas: <series>          # observed replica count, e.g. {csv: history.csv, column: replicas}
        saturated: [{from: 90m, to: "2026-01-05T12:00:00Z", reason: "<text>"}]   # optional

With ``observed:``, ``pyhpa simulate`` adds the *replay check* (:mod:`pyhpa.sim.replay`) to the
summary of each HPA whose target has observed replicas: the share of the run's time the simulated
replicas stayed within one replica of the observed ones (on the step grid, the observed series
read as steps), how many observed scale events a simulated one in the same direction matched
within one sync period, and the largest deviation. ``saturated`` intervals, where the recorded
usage was capped and so demand is only a lower bound, are counted and shaded in the plots.
``pyhpa tune`` shows the check of the current settings beside its recommendation.

With ``nodes:``, pods are placed and share CPU as in the embedded cluster; a ResourceQuota in
``objects:`` refuses pods past it (:mod:`pyhpa.sim.scenario_nodes`, :mod:`pyhpa.sim.admission`).

Every HPA's ``scaleTargetRef`` must name a Deployment or StatefulSet of the scenario. Reading is
strict: unknown and duplicate fields, ``workloads:`` entries naming no workload and negative loads
are errors (see :mod:`pyhpa.sim.scenario_fields`).

The field-reading helpers are in :mod:`pyhpa.sim.scenario_fields`, the workload model and the
workload objects in :mod:`pyhpa.sim.scenario_workloads`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

from pyhpa.controller.flags import ALL_FLAG_NAMES, FlagError, FlagValues
from pyhpa.engine.config import ControllerConfig
from pyhpa.sim.observed import Observed, parse_observed
from pyhpa.sim.outages import Outage, parse_outages
from pyhpa.sim.scenario_fields import (
    FieldLocator,
    LineDict,
    ManifestSchemas,
    ScenarioError,
    check_fields,
    line_at,
    load_yaml_documents,
    plain,
    read_duration,
    read_fraction,
)
from pyhpa.sim.scenario_nodes import NodeSpec, QuotaSpec, read_nodes, read_quota
from pyhpa.sim.scenario_workloads import WorkloadModel, WorkloadObject, read_workload_model, read_workload_object
from pyhpa.sim.series import Series, SeriesError, build_series, check_not_negative

SCENARIO_API_VERSION = "pyhpa.io/v1alpha1"
SCENARIO_KIND = "Scenario"
WORKLOAD_KINDS = ("Deployment", "StatefulSet")
DEFAULT_START = "2026-01-01T00:00:00Z"
DEFAULT_STEP_RISE = 0.2
DEFAULT_STEP_WITHIN = 300.0

# --------------------------------------------------------------------------- the model


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
    observed: dict[tuple[str, str, str], Observed] = field(default_factory=dict)  # by workload (sim.observed)
    nodes: list[NodeSpec] = field(default_factory=list)  # none: pods run on no node (sim.scenario_nodes)
    quotas: list[QuotaSpec] = field(default_factory=list)

    @property
    def end(self) -> float:
        return self.start + self.duration

    def outage(self, t: float, kind: str, name: str = "") -> bool:
        """Whether ``kind`` metrics (or the one named ``name``) are out at ``t``."""
        return bool(self.outages) and any(o.covers(t, kind, name) for o in self.outages)


# --------------------------------------------------------------------------- reading


def _objects(loc: FieldLocator, root: LineDict, base_dir: Path) -> list[tuple[Any, str, Any, Any]]:
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
            sub = FieldLocator(str(path))
            for j, d in enumerate(docs):
                for flat, where in list_items(sub, d, f"document[{j}]"):
                    out.append((flat, where, sub, flat))
        else:
            out.append((item, f"objects[{i}]", loc, item))
    return out


def read_controller_flags(loc: FieldLocator, root: LineDict, overrides: FlagValues | None) -> ControllerConfig:
    """The `controller:` mapping (flag: value, as on kube-controller-manager's command line; a
    duration may also be a number of seconds), with the command line's flags over it; an error
    names the file, line and flag."""
    flags = root.get("controller") or {}
    if not isinstance(flags, Mapping):
        raise loc.fail(root, "", "controller", "expected a mapping of kube-controller-manager flag: value")
    values: dict[str, Any] = {}
    for flag, value in flags.items():
        name = str(flag).lstrip("-")
        if name not in ALL_FLAG_NAMES:
            raise loc.fail(flags, "controller", flag, f"unknown flag (supported: {', '.join(ALL_FLAG_NAMES)})")
        values[name] = value if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
    from_file = FlagValues(values, dict.fromkeys(values, loc.source))
    try:
        FlagValues(values).config()  # the file's own errors point at its lines
        return (overrides.over(from_file) if overrides else from_file).config()
    except FlagError as exc:
        if exc.flag in values:
            key = next(k for k in flags if str(k).lstrip("-") == exc.flag)
            raise loc.fail(flags, "controller", key, f"Invalid value: {exc.reason}") from None
        raise ScenarioError(f"{loc.source}: {exc}") from None  # a command-line flag against the file's


def parse_scenario(text: str, source: str = "<scenario>", base_dir: Path | None = None,
                   hpa_loader: Callable[[Mapping[str, Any], str, Any], Any] | None = None,
                   controller_flags: FlagValues | None = None) -> Scenario:
    """Read a scenario; ``hpa_loader(manifest, where)`` turns an HPA manifest into a defaulted v2
    HPA; ``controller_flags`` (the command line's) win over the file's `controller:` mapping."""
    base_dir = base_dir or Path(".")
    loc = FieldLocator(source)
    docs = load_yaml_documents(text, source)
    if len(docs) != 1 or not isinstance(docs[0], Mapping):
        raise ScenarioError(f"{source}: expected one YAML mapping (a Scenario)")
    root: LineDict = docs[0]
    known = {"apiVersion", "kind", "metadata", "name", "start", "duration", "step", "controller", "metrics",
             "workload", "workloads", "objects", "load", "outages", "summary", "observed", "nodes",
             "tune"}  # tune: read by pyhpa.sim.tune (`pyhpa tune`), ignored by `pyhpa simulate`
    check_fields(loc, root, "", known)
    if root.get("kind", SCENARIO_KIND) != SCENARIO_KIND:
        raise loc.fail(root, "", "kind", f"Unsupported value: {root.get('kind')!r}: expected {SCENARIO_KIND}")
    if root.get("apiVersion", SCENARIO_API_VERSION) != SCENARIO_API_VERSION:
        raise loc.fail(root, "", "apiVersion", f"Unsupported value: {root.get('apiVersion')!r}: expected {SCENARIO_API_VERSION}")
    meta = root.get("metadata") or {}
    check_fields(loc, meta, "metadata", ("name", "namespace", "labels", "annotations"))
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
    duration = read_duration(loc, root, "", "duration")

    # controller flags: kube-controller-manager's, read by the commands' own parser
    config = read_controller_flags(loc, root, controller_flags)

    # metrics pipeline
    mp = root.get("metrics") or {}
    if not isinstance(mp, Mapping):
        raise loc.fail(root, "", "metrics", "expected a mapping with resolution, window")
    check_fields(loc, mp, "metrics", ("resolution", "window"))
    resolution = read_duration(loc, mp, "metrics", "resolution", 15.0)
    window = read_duration(loc, mp, "metrics", "window", resolution)
    if abs(window / resolution - round(window / resolution)) > 1e-9:
        raise loc.fail(mp, "metrics", "window", f"Invalid value: must be a multiple of resolution ({resolution:g}s)")
    step = read_duration(loc, root, "", "step", min(resolution, config.sync_period))

    # load signals
    load_raw = root.get("load") or {}
    if not isinstance(load_raw, Mapping):
        raise loc.fail(root, "", "load", "expected a mapping of signal name: series")
    load: dict[str, Series] = {}
    for sig, spec in load_raw.items():
        def where(k: str, sig: str = sig, spec: Any = spec) -> str:
            line = line_at(load_raw, sig, spec, k)
            return f"{source}:{line}: load.{sig}" + (f".{k}" if k else "")

        try:
            series = build_series(spec, start=start, end=start + duration, base_dir=base_dir, where=where)
            series.check_coverage(start, start + duration, where(""))
            check_not_negative(series, start, start + duration, step, where(""))
        except SeriesError as exc:
            raise ScenarioError(str(exc)) from None
        load[str(sig)] = series
    signals = set(load)

    # workload model(s)
    model = read_workload_model(loc, root.get("workload"), "workload", signals, WorkloadModel())
    policy_default = "OrderedReady"
    if isinstance(root.get("workload"), Mapping) and root["workload"].get("podManagementPolicy"):
        policy_default = root["workload"]["podManagementPolicy"]
    per_name = root.get("workloads") or {}
    if not isinstance(per_name, Mapping):
        raise loc.fail(root, "", "workloads", "expected a mapping of workload name: model overrides")

    # objects
    workloads: list[WorkloadObject] = []
    hpas: list[Any] = []
    hpa_nodes: list[tuple[Any, FieldLocator, str]] = []  # (document, its file, path for messages) per HPA
    quotas: list[QuotaSpec] = []
    manifests: list[dict[str, Any]] = []
    schemas = ManifestSchemas()
    for doc, path, dloc, node in _objects(loc, root, base_dir):
        if not isinstance(doc, Mapping):
            raise dloc.fail(node, path, None, "expected a Kubernetes object")
        kind = doc.get("kind")
        if kind in WORKLOAD_KINDS or kind in ("HorizontalPodAutoscaler", "ResourceQuota"):
            schemas.check(dloc, doc, path)
        if kind in WORKLOAD_KINDS:
            name_ = (doc.get("metadata") or {}).get("name")
            wl_model = read_workload_model(dloc if name_ not in per_name else loc,
                                       per_name.get(name_), f"workloads.{name_}", signals, model)
            workloads.append(read_workload_object(dloc, doc, path, wl_model, policy_default))
        elif kind == "HorizontalPodAutoscaler":
            hpas.append(_load_hpa_node(hpa_loader or default_hpa_loader, doc, dloc, path, config.gates))
            hpa_nodes.append((doc, dloc, path))
            manifests.append(plain(doc))
        elif kind == "ResourceQuota":
            quota = read_quota(dloc, doc, path)
            if any((q.namespace, q.name) == (quota.namespace, quota.name) for q in quotas):
                raise dloc.fail(doc, path, "metadata.name",
                                f"Duplicate value: ResourceQuota {quota.namespace}/{quota.name}")
            quotas.append(quota)
        else:
            raise dloc.fail(node, path, "kind", f"Unsupported value: {kind!r}: supported kinds: Deployment, "
                                                "StatefulSet, HorizontalPodAutoscaler, ResourceQuota")
    if not workloads:
        raise loc.fail(root, "", "objects", "Required value: at least one Deployment or StatefulSet")
    if not hpas:
        raise loc.fail(root, "", "objects", "Required value: at least one HorizontalPodAutoscaler")
    names = {w.name for w in workloads}
    for name_ in per_name:
        if name_ not in names:
            raise loc.fail(per_name, "workloads", name_, f"Not found: no Deployment or StatefulSet named {name_!r} "
                                                         f"(workloads: {', '.join(sorted(names))})")
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

    served = {name_ for w in workloads for name_ in w.model.metrics}
    outages = parse_outages(loc, root, start, read_duration, duration, served)

    # summary options
    summary = root.get("summary") or {}
    if not isinstance(summary, Mapping):
        raise loc.fail(root, "", "summary", "expected a mapping with demandStepRise, demandStepWithin")
    check_fields(loc, summary, "summary", ("demandStepRise", "demandStepWithin"))
    step_rise = DEFAULT_STEP_RISE
    if summary.get("demandStepRise") is not None:
        step_rise = read_fraction(loc, summary, "summary", "demandStepRise")
    step_within = read_duration(loc, summary, "summary", "demandStepWithin", DEFAULT_STEP_WITHIN)
    observed = parse_observed(loc, root, workloads, start, duration, step, base_dir)
    nodes = read_nodes(loc, root)

    return Scenario(
        source=source, name=name, start=start, duration=duration, step=step, config=config,
        resolution=resolution, window=window, workloads=workloads, hpas=hpas, hpa_manifests=manifests,
        load=load, outages=outages, base_dir=base_dir, step_rise=step_rise, step_within=step_within,
        observed=observed, nodes=nodes, quotas=quotas,
    )


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


def _load_hpa_node(loader: Callable[[Mapping[str, Any], str, Any], Any], doc: Any, loc: FieldLocator, path: str,
                   gates: Any) -> Any:
    """Load one HPA document; an error names the line of the bad field (not the object's first line)."""
    where = loc.at(doc, path)
    try:
        return loader(plain(doc), where, gates)
    except HpaFieldError as exc:
        if not exc.field:
            raise
        line = line_at(None, "", doc, exc.field)
        raise ScenarioError(f"{loc.source}:{line}: {path}.{exc.detail}" if line else str(exc)) from None
    except ScenarioError:
        raise
    except Exception as exc:
        raise ScenarioError(f"{where}: {exc}") from None


def check_scale_targets(workloads: list[WorkloadObject], hpas: list[tuple[Any, Any, FieldLocator, str]]) -> None:
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
        line = line_at(None, "", doc, field)
        raise ScenarioError(f"{loc.source}:{line}: {path}.{field}: Not found: {ref.kind} {ns}/{ref.name} is not "
                            f"in the scenario (workloads: {names})")


LIST_FIELDS = ("apiVersion", "kind", "metadata", "items")


def list_items(loc: FieldLocator, doc: Any, path: str) -> list[tuple[Any, str]]:
    """(object, path for messages) of a document: the items of a ``v1 List`` (what
    ``kubectl get -o yaml`` prints), else the document itself."""
    if not (isinstance(doc, Mapping) and doc.get("kind") == "List"):
        return [(doc, path)]
    check_fields(loc, doc, path, LIST_FIELDS)
    items = doc.get("items")
    if items is None:
        return []
    if not isinstance(items, list):
        raise loc.fail(doc, path, "items", "expected a list of objects")
    return [(item, f"{path}.items[{k}]") for k, item in enumerate(items)]


def load_scenario(path: str | Path, hpa_loader: Callable[[Mapping[str, Any], str, Any], Any] | None = None,
                  controller_flags: FlagValues | None = None) -> Scenario:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read: {exc.strerror or exc}") from None
    return parse_scenario(text, str(p), p.parent, hpa_loader, controller_flags)


def load_hpa_file(path: str | Path, gates: Any = None, workloads: list[WorkloadObject] | None = None,
                  namespace: str | None = None) -> list[tuple[Any, dict[str, Any]]]:
    """HPAs of a manifest file (for ``--compare``): (defaulted v2 HPA, manifest) pairs. With
    ``workloads``, each must scale one of them (a missing namespace means ``namespace``).

    The file may hold a ``v1 List`` (``kubectl get hpa -o yaml``); a status in it is dropped, as
    the API server drops it on create: it was written on another cluster's clock."""
    import msgspec

    from pyhpa.api.types import HorizontalPodAutoscalerStatus

    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read: {exc.strerror or exc}") from None
    out = []
    nodes: list[tuple[Any, FieldLocator, str]] = []
    loc = FieldLocator(str(p))
    schemas = ManifestSchemas()
    flat = [item for i, d in enumerate(load_yaml_documents(text, str(p))) for item in list_items(loc, d, f"document[{i}]")]
    for doc, where in flat:
        if not isinstance(doc, Mapping) or doc.get("kind") != "HorizontalPodAutoscaler":
            raise loc.fail(doc, where, "kind",
                           f"Unsupported value: {doc.get('kind') if isinstance(doc, Mapping) else doc!r}: expected HorizontalPodAutoscaler")
        schemas.check(loc, doc, where)
        hpa = _load_hpa_node(default_hpa_loader, doc, loc, where, gates)
        hpa = msgspec.structs.replace(hpa, status=HorizontalPodAutoscalerStatus(desired_replicas=0, current_metrics=None))
        if namespace and not ((doc.get("metadata") or {}).get("namespace") if isinstance(doc.get("metadata"), Mapping) else None):
            hpa = msgspec.structs.replace(hpa, metadata=msgspec.structs.replace(hpa.metadata, namespace=namespace))
        out.append((hpa, plain(doc)))
        nodes.append((doc, loc, where))
    if workloads is not None:
        check_scale_targets(workloads, [(hpa, *node) for (hpa, _), node in zip(out, nodes)])
    if not out:
        raise ScenarioError(f"{p}: no HorizontalPodAutoscaler in the file")
    return out
