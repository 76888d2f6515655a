"""Per-metric names, statuses and upstream's error wrapping (upstream's computeReplicasForMetric), and the combination."""

from __future__ import annotations

from pyhpa.api.quantity import Quantity
from pyhpa.api.types import (
    ContainerResourceMetricSource,
    CrossVersionObjectReference,
    ExternalMetricSource,
    LabelSelector,
    LabelSelectorRequirement,
    MetricIdentifier,
    MetricSpec,
    MetricTarget,
    ObjectMetricSource,
    PodsMetricSource,
    ResourceMetricSource,
)
from pyhpa.engine.calculator import Tolerances
from pyhpa.engine.config import ControllerConfig
from pyhpa.engine.metrics import MetricContext, MetricFetch, combine, compute_metric, go_label_selector

from .helpers import NOW, levels, pod_values, pods, resource_metrics


def ctx(current=3, status=3, plist=None):
    return MetricContext(
        namespace="ns", spec_replicas=current, status_replicas=status,
        pods=plist if plist is not None else pods(current, requests=["1"] * current),
        tolerances=Tolerances(), config=ControllerConfig(cpu_initialization_period=120, initial_readiness_delay=10), now=NOW,
    )


def qty(s):
    return Quantity.parse(s)


def obj_spec(target):
    return MetricSpec(type="Object", object=ObjectMetricSource(
        described_object=CrossVersionObjectReference(kind="Ingress", name="main", api_version="networking.k8s.io/v1"),
        target=target, metric=MetricIdentifier(name="hits")))


def test_go_label_selector_rendering():
    assert go_label_selector(None) == "nil"
    sel = LabelSelector(match_labels={"b": "2", "a": "1"}, match_expressions=[LabelSelectorRequirement(key="k", operator="In", values=["x", "y"])])
    assert go_label_selector(sel) == (
        "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},"
        "MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}"
    )


def test_resource_average_value_and_container_names():
    spec = MetricSpec(type="Resource", resource=ResourceMetricSource(name="cpu", target=MetricTarget(type="AverageValue", average_value=qty("500m"))))
    r = compute_metric(spec, MetricFetch(pod_metrics=resource_metrics(levels(500, 500, 500)), timestamp=NOW), ctx())
    assert (r.name, r.replicas, str(r.status.resource.current.average_value)) == ("cpu resource", 6, "1")
    spec = MetricSpec(type="ContainerResource", container_resource=ContainerResourceMetricSource(
        name="cpu", container="container1", target=MetricTarget(type="Utilization", average_utilization=50)))
    r = compute_metric(spec, MetricFetch(pod_metrics=resource_metrics(levels(500, 500, 500), "container1"), timestamp=NOW), ctx())
    assert r.name == "cpu container resource utilization (percentage of request)"
    assert (r.status.type, r.status.container_resource.container, r.status.container_resource.current.average_utilization) == ("ContainerResource", "container1", 50)


def test_container_missing_in_spec_fails_whole_metric():
    spec = MetricSpec(type="ContainerResource", container_resource=ContainerResourceMetricSource(
        name="cpu", container="sidecar", target=MetricTarget(type="Utilization", average_utilization=50)))
    r = compute_metric(spec, MetricFetch(pod_metrics=resource_metrics(levels(1, 1, 1)), timestamp=NOW), ctx())
    assert r.condition_reason == "FailedGetContainerResourceMetric"
    assert r.error == "failed to get sidecar container metric value: failed to get cpu utilization: container sidecar not found in Pod test-pod-0"


def test_resource_without_target():
    spec = MetricSpec(type="Resource", resource=ResourceMetricSource(name="memory", target=MetricTarget(type="Utilization")))
    r = compute_metric(spec, None, ctx())
    assert r.error == ("failed to get memory resource metric value: invalid resource metric source: "
                       "neither an average utilization target nor an average value (usage) target was set")


def test_pods_metric_errors_and_status():
    spec = MetricSpec(type="Pods", pods=PodsMetricSource(metric=MetricIdentifier(name="qps"), target=MetricTarget(type="AverageValue", average_value=qty("15"))))
    r = compute_metric(spec, MetricFetch(pod_metrics=pod_values([20000, 10000, 30000]), timestamp=NOW), ctx())
    assert (r.name, r.replicas, str(r.status.pods.current.average_value)) == ("pods metric qps", 4, "20")
    r = compute_metric(spec, MetricFetch(error="no metrics returned from custom metrics API"), ctx())
    assert r.error == "failed to get pods metric value: unable to get metric qps: no metrics returned from custom metrics API"
    assert r.condition_message == "the HPA was unable to compute the replica count: unable to get metric qps: no metrics returned from custom metrics API"


def test_object_value_and_average_value():
    r = compute_metric(obj_spec(MetricTarget(type="Value", value=qty("15"))), MetricFetch(value=20000, timestamp=NOW), ctx())
    assert (r.name, r.replicas, str(r.status.object.current.value)) == ("Ingress metric hits", 4, "20")
    assert r.status.object.described_object.name == "main"
    r = compute_metric(obj_spec(MetricTarget(type="AverageValue", average_value=qty("5"))), MetricFetch(value=20000, timestamp=NOW), ctx())
    assert (r.name, r.replicas, str(r.status.object.current.average_value)) == ("external metric hits(nil)", 4, "6667m")


def test_object_error_quirk():
    r = compute_metric(obj_spec(MetricTarget(type="Value", value=qty("15"))), MetricFetch(error="boom"), ctx())
    assert r.error == "failed to get object metric value: unable to get metric hits: Ingress on ns main/boom"
    r = compute_metric(obj_spec(MetricTarget(type="AverageValue", average_value=qty("5"))), MetricFetch(error="boom"), ctx())
    assert r.error == "failed to get object metric value: failed to get hits object metric: unable to get metric hits: Ingress on ns main/boom"
    r = compute_metric(obj_spec(MetricTarget(type="Utilization", average_utilization=5)), None, ctx())
    assert r.error == "failed to get object metric value: invalid object metric source: neither a value target nor an average value target was set"


def test_external_errors():
    def ext(target):
        return MetricSpec(type="External", external=ExternalMetricSource(metric=MetricIdentifier(name="q"), target=target))

    r = compute_metric(ext(MetricTarget(type="AverageValue", average_value=qty("1"))), MetricFetch(error="e"), ctx())
    assert r.error == "failed to get q external metric value: failed to get q external metric: unable to get external metric ns/q/nil: e"
    r = compute_metric(ext(MetricTarget(type="Value", value=qty("1"))), MetricFetch(selector_error="bad selector"), ctx())
    assert r.error == "failed to get q external metric value: failed to get external metric q: bad selector"
    r = compute_metric(ext(MetricTarget(type="Value")), None, ctx())
    assert r.error == "failed to get q external metric value: invalid external metric source: neither a value target nor an average value target was set"


def test_combine_takes_max_and_first_name_on_ties():
    cpu = MetricSpec(type="Resource", resource=ResourceMetricSource(name="cpu", target=MetricTarget(type="Utilization", average_utilization=50)))
    mem = MetricSpec(type="Resource", resource=ResourceMetricSource(name="cpu", target=MetricTarget(type="AverageValue", average_value=qty("1"))))
    f = MetricFetch(pod_metrics=resource_metrics(levels(1000, 1000, 1000)), timestamp=NOW)
    out = combine([cpu, mem], [f, f], ctx())
    assert (out.replicas, out.name, out.error) == (6, "cpu resource utilization (percentage of request)", None)
    assert [t.used for t in out.traces] == [True, False]
    assert out.condition.reason == "ValidMetricFound"


def test_combine_all_invalid():
    out = combine([MetricSpec(type="Foo"), MetricSpec(type="Bar")], [None, None], ctx())
    assert out.replicas == -1
    assert out.error == 'invalid metrics (2 invalid out of 2), first error is: unknown metric source type "Foo"'
    assert (out.condition.reason, out.condition.message) == ("InvalidMetricSourceType", 'the HPA was unable to compute the replica count: unknown metric source type "Foo"')
    assert [e[1] for e in out.events] == ["InvalidMetricSourceType", "InvalidMetricSourceType"]
    assert [s.type for s in out.statuses] == ["", ""]
