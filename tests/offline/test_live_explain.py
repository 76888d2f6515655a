"""`pyhpa explain` of a live HPA on the embedded cluster: the arithmetic, the pods, the window,
the policies and a KEP-6107 reason that agree with the controller's own decision."""

from __future__ import annotations

import json

import pytest

from tests.builders import cpu_hpa, deployment
from tests.live.harness import wait_until
from tests.live.test_live import DEPLOY, HPAS, NS, hpa, live  # noqa: F401  (fixture)
from tests.offline.test_live_snapshot import ONE_POD_PER_MINUTE, WINDOW, _desired, persisted, pyhpa

pytestmark = pytest.mark.slow


async def test_explain_shows_the_arithmetic_and_agrees_with_the_controller(live):  # noqa: F811
    await live.client.post(DEPLOY, deployment("web", 1))
    await live.client.post(HPAS, cpu_hpa("web", "web", max_replicas=10, behavior=ONE_POD_PER_MINUTE))
    live.harness.total_cpu_milli[(NS, "web")] = 400  # 8 pods wanted; the policy allows one a minute
    await live.start_controller(window=WINDOW, state_flush_period=0.3)
    await wait_until(lambda: persisted(live, "web", "u"), 15, what="the persisted scale-up event")
    await wait_until(lambda: _desired(live, 2), 10, what="status of the limited pass")

    code, text, err = await pyhpa("explain", "hpa/web", "-n", NS, "--kubeconfig", live.kubeconfig,
                                  "--horizontal-pod-autoscaler-downscale-stabilization", "1m")
    assert code == 0, err
    print(text)
    assert "controller memory: the state `pyhpa run` persists" in text
    assert "cpu resource utilization (percentage of request)" in text
    assert "current 200% of request vs target 50%" in text  # 400m over two 100m pods
    assert "tolerance band [0.9, 1.1]: ratio 4.000 outside: scale" in text
    assert ("formula: usage 400m / requests 200m over 2 pods = 200% of request; ratio 200% / 50% = 4.000; "
            "ceil(ratio × 2 ready pods) = 8") in text
    assert "proposal: 8 replicas" in text
    pod_lines = [ln for ln in text.splitlines() if ln.startswith("    web-")]
    assert len(pod_lines) == 2 and all(" ready " in ln and "100m" in ln for ln in pod_lines)
    assert "Pods 1 per 60s: events in the period: +1 at" in text and "allows 2" in text
    assert "decision: keep 2 replicas, reason PolicyLimited (constraints: ScalingPolicy)" in text
    assert "this pass adds 8 replicas" in text and "leaves the scale-down window at" in text

    code, out, err = await pyhpa("explain", "web", "-n", NS, "--kubeconfig", live.kubeconfig, "-o", "json")
    assert code == 0, err
    decision = json.loads(out)
    # observedGeneration only when the API server sets generations (the HPAGeneration gate)
    assert set(decision) - {"observedGeneration"} == {"time", "currentReplicas", "recommendedReplicas",
                                                     "desiredReplicas", "reason", "metrics", "constraints"}
    live_hpa = await hpa(live)
    assert decision["desiredReplicas"] == live_hpa["status"]["desiredReplicas"] == 2
    assert decision["recommendedReplicas"] == 8 and decision["reason"] == "PolicyLimited"
    assert decision["constraints"] == ["ScalingPolicy"]
    assert decision["metrics"] == [{"metricIndex": 0, "proposedReplicas": 8, "status": "Used", "reason": "Computed"}]


async def test_explain_without_persisted_memory_says_so(live):  # noqa: F811
    await live.client.post(DEPLOY, deployment("web", 2))
    await live.client.post(HPAS, cpu_hpa("web", "web", max_replicas=10))
    live.harness.total_cpu_milli[(NS, "web")] = 100  # 50% each: within tolerance
    await wait_until(lambda: _pods_exist(live), 10, what="pods")
    code, text, err = await pyhpa("explain", "hpa/web", "-n", NS, "--kubeconfig", live.kubeconfig)
    assert code == 0, err
    assert "no controller history: a fresh controller's view" in text
    assert "decision: keep 2 replicas, reason WithinTolerance (constraints: Tolerance)" in text


async def _pods_exist(env) -> bool:
    return len((await env.client.get(f"/api/v1/namespaces/{NS}/pods"))["items"]) == 2


async def test_bad_input_is_one_line(live, tmp_path):  # noqa: F811
    code, _, err = await pyhpa("explain", "hpa/nope", "-n", NS, "--kubeconfig", live.kubeconfig)
    assert code != 0 and err.strip().splitlines() == ['error: horizontalpodautoscaler "nope" not found in namespace "default"']
    code, _, err = await pyhpa("explain", "deploy/web", "--kubeconfig", live.kubeconfig)
    assert code != 0 and len(err.strip().splitlines()) == 1
    bad = tmp_path / "unreachable"
    bad.write_text(open(live.kubeconfig).read().replace(f":{live.cluster.port}", ":1"))
    code, _, err = await pyhpa("explain", "hpa/web", "--kubeconfig", str(bad))
    assert code != 0 and len(err.strip().splitlines()) == 1 and "cannot reach the API server" in err


async def test_the_running_controller_serves_its_latest_decision(live):  # noqa: F811
    import httpx

    from pyhpa.live.health import build_app

    await live.client.post(DEPLOY, deployment("web", 1))
    await live.client.post(HPAS, cpu_hpa("web", "web", max_replicas=10, behavior=ONE_POD_PER_MINUTE))
    live.harness.total_cpu_milli[(NS, "web")] = 400
    ctl = await live.start_controller(window=WINDOW)
    await wait_until(lambda: _desired(live, 2), 15, what="the limited pass")
    app = build_app(lambda: b"", lambda: (True, ""), None, ctl.decision)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://x") as http:
        found = await http.get(f"/debug/hpa/{NS}/web")
        missing = await http.get(f"/debug/hpa/{NS}/nope")
    assert found.status_code == 200 and missing.status_code == 404
    body = found.json()
    assert body["hpa"] == f"{NS}/web"
    assert body["lastScaleDecision"]["reason"] == "PolicyLimited"
    assert body["lastScaleDecision"]["desiredReplicas"] == 2 and body["trace"]["desiredReplicas"] == 2
    assert any("scale-up rate limited to 2" in line for line in body["explain"])


async def test_refused_credentials_and_rbac_are_one_line(live, tmp_path):  # noqa: F811
    from starlette.responses import JSONResponse

    await live.client.post(DEPLOY, deployment("web", 1))
    await live.client.post(HPAS, cpu_hpa("web", "web"))
    text = open(live.kubeconfig).read()
    token = live.cluster.server.token
    assert token and token in text
    bad = tmp_path / "bad-token"
    bad.write_text(text.replace(token, "not-the-token"))
    code, _, err = await pyhpa("explain", "hpa/web", "-n", NS, "--kubeconfig", str(bad))
    assert code != 0 and len(err.strip().splitlines()) == 1 and "unauthorized (401)" in err

    inner = live.cluster.server.handle

    async def no_pods(request):  # an RBAC role without `list pods`
        if request.url.path == f"/api/v1/namespaces/{NS}/pods":
            return JSONResponse({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden",
                                 "code": 403, "message": 'pods is forbidden: User "tenant" cannot list resource '
                                                         '"pods" in API group "" in the namespace "default"'},
                                status_code=403)
        return await inner(request)

    live.cluster.server.handle = no_pods
    try:
        code, _, err = await pyhpa("explain", "hpa/web", "-n", NS, "--kubeconfig", live.kubeconfig)
    finally:
        live.cluster.server.handle = inner
    assert code != 0 and len(err.strip().splitlines()) == 1
    assert "forbidden (403, RBAC)" in err and "cannot list resource" in err
