"""`pyhpa snapshot` of the embedded cluster, then `pyhpa reconcile` of it, agrees with what the
live controller decides on that state (its memory included: the Lease `pyhpa run` persists)."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest
import yaml

from tests.builders import cpu_hpa, deployment
from tests.live.harness import wait_until
from tests.live.test_live import DEPLOY, HPAS, NS, condition, hpa, live, replicas  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow

WINDOW = 60.0  # long enough that the states below hold while the test compares them
ONE_POD_PER_MINUTE = {"scaleUp": {"stabilizationWindowSeconds": 0,
                                  "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}
LEASE = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases/pyhpa-autoscaler-state"


async def pyhpa(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    """The console command in a child process (the cluster runs in this event loop)."""
    env = dict(os.environ, PYTHONPATH=os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pyhpa.cli", *args, env=env, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(stdin), 120)
    return proc.returncode or 0, out.decode(), err.decode()


async def persisted(env, name: str, key: str) -> bool:
    try:
        lease = await env.client.get(LEASE)
    except Exception:
        return False
    entries = json.loads(lease["metadata"].get("annotations", {}).get("pyhpa.io/autoscaler-state", "{}"))
    return bool(entries.get(name, {}).get(key))


def reconciled(stdout: str) -> dict:
    return next(i for i in json.loads(stdout)["items"] if i["kind"] == "HorizontalPodAutoscaler")


def reasons(h: dict) -> dict:
    return {c["type"]: (c["status"], c["reason"]) for c in h["status"].get("conditions") or []}


async def snapshot_and_reconcile(env, *drop_kinds: str) -> tuple[dict, str]:
    code, snap, err = await pyhpa("snapshot", "--kubeconfig", env.kubeconfig, "-n", NS)
    assert code == 0, err
    if drop_kinds:
        doc = yaml.safe_load(snap)
        doc["items"] = [i for i in doc["items"] if i["kind"] not in drop_kinds]
        snap = yaml.safe_dump(doc)
    code, out, err = await pyhpa("reconcile", "-f", "-", "-o", "json",
                                 "--horizontal-pod-autoscaler-downscale-stabilization", "1m", stdin=snap.encode())
    assert code == 0, err
    return reconciled(out), err


async def test_snapshot_then_reconcile_agrees_with_the_controller(live):  # noqa: F811
    await live.client.post(DEPLOY, deployment("web", 1))
    await live.client.post(HPAS, cpu_hpa("web", "web", max_replicas=10, behavior=ONE_POD_PER_MINUTE))
    live.harness.total_cpu_milli[(NS, "web")] = 400  # 400% of one pod's request: 8 pods wanted
    await live.start_controller(window=WINDOW, state_flush_period=0.3)

    # State 1: the scale-up policy (1 pod per minute) holds it at 2; the memory is what limits.
    await wait_until(lambda: _replicas(live, 2), 15, what="first scale-up")
    await wait_until(lambda: persisted(live, "web", "u"), 10, what="the persisted scale-up event")
    await wait_until(lambda: _desired(live, 2), 10, what="status of the limited pass")
    offline, err = await snapshot_and_reconcile(live)
    assert "no AutoscalerState" not in err and "no PodMetrics" not in err
    assert await replicas(live) == 2
    live_hpa = await hpa(live)
    assert offline["status"]["desiredReplicas"] == live_hpa["status"]["desiredReplicas"] == 2
    assert reasons(offline) == reasons(live_hpa)
    assert condition(offline, "ScalingLimited")["reason"] == "ScaleUpLimit"
    # Without the memory the same pass would have allowed one more pod (and says it is a guess).
    fresh, err = await snapshot_and_reconcile(live, "AutoscalerState")
    assert fresh["status"]["desiredReplicas"] == 3 and "no AutoscalerState" in err

    # State 2: the load falls; the scale-down stabilization window holds the count at 2.
    live.harness.total_cpu_milli[(NS, "web")] = 20
    await wait_until(lambda: _condition_reason(live, "AbleToScale", "ScaleDownStabilized"), 10,
                     what="stabilized scale-down")
    offline, _ = await snapshot_and_reconcile(live)
    live_hpa = await hpa(live)
    assert offline["status"]["desiredReplicas"] == live_hpa["status"]["desiredReplicas"] == 2
    assert reasons(offline) == reasons(live_hpa)
    assert await replicas(live) == 2


async def _replicas(env, n: int) -> bool:
    return await replicas(env) == n


async def _desired(env, n: int) -> bool:
    return (await hpa(env)).get("status", {}).get("desiredReplicas") == n


async def _condition_reason(env, ctype: str, reason: str) -> bool:
    return condition(await hpa(env), ctype).get("reason") == reason


async def test_snapshot_errors_are_one_line(live, tmp_path):  # noqa: F811
    code, _, err = await pyhpa("snapshot", "--kubeconfig", str(tmp_path / "missing"))
    assert code != 0 and len(err.strip().splitlines()) == 1 and "missing" in err
    bad = tmp_path / "unreachable"
    bad.write_text(open(live.kubeconfig).read().replace(f":{live.cluster.port}", ":1"))
    code, _, err = await pyhpa("snapshot", "--kubeconfig", str(bad))
    assert code != 0 and len(err.strip().splitlines()) == 1 and "cannot reach the API server" in err


async def test_snapshot_of_every_namespace_to_a_file(live, tmp_path):  # noqa: F811
    await live.client.post(DEPLOY, deployment("web", 2))
    await live.client.post(HPAS, cpu_hpa("web", "web"))
    live.harness.total_cpu_milli[(NS, "web")] = 100
    await wait_until(lambda: _pods(live, 2), 10, what="pods")
    out = tmp_path / "snap.yaml"
    code, stdout, err = await pyhpa("snapshot", "-A", "--kubeconfig", live.kubeconfig, "-o", str(out))
    assert code == 0 and stdout == "", err
    kinds = [i["kind"] for i in yaml.safe_load(out.read_text())["items"]]
    assert kinds == ["HorizontalPodAutoscaler", "Deployment", "Pod", "Pod", "PodMetrics", "PodMetrics"]
    code, _, err = await pyhpa("reconcile", "-f", str(out))
    assert code == 0 and "no PodMetrics" not in err and "no AutoscalerState" in err  # no controller ran


async def _pods(env, n: int) -> bool:
    return len((await env.client.get(f"/api/v1/namespaces/{NS}/pods"))["items"]) == n
