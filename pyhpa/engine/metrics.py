"""One proposal per metric source, and the combination of several (upstream's horizontal.go computeReplicasForMetrics).

The reconcile fetches what ``fetch_kind`` asks for (through its ports) and hands the result
here as a ``MetricFetch``; everything after the fetch is pure: calculator dispatch, status
entries, error texts wrapped exactly as upstream, the failure condition, Warning events, the
max over sources and the "invalid metrics block scale-down" rule.
"""

from __future__ import annotations

import msgspec

from datetime import datetime
from typing import Callable, Sequence

from pyhpa.api.quantity import Quantity
from pyhpa.api.types import (
    ContainerResourceMetricStatus,
    ExternalMetricStatus,
    HorizontalPodAutoscaler,
    HorizontalPodAutoscalerCondition,
    LabelSelector,
    MetricIdentifier,
    MetricSpec,
    MetricStatus,
    MetricTarget,
    MetricValueStatus,
    ObjectMetricStatus,
    PodsMetricStatus,
    ResourceMetricSource,
    ResourceMetricStatus,
)
from pyhpa.engine.calculator import (
    Proposal,
    Tolerances,
    external_average_replicas,
    external_value_replicas,
    object_average_replicas,
    object_value_replicas,
    plain_metric_replicas,
    resource_utilization_replicas,
)
from pyhpa.engine.conditions import MSG_FALLBACK_USED, MSG_UNABLE_COMPUTE, MSG_VALID_METRIC_FOUND
from pyhpa.engine.config import ControllerConfig
from pyhpa.engine.inputs import PodMetricsInfo
from pyhpa.engine.pods import CalculationError, PodSet
from pyhpa.engine.trace import MetricTrace

DEFAULT_METRICS = (
    MetricSpec(
        type="Resource",
        resource=ResourceMetricSource(name="cpu", target=MetricTarget(type="Utilization", average_utilization=80)),
    ),
)


class MetricFetch(msgspec.Struct):
    """What the reconcile got from the metrics API for one source (or why it got nothing)."""

    pod_metrics: PodMetricsInfo | None = None  # resource / raw (Pods) metrics
    value: int | None = None  # object metric
    values: list[int] | None = None  # external metric series
    timestamp: datetime | None = None
    error: str | None = None  # the metrics client's error text
    selector_error: str | None = None  # the metric selector did not convert


class MetricResult(msgspec.Struct):
    replicas: int
    name: str
    timestamp: datetime | None
    status: MetricStatus
    error: str | None = None  # upstream's returned error text
    condition_reason: str | None = None
    condition_message: str | None = None
    event_message: str | None = None  # Warning event text (reason = condition_reason)
    trace: MetricTrace | None = None
    # The proposal is a fallback's (KEP-5679), not the metric's: what it is, naming the failing
    # metric (`external metric queue_depth has failed for 3m0s: fallback 5 replicas`).
    fallback: str | None = None


class MetricsOutcome(msgspec.Struct):
    """computeReplicasForMetrics: -1 replicas = hard failure."""

    replicas: int
    name: str
    statuses: list[MetricStatus]
    timestamp: datetime | None
    error: str | None
    condition: HorizontalPodAutoscalerCondition | None  # ScalingActive to set
    events: list[tuple[str, str, str]] = []  # (type, reason, message)
    traces: list[MetricTrace] = []
    by_fallback: bool = False  # ``name`` is a fallback's description (MetricResult.fallback)


class MetricContext(msgspec.Struct):
    """Inputs shared by every metric of one pass."""

    namespace: str
    spec_replicas: int
    status_replicas: int
    pods: PodSet
    tolerances: Tolerances
    config: ControllerConfig
    now: datetime


def tolerances_for(hpa: HorizontalPodAutoscaler, config: ControllerConfig) -> Tolerances:
    """The global flag, overridden per direction by behavior tolerances when the gate is on."""
    down = up = config.tolerance
    behavior = hpa.spec.behavior
    if config.gates.configurable_tolerance and behavior is not None:
        if behavior.scale_down is not None and behavior.scale_down.tolerance is not None:
            down = behavior.scale_down.tolerance.as_float()
        if behavior.scale_up is not None and behavior.scale_up.tolerance is not None:
            up = behavior.scale_up.tolerance.as_float()
    return Tolerances(down, up)


def go_label_selector(sel: LabelSelector | None) -> str:
    """Go's ``%+v`` of a ``*metav1.LabelSelector`` (its generated String method)."""
    if sel is None:
        return "nil"
    labels = sel.match_labels or {}
    ml = "map[string]string{" + "".join(f"{k}: {labels[k]}," for k in sorted(labels)) + "}"
    me = "[]LabelSelectorRequirement{"
    for r in sel.match_expressions or ():
        values = "[" + " ".join(r.values or ()) + "]"
        me += f"LabelSelectorRequirement{{Key:{r.key},Operator:{r.operator},Values:{values},}},"
    me += "}"
    return f"&LabelSelector{{MatchLabels:{ml},MatchExpressions:{me},}}"


def fetch_kind(spec: MetricSpec) -> str | None:
    """Which metrics API the source needs: resource | raw | object | external, or None."""
    t = spec.type
    if t == "Resource" and spec.resource is not None:
        tgt = spec.resource.target
        return "resource" if tgt.average_value is not None or tgt.average_utilization is not None else None
    if t == "ContainerResource" and spec.container_resource is not None:
        tgt = spec.container_resource.target
        return "resource" if tgt.average_value is not None or tgt.average_utilization is not None else None
    if t == "Pods" and spec.pods is not None:
        return "raw"
    if t == "Object" and spec.object is not None:
        tgt = spec.object.target
        ok = (tgt.type == "Value" and tgt.value is not None) or (
            tgt.type == "AverageValue" and tgt.average_value is not None
        )
        return "object" if ok else None
    if t == "External" and spec.external is not None:
        tgt = spec.external.target
        return "external" if tgt.average_value is not None or tgt.value is not None else None
    return None


def _q(milli: int) -> Quantity:
    return Quantity.from_milli(milli, fmt="DecimalSI")


def _fmt_q(milli: int) -> str:
    return str(_q(milli))


def _resource_q(resource: str, milli: int, config: ControllerConfig) -> Quantity:
    """Upstream's buildQuantity: memory statuses in BinarySI (as metrics-server reports) from 1.34,
    DecimalSI before and for everything else."""
    binary = resource == "memory" and config.memory_status_binary_si
    return Quantity.from_milli(milli, fmt="BinarySI" if binary else "DecimalSI")


def _failed(
    type_: str, name: str, reason: str, inner: str, returned: str
) -> MetricResult:
    trace = MetricTrace(type=type_, name=name, invalid=True, error=returned)
    return MetricResult(
        0,
        "",
        None,
        MetricStatus(type=""),
        error=returned,
        condition_reason=reason,
        condition_message=MSG_UNABLE_COMPUTE.format(inner),
        event_message=inner,
        trace=trace,
    )


def _success(
    p: Proposal, name: str, status: MetricStatus, ts: datetime | None, type_: str, current: str, target: str
) -> MetricResult:
    trace = MetricTrace(
        type=type_,
        name=name,
        current=current,
        target=target,
        replicas=p.replicas,
        ratio=p.new_ratio if p.new_ratio is not None else p.ratio,
        timestamp=ts,
        held=p.held,
        notes=p.notes,  # the proposal is not used after this: its list passes to the trace
        unadjusted=p.unadjusted,
    )
    return MetricResult(p.replicas, name, ts, status, trace=trace)


def compute_metric(spec: MetricSpec, fetch: MetricFetch | None, ctx: MetricContext) -> MetricResult:
    """One metric source's proposal (upstream's computeReplicasForMetric)."""
    t = spec.type
    if t in ("Resource", "ContainerResource"):
        return _resource(spec, fetch, ctx)
    if t == "Pods":
        return _pods(spec, fetch, ctx)
    if t == "Object":
        return _object(spec, fetch, ctx)
    if t == "External":
        return _external(spec, fetch, ctx)
    err = f'unknown metric source type "{t}"'
    return _failed(t, "", "InvalidMetricSourceType", err, err)


def _resource(spec: MetricSpec, fetch: MetricFetch | None, ctx: MetricContext) -> MetricResult:
    container_src = spec.type == "ContainerResource"
    src = spec.container_resource if container_src else spec.resource
    reason = "FailedGetContainerResourceMetric" if container_src else "FailedGetResourceMetric"
    if src is None:
        err = f"invalid {spec.type} metric source: the {'containerResource' if container_src else 'resource'} field is not set"
        return _failed(spec.type, "", reason, err, err)
    res = src.name
    container = src.container if container_src else ""  # type: ignore[union-attr]
    target = src.target
    kind_word = "container resource" if container_src else "resource"
    if target.average_value is not None:
        name = f"{res} resource"
        tgt = target.average_value.milli_int64()
        try:
            if fetch is None or fetch.error is not None:
                raise CalculationError(f"unable to get metrics for resource {res}: {fetch.error if fetch else 'not fetched'}")
            p = plain_metric_replicas(
                ctx.spec_replicas, tgt, res, ctx.tolerances, fetch.pod_metrics or {}, ctx.pods,
                ctx.config.cpu_initialization_period, ctx.config.initial_readiness_delay, ctx.now,
            )
        except CalculationError as exc:
            generic = f"failed to get {res} usage: {exc}"
            return _failed(spec.type, name, reason, generic, _wrap_resource(container_src, res, container, generic))
        status = _resource_status(container_src, res, container, MetricValueStatus(average_value=_resource_q(res, p.usage, ctx.config)))
        return _success(p, name, status, fetch.timestamp, spec.type, _fmt_q(p.usage), _fmt_q(tgt))
    if target.average_utilization is None:
        generic = "invalid resource metric source: neither an average utilization target nor an average value (usage) target was set"
        return _failed(spec.type, "", reason, generic, _wrap_resource(container_src, res, container, generic))
    util_target = target.average_utilization
    name = f"{res} {kind_word} utilization (percentage of request)"
    try:
        if fetch is None or fetch.error is not None:
            raise CalculationError(f"unable to get metrics for resource {res}: {fetch.error if fetch else 'not fetched'}")
        p = resource_utilization_replicas(
            ctx.spec_replicas, util_target, res, ctx.tolerances, fetch.pod_metrics or {}, ctx.pods, container,
            ctx.config.cpu_initialization_period, ctx.config.initial_readiness_delay, ctx.now,
            ctx.config.gates.pod_level_resources,
        )
    except CalculationError as exc:
        generic = f"failed to get {res} utilization: {exc}"
        return _failed(spec.type, name, reason, generic, _wrap_resource(container_src, res, container, generic))
    status = _resource_status(container_src, res, container,
                              MetricValueStatus(average_value=_resource_q(res, p.raw, ctx.config), average_utilization=p.usage))
    return _success(p, name, status, fetch.timestamp, spec.type, f"{p.usage}% of request", f"{util_target}%")


def _wrap_resource(container_src: bool, res: str, container: str, generic: str) -> str:
    if container_src:
        return f"failed to get {container} container metric value: {generic}"
    return f"failed to get {res} resource metric value: {generic}"


def _resource_status(container_src: bool, res: str, container: str, current: MetricValueStatus) -> MetricStatus:
    if container_src:
        return MetricStatus(
            type="ContainerResource",
            container_resource=ContainerResourceMetricStatus(name=res, current=current, container=container),
        )
    return MetricStatus(type="Resource", resource=ResourceMetricStatus(name=res, current=current))


def _pods(spec: MetricSpec, fetch: MetricFetch | None, ctx: MetricContext) -> MetricResult:
    src = spec.pods
    reason = "FailedGetPodsMetric"
    if src is None:
        err = "invalid Pods metric source: the pods field is not set"
        return _failed("Pods", "", reason, err, err)
    mname = src.metric.name
    name = f"pods metric {mname}"
    if fetch is not None and fetch.selector_error is not None:
        return _failed("Pods", name, reason, fetch.selector_error, f"failed to get pods metric value: {fetch.selector_error}")
    if src.target.average_value is None:
        err = "invalid pods metric source: no average value target was set"
        return _failed("Pods", name, reason, err, f"failed to get pods metric value: {err}")
    tgt = src.target.average_value.milli_int64()
    try:
        if fetch is None or fetch.error is not None:
            raise CalculationError(f"unable to get metric {mname}: {fetch.error if fetch else 'not fetched'}")
        p = plain_metric_replicas(
            ctx.spec_replicas, tgt, "", ctx.tolerances, fetch.pod_metrics or {}, ctx.pods,
            ctx.config.cpu_initialization_period, ctx.config.initial_readiness_delay, ctx.now,
        )
    except CalculationError as exc:
        return _failed("Pods", name, reason, str(exc), f"failed to get pods metric value: {exc}")
    status = MetricStatus(
        type="Pods",
        pods=PodsMetricStatus(
            metric=MetricIdentifier(name=mname, selector=src.metric.selector),
            current=MetricValueStatus(average_value=_q(p.usage)),
        ),
    )
    return _success(p, name, status, fetch.timestamp, "Pods", _fmt_q(p.usage), _fmt_q(tgt))


def _object(spec: MetricSpec, fetch: MetricFetch | None, ctx: MetricContext) -> MetricResult:
    src = spec.object
    reason = "FailedGetObjectMetric"
    if src is None:
        err = "invalid Object metric source: the object field is not set"
        return _failed("Object", "", reason, err, err)
    mname = src.metric.name
    obj = src.described_object
    if fetch is not None and fetch.selector_error is not None:
        return _failed("Object", "", reason, fetch.selector_error, f"failed to get object metric value: {fetch.selector_error}")
    tgt = src.target

    def fetch_error() -> str:
        inner = fetch.error if fetch is not None and fetch.error is not None else "not fetched"
        # Upstream's argument order: "%s: %v on %s %s/%s" with (name, kind, namespace, object, err).
        return f"unable to get metric {mname}: {obj.kind} on {ctx.namespace} {obj.name}/{inner}"

    def status_of(current: MetricValueStatus) -> MetricStatus:
        return MetricStatus(
            type="Object",
            object=ObjectMetricStatus(
                metric=MetricIdentifier(name=mname, selector=src.metric.selector),
                current=current,
                described_object=obj,
            ),
        )

    if tgt.type == "Value" and tgt.value is not None:
        name = f"{obj.kind} metric {mname}"
        target = tgt.value.milli_int64()
        try:
            if fetch is None or fetch.error is not None or fetch.value is None:
                raise CalculationError(fetch_error())
            p = object_value_replicas(ctx.spec_replicas, fetch.value, target, ctx.tolerances, ctx.pods)
        except CalculationError as exc:
            return _failed("Object", name, reason, str(exc), f"failed to get object metric value: {exc}")
        return _success(p, name, status_of(MetricValueStatus(value=_q(p.usage))), None, "Object", _fmt_q(p.usage), _fmt_q(target))
    if tgt.type == "AverageValue" and tgt.average_value is not None:
        # Upstream reuses the external wording for this name.
        name = f"external metric {mname}({go_label_selector(src.metric.selector)})"
        target = tgt.average_value.milli_int64()
        if fetch is None or fetch.error is not None or fetch.value is None:
            inner = fetch_error()
            return _failed(
                "Object", name, reason, inner,
                f"failed to get object metric value: failed to get {mname} object metric: {inner}",
            )
        p = object_average_replicas(ctx.status_replicas, fetch.value, target, ctx.tolerances)
        return _success(
            p, name, status_of(MetricValueStatus(average_value=_q(p.usage))), fetch.timestamp, "Object",
            _fmt_q(p.usage) + " per pod", _fmt_q(target) + " per pod",
        )
    err = "invalid object metric source: neither a value target nor an average value target was set"
    return _failed("Object", "", reason, err, f"failed to get object metric value: {err}")


def _external(spec: MetricSpec, fetch: MetricFetch | None, ctx: MetricContext) -> MetricResult:
    src = spec.external
    reason = "FailedGetExternalMetric"
    if src is None:
        err = "invalid External metric source: the external field is not set"
        return _failed("External", "", reason, err, err)
    mname = src.metric.name
    sel_text = go_label_selector(src.metric.selector)
    name = f"external metric {mname}({sel_text})"
    tgt = src.target

    def inner_error() -> str:
        if fetch is not None and fetch.selector_error is not None:
            return fetch.selector_error
        err = fetch.error if fetch is not None and fetch.error is not None else "not fetched"
        return f"unable to get external metric {ctx.namespace}/{mname}/{sel_text}: {err}"

    def status_of(current: MetricValueStatus) -> MetricStatus:
        return MetricStatus(
            type="External",
            external=ExternalMetricStatus(metric=MetricIdentifier(name=mname, selector=src.metric.selector), current=current),
        )

    ok = fetch is not None and fetch.selector_error is None and fetch.error is None and fetch.values is not None
    if tgt.average_value is not None:
        target = tgt.average_value.milli_int64()
        if not ok:
            inner = inner_error()
            return _failed(
                "External", name, reason, inner,
                f"failed to get {mname} external metric value: failed to get {mname} external metric: {inner}",
            )
        p = external_average_replicas(ctx.status_replicas, fetch.values, target, ctx.tolerances)  # type: ignore[union-attr,arg-type]
        return _success(
            p, name, status_of(MetricValueStatus(average_value=_q(p.usage))), fetch.timestamp, "External",  # type: ignore[union-attr]
            _fmt_q(p.usage) + " per pod", _fmt_q(target) + " per pod",
        )
    if tgt.value is not None:
        target = tgt.value.milli_int64()
        try:
            if not ok:
                raise CalculationError(inner_error())
            p = external_value_replicas(ctx.spec_replicas, fetch.values, target, ctx.tolerances, ctx.pods)  # type: ignore[union-attr,arg-type]
        except CalculationError as exc:
            return _failed(
                "External", name, reason, str(exc),
                f"failed to get {mname} external metric value: failed to get external metric {mname}: {exc}",
            )
        return _success(p, name, status_of(MetricValueStatus(value=_q(p.usage))), None, "External", _fmt_q(p.usage), _fmt_q(target))
    err = "invalid external metric source: neither a value target nor an average value target was set"
    return _failed("External", "", reason, err, f"failed to get {mname} external metric value: {err}")


def combine(
    specs: Sequence[MetricSpec], fetches: Sequence[MetricFetch | None], ctx: MetricContext,
    adjust: Callable[[MetricSpec, MetricResult], MetricResult] | None = None,
) -> MetricsOutcome:
    """All sources of one HPA: the max proposal; invalid ones block scale-down only (computeReplicasForMetrics).
    ``adjust`` may replace one source's result before it is combined (the controller's
    external-metric fallback, KEP-5679, which needs the HPA's status)."""
    statuses: list[MetricStatus] = []
    events: list[tuple[str, str, str]] = []
    traces: list[MetricTrace] = []
    replicas = 0
    name = ""
    timestamp: datetime | None = None
    invalid = 0
    first_error: str | None = None
    first_cond: tuple[str, str] | None = None
    used_index = -1
    by_fallback = False
    for i, spec in enumerate(specs):
        r = compute_metric(spec, fetches[i] if i < len(fetches) else None, ctx)
        if adjust is not None:
            r = adjust(spec, r)
        statuses.append(r.status)
        if r.trace is not None:
            traces.append(r.trace)
        if r.error is not None:
            events.append(("Warning", r.condition_reason or "", r.event_message or r.error))
            if invalid == 0:
                first_error = r.error
                first_cond = (r.condition_reason or "", r.condition_message or "")
            invalid += 1
            continue
        if replicas == 0 or r.replicas > replicas:
            timestamp = r.timestamp
            replicas = r.replicas
            name = r.fallback or r.name
            by_fallback = r.fallback is not None
            used_index = len(traces) - 1
    error = None
    if first_error is not None:
        error = f"invalid metrics ({invalid} invalid out of {len(specs)}), first error is: {first_error}"
    if invalid >= len(specs) or (invalid > 0 and replicas < ctx.spec_replicas):
        cond = None
        if first_cond is not None:
            cond = HorizontalPodAutoscalerCondition(
                type="ScalingActive", status="False", last_transition_time=None,
                reason=first_cond[0], message=first_cond[1],
            )
        return MetricsOutcome(-1, "", statuses, None, error, cond, events, traces)
    if used_index >= 0:
        traces[used_index].used = True
    return MetricsOutcome(replicas, name, statuses, timestamp, error, _valid_metric_condition(name, by_fallback),
                          events, traces, by_fallback)


def _valid_metric_condition(name: str, by_fallback: bool = False) -> HorizontalPodAutoscalerCondition:
    """ScalingActive=True for the metric ``name`` (or, ``by_fallback``, the fallback it describes)."""
    return HorizontalPodAutoscalerCondition(
        type="ScalingActive", status="True", last_transition_time=None,
        reason="ValidMetricFound", message=(MSG_FALLBACK_USED if by_fallback else MSG_VALID_METRIC_FOUND).format(name),
    )
