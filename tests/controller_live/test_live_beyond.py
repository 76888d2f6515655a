"""KEP-3428 (suspend) and KEP-6003 (per-HPA sync period) in the live controller against the
embedded cluster, over HTTPS, in real (short) time."""

from __future__ import annotations

import asyncio
import time

import pytest

from .harness import cpu_hpa, deployment, wait_until
from .test_live import DEPLOY, HPAS, NS, _eq, _eq_attr, condition, hpa, live, replicas  # noqa: F401 (fixture)

pytestmark = pytest.mark.slow

SUSPEND = "autoscaling.kubernetes.io/suspend"


async def annotate(env, value, name="web"):
    await env.client.merge_patch(f"{HPAS}/{name}", {"metadata": {"annotations": {SUSPEND: value}}})


async def test_suspend_stops_scaling_and_the_resume_keeps_the_window(live):
    await live.client.post(DEPLOY, deployment("web", 4))
    await live.client.post(HPAS, cpu_hpa("web", "web", util=50))
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
