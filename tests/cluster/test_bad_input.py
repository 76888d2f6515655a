"""Bad input to the API server: every one gets a Kubernetes Status with a 4xx code (upstream's
code and message), never a 500, a plain-text error or a changed store (issue 18)."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.embedded import EmbeddedCluster
from tests.cluster.conftest import client_in_namespace

pytestmark = pytest.mark.slow

NS = "bad-input"
LEASES = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"
CONFIGS = f"/api/v1/namespaces/{NS}/services"
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with EmbeddedCluster(tmp_path_factory.mktemp("bad-input")) as c:
        yield c


@pytest.fixture(scope="module")
def client(cluster):
    yield from client_in_namespace(cluster, NS)


def lease(name: str, **meta) -> dict:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, **meta}, "spec": {"holderIdentity": "me"}}


def status_of(r: httpx.Response, code: int, reason: str) -> dict:
    """The response's Status, checked to be one with this code and reason."""
    assert r.status_code == code, r.text
    assert r.headers["content-type"].startswith("application/json"), r.text
    body = r.json()
    assert body["kind"] == "Status" and body["code"] == code and body["reason"] == reason, body
    return body


@pytest.mark.parametrize("depth", [2_000, 100_000])
def test_deep_nesting_is_a_400(client, depth):
    body = b'{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"deep"},' \
           b'"spec":{"x":' + b"[" * depth + b"]" * depth + b"}}"
    status = status_of(client.post(LEASES, content=body,
                                   headers={"Content-Type": "application/json"}),
                       400, "BadRequest")
    assert "exceeded max depth" in status["message"]
    yaml_body = ("apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: deep}\n"
                 "spec: {x: " + "[" * depth + "]" * depth + "}\n").encode()
    status_of(client.patch(f"{LEASES}/deep", params={"fieldManager": "t"}, content=yaml_body,
                           headers={"Content-Type": "application/apply-patch+yaml"}),
              400, "BadRequest")
    assert client.get(f"{LEASES}/deep").status_code == 404


@pytest.mark.parametrize("meta, go_field, go_type", [
    ({"name": 123}, "ObjectMeta.metadata.name", "string"),
    ({"generateName": 5}, "ObjectMeta.metadata.generateName", "string"),
    ({"name": "o", "ownerReferences": "x"}, "ObjectMeta.metadata.ownerReferences",
     "[]v1.OwnerReference"),
    ({"name": "l", "labels": ["a"]}, "ObjectMeta.metadata.labels", "map[string]string"),
    ({"name": "a", "annotations": "x"}, "ObjectMeta.metadata.annotations", "map[string]string"),
])
def test_metadata_of_the_wrong_type_is_a_400_in_gos_words(client, meta, go_field, go_type):
    r = client.post(LEASES, json={**lease("x"), "metadata": meta})
    status = status_of(r, 400, "BadRequest")
    value = {int: "number", str: "string", list: "array"}[type(next(iter(
        v for k, v in meta.items() if go_field.endswith("." + k))))]
    assert status["message"] == (f'Lease in version "v1" cannot be handled as a Lease: json: '
                                 f"cannot unmarshal {value} into Go struct field {go_field} of "
                                 f"type {go_type}")


def test_a_lone_surrogate_escape_is_replaced_as_go_does(client):
    body = b'{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"sur"},' \
           b'"spec":{"holderIdentity":"a\\ud800b"}}'
    r = client.post(LEASES, content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    assert client.get(f"{LEASES}/sur").json()["spec"]["holderIdentity"] == "a\ufffdb"


@pytest.mark.parametrize("body", [b"NaN", b'{"a": Infinity}', b"\xff\xfe", b"", b"[1,",
                                  b'{"spec": 1e999}'])
def test_bytes_that_are_not_json_are_a_400(client, body):
    status_of(client.post(LEASES, content=body, headers={"Content-Type": "application/json"}),
              400, "BadRequest")


def test_a_body_in_an_unknown_format_is_a_415(client):
    r = client.post(LEASES, content=json.dumps(lease("plain")),
                    headers={"Content-Type": "text/plain"})
    status = status_of(r, 415, "UnsupportedMediaType")
    assert status["message"].startswith("the body of the request was in an unknown format - "
                                        "accepted media types include: application/json")
    r = client.patch(f"{LEASES}/plain", content=b"{}", headers={"Content-Type": "text/plain"})
    status_of(r, 415, "UnsupportedMediaType")
    assert client.get(f"{LEASES}/plain").status_code == 404


def test_a_dry_run_typo_is_refused_and_stores_nothing(client):
    r = client.post(LEASES, params={"dryRun": "Al"}, json=lease("typo"))
    status = status_of(r, 422, "Invalid")
    assert status["message"] == ('CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported '
                                 'value: []string{"Al"}: supported values: "All"')
    assert status["details"]["causes"] == [{"reason": "FieldValueNotSupported", "field": "dryRun",
                                            "message": 'Unsupported value: []string{"Al"}: '
                                                       'supported values: "All"'}]
    assert client.get(f"{LEASES}/typo").status_code == 404
    assert client.post(LEASES, params={"dryRun": "All"}, json=lease("typo")).status_code == 201
    assert client.get(f"{LEASES}/typo").status_code == 404
    r = client.post(LEASES, params={"fieldValidation": "strict"}, json=lease("typo"))
    assert "fieldValidation: Unsupported value" in status_of(r, 422, "Invalid")["message"]
    r = client.delete(f"{LEASES}/typo", params={"dryRun": "Al"})
    assert status_of(r, 422, "Invalid")["details"]["kind"] == "DeleteOptions"


def test_list_options_are_checked_as_upstream_checks_them(client):
    for i in range(3):
        assert client.post(LEASES, json=lease(f"l{i}")).status_code == 201
    everything = client.get(LEASES).json()["items"]
    # upstream reads a negative limit as no limit: the whole list, not one item
    assert len(client.get(LEASES, params={"limit": "-1"}).json()["items"]) == len(everything)
    status = status_of(client.get(LEASES, params={"limit": "x"}), 400, "BadRequest")
    assert status["message"] == 'limit: strconv.ParseInt: parsing "x": invalid syntax'
    status = status_of(client.get(LEASES, params={"resourceVersion": "abc"}), 400, "BadRequest")
    assert status["message"] == ('invalid resource version: resourceVersion: Invalid value: '
                                 '"abc": strconv.ParseUint: parsing "abc": invalid syntax')
    status = status_of(client.get(LEASES, params={"resourceVersionMatch": "Exact"}),
                       422, "Invalid")
    assert status["message"] == ('ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: '
                                 'Forbidden: resourceVersionMatch is forbidden unless '
                                 'resourceVersion is provided')
    status = status_of(client.get(LEASES, params={"resourceVersion": "1",
                                                  "resourceVersionMatch": "Bogus"}),
                       422, "Invalid")
    assert 'Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""' \
        in status["message"]
    current = int(client.get(LEASES).json()["metadata"]["resourceVersion"])
    status = status_of(client.get(LEASES, params={"resourceVersion": str(current + 1000)}),
                       504, "Timeout")
    assert status["message"] == (f"Timeout: Too large resource version: {current + 1000}, "
                                 f"current: {current}")
    assert status["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    exact = client.get(LEASES, params={"resourceVersion": str(current),
                                       "resourceVersionMatch": "Exact"})
    assert exact.status_code == 200 and exact.json()["metadata"]["resourceVersion"] == str(current)


def test_watch_options_are_checked(client):
    status = status_of(client.get(LEASES, params={"watch": "true", "timeoutSeconds": "nan"}),
                       400, "BadRequest")
    assert "timeoutSeconds" in status["message"]
    start = time.monotonic()
    r = client.get(LEASES, params={"watch": "true", "timeoutSeconds": "-1",
                                   "resourceVersion": client.get(LEASES).json()["metadata"][
                                       "resourceVersion"]})
    assert r.status_code == 200 and time.monotonic() - start < 15  # not held open
    current = int(client.get(LEASES).json()["metadata"]["resourceVersion"])
    r = client.get(LEASES, params={"watch": "true", "resourceVersion": str(current + 1000)})
    assert r.status_code == 200
    event = json.loads(r.text.splitlines()[0])
    assert event["type"] == "ERROR" and event["object"]["code"] == 504
    assert event["object"]["message"].startswith("Timeout: Too large resource version:")
    # upstream's parameter codec: only absent, "0" and "false" are false
    client.post(LEASES, json=lease("watched"))
    for value in ("yes", "", "True"):
        lines = client.get(f"{LEASES}?watch={value}&timeoutSeconds=1").text.splitlines()
        assert json.loads(lines[0])["type"] == "ADDED", value
    assert client.get(LEASES, params={"watch": "0"}).json()["kind"] == "LeaseList"


def test_bad_patches_are_4xx(client):
    assert client.post(LEASES, json=lease("p")).status_code == 201
    for ctype, body in [
            ("application/json-patch+json", [{"op": "add", "path": 5, "value": 1}]),
            ("application/json-patch+json", [{"op": "copy", "from": 1, "path": "/spec/a"}]),
            ("application/json-patch+json", [{"op": "add", "path": "/metadata", "value": "x"}]),
            ("application/json-patch+json", {"op": "add"}),
            ("application/merge-patch+json", {"metadata": {"labels": ["x"]}}),
            ("application/merge-patch+json", {"spec": {"leaseDurationSeconds": "long"}}),
            ("application/strategic-merge-patch+json", {"metadata": "x"}),
            ("application/merge-patch+json", []),
    ]:
        r = client.patch(f"{LEASES}/p", content=json.dumps(body),
                         headers={"Content-Type": ctype})
        assert 400 <= r.status_code < 500 and r.json()["kind"] == "Status", (body, r.text)


def test_deletes_never_fail_on_another_objects_owner_references(cluster, client):
    # stored before metadata was checked: the server must still delete around it
    cluster.store.create(R.LEASES.key, {**lease("broken", namespace=NS, ownerReferences="x")})
    cluster.store.create(R.LEASES.key, {**lease("odd", namespace=NS, ownerReferences=["x", 1])})
    for name in ("d1", "d2"):
        assert client.post(LEASES, json=lease(name)).status_code == 201
    assert client.delete(f"{LEASES}/d1").status_code == 200
    assert client.request("DELETE", f"{LEASES}/d2", json={"propagationPolicy": "Foreground"}
                          ).status_code == 200
    assert client.delete(f"{LEASES}/broken").status_code == 200
    status = status_of(client.request("DELETE", f"{LEASES}/odd", json={"propagationPolicy": "x"}),
                       422, "Invalid")
    assert status["message"].startswith('DeleteOptions.meta.k8s.io "" is invalid: '
                                        'propagationPolicy: Unsupported value: "x"')
    status_of(client.request("DELETE", f"{LEASES}/odd", json={"gracePeriodSeconds": "soon"}),
              400, "BadRequest")
    assert client.delete(f"{LEASES}/odd").status_code == 200


def test_the_server_stays_ready(client):
    assert client.get("/readyz").text == "ok"
