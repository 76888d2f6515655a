"""The adapter's raw metrics reads against the embedded cluster's own metrics APIs (its workload
simulation): resource, custom pods, custom object and external metrics, URL grammar included."""

from __future__ import annotations

import asyncio

import pytest

from pyhpa.adapters.kube.client import KubeClient, load_config
from pyhpa.adapters.kube.discovery import Discovery
from pyhpa.adapters.kube.metrics_api import MetricsApi, SharedPodMetrics
from pyhpa.adapters.kube.ports import KubeMetrics
from pyhpa.api.selectors import Selector
from pyhpa.api.types import CrossVersionObjectReference
from pyhpa.cluster.embedded import EmbeddedCluster
from pyhpa.controller.ports import MetricsError

from tests.builders import deployment

pytestmark = pytest.mark.slow


async def test_all_four_metric_sources_through_the_embedded_metrics_apis(tmp_path):
    async with EmbeddedCluster(tmp_path / "c", port=0) as cluster:
        client = KubeClient.from_config(load_config(str(cluster.kubeconfig_path)), qps=0)
        try:
            dep = deployment("web", 2)
            # Ready at creation (the cluster's default is 5 s): every scrape window sees full load
            dep["metadata"]["annotations"] = {"sim.pyhpa.io/metric.qps": "100", "sim.pyhpa.io/cpu": "300m",
                                              "sim.pyhpa.io/startup-seconds": "0"}
            await client.post("/apis/apps/v1/namespaces/default/deployments", dep)
            await client.post("/apis/pyhpa.io/v1alpha1/namespaces/default/externalmetrics", {
                "apiVersion": "pyhpa.io/v1alpha1", "kind": "ExternalMetric",
                "metadata": {"name": "q", "namespace": "default"},
                "spec": {"name": "queue", "labels": {"queue": "jobs"}, "value": "30"}})
            discovery = Discovery(client)
            api = MetricsApi(client, discovery)
            metrics = KubeMetrics(api, SharedPodMetrics(api, ttl=0.0))
            pods_sel = Selector.parse("app=web")
            for _ in range(60):  # the simulated pods start, then metrics need one scrape window
                try:
                    raw, _ = await metrics.get_raw_metric("qps", "default", pods_sel, Selector.everything())
                    break
                except MetricsError:
                    await asyncio.sleep(0.5)
            else:
                pytest.fail("custom pod metrics never appeared")
            assert len(raw) == 2 and all(m.value == 50_000 for m in raw.values())  # 100 qps over 2 pods
            res, _ = await metrics.get_resource_metric("cpu", "default", pods_sel)
            assert sorted(res) == sorted(raw) and all(m.value == 150 for m in res.values())
            ref = CrossVersionObjectReference(kind="Deployment", name="web", api_version="apps/v1")
            value, _ = await metrics.get_object_metric("qps", "default", ref, Selector.everything())
            assert value == 100_000
            ext, _ = await metrics.get_external_metric("queue", "default", Selector.parse("queue=jobs"))
            assert ext == [30_000]
            assert await discovery.preferred_version("custom.metrics.k8s.io") == "v1beta2"
            with pytest.raises(MetricsError, match="no metrics returned from external metrics API"):
                await metrics.get_external_metric("queue", "default", Selector.parse("queue=other"))
        finally:
            await client.close()
