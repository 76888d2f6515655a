"""Workload behaviour users notice through real kubectl: rollouts, pod lifecycles, resources."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest

from pyhpa.cluster.embedded import EmbeddedCluster

from .conftest import fast_controller, make_kubectl, wait_for

pytestmark = [pytest.mark.kubectl, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with EmbeddedCluster(tmp_path_factory.mktemp("workloads")) as c:
        c.simulation.resolution = 1.0  # a fast metrics pipeline: `kubectl top` within seconds
        c.simulation.window = 2.0
        yield c


def kubectl(cluster, tmp_path_factory, minor: int):
    proc = SimpleNamespace(kubeconfig=cluster.kubeconfig_path)
    return make_kubectl(minor, proc, tmp_path_factory.mktemp(f"kubehome{minor}"))


@pytest.fixture(scope="module")
def k(cluster, tmp_path_factory):
    return kubectl(cluster, tmp_path_factory, 33)


def get(k, *args: str) -> dict:
    return json.loads(k("get", *args, "-o", "json").stdout)


@pytest.mark.parametrize("minor", [33, 27])
def test_rollout_undo_restores_the_annotations_of_the_revision(cluster, tmp_path_factory, minor):
    k = kubectl(cluster, tmp_path_factory, minor)
    name = f"undo{minor}"
    k("create", "deployment", name, "--image=nginx:1.25")
    k("annotate", "deployment", name, "sim.pyhpa.io/cpu=500m", "sim.pyhpa.io/startup-seconds=1",
      "sim.pyhpa.io/termination-seconds=1", "kubernetes.io/change-cause=first")
    k("rollout", "status", f"deployment/{name}", "--timeout=40s")
    k("set", "image", f"deployment/{name}", "nginx=nginx:1.26")
    k("annotate", "deployment", name, "--overwrite", "sim.pyhpa.io/cpu=900m",
      "kubernetes.io/change-cause=second")
    k("rollout", "status", f"deployment/{name}", "--timeout=40s")
    history = k("rollout", "history", f"deployment/{name}").stdout
    assert [ln.split() for ln in history.splitlines()[2:] if ln.strip()] == \
        [["1", "first"], ["2", "second"]]

    out = k("rollout", "undo", f"deployment/{name}").stdout
    assert "rolled back" in out
    k("rollout", "status", f"deployment/{name}", "--timeout=40s")
    dep = get(k, "deployment", name)
    anns = dep["metadata"]["annotations"]
    # the annotations of revision 1 are back, the load settings among them
    assert anns["sim.pyhpa.io/cpu"] == "500m" and anns["sim.pyhpa.io/startup-seconds"] == "1"
    assert anns["kubernetes.io/change-cause"] == "first"
    assert anns["deployment.kubernetes.io/revision"] == "3"
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    rss = {rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs["metadata"]["annotations"]
           for rs in get(k, "rs", "-l", f"app={name}")["items"]}
    assert rss["nginx:1.25"]["deployment.kubernetes.io/revision-history"] == "1"
    assert "kubectl.kubernetes.io/last-applied-configuration" not in rss["nginx:1.25"]
    history = k("rollout", "history", f"deployment/{name}").stdout
    assert [ln.split() for ln in history.splitlines()[2:] if ln.strip()] == \
        [["2", "second"], ["3", "first"]]


@pytest.mark.parametrize("minor", [33, 27])
def test_delete_cascade_orphan_keeps_the_replicaset_and_its_pods(cluster, tmp_path_factory,
                                                                  minor):
    k = kubectl(cluster, tmp_path_factory, minor)
    name = f"orphan{minor}"
    k("create", "deployment", name, "--image=nginx:1.25", "--replicas=2")
    [rs] = wait_for(lambda: [r["metadata"]["name"] for r in
                             get(k, "rs", "-l", f"app={name}")["items"]], what="the ReplicaSet")
    pods = wait_for(lambda: len(ps := pod_names(k, f"app={name}")) == 2 and ps, what="2 pods")
    k("delete", "deployment", name, "--cascade=orphan")
    time.sleep(2)  # a few passes of the simulation, which would collect orphans of a gone owner
    kept = get(k, "rs", rs)
    assert "ownerReferences" not in kept["metadata"] and "deletionTimestamp" not in kept["metadata"]
    assert sorted(pod_names(k, f"app={name}")) == sorted(pods)
    k("delete", "rs", rs)


@pytest.mark.parametrize("minor", [33, 27])
def test_delete_cascade_foreground_holds_the_owner_until_its_pods_are_gone(
        cluster, tmp_path_factory, minor):
    k = kubectl(cluster, tmp_path_factory, minor)
    name = f"fg{minor}"
    k("create", "deployment", name, "--image=nginx:1.25", "--replicas=2")
    k("annotate", "deployment", name, "sim.pyhpa.io/termination-seconds=3")
    [originals] = wait_for(lambda: [n] if len(n := pod_names(k, f"app={name}")) == 2 else None,
                           what="2 pods")
    k("delete", "deployment", name, "--cascade=foreground", "--wait=false")
    held = get(k, "deployment", name)["metadata"]
    assert held["finalizers"] == ["foregroundDeletion"] and held["deletionTimestamp"]
    [rs] = get(k, "rs", "-l", f"app={name}")["items"]
    assert rs["metadata"]["finalizers"] == ["foregroundDeletion"]
    pods = get(k, "pods", "-l", f"app={name}")["items"]
    terminating = {p["metadata"]["name"] for p in pods if p["metadata"].get("deletionTimestamp")}
    assert set(originals) <= terminating  # the owner's pods go first
    k("wait", "--for=delete", f"deployment/{name}", "--timeout=30s")
    assert get(k, "rs,pods", "-l", f"app={name}")["items"] == []


def test_delete_in_the_background_leaves_the_pods_terminating(k):
    k("create", "deployment", "bg", "--image=nginx:1.25")
    k("annotate", "deployment", "bg", "sim.pyhpa.io/termination-seconds=3")
    wait_for(lambda: pod_names(k, "app=bg"), what="the pod")
    k("delete", "deployment", "bg", "--wait=false")
    [pod] = get(k, "pods", "-l", "app=bg")["items"]  # Terminating, as its node stops it
    assert pod["metadata"]["deletionTimestamp"]
    wait_for(lambda: not get(k, "pods", "-l", "app=bg")["items"], what="the pod gone")


def test_drain_evicts_within_the_disruption_budget(k):
    k("create", "deployment", "drained", "--image=nginx:1.25", "--replicas=2")
    k("create", "pdb", "drained", "--selector=app=drained", "--min-available=2")
    wait_for(lambda: get(k, "pdb", "drained").get("status", {}).get("currentHealthy") == 2,
             what="the budget's 2 healthy pods")
    try:
        held = k("drain", "pyhpa-node", "--pod-selector=app=drained", "--timeout=4s",
                 check=False)
        assert held.returncode != 0
        assert "Cannot evict pod as it would violate the pod's disruption budget." in held.stderr
        assert len(pod_names(k, "app=drained")) == 2  # neither was evicted
        k("patch", "pdb", "drained", "--type=merge", "-p", '{"spec":{"minAvailable":1}}')
        wait_for(lambda: get(k, "pdb", "drained")["status"]["disruptionsAllowed"] == 1,
                 what="one disruption allowed")
        out = k("drain", "pyhpa-node", "--pod-selector=app=drained", "--timeout=5s",
                check=False)
        assert "evicted" in out.stdout  # one at once, the other once the budget allows
    finally:
        k("uncordon", "pyhpa-node")
        k("delete", "deployment,pdb", "drained")


def pod_names(k, selector: str) -> list[str]:
    return [p["metadata"]["name"] for p in get(k, "pods", "-l", selector)["items"]
            if not p["metadata"].get("deletionTimestamp")]


def test_pod_lifecycle_events_pending_time_and_quick_termination(k):
    k("apply", "-f", "-", input="""apiVersion: apps/v1
kind: Deployment
metadata:
  name: life
  annotations: {sim.pyhpa.io/pending-seconds: "7", sim.pyhpa.io/startup-seconds: "2"}
spec:
  selector: {matchLabels: {app: life}}
  template:
    metadata: {labels: {app: life}}
    spec:
      containers: [{name: web, image: "nginx:1.25"}]
""")
    [name] = wait_for(lambda: pod_names(k, "app=life"), what="the pod")
    created = time.monotonic()
    row = k("get", "pod", name, "--no-headers").stdout.split()
    assert row[1:3] == ["0/1", "ContainerCreating"]
    # Pending for the 7 s asked for, although its startup time is 2 s
    wait_for(lambda: "1/1" in k("get", "pod", name, "--no-headers").stdout, what="ready")
    assert time.monotonic() - created > 5
    described = k("describe", "pod", name).stdout
    events = [ln.split(None, 4) for ln in described.split("Events:")[1].splitlines()[3:]
              if ln.strip()]
    assert [(e[1], e[3]) for e in events] == [
        ("Scheduled", "default-scheduler"), ("Pulled", "kubelet"), ("Created", "kubelet"),
        ("Started", "kubelet")]
    assert [e[4] for e in events] == [
        f"Successfully assigned default/{name} to pyhpa-node",
        'Container image "nginx:1.25" already present on machine',
        "Created container: web", "Started container web"]
    # deleting takes the workload's termination time (2 s by default), not the 30 s grace period
    started = time.monotonic()
    k("delete", "pod", name, "--timeout=20s")
    assert time.monotonic() - started < 20  # the grace period would be 30 s
    stopping = get(k, "events", "--field-selector", f"involvedObject.name={name},reason=Killing")
    assert [(e["source"]["component"], e["involvedObject"]["fieldPath"], e["message"])
            for e in stopping["items"]] == [("kubelet", "spec.containers{web}",
                                             "Stopping container web")]


def test_the_node_lease_in_kube_node_lease(k):
    assert "Active" in k("get", "namespace", "kube-node-lease").stdout
    [lease] = get(k, "leases", "-n", "kube-node-lease")["items"]
    assert lease["metadata"]["name"] == lease["spec"]["holderIdentity"] == "pyhpa-node"
    assert lease["spec"]["leaseDurationSeconds"] == 40
    described = k("describe", "node", "pyhpa-node").stdout
    lease_part = described.split("Lease:")[1].split("Conditions:")[0]
    assert "HolderIdentity:  pyhpa-node" in lease_part and "RenewTime:" in lease_part
    assert "<unset>" not in lease_part.split("RenewTime:")[1]


PHP_APACHE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: php-apache
  annotations: {sim.pyhpa.io/cpu: "5000m", sim.pyhpa.io/startup-seconds: "1"}
spec:
  selector: {matchLabels: {run: php-apache}}
  template:
    metadata: {labels: {run: php-apache}}
    spec:
      containers:
      - name: php-apache
        image: registry.k8s.io/hpa-example
        resources: {requests: {cpu: 200m}, limits: {cpu: 500m}}
"""


@pytest.fixture
def controller(cluster, tmp_path):
    """`pyhpa run` against the cluster, with short periods (stopped by its pid at the end)."""
    yield from fast_controller(cluster, tmp_path / "controller.log")


def test_php_apache_with_a_cpu_limit_never_shows_more_than_the_limit(k, controller):
    k("apply", "-f", "-", input=PHP_APACHE)
    k("autoscale", "deployment", "php-apache", "--cpu-percent=50", "--min=1", "--max=4")
    seen: list[int] = []

    def at_max():
        hpa = get(k, "hpa", "php-apache")
        for m in hpa.get("status", {}).get("currentMetrics") or []:
            if m.get("resource"):  # (an entry with an empty type while metrics are missing)
                seen.append(m["resource"]["current"]["averageUtilization"])
        return hpa["status"].get("currentReplicas") == 4 and seen and seen[-1] == 250
    # demand is 25 times the request; each pod is throttled at its 500m limit: 250 % at most
    wait_for(at_max, timeout=90, what="4 replicas at 250 %")
    assert max(seen) <= 250, seen
    assert "cpu: 250%/50%" in k("get", "hpa", "php-apache").stdout
    rows = [ln.split() for ln in k("top", "pods", "-l", "run=php-apache", "--no-headers").stdout
            .splitlines() if ln.strip()]
    assert rows and all(int(r[1].rstrip("m")) <= 500 for r in rows), rows


@pytest.mark.parametrize("minor", [33, 27])
def test_memory_over_the_limit_is_oomkilled_and_restarted(cluster, tmp_path_factory, minor):
    k = kubectl(cluster, tmp_path_factory, minor)
    name = f"hog{minor}"
    k("apply", "-f", "-", input=f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  annotations: {{sim.pyhpa.io/memory: "200Mi"}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: app
        image: "nginx:1.25"
        resources: {{limits: {{memory: 128Mi}}, requests: {{memory: 64Mi}}}}
""")

    def crashing():
        rows = [ln.split() for ln in k("get", "pods", "-l", f"app={name}", "--no-headers").stdout
                .splitlines() if ln.strip()]
        return rows if rows and rows[0][2] == "CrashLoopBackOff" else None
    [row] = wait_for(crashing, what="CrashLoopBackOff")
    assert row[1] == "0/1" and row[3] == "1" and row[5] == "ago)"  # RESTARTS: 1 (Ns ago)
    pod = get(k, "pods", "-l", f"app={name}")["items"][0]
    cs = pod["status"]["containerStatuses"][0]
    assert cs["lastState"]["terminated"]["reason"] == "OOMKilled" and cs["restartCount"] == 1
    described = k("describe", "pod", pod["metadata"]["name"]).stdout
    assert "Last State:     Terminated" in described and "Reason:       OOMKilled" in described
    assert "Exit Code:    137" in described and "Restart Count:  1" in described
    assert "Back-off restarting failed container app in pod" in described
    if minor != 33:
        return  # the restart after the back-off is the server's, whatever the kubectl: once is enough
    # within its limit it stays up
    k("annotate", "deployment", name, "--overwrite", "sim.pyhpa.io/memory=100Mi")
    wait_for(lambda: "1/1" in k("get", "pods", "-l", f"app={name}", "--no-headers").stdout,
             timeout=40, what="running again after the back-off")


@pytest.mark.parametrize("minor", [33, 27])
def test_pods_beyond_the_node_capacity_stay_pending_until_room_appears(cluster, tmp_path_factory,
                                                                        minor):
    k = kubectl(cluster, tmp_path_factory, minor)
    name = f"wide{minor}"
    # 4 pods of 3 CPUs on a node of 8 (the other tests' pods take less than 2): 2 fit
    k("apply", "-f", "-", input=f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  annotations: {{sim.pyhpa.io/startup-seconds: "1", sim.pyhpa.io/termination-seconds: "1"}}
spec:
  replicas: 4
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: app
        image: "nginx:1.25"
        resources: {{requests: {{cpu: "3"}}}}
""")

    def statuses():
        rows = [ln.split() for ln in k("get", "pods", "-l", f"app={name}", "--no-headers").stdout
                .splitlines() if ln.strip()]
        return sorted(r[2] for r in rows)
    wait_for(lambda: statuses() == ["Pending", "Pending", "Running", "Running"],
             what="2 running, 2 pending")
    pods = get(k, "pods", "-l", f"app={name}")["items"]
    pending = sorted((p for p in pods if not p["spec"].get("nodeName")),
                     key=lambda p: p["metadata"]["creationTimestamp"])
    described = k("describe", "pod", pending[0]["metadata"]["name"]).stdout
    assert "FailedScheduling" in described and "default-scheduler" in described
    assert ("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
            "1 No preemption victims found for incoming pod.") in " ".join(described.split())
    words = " ".join(described.split())
    assert "Status: Pending" in words and "Node: <none>" in words
    assert "Priority: 0 Service Account: default" in words
    # a running pod goes: its room goes to a waiting pod, and its replacement waits
    running = [p["metadata"]["name"] for p in pods if p["spec"].get("nodeName")]
    k("delete", "pod", running[0], "--timeout=20s")
    wait_for(lambda: get(k, "pod", pending[0]["metadata"]["name"])["spec"].get("nodeName"),
             what="the waiting pod bound")
    wait_for(lambda: statuses() == ["Pending", "Pending", "Running", "Running"],
             what="2 running, 2 pending again")
    k("delete", "deployment", name)
    wait_for(lambda: not statuses(), what="the pods gone")
