"""A ``null`` resource quantity (``resources: {requests: {cpu: }}``) on every workload kind and
write path: upstream's ``Quantity.UnmarshalJSON`` reads ``null`` as zero, so the object is kept
with ``cpu: "0"`` and never answered with a 500 (issue 28)."""

from __future__ import annotations


import httpx
import pytest
import yaml

from tests.cluster.conftest import embedded_client_in_namespace

pytestmark = pytest.mark.slow

NS = "null-quantity"
KINDS = {
    "Pod": ("v1", "pods"),
    "ReplicationController": ("v1", "replicationcontrollers"),
    "Deployment": ("apps/v1", "deployments"),
    "ReplicaSet": ("apps/v1", "replicasets"),
    "StatefulSet": ("apps/v1", "statefulsets"),
}
NULL_RESOURCES = {"requests": {"cpu": None}, "limits": {"memory": None}}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    yield from embedded_client_in_namespace(tmp_path_factory, NS)


def collection(kind: str) -> str:
    version, plural = KINDS[kind]
    prefix = "/api/v1" if version == "v1" else f"/apis/{version}"
    return f"{prefix}/namespaces/{NS}/{plural}"


def container(resources: dict | None = None) -> dict:
    c = {"name": "app", "image": "app:1"}
    if resources is not None:
        c["resources"] = resources
    return c


def manifest(kind: str, name: str, resources: dict | None = None) -> dict:
    pod_spec = {"containers": [container(resources)]}
    obj = {"apiVersion": KINDS[kind][0], "kind": kind, "metadata": {"name": name}}
    if kind == "Pod":
        obj["spec"] = pod_spec
        return obj
    template = {"metadata": {"labels": {"app": name}}, "spec": pod_spec}
    if kind == "ReplicationController":
        obj["spec"] = {"replicas": 1, "selector": {"app": name}, "template": template}
    else:
        obj["spec"] = {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                       "template": template}
        if kind == "StatefulSet":
            obj["spec"]["serviceName"] = name
    return obj


def containers_path(kind: str) -> str:
    return "/spec/containers" if kind == "Pod" else "/spec/template/spec/containers"


def stored_resources(client: httpx.Client, kind: str, name: str) -> dict:
    r = client.get(f"{collection(kind)}/{name}")
    assert r.status_code == 200, r.text
    spec = r.json()["spec"]
    pod_spec = spec if kind == "Pod" else spec["template"]["spec"]
    return pod_spec["containers"][0].get("resources", {})


def assert_zero(client: httpx.Client, r: httpx.Response, kind: str, name: str) -> None:
    assert r.status_code in (200, 201), r.text
    resources = stored_resources(client, kind, name)
    # (a pod's requests default to its limits, so ``memory`` may show up there too)
    assert resources["requests"]["cpu"] == "0" and resources["limits"] == {"memory": "0"}


@pytest.mark.parametrize("kind", KINDS)
def test_create_reads_null_quantity_as_zero(client, kind):
    name = f"create-{kind.lower()}"
    r = client.post(collection(kind), json=manifest(kind, name, NULL_RESOURCES))
    assert_zero(client, r, kind, name)


@pytest.mark.parametrize("kind", KINDS)
def test_create_from_yaml_with_bare_key(client, kind):
    """``kubectl create -f`` of a manifest with a bare ``cpu:`` sends the same null."""
    name = f"yaml-{kind.lower()}"
    text = yaml.safe_dump(manifest(kind, name, NULL_RESOURCES))
    assert "cpu: null" in text
    r = client.post(collection(kind), content=text.replace("cpu: null", "cpu:"),
                    headers={"Content-Type": "application/yaml"})
    assert_zero(client, r, kind, name)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "Pod"])
def test_merge_patch_replacing_containers(client, kind):
    """A merge patch replaces the containers list whole, nulls inside it included."""
    name = f"merge-{kind.lower()}"
    assert client.post(collection(kind), json=manifest(kind, name)).status_code == 201
    patch = {"spec": {"template": {"spec": {"containers": [container(NULL_RESOURCES)]}}}}
    r = client.patch(f"{collection(kind)}/{name}", json=patch,
                     headers={"Content-Type": "application/merge-patch+json"})
    assert_zero(client, r, kind, name)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "Pod"])
def test_strategic_merge_patch_with_null_quantities(client, kind):
    """A strategic merge patch reads a null as "remove this key": the request is kept."""
    name = f"smp-{kind.lower()}"
    base = manifest(kind, name, {"requests": {"cpu": "100m", "memory": "64Mi"}})
    assert client.post(collection(kind), json=base).status_code == 201
    patch = {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "resources": {"requests": {"cpu": None}}}]}}}}
    r = client.patch(f"{collection(kind)}/{name}", json=patch,
                     headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert r.status_code == 200, r.text
    assert stored_resources(client, kind, name)["requests"] == {"memory": "64Mi"}


@pytest.mark.parametrize("kind", KINDS)
def test_json_patch_adding_null_quantities(client, kind):
    name = f"jsonpatch-{kind.lower()}"
    assert client.post(collection(kind), json=manifest(kind, name)).status_code == 201
    patch = [{"op": "add", "path": f"{containers_path(kind)}/0/resources",
              "value": NULL_RESOURCES}]
    r = client.patch(f"{collection(kind)}/{name}", json=patch,
                     headers={"Content-Type": "application/json-patch+json"})
    if kind == "Pod" and r.status_code == 422:  # upstream: a pod's resources are immutable
        return
    assert_zero(client, r, kind, name)


@pytest.mark.parametrize("kind", KINDS)
def test_server_side_apply_with_null_quantities(client, kind):
    name = f"apply-{kind.lower()}"
    text = yaml.safe_dump(manifest(kind, name, NULL_RESOURCES)).replace("cpu: null", "cpu:")
    r = client.patch(f"{collection(kind)}/{name}", content=text,
                     params={"fieldManager": "test", "force": "true"},
                     headers={"Content-Type": "application/apply-patch+yaml"})
    assert r.status_code < 500, r.text
    assert r.status_code in (200, 201), r.text
    resources = stored_resources(client, kind, name)
    assert resources.get("requests", {}).get("cpu", "0") == "0", resources


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "Pod"])
def test_update_with_null_quantities(client, kind):
    name = f"update-{kind.lower()}"
    r = client.post(collection(kind), json=manifest(kind, name))
    assert r.status_code == 201, r.text
    obj = r.json()
    del obj["metadata"]["resourceVersion"]  # unconditional: the simulation writes its status
    obj["spec"]["template"]["spec"]["containers"] = [container(NULL_RESOURCES)]
    r = client.put(f"{collection(kind)}/{name}", json=obj)
    assert_zero(client, r, kind, name)
