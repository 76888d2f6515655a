"""The shared workload model: pod lifecycle, victim order, usage sharing, metrics pipeline."""

from __future__ import annotations

import pytest

from pyhpa.workload.model import ContainerTemplate, Workload
from pyhpa.workload.params import WorkloadParamError, WorkloadParams, params_from_annotations
from pyhpa.workload.pipeline import MetricsPipeline

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def make(replicas=2, kind="Deployment", **params):
    return Workload(
        "ns", "web", kind=kind, labels={"app": "web"},
        containers=[ContainerTemplate("app", {"cpu": "500m"})],
        params=WorkloadParams(**params), replicas=replicas, now=T0,
    )


def test_annotations_read_into_params():
    p = params_from_annotations({
        "sim.pyhpa.io/cpu": "1500m",
        "sim.pyhpa.io/memory": "256Mi",
        "sim.pyhpa.io/startup-seconds": "30",
        "sim.pyhpa.io/metric.qps": "120",
        "unrelated": "x",
    })
    assert p.cpu_milli == 1500
    assert p.memory_bytes == 256 * 1024 * 1024
    assert p.startup_seconds == 30
    assert p.metrics == {"qps": 120.0}


@pytest.mark.parametrize("key,value", [
    ("sim.pyhpa.io/cpu", "lots"),
    ("sim.pyhpa.io/startup-seconds", "-3"),
    ("sim.pyhpa.io/cpux", "1"),
])
def test_bad_annotation_names_the_field(key, value):
    with pytest.raises(WorkloadParamError, match=key.replace(".", r"\.")):
        params_from_annotations({key: value})


def test_lifecycle_pending_running_ready():
    wl = make(replicas=1, startup_seconds=30, pending_seconds=10)
    pod = wl.pods[0]
    assert pod.phase(T0) == "Pending" and not pod.ready(T0)
    assert pod.phase(T0 + 10) == "Running" and not pod.ready(T0 + 29)
    assert pod.ready(T0 + 30)
    view = wl.pod_view(pod, T0 + 31)
    ready = [c for c in view.status.conditions if c.type == "Ready"][0]
    assert ready.status == "True" and ready.last_transition_time.timestamp() == T0 + 30
    assert view.status.start_time.timestamp() == T0
    early = [c for c in wl.pod_view(pod, T0 + 5).status.conditions if c.type == "Ready"][0]
    assert early.status == "False" and early.last_transition_time.timestamp() == T0


def test_pod_view_times_are_to_the_second_as_the_api_serves_them():
    # created 0.7 s into a second, Ready 3 s later: the HPA reads metav1.Time, whole seconds
    wl = Workload("ns", "web", params=WorkloadParams(startup_seconds=3), replicas=1, now=T0 + 0.7)
    view = wl.pod_view(wl.pods[0], T0 + 10)
    ready = [c for c in view.status.conditions if c.type == "Ready"][0]
    assert (ready.last_transition_time.timestamp(), view.status.start_time.timestamp()) == (T0 + 3, T0)


def test_scale_down_removes_unready_then_newest_ready_first():
    wl = make(replicas=2, startup_seconds=30, termination_seconds=20)
    first = {p.name for p in wl.pods}
    wl.scale(3, T0 + 100)  # third pod: still starting at T0+110
    newest = [p for p in wl.pods if p.name not in first][0]
    changes = wl.scale(2, T0 + 110)
    assert [p.name for p in changes.deleting] == [newest.name]
    assert wl.status_replicas() == 2 and len(wl.pods) == 3
    assert wl.advance(T0 + 130).removed == [newest]
    # Among ready pods the most recently ready goes first.
    wl.scale(3, T0 + 200)
    late = [p for p in wl.pods if p.name not in first][0]
    changes = wl.scale(2, T0 + 300)
    assert [p.name for p in changes.deleting] == [late.name]


def test_statefulset_ordered_ready_one_at_a_time():
    wl = make(replicas=1, kind="StatefulSet", startup_seconds=10)
    assert [p.name for p in wl.pods] == ["web-0"]
    wl.scale(3, T0 + 1)
    assert len(wl.pods) == 1  # web-0 not ready yet
    wl.advance(T0 + 10)
    assert [p.name for p in wl.pods] == ["web-0", "web-1"]
    wl.advance(T0 + 20)
    assert [p.name for p in wl.pods] == ["web-0", "web-1", "web-2"]
    changes = wl.scale(1, T0 + 40)
    assert [p.name for p in changes.deleting] == ["web-2"]


def test_cpu_shared_by_ready_pods_with_cap():
    wl = make(replicas=3, startup_seconds=0, cpu_milli=1500, cpu_capacity_milli=400)
    assert [wl.cpu_rate(p, T0) for p in wl.pods] == [400, 400, 400]
    wl.set_params(WorkloadParams(cpu_milli=900), T0)
    assert [wl.cpu_rate(p, T0) for p in wl.pods] == [300, 300, 300]


def test_pipeline_averages_over_window_and_new_pods_wait_one_window():
    wl = make(replicas=2, startup_seconds=0, cpu_milli=1000)
    mp = MetricsPipeline(wl, resolution=15, window=30, now=T0)
    mp.advance(T0 + 15)
    assert mp.pod_metrics() == []  # one scrape: no rate yet
    wl.set_params(WorkloadParams(cpu_milli=2000), T0 + 20)
    mp.advance(T0 + 30)
    # pod usage 500m for 20s then 1000m for 10s, over [0, 30]
    cpus = sorted(m.containers[0].usage["cpu"].milli_value() for m in mp.pod_metrics())
    assert cpus == [667, 667]
    m = mp.pod_metrics()[0]
    assert m.window == "30s" and m.timestamp.timestamp() == T0 + 30
    wl.scale(4, T0 + 31)
    mp.advance(T0 + 45)
    assert len(mp.pod_metrics()) == 2
    mp.advance(T0 + 75)
    assert len(mp.pod_metrics()) == 4
    # 2000m over 4 ready pods since 31s; window [45,75]
    assert sorted(m.containers[0].usage["cpu"].milli_value() for m in mp.pod_metrics()) == [500] * 4


def test_pipeline_custom_and_external_values():
    wl = make(replicas=2, startup_seconds=0, metrics={"qps": 100.0})
    mp = MetricsPipeline(wl, resolution=10, now=T0)
    mp.advance(T0 + 20)
    values = mp.pods_custom_metric("qps")
    assert [v.value.milli_value() for v in values] == [50000, 50000]
    ext = mp.external_metric("qps", {"queue": "a"})
    assert ext.value.milli_value() == 100000 and ext.metric_labels == {"queue": "a"}
    assert mp.external_metric("nope") is None


def test_pods_attached_or_deleted_from_outside_move_breakpoints_and_counts():
    # The embedded cluster creates and deletes pods itself and reports them to the workload; the
    # cached breakpoints and status.replicas must follow, or usage integration goes wrong there.
    from pyhpa.workload.model import SimPod

    wl = make(replicas=0, startup_seconds=30, pending_seconds=10)
    assert wl.breakpoints(T0, T0 + 100) == [] and wl.status_replicas() == 0
    pod = SimPod(name="web-x", uid="u1", created=T0 + 5, running_at=T0 + 15, ready_at=T0 + 35)
    wl.attach(pod)
    assert wl.breakpoints(T0, T0 + 100) == [T0 + 15, T0 + 35]
    assert wl.status_replicas() == 1
    wl.mark_deleted(pod, T0 + 50, T0 + 80)
    assert wl.breakpoints(T0 + 40, T0 + 100) == [T0 + 50]
    assert wl.status_replicas() == 0
    wl.detach(pod)
    assert wl.pods == [] and wl.breakpoints(T0, T0 + 100) == []


def test_pending_beyond_the_startup_delays_ready_until_running():
    wl = make(replicas=1, startup_seconds=5, pending_seconds=20)
    pod = wl.pods[0]
    assert (pod.running_at, pod.ready_at) == (T0 + 20, T0 + 20)
    assert not pod.ready(T0 + 19.9) and pod.ready(T0 + 20)


def test_container_limits_cap_usage_and_split_it():
    from pyhpa.workload.model import ResourceLimits

    two = [ContainerTemplate("app", {"cpu": "200m"}, {"cpu": "300m", "memory": "64Mi"}),
           ContainerTemplate("side", {"cpu": "100m"})]
    wl = Workload("ns", "web", containers=two, replicas=2, now=T0,
                  params=WorkloadParams(cpu_milli=2000, memory_bytes=256 * 2**20))
    # each pod's 1000m is shared by its containers: app is throttled at 300m, side takes its 500m
    assert [wl.cpu_rate(p, T0) for p in wl.pods] == [800, 800]
    assert wl.memory_bytes(wl.pods[0], T0) == (64 + 128) * 2**20
    assert wl.memory_demand(wl.pods[0], T0) == 256 * 2**20
    assert wl.memory_limits.exceeded(256 * 2**20) == [0]
    mp = MetricsPipeline(wl, resolution=10, window=10, now=T0)
    mp.advance(T0 + 10)
    [m, _] = mp.pod_metrics()
    assert [(c.name, c.usage["cpu"].milli_value()) for c in m.containers] == [("app", 300), ("side", 500)]
    assert [c.usage["memory"].value() for c in m.containers] == [64 * 2**20, 128 * 2**20]
    assert [v for v, _ in mp.resource_usage("cpu", "app")] == [300]
    # the split of a total: equal parts as far as the limits allow, the rest where there is room
    limits = ResourceLimits([300.0, float("inf"), 100.0])
    assert [limits.split(1000, i) for i in range(3)] == [300, 600, 100]
    assert [limits.split(301, i) for i in range(3)] == [101, 100, 100]
    # without limits nothing changes: equal parts, the first takes the remainder
    plain = make(replicas=1, startup_seconds=0, cpu_milli=900)
    assert plain.cpu_limits is None and plain.split("cpu", 901, 2, 0) == 451
