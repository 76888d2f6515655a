"""One reconcile pass of one HPA, following upstream's ``reconcileAutoscaler`` (podautoscaler/horizontal.go).

I/O goes through ``Ports``; every decision is made by ``pyhpa.engine``. The same coroutine
serves the offline ``pyhpa reconcile``, the simulator and the live controller. With in-memory
ports nothing ever suspends, so ``run_sync`` drives it without an event loop.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any, Coroutine, TypeVar

import msgspec

from pyhpa.api.selectors import Selector, SelectorError
from pyhpa.api.types import (
    HorizontalPodAutoscaler,
    HorizontalPodAutoscalerCondition,
    HorizontalPodAutoscalerScaleDecision,
    HorizontalPodAutoscalerStatus,
    MetricStatus,
    Scale,
)
from pyhpa.controller.fallback import CONDITION as FALLBACK_CONDITION
from pyhpa.controller.fallback import EVENT_ACTIVATED as FALLBACK_ACTIVATED
from pyhpa.controller.fallback import FallbackPass, uses_fallback
from pyhpa.controller.fetch import fetch_metric
from pyhpa.controller.hpa_fallback import CONDITION as HPA_FALLBACK_CONDITION
from pyhpa.controller.hpa_fallback import EVENT_REACHED as HPA_FALLBACK_REACHED
from pyhpa.controller.hpa_fallback import hpa_fallback, judge
from pyhpa.controller.ports import ConflictError, MappingError, Ports
from pyhpa.controller.suspend import MSG_SUSPENDED, REASON_SUSPENDED, is_suspended
from pyhpa.engine import conditions as C
from pyhpa.engine.calculator import Tolerances
from pyhpa.engine.config import ControllerConfig
from pyhpa.engine.metrics import DEFAULT_METRICS, MetricContext, combine, tolerances_for
from pyhpa.engine.normalize import effective_rules, normalize_behavior, normalize_legacy, store_scale_event
from pyhpa.engine.state import AutoscalerState, Recommendation
from pyhpa.engine.trace import DecisionTrace, MetricTrace, scale_decision

T = TypeVar("T")

RESCALE_ATTEMPTS = 5  # client-go's default retry: 5 steps (backoff sleeps are not reproduced)
REASON_ABOVE_MAX = "Current number of replicas above Spec.MaxReplicas"
REASON_BELOW_MIN = "Current number of replicas below Spec.MinReplicas"


class CoroutineSuspended(Exception):
    """``run_sync`` was given a coroutine that actually waits for something."""


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Drive a coroutine whose awaits never suspend, without an event loop."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise CoroutineSuspended("the coroutine suspended: use an event loop (its ports do real I/O)")


class EmittedEvent(msgspec.Struct):
    type: str
    reason: str
    message: str


class ReconcileResult(msgspec.Struct):
    """What one pass did; the HPA it was given is left as it was."""

    key: str
    status: HorizontalPodAutoscalerStatus  # the new status (written or unchanged)
    status_written: bool
    rescaled: bool
    current_replicas: int | None
    desired_replicas: int | None
    error: str | None
    action: str  # scale_up | scale_down | none (upstream's monitor label)
    error_kind: str  # spec | internal | none
    trace: DecisionTrace
    state: AutoscalerState
    events: list[EmittedEvent] = []


def _parse_group_version(api_version: str | None) -> str | None:
    """Upstream's ParseGroupVersion check: the error text, or None when valid."""
    if not api_version or api_version == "/":
        return None
    if api_version.count("/") > 1:
        return f"unexpected GroupVersion string: {api_version}"
    return None


def same_decision(a: HorizontalPodAutoscalerScaleDecision | None, b: HorizontalPodAutoscalerScaleDecision | None) -> bool:
    """KEP-6107: the decision means the same when all but its ``time`` is equal (a sync that
    decides the same thing must not rewrite it just to refresh the time)."""
    if a is None or b is None:
        return a is None and b is None
    return msgspec.structs.replace(a, time=None) == msgspec.structs.replace(b, time=None)


def semantically_equal(a: HorizontalPodAutoscalerStatus, b: HorizontalPodAutoscalerStatus) -> bool:
    """apimachinery's semantic equality: quantities by value, times by instant, nil == empty;
    the decision trace by meaning (``same_decision``)."""
    return (
        a.observed_generation == b.observed_generation
        and a.last_scale_time == b.last_scale_time
        and a.current_replicas == b.current_replicas
        and a.desired_replicas == b.desired_replicas
        and (a.current_metrics or None) == (b.current_metrics or None)  # nil == empty
        and (a.conditions or None) == (b.conditions or None)
        and same_decision(a.last_scale_decision, b.last_scale_decision)
        and (a.consecutive_metric_retrieval_failure_count or 0) == (b.consecutive_metric_retrieval_failure_count or 0)
    )


class _Pass:
    """Mutable bookkeeping of one pass (conditions, events, trace) shared by the steps.

    The conditions are copied on the first status change (or new or removed condition) only:
    a pass sets most conditions to their current status, often passing through another reason
    and back (AbleToScale), so until then reason/message edits wait in ``_edits``. When the
    edits leave everything as it was, the new status shares the old list (nothing mutates it).
    """

    __slots__ = ("hpa", "ports", "config", "now", "namespace", "key", "original", "_conditions", "_owned",
                 "_edits", "events", "trace", "failures", "by_fallback", "fallback")

    def __init__(self, hpa: HorizontalPodAutoscaler, ports: Ports, config: ControllerConfig, now: datetime) -> None:
        self.hpa = hpa
        self.ports = ports
        self.config = config
        self.now = now
        self.namespace = hpa.metadata.namespace or ""
        self.key = f"{self.namespace}/{hpa.metadata.name or ''}"
        self.original = hpa.status
        conditions = hpa.status.conditions
        self._conditions: C.Conditions = conditions if conditions else []
        self._owned = not conditions
        self._edits: dict[str, tuple[str, str]] = {}  # type -> (reason, message), same status
        self.events: list[EmittedEvent] = []
        self.trace = DecisionTrace(now)
        self.by_fallback = False  # the metrics' proposal is a KEP-5679 fallback's
        # KEP-5053's consecutiveMetricRetrievalFailureCount: kept only with a fallback that applies
        self.fallback = fallback = hpa_fallback(hpa, config.gates)  # read again after the metrics
        self.failures = (hpa.status.consecutive_metric_retrieval_failure_count or 0) if fallback else None

    @property
    def conditions(self) -> C.Conditions:
        """The conditions as set so far (the original list when nothing differs from it)."""
        if not self._owned and self._edits:
            for c in self._conditions:
                edit = self._edits.get(c.type)
                if edit is not None and (edit[0] != c.reason or edit[1] != c.message):
                    return self._own()
        return self._conditions

    def emit(self, type_: str, reason: str, message: str) -> None:
        """An event of this pass, stamped with its time (as ``lastScaleTime`` is): a rescale's
        event is not later than what the workload's controllers do about it."""
        self.events.append(EmittedEvent(type_, reason, message))
        self.ports.events.event(self.hpa, type_, reason, message, at=self.now)

    def _own(self) -> C.Conditions:
        if not self._owned:
            self._conditions = C.copy_conditions(self._conditions)
            self._owned = True
            if self._edits:
                for c in self._conditions:
                    edit = self._edits.get(c.type)
                    if edit is not None:
                        c.reason, c.message = edit
                self._edits.clear()
        return self._conditions

    def set(self, type_: str, status: str, reason: str, message: str) -> None:
        if not self._owned:
            for c in self._conditions:
                if c.type == type_:
                    if c.status == status:
                        # set_condition would only overwrite reason and message (no transition)
                        self._edits[type_] = (reason, message)
                        return
                    break
        C.set_condition(self._own(), type_, status, reason, message, self.now)

    def set_from(self, cond: HorizontalPodAutoscalerCondition) -> None:
        self.set(cond.type, cond.status, cond.reason or "", cond.message or "")

    def remove(self, type_: str) -> None:
        if C.get_condition(self._conditions, type_) is not None:
            C.remove_condition(self._own(), type_)

    def result(
        self, new_status: HorizontalPodAutoscalerStatus, written: bool, rescaled: bool, current: int | None,
        desired: int | None, error: str | None, action: str, error_kind: str, st: AutoscalerState,
    ) -> ReconcileResult:
        """What the pass did (a method, not a closure: the pass's locals stay plain locals)."""
        self.trace.error = error
        return ReconcileResult(self.key, new_status, written, rescaled, current, desired, error, action,
                               error_kind, self.trace, st, self.events)

    def build_status(
        self, current: int, desired: int, metrics: list[MetricStatus] | None, rescaled: bool
    ) -> HorizontalPodAutoscalerStatus:
        status = HorizontalPodAutoscalerStatus(
            current_replicas=current,
            desired_replicas=desired,
            last_scale_time=self.now if rescaled else self.original.last_scale_time,
            current_metrics=metrics or None,
            conditions=self.conditions or None,
            consecutive_metric_retrieval_failure_count=self.failures or None,
        )
        if self.config.gates.hpa_generation:
            status.observed_generation = self.hpa.metadata.generation
        return status

    def conditions_only_status(self) -> HorizontalPodAutoscalerStatus:
        return msgspec.structs.replace(self.original, conditions=self.conditions or None,
                                       consecutive_metric_retrieval_failure_count=self.failures or None)

    def _with_decision(self, status: HorizontalPodAutoscalerStatus) -> HorizontalPodAutoscalerStatus:
        """With the HPAStatusDecisionTrace gate: the pass's decision in ``lastScaleDecision``,
        the stored one (and its time) kept when it means the same. Without it: none."""
        if not self.config.gates.status_decision_trace:
            return msgspec.structs.replace(status, last_scale_decision=None) if status.last_scale_decision else status
        decision = scale_decision(self.trace, self.hpa.metadata.generation)
        old = self.original.last_scale_decision
        return msgspec.structs.replace(status, last_scale_decision=old if same_decision(old, decision) else decision)

    async def write_if_needed(self, status: HorizontalPodAutoscalerStatus,
                              decided: bool = True) -> tuple[HorizontalPodAutoscalerStatus, bool, str | None]:
        """Write the status when it changed; returns (status, written, error text). Call it once
        the trace holds the pass's decision (``decided=False``: the pass made none)."""
        if decided:
            status = self._with_decision(status)
        if semantically_equal(self.original, status):
            return status, False, None
        try:
            await self.ports.status.update_status(msgspec.structs.replace(self.hpa, status=status))
        except Exception as exc:
            self.emit("Warning", "FailedUpdateStatus", str(exc))
            return status, False, f"failed to update status for {self.hpa.metadata.name or ''}: {exc}"
        return status, True, None


async def reconcile_hpa(
    hpa: HorizontalPodAutoscaler, ports: Ports, config: ControllerConfig, now: datetime
) -> ReconcileResult:
    """Reconcile one HPA: read the scale, compute, normalize, rescale, write status. ``hpa`` is
    only read (a live caller hands in its informer's cached object as it is); the new status and
    what the pass did come back in the result."""
    p = _Pass(hpa, ports, config, now)
    spec = hpa.spec
    ref = spec.scale_target_ref
    state = ports.state.get(p.key) or AutoscalerState()
    trace = p.trace
    trace.max_replicas = spec.max_replicas
    min_replicas = spec.min_replicas if spec.min_replicas is not None else 1
    trace.min_replicas = min_replicas

    # ------------------------------------------------------------ read the scale
    scale: Scale | None = None
    failure: tuple[str, str, str] | None = None  # (event/condition text, returned error, kind)
    gv_error = _parse_group_version(ref.api_version)
    if gv_error is not None:
        failure = (gv_error, f"invalid API version in scale target reference: {gv_error}", "spec")
    else:
        try:
            scale = await ports.scales.get_scale(p.namespace, ref)
        except MappingError as unmapped:
            failure = (str(unmapped), f"unable to determine resource for scale target reference: {unmapped}", "internal")
        except Exception as exc:
            failure = (str(exc), f"failed to query scale subresource for {ref.kind}/{p.namespace}/{ref.name}: {exc}", "internal")
    if failure is not None or scale is None:
        text, returned, kind = failure or ("unrecognized resource", f"failed to query scale subresource for {ref.kind}/{p.namespace}/{ref.name}: unrecognized resource", "internal")
        p.emit("Warning", "FailedGetScale", text)
        p.set("AbleToScale", "False", "FailedGetScale", C.MSG_UNABLE_GET_SCALE.format(text))
        trace.branch = "failed-get-scale"
        new_status, written, _ = await p.write_if_needed(p.conditions_only_status())
        return p.result(new_status, written, False, None, None, returned, "none", kind, state)

    p.set("AbleToScale", "True", "SucceededGetScale", C.MSG_SUCCEEDED_GET_SCALE)
    current = scale.spec.replicas
    trace.current_replicas = current
    if is_suspended(hpa):  # KEP-3428: no calculation, no scaling, the memory kept for the resume
        new_status, written = await hold_suspended(p, current)
        return p.result(new_status, written, False, current, current, None, "none", "none", state)
    recommendations = state.recommendations
    if recommendations is None:
        recommendations = (Recommendation(current, now),)
    up_events, down_events = state.scale_up_events, state.scale_down_events

    desired = 0
    rescale_reason = ""
    rescale = True
    metric_statuses: list[MetricStatus] | None = None
    ret_error: str | None = None

    # ------------------------------------------------------------ choose the branch
    gates = config.gates
    metrics_specs = spec.metrics or list(DEFAULT_METRICS)
    legacy_zero = not config.scaled_to_zero_condition  # a release before 1.36: no condition
    # Only read with the HPAScaleToZero gate on (stz_cond implies it).
    stz = C.get_condition(p._conditions, "ScaledToZero")  # pending edits never change a status
    stz_cond = not legacy_zero and gates.scale_to_zero and stz is not None and stz.status == "True"
    can_scale_from_zero = stz_cond and _has_object_or_external(metrics_specs)

    # the behavior's rules, read by the normalization and by a rescale's event memory
    rules = effective_rules(spec.behavior, config.downscale_stabilization) if spec.behavior is not None else None
    compute = False
    if current == 0:
        if (min_replicas != 0 and stz_cond) or can_scale_from_zero or (legacy_zero and min_replicas == 0):
            compute = True
        else:
            desired = 0
            rescale = False
            p.set("ScalingActive", "False", "ScalingDisabled", C.MSG_SCALING_DISABLED)
            if not gates.scale_to_zero and not legacy_zero:
                p.remove("ScaledToZero")
            trace.branch = "disabled"
    elif current > spec.max_replicas:
        rescale_reason = REASON_ABOVE_MAX
        desired = spec.max_replicas
        trace.branch = "above-max"
        trace.step("max", current, desired, f"current replicas {current} above maxReplicas: set to {desired}")
    elif current < min_replicas:
        rescale_reason = REASON_BELOW_MIN
        desired = min_replicas
        trace.branch = "below-min"
        trace.step("min", current, desired, f"current replicas {current} below minReplicas: set to {desired}")
    else:
        compute = True

    # ------------------------------------------------------------ metric path
    if compute:
        outcome_replicas, metric_name, metric_statuses, hard_error = await _compute_metrics(
            p, scale, metrics_specs, current
        )
        failed = hard_error if outcome_replicas == -1 else None
        hpa_fallback_use = _judge_hpa_fallback(p, failed)  # KEP-5053
        if hpa_fallback_use is not None:
            outcome_replicas = hpa_fallback_use[0]
        elif failed is not None:
            trace.branch = "failed-metrics"
            status = p.build_status(current, p.original.desired_replicas, metric_statuses, False)
            new_status, written, _ = await p.write_if_needed(status)
            p.emit("Warning", "FailedComputeMetricsReplicas", failed)
            st = AutoscalerState(recommendations, up_events, down_events)
            ports.state.put(p.key, st)
            err = f"failed to compute desired number of replicas based on listed metrics for {ref.kind}/{p.namespace}/{ref.name}: {hard_error}"
            return p.result(new_status, written, False, current, p.original.desired_replicas, err, "none", "internal", st)
        if hard_error is not None:
            ret_error = hard_error
        rescale_metric = ""
        if outcome_replicas > desired:
            desired = outcome_replicas
            rescale_metric = metric_name
        if hpa_fallback_use is not None:
            rescale_reason = hpa_fallback_use[1]
        else:
            trace.proposal = desired
            if desired > current:  # a KEP-5679 fallback's name says what it is, not "above target"
                rescale_reason = rescale_metric if p.by_fallback else f"{rescale_metric} above target"
            if desired < current:
                rescale_reason = "All metrics below target"
        if rules is None:
            n = normalize_legacy(recommendations, current, desired, min_replicas, spec.max_replicas,
                                 config.downscale_stabilization, now)
        else:
            n = normalize_behavior(recommendations, up_events, down_events, rules[0], rules[1], current,
                                   desired, min_replicas, spec.max_replicas, now)
        recommendations = n.recommendations
        p.set("AbleToScale", "True", n.able_reason, n.able_message)
        p.set("ScalingLimited", "True" if n.limited else "False", n.limit_reason, n.limit_message)
        trace.steps.extend(n.steps)
        desired = n.replicas
        if current == 0 and min_replicas != 0 and stz_cond and desired < min_replicas:
            trace.step("floor", desired, min_replicas, f"scaling from zero: raised to minReplicas {min_replicas}")
            desired = min_replicas
            if not rescale_reason:
                rescale_reason = REASON_BELOW_MIN
        rescale = desired != current

    # ------------------------------------------------------------ update the target
    action = "none"
    if rescale:
        error = await _rescale(p, scale, desired)
        if error is not None:
            p.emit("Warning", "FailedRescale", f"New size: {desired}; reason: {rescale_reason}; error: {error}")
            p.set("AbleToScale", "False", "FailedUpdateScale", C.MSG_FAILED_UPDATE_SCALE.format(error))
            trace.desired_replicas = desired
            trace.reason = rescale_reason
            status = p.build_status(current, p.original.desired_replicas, metric_statuses, False)
            new_status, written, _ = await p.write_if_needed(status)
            st = AutoscalerState(recommendations, up_events, down_events)
            ports.state.put(p.key, st)
            return p.result(new_status, written, False, current, p.original.desired_replicas,
                          f"failed to rescale {ref.kind}/{p.namespace}/{ref.name}: {error}", "none", "internal", st)
        p.set("AbleToScale", "True", "SucceededRescale", C.MSG_SUCCEEDED_RESCALE.format(desired))
        p.emit("Normal", "SuccessfulRescale", f"New size: {desired}; reason: {rescale_reason}")
        if rules is not None:
            up_events, down_events = store_scale_event(up_events, down_events, rules[0], rules[1], current, desired, now)
        if legacy_zero:
            pass
        elif gates.scale_to_zero:
            if current > 0 and desired == 0 and min_replicas == 0 and _has_object_or_external(metrics_specs):
                p.set("ScaledToZero", "True", "ScaledToZero", C.MSG_SCALED_TO_ZERO)
            else:
                p.set("ScaledToZero", "False", "NotScaledToZero", C.MSG_NOT_SCALED_TO_ZERO)
        else:
            p.remove("ScaledToZero")
        action = "scale_up" if desired > current else "scale_down"
    else:
        desired = current

    trace.desired_replicas = desired
    trace.rescaled = rescale
    trace.reason = rescale_reason
    status = p.build_status(current, desired, metric_statuses, rescale)
    new_status, written, write_error = await p.write_if_needed(status)
    st = AutoscalerState(recommendations, up_events, down_events)
    ports.state.put(p.key, st)
    error = write_error or ret_error
    return p.result(new_status, written, rescale, current, desired, error, action,
                  "internal" if error else "none", st)


async def report_invalid(
    hpa: HorizontalPodAutoscaler, errors: list, ports: Ports, config: ControllerConfig, now: datetime
) -> None:
    """An HPA that failed validation (only possible for a CRD-backed group, see
    :mod:`pyhpa.controller.admission`): say why on the HPA, touch nothing else."""
    from pyhpa.api.field_errors import render

    text = render(errors)
    p = _Pass(hpa, ports, config, now)
    p.emit("Warning", "InvalidSpec", text)
    p.set("ScalingActive", "False", "InvalidSpec", f"the HPA spec is invalid: {text}")
    await p.write_if_needed(p.conditions_only_status(), decided=False)


def _judge_hpa_fallback(p: _Pass, error: str | None) -> tuple[int, str] | None:
    """KEP-5053 after the metrics: count the failure (or reset the count), set FallbackActive;
    returns (the fallback's replicas, the rescale reason) when it replaces the recommendation."""
    fallback = p.fallback
    if fallback is None:
        p.remove(HPA_FALLBACK_CONDITION)
        return None
    prior = C.get_condition(p._conditions, HPA_FALLBACK_CONDITION)  # pending edits never change a status
    verdict = judge(fallback, p.failures or 0, prior is not None and prior.status == "True", error)
    p.failures = verdict.failures
    p.set(HPA_FALLBACK_CONDITION, *verdict.condition)
    if verdict.replicas is None:
        return None
    p.emit("Warning", "FailedComputeMetricsReplicas", error or "")
    if verdict.event is not None:
        p.emit("Warning", HPA_FALLBACK_REACHED, verdict.event)
    p.trace.branch = "fallback"
    p.trace.step("fallback", p.trace.current_replicas or 0, verdict.replicas, verdict.rescale_reason)
    return verdict.replicas, verdict.rescale_reason


def _has_object_or_external(specs: list) -> bool:
    """Scaling from and to zero needs an Object or External metric (read only where it matters)."""
    return any(m.type in ("Object", "External") for m in specs)


async def _compute_metrics(
    p: _Pass, scale: Scale, specs: list, current: int
) -> tuple[int, str, list[MetricStatus] | None, str | None]:
    """Selector validation (validateAndParseSelector), fetching, then the engine's combination."""
    text = scale.status.selector or ""
    if not text:
        p.emit("Warning", "SelectorRequired", "selector is required")
        p.set("ScalingActive", "False", "InvalidSelector", "the HPA target's scale is missing a selector")
        return -1, "", None, "selector is required"
    selector = p.ports.selectors.selector_of(p.key, text)  # unchanged since the last sync
    if selector is None:
        try:
            selector = Selector.parse(text)
        except SelectorError as bad_selector:
            msg = f"couldn't convert selector into a corresponding internal selector object: {bad_selector}"
            p.emit("Warning", "InvalidSelector", msg)
            p.set("ScalingActive", "False", "InvalidSelector", msg)
            return -1, "", None, msg
        p.ports.selectors.put_selector(p.key, selector, text)
    try:
        pods = await p.ports.pods.list_pods(p.namespace, selector)
    except Exception as exc:
        return -1, "", None, str(exc)
    selecting: frozenset[str] = frozenset()
    for labels in pods.label_sets:  # each distinct label set is asked once
        found = p.ports.selectors.hpas_selecting(p.namespace, labels)
        selecting = selecting | found if selecting else found
    if len(selecting) > 1:
        msg = f"pods by selector {text} are controlled by multiple HPAs: [{' '.join(sorted(selecting))}]"
        p.emit("Warning", "AmbiguousSelector", msg)
        p.set("ScalingActive", "False", "AmbiguousSelector", msg)
        return -1, "", None, msg

    fetches = []
    for m in specs:  # a plain loop: an awaiting list comprehension is one more coroutine per pass
        fetches.append(await fetch_metric(m, p.ports.metrics, p.namespace, selector))
    ctx = MetricContext(
        namespace=p.namespace,
        spec_replicas=current,
        status_replicas=scale.status.replicas,
        pods=pods,
        tolerances=tolerances_for(p.hpa, p.config),
        config=p.config,
        now=p.now,
    )
    fallback = FallbackPass(p.hpa, p.now, current) if uses_fallback(p.hpa, p.config.gates) else None  # KEP-5679
    outcome = combine(specs, fetches, ctx, fallback.adjust if fallback is not None else None)
    for type_, reason, message in outcome.events:
        p.emit(type_, reason, message)
    if outcome.condition is not None:
        p.set_from(outcome.condition)
    if fallback is None:
        p.remove(FALLBACK_CONDITION)
    else:
        p.set(FALLBACK_CONDITION, *fallback.condition())
        for message in fallback.activated:
            p.emit("Normal", FALLBACK_ACTIVATED, message)
    p.trace.metrics = outcome.traces
    p.by_fallback = outcome.by_fallback
    _trace_metric_steps(p.trace, ctx.tolerances)
    return outcome.replicas, outcome.name, outcome.statuses, outcome.error


def _tolerance_detail(m: MetricTrace, tolerances: Tolerances) -> str:
    """Rendered only when the trace is read (most passes never are)."""
    return (f"{m.name}: usage ratio {m.ratio:.3f} within tolerance "
            f"[{1.0 - tolerances.down:g}, {1.0 + tolerances.up:g}]: held at {m.replicas}")


def _trace_metric_steps(trace: DecisionTrace, tolerances: Tolerances) -> None:
    """Tolerance and rebalancing steps of the metric whose proposal was used."""
    for m in trace.metrics:
        if not m.used or m.unadjusted is None or m.replicas is None:
            continue
        if m.held == "tolerance":
            trace.step("tolerance", m.unadjusted, m.replicas, partial(_tolerance_detail, m, tolerances))
        elif m.notes:
            held = " (direction would flip: held)" if m.held == "direction" else ""
            change = f"{m.unadjusted} → {m.replicas}" if m.unadjusted != m.replicas else f"still {m.replicas}"
            trace.step("rebalance", m.unadjusted, m.replicas, f"{m.name}: {'; '.join(m.notes)}: {change}{held}")


async def _rescale(p: _Pass, scale: Scale, desired: int) -> str | None:
    """PUT the new replica count; on conflict re-read the scale and re-apply the same count."""
    ref = p.hpa.spec.scale_target_ref
    current_scale = scale
    last_error: str | None = None
    for attempt in range(RESCALE_ATTEMPTS):
        updated = msgspec.structs.replace(current_scale, spec=msgspec.structs.replace(current_scale.spec, replicas=desired))
        try:
            await p.ports.scales.update_scale(p.namespace, ref, updated)
            return None
        except ConflictError as conflict:
            last_error = str(conflict)
            if attempt == RESCALE_ATTEMPTS - 1:
                break
            try:
                current_scale = await p.ports.scales.get_scale(p.namespace, ref)
            except Exception as get_exc:
                return str(get_exc)
        except Exception as exc:
            return str(exc)
    return last_error


async def hold_suspended(p: _Pass, current: int) -> tuple[HorizontalPodAutoscalerStatus, bool]:
    """The suspended pass after a successful scale read: ScalingActive False/Suspended, desired =
    current, no metrics in the status; other conditions and lastScaleTime stay as they were.
    Returns (the new status, whether it was written)."""
    p.set("ScalingActive", "False", REASON_SUSPENDED, MSG_SUSPENDED)
    p.trace.branch = "suspended"
    p.trace.desired_replicas = current
    new_status, written, _ = await p.write_if_needed(p.build_status(current, current, None, False))
    return new_status, written
