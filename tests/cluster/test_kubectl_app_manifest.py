"""The real kubectl against a `pyhpa cluster` process: a typical application manifest
(Deployment, Service, ConfigMap, Secret, ServiceAccount, PodDisruptionBudget, Ingress) applies,
lists with upstream's columns, describes, explains and deletes; and `kubectl replace -f` of a
plain manifest (no uid, no creationTimestamp) replaces as on a real cluster (issue 16, 8 and 1).
"""

from __future__ import annotations

import base64
import json
import re

import pytest

from tests.cluster.conftest import make_kubectl

pytestmark = [pytest.mark.kubectl, pytest.mark.slow]

APP = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      serviceAccountName: web
      containers:
      - name: web
        image: nginx
        envFrom:
        - configMapRef: {name: web-config}
        - secretRef: {name: web-secret}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config}
data:
  LOG_LEVEL: debug
  app.properties: |
    a=1
---
apiVersion: v1
kind: Secret
metadata: {name: web-secret}
type: Opaque
data:
  password: aHVudGVyMg==
stringData:
  token: s3cr3t-t0ken
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: web}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  ingressClassName: nginx
  tls: [{hosts: [web.example.com], secretName: web-tls}]
  rules:
  - host: web.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend: {service: {name: web, port: {number: 80}}}
"""

HPA = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: web}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  minReplicas: 1
  maxReplicas: {max}
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 80}}}}
"""


@pytest.fixture(params=[33, 27], ids=["kubectl-1.33", "kubectl-1.27"])
def k(request, cluster_proc, kube_home):
    run = make_kubectl(request.param, cluster_proc, kube_home)
    ns = f"app-{request.param}"
    run("create", "namespace", ns)
    run.ns = ns  # type: ignore[attr-defined]
    yield run
    run("delete", "namespace", ns, "--timeout=50s", check=False)  # Terminating until empty


def write(tmp_path, text, name="obj.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def rows(k, *args):
    """``kubectl get`` output as lists of cells (split on runs of 2+ spaces)."""
    lines = k("-n", k.ns, "get", *args).stdout.strip().splitlines()
    return [re.split(r"\s{2,}", line.strip()) for line in lines]


def test_an_application_manifest_applies_lists_describes_and_deletes(k, tmp_path):
    app = write(tmp_path, APP, "app.yaml")
    out = k("-n", k.ns, "apply", "-f", app).stdout
    for created in ("deployment.apps/web created", "service/web created",
                    "configmap/web-config created", "secret/web-secret created",
                    "serviceaccount/web created", "poddisruptionbudget.policy/web created",
                    "ingress.networking.k8s.io/web created"):
        assert created in out
    again = k("-n", k.ns, "apply", "-f", app).stdout
    assert "configmap/web-config unchanged" in again and "ingress.networking.k8s.io/web unchanged" in again

    cm = rows(k, "cm", "web-config")
    assert cm[0] == ["NAME", "DATA", "AGE"] and cm[1][:2] == ["web-config", "2"]
    assert rows(k, "secret", "web-secret")[0] == ["NAME", "TYPE", "DATA", "AGE"]
    assert rows(k, "secret", "web-secret")[1][:3] == ["web-secret", "Opaque", "2"]
    assert rows(k, "sa", "web")[0] == ["NAME", "SECRETS", "AGE"]
    assert rows(k, "sa", "web")[1][:2] == ["web", "0"]
    assert rows(k, "pdb", "web")[0] == ["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE",
                                        "ALLOWED DISRUPTIONS", "AGE"]
    assert rows(k, "pdb", "web")[1][:4] == ["web", "1", "N/A", "0"]
    assert rows(k, "ing", "web")[0] == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    ing = k("-n", k.ns, "get", "ingress", "web").stdout.splitlines()[1].split()
    assert ing[:4] == ["web", "nginx", "web.example.com", "80,"] and ing[4] == "443"

    # stringData is merged into data (base64) and not kept
    secret = json.loads(k("-n", k.ns, "get", "secret", "web-secret", "-o", "json").stdout)
    assert base64.b64decode(secret["data"]["token"]) == b"s3cr3t-t0ken"
    assert base64.b64decode(secret["data"]["password"]) == b"hunter2"
    assert "stringData" not in secret
    described = k("-n", k.ns, "describe", "secret", "web-secret").stdout
    assert "token:     12 bytes" in described and "s3cr3t" not in described
    assert "Min available:  1" in k("-n", k.ns, "describe", "pdb", "web").stdout
    assert "web.example.com" in k("-n", k.ns, "describe", "ingress", "web").stdout
    assert "LOG_LEVEL" in k("-n", k.ns, "describe", "configmap", "web-config").stdout

    for kind in ("configmap", "secret.data", "serviceaccount", "pdb.spec.minAvailable",
                 "ingress.spec.rules"):
        assert "FIELD" in k("explain", kind).stdout or "KIND" in k("explain", kind).stdout

    out = k("-n", k.ns, "delete", "-f", app).stdout
    assert 'configmap "web-config" deleted' in out and 'ingress.networking.k8s.io "web" deleted' in out
    # what every namespace has on a real cluster stays
    assert k("-n", k.ns, "get", "cm,secret,sa,pdb,ing", "-o", "name").stdout.split() == [
        "configmap/kube-root-ca.crt", "serviceaccount/default"]
    root_ca = json.loads(k("-n", k.ns, "get", "cm", "kube-root-ca.crt", "-o", "json").stdout)
    assert root_ca["data"]["ca.crt"].startswith("-----BEGIN CERTIFICATE-----")


def test_invalid_config_keys_secret_data_and_budgets_are_rejected(k, tmp_path):
    bad_key = k("-n", k.ns, "apply", "-f", write(tmp_path, (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\ndata: {'a b': x}\n")),
        check=False)
    assert bad_key.returncode != 0
    assert ('data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric '
            "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', "
            "regex used for validation is '[-._a-zA-Z0-9]+')") in bad_key.stderr
    bad_data = k("-n", k.ns, "apply", "-f", write(tmp_path, (
        "apiVersion: v1\nkind: Secret\nmetadata: {name: bad}\ndata: {x: 'not base64!'}\n")),
        check=False)
    assert bad_data.returncode != 0
    assert ('Secret in version "v1" cannot be handled as a Secret: illegal base64 data at '
            "input byte 3") in bad_data.stderr
    both = k("-n", k.ns, "apply", "-f", write(tmp_path, (
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: bad}\n"
        "spec: {minAvailable: 1, maxUnavailable: 1}\n")), check=False)
    assert "minAvailable and maxUnavailable cannot be both set" in both.stderr


def test_kubectl_create_makes_each_application_kind(k):
    """kubectl 1.32+ POSTs these as protobuf."""
    ns = ("-n", k.ns)
    k(*ns, "create", "configmap", "cfg", "--from-literal=a=b")
    k(*ns, "create", "secret", "generic", "sec", "--from-literal=password=hunter2")
    k(*ns, "create", "serviceaccount", "robot")
    k(*ns, "create", "pdb", "budget", "--selector=app=web", "--max-unavailable=30%")
    k(*ns, "create", "ingress", "ing", "--class=nginx", "--rule=foo.com/bar*=svc1:8080,tls=cert",
      "--default-backend=defsvc:http")
    got = {o["kind"]: o for o in json.loads(k(*ns, "get", "cm,secret,sa,pdb,ing", "-o", "json")
                                             .stdout)["items"]
           if o["metadata"]["name"] in ("cfg", "sec", "robot", "budget", "ing")}
    assert got["ConfigMap"]["data"] == {"a": "b"}
    assert base64.b64decode(got["Secret"]["data"]["password"]) == b"hunter2"
    assert got["Secret"]["type"] == "Opaque" and "ServiceAccount" in got
    assert got["PodDisruptionBudget"]["spec"] == {"maxUnavailable": "30%",
                                                  "selector": {"matchLabels": {"app": "web"}}}
    assert got["Ingress"]["spec"] == {
        "ingressClassName": "nginx",
        "defaultBackend": {"service": {"name": "defsvc", "port": {"name": "http"}}},
        "rules": [{"host": "foo.com", "http": {"paths": [
            {"path": "/bar", "pathType": "Prefix",
             "backend": {"service": {"name": "svc1", "port": {"number": 8080}}}}]}}],
        "tls": [{"hosts": ["foo.com"], "secretName": "cert"}]}


def test_discovery_lists_the_application_kinds(k):
    out = k("api-resources").stdout
    for line in ("configmaps", "secrets", "serviceaccounts", "poddisruptionbudgets", "ingresses"):
        assert line in out
    short = k("api-resources", "--api-group=policy", "-o", "wide").stdout
    assert "pdb" in short and "PodDisruptionBudget" in short


def test_replace_with_a_plain_manifest_keeps_uid_and_creation_time(k, tmp_path):
    ns = k.ns
    k("-n", ns, "create", "-f", write(tmp_path, HPA.format(max=5)))
    before = json.loads(k("-n", ns, "get", "hpa", "web", "-o", "json").stdout)["metadata"]
    out = k("-n", ns, "replace", "-f", write(tmp_path, HPA.format(max=7)))
    assert "horizontalpodautoscaler.autoscaling/web replaced" in out.stdout
    after = json.loads(k("-n", ns, "get", "hpa", "web", "-o", "json").stdout)
    assert after["spec"]["maxReplicas"] == 7
    assert after["metadata"]["uid"] == before["uid"]
    assert after["metadata"]["creationTimestamp"] == before["creationTimestamp"]
    # every kind, not only HPAs
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata: {{a: '{v}'}}\n"
    k("-n", ns, "create", "-f", write(tmp_path, cm.format(v=1)))
    assert "configmap/c replaced" in k("-n", ns, "replace", "-f",
                                       write(tmp_path, cm.format(v=2))).stdout
    # a uid that is sent must still be the object's
    wrong = HPA.format(max=6).replace("metadata: {name: web}",
                                      "metadata: {name: web, uid: 00000000-0000-0000-0000-000000000000}")
    bad = k("-n", ns, "replace", "-f", write(tmp_path, wrong), check=False)
    assert bad.returncode != 0
    assert k("-n", ns, "get", "hpa", "web", "-o", "jsonpath={.spec.maxReplicas}").stdout == "7"
