"""The simulated world through real kubectl (1.33 and 1.27): several nodes and their Leases,
Pending pods when a Deployment outgrows them, and the details issue #16 found off upstream
(memory AverageValue statuses, the lone-metric-source error, Go's decode errors, the metrics
adapters' discovery, `get pods.metrics.k8s.io`, the order of the HPA's and the workload's events).

One embedded cluster (two small nodes, a fast metrics pipeline) with the HPA controller in the
same process serves every test; each kubectl version works in its own namespace.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from pyhpa.adapters.kube.client import KubeClient, load_config
from pyhpa.cluster.embedded import EmbeddedCluster
from pyhpa.engine.config import ControllerConfig
from pyhpa.live.loop import ControllerOptions, HPAController

from tests import builders

from .conftest import make_kubectl, wait_for

pytestmark = [pytest.mark.kubectl, pytest.mark.slow]

SMALL_NODE = {"cpu": "2", "memory": "8Gi", "pods": "110"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    options = {"nodes": 2, "node_capacity": SMALL_NODE, "resolution": 0.5, "window": 1.0}
    with EmbeddedCluster(tmp_path_factory.mktemp("world"), simulation_options=options) as c:
        async def start() -> HPAController:
            client = KubeClient.from_config(load_config(str(c.kubeconfig_path)), qps=0)
            ctl = HPAController(client, ControllerConfig(sync_period=0.5, memory_status_binary_si=False),
                                ControllerOptions(sync_period=0.5, workers=2))
            await ctl.start()
            return ctl

        async def stop(ctl: HPAController) -> None:
            await ctl.stop()
            await ctl.client.close()

        ctl = c.call(start())
        try:
            yield c
        finally:
            c.call(stop(ctl))


@pytest.fixture(scope="module", params=[33, 27])
def k(request, cluster, tmp_path_factory):
    proc = SimpleNamespace(kubeconfig=cluster.kubeconfig_path)
    run = make_kubectl(request.param, proc, tmp_path_factory.mktemp("kubehome"))
    ns = f"v1-{request.param}"
    run("create", "namespace", ns)

    def in_ns(*args: str, **kw):
        return run("-n", ns, *args, **kw)
    in_ns.ns = ns  # type: ignore[attr-defined]
    in_ns.minor = request.param  # type: ignore[attr-defined]
    return in_ns


@pytest.fixture(autouse=True)
def clean(k):
    """The nodes are shared: each test's workloads go when it ends."""
    yield
    k("delete", "deployments,hpa", "--all", "--wait=false")


def apply(k, doc: dict) -> None:
    k("apply", "-f", "-", input=json.dumps(doc))


def deployment(name: str, replicas: int, cpu: str, annotations: dict, **resources) -> dict:
    """Pods that are pending, start and stop in fractions of a second, requesting ``cpu``."""
    return builders.deployment(
        name, replicas, namespace=None,
        annotations={"sim.pyhpa.io/pending-seconds": "0.2", "sim.pyhpa.io/startup-seconds": "0.3",
                     "sim.pyhpa.io/termination-seconds": "0.2", **annotations},
        containers=[builders.container(name, image="registry.k8s.io/hpa-example", cpu=cpu, **resources)])


def hpa(name: str, metric: dict, max_replicas: int = 10) -> dict:
    """An HPA on ``metric`` that scales up at once, as far as it wants."""
    return builders.hpa(name, metrics=[metric], max_replicas=max_replicas, namespace=None,
                        behavior={"scaleUp": {"stabilizationWindowSeconds": 0, "policies": [
                            {"type": "Percent", "value": 1000, "periodSeconds": 1}]}})


# --------------------------------------------------------------------------- 3. nodes


def test_nodes_their_leases_and_a_deployment_that_outgrows_them(k):
    out = k("get", "nodes").stdout
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["pyhpa-node", "pyhpa-node-2"]
    leases = k("get", "leases", "-n", "kube-node-lease", "-o", "name").stdout.split()
    assert leases == ["lease.coordination.k8s.io/pyhpa-node",
                      "lease.coordination.k8s.io/pyhpa-node-2"]
    # 2 nodes of 2 CPUs: 4 pods of 900m fit (2 a node), the 5th waits
    wait_for(lambda: not k("get", "pods", "-A", "-o", "name").stdout.strip(),
             what="nodes without pods")
    apply(k, deployment("big", 5, "900m", {}))
    wait_for(lambda: "FailedScheduling" in k("get", "events").stdout, what="FailedScheduling")
    pods = json.loads(k("get", "pods", "-l", "app=big", "-o", "json").stdout)["items"]
    nodes = sorted(p["spec"].get("nodeName", "") for p in pods)
    assert nodes == ["", "pyhpa-node", "pyhpa-node", "pyhpa-node-2", "pyhpa-node-2"]
    wait_for(lambda: len(k("get", "pods", "--field-selector=status.phase=Pending",
                           "-o", "name").stdout.split()) == 1, what="one Pending pod")
    ev = k("get", "events", "--field-selector=reason=FailedScheduling",
           "-o", "jsonpath={.items[0].message}").stdout
    assert ev.startswith("0/2 nodes are available: 2 Insufficient cpu.")
    k("scale", "deployment", "big", "--replicas=4")  # the Pending pod is the one to go
    wait_for(lambda: not k("get", "pods", "--field-selector=status.phase=Pending",
                           "-o", "name").stdout.strip(), what="no Pending pod")
    top = k("top", "nodes").stdout
    assert "pyhpa-node-2" in top
    k("cordon", "pyhpa-node-2")
    try:
        rows = [line.split()[:2] for line in k("get", "nodes").stdout.splitlines()[1:]]
        assert rows == [["pyhpa-node", "Ready"], ["pyhpa-node-2", "Ready,SchedulingDisabled"]]
    finally:
        k("uncordon", "pyhpa-node-2")


def test_pods_on_a_node_share_its_cpu_and_the_hpa_sees_the_contended_usage(k):
    """Two pods without limits, requesting 500m, on one 2-CPU node under 10 CPUs of demand
    use 1000m each (CFS shares by request); the HPA reads 1000m / 500m = 200%."""
    wait_for(lambda: not k("get", "pods", "-A", "-o", "name").stdout.strip(),
             what="nodes without pods")
    doc = deployment("shared", 2, "500m", {"sim.pyhpa.io/cpu": "10"})
    doc["spec"]["template"]["spec"]["nodeName"] = "pyhpa-node-2"
    apply(k, doc)
    apply(k, builders.hpa("shared", metrics=[{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}],
        min_replicas=2, max_replicas=2, namespace=None))

    def usage() -> list[str] | None:
        rows = [r.split() for r in k("top", "pods", "-l", "app=shared", check=False).stdout.splitlines()[1:]]
        return [r[1] for r in rows] if len(rows) == 2 and all(r[1] == "1000m" for r in rows) \
            else None
    assert wait_for(usage, what="1000m a pod") == ["1000m", "1000m"]
    top = {r.split()[0]: r.split() for r in k("top", "nodes").stdout.splitlines()[1:]}
    assert top["pyhpa-node-2"][1:3] == ["2000m", "100%"]
    wait_for(lambda: "200%/50%" in k("get", "hpa", "shared").stdout, what="200%/50%")
    status = json.loads(k("get", "hpa", "shared", "-o", "json").stdout)["status"]
    assert status["currentMetrics"][0]["resource"]["current"] == {
        "averageUtilization": 200, "averageValue": "1"}


# --------------------------------------------------------------------------- 9. small gaps


def test_memory_average_value_prints_the_raw_quantity(k):
    """As a 1.33 controller writes it (this module's controller: memory_status_binary_si=False)."""
    apply(k, deployment("mem", 1, "100m", {"sim.pyhpa.io/memory": "150Mi"}, memory="100Mi"))
    apply(k, hpa("mem", {"type": "Resource", "resource": {
        "name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}}},
        max_replicas=1))
    row = wait_for(lambda: "157286400/100Mi" in (out := k("get", "hpa", "mem").stdout) and out,
                   what="memory status")
    assert "memory: 157286400/100Mi" in row
    described = k("describe", "hpa", "mem").stdout
    assert "157286400 / 100Mi" in described and "150Mi /" not in described


def test_a_lone_source_under_another_type_is_only_required(k):
    doc = hpa("lone", {"type": "Pods", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}})
    out = k("create", "-f", "-", input=json.dumps(doc), check=False)
    assert out.returncode == 1
    assert ("spec.metrics[0].pods: Required value: must populate information for the given "
            "metric source") in out.stderr
    assert "must populate the given metric source only" not in out.stderr


def test_a_value_of_the_wrong_type_is_named_as_go_names_it(k):
    doc = hpa("typed", {"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}})
    doc["spec"]["minReplicas"] = "2"
    target = json.loads(json.dumps(doc))
    target["spec"]["minReplicas"] = 2
    target["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] = "50"
    for bad, words in [(doc, "HorizontalPodAutoscalerSpec.spec.minReplicas of type int32"),
                       (target, "MetricTarget.spec.metrics.resource.target.averageUtilization "
                                "of type int32")]:
        out = k("create", "--validate=false", "-f", "-", input=json.dumps(bad), check=False)
        assert out.returncode == 1
        assert ('HorizontalPodAutoscaler in version "v2" cannot be handled as a '
                "HorizontalPodAutoscaler: json: cannot unmarshal string into Go struct field "
                f"{words}") in out.stderr, out.stderr
        assert "expected int" not in out.stderr


def test_metrics_discovery_lists_each_metric(k):
    apply(k, deployment("rps", 1, "100m", {"sim.pyhpa.io/metric.http_requests": "30"}))
    apply(k, {"apiVersion": "pyhpa.io/v1alpha1", "kind": "ExternalMetric",
              "metadata": {"name": "queue"}, "spec": {"name": "queue_length", "value": "7"}})

    def names(path: str) -> list[tuple[str, bool]]:
        doc = json.loads(k("get", "--raw", path).stdout)
        return [(r["name"], r["namespaced"]) for r in doc["resources"]]
    custom = wait_for(lambda: ("pods/http_requests", True) in (
        found := names("/apis/custom.metrics.k8s.io/v1beta2")) and found, what="discovery")
    assert {("deployments.apps/http_requests", True),
            ("namespaces/http_requests", False)} <= set(custom)
    assert ("pods/http_requests", True) in names("/apis/custom.metrics.k8s.io/v1beta1")
    external = wait_for(lambda: ("queue_length", True) in (
        found := names("/apis/external.metrics.k8s.io/v1beta1")) and found, what="external")
    assert "externalmetricvalues" not in dict(external)
    # aggregated discovery (what kubectl api-resources reads) lists the same
    listed = k("api-resources", "--api-group=external.metrics.k8s.io").stdout.split()
    assert "queue_length" in listed and "ExternalMetricValueList" in listed


def test_get_pods_metrics_prints_usage_columns(k):
    apply(k, deployment("usage", 1, "100m", {"sim.pyhpa.io/cpu": "50m",
                                             "sim.pyhpa.io/memory": "64Mi"}))
    out = wait_for(lambda: "usage-" in (o := k("get", "pods.metrics.k8s.io").stdout) and o,
                   what="pod metrics")
    header, *rows = out.splitlines()
    assert header.split() == ["NAME", "CPU", "MEMORY", "WINDOW"]
    row = next(r.split() for r in rows if r.startswith("usage-"))
    assert row[2:] == ["64Mi", "1s"]
    nodes = k("get", "nodes.metrics.k8s.io").stdout.splitlines()
    assert nodes[0].split() == ["NAME", "CPU", "MEMORY", "WINDOW"]
    assert [r.split()[0] for r in nodes[1:]] == ["pyhpa-node", "pyhpa-node-2"]


def test_the_rescale_comes_before_what_the_workload_did_about_it(k):
    apply(k, deployment("php-apache", 1, "200m", {"sim.pyhpa.io/cpu": "600m"}))
    apply(k, hpa("php-apache", {"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
        max_replicas=6))
    wait_for(lambda: "SuccessfulRescale" in k("get", "events").stdout, what="a rescale")

    def events() -> list[dict]:
        return json.loads(k("get", "events", "-o", "json").stdout)["items"]
    rescales = [e for e in events() if e["reason"] == "SuccessfulRescale"]
    for r in rescales:
        size = r["message"].split(";")[0].removeprefix("New size: ")
        scaled = wait_for(lambda: [e for e in events() if e["reason"] == "ScalingReplicaSet"
                                   and e["message"].endswith(f" to {size}")], what="scaled")
        # named by the time they happened, as client-go names events
        stamp = int(r["metadata"]["name"].rpartition(".")[2], 16)
        assert all(int(e["metadata"]["name"].rpartition(".")[2], 16) > stamp for e in scaled)
        assert all(e["lastTimestamp"] >= r["lastTimestamp"] for e in scaled)
    # `kubectl get events` lists them by name: the first rescale, then the scale-up it caused
    lines = [line for line in k("get", "events").stdout.splitlines()
             if "SuccessfulRescale" in line or "ScalingReplicaSet" in line]
    first_rescale = next(i for i, line in enumerate(lines) if "SuccessfulRescale" in line)
    assert "from 1 to" in lines[first_rescale + 1], lines
