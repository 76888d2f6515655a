"""KEP-5679's external-metric fallback in the live controller against the embedded cluster, over
HTTPS. The failure duration is at least 180 s, so the test moves the failure's start into the
past in the stored status between two controller processes, which is also the restart the
status-held state is for."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest

from pyhpa.api.timefmt import format_time

from tests.builders import deployment, external_metric
from tests.builders import hpa as hpa_manifest
from .harness import wait_until
from .test_live import DEPLOY, HPAS, NS, _eq, _eq_attr, _status_is, condition, hpa, live, replicas  # noqa: F401 (fixture)

pytestmark = pytest.mark.slow


async def events_for(env, reason: str, name: str | None = None) -> list[dict]:
    """The namespace's events with ``reason`` (on the object ``name`` when given)."""
    events = (await env.client.get(f"/api/v1/namespaces/{NS}/events"))["items"]
    return [e for e in events if e["reason"] == reason and name in (None, e["involvedObject"]["name"])]


def queue_entry(h: dict) -> dict:
    return next(m["external"] for m in h["status"].get("currentMetrics") or [] if m.get("type") == "External")


async def test_fallback_after_the_duration_survives_a_restart_and_clears_on_success(live):
    await live.client.post(DEPLOY, deployment("worker", 2))
    body = hpa_manifest("worker", metrics=[external_metric("queue_depth", average_value="10",
                                                           fallback={"replicas": 5})])
    created = await live.client.post(HPAS, body)
    assert created["spec"]["metrics"][0]["external"]["fallback"] == {
        "failureDurationSeconds": 180, "replicas": 5, "strategy": "Static"}
    live.harness.external[(NS, "queue_depth")] = [20_000]  # 20 over 2 pods at 10 each: steady at 2
    ctl = await live.start_controller(window=1.0)

    async def entry(key=None):
        h = await hpa(live, "worker")
        if not h.get("status", {}).get("currentMetrics"):
            return None
        e = queue_entry(h)
        return e if key is None else e.get(key)

    await wait_until(lambda: _eq(entry("fallbackStatus"), "Normal"), 10, what="Normal while the metric answers")
    live.harness.external[(NS, "queue_depth")] = []  # the adapter answers nothing
    first = await wait_until(lambda: entry("firstFailureTime"), 10, what="firstFailureTime set")
    assert await entry("fallbackStatus") == "Normal" and await replicas(live, "worker") == 2
    assert condition(await hpa(live, "worker"), "ExternalMetricFallbackActive")["status"] == "False"

    # Stop, move the failure's start 200 s back in the stored status, start another controller.
    await ctl.stop()
    h = await hpa(live, "worker")
    earlier = datetime.fromisoformat(first.replace("Z", "+00:00")) - timedelta(seconds=200)
    queue_entry(h)["firstFailureTime"] = format_time(earlier)
    await live.client.put(f"{HPAS}/worker/status", h)
    await live.start_controller(window=1.0)
    await wait_until(lambda: _eq(replicas(live, "worker"), 5), 10, what="the fallback's 5 replicas")
    await wait_until(lambda: _status_is(hpa(live, "worker"), 5), 5, what="status written after the scale")
    h = await hpa(live, "worker")
    assert queue_entry(h)["fallbackStatus"] == "Fallback"
    assert queue_entry(h)["firstFailureTime"] == format_time(earlier)  # kept, not reset
    assert condition(h, "ExternalMetricFallbackActive")["status"] == "True"

    [event] = await wait_until(lambda: events_for(live, "ExternalMetricFallbackActivated"), 5,
                               what="the activation event")
    assert event["type"] == "Normal"
    assert event["message"] == "external metric queue_depth has failed for 3m0s: using its fallback of 5 replicas"
    # the rescale and ScalingActive name the fallback, not "queue_depth(nil) above target"
    used = "external metric queue_depth has failed for 3m0s: fallback 5 replicas"
    assert condition(h, "ScalingActive")["message"] == f"the HPA is using a fallback for its replica count: {used}"
    rescales = await events_for(live, "SuccessfulRescale", "worker")
    assert rescales and all(e["message"].endswith(f"; reason: {used}") for e in rescales)  # 2 -> 4 -> 5 (limit)

    live.harness.external[(NS, "queue_depth")] = [20_000]  # back: 20 over 5 pods -> 2
    await wait_until(lambda: _eq_attr(hpa(live, "worker"), "NoFallbackActive", "ExternalMetricFallbackActive"), 10,
                     what="the fallback condition False")
    assert "firstFailureTime" not in await entry() and await entry("fallbackStatus") == "Normal"
    await wait_until(lambda: _eq(replicas(live, "worker"), 2), 10, what="back to 2 after the window")


async def test_use_max_strategy_holds_instead_of_scaling_down(live):
    """KEP-5679's follow-up: in fallback, UseMax proposes max(current 3, replicas 1) = 3, so the
    outage does not scale the workers down (Static would go to 1)."""
    from datetime import timezone

    await live.client.post(DEPLOY, deployment("drain", 3))
    body = hpa_manifest("drain", metrics=[external_metric("drain_depth", average_value="10",
                                                          fallback={"replicas": 1, "strategy": "UseMax"})])
    h = await live.client.post(HPAS, body)
    earlier = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(seconds=200)
    h["status"] = {"currentReplicas": 3, "desiredReplicas": 3, "currentMetrics": [{"type": "External", "external": {
        "metric": {"name": "drain_depth"}, "current": {}, "fallbackStatus": "Normal",
        "firstFailureTime": format_time(earlier)}}]}
    await live.client.put(f"{HPAS}/drain/status", h)  # failing for 200 s already, as a restart finds it
    live.harness.external[(NS, "drain_depth")] = []
    await live.start_controller(window=0.5)

    [event] = await wait_until(lambda: events_for(live, "ExternalMetricFallbackActivated", "drain"), 10,
                               what="the activation event")
    assert event["message"] == ("external metric drain_depth has failed for 3m0s: using its fallback of 3 replicas "
                                "(UseMax of current 3 and fallback.replicas 1)")
    h = await hpa(live, "drain")
    assert queue_entry(h)["fallbackStatus"] == "Fallback"
    assert condition(h, "ExternalMetricFallbackActive")["status"] == "True"
    await asyncio.sleep(1.5)  # three windows of 0.5 s: Static would have scaled to 1 by now
    assert await replicas(live, "drain") == 3


async def test_hpa_fallback_counts_failed_syncs_in_status_across_a_restart(live):
    """KEP-5053: the count lives in status, so a second controller continues it; more than
    failureThreshold (2) failed syncs in a row scale to the fallback; a valid sync resets it."""
    await live.client.post(DEPLOY, deployment("batch", 2))
    body = hpa_manifest("batch", metrics=[external_metric("jobs", average_value="10")],
                        behavior={"fallback": {"replicas": 5, "failureThreshold": 2}})
    created = await live.client.post(HPAS, body)
    assert created["spec"]["behavior"]["fallback"] == {"failureThreshold": 2, "replicas": 5}
    live.harness.external[(NS, "jobs")] = [20_000]  # 20 over 2 pods at 10 each: steady at 2
    ctl = await live.start_controller(window=1.0)

    async def count() -> int:
        return (await hpa(live, "batch")).get("status", {}).get("consecutiveMetricRetrievalFailureCount", 0)

    await wait_until(lambda: _eq_attr(hpa(live, "batch"), "SucceededToComputeDesiredReplicas", "FallbackActive"), 10,
                     what="FallbackActive False while the metric answers")
    live.harness.external[(NS, "jobs")] = []  # the adapter answers nothing
    await wait_until(lambda: _eq(replicas(live, "batch"), 5), 10, what="the fallback's 5 replicas")
    await wait_until(lambda: _status_is(hpa(live, "batch"), 5), 5, what="status written after the scale")
    h = await hpa(live, "batch")
    assert h["status"]["consecutiveMetricRetrievalFailureCount"] >= 3
    assert (condition(h, "FallbackActive")["status"], condition(h, "FallbackActive")["reason"]) == (
        "True", "FallbackThresholdReached")

    # the recorder posts events beside the status write: wait for it
    [reached] = await wait_until(lambda: events_for(live, "FallbackThresholdReached"), 10,
                                 what="the FallbackThresholdReached event")
    assert reached["type"] == "Warning" and "using the fallback of 5 replicas" in reached["message"]

    await ctl.stop()  # another controller continues the stored count instead of starting over
    stored = await count()
    await live.start_controller(window=1.0)
    await wait_until(lambda: _gt(count(), stored), 10, what="the count continued past the stored one")

    live.harness.external[(NS, "jobs")] = [20_000]  # back: 20 over 5 pods = 4 per pod vs 10 -> 2
    await wait_until(lambda: _eq(count(), 0), 10, what="the count reset")
    assert condition(await hpa(live, "batch"), "FallbackActive")["status"] == "False"
    await wait_until(lambda: _eq(replicas(live, "batch"), 2), 10, what="back to 2 after the window")


async def _gt(coro, value) -> bool:
    return (await coro) > value
