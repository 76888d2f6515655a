"""`pyhpa explain hpa/NAME` says only what concerns that HPA, and a server it cannot reach is named."""

from __future__ import annotations

import pytest

from tests.builders import cpu_hpa, deployment
from tests.offline.test_live_snapshot import pyhpa

from .test_live import DEPLOY, HPAS, NS, live  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow


async def test_explain_leaves_out_warnings_about_other_hpas(live):  # noqa: F811
    await live.client.post(DEPLOY, deployment("web", 2))
    await live.client.post(HPAS, cpu_hpa("web", "web"))
    other = cpu_hpa("rollout", "canary")
    other["spec"]["scaleTargetRef"] = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "canary"}
    await live.client.post(HPAS, other)
    code, _, err = await pyhpa("snapshot", "-n", NS, "--kubeconfig", live.kubeconfig)
    assert code == 0 and f"{NS}/rollout: scale target argoproj.io/v1alpha1 Rollout canary" in err
    code, text, err = await pyhpa("explain", "hpa/web", "-n", NS, "--kubeconfig", live.kubeconfig)
    assert code == 0, err
    assert "rollout" not in err and "warning" not in err
    assert text.startswith(f"HorizontalPodAutoscaler {NS}/web")


async def test_an_unreachable_server_is_named(live, tmp_path):  # noqa: F811
    bad = tmp_path / "unreachable"
    bad.write_text(open(live.kubeconfig).read().replace(f":{live.cluster.port}", ":1"))
    for command in (("explain", "hpa/web"), ("snapshot",)):
        code, _, err = await pyhpa(*command, "--kubeconfig", str(bad))
        lines = err.strip().splitlines()
        assert code == 1 and len(lines) == 1, err
        assert "cannot reach the API server at https://127.0.0.1:1:" in lines[0]
