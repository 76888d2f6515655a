"""What the API server refuses to store, with upstream's codes, messages and field paths: bad
metadata of any kind, workloads the simulation cannot run, status of the wrong shape; and
unknown fields of built-in kinds, dropped with a warning (issue 18)."""

from __future__ import annotations


import httpx
import pytest

from tests import builders
from tests.cluster.conftest import embedded_client_in_namespace

pytestmark = pytest.mark.slow

NS = "checked"
LEASES = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"
APPS = f"/apis/apps/v1/namespaces/{NS}"
CORE = f"/api/v1/namespaces/{NS}"
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
             "'-' or '.', and must start and end with an alphanumeric character (e.g. "
             "'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    yield from embedded_client_in_namespace(tmp_path_factory, NS)


def lease(**meta) -> dict:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta,
            "spec": {"holderIdentity": "me"}}


def deployment(name: str, *, labels: dict | None = None, **spec) -> dict:
    """A Deployment with one bare container; ``labels`` are its pods'."""
    return builders.deployment(name, namespace=None, containers=[builders.container("c")],
                               pod_labels=labels, **spec)


def invalid(r: httpx.Response) -> list[tuple[str, str]]:
    """(field, message) of each cause of a 422 Invalid Status."""
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["kind"] == "Status" and body["reason"] == "Invalid"
    return [(c["field"], c["message"]) for c in body["details"]["causes"]]


def test_generate_name_is_checked_like_a_name(client):
    causes = invalid(client.post(LEASES, json=lease(generateName="a/../B_")))
    assert causes[0] == ("metadata.generateName", f'Invalid value: "a/../B_": {SUBDOMAIN}')
    assert causes[1][0] == "metadata.name"  # the generated name fails as well, as upstream
    made = client.post(LEASES, json=lease(generateName="web-"))
    assert made.status_code == 201
    name = made.json()["metadata"]["name"]
    assert name.startswith("web-") and len(name) == 9
    assert client.get(f"{LEASES}/{name}").status_code == 200


def test_labels_annotations_and_owner_references(client):
    causes = invalid(client.post(LEASES, json=lease(name="l", labels={"a/b/c": "x",
                                                                      "k": "v" * 64})))
    assert [f for f, _ in causes] == ["metadata.labels", "metadata.labels"]
    assert causes[0][1].startswith('Invalid value: "a/b/c": a qualified name must consist of')
    assert causes[1][1] == f'Invalid value: "{"v" * 64}": must be no more than 63 characters'
    causes = invalid(client.post(LEASES, json=lease(name="a", annotations={"a": "x" * 262144})))
    assert causes == [("metadata.annotations", "Too long: may not be more than 262144 bytes")]
    r = client.post(LEASES, json=lease(name="o", ownerReferences=[{"apiVersion": "apps/v1"}]))
    assert invalid(r) == [(f"metadata.ownerReferences.{f}", f'Invalid value: "": {f} must not be '
                           "empty") for f in ("kind", "name", "uid")]
    assert client.get(f"{LEASES}/a").status_code == 404


def test_names_follow_the_kinds_rule(client):
    r = client.post(f"{CORE}/services", json={"apiVersion": "v1", "kind": "Service",
                                              "metadata": {"name": "1web"},
                                              "spec": {"ports": [{"port": 80}]}})
    assert invalid(r)[0][1].startswith('Invalid value: "1web": a DNS-1035 label must consist')
    r = client.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": "a.b"}})
    assert invalid(r)[0][1].startswith('Invalid value: "a.b": a lowercase RFC 1123 label')


@pytest.mark.parametrize("spec, want", [
    ({"selector": None}, [("spec.selector", "Required value")]),
    ({"selector": {}}, [("spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:"
                         "map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement"
                         "(nil)}: empty selector is invalid for deployment")]),
    ({"labels": {"app": "other"}}, [("spec.template.metadata.labels",
                                     'Invalid value: map[string]string{"app":"other"}: '
                                     "`selector` does not match template `labels`")]),
    ({"replicas": -1}, [("spec.replicas", "Invalid value: -1: must be greater than or equal "
                         "to 0")]),
    ({"template": None}, [("spec.template.metadata.labels", "Invalid value: "
                           "map[string]string(nil): `selector` does not match template "
                           "`labels`"), ("spec.template.spec.containers", "Required value")]),
])
def test_deployments_the_simulation_cannot_run_are_refused(client, spec, want):
    labels = spec.pop("labels", None)
    r = client.post(f"{APPS}/deployments", json=deployment("bad", labels=labels, **spec))
    assert invalid(r) == want
    assert client.get(f"{APPS}/deployments/bad").status_code == 404


@pytest.mark.parametrize("spec, go", [
    ({"replicas": 2 ** 40}, "number 1099511627776 into Go struct field DeploymentSpec."
                            "spec.replicas of type int32"),
    ({"replicas": "3"}, "string into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ({"template": "x"}, "string into Go struct field DeploymentSpec.spec.template of type "
                        "v1.PodTemplateSpec"),
    ({"selector": {"matchLabels": "x"}}, "string into Go struct field LabelSelector."
                                         "spec.selector.matchLabels of type map[string]string"),
])
def test_workload_fields_of_the_wrong_type_are_a_400(client, spec, go):
    r = client.post(f"{APPS}/deployments", json=deployment("typed", **spec))
    assert r.status_code == 400, r.text
    assert r.json()["message"] == ('Deployment in version "v1" cannot be handled as a '
                                   f"Deployment: json: cannot unmarshal {go}")


def test_replicasets_statefulsets_and_replication_controllers(client):
    for kind, path in (("ReplicaSet", f"{APPS}/replicasets"),
                       ("StatefulSet", f"{APPS}/statefulsets")):
        body = {**deployment("w"), "kind": kind}
        body["spec"]["template"]["metadata"]["labels"] = {"app": "x"}
        assert invalid(client.post(path, json=body))[0][0] == "spec.template.metadata.labels"
        body["spec"].pop("selector")
        assert ("spec.selector", "Required value") in invalid(client.post(path, json=body))
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
          "spec": {"replicas": 1, "selector": {"app": "rc"}}}
    assert invalid(client.post(f"{CORE}/replicationcontrollers", json=rc)) == [
        ("spec.template", "Required value")]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c"}, {"name": "c", "image": "x"}]}}
    assert invalid(client.post(f"{CORE}/pods", json=pod)) == [
        ("spec.containers[0].image", "Required value"),
        ("spec.containers[1].name", 'Duplicate value: "c"')]


def test_status_of_the_wrong_shape_is_refused(client):
    assert client.post(f"{APPS}/deployments", json=deployment("st")).status_code == 201
    r = client.patch(f"{APPS}/deployments/st/status", json={"status": "x"},
                     headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 400 and "DeploymentStatus" in r.json()["message"]
    r = client.patch(f"{APPS}/deployments/st/status", json={"status": {"replicas": -2}},
                     headers={"Content-Type": "application/merge-patch+json"})
    assert ("status.replicas", "Invalid value: -2: must be greater than or equal to 0") \
        in invalid(r)
    r = client.patch(f"{APPS}/deployments/st", json={"spec": {"selector": {"matchLabels": {
        "app": "st", "x": "y"}}, "template": {"metadata": {"labels": {"app": "st", "x": "y"}}}}},
        headers={"Content-Type": "application/merge-patch+json"})
    assert invalid(r)[0][0] == "spec.selector" and "field is immutable" in invalid(r)[0][1]


def test_unknown_fields_are_dropped_with_a_warning_or_refused_when_strict(client):
    body = deployment("extra", foo=1)
    body["spec"]["template"]["spec"]["containers"][0]["bar"] = True
    r = client.post(f"{APPS}/deployments", json=body)
    assert r.status_code == 201
    assert r.headers["warning"] == ('299 - "unknown field \\"spec.template.spec.containers[0].bar'
                                    '\\"", 299 - "unknown field \\"spec.foo\\""')  # as sent
    stored = client.get(f"{APPS}/deployments/extra").json()
    assert "foo" not in stored["spec"]
    assert "bar" not in stored["spec"]["template"]["spec"]["containers"][0]
    r = client.post(f"{APPS}/deployments", params={"fieldValidation": "Strict"},
                    json=deployment("strict", foo=1))
    assert r.status_code == 400
    assert r.json()["message"] == ('Deployment in version "v1" cannot be handled as a '
                                   'Deployment: strict decoding error: unknown field "spec.foo"')
    r = client.post(f"{APPS}/deployments", params={"fieldValidation": "Ignore"},
                    json=deployment("quiet", foo=1))
    assert r.status_code == 201 and "warning" not in r.headers
    assert "foo" not in r.json()["spec"]


def test_the_simulation_stays_ready(client):
    assert client.get("/readyz").text == "ok"
