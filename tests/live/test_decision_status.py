"""KEP-6107's `status.lastScaleDecision` on the embedded cluster: written by the controller the
embedded wiring configures, kept (not rewritten) while the decision means the same, rewritten
when its reason changes, shown by kubectl, and kept through autoscaling/v1 in an annotation."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess

import pytest

from pyhpa.api.conversion import DECISION_ANNOTATION
from pyhpa.controller.flags import with_decision_trace

from tests.builders import cpu_hpa, deployment
from .harness import run_embedded, wait_until
from .test_live import DEPLOY, HPAS, NS, SYNC, hpa, live  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow

V1_HPA = f"/apis/autoscaling/v1/namespaces/{NS}/horizontalpodautoscalers/web"


async def _decision(env) -> dict | None:
    return (await hpa(env)).get("status", {}).get("lastScaleDecision")


async def _reason_is(env, reason: str) -> bool:
    d = await _decision(env)
    return d is not None and d["reason"] == reason


async def _kubectl(env, *args: str) -> str:
    proc = await asyncio.create_subprocess_exec("kubectl", "--kubeconfig", env.kubeconfig, *args,
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def test_decision_is_written_kept_and_rewritten_on_a_new_reason(live):  # noqa: F811
    await live.client.post(DEPLOY, deployment("web", 2))
    await live.client.post(HPAS, cpu_hpa("web", "web", max_replicas=10))
    live.harness.total_cpu_milli[(NS, "web")] = 100  # 50% of request each: within tolerance
    ctl = await live.start_controller(configure=with_decision_trace)
    await wait_until(lambda: _reason_is(live, "WithinTolerance"), 15, what="the first decision")
    first = await hpa(live)
    decision = first["status"]["lastScaleDecision"]
    assert decision["currentReplicas"] == decision["desiredReplicas"] == decision["recommendedReplicas"] == 2
    assert decision["constraints"] == ["Tolerance"]
    assert decision["metrics"] == [{"metricIndex": 0, "proposedReplicas": 2, "status": "Used", "reason": "Computed"}]

    # Syncs that decide the same thing write nothing: same object, same decision time.
    passes = ctl.reconciles
    await wait_until(lambda: ctl.reconciles >= passes + 4, 15, what="more syncs")
    again = await hpa(live)
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert again["status"]["lastScaleDecision"] == decision

    # The reason changes (load far above target): the decision is rewritten.
    live.harness.total_cpu_milli[(NS, "web")] = 400
    await wait_until(lambda: _reason_is(live, "PolicyLimited") or _reason_is(live, "MetricRecommendation"),
                     15, what="a scale-up decision")
    changed = await _decision(live)
    assert changed["recommendedReplicas"] > 2 and changed["time"] >= decision["time"]

    if shutil.which("kubectl") is None:
        pytest.skip("kubectl not installed")
    # The controller keeps syncing while kubectl runs: kubectl shows the decision of before or
    # after its read.
    before = (await _decision(live))["reason"]
    shown = json.loads(await _kubectl(live, "get", "hpa", "web", "-o", "json"))
    after = (await _decision(live))["reason"]
    assert shown["status"]["lastScaleDecision"]["reason"] in (before, after)
    assert "lastScaleDecision:" in await _kubectl(live, "get", "hpa", "web", "-o", "yaml")
    explained = await _kubectl(live, "explain", "hpa.status.lastScaleDecision", "--api-version=autoscaling/v2")
    assert "KEP-6107" in explained and "reason" in explained
    v1 = json.loads(await _kubectl(live, "get", "--raw", V1_HPA))
    assert "lastScaleDecision" not in v1["status"]
    carried = json.loads(v1["metadata"]["annotations"][DECISION_ANNOTATION])
    assert carried == (await hpa(live))["status"]["lastScaleDecision"]


async def test_without_the_embedded_wiring_no_decision_is_written(live):  # noqa: F811
    await live.client.post(DEPLOY, deployment("web", 2))
    await live.client.post(HPAS, cpu_hpa("web", "web", max_replicas=10))
    live.harness.total_cpu_milli[(NS, "web")] = 400
    ctl = await live.start_controller()  # the flags' default: HPAStatusDecisionTrace off
    await wait_until(lambda: _scaled(live), 15, what="a scale-up")
    passes = ctl.reconciles
    await wait_until(lambda: ctl.reconciles >= passes + 2, 15, what="more syncs")
    assert "lastScaleDecision" not in (await hpa(live))["status"]
    assert ctl.decision(NS, "web")["lastScaleDecision"]["reason"] != ""  # still served at /debug/hpa


async def _scaled(env) -> bool:
    return (await hpa(env)).get("status", {}).get("desiredReplicas", 0) > 2


def test_pyhpa_run_embedded_writes_the_decision(tmp_path):
    """The real wiring: `pyhpa run --embedded` turns the gate on for the cluster it starts."""
    stored = run_embedded(tmp_path / "cluster", cpu_hpa("web", "web", max_replicas=10), duration="5s")
    decision = stored["status"]["lastScaleDecision"]
    assert decision["currentReplicas"] == 2 and decision["reason"]
    # the controller the embedded cluster runs writes under upstream's HPA controller's name
    status_writers = [e["manager"] for e in stored["metadata"]["managedFields"]
                      if e.get("subresource") == "status"]
    assert status_writers == ["kube-controller-manager"]
