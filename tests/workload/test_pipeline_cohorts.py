"""The metrics pipeline's cohorts (pods with one lifecycle share counters and histories) against
a pipeline that keeps counters and scrape histories per pod, the plain way."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pyhpa.adapters.metrics_lists import pod_usages
from pyhpa.workload.model import ContainerTemplate, SimPod, Workload
from pyhpa.workload.params import WorkloadParams
from pyhpa.workload.pipeline import MetricsPipeline


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
    """Each pod's value as the HPA reads it from the pipeline's PodMetrics."""
    return {u.names[0]: u.value(resource, container) for u in pod_usages(pipeline.pod_metrics())}


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
