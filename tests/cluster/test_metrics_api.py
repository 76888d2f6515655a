"""The three metrics APIs over HTTP (ASGI, no sockets), fed by a simulation with an injected clock."""

from __future__ import annotations

import pytest

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.controllers import metrics_server
from tests import builders
from tests.cluster.simulated import simulated

NS = "default"
T0 = 1_000_000.0  # a multiple of the resolution: scrapes at T0 + 5k


@pytest.fixture
def env(tmp_path):
    with simulated(tmp_path, T0, metrics_server.install, resolution=5.0, window=15.0) as c:
        yield c.store, c.sim, c.client, c.at


def deployment(name: str, replicas: int, annotations: dict[str, str], containers: int = 1) -> dict:
    """``containers`` containers c0, c1, ... each requesting 500m."""
    return builders.deployment(name, replicas, namespace=NS, annotations=annotations,
                               containers=[builders.container(f"c{i}", cpu="500m") for i in range(containers)])


def set_annotation(store, name: str, key: str, value: str) -> None:
    def f(o):
        o["metadata"].setdefault("annotations", {})[key] = value
    store.guaranteed_update(R.DEPLOYMENTS.key, NS, name, f)


PODS = "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"
CUSTOM = "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default"
EXTERNAL = "/apis/external.metrics.k8s.io/v1beta1/namespaces/default"


def test_discovery_lists_the_metrics_groups(env):
    store, sim, client, at = env
    groups = client.get("/apis", headers={"Accept": "application/json"}).json()["groups"]
    by_name = {g["name"]: g for g in groups}
    assert by_name["metrics.k8s.io"]["preferredVersion"]["version"] == "v1beta1"
    assert [v["version"] for v in by_name["custom.metrics.k8s.io"]["versions"]] == ["v1beta2", "v1beta1"]
    assert "external.metrics.k8s.io" in by_name and "pyhpa.io" in by_name
    res = client.get("/apis/metrics.k8s.io/v1beta1").json()["resources"]
    assert {(r["name"], r["kind"], r["namespaced"]) for r in res} == {
        ("pods", "PodMetrics", True), ("nodes", "NodeMetrics", False)}


def test_pod_metrics_average_usage_over_the_window(env):
    store, sim, client, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 2, {"sim.pyhpa.io/cpu": "600m",
                                                          "sim.pyhpa.io/memory": "64Mi"}))
    at(0)
    at(19)
    # the scrape at T0 came before the pods: the first full 15s window is T0+5..T0+20
    assert client.get(PODS).json()["items"] == []
    at(20)
    body = client.get(PODS).json()
    assert body["kind"] == "PodMetricsList" and body["apiVersion"] == "metrics.k8s.io/v1beta1"
    assert len(body["items"]) == 2
    for item in body["items"]:
        assert item["window"] == "15s"
        assert item["timestamp"] == "1970-01-12T13:47:00Z"  # T0 + 20, on the scrape grid
        assert item["containers"] == [{"name": "c0", "usage": {"cpu": "300m", "memory": "64Mi"}}]
        assert item["metadata"]["labels"]["app"] == "web"
    # demand doubles at T0+20: the window ending at T0+25 averages 10s old + 5s new
    at(20)
    set_annotation(store, "web", "sim.pyhpa.io/cpu", "1200m")
    at(20)
    at(27)  # still reports the T0+25 scrape
    usage = client.get(PODS).json()["items"][0]["containers"][0]["usage"]["cpu"]
    assert usage == "400m"  # (10s * 300m + 5s * 600m) / 15s
    at(35)
    assert client.get(PODS).json()["items"][0]["containers"][0]["usage"]["cpu"] == "600m"


def test_pod_metrics_selectors_single_get_and_not_found(env):
    store, sim, client, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 1, {"sim.pyhpa.io/cpu": "100m"}))
    store.create(R.DEPLOYMENTS.key, deployment("api", 1, {"sim.pyhpa.io/cpu": "200m"}, containers=2))
    at(0)
    at(20)
    names = [i["metadata"]["name"] for i in client.get(PODS, params={"labelSelector": "app=api"}).json()["items"]]
    assert len(names) == 1 and names[0].startswith("api-")
    one = client.get(f"{PODS}/{names[0]}").json()
    assert one["kind"] == "PodMetrics" and one["metadata"]["name"] == names[0]
    assert [c["usage"]["cpu"] for c in one["containers"]] == ["100m", "100m"]
    all_ns = client.get("/apis/metrics.k8s.io/v1beta1/pods").json()["items"]
    assert len(all_ns) == 2
    r = client.get(f"{PODS}/nope")
    assert r.status_code == 404 and r.json()["reason"] == "NotFound"
    assert r.json()["message"] == 'podmetrics.metrics.k8s.io "default/nope" not found'
    r = client.get("/apis/metrics.k8s.io/v1beta1/nodes/nope")
    assert r.status_code == 404 and r.json()["message"] == 'nodemetrics.metrics.k8s.io "nope" not found'
    one_node = client.get("/apis/metrics.k8s.io/v1beta1/nodes/pyhpa-node").json()
    assert one_node["kind"] == "NodeMetrics" and one_node["apiVersion"] == "metrics.k8s.io/v1beta1"
    r = client.get(PODS, params={"labelSelector": "app in (("})
    assert r.status_code == 400 and "labelSelector" in r.json()["message"]
    nodes = client.get("/apis/metrics.k8s.io/v1beta1/nodes").json()["items"]
    assert nodes[0]["metadata"]["name"] == "pyhpa-node" and nodes[0]["usage"]["cpu"] == "300m"


def test_custom_pod_metrics_as_the_hpa_asks_for_them(env):
    store, sim, client, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 3, {"sim.pyhpa.io/metric.http_requests": "30"}))
    store.create(R.DEPLOYMENTS.key, deployment("api", 1, {"sim.pyhpa.io/metric.http_requests": "7"}))
    at(0)
    at(20)
    body = client.get(f"{CUSTOM}/pods/%2A/http_requests", params={"labelSelector": "app=web"}).json()
    assert body["kind"] == "MetricValueList" and body["apiVersion"] == "custom.metrics.k8s.io/v1beta2"
    assert len(body["items"]) == 3
    item = body["items"][0]
    assert item["describedObject"]["kind"] == "Pod" and item["describedObject"]["apiVersion"] == "/v1"
    assert item["metric"] == {"name": "http_requests", "selector": None}
    assert item["value"] == "10" and item["windowSeconds"] == 15
    # a metric selector is echoed; our series carry no labels, so a required label matches none
    r = client.get(f"{CUSTOM}/pods/%2A/http_requests",
                   params={"labelSelector": "app=web", "metricLabelSelector": "verb=GET"}).json()
    assert r["items"] == []
    r = client.get(f"{CUSTOM}/pods/%2A/http_requests",
                   params={"labelSelector": "app=web", "metricLabelSelector": "!verb"}).json()
    assert len(r["items"]) == 3
    assert r["items"][0]["metric"]["selector"] == {"matchExpressions": [{"key": "verb", "operator": "DoesNotExist"}]}
    # one named pod, and the v1beta1 shape
    name = item["describedObject"]["name"]
    one = client.get(f"{CUSTOM}/pods/{name}/http_requests").json()["items"]
    assert [i["describedObject"]["name"] for i in one] == [name]
    v1 = client.get(f"/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/http_requests",
                    params={"labelSelector": "app=api"}).json()
    assert v1["apiVersion"] == "custom.metrics.k8s.io/v1beta1"
    assert v1["items"][0]["metricName"] == "http_requests" and v1["items"][0]["value"] == "7"
    assert v1["items"][0]["window"] == 15
    r = client.get(f"{CUSTOM}/pods/%2A/nope")
    assert r.status_code == 404 and "nope" in r.json()["message"]


def test_custom_object_and_namespace_metrics(env):
    store, sim, client, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 2, {"sim.pyhpa.io/metric.requests": "1500m"}))
    store.create(R.DEPLOYMENTS.key, deployment("api", 1, {"sim.pyhpa.io/metric.requests": "2"}))
    at(0)
    at(5)
    body = client.get(f"{CUSTOM}/deployments.apps/web/requests").json()
    [item] = body["items"]
    assert item["describedObject"] == {"kind": "Deployment", "namespace": "default", "name": "web",
                                       "apiVersion": "apps/v1"}
    assert item["value"] == "1500m"
    [ns_item] = client.get(f"{CUSTOM}/metrics/requests").json()["items"]
    assert ns_item["describedObject"]["kind"] == "Namespace" and ns_item["value"] == "3500m"
    r = client.get(f"{CUSTOM}/deployments.apps/missing/requests")
    assert r.status_code == 404 and r.json()["reason"] == "NotFound"


def external_metric(name: str, metric: str, value: str, labels: dict | None = None) -> dict:
    return {"apiVersion": "pyhpa.io/v1alpha1", "kind": "ExternalMetric",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"name": metric, "labels": labels or {}, "value": value}}


def test_external_metrics_from_externalmetric_objects(env):
    store, sim, client, at = env
    ems = "/apis/pyhpa.io/v1alpha1/namespaces/default/externalmetrics"
    assert client.post(ems, json=external_metric("a", "queue_depth", "30", {"queue": "jobs"})).status_code == 201
    assert client.post(ems, json=external_metric("b", "queue_depth", "1500m", {"queue": "mail"})).status_code == 201
    at(1)
    r = client.get(f"{EXTERNAL}/queue_depth").json()
    assert r["items"] == []  # created after the last scrape (T0): visible from T0+5
    at(5)
    body = client.get(f"{EXTERNAL}/queue_depth").json()
    assert body["kind"] == "ExternalMetricValueList"
    assert sorted(i["value"] for i in body["items"]) == ["1500m", "30"]
    only = client.get(f"{EXTERNAL}/queue_depth", params={"labelSelector": "queue=jobs"}).json()["items"]
    assert [(i["metricName"], i["metricLabels"], i["value"]) for i in only] == [
        ("queue_depth", {"queue": "jobs"}, "30")]
    assert only[0]["timestamp"] == "1970-01-12T13:46:45Z"
    # a change shows at the next scrape
    obj = client.get(f"{ems}/a").json()
    obj["spec"]["value"] = "45"
    assert client.put(f"{ems}/a", json=obj).status_code == 200
    at(7)
    assert client.get(f"{EXTERNAL}/queue_depth", params={"labelSelector": "queue=jobs"}).json()["items"][0]["value"] == "30"
    at(10)
    assert client.get(f"{EXTERNAL}/queue_depth", params={"labelSelector": "queue=jobs"}).json()["items"][0]["value"] == "45"
    r = client.get(f"{EXTERNAL}/unknown_metric")
    assert r.status_code == 404 and "ExternalMetric" in r.json()["message"]


def test_invalid_externalmetric_is_rejected_naming_the_field(env):
    store, sim, client, at = env
    ems = "/apis/pyhpa.io/v1alpha1/namespaces/default/externalmetrics"
    r = client.post(ems, json=external_metric("bad", "queue depth", "many"))
    assert r.status_code == 422
    fields = {c["field"] for c in r.json()["details"]["causes"]}
    assert fields == {"spec.name", "spec.value"}
    r = client.post(ems, json={"apiVersion": "pyhpa.io/v1alpha1", "kind": "ExternalMetric",
                               "metadata": {"name": "novalue"}, "spec": {"labels": {"a": "b"}}})
    assert r.status_code == 422 and r.json()["details"]["causes"][0]["field"] == "spec.value"


@pytest.mark.parametrize("value", ["1e309", "1e308", "9223372036854775808m", "-1e200000"])
def test_externalmetric_beyond_int64_milli_is_refused(env, value):
    """The HPA reads external values as int64 milli-units: a bigger one is a 422, not a 201."""
    store, sim, client, at = env
    ems = "/apis/pyhpa.io/v1alpha1/namespaces/default/externalmetrics"
    r = client.post(ems, json=external_metric("huge", "queue_depth", value))
    assert r.status_code == 422, r.text
    [c] = r.json()["details"]["causes"]
    assert c["field"] == "spec.value" and "int64 of milli-units" in c["message"]
    ok = client.post(ems, json=external_metric("edge", "queue_depth", "9223372036854775807m"))
    assert ok.status_code == 201, ok.text


def test_stored_unservable_externalmetric_is_skipped_with_a_reason(env):
    """One written past the checks (an older store) is left out and named in /readyz, and
    every read of the metric answers (never a 500)."""
    store, sim, client, at = env
    ems = "/apis/pyhpa.io/v1alpha1/namespaces/default/externalmetrics"
    assert client.post(ems, json=external_metric("fine", "queue_depth", "30")).status_code == 201
    store.create(R.EXTERNAL_METRIC_OBJECTS.key, external_metric("huge", "queue_depth", "1e309"))
    at(0)
    at(5)
    r = client.get(f"{EXTERNAL}/queue_depth")
    assert r.status_code == 200, r.text
    assert [i["value"] for i in r.json()["items"]] == ["30"]
    [(where, why)] = sim.skipped.items()
    assert where == "default/externalmetrics/huge" and "spec.value" in why
    assert "int64" in sim.readiness().items[0]


def test_writes_to_metrics_apis_are_refused(env):
    store, sim, client, at = env
    r = client.post(PODS, json={})
    assert r.status_code == 405


def test_usage_is_capped_at_the_container_limits(env):
    store, sim, client, at = env
    dep = deployment("php", 2, {"sim.pyhpa.io/cpu": "3000m", "sim.pyhpa.io/memory": "48Mi"})
    dep["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "200m"}, "limits": {"cpu": "500m", "memory": "64Mi"}}
    store.create(R.DEPLOYMENTS.key, dep)
    at(0)
    at(20)
    items = client.get(PODS).json()["items"]
    # 1500m of demand per pod, throttled at the 500m limit
    assert [i["containers"][0]["usage"] for i in items] == [{"cpu": "500m", "memory": "48Mi"}] * 2
    node = client.get("/apis/metrics.k8s.io/v1beta1/nodes").json()["items"][0]
    assert node["usage"]["cpu"] == "1"
    # raising the limit (a new template: a rollout) lets the new pods use more
    def raise_limit(o):
        o["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "1"
    store.guaranteed_update(R.DEPLOYMENTS.key, NS, "php", raise_limit)
    for t in range(21, 120, 5):
        at(t)
    items = client.get(PODS).json()["items"]
    assert [i["containers"][0]["usage"]["cpu"] for i in items] == ["1"] * 2
