"""Real kubectl (1.33, 1.32, 1.27) reading our OpenAPI documents: `explain` of every served kind,
client-side apply of unusual but valid manifests computing its patch from the schemas, and
unknown fields rejected by strict validation."""

from __future__ import annotations

import json
import re

import pytest

from tests.cluster.conftest import make_kubectl

pytestmark = [pytest.mark.kubectl, pytest.mark.slow]

RICH = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: rich
  labels: {app: rich}
spec:
  replicas: 1
  selector:
    matchLabels: {app: rich}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 1, maxUnavailable: "25%"}
  template:
    metadata:
      labels: {app: rich}
    spec:
      initContainers:
      - name: init
        image: busybox
        command: [sh, -c, "true"]
      containers:
      - name: web
        image: nginx
        ports:
        - {containerPort: 80, name: http}
        - {containerPort: PORT, protocol: UDP}
        env:
        - {name: MODE, value: "VALUE"}
        - name: POD
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {memory: 128Mi}
        livenessProbe:
          httpGet: {path: /healthz, port: http}
          initialDelaySeconds: 3
        readinessProbe:
          tcpSocket: {port: 80}
        startupProbe:
          exec: {command: [cat, /tmp/ok]}
        lifecycle:
          preStop: {sleep: {seconds: 2}}
        volumeMounts:
        - {name: cache, mountPath: /cache}
        - {name: cfg, mountPath: /etc/cfg, readOnly: true}
        securityContext:
          runAsNonRoot: true
          capabilities: {drop: [ALL]}
      - name: sidecar
        image: busybox
        args: [sleep, "3600"]
      volumes:
      - name: cache
        emptyDir: {sizeLimit: SIZE}
      - name: cfg
        configMap: {name: cfg, items: [{key: a, path: a.txt}]}
      - name: scratch
        ephemeral:
          volumeClaimTemplate:
            spec:
              accessModes: [ReadWriteOnce]
              resources: {requests: {storage: SIZE}}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: kubernetes.io/os, operator: In, values: [OSES]}
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 50
            podAffinityTerm:
              topologyKey: kubernetes.io/hostname
              labelSelector: {matchLabels: {app: rich}}
      tolerations:
      - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
      topologySpreadConstraints:
      - maxSkew: SKEW
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway
        labelSelector: {matchLabels: {app: rich}}
      securityContext: {fsGroup: 2000}
      terminationGracePeriodSeconds: 5
"""

HPA_WITH_UNKNOWN_FIELD = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: strict}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: rich}
  maxReplicas: 3
  foo: bar
"""


def rich(port: int, value: str, size: str, oses: str, skew: int) -> str:
    return (RICH.replace("PORT", str(port)).replace("VALUE", value).replace("SIZE", size)
            .replace("OSES", oses).replace("SKEW", str(skew)))


@pytest.fixture(params=[33, 32, 27], ids=["kubectl-1.33", "kubectl-1.32", "kubectl-1.27"])
def k(request, cluster_proc, kube_home):
    return make_kubectl(request.param, cluster_proc, kube_home)


def fields(out: str) -> dict[str, str]:
    """`name -> "<type>[ -required-]"` of the FIELDS section of plain explain output."""
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^  (\w+)\t(<.*)$", out, re.M)}


def test_explain_hpa_describes_every_level(k):
    out = k("explain", "hpa").stdout
    assert "KIND:       HorizontalPodAutoscaler" in out and "VERSION:    v2" in out
    assert "scale subresource" in out  # our description of the kind
    assert fields(out) == {"apiVersion": "<string>", "kind": "<string>",
                           "metadata": "<ObjectMeta>", "spec": "<HorizontalPodAutoscalerSpec>",
                           "status": "<HorizontalPodAutoscalerStatus>"}

    out = k("explain", "hpa.spec").stdout
    f = fields(out)
    assert f["scaleTargetRef"] == "<CrossVersionObjectReference> -required-"
    assert f["maxReplicas"] == "<integer> -required-" and f["minReplicas"] == "<integer>"
    assert f["behavior"] == "<HorizontalPodAutoscalerBehavior>"
    assert "Default 1" in out and "80%" in out

    out = k("explain", "hpa.spec.behavior.scaleUp").stdout
    assert fields(out)["tolerance"] == "<Quantity>"
    assert "0 to 3600" in out

    out = k("explain", "hpa.spec.behavior.scaleUp.policies").stdout
    assert "FIELD: policies <[]HPAScalingPolicy>" in out
    assert fields(out) == {"periodSeconds": "<integer> -required-",
                           "type": "<string> -required-", "value": "<integer> -required-"}
    assert "1 to 1800 seconds" in out


def test_explain_recursive_and_other_versions(k):
    out = k("explain", "hpa", "--recursive").stdout
    for name in ("scaleTargetRef", "containerResource", "averageUtilization", "describedObject",
                 "stabilizationWindowSeconds", "selectPolicy", "tolerance", "currentMetrics",
                 "lastTransitionTime", "matchExpressions"):
        assert re.search(rf"^\s+{name}\t<", out, re.M), name

    out = k("explain", "hpa", "--api-version=autoscaling/v1").stdout
    assert "VERSION:    v1" in out
    spec = fields(k("explain", "hpa.spec", "--api-version=autoscaling/v1").stdout)
    assert spec["targetCPUUtilizationPercentage"] == "<integer>"
    assert "metrics" not in spec

    out = k("explain", "hpa.spec.behavior.scaleUp", "--output=plaintext-openapiv2").stdout
    assert "RESOURCE: scaleUp <Object>" in out and "policies\t<[]Object>" in out


def test_explain_workloads_pods_and_our_own_kinds(k):
    out = k("explain", "deployment.spec.template.spec.containers.resources").stdout
    f = fields(out)
    assert f["requests"] == "<map[string]Quantity>" and f["limits"] == "<map[string]Quantity>"

    f = fields(k("explain", "pods.spec").stdout)
    assert f["containers"] == "<[]Container> -required-"
    for name in ("initContainers", "volumes", "affinity", "tolerations",
                 "topologySpreadConstraints", "securityContext"):
        assert name in f

    for kind in ("statefulset", "replicaset", "rc", "namespace", "node", "lease", "scalable"):
        assert "spec" in fields(k("explain", kind).stdout), kind
    assert "involvedObject" in fields(k("explain", "events", "--api-version=v1").stdout)
    assert "regarding" in fields(k("explain", "events", "--api-version=events.k8s.io/v1").stdout)

    out = k("explain", "externalmetric").stdout
    assert "KIND:       ExternalMetric" in out and "VERSION:    v1alpha1" in out
    f = fields(k("explain", "externalmetric.spec").stdout)
    assert f == {"labels": "<map[string]string>", "name": "<string>",
                 "value": "<Quantity> -required-"}


def test_apply_of_rich_manifests_merges_by_the_published_keys(k, tmp_path):
    ns = f"rich-{k.binary.rsplit('.', 1)[-1]}"
    k("create", "namespace", ns)
    manifest = tmp_path / "rich.yaml"
    manifest.write_text(rich(9090, "a", "1Gi", "linux", 1))
    assert "created" in k("-n", ns, "create", "-f", str(manifest)).stdout
    out = k("-n", ns, "apply", "-f", str(manifest))
    assert "configured" in out.stdout and "warning: error calculating patch" not in out.stderr
    assert "unchanged" in k("-n", ns, "apply", "-f", str(manifest)).stdout

    # Someone else adds a container and a variable: apply merges lists by their keys (name),
    # so these survive; an atomic list would be replaced by the manifest's.
    k("-n", ns, "patch", "deploy", "rich", "--type=json", "-p", json.dumps([
        {"op": "add", "path": "/spec/template/spec/containers/-",
         "value": {"name": "extra", "image": "busybox"}},
        {"op": "add", "path": "/spec/template/spec/containers/0/env/-",
         "value": {"name": "ADDED", "value": "1"}}]))
    manifest.write_text(rich(9091, "b", "2Gi", "linux, windows", 2))
    out = k("-n", ns, "apply", "-f", str(manifest))
    assert "configured" in out.stdout and "warning" not in out.stderr.lower()
    spec = json.loads(k("-n", ns, "get", "deploy", "rich", "-o", "json").stdout)["spec"][
        "template"]["spec"]
    web = spec["containers"][0]
    assert [c["name"] for c in spec["containers"]] == ["web", "sidecar", "extra"]
    assert [e["name"] for e in web["env"]] == ["MODE", "POD", "ADDED"]
    assert [p["containerPort"] for p in web["ports"]] == [80, 9091]
    assert web["env"][0] == {"name": "MODE", "value": "b"} and web["env"][1]["name"] == "POD"
    assert spec["volumes"][0] == {"name": "cache", "emptyDir": {"sizeLimit": "2Gi"}}
    claim = spec["volumes"][2]["ephemeral"]["volumeClaimTemplate"]["spec"]
    assert claim["resources"]["requests"]["storage"] == "2Gi"
    term = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["linux", "windows"]
    assert spec["topologySpreadConstraints"][0]["maxSkew"] == 2

    current = k("-n", ns, "get", "deploy", "rich", "-o", "yaml").stdout
    assert "replaced" in k("-n", ns, "replace", "-f", "-", input=current).stdout
    nodes = k("get", "nodes", "-o", "yaml").stdout  # a List: kubectl validates it itself
    assert "replaced" in k("replace", "-f", "-", input=nodes).stdout


def test_unknown_fields_are_rejected(k, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(HPA_WITH_UNKNOWN_FIELD)
    out = k("create", "-f", str(bad), check=False)
    assert out.returncode != 0
    assert 'strict decoding error: unknown field "spec.foo"' in out.stderr
    bad.write_text(rich(9090, "a", "1Gi", "linux", 1).replace("name: rich\n", "name: odd\n", 1)
                   .replace("  replicas: 1\n", "  replicas: 1\n  foo: 1\n"))
    out = k("apply", "-f", str(bad), check=False)
    assert out.returncode != 0
    assert ('Deployment in version "v1" cannot be handled as a Deployment: strict decoding '
            'error: unknown field "spec.foo"') in out.stderr
