"""kubernetes/kubernetes pkg/controller/podautoscaler/replica_calculator_test.go and
metrics/utilization_test.go, case by case, as data: the project's one port of them.

Every row names the upstream test (and sub-test). The fixture is rebuilt the way upstream's fake
clients build it (pods ``test-pod-<i>`` with two containers that both request the listed CPU and
both report the listed level; custom values per pod; one object value; external series), put in a
``MemoryCluster``, fetched through the in-memory metrics client and ``fetch_metric``, and computed
by ``pyhpa.engine.metrics.compute_metric`` -- the same path a reconcile takes. Upstream's
defaults: tolerance 0.1, CPU initialization period 2 min, initial readiness delay 10 s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Sequence

import pytest

from pyhpa.adapters.memory import MemoryCluster
from pyhpa.api.features import FeatureGates
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
    LabelSelector,
    MetricIdentifier,
    MetricIdentifierView,
    MetricSpec,
    MetricTarget,
    MetricValue,
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
    ResourceRequirements,
)
from pyhpa.controller.fetch import fetch_metric
from pyhpa.controller.reconcile import run_sync
from pyhpa.engine.calculator import (
    Tolerances,
    _usage,
    _utilization,
    external_value_replicas,
    object_value_replicas,
    resource_utilization_replicas,
)
from pyhpa.engine.config import ControllerConfig
from pyhpa.engine.gomath import INT32_MAX, INT64_MAX
from pyhpa.engine.inputs import PodMetric
from pyhpa.engine.metrics import MetricContext, compute_metric
from pyhpa.engine.pods import ZERO_TIME, CalculationError, PodSet, group_pods, pod_requests

from .helpers import COOL, CPU_INIT, HOT, NOW, READINESS_DELAY, levels, pod, pods, resource_metrics

NS = "test-namespace"
LABELS = {"name": "test-pod"}
T, F = "True", "False"
DEFAULT_TOL = Tolerances(0.1, 0.1)
CONFIG = ControllerConfig(tolerance=0.1, cpu_initialization_period=CPU_INIT, initial_readiness_delay=READINESS_DELAY)
SOME_DEPLOYMENT = CrossVersionObjectReference(kind="Deployment", name="some-deployment", api_version="apps/v1")
LABEL_SELECTOR = LabelSelector(match_labels={"label": "value"})


def cpu(n: int, value: str) -> list[str]:
    return [value] * n


@dataclass
class Scenario:
    """calcScenario / replicaCalcTestCase: what the fake clients return."""

    current: int
    requests: Sequence[str] = ()
    levels: Sequence[Sequence[int]] | None = None  # resource levels [pod][container]
    pod_names: Sequence[str] = ()
    metric: Sequence[int] | None = None  # custom / object / external levels
    readiness: Sequence[str] | None = None
    start: Sequence[datetime] | None = None
    phase: Sequence[str] | None = None
    deleted: Sequence[bool] | None = None

    def pod_count(self) -> int:
        n = self.current
        if self.phase is not None and len(self.phase) > n:
            n = len(self.phase)
        return n

    def pods(self) -> list[PodView]:
        return [
            pod(
                f"test-pod-{i}",
                request=self.requests[i] if i < len(self.requests) else None,
                ready=self.readiness[i] if self.readiness is not None and i < len(self.readiness) else T,
                start=self.start[i] if self.start is not None else ZERO_TIME,
                phase=self.phase[i] if self.phase is not None else "Running",
                deleted=self.deleted is not None and self.deleted[i],
            )
            for i in range(self.pod_count())
        ]

    def cluster(self) -> MemoryCluster:
        pod_metrics = []
        for i, per_container in enumerate(self.levels or ()):
            containers = [
                ContainerMetrics(name=f"container{j + 1}", usage={"cpu": Quantity.from_milli(v)})
                for j, v in enumerate(per_container)
            ]
            containers += [ContainerMetrics() for _ in range(2 - len(containers))]  # Go zero values
            name = self.pod_names[i] if i < len(self.pod_names) else f"test-pod-{i}"
            pod_metrics.append(
                PodMetrics(metadata=ObjectMeta(name=name, namespace=NS, labels=dict(LABELS)), timestamp=ZERO_TIME, window="1m0s", containers=containers)
            )
        values = []
        external = []
        for i, v in enumerate(self.metric or ()):
            q = Quantity.from_milli(v)
            values.append(MetricValue(described_object=ObjectReferenceView(kind="Pod", name=f"test-pod-{i}", namespace=NS), metric=MetricIdentifierView(name="qps"), timestamp=ZERO_TIME, value=q))
            external.append(ExternalMetricValue(metric_name="qps", metric_labels={"label": "value"}, timestamp=ZERO_TIME, value=q))
        if self.metric:
            values.append(MetricValue(described_object=ObjectReferenceView(kind="Deployment", name="some-deployment", api_version="apps/v1"), metric=MetricIdentifierView(name="qps"), timestamp=ZERO_TIME, value=Quantity.from_milli(self.metric[0])))
        return MemoryCluster(
            pods=self.pods(),
            pod_metrics=pod_metrics,
            metric_values=values,
            external_metrics=[ExternalMetricValueList(items=external)] if external else [],
        )


def compute(spec: MetricSpec, sc: Scenario, tol: Tolerances = DEFAULT_TOL, gates: FeatureGates | None = None):
    """Fetch through the in-memory metrics client, then compute as a reconcile does."""
    c = sc.cluster()
    selector = Selector.parse("name=test-pod")
    pods = run_sync(c.list_pods(NS, selector))
    fetch = run_sync(fetch_metric(spec, c, NS, selector))
    config = CONFIG if gates is None else ControllerConfig(tolerance=0.1, cpu_initialization_period=120.0, initial_readiness_delay=10.0, gates=gates)
    ctx = MetricContext(namespace=NS, spec_replicas=sc.current, status_replicas=sc.current, pods=pods, tolerances=tol, config=config, now=NOW)
    return compute_metric(spec, fetch, ctx)


def cpu_utilization(target: int, container: str = "") -> MetricSpec:
    t = MetricTarget(type="Utilization", average_utilization=target)
    if container:
        return MetricSpec(type="ContainerResource", container_resource=ContainerResourceMetricSource(name="cpu", target=t, container=container))
    return MetricSpec(type="Resource", resource=ResourceMetricSource(name="cpu", target=t))


def pods_metric(target_milli: int) -> MetricSpec:
    return MetricSpec(type="Pods", pods=PodsMetricSource(metric=MetricIdentifier(name="qps"), target=MetricTarget(type="AverageValue", average_value=Quantity.from_milli(target_milli))))


def object_metric(target_milli: int, per_pod: bool = False) -> MetricSpec:
    q = Quantity.from_milli(target_milli)
    t = MetricTarget(type="AverageValue", average_value=q) if per_pod else MetricTarget(type="Value", value=q)
    return MetricSpec(type="Object", object=ObjectMetricSource(described_object=SOME_DEPLOYMENT, metric=MetricIdentifier(name="qps"), target=t))


def external_metric(target_milli: int, per_pod: bool = False) -> MetricSpec:
    q = Quantity.from_milli(target_milli)
    t = MetricTarget(type="AverageValue", average_value=q) if per_pod else MetricTarget(type="Value", value=q)
    return MetricSpec(type="External", external=ExternalMetricSource(metric=MetricIdentifier(name="qps", selector=LABEL_SELECTOR), target=t))


def _status_values(r) -> tuple[int | None, int | None]:
    """(utilization, milli value) of the one status entry a computation produced."""
    st = r.status
    src = st.resource or st.container_resource or st.pods or st.object or st.external
    cur = src.current
    q = cur.average_value if cur.average_value is not None else cur.value
    return cur.average_utilization, (q.milli_value() if q is not None else None)


# --------------------------------------------------------------------------- resource utilization

# (upstream test / sub-test, scenario, target, container, tolerances, (replicas, utilization, raw milli))
RESOURCE = [
    ("TestReplicaCalcResourceScale/scale up", Scenario(3, cpu(3, "1.0"), levels(300, 500, 700)), 30, "", None, (5, 50, 1000)),
    ("TestReplicaCalcResourceScale/scale up: container metric", Scenario(3, cpu(3, "1.0"), [[1000, 300], [1000, 500], [1000, 700]]), 30, "container2", None, (5, 50, 500)),
    ("TestReplicaCalcResourceScale/scale up: unready pod scales less", Scenario(3, cpu(3, "1.0"), levels(300, 500, 700), readiness=[F, T, T]), 30, "", None, (4, 60, 1200)),
    ("TestReplicaCalcResourceScale/scale up: hot-CPU container scales less", Scenario(3, cpu(3, "1.0"), [[0, 300], [0, 500], [0, 700]], start=[HOT, COOL, COOL]), 30, "container2", None, (4, 60, 600)),
    ("TestReplicaCalcResourceScale/scale up: hot-CPU pod scales less", Scenario(3, cpu(3, "1.0"), levels(300, 500, 700), start=[HOT, COOL, COOL]), 30, "", None, (4, 60, 1200)),
    ("TestReplicaCalcResourceScale/no scale: unready pods ignored", Scenario(3, cpu(3, "1.0"), levels(400, 500, 700), readiness=[T, F, F]), 30, "", None, (3, 40, 800)),
    ("TestReplicaCalcResourceScale/no scale: hot-CPU pods ignored", Scenario(3, cpu(3, "1.0"), levels(400, 500, 700), readiness=[T, F, F], start=[COOL, HOT, HOT]), 30, "", None, (3, 40, 800)),
    ("TestReplicaCalcResourceScale/scale up: failed pods ignored", Scenario(2, cpu(4, "1.0"), levels(500, 700), readiness=[T, T, F, F], phase=["Running", "Running", "Failed", "Failed"]), 30, "", None, (4, 60, 1200)),
    ("TestReplicaCalcResourceScale/scale up: failed pods ignored with missing container metric", Scenario(2, cpu(4, "1.0"), [[1000, 500], [9000, 700], [1000], [9000]], readiness=[T, T, F, F], phase=["Running", "Running", "Failed", "Failed"]), 30, "container2", None, (4, 60, 600)),
    ("TestReplicaCalcResourceScale/scale up: container metrics with failed pods ignored", Scenario(2, cpu(4, "1.0"), [[1000, 500], [9000, 700]], readiness=[T, T, F, F], phase=["Running", "Running", "Failed", "Failed"]), 30, "container2", None, (4, 60, 600)),
    ("TestReplicaCalcResourceScale/scale up: pods being deleted are ignored", Scenario(2, cpu(4, "1.0"), levels(500, 700), readiness=[T, T, F, F], phase=["Running"] * 4, deleted=[False, False, True, True]), 30, "", None, (4, 60, 1200)),
    ("TestReplicaCalcResourceScale/scale up: container metrics with pods being deleted ignored", Scenario(2, cpu(4, "1.0"), levels(500, 700), readiness=[T, T, F, F], phase=["Running"] * 4, deleted=[False, False, True, True]), 30, "container1", None, (4, 60, 600)),
    ("TestReplicaCalcResourceScale/scale down", Scenario(5, cpu(5, "1.0"), levels(100, 300, 500, 250, 250)), 50, "", None, (3, 28, 560)),
    ("TestReplicaCalcResourceScale/scale down: container metric", Scenario(5, cpu(5, "1.0"), [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]]), 50, "container2", None, (3, 28, 280)),
    ("TestReplicaCalcResourceScale/scale down: exclude unready pods", Scenario(5, cpu(5, "1.0"), levels(100, 300, 500, 250, 250), readiness=[T, T, T, F, F]), 50, "", None, (2, 30, 600)),
    ("TestReplicaCalcResourceScale/scale down: container metric excludes unready pods", Scenario(5, cpu(5, "1.0"), [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], readiness=[T, T, T, F, F]), 50, "container2", None, (2, 30, 300)),
    ("TestReplicaCalcResourceScale/scale down: exclude unscheduled pods", Scenario(5, cpu(5, "1.0"), levels(100), readiness=[T, F, F, F, F], phase=["Running"] + ["Pending"] * 4), 50, "", None, (1, 10, 200)),
    ("TestReplicaCalcResourceScale/scale down: container metric excludes unscheduled pods", Scenario(5, cpu(5, "1.0"), [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], readiness=[T, F, F, F, F], phase=["Running"] + ["Pending"] * 4), 50, "container2", None, (1, 10, 100)),
    ("TestReplicaCalcResourceScale/scale down: ignore hot-CPU pods", Scenario(5, cpu(5, "1.0"), levels(100, 300, 500, 250, 250), start=[COOL, COOL, COOL, HOT, HOT]), 50, "", None, (2, 30, 600)),
    ("TestReplicaCalcResourceScale/scale down: container metric ignores hot-CPU pods", Scenario(5, cpu(5, "1.0"), [[1000, 100], [1000, 300], [1000, 500], [1000, 1000], [1000, 1000]], start=[COOL, COOL, COOL, HOT, HOT]), 50, "container2", None, (2, 30, 300)),
    ("TestReplicaCalcResourceScale/scale down: failed pods ignored", Scenario(5, cpu(7, "1.0"), levels(100, 300, 500, 250, 250), readiness=[T] * 5 + [F, F], phase=["Running"] * 5 + ["Failed"] * 2), 50, "", None, (3, 28, 560)),
    ("TestReplicaCalcResourceScale/scale down: container metric with failed pods ignored", Scenario(5, cpu(7, "1.0"), [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], readiness=[T] * 5 + [F, F], phase=["Running"] * 5 + ["Failed"] * 2), 50, "container2", None, (3, 28, 280)),
    ("TestReplicaCalcResourceScale/scale down: pods being deleted are ignored", Scenario(5, cpu(7, "1.0"), levels(100, 300, 500, 250, 250), readiness=[T] * 5 + [F, F], phase=["Running"] * 7, deleted=[False] * 5 + [True] * 2), 50, "", None, (3, 28, 560)),
    ("TestReplicaCalcResourceScale/scale down: still-running pods being deleted are ignored", Scenario(5, cpu(7, "1.0"), [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], readiness=[T] * 5 + [F, F], phase=["Running"] * 7, deleted=[False] * 5 + [True] * 2), 50, "container2", None, (3, 28, 280)),
    ("TestReplicaCalcTolerance", Scenario(3, ["0.9", "1.0", "1.1"], levels(1010, 1030, 1020)), 100, "", None, (3, 102, 2040)),
    ("TestReplicaCalcConfigurableTolerance/Outside of a 0% tolerance", Scenario(3, ["0.9", "1.0", "1.1"], levels(909, 1010, 1111)), 100, "", Tolerances(0.0, 0.0), (4, 101, 2020)),
    ("TestReplicaCalcConfigurableTolerance/Within a 200% scale-up tolerance", Scenario(3, ["0.9", "1.0", "1.1"], levels(1890, 1910, 1900)), 100, "", Tolerances(0.1, 2.0), (3, 190, 3800)),
    ("TestReplicaCalcConfigurableTolerance/Outside 8% scale-up tolerance (and superfuous scale-down tolerance)", Scenario(3, ["0.9", "1.0", "1.1"], levels(1100, 1080, 1090)), 100, "", Tolerances(2.0, 0.08), (4, 109, 2180)),
    ("TestReplicaCalcConfigurableTolerance/Within a 36% scale-down tolerance", Scenario(3, ["0.9", "1.0", "1.1"], levels(660, 640, 650)), 100, "", Tolerances(0.36, 0.1), (3, 65, 1300)),
    ("TestReplicaCalcConfigurableTolerance/Outside a 34% scale-down tolerance", Scenario(3, ["0.9", "1.0", "1.1"], levels(660, 640, 650)), 100, "", Tolerances(0.34, 0.1), (2, 65, 1300)),
    ("TestReplicaCalcSuperfluousMetrics", Scenario(4, cpu(4, "1.0"), levels(4000, 9500, 3000, 7000, 3200, 2000)), 100, "", None, (24, 587, 11750)),
    ("TestReplicaCalcMissingMetrics", Scenario(4, cpu(4, "1.0"), levels(400, 95)), 100, "", None, (3, 24, 495)),
    ("TestReplicaCalcMissingMetricsNoChangeEq", Scenario(2, cpu(2, "1.0"), levels(1000)), 100, "", None, (2, 100, 2000)),
    ("TestReplicaCalcMissingMetricsNoChangeGt", Scenario(2, cpu(2, "1.0"), levels(1900)), 100, "", None, (2, 190, 3800)),
    ("TestReplicaCalcMissingMetricsNoChangeLt", Scenario(2, cpu(2, "1.0"), levels(600)), 100, "", None, (2, 60, 1200)),
    ("TestReplicaCalcMissingMetricsUnreadyChange", Scenario(3, cpu(3, "1.0"), levels(100, 450), readiness=[F, T, T]), 50, "", None, (3, 45, 900)),
    ("TestReplicaCalcMissingMetricsHotCpuNoChange", Scenario(3, cpu(3, "1.0"), levels(100, 450), start=[HOT, COOL, COOL]), 50, "", None, (3, 45, 900)),
    ("TestReplicaCalcMissingMetricsUnreadyScaleUp", Scenario(3, cpu(3, "1.0"), levels(100, 2000), readiness=[F, T, T]), 50, "", None, (4, 200, 4000)),
    ("TestReplicaCalcMissingMetricsHotCpuScaleUp", Scenario(3, cpu(3, "1.0"), levels(100, 2000), readiness=[F, T, T], start=[HOT, COOL, COOL]), 50, "", None, (4, 200, 4000)),
    ("TestReplicaCalcMissingMetricsUnreadyScaleDown", Scenario(4, cpu(4, "1.0"), levels(100, 100, 100), readiness=[F, T, T, T]), 50, "", None, (3, 10, 200)),
    ("TestReplicaCalcMissingMetricsScaleDownTargetOver100", Scenario(4, ["1.0", "1.0", "2.0", "2.0"], levels(200, 100, 100), readiness=[F, T, T, T]), 300, "", None, (2, 6, 200)),
    ("TestReplicaCalcDuringRollingUpdateWithMaxSurge", Scenario(2, cpu(3, "1.0"), levels(100, 100), phase=["Running"] * 3), 50, "", None, (2, 10, 200)),
]


@pytest.mark.parametrize("case", RESOURCE, ids=[c[0] for c in RESOURCE])
def test_resource_utilization(case):
    _, sc, target, container, tol, expected = case
    r = compute(cpu_utilization(target, container), sc, tol or DEFAULT_TOL)
    assert r.error is None
    util, raw = _status_values(r)
    assert (r.replicas, util, raw) == expected
    assert r.timestamp == ZERO_TIME  # the samples' timestamp is passed through


def test_computed_tolerance_alg_implementation():
    """TestReplicaCalcComputedToleranceAlgImplementation: targets back-computed from the tolerance."""
    start_pods = 10
    used = start_pods * 150
    requested = 2 * used
    requested_to_used = float(requested // used)
    per_pod = requested // start_pods
    offsets = [100, -100, 10, -10, 2, -2, 1, -1, 0, 0]
    sc = Scenario(start_pods, [f"{per_pod + o}m" for o in offsets], levels(*[used // 10] * 10))
    target = abs(1 / (requested_to_used * (1 - 0.1))) + 0.01
    final_pods = math.ceil(float(used) / (float(requested) * target) * start_pods)
    r = compute(cpu_utilization(int(target * 100)), sc)
    assert (r.replicas, _status_values(r)) == (final_pods, ((used * 100) // requested, 2 * used // 10))
    target = abs(1 / (requested_to_used * (1 - 0.1))) + 0.004
    r = compute(cpu_utilization(int(target * 100)), sc)
    assert r.replicas == start_pods


# (upstream test, scenario, spec, substring upstream asserts)
RESOURCE_ERRORS = [
    ("TestReplicaCalcDisjointResourcesMetrics", Scenario(1, ["1.0"], levels(100), pod_names=["an-older-pod-name"]), cpu_utilization(100), "no metrics returned matched known pods"),
    ("TestReplicaCalcEmptyMetrics", Scenario(4, cpu(3, "1.0"), levels()), cpu_utilization(100), "unable to get metrics for resource cpu: no metrics returned from resource metrics API"),
    ("TestReplicaCalcEmptyCPURequest", Scenario(1, [], levels(200)), cpu_utilization(100), "missing request for cpu in container container1 of Pod test-pod-0"),
]


@pytest.mark.parametrize("case", RESOURCE_ERRORS, ids=[c[0] for c in RESOURCE_ERRORS])
def test_resource_errors(case):
    _, sc, spec, text = case
    r = compute(spec, sc)
    assert r.error is not None and text in r.error


def test_fetched_metrics_are_not_mutated():
    plist = pods(3, requests=["1.0"] * 3, readiness=[F, T, T])
    fetched = resource_metrics(levels(100, 2000))
    before = dict(fetched)
    resource_utilization_replicas(3, 50, "cpu", DEFAULT_TOL, fetched, plist, "", CPU_INIT, READINESS_DELAY, NOW)
    assert fetched == before


def test_no_pods_and_all_unready_errors():
    with pytest.raises(CalculationError, match="^no pods returned by selector while calculating replica count$"):
        resource_utilization_replicas(1, 50, "cpu", DEFAULT_TOL, resource_metrics(levels(1)), [], "", CPU_INIT, READINESS_DELAY, NOW)
    plist = pods(2, requests=["1.0"] * 2, readiness=[F, F])
    with pytest.raises(CalculationError, match=r"^did not receive metrics for targeted pods \(pods might be unready\)$"):
        resource_utilization_replicas(2, 50, "cpu", DEFAULT_TOL, resource_metrics(levels(100, 100)), plist, "", CPU_INIT, READINESS_DELAY, NOW)


# --------------------------------------------------------------------------- custom, object, external

# (upstream test, scenario, spec, tolerances, (replicas, usage milli))
METRIC = [
    ("TestReplicaCalcScaleUpOverflow", Scenario(3, metric=[INT64_MAX]), object_metric(1), None, (INT32_MAX, INT64_MAX)),
    ("TestExternalPerPodMetricReplicaOverflow", Scenario(1, metric=[INT64_MAX]), external_metric(1, per_pod=True), None, (INT32_MAX, INT64_MAX)),
    ("TestExternalPerPodMetricUsageOverflow", Scenario(1, metric=[INT64_MAX]), external_metric(INT64_MAX, per_pod=True), None, (1, INT64_MAX)),
    ("TestReplicaCalcScaleUpCM", Scenario(3, metric=[20000, 10000, 30000]), pods_metric(15000), None, (4, 20000)),
    ("TestReplicaCalcScaleUpCMUnreadyHotCpuNoLessScale", Scenario(3, metric=[50000, 10000, 30000], readiness=[T, T, F], start=[COOL, COOL, HOT]), pods_metric(15000), None, (6, 30000)),
    ("TestReplicaCalcScaleUpCMUnreadyHotCpuScaleWouldScaleDown", Scenario(3, metric=[50000, 15000, 30000], readiness=[F, T, F], start=[HOT, COOL, HOT]), pods_metric(15000), None, (7, 31666)),
    ("TestReplicaCalcScaleUpCMObject", Scenario(3, metric=[20000]), object_metric(15000), None, (4, 20000)),
    ("TestReplicaCalcScaleUpCMPerPodObject", Scenario(3, metric=[20000]), object_metric(5000, per_pod=True), None, (4, 6667)),
    ("TestReplicaCalcScaleUpCMObjectIgnoresUnreadyPods", Scenario(3, metric=[50000], readiness=[F, T, F]), object_metric(10000), None, (5, 50000)),
    ("TestReplicaCalcScaleUpCMExternalIgnoresUnreadyPods", Scenario(3, metric=[8600], readiness=[F, T, F]), external_metric(4400), None, (2, 8600)),
    ("TestReplicaCalcScaleUpPerPodCMExternal", Scenario(3, metric=[8600]), external_metric(2150, per_pod=True), None, (4, 2867)),
    ("TestReplicaCalcScaleDownCM", Scenario(5, metric=[12000] * 5), pods_metric(20000), None, (3, 12000)),
    ("TestReplicaCalcScaleDownPerPodCMObject", Scenario(5, metric=[6000]), object_metric(2000, per_pod=True), None, (3, 1200)),
    ("TestReplicaCalcScaleDownCMObject", Scenario(5, metric=[12000]), object_metric(20000), None, (3, 12000)),
    ("TestReplicaCalcScaleDownCMExternal", Scenario(5, metric=[8600]), external_metric(14334), None, (3, 8600)),
    ("TestReplicaCalcScaleDownPerPodCMExternal", Scenario(5, metric=[8600]), external_metric(2867, per_pod=True), None, (3, 1720)),
    ("TestReplicaCalcToleranceCM", Scenario(3, metric=[20000, 21000, 21000]), pods_metric(20000), None, (3, 20666)),
    ("TestReplicaCalcToleranceCMObject", Scenario(3, metric=[20666]), object_metric(20000), None, (3, 20666)),
    ("TestReplicaCalcTolerancePerPodCMObject", Scenario(4, metric=[20166]), object_metric(5000, per_pod=True), None, (4, 5042)),
    ("TestReplicaCalcToleranceCMExternal", Scenario(3, metric=[8600]), external_metric(8888), None, (3, 8600)),
    ("TestReplicaCalcTolerancePerPodCMExternal", Scenario(3, metric=[8600]), external_metric(2900, per_pod=True), None, (3, 2867)),
    ("TestReplicaCalcConfigurableToleranceCM", Scenario(3, metric=[20000, 21000, 21000]), pods_metric(20000), Tolerances(0.1, 0.01), (4, 20666)),
    ("TestReplicaCalcConfigurableToleranceCMObject", Scenario(3, metric=[20666]), object_metric(20000), Tolerances(0.1, 0.01), (4, 20666)),
    ("TestReplicaCalcConfigurableTolerancePerPodCMObject", Scenario(4, metric=[20208]), object_metric(5000, per_pod=True), Tolerances(0.1, 0.01), (5, 5052)),
    ("TestReplicaCalcConfigurableToleranceCMExternal", Scenario(3, metric=[8900]), external_metric(8800), Tolerances(0.1, 0.01), (4, 8900)),
    ("TestReplicaCalcConfigurableTolerancePerPodCMExternal", Scenario(3, metric=[8600]), external_metric(2800, per_pod=True), Tolerances(0.1, 0.01), (4, 2867)),
    ("TestPlainMetricReplicaCalcMissingMetricsNoChangeEq", Scenario(5, metric=[20000, 19000, 21000]), pods_metric(20000), None, (5, 20000)),
    ("TestReplicaCalcDuringRollingUpdateWithMaxSurgeCM", Scenario(2, metric=[10000, 10000], phase=["Running"] * 3), pods_metric(17000), None, (2, 10000)),
    ("TestReplicaCalcExternalMetricUsageOverflow", Scenario(3, metric=[INT64_MAX // 2 + 1, INT64_MAX // 2 + 1]), external_metric(INT64_MAX), None, (3, INT64_MAX)),
]


@pytest.mark.parametrize("case", METRIC, ids=[c[0] for c in METRIC])
def test_metric_sources(case):
    _, sc, spec, tol, expected = case
    r = compute(spec, sc, tol or DEFAULT_TOL)
    assert r.error is None
    assert (r.replicas, _status_values(r)[1]) == expected


def test_value_targets_from_zero_ignore_tolerance_and_pods():
    # current replicas 0: ceil(ratio), no tolerance, no pod listing (scale from zero)
    assert object_value_replicas(0, 1050, 1000, DEFAULT_TOL, []).replicas == 2
    assert external_value_replicas(0, [0], 1000, DEFAULT_TOL, []).replicas == 0
    assert external_value_replicas(0, [400, 300], 1000, DEFAULT_TOL, []).replicas == 1


def test_value_target_needs_pods_outside_tolerance():
    with pytest.raises(CalculationError, match="^unable to calculate ready pods: no pods returned by selector"):
        object_value_replicas(3, 50000, 10000, DEFAULT_TOL, [])
    # within tolerance no pods are needed
    assert object_value_replicas(3, 10000, 10000, DEFAULT_TOL, []).replicas == 3


# --------------------------------------------------------------------------- groupPods

MIN = timedelta(minutes=1)


def _gp(name, phase, start=None, ready=None, transition=None, deleted=False):
    conds = [PodCondition(type="Ready", status=ready, last_transition_time=transition)] if ready else None
    return PodView(
        metadata=ObjectMeta(name=name, deletion_timestamp=datetime(1970, 1, 1, 0, 0, 1, tzinfo=timezone.utc) if deleted else None),
        status=PodStatusView(phase=phase, start_time=start, conditions=conds),
    )


def _pm(ts=ZERO_TIME, window=0.0):
    return PodMetric(1, ts, window)


# (TestGroupPods sub-test, pods, metrics, resource, (ready, unready, missing, ignored))
GROUP_PODS = [
    ("void", [], {}, "cpu", (0, set(), set(), set())),
    ("count in a ready pod - memory", [_gp("bentham", "Succeeded")], {"bentham": _pm(NOW, 60)}, "memory", (1, set(), set(), set())),
    ("unready a pod without ready condition - CPU", [_gp("lucretius", "Succeeded", NOW)], {"lucretius": _pm()}, "cpu", (0, {"lucretius"}, set(), set())),
    ("count in a ready pod with fresh metrics during initialization period - CPU", [_gp("bentham", "Succeeded", NOW - MIN, T, NOW - 30 * timedelta(seconds=1))], {"bentham": _pm(NOW, 30)}, "cpu", (1, set(), set(), set())),
    ("unready a ready pod without fresh metrics during initialization period - CPU", [_gp("bentham", "Succeeded", NOW - MIN, T, NOW - timedelta(seconds=30))], {"bentham": _pm(NOW, 60)}, "cpu", (0, {"bentham"}, set(), set())),
    ("unready an unready pod during initialization period - CPU", [_gp("lucretius", "Succeeded", NOW - 10 * MIN, F, NOW - 9 * MIN - timedelta(seconds=54))], {"lucretius": _pm()}, "cpu", (0, {"lucretius"}, set(), set())),
    ("count in a ready pod without fresh metrics after initialization period - CPU", [_gp("bentham", "Succeeded", NOW - 3 * MIN, T, NOW - 3 * MIN)], {"bentham": _pm(NOW - 2 * MIN, 60)}, "cpu", (1, set(), set(), set())),
    ("count in an unready pod that was ready after initialization period - CPU", [_gp("lucretius", "Succeeded", NOW - 10 * MIN, F, NOW - 9 * MIN)], {"lucretius": _pm()}, "cpu", (1, set(), set(), set())),
    ("unready pod that has never been ready after initialization period - CPU", [_gp("lucretius", "Succeeded", NOW - 10 * MIN, F, NOW - 9 * MIN - timedelta(seconds=50))], {"lucretius": _pm()}, "cpu", (1, set(), set(), set())),
    ("a missing pod", [_gp("epicurus", "Succeeded", NOW - 3 * MIN)], {}, "cpu", (0, set(), {"epicurus"}, set())),
    (
        "several pods",
        [_gp("lucretius", "Succeeded", NOW), _gp("niccolo", "Succeeded", NOW - 3 * MIN, T, NOW - 3 * MIN), _gp("epicurus", "Succeeded", NOW - 3 * MIN)],
        {"lucretius": _pm(), "niccolo": _pm()},
        "cpu",
        (1, {"lucretius"}, {"epicurus"}, set()),
    ),
    ("pending pods are unreadied", [_gp("unscheduled", "Pending")], {}, "cpu", (0, {"unscheduled"}, set(), set())),
    ("ignore pods with deletion timestamps", [_gp("deleted", "Pending", deleted=True)], {"deleted": _pm()}, "cpu", (0, set(), set(), {"deleted"})),
    ("ignore pods in a failed state", [_gp("failed", "Failed")], {"failed": _pm()}, "cpu", (0, set(), set(), {"failed"})),
]


@pytest.mark.parametrize("case", GROUP_PODS, ids=[c[0] for c in GROUP_PODS])
def test_group_pods(case):
    """TestGroupPods (CPU initialization period 2 min, readiness delay 10 s)."""
    _, plist, metrics, resource, expected = case
    g = group_pods(PodSet.of(plist), metrics, resource, 120.0, 10.0, NOW)
    assert (g.ready_count, set(g.unready), set(g.missing), set(g.ignored)) == expected


# --------------------------------------------------------------------------- calculateRequests


def _req_pod(containers, init=None, pod_level: str | None = None):
    def c(name, milli, restart=None):
        res = ResourceRequirements(requests={"cpu": Quantity.from_milli(milli)}) if milli is not None else None
        return ContainerView(name=name, resources=res, restart_policy=restart)

    return PodView(
        metadata=ObjectMeta(name="test-pod", namespace=NS),
        spec=PodSpecView(
            containers=[c(*x) for x in containers],
            init_containers=[c(*x) for x in init] if init else None,
            resources=ResourceRequirements(requests={"cpu": Quantity.from_milli(int(pod_level))}) if pod_level else None,
        ),
    )


TWO = [("container1", 100), ("container2", 50)]
# (TestCalculateRequests sub-test, pods, container, PodLevelResources gate, expected requests or error text)
CALCULATE_REQUESTS = [
    ("void", [], "", False, {}),
    ("Sum container requests if pod-level feature is disabled", [_req_pod(TWO)], "", False, {"test-pod": 150}),
    ("Pod-level resources are enabled, but not set: fallback to sum container requests", [_req_pod(TWO)], "", True, {"test-pod": 150}),
    ("Pod-level resources override container requests when feature enabled and pod resources specified", [_req_pod(TWO, pod_level="800")], "", True, {"test-pod": 800}),
    ("Fail if at least one of the containers is missing requests and pod-level feature/requests are not set", [_req_pod([("container1", None), ("container2", 50)])], "", False, "missing request for cpu in container container1 of Pod test-pod"),
    ("Pod-level resources override missing container requests when feature enabled and pod resources specified", [_req_pod([("container1", None), ("container2", 50)], pod_level="800")], "", True, {"test-pod": 800}),
    ("Container: if a container name is specified, calculate requests only for that container", [_req_pod(TWO)], "container1", False, {"test-pod": 100}),
    ("Container: if a container name is specified, calculate requests only for that container and ignore pod-level requests", [_req_pod(TWO, pod_level="800")], "container1", True, {"test-pod": 100}),
    ("pod with restartable init containers", [_req_pod([("container1", 100)], init=[("init-container1", 20), ("restartable-container1", 50, "Always")])], "", False, {"test-pod": 150}),
    # TestCalculatePodRequestsFromContainers_NonExistentContainer
    ("NonExistentContainer", [_req_pod([("container1", 100)])], "non-existent-container", False, "container non-existent-container not found in Pod test-pod"),
]


@pytest.mark.parametrize("case", CALCULATE_REQUESTS, ids=[c[0] for c in CALCULATE_REQUESTS])
def test_calculate_requests(case):
    _, plist, container, pod_level, expected = case
    if isinstance(expected, str):
        with pytest.raises(CalculationError) as err:
            pod_requests(PodSet.of(plist), "cpu", container, pod_level)
        assert str(err.value) == expected
    else:
        assert pod_requests(PodSet.of(plist), "cpu", container, pod_level) == expected


# --------------------------------------------------------------------------- metrics/utilization_test.go

UTILIZATION = [
    ("TestGetResourceUtilizationRatioBaseCase", {"test-pod-0": 50, "test-pod-1": 76}, {"test-pod-0": 100, "test-pod-1": 100}, (1.26, 63, 63)),
    ("TestGetResourceUtilizationRatioIgnorePodsWithNoRequest", {"test-pod-0": 50, "test-pod-1": 76, "test-pod-no-request": 100}, {"test-pod-0": 100, "test-pod-1": 100}, (1.26, 63, 63)),
    ("TestGetResourceUtilizationRatioExtraRequest", {"test-pod-0": 50, "test-pod-1": 76}, {"test-pod-0": 100, "test-pod-1": 100, "test-pod-extra-request": 500}, (1.26, 63, 63)),
    ("TestGetResourceUtilizationRatioNoRequests", {"test-pod-0": 50, "test-pod-1": 76}, {}, "no metrics returned matched known pods"),
]


@pytest.mark.parametrize("case", UTILIZATION, ids=[c[0] for c in UTILIZATION])
def test_resource_utilization_ratio(case):
    _, values, requests, expected = case
    metrics = {k: PodMetric(v, ZERO_TIME) for k, v in values.items()}
    if isinstance(expected, str):
        with pytest.raises(CalculationError, match=expected):
            _utilization(metrics, requests, 50)
    else:
        assert _utilization(metrics, requests, 50) == expected


def test_metric_usage_ratio_base_case():
    """TestGetMetricUsageRatioBaseCase."""
    metrics = {"test-pod-0": PodMetric(5000, ZERO_TIME), "test-pod-1": PodMetric(10000, ZERO_TIME)}
    assert _usage(metrics, 10000) == (0.75, 7500)


# --------------------------------------------------------------------------- buildQuantity (horizontal_test.go)

# TestBuildQuantity: (sub-test, resource, raw milli proposal, expected canonical text, format)
BUILD_QUANTITY = [
    ("Memory - 1000 bytes -> 1Ki", "memory", 1000, "1", "BinarySI"),
    ("Memory - 1000000 bytes -> 1000Ki", "memory", 1000000, "1k", "BinarySI"),
    ("CPU - 100 milli-cores", "cpu", 100, "100m", "DecimalSI"),
    ("CPU - 500 milli-cores", "cpu", 500, "500m", "DecimalSI"),
    ("CPU - 1 milli-core", "cpu", 1, "1m", "DecimalSI"),
    ("CustomResource - 200 milli-units", "custom-resource", 200, "200m", "DecimalSI"),
    ("CustomResource - 300 milli-units", "custom-resource", 300, "300m", "DecimalSI"),
]


@pytest.mark.parametrize("case", BUILD_QUANTITY, ids=[c[0] for c in BUILD_QUANTITY])
def test_build_quantity(case):
    """Resource statuses: memory in BinarySI, everything else DecimalSI (horizontal.go buildQuantity)."""
    _, resource, raw, text, fmt = case
    usage = {resource: Quantity.from_milli(raw)}
    sc = Scenario(1, [], None)
    c = sc.cluster()
    c.set_pods([PodView(
        metadata=ObjectMeta(name="test-pod-0", namespace=NS, labels=dict(LABELS)),
        spec=PodSpecView(containers=[ContainerView(name="c", resources=ResourceRequirements(requests={resource: Quantity.from_milli(raw)}))]),
        status=PodStatusView(phase="Running", start_time=COOL - timedelta(hours=1), conditions=[PodCondition(type="Ready", status=T, last_transition_time=COOL - timedelta(hours=1))]),
    )])
    c.set_pod_metrics([PodMetrics(metadata=ObjectMeta(name="test-pod-0", namespace=NS, labels=dict(LABELS)), timestamp=NOW, window="1m0s", containers=[ContainerMetrics(name="c", usage=usage)])])
    selector = Selector.parse("name=test-pod")
    for target in (MetricTarget(type="Utilization", average_utilization=100), MetricTarget(type="AverageValue", average_value=Quantity.from_milli(raw))):
        spec = MetricSpec(type="Resource", resource=ResourceMetricSource(name=resource, target=target))
        fetch = run_sync(fetch_metric(spec, c, NS, selector))
        ctx = MetricContext(namespace=NS, spec_replicas=1, status_replicas=1, pods=run_sync(c.list_pods(NS, selector)), tolerances=DEFAULT_TOL, config=CONFIG, now=NOW)
        r = compute_metric(spec, fetch, ctx)
        q = r.status.resource.current.average_value
        assert (q.milli_value(), str(q), q.format) == (raw, text, fmt)

