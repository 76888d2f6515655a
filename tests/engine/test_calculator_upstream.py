"""Upstream's replica_calculator_test.go expectations, as data tables.

Each row: the fixture (pods, readiness, start times, phases, per-container levels), the target,
and upstream's expected replicas / utilization / raw value. Requests and levels are per
container, two containers per pod, as upstream's fixtures build them.
"""

from __future__ import annotations

import pytest

from pyhpa.engine.calculator import (
    Tolerances,
    external_average_replicas,
    external_value_replicas,
    object_average_replicas,
    object_value_replicas,
    plain_metric_replicas,
    resource_utilization_replicas,
)
from pyhpa.engine.gomath import INT32_MAX, INT64_MAX
from pyhpa.engine.pods import CalculationError

from .helpers import COOL, CPU_INIT, HOT, NOW, READINESS_DELAY, levels, pod_values, pods, resource_metrics

T = "True"
F = "False"
DEFAULT = Tolerances(0.1, 0.1)

# name, current, n_pods, requests, levels, target, container, readiness, start, phases, deleted,
# expected (replicas, utilization, raw)
RESOURCE_CASES = [
    ("scale up", 3, 3, ["1.0"] * 3, levels(300, 500, 700), 30, "", None, None, None, None, (5, 50, 1000)),
    ("scale up: container metric", 3, 3, ["1.0"] * 3, [[1000, 300], [1000, 500], [1000, 700]], 30, "container2", None, None, None, None, (5, 50, 500)),
    ("scale up: unready pod scales less", 3, 3, ["1.0"] * 3, levels(300, 500, 700), 30, "", [F, T, T], None, None, None, (4, 60, 1200)),
    ("scale up: hot-CPU container scales less", 3, 3, ["1.0"] * 3, [[0, 300], [0, 500], [0, 700]], 30, "container2", None, [HOT, COOL, COOL], None, None, (4, 60, 600)),
    ("scale up: hot-CPU pod scales less", 3, 3, ["1.0"] * 3, levels(300, 500, 700), 30, "", None, [HOT, COOL, COOL], None, None, (4, 60, 1200)),
    ("no scale: unready pods ignored", 3, 3, ["1.0"] * 3, levels(400, 500, 700), 30, "", [T, F, F], None, None, None, (3, 40, 800)),
    ("no scale: hot-CPU pods ignored", 3, 3, ["1.0"] * 3, levels(400, 500, 700), 30, "", [T, F, F], [COOL, HOT, HOT], None, None, (3, 40, 800)),
    ("scale up: failed pods ignored", 2, 4, ["1.0"] * 4, levels(500, 700), 30, "", [T, T, F, F], None, ["Running", "Running", "Failed", "Failed"], None, (4, 60, 1200)),
    ("scale up: failed pods ignored with missing container metric", 2, 4, ["1.0"] * 4, [[1000, 500], [9000, 700], [1000], [9000]], 30, "container2", [T, T, F, F], None, ["Running", "Running", "Failed", "Failed"], None, (4, 60, 600)),
    ("scale up: container metrics with failed pods ignored", 2, 4, ["1.0"] * 4, [[1000, 500], [9000, 700]], 30, "container2", [T, T, F, F], None, ["Running", "Running", "Failed", "Failed"], None, (4, 60, 600)),
    ("scale up: pods being deleted are ignored", 2, 4, ["1.0"] * 4, levels(500, 700), 30, "", [T, T, F, F], None, None, [False, False, True, True], (4, 60, 1200)),
    ("scale up: container metrics with pods being deleted ignored", 2, 4, ["1.0"] * 4, levels(500, 700), 30, "container1", [T, T, F, F], None, None, [False, False, True, True], (4, 60, 600)),
    ("scale down", 5, 5, ["1.0"] * 5, levels(100, 300, 500, 250, 250), 50, "", None, None, None, None, (3, 28, 560)),
    ("scale down: container metric", 5, 5, ["1.0"] * 5, [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], 50, "container2", None, None, None, None, (3, 28, 280)),
    ("scale down: exclude unready pods", 5, 5, ["1.0"] * 5, levels(100, 300, 500, 250, 250), 50, "", [T, T, T, F, F], None, None, None, (2, 30, 600)),
    ("scale down: container metric excludes unready pods", 5, 5, ["1.0"] * 5, [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], 50, "container2", [T, T, T, F, F], None, None, None, (2, 30, 300)),
    ("scale down: exclude unscheduled pods", 5, 5, ["1.0"] * 5, levels(100), 50, "", [T, F, F, F, F], None, ["Running"] + ["Pending"] * 4, None, (1, 10, 200)),
    ("scale down: container metric excludes unscheduled pods", 5, 5, ["1.0"] * 5, [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], 50, "container2", [T, F, F, F, F], None, ["Running"] + ["Pending"] * 4, None, (1, 10, 100)),
    ("scale down: ignore hot-CPU pods", 5, 5, ["1.0"] * 5, levels(100, 300, 500, 250, 250), 50, "", None, [COOL, COOL, COOL, HOT, HOT], None, None, (2, 30, 600)),
    ("scale down: container metric ignores hot-CPU pods", 5, 5, ["1.0"] * 5, [[1000, 100], [1000, 300], [1000, 500], [1000, 1000], [1000, 1000]], 50, "container2", None, [COOL, COOL, COOL, HOT, HOT], None, None, (2, 30, 300)),
    ("scale down: failed pods ignored", 5, 7, ["1.0"] * 7, levels(100, 300, 500, 250, 250), 50, "", [T, T, T, T, T, F, F], None, ["Running"] * 5 + ["Failed"] * 2, None, (3, 28, 560)),
    ("scale down: container metric with failed pods ignored", 5, 7, ["1.0"] * 7, [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], 50, "container2", [T, T, T, T, T, F, F], None, ["Running"] * 5 + ["Failed"] * 2, None, (3, 28, 280)),
    ("scale down: pods being deleted are ignored", 5, 7, ["1.0"] * 7, levels(100, 300, 500, 250, 250), 50, "", [T, T, T, T, T, F, F], None, None, [False] * 5 + [True] * 2, (3, 28, 560)),
    ("scale down: still-running pods being deleted are ignored", 5, 7, ["1.0"] * 7, [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], 50, "container2", [T, T, T, T, T, F, F], None, None, [False] * 5 + [True] * 2, (3, 28, 280)),
    # the older single-function tests
    ("tolerance", 3, 3, ["0.9", "1.0", "1.1"], levels(1010, 1030, 1020), 100, "", None, None, None, None, (3, 102, 2040)),
    ("superfluous metrics", 4, 4, ["1.0"] * 4, levels(4000, 9500, 3000, 7000, 3200, 2000), 100, "", None, None, None, None, (24, 587, 11750)),
    ("missing metrics", 4, 4, ["1.0"] * 4, levels(400, 95), 100, "", None, None, None, None, (3, 24, 495)),
    ("missing metrics no change eq", 2, 2, ["1.0"] * 2, levels(1000), 100, "", None, None, None, None, (2, 100, 2000)),
    ("missing metrics no change gt", 2, 2, ["1.0"] * 2, levels(1900), 100, "", None, None, None, None, (2, 190, 3800)),
    ("missing metrics no change lt", 2, 2, ["1.0"] * 2, levels(600), 100, "", None, None, None, None, (2, 60, 1200)),
    ("missing metrics unready change", 3, 3, ["1.0"] * 3, levels(100, 450), 50, "", [F, T, T], None, None, None, (3, 45, 900)),
    ("missing metrics hot cpu no change", 3, 3, ["1.0"] * 3, levels(100, 450), 50, "", None, [HOT, COOL, COOL], None, None, (3, 45, 900)),
    ("missing metrics unready scale up", 3, 3, ["1.0"] * 3, levels(100, 2000), 50, "", [F, T, T], None, None, None, (4, 200, 4000)),
    ("missing metrics hot cpu scale up", 3, 3, ["1.0"] * 3, levels(100, 2000), 50, "", [F, T, T], [HOT, COOL, COOL], None, None, (4, 200, 4000)),
    ("missing metrics unready scale down", 4, 4, ["1.0"] * 4, levels(100, 100, 100), 50, "", [F, T, T, T], None, None, None, (3, 10, 200)),
    ("missing metrics scale down target over 100", 4, 4, ["1.0", "1.0", "2.0", "2.0"], levels(200, 100, 100), 300, "", [F, T, T, T], None, None, None, (2, 6, 200)),
    ("rolling update with max surge", 2, 3, ["1.0"] * 3, levels(100, 100), 50, "", None, None, ["Running"] * 3, None, (2, 10, 200)),
]


@pytest.mark.parametrize("case", RESOURCE_CASES, ids=[c[0] for c in RESOURCE_CASES])
def test_resource_utilization(case):
    (_, current, n, requests, lv, target, container, readiness, start, phases, deleted, expected) = case
    plist = pods(n, requests=requests, readiness=readiness, start_times=start, phases=phases, deleted=deleted)
    fetched = resource_metrics(lv, container)
    p = resource_utilization_replicas(
        current, target, "cpu", DEFAULT, fetched, plist, container, CPU_INIT, READINESS_DELAY, NOW
    )
    assert (p.replicas, p.usage, p.raw) == expected


def test_fetched_metrics_are_not_mutated():
    plist = pods(3, requests=["1.0"] * 3, readiness=[F, T, T])
    fetched = resource_metrics(levels(100, 2000))
    before = dict(fetched)
    resource_utilization_replicas(3, 50, "cpu", DEFAULT, fetched, plist, "", CPU_INIT, READINESS_DELAY, NOW)
    assert fetched == before


@pytest.mark.parametrize(
    "tol, reqs, lv, expected",
    [
        (Tolerances(0.0, 0.0), ["0.9", "1.0", "1.1"], levels(909, 1010, 1111), (4, 101, 2020)),
        (Tolerances(0.1, 2.0), ["0.9", "1.0", "1.1"], levels(1890, 1910, 1900), (3, 190, 3800)),
        (Tolerances(2.0, 0.08), ["0.9", "1.0", "1.1"], levels(1100, 1080, 1090), (4, 109, 2180)),
        (Tolerances(0.36, 0.1), ["0.9", "1.0", "1.1"], levels(660, 640, 650), (3, 65, 1300)),
        (Tolerances(0.34, 0.1), ["0.9", "1.0", "1.1"], levels(660, 640, 650), (2, 65, 1300)),
    ],
)
def test_configurable_tolerance(tol, reqs, lv, expected):
    plist = pods(3, requests=reqs)
    p = resource_utilization_replicas(3, 100, "cpu", tol, resource_metrics(lv), plist, "", CPU_INIT, READINESS_DELAY, NOW)
    assert (p.replicas, p.usage, p.raw) == expected


def test_computed_tolerance_regression():
    # TestReplicaCalcComputedToleranceAlgImplementation, computed the same way.
    import math

    start_pods = 10
    used = start_pods * 150
    requested = 2 * used
    requested_to_used = float(requested // used)
    per_pod = requested // start_pods
    target = abs(1 / (requested_to_used * (1 - 0.1))) + 0.01
    final_target = int(target * 100)
    ratio = float(used) / (float(requested) * target)
    final_pods = math.ceil(ratio * start_pods)
    offsets = [100, -100, 10, -10, 2, -2, 1, -1, 0, 0]
    # as upstream: every container gets the listed request and reports the listed level
    reqs = [f"{per_pod + o}m" for o in offsets]
    plist = pods(10, requests=reqs)
    fetched = resource_metrics(levels(*[used // 10] * 10))
    p = resource_utilization_replicas(start_pods, final_target, "cpu", DEFAULT, fetched, plist, "", CPU_INIT, READINESS_DELAY, NOW)
    assert p.replicas == final_pods
    assert p.usage == (used * 100) // requested
    target = abs(1 / (requested_to_used * (1 - 0.1))) + 0.004
    p = resource_utilization_replicas(start_pods, int(target * 100), "cpu", DEFAULT, fetched, plist, "", CPU_INIT, READINESS_DELAY, NOW)
    assert p.replicas == start_pods


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(n=1, requests=["1.0"], lv=levels(100), names=["an-older-pod-name"]), "no metrics returned matched known pods"),
        (dict(n=1, requests=[], lv=levels(200), names=None), "missing request for cpu in container container1 of Pod test-pod-0"),
    ],
)
def test_resource_errors(kwargs, message):
    plist = pods(kwargs["n"], requests=kwargs["requests"])
    fetched = resource_metrics(kwargs["lv"], names=kwargs["names"])
    with pytest.raises(CalculationError) as err:
        resource_utilization_replicas(1, 100, "cpu", DEFAULT, fetched, plist, "", CPU_INIT, READINESS_DELAY, NOW)
    assert str(err.value) == message


def test_no_pods_and_all_unready_errors():
    with pytest.raises(CalculationError, match="^no pods returned by selector while calculating replica count$"):
        resource_utilization_replicas(1, 50, "cpu", DEFAULT, resource_metrics(levels(1)), [], "", CPU_INIT, READINESS_DELAY, NOW)
    plist = pods(2, requests=["1.0"] * 2, readiness=[F, F])
    with pytest.raises(CalculationError, match=r"^did not receive metrics for targeted pods \(pods might be unready\)$"):
        resource_utilization_replicas(2, 50, "cpu", DEFAULT, resource_metrics(levels(100, 100)), plist, "", CPU_INIT, READINESS_DELAY, NOW)


# --------------------------------------------------------------------------- Pods (custom) metrics

PODS_CASES = [
    # name, current, values, target, readiness, start, expected (replicas, usage)
    ("scale up", 3, [20000, 10000, 30000], 15000, None, None, (4, 20000)),
    ("unready hot cpu no less scale", 3, [50000, 10000, 30000], 15000, [T, T, F], [COOL, COOL, HOT], (6, 30000)),
    ("unready hot cpu scale would scale down", 3, [50000, 15000, 30000], 15000, [F, T, F], [HOT, COOL, HOT], (7, 31666)),
    ("scale down", 5, [12000] * 5, 20000, None, None, (3, 12000)),
    ("tolerance", 3, [20000, 21000, 21000], 20000, None, None, (3, 20666)),
    ("missing metrics no change eq", 5, [20000, 19000, 21000], 20000, None, None, (5, 20000)),
]


@pytest.mark.parametrize("case", PODS_CASES, ids=[c[0] for c in PODS_CASES])
def test_pods_metric(case):
    _, current, values, target, readiness, start, expected = case
    plist = pods(max(current, len(values)), readiness=readiness, start_times=start)
    p = plain_metric_replicas(current, target, "", DEFAULT, pod_values(values), plist, CPU_INIT, READINESS_DELAY, NOW)
    assert (p.replicas, p.usage) == expected


def test_pods_metric_rolling_update_with_max_surge():
    plist = pods(3)
    p = plain_metric_replicas(2, 17000, "", DEFAULT, pod_values([10000, 10000]), plist, CPU_INIT, READINESS_DELAY, NOW)
    assert (p.replicas, p.usage) == (2, 10000)


def test_pods_metric_configurable_tolerance():
    plist = pods(3)
    p = plain_metric_replicas(3, 20000, "", Tolerances(0.1, 0.01), pod_values([20000, 21000, 21000]), plist, CPU_INIT, READINESS_DELAY, NOW)
    assert (p.replicas, p.usage) == (4, 20666)


# --------------------------------------------------------------------------- Object / External

@pytest.mark.parametrize(
    "current, usage, target, readiness, tol, expected",
    [
        (3, 20000, 15000, None, DEFAULT, 4),
        (3, 50000, 10000, [F, T, F], DEFAULT, 5),  # ignores unready pods (15 if counted)
        (5, 12000, 20000, None, DEFAULT, 3),
        (3, 20666, 20000, None, DEFAULT, 3),
        (3, 20666, 20000, None, Tolerances(0.1, 0.01), 4),
        (3, INT64_MAX, 1, None, DEFAULT, INT32_MAX),  # overflow cap
    ],
)
def test_object_value(current, usage, target, readiness, tol, expected):
    plist = pods(current, readiness=readiness)
    p = object_value_replicas(current, usage, target, tol, plist)
    assert (p.replicas, p.usage) == (expected, usage)


@pytest.mark.parametrize(
    "status, usage, target, tol, expected",
    [
        (3, 20000, 5000, DEFAULT, (4, 6667)),
        (5, 6000, 2000, DEFAULT, (3, 1200)),
        (4, 20166, 5000, DEFAULT, (4, 5042)),
        (4, 20208, 5000, Tolerances(0.1, 0.01), (5, 5052)),
    ],
)
def test_object_average_value(status, usage, target, tol, expected):
    p = object_average_replicas(status, usage, target, tol)
    assert (p.replicas, p.usage) == expected


@pytest.mark.parametrize(
    "current, values, target, readiness, tol, expected",
    [
        (3, [8600], 4400, [F, T, F], DEFAULT, (2, 8600)),
        (5, [8600], 14334, None, DEFAULT, (3, 8600)),
        (3, [8600], 8888, None, DEFAULT, (3, 8600)),
        (3, [8900], 8800, None, Tolerances(0.1, 0.01), (4, 8900)),
        (3, [INT64_MAX // 2 + 1, INT64_MAX // 2 + 1], INT64_MAX, None, DEFAULT, (3, INT64_MAX)),
    ],
)
def test_external_value(current, values, target, readiness, tol, expected):
    plist = pods(current, readiness=readiness)
    p = external_value_replicas(current, values, target, tol, plist)
    assert (p.replicas, p.usage) == expected


@pytest.mark.parametrize(
    "status, values, target, tol, expected",
    [
        (3, [8600], 2150, DEFAULT, (4, 2867)),
        (5, [8600], 2867, DEFAULT, (3, 1720)),
        (3, [8600], 2900, DEFAULT, (3, 2867)),
        (3, [8600], 2800, Tolerances(0.1, 0.01), (4, 2867)),
        (1, [INT64_MAX], 1, DEFAULT, (INT32_MAX, INT64_MAX)),
        (1, [INT64_MAX], INT64_MAX, DEFAULT, (1, INT64_MAX)),
    ],
)
def test_external_average_value(status, values, target, tol, expected):
    p = external_average_replicas(status, values, target, tol)
    assert (p.replicas, p.usage) == expected


def test_value_targets_from_zero_ignore_tolerance_and_pods():
    # current replicas 0: ceil(ratio), no tolerance, no pod listing (scale from zero)
    assert object_value_replicas(0, 1050, 1000, DEFAULT, []).replicas == 2
    assert external_value_replicas(0, [0], 1000, DEFAULT, []).replicas == 0
    assert external_value_replicas(0, [400, 300], 1000, DEFAULT, []).replicas == 1


def test_value_target_needs_pods_outside_tolerance():
    with pytest.raises(CalculationError, match="^unable to calculate ready pods: no pods returned by selector"):
        object_value_replicas(3, 50000, 10000, DEFAULT, [])
    # within tolerance no pods are needed
    assert object_value_replicas(3, 10000, 10000, DEFAULT, []).replicas == 3
