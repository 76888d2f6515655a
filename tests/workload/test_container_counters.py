"""The pipeline's cumulative container counters (what cAdvisor reports) against the plain integral
of the model's instantaneous usage, through scale-ups, cohort merges and deletions."""

from __future__ import annotations

import pytest

from pyhpa.workload.model import ContainerTemplate, ResourceLimits, Workload
from pyhpa.workload.params import WorkloadParams
from pyhpa.workload.pipeline import MetricsPipeline

STEP = 0.25  # every transition below sits on this grid: rates are constant inside a step


def run(containers, params, plan, until):
    """Advance a workload to ``until`` with ``plan`` ({t: replicas}), integrating each pod's
    instantaneous CPU by hand; returns (pipeline, pod name -> milli-core-seconds)."""
    wl = Workload("ns", "web", containers=containers, params=params, replicas=plan.pop(0), now=0.0)
    pipe = MetricsPipeline(wl, resolution=5.0, window=15.0, now=0.0)
    plain: dict[str, float] = {}
    t = 0.0
    while t < until:
        if t in plan:
            wl.scale(plan[t], t)
        mid = t + STEP / 2
        for pod in wl.pods:
            plain[pod.name] = plain.get(pod.name, 0.0) + wl.cpu_rate(pod, mid) * STEP
        t += STEP
        wl.advance(t)
        pipe.advance(t)
    return wl, pipe, plain


def test_counters_are_the_integral_of_the_usage_through_merges_and_deletions():
    params = WorkloadParams(cpu_milli=1200, startup_cpu_milli=100, startup_seconds=5,
                            pending_seconds=1, termination_seconds=3)
    wl, pipe, plain = run([ContainerTemplate("a"), ContainerTemplate("b")], params,
                          {0: 1, 20.0: 3, 42.5: 5, 80.0: 2}, 122.5)  # between two scrapes
    counters = pipe.container_counters()
    assert sorted(counters) == sorted(p.name for p in wl.pods) and len(counters) == 2
    for name, c in counters.items():
        assert c.at == 122.5  # the usage since the latest scrape (120 s) counted too
        assert sum(c.cpu_seconds) * 1000 == pytest.approx(plain[name], rel=1e-9)
        assert c.cpu_seconds[0] == pytest.approx(c.cpu_seconds[1])  # no limits: equal parts
        assert c.throttled_seconds == (0.0, 0.0)


def test_a_container_at_its_limit_is_counted_throttled():
    limited = [ContainerTemplate("app", {"cpu": "300m"}, {"cpu": "300m"}), ContainerTemplate("side")]
    wl, pipe, plain = run(limited, WorkloadParams(cpu_milli=1000, startup_seconds=5), {0: 1}, 60.0)
    (c,) = pipe.container_counters().values()
    assert c.running_seconds == 60.0
    assert c.cpu_seconds[0] == pytest.approx(0.3 * 55)  # Ready from 5 s, held at 300m
    assert c.cpu_seconds[1] == pytest.approx(0.5 * 55)  # its half of the demand
    assert c.throttled_seconds == (pytest.approx(55.0), 0.0)
    assert sum(c.cpu_seconds) * 1000 == pytest.approx(next(iter(plain.values())))


def test_fill_gives_each_container_its_capped_equal_part():
    limits = ResourceLimits([100.0, float("inf"), 250.0])
    assert limits.fill(600.0, 1.0) == pytest.approx([100.0, 250.0, 250.0])
    assert limits.fill(900.0, 2.0) == pytest.approx([200.0, 350.0, 350.0])
    assert sum(limits.fill(limits.cap(1200.0), 1.0)) == pytest.approx(limits.cap(1200.0))


def test_a_pipeline_without_counters_reports_the_same_samples():
    """``counters=False`` (the simulator's) spares the running totals only: every scrape's
    samples are those of a pipeline that keeps them, and asking for counters is refused."""
    params = WorkloadParams(cpu_milli=900, startup_cpu_milli=50, startup_seconds=5, termination_seconds=3)
    pipes = []
    for counters in (True, False):
        wl = Workload("ns", "web", containers=[ContainerTemplate("a"), ContainerTemplate("b")],
                      params=params, replicas=1, now=0.0)
        pipe = MetricsPipeline(wl, resolution=5.0, window=15.0, now=0.0, counters=counters)
        seen = []
        for step in range(1, 200):
            t = step * 0.5
            if t in (20.0, 60.0):
                wl.scale(4 if t == 20.0 else 2, t)
            wl.advance(t)
            pipe.advance(t)
            seen.append((pipe.last_scrape, [(cpu, mem, [p.name for p in members])
                                            for cpu, mem, members in pipe.cohort_usage()]))
        pipes.append((pipe, seen))
    (kept, with_counters), (spared, without) = pipes
    assert with_counters == without and any(usage for _, usage in without)
    assert kept.container_counters()
    with pytest.raises(ValueError, match="keeps no counters"):
        spared.container_counters()
