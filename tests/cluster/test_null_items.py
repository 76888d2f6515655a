"""Values the decoder accepts that every later stage must handle (faults the API server fuzzer
found): a ``null`` item of a list of objects is read as Go reads it, an empty struct (so a
``managedFields: [null]`` is upstream's reset and a null ``matchExpressions`` item is refused
with the empty requirement's errors), whatever the store already holds never stops the
simulation's pass, and a quantity beyond int64 saturates on kube-state-metrics' page. Over
HTTP (ASGI, no sockets) against the API server and a simulation with an injected clock."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.server import APIServer
from pyhpa.cluster.apiserver.storage import Store
from pyhpa.cluster.controllers import exporters
from pyhpa.cluster.controllers.simulation import Simulation

NS = "default"
TOKEN = "s3cret"
AUTH = {"Authorization": f"Bearer {TOKEN}", "User-Agent": "fuzz/1.0"}
PODS = f"/api/v1/namespaces/{NS}/pods"
PDBS = f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets"
KSM = exporters.service_path(exporters.KUBE_STATE_METRICS)
MERGE = {**AUTH, "Content-Type": "application/merge-patch+json"}
JSON_PATCH = {**AUTH, "Content-Type": "application/json-patch+json"}


class Clock:
    t = 1_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def env(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    sim = Simulation(store, Clock(), resolution=5.0, window=15.0)
    sim.ensure_node()
    server = APIServer(store, token=TOKEN)
    exporters.install(server, sim)
    client = TestClient(server)
    yield store, sim, client
    client.close()
    store.close()


def pod(name: str, **meta) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **meta},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]}}


def pdb(name: str, expressions: list | None = None) -> dict:
    selector: dict = {"matchLabels": {"app": name}}
    if expressions is not None:
        selector["matchExpressions"] = expressions
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name}, "spec": {"minAvailable": 1, "selector": selector}}


def deployment(name: str, expressions: list) -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1,
                     "selector": {"matchLabels": labels, "matchExpressions": expressions},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}


def managers(obj: dict) -> list[str]:
    return [e["manager"] for e in obj["metadata"].get("managedFields") or []]


def test_a_null_managed_fields_entry_on_create_is_the_reset(env):
    _, _, client = env
    answer = client.post(PODS, json=pod("mf", managedFields=[None]), headers=AUTH)
    assert answer.status_code == 201, answer.text
    assert managers(answer.json()) == ["fuzz"]  # only the creator, no null entry


def test_an_undecodable_managed_fields_entry_gives_way_to_the_live_ones(env):
    _, _, client = env
    bad = {"manager": "x", "operation": "Sideways", "fieldsType": "FieldsV1",
           "fieldsV1": {"f:metadata": {}}}
    answer = client.post(PODS, json=pod("odd", managedFields=[bad]), headers=AUTH)
    assert answer.status_code == 201, answer.text
    assert managers(answer.json()) == ["fuzz"]
    answer = client.patch(f"{PODS}/odd", json={"metadata": {"managedFields": [bad]}},
                          headers=MERGE)
    assert answer.status_code == 200, answer.text
    assert managers(answer.json()) == ["fuzz"]  # the live entries are kept


@pytest.mark.parametrize("how", ["merge", "json"])
def test_a_null_managed_fields_entry_patched_onto_a_pdb_keeps_it_writable(env, how):
    store, sim, client = env
    assert client.post(PDBS, json=pdb("budget"), headers=AUTH).status_code == 201
    if how == "merge":
        answer = client.patch(f"{PDBS}/budget", json={"metadata": {"managedFields": [None]}},
                              headers=MERGE)
    else:
        answer = client.patch(f"{PDBS}/budget", headers=JSON_PATCH, json=[
            {"op": "add", "path": "/metadata/managedFields/-", "value": None}])
    assert answer.status_code == 200, answer.text
    stored = store.get(R.PDBS.key, NS, "budget")
    assert all(isinstance(e, dict) for e in stored["metadata"].get("managedFields") or [])
    sim.settle()  # the disruption controller writes the status as kube-controller-manager
    answer = client.patch(f"{PDBS}/budget", json={"metadata": {"labels": {"a": "b"}}},
                          headers=MERGE)
    assert answer.status_code == 200, answer.text


def test_a_null_entry_already_stored_does_not_stop_the_pass(env):
    store, sim, client = env
    assert client.post(PDBS, json=pdb("old"), headers=AUTH).status_code == 201
    store.guaranteed_update(R.PDBS.key, NS, "old",
                 lambda o: o["metadata"].update(managedFields=[None]))
    sim.settle()  # raises when a pass fails


@pytest.mark.parametrize("kind", ["deployments", "replicasets", "statefulsets", "pdb"])
def test_a_null_match_expressions_item_is_refused(env, kind):
    _, _, client = env
    if kind == "pdb":
        path, body = PDBS, pdb("sel", [None])
    else:
        path = f"/apis/apps/v1/namespaces/{NS}/{kind}"
        body = deployment("sel", [None])
        body["kind"] = {"replicasets": "ReplicaSet", "statefulsets": "StatefulSet"}.get(
            kind, "Deployment")
    answer = client.post(path, json=body, headers=AUTH)
    assert answer.status_code == 422, answer.text
    causes = {(c["field"], c["message"].split(":")[0])
              for c in answer.json()["details"]["causes"]}
    assert ("spec.selector.matchExpressions[0].operator", "Invalid value") in causes
    assert ("spec.selector.matchExpressions[0].key", "Invalid value") in causes


def test_a_null_container_status_neither_breaks_the_kubelet_nor_the_pages(env):
    store, sim, client = env
    assert client.post(PODS, json=pod("p"), headers=AUTH).status_code == 201
    sim.settle()
    answer = client.patch(f"{PODS}/p/status", json={"status": {"containerStatuses": [None]}},
                          headers=MERGE)
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"]["containerStatuses"] == [{}]  # Go's empty ContainerStatus
    # one written before the decoder read null items as empty ones
    store.guaranteed_update(R.PODS.key, NS, "p",
                 lambda o: o["status"].update(containerStatuses=[None]))
    sim.settle()  # raises when a pass fails
    assert client.get(PODS, headers={**AUTH, "Accept": "application/json;as=Table;v=v1;"
                                      "g=meta.k8s.io"}).status_code == 200
    assert client.get(KSM, headers=AUTH).status_code == 200


def test_a_quantity_beyond_int64_saturates_on_kube_state_metrics(env):
    _, sim, client = env
    body = pod("huge")
    body["spec"]["containers"][0]["resources"] = {"requests": {"memory": "1e309",
                                                               "cpu": "1e309"}}
    answer = client.post(PODS, json=body, headers=AUTH)
    assert answer.status_code == 201, answer.text
    sim.settle()
    page = client.get(KSM, headers=AUTH)
    assert page.status_code == 200, page.text
    lines = [line for line in page.text.splitlines()
             if line.startswith("kube_pod_container_resource_requests{") and 'pod="huge"' in line]
    values = {line.split('resource="')[1].split('"')[0]: line.rsplit(" ", 1)[1] for line in lines}
    assert float(values["memory"]) == float(2**63 - 1)
    assert float(values["cpu"]) == (2**63 - 1) / 1000


def test_a_null_string_item_reads_as_the_empty_string(env):
    _, _, client = env
    policy = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
              "metadata": {"name": "np"},
              "spec": {"podSelector": {"matchExpressions": [
                  {"key": "a", "operator": "In", "values": [None]}]}}}
    answer = client.post(f"/apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies",
                         json=policy, headers=AUTH)
    assert answer.status_code == 201, answer.text  # "" is a valid label value
    assert answer.json()["spec"]["podSelector"]["matchExpressions"][0]["values"] == [""]


@pytest.mark.parametrize("sent, kept", [([{}], []), ([None], []), ([], ["fuzz"])])
def test_the_reset_clears_the_entries_and_an_empty_list_keeps_them(env, sent, kept):
    _, _, client = env
    assert client.post(PODS, json=pod("r"), headers=AUTH).status_code == 201
    answer = client.patch(f"{PODS}/r", json={"metadata": {"managedFields": sent}}, headers=MERGE)
    assert answer.status_code == 200, answer.text
    assert managers(answer.json()) == kept
