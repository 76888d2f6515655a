"""The real kubectl (1.33 and 1.27) against a freshly started `pyhpa cluster` process."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from tests.cluster.conftest import kubectl_in_namespace, make_kubectl

pytestmark = [pytest.mark.kubectl, pytest.mark.slow]

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
        resources:
          requests: {cpu: 100m}
"""

HPA = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: api
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: MAX
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
"""

INVALID_HPA = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: bad}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 0
"""


@pytest.fixture(params=[33, 27], ids=["kubectl-1.33", "kubectl-1.27"])
def k(request, cluster_proc, kube_home):
    yield from kubectl_in_namespace(request.param, cluster_proc, kube_home, f"e2e-{request.param}")


def test_workflow(k, tmp_path):
    ns = k.ns
    dep = tmp_path / "dep.yaml"
    dep.write_text(DEPLOYMENT)
    assert "deployment.apps/web created" in k("-n", ns, "create", "-f", str(dep)).stdout

    out = k("-n", ns, "autoscale", "deployment", "web", "--min=2", "--max=10", "--cpu-percent=50")
    assert "horizontalpodautoscaler.autoscaling/web autoscaled" in out.stdout

    table = k("-n", ns, "get", "hpa").stdout.splitlines()
    assert table[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS",
                                "AGE"]
    row = table[1]
    assert row.startswith("web ") and "Deployment/web" in row and "cpu: <unknown>/50%" in row
    assert row.split()[4:7] == ["2", "10", "0"]

    obj = json.loads(k("-n", ns, "get", "hpa", "web", "-o", "json").stdout)
    assert obj["apiVersion"] == "autoscaling/v2"
    assert obj["spec"]["minReplicas"] == 2 and obj["spec"]["maxReplicas"] == 10
    assert obj["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]
    yaml_out = k("-n", ns, "get", "hpa", "web", "-o", "yaml").stdout
    assert "apiVersion: autoscaling/v2" in yaml_out and "averageUtilization: 50" in yaml_out

    desc = k("-n", ns, "describe", "hpa", "web").stdout
    assert "Reference:" in desc and "Deployment/web" in desc
    assert "<unknown> / 50%" in desc and "Min replicas:" in desc

    hpa = tmp_path / "hpa.yaml"
    hpa.write_text(HPA.replace("MAX", "5"))
    assert "created" in k("-n", ns, "apply", "-f", str(hpa)).stdout
    assert "unchanged" in k("-n", ns, "apply", "-f", str(hpa)).stdout
    hpa.write_text(HPA.replace("MAX", "6"))
    assert "configured" in k("-n", ns, "apply", "-f", str(hpa)).stdout
    assert k("-n", ns, "get", "hpa", "api", "-o", "jsonpath={.spec.maxReplicas}").stdout == "6"

    assert "patched" in k("-n", ns, "patch", "hpa", "api", "--type", "merge",
                          "-p", '{"spec":{"maxReplicas":7}}').stdout
    assert "(no change)" in k("-n", ns, "patch", "hpa", "api", "--type", "merge",
                              "-p", '{"spec":{"maxReplicas":7}}').stdout
    k("-n", ns, "patch", "hpa", "api", "-p", '{"spec":{"minReplicas":3}}')
    k("-n", ns, "patch", "hpa", "api", "--type", "json",
      "-p", '[{"op":"replace","path":"/spec/maxReplicas","value":9}]')
    got = k("-n", ns, "get", "hpa", "api", "-o", "jsonpath={.spec.minReplicas}/{.spec.maxReplicas}")
    assert got.stdout == "3/9"

    assert "scaled" in k("-n", ns, "scale", "deployment", "web", "--replicas=3").stdout
    assert k("-n", ns, "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}").stdout == "3"

    bad = tmp_path / "bad.yaml"
    bad.write_text(INVALID_HPA)
    out = k("-n", ns, "create", "-f", str(bad), check=False)
    assert out.returncode != 0
    assert 'The HorizontalPodAutoscaler "bad" is invalid' in out.stderr
    assert "spec.maxReplicas" in out.stderr

    stale = tmp_path / "stale.yaml"
    stale.write_text(k("-n", ns, "get", "hpa", "api", "-o", "yaml").stdout)
    k("-n", ns, "patch", "hpa", "api", "--type", "merge", "-p", '{"spec":{"maxReplicas":8}}')
    out = k("-n", ns, "replace", "-f", str(stale), check=False)
    assert out.returncode != 0 and "Conflict" in out.stderr and "has been modified" in out.stderr

    assert 'deleted' in k("-n", ns, "delete", "hpa", "web").stdout
    out = k("-n", ns, "get", "hpa", "web", check=False)
    assert out.returncode != 0 and "NotFound" in out.stderr


def test_watch_prints_every_change_in_order(cluster_proc, kube_home, tmp_path):
    k = make_kubectl(33, cluster_proc, kube_home)
    k("create", "namespace", "watch")
    k("-n", "watch", "create", "deployment", "w", "--image=nginx")
    proc = subprocess.Popen([k.binary, "--kubeconfig", str(cluster_proc.kubeconfig), "-n", "watch",
                             "get", "deploy", "-w", "--output-watch-events", "-o",
                             "jsonpath={.type} {.object.spec.replicas}{\"\\n\"}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=k.env)
    try:
        time.sleep(1.0)
        for n in (2, 3, 4):
            k("-n", "watch", "scale", "deployment", "w", f"--replicas={n}")
        k("-n", "watch", "delete", "deployment", "w")
        time.sleep(1.0)
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=10)
    lines = [ln for ln in out.splitlines() if ln.strip()]
    # the workload simulation's status writes add MODIFIED events with the same spec.replicas
    lines = [ln for i, ln in enumerate(lines) if i == 0 or ln != lines[i - 1]]
    assert lines[-4:] == ["MODIFIED 2", "MODIFIED 3", "MODIFIED 4", "DELETED 4"], (out, err)


def test_objects_survive_sigkill(cluster_proc, kube_home):
    k = make_kubectl(33, cluster_proc, kube_home)
    k("create", "namespace", "durable")
    for i in range(5):
        k("-n", "durable", "create", "deployment", f"d{i}", "--image=nginx")
    before = json.loads(k("-n", "durable", "get", "deploy", "-o", "json").stdout)
    cluster_proc.kill()
    cluster_proc.start()
    after = json.loads(k("-n", "durable", "get", "deploy", "-o", "json").stdout)
    strip = lambda lst: [(i["metadata"]["name"], i["metadata"]["uid"], i["spec"]) for i in lst["items"]]
    assert strip(after) == strip(before)
    # the simulated controllers may write a status between the read and the kill, or after the
    # restart: a version may have moved on, never back
    versions = lambda lst: [int(i["metadata"]["resourceVersion"]) for i in lst["items"]]  # noqa: E731
    assert all(a >= b for a, b in zip(versions(after), versions(before)))
    created = json.loads(k("-n", "durable", "create", "deployment", "late", "--image=nginx",
                           "-o", "json").stdout)
    newest = max(int(i["metadata"]["resourceVersion"]) for i in before["items"])
    assert int(created["metadata"]["resourceVersion"]) > newest


def test_cluster_info_services_and_auth(k, cluster_proc):
    ns = k.ns
    out = k("cluster-info").stdout
    assert "Kubernetes control plane" in out and cluster_proc.url in out
    assert "service/kubernetes" in k("-n", "default", "get", "all").stdout
    ep = k("-n", "default", "get", "endpoints", "kubernetes", "-o", "json").stdout
    port = cluster_proc.url.rsplit(":", 1)[1]
    assert json.loads(ep)["subsets"][0]["ports"][0]["port"] == int(port)
    # 1.33 POSTs this Service as protobuf
    k("-n", ns, "create", "service", "nodeport", "np", "--tcp=80:8080")
    row = k("-n", ns, "get", "svc", "np", "--no-headers").stdout.split()
    assert row[1] == "NodePort" and row[2].startswith("10.") and row[4].startswith("80:3")
    assert row[4].endswith("/TCP")
    assert k("auth", "can-i", "create", "hpa").stdout.strip() == "yes"
    assert k("auth", "can-i", "delete", "pods", "-n", "kube-system").stdout.strip() == "yes"
    who = k("auth", "whoami").stdout
    assert "pyhpa" in who and "system:masters" in who
    assert "*.*" in k("auth", "can-i", "--list").stdout
    wide = k("get", "nodes", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[5:] == ["INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION",
                                   "CONTAINER-RUNTIME"]
    assert "10.0.0.10" in wide[1] and "pyhpa://sim" in wide[1]


def test_rollout_undo_reuses_the_old_replicaset_and_deletes_honour_grace(k):
    ns = k.ns
    k("-n", ns, "create", "deployment", "ro", "--image=nginx:1.1")
    # quick pods for the rollouts below (the Deployment's metadata, so no new revision)
    k("-n", ns, "annotate", "deployment", "ro", "sim.pyhpa.io/startup-seconds=1",
      "sim.pyhpa.io/termination-seconds=0")
    k("-n", ns, "rollout", "status", "deployment/ro", "--timeout=40s")
    k("-n", ns, "set", "image", "deployment/ro", "nginx=nginx:1.2")
    k("-n", ns, "rollout", "status", "deployment/ro", "--timeout=40s")
    k("-n", ns, "rollout", "undo", "deployment/ro")
    k("-n", ns, "rollout", "status", "deployment/ro", "--timeout=40s")
    rs = json.loads(k("-n", ns, "get", "rs", "-l", "app=ro", "-o", "json").stdout)["items"]
    assert len(rs) == 2  # the undo went back to the first ReplicaSet
    by_image = {r["spec"]["template"]["spec"]["containers"][0]["image"]: r for r in rs}
    assert by_image["nginx:1.1"]["spec"]["replicas"] == 1
    assert by_image["nginx:1.1"]["metadata"]["annotations"][
        "deployment.kubernetes.io/revision"] == "3"
    history = k("-n", ns, "rollout", "history", "deployment/ro").stdout.split()
    assert history[-4:] == ["2", "<none>", "3", "<none>"]
    pods = k("-n", ns, "get", "pods", "-l", "app=ro", "-o", "name").stdout.split()
    k("-n", ns, "annotate", "deployment", "ro", "--overwrite", "sim.pyhpa.io/termination-seconds=60")
    # without the 1 s grace period the pod would take 30 s and kubectl's wait would time out
    k("-n", ns, "delete", pods[0], "--grace-period=1", "--timeout=20s")
    out = k("-n", ns, "delete", "pod", "-l", "app=ro", "--grace-period=0", "--force")
    assert "force deleted" in out.stdout
    left = k("-n", ns, "get", "pods", "-o", "name").stdout.split()
    assert not set(pods) & set(left)


def test_client_side_apply_then_server_side_apply(k, tmp_path):
    ns = k.ns
    first, second = tmp_path / "hpa.yaml", tmp_path / "hpa2.yaml"
    first.write_text(HPA.replace("MAX", "5"))
    second.write_text(HPA.replace("MAX", "6").replace("minReplicas: 1", "minReplicas: 2"))
    k("-n", ns, "apply", "-f", str(first))
    out = k("-n", ns, "apply", "--server-side", "-f", str(second))
    assert "serverside-applied" in out.stdout
    got = k("-n", ns, "get", "hpa", "api", "-o", "jsonpath={.spec.minReplicas}/{.spec.maxReplicas}")
    assert got.stdout == "2/6"
    k("-n", ns, "patch", "hpa", "api", "--type", "merge", "-p", '{"spec":{"maxReplicas":9}}')
    clash = k("-n", ns, "apply", "--server-side", "-f", str(second), check=False)
    assert clash.returncode != 0 and 'conflict with "kubectl-patch"' in clash.stderr


GADGET_CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.e2e.example.com}
spec:
  group: e2e.example.com
  scope: Namespaced
  names: {plural: gadgets, kind: Gadget, shortNames: [gdg]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer, minimum: 0}
          status:
            type: object
            properties:
              replicas: {type: integer}
"""

GADGET = """
apiVersion: e2e.example.com/v1
kind: Gadget
metadata: {name: g1}
spec: {replicas: 2}
"""

SIDE_BY_SIDE_HPA = """
apiVersion: pyhpa.io/v1
kind: HorizontalPodAutoscaler
metadata: {name: side}
spec:
  scaleTargetRef: {apiVersion: e2e.example.com/v1, kind: Gadget, name: g1}
  minReplicas: 1
  maxReplicas: 5
  metrics:
  - type: External
    external:
      metric: {name: queue_depth}
      target: {type: AverageValue, averageValue: "10"}
"""


def test_custom_resource_definitions(k, tmp_path):
    from tests.cluster.conftest import REPO

    ns = k.ns
    out = k("apply", "-f", str(REPO / "deploy" / "crd-pyhpa.io.yaml")).stdout
    assert "customresourcedefinition.apiextensions.k8s.io/horizontalpodautoscalers.pyhpa.io" in out
    files = {}
    for name, text in (("crd", GADGET_CRD), ("gadget", GADGET), ("hpa", SIDE_BY_SIDE_HPA)):
        files[name] = tmp_path / f"{name}.yaml"
        files[name].write_text(text)
    k("apply", "-f", str(files["crd"]))
    k("wait", "--for=condition=established", "crd/gadgets.e2e.example.com",
      "crd/horizontalpodautoscalers.pyhpa.io", "--timeout=20s")
    assert "gadget.e2e.example.com/g1 created" in k("-n", ns, "apply", "-f",
                                                     str(files["gadget"])).stdout
    assert "horizontalpodautoscaler.pyhpa.io/side created" in k(
        "-n", ns, "apply", "-f", str(files["hpa"])).stdout
    table = k("-n", ns, "get", "phpa").stdout.splitlines()
    assert table[0].split() == ["NAME", "REFERENCE", "MINPODS", "MAXPODS", "REPLICAS", "DESIRED",
                                "AGE"]
    assert table[1].split()[:4] == ["side", "g1", "1", "5"]
    desc = k("-n", ns, "describe", "horizontalpodautoscalers.pyhpa.io", "side").stdout
    assert "Scale Target Ref:" in desc and "Gadget" in desc and "queue_depth" in desc
    assert k("-n", ns, "get", "gdg", "g1", "--no-headers").stdout.split()[:2] == ["g1", "2"]
    assert "Replicas:  2" in k("-n", ns, "describe", "gadget", "g1").stdout
    assert "gadget.e2e.example.com/g1 scaled" in k("-n", ns, "scale", "gadget", "g1",
                                                    "--replicas=3").stdout
    assert k("-n", ns, "get", "gadget", "g1", "-o", "jsonpath={.spec.replicas}").stdout == "3"
    assert "horizontalpodautoscaler.pyhpa.io/side" in k("-n", ns, "get", "all").stdout
    bad = k("-n", ns, "patch", "gadget", "g1", "--type=merge", "-p", '{"spec":{"replicas":-1}}',
            check=False)
    assert bad.returncode != 0 and "spec.replicas" in bad.stderr
    assert 'deleted' in k("-n", ns, "delete", "gadget", "g1").stdout
