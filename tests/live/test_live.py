"""The controller against a freshly started embedded cluster, over HTTPS, in real (short) time.

Sync periods of 0.3 s and stabilization windows of a few seconds keep each test to seconds.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from types import SimpleNamespace

import pytest

from pyhpa.adapters.kube.client import KubeClient, load_config
from pyhpa.cluster.embedded import EmbeddedCluster
from pyhpa.live.loop import ControllerOptions, HPAController
from pyhpa.engine.config import ControllerConfig

from tests.builders import cpu_hpa, deployment, external_metric
from tests.builders import hpa as hpa_manifest
from .harness import FakeNodeAndMetrics, wait_until

pytestmark = pytest.mark.slow

SYNC = 0.3
NS = "default"
DEPLOY = f"/apis/apps/v1/namespaces/{NS}/deployments"
HPAS = f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers"


@pytest.fixture
async def live(tmp_path):
    # simulate=False: FakeNodeAndMetrics plays kubelet and metrics here, not the workload simulation
    async with EmbeddedCluster(tmp_path / "cluster", port=0, simulate=False) as cluster:
        harness = FakeNodeAndMetrics(cluster).start()
        client = KubeClient.from_config(load_config(str(cluster.kubeconfig_path)), qps=0)
        env = SimpleNamespace(cluster=cluster, harness=harness, client=client,
                              kubeconfig=str(cluster.kubeconfig_path), controllers=[])

        async def start_controller(window: float = 3.0, configure=lambda config: config, **kw):
            ctl_client = KubeClient.from_config(load_config(env.kubeconfig), qps=0)
            config = configure(ControllerConfig(sync_period=SYNC, downscale_stabilization=window))
            ctl = HPAController(ctl_client, config, ControllerOptions(sync_period=SYNC, workers=2, **kw))
            await ctl.start()
            env.controllers.append(ctl)
            return ctl

        env.start_controller = start_controller
        try:
            yield env
        finally:
            for ctl in env.controllers:
                await ctl.stop()
                await ctl.client.close()
            await harness.stop()
            await client.close()


async def replicas(env, name="web") -> int:
    return (await env.client.get(f"{DEPLOY}/{name}"))["spec"]["replicas"]


async def hpa(env, name="web") -> dict:
    return await env.client.get(f"{HPAS}/{name}")


def condition(h: dict, ctype: str) -> dict:
    return next((c for c in h.get("status", {}).get("conditions") or [] if c["type"] == ctype), {})


async def test_cpu_load_scales_up_then_down_after_the_stabilization_window(live):
    await live.client.post(DEPLOY, deployment("web", 1))
    await live.client.post(HPAS, cpu_hpa("web", "web", utilization=50))
    ctl = await live.start_controller(window=3.0)
    live.harness.total_cpu_milli[(NS, "web")] = 200  # 1 pod at 200% of a 100m request -> 4 pods at 50%
    await wait_until(lambda: replicas(live), 10, what="deployment readable")
    await wait_until(lambda: _eq(replicas(live), 4), 10, what="scale up to 4")
    await wait_until(lambda: _status_is(hpa(live), 4), 5, what="status written")
    assert condition(await hpa(live), "ScalingActive")["reason"] == "ValidMetricFound"
    # a pass at 4 replicas on target before the drop: upstream labels a metric computation by its
    # proposal against the status' currentReplicas, so "none" needs a status that already says 4
    none_series = 'metric_computation_total{action="none",error="none",metric_type="Resource"}'
    await wait_until(lambda: none_series in ctl.metrics.render().decode(), 5, what="a steady pass at 4")

    live.harness.total_cpu_milli[(NS, "web")] = 20  # 5% per pod -> proposal 1
    dropped = time.monotonic()
    await wait_until(lambda: _eq_attr(hpa(live), "ScaleDownStabilized"), 5, what="stabilized condition")
    assert await replicas(live) == 4  # held by the window
    await wait_until(lambda: _eq(replicas(live), 1), 10, what="scale down to 1")
    held = time.monotonic() - dropped
    assert held >= 3.0 - SYNC, f"scaled down after {held:.1f}s, inside the 3 s window"
    wanted = {"New size: 4; reason: cpu resource utilization (percentage of request) above target",
              "New size: 1; reason: All metrics below target"}

    async def rescale_events():
        events = (await live.client.get(f"/api/v1/namespaces/{NS}/events"))["items"]
        found = [e for e in events if e["reason"] == "SuccessfulRescale"]
        return found if {e["message"] for e in found} >= wanted else None

    # Events leave through the recorder's queue, so the last one may trail the scale it reports.
    rescales = await wait_until(rescale_events, 5, what=f"events {sorted(wanted)}")
    assert all(e["source"]["component"] == "horizontal-pod-autoscaler" for e in rescales)
    assert ctl.reconciles > 5
    text = ctl.metrics.render().decode()
    assert 'horizontal_pod_autoscaler_controller_reconciliations_total{action="scale_up",error="none"} 1.0' in text
    assert 'horizontal_pod_autoscaler_controller_reconciliations_total{action="scale_down",error="none"} 1.0' in text
    assert 'horizontal_pod_autoscaler_controller_desired_replicas{hpa_name="web",namespace="default"} 1.0' in text
    assert 'metric_computation_total{action="none",error="none",metric_type="Resource"}' in text
    assert "pyhpa_api_requests_per_hpa_per_sync_period" in text


async def test_external_metric_scales_to_zero_and_back(live):
    await live.client.post(DEPLOY, deployment("worker", 1))
    body = hpa_manifest("worker", min_replicas=0, max_replicas=5,
                        behavior={"scaleDown": {"stabilizationWindowSeconds": 0}},
                        metrics=[external_metric("queue_depth", average_value="10")])
    await live.client.post(HPAS, body)
    live.harness.external[(NS, "queue_depth")] = [30_000]  # 30 -> 3 replicas at 10 each
    await live.start_controller(window=1.0)
    await wait_until(lambda: _eq(replicas(live, "worker"), 3), 10, what="3 workers")
    live.harness.external[(NS, "queue_depth")] = [0]
    await wait_until(lambda: _eq(replicas(live, "worker"), 0), 10, what="scaled to zero")
    await wait_until(lambda: _status_is(hpa(live, "worker"), 0), 5, what="status written after the scale")
    h = await hpa(live, "worker")
    assert condition(h, "ScaledToZero")["status"] == "True"
    live.harness.external[(NS, "queue_depth")] = [20_000]
    await wait_until(lambda: _eq(replicas(live, "worker"), 2), 10, what="scaled from zero to 2")
    await wait_until(lambda: _status_is(hpa(live, "worker"), 2), 5, what="status written after the scale")
    assert condition(await hpa(live, "worker"), "ScaledToZero")["status"] == "False"


async def test_metrics_outage_blocks_scale_down(live):
    await live.client.post(DEPLOY, deployment("web", 4))
    await live.client.post(HPAS, cpu_hpa("web", "web", utilization=50))
    live.harness.total_cpu_milli[(NS, "web")] = 200  # 4 pods at 50%: steady
    await live.start_controller(window=1.0)
    await wait_until(lambda: _eq_attr(hpa(live), "ValidMetricFound", "ScalingActive"), 10, what="steady")
    live.harness.metrics_down = True
    live.harness.total_cpu_milli[(NS, "web")] = 0
    await wait_until(lambda: _eq_attr(hpa(live), "FailedGetResourceMetric", "ScalingActive"), 10,
                     what="metrics failure noticed")
    await asyncio.sleep(3.0)  # three windows
    assert await replicas(live) == 4
    h = await hpa(live)
    assert condition(h, "ScalingActive")["status"] == "False"
    assert "unable to fetch metrics from resource metrics API" in condition(h, "ScalingActive")["message"]
    live.harness.metrics_down = False
    await wait_until(lambda: _eq(replicas(live), 1), 10, what="scale down once metrics are back")


async def test_target_scaled_to_zero_by_hand_puts_the_hpa_in_maintenance(live):
    await live.client.post(DEPLOY, deployment("web", 2))
    await live.client.post(HPAS, cpu_hpa("web", "web", utilization=50))
    live.harness.total_cpu_milli[(NS, "web")] = 400
    await live.start_controller(window=1.0)
    await wait_until(lambda: _eq(replicas(live), 8), 10, what="scale up to 8")
    dep = await live.client.get(f"{DEPLOY}/web")
    dep["spec"]["replicas"] = 0
    await live.client.put(f"{DEPLOY}/web", dep)
    await wait_until(lambda: _eq_attr(hpa(live), "ScalingDisabled", "ScalingActive"), 10, what="disabled")
    await asyncio.sleep(1.0)
    assert await replicas(live) == 0
    h = await hpa(live)
    assert condition(h, "ScalingActive")["message"] == \
        "scaling is disabled since the replica count of the target is zero"
    assert h["status"]["desiredReplicas"] == 0


async def test_conflicting_writes_to_the_deployment_are_survived(live):
    """Another writer updates the Deployment between the controller's read of the scale and its
    write: the PUT must get a 409, and the controller must re-read and re-apply its change."""
    from pyhpa.cluster.apiserver import resources as R
    from pyhpa.controller.ports import ConflictError

    await live.client.post(DEPLOY, deployment("web", 1))
    await live.client.post(HPAS, cpu_hpa("web", "web", utilization=50))
    live.harness.total_cpu_milli[(NS, "web")] = 300  # 300% of one pod's request -> 6 pods at 50%
    ctl = await live.start_controller(window=1.0)
    scales = ctl.scales
    real_update = scales.update_scale
    seen: list[str] = []  # what each PUT of the scale met

    async def racing_update(namespace, ref, scale):
        if not seen:  # the first write races a writer that got there first
            def touch(d):
                d["metadata"].setdefault("annotations", {})["meddler"] = "was here"
                return d
            live.cluster.store.guaranteed_update(R.DEPLOYMENTS.key, NS, "web", touch)
        try:
            out = await real_update(namespace, ref, scale)
        except ConflictError:
            seen.append(f"409:{scale.spec.replicas}")
            raise
        seen.append(f"ok:{scale.spec.replicas}")
        return out

    scales.update_scale = racing_update
    gets_before = _count(ctl, "get", "deployments/scale")
    await wait_until(lambda: _eq(replicas(live), 6), 15, what="scale up despite the conflict")
    # a real 409, then the same change re-applied (1 -> 4 is the legacy scale-up limit; 6 later)
    assert seen[:2] == ["409:4", "ok:4"], seen
    assert _count(ctl, "get", "deployments/scale") > gets_before  # re-read from the server, not the cache
    dep = await live.client.get(f"{DEPLOY}/web")
    assert dep["metadata"]["annotations"]["meddler"] == "was here"  # the other write is kept
    await wait_until(lambda: _status_is(hpa(live), 6), 5, what="status written")

    async def reasons() -> list[str]:  # events are posted beside the status write, not before it
        events = (await live.client.get(f"/api/v1/namespaces/{NS}/events"))["items"]
        return [e["reason"] for e in events] if any(e["reason"] == "SuccessfulRescale" for e in events) else []

    assert "FailedRescale" not in await wait_until(reasons, 5, what="the SuccessfulRescale event")


def _count(ctl, verb, resource):
    return sum(n for k, n in ctl.client.counter.snapshot().items() if k.verb == verb and k.resource == resource)


async def test_memory_of_deleted_hpas_is_dropped_and_pruned(live):
    import json

    lease_path = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases/pyhpa-autoscaler-state"

    async def remembered():
        try:
            lease = await live.client.get(lease_path)
        except Exception:
            return set()
        return set(json.loads(lease["metadata"]["annotations"]["pyhpa.io/autoscaler-state"]))

    for name in ("web", "gone"):
        await live.client.post(DEPLOY, deployment(name, 1))
        await live.client.post(HPAS, cpu_hpa(name, name, utilization=50))
        live.harness.total_cpu_milli[(NS, name)] = 50
    ctl = await live.start_controller()
    await wait_until(lambda: _eq(remembered(), {"web", "gone"}), 10, what="both HPAs remembered")
    await live.client.delete(f"{HPAS}/web")  # deleted while the controller runs: forgotten at once
    await wait_until(lambda: _eq(remembered(), {"gone"}), 10, what="web forgotten")
    await ctl.stop()
    await ctl.client.close()
    live.controllers.remove(ctl)
    await live.client.delete(f"{HPAS}/gone")  # deleted while no controller runs
    assert await remembered() == {"gone"}
    await live.start_controller()  # prunes once its HPA cache has synced
    await wait_until(lambda: _eq(remembered(), set()), 10, what="gone pruned")


async def test_kubectl_describe_shows_conditions_and_events(live):
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl not installed")
    await live.client.post(DEPLOY, deployment("web", 1))
    await live.client.post(HPAS, cpu_hpa("web", "web", utilization=50))
    live.harness.total_cpu_milli[(NS, "web")] = 200
    await live.start_controller()
    await wait_until(lambda: _eq(replicas(live), 4), 10, what="scale up")
    await asyncio.sleep(2 * SYNC)
    proc = await asyncio.create_subprocess_exec(
        "kubectl", "--kubeconfig", live.kubeconfig, "describe", "hpa", "web",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    text = out.decode()
    assert proc.returncode == 0, err.decode()
    assert "AbleToScale" in text and "ScalingActive" in text and "ValidMetricFound" in text
    assert "SuccessfulRescale" in text and "horizontal-pod-autoscaler" in text
    assert "New size: 4; reason: cpu resource utilization (percentage of request) above target" in text


async def _eq(coro, value):
    return (await coro) == value


async def _eq_attr(hpa_coro, reason, ctype=None):
    h = await hpa_coro
    conds = h.get("status", {}).get("conditions") or []
    return any(c.get("reason") == reason and (ctype is None or c["type"] == ctype) for c in conds)


async def _status_is(hpa_coro, desired):
    h = await hpa_coro
    return h.get("status", {}).get("desiredReplicas") == desired
