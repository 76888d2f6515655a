"""Pod grouping (upstream TestGroupPods) and request sums (TestCalculateRequests)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyhpa.api.quantity import Quantity
from pyhpa.api.types import (
    ContainerView,
    ObjectMeta,
    PodCondition,
    PodSpecView,
    PodStatusView,
    PodView,
    ResourceRequirements,
)
from pyhpa.engine.inputs import PodMetric
from pyhpa.engine.pods import CalculationError, ZERO_TIME, PodSet, _group_rows, group_pods, pod_request, pod_requests

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
    g = group_pods(PodSet.of([p]), metrics, resource, CPU_INIT, READINESS_DELAY, NOW)
    got = {"ready": g.ready_count == 1, "unready": g.unready == ["p"], "missing": g.missing == ["p"], "ignored": g.ignored == ["p"]}
    assert [k for k, v in got.items() if v] == [expected]


def test_group_several_pods():
    plist = [
        pod("lucretius", phase="Succeeded", ready=None, start=NOW),
        pod("niccolo", phase="Succeeded", start=NOW - 3 * M, transition=NOW - 3 * M),
        pod("epicurus", phase="Succeeded", ready=None, start=NOW - 3 * M),
    ]
    g = group_pods(PodSet.of(plist), {"lucretius": metric(), "niccolo": metric()}, "cpu", CPU_INIT, READINESS_DELAY, NOW)
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
        pod_requests(PodSet.of([p]), "cpu", "", False)
    assert str(err.value) == "missing request for cpu in container container1 of Pod test-pod"
    p = _pod([_c("container1", "100m")])
    with pytest.raises(CalculationError) as err:
        pod_request(p, "cpu", "non-existent-container", False)
    assert str(err.value) == "container non-existent-container not found in Pod test-pod"
    assert pod_requests(PodSet.of([]), "cpu", "", False) == {}


# ----------------------------------------------------------------------------- pod facts, on generated pods


def _generated_pod(i: int, phase: str, deleted: bool, ready: str | None, started_ago: float | None,
                   transition_ago: float, requests: dict[str, str] | None) -> PodView:
    conds = [PodCondition(type="PodScheduled", status="True", last_transition_time=NOW - timedelta(hours=1))]
    if ready is not None:
        conds.append(PodCondition(type="Ready", status=ready, last_transition_time=NOW - timedelta(seconds=transition_ago)))
    return PodView(
        metadata=ObjectMeta(name=f"p{i}", namespace="ns",
                            deletion_timestamp=NOW if deleted else None),
        spec=PodSpecView(containers=[ContainerView(name="c", resources=ResourceRequirements(
            requests={k: Quantity.parse(v) for k, v in requests.items()}) if requests is not None else None)]),
        status=PodStatusView(phase=phase, conditions=conds,
                             start_time=None if started_ago is None else NOW - timedelta(seconds=started_ago)),
    )


def _outcome(fn, *args):
    """The answer, or the kind of error raised (the full loop overflows on absurd periods too)."""
    try:
        return ("ok", fn(*args))
    except (OverflowError, CalculationError) as exc:
        return ("raised", type(exc).__name__, str(exc))


pod_strategy = st.builds(
    lambda phase, deleted, ready, started, transition, req: (phase, deleted, ready, started, transition, req),
    st.sampled_from(["Running", "Running", "Running", "Pending", "Failed", "Succeeded"]),
    st.sampled_from([False, False, False, True]),  # deleted
    st.sampled_from(["True", "True", "False", "Unknown", None]),
    st.one_of(st.none(), st.floats(min_value=0, max_value=900)),
    st.floats(min_value=0, max_value=900),
    st.one_of(st.none(), st.just({"cpu": "250m"}), st.just({"cpu": "1", "memory": "1Gi"}), st.just({"memory": "64Mi"})),
)


@settings(max_examples=300, deadline=None)
@given(specs=st.lists(pod_strategy, max_size=8), with_metric=st.lists(st.booleans(), min_size=8, max_size=8),
       sample_age=st.floats(min_value=0, max_value=600), resource=st.sampled_from(["cpu", "memory"]),
       init_period=st.sampled_from([0.0, 30.0, 300.0, 1e12]), delay=st.sampled_from([0.0, 30.0]))
def test_pod_grouping_and_requests_equal_the_row_by_row_loops(specs, with_metric, sample_age, resource, init_period,
                                                              delay):
    """``group_pods`` decides settled pod sets without a per-pod look: the same answer as looking
    at every pod's row; the requests computed with the pod set are each pod's ``pod_request``."""
    pods = [_generated_pod(i, *spec) for i, spec in enumerate(specs)]
    pod_set = PodSet.of(pods)
    metrics = {p.metadata.name: PodMetric(100, NOW - timedelta(seconds=sample_age), 30.0)
               for p, has in zip(pods, with_metric) if has}
    assert _outcome(group_pods, pod_set, metrics, resource, init_period, delay, NOW) == \
        _outcome(_group_rows, pod_set.rows, metrics, resource, init_period, delay, NOW)
    for container, gate in (("", False), ("c", False), ("", True)):
        try:
            expected = {p.metadata.name: pod_request(p, resource, container, gate) for p in pods}
        except CalculationError as exc:
            with pytest.raises(CalculationError, match=re.escape(str(exc))):
                pod_requests(pod_set, resource, container, gate)
        else:
            assert pod_requests(pod_set, resource, container, gate) == expected


label_choices = [{"app": "web"}, {"app": "web", "tier": "a"}, {}, None, {"app": "db"}]


@settings(max_examples=200, deadline=None)
@given(picks=st.lists(st.tuples(st.integers(0, len(label_choices) - 1), st.booleans()), max_size=10))
def test_distinct_label_sets_are_those_of_every_pod(picks):
    # Label dicts shared between pods (as a workload's) or equal copies; None is a pod without labels.
    pods = []
    for i, (k, copy) in enumerate(picks):
        pod = _generated_pod(i, "Running", False, "True", 600, 600, {"cpu": "250m"})
        labels = label_choices[k]
        pod.metadata.labels = dict(labels) if copy and labels is not None else labels
        pods.append(pod)
    plain: list[dict] = []  # every pod's labels, the first of each distinct set kept
    for pod in pods:
        labels = pod.metadata.labels or {}
        if all(labels != x for x in plain):
            plain.append(labels)
    assert list(PodSet.of(pods).label_sets) == plain
