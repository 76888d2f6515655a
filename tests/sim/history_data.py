"""A week of a Deployment's history as cAdvisor and kube-state-metrics would have exported it, in
OpenMetrics text for `promtool tsdb create-blocks-from openmetrics`, and the truth it was made from.

The load follows a daily wave (peak 14:00) and a weekly one (weekends at 60 %). A small controller
sized like an HPA at 60 % CPU (min 2, max 10, 5-minute scale-down stabilization) sets the
Deployment's replicas every 30 s; pods are created and deleted by it, become Ready after their own
startup, and share the load while Ready, each capped at its CPU limit (throttled above it). The
week holds one counter reset (a container restart), one scrape gap (20 minutes without samples)
and one saturated hour (the load above 10 pods' limits). A second Deployment in the namespace has
pods of its own, which the queries must leave out.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass, field

START = 1767571200.0  # 2026-01-05T00:00:00Z, a Monday
DAY = 86400.0
WEEK = 7 * DAY
SCRAPE = 30.0
NS = "shop"
REQUEST_CPU, LIMIT_CPU, REQUEST_MEMORY = 1.0, 1.0, 256 * 2**20
MIN_REPLICAS, MAX_REPLICAS, TARGET = 2, 10, 0.6
STARTUPS = (60.0, 90.0, 60.0, 30.0, 120.0)  # cycled over the pods created: median of a cycle 60 s
SATURATED = (START + 2 * DAY + 14 * 3600, START + 2 * DAY + 15 * 3600)  # Wednesday 14:00-15:00
GAP = (START + 3 * DAY + 3 * 3600, START + 3 * DAY + 3 * 3600 + 1200)  # Thursday 03:00-03:20
RESET_AT = START + DAY + 12 * 3600  # Tuesday 12:00: the first pod's container restarts
TERMINATION = 150.0  # a deleted pod serves nothing and is gone this much later
RS = "web-5d8f7c"


def demand_at(t: float, noise: float) -> float:
    """CPU cores the load needs at ``t``."""
    day = (t - START) % DAY / 3600
    weekday = int((t - START) // DAY) % 7
    wave = 0.5 + 4.5 * max(0.0, math.cos(2 * math.pi * (day - 14) / 24)) ** 2
    weekly = 0.6 if weekday >= 5 else 1.0
    value = 0.4 + wave * weekly + noise
    if SATURATED[0] <= t < SATURATED[1]:
        value = 12.0
    return max(0.2, value)


@dataclass
class Pod:
    name: str
    created: float
    startup: float
    deleted: float | None = None
    usage: list[tuple[float, float]] = field(default_factory=list)  # (t, counter)
    throttled: list[tuple[float, float]] = field(default_factory=list)
    periods: list[tuple[float, float]] = field(default_factory=list)
    ready: list[tuple[float, int]] = field(default_factory=list)

    @property
    def gone(self) -> float:
        return math.inf if self.deleted is None else self.deleted + TERMINATION


@dataclass
class Week:
    openmetrics: str
    times: list[float]
    replicas: list[int]  # spec replicas at each scrape time
    demand: list[float]
    used: list[float]  # cores the Ready pods used (the demand, capped at their limits)
    startup_median: float
    pods_started: int
    saturated_steps: list[float]  # scrape times where Ready pods were at their limit


def generate() -> Week:
    rng = random.Random(24)
    times = [START + k * SCRAPE for k in range(int(WEEK / SCRAPE) + 1)]
    pods: list[Pod] = []
    serial = 0

    def new_pod(t: float, startup: float) -> Pod:
        nonlocal serial
        serial += 1
        pod = Pod(f"{RS}-{serial:05d}", t, startup)
        pods.append(pod)
        return pod

    for _ in range(MIN_REPLICAS):
        new_pod(START - 3600, 60.0)
    replicas, demand, saturated, used_log = [], [], [], []
    spec = MIN_REPLICAS
    desired_log: list[tuple[float, int]] = []
    counters: dict[str, float] = {}
    started = 0
    noise = 0.0
    for t in times:
        noise = max(-0.3, min(0.3, noise + rng.gauss(0, 0.02)))
        need = demand_at(t, noise)
        live = [p for p in pods if p.deleted is None]
        ready = [p for p in live if t >= p.created + p.startup]
        per_pod = need / max(1, len(ready))
        # the controller: usage over requests of the Ready pods, 5-minute scale-down stabilization
        used = sum(min(LIMIT_CPU, per_pod) for _ in ready)
        desired = min(MAX_REPLICAS, max(MIN_REPLICAS, math.ceil(used / (REQUEST_CPU * TARGET) - 1e-9)))
        if abs(used / (max(1, len(ready)) * REQUEST_CPU * TARGET) - 1) <= 0.1:
            desired = len(live) if ready else desired
        desired_log.append((t, desired))
        desired_log = [(s, d) for s, d in desired_log if s > t - 300]
        target = max(d for _, d in desired_log) if desired < spec else desired
        if target > spec:
            for _ in range(target - spec):
                new_pod(t, STARTUPS[started % len(STARTUPS)])
                started += 1
        elif target < spec:
            for pod in sorted(live, key=lambda p: p.created, reverse=True)[:spec - target]:
                pod.deleted = t
        spec = target
        replicas.append(spec)
        demand.append(need)
        used_log.append(used)
        if per_pod > LIMIT_CPU:
            saturated.append(t)
        in_gap = GAP[0] <= t < GAP[1]
        for pod in pods:
            if not pod.created <= t < pod.gone:
                continue
            is_ready = pod.deleted is None and t >= pod.created + pod.startup
            share = min(LIMIT_CPU, per_pod) if is_ready else 0.0
            counter = counters.get(pod.name, 0.0) + share * SCRAPE
            if pod.name.endswith("00001") and t == RESET_AT:
                counter = 0.0
            counters[pod.name] = counter
            periods = counters.get(pod.name + "/p", 0.0) + 10 * SCRAPE
            counters[pod.name + "/p"] = periods
            throttled = counters.get(pod.name + "/t", 0.0) + (6 * SCRAPE if is_ready and per_pod > LIMIT_CPU else 0.0)
            counters[pod.name + "/t"] = throttled
            if in_gap:
                continue
            pod.usage.append((t, counter))
            pod.periods.append((t, periods))
            pod.throttled.append((t, throttled))
            pod.ready.append((t, int(is_ready)))
    spans = [p.startup for p in pods if p.created >= START]
    text = _openmetrics(pods, times, replicas)
    return Week(text, times, replicas, demand, used_log, float(statistics.median(spans)), len(spans), saturated)


def _openmetrics(pods: list[Pod], times: list[float], replicas: list[int]) -> str:
    out: list[str] = []
    scraped = [t for t in times if not GAP[0] <= t < GAP[1]]

    def series(name: str, labels: str, points: list[tuple[float, float]]) -> None:
        out.extend(f"{name}{{{labels}}} {v:.12g} {t:.0f}" for t, v in points)

    def constant(name: str, labels: str, value: float, pod: Pod | None = None) -> None:
        if pod is None:
            series(name, labels, [(t, value) for t in scraped])
        else:
            series(name, labels, [(t, value) for t, _ in pod.ready])

    def pod_labels(pod: Pod, extra: str = "") -> str:
        return f'namespace="{NS}",pod="{pod.name}"' + extra

    other = Pod("worker-7c9d-00001", START - 3600, 30.0)
    other.usage = [(t, 0.8 * (t - START + 3600)) for t in scraped]
    other.ready = [(t, 1) for t in scraped]
    everyone = [*pods, other]
    for pod in everyone:
        series("container_cpu_usage_seconds_total", pod_labels(pod, ',container="app",image="shop/web:1"'),
               [(t, round(v, 3)) for t, v in pod.usage])
    for pod in everyone:  # the pod-level cgroup, as the kubelet reports it
        series("container_cpu_usage_seconds_total", pod_labels(pod, ',container=""'),
               [(t, round(v + 0.01 * (t - pod.created), 3)) for t, v in pod.usage])
    for pod in pods:
        series("container_cpu_cfs_periods_total", pod_labels(pod, ',container="app"'), pod.periods)
    for pod in pods:
        series("container_cpu_cfs_throttled_periods_total", pod_labels(pod, ',container="app"'), pod.throttled)
    for pod in everyone:
        owner = RS if pod in pods else "worker-7c9d"
        constant("kube_pod_owner", pod_labels(pod, f',owner_kind="ReplicaSet",owner_name="{owner}",owner_is_controller="true"'),
                 1, pod)
    for pod in everyone:
        constant("kube_pod_created", pod_labels(pod, ',uid="u"'), pod.created, pod)
    for pod in everyone:
        series("kube_pod_status_ready", pod_labels(pod, ',uid="u",condition="true"'), pod.ready)
    for pod in everyone:
        for resource, unit, value in (("cpu", "core", REQUEST_CPU), ("memory", "byte", REQUEST_MEMORY)):
            constant("kube_pod_container_resource_requests",
                     pod_labels(pod, f',uid="u",container="app",node="n1",resource="{resource}",unit="{unit}"'), value, pod)
    for pod in everyone:
        constant("kube_pod_container_resource_limits",
                 pod_labels(pod, ',uid="u",container="app",node="n1",resource="cpu",unit="core"'), LIMIT_CPU, pod)
    series("kube_deployment_spec_replicas", f'namespace="{NS}",deployment="web"',
           [(t, r) for t, r in zip(times, replicas) if not GAP[0] <= t < GAP[1]])
    constant("kube_deployment_spec_replicas", f'namespace="{NS}",deployment="worker"', 1)
    for rs, owner in ((RS, "web"), ("worker-7c9d", "worker")):
        constant("kube_replicaset_owner", f'namespace="{NS}",replicaset="{rs}",owner_kind="Deployment",'
                 f'owner_name="{owner}",owner_is_controller="true"', 1)
    hpa = f'namespace="{NS}",horizontalpodautoscaler="web"'
    constant("kube_horizontalpodautoscaler_info", hpa + ',scaletargetref_api_version="apps/v1",'
             'scaletargetref_kind="Deployment",scaletargetref_name="web"', 1)
    constant("kube_horizontalpodautoscaler_spec_min_replicas", hpa, MIN_REPLICAS)
    constant("kube_horizontalpodautoscaler_spec_max_replicas", hpa, MAX_REPLICAS)
    constant("kube_horizontalpodautoscaler_spec_target_metric", hpa + ',metric_name="cpu",metric_target_type="utilization"',
             TARGET * 100)
    return _grouped(out) + "# EOF\n"


def _grouped(lines: list[str]) -> str:
    """OpenMetrics wants each family's samples together: they are, in the order written."""
    return "\n".join(lines) + "\n"
