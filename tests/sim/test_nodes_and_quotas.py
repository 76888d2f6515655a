"""Nodes and ResourceQuotas in the simulator (issue 26): pods placed on nodes share their CPU as
in the embedded cluster, and pods past a quota are not created (FailedCreate), with the numbers
of the cluster's tests (tests/cluster/test_kubectl_nodes_and_metrics.py: two pods requesting
500m on a 2-CPU node under 10 CPUs; tests/cluster/test_kubectl_whole_app.py: a quota of
requests.cpu 2500m over pods requesting 500m)."""

from __future__ import annotations

import pytest

from pyhpa.sim.admission import PodAdmission
from pyhpa.sim.report import summarize
from pyhpa.sim.scenario_fields import ScenarioError
from pyhpa.sim.targets import SimTarget

from .scenarios import cpu_hpa, deployment, run, scenario

WEB = ("default", "Deployment", "web")
QUOTA = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "compute"},
         "spec": {"hard": {"requests.cpu": "2500m", "pods": "20"}}}


def _fixed_cpu(cpu: str, **extra):
    return {"startup": "0s", "termination": "0s", "cpu": cpu, **extra}


def test_two_unlimited_pods_on_a_two_cpu_node_read_one_cpu_each_and_the_hpa_sees_it():
    doc = scenario([deployment(2, "500m"), cpu_hpa(50, 2, 2)], {"load": {"constant": 1}}, duration="2m",
                   workload=_fixed_cpu("10"), nodes=[{"name": "n1", "cpu": 2}])
    result = run(doc)
    pods = result.workloads[WEB].pods
    assert [p.node for p in pods] == ["n1", "n1"]
    last = result.hpas[0].records[-1]
    assert last.currents == (200,)  # 1000m of 500m requested, as the cluster's HPA reads it
    assert summarize(result)[0]["cpuUtilizationP50"] == 200
    # what each pod's metrics read (the resource metrics the HPA's view averages)
    sc = result.scenario
    admission = PodAdmission(sc.nodes, sc.quotas)
    tgt = SimTarget(sc.workloads[0], sc, {}, admission)
    assert [tgt.pipeline.pod_cpu_milli(p.name) for p in tgt.workload.pods] == [pytest.approx(1000)] * 2
    assert [(len(u.names), u.value("cpu", "")) for u in tgt.pod_usage()] == [(2, 1000)]  # one cohort
    # without nodes each pod uses its half of the demand, 5000m
    del doc["nodes"]
    alone = run(doc)
    assert alone.hpas[0].records[-1].currents == (1000,)
    assert summarize(alone)[0]["cpuUtilizationP50"] == 1000
    assert [p.node for p in alone.workloads[WEB].pods] == ["", ""]


def test_pods_spread_over_nodes_and_wait_pending_for_room():
    """Two 1-CPU nodes take two 500m pods each: the fifth and sixth wait, unready, until the
    scale-down frees room."""
    hpa = cpu_hpa(50, 6, 6)
    doc = scenario([deployment(6, "500m"), hpa], {"load": {"constant": 1}}, duration="1m",
                   workload=_fixed_cpu("1"), nodes=[{"count": 2, "cpu": "1", "name": "small"}])
    result = run(doc)
    pods = result.workloads[WEB].pods
    assert sorted(p.node for p in pods) == ["", "", "small-1", "small-1", "small-2", "small-2"]
    assert result.hpas[0].records[-1].ready == 4
    # a node with room for them: every pod runs
    doc["nodes"] = [{"count": 2, "cpu": "1", "name": "small"}, {"name": "big", "cpu": "4", "pods": 2}]
    roomy = run(doc)
    assert sorted(p.node for p in roomy.workloads[WEB].pods) == ["big", "big", "small-1", "small-1",
                                                                "small-2", "small-2"]
    assert roomy.hpas[0].records[-1].ready == 6


def test_a_pending_pod_is_bound_once_a_pod_before_it_is_gone():
    """web's two pods fill the 1-CPU node, db's waits; when web scales down, db's runs there."""
    hpa = cpu_hpa(50, 1, 2, behavior={"scaleDown": {"stabilizationWindowSeconds": 0}})
    workload = {"startup": "0s", "termination": "0s", "cpu": {"signal": "load", "per": "1m"}}
    load = {"load": {"steps": {"initial": 2000, "changes": [{"at": "2m", "value": 100}]}}}
    doc = scenario([deployment(2, "500m"), hpa, deployment(1, "500m", name="db"), cpu_hpa(50, 1, 1, name="db")],
                   load, duration="4m", workload=workload, nodes=[{"name": "n1", "cpu": "1"}])
    result = run(doc)
    start = result.scenario.start
    (db,) = result.workloads[("default", "Deployment", "db")].pods
    web_down = next(r.t for r in result.hpas[0].records if r.replicas == 1)
    # bound at the next step of the run (the scheduler's pass), its startup from then
    assert db.node == "n1" and db.created < start and web_down < db.running_at <= web_down + result.scenario.step
    assert [r.ready for r in result.hpas[1].records if r.t < web_down] == [0] * 9
    assert result.hpas[1].records[-1].ready == 1


def test_a_scale_up_past_the_quota_leaves_fewer_pods_and_the_timeline_says_why():
    hpa = cpu_hpa(50, 1, 10, behavior={"scaleUp": {"stabilizationWindowSeconds": 0,
                                                   "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}]}})
    doc = scenario([deployment(1, "500m"), hpa, QUOTA], {"load": {"constant": 1}}, duration="3m",
                   workload=_fixed_cpu("4"))
    result = run(doc)
    records = result.hpas[0].records
    assert records[-1].replicas == 10 and records[-1].ready == 5  # 5 x 500m = the quota's 2500m
    assert max(r.ready for r in records) == 5
    events = [e for r in records for e in r.events if "FailedCreate" in e]
    assert events == [
        'Warning FailedCreate: Error creating: pods "web-' + events[0].split('"web-')[1].split('"')[0]
        + '" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, '
          'used: requests.cpu=2500m, limited: requests.cpu=2500m']
    assert events[0].split('"')[1].endswith("-")  # the ReplicaSet's generateName
    summary = summarize(result)[0]
    assert summary["failedCreates"] == 1
    assert summary["lastFailedCreate"] == events[0].removeprefix("Warning FailedCreate: ")
    assert len(result.workloads[WEB].pods) == 5
    # without the quota the HPA gets its ten pods and the summary has no such figure
    doc["objects"] = doc["objects"][:2]
    free = run(doc)
    assert free.hpas[0].records[-1].ready == 10
    assert "failedCreates" not in summarize(free)[0]


def test_a_quota_counts_the_namespace_and_names_a_statefulset_pod():
    """Two workloads of one namespace share the quota's pod count; a StatefulSet's refused pod
    is named by its ordinal, in the StatefulSet controller's words."""
    sts = deployment(2, "100m", name="db")
    sts["kind"] = "StatefulSet"
    quota = {**QUOTA, "spec": {"hard": {"pods": "3"}}}
    db_hpa = cpu_hpa(50, 2, 2, name="db")
    db_hpa["spec"]["scaleTargetRef"]["kind"] = "StatefulSet"
    doc = scenario([deployment(2, "100m"), sts, cpu_hpa(50, 2, 2), db_hpa, quota],
                   {"load": {"constant": 1}}, duration="1m", workload=_fixed_cpu("100m"))
    result = run(doc)
    assert len(result.workloads[WEB].pods) == 2
    assert [p.name for p in result.workloads[("default", "StatefulSet", "db")].pods] == ["db-0"]
    events = [e for r in result.hpas[1].records for e in r.events if "FailedCreate" in e]
    assert events == ['Warning FailedCreate: create Pod db-1 in StatefulSet db failed error: pods "db-1" is '
                      'forbidden: exceeded quota: compute, requested: pods=1, used: pods=3, limited: pods=3']


def test_a_quota_on_requests_refuses_pods_that_set_none():
    quota = {**QUOTA, "spec": {"hard": {"requests.memory": "1Gi"}}}
    doc = scenario([deployment(2, "100m"), cpu_hpa(50, 2, 2), quota], {"load": {"constant": 1}},
                   duration="1m", workload=_fixed_cpu("100m"))
    result = run(doc)
    assert result.workloads[WEB].pods == []
    assert summarize(result)[0]["lastFailedCreate"].endswith(
        "is forbidden: failed quota: compute: must specify requests.memory for: app")


@pytest.mark.parametrize("extra, message", [
    ({"nodes": [{"name": "n1"}]}, "test.yaml:56: nodes[0].cpu: Required value: the node's allocatable CPU"),
    ({"nodes": [{"cpu": 2}]}, "nodes[0].name: Required value: name or count"),
    ({"nodes": [{"name": "a", "cpu": 2}, {"name": "a", "cpu": 1}]}, "nodes[1].name: Duplicate value: node 'a'"),
    ({"nodes": [{"count": 0, "cpu": 2}]}, "nodes[0].count: Invalid value: 0: must be an integer >= 1"),
    ({"nodes": [{"name": "a", "cpu": "two"}]}, "nodes[0].cpu: Invalid value: 'two'"),
    ({"nodes": [{"name": "a", "cpu": 2, "pods": 1.5}]}, "nodes[0].pods: Invalid value: 1.5: must be a whole"),
    ({"nodes": [{"name": "a", "cpu": 2, "memry": "1Gi"}]}, 'nodes[0].memry: unknown field "memry" (did you mean memory?'),
    ({"nodes": {"name": "a"}}, "nodes: expected a list"),
])
def test_bad_nodes_are_named_by_field(extra, message):
    doc = scenario([deployment(), cpu_hpa()], {"load": {"constant": 1}}, **extra)
    with pytest.raises(ScenarioError) as err:
        run(doc)
    assert message in str(err.value)


@pytest.mark.parametrize("quota, message", [
    ({"spec": {"hard": {"pods": "many"}}}, "objects[2].spec.hard.pods: Invalid value: 'many'"),
    ({"spec": {}}, "objects[2].spec.hard: Required value"),
    ({"spec": {"hard": {"pods": "1"}, "scopes": ["BestEffort"], "hardd": {}}}, 'objects[2].spec.hardd: unknown field'),
])
def test_bad_quotas_are_named_by_field(quota, message):
    doc = scenario([deployment(), cpu_hpa(), {**QUOTA, **quota}], {"load": {"constant": 1}})
    with pytest.raises(ScenarioError) as err:
        run(doc)
    assert message in str(err.value)
