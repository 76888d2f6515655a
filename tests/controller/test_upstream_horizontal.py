"""kubernetes/kubernetes pkg/controller/podautoscaler/horizontal_test.go, case by case, as data.

Each row names the upstream test: the refactored table name and sub-test where upstream has one
(``TestScaleUpCPU/scale up``) and the classic top-level name (``TestScaleUp``). The fixture is
rebuilt as upstream's fake clients build it and put in a ``MemoryCluster``:

* HPA ``test-namespace/test-hpa`` over ReplicationController ``test-rc`` (unless the row names a
  Deployment/ReplicaSet); ``minReplicas`` is always set (Go's zero value when the row omits it);
  status current = desired = spec replicas; behavior only when the row has rules.
* Pods ``test-pod-<i>``: one per CPU request (else ``statusReplicas`` of them), two containers
  each requesting half the request; Ready condition (default True) whose lastTransitionTime is the
  pod's start time (default Go zero time).
* PodMetrics: both containers report ``level/2`` CPU (and 512Ki memory), timestamp now, window 1m.
  The same levels feed the custom metric (per pod), the object metric (first level) and the
  external series, as upstream's fakes do.
* Controller: tolerance 0.1, downscale stabilization 5 min, CPU initialization 2 min, readiness
  delay 10 s, ``scaleUpLimitFactor = 8`` (upstream's ``init()`` in this test file), feature gates
  at upstream's defaults for the test (HPAScaleToZero off unless the row turns it on).

Assertions are upstream's: desired replicas in the written status, whether (and to what) the
scale was updated, the condition list (type/status/reason, in order), whether an error came back,
the reported CPU utilization when upstream verifies it, and events where upstream checks them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Sequence

import pytest

from pyhpa.adapters.memory import MemoryCluster
from pyhpa.api.features import FeatureGates
from pyhpa.api.defaults import default_scale_down_rules, default_scale_up_rules
from pyhpa.api.quantity import Quantity
from pyhpa.api.selectors import Selector
from pyhpa.api.types import (
    ContainerMetrics,
    ContainerResourceMetricSource,
    ContainerView,
    CrossVersionObjectReference,
    ExternalMetricSource,
    ExternalMetricValue,
    ExternalMetricValueList,
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerCondition,
    HorizontalPodAutoscalerSpec,
    HorizontalPodAutoscalerStatus,
    HPAScalingPolicy,
    HPAScalingRules,
    LabelSelector,
    MetricIdentifier,
    MetricIdentifierView,
    MetricSpec,
    MetricStatus,
    MetricTarget,
    MetricValue,
    MetricValueStatus,
    ObjectMeta,
    ObjectMetricSource,
    ObjectReferenceView,
    PodCondition,
    PodMetrics,
    PodsMetricSource,
    PodSpecView,
    PodStatusView,
    PodView,
    ResourceMetricSource,
    ResourceMetricStatus,
    ResourceRequirements,
    Scale,
    WorkloadSpecView,
    WorkloadStatusView,
    WorkloadView,
    new_hpa,
)
from pyhpa.controller.ports import MetricsError
from pyhpa.controller.reconcile import reconcile_hpa, run_sync
from pyhpa.engine import normalize as N
from pyhpa.engine.config import ControllerConfig
from pyhpa.engine.pods import ZERO_TIME
from pyhpa.engine.state import AutoscalerState, Recommendation, ScaleEvent

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
NS = "test-namespace"
KEY = f"{NS}/test-hpa"
LABELS = {"name": "test-pod"}
HOT = NOW  # hotCPUCreationTime
COOL = NOW - timedelta(minutes=3)  # coolCPUCreationTime
T, F = "True", "False"
CPU_NAME = "cpu resource utilization (percentage of request)"
# Upstream's test gates: HPAScaleToZero is alpha (off) unless a test turns it on.
GATES = FeatureGates(scale_to_zero=False, configurable_tolerance=True, hpa_generation=False, pod_level_resources=False)


@pytest.fixture(autouse=True)
def upstream_scale_up_limit_factor(monkeypatch):
    """horizontal_test.go's init() raises scaleUpLimitFactor to 8 for every test in the file."""
    monkeypatch.setattr(N, "SCALE_UP_LIMIT_FACTOR", 8.0)


def q(text: str) -> Quantity:
    return Quantity.parse(text)


def reqs(*values: str) -> list[str]:
    return list(values)


ONE5 = ["1.0"] * 5
ONE3 = ["1.0"] * 3
ODD3 = ["0.9", "1.0", "1.1"]
SOME_DEPLOYMENT = CrossVersionObjectReference(kind="Deployment", name="some-deployment", api_version="apps/v1")


def rules(pods: int, pods_period: int, percent: int, percent_period: int, window: int) -> HPAScalingRules:
    """generateScalingRules: selectPolicy Max, only the non-zero policies (none -> API defaults)."""
    policies = []
    if pods:
        policies.append(HPAScalingPolicy(type="Pods", value=pods, period_seconds=pods_period))
    if percent:
        policies.append(HPAScalingPolicy(type="Percent", value=percent, period_seconds=percent_period))
    return HPAScalingRules(stabilization_window_seconds=window, select_policy="Max", policies=policies or None)


def pods_metric(average: str) -> MetricSpec:
    return MetricSpec(type="Pods", pods=PodsMetricSource(metric=MetricIdentifier(name="qps"), target=MetricTarget(type="AverageValue", average_value=q(average))))


def object_metric(value: str | None = None, average: str | None = None) -> MetricSpec:
    t = MetricTarget(type="Value", value=q(value)) if value is not None else MetricTarget(type="AverageValue", average_value=q(average))
    return MetricSpec(type="Object", object=ObjectMetricSource(described_object=SOME_DEPLOYMENT, metric=MetricIdentifier(name="qps"), target=t))


def external_metric(value_milli: int | None = None, average_milli: int | None = None) -> MetricSpec:
    if value_milli is not None:
        t = MetricTarget(type="Value", value=Quantity.from_milli(value_milli))
    else:
        t = MetricTarget(type="AverageValue", average_value=Quantity.from_milli(average_milli))
    return MetricSpec(type="External", external=ExternalMetricSource(metric=MetricIdentifier(name="qps", selector=LabelSelector()), target=t))


def container_cpu(target: int, container: str) -> MetricSpec:
    return MetricSpec(
        type="ContainerResource",
        container_resource=ContainerResourceMetricSource(name="cpu", container=container, target=MetricTarget(type="Utilization", average_utilization=target)),
    )


def cond(type_: str, status: str, reason: str) -> tuple[str, str, str]:
    return (type_, status, reason)


STATUS_OK = [cond("AbleToScale", T, "SucceededRescale"), cond("ScalingActive", T, "ValidMetricFound"), cond("ScalingLimited", F, "DesiredWithinRange")]


def ok(**overrides: tuple[str, str]) -> list[tuple[str, str, str]]:
    """statusOkWithOverrides: replace a condition in place, append a new type at the end."""
    out = list(STATUS_OK)
    for type_, (status, reason) in overrides.items():
        for i, c in enumerate(out):
            if c[0] == type_:
                out[i] = (type_, status, reason)
                break
        else:
            out.append((type_, status, reason))
    return out


DISABLED = [cond("AbleToScale", T, "SucceededGetScale"), cond("ScalingActive", F, "ScalingDisabled")]


def failed(reason: str) -> list[tuple[str, str, str]]:
    return [cond("AbleToScale", T, "SucceededGetScale"), cond("ScalingActive", F, reason)]


@dataclass
class Case:
    """One upstream test: the fixture (testCase / horizontalScenario) and what upstream asserts."""

    name: str
    min: int
    max: int
    spec: int
    status: int
    desired: int
    cpu_target: int = 0
    metrics: Sequence[MetricSpec] = ()
    levels: Sequence[int] = ()
    requests: Sequence[str] | None = None
    readiness: Sequence[str] | None = None
    start: Sequence[datetime] | None = None
    phase: Sequence[str] | None = None
    deleted: Sequence[bool] | None = None
    up: HPAScalingRules | None = None
    down: HPAScalingRules | None = None
    kind: str = "ReplicationController"
    last_scale_time: datetime | None = None
    initial_conditions: Sequence[tuple[str, str, str]] = ()
    recommendations: Sequence[tuple[int, float]] | None = None  # (replicas, seconds ago); None = never seen
    gates: FeatureGates = GATES
    conditions: Sequence[tuple[str, str, str]] | None = None  # None = statusOk
    error: bool = False
    scale_updated: bool | None = None  # None = spec != desired
    action: str | None = None  # monitor action label, when upstream checks it
    cpu_current: int | None = None  # verifyCPUCurrent
    other_hpa_selector: dict[str, str] | None = None  # hpaSelectors: test-hpa-2's selector
    pod_labels: dict[str, str] | None = None
    scale_selector: str | None = None  # override of the Scale's status.selector
    failing_metrics: bool = False  # every metrics API answers "something went wrong"
    failing_external: bool = False
    failing_scale_get: bool = False
    failing_scale_update: bool = False
    conflicts: int = 0
    events: Sequence[tuple[str, str, str]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.name


class UpstreamCluster(MemoryCluster):
    """MemoryCluster plus the failures upstream's tests inject with PrependReactor."""

    scale_selector: str | None = None
    failing_metrics = False
    failing_external = False
    failing_scale_get = False
    fail_message = "something went wrong"

    async def get_scale(self, namespace, ref):
        if self.failing_scale_get:
            raise RuntimeError(self.fail_message)
        scale = await super().get_scale(namespace, ref)
        if self.scale_selector is not None:
            scale.status.selector = self.scale_selector or None
        return scale

    async def get_resource_metric(self, *args, **kwargs):
        if self.failing_metrics:
            raise MetricsError(f"unable to fetch metrics from resource metrics API: {self.fail_message}")
        return await super().get_resource_metric(*args, **kwargs)

    async def get_raw_metric(self, *args, **kwargs):
        if self.failing_metrics:
            raise MetricsError(f"unable to fetch metrics from custom metrics API: {self.fail_message}")
        return await super().get_raw_metric(*args, **kwargs)

    async def get_object_metric(self, *args, **kwargs):
        if self.failing_metrics:
            raise MetricsError(f"unable to fetch metrics from custom metrics API: {self.fail_message}")
        return await super().get_object_metric(*args, **kwargs)

    async def get_external_metric(self, *args, **kwargs):
        if self.failing_metrics or self.failing_external:
            raise MetricsError(f"unable to fetch metrics from external metrics API: {self.fail_message}")
        return await super().get_external_metric(*args, **kwargs)


def build(c: Case) -> UpstreamCluster:
    metrics: list[MetricSpec] = []
    if c.cpu_target > 0:
        metrics.append(MetricSpec(type="Resource", resource=ResourceMetricSource(name="cpu", target=MetricTarget(type="Utilization", average_utilization=c.cpu_target))))
    metrics.extend(c.metrics)
    if not metrics:  # upstream's "manually add in the defaulting logic": CPU without a target
        metrics = [MetricSpec(type="Resource", resource=ResourceMetricSource(name="cpu", target=MetricTarget(type="")))]
    behavior = HorizontalPodAutoscalerBehavior(scale_up=c.up, scale_down=c.down) if (c.up or c.down) else None
    resource = {
        "ReplicationController": ("test-rc", "v1"),
        "Deployment": ("test-dep", "apps/v1"),
        "ReplicaSet": ("test-replicaset", "apps/v1"),
    }[c.kind]
    conditions = [HorizontalPodAutoscalerCondition(type=t, status=s, reason=r, last_transition_time=None) for t, s, r in c.initial_conditions]
    hpa = new_hpa(
        HorizontalPodAutoscalerSpec(
            scale_target_ref=CrossVersionObjectReference(kind=c.kind, name=resource[0], api_version=resource[1]),
            min_replicas=c.min,
            max_replicas=c.max,
            metrics=metrics,
            behavior=behavior,
        ),
        metadata=ObjectMeta(name="test-hpa", namespace=NS),
        status=HorizontalPodAutoscalerStatus(
            current_replicas=c.spec, desired_replicas=c.spec, last_scale_time=c.last_scale_time, current_metrics=None, conditions=conditions or None
        ),
    )
    selector: Any = dict(LABELS) if c.kind == "ReplicationController" else LabelSelector(match_labels=dict(LABELS))
    workload = WorkloadView(
        api_version=resource[1],
        kind=c.kind,
        metadata=ObjectMeta(name=resource[0], namespace=NS),
        spec=WorkloadSpecView(replicas=c.spec, selector=selector),
        status=WorkloadStatusView(replicas=c.status),
    )
    n_pods = len(c.requests) if c.requests is not None else c.status
    pods = []
    for i in range(n_pods):
        request = q(c.requests[i]) if c.requests is not None else q("1.0")
        half = ResourceRequirements(requests={"cpu": Quantity.from_milli(request.milli_value() // 2)})
        start = c.start[i] if c.start is not None else ZERO_TIME
        pods.append(
            PodView(
                metadata=ObjectMeta(
                    name=f"test-pod-{i}",
                    namespace=NS,
                    labels=dict(c.pod_labels or LABELS),
                    deletion_timestamp=NOW if c.deleted is not None and c.deleted[i] else None,
                ),
                spec=PodSpecView(containers=[ContainerView(name="container1", resources=half), ContainerView(name="container2", resources=half)]),
                status=PodStatusView(
                    phase=c.phase[i] if c.phase is not None else "Running",
                    start_time=start,
                    conditions=[PodCondition(type="Ready", status=c.readiness[i] if c.readiness is not None else T, last_transition_time=start)],
                ),
            )
        )
    pod_metrics, values, external = [], [], []
    for i, level in enumerate(c.levels):
        usage = {"cpu": Quantity.from_milli(level // 2), "memory": Quantity.parse("512Ki")}
        pod_metrics.append(
            PodMetrics(
                metadata=ObjectMeta(name=f"test-pod-{i}", namespace=NS, labels=dict(LABELS)),
                timestamp=NOW,
                window="1m0s",
                containers=[ContainerMetrics(name="container1", usage=dict(usage)), ContainerMetrics(name="container2", usage=dict(usage))],
            )
        )
        values.append(MetricValue(described_object=ObjectReferenceView(kind="Pod", name=f"test-pod-{i}", namespace=NS), metric=MetricIdentifierView(name="qps"), timestamp=NOW, value=Quantity.from_milli(level)))
        external.append(ExternalMetricValue(metric_name="qps", timestamp=NOW, value=Quantity.from_milli(level)))
    for m in c.metrics:
        if m.type == "Object" and c.levels:
            obj = m.object.described_object
            values.append(MetricValue(described_object=ObjectReferenceView(kind=obj.kind, name=obj.name, api_version=obj.api_version), metric=MetricIdentifierView(name="qps"), timestamp=NOW, value=Quantity.from_milli(c.levels[0])))
    states = None
    if c.recommendations is not None:
        states = {KEY: AutoscalerState([Recommendation(r, NOW - timedelta(seconds=ago)) for r, ago in c.recommendations])}
    cluster = UpstreamCluster(
        hpas=[hpa],
        workloads=[workload],
        pods=pods,
        pod_metrics=pod_metrics,
        metric_values=values,
        external_metrics=[ExternalMetricValueList(items=external)] if external else [],
        states=states,
    )
    if c.other_hpa_selector is not None:
        cluster.selector_registry.register(f"{NS}/test-hpa-2")
        cluster.selector_registry.put_selector(f"{NS}/test-hpa-2", Selector.parse(",".join(f"{k}={v}" for k, v in c.other_hpa_selector.items())))
    cluster.scale_selector = c.scale_selector
    cluster.failing_metrics = c.failing_metrics
    cluster.failing_external = c.failing_external
    cluster.failing_scale_get = c.failing_scale_get
    if c.failing_scale_update:
        cluster.scale_update_error = "something went wrong"
    cluster.conflicts_to_raise = c.conflicts
    return cluster


def config(gates: FeatureGates) -> ControllerConfig:
    return ControllerConfig(tolerance=0.1, downscale_stabilization=300.0, cpu_initialization_period=120.0, initial_readiness_delay=10.0, gates=gates)


def reconcile(cluster: MemoryCluster, gates: FeatureGates, now: datetime = NOW):
    return run_sync(reconcile_hpa(cluster.hpas[KEY], cluster.ports(), config(gates), now))


def cpu_utilization(status: HorizontalPodAutoscalerStatus) -> int | None:
    for m in status.current_metrics or ():
        if m.type == "Resource" and m.resource is not None and m.resource.name == "cpu":
            return m.resource.current.average_utilization
    return None


def cpu_current(levels: Sequence[int], requests: Sequence[str]) -> int:
    """computeCPUCurrent: 100 * sum(levels) / sum(requests) (integer)."""
    return 100 * sum(levels) // sum(q(r).milli_value() for r in requests)


# --------------------------------------------------------------------------- the table

S2 = ["Running", "Running", "Failed", "Failed"]
STZ_TRUE = [cond("ScaledToZero", T, "ScaledToZero")]
CASES: list[Case] = [
    # scale up on CPU
    Case("TestScaleUpCPU/scale up | TestScaleUp", 2, 6, 3, 3, 5, 30, levels=[300, 500, 700], requests=ONE3, action="scale_up", cpu_current=50),
    Case("TestScaleUpCPU/scale up with unready pods results in less scale | TestScaleUpUnreadyLessScale", 2, 6, 3, 3, 4, 30, levels=[300, 500, 700], requests=ONE3, readiness=[F, T, T], action="scale_up", cpu_current=60),
    Case("TestScaleUpCPU/scale up with hot cpu pods results in less scale | TestScaleUpHotCpuLessScale", 2, 6, 3, 3, 4, 30, levels=[300, 500, 700], requests=ONE3, start=[HOT, COOL, COOL], action="scale_up", cpu_current=60),
    Case("TestScaleUpCPU/scale up ignores failed pods | TestScaleUpIgnoresFailedPods", 2, 6, 2, 2, 4, 30, levels=[500, 700], requests=["1.0"] * 4, readiness=[T, T, F, F], phase=S2, action="scale_up", cpu_current=60),
    Case("TestScaleUpCPU/scale up ignores deletion pods | TestScaleUpIgnoresDeletionPods", 2, 6, 2, 2, 4, 30, levels=[500, 700], requests=["1.0"] * 4, readiness=[T, T, F, F], phase=["Running"] * 4, deleted=[False, False, True, True], action="scale_up", cpu_current=60),
    Case("TestScaleUpCPU/scale up deployment | TestScaleUpDeployment", 2, 6, 3, 3, 5, 30, levels=[300, 500, 700], requests=ONE3, kind="Deployment", action="scale_up", cpu_current=50),
    Case("TestScaleUpCPU/scale up replicaset | TestScaleUpReplicaSet", 2, 6, 3, 3, 5, 30, levels=[300, 500, 700], requests=ONE3, kind="ReplicaSet", action="scale_up", cpu_current=50),
    Case("TestScaleUpCPU/no scale up when all unready pods bring utilization within target | TestScaleUpUnreadyNoScale", 2, 6, 3, 3, 3, 30, levels=[400, 500, 700], requests=ONE3, readiness=[T, F, F], conditions=ok(AbleToScale=(T, "ReadyForNewScale")), action="none", cpu_current=40),
    Case("TestScaleUpUnreadyOrHotCpuNoScale/unready pods excluded from scaling", 2, 6, 3, 3, 3, 30, levels=[400, 500, 700], requests=ONE3, readiness=[T, F, F], conditions=ok(AbleToScale=(T, "ReadyForNewScale")), action="none", cpu_current=40),
    Case("TestScaleUpUnreadyOrHotCpuNoScale/hot CPU pods excluded from scaling | TestScaleUpHotCpuNoScale", 2, 6, 3, 3, 3, 30, levels=[400, 500, 700], requests=ONE3, readiness=[T, F, F], start=[COOL, HOT, HOT], conditions=ok(AbleToScale=(T, "ReadyForNewScale")), action="none", cpu_current=40),
    Case("TestScaleContainerResource/scale up container resource | TestScaleUpContainer", 2, 6, 3, 3, 5, metrics=[container_cpu(30, "container1")], levels=[300, 500, 700], requests=ONE3, action="scale_up"),
    Case("TestScaleContainerResource/scale down container resource | TestScaleDownContainerResource", 2, 6, 5, 5, 3, metrics=[container_cpu(50, "container2")], levels=[100, 300, 500, 250, 250], requests=ONE5, recommendations=[], action="scale_down"),
    # scale down on CPU
    Case("TestScaleDownCPU/scale down | TestScaleDown", 2, 6, 5, 5, 3, 50, levels=[100, 300, 500, 250, 250], requests=ONE5, recommendations=[], action="scale_down", cpu_current=28),
    Case("TestScaleDownCPU/scale down includes unready pods | TestScaleDownIncludeUnreadyPods", 2, 6, 5, 5, 2, 50, levels=[100, 300, 500, 250, 250], requests=ONE5, readiness=[T, T, T, F, F], recommendations=[], action="scale_down"),
    Case("TestScaleDownCPU/scale down ignores hot cpu pods | TestScaleDownIgnoreHotCpuPods", 2, 6, 5, 5, 2, 50, levels=[100, 300, 500, 250, 250], requests=ONE5, start=[COOL, COOL, COOL, HOT, HOT], recommendations=[], action="scale_down"),
    Case("TestScaleDownCPU/scale down ignores failed pods | TestScaleDownIgnoresFailedPods", 2, 6, 5, 5, 3, 50, levels=[100, 300, 500, 250, 250], requests=["1.0"] * 7, readiness=[T] * 5 + [F, F], phase=["Running"] * 5 + ["Failed"] * 2, recommendations=[], action="scale_down", cpu_current=28),
    Case("TestScaleDownCPU/scale down ignores deletion pods | TestScaleDownIgnoresDeletionPods", 2, 6, 5, 5, 3, 50, levels=[100, 300, 500, 250, 250], requests=["1.0"] * 7, readiness=[T] * 5 + [F, F], phase=["Running"] * 7, deleted=[False] * 5 + [True] * 2, recommendations=[], action="scale_down", cpu_current=28),
    Case("TestScaleDownWithScalingRules", 2, 6, 5, 5, 3, 50, levels=[100, 300, 500, 250, 250], requests=ONE5, up=rules(0, 0, 100, 15, 30), recommendations=[], action="scale_down", cpu_current=28),
    Case("TestScaleDownStabilizeInitialSize", 2, 6, 5, 5, 5, 50, levels=[100, 300, 500, 250, 250], requests=ONE5, conditions=ok(AbleToScale=(T, "ScaleDownStabilized")), action="none", cpu_current=28),
    # custom (Pods) metrics
    Case("TestScaleUpCM/scale up custom metric | TestScaleUpCM", 2, 6, 3, 3, 4, metrics=[pods_metric("15.0")], levels=[20000, 10000, 30000], requests=ONE3, action="scale_up"),
    Case("TestScaleUpCM/unready and hot cpu pods do not reduce scale for custom metric | TestScaleUpCMUnreadyAndHotCpuNoLessScale", 2, 6, 3, 3, 6, metrics=[pods_metric("15.0")], levels=[50000, 10000, 30000], requests=ONE3, readiness=[T, T, F], start=[COOL, COOL, HOT], action="scale_up"),
    Case("TestScaleUpCM/unready and hot cpu pods scale to max with scaling limited condition | TestScaleUpCMUnreadyandCpuHot", 2, 6, 3, 3, 6, metrics=[pods_metric("15.0")], levels=[50000, 15000, 30000], requests=ONE3, readiness=[F, T, F], start=[HOT, COOL, HOT], conditions=ok(ScalingLimited=(T, "TooManyReplicas")), action="scale_up"),
    Case("TestScaleUpHotCpuNoScaleWouldScaleDown", 2, 6, 3, 3, 6, metrics=[pods_metric("15.0")], levels=[50000, 15000, 30000], requests=ONE3, start=[HOT, COOL, HOT], conditions=ok(ScalingLimited=(T, "TooManyReplicas")), action="scale_up"),
    Case("TestScaleDownCM/scale down pods metric | TestScaleDownCM", 2, 6, 5, 5, 3, metrics=[pods_metric("20.0")], levels=[12000] * 5, requests=ONE5, recommendations=[], action="scale_down"),
    # object metrics
    Case("TestScaleUpCMObject/scale up object metric with value target | TestScaleUpCMObject", 2, 6, 3, 3, 4, metrics=[object_metric("15.0")], levels=[20000], action="scale_up"),
    Case("TestScaleUpCMObject/scale up from zero with feature gate enabled | TestScaleUpFromZeroCMObject", 0, 6, 0, 0, 2, metrics=[object_metric("15.0")], levels=[20000], initial_conditions=STZ_TRUE, gates=FeatureGates(scale_to_zero=True, hpa_generation=False),
         conditions=[cond("ScaledToZero", F, "NotScaledToZero")] + STATUS_OK, action="scale_up"),
    Case("TestScaleUpCMObject/scale up from zero with feature gate disabled", 0, 6, 0, 0, 0, metrics=[object_metric("15.0")], levels=[20000], initial_conditions=STZ_TRUE, conditions=DISABLED, action="none"),
    Case("TestScaleUpCMObject/scale up from zero ignores tolerance with feature gate enabled | TestScaleUpFromZeroIgnoresToleranceCMObject", 0, 6, 0, 0, 1, metrics=[object_metric("1.0")], levels=[1000], initial_conditions=STZ_TRUE, gates=FeatureGates(scale_to_zero=True, hpa_generation=False),
         conditions=[cond("ScaledToZero", F, "NotScaledToZero")] + STATUS_OK, action="scale_up"),
    Case("TestScaleUpCMObject/scale up from zero ignores tolerance with feature gate disabled", 0, 6, 0, 0, 0, metrics=[object_metric("1.0")], levels=[1000], initial_conditions=STZ_TRUE, conditions=DISABLED, action="none"),
    Case("TestScaleUpCMObject/scale up per-pod object metric with average value target | TestScaleUpPerPodCMObject", 2, 6, 3, 3, 4, metrics=[object_metric(average="10.0")], levels=[40000], action="scale_up"),
    Case("TestScaleDownCM/scale down object metric with value target | TestScaleDownCMObject", 2, 6, 5, 5, 3, metrics=[object_metric("20.0")], levels=[12000], requests=ONE5, recommendations=[], action="scale_down"),
    Case("TestScaleDownCM/scale down to zero object metric with feature gate enabled | TestScaleDownToZeroCMObject", 0, 6, 5, 5, 0, metrics=[object_metric("20.0")], levels=[0], requests=ONE5, recommendations=[], gates=FeatureGates(scale_to_zero=True, hpa_generation=False),
         conditions=ok(ScaledToZero=(T, "ScaledToZero")), action="scale_down"),
    Case("TestScaleDownCM/scale down to zero object metric with feature gate disabled", 0, 6, 5, 5, 0, metrics=[object_metric("20.0")], levels=[0], requests=ONE5, recommendations=[], action="scale_down"),
    Case("TestScaleDownCM/scale down per-pod object metric with average value target | TestScaleDownPerPodCMObject", 2, 6, 5, 5, 3, metrics=[object_metric(average="20.0")], levels=[60000], requests=ONE5, recommendations=[], action="scale_down"),
    # external metrics
    Case("TestScaleUpCMExternal/scale up external metric with value target | TestScaleUpCMExternal", 2, 6, 3, 3, 4, metrics=[external_metric(6666)], levels=[8600], action="scale_up"),
    Case("TestScaleUpCMExternal/scale up external metric with per-pod average value target | TestScaleUpPerPodCMExternal", 2, 6, 3, 3, 4, metrics=[external_metric(average_milli=2222)], levels=[8600], action="scale_up"),
    Case("TestScaleDownCM/scale down external metric with value target | TestScaleDownCMExternal", 2, 6, 5, 5, 3, metrics=[external_metric(14400)], levels=[8600], recommendations=[], action="scale_down"),
    Case("TestScaleDownCM/scale down to zero external metric with feature gate enabled | TestScaleDownToZeroCMExternal", 0, 6, 5, 5, 0, metrics=[external_metric(14400)], levels=[0], recommendations=[], gates=FeatureGates(scale_to_zero=True, hpa_generation=False),
         conditions=ok(ScaledToZero=(T, "ScaledToZero")), action="scale_down"),
    Case("TestScaleDownCM/scale down to zero external metric with feature gate disabled", 0, 6, 5, 5, 0, metrics=[external_metric(14400)], levels=[0], recommendations=[], action="scale_down"),
    Case("TestScaleDownCM/scale down per-pod external metric with average value target | TestScaleDownPerPodCMExternal", 2, 6, 5, 5, 3, metrics=[external_metric(average_milli=3000)], levels=[8600], recommendations=[], action="scale_down"),
    # scale to / from zero
    Case("TestScaleUpFromZeroOneMetricInvalid/HPAScaleToZero=true", 0, 6, 0, 0, 0, 30, metrics=[MetricSpec(type="CheddarCheese")], levels=[300, 400, 500], requests=ONE3, recommendations=[], gates=FeatureGates(scale_to_zero=True), conditions=DISABLED, action="none"),
    Case("TestScaleUpFromZeroOneMetricInvalid/HPAScaleToZero=false", 0, 6, 0, 0, 0, 30, metrics=[MetricSpec(type="CheddarCheese")], levels=[300, 400, 500], requests=ONE3, recommendations=[], conditions=DISABLED, action="none"),
    Case("TestScaleUpFromZeroWithoutCondition/HPAScaleToZero=true", 0, 6, 0, 0, 0, metrics=[object_metric("15.0")], levels=[20000], gates=FeatureGates(scale_to_zero=True), conditions=DISABLED, action="none"),
    Case("TestScaleUpFromZeroWithoutCondition/HPAScaleToZero=false", 0, 6, 0, 0, 0, metrics=[object_metric("15.0")], levels=[20000], conditions=DISABLED, action="none"),
    Case("TestScaleUpFromZeroWhenMinReplicasIncreased/HPAScaleToZero=true", 2, 6, 0, 0, 2, metrics=[object_metric("15")], levels=[10000], initial_conditions=STZ_TRUE, gates=FeatureGates(scale_to_zero=True),
         conditions=[cond("ScaledToZero", F, "NotScaledToZero"), cond("AbleToScale", T, "SucceededRescale"), cond("ScalingActive", T, "ValidMetricFound"), cond("ScalingLimited", T, "TooFewReplicas")], action="scale_up"),
    Case("TestScaleUpFromZeroWhenMinReplicasIncreased/HPAScaleToZero=false", 2, 6, 0, 0, 0, metrics=[object_metric("15.0")], levels=[10000], initial_conditions=STZ_TRUE, conditions=DISABLED, action="none"),
    Case("TestScaledToZeroConditionHandledOnNormalRescale/HPAScaleToZero=true", 1, 6, 3, 3, 5, 30, levels=[300, 500, 700], requests=ONE3, initial_conditions=STZ_TRUE, gates=FeatureGates(scale_to_zero=True),
         conditions=[cond("ScaledToZero", F, "NotScaledToZero")] + STATUS_OK, action="scale_up"),
    Case("TestScaledToZeroConditionHandledOnNormalRescale/HPAScaleToZero=false", 1, 6, 3, 3, 5, 30, levels=[300, 500, 700], requests=ONE3, initial_conditions=STZ_TRUE, conditions=STATUS_OK, action="scale_up"),
    Case("TestManualScaleToZeroDisablesHPA/HPAScaleToZero=true", 1, 6, 0, 0, 0, 50, requests=[], gates=FeatureGates(scale_to_zero=True), conditions=DISABLED, action="none"),
    Case("TestManualScaleToZeroDisablesHPA/HPAScaleToZero=false", 1, 6, 0, 0, 0, 50, requests=[], conditions=DISABLED, action="none"),
    # tolerance
    Case("TestTolerance/CPU resource metric within tolerance | TestTolerance", 1, 5, 3, 3, 3, 100, levels=[1010, 1030, 1020], requests=ODD3, conditions=ok(AbleToScale=(T, "ReadyForNewScale")), action="none"),
    Case("TestTolerance/pods metric within tolerance | TestToleranceCM", 1, 5, 3, 3, 3, metrics=[pods_metric("20.0")], levels=[20000, 20001, 21000], requests=ODD3, conditions=ok(AbleToScale=(T, "ReadyForNewScale")), action="none"),
    Case("TestTolerance/object metric with value target within tolerance | TestToleranceCMObject", 1, 5, 3, 3, 3, metrics=[object_metric("20.0")], levels=[20050], requests=ODD3, conditions=ok(AbleToScale=(T, "ReadyForNewScale")), action="none"),
    Case("TestTolerance/external metric with value target within tolerance | TestToleranceCMExternal", 2, 6, 4, 4, 4, metrics=[external_metric(8666)], levels=[8600], conditions=ok(AbleToScale=(T, "ReadyForNewScale")), action="none"),
    Case("TestTolerance/per-pod object metric with average value target within tolerance | TestTolerancePerPodCMObject", 2, 6, 4, 4, 4,
         metrics=[MetricSpec(type="Object", object=ObjectMetricSource(described_object=SOME_DEPLOYMENT, metric=MetricIdentifier(name="qps", selector=LabelSelector()), target=MetricTarget(type="AverageValue", average_value=Quantity.from_milli(2200))))],
         levels=[8600], conditions=ok(AbleToScale=(T, "ReadyForNewScale")), action="none"),
    Case("TestTolerance/per-pod external metric with average value target within tolerance | TestTolerancePerPodCMExternal", 2, 6, 4, 4, 4, metrics=[external_metric(average_milli=2200)], levels=[8600], conditions=ok(AbleToScale=(T, "ReadyForNewScale")), action="none"),
    Case("TestConfigurableTolerance/Scaling up because of a 1% configurable tolerance", 1, 5, 3, 3, 4, 100, levels=[1010, 1030, 1020], requests=ODD3, up=HPAScalingRules(tolerance=q("0.01")), conditions=STATUS_OK, action="scale_up"),
    Case("TestConfigurableTolerance/No scale-down because of a 90% configurable tolerance", 1, 5, 3, 3, 3, 100, levels=[300, 300, 300], requests=ONE3, down=HPAScalingRules(tolerance=q("0.9")), conditions=ok(AbleToScale=(T, "ReadyForNewScale")), action="none"),
    Case("TestConfigurableTolerance/No scaling because of the large default tolerance", 1, 5, 3, 3, 3, 100, levels=[1010, 1030, 1020], requests=ODD3, conditions=ok(AbleToScale=(T, "ReadyForNewScale")), action="none"),
    Case("TestConfigurableTolerance/No scaling because the configurable tolerance is ignored as the feature gate is disabled", 1, 5, 3, 3, 3, 100, levels=[1010, 1030, 1020], requests=ODD3, up=HPAScalingRules(tolerance=q("0.01")),
         gates=FeatureGates(scale_to_zero=False, configurable_tolerance=False), conditions=ok(AbleToScale=(T, "ReadyForNewScale")), action="none"),
    # replica limits
    Case("TestReplicaLimits/scale down clamped to min replicas | TestMinReplicas", 2, 5, 3, 3, 2, 90, levels=[10, 95, 10], requests=ODD3, recommendations=[], conditions=ok(ScalingLimited=(T, "TooFewReplicas")), action="scale_down"),
    Case("TestReplicaLimits/scale down to zero when min replicas is zero | TestZeroMinReplicasDesiredZero", 0, 5, 3, 3, 0, 90, levels=[0, 0, 0], requests=ODD3, recommendations=[], conditions=STATUS_OK, action="scale_down"),
    Case("TestReplicaLimits/scale down clamped to min when desired is zero | TestMinReplicasDesiredZero", 2, 5, 3, 3, 2, 90, levels=[0, 0, 0], requests=ODD3, recommendations=[], conditions=ok(ScalingLimited=(T, "TooFewReplicas")), action="scale_down"),
    Case("TestReplicaLimits/no scaling when spec replicas is zero | TestZeroReplicas", 3, 5, 0, 0, 0, 90, requests=[], conditions=DISABLED, action="none"),
    Case("TestReplicaLimits/scale up to min when below min replicas | TestTooFewReplicas", 3, 5, 2, 2, 3, 90, requests=[], conditions=[cond("AbleToScale", T, "SucceededRescale")], action="scale_up"),
    Case("TestReplicaLimits/scale down to max when above max replicas | TestTooManyReplicas", 3, 5, 10, 10, 5, 90, requests=[], conditions=[cond("AbleToScale", T, "SucceededRescale")], action="scale_down"),
    Case("TestReplicaLimits/scale up clamped to max replicas | TestMaxReplicas", 2, 5, 3, 3, 5, 90, levels=[8000, 9500, 1000], requests=ODD3, conditions=ok(ScalingLimited=(T, "TooManyReplicas")), action="scale_up"),
    # metrics edge cases
    Case("TestMetricsEdgeCases/superfluous metrics reported | TestSuperfluousMetrics", 2, 6, 4, 4, 6, 100, levels=[4000, 9500, 3000, 7000, 3200, 2000], requests=["1.0"] * 4, conditions=ok(ScalingLimited=(T, "TooManyReplicas")), action="scale_up"),
    Case("TestMetricsEdgeCases/missing metrics from some pods | TestMissingMetrics", 2, 6, 4, 4, 3, 100, levels=[400, 95], requests=["1.0"] * 4, recommendations=[], action="scale_down"),
    Case("TestMetricsEdgeCases/empty metrics from all pods | TestEmptyMetrics", 2, 6, 4, 4, 4, 100, levels=[], requests=["1.0"] * 4, conditions=failed("FailedGetResourceMetric"), error=True, action="none"),
    Case("TestMetricsEdgeCases/empty CPU requests | TestEmptyCPURequest", 1, 5, 1, 1, 1, 100, levels=[200], requests=[], conditions=failed("FailedGetResourceMetric"), error=True, action="none"),
    Case("TestCPUScalingEdgeCases/missing reports from some pods | TestMissingReports", 1, 5, 4, 4, 2, 50, levels=[200], requests=["0.2"], recommendations=[], action="scale_down"),
    Case("TestCPUScalingEdgeCases/more replicas than spec no scale | TestMoreReplicasThanSpecNoScale", 1, 8, 4, 5, 4, 50, levels=[500] * 5, requests=["1"] * 5, conditions=ok(AbleToScale=(T, "ReadyForNewScale")), action="none"),
    Case("TestEventCreated", 1, 5, 1, 1, 2, 50, levels=[200], requests=["0.2"], action="scale_up", events=[("Normal", "SuccessfulRescale", f"New size: 2; reason: {CPU_NAME} above target")]),
    Case("TestEventNotCreated", 1, 5, 2, 2, 2, 50, levels=[200, 200], requests=["0.4", "0.4"], conditions=ok(AbleToScale=(T, "ReadyForNewScale")), action="none", events=[]),
    # scale-up caps
    Case("TestUpscaleCap/capped by scale up rules | TestUpscaleCap", 1, 100, 3, 3, 24, 10, levels=[100, 200, 300], requests=["0.1"] * 3, up=rules(0, 0, 700, 60, 0), conditions=ok(ScalingLimited=(T, "ScaleUpLimit")), action="scale_up"),
    Case("TestUpscaleCap/capped by max replicas when scale up limit exceeds max | TestUpscaleCapGreaterThanMaxReplicas", 1, 20, 3, 3, 20, 10, levels=[100, 200, 300], requests=["0.1"] * 3, up=rules(0, 0, 700, 60, 0), conditions=ok(ScalingLimited=(T, "TooManyReplicas")), action="scale_up"),
    # conditions on failures
    Case("TestConditionInvalidSelectorMissing", 1, 100, 3, 3, 3, 10, levels=[100, 200, 300], requests=["0.1"] * 3, scale_selector="", conditions=failed("InvalidSelector"), error=True, action="none"),
    Case("TestConditionInvalidSelectorUnparsable", 1, 100, 3, 3, 3, 10, levels=[100, 200, 300], requests=["0.1"] * 3, scale_selector="cheddar cheese", conditions=failed("InvalidSelector"), error=True, action="none"),
    Case("TestConditionNoAmbiguousSelectorWhenNoSelectorOverlapBetweenHPAs", 2, 6, 3, 3, 5, 30, levels=[300, 500, 700], requests=ONE3, other_hpa_selector={"cheddar": "cheese"}, action="scale_up"),
    Case("TestConditionAmbiguousSelectorWhenFullSelectorOverlapBetweenHPAs", 2, 6, 3, 3, 3, 30, levels=[300, 500, 700], requests=ONE3, other_hpa_selector={"name": "test-pod"}, conditions=failed("AmbiguousSelector"), error=True, action="none"),
    Case("TestConditionAmbiguousSelectorWhenPartialSelectorOverlapBetweenHPAs", 2, 6, 3, 3, 3, 30, levels=[300, 500, 700], requests=ONE3, other_hpa_selector={"cheddar": "cheese"}, pod_labels={"name": "test-pod", "cheddar": "cheese"}, conditions=failed("AmbiguousSelector"), error=True, action="none"),
    Case("TestConditionFailedGetMetrics/FailedGetResourceMetric", 1, 100, 3, 3, 3, 10, levels=[100, 200, 300], requests=["0.1"] * 3, failing_metrics=True, conditions=failed("FailedGetResourceMetric"), error=True, action="none"),
    Case("TestConditionFailedGetMetrics/FailedGetPodsMetric", 1, 100, 3, 3, 3, metrics=[pods_metric("15.0")], levels=[100, 200, 300], requests=["0.1"] * 3, failing_metrics=True, conditions=failed("FailedGetPodsMetric"), error=True, action="none"),
    Case("TestConditionFailedGetMetrics/FailedGetObjectMetric", 1, 100, 3, 3, 3, metrics=[object_metric("15.0")], levels=[100, 200, 300], requests=["0.1"] * 3, failing_metrics=True, conditions=failed("FailedGetObjectMetric"), error=True, action="none"),
    Case("TestConditionFailedGetMetrics/FailedGetExternalMetric", 1, 100, 3, 3, 3, metrics=[external_metric(300)], levels=[100, 200, 300], requests=["0.1"] * 3, failing_metrics=True, conditions=failed("FailedGetExternalMetric"), error=True, action="none"),
    Case("TestInvalidMetricSourceType/only invalid metric source type | TestScaleUpBothMetricsEmpty", 2, 6, 3, 3, 3, metrics=[MetricSpec(type="CheddarCheese")], levels=[20000], conditions=failed("InvalidMetricSourceType"), error=True, action="none"),
    Case("TestInvalidMetricSourceType/no scale down when one metric has invalid source type | TestNoScaleDownOneMetricInvalid", 2, 6, 5, 5, 5, 50, metrics=[MetricSpec(type="CheddarCheese")], levels=[100, 300, 500, 250, 250], requests=ONE5, recommendations=[], conditions=failed("InvalidMetricSourceType"), error=True, action="none"),
    Case("TestConditionFailedGetScale", 1, 100, 3, 3, 3, 10, levels=[100, 200, 300], requests=["0.1"] * 3, failing_scale_get=True, conditions=[cond("AbleToScale", F, "FailedGetScale")], error=True, scale_updated=False, action="none"),
    Case("TestConditionFailedUpdateScale", 1, 5, 3, 3, 3, 100, levels=[150, 150, 150], requests=["0.1"] * 3, failing_scale_update=True, conditions=ok(AbleToScale=(F, "FailedUpdateScale")), error=True, scale_updated=False, action="none"),
    # one metric invalid or empty next to a valid one
    Case("TestScaleUpOneMetricInvalid", 2, 6, 3, 3, 4, 30, metrics=[MetricSpec(type="CheddarCheese")], levels=[300, 400, 500], requests=ONE3, error=True, action="scale_up", cpu_current=40),
    Case("TestScaleUpOneMetricEmpty", 2, 6, 3, 3, 4, 30, metrics=[external_metric(100)], levels=[300, 400, 500], requests=ONE3, failing_external=True, error=True, action="scale_up", cpu_current=40),
    Case("TestNoScaleDownOneMetricEmpty", 2, 6, 5, 5, 5, 50, metrics=[external_metric(1000)], levels=[100, 300, 500, 250, 250], requests=ONE5, recommendations=[], failing_external=True, conditions=failed("FailedGetExternalMetric"), error=True, action="none"),
    # timing
    Case("TestScaleTimingBehavior/no backoff upscale custom metric only | TestNoBackoffUpscaleCM", 1, 5, 3, 3, 4, metrics=[pods_metric("15.0")], levels=[20000, 10000, 30000], requests=ONE3, last_scale_time=NOW, conditions=STATUS_OK, action="scale_up"),
    Case("TestScaleTimingBehavior/no backoff upscale custom metric and CPU | TestNoBackoffUpscaleCMNoBackoffCpu", 1, 5, 3, 3, 5, 10, metrics=[pods_metric("15.0")], levels=[20000, 10000, 30000], requests=ONE3, last_scale_time=NOW, conditions=ok(ScalingLimited=(T, "TooManyReplicas")), action="scale_up"),
    Case("TestScaleTimingBehavior/stabilize downscale | TestStabilizeDownscale", 1, 5, 4, 4, 4, 100, levels=[50, 50, 50], requests=["0.1"] * 3, recommendations=[(10, 600), (4, 60)], conditions=ok(AbleToScale=(T, "ScaleDownStabilized")), action="none"),
    Case("TestScaleRCImmediately/scale up to min when below min replicas | TestScaleUpRCImmediately", 2, 6, 1, 1, 2, levels=[0, 0, 0, 0], requests=["1.0"] * 4, last_scale_time=NOW, conditions=[cond("AbleToScale", T, "SucceededRescale")], action="scale_up"),
    Case("TestScaleRCImmediately/scale down to max when above max replicas | TestScaleDownRCImmediately", 2, 5, 6, 6, 5, 50, levels=[8000, 9500, 1000], requests=ODD3, last_scale_time=NOW, conditions=[cond("AbleToScale", T, "SucceededRescale")], action="scale_down"),
    Case("TestHPARescaleWithSuccessfulConflictRetry", 2, 6, 3, 3, 5, 50, levels=[600, 700, 800], requests=ONE3, conflicts=1, conditions=STATUS_OK, action="scale_up"),
    Case("TestReconciliationDurationIsRecorded", 2, 6, 3, 3, 5, 30, levels=[300, 500, 700], requests=ONE3, action="scale_up", cpu_current=50),
    Case("TestReconciliationDurationIsRecordedOnError", 2, 6, 4, 4, 4, 100, levels=[], requests=["1.0"] * 4, conditions=failed("FailedGetResourceMetric"), error=True, action="none"),
]


def _computed_tolerance_cases() -> list[Case]:
    """TestComputedToleranceAlgImplementation: targets back-computed from the 0.1 tolerance."""
    start_pods = 10
    used = start_pods * 150
    requested = 2 * used
    requested_to_used = float(requested // used)
    per_pod = requested // start_pods
    requests = [f"{per_pod + o}m" for o in (100, -100, 10, -10, 2, -2, 1, -1, 0, 0)]
    levels = [used // 10] * 10
    target = abs(1 / (requested_to_used * (1 - 0.1))) + 0.01
    final_pods = math.ceil(float(used) / (float(requested) * target) * start_pods)
    near = abs(1 / (requested_to_used * (1 - 0.1))) + 0.004
    return [
        Case("TestComputedToleranceAlgImplementation/scale down", 0, 1000, start_pods, start_pods, final_pods, int(target * 100), levels=levels, requests=requests, recommendations=[], action="scale_down"),
        Case("TestComputedToleranceAlgImplementation/no scale within tolerance", 0, 1000, start_pods, start_pods, start_pods, int(near * 100), levels=levels, requests=requests, recommendations=[], conditions=ok(AbleToScale=(T, "ReadyForNewScale")), action="none"),
    ]


CASES += _computed_tolerance_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_upstream_reconcile(case: Case):
    cluster = build(case)
    r = reconcile(cluster, case.gates)
    # desired replicas in the written status (upstream's update reactor)
    assert r.status.desired_replicas == case.desired
    assert cluster.status_writes and cluster.status_writes[-1].status.desired_replicas == case.desired
    # the scale update, only when a change was expected
    updated = case.scale_updated if case.scale_updated is not None else case.spec != case.desired
    assert bool(cluster.scale_updates) == updated
    if updated:
        assert cluster.scale_updates[-1][3] == case.desired
    # conditions: type, status and reason, in order
    expected = list(case.conditions) if case.conditions is not None else STATUS_OK
    assert [(c.type, c.status, c.reason) for c in r.status.conditions or ()] == expected
    assert (r.error is not None) == case.error, r.error
    if case.action is not None:
        assert r.action == case.action
    assert r.error_kind == ("internal" if case.error else "none")
    if case.cpu_current is not None:
        assert cpu_utilization(r.status) == case.cpu_current
        if len(case.levels) == len(case.requests or ()) and not case.readiness and not case.start:
            assert cpu_current(case.levels, case.requests) == case.cpu_current  # upstream's computeCPUCurrent
    if case.events is not None:
        assert [(e.type, e.reason, e.message) for e in cluster.events] == list(case.events)


def test_reconciliations_total_count_multiple_reconciliations():
    """TestReconciliationsTotalCountMultipleReconciliations: every pass decides the same, the
    status is written once (later passes change nothing)."""
    case = Case("x", 1, 5, 3, 3, 3, 100, levels=[1010, 1030, 1020], requests=ODD3)
    cluster = build(case)
    results = [reconcile(cluster, GATES, NOW + timedelta(seconds=15 * i)) for i in range(3)]
    for r in results:
        assert (r.desired_replicas, r.action, r.error) == (3, "none", None)
        assert [(c.type, c.status, c.reason) for c in r.status.conditions] == ok(AbleToScale=(T, "ReadyForNewScale"))
    assert [r.status_written for r in results] == [True, False, False]
    assert not cluster.scale_updates


def test_avoid_unnecessary_updates():
    """TestAvoidUnnecessaryUpdates (TestAvoidUncessaryUpdates): with HPAGeneration on and a status
    that already says what this pass computes, the HPA is not written and the scale is untouched."""
    last = NOW - timedelta(hours=1)
    case = Case("x", 2, 6, 2, 2, 2, levels=[400, 500, 700], requests=ONE3, start=[COOL, HOT, HOT], recommendations=[], last_scale_time=last)
    cluster = build(case)
    hpa = cluster.hpas[KEY]
    hpa.metadata.generation = 1
    hpa.spec.metrics = [MetricSpec(type="Resource", resource=ResourceMetricSource(name="cpu", target=MetricTarget(type="Utilization", average_utilization=80)))]
    hpa.status = HorizontalPodAutoscalerStatus(
        observed_generation=1,
        current_replicas=2,
        desired_replicas=2,
        last_scale_time=last,
        current_metrics=[MetricStatus(type="Resource", resource=ResourceMetricStatus(name="cpu", current=MetricValueStatus(average_value=q("400m"), average_utilization=40)))],
        conditions=[
            HorizontalPodAutoscalerCondition(type="AbleToScale", status=T, last_transition_time=last, reason="ReadyForNewScale", message="recommended size matches current size"),
            HorizontalPodAutoscalerCondition(type="ScalingActive", status=T, last_transition_time=last, reason="ValidMetricFound", message=f"the HPA was able to successfully calculate a replica count from {CPU_NAME}"),
            HorizontalPodAutoscalerCondition(type="ScalingLimited", status=T, last_transition_time=last, reason="TooFewReplicas", message="the desired replica count is less than the minimum replica count"),
        ],
    )
    r = reconcile(cluster, FeatureGates(scale_to_zero=False, hpa_generation=True))
    assert (r.error, r.action, r.status_written) == (None, "none", False)
    assert not cluster.status_writes and not cluster.scale_updates


def test_multiple_hpas():
    """TestMultipleHPAs: 1,000 HPAs in one namespace, each over its own Deployment with one pod at
    500m of 1 CPU (50 % against a 10 % target), behavior rules and pre-existing scale events;
    every HPA is processed and scales 1 -> 5 (max 10, scale-up limit 1 - 20 + 10 + 100)."""
    count = 1000
    ns = "dummy-namespace"
    hpas, workloads, pods, pod_metrics, states = [], [], [], [], {}
    half = ResourceRequirements(requests={"cpu": Quantity.from_milli(500)})

    def events(raw: list[int], period: int) -> list[ScaleEvent]:
        seg = period / len(raw)
        return [ScaleEvent(v, NOW - timedelta(seconds=int(period - seg * (i + 1) + seg / 2))) for i, v in enumerate(raw)]

    for i in range(count):
        target = f"dummy-target-{i}"
        labels = {"name": target}
        hpas.append(new_hpa(
            HorizontalPodAutoscalerSpec(
                scale_target_ref=CrossVersionObjectReference(kind="Deployment", name=target, api_version="apps/v1"),
                min_replicas=1, max_replicas=10,
                behavior=HorizontalPodAutoscalerBehavior(scale_up=rules(100, 60, 0, 0, 0), scale_down=rules(2, 60, 1, 60, 300)),
                metrics=[MetricSpec(type="Resource", resource=ResourceMetricSource(name="cpu", target=MetricTarget(type="Utilization", average_utilization=10)))],
            ),
            metadata=ObjectMeta(name=f"dummy-hpa-{i}", namespace=ns),
            status=HorizontalPodAutoscalerStatus(current_replicas=1, desired_replicas=5, last_scale_time=NOW, current_metrics=None),
        ))
        workloads.append(WorkloadView(api_version="apps/v1", kind="Deployment", metadata=ObjectMeta(name=target, namespace=ns),
                                      spec=WorkloadSpecView(replicas=1, selector=LabelSelector(match_labels=labels)), status=WorkloadStatusView(replicas=1)))
        pods.append(PodView(
            metadata=ObjectMeta(name=f"{target}-0", namespace=ns, labels=labels),
            spec=PodSpecView(containers=[ContainerView(name="container1", resources=half), ContainerView(name="container2", resources=half)]),
            status=PodStatusView(phase="Running", start_time=NOW - timedelta(minutes=10), conditions=[PodCondition(type="Ready", status=T)]),
        ))
        pod_metrics.append(PodMetrics(metadata=ObjectMeta(name=f"{target}-0", namespace=ns, labels=labels), timestamp=NOW, window="1m0s",
                                      containers=[ContainerMetrics(name="container1", usage={"cpu": Quantity.from_milli(200)}),
                                                  ContainerMetrics(name="container2", usage={"cpu": Quantity.from_milli(300)})]))
        states[f"{ns}/dummy-hpa-{i}"] = AutoscalerState(None, events([8, 12, 9, 11], 120), events([10, 10, 10], 120))
    cluster = MemoryCluster(hpas=hpas, workloads=workloads, pods=pods, pod_metrics=pod_metrics, states=states)
    processed = set()
    for key in list(cluster.hpas):
        r = run_sync(reconcile_hpa(cluster.hpas[key], cluster.ports(), config(GATES), NOW))
        assert (r.error, r.desired_replicas, r.action) == (None, 5, "scale_up")
        processed.add(r.key.partition("/")[2])
    assert len(processed) == count
    assert len(cluster.status_writes) == count and {u[3] for u in cluster.scale_updates} == {5}


# --------------------------------------------------------------------------- normalization units

# Upstream's other normalization tables in this file (TestScalingWithRules, TestStoreScaleEvents,
# TestNormalizeDesiredReplicas[WithBehavior], the scale-limit helpers) are ported once, in
# tests/engine/test_normalize.py; the legacy conversion here runs with this file's factor 8.

# TestConvertDesiredReplicasWithRules (legacy path, scaleUpLimitFactor 8)
CONVERT = [
    ("prenormalized desired replicas within range", 5, 7, 3, 8, 7, "DesiredWithinRange"),
    ("prenormalized desired replicas < minReplicas", 3, 1, 2, 8, 2, "TooFewReplicas"),
    ("prenormalized desired zeroed replicas within range", 1, 0, 0, 10, 0, "DesiredWithinRange"),
    ("maxReplicas is the limit because maxReplicas < scaleUpLimit", 20, 1000, 1, 10, 10, "TooManyReplicas"),
    ("scaleUpLimit is the limit because scaleUpLimit < maxReplicas", 3, 1000, 1, 2000, 24, "ScaleUpLimit"),  # calculateScaleUpLimit(3) = max(8*3, 4)
]


@pytest.mark.parametrize("case", CONVERT, ids=[c[0] for c in CONVERT])
def test_convert_desired_replicas_with_rules(case):
    _, current, desired, lo, hi, expected, reason = case
    replicas, got_reason, _ = N.convert_with_rules(current, desired, lo, hi)
    assert (replicas, got_reason) == (expected, reason)
