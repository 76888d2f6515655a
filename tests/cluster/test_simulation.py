"""The live workload simulation driven against a Store with an injected clock (no threads)."""

from __future__ import annotations

import pytest

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.controllers.objects import FINALIZER, HASH_LABEL, template_hash
from pyhpa.cluster.controllers.simulation import Simulation
from pyhpa.cluster.apiserver.storage import Store
from tests import builders
from tests.clock import Clock

NS = "default"


@pytest.fixture(params=["every-namespace", "one-namespace"])
def env(request, tmp_path):
    """Each scenario runs twice: with passes over everything and with passes limited to the
    namespace it uses (what the background thread does after a write there): same outcomes."""
    store = Store(tmp_path / "store.sqlite")
    clock = Clock()
    sim = Simulation(store, clock, resolution=5.0, window=15.0)
    sim.ensure_node()
    scope = None if request.param == "every-namespace" else {NS}

    def at(t: float) -> None:
        """Move the clock to ``t`` seconds after the start and let the controllers settle."""
        clock.t = 1_000_000.0 + t
        sim.settle(namespaces=scope)

    yield store, sim, at
    # passes keep the objects they decoded while unchanged: no pass may have modified one
    for by_ns in sim._decoded.values():
        for names in by_ns.values():
            for entry, obj in names.values():
                assert obj == entry.obj()
    store.close()


def template(app: str, image: str = "nginx", cpu: str = "500m") -> dict:
    return {"metadata": {"labels": {"app": app}},
            "spec": {"containers": [{"name": app, "image": image,
                                     "resources": {"requests": {"cpu": cpu}}}]}}


def deployment(name: str, replicas: int, annotations: dict | None = None, **spec) -> dict:
    """Pods that start in 10 s and terminate in 5 s unless ``annotations`` say otherwise."""
    return builders.deployment(name, replicas, namespace=NS, template=template(name), **spec,
                               annotations={"sim.pyhpa.io/startup-seconds": "10",
                                            "sim.pyhpa.io/termination-seconds": "5", **(annotations or {})})


def pods(store, **labels) -> list[dict]:
    sel = ",".join(f"{k}={v}" for k, v in labels.items())
    return store.list(R.PODS.key, NS, label_selector=sel).items


def ready(p: dict) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in (p.get("status") or {}).get("conditions") or ())  # none yet: a new pod


def update(store, key: str, name: str, fn) -> None:
    store.guaranteed_update(key, NS, name, fn)


def scale(store, name: str, n: int, key: str = R.DEPLOYMENTS.key) -> None:
    def f(o):
        o["spec"]["replicas"] = n
    update(store, key, name, f)


def test_deployment_creates_replicaset_and_pods_that_become_ready_after_startup(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 3))
    at(0)
    [rs] = store.list(R.REPLICA_SETS.key, NS).items
    h = template_hash(template("web"))
    assert rs["metadata"]["name"] == f"web-{h}"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", HASH_LABEL: h}
    assert rs["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    ps = pods(store, app="web")
    assert len(ps) == 3
    for p in ps:
        assert p["metadata"]["name"].startswith(f"web-{h}-")
        assert p["metadata"]["labels"][HASH_LABEL] == h
        assert p["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
        assert p["spec"]["nodeName"] == "pyhpa-node"
        # a second of ContainerCreating by default, then Running
        assert p["status"]["phase"] == "Pending" and not ready(p)
        assert FINALIZER in p["metadata"]["finalizers"]
    st = store.get(R.DEPLOYMENTS.key, NS, "web")["status"]
    assert st["replicas"] == 3 and st["updatedReplicas"] == 3 and "readyReplicas" not in st
    at(1)
    assert all(p["status"]["phase"] == "Running" and not ready(p) for p in pods(store, app="web"))
    at(9.9)
    assert not any(ready(p) for p in pods(store, app="web"))
    at(10)
    assert all(ready(p) for p in pods(store, app="web"))
    assert all(p["status"]["containerStatuses"][0]["ready"] for p in pods(store, app="web"))
    dep = store.get(R.DEPLOYMENTS.key, NS, "web")
    st = dep["status"]
    assert (st["replicas"], st["readyReplicas"], st["availableReplicas"], st["updatedReplicas"]) \
        == (3, 3, 3, 3)
    assert st["observedGeneration"] == dep["metadata"]["generation"]
    progressing = next(c for c in st["conditions"] if c["type"] == "Progressing")
    assert progressing["reason"] == "NewReplicaSetAvailable"
    rs = store.get(R.REPLICA_SETS.key, NS, rs["metadata"]["name"])
    assert rs["status"]["readyReplicas"] == 3 and rs["status"]["observedGeneration"] == 1


def test_disruption_budgets_count_ready_pods_above_what_they_keep(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 4))
    for name, spec in (("by-count", {"minAvailable": 1}), ("by-share", {"maxUnavailable": "30%"})):
        store.create(R.PDBS.key, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                  "metadata": {"name": name, "namespace": NS},
                                  "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}})

    def budget(name):
        st = store.get(R.PDBS.key, NS, name)["status"]
        cond = st["conditions"][0]
        return (st["currentHealthy"], st["desiredHealthy"], st["expectedPods"],
                st["disruptionsAllowed"], cond["type"], cond["status"], cond["reason"])
    at(1)  # 4 pods, none ready yet
    assert budget("by-count") == (0, 1, 4, 0, "DisruptionAllowed", "False", "InsufficientPods")
    at(20)  # all ready; 30% of 4 rounds up to 2 that may be unavailable
    assert budget("by-count") == (4, 1, 4, 3, "DisruptionAllowed", "True", "SufficientPods")
    assert budget("by-share") == (4, 2, 4, 2, "DisruptionAllowed", "True", "SufficientPods")


def test_pending_seconds_keep_pods_pending_and_next_due_tracks_transitions(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 1, {"sim.pyhpa.io/pending-seconds": "4"}))
    at(0)
    [p] = pods(store, app="web")
    assert p["status"]["phase"] == "Pending"
    assert p["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert sim.next_due == pytest.approx(1_000_004.0)
    at(4)
    [p] = pods(store, app="web")
    assert p["status"]["phase"] == "Running" and "running" in p["status"]["containerStatuses"][0]["state"]
    assert sim.next_due == pytest.approx(1_000_010.0)


def test_scale_down_deletes_unready_first_and_pods_terminate_after_the_grace_period(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 2))
    at(0)
    at(10)
    scale(store, "web", 4)
    at(11)
    fresh = {p["metadata"]["name"] for p in pods(store, app="web") if not ready(p)}
    assert len(fresh) == 2
    scale(store, "web", 2)
    at(12)
    terminating = {p["metadata"]["name"] for p in pods(store, app="web")
                   if p["metadata"].get("deletionTimestamp")}
    assert terminating == fresh  # not-ready pods go first (ReplicaSet controller order)
    st = store.get(R.DEPLOYMENTS.key, NS, "web")["status"]
    assert st["replicas"] == 2 and st["readyReplicas"] == 2
    at(16.9)
    assert len(pods(store, app="web")) == 4  # still terminating (termination-seconds 5)
    at(17)
    assert {p["metadata"]["name"] for p in pods(store, app="web")}.isdisjoint(fresh)
    assert len(pods(store, app="web")) == 2
    reasons = [e["reason"] for e in store.list(R.EVENTS.key, NS).items]
    assert "SuccessfulDelete" in reasons and "ScalingReplicaSet" in reasons


def test_a_deleted_pod_is_replaced_and_the_old_one_terminates(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 2))
    at(0)
    at(10)
    victim = pods(store, app="web")[0]["metadata"]["name"]
    store.delete(R.PODS.key, NS, victim)  # what kubectl delete pod does (finalizer: marked only)
    at(11)
    ps = pods(store, app="web")
    assert len(ps) == 3
    assert [p["metadata"]["name"] for p in ps if p["metadata"].get("deletionTimestamp")] == [victim]
    assert store.get(R.DEPLOYMENTS.key, NS, "web")["status"]["replicas"] == 2
    at(16)
    assert victim not in {p["metadata"]["name"] for p in pods(store, app="web")}


def test_rolling_update_replaces_the_replicaset_and_converges(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 4))
    at(0)
    at(10)

    def new_image(o):
        o["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    update(store, R.DEPLOYMENTS.key, "web", new_image)
    for t in range(11, 80):
        at(t)
        dep = store.get(R.DEPLOYMENTS.key, NS, "web")
        st = dep["status"]
        total = st.get("replicas", 0)
        # maxSurge 25% of 4 = 1, maxUnavailable 25% = 1
        assert sum(_replicas(rs) for rs in store.list(R.REPLICA_SETS.key, NS).items) <= 5
        assert st.get("availableReplicas", 0) >= 3 or t < 11
        if st.get("updatedReplicas") == 4 and total == 4 and st.get("availableReplicas") == 4:
            break
    else:
        raise AssertionError(f"rollout did not converge: {st}")
    rss = {rs["metadata"]["name"]: rs for rs in store.list(R.REPLICA_SETS.key, NS).items}
    assert len(rss) == 2
    assert sorted(_replicas(rs) for rs in rss.values()) == [0, 4]
    assert dep["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert st["observedGeneration"] == dep["metadata"]["generation"] == 2
    images = {p["spec"]["containers"][0]["image"] for p in pods(store, app="web")
              if not p["metadata"].get("deletionTimestamp")}
    assert images == {"nginx:2"}


def _replicas(rs: dict) -> int:
    return rs["spec"].get("replicas", 0)


def test_recreate_strategy_waits_for_old_pods_to_go(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 2, strategy={"type": "Recreate"}))
    at(0)
    at(10)

    def new_image(o):
        o["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    update(store, R.DEPLOYMENTS.key, "web", new_image)
    at(11)
    images = {p["spec"]["containers"][0]["image"] for p in pods(store, app="web")}
    assert images == {"nginx"}  # old pods terminating, no new ones yet
    at(16)
    at(17)
    assert {p["spec"]["containers"][0]["image"] for p in pods(store, app="web")} == {"nginx:2"}
    assert len(pods(store, app="web")) == 2


def test_deleting_a_deployment_collects_its_replicasets_and_pods(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 2))
    at(0)
    store.delete(R.DEPLOYMENTS.key, NS, "web")
    at(1)
    assert store.list(R.REPLICA_SETS.key, NS).items == []
    assert all(p["metadata"].get("deletionTimestamp") for p in pods(store, app="web"))
    at(7)
    assert pods(store, app="web") == []
    assert sim.groups == {} and sim.pods == {}


def statefulset(name: str, replicas: int, policy: str = "OrderedReady") -> dict:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": NS,
                         "annotations": {"sim.pyhpa.io/startup-seconds": "3",
                                         "sim.pyhpa.io/termination-seconds": "2"}},
            "spec": {"replicas": replicas, "serviceName": name, "podManagementPolicy": policy,
                     "selector": {"matchLabels": {"app": name}}, "template": template(name),
                     "updateStrategy": {"type": "RollingUpdate"}}}


def test_statefulset_ordered_ready_creates_one_ordinal_at_a_time(env):
    store, sim, at = env
    store.create(R.STATEFUL_SETS.key, statefulset("db", 3))
    at(0)
    assert [p["metadata"]["name"] for p in pods(store, app="db")] == ["db-0"]
    at(2)
    assert len(pods(store, app="db")) == 1
    at(3)
    assert [p["metadata"]["name"] for p in pods(store, app="db")] == ["db-0", "db-1"]
    at(6)
    at(9)
    ps = pods(store, app="db")
    assert [p["metadata"]["name"] for p in ps] == ["db-0", "db-1", "db-2"]
    assert ps[2]["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "db-2"
    assert ps[2]["spec"]["hostname"] == "db-2" and ps[2]["spec"]["subdomain"] == "db"
    st = store.get(R.STATEFUL_SETS.key, NS, "db")["status"]
    assert (st["replicas"], st["readyReplicas"], st["updatedReplicas"]) == (3, 3, 3)
    assert st["currentRevision"] == st["updateRevision"]
    scale(store, "db", 1, R.STATEFUL_SETS.key)
    at(10)
    assert [p["metadata"]["name"] for p in pods(store, app="db")
            if p["metadata"].get("deletionTimestamp")] == ["db-2"]  # highest ordinal, alone
    at(12)
    assert [p["metadata"]["name"] for p in pods(store, app="db")
            if p["metadata"].get("deletionTimestamp")] == ["db-1"]
    at(14)
    assert [p["metadata"]["name"] for p in pods(store, app="db")] == ["db-0"]
    assert store.get(R.STATEFUL_SETS.key, NS, "db")["status"]["replicas"] == 1


def test_statefulset_parallel_creates_all_at_once(env):
    store, sim, at = env
    store.create(R.STATEFUL_SETS.key, statefulset("db", 3, "Parallel"))
    at(0)
    assert [p["metadata"]["name"] for p in pods(store, app="db")] == ["db-0", "db-1", "db-2"]


def test_statefulset_template_change_rolls_pods_from_the_highest_ordinal(env):
    store, sim, at = env
    store.create(R.STATEFUL_SETS.key, statefulset("db", 2, "Parallel"))
    at(0)
    at(3)
    old_rev = store.get(R.STATEFUL_SETS.key, NS, "db")["status"]["updateRevision"]

    def new_image(o):
        o["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    update(store, R.STATEFUL_SETS.key, "db", new_image)
    for t in range(4, 40):
        at(t)
        st = store.get(R.STATEFUL_SETS.key, NS, "db")["status"]
        if st.get("updatedReplicas") == 2 and st["currentRevision"] == st["updateRevision"] \
                and st.get("readyReplicas") == 2:
            break
    else:
        raise AssertionError(st)
    assert st["updateRevision"] != old_rev
    assert {p["spec"]["containers"][0]["image"] for p in pods(store, app="db")} == {"nginx:2"}


def test_replication_controller_creates_pods(env):
    store, sim, at = env
    store.create(R.REPLICATION_CONTROLLERS.key, {
        "apiVersion": "v1", "kind": "ReplicationController",
        "metadata": {"name": "old", "namespace": NS},
        "spec": {"replicas": 2, "selector": {"app": "old"}, "template": template("old")}})
    at(0)
    ps = pods(store, app="old")
    assert len(ps) == 2 and ps[0]["metadata"]["ownerReferences"][0]["kind"] == "ReplicationController"
    st = store.get(R.REPLICATION_CONTROLLERS.key, NS, "old")["status"]
    assert st["replicas"] == 2 and "readyReplicas" not in st
    at(5)  # pods are Ready 5 s after creation by default
    st = store.get(R.REPLICATION_CONTROLLERS.key, NS, "old")["status"]
    assert st["replicas"] == 2 and st["readyReplicas"] == 2


def test_min_ready_seconds_delays_availability(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 1, minReadySeconds=5))
    at(0)
    at(10)
    st = store.get(R.DEPLOYMENTS.key, NS, "web")["status"]
    assert st["readyReplicas"] == 1 and "availableReplicas" not in st
    at(15)
    assert store.get(R.DEPLOYMENTS.key, NS, "web")["status"]["availableReplicas"] == 1


def test_bare_pod_is_adopted_and_runs(env):
    store, sim, at = env
    store.create(R.PODS.key, {"apiVersion": "v1", "kind": "Pod",
                              "metadata": {"name": "solo", "namespace": NS, "labels": {"run": "solo"}},
                              "spec": {"containers": [{"name": "solo", "image": "busybox"}]}})
    at(0)
    assert not ready(store.get(R.PODS.key, NS, "solo"))
    at(5)
    p = store.get(R.PODS.key, NS, "solo")
    assert p["status"]["phase"] == "Running" and ready(p)
    store.delete(R.PODS.key, NS, "solo")  # written to the store: no finalizer, gone at once
    at(6)
    assert sim.pods == {}


def test_invalid_annotation_is_reported_and_the_old_load_kept(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 1, {"sim.pyhpa.io/cpu": "300m"}))
    at(0)

    def bad(o):
        o["metadata"]["annotations"]["sim.pyhpa.io/cpu"] = "lots"
    update(store, R.DEPLOYMENTS.key, "web", bad)
    at(1)
    [g] = [g for g in sim.groups.values() if g.name == "web"]
    assert g.workload.params.cpu_milli == 300
    assert "sim.pyhpa.io/cpu" in (g.param_error or "")
    events = [e for e in store.list(R.EVENTS.key, NS).items
              if e["reason"] == "InvalidSimulationAnnotation"]
    assert len(events) == 1 and events[0]["type"] == "Warning"
    assert "metadata.annotations[sim.pyhpa.io/cpu]" in events[0]["message"]


def test_restart_adopts_existing_pods_without_recreating_them(env, tmp_path):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 2))
    at(0)
    at(10)
    names = {p["metadata"]["name"] for p in pods(store, app="web")}
    fresh = Simulation(store, sim.clock)
    fresh.settle()
    assert {p["metadata"]["name"] for p in pods(store, app="web")} == names
    assert len(fresh.pods) == 2


def test_a_pass_over_some_namespaces_leaves_the_others_alone(env):
    store, sim, at = env
    store.create(R.NAMESPACES.key, {"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": "other"}})
    store.create(R.DEPLOYMENTS.key, deployment("web", 2))
    other = deployment("api", 1)
    other["metadata"]["namespace"] = "other"
    store.create(R.DEPLOYMENTS.key, other)
    sim.settle(namespaces={NS})
    assert len(pods(store, app="web")) == 2
    assert store.list(R.PODS.key, "other").items == []
    sim.settle(namespaces={"other"})
    assert len(store.list(R.PODS.key, "other").items) == 1
    # the pass over "other" kept tracking the pods of the default namespace
    assert sorted(r.namespace for r in sim.pods.values()) == [NS, NS, "other"]
    before = {p["metadata"]["name"]: p["metadata"]["resourceVersion"] for p in pods(store)}
    sim.settle(namespaces={"other"}, now=sim.clock() + 10)
    assert {p["metadata"]["name"]: p["metadata"]["resourceVersion"]
            for p in pods(store)} == before  # their Ready transition waits for their own pass
    assert sim.next_due is not None and sim.next_due <= sim.clock() + 10
    sim.settle(namespaces={NS}, now=sim.clock() + 10)
    assert all(ready(p) for p in pods(store, app="web"))


def test_the_background_thread_makes_pods_ready_on_time(tmp_path):
    import time

    store = Store(tmp_path / "s.sqlite")
    sim = Simulation(store).start()
    try:
        dep = deployment("web", 2, {"sim.pyhpa.io/startup-seconds": "0.5"})
        store.create(R.DEPLOYMENTS.key, dep)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            ps = pods(store, app="web")
            if len(ps) == 2 and all(ready(p) for p in ps):
                break
            time.sleep(0.05)
        else:
            raise AssertionError("pods did not become ready")
        assert store.get(R.NODES.key, "", "pyhpa-node")["status"]["allocatable"]["cpu"] == "8"
    finally:
        sim.stop()
        store.close()


def test_started_up_is_set_after_the_first_pass_and_the_command_then_freezes_the_heap(tmp_path):
    import asyncio
    import gc

    from pyhpa.adapters.heap import freeze_when

    store = Store(tmp_path / "s.sqlite")
    store.create(R.DEPLOYMENTS.key, deployment("web", 2))
    sim = Simulation(store)
    assert not sim.started_up.is_set()
    sim.start()
    try:
        assert sim.started_up.wait(10)
        assert len(pods(store, app="web")) == 2  # the first pass is over, not just begun
        assert gc.get_freeze_count() == 0
        try:
            asyncio.run(asyncio.wait_for(freeze_when(sim.started_up.is_set), 10))  # as `pyhpa cluster` does
            assert gc.get_freeze_count() > 0
        finally:
            gc.unfreeze()
    finally:
        sim.stop()
        store.close()


def test_rollout_undo_goes_back_to_the_old_replicaset(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 1))
    at(0)
    at(10)

    def image(name: str, null_timestamp: bool = False):
        def f(o):
            o["spec"]["template"] = template("web", image=name)
            if null_timestamp:  # what `kubectl rollout undo` writes back
                o["spec"]["template"]["metadata"]["creationTimestamp"] = None
        return f
    update(store, R.DEPLOYMENTS.key, "web", image("nginx:2"))
    for t in range(11, 40):
        at(t)
    update(store, R.DEPLOYMENTS.key, "web", image("nginx", null_timestamp=True))
    for t in range(40, 80):
        at(t)
    rss = {rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs
           for rs in store.list(R.REPLICA_SETS.key, NS).items}
    assert sorted(rss) == ["nginx", "nginx:2"]
    first = rss["nginx"]
    assert first["metadata"]["name"] == f"web-{template_hash(template('web'))}"
    assert first["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert (first["spec"]["replicas"], rss["nginx:2"]["spec"]["replicas"]) == (1, 0)
    dep = store.get(R.DEPLOYMENTS.key, NS, "web")
    assert dep["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"


def test_replicasets_carry_the_deployments_annotations_but_the_ones_upstream_skips(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 1, {
        "sim.pyhpa.io/cpu": "300m", "kubernetes.io/change-cause": "first",
        "kubectl.kubernetes.io/last-applied-configuration": "{}"}))
    at(0)
    [rs] = store.list(R.REPLICA_SETS.key, NS).items
    anns = rs["metadata"]["annotations"]
    assert anns["sim.pyhpa.io/cpu"] == "300m" and anns["kubernetes.io/change-cause"] == "first"
    assert "kubectl.kubernetes.io/last-applied-configuration" not in anns
    assert (anns["deployment.kubernetes.io/revision"], anns["deployment.kubernetes.io/desired-replicas"],
            anns["deployment.kubernetes.io/max-replicas"]) == ("1", "1", "2")

    def annotate(o):  # the current ReplicaSet follows later annotation changes too
        o["metadata"]["annotations"]["sim.pyhpa.io/cpu"] = "600m"
        o["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "7"
    update(store, R.DEPLOYMENTS.key, "web", annotate)
    at(1)
    [rs] = store.list(R.REPLICA_SETS.key, NS).items
    assert rs["metadata"]["annotations"]["sim.pyhpa.io/cpu"] == "600m"
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == "1"
    first = rs["metadata"]["name"]

    def roll(image: str, cpu: str):
        def f(o):
            o["spec"]["template"] = template("web", image=image)
            o["metadata"]["annotations"]["sim.pyhpa.io/cpu"] = cpu
        return f
    update(store, R.DEPLOYMENTS.key, "web", roll("nginx:2", "900m"))
    for t in range(2, 40):
        at(t)
    old = store.get(R.REPLICA_SETS.key, NS, first)
    assert old["metadata"]["annotations"]["sim.pyhpa.io/cpu"] == "600m"  # as it was then
    # back to the first template: its ReplicaSet takes revision 3 and remembers revision 1
    update(store, R.DEPLOYMENTS.key, "web", roll("nginx", "600m"))
    for t in range(40, 80):
        at(t)
    back = store.get(R.REPLICA_SETS.key, NS, first)["metadata"]["annotations"]
    assert back["deployment.kubernetes.io/revision"] == "3"
    assert back["deployment.kubernetes.io/revision-history"] == "1"


def events_of(store, name: str) -> list[tuple[str, str, str]]:
    return [(e["reason"], e["source"]["component"], e["message"])
            for e in store.list(R.EVENTS.key, NS).items if e["involvedObject"]["name"] == name]


def test_pending_seconds_beyond_the_startup_keep_pods_pending_that_long(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 1, {"sim.pyhpa.io/pending-seconds": "20",
                                                          "sim.pyhpa.io/startup-seconds": "5"}))
    at(0)
    at(19.9)
    [p] = pods(store, app="web")
    assert p["status"]["phase"] == "Pending"
    at(20)  # Running after 20 s, and Ready then (its startup time is over)
    [p] = pods(store, app="web")
    assert p["status"]["phase"] == "Running" and ready(p)


def test_termination_takes_the_workloads_time_within_the_grace_period(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, {**deployment("quick", 1), "metadata": {
        "name": "quick", "namespace": NS}})  # no annotations: the default, 2 s
    store.create(R.DEPLOYMENTS.key, deployment("slow", 1, {"sim.pyhpa.io/termination-seconds": "60"},
                                               ))
    store.create(R.DEPLOYMENTS.key, deployment("mid", 1, {"sim.pyhpa.io/termination-seconds": "8"}))

    def grace(seconds: int):
        def f(o):
            o["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = seconds
        return f
    update(store, R.DEPLOYMENTS.key, "slow", grace(12))  # 60 s asked, 12 s allowed
    at(0)
    at(10)
    for name in ("quick", "slow", "mid"):
        scale(store, name, 0)
    at(11)
    assert all(p["metadata"].get("deletionTimestamp") for p in store.list(R.PODS.key, NS).items)
    at(12.9)
    assert {p["metadata"]["labels"]["app"] for p in store.list(R.PODS.key, NS).items} \
        == {"quick", "slow", "mid"}
    at(13)
    assert {p["metadata"]["labels"]["app"] for p in store.list(R.PODS.key, NS).items} \
        == {"slow", "mid"}
    at(19)
    assert {p["metadata"]["labels"]["app"] for p in store.list(R.PODS.key, NS).items} == {"slow"}
    at(23)
    assert store.list(R.PODS.key, NS).items == []


def test_pods_get_the_scheduler_and_kubelet_events(env):
    store, sim, at = env
    # an untagged image is always pulled (`imagePullPolicy: Always` by default)
    store.create(R.DEPLOYMENTS.key, deployment("web", 1, {"sim.pyhpa.io/pending-seconds": "3"}))
    at(0)
    [p] = pods(store, app="web")
    name = p["metadata"]["name"]
    assert events_of(store, name) == [
        ("Scheduled", "default-scheduler", f"Successfully assigned {NS}/{name} to pyhpa-node"),
        ("Pulling", "kubelet", 'Pulling image "nginx"')]
    at(3)
    web = events_of(store, name)
    assert web[2][:2] == ("Pulled", "kubelet")
    assert web[2][2].startswith('Successfully pulled image "nginx" in 3s (3s including waiting). '
                                "Image size: ") and web[2][2].endswith(" bytes.")
    assert web[3:] == [("Created", "kubelet", "Created container: web"),
                       ("Started", "kubelet", "Started container web")]
    kubelet = [e for e in store.list(R.EVENTS.key, NS).items if e["source"]["component"] == "kubelet"]
    assert {(e["involvedObject"]["fieldPath"], e["source"]["host"]) for e in kubelet} == \
        {("spec.containers{web}", "pyhpa-node")}
    at(20)  # nothing more while it runs
    assert len(events_of(store, name)) == 5
    # an image pulled if not present: it is
    store.create(R.PODS.key, {"apiVersion": "v1", "kind": "Pod",
                              "metadata": {"name": "solo", "namespace": NS},
                              "spec": {"containers": [{"name": "c", "image": "busybox:1"}]}})
    at(21)
    assert [r for r, _, _ in events_of(store, "solo")] == ["Scheduled"]
    at(22)  # the default pending time: 1 s
    assert events_of(store, "solo")[1:] == [
        ("Pulled", "kubelet", 'Container image "busybox:1" already present on machine'),
        ("Created", "kubelet", "Created container: c"),
        ("Started", "kubelet", "Started container c")]


def test_a_bare_pod_is_bound_by_the_scheduler(env):
    store, sim, at = env
    store.create(R.PODS.key, {"apiVersion": "v1", "kind": "Pod",
                              "metadata": {"name": "solo", "namespace": NS},
                              "spec": {"containers": [{"name": "c", "image": "busybox:1"}]}})
    at(0)
    p = store.get(R.PODS.key, NS, "solo")
    assert p["spec"]["nodeName"] == "pyhpa-node"
    assert events_of(store, "solo")[0][0] == "Scheduled"
    # another scheduler's pods are left to it
    store.create(R.PODS.key, {"apiVersion": "v1", "kind": "Pod",
                              "metadata": {"name": "other", "namespace": NS},
                              "spec": {"schedulerName": "my-scheduler",
                                       "containers": [{"name": "c", "image": "busybox:1"}]}})
    at(10)
    other = store.get(R.PODS.key, NS, "other")
    assert not other["spec"].get("nodeName") and "phase" not in other.get("status", {})
    assert events_of(store, "other") == []
    # ... until it binds them: then they start
    update(store, R.PODS.key, "other", lambda o: o["spec"].update(nodeName="pyhpa-node"))
    at(11)
    assert store.get(R.PODS.key, NS, "other")["status"]["phase"] == "Pending"
    at(12)
    assert store.get(R.PODS.key, NS, "other")["status"]["phase"] == "Running"


def test_the_node_lease_is_renewed_like_a_kubelets(env):
    store, sim, at = env
    at(0)
    lease = store.get(R.LEASES.key, "kube-node-lease", "pyhpa-node")
    node = store.get(R.NODES.key, "", "pyhpa-node")
    assert lease["spec"]["holderIdentity"] == "pyhpa-node"
    assert lease["spec"]["leaseDurationSeconds"] == 40
    assert lease["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": "pyhpa-node", "uid": node["metadata"]["uid"]}]
    first = lease["spec"]["renewTime"]
    assert sim.next_due is not None and sim.next_due <= 1_000_010.0
    at(9)
    assert store.get(R.LEASES.key, "kube-node-lease", "pyhpa-node")["spec"]["renewTime"] == first
    at(10)
    renewed = store.get(R.LEASES.key, "kube-node-lease", "pyhpa-node")["spec"]["renewTime"]
    assert renewed > first and renewed.startswith("1970-01-12T13:46:50.")


def limited(name: str, memory_limit: str, annotations: dict) -> dict:
    dep = deployment(name, 1, annotations)
    dep["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "100m", "memory": "32Mi"}, "limits": {"memory": memory_limit}}
    return dep


def container(store, app: str) -> dict:
    [p] = pods(store, app=app)
    return p["status"]["containerStatuses"][0]


def test_memory_over_the_limit_is_oomkilled_and_restarted_with_back_off(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, limited("hog", "64Mi", {"sim.pyhpa.io/memory": "100Mi",
                                                            "sim.pyhpa.io/startup-seconds": "2"}))
    at(0)
    at(1)  # running from 1 s (the default pending time), filling its memory for a second
    assert container(store, "hog")["restartCount"] == 0
    at(2)  # killed; the first restart comes at once
    cs = container(store, "hog")
    assert cs["restartCount"] == 1 and "running" in cs["state"]
    assert cs["lastState"]["terminated"]["reason"] == "OOMKilled"
    assert cs["lastState"]["terminated"]["exitCode"] == 137
    at(3)  # killed again: back-off 10 s
    [p] = pods(store, app="hog")
    cs = p["status"]["containerStatuses"][0]
    assert p["status"]["phase"] == "Running" and not ready(p)
    assert cs["restartCount"] == 1 and cs["ready"] is False
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert cs["state"]["waiting"]["message"].startswith("back-off 10s restarting failed container=hog pod=")
    assert cs["lastState"]["terminated"]["finishedAt"] == "1970-01-12T13:46:43Z"
    assert sim._due[NS] == pytest.approx(1_000_013.0)  # the restart is due then
    name = p["metadata"]["name"]
    backoff = [e for e in store.list(R.EVENTS.key, NS).items if e["reason"] == "BackOff"]
    assert [(e["type"], e["message"]) for e in backoff] == [
        ("Warning", f"Back-off restarting failed container hog in pod {name}_{NS}"
                    f"({p['metadata']['uid']})")]
    started = [e for e in store.list(R.EVENTS.key, NS).items if e["reason"] == "Started"]
    assert [e["count"] for e in started] == [2]  # counted up, as a kubelet's recorder does
    for t in (13, 14):
        at(t)
    cs = container(store, "hog")
    assert cs["restartCount"] == 2 and "back-off 20s" in cs["state"]["waiting"]["message"]
    for t in (34, 35):
        at(t)
    assert "back-off 40s" in container(store, "hog")["state"]["waiting"]["message"]
    # the load goes down: the next restart stays up and turns Ready after its readiness delay
    update(store, R.DEPLOYMENTS.key, "hog",
           lambda o: o["metadata"]["annotations"].update({"sim.pyhpa.io/memory": "32Mi"}))
    at(40)
    at(75)
    cs = container(store, "hog")
    assert cs["restartCount"] == 4 and "running" in cs["state"] and not cs["ready"]
    at(76)
    [p] = pods(store, app="hog")
    assert ready(p) and p["status"]["containerStatuses"][0]["restartCount"] == 4
    at(200)
    assert container(store, "hog")["restartCount"] == 4


NO_ROOM = "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."


def test_pods_that_fit_no_node_stay_pending_until_room_appears(env):
    store, sim, at = env
    big = deployment("big", 2)
    big["spec"]["template"] = template("big", cpu="2")
    fill = deployment("fill", 1)
    fill["spec"]["template"] = template("fill", cpu="4")
    store.create(R.DEPLOYMENTS.key, fill)
    store.create(R.DEPLOYMENTS.key, big)  # 4 + 2 * 2 = 8 CPUs: the node's all
    at(0)
    assert all(p["spec"].get("nodeName") for p in store.list(R.PODS.key, NS).items)
    scale(store, "big", 3)
    at(1)
    [waiting] = [p for p in pods(store, app="big") if not p["spec"].get("nodeName")]
    name = waiting["metadata"]["name"]
    message = f"0/1 nodes are available: 1 Insufficient cpu. {NO_ROOM}"
    assert waiting["status"]["phase"] == "Pending"
    assert waiting["status"]["conditions"] == [{
        "type": "PodScheduled", "status": "False", "lastProbeTime": None,
        "lastTransitionTime": "1970-01-12T13:46:41Z", "reason": "Unschedulable", "message": message}]
    failed = [e for e in store.list(R.EVENTS.key, NS).items if e["reason"] == "FailedScheduling"]
    assert [(e["type"], e["source"]["component"], e["involvedObject"]["name"], e["message"])
            for e in failed] == [("Warning", "default-scheduler", name, message)]
    at(20)  # nothing changes while there is no room: no more writes, no more events
    assert store.get(R.PODS.key, NS, name)["metadata"]["resourceVersion"] == \
        waiting["metadata"]["resourceVersion"]
    st = store.get(R.DEPLOYMENTS.key, NS, "big")["status"]
    assert (st["replicas"], st["readyReplicas"]) == (3, 2)
    # the other workload's pod counts until it is gone (5 s of termination), then there is room
    scale(store, "fill", 0)
    at(21)
    assert not store.get(R.PODS.key, NS, name)["spec"].get("nodeName")
    at(26)
    at(26)
    bound = store.get(R.PODS.key, NS, name)
    assert bound["spec"]["nodeName"] == "pyhpa-node"
    assert events_of(store, name)[-2:] == [
        ("Scheduled", "default-scheduler", f"Successfully assigned {NS}/{name} to pyhpa-node"),
        ("Pulling", "kubelet", 'Pulling image "nginx"')]
    at(36)
    assert ready(store.get(R.PODS.key, NS, name))


def test_the_scheduling_failure_names_every_missing_resource(env):
    store, sim, at = env
    store.create(R.PODS.key, {"apiVersion": "v1", "kind": "Pod",
                              "metadata": {"name": "huge", "namespace": NS},
                              "spec": {"containers": [{"name": "c", "image": "busybox:1",
                                                       "resources": {"limits": {
                                                           "cpu": "9", "memory": "40Gi"}}}]}})
    at(0)
    cond = store.get(R.PODS.key, NS, "huge")["status"]["conditions"][0]
    assert cond["message"] == \
        f"0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. {NO_ROOM}"
    # a cordoned node: nothing to preempt there would help
    update_node = lambda o: o["spec"].update(unschedulable=True)  # noqa: E731
    store.guaranteed_update(R.NODES.key, "", "pyhpa-node", update_node)
    at(1)
    cond = store.get(R.PODS.key, NS, "huge")["status"]["conditions"][0]
    assert cond["message"] == ("0/1 nodes are available: 1 node(s) were unschedulable. preemption: "
                               "0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_a_restarted_simulation_carries_on_with_the_restarts_it_finds(env):
    store, sim, at = env
    store.create(R.DEPLOYMENTS.key, limited("hog", "64Mi", {"sim.pyhpa.io/memory": "100Mi",
                                                            "sim.pyhpa.io/startup-seconds": "2"}))
    for t in (0, 1, 2, 3):
        at(t)
    before = container(store, "hog")
    assert before["restartCount"] == 1 and "waiting" in before["state"]
    fresh = Simulation(store, sim.clock)  # what `pyhpa cluster` does after a restart
    fresh.settle()
    assert container(store, "hog") == before  # nothing lost, nothing rewritten
    [rec] = fresh.pods.values()
    assert not rec.sim.ready(sim.clock())
    sim.clock.t = 1_000_013.0  # the back-off ends: restart 2, killed again a second later
    fresh.settle()
    sim.clock.t = 1_000_014.0
    fresh.settle()
    cs = container(store, "hog")
    assert cs["restartCount"] == 2 and "back-off 20s" in cs["state"]["waiting"]["message"]
