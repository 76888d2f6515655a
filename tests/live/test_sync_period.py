"""KEP-6003 in the live controller's scheduling, on a fake clock: each HPA at its own period, a
spec change queued at once, a status write never, nothing piling up when passes are slow."""

from __future__ import annotations

import time
from dataclasses import replace

import msgspec

from pyhpa.adapters.kube.client import KubeClient
from pyhpa.api.features import FeatureGates
from pyhpa.api.types import HorizontalPodAutoscalerBehavior
from pyhpa.live.loop import ControllerOptions, HPAController
from pyhpa.live.queue import WorkQueue

from tests.controller.builders import CONFIG, NOW, hpa
from tests.clock import Clock

GLOBAL = 15.0


def ready_after(q: WorkQueue, clock: Clock, key: str, limit: float = 4000.0) -> float | None:
    """Seconds until ``q`` hands out ``key`` (advancing the clock in 0.5 s steps), or None."""
    start = clock.t
    while clock.t - start <= limit:
        got = q.try_get()
        if got is not None:
            assert got == key, got
            q.done(key)
            return clock.t - start
        clock.t += 0.5
    return None


def test_each_key_waits_its_own_period_and_falls_back_to_the_global_one():
    clock = Clock(1000.0)
    q = WorkQueue(GLOBAL, clock)
    q.set_interval("ns/fast", 5.0)
    assert (q.interval("ns/fast"), q.interval("ns/other")) == (5.0, GLOBAL)
    q.add_rate_limited("ns/fast")
    assert ready_after(q, clock, "ns/fast") == 5.0
    q.set_interval("ns/fast", None)
    q.add_rate_limited("ns/fast")
    assert ready_after(q, clock, "ns/fast") == GLOBAL


def test_shortest_own_interval_follows_the_keys():
    q = WorkQueue(GLOBAL, Clock(1000.0))
    assert (q.shortest_own_interval(), q.own_intervals) == (None, 0)
    q.set_interval("a", 5.0)
    q.set_interval("b", 5.0)
    q.set_interval("c", 60.0)
    assert (q.shortest_own_interval(), q.own_intervals) == (5.0, 3)
    q.set_interval("a", 60.0)
    assert q.shortest_own_interval() == 5.0  # b still has 5
    q.set_interval("b", None)
    assert (q.shortest_own_interval(), q.own_intervals) == (60.0, 2)


def test_a_slow_pass_is_followed_by_one_pass_not_a_backlog():
    # Period 1 s, a pass that takes 3.5 s while the global resync re-adds the key every second:
    # the key waits once (the earliest ready time), runs once right after the slow pass, then
    # again one period after that run is re-added.
    clock = Clock(1000.0)
    q = WorkQueue(GLOBAL, clock)
    q.set_interval("k", 1.0)
    q.add("k")
    assert q.try_get() == "k"
    for _ in range(3):
        clock.t += 1.0
        q.add_rate_limited("k")  # resync while processing: one waiting entry, the earliest
    clock.t += 0.5
    q.done("k")
    q.add_rate_limited("k")  # the worker's re-add after the pass
    assert q.waiting == 1
    assert q.try_get() == "k"  # overdue (ready at +2 s): at once, and only once
    assert q.try_get() is None
    q.done("k")
    q.add_rate_limited("k")
    assert ready_after(q, clock, "k") == 1.0


def controller(gates: FeatureGates | None = None) -> tuple[HPAController, Clock]:
    config = CONFIG if gates is None else replace(CONFIG, gates=gates)
    ctl = HPAController(KubeClient(None), replace(config, sync_period=GLOBAL),  # type: ignore[arg-type]
                        ControllerOptions(sync_period=GLOBAL, persist_state=False), clock=lambda: NOW)
    clock = Clock(1000.0)
    ctl.queue = WorkQueue(GLOBAL, clock)
    return ctl, clock


def with_period(seconds: int | None, name: str = "web"):
    return hpa(name=name, behavior=HorizontalPodAutoscalerBehavior(sync_period_seconds=seconds))


def test_first_pass_one_period_after_it_is_seen_never_later_than_the_global_period():
    ctl, clock = controller()
    for seconds, first in ((5, 5.0), (None, GLOBAL), (3600, GLOBAL)):
        h = with_period(seconds)
        ctl.hpa_informer._store(h)
        ctl._on_hpa_add(h)
        assert ready_after(ctl.queue, clock, "ns/web") == first, seconds
        ctl.queue.add_rate_limited("ns/web")  # the worker's re-add: the HPA's own period
        assert ready_after(ctl.queue, clock, "ns/web") == (seconds or GLOBAL)
        ctl._on_hpa_delete(h)
        assert ctl.queue.interval("ns/web") == GLOBAL


def test_spec_change_is_queued_at_once_a_status_write_is_not():
    ctl, clock = controller()
    old = with_period(30)
    ctl._on_hpa_add(old)
    assert ready_after(ctl.queue, clock, "ns/web") == GLOBAL

    status_write = msgspec.structs.replace(old, status=msgspec.structs.replace(old.status, desired_replicas=7))
    ctl._on_hpa_update(old, status_write)
    assert ready_after(ctl.queue, clock, "ns/web") == 30.0  # rate-limited at its own period

    faster = with_period(2)  # the user shortens the period: acted on at once, then every 2 s
    ctl._on_hpa_update(status_write, faster)
    assert ready_after(ctl.queue, clock, "ns/web") == 0.0
    ctl.queue.add_rate_limited("ns/web")
    assert ready_after(ctl.queue, clock, "ns/web") == 2.0

    suspended = with_period(2)
    suspended.metadata.annotations = {"autoscaling.kubernetes.io/suspend": "true"}
    ctl._on_hpa_update(faster, suspended)  # suspending (and resuming) is acted on at once too
    assert ready_after(ctl.queue, clock, "ns/web") == 0.0
    relabelled = with_period(2)
    relabelled.metadata.annotations = {"autoscaling.kubernetes.io/suspend": "true", "team": "a"}
    ctl._on_hpa_update(suspended, relabelled)  # other metadata: rate-limited
    assert ready_after(ctl.queue, clock, "ns/web") == 2.0


def test_gate_off_ignores_the_field_and_keeps_upstream_queueing():
    ctl, clock = controller(FeatureGates(configurable_sync_period=False))
    old = with_period(2)
    ctl._on_hpa_add(old)
    assert ctl.queue.interval("ns/web") == GLOBAL
    assert ready_after(ctl.queue, clock, "ns/web") == GLOBAL
    ctl._on_hpa_update(old, with_period(5))  # a spec change, rate-limited as upstream
    assert ready_after(ctl.queue, clock, "ns/web") == GLOBAL


def test_an_unvalidated_out_of_range_period_takes_the_global_one():
    """A pyhpa.io CRD object (no API server validates it) with syncPeriodSeconds 0 is an
    InvalidSpec; queued at period 0 it was reconciled in a busy loop, events by the million."""
    ctl, clock = controller()
    for bad in (0, -5, 3601):
        ctl._on_hpa_add(with_period(bad))
        assert ctl.queue.interval("ns/web") == GLOBAL, bad
    ctl.queue.add_rate_limited("ns/web")
    assert ready_after(ctl.queue, clock, "ns/web") == GLOBAL


def test_shared_resource_metrics_live_no_longer_than_the_shortest_period():
    ctl, _ = controller()
    assert ctl.shared_pod_metrics.cache.ttl == GLOBAL * 0.9
    ctl._on_hpa_add(with_period(2, "fast"))
    ctl._on_hpa_add(with_period(600, "slow"))
    assert ctl.shared_pod_metrics.cache.ttl == 2 * 0.9
    ctl._on_hpa_delete(with_period(2, "fast"))
    assert ctl.shared_pod_metrics.cache.ttl == GLOBAL * 0.9


def test_watchdog_counts_in_the_shortest_period_an_hpa_has():
    ctl, _ = controller()
    ctl.started = True
    slow = with_period(3600)
    ctl.hpa_informer._store(slow)
    ctl._on_hpa_add(slow)
    assert ctl.shortest_period() == 3600.0
    ctl.last_progress = time.monotonic() - 600  # ten minutes idle: fine for an hourly HPA
    assert ctl.healthy() == (True, "")
    plain = hpa(name="plain")
    ctl.hpa_informer._store(plain)
    ctl._on_hpa_add(plain)
    assert ctl.shortest_period() == GLOBAL
    assert not ctl.healthy()[0]  # 600 s > 3 x 15 s
