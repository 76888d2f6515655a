"""Shortcuts of the simulator's per-sync path, each checked against the plain way it replaces.

* the simulator's ports (pod lists, Scales and resource metrics remembered or grouped) against
  the plain in-memory adapters over the same objects, on whole runs;
* the metrics pipeline's cohorts (pods with one lifecycle share counters) against per-pod counters;
* pod grouping without a per-pod look (or over what it reads of each pod, remembered), and
  requests and distinct label sets remembered per sequence of pods, against the full loops;
* reconcile's condition edits held until a status changes, against copying and setting;
* the one-subtraction NaN/Inf tests of the Go conversions against their definitions.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyhpa import build
from pyhpa.adapters.memory import MemoryCluster
from pyhpa.api.quantity import Quantity
from pyhpa.api.types import (
    ContainerView,
    HorizontalPodAutoscalerCondition,
    ObjectMeta,
    PodCondition,
    PodSpecView,
    PodStatusView,
    PodView,
    ResourceRequirements,
)
from pyhpa.workload.model import ContainerTemplate, SimPod, Workload
from pyhpa.workload.params import WorkloadParams
from pyhpa.workload.pipeline import MetricsPipeline
from pyhpa.engine import conditions as C
from pyhpa.engine import gomath, pods as P
from pyhpa.engine.inputs import PodMetric
from pyhpa.sim import runner
from pyhpa.sim.report import summarize
from tests.sim.scenarios import cpu_hpa, deployment, run, scenario, steps

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)

# These compare the source's shortcuts with plain versions by subclassing and patching the
# simulator's classes, which a compiled module neither allows nor sees: they run on the source.
pytestmark = pytest.mark.skipif(bool(build.compiled_modules()),
                                reason="checks the Python source's shortcuts (run by the pure-Python pass)")


# ----------------------------------------------------------------------------- the simulator's ports


class PlainSimCluster(runner.SimCluster):
    """The simulator's cluster with every shortcut replaced by the plain MemoryCluster answer over
    the same objects (PodMetrics built from the pipelines at each call)."""

    async def list_pods(self, namespace, selector):
        return await MemoryCluster.list_pods(self, namespace, selector)

    async def get_scale(self, namespace, ref):
        return await MemoryCluster.get_scale(self, namespace, ref)

    async def update_status(self, hpa):
        return await MemoryCluster.update_status(self, hpa)

    async def get_resource_metric(self, resource, namespace, selector, container=""):
        if self.resource_outage:
            raise runner.MetricsError("no metrics returned from resource metrics API")
        self.pod_metrics = [m for tgt in self.local for m in tgt.pipeline.pod_metrics()]
        return await MemoryCluster.get_resource_metric(self, resource, namespace, selector, container)


def _scenarios():
    external = {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "worker", "namespace": "default"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
                 "minReplicas": 0, "maxReplicas": 10,
                 "metrics": [{"type": "External", "external": {
                     "metric": {"name": "queue_messages"}, "target": {"type": "AverageValue", "averageValue": "10"}}}],
                 "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0}}},
    }
    sts = deployment(2, name="db")
    sts["kind"] = "StatefulSet"
    two = cpu_hpa(name="db", behavior={"scaleDown": {"stabilizationWindowSeconds": 30}})
    two["spec"]["scaleTargetRef"]["kind"] = "StatefulSet"
    yield "step", scenario([deployment(2), cpu_hpa()], {"load": steps(500, ("2m", 2000), ("6m", 300))}, duration="12m")
    yield "startup", scenario([deployment(2, cpu="1000m"), cpu_hpa()], {"load": steps(1000, ("1m", 3000))},
                              workload={"startup": "120s", "termination": "20s", "pending": "10s",
                                        "cpu": {"signal": "load", "per": "1m"}, "startupCpu": "50m"})
    yield "zero", scenario([deployment(3, name="worker"), external], {"queue": steps(30, ("2m", 0), ("6m", 50))},
                           workload={"startup": "0s", "termination": "30s",
                                     "metrics": {"queue_messages": {"signal": "queue"}}})
    yield "two-in-a-namespace", scenario(
        [deployment(2), cpu_hpa(), sts, two], {"load": steps(500, ("1m", 2500), ("5m", 200))}, duration="12m",
        workload={"startup": "30s", "termination": "15s", "cpu": {"signal": "load", "per": "1m"},
                  "memory": {"base": "100Mi"}},
        outages=[{"from": "3m", "to": "4m", "metrics": ["resource"]}])


@pytest.mark.parametrize("name, doc", list(_scenarios()), ids=[n for n, _ in _scenarios()])
def test_simulator_ports_equal_the_plain_memory_adapters_on_whole_runs(name, doc, monkeypatch):
    fast = run(doc)
    with monkeypatch.context() as m:
        m.setattr(runner, "SimCluster", PlainSimCluster)
        plain = run(doc)
    for a, b in zip(fast.hpas, plain.hpas):
        assert a.rows == b.rows
        assert [(e.t, e.old, e.new) for e in a.scale_events] == [(e.t, e.old, e.new) for e in b.scale_events]
    assert summarize(fast) == summarize(plain)
    assert any(r.scale_events for r in fast.hpas)  # the runs do scale


# ----------------------------------------------------------------------------- pipeline cohorts


class PerPodPipeline(MetricsPipeline):
    """Counters and scrape histories kept per pod, the plain way (a pod that left the workload
    loses them: a later pod of the same name starts afresh)."""

    def _forget_gone(self):
        owners = self.__dict__.setdefault("_owners", {})  # name -> the pod object counted under it
        live = {p.name for p in self.workload.pods}
        for pod in self.workload.pods:
            if owners.get(pod.name) is not pod:
                owners[pod.name] = pod
                self._cum.pop(pod.name, None)
                self._history.pop(pod.name, None)
        for d in (self._cum, self._history, owners):
            for name in [n for n in d if n not in live]:
                del d[name]

    def _integrate(self, at, dt, names):
        if dt <= 0:
            return
        self._forget_gone()
        wl = self.workload
        ready_n = wl.ready_count(at)
        params = wl.params_at(at)
        share = params.cpu_milli / ready_n if ready_n else 0.0
        cap = params.cpu_capacity_milli
        ready_cpu = (min(share, cap) if cap is not None else share) * dt
        start_cpu = params.startup_cpu_milli * dt
        ready_metrics = [params.metrics.get(n, 0.0) / ready_n * dt if ready_n else 0.0 for n in names]
        width = 1 + len(names)
        for pod in wl.pods:
            if not pod.running(at):
                continue
            cum = self._cum.setdefault(pod.name, [0.0] * width)
            if len(cum) < width:
                cum.extend([0.0] * (width - len(cum)))
            if pod.ready(at):
                cum[0] += ready_cpu
                for i, v in enumerate(ready_metrics, 1):
                    cum[i] += v
            else:
                cum[0] += start_cpu

    def _scrape(self, ts, names):
        from pyhpa.workload.pipeline import _Scrape

        self._forget_gone()
        wl = self.workload
        ready_n = wl.ready_count(ts)
        params = wl.params_at(ts)
        mem_unready = params.memory_bytes
        mem_ready = mem_unready + (params.memory_shared_bytes / ready_n if ready_n else 0.0)
        for pod in wl.pods:
            hist = self._history.setdefault(pod.name, [])
            if not pod.running(ts):
                hist.clear()
                continue
            cum = self._cum.get(pod.name) or [0.0] * (1 + len(names))
            hist.append(_Scrape(ts, cum[0], {n: cum[i] for i, n in enumerate(names, 1) if i < len(cum)},
                                mem_ready if ts >= pod.ready_at else mem_unready))
            cum[:] = [0.0] * len(cum)  # the history keeps increments: counters restart at each scrape
            if len(hist) > self._keep:
                del hist[0]
        self._totals = params.metrics
        self.last_scrape = ts

    def resource_usage(self, resource, container=""):
        pass  # not used: samples are compared through pod_cpu_milli / pod_metric / pod_metrics


def _samples(pipeline: MetricsPipeline) -> dict:
    wl = pipeline.workload
    return {p.name: (pipeline.pod_cpu_milli(p.name), pipeline.pod_metric(p.name, "jobs"),
                     pipeline._window(p.name)[-1].memory if pipeline._window(p.name) else None)
            for p in wl.pods}


def _grouped(pipeline: MetricsPipeline, resource: str, container: str = "") -> dict:
    return {pod.name: value for value, pods in pipeline.resource_usage(resource, container) for pod in pods}


def _plain_usage(pipeline: MetricsPipeline, resource: str, container: str = "") -> dict:
    plain = MemoryCluster(pod_metrics=pipeline.pod_metrics())
    from pyhpa.adapters.memory import _pod_usage

    return {m.metadata.name: _pod_usage(m, resource, container) for m in plain.pod_metrics}


events = st.lists(st.tuples(
    st.sampled_from(["scale", "params", "attach", "detach", "delete"]),
    st.integers(min_value=0, max_value=6), st.floats(min_value=0, max_value=3000)), max_size=25)


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["Deployment", "StatefulSet"]), schedule=events,
       startup=st.sampled_from([0.0, 7.0, 30.0]), pending=st.sampled_from([0.0, 3.0]),
       termination=st.sampled_from([0.0, 20.0]), window=st.sampled_from([15.0, 30.0, 60.0]))
def test_cohort_counters_equal_per_pod_counters(kind, schedule, startup, pending, termination, window):
    def params(cpu: float) -> WorkloadParams:
        return WorkloadParams(cpu_milli=cpu, startup_cpu_milli=25.0, memory_bytes=1e8, memory_shared_bytes=3e8,
                              startup_seconds=startup, pending_seconds=pending, termination_seconds=termination,
                              metrics={"jobs": cpu / 10})

    t0 = 1_767_225_600.0

    def workload() -> Workload:
        return Workload("ns", "web", kind=kind, containers=[ContainerTemplate("a", {"cpu": "100m"}),
                                                            ContainerTemplate("b", {"cpu": "300m"})],
                        params=params(1000.0), replicas=2, now=t0, pod_management_policy="Parallel")

    # Two identical workloads driven alike (a pipeline drops the parameter history it no longer
    # needs, so two pipelines cannot share one workload).
    a, b = workload(), workload()
    cohorts = MetricsPipeline(a, resolution=15.0, window=window, now=t0)
    plain = PerPodPipeline(b, resolution=15.0, window=window, now=t0)
    outsiders: list[tuple[SimPod, SimPod]] = []
    for step in range(1, 121):  # 30 minutes on a 15 s grid, events at their step
        t = t0 + 15.0 * step
        for what, n, value in schedule:
            if n != step % 7:
                continue
            if what == "scale":
                a.scale(n, t)
                b.scale(n, t)
            elif what == "params":
                a.set_params(params(value), t - 5.0)  # between grid points
                b.set_params(params(value), t - 5.0)
            elif what == "attach" and not outsiders:
                pods = tuple(SimPod(name=f"adopted-{step}", uid=f"u{step}", created=t - 40, running_at=t - 30,
                                    ready_at=t - 10) for _ in (a, b))
                outsiders.append(pods)
                a.attach(pods[0])
                b.attach(pods[1])
            elif what == "detach" and outsiders:
                pa, pb = outsiders.pop()
                a.detach(pa)
                b.detach(pb)
            elif what == "delete" and a.pods:
                for wl in (a, b):
                    victim = wl.pods[n % len(wl.pods)]
                    if victim.deleted_at is None:
                        wl.mark_deleted(victim, t - 2.0, t - 2.0 + termination)
        for wl, pipeline in ((a, cohorts), (b, plain)):
            wl.advance(t)
            pipeline.advance(t)
        assert [p.name for p in a.pods] == [p.name for p in b.pods]
        assert _samples(cohorts) == _samples(plain)
        for resource, container in (("cpu", ""), ("memory", ""), ("cpu", "b"), ("cpu", "zz"), ("gpu", "")):
            assert _grouped(cohorts, resource, container) == _plain_usage(plain, resource, container)


# ----------------------------------------------------------------------------- engine memos


def _pod(i: int, phase: str, deleted: bool, ready: str | None, started_ago: float | None, transition_ago: float,
         requests: dict[str, str] | None) -> PodView:
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
    except (OverflowError, P.CalculationError) as exc:
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
       init_period=st.sampled_from([0.0, 30.0, 300.0, 1e12]), delay=st.sampled_from([0.0, 30.0]),
       as_tuple=st.booleans())
def test_pod_grouping_and_requests_equal_the_full_loops(specs, with_metric, sample_age, resource, init_period, delay,
                                                        as_tuple):
    pods = [_pod(i, *spec) for i, spec in enumerate(specs)]
    seq = tuple(pods) if as_tuple else pods
    metrics = {p.metadata.name: PodMetric(100, NOW - timedelta(seconds=sample_age), 30.0)
               for p, has in zip(pods, with_metric) if has}
    for _ in range(2):  # the second call finds the remembered facts
        assert _outcome(P.group_pods, seq, metrics, resource, init_period, delay, NOW) == \
            _outcome(P._group_pods, pods, metrics, resource, init_period, delay, NOW)
        for container, gate in (("", False), ("c", False), ("", True)):
            try:
                expected = P._pod_requests(pods, resource, container, gate)
            except P.CalculationError as exc:
                with pytest.raises(P.CalculationError, match=str(exc)):
                    P.pod_requests(seq, resource, container, gate)
            else:
                assert P.pod_requests(seq, resource, container, gate) == expected


def test_remembered_pod_facts_follow_new_pod_objects():
    a = [_pod(0, "Running", False, "True", 600, 600, {"cpu": "250m"})]
    assert P.pod_requests(a, "cpu", "", False) == {"p0": 250}
    b = [_pod(0, "Running", False, "True", 600, 600, {"cpu": "500m"})]  # same name, a new object
    assert P.pod_requests(b, "cpu", "", False) == {"p0": 500}
    assert P.pod_requests(tuple(b), "cpu", "", False) == {"p0": 500}


label_choices = [{"app": "web"}, {"app": "web", "tier": "a"}, {}, None, {"app": "db"}]


@settings(max_examples=200, deadline=None)
@given(picks=st.lists(st.tuples(st.integers(0, len(label_choices) - 1), st.booleans()), max_size=10))
def test_distinct_label_sets_equal_asking_for_every_pod(picks):
    # Label dicts shared between pods (as a workload's) or equal copies; None is a pod without labels.
    pods = []
    for i, (k, copy) in enumerate(picks):
        pod = _pod(i, "Running", False, "True", 600, 600, {"cpu": "250m"})
        labels = label_choices[k]
        pod.metadata.labels = dict(labels) if copy and labels is not None else labels
        pods.append(pod)
    asked = P.distinct_label_sets(tuple(pods))
    plain: list[dict] = []  # the full loop: every pod's labels, the first of each distinct set kept
    for pod in pods:
        labels = pod.metadata.labels or {}
        if all(labels != x for x in plain):
            plain.append(labels)
    assert asked == plain
    firsts: dict[frozenset, dict | None] = {}  # each set's dict as the first pod carrying it has it
    for pod in pods:
        firsts.setdefault(frozenset((pod.metadata.labels or {}).items()), pod.metadata.labels)
    for labels in asked:  # the registry is asked with those very dicts (its memo keys on them)
        first = firsts[frozenset(labels.items())]
        assert not first or labels is first  # an empty or missing label dict is asked as a new {}
    assert P.distinct_label_sets(tuple(pods)) is asked  # remembered for the same pod objects


# ----------------------------------------------------------------------------- condition edits


condition_types = st.sampled_from(["AbleToScale", "ScalingActive", "ScalingLimited", "ScaledToZero"])
ops = st.lists(st.one_of(
    st.tuples(st.just("set"), condition_types, st.sampled_from(["True", "False"]), st.sampled_from(["A", "B"]),
              st.sampled_from(["m1", "m2"])),
    st.tuples(st.just("remove"), condition_types, st.just(""), st.just(""), st.just("")),
), max_size=10)


@settings(max_examples=300, deadline=None)
@given(initial=st.lists(st.tuples(condition_types, st.sampled_from(["True", "False"]), st.sampled_from(["A", "B"]),
                                  st.sampled_from(["m1", "m2"])), max_size=4, unique_by=lambda x: x[0]),
       operations=ops)
def test_held_condition_edits_equal_copying_and_setting(initial, operations):
    from pyhpa.api.types import HorizontalPodAutoscalerStatus
    from pyhpa.controller.reconcile import _Pass
    from pyhpa.engine.config import ControllerConfig

    earlier = NOW - timedelta(hours=1)
    conds = [HorizontalPodAutoscalerCondition(type=t, status=s, reason=r, message=m, last_transition_time=earlier)
             for t, s, r, m in initial]
    before = [(c.type, c.status, c.reason, c.message, c.last_transition_time) for c in conds]
    from pyhpa.sim.scenario import default_hpa_loader

    hpa = default_hpa_loader(cpu_hpa(), "test")
    hpa = msgspec.structs.replace(hpa, status=msgspec.structs.replace(hpa.status, conditions=conds or None))
    p = _Pass(hpa, None, ControllerConfig(), NOW)
    plain = C.copy_conditions(conds)
    for op, t, s, r, m in operations:
        if op == "set":
            p.set(t, s, r, m)
            C.set_condition(plain, t, s, r, m, NOW)
        else:
            p.remove(t)
            C.remove_condition(plain, t)
    got = p.conditions
    assert [(c.type, c.status, c.reason, c.message, c.last_transition_time) for c in got] == \
        [(c.type, c.status, c.reason, c.message, c.last_transition_time) for c in plain]
    assert [(c.type, c.status, c.reason, c.message, c.last_transition_time) for c in conds] == before  # untouched
    if got is conds:  # shared only when nothing differs
        assert [(c.reason, c.message) for c in got] == [(r, m) for _, _, r, m in initial]


# ----------------------------------------------------------------------------- Go conversions


def _reference_float_to_int32(x: float) -> int:
    if math.isnan(x) or math.isinf(x):
        return gomath.INT32_MIN
    t = int(x)
    return gomath.INT32_MIN if t > gomath.INT32_MAX or t < gomath.INT32_MIN else t


@settings(max_examples=500, deadline=None)
@given(x=st.floats(allow_nan=True, allow_infinity=True) | st.floats(min_value=-3e9, max_value=3e9))
def test_go_conversions_equal_their_definitions(x):
    assert gomath.float_to_int32(x) == _reference_float_to_int32(x)
    assert gomath.ceil_int32(x) == (gomath.INT32_MIN if math.isnan(x) or math.isinf(x)
                                    else _reference_float_to_int32(float(math.ceil(x))))
    expected64 = gomath.INT64_MIN if math.isnan(x) or math.isinf(x) else (
        gomath.INT64_MIN if not gomath.INT64_MIN <= int(x) <= gomath.INT64_MAX else int(x))
    assert gomath.float_to_int64(x) == expected64
    f = gomath.fceil(x)
    assert (math.isnan(f) and math.isnan(x)) or f == (x if math.isinf(x) else float(math.ceil(x)))


def test_quantity_remembers_its_milli_value():
    q = Quantity.parse("1500m")
    assert q.milli_int64() == 1500 and q.milli_int64() == 1500
    assert Quantity.parse("1e20").milli_int64() == gomath.INT64_MAX
    assert Quantity.parse("-1e20").milli_int64() == gomath.INT64_MIN


def test_plain_cluster_is_used_by_the_runs(monkeypatch):
    # The differential runs above really go through the plain adapters.
    calls = []
    orig = PlainSimCluster.get_resource_metric

    async def spy(self, *a, **k):
        calls.append(a[0])
        return await orig(self, *a, **k)

    monkeypatch.setattr(PlainSimCluster, "get_resource_metric", spy)
    monkeypatch.setattr(runner, "SimCluster", PlainSimCluster)
    run(scenario([deployment(2), cpu_hpa()], {"load": {"constant": 500}}, duration="1m"))
    assert calls and set(calls) == {"cpu"}
