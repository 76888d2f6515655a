"""A whole application, as a user brings it, applied with the real kubectl 1.33 and 1.27 to a
running cluster with `pyhpa run` (issue 26): every kind its manifest carries (RBAC, a PDB, an
autoscaling/v2 HPA with behavior, Jobs, a CronJob, a DaemonSet, storage, priorities, limits
and a quota, a NetworkPolicy, an Ingress and its class) applies whole, `kubectl diff` works,
the CronJob runs, the HPA scales the Deployment under load as far as the quota lets it, `get
all -A` and `describe svc` read as on a real cluster, and the namespace terminates gracefully.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from pyhpa.cluster.embedded import EmbeddedCluster

from .conftest import fast_controller, make_kubectl, wait_for

pytestmark = [pytest.mark.kubectl, pytest.mark.slow]

APP = """
apiVersion: v1
kind: Namespace
metadata: {{name: {ns}}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: {ns}-high}}
value: 100000
description: Customer-facing pods.
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: {ns}-fast}}
provisioner: pyhpa.io/simulated-volume
reclaimPolicy: Delete
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {{name: {ns}-nginx}}
spec: {{controller: k8s.io/ingress-nginx}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {{name: {ns}-node-reader}}
rules:
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {{name: {ns}-web-reads-nodes}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: {ns}-node-reader}}
subjects:
- {{kind: ServiceAccount, name: web, namespace: {ns}}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {{name: compute, namespace: {ns}}}
spec:
  hard: {{requests.cpu: 2500m, pods: "20", requests.storage: 10Gi}}
---
apiVersion: v1
kind: LimitRange
metadata: {{name: defaults, namespace: {ns}}}
spec:
  limits:
  - type: Container
    defaultRequest: {{cpu: 100m, memory: 64Mi}}
    default: {{cpu: 500m, memory: 256Mi}}
    max: {{cpu: "2"}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {{name: web, namespace: {ns}}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {{name: config-reader, namespace: {ns}}}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {{name: web-reads-config, namespace: {ns}}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: config-reader}}
subjects:
- {{kind: ServiceAccount, name: web, namespace: {ns}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: web-config, namespace: {ns}}}
data: {{LOG_LEVEL: info}}
---
apiVersion: v1
kind: Secret
metadata: {{name: web-secret, namespace: {ns}}}
stringData: {{password: hunter2}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: uploads, namespace: {ns}}}
spec:
  storageClassName: {ns}-fast
  accessModes: [ReadWriteOnce]
  resources: {{requests: {{storage: 1Gi}}}}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: {ns}
  annotations: {{sim.pyhpa.io/cpu: "4000m", sim.pyhpa.io/startup-seconds: "1"}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      serviceAccountName: web
      priorityClassName: {ns}-high
      containers:
      - name: web
        image: nginx:1.27
        ports: [{{name: http, containerPort: 8080}}]
        envFrom: [{{configMapRef: {{name: web-config}}}}, {{secretRef: {{name: web-secret}}}}]
        resources: {{requests: {{cpu: 500m}}, limits: {{cpu: "1"}}}}
        volumeMounts: [{{name: uploads, mountPath: /uploads}}]
      volumes:
      - name: uploads
        persistentVolumeClaim: {{claimName: uploads}}
---
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: {ns}}}
spec:
  selector: {{app: web}}
  ports: [{{name: http, port: 80, targetPort: http}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {{name: web, namespace: {ns}}}
spec:
  ingressClassName: {ns}-nginx
  rules:
  - host: shop.example.com
    http:
      paths:
      - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{name: http}}}}}}}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {{name: web-ingress, namespace: {ns}}}
spec:
  podSelector: {{matchLabels: {{app: web}}}}
  policyTypes: [Ingress]
  ingress:
  - from: [{{namespaceSelector: {{}}}}]
    ports: [{{protocol: TCP, port: 8080}}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: web, namespace: {ns}}}
spec:
  minAvailable: 1
  selector: {{matchLabels: {{app: web}}}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: web, namespace: {ns}}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  minReplicas: 1
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 50}}}}
  behavior:
    scaleUp:
      stabilizationWindowSeconds: 0
      policies: [{{type: Pods, value: 4, periodSeconds: 15}}]
    scaleDown:
      stabilizationWindowSeconds: 120
---
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: {ns}
  annotations: {{sim.pyhpa.io/run-duration: 3s}}
spec:
  backoffLimit: 2
  ttlSecondsAfterFinished: 3600
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: migrate, image: "shop/migrate:1"}}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {{name: report, namespace: {ns}}}
spec:
  schedule: "@every 10s"
  concurrencyPolicy: Forbid
  successfulJobsHistoryLimit: 2
  jobTemplate:
    metadata:
      annotations: {{sim.pyhpa.io/run-duration: 2s}}
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{{name: report, image: "shop/report:1"}}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: log-agent, namespace: {ns}}}
spec:
  selector: {{matchLabels: {{app: log-agent}}}}
  template:
    metadata: {{labels: {{app: log-agent}}}}
    spec:
      containers: [{{name: agent, image: "fluent/fluent-bit:3"}}]
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with EmbeddedCluster(tmp_path_factory.mktemp("wholeapp")) as c:
        c.simulation.resolution = 1.0  # a fast metrics pipeline: the HPA sees load in seconds
        c.simulation.window = 2.0
        yield c


@pytest.fixture(scope="module")
def controller(cluster, tmp_path_factory):
    """`pyhpa run` against the cluster with short periods (stopped by its pid at the end)."""
    yield from fast_controller(cluster, tmp_path_factory.mktemp("controller") / "controller.log")


def _json(k, *args: str) -> dict:
    return json.loads(k(*args, "-o", "json").stdout)


def _cpu_milli(q: str) -> int:
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


@pytest.mark.parametrize("minor", [33, 27])
def test_a_whole_application_applies_runs_scales_within_quota_and_terminates(
        minor, cluster, controller, tmp_path):
    k = make_kubectl(minor, SimpleNamespace(kubeconfig=cluster.kubeconfig_path), tmp_path)
    ns = f"shop{minor}"
    manifest = tmp_path / "app.yaml"
    manifest.write_text(APP.format(ns=ns))

    applied = k("apply", "-f", str(manifest))
    assert applied.returncode == 0 and applied.stderr == ""
    for line in (f"namespace/{ns} created", "role.rbac.authorization.k8s.io/config-reader created",
                 "cronjob.batch/report created", "job.batch/migrate created",
                 "daemonset.apps/log-agent created", "persistentvolumeclaim/uploads created",
                 f"priorityclass.scheduling.k8s.io/{ns}-high created",
                 "networkpolicy.networking.k8s.io/web-ingress created",
                 "horizontalpodautoscaler.autoscaling/web created",
                 "resourcequota/compute created", "limitrange/defaults created"):
        assert line in applied.stdout
    again = k("apply", "-f", str(manifest))
    assert again.returncode == 0 and "cronjob.batch/report unchanged" in again.stdout
    diff = k("diff", "-f", str(manifest), check=False)
    assert diff.returncode in (0, 1), diff.stderr

    # the claim is bound, the job ran, the cron job runs on its schedule
    wait_for(lambda: (_json(k, "-n", ns, "get", "pvc", "uploads").get("status") or {}).get("phase")
             == "Bound", 30, "the claim bound")
    wait_for(lambda: any(c["type"] == "Complete" for c in _json(
        k, "-n", ns, "get", "job", "migrate").get("status", {}).get("conditions", [])), 45,
        "the migration job complete")

    def cron_ran():
        jobs = _json(k, "-n", ns, "get", "jobs")["items"]
        return [j for j in jobs if j["metadata"].get("ownerReferences", [{}])[0].get("kind")
                == "CronJob" and any(c["type"] == "Complete"
                                     for c in (j.get("status") or {}).get("conditions", []))]
    wait_for(cron_ran, 60, "a Job of the CronJob completed")
    assert _json(k, "-n", ns, "get", "cronjob", "report")["status"].get("lastScheduleTime")

    # the HPA scales web under its load, as far as the quota lets pods be created
    def refused_by_quota():
        events = _json(k, "-n", ns, "get", "events")["items"]
        return [e for e in events if e["reason"] == "FailedCreate"
                and "exceeded quota: compute" in e["message"]]
    refused = wait_for(refused_by_quota, 90, "a FailedCreate for the quota")
    assert refused[0]["message"].startswith('Error creating: pods "web-')
    deploy = _json(k, "-n", ns, "get", "deployment", "web")
    pods = [p for p in _json(k, "-n", ns, "get", "pods")["items"]
            if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    web = [p for p in pods if p["metadata"]["labels"].get("app") == "web"]
    assert deploy["spec"]["replicas"] > len(web) > 1
    assert all(p["spec"]["priority"] == 100000 for p in web)
    requested = sum(_cpu_milli(c["resources"]["requests"]["cpu"])
                    for p in pods for c in p["spec"]["containers"])
    assert requested <= 2500
    quota = _json(k, "-n", ns, "get", "quota", "compute")
    assert _cpu_milli(quota["status"]["used"]["requests.cpu"]) <= 2500

    # what a user reads
    everything = k("get", "all", "-A").stdout
    for row in (f"{ns}", "deployment.apps/web", "replicaset.apps/web-", "service/web",
                "daemonset.apps/log-agent", "cronjob.batch/report", "job.batch/migrate",
                "horizontalpodautoscaler.autoscaling/web", "pod/log-agent-"):
        assert row in everything
    described = k("-n", ns, "describe", "svc", "web").stdout
    endpoints = [line for line in described.splitlines() if line.startswith("Endpoints:")]
    assert endpoints and ":8080" in endpoints[0]
    can = k("auth", "can-i", "list", "configmaps", "-n", ns,
            f"--as=system:serviceaccount:{ns}:web", check=False)
    assert can.stdout.strip() == "yes"
    cannot = k("auth", "can-i", "delete", "deployments", "-n", ns,
               f"--as=system:serviceaccount:{ns}:web", check=False)
    assert cannot.stdout.strip() == "no"

    # the namespace terminates: Terminating while its pods end, then gone
    k("delete", "namespace", ns, "--wait=false")
    assert _json(k, "get", "namespace", ns)["status"]["phase"] == "Terminating"
    k("wait", "--for=delete", f"namespace/{ns}", "--timeout=60s")
    for cluster_scoped in (f"priorityclass/{ns}-high", f"storageclass/{ns}-fast",
                           f"ingressclass/{ns}-nginx", f"clusterrole/{ns}-node-reader",
                           f"clusterrolebinding/{ns}-web-reads-nodes"):
        k("delete", cluster_scoped)


@pytest.mark.parametrize("minor", [33, 27])
def test_kubectl_create_makes_the_new_kinds(minor, cluster, tmp_path):
    """kubectl 1.32+ POSTs these as protobuf; 1.27 as JSON."""
    k = make_kubectl(minor, SimpleNamespace(kubeconfig=cluster.kubeconfig_path), tmp_path)
    ns = f"create{minor}"
    k("create", "namespace", ns)
    n = ("-n", ns)
    k(*n, "create", "role", "pods", "--verb=get,list", "--resource=pods,deployments.apps")
    k(*n, "create", "rolebinding", "pods", "--role=pods", "--user=ann",
      f"--serviceaccount={ns}:default")
    k("create", "clusterrole", f"{ns}-logs", "--verb=get", "--non-resource-url=/logs/*")
    k("create", "clusterrolebinding", f"{ns}-logs", f"--clusterrole={ns}-logs", "--group=ops")
    k(*n, "create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *", "--",
      "date")
    k(*n, "create", "job", "once", "--image=busybox")
    k(*n, "create", "job", "now", "--from=cronjob/tick")
    k("create", "priorityclass", f"{ns}-high", "--value=1000", "--preemption-policy=Never")
    k(*n, "create", "quota", "q", "--hard=cpu=2,pods=5")
    role = _json(k, *n, "get", "role", "pods")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
                             {"apiGroups": ["apps"], "resources": ["deployments"],
                              "verbs": ["get", "list"]}]
    binding = _json(k, *n, "get", "rolebinding", "pods")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                  "name": "pods"}
    assert {s["kind"] for s in binding["subjects"]} == {"User", "ServiceAccount"}
    assert _json(k, "get", "clusterrole", f"{ns}-logs")["rules"] == [
        {"nonResourceURLs": ["/logs/*"], "verbs": ["get"]}]
    cron = _json(k, *n, "get", "cronjob", "tick")
    assert cron["spec"]["schedule"] == "*/5 * * * *"
    assert cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0][
        "command"] == ["date"]
    now = _json(k, *n, "get", "job", "now")
    assert now["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert now["metadata"]["ownerReferences"][0]["name"] == "tick"
    assert now["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"
    assert _json(k, "get", "priorityclass", f"{ns}-high")["value"] == 1000
    assert _json(k, *n, "get", "quota", "q")["spec"]["hard"] == {"cpu": "2", "pods": "5"}
    table = k(*n, "get", "jobs").stdout.splitlines()
    assert table[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert k(*n, "auth", "can-i", "list", "deployments.apps", "--as=ann").stdout.strip() == "yes"
    k("delete", "namespace", ns)
    k("delete", "clusterrole,clusterrolebinding", f"{ns}-logs")
    k("delete", "priorityclass", f"{ns}-high")
