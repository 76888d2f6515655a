"""One decision, three ways: on the embedded cluster, `pyhpa snapshot` taken between two syncs of
the live controller, then `pyhpa reconcile` of it and `pyhpa explain`, agree with the controller's
next sync on the desired replicas, the conditions and the KEP-6107 reason, over random workloads,
loads and behaviors.

The controller runs on a virtual clock (whole seconds, handed to the offline pass as `--now`) and
its syncs are driven one by one, its memory flushed to its Lease before each snapshot: what
`pyhpa run` persists at the end of a flush period, so the comparison has no timing race.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from pyhpa.adapters.kube.client import KubeClient, load_config
from pyhpa.api.loader import Document
from pyhpa.engine.config import ControllerConfig
from pyhpa.engine.trace import kep6107_decision
from pyhpa.live.loop import ControllerOptions, HPAController
from pyhpa.offline.explain import explain_hpa
from pyhpa.offline.live_snapshot import collect_snapshot
from pyhpa.offline.snapshot import reconcile_snapshot

from tests.builders import cpu_hpa, deployment
from .harness import wait_until
from .test_live import DEPLOY, HPAS, NS, live  # noqa: F401  (fixture)

pytestmark = [pytest.mark.slow, pytest.mark.long(seconds=40)]

NAMES = ("alpha", "beta", "gamma", "delta")
STEPS = 50  # x 4 HPAs: 200 states


def random_behavior(rng: random.Random) -> dict[str, Any] | None:
    if rng.random() < 0.25:
        return None  # the legacy path (no behavior)

    def rules() -> dict[str, Any]:
        out: dict[str, Any] = {"stabilizationWindowSeconds": rng.choice([0, 0, 15, 30, 60, 120])}
        out["policies"] = [{"type": rng.choice(["Pods", "Percent"]),
                            "value": rng.choice([1, 2, 3, 50, 100]),
                            "periodSeconds": rng.choice([15, 30, 60, 120])} for _ in range(rng.randint(1, 2))]
        out["selectPolicy"] = rng.choice(["Max", "Min", "Max"])
        return out

    return {"scaleUp": rules(), "scaleDown": rules()}


async def test_snapshot_reconcile_explain_and_the_controller_agree(live):  # noqa: F811
    rng = random.Random(6107)
    clock = [datetime.now(timezone.utc).replace(microsecond=0)]
    config = ControllerConfig(sync_period=15.0, downscale_stabilization=60.0)
    client = KubeClient.from_config(load_config(live.kubeconfig), qps=0)
    ctl = HPAController(client, config, ControllerOptions(sync_period=3600, workers=1), clock=lambda: clock[0])
    for name in NAMES:
        await live.client.post(DEPLOY, deployment(name, rng.randint(1, 4)))
        await live.client.post(HPAS, cpu_hpa(name, name, min_replicas=rng.randint(1, 2), max_replicas=rng.randint(5, 12),
                                             utilization=rng.choice([30, 50, 80]), behavior=random_behavior(rng)))
        live.harness.total_cpu_milli[(NS, name)] = rng.randint(0, 800)
    await ctl.state.load()
    ctl.pod_informer.start()
    ctl.hpa_informer.start()
    compared = 0
    seen: dict[str, int] = {}
    try:
        await ctl._wait_for_caches()
        for step in range(STEPS):
            for name in NAMES:
                if rng.random() < 0.4:
                    live.harness.total_cpu_milli[(NS, name)] = rng.randint(0, 800)
            await settled(live, ctl)
            await ctl.state.flush()
            ctl.shared_pod_metrics.cache.invalidate()  # a new sync period: the controller lists anew
            snap = await collect_snapshot(client, NS)
            now = clock[0]
            docs = [Document("<cluster>", i, raw) for i, raw in enumerate(snap.items)]
            offline = {(i["metadata"]["name"]): i for i in reconcile_snapshot(docs, config, now).output["items"]
                       if i["kind"] == "HorizontalPodAutoscaler"}
            for name in NAMES:
                key = f"{NS}/{name}"
                explained = explain_hpa(snap.items, key, config, now, key in snap.state_keys).to_json()
                await ctl.process(key)
                trace, generation = ctl.last_traces[key]
                live_decision = kep6107_decision(trace, generation)
                want = offline[name]["status"]
                where = f"step {step}, {name}: offline {want}, live {live_decision}"
                assert want["desiredReplicas"] == trace.desired_replicas == explained["desiredReplicas"], where
                assert explained == live_decision | {"time": explained["time"]}, where
                live_hpa = await live.client.get(f"{HPAS}/{name}")
                assert reasons(want) == reasons(live_hpa["status"]), where
                compared += 1
                seen[live_decision["reason"]] = seen.get(live_decision["reason"], 0) + 1
            clock[0] += timedelta(seconds=rng.choice([5, 10, 15, 15, 30, 45]))
    finally:
        await ctl.stop()
        await client.close()
    assert compared == STEPS * len(NAMES)
    # the random states reach every reason a CPU-scaled Deployment can have
    assert {"MetricRecommendation", "WithinTolerance", "Stabilized", "PolicyLimited", "ReplicaLimit"} <= set(seen)


def reasons(status: dict) -> dict:
    return {c["type"]: (c["status"], c["reason"]) for c in status.get("conditions") or []}


async def settled(env, ctl: HPAController) -> None:
    """Every Deployment has its pods and status, and the controller's caches have seen them."""
    async def ready() -> bool:
        for name in NAMES:
            dep = await env.client.get(f"{DEPLOY}/{name}")
            want = dep["spec"]["replicas"]
            pods = await env.client.get(f"/api/v1/namespaces/{NS}/pods",
                                        params={"labelSelector": f"app={name}"})
            if len(pods["items"]) != want or dep.get("status", {}).get("replicas") != want:
                return False
            if len([p for p in ctl.pod_informer.cache.values() if p.metadata.labels.get("app") == name]) != want:
                return False
            cached = ctl.scales.informers.get("Deployment")
            wl = cached.get(NS, name) if cached is not None else None
            if wl is not None and wl.metadata.resource_version != dep["metadata"]["resourceVersion"]:
                return False
            hpa = await env.client.get(f"{HPAS}/{name}")
            mine = ctl.hpa_informer.get(NS, name)
            if mine is None or mine.metadata.resource_version != hpa["metadata"]["resourceVersion"]:
                return False
        return True

    await wait_until(ready, 20, interval=0.05, what="settled cluster")
