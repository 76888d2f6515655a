"""The in-memory ports: the selection rules of the reconcile contract."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyhpa.adapters.label_index import LabelIndex
from pyhpa.adapters.memory import MemoryCluster, workload_selector_string
from pyhpa.api.selectors import Selector
from pyhpa.api.types import CrossVersionObjectReference
from pyhpa.controller.ports import ConflictError, MappingError, MetricsError, ScaleError
from pyhpa.controller.reconcile import run_sync

from tests.controller.builders import NOW, deployment, external_values, web_metrics, web_pod

APP = Selector.parse("app=web")
EVERYTHING = Selector.everything()
DEP = CrossVersionObjectReference(kind="Deployment", name="web", api_version="apps/v1")


def test_scale_from_workload_dict_and_rc_map():
    c = MemoryCluster(workloads=[
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ns"},
         "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web", "tier": "fe"}}}, "status": {"replicas": 2}},
        {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc", "namespace": "ns"},
         "spec": {"replicas": 1, "selector": {"b": "2", "a": "1"}}},
    ])
    s = run_sync(c.get_scale("ns", DEP))
    assert (s.spec.replicas, s.status.replicas, s.status.selector) == (3, 2, "app=web,tier=fe")
    s = run_sync(c.get_scale("ns", CrossVersionObjectReference(kind="ReplicationController", name="rc", api_version="v1")))
    assert s.status.selector == "a=1,b=2"


def test_scale_errors_and_update():
    c = MemoryCluster(workloads=[deployment(3)])
    with pytest.raises(ScaleError, match='deployments.apps "other" not found'):
        run_sync(c.get_scale("ns", CrossVersionObjectReference(kind="Deployment", name="other", api_version="apps/v1")))
    with pytest.raises(MappingError):
        run_sync(c.get_scale("ns", CrossVersionObjectReference(kind="CronJob", name="x", api_version="batch/v1")))
    s = run_sync(c.get_scale("ns", DEP))
    s.spec.replicas = 7
    run_sync(c.update_scale("ns", DEP, s))
    assert run_sync(c.get_scale("ns", DEP)).spec.replicas == 7
    with pytest.raises(ConflictError):  # stale resourceVersion
        run_sync(c.update_scale("ns", DEP, s))


def test_resource_metrics_selection():
    m2 = web_metrics(2, 100)
    m2.containers[0].usage = {"memory": m2.containers[0].usage["cpu"]}  # no cpu: left out (a missing pod)
    c = MemoryCluster(pod_metrics=[web_metrics(0, 100), web_metrics(1, 200, labels={"app": "other"}), m2])
    info, ts = run_sync(c.get_resource_metric("cpu", "ns", APP))
    assert sorted(info) == ["web-0"] and info["web-0"].value == 100 and info["web-0"].window == 30.0 and ts == NOW
    with pytest.raises(MetricsError, match="^no metrics returned from resource metrics API$"):
        run_sync(c.get_resource_metric("cpu", "other-ns", APP))
    info, _ = run_sync(c.get_resource_metric("cpu", "ns", APP, container="nope"))
    assert info == {}


def test_custom_pod_and_object_metrics():
    vals = [
        {"describedObject": {"kind": "Pod", "name": "web-0", "namespace": "ns"}, "metric": {"name": "qps", "selector": {"matchLabels": {"verb": "GET"}}}, "timestamp": "2026-01-01T12:00:00Z", "value": "5"},
        {"describedObject": {"kind": "Pod", "name": "web-9", "namespace": "ns"}, "metric": {"name": "qps"}, "timestamp": "2026-01-01T12:00:00Z", "value": "7"},
        {"describedObject": {"kind": "Ingress", "name": "main", "namespace": "ns"}, "metric": {"name": "hits"}, "timestamp": "2026-01-01T12:00:00Z", "value": "2k"},
        {"describedObject": {"kind": "Namespace", "name": "ns"}, "metric": {"name": "jobs"}, "value": "3"},
    ]
    c = MemoryCluster(pods=[web_pod(0)], metric_values=[{"items": vals}])
    info, _ = run_sync(c.get_raw_metric("qps", "ns", APP, EVERYTHING))  # web-9 is not a selected pod
    assert {k: v.value for k, v in info.items()} == {"web-0": 5000}
    assert info["web-0"].window == 60.0
    with pytest.raises(MetricsError, match="no metrics returned from custom metrics API"):
        run_sync(c.get_raw_metric("qps", "ns", APP, Selector.parse("verb=POST")))
    v, _ = run_sync(c.get_object_metric("hits", "ns", CrossVersionObjectReference(kind="Ingress", name="main"), EVERYTHING))
    assert v == 2_000_000
    v, _ = run_sync(c.get_object_metric("jobs", "ns", CrossVersionObjectReference(kind="Namespace", name="ignored", api_version="v1"), EVERYTHING))
    assert v == 3000
    with pytest.raises(MetricsError, match="^unable to fetch metrics from custom metrics API: "):
        run_sync(c.get_object_metric("hits", "ns", CrossVersionObjectReference(kind="Ingress", name="other"), EVERYTHING))


def test_external_metrics_namespace_and_labels():
    c = MemoryCluster(external_metrics=[
        external_values("q", ["1", "2"], labels={"queue": "a"}),
        external_values("q", ["10"], labels={"queue": "b"}, namespace="other"),
    ])
    vals, _ = run_sync(c.get_external_metric("q", "ns", EVERYTHING))
    assert vals == [1000, 2000]
    vals, _ = run_sync(c.get_external_metric("q", "other", Selector.parse("queue=b")))
    assert vals == [10000]
    with pytest.raises(MetricsError, match="^no metrics returned from external metrics API$"):
        run_sync(c.get_external_metric("q", "ns", Selector.parse("queue=b")))


def test_workload_selector_string_empty():
    assert workload_selector_string(deployment(1, labels=None)) == ""


def test_pods_and_metrics_are_replaced_per_namespace():
    c = MemoryCluster(pods=[web_pod(0), web_pod(1)], pod_metrics=[web_metrics(0, 100)])
    assert [p.metadata.name for p in run_sync(c.list_pods("ns", APP)).pods] == ["web-0", "web-1"]
    c.set_pods([web_pod(2)], "ns")
    listed = run_sync(c.list_pods("ns", APP))
    assert [p.metadata.name for p in listed.pods] == ["web-2"] and listed.candidates == ("web-2",)
    c.set_pod_metrics([])
    with pytest.raises(MetricsError, match="^no metrics returned from resource metrics API$"):
        run_sync(c.get_resource_metric("cpu", "ns", APP))
    c.resource_metrics_error = "injected"
    with pytest.raises(MetricsError, match="^injected$"):
        run_sync(c.get_resource_metric("cpu", "ns", APP))


def test_a_window_that_does_not_parse_fails_the_fetch_that_reads_it():
    bad = web_metrics(0, 100)
    bad.window = "thirty"
    c = MemoryCluster(pod_metrics=[bad])
    with pytest.raises(MetricsError, match="thirty"):
        run_sync(c.get_resource_metric("cpu", "ns", APP))
    info, _ = run_sync(c.get_resource_metric("gpu", "ns", APP))  # no value: the window is not read
    assert info == {}


label_sets = st.dictionaries(st.sampled_from(["app", "tier", "zone"]), st.sampled_from(["a", "b", "c"]), max_size=3)


@pytest.mark.parametrize("keep", [False, True])
@settings(max_examples=200, deadline=None)
@given(labels=st.lists(label_sets, max_size=40),
       selectors=st.lists(st.sampled_from(["app=a", "app=a,tier=b", "app in (a)", "app!=a", "tier", "!zone",
                                           "app=c,zone notin (a)", ""]), min_size=1, max_size=4))
def test_label_index_selects_what_testing_every_object_selects(keep, labels, selectors):
    # Past a few label sets the index narrows by a pinned label first: the same objects, in index
    # order; an index that keeps its selections answers a selector asked again the same way.
    index = LabelIndex(list(enumerate(labels)), lambda item: item[1], keep_selections=keep)
    for text in selectors + selectors:
        sel = Selector.parse(text)
        got = [item for g in index.select(sel) for item in g.items]
        assert sorted(got) == [item for item in enumerate(labels) if sel.matches(item[1])]
        # each group holds the objects of one label set, in their order
        for g in index.select(sel):
            assert all(item[1] == dict(g.labels) for item in g.items) and list(g.items) == sorted(g.items)
