"""`kubectl logs` of simulated containers (their lifecycle lines) and the process subresources
refused in one clear line (exec, attach, portforward, ephemeralcontainers), over HTTP (ASGI)."""

from __future__ import annotations

import functools

import pytest
from starlette.testclient import TestClient

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.server import APIServer
from pyhpa.cluster.apiserver.storage import Store
from pyhpa.cluster.controllers import logs
from pyhpa.cluster.controllers.simulation import Simulation

from .test_simulation import Clock, deployment, limited, pods

NS = "default"
T0 = 1_000_000.0


@pytest.fixture
def env(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    clock = Clock(T0)
    server = APIServer(store)
    sim = Simulation(store, clock, resolution=5.0, window=15.0)
    sim.ensure_node()
    server.pod_io.logs = functools.partial(logs.container_log, sim)  # as attach() wires it
    server.pod_io.clock = clock
    client = TestClient(server)

    def at(t: float) -> None:
        clock.t = T0 + t
        sim.settle()

    yield store, client, at
    client.close()
    store.close()


def pod_path(store, app: str, sub: str) -> str:
    [p] = pods(store, app=app)
    return f"/api/v1/namespaces/{NS}/pods/{p['metadata']['name']}/{sub}"


def test_the_log_of_a_running_container_has_its_start_and_readiness(env):
    store, client, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 1))  # running at 1 s, Ready at 10 s
    at(0)
    path = pod_path(store, "web", "log")
    r = client.get(path)
    assert r.status_code == 400 and r.json()["reason"] == "BadRequest"
    assert r.json()["message"].endswith('" is waiting to start: ContainerCreating')
    at(1)
    at(12)
    r = client.get(path)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    assert r.text.splitlines() == [
        "started: image nginx (a simulated container: no process runs, its usage is modelled)",
        "ready: serving"]
    stamped = client.get(path, params={"timestamps": "true"}).text.splitlines()
    assert [line.split(" ", 1)[0] for line in stamped] == [
        "1970-01-12T13:46:41.000000000Z", "1970-01-12T13:46:50.000000000Z"]
    assert client.get(path, params={"tailLines": "1"}).text == "ready: serving\n"
    assert client.get(path, params={"sinceSeconds": "5"}).text == "ready: serving\n"
    assert client.get(path, params={"sinceTime": "1970-01-12T13:46:45Z"}).text == "ready: serving\n"
    assert client.get(path, params={"limitBytes": "8"}).text == "started:"
    assert client.get(path, params={"container": "web"}).status_code == 200
    bad = client.get(path, params={"container": "nope"}).json()
    assert bad["code"] == 400 and bad["message"].startswith("container nope is not valid for pod web-")
    bad = client.get(path, params={"tailLines": "-1"}).json()
    assert bad["message"] == "tailLines: Invalid value: -1: must be greater than or equal to 0"
    missing = client.get(f"/api/v1/namespaces/{NS}/pods/nope/log").json()
    assert (missing["code"], missing["message"]) == (404, 'pods "nope" not found')
    # deleted: it is told to stop, then terminates
    [p] = pods(store, app="web")
    store.delete(R.PODS.key, NS, p["metadata"]["name"], grace_seconds=30)
    at(13)
    assert client.get(path).text.splitlines()[-1] == "received SIGTERM: shutting down"


def test_an_oomkilled_container_logs_its_kill_and_previous_reads_it(env):
    store, client, at = env
    store.create(R.DEPLOYMENTS.key, limited("hog", "64Mi", {"sim.pyhpa.io/memory": "100Mi",
                                                            "sim.pyhpa.io/startup-seconds": "2"}))
    at(0)
    path = pod_path(store, "hog", "log")
    at(1)
    r = client.get(path, params={"previous": "true"}).json()
    assert (r["code"], r["message"]) == (
        400, f'previous terminated container "hog" in pod "{path.split("/")[-2]}" not found')
    at(2)  # killed at 2 s, restarted at once
    previous = client.get(path, params={"previous": "true", "timestamps": "true"}).text
    assert previous.splitlines()[-1] == ("1970-01-12T13:46:42.000000000Z OOMKilled: memory over "
                                         "its limit 64Mi, killed by the kernel (exit code 137)")
    assert client.get(path).text.startswith("started: image nginx")
    at(3)  # killed again: in back-off, the log is the killed container's
    assert "OOMKilled" in client.get(path).text


def test_a_container_at_its_cpu_limit_logs_that_it_is_throttled(env):
    store, client, at = env
    dep = deployment("busy", 1, {"sim.pyhpa.io/cpu": "1", "sim.pyhpa.io/startup-seconds": "2"})
    dep["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}
    store.create(R.DEPLOYMENTS.key, dep)
    for t in (0, 1, 2, 5):
        at(t)
    path = pod_path(store, "busy", "log")
    assert client.get(path).text.splitlines()[-1] == "CPU throttled: held at its limit 200m"

    def lower(o):
        o["metadata"]["annotations"]["sim.pyhpa.io/cpu"] = "100m"
    store.guaranteed_update(R.DEPLOYMENTS.key, NS, "busy", lower)
    at(8)
    assert client.get(path).text.splitlines()[-2:] == [
        "CPU throttled: held at its limit 200m", "CPU no longer throttled"]


@pytest.mark.parametrize("sub, why", [
    ("exec", "there is no process to exec into (kubectl exec and cp need one)"),
    ("attach", "there is no process to attach to"),
    ("portforward", "there is no port to forward to"),
    ("ephemeralcontainers", "no ephemeral container can be started (kubectl debug needs one)"),
])
def test_process_subresources_are_refused_in_one_clear_line(env, sub, why):
    store, client, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 1))
    at(0)
    path = pod_path(store, "web", sub)
    name = path.split("/")[-2]
    # a WebSocket upgrade (kubectl 1.30+), the SPDY one it falls back to, and a PATCH (debug)
    for method, headers in (("GET", {"Connection": "Upgrade", "Upgrade": "websocket"}),
                            ("POST", {"Connection": "Upgrade", "Upgrade": "SPDY/3.1"}),
                            ("PATCH", {"Content-Type": "application/strategic-merge-patch+json"})):
        r = client.request(method, path, headers=headers, content=b"{}")
        assert r.status_code == 400
        body = r.json()
        assert (body["kind"], body["reason"]) == ("Status", "BadRequest")
        assert body["message"] == f'pod "{name}" is simulated by pyhpa and runs no processes: {why}'
    r = client.post(f"/api/v1/namespaces/{NS}/pods/nope/{sub}")
    assert r.status_code == 404 and r.json()["message"] == 'pods "nope" not found'


def test_a_container_held_below_its_limit_by_a_busy_node_is_not_throttled(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    clock = Clock(T0)
    server = APIServer(store)
    sim = Simulation(store, clock, node_capacity={"cpu": "300m", "memory": "4Gi", "pods": "10"})
    sim.ensure_node()
    server.pod_io.logs = functools.partial(logs.container_log, sim)
    client = TestClient(server)
    try:
        busy = deployment("busy", 1, {"sim.pyhpa.io/cpu": "1", "sim.pyhpa.io/startup-seconds": "2"})
        busy["spec"]["template"]["spec"]["containers"][0]["resources"] = {
            "requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}
        hog = deployment("hog", 1, {"sim.pyhpa.io/cpu": "10", "sim.pyhpa.io/startup-seconds": "2"})
        hog["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "150m"}}
        store.create(R.DEPLOYMENTS.key, busy)
        store.create(R.DEPLOYMENTS.key, hog)
        for t in (0, 1, 2, 5):
            clock.t = T0 + t
            sim.settle()
        # 300m shared 100:150: busy gets 120m, below its 200m limit; alone it would be held there
        assert "throttled" not in client.get(pod_path(store, "busy", "log")).text
        store.delete(R.DEPLOYMENTS.key, NS, "hog")
        for t in (6, 20, 21):
            clock.t = T0 + t
            sim.settle()
        assert client.get(pod_path(store, "busy", "log")).text.splitlines()[-1] == \
            "CPU throttled: held at its limit 200m"
    finally:
        client.close()
        store.close()
