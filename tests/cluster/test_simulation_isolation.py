"""Issue 18: one object the simulation cannot handle is left out and reported, never the whole
pass; and the simulated pods are bounded. The bad objects are written straight into the store,
as objects stored before the API server validated them would be; the report is the server's own
message for them."""

from __future__ import annotations

import ssl
import time

import httpx
import pytest

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.health import Degraded
from pyhpa.cluster.apiserver.storage import Store
from pyhpa.cluster.controllers import deployment as deployment_controller
from pyhpa.cluster.controllers import simulation as simulation_module
from pyhpa.cluster.controllers.simulation import Simulation
from pyhpa.cluster.embedded import EmbeddedCluster

from tests.cluster.test_simulation import NS, Clock, deployment, pods, statefulset

INT32_MAX = 2 ** 31 - 1  # the most replicas the API server admits (more is not an int32)


def _parent(o, path: str):
    """The object holding the last step of a dotted ``path`` (list indexes as numbers), and that step."""
    *parents, last = path.split(".")
    for p in parents:
        o = o[int(p)] if isinstance(o, list) else o[p]
    return o, last


def _set(path: str, value):
    def f(o: dict) -> None:
        parent, last = _parent(o, path)
        parent[last] = value
    return f


def _drop(path: str):
    def f(o: dict) -> None:
        parent, last = _parent(o, path)
        del parent[last]
    return f


# (how the Deployment is broken, the field its report names)
BROKEN = {
    "matchLabels-string": (_set("spec.selector.matchLabels", "x"), "spec.selector.matchLabels"),
    "template-string": (_set("spec.template", "x"), "spec.template"),
    "template-labels-list": (_set("spec.template.metadata.labels", ["app"]),
                             "spec.template.metadata.labels"),
    "no-selector": (_drop("spec.selector"), "spec.selector: Required value"),
    "selector-not-matching": (_set("spec.selector.matchLabels", {"app": "other"}),
                              "`selector` does not match template `labels`"),
    "status-string": (_set("status", "x"), "status"),
    "ownerReferences-string": (_set("metadata.ownerReferences", "x"),
                               "metadata.ownerReferences"),
    "replicas-over-int32": (_set("spec.replicas", 2 ** 40), "spec.replicas of type int32"),
    "container-without-image": (_drop("spec.template.spec.containers.0.image"),
                                "spec.template.spec.containers[0].image: Required value"),
}


@pytest.fixture()
def world(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    clock = Clock()
    sim = Simulation(store, clock)
    sim.ensure_node()
    yield store, sim, clock
    store.close()


def warnings_on(store: Store, name: str) -> list[tuple[str, str]]:
    return [(e["reason"], e["message"]) for e in store.list(R.EVENTS.key, NS).items
            if e["involvedObject"]["name"] == name and e["type"] == "Warning"]


def running(store: Store, app: str) -> int:
    return sum(1 for p in pods(store, app=app) if p["status"].get("phase") == "Running")


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_one_broken_deployment_is_skipped_and_reported_while_the_rest_runs(world, case):
    store, sim, clock = world
    breaks, named = BROKEN[case]
    bad = deployment("bad", 2)
    breaks(bad)
    store.create(R.DEPLOYMENTS.key, bad)
    store.create(R.DEPLOYMENTS.key, deployment("good", 2))
    sim.settle()
    clock.t += 2
    sim.settle()
    assert running(store, "good") == 2
    assert not pods(store, app="bad") and not store.list(R.REPLICA_SETS.key, NS,
                                                         label_selector="app=bad").items
    [(reason, message)] = warnings_on(store, "bad")
    assert reason == "SimulationFailed" and named in message
    report = sim.readiness()
    assert isinstance(report, Degraded)
    [line] = report.items
    assert line.startswith(f"{NS}/deployments/bad: ") and named in line
    # the report is made once, not on every pass
    clock.t += 60
    sim.settle()
    assert len(warnings_on(store, "bad")) == 1
    assert store.list(R.EVENTS.key, NS).items  # events of the good one still recorded
    # a restarted simulation reports it again and still runs the rest
    again = Simulation(store, clock)
    again.settle()
    assert isinstance(again.readiness(), Degraded) and running(store, "good") == 2


def test_a_workload_broken_after_it_ran_keeps_its_pods_until_repaired(world):
    store, sim, clock = world
    store.create(R.DEPLOYMENTS.key, deployment("web", 3))
    sim.settle()
    names = sorted(p["metadata"]["name"] for p in pods(store, app="web"))
    assert len(names) == 3
    store.guaranteed_update(R.DEPLOYMENTS.key, NS, "web", _set("status", "x"))
    clock.t += 5
    sim.settle()
    # left out with its family: nothing collected as an orphan, nothing recreated
    assert sorted(p["metadata"]["name"] for p in pods(store, app="web")) == names
    assert len(store.list(R.REPLICA_SETS.key, NS).items) == 1
    assert isinstance(sim.readiness(), Degraded)
    store.guaranteed_update(R.DEPLOYMENTS.key, NS, "web", _set("status", {}))
    sim.settle()
    assert sim.readiness() is None
    assert store.get(R.DEPLOYMENTS.key, NS, "web")["status"]["replicas"] == 3
    assert sorted(p["metadata"]["name"] for p in pods(store, app="web")) == names


def test_a_broken_replicaset_takes_its_deployment_out_but_no_other(world):
    store, sim, clock = world
    store.create(R.DEPLOYMENTS.key, deployment("web", 2))
    store.create(R.DEPLOYMENTS.key, deployment("api", 1))
    sim.settle()
    [rs] = store.list(R.REPLICA_SETS.key, NS, label_selector="app=web").items
    store.guaranteed_update(R.REPLICA_SETS.key, NS, rs["metadata"]["name"],
                            _set("spec.template", "x"))
    scale_both = _set("spec.replicas", 3)
    store.guaranteed_update(R.DEPLOYMENTS.key, NS, "web", scale_both)
    store.guaranteed_update(R.DEPLOYMENTS.key, NS, "api", scale_both)
    clock.t += 2
    passes = sim.settle()
    assert passes < 10  # no pass keeps creating what already exists
    assert len(pods(store, app="web")) == 2 and len(pods(store, app="api")) == 3
    assert len(store.list(R.REPLICA_SETS.key, NS).items) == 2
    [line] = sim.readiness().items
    assert line == (f"{NS}/replicasets/{rs['metadata']['name']}: json: cannot unmarshal string "
                    "into Go struct field ReplicaSetSpec.spec.template of type v1.PodTemplateSpec")


def test_a_sync_that_raises_leaves_only_that_object_out(world, monkeypatch):
    store, sim, clock = world
    real = deployment_controller.sync_deployment

    def flaky(ctx, dep, *args):
        if dep["metadata"]["name"] == "odd":
            raise KeyError("somewhere")
        return real(ctx, dep, *args)
    monkeypatch.setattr(simulation_module, "sync_deployment", flaky)
    store.create(R.DEPLOYMENTS.key, deployment("odd", 1))
    store.create(R.DEPLOYMENTS.key, deployment("good", 2))
    sim.settle()
    assert len(pods(store, app="good")) == 2 and sim.last_error is None
    [line] = sim.readiness().items
    assert line.startswith(f"{NS}/deployments/odd: the simulation failed on it: KeyError")
    assert warnings_on(store, "odd")[0][0] == "SimulationFailed"
    # a change to the object is tried again
    monkeypatch.setattr(simulation_module, "sync_deployment", real)
    store.guaranteed_update(R.DEPLOYMENTS.key, NS, "odd", _set("spec.replicas", 2))
    sim.settle()
    assert len(pods(store, app="odd")) == 2 and sim.readiness() is None


# ---------------------------------------------------------------- bounds


def test_a_deployment_of_the_most_replicas_gets_the_ceiling_and_an_event(world):
    store, sim, clock = world
    store.create(R.DEPLOYMENTS.key, deployment("huge", INT32_MAX))
    started = time.monotonic()
    sim.settle()
    assert time.monotonic() - started < 60
    assert len(pods(store, app="huge")) == 1000
    clock.t += 5
    sim.settle()
    assert len(pods(store, app="huge")) == 1000
    reasons = {r: m for r, m in warnings_on(store, "huge")}
    assert "2147483647 replicas" in reasons["TooManyReplicas"]
    assert "at most 1000 pods per workload" in reasons["TooManyReplicas"]


def test_the_total_cap_leaves_pods_uncreated_with_an_event(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    sim = Simulation(store, Clock(), max_pods_per_workload=3, max_pods=5)
    sim.ensure_node()
    store.create(R.DEPLOYMENTS.key, deployment("a", 3))
    store.create(R.DEPLOYMENTS.key, deployment("b", 3))
    sts = statefulset("db", INT32_MAX)
    sts["spec"]["podManagementPolicy"] = "Parallel"
    store.create(R.STATEFUL_SETS.key, sts)
    sim.settle()
    assert len(store.list(R.PODS.key, NS).items) == 5
    assert len(pods(store, app="db")) == 3  # its ceiling (it asks first: no ReplicaSet yet)
    capped = [m for name in ("a", "b") for r, m in warnings_on(store, name) if r == "TooManyPods"]
    assert capped and all("at most 5 pods in all" in m for m in capped)
    assert "at most 3 pods per workload" in dict(warnings_on(store, "db"))["TooManyReplicas"]
    sim.settle()
    assert len(store.list(R.PODS.key, NS).items) == 5
    store.close()


# ---------------------------------------------------------------- over HTTP, across a restart


def test_stored_broken_objects_neither_stop_the_cluster_nor_its_deletes(tmp_path):
    data = tmp_path / "cluster"
    data.mkdir()
    store = Store(data / "store.sqlite")
    store.create(R.NAMESPACES.key, {"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": NS}, "status": {"phase": "Active"}})
    bad = deployment("bad", 1)
    bad["spec"]["selector"]["matchLabels"] = "x"
    store.create(R.DEPLOYMENTS.key, bad)
    store.create(R.DEPLOYMENTS.key, deployment("huge", INT32_MAX))
    store.create(R.LEASES.key, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                "metadata": {"name": "odd", "namespace": NS,
                                             "ownerReferences": "x"}, "spec": {}})
    store.close()
    for attempt in ("first start", "after a restart"):
        with EmbeddedCluster(data, simulation_options={"max_pods_per_workload": 50}) as c:
            ctx = ssl.create_default_context(cafile=str(c.ca_path))
            with httpx.Client(base_url=c.url, verify=ctx, timeout=10,
                              headers={"Authorization": f"Bearer {c.token}"}) as client:
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    got = client.get(f"/api/v1/namespaces/{NS}/pods").json()["items"]
                    if len(got) >= 50:
                        break
                    time.sleep(0.2)
                assert len(got) == 50, attempt
                assert client.get("/readyz").text == "ok"
                verbose = client.get("/readyz?verbose")
                assert verbose.status_code == 200
                assert f"[-]simulation: {NS}/deployments/bad: json: cannot unmarshal string into " \
                    "Go struct field LabelSelector.spec.selector.matchLabels" in verbose.text, attempt
                events = client.get(f"/api/v1/namespaces/{NS}/events").json()["items"]
                assert any(e["reason"] == "SimulationFailed"
                           and e["involvedObject"]["name"] == "bad" for e in events)
                assert any(e["reason"] == "TooManyReplicas"
                           and e["involvedObject"]["name"] == "huge" for e in events)
                # an unrelated object's delete answers as usual beside the broken ones
                leases = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"
                lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                         "metadata": {"name": f"plain-{attempt[0]}"}, "spec": {}}
                assert client.post(leases, json=lease).status_code == 201
                r = client.delete(f"{leases}/{lease['metadata']['name']}")
                assert r.status_code == 200, r.text
    # deleting the broken objects themselves works too
    with EmbeddedCluster(data) as c:
        ctx = ssl.create_default_context(cafile=str(c.ca_path))
        with httpx.Client(base_url=c.url, verify=ctx, timeout=10,
                          headers={"Authorization": f"Bearer {c.token}"}) as client:
            for path in (f"/apis/apps/v1/namespaces/{NS}/deployments/bad",
                         f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases/odd"):
                assert client.delete(path).status_code == 200, path
