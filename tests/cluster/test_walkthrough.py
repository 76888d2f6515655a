"""The php-apache walkthrough on the embedded cluster, with the controller, in short real time.

A Deployment whose pods request 200m with a 500m limit, under far more load than they can take,
and an HPA at 50 %: the pods are throttled at their limit, so the HPA never sees more than
500m / 200m = 250 %; it scales to its maximum, more pods than the two small nodes hold, and the
ones that do not fit stay Pending with the scheduler's reason.
"""

from __future__ import annotations

import asyncio

import pytest

from pyhpa.adapters.kube.client import KubeClient, load_config
from pyhpa.cluster.embedded import EmbeddedCluster
from pyhpa.engine.config import ControllerConfig
from pyhpa.live.loop import ControllerOptions, HPAController
from tests.builders import cpu_hpa

pytestmark = pytest.mark.slow

SYNC = 0.3
NS = "default"
DEPLOY = f"/apis/apps/v1/namespaces/{NS}/deployments"
HPAS = f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers"
PODS = f"/api/v1/namespaces/{NS}/pods"

PHP_APACHE = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "php-apache", "annotations": {
        "sim.pyhpa.io/cpu": "20", "sim.pyhpa.io/pending-seconds": "0.2",
        "sim.pyhpa.io/startup-seconds": "0.4", "sim.pyhpa.io/termination-seconds": "0.2"}},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"run": "php-apache"}},
             "template": {"metadata": {"labels": {"run": "php-apache"}},
                          "spec": {"containers": [{
                              "name": "php-apache", "image": "registry.k8s.io/hpa-example",
                              "resources": {"requests": {"cpu": "200m"},
                                            "limits": {"cpu": "500m"}}}]}}}}

HPA = cpu_hpa("php-apache", namespace=None, max_replicas=12,
              # no 15 s policy period: the walkthrough reaches its maximum in seconds
              behavior={"scaleUp": {"stabilizationWindowSeconds": 0, "policies": [
                  {"type": "Percent", "value": 1000, "periodSeconds": 1}]}})


async def test_php_apache_stays_at_most_250_percent_and_outgrows_the_nodes(tmp_path):
    options = {"nodes": 2, "node_capacity": {"cpu": "1", "memory": "4Gi", "pods": "110"},
               "resolution": 0.5, "window": 1.0}
    async with EmbeddedCluster(tmp_path / "cluster", simulation_options=options) as cluster:
        client = KubeClient.from_config(load_config(str(cluster.kubeconfig_path)), qps=0)
        ctl_client = KubeClient.from_config(load_config(str(cluster.kubeconfig_path)), qps=0)
        ctl = HPAController(ctl_client, ControllerConfig(sync_period=SYNC),
                            ControllerOptions(sync_period=SYNC, workers=1))
        try:
            await client.post(DEPLOY, PHP_APACHE)
            await client.post(HPAS, HPA)
            await ctl.start()
            seen: list[int] = []
            pending: list[dict] = []
            for _ in range(150):  # at most ~30 s
                await asyncio.sleep(0.2)
                hpa = await client.get(f"{HPAS}/php-apache")
                seen += [m["resource"]["current"]["averageUtilization"]
                         for m in hpa.get("status", {}).get("currentMetrics") or []
                         if m.get("resource", {}).get("current", {}).get("averageUtilization")
                         is not None]
                pods = (await client.get(PODS, params={"labelSelector": "run=php-apache"}))["items"]
                pending = [p for p in pods if not p["spec"].get("nodeName")]
                if hpa["spec"]["maxReplicas"] == hpa.get("status", {}).get("desiredReplicas") \
                        and len(pods) == 12 and len(pending) == 2:
                    break
            assert seen and max(seen) <= 250, seen
            # the load is far above the request: the pods run near their limit (250 % once a full
            # metrics window passes at it; a quick scale-up may not leave them there that long)
            assert max(seen) >= 200, seen
            # 2 nodes of 1 CPU hold 10 pods of 200m: the other 2 wait, with the reason
            assert len(pending) == 2, pending
            for p in pending:
                cond = next(c for c in p["status"]["conditions"] if c["type"] == "PodScheduled")
                assert cond["reason"] == "Unschedulable"
                assert cond["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")
        finally:
            await ctl.stop()
            await ctl_client.close()
            await client.close()
