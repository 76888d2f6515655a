"""The Kubernetes objects pyhpa reads and writes, as msgspec structs.

Why structs: decoding and encoding an HPA is on every hot path (API server, controller,
reconcile), and msgspec does both in C. Go's JSON omit rules are mapped field by field:

* a Go field *without* ``omitempty`` is a struct field without a default, so msgspec always
  emits it (``maxReplicas: 0``, ``currentMetrics: null``, ``lastTransitionTime: null``);
* a Go pointer or ``omitempty`` field defaults to ``None`` (or the Go zero value where Go omits
  the zero value), and ``omit_defaults`` drops it on output. ``minReplicas: 1`` therefore stays.

Attribute names are the snake_case of the JSON names (``rename="camel"``); fields are declared
in Go's declaration order so output keys come out in upstream order. Decoding input that lacks
a required field, or carries unknown fields, goes through :mod:`pyhpa.api.codec`, which fills
zero values (so validation can report ``Required value`` with a field path) and keeps unknown
fields for the round trip.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from pyhpa.api.quantity import Quantity


class K8s(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True, dict=True):
    """Base of every wire struct: camelCase names, Go omit rules.

    msgspec applies ``kw_only`` per class, so every subclass repeats it: Go declares required
    fields after optional ones, and keyword-only construction lets us keep Go's order.
    ``dict=True`` gives each instance a ``__dict__`` (created lazily, inherited by subclasses):
    :mod:`pyhpa.api.codec` parks the unknown fields of a decoded object there so that
    ``to_wire`` can re-emit them; msgspec itself never encodes or compares those attributes.
    """


# --------------------------------------------------------------------------- meta


class OwnerReference(K8s, kw_only=True):
    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(K8s, kw_only=True):
    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    self_link: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    managed_fields: list[dict[str, Any]] | None = None


class ListMeta(K8s, kw_only=True):
    self_link: str | None = None
    resource_version: str | None = None
    # Go name is "continue", a Python keyword.
    continue_: str | None = msgspec.field(default=None, name="continue")
    remaining_item_count: int | None = None


class LabelSelectorRequirement(K8s, kw_only=True):
    key: str
    operator: str
    values: list[str] | None = None


class LabelSelector(K8s, kw_only=True):
    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None


# --------------------------------------------------------------------------- autoscaling/v2


class CrossVersionObjectReference(K8s, kw_only=True):
    kind: str
    name: str
    api_version: str | None = None


class MetricIdentifier(K8s, kw_only=True):
    name: str
    selector: LabelSelector | None = None


class MetricTarget(K8s, kw_only=True):
    type: str
    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: int | None = None


class ObjectMetricSource(K8s, kw_only=True):
    described_object: CrossVersionObjectReference
    target: MetricTarget
    metric: MetricIdentifier


class PodsMetricSource(K8s, kw_only=True):
    metric: MetricIdentifier
    target: MetricTarget


class ResourceMetricSource(K8s, kw_only=True):
    name: str
    target: MetricTarget


class ContainerResourceMetricSource(K8s, kw_only=True):
    name: str
    target: MetricTarget
    container: str


class ExternalMetricFallback(K8s, kw_only=True):
    """KEP-5679 (gate HPAExternalMetricFallback): after the metric has failed without a break
    for ``failureDurationSeconds`` (default and minimum 180), it proposes ``replicas`` (its open
    follow-up's ``strategy``: Static, the default, or UseMax / UseMin with the current count)."""

    failure_duration_seconds: int | None = None
    replicas: int = 0
    strategy: str | None = None


class ExternalMetricSource(K8s, kw_only=True):
    metric: MetricIdentifier
    target: MetricTarget
    fallback: ExternalMetricFallback | None = None  # KEP-5679


class MetricSpec(K8s, kw_only=True):
    type: str
    object: ObjectMetricSource | None = None
    pods: PodsMetricSource | None = None
    resource: ResourceMetricSource | None = None
    container_resource: ContainerResourceMetricSource | None = None
    external: ExternalMetricSource | None = None


class HPAScalingPolicy(K8s, kw_only=True):
    type: str
    value: int
    period_seconds: int


class HPAScalingRules(K8s, kw_only=True):
    stabilization_window_seconds: int | None = None
    select_policy: str | None = None
    policies: list[HPAScalingPolicy] | None = None
    tolerance: Quantity | None = None


class HPAFallback(K8s, kw_only=True):
    """KEP-5053 (gate HPAFallback): once more than ``failureThreshold`` (default 3) syncs in a
    row could not compute a replica count from the metrics, ``replicas`` replaces the whole
    HPA's recommendation (behavior and min/max still apply)."""

    failure_threshold: int | None = None
    replicas: int = 0


class HorizontalPodAutoscalerBehavior(K8s, kw_only=True):
    scale_up: HPAScalingRules | None = None
    scale_down: HPAScalingRules | None = None
    sync_period_seconds: int | None = None  # KEP-6003 (gate HPAConfigurableSyncPeriod)
    fallback: HPAFallback | None = None  # KEP-5053 (gate HPAFallback)


class HorizontalPodAutoscalerSpec(K8s, kw_only=True):
    scale_target_ref: CrossVersionObjectReference
    min_replicas: int | None = None
    max_replicas: int
    metrics: list[MetricSpec] | None = None
    behavior: HorizontalPodAutoscalerBehavior | None = None


class MetricValueStatus(K8s, kw_only=True):
    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: int | None = None


class ObjectMetricStatus(K8s, kw_only=True):
    metric: MetricIdentifier
    current: MetricValueStatus
    described_object: CrossVersionObjectReference


class PodsMetricStatus(K8s, kw_only=True):
    metric: MetricIdentifier
    current: MetricValueStatus


class ResourceMetricStatus(K8s, kw_only=True):
    name: str
    current: MetricValueStatus


class ContainerResourceMetricStatus(K8s, kw_only=True):
    name: str
    current: MetricValueStatus
    container: str


class ExternalMetricStatus(K8s, kw_only=True):
    metric: MetricIdentifier
    current: MetricValueStatus
    fallback_status: str | None = None  # KEP-5679: Normal | Fallback (metrics with a fallback)
    first_failure_time: datetime | None = None  # KEP-5679: start of the current failure run


class MetricStatus(K8s, kw_only=True):
    type: str
    object: ObjectMetricStatus | None = None
    pods: PodsMetricStatus | None = None
    resource: ResourceMetricStatus | None = None
    container_resource: ContainerResourceMetricStatus | None = None
    external: ExternalMetricStatus | None = None


class HorizontalPodAutoscalerCondition(K8s, kw_only=True):
    type: str
    status: str
    last_transition_time: datetime | None
    reason: str | None = None
    message: str | None = None
    observed_generation: int | None = None


class MetricDecision(K8s, kw_only=True):
    """KEP-6107 (revision 20752d3): what one ``spec.metrics`` entry contributed to the last decision."""

    metric_index: int
    proposed_replicas: int | None = None
    status: str  # Used | Valid | Invalid
    reason: str | None = None  # Computed | FetchFailed | InvalidMetricValue | NoMatchingPods | SkippedScaleDown


class HorizontalPodAutoscalerScaleDecision(K8s, kw_only=True):
    """KEP-6107 (revision 20752d3) ``status.lastScaleDecision``: why the controller chose its count, for
    tenants who cannot read controller logs. Written only where the server keeps the field."""

    time: datetime | None = None
    observed_generation: int | None = None
    current_replicas: int | None = None
    recommended_replicas: int | None = None
    desired_replicas: int | None = None
    reason: str
    metrics: list[MetricDecision] | None = None
    constraints: list[str] | None = None


class HorizontalPodAutoscalerStatus(K8s, kw_only=True):
    observed_generation: int | None = None
    last_scale_time: datetime | None = None
    current_replicas: int = 0  # omitempty in v2
    desired_replicas: int
    current_metrics: list[MetricStatus] | None  # no omitempty: null when empty
    conditions: list[HorizontalPodAutoscalerCondition] | None = None
    last_scale_decision: HorizontalPodAutoscalerScaleDecision | None = None  # KEP-6107, gated
    # KEP-5053 (gate HPAFallback): syncs in a row without a replica count from the metrics.
    consecutive_metric_retrieval_failure_count: int | None = None


def _empty_status() -> HorizontalPodAutoscalerStatus:
    return HorizontalPodAutoscalerStatus(desired_replicas=0, current_metrics=None)


class HorizontalPodAutoscaler(K8s, kw_only=True):
    # apiVersion/kind have no default so they are always emitted; use new_hpa() to build one.
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: HorizontalPodAutoscalerSpec
    status: HorizontalPodAutoscalerStatus


def new_hpa(
    spec: HorizontalPodAutoscalerSpec,
    metadata: ObjectMeta | None = None,
    status: HorizontalPodAutoscalerStatus | None = None,
) -> HorizontalPodAutoscaler:
    """An autoscaling/v2 HPA with apiVersion/kind filled and an empty status."""
    return HorizontalPodAutoscaler(
        api_version="autoscaling/v2",
        kind="HorizontalPodAutoscaler",
        metadata=metadata or ObjectMeta(),
        spec=spec,
        status=status or _empty_status(),
    )


def hpa_key(hpa: HorizontalPodAutoscaler) -> str:
    """``namespace/name``: how the controller, its memory and the in-memory cluster key an HPA."""
    return f"{hpa.metadata.namespace or ''}/{hpa.metadata.name or ''}"


def new_scale(name: str, namespace: str, replicas: int, status_replicas: int, selector: str | None,
              resource_version: str | None = None) -> Scale:
    """An autoscaling/v1 Scale as the scale subresource returns it."""
    return Scale(
        api_version="autoscaling/v1",
        kind="Scale",
        metadata=ObjectMeta(name=name, namespace=namespace, resource_version=resource_version),
        spec=ScaleSpec(replicas=replicas),
        status=ScaleStatus(replicas=status_replicas, selector=selector or None),
    )


# --------------------------------------------------------------------------- autoscaling/v1


class HorizontalPodAutoscalerSpecV1(K8s, kw_only=True):
    scale_target_ref: CrossVersionObjectReference
    min_replicas: int | None = None
    max_replicas: int
    target_cpu_utilization_percentage: int | None = msgspec.field(
        default=None, name="targetCPUUtilizationPercentage"
    )


class HorizontalPodAutoscalerStatusV1(K8s, kw_only=True):
    observed_generation: int | None = None
    last_scale_time: datetime | None = None
    current_replicas: int
    desired_replicas: int
    current_cpu_utilization_percentage: int | None = msgspec.field(
        default=None, name="currentCPUUtilizationPercentage"
    )


class HorizontalPodAutoscalerV1(K8s, kw_only=True):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: HorizontalPodAutoscalerSpecV1
    status: HorizontalPodAutoscalerStatusV1


class ScaleSpec(K8s, kw_only=True):
    replicas: int = 0  # omitempty


class ScaleStatus(K8s, kw_only=True):
    replicas: int
    selector: str | None = None


class Scale(K8s, kw_only=True):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ScaleSpec = msgspec.field(default_factory=ScaleSpec)
    status: ScaleStatus


# --------------------------------------------------------------------------- read-only views
# The parts of other kinds that the HPA uses. They are *views*: decoded leniently (unknown
# fields ignored), never written back, so they carry defaults everywhere.


class View(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True, gc=False):
    """Base of lenient read-only views of objects the HPA only reads.

    ``gc=False``: views are trees of decoded data (they never take part in a reference cycle),
    so the cyclic collector need not scan them; a controller caching 100,000 pods otherwise
    spent a third of its CPU in full collections."""


class ResourceRequirements(View, kw_only=True):
    requests: dict[str, Quantity] | None = None
    limits: dict[str, Quantity] | None = None


class ContainerView(View, kw_only=True):
    name: str = ""
    resources: ResourceRequirements | None = None
    restart_policy: str | None = None


class PodSpecView(View, kw_only=True):
    containers: list[ContainerView] = []
    init_containers: list[ContainerView] | None = None
    resources: ResourceRequirements | None = None  # pod-level requests (PodLevelResources)


class PodCondition(View, kw_only=True):
    type: str = ""
    status: str = ""
    last_transition_time: datetime | None = None


class PodStatusView(View, kw_only=True):
    phase: str | None = None
    start_time: datetime | None = None
    conditions: list[PodCondition] | None = None


class PodView(View, kw_only=True):
    api_version: str = "v1"
    kind: str = "Pod"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodSpecView = msgspec.field(default_factory=PodSpecView)
    status: PodStatusView = msgspec.field(default_factory=PodStatusView)


class WorkloadSpecView(View, kw_only=True):
    replicas: int | None = None
    selector: LabelSelector | dict[str, str] | None = None  # ReplicationController: plain map


class WorkloadStatusView(View, kw_only=True):
    replicas: int = 0


class WorkloadView(View, kw_only=True):
    """Deployment, ReplicaSet, StatefulSet, ReplicationController: enough to derive a Scale."""

    api_version: str = ""
    kind: str = ""
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: WorkloadSpecView = msgspec.field(default_factory=WorkloadSpecView)
    status: WorkloadStatusView = msgspec.field(default_factory=WorkloadStatusView)


class ContainerMetrics(View, kw_only=True):
    name: str = ""
    usage: dict[str, Quantity] = {}


class PodMetrics(View, kw_only=True):
    """metrics.k8s.io/v1beta1 PodMetrics as built in memory (the simulated metrics pipeline,
    tests); readers decode the wire into `PodMetricsView`."""

    api_version: str = "metrics.k8s.io/v1beta1"
    kind: str = "PodMetrics"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    timestamp: datetime | None = None
    window: str | None = None  # Go duration, e.g. "30s"
    containers: list[ContainerMetrics] = []


class MetricsObjectMeta(View, kw_only=True):
    """The metadata of a metrics object the HPA reads: which pod, and its labels (metrics-server
    copies the pod's labels; the HPA's selector is matched against them)."""

    name: str | None = None
    namespace: str | None = None
    labels: dict[str, str] | None = None


class ContainerUsageView(View, kw_only=True):
    name: str = ""
    usage: dict[str, str | int | float] = {}  # quantities as sent: `pod_usages` reads each text once per list


class PodMetricsView(View, kw_only=True):
    """What the HPA reads of a metrics.k8s.io PodMetrics: the shape every reader of the resource
    metrics API (the controller's LIST, `pyhpa snapshot`, `pyhpa reconcile -f`) decodes into,
    read into usages by `pyhpa.adapters.metrics_lists.pod_usages`. Only these fields are
    decoded, and quantities stay text, so a 10,000-pod list costs little more than its bytes."""

    metadata: MetricsObjectMeta = msgspec.field(default_factory=MetricsObjectMeta)
    timestamp: datetime | None = None
    window: str | None = None  # Go duration, e.g. "30s"
    containers: list[ContainerUsageView] = []


class PodMetricsViewList(View, kw_only=True):
    items: list[PodMetricsView] = []


class ObjectReferenceView(View, kw_only=True):
    kind: str = ""
    namespace: str | None = None
    name: str = ""
    api_version: str | None = None


class MetricIdentifierView(View, kw_only=True):
    name: str = ""
    selector: LabelSelector | None = None


class MetricValue(View, kw_only=True):
    """custom.metrics.k8s.io/v1beta2 MetricValue."""

    described_object: ObjectReferenceView = msgspec.field(default_factory=ObjectReferenceView)
    metric: MetricIdentifierView = msgspec.field(default_factory=MetricIdentifierView)
    timestamp: datetime | None = None
    window_seconds: int | None = None
    value: Quantity = msgspec.field(default_factory=lambda: Quantity.parse("0"))


class MetricValueList(View, kw_only=True):
    api_version: str = "custom.metrics.k8s.io/v1beta2"
    kind: str = "MetricValueList"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    items: list[MetricValue] = []


class ExternalMetricValue(View, kw_only=True):
    """external.metrics.k8s.io/v1beta1 ExternalMetricValue."""

    metric_name: str = ""
    metric_labels: dict[str, str] | None = None
    timestamp: datetime | None = None
    window: int | None = None  # seconds
    value: Quantity = msgspec.field(default_factory=lambda: Quantity.parse("0"))


class ExternalMetricValueList(View, kw_only=True):
    api_version: str = "external.metrics.k8s.io/v1beta1"
    kind: str = "ExternalMetricValueList"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    items: list[ExternalMetricValue] = []


# Condition and metric-type vocabulary, spelled once.
METRIC_TYPES = ("Object", "Pods", "Resource", "ContainerResource", "External")
TARGET_TYPES = ("Utilization", "Value", "AverageValue")
CONDITION_TYPES = ("AbleToScale", "ScalingActive", "ScalingLimited", "ScaledToZero")
