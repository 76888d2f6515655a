"""A real Prometheus scrapes a `pyhpa cluster` process with the configuration that
`pyhpa cluster --prometheus-config FILE` wrote (cAdvisor through each node's proxy,
kube-state-metrics and the application metrics through their Services' proxy), while a
Deployment runs under load and `pyhpa run` autoscales it; the PromQL a real cluster is read with
gives what the metrics API and the objects say."""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
import time
import urllib.request

import pytest

from pyhpa.api import goyaml
from tests.cluster.conftest import REPO, ClusterProcess, wait_for
from tests.prometheus_server import PrometheusServer, require_tools

pytestmark = [pytest.mark.slow, pytest.mark.long(seconds=60)]

NS = "shop"
CPU_RATE = ('sum(rate(container_cpu_usage_seconds_total{namespace="shop",container!="",'
            'container!="POD"}[30s]))')


def _api(proc: ClusterProcess, method: str, path: str, body: dict | None = None) -> dict:
    ctx = ssl.create_default_context(cafile=proc.ca)
    req = urllib.request.Request(proc.url + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": f"Bearer {proc.token}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, context=ctx, timeout=30) as answer:
        return json.load(answer)


def _objects() -> list[tuple[str, dict]]:
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": NS,
                     "annotations": {"sim.pyhpa.io/cpu": "1200m", "sim.pyhpa.io/startup-seconds": "2",
                                     "sim.pyhpa.io/metric.http_requests": "90"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "app", "image": "shop:1",
                                                       "resources": {"requests": {"cpu": "500m"}}}]}}}}
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "web", "namespace": NS},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "minReplicas": 1, "maxReplicas": 6,
                    "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                        "type": "Utilization", "averageUtilization": 80}}}]}}
    return [("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
            (f"/apis/apps/v1/namespaces/{NS}/deployments", deployment),
            (f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers", hpa)]


def _value(result: list[dict]) -> float:
    assert len(result) == 1, result
    return float(result[0]["value"][1])


def test_prometheus_scrapes_the_cluster_with_the_written_configuration(tmp_path):
    require_tools()
    config_file = tmp_path / "prometheus.yml"
    proc = ClusterProcess(tmp_path / "cluster", "--prometheus-config", str(config_file)).start()
    controller = None
    try:
        wait_for(config_file.exists, 10, "the scrape configuration")
        for path, body in _objects():
            _api(proc, "POST", path, body)
        controller = subprocess.Popen(
            [sys.executable, "-m", "pyhpa.cli", "run", "--kubeconfig", str(proc.kubeconfig),
             "--horizontal-pod-autoscaler-sync-period", "5s", "--no-leader-elect"],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        config = goyaml.load_all(config_file.read_text())[0]
        config["global"]["scrape_interval"] = "5s"  # quicker than the written 15s
        with PrometheusServer(tmp_path / "prometheus", config) as prom:
            targets = wait_for(lambda: [t for t in prom.api("targets")["activeTargets"]
                                        if t["health"] == "up"] if len(
                [t for t in prom.api("targets")["activeTargets"] if t["health"] == "up"]) == 3
                else None, 60, "three healthy targets")
            jobs = {t["labels"]["job"]: t for t in targets}
            assert set(jobs) == {"kubernetes-cadvisor", "kube-state-metrics", "pyhpa-app-metrics"}
            assert jobs["kubernetes-cadvisor"]["labels"]["kubernetes_io_hostname"] == "pyhpa-node"

            # the HPA has acted: the replicas Prometheus sees are the Deployment's
            def settled():
                dep = _api(proc, "GET", f"/apis/apps/v1/namespaces/{NS}/deployments/web")
                hpa = _api(proc, "GET", f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers/web")
                spec = prom.query(f'kube_deployment_spec_replicas{{namespace="{NS}",deployment="web"}}')
                desired = (hpa.get("status") or {}).get("desiredReplicas")
                return spec and desired and dep["spec"]["replicas"] == desired == _value(spec) \
                    and dep["status"].get("readyReplicas") == desired and dep
            dep = wait_for(settled, 60, "the HPA's replicas in kube_deployment_spec_replicas")
            replicas = dep["spec"]["replicas"]
            assert replicas == 3  # 1200m over pods of 500m at 80%

            # usage as a real cluster's Prometheus reads it agrees with the metrics API once every
            # pod has been Ready for the whole rate window
            time.sleep(35)
            rate = _value(prom.query(CPU_RATE))
            items = _api(proc, "GET", f"/apis/metrics.k8s.io/v1beta1/namespaces/{NS}/pods")["items"]
            api_cores = sum(int(c["usage"]["cpu"].rstrip("m")) / 1000
                            for i in items for c in i["containers"])
            assert len(items) == replicas
            assert rate == pytest.approx(1.2, abs=0.05) and api_cores == pytest.approx(rate, abs=0.05)

            h = f'{{namespace="{NS}",horizontalpodautoscaler="web"}}'
            assert _value(prom.query(f"kube_horizontalpodautoscaler_spec_max_replicas{h}")) == 6
            assert _value(prom.query(f"kube_horizontalpodautoscaler_spec_min_replicas{h}")) == 1
            assert _value(prom.query(f"kube_horizontalpodautoscaler_status_desired_replicas{h}")) == replicas
            assert _value(prom.query(
                f'kube_horizontalpodautoscaler_spec_target_metric{{namespace="{NS}",metric_name="cpu",'
                'metric_target_type="utilization"}')) == 80
            ready = prom.query(f'sum(kube_pod_status_ready{{namespace="{NS}",condition="true"}})')
            assert _value(ready) == replicas
            per_pod = prom.query(f'http_requests{{namespace="{NS}"}}')
            assert len(per_pod) == replicas
            assert sum(float(s["value"][1]) for s in per_pod) == pytest.approx(90, rel=0.02)
            requests = prom.query(f'sum(kube_pod_container_resource_requests{{namespace="{NS}",'
                                  'resource="cpu"})')
            assert _value(requests) == pytest.approx(0.5 * replicas)
    finally:
        if controller is not None:
            controller.terminate()
            controller.wait(10)
        proc.stop()
