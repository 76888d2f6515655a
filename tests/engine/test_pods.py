"""Pod grouping (upstream TestGroupPods) and request sums (TestCalculateRequests)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pyhpa.api.types import ContainerView, ObjectMeta, PodSpecView, PodView, ResourceRequirements
from pyhpa.engine.inputs import PodMetric
from pyhpa.engine.pods import CalculationError, ZERO_TIME, group_pods, pod_request, pod_requests

from .helpers import CPU_INIT, NOW, READINESS_DELAY, pod, q

M = timedelta(minutes=1)
S = timedelta(seconds=1)


def metric(ts=ZERO_TIME, window=0.0):
    return PodMetric(1, ts, window)


GROUP_CASES = [
    # name, pod kwargs, metrics for the pod (None = none), resource, expected group
    ("count in a ready pod - memory", dict(phase="Succeeded", ready=None, start=None), metric(NOW, 60), "memory", "ready"),
    ("unready a pod without ready condition - CPU", dict(phase="Succeeded", ready=None, start=NOW), metric(), "cpu", "unready"),
    ("ready pod with fresh metrics during initialization", dict(phase="Succeeded", start=NOW - M, transition=NOW - 30 * S), metric(NOW, 30), "cpu", "ready"),
    ("ready pod without fresh metrics during initialization", dict(phase="Succeeded", start=NOW - M, transition=NOW - 30 * S), metric(NOW, 60), "cpu", "unready"),
    ("unready pod during initialization period", dict(phase="Succeeded", ready="False", start=NOW - 10 * M, transition=NOW - 9 * M - 54 * S), metric(), "cpu", "unready"),
    ("ready pod without fresh metrics after initialization", dict(phase="Succeeded", start=NOW - 3 * M, transition=NOW - 3 * M), metric(NOW - 2 * M, 60), "cpu", "ready"),
    ("unready pod that was ready after initialization", dict(phase="Succeeded", ready="False", start=NOW - 10 * M, transition=NOW - 9 * M), metric(), "cpu", "ready"),
    ("unready pod never ready after initialization (boundary)", dict(phase="Succeeded", ready="False", start=NOW - 10 * M, transition=NOW - 9 * M - 50 * S), metric(), "cpu", "ready"),
    ("unready pod never ready after initialization", dict(phase="Succeeded", ready="False", start=NOW - 10 * M, transition=NOW - 9 * M - 55 * S), metric(), "cpu", "unready"),
    ("a missing pod", dict(phase="Succeeded", ready=None, start=NOW - 3 * M), None, "cpu", "missing"),
    ("pending pods are unreadied", dict(phase="Pending", ready=None, start=None), None, "cpu", "unready"),
    ("ignore pods with deletion timestamps", dict(phase="Pending", ready=None, deleted=True), metric(), "cpu", "ignored"),
    ("ignore pods in a failed state", dict(phase="Failed", ready=None), metric(), "cpu", "ignored"),
    ("unknown readiness is not False", dict(ready="Unknown", start=NOW - 10 * M, transition=NOW - 10 * M), metric(), "cpu", "ready"),
    ("non-cpu ignores readiness", dict(ready="False", start=None), metric(), "memory", "ready"),
]


@pytest.mark.parametrize("case", GROUP_CASES, ids=[c[0] for c in GROUP_CASES])
def test_group_pods(case):
    _, kwargs, m, resource, expected = case
    p = pod("p", **kwargs)
    metrics = {"p": m} if m is not None else {}
    g = group_pods([p], metrics, resource, CPU_INIT, READINESS_DELAY, NOW)
    got = {"ready": g.ready_count == 1, "unready": g.unready == ["p"], "missing": g.missing == ["p"], "ignored": g.ignored == ["p"]}
    assert [k for k, v in got.items() if v] == [expected]


def test_group_several_pods():
    plist = [
        pod("lucretius", phase="Succeeded", ready=None, start=NOW),
        pod("niccolo", phase="Succeeded", start=NOW - 3 * M, transition=NOW - 3 * M),
        pod("epicurus", phase="Succeeded", ready=None, start=NOW - 3 * M),
    ]
    g = group_pods(plist, {"lucretius": metric(), "niccolo": metric()}, "cpu", CPU_INIT, READINESS_DELAY, NOW)
    assert (g.ready_count, g.unready, g.missing, g.ignored) == (1, ["lucretius"], ["epicurus"], [])


def _pod(containers, init=None, pod_level=None):
    return PodView(
        metadata=ObjectMeta(name="test-pod"),
        spec=PodSpecView(
            containers=containers,
            init_containers=init,
            resources=ResourceRequirements(requests=pod_level) if pod_level else None,
        ),
    )


def _c(name, cpu=None, restart=None):
    return ContainerView(
        name=name,
        resources=ResourceRequirements(requests={"cpu": q(cpu)}) if cpu else None,
        restart_policy=restart,
    )


@pytest.mark.parametrize(
    "p, container, gate, expected",
    [
        (_pod([_c("container1", "100m"), _c("container2", "50m")]), "", False, 150),
        (_pod([_c("container1", "100m"), _c("container2", "50m")]), "", True, 150),
        (_pod([_c("container1", "100m"), _c("container2", "50m")], pod_level={"cpu": q("800m")}), "", True, 800),
        (_pod([_c("container1"), _c("container2", "50m")], pod_level={"cpu": q("800m")}), "", True, 800),
        (_pod([_c("container1", "100m"), _c("container2", "50m")]), "container1", False, 100),
        (_pod([_c("container1", "100m"), _c("container2", "50m")], pod_level={"cpu": q("800m")}), "container1", True, 100),
        (_pod([_c("container1", "100m")], init=[_c("init-container1", "20m"), _c("restartable-container1", "50m", "Always")]), "", False, 150),
    ],
)
def test_requests(p, container, gate, expected):
    assert pod_request(p, "cpu", container, gate) == expected


def test_request_errors():
    p = _pod([_c("container1"), _c("container2", "50m")])
    with pytest.raises(CalculationError) as err:
        pod_requests([p], "cpu", "", False)
    assert str(err.value) == "missing request for cpu in container container1 of Pod test-pod"
    p = _pod([_c("container1", "100m")])
    with pytest.raises(CalculationError) as err:
        pod_request(p, "cpu", "non-existent-container", False)
    assert str(err.value) == "container non-existent-container not found in Pod test-pod"
    assert pod_requests([], "cpu", "", False) == {}
