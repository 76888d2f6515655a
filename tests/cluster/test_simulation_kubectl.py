"""End to end with real kubectl 1.33: scale, rollout status, top, and the custom/external metrics APIs."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from pyhpa.cluster.embedded import EmbeddedCluster

from .conftest import make_kubectl, wait_for

pytestmark = [pytest.mark.kubectl, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with EmbeddedCluster(tmp_path_factory.mktemp("simcluster")) as c:
        # a fast metrics pipeline so `kubectl top` has data within seconds
        c.simulation.resolution = 1.0
        c.simulation.window = 2.0
        yield c


@pytest.fixture(scope="module")
def k(cluster, tmp_path_factory):
    proc = SimpleNamespace(kubeconfig=cluster.kubeconfig_path)
    return make_kubectl(33, proc, tmp_path_factory.mktemp("kubehome"))


def ready_pods(k, selector: str) -> list[dict]:
    items = json.loads(k("get", "pods", "-l", selector, "-o", "json").stdout)["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")
            and any(c["type"] == "Ready" and c["status"] == "True"
                    for c in p["status"].get("conditions") or [])]


def test_scale_rollout_status_and_top(k):
    k("create", "deployment", "web", "--image=nginx")
    k("annotate", "deployment", "web", "sim.pyhpa.io/cpu=900m", "sim.pyhpa.io/memory=64Mi",
      "sim.pyhpa.io/startup-seconds=1", "sim.pyhpa.io/termination-seconds=1",
      "sim.pyhpa.io/metric.http_requests=30")
    k("scale", "deployment", "web", "--replicas=3")
    wait_for(lambda: len(ready_pods(k, "app=web")) == 3, what="3 ready pods")
    out = k("rollout", "status", "deployment/web", "--timeout=30s").stdout
    assert 'deployment "web" successfully rolled out' in out
    # kubectl get pods: the Table of pods (served from a partial decode of each stored pod)
    lines = k("get", "pods", "-l", "app=web", "-o", "wide", "--show-labels").stdout.splitlines()
    assert lines[0].split()[:6] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP"]
    rows = [line.split() for line in lines[1:] if "Terminating" not in line]
    assert len(rows) == 3 and all(r[1:4] == ["1/1", "Running", "0"] for r in rows)
    assert all("pyhpa-node" in r and any("app=web" in c for c in r) for r in rows)
    dep = json.loads(k("get", "deployment", "web", "-o", "json").stdout)
    st = dep["status"]
    assert (st["replicas"], st["readyReplicas"], st["availableReplicas"], st["updatedReplicas"]) \
        == (3, 3, 3, 3)
    assert st["observedGeneration"] == dep["metadata"]["generation"]
    table = k("get", "deployment", "web").stdout
    assert "3/3" in table

    def top():
        out = k("top", "pods", "-l", "app=web", check=False)
        rows = [ln.split() for ln in out.stdout.splitlines()[1:] if ln.strip()]
        # averages settle one window after the last pod became Ready: 900m shared by 3
        ok = out.returncode == 0 and len(rows) == 3 and {r[1] for r in rows} == {"300m"}
        return rows if ok else None
    rows = wait_for(top, what="kubectl top pods at 300m each")
    assert {r[2] for r in rows} == {"64Mi"}
    nodes = k("top", "nodes").stdout
    assert "pyhpa-node" in nodes

    k("scale", "deployment", "web", "--replicas=1")
    wait_for(lambda: len(json.loads(k("get", "pods", "-l", "app=web", "-o", "json").stdout)["items"]) == 1,
             what="scale down to 1 pod (after a 1s grace period)")


def test_custom_metrics_with_get_raw(k):
    k("create", "deployment", "api", "--image=nginx", "--replicas=2")
    k("annotate", "deployment", "api", "sim.pyhpa.io/metric.http_requests=10")
    wait_for(lambda: len(ready_pods(k, "app=api")) == 2, what="2 ready pods")

    def values():
        out = k("get", "--raw",
                "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/http_requests"
                "?labelSelector=app%3Dapi", check=False)
        if out.returncode != 0:
            return None
        items = json.loads(out.stdout)["items"]
        # the window average settles one window after both pods became Ready: 10 shared by 2
        return items if len(items) == 2 and {i["value"] for i in items} == {"5"} else None
    items = wait_for(values, what="custom pod metrics settled at 5 each")
    assert {i["describedObject"]["kind"] for i in items} == {"Pod"}
    obj = json.loads(k("get", "--raw", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/"
                                       "deployments.apps/api/http_requests").stdout)
    assert obj["items"][0]["value"] == "10"
    missing = k("get", "--raw", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/nope",
                check=False)
    assert missing.returncode == 1 and "NotFound" in missing.stderr


def test_external_metrics_from_kubectl_applied_objects(k, tmp_path):
    manifest = tmp_path / "em.yaml"
    manifest.write_text("""apiVersion: pyhpa.io/v1alpha1
kind: ExternalMetric
metadata:
  name: jobs
  namespace: default
spec:
  name: queue_messages_ready
  labels: {queue: jobs}
  value: "42"
""")
    k("apply", "-f", str(manifest))
    assert "queue_messages_ready" in k("get", "externalmetrics").stdout

    def value():
        out = k("get", "--raw", "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/"
                                "queue_messages_ready?labelSelector=queue%3Djobs", check=False)
        items = json.loads(out.stdout)["items"] if out.returncode == 0 else []
        return items[0]["value"] if items else None
    assert wait_for(value, what="external metric") == "42"
    k("patch", "externalmetric", "jobs", "--type=merge", "-p", '{"spec":{"value":"7"}}')
    wait_for(lambda: value() == "7", what="the changed value")
    bad = k("patch", "externalmetric", "jobs", "--type=merge", "-p", '{"spec":{"value":"lots"}}',
            check=False)
    assert bad.returncode == 1 and "spec.value" in bad.stderr


def test_statefulset_rollout_status(k, tmp_path):
    manifest = tmp_path / "sts.yaml"
    manifest.write_text("""apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: default
  annotations: {sim.pyhpa.io/startup-seconds: "0.5"}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres}]}
""")
    k("apply", "-f", str(manifest))
    out = k("rollout", "status", "statefulset/db", "--timeout=30s").stdout
    assert "partitioned roll out complete: 2 new pods have been updated" in out \
        or "statefulset rolling update complete 2 pods" in out, out
    names = sorted(p["metadata"]["name"] for p in ready_pods(k, "app=db"))
    assert names == ["db-0", "db-1"]
