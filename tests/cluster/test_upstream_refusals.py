"""Input kube-apiserver refuses is refused here too, with upstream's field errors (issue 28):
a 422 naming the field, never a 201 that stores it."""

from __future__ import annotations

import copy

import httpx
import pytest

from tests.cluster.conftest import embedded_client_in_namespace

pytestmark = pytest.mark.slow

NS = "refusals"
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"
PODS = f"/api/v1/namespaces/{NS}/pods"
SERVICES = f"/api/v1/namespaces/{NS}/services"
LEASES = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"
PDBS = f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets"
INGRESSES = f"/apis/networking.k8s.io/v1/namespaces/{NS}/ingresses"
EVENTS = f"/apis/events.k8s.io/v1/namespaces/{NS}/events"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    yield from embedded_client_in_namespace(tmp_path_factory, NS)


def deployment(name: str, **spec) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "i"}]}},
                     **spec}}


def with_port(obj: dict, port: dict) -> dict:
    obj = copy.deepcopy(obj)
    spec = obj["spec"] if obj["kind"] == "Pod" else obj["spec"]["template"]["spec"]
    spec["containers"][0]["ports"] = [port]
    return obj


def pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}


def ingress(name: str, path: dict) -> dict:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": name},
            "spec": {"rules": [{"http": {"paths": [path]}}]}}


def backend(port: dict) -> dict:
    return {"service": {"name": "web", "port": port}}


def refused(r: httpx.Response, field: str, message: str) -> None:
    assert r.status_code == 422, r.text
    causes = [(c["field"], c["message"]) for c in r.json()["details"]["causes"]]
    assert (field, message) in causes, causes


PERCENT = ("Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"x\"}: a valid percent "
           "string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
           "regex used for validation is '[0-9]+%')")
CASES = [
    (DEPLOYMENTS, deployment("strategy-x", strategy={"type": "x"}), "spec.strategy.type",
     'Unsupported value: "x": supported values: "Recreate", "RollingUpdate"'),
    (DEPLOYMENTS, deployment("surge-x", strategy={"rollingUpdate": {"maxSurge": "x"}}),
     "spec.strategy.rollingUpdate.maxSurge", PERCENT),
    (DEPLOYMENTS, deployment("surge-neg", strategy={"rollingUpdate": {"maxSurge": -1}}),
     "spec.strategy.rollingUpdate.maxSurge", "Invalid value: -1: must be greater than or equal to 0"),
    (DEPLOYMENTS, deployment("unavail-x", strategy={"rollingUpdate": {"maxUnavailable": "x"}}),
     "spec.strategy.rollingUpdate.maxUnavailable", PERCENT),
    (DEPLOYMENTS, deployment("unavail-neg", strategy={"rollingUpdate": {"maxUnavailable": -1}}),
     "spec.strategy.rollingUpdate.maxUnavailable",
     "Invalid value: -1: must be greater than or equal to 0"),
    (DEPLOYMENTS, with_port(deployment("port-neg"), {"containerPort": -1}),
     "spec.template.spec.containers[0].ports[0].containerPort",
     "Invalid value: -1: must be between 1 and 65535, inclusive"),
    (DEPLOYMENTS, with_port(deployment("port-null"), {"containerPort": None}),
     "spec.template.spec.containers[0].ports[0].containerPort", "Required value"),
    (PODS, with_port(pod("pod-port"), {"containerPort": 70000}),
     "spec.containers[0].ports[0].containerPort",
     "Invalid value: 70000: must be between 1 and 65535, inclusive"),
    (SERVICES, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "target-neg"},
                "spec": {"ports": [{"port": 80, "targetPort": -1}]}},
     "spec.ports[0].targetPort", "Invalid value: -1: must be between 1 and 65535, inclusive"),
    (LEASES, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
              "metadata": {"name": "dur-neg"}, "spec": {"leaseDurationSeconds": -1}},
     "spec.leaseDurationSeconds", "Invalid value: -1: must be greater than 0"),
    (LEASES, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
              "metadata": {"name": "trans-neg"}, "spec": {"leaseTransitions": -1}},
     "spec.leaseTransitions", "Invalid value: -1: must be greater than or equal to 0"),
    (INGRESSES, ingress("path-x", {"path": "x", "pathType": "Prefix",
                                   "backend": backend({"number": 80})}),
     "spec.rules[0].http.paths[0].path", 'Invalid value: "x": must be an absolute path'),
    (INGRESSES, ingress("port-neg", {"path": "/", "pathType": "Exact",
                                     "backend": backend({"number": -1})}),
     "spec.rules[0].http.paths[0].backend.service.port.number",
     "Invalid value: -1: must be between 1 and 65535, inclusive"),
    (EVENTS, {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "type-x"},
              "eventTime": "2026-01-01T00:00:00.000000Z", "type": "x", "reason": "R",
              "action": "A", "reportingController": "c/x", "reportingInstance": "i",
              "regarding": {"kind": "Pod", "name": "p", "namespace": NS}},
     "type", 'Invalid value: "": has invalid value: x'),
]


@pytest.mark.parametrize("url,body,field,message", CASES,
                         ids=[c[1]["metadata"]["name"] for c in CASES])
def test_refused_with_upstreams_field_error(client, url, body, field, message):
    refused(client.post(url, json=body), field, message)
    assert client.get(f"{url}/{body['metadata']['name']}").status_code == 404


def test_valid_neighbours_are_still_accepted(client):
    """The checks do not refuse what upstream takes."""
    ok = [(DEPLOYMENTS, deployment("ok-recreate", strategy={"type": "Recreate"})),
          (DEPLOYMENTS, with_port(deployment("ok-port"), {"containerPort": 8080})),
          (DEPLOYMENTS, deployment("ok-surge", strategy={"rollingUpdate": {"maxSurge": "50%",
                                                                           "maxUnavailable": 0}})),
          (INGRESSES, ingress("ok-impl", {"pathType": "ImplementationSpecific",
                                          "backend": backend({"name": "http"})})),
          (LEASES, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": "ok"}, "spec": {"leaseDurationSeconds": 15}})]
    for url, body in ok:
        r = client.post(url, json=body)
        assert r.status_code == 201, r.text


def test_deployment_status_counts_bounded_by_replicas(client):
    r = client.post(DEPLOYMENTS, json=deployment("status"))
    assert r.status_code == 201, r.text
    url = f"{DEPLOYMENTS}/status/status"  # the "status" subresource of Deployment "status"
    merge = {"Content-Type": "application/merge-patch+json"}
    for status, field, message in [
            ({"replicas": -1}, "status.replicas",
             "Invalid value: -1: must be greater than or equal to 0"),
            ({"replicas": 1, "readyReplicas": 2}, "status.readyReplicas",
             "Invalid value: 2: cannot be greater than status.replicas"),
            ({"replicas": 2, "readyReplicas": 1, "availableReplicas": 2},
             "status.availableReplicas", "Invalid value: 2: cannot be greater than readyReplicas")]:
        full = {"replicas": 0, "readyReplicas": 0, "availableReplicas": 0, "updatedReplicas": 0,
                **status}
        refused(client.patch(url, json={"status": full}, headers=merge), field, message)
    good = client.patch(url, json={"status": {"replicas": 2, "readyReplicas": 2,
                                              "availableReplicas": 1, "updatedReplicas": 2}},
                        headers=merge)
    assert good.status_code == 200, good.text


def test_pdb_status_counts_not_negative(client):
    r = client.post(PDBS, json={"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                "metadata": {"name": "pdb"},
                                "spec": {"minAvailable": 1,
                                         "selector": {"matchLabels": {"app": "x"}}}})
    assert r.status_code == 201, r.text
    status = {"disruptionsAllowed": -1, "currentHealthy": 0, "desiredHealthy": 0,
              "expectedPods": 0}
    refused(client.patch(f"{PDBS}/pdb/status", json={"status": status},
                         headers={"Content-Type": "application/merge-patch+json"}),
            "status.disruptionsAllowed", "Invalid value: -1: must be greater than or equal to 0")


LEASE_DUPLICATE = (b'{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"NAME"},'
                   b'"spec":{"holderIdentity":"a","holderIdentity":"b"}}')
LEASE_DUPLICATE_YAML = (b"apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: NAME\n"
                        b"spec:\n  holderIdentity: a\n  holderIdentity: b\n")


@pytest.mark.parametrize("ctype,raw", [("application/json", LEASE_DUPLICATE),
                                       ("application/yaml", LEASE_DUPLICATE_YAML)])
def test_duplicate_keys_as_upstreams_strict_decoding(client, ctype, raw):
    """``duplicate field "spec.holderIdentity"``: a 400 under Strict, a warning under Warn (and
    by default), nothing under Ignore; the last value wins when the object is kept."""
    tag = ctype.split("/")[1]

    def post(mode: str) -> httpx.Response:
        name = f"dup-{tag}-{mode.lower() or 'default'}".encode()
        return client.post(LEASES, content=raw.replace(b"NAME", name),
                           params={"fieldValidation": mode} if mode else {},
                           headers={"Content-Type": ctype})
    strict = post("Strict")
    assert strict.status_code == 400, strict.text
    assert strict.json()["message"] == ('Lease in version "v1" cannot be handled as a Lease: '
                                        'strict decoding error: duplicate field '
                                        '"spec.holderIdentity"')
    for mode in ("Warn", ""):
        r = post(mode)
        assert r.status_code == 201, r.text
        assert r.headers["warning"] == '299 - "duplicate field \\"spec.holderIdentity\\""'
        assert r.json()["spec"]["holderIdentity"] == "b"
    ignored = post("Ignore")
    assert ignored.status_code == 201 and "warning" not in ignored.headers


@pytest.mark.parametrize("raw", [b"\xef\xbb\xbf" + LEASE_DUPLICATE,
                                 LEASE_DUPLICATE.decode().encode("utf-16"),
                                 LEASE_DUPLICATE.decode().encode("utf-16-le"),
                                 LEASE_DUPLICATE.decode().encode("utf-32")],
                         ids=["utf8-bom", "utf16-bom", "utf16le", "utf32"])
def test_json_bodies_in_other_encodings_are_refused(client, raw):
    """Go reads JSON as UTF-8 bytes: a byte-order mark or UTF-16/32 text is a syntax error."""
    r = client.post(LEASES, content=raw, headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    assert "invalid character" in r.json()["message"]


def test_patch_without_content_type_is_unsupported(client):
    """A PATCH names its patch type (415 otherwise); a POST or PUT without one is read as JSON,
    as upstream's NegotiateInputSerializer reads it (kubectl scale's PUT sends none)."""
    assert client.post(LEASES, json={"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                     "metadata": {"name": "plain"}}).status_code == 201
    r = client.patch(f"{LEASES}/plain", content=b'{"spec":{"holderIdentity":"x"}}',
                     headers={"Content-Type": ""})
    assert r.status_code == 415, r.text


@pytest.mark.parametrize("rv", [-1, 0, "1", None])
def test_forged_continue_token_is_refused(client, rv):
    import base64
    import json

    token = base64.urlsafe_b64encode(json.dumps(
        {"v": "meta.k8s.io/v1", "rv": rv, "start": f"{NS}/a"}).encode()).decode().rstrip("=")
    r = client.get(LEASES, params={"limit": 1, "continue": token})
    assert r.status_code == 400, r.text
    assert r.json()["message"].startswith("continue key is not valid")
