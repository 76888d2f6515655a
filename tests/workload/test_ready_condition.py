"""The pod Ready condition the kubelet simulation and the workload model both report."""

from __future__ import annotations

import math

from pyhpa.workload.model import ContainerTemplate, SimPod, Workload, ready_condition
from pyhpa.workload.params import WorkloadParams


def pod(**times: float) -> SimPod:
    base = {"created": 100.0, "running_at": 110.0, "ready_at": 130.0}
    return SimPod(name="p", uid="u", **{**base, **times})


def test_false_since_creation_until_ready_then_true_since_ready_at():
    p = pod()
    assert ready_condition(p, 120.0) == (False, 100.0)
    assert ready_condition(p, 130.0) == (True, 130.0)
    assert ready_condition(p, 500.0) == (True, 130.0)


def test_unready_since_is_the_callers_first_status_or_kill():
    p = pod(ready_at=math.inf)  # a killed container waits to restart
    assert ready_condition(p, 200.0, unready_since=180.0) == (False, 180.0)


def test_a_ready_pod_stays_ready_while_it_terminates():
    p = pod(deleted_at=200.0, gone_at=230.0)
    assert ready_condition(p, 210.0) == (True, 130.0)


def test_a_pod_deleted_before_ready_never_turns_ready():
    # the transition is when the condition last changed: never, so still its first status
    p = pod(deleted_at=120.0, gone_at=150.0)
    assert ready_condition(p, 140.0) == (False, 100.0)


def test_the_model_view_reports_the_condition_of_a_pod_deleted_before_ready():
    t0 = 1_767_225_600.0
    wl = Workload("ns", "web", kind="Deployment", labels={"app": "web"},
                  containers=[ContainerTemplate("app", {"cpu": "500m"})],
                  params=WorkloadParams(startup_seconds=30, termination_seconds=60), replicas=1, now=t0)
    (p,) = wl.pods
    wl.scale(0, t0 + 10)
    ready = [c for c in wl.pod_view(p, t0 + 40).status.conditions if c.type == "Ready"][0]
    assert (ready.status, ready.last_transition_time.timestamp()) == ("False", t0)
