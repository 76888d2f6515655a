"""KEP-3428 (suspend) and KEP-6003 (per-HPA sync period) in the live controller against the
embedded cluster, over HTTPS, in real (short) time."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.builders import cpu_hpa, deployment
from .harness import wait_until
from .test_live import DEPLOY, HPAS, NS, _eq, _eq_attr, condition, hpa, live, replicas  # noqa: F401 (fixture)

pytestmark = pytest.mark.slow

SUSPEND = "autoscaling.kubernetes.io/suspend"


async def annotate(env, value, name="web"):
    await env.client.merge_patch(f"{HPAS}/{name}", {"metadata": {"annotations": {SUSPEND: value}}})


async def test_suspend_stops_scaling_and_the_resume_keeps_the_window(live):
    await live.client.post(DEPLOY, deployment("web", 4))
    await live.client.post(HPAS, cpu_hpa("web", "web", utilization=50))
    live.harness.total_cpu_milli[(NS, "web")] = 200  # 4 pods at 50 %: steady at 4
    ctl = await live.start_controller(window=4.0)
    await wait_until(lambda: _eq_attr(hpa(live), "ValidMetricFound", "ScalingActive"), 10, what="steady at 4")

    await annotate(live, "true")
    await wait_until(lambda: _eq_attr(hpa(live), "Suspended", "ScalingActive"), 10, what="suspended")
    suspended_at = time.time()
    live.harness.total_cpu_milli[(NS, "web")] = 20  # would propose 1
    await asyncio.sleep(1.5)
    h = await hpa(live)
    assert await replicas(live) == 4
    assert condition(h, "ScalingActive")["message"] == \
        "scaling is suspended by the autoscaling.kubernetes.io/suspend annotation"
    assert (h["status"]["desiredReplicas"], h["status"].get("currentMetrics")) == (4, None)

    await annotate(live, None)  # merge patch null: the annotation is removed
    await wait_until(lambda: _eq_attr(hpa(live), "ScaleDownStabilized", "AbleToScale"), 10, what="stabilized")
    assert await replicas(live) == 4  # the recommendations of before the suspension still hold it
    remembered = ctl.state.get(f"{NS}/web").recommendations
    assert any(r.replicas == 4 and r.timestamp.timestamp() < suspended_at for r in remembered), remembered
    await wait_until(lambda: _eq(replicas(live), 1), 15, what="scale down once the window has passed")


def _record_passes(ctl) -> dict[str, list[float]]:
    """Start times of each key's reconciles (wrapping the controller's process)."""
    starts: dict[str, list[float]] = {}
    real = ctl.process

    async def process(key):
        starts.setdefault(key, []).append(time.monotonic())
        return await real(key)

    ctl.process = process
    return starts


async def test_each_hpa_is_reconciled_at_its_own_period(live):
    for name, behavior in (("plain", None), ("every2s", {"syncPeriodSeconds": 2})):
        await live.client.post(DEPLOY, deployment(name, 2))
        await live.client.post(HPAS, cpu_hpa(name, name, utilization=50, behavior=behavior))
        live.harness.total_cpu_milli[(NS, name)] = 100  # 2 pods at 50 %: steady
    ctl = await live.start_controller()
    starts = _record_passes(ctl)
    await asyncio.sleep(5.0)
    plain, every2s = starts.get(f"{NS}/plain", []), starts.get(f"{NS}/every2s", [])
    assert len(plain) >= 8, plain  # every 0.3 s (global), allowing for a busy machine
    assert 2 <= len(every2s) <= 3, every2s
    gaps = [b - a for a, b in zip(every2s, every2s[1:])]
    assert all(g >= 2.0 for g in gaps), gaps  # the period counts from the end of a pass


async def test_a_spec_change_is_acted_on_at_once_status_writes_are_not(live):
    await live.client.post(DEPLOY, deployment("web", 2))
    await live.client.post(HPAS, cpu_hpa("web", "web", utilization=50, behavior={"syncPeriodSeconds": 3600}))
    live.harness.total_cpu_milli[(NS, "web")] = 100
    ctl = await live.start_controller()
    starts = _record_passes(ctl)
    # the first pass comes one global period after the HPA is seen, not an hour later
    await wait_until(lambda: _eq_attr(hpa(live), "ValidMetricFound", "ScalingActive"), 10, what="first pass")
    await asyncio.sleep(1.5)  # its own status write came back as an update: not a reason to run
    assert len(starts.get(f"{NS}/web", [])) <= 1, starts

    # 200 %: proposes 8; the behavior's default scale-up policies allow max(2 + 4, 2 x 2) = 6
    live.harness.total_cpu_milli[(NS, "web")] = 400
    await live.client.merge_patch(f"{HPAS}/web", {"spec": {"maxReplicas": 5}})
    await wait_until(lambda: _eq(replicas(live), 5), 5, what="the spec change's pass")
    assert len(starts[f"{NS}/web"]) == 2
    await live.client.merge_patch(f"{HPAS}/web", {"spec": {"behavior": {"syncPeriodSeconds": 1}}})
    await asyncio.sleep(2.5)
    assert 3 <= len(starts[f"{NS}/web"]) <= 5, starts  # at once, then every second
