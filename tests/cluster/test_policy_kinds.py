"""Policy kinds and pod admission: PriorityClasses, LimitRanges and ResourceQuotas applied to
new pods with upstream's messages (:mod:`pyhpa.cluster.apiserver.admission`), their write rules
(:mod:`.policy_strategy`), claims bound to provisioned volumes (controllers/volume.py), quota
usage (controllers/resourcequota.py) and DaemonSets (controllers/daemonset.py)."""

from __future__ import annotations

import pytest

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.admission import admit_pod
from pyhpa.cluster.apiserver.policy_bootstrap import ensure_cluster_defaults
from pyhpa.cluster.apiserver.policy_strategy import (LimitRangeStrategy,
                                                     PersistentVolumeClaimStrategy,
                                                     PriorityClassStrategy)
from pyhpa.cluster.apiserver.status import APIError
from pyhpa.cluster.apiserver.storage import Store
from pyhpa.cluster.controllers.simulation import Simulation
from tests.clock import Clock

NS = "default"


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "store.sqlite")
    ensure_cluster_defaults(s)
    yield s
    s.close()


def pod(name: str, cpu: str | None = "500m", **spec) -> dict:
    res = {"requests": {"cpu": cpu}} if cpu else {}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"containers": [{"name": "web", "image": "nginx", "resources": res}],
                     **spec}}


def _messages(causes):
    return [f"{c['field']}: {c['message']}" for c in causes]


def test_priority_class_names_resolve_at_admission(store):
    store.create(R.PRIORITY_CLASSES.key, {"apiVersion": "scheduling.k8s.io/v1",
                                          "kind": "PriorityClass", "metadata": {"name": "high"},
                                          "value": 1000, "preemptionPolicy": "Never"})
    p = pod("a", priorityClassName="high")
    admit_pod(store, p)
    assert p["spec"]["priority"] == 1000 and p["spec"]["preemptionPolicy"] == "Never"
    critical = pod("b", priorityClassName="system-cluster-critical")
    admit_pod(store, critical)
    assert critical["spec"]["priority"] == 2000000000
    with pytest.raises(APIError) as err:
        admit_pod(store, pod("c", priorityClassName="urgent"))
    assert err.value.code == 403
    assert err.value.message == 'pods "c" is forbidden: no PriorityClass with name urgent was ' \
                                "found"
    s = PriorityClassStrategy(R.PRIORITY_CLASSES)
    bad = {"metadata": {"name": "system-mine"}, "value": 2000000000}
    s.prepare_create(bad)
    assert _messages(s.validate(bad, None)) == [
        "metadata.name: Invalid value: \"system-mine\": priority class names with 'system-' "
        "prefix are reserved for system use only"]
    big = {"metadata": {"name": "big"}, "value": 1000000001, "preemptionPolicy": "Never"}
    assert _messages(s.validate(big, None)) == [
        "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]


def test_limit_ranges_default_and_bound_containers(store):
    lr = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": NS},
          "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"},
                               "min": {"memory": "64Mi"}}]}}
    LimitRangeStrategy(R.LIMIT_RANGES).prepare_create(lr)
    item = lr["spec"]["limits"][0]
    assert item["default"] == {"cpu": "1"} and item["defaultRequest"] == {"cpu": "1",
                                                                         "memory": "64Mi"}
    store.create(R.LIMIT_RANGES.key, lr)
    p = pod("a", cpu=None)
    admit_pod(store, p)
    res = p["spec"]["containers"][0]["resources"]
    assert res == {"limits": {"cpu": "1"}, "requests": {"cpu": "1", "memory": "64Mi"}}
    assert p["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu limit for container web; cpu request for container web; "
        "memory request for container web")
    big = pod("b")
    big["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "2"},
                                                 "requests": {"cpu": "2", "memory": "32Mi"}}
    with pytest.raises(APIError) as err:
        admit_pod(store, big)
    assert err.value.message == (
        'pods "b" is forbidden: [minimum memory usage per Container is 64Mi, but request is '
        "32Mi, maximum cpu usage per Container is 1, but limit is 2]")
    wrong = {"metadata": {"name": "w", "namespace": NS}, "spec": {"limits": [
        {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]}}
    assert "min value 2 is greater than max value 1" in \
        _messages(LimitRangeStrategy(R.LIMIT_RANGES).validate(wrong, None))[0]


def test_quota_refuses_pods_past_it_with_upstream_message(store):
    store.create(R.RESOURCE_QUOTAS.key, {
        "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": NS},
        "spec": {"hard": {"cpu": "1", "pods": "5"}}})
    for name in ("a", "b"):
        p = pod(name)
        admit_pod(store, p)
        store.create(R.PODS.key, p)
    with pytest.raises(APIError) as err:
        admit_pod(store, pod("web-7d9-x2x7j"))
    assert err.value.message == (
        'pods "web-7d9-x2x7j" is forbidden: exceeded quota: q, requested: cpu=500m, used: '
        "cpu=1, limited: cpu=1")
    with pytest.raises(APIError) as err:
        admit_pod(store, pod("naked", cpu=None))
    assert err.value.message == 'pods "naked" is forbidden: failed quota: q: must specify ' \
                                "cpu for: web"


def test_a_scale_up_past_the_quota_leaves_failed_create_events_and_fewer_pods(store):
    clock = Clock()
    sim = Simulation(store, clock)
    sim.ensure_node()
    store.create(R.RESOURCE_QUOTAS.key, {
        "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": NS},
        "spec": {"hard": {"requests.cpu": "2"}}})
    store.create(R.DEPLOYMENTS.key, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web",
                                                                      "namespace": NS},
        "spec": {"replicas": 6, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx",
                                                       "resources": {"requests": {
                                                           "cpu": "500m"}}}]}}}})
    sim.settle()
    assert len(store.list(R.PODS.key, NS).items) == 4
    failed = [e for e in store.list(R.EVENTS.key, NS).items if e["reason"] == "FailedCreate"]
    assert failed and failed[0]["source"]["component"] == "replicaset-controller"
    assert failed[0]["type"] == "Warning" and failed[0]["message"].endswith(
        "is forbidden: exceeded quota: q, requested: requests.cpu=500m, used: "
        "requests.cpu=2, limited: requests.cpu=2")
    assert failed[0]["message"].startswith('Error creating: pods "web-')
    quota = store.get(R.RESOURCE_QUOTAS.key, NS, "q")
    assert quota["status"] == {"hard": {"requests.cpu": "2"}, "used": {"requests.cpu": "2"}}


def test_claims_get_the_default_class_and_a_provisioned_volume(store):
    sim = Simulation(store, Clock())
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": "data", "namespace": NS},
             "spec": {"accessModes": ["ReadWriteOnce"],
                      "resources": {"requests": {"storage": "1Gi"}}}}
    s = PersistentVolumeClaimStrategy(R.PERSISTENT_VOLUME_CLAIMS)
    s.store = store
    s.prepare_create(claim)
    assert claim["spec"]["storageClassName"] == "standard"
    assert s.validate(claim, None) == []
    store.create(R.PERSISTENT_VOLUME_CLAIMS.key, claim)
    sim.settle()
    got = store.get(R.PERSISTENT_VOLUME_CLAIMS.key, NS, "data")
    pv = store.get(R.PERSISTENT_VOLUMES.key, "", got["spec"]["volumeName"])
    assert got["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                             "capacity": {"storage": "1Gi"}}
    assert pv["status"]["phase"] == "Bound" and pv["spec"]["claimRef"]["name"] == "data"
    store.delete(R.PERSISTENT_VOLUME_CLAIMS.key, NS, "data")
    sim.settle()
    assert store.try_get(R.PERSISTENT_VOLUMES.key, "", pv["metadata"]["name"]) is None
    empty = {"metadata": {"name": "x", "namespace": NS}, "spec": {}}
    assert _messages(s.validate(empty, None)) == [
        "spec.accessModes: Required value: at least 1 access mode is required",
        "spec.resources[storage]: Required value"]


def test_a_daemonset_runs_one_pod_per_node_and_rolls_node_by_node(tmp_path):
    store = Store(tmp_path / "ds.sqlite")
    clock = Clock()
    sim = Simulation(store, clock, nodes=3)
    sim.ensure_node()
    template = {"metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "a", "image": "agent:1"}]}}
    store.create(R.DAEMON_SETS.key, {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": NS},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": template,
                 "updateStrategy": {"type": "RollingUpdate",
                                    "rollingUpdate": {"maxUnavailable": 1}}}})
    sim.settle()
    pods = store.list(R.PODS.key, NS).items
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["pyhpa-node", "pyhpa-node-2",
                                                           "pyhpa-node-3"]
    clock.t += 10
    sim.settle()
    ds = store.get(R.DAEMON_SETS.key, NS, "agent")
    assert ds["status"]["desiredNumberScheduled"] == 3 and ds["status"]["numberReady"] == 3

    def new_image(o):
        o["spec"]["template"]["spec"]["containers"][0]["image"] = "agent:2"
    store.guaranteed_update(R.DAEMON_SETS.key, NS, "agent", new_image)
    sim.settle()
    deleting = [p for p in store.list(R.PODS.key, NS).items
                if p["metadata"].get("deletionTimestamp")]
    assert len(deleting) == 1  # maxUnavailable 1: one node at a time
    for _ in range(12):
        clock.t += 5
        sim.settle()
    pods = store.list(R.PODS.key, NS).items
    assert sorted(p["spec"]["containers"][0]["image"] for p in pods) == ["agent:2"] * 3
    assert store.get(R.DAEMON_SETS.key, NS, "agent")["status"]["updatedNumberScheduled"] == 3
    store.close()


def test_a_statefulset_gets_a_bound_claim_per_pod_from_its_templates(store):
    sim = Simulation(store, Clock())
    sim.ensure_node()
    store.create(R.STATEFUL_SETS.key, {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": NS},
        "spec": {"replicas": 1, "serviceName": "db",
                 "selector": {"matchLabels": {"app": "db"}},
                 "template": {"metadata": {"labels": {"app": "db"}},
                              "spec": {"containers": [{"name": "db", "image": "postgres"}]}},
                 "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                     "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "2Gi"}}}}]}})
    sim.settle()
    claim = store.get(R.PERSISTENT_VOLUME_CLAIMS.key, NS, "data-db-0")
    assert claim["metadata"]["labels"] == {"app": "db"}
    assert claim["spec"]["storageClassName"] == "standard"
    assert claim["status"]["phase"] == "Bound"
    pod = store.get(R.PODS.key, NS, "db-0")
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}} in \
        pod["spec"]["volumes"]
