"""Endpoints and EndpointSlices kept from each Service's pods (controllers/endpoints.py), and
namespace deletion through Terminating (:mod:`pyhpa.cluster.apiserver.namespace_deletion`),
driven through the HTTP API of a running cluster."""

from __future__ import annotations

import ssl

import httpx
import pytest

from pyhpa.cluster.embedded import EmbeddedCluster
from tests.cluster.conftest import wait_for


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with EmbeddedCluster(tmp_path_factory.mktemp("ep")) as c, httpx.Client(
            base_url=c.url, verify=ssl.create_default_context(cafile=str(c.ca_path)),
            headers={"Authorization": f"Bearer {c.token}"}, timeout=10) as client:
        yield client


def _app(api, ns: str, replicas: int = 2) -> None:
    assert api.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": ns}}).status_code == 201
    r = api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json={
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "annotations": {"sim.pyhpa.io/startup-seconds": "1",
                                                    "sim.pyhpa.io/termination-seconds": "2"}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{
                                  "name": "web", "image": "nginx",
                                  "ports": [{"name": "http", "containerPort": 8080}]}]}}}})
    assert r.status_code == 201, r.text
    r = api.post(f"/api/v1/namespaces/{ns}/services", json={
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}})
    assert r.status_code == 201, r.text


def test_services_get_endpoints_and_a_slice_of_their_ready_pods(api):
    _app(api, "ep")

    def endpoints():
        ep = api.get("/api/v1/namespaces/ep/endpoints/web").json()
        subsets = ep.get("subsets") or []
        return subsets if subsets and len(subsets[0].get("addresses") or []) == 2 else None
    subsets = wait_for(endpoints, 30, "two ready addresses")
    assert subsets[0]["ports"] == [{"port": 8080, "protocol": "TCP"}]
    assert {a["targetRef"]["kind"] for a in subsets[0]["addresses"]} == {"Pod"}
    slices = api.get("/apis/discovery.k8s.io/v1/namespaces/ep/endpointslices",
                     params={"labelSelector": "kubernetes.io/service-name=web"}).json()["items"]
    assert len(slices) == 1 and slices[0]["addressType"] == "IPv4"
    assert slices[0]["ports"] == [{"name": "", "protocol": "TCP", "port": 8080}]
    assert [e["conditions"] for e in slices[0]["endpoints"]] == [
        {"ready": True, "serving": True, "terminating": False}] * 2
    assert slices[0]["metadata"]["ownerReferences"][0]["kind"] == "Service"
    # a deleted Service takes its Endpoints and slice with it
    assert api.delete("/api/v1/namespaces/ep/services/web").status_code == 200
    wait_for(lambda: api.get("/api/v1/namespaces/ep/endpoints/web").status_code == 404, 30,
             "the Endpoints gone")


def test_a_deleted_namespace_terminates_its_pods_then_goes(api):
    _app(api, "doomed")
    wait_for(lambda: len([p for p in api.get("/api/v1/namespaces/doomed/pods").json()["items"]
                          if p["status"].get("phase") == "Running"]) == 2, 30, "pods running")
    r = api.delete("/api/v1/namespaces/doomed")
    assert r.status_code == 200
    ns = r.json()
    assert ns["status"]["phase"] == "Terminating" and ns["metadata"]["deletionTimestamp"]
    got = api.get("/api/v1/namespaces/doomed").json()
    assert got["status"]["phase"] == "Terminating"
    remaining = {c["type"]: c for c in got["status"]["conditions"]}
    assert remaining["NamespaceContentRemaining"]["status"] == "True"
    assert remaining["NamespaceContentRemaining"]["message"] == \
        "Some resources are remaining: pods. has 2 resource instances"
    pods = api.get("/api/v1/namespaces/doomed/pods").json()["items"]
    assert len(pods) == 2 and all(p["metadata"].get("deletionTimestamp") for p in pods)
    assert api.get("/apis/apps/v1/namespaces/doomed/deployments/web").status_code == 404
    wait_for(lambda: api.get("/api/v1/namespaces/doomed").status_code == 404, 30,
             "the namespace gone")


def test_nothing_new_is_created_in_a_terminating_namespace(api):
    _app(api, "closing")
    wait_for(lambda: api.get("/api/v1/namespaces/closing/pods").json()["items"], 30, "pods")
    assert api.delete("/api/v1/namespaces/closing").status_code == 200
    r = api.post("/api/v1/namespaces/closing/configmaps", json={
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late"}})
    assert r.status_code == 403
    assert r.json()["message"] == ('configmaps "late" is forbidden: unable to create new content '
                                   "in namespace closing because it is being terminated")
    assert r.json()["details"]["causes"][0]["reason"] == "NamespaceTerminating"
