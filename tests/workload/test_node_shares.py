"""Nodes share their CPU (pyhpa.workload.nodes): CFS shares by requests, each pod held at its
limit, the rest redistributed; one model for the pipelines of every workload on a node."""

from __future__ import annotations

import math

import pytest

from pyhpa.workload.model import ContainerTemplate, Workload, cpu_shares
from pyhpa.workload.nodes import NodeShares, cfs_divide
from pyhpa.workload.params import WorkloadParams
from pyhpa.workload.pipeline import MetricsPipeline


def test_cfs_divide_is_proportional_to_shares_and_fills_the_leftover():
    # two equal claims on 2 CPUs wanting 5 each: 1000m each
    assert cfs_divide(2000, [(500, 5000, 2)]) == [1000]
    # shares 1:3 -> 500m : 1500m
    assert cfs_divide(2000, [(100, 5000, 1), (300, 5000, 1)]) == [500, 1500]
    # one wants less than its part (held at its limit): the other takes the rest
    assert cfs_divide(2000, [(500, 200, 1), (500, 5000, 1)]) == [200, 1800]
    # no contention: everybody gets what it wants
    assert cfs_divide(2000, [(2, 300, 3), (100, 700, 1)]) == [300, 700]
    # a pod without requests (the minimal 2 shares) next to one requesting 1 CPU
    got = cfs_divide(1000, [(2, 1000, 1), (1000, 1000, 1)])
    assert got[0] == pytest.approx(1000 * 2 / 1002) and got[1] == pytest.approx(1000 * 1000 / 1002)
    assert cfs_divide(math.inf, [(2, 9000, 1)]) == [9000]


def test_cfs_divide_never_gives_more_than_the_capacity():
    claims = [(2, 700, 3), (250, 100, 2), (1000, 4000, 1), (500, 900, 4)]
    for capacity in (500, 1000, 3000, 7000, 9000):
        got = cfs_divide(capacity, claims)
        total = sum(g * n for g, (_s, _w, n) in zip(got, claims))
        assert total <= capacity + 1e-6
        assert all(g <= w + 1e-9 for g, (_s, w, _n) in zip(got, claims))


def test_shares_are_requests_or_limits_with_the_kernel_minimum():
    assert cpu_shares([ContainerTemplate("a", {"cpu": "250m"}), ContainerTemplate("b", {"cpu": "1"})]) == 1250
    assert cpu_shares([ContainerTemplate("a", limits={"cpu": "300m"})]) == 300
    assert cpu_shares([ContainerTemplate("a")]) == 2


def _workload(name: str, cpu: str, demand: float, replicas: int, limit: str | None = None) -> Workload:
    c = ContainerTemplate(name, {"cpu": cpu}, {"cpu": limit} if limit else {})
    return Workload("default", name, containers=[c], replicas=replicas, now=0.0,
                    params=WorkloadParams(cpu_milli=demand, termination_seconds=0.0))


def test_two_unlimited_pods_on_a_two_cpu_node_read_one_cpu_each():
    shares = NodeShares()
    shares.set_capacity("n1", 2000)
    wl = _workload("web", "500m", 10_000, 2)
    for p in wl.pods:
        p.node = "n1"
    shares.join(wl)
    pipe = MetricsPipeline(wl, resolution=5, window=15, now=0.0)
    pipe.advance(30)
    assert [pipe.pod_cpu_milli(p.name) for p in wl.pods] == [pytest.approx(1000)] * 2
    # the same pods on no node (the simulator's): each uses its half of the demand
    alone = _workload("web", "500m", 10_000, 2)
    free = MetricsPipeline(alone, resolution=5, window=15, now=0.0)
    free.advance(30)
    assert [free.pod_cpu_milli(p.name) for p in alone.pods] == [pytest.approx(5000)] * 2


def test_workloads_on_one_node_share_it_by_requests_and_limits():
    shares = NodeShares()
    shares.set_capacity("n1", 2000)
    big = _workload("big", "300m", 10_000, 1)  # wants 10 CPUs, 300 shares
    small = _workload("small", "100m", 10_000, 1)  # wants 10 CPUs, 100 shares
    capped = _workload("capped", "100m", 10_000, 1, limit="200m")  # held at 200m
    pipes = []
    for wl in (big, small, capped):
        wl.pods[0].node = "n1"
        shares.join(wl)
        pipes.append(MetricsPipeline(wl, resolution=5, window=15, now=0.0))
    for p in pipes:
        p.advance(30)
    used = [p.pod_cpu_milli(p.workload.pods[0].name) for p in pipes]
    # 200m to the capped pod, the 1800m left in proportion 3:1
    assert used == [pytest.approx(1350), pytest.approx(450), pytest.approx(200)]
    assert sum(used) == pytest.approx(2000)
    # the cAdvisor counters of the capped pod count its time at the limit, the others' none
    assert pipes[2].container_counters()[capped.pods[0].name].throttled_seconds[0] > 0
    assert pipes[0].container_counters()[big.pods[0].name].throttled_seconds == (0.0,)


def test_a_pod_of_another_workload_starting_on_the_node_takes_its_part_from_then_on():
    shares = NodeShares()
    shares.set_capacity("n1", 2000)
    web = _workload("web", "500m", 10_000, 1)
    web.pods[0].node = "n1"
    shares.join(web)
    late = _workload("late", "500m", 10_000, 0)
    shares.join(late)
    pipes = [MetricsPipeline(web, resolution=5, window=15, now=0.0),
             MetricsPipeline(late, resolution=5, window=15, now=0.0)]
    for p in pipes:
        p.advance(20)
    late.scale(1, 22.5)  # starts in the middle of a scrape interval
    late.pods[0].node = "n1"
    late._version += 1
    for p in pipes:
        p.advance(30)
    # the increment of the scrape at 25: the whole node until 22.5, half of it after
    inc = {h.ts: h.cpu for h in pipes[0]._history[web.pods[0].name]}
    assert inc[25] == pytest.approx(2.5 * 2000 + 2.5 * 1000)
    assert inc[20] == pytest.approx(5 * 2000)
    for p in pipes:
        p.advance(50)
    assert pipes[0].pod_cpu_milli(web.pods[0].name) == pytest.approx(1000)
    assert pipes[1].pod_cpu_milli(late.pods[0].name) == pytest.approx(1000)


def test_breakpoints_are_every_members_instants_as_they_change_and_leave():
    """The instants of every member workload, kept as they change: a pod's times, a deletion,
    a load change, a new pod; a workload that leaves takes its own instants with it."""
    shares = NodeShares()
    shares.set_capacity("n1", 2000)
    web = _workload("web", "500m", 4000, 2)
    db = _workload("db", "100m", 1000, 1)
    for wl in (web, db):
        shares.join(wl)

    def union(start: float, end: float) -> list[float]:
        return sorted({t for wl in shares.workloads.values() for t in wl.own_breakpoints(start, end)})

    assert shares.breakpoints(0, 100) == []
    web.set_times(web.pods[0], 10.0, 25.0)
    db.set_params(WorkloadParams(cpu_milli=2000, termination_seconds=0.0, startup_seconds=5.0), 40.0)
    db.scale(2, 55.0)  # a pod created at 55, Ready at 60
    web.mark_deleted(web.pods[1], 70.0, 80.0)
    assert shares.breakpoints(0, 100) == [10.0, 25.0, 40.0, 55.0, 60.0, 70.0] == union(0, 100)
    assert shares.breakpoints(10.0, 55.0) == [25.0, 40.0] == union(10.0, 55.0)  # open interval
    web.set_times(web.pods[0], 12.0, 25.0)  # 10 is nobody's any more, 25 still web's
    assert shares.breakpoints(0, 100) == [12.0, 25.0, 40.0, 55.0, 60.0, 70.0] == union(0, 100)
    shares.leave(db)
    assert shares.breakpoints(0, 100) == [12.0, 25.0, 70.0] == web.own_breakpoints(0, 100)
    # a workload on its own again asks only about its own pods
    assert db.breakpoints(0, 100) == [40.0, 55.0, 60.0]


def test_a_pod_bound_after_its_creation_shares_that_node_and_not_the_others():
    """A new pod whose node is set after it was created (the simulator's placement) takes its
    part of that node from the next question on; another node's pods keep theirs, and a node
    nobody shares has no parts."""
    shares = NodeShares()
    shares.set_capacity("n1", 2000)
    shares.set_capacity("n2", 2000)
    a = _workload("a", "500m", 10_000, 2)  # 5,000m per pod wanted
    a.pods[0].node, a.pods[1].node = "n1", "n2"
    b = _workload("b", "500m", 10_000, 1)
    b.pods[0].node = "n1"
    for wl in (a, b):
        shares.join(wl)
    assert shares.on_node("n1", 5.0) == {(a.uid, True): 1000, (b.uid, True): 1000}
    assert shares.on_node("n2", 5.0) == {(a.uid, True): 2000}
    b.scale(2, 5.0)
    b.pods[1].node = "n2"
    assert shares.on_node("n2", 5.0) == {(a.uid, True): 1000, (b.uid, True): 1000}
    assert shares.on_node("n1", 5.0) == {(a.uid, True): 1000, (b.uid, True): 1000}
    assert shares.on_node("n3", 5.0) == {} and shares.on_node("", 5.0) == {}
    shares.leave(b)
    assert shares.on_node("n1", 5.0) == {(a.uid, True): 2000}
    assert shares.on_node("n2", 5.0) == {(a.uid, True): 2000}
    shares.set_capacity("n2", 500)
    assert shares.on_node("n2", 5.0) == {(a.uid, True): 500}
