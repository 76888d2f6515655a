"""Several simulated nodes (`pyhpa cluster --nodes N --node-capacity ...`): their Node objects
and Leases, pods spread by requests, Pending when nothing fits and placed when room appears."""

from __future__ import annotations

import pytest

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.storage import Store
from pyhpa.cluster.controllers.node import NodeCapacityError, parse_node_capacity
from pyhpa.cluster.controllers.simulation import Simulation

from .test_simulation import deployment, pods, scale, template
from tests.clock import Clock
from tests.cluster.simulated import simulated

NS = "default"
NAMES = ["pyhpa-node", "pyhpa-node-2", "pyhpa-node-3"]
SMALL = {"cpu": "1", "memory": "4Gi", "pods": "110"}


@pytest.fixture
def env(tmp_path):
    with simulated(tmp_path, 1_000_000.0, nodes=3, node_capacity=SMALL) as c:
        yield c.store, c.sim, c.at


def placement(store, app: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in pods(store, app=app):
        node = p["spec"].get("nodeName") or ""
        out[node] = out.get(node, 0) + 1
    return out


def test_parse_node_capacity():
    assert parse_node_capacity("cpu=8,memory=32Gi,pods=110") == \
        {"cpu": "8", "memory": "32Gi", "pods": "110"}
    assert parse_node_capacity("cpu=2000m") == {"cpu": "2", "memory": "32Gi", "pods": "250"}
    for bad, words in [("gpu=1", "'gpu=1': expected cpu=, memory= or pods=QUANTITY"),
                       ("cpu", "'cpu': expected"), ("cpu=0", "cpu=0: must be a positive quantity"),
                       ("pods=2.5", "pods=2.5: must be a positive whole number"),
                       ("memory=lots", "memory=lots: invalid quantity 'lots'")]:
        with pytest.raises(NodeCapacityError) as exc:
            parse_node_capacity(bad)
        assert str(exc.value).startswith(words), str(exc.value)


def test_every_node_is_there_with_its_capacity_and_a_lease(env):
    store, sim, at = env
    at(0)
    nodes = {n["metadata"]["name"]: n for n in store.list(R.NODES.key).items}
    assert sorted(nodes) == NAMES
    for n in nodes.values():
        assert n["status"]["capacity"] == n["status"]["allocatable"] == SMALL
    assert "node-role.kubernetes.io/control-plane" in nodes["pyhpa-node"]["metadata"]["labels"]
    assert "node-role.kubernetes.io/control-plane" not in nodes["pyhpa-node-2"]["metadata"]["labels"]
    leases = {lease["metadata"]["name"]: lease for lease in store.list(R.LEASES.key, "kube-node-lease").items}
    assert sorted(leases) == NAMES
    first = {name: lease["spec"]["renewTime"] for name, lease in leases.items()}
    at(11)  # a quarter of the 40 s lease later: every node renews
    assert all(store.get(R.LEASES.key, "kube-node-lease", name)["spec"]["renewTime"] != first[name]
               for name in NAMES)


def test_a_restart_with_another_capacity_updates_the_nodes(env):
    store, sim, at = env
    at(0)
    bigger = Simulation(store, sim.clock, nodes=3, node_capacity={**SMALL, "cpu": "4"})
    bigger.ensure_node()
    assert {n["status"]["allocatable"]["cpu"] for n in store.list(R.NODES.key).items} == {"4"}
    # another --emulated-version: the nodes report its kubelet version (kubectl get nodes)
    older = Simulation(store, sim.clock, nodes=3, node_capacity={**SMALL, "cpu": "4"},
                       kubelet_version="v1.27.0")
    older.ensure_node()
    assert {n["status"]["nodeInfo"]["kubeletVersion"] for n in store.list(R.NODES.key).items} \
        == {"v1.27.0"}


def test_pods_spread_over_the_nodes_and_wait_when_none_has_room(env):
    store, sim, at = env
    web = deployment("web", 6)
    web["spec"]["template"] = template("web", cpu="400m")
    store.create(R.DEPLOYMENTS.key, web)
    at(0)
    assert placement(store, "web") == {name: 2 for name in NAMES}  # 800m of 1 CPU each
    addresses = {n["metadata"]["name"]: n["status"]["addresses"][0]["address"]
                 for n in store.list(R.NODES.key).items}
    assert {p["spec"]["nodeName"]: p["status"]["hostIP"] for p in pods(store, app="web")} == \
        addresses  # each pod reports its own node's address
    assert len(set(addresses.values())) == 3
    scale(store, "web", 8)
    at(1)
    assert placement(store, "web") == {**{name: 2 for name in NAMES}, "": 2}
    waiting = [p for p in pods(store, app="web") if not p["spec"].get("nodeName")]
    for p in waiting:
        cond = next(c for c in p["status"]["conditions"] if c["type"] == "PodScheduled")
        assert cond["message"] == (
            "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
            "3 No preemption victims found for incoming pod.")
    # room appears on a node (its allocatable grows): the waiting pods are placed there
    store.guaranteed_update(R.NODES.key, "", "pyhpa-node-3",
                            lambda o: o["status"].update(allocatable={**SMALL, "cpu": "2"}))
    at(2)
    assert placement(store, "web") == {"pyhpa-node": 2, "pyhpa-node-2": 2, "pyhpa-node-3": 4}


def test_a_pending_pod_is_placed_once_a_pod_before_it_is_gone(env):
    store, sim, at = env
    web = deployment("web", 6)
    web["spec"]["template"] = template("web", cpu="500m")
    store.create(R.DEPLOYMENTS.key, web)
    late = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "late", "namespace": NS},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {"cpu": "500m"}}}]}}
    at(0)
    store.create(R.PODS.key, late)
    at(1)
    assert not store.get(R.PODS.key, NS, "late")["spec"].get("nodeName")
    scale(store, "web", 5)  # one pod goes (5 s of termination): its node has room again
    at(2)
    assert not store.get(R.PODS.key, NS, "late")["spec"].get("nodeName")
    at(8)
    at(8)
    assert store.get(R.PODS.key, NS, "late")["spec"].get("nodeName") in NAMES


def _bare(name: str, cpu: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {"cpu": cpu}}}]}}


def test_with_pods_waiting_a_new_pod_that_fits_is_bound_and_one_that_does_not_waits(env):
    """While larger pods wait, each new pod is looked at: a smaller one that still fits is
    bound, one that fits nowhere is reported Unschedulable as they are; the waiting ones keep
    their message and are bound first once room appears."""
    store, sim, at = env
    web = deployment("web", 3)
    web["spec"]["template"] = template("web", cpu="700m")
    store.create(R.DEPLOYMENTS.key, web)
    at(0)
    assert placement(store, "web") == {name: 1 for name in NAMES}  # 300m left on each
    store.create(R.PODS.key, _bare("big-1", "500m"))
    at(1)
    store.create(R.PODS.key, _bare("big-2", "500m"))
    at(2)
    store.create(R.PODS.key, _bare("small", "200m"))  # newer than the waiting ones, and fits
    at(3)
    store.create(R.PODS.key, _bare("big-3", "600m"))
    at(4)
    got = {n: store.get(R.PODS.key, NS, n) for n in ("big-1", "big-2", "small", "big-3")}
    assert got["small"]["spec"]["nodeName"] in NAMES
    message = ("0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
               "3 No preemption victims found for incoming pod.")
    for name in ("big-1", "big-2", "big-3"):
        assert not got[name]["spec"].get("nodeName")
        cond = next(c for c in got[name]["status"]["conditions"] if c["type"] == "PodScheduled")
        assert cond["message"] == message
    failed = [e["involvedObject"]["name"] for e in store.list(R.EVENTS.key, NS).items
              if e["reason"] == "FailedScheduling"]
    assert sorted(failed) == ["big-1", "big-2", "big-3"]  # once each: the message never changed
    # room on one node (800m or 1 CPU, where small is or not): the oldest waiting one takes it
    scale(store, "web", 2)
    for t in (5, 12, 12):
        at(t)
    assert store.get(R.PODS.key, NS, "big-1")["spec"].get("nodeName") in NAMES
    assert not store.get(R.PODS.key, NS, "big-3")["spec"].get("nodeName")


def test_a_restart_with_fewer_nodes_removes_the_others_and_their_pods_move(env):
    store, sim, at = env
    web = deployment("web", 3)
    web["spec"]["template"] = template("web", cpu="100m")
    store.create(R.DEPLOYMENTS.key, web)
    at(0)
    assert placement(store, "web") == {name: 1 for name in NAMES}
    fewer = Simulation(store, sim.clock, nodes=1, node_capacity=SMALL)
    fewer.ensure_node()
    assert [n["metadata"]["name"] for n in store.list(R.NODES.key).items] == ["pyhpa-node"]
    assert [lease["metadata"]["name"] for lease in store.list(R.LEASES.key, "kube-node-lease").items] \
        == ["pyhpa-node"]
    for t in (1, 2, 3):
        sim.clock.t = 1_000_000.0 + t
        fewer.settle()
    assert placement(store, "web") == {"pyhpa-node": 3}


def test_pods_on_a_node_share_its_cpu_in_the_metrics_apis_and_the_cadvisor_counters(tmp_path):
    """Two pods without limits, requesting 500m each, on a 2-CPU node under 10 CPUs of demand
    read 1000m each (metrics.k8s.io, what `kubectl top` and the HPA read), the node 2000m."""
    from starlette.testclient import TestClient

    from pyhpa.cluster.apiserver.server import APIServer
    from pyhpa.cluster.controllers import cadvisor, metrics_server

    store = Store(tmp_path / "store.sqlite")
    clock = Clock()
    sim = Simulation(store, clock, nodes=1, node_capacity={**SMALL, "cpu": "2"},
                     resolution=5.0, window=15.0)
    sim.ensure_node()
    server = APIServer(store)
    metrics_server.install(server, sim)
    client = TestClient(server)
    try:
        store.create(R.DEPLOYMENTS.key, deployment("hot", 2, {"sim.pyhpa.io/cpu": "10"}))
        for t in (0, 11, 40):
            clock.t = 1_000_000.0 + t
            sim.settle()
        items = client.get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods").json()["items"]
        assert [c["usage"]["cpu"] for i in items for c in i["containers"]] == ["1", "1"]
        node = client.get("/apis/metrics.k8s.io/v1beta1/nodes/pyhpa-node").json()
        assert node["usage"]["cpu"] == "2"
        # the cAdvisor counters grow at the contended rate: 1 core-second per second each
        text = cadvisor.cadvisor_text(sim, "pyhpa-node")
        first = _cpu_counters(text)
        clock.t += 10
        sim.settle()
        later = _cpu_counters(cadvisor.cadvisor_text(sim, "pyhpa-node"))
        assert len(first) == 2 and all(later[k] - first[k] == pytest.approx(10) for k in first)
    finally:
        client.close()
        store.close()


def _cpu_counters(text: str) -> dict[str, float]:
    """container_cpu_usage_seconds_total of each pod's cgroup (the container="" series)."""
    out = {}
    for line in text.splitlines():
        if line.startswith("container_cpu_usage_seconds_total{") and 'container=""' in line:
            labels, value = line.rsplit("}", 1)
            out[labels] = float(value.split()[0])
    return out
