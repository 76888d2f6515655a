"""managedFields for every writer (issue #16, item 4): requests named by fieldManager or by their
User-Agent, the scale subresource, status writes, the simulated controllers; and server-side
apply conflicting on what they own, worded as upstream words it."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from pyhpa.adapters.kube.client import CONTROLLER_MANAGER, KubeClient, check_manager, load_config
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import manager_from_user_agent
from pyhpa.cluster.apiserver.storage import Store
from pyhpa.cluster.controllers.simulation import Simulation
from pyhpa.cluster.embedded import EmbeddedCluster
from tests import builders

NS = "default"
DEPS = f"/apis/apps/v1/namespaces/{NS}/deployments"
HPAS_V1 = f"/apis/autoscaling/v1/namespaces/{NS}/horizontalpodautoscalers"
HPAS_V2 = f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers"
APPLY = {"Content-Type": "application/apply-patch+yaml"}
MERGE = {"Content-Type": "application/merge-patch+json"}
# what upstream's HPA controller sends (its product is kube-controller-manager)
KCM_AGENT = {"User-Agent": "kube-controller-manager/v1.33.1 (linux/amd64) kubernetes/8adc0f0/"
                           "system:serviceaccount:kube-system:horizontal-pod-autoscaler"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with EmbeddedCluster(tmp_path_factory.mktemp("mf"), simulate=False) as c:
        yield c


def deployment(name: str, replicas: int = 1) -> dict:
    """One container named after the Deployment, with no requests."""
    return builders.deployment(name, replicas, namespace=None, containers=[builders.container(name)])


def entries(obj: dict) -> list[dict]:
    return obj["metadata"].get("managedFields") or []


def entry(obj: dict, manager: str, subresource: str = "") -> dict:
    [found] = [e for e in entries(obj)
               if e["manager"] == manager and e.get("subresource", "") == subresource]
    return found


def ssa(client, path: str, body: dict, manager: str = "kubectl", force: bool = False):
    url = f"{path}?fieldManager={manager}" + ("&force=true" if force else "")
    return client.patch(url, content=json.dumps(body).encode(), headers=APPLY)


def test_hpa_scale_is_owned_by_kube_controller_manager_and_apply_conflicts(client):
    assert ssa(client, f"{DEPS}/web", deployment("web")).status_code == 201
    # the HPA controller scales to 8 through the scale subresource, naming no fieldManager
    r = client.patch(f"{DEPS}/web/scale", content=b'{"spec":{"replicas":8}}',
                     headers={**MERGE, **KCM_AGENT})
    assert r.status_code == 200 and r.json()["spec"]["replicas"] == 8
    dep = client.get(f"{DEPS}/web").json()
    scaled = entry(dep, "kube-controller-manager", "scale")
    assert (scaled["operation"], scaled["apiVersion"], scaled["fieldsV1"]) == \
        ("Update", "apps/v1", {"f:spec": {"f:replicas": {}}})
    # the scale write took replicas from the applier
    assert "f:replicas" not in entry(dep, "kubectl")["fieldsV1"]["f:spec"]
    # applying replicas: 1 again is a conflict, as on a real cluster
    clash = ssa(client, f"{DEPS}/web", deployment("web"))
    assert clash.status_code == 409
    body = clash.json()
    assert body["reason"] == "Conflict"
    assert body["message"] == ('Apply failed with 1 conflict: conflict with '
                               '"kube-controller-manager" with subresource "scale" using apps/v1: '
                               '.spec.replicas')
    assert body["details"]["causes"] == [{
        "reason": "FieldManagerConflict", "field": ".spec.replicas",
        "message": 'conflict with "kube-controller-manager" with subresource "scale" using apps/v1'}]
    assert client.get(f"{DEPS}/web").json()["spec"]["replicas"] == 8
    # --force-conflicts takes the field over
    forced = ssa(client, f"{DEPS}/web", deployment("web"), force=True)
    assert forced.status_code == 200 and forced.json()["spec"]["replicas"] == 1
    assert [e["manager"] for e in entries(forced.json())] == ["kubectl"]
    assert "f:replicas" in entry(forced.json(), "kubectl")["fieldsV1"]["f:spec"]


def test_a_write_without_field_manager_is_named_by_its_user_agent(client):
    assert ssa(client, f"{DEPS}/ua", deployment("ua")).status_code == 201
    # kubectl scale sends no fieldManager: its binary's name, before the first "/", is used
    agent = {"User-Agent": "kubectl.1.27/v1.27.16 (linux/amd64) kubernetes/cbb86e0"}
    r = client.patch(f"{DEPS}/ua/scale", content=b'{"spec":{"replicas":3}}',
                     headers={**MERGE, **agent})
    assert r.status_code == 200
    dep = client.get(f"{DEPS}/ua").json()
    assert entry(dep, "kubectl.1.27", "scale")["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    clash = ssa(client, f"{DEPS}/ua", deployment("ua"))
    assert 'conflict with "kubectl.1.27" with subresource "scale" using apps/v1: .spec.replicas' \
        in clash.json()["message"]
    # a scale to the same replicas changes nothing, so it records nothing
    client.patch(f"{DEPS}/ua/scale?fieldManager=other", content=b'{"spec":{"replicas":3}}',
                 headers=MERGE)
    assert "other" not in [e["manager"] for e in entries(client.get(f"{DEPS}/ua").json())]
    # fieldManager wins over the User-Agent
    client.patch(f"{DEPS}/ua?fieldManager=mine", content=b'{"spec":{"minReadySeconds":4}}',
                 headers={**MERGE, **agent})
    mine = entry(client.get(f"{DEPS}/ua").json(), "mine")
    assert (mine["operation"], mine["fieldsV1"]) == \
        ("Update", {"f:spec": {"f:minReadySeconds": {}}})


def test_status_writes_are_recorded_with_subresource_status(client):
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "st"},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": "web"}, "maxReplicas": 10}}
    assert client.post(f"{HPAS_V2}?fieldManager=kubectl-create", json=hpa).status_code == 201
    live = client.get(f"{HPAS_V2}/st").json()
    live["status"] = {"currentReplicas": 8, "desiredReplicas": 8}
    r = client.put(f"{HPAS_V2}/st/status", json=live, headers=KCM_AGENT)
    assert r.status_code == 200
    status = entry(r.json(), "kube-controller-manager", "status")
    assert (status["operation"], status["apiVersion"]) == ("Update", "autoscaling/v2")
    assert status["fieldsV1"] == {"f:status": {"f:currentReplicas": {}, "f:desiredReplicas": {}}}
    assert "f:status" not in entry(r.json(), "kubectl-create")["fieldsV1"]


def test_a_v1_created_hpa_owns_its_fields_in_v1_terms(client):
    v1 = {"kind": "HorizontalPodAutoscaler", "apiVersion": "autoscaling/v1",
          "metadata": {"name": "old"},
          "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                   "minReplicas": 2, "maxReplicas": 5, "targetCPUUtilizationPercentage": 80},
          "status": {"currentReplicas": 0, "desiredReplicas": 0}}
    r = client.post(f"{HPAS_V1}?fieldManager=kubectl-autoscale", json=v1)
    assert r.status_code == 201
    # autoscaling/v1's CrossVersionObjectReference is an atomic struct: owned as one field
    want = {"f:spec": {"f:maxReplicas": {}, "f:minReplicas": {}, "f:scaleTargetRef": {},
                       "f:targetCPUUtilizationPercentage": {}}}
    for path in (HPAS_V1, HPAS_V2):  # the same entries whichever version reads them
        e = entry(client.get(f"{path}/old").json(), "kubectl-autoscale")
        assert (e["apiVersion"], e["fieldsV1"]) == ("autoscaling/v1", want)
    # an autoscaling/v2 apply of another CPU target changes what the v1 entry owns
    v2 = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
          "metadata": {"name": "old"},
          "spec": {"scaleTargetRef": v1["spec"]["scaleTargetRef"], "minReplicas": 2,
                   "maxReplicas": 5,
                   "metrics": [{"type": "Resource", "resource": {
                       "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]}}
    clash = ssa(client, f"{HPAS_V2}/old", v2)
    assert clash.status_code == 409
    assert clash.json()["message"] == (
        'Apply failed with 1 conflict: conflict with "kubectl-autoscale" using autoscaling/v1: '
        '.spec.targetCPUUtilizationPercentage')
    # the same values as the v1 manager set: no conflict, the fields are shared
    v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] = 80
    ok = ssa(client, f"{HPAS_V2}/old", v2)
    assert ok.status_code == 200, ok.text
    assert entry(ok.json(), "kubectl-autoscale")["fieldsV1"] == want
    assert "f:metrics" in entry(ok.json(), "kubectl")["fieldsV1"]["f:spec"]


def test_several_conflicts_are_grouped_per_manager(client):
    assert ssa(client, f"{DEPS}/many", deployment("many"), manager="a").status_code == 201
    client.patch(f"{DEPS}/many?fieldManager=b",
                 content=b'{"spec":{"replicas":2,"minReadySeconds":3}}', headers=MERGE)
    changed = deployment("many", replicas=5)
    changed["spec"]["minReadySeconds"] = 9
    clash = ssa(client, f"{DEPS}/many", changed, manager="a")
    assert clash.status_code == 409
    assert clash.json()["message"] == ('Apply failed with 2 conflicts: conflicts with "b" using '
                                       'apps/v1:\n- .spec.minReadySeconds\n- .spec.replicas')


def test_the_live_controller_writes_as_the_manager_it_is_given(cluster, client):
    assert ssa(client, f"{DEPS}/ctl", deployment("ctl")).status_code == 201

    async def scale_to(n: int, **kwargs) -> None:
        kube = KubeClient.from_config(load_config(str(cluster.kubeconfig_path)), qps=0, **kwargs)
        try:
            scale = await kube.get(f"{DEPS}/ctl/scale")
            scale["spec"]["replicas"] = n
            await kube.put(f"{DEPS}/ctl/scale", scale)
        finally:
            await kube.close()

    asyncio.run(scale_to(4))  # `pyhpa run` against a cluster: its own name
    assert entry(client.get(f"{DEPS}/ctl").json(), "pyhpa-controller", "scale")
    asyncio.run(scale_to(6, manager=CONTROLLER_MANAGER))  # the embedded cluster's controller
    dep = client.get(f"{DEPS}/ctl").json()
    assert [e["manager"] for e in entries(dep) if e.get("subresource") == "scale"] == \
        ["kube-controller-manager"]


def test_the_servers_own_objects_are_kube_apiservers(client):
    for path in ("/api/v1/namespaces/default", "/api/v1/namespaces/default/services/kubernetes",
                 "/api/v1/namespaces/default/endpoints/kubernetes"):
        made = entry(client.get(path).json(), "kube-apiserver")
        assert made["operation"] == "Update" and "f:labels" in made["fieldsV1"]["f:metadata"]


def test_manager_names_from_user_agents_and_flags():
    assert manager_from_user_agent("kubectl/v1.33.1 (linux/amd64) kubernetes/8adc0f0") == \
        "kubectl"
    assert manager_from_user_agent("my\x07tool/1.0") == "mytool"  # unprintable: dropped
    assert manager_from_user_agent("x" * 300) == "x" * 128  # upstream's length limit
    check_manager("kube-controller-manager")
    for bad in ("a/b", "with space", "x" * 129):
        with pytest.raises(ValueError, match="--field-manager"):
            check_manager(bad)


# --------------------------------------------------------------------------- the simulation


def test_the_simulated_controllers_record_their_writes(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    clock = [1_000_000.0]
    sim = Simulation(store, lambda: clock[0], resolution=5.0, window=15.0)
    sim.ensure_node()
    try:
        dep = deployment("web", 2)
        dep["metadata"]["namespace"] = NS
        dep["metadata"]["annotations"] = {"sim.pyhpa.io/startup-seconds": "2"}
        store.create(R.DEPLOYMENTS.key, dep)
        big = deployment("big", 1)  # asks more CPU than the node has: never scheduled
        big["metadata"]["namespace"] = NS
        big["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "64"}}
        store.create(R.DEPLOYMENTS.key, big)
        for t in (0, 1, 5):
            clock[0] = 1_000_000.0 + t
            sim.settle()
        [rs] = [r for r in store.list(R.REPLICA_SETS.key, NS).items
                if r["metadata"]["name"].startswith("web-")]
        rs_main = entry(rs, "kube-controller-manager")
        assert rs_main["operation"] == "Update" and rs_main["apiVersion"] == "apps/v1"
        assert {"f:replicas", "f:selector", "f:template"} <= set(rs_main["fieldsV1"]["f:spec"])
        assert "f:ownerReferences" in rs_main["fieldsV1"]["f:metadata"]
        assert "f:readyReplicas" in entry(rs, "kube-controller-manager", "status")["fieldsV1"][
            "f:status"]
        web = store.get(R.DEPLOYMENTS.key, NS, "web")
        dep_status = entry(web, "kube-controller-manager", "status")
        assert {"f:availableReplicas", "f:conditions", "f:replicas"} <= \
            set(dep_status["fieldsV1"]["f:status"])
        assert "f:deployment.kubernetes.io/revision" in \
            entry(web, "kube-controller-manager")["fieldsV1"]["f:metadata"]["f:annotations"]
        pods = store.list(R.PODS.key, NS, label_selector="app=web").items
        assert len(pods) == 2
        for pod in pods:
            created = entry(pod, "kube-controller-manager")
            assert created["apiVersion"] == "v1" and "f:status" not in created["fieldsV1"]
            assert "f:ownerReferences" in created["fieldsV1"]["f:metadata"]
            kubelet = entry(pod, "kubelet", "status")
            assert {"f:phase", "f:conditions", "f:containerStatuses"} <= \
                set(kubelet["fieldsV1"]["f:status"])
            # the binding is recorded in no entry, as upstream's
            assert all("f:nodeName" not in (e["fieldsV1"].get("f:spec") or {})
                       for e in entries(pod))
        [waiting] = store.list(R.PODS.key, NS, label_selector="app=big").items
        scheduler = entry(waiting, "kube-scheduler", "status")
        assert scheduler["fieldsV1"] == {"f:status": {"f:conditions": {}}}
        node = store.list(R.NODES.key).items[0]
        assert "f:labels" in entry(node, "kubelet")["fieldsV1"]["f:metadata"]
        lease = store.list(R.LEASES.key, "kube-node-lease").items[0]
        assert "f:renewTime" in entry(lease, "kubelet")["fieldsV1"]["f:spec"]
        # the components' Events are written by the process each runs in
        writers = {(e["source"]["component"], e["metadata"]["managedFields"][0]["manager"])
                   for e in store.list(R.EVENTS.key, NS).items}
        assert {("deployment-controller", "kube-controller-manager"),
                ("replicaset-controller", "kube-controller-manager"),
                ("default-scheduler", "kube-scheduler"), ("kubelet", "kubelet")} <= writers
    finally:
        store.close()


PORTS_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "gateways.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "gateways", "kind": "Gateway"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                 "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                     "type": "object", "properties": {"ports": {
                         "type": "array", "x-kubernetes-list-type": "map",
                         "x-kubernetes-list-map-keys": ["port"],
                         "items": {"type": "object", "required": ["port"], "properties": {
                             "port": {"type": "integer"},
                             "name": {"type": "string"}}}}}}}}}}]}}


def test_a_custom_kinds_keyed_list_is_owned_per_element(client):
    assert client.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                       json=PORTS_CRD).status_code == 201
    url = f"/apis/example.com/v1/namespaces/{NS}/gateways/gw"

    def apply(manager: str, port: int) -> httpx.Response:
        body = {"apiVersion": "example.com/v1", "kind": "Gateway", "metadata": {"name": "gw"},
                "spec": {"ports": [{"port": port, "name": manager}]}}
        return client.patch(f"{url}?fieldManager={manager}", json=body, headers=APPLY)

    assert apply("a", 80).status_code == 201
    r = apply("b", 443)
    assert r.status_code == 200, r.text
    assert [p["port"] for p in r.json()["spec"]["ports"]] == [80, 443]
    assert entry(r.json(), "b")["fieldsV1"] == {"f:spec": {"f:ports": {
        'k:{"port":443}': {".": {}, "f:name": {}, "f:port": {}}}}}
