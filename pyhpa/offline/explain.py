"""`pyhpa explain`: one HPA's decision with the full arithmetic, from a snapshot of a live cluster.

The cluster is read by ``collect_snapshot`` (the live adapters, read-only) and the decision is
the offline reconcile's (``reconcile_snapshot``: the controller's ``reconcile_hpa`` over the
in-memory cluster), so `pyhpa explain`, `pyhpa snapshot | pyhpa reconcile` and the controller's
next sync agree by construction on the same state. What the trace does not carry (each pod's
class and the rule that put it there, the window's stored recommendations, the scale events in
each policy's period) is recomputed here from the same inputs with the engine's own functions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pyhpa.adapters.memory import MemoryCluster
from pyhpa.api.defaults import DEFAULT_FALLBACK_FAILURE_DURATION_SECONDS
from pyhpa.api.loader import Document
from pyhpa.api.selectors import Selector
from pyhpa.api.timefmt import format_time
from pyhpa.api.types import HorizontalPodAutoscaler, MetricSpec, PodView
from pyhpa.controller.fetch import fetch_metric
from pyhpa.controller.reconcile import run_sync
from pyhpa.engine.config import ControllerConfig
from pyhpa.engine.metrics import tolerances_for
from pyhpa.engine.normalize import Rules, effective_rules, scale_down_limit, scale_up_limit
from pyhpa.engine.pods import CalculationError, PodSet, group_pods, pod_request
from pyhpa.engine.state import AutoscalerState
from pyhpa.engine.trace import DecisionTrace, kep6107_decision
from pyhpa.offline.snapshot import Snapshot, read_snapshot, reconcile_snapshot

NO_HISTORY = "no controller history: a fresh controller's view"
POD_SOURCES = ("Resource", "ContainerResource", "Pods")


@dataclass
class Explanation:
    key: str
    hpa: HorizontalPodAutoscaler
    trace: DecisionTrace
    state_before: AutoscalerState | None
    state_after: AutoscalerState | None
    persisted_memory: bool
    lines: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """KEP-6107's ``lastScaleDecision`` shape."""
        return kep6107_decision(self.trace, self.hpa.metadata.generation)


def explain_hpa(items: list[dict[str, Any]], key: str, config: ControllerConfig, now: datetime,
                persisted_memory: bool, config_sources: list[str] | None = None) -> Explanation:
    """The decision of HPA ``key`` (namespace/name) over a snapshot's objects; ``config_sources``:
    a line per controller flag saying where its value came from, printed after the header."""
    docs = [Document("<cluster>", i, raw) for i, raw in enumerate(items)]
    snap = read_snapshot(docs, config)
    result = reconcile_snapshot(docs, config, now)
    trace = dict(result.traces)[key]
    hpa = next(h for h in snap.hpas if f"{h.metadata.namespace}/{h.metadata.name}" == key)
    after = next((i for i in result.output["items"] if i.get("kind") == "AutoscalerState"
                  and f"{i['metadata'].get('namespace')}/{i['metadata'].get('name')}" == key), None)
    state_after = AutoscalerState.from_wire(after) if after is not None else None
    ex = Explanation(key, hpa, trace, snap.states.get(key), state_after, persisted_memory)
    ex.lines = _render(ex, snap, config, now)
    if config_sources:
        ex.lines[2:2] = ["controller flags:", *(f"  {line}" for line in config_sources)]
    return ex


def _render(ex: Explanation, snap: Snapshot, config: ControllerConfig, now: datetime) -> list[str]:
    hpa, trace = ex.hpa, ex.trace
    ref = hpa.spec.scale_target_ref
    out = [f"HorizontalPodAutoscaler {ex.key} → {ref.kind}/{ref.name}   (at {format_time(now)}; read-only)"]
    if ex.state_before is not None:
        out.append("controller memory: the state `pyhpa run` persists (Lease pyhpa-autoscaler-state)")
    else:
        out.append(NO_HISTORY)
    if trace.branch == "failed-get-scale":
        out.append(f"could not read the target's scale: {trace.error}")
        return out + _decision(ex)
    out.append(f"current replicas {trace.current_replicas} (minReplicas {trace.min_replicas}, "
               f"maxReplicas {trace.max_replicas})")
    tol = tolerances_for(hpa, config)
    cluster = MemoryCluster(hpas=snap.hpas, workloads=[w for _, w in snap.workloads], pods=snap.pods,
                            metric_values=snap.metric_values, external_metrics=snap.external_metrics)
    cluster.set_pod_usage(snap.pod_usages)
    selector, pods = _pods(cluster, hpa)
    out.append("")
    for i, spec in enumerate(hpa.spec.metrics or []):
        m = trace.metrics[i] if i < len(trace.metrics) else None
        out.append(f"metric {i}: {spec.type} {m.name if m is not None else ''}".rstrip())
        if m is None:
            continue
        in_fallback = m.ratio is None and bool(m.notes)  # KEP-5679: nothing read, the fallback proposes
        if m.invalid or m.error:
            out.append(f"  invalid: {m.error}")
            out += _fallback_countdown(hpa, spec, config, now)
        elif in_fallback:
            out += [f"  in fallback (KEP-5679): {note}" for note in m.notes]
        else:
            out.append(f"  current {m.current} vs target {m.target}")
        if spec.type in POD_SOURCES and pods is not None and selector is not None:
            out += _pod_table(cluster, hpa, spec, selector, pods, config, now)
        if m.invalid or m.error:
            continue
        lo, hi = 1.0 - tol.down, 1.0 + tol.up
        if in_fallback:
            pass
        elif m.notes:  # rebalanced: the ratio shown is the one recomputed with the left-out pods
            flip = "; the direction would flip, so the count stays" if m.held == "direction" else ""
            out.append(f"  tolerance band [{lo:g}, {hi:g}]; rebalanced ({'; '.join(m.notes)}): "
                       f"ratio {m.ratio:.3f}{flip}")
        elif m.ratio is not None:
            inside = lo <= m.ratio <= hi
            out.append(f"  tolerance band [{lo:g}, {hi:g}]: ratio {m.ratio:.3f} "
                       f"{'inside: keep the current count' if inside else 'outside: scale'}")
        if m.unadjusted is not None and m.unadjusted != m.replicas:
            out.append(f"  naive proposal {m.unadjusted} → {m.replicas}")
        out.append(f"  proposal: {m.replicas} replicas{' [used: the largest proposal]' if m.used else ''}")
    if trace.proposal is not None:
        out.append(f"recommendation (largest proposal): {trace.proposal}")
    out += [f"recommendation (KEP-5053 fallback): {s.after}: {s.detail}" for s in trace.steps if s.kind == "fallback"]
    out += _window(ex, config, now)
    out += _policies(ex, config, now)
    out += _decision(ex)
    return out


def _fallback_countdown(hpa: HorizontalPodAutoscaler, spec: MetricSpec, config: ControllerConfig,
                        now: datetime) -> list[str]:
    """A failing External metric with a KEP-5679 fallback: when the fallback takes over, counted
    from the failure run's start in status (this pass starts one if there is none)."""
    ext = spec.external
    if spec.type != "External" or ext is None or ext.fallback is None or not config.gates.external_metric_fallback:
        return []
    first = next((s.external.first_failure_time for s in hpa.status.current_metrics or ()
                  if s.external is not None and s.external.metric.name == ext.metric.name
                  and s.external.metric.selector == ext.metric.selector and s.external.first_failure_time), None)
    first = first or now.replace(microsecond=0)
    duration = ext.fallback.failure_duration_seconds or DEFAULT_FALLBACK_FAILURE_DURATION_SECONDS
    at = first + timedelta(seconds=duration)
    left = max(0, math.ceil((at - now).total_seconds()))
    return [f"  fallback (KEP-5679): failing since {format_time(first)}; its {ext.fallback.replicas} replicas "
            f"take over at {format_time(at)} (in {left}s), after failureDurationSeconds {duration}"]


def _pods(cluster: MemoryCluster, hpa: HorizontalPodAutoscaler) -> tuple[Selector | None, PodSet | None]:
    ports = cluster.ports()
    try:
        scale = run_sync(ports.scales.get_scale(hpa.metadata.namespace or "", hpa.spec.scale_target_ref))
        selector = Selector.parse(scale.status.selector or "")
        return selector, run_sync(ports.pods.list_pods(hpa.metadata.namespace or "", selector))
    except Exception:  # no scale or no usable selector: the trace says why, no pod table then
        return None, None


def _pod_table(cluster: MemoryCluster, hpa: HorizontalPodAutoscaler, spec: MetricSpec, selector: Selector,
               pods: PodSet, config: ControllerConfig, now: datetime) -> list[str]:
    fetch = run_sync(fetch_metric(spec, cluster.ports().metrics, hpa.metadata.namespace or "", selector))
    samples = (fetch.pod_metrics if fetch is not None else None) or {}
    if spec.type == "Pods":
        resource, container = "", ""
    else:
        src = spec.container_resource if spec.type == "ContainerResource" else spec.resource
        resource, container = src.name, getattr(src, "container", "") or ""  # type: ignore[union-attr]
    groups = group_pods(pods, samples, resource, config.cpu_initialization_period,
                        config.initial_readiness_delay, now)
    klass = {n: "unready" for n in groups.unready} | {n: "missing" for n in groups.missing} | {
        n: "ignored" for n in groups.ignored}
    rows = [("POD", "CLASS", "SAMPLE", "REQUEST", "RULE")]
    for pod in pods.pods:
        name = pod.metadata.name or ""
        cls = klass.get(name, "ready")
        sample = samples.get(name)
        request = ""
        if resource:
            try:
                request = f"{pod_request(pod, resource, container, config.gates.pod_level_resources)}m"
            except CalculationError:
                request = "none"
        cls, rule = _pod_rule(pod, cls, sample, resource, config, now)
        rows.append((name, cls, f"{sample.value}m" if sample is not None else "-", request or "-", rule))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return _formula(spec, rows[1:], groups.ready_count) + ["  pods:"] + ["    " + "  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4] for r in rows]


def _formula(spec: MetricSpec, rows: list[tuple[str, ...]], ready: int) -> list[str]:
    """Upstream's arithmetic over the counted pods, with their numbers."""
    counted = [r for r in rows if r[1] == "ready" and r[2] != "-"]
    if not counted:
        return []
    usage = sum(int(r[2][:-1]) for r in counted)
    src = spec.container_resource if spec.type == "ContainerResource" else spec.resource
    if src is not None and src.target.average_utilization is not None and all(r[3].endswith("m") for r in counted):
        requests = sum(int(r[3][:-1]) for r in counted)
        if requests:
            util = usage * 100 / requests
            target = src.target.average_utilization
            return [f"  formula: usage {usage}m / requests {requests}m over {len(counted)} pods = {util:.0f}% "
                    f"of request; ratio {util:.0f}% / {target}% = {util / target:.3f}; "
                    f"ceil(ratio × {ready} ready pods) = {math.ceil(util / target * ready)}"]
    return [f"  formula: usage {usage}m over {len(counted)} pods = {usage / len(counted):.0f}m average; "
            f"ceil(ratio × {ready} ready pods)"]


def _pod_rule(pod: PodView, cls: str, sample: Any, resource: str, config: ControllerConfig,
              now: datetime) -> tuple[str, str]:
    """The class shown and the rule of upstream's groupPods that put the pod there."""
    status = pod.status
    if cls == "ignored":
        if pod.metadata.deletion_timestamp is not None:
            return "deleted", "deletionTimestamp set: left out"
        return "ignored", "phase Failed: left out"
    if status.phase == "Pending":
        return "unready", "phase Pending: counts as 0 on a scale-up, left out of a scale-down"
    if cls == "missing":
        return "missing", "no sample from the metrics API: 0 on a scale-up, the target on a scale-down"
    start = status.start_time
    init_end = start + timedelta(seconds=config.cpu_initialization_period) if start is not None else None
    if cls == "unready":
        if init_end is not None and init_end > now:
            return "initializing", (f"CPU: started {format_time(start)}, within the initialization period "
                                    f"(until {format_time(init_end)}), not Ready or sampled before it became Ready")
        return "unready", "CPU: not Ready (never ready since start, within the initial readiness delay)"
    when = f", sample of {format_time(sample.timestamp)}" if sample is not None else ""
    if resource == "cpu" and init_end is not None and init_end > now:
        return "ready", f"CPU: initializing until {format_time(init_end)} but Ready with a sample taken after{when}"
    return "ready", f"Running with a sample: counted{when}"


def _rules(hpa: HorizontalPodAutoscaler, config: ControllerConfig) -> tuple[Rules | None, Rules]:
    if hpa.spec.behavior is None:
        return None, Rules(int(config.downscale_stabilization), "Max", ())
    return effective_rules(hpa.spec.behavior, config.downscale_stabilization)


def _window(ex: Explanation, config: ControllerConfig, now: datetime) -> list[str]:
    """The recommendations the controller remembers (before this pass) that are inside a
    window, which one held the count, and when each leaves the window."""
    up, down = _rules(ex.hpa, config)
    before = ex.state_before.recommendations if ex.state_before is not None else None
    out = ["", f"stabilization: scale-down window {down.window}s"
           + (f", scale-up window {up.window}s" if up is not None else " (no behavior: no scale-up window)")]
    if before is None:
        out.append(f"  no stored recommendation: a fresh controller first records the current count "
                   f"({ex.trace.current_replicas}) at this pass")
    held = next((s for s in ex.trace.steps if s.kind == "stabilization"), None)
    longest = max(down.window, up.window if up is not None else 0)
    shown = [r for r in before or () if r.timestamp > now - timedelta(seconds=longest)]
    if before is not None and not shown:
        out.append("  no stored recommendation inside the window")
    for r in shown:
        expiry = r.timestamp + timedelta(seconds=down.window)
        mark = " ← held the count" if held is not None and r.replicas == held.after else ""
        out.append(f"  {format_time(r.timestamp)}  {r.replicas} replicas, leaves the scale-down window at "
                   f"{format_time(expiry)} (in {(expiry - now).total_seconds():.0f}s){mark}")
    if ex.trace.proposal is not None:
        out.append(f"  this pass adds {ex.trace.proposal} replicas at {format_time(now)}")
    out.append(f"  → {held.detail}" if held is not None else "  → the window does not change the recommendation")
    return out


def _policies(ex: Explanation, config: ControllerConfig, now: datetime) -> list[str]:
    trace, hpa = ex.trace, ex.hpa
    current, proposal = trace.current_replicas, trace.proposal
    up, down = _rules(hpa, config)
    if current is None or proposal is None:
        return []
    if up is None:
        return ["", f"policies: none (no behavior): a scale-up goes to at most max(2 × {current}, 4) = "
                    f"{max(2 * current, 4)}"] + [f"  → {s.detail}" for s in trace.steps if s.kind in ("policy", "limit")]
    state = ex.state_before or AutoscalerState()
    stabilized = next((s.after for s in trace.steps if s.kind == "stabilization"), proposal)
    direction = "up" if stabilized > current else "down" if stabilized < current else ""
    if not direction:
        return ["", "policies: no change proposed, none applies"]
    rules = up if direction == "up" else down
    limit_of = scale_up_limit if direction == "up" else scale_down_limit
    out = ["", f"policies (scale {direction}, selectPolicy {rules.select_policy}):"]
    events = (state.scale_up_events if direction == "up" else state.scale_down_events) or ()
    for p in rules.policies:
        cutoff = now - timedelta(seconds=p.period_seconds)
        inside = [e for e in events if e.timestamp > cutoff]
        limit = limit_of(current, state.scale_up_events, state.scale_down_events, Rules(rules.window, "Max", (p,)), now)
        listed = ", ".join(f"{e.replica_change:+d} at {format_time(e.timestamp)}" for e in inside) or "none"
        out.append(f"  {p.type} {p.value} per {p.period_seconds}s: events in the period: {listed}; allows {limit}")
    limited = [s for s in trace.steps if s.kind in ("policy", "min", "max")]
    for s in limited:
        out.append(f"  → {s.detail}")
    if not limited:
        out.append("  → no limit reached")
    return out


def _decision(ex: Explanation) -> list[str]:
    kep = ex.to_json()
    trace = ex.trace
    out = [""]
    for s in trace.steps:
        if s.kind in ("min", "max", "floor"):
            out.append(f"replica limits: {s.detail}")
    constraints = f" (constraints: {', '.join(kep['constraints'])})" if kep["constraints"] else ""
    verb = "scale to" if trace.rescaled else "keep"
    out.append(f"decision: {verb} {kep['desiredReplicas']} replicas, reason {kep['reason']}{constraints}")
    if trace.rescaled and trace.reason:  # the rescale event's reason (a KEP-5679 fallback names itself)
        out.append(f"rescale reason: {trace.reason}")
    if trace.error:
        out.append(f"error: {trace.error}")
    return out
