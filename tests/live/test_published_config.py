"""`pyhpa run` publishes its effective flags (on its leader-election Lease and at /debug/config),
and `pyhpa explain`, `pyhpa snapshot | pyhpa reconcile` decide with them and say where each value
came from (docs/controller.md#published-configuration)."""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from tests.builders import cpu_hpa, deployment
from tests.offline.test_live_snapshot import pyhpa

from .harness import wait_until
from .test_live import DEPLOY, HPAS, NS, live  # noqa: F401  (fixture)
from .test_process import spawn, stop

pytestmark = pytest.mark.slow
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/pyhpa-horizontal-pod-autoscaler"


async def _published(env) -> dict | None:
    try:
        lease = await env.client.get(LEASE)
    except Exception:
        return None
    text = (lease["metadata"].get("annotations") or {}).get("pyhpa.io/controller-config")
    return json.loads(text) if text else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_explain_uses_the_running_controllers_flags_and_says_so(live, tmp_path):  # noqa: F811
    await live.client.post(DEPLOY, deployment("web", 2))
    await live.client.post(HPAS, cpu_hpa("web", "web", max_replicas=10))
    live.harness.total_cpu_milli[(NS, "web")] = 100
    port = _free_port()
    proc = spawn(live.kubeconfig, "--horizontal-pod-autoscaler-downscale-stabilization", "1m",
                 "--leader-elect-lease-duration", "3s", "--leader-elect-renew-deadline", "2s",
                 "--leader-elect-retry-period", "500ms", "--metrics-bind-address", f"127.0.0.1:{port}",
                 name="pyhpa-xyz", log=tmp_path / "ctl.log")
    try:
        await wait_until(lambda: _published(live), 30, what="the configuration on the Lease")
        doc = await _published(live)
        assert doc["identity"] == "pyhpa-xyz"
        assert doc["flags"]["horizontal-pod-autoscaler-downscale-stabilization"] == "1m0s"
        async with httpx.AsyncClient() as http:
            served = (await http.get(f"http://127.0.0.1:{port}/debug/config")).json()
        assert served["flags"] == doc["flags"] and served["identity"] == "pyhpa-xyz"

        # `pyhpa run --kubeconfig` (not the embedded start mode) finds status.lastScaleDecision
        # in the server's schema and writes it
        assert doc["flags"]["feature-gates"]["HPAStatusDecisionTrace"] is True

        async def decision():
            h = await live.client.get(f"{HPAS}/web")
            return h.get("status", {}).get("lastScaleDecision")

        assert (await wait_until(decision, 30, what="status.lastScaleDecision"))["reason"]

        code, text, err = await pyhpa("explain", "hpa/web", "-n", NS, "--kubeconfig", live.kubeconfig)
        assert code == 0, err
        assert "stabilization: scale-down window 60s" in text
        origin = "from the running controller pyhpa-xyz (Lease kube-system/pyhpa-horizontal-pod-autoscaler)"
        assert f"--horizontal-pod-autoscaler-downscale-stabilization=1m0s ({origin})" in text
        assert "assuming" not in err

        # an explicit flag still wins, and says so
        code, text, err = await pyhpa("explain", "hpa/web", "-n", NS, "--kubeconfig", live.kubeconfig,
                                      "--horizontal-pod-autoscaler-downscale-stabilization", "2m")
        assert code == 0, err
        assert "scale-down window 120s" in text
        assert "--horizontal-pod-autoscaler-downscale-stabilization=2m0s (from flags)" in text
        assert f"--horizontal-pod-autoscaler-tolerance=0.1 ({origin})" in text

        # the snapshot records it; reconcile of the snapshot uses it
        code, snapshot, err = await pyhpa("snapshot", "-n", NS, "--kubeconfig", live.kubeconfig)
        assert code == 0, err
        assert "kind: ControllerConfiguration" in snapshot
        code, _, err = await pyhpa("reconcile", "-f", "-", "--explain", stdin=snapshot.encode())
        assert code == 0, err
        assert f"--horizontal-pod-autoscaler-downscale-stabilization=1m0s ({origin})" in err
        assert "assuming" not in err
    finally:
        stop(proc)


async def test_without_a_published_configuration_explain_says_which_defaults_it_assumes(live):  # noqa: F811
    await live.client.post(DEPLOY, deployment("web", 2))
    await live.client.post(HPAS, cpu_hpa("web", "web", max_replicas=10))
    live.harness.total_cpu_milli[(NS, "web")] = 100
    code, text, err = await pyhpa("explain", "hpa/web", "-n", NS, "--kubeconfig", live.kubeconfig,
                                  "--horizontal-pod-autoscaler-tolerance", "0.2")
    assert code == 0, err
    notes = [ln for ln in err.splitlines() if "assuming" in ln]
    assert notes == ["note: no published controller configuration (Lease kube-system/pyhpa-horizontal-pod-autoscaler "
                     "not found): assuming --horizontal-pod-autoscaler-sync-period=15s, "
                     "--horizontal-pod-autoscaler-downscale-stabilization=5m0s, "
                     "--horizontal-pod-autoscaler-cpu-initialization-period=5m0s, "
                     "--horizontal-pod-autoscaler-initial-readiness-delay=30s, --feature-gates of pyhpa's own profile"]
    assert "scale-down window 300s" in text
    assert "--horizontal-pod-autoscaler-tolerance=0.2 (from flags)" in text
