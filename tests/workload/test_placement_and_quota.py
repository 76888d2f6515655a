"""Placement and quota rules shared by the embedded cluster and the simulator
(pyhpa.workload.placement, pyhpa.workload.quota), and a workload whose gate refuses pods."""

from __future__ import annotations

import math

from pyhpa.api.quantity import Quantity
from pyhpa.workload.model import Workload
from pyhpa.workload.placement import NodeLoad, choose_node, pod_requests
from pyhpa.workload.quota import add_usage, pod_usage, refusal


def _pod(cpu: str | None = None, memory: str | None = None, limit_cpu: str | None = None) -> dict:
    req = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    res = {"requests": req} if req else {}
    if limit_cpu:
        res["limits"] = {"cpu": limit_cpu}
    return {"spec": {"containers": [{"name": "app", "resources": res}]}}


def test_a_pod_goes_to_the_fitting_node_with_the_fewest_pods_by_name_on_a_tie():
    loads = {"b": NodeLoad.of({"cpu": "1", "pods": "10"}), "a": NodeLoad.of({"cpu": "1"})}
    assert loads["a"].memory == math.inf
    picks = [choose_node(loads, (400, 0)) for _ in range(5)]
    assert picks == ["a", "b", "a", "b", None]  # the fifth finds 200m left on each
    assert loads["a"].misfits((400, 1)) == ["Insufficient cpu"]
    full = NodeLoad.of({"cpu": "8", "memory": "1Gi", "pods": "1"})
    full.take((0, 0))
    assert full.misfits((100, 2 * 2**30)) == ["Too many pods", "Insufficient memory"]


def test_a_pod_requests_its_containers_requests_or_limits_plus_overhead():
    spec = _pod(cpu="250m", memory="64Mi")["spec"]
    spec["containers"].append({"name": "side", "resources": {"limits": {"cpu": "1"}}})
    spec["initContainers"] = [{"name": "init", "resources": {"requests": {"cpu": "2"}}}]
    spec["overhead"] = {"memory": "1Mi"}
    assert pod_requests(spec) == (2000, 65 * 2**20)


def test_a_quota_admits_up_to_its_limit_and_then_says_why_not():
    hard = {"requests.cpu": "2500m", "pods": "20"}
    one = pod_usage(_pod(cpu="500m"))
    used: dict[str, Quantity] = {}
    add_usage(used, one, 4)
    assert str(used["requests.cpu"]) == "2" and str(used["pods"]) == "4"
    assert refusal("compute", hard, used, _pod(cpu="500m")) is None
    add_usage(used, one)
    assert refusal("compute", hard, used, _pod(cpu="500m")) == (
        "exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=2500m, "
        "limited: requests.cpu=2500m")
    assert refusal("compute", {"limits.cpu": "4"}, {}, _pod(cpu="1")) == (
        "failed quota: compute: must specify limits.cpu for: app")


class _Refuser:
    """Admits ``room`` pods, then refuses; places every pod on node ``n``."""

    def __init__(self, room: int) -> None:
        self.room = room

    def admit(self, wl, now):
        ok = self.room > 0
        self.room -= ok
        return ok

    def place(self, wl, pod, now):
        pod.node = "n"


def test_a_workload_creates_only_the_pods_its_gate_admits_and_retries_later():
    gate = _Refuser(2)
    wl = Workload("default", "web", replicas=3, now=0.0, gate=gate)
    assert [p.node for p in wl.pods] == ["n", "n"] and wl.status_replicas() == 2
    assert wl.generate_name().startswith("web-") and wl.generate_name().endswith("-")
    gate.room = 1
    created = wl.advance(15.0).created
    assert len(created) == 1 and len(wl.pods) == 3
    sts = Workload("default", "db", kind="StatefulSet", replicas=2, now=0.0, gate=_Refuser(1),
                   pod_management_policy="Parallel")
    assert [p.name for p in sts.pods] == ["db-0"] and sts.generate_name() == "db-1"
