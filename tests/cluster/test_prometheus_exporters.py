"""The embedded cluster's Prometheus exporters (cAdvisor through the node proxy, kube-state-metrics
and the application metrics through their Services' proxy), over HTTP (ASGI, no sockets), fed by
a simulation with an injected clock; their text checked against the objects, the metrics API and
`promtool check metrics`."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.controllers import exporters, metrics_server
from pyhpa.cluster.controllers.exposition import Exposition
from pyhpa.cluster.controllers.objects import parse_epoch
from tests.cluster.simulated import simulated

NS = "default"
T0 = 1_000_000.0  # a multiple of the resolution: scrapes at T0 + 5k
NODE = "pyhpa-node"
CADVISOR = f"/api/v1/nodes/{NODE}/proxy/metrics/cadvisor"
KSM = exporters.service_path(exporters.KUBE_STATE_METRICS)
APP = exporters.service_path(exporters.APP_METRICS)
TOKEN = "s3cret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def env(tmp_path):
    with simulated(tmp_path, T0, metrics_server.install, exporters.install, token=TOKEN,
                   resolution=5.0, window=15.0) as c:
        yield c.store, c.sim, c.client, c.at


def deployment(name: str, replicas: int, annotations: dict[str, str],
               resources: list[dict] | None = None) -> dict:
    resources = resources or [{"requests": {"cpu": "500m", "memory": "64Mi"}}]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NS, "annotations": annotations},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [
                                      {"name": f"c{i}", "image": f"img{i}:1", "resources": r}
                                      for i, r in enumerate(resources)]}}}}


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (\d+))?$')
_PAIR = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text: str) -> tuple[dict[str, str], list[tuple[str, dict[str, str], float]]]:
    """(family -> type, samples) of an exposition; every sample's family has a TYPE line."""
    types: dict[str, str] = {}
    helps: set[str] = set()
    samples = []
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ", 3)
            types[name] = typ
        elif line.startswith("# HELP "):
            helps.add(line.split(" ")[2])
        elif line:
            m = _SAMPLE.match(line)
            assert m, line
            labels = {k: v for k, v in _PAIR.findall(m.group(2) or "")}
            assert m.group(1) in types and m.group(1) in helps, line
            samples.append((m.group(1), labels, float(m.group(3))))
    return types, samples


def series(samples, name: str, **match: str) -> list[tuple[dict[str, str], float]]:
    return [(labels, v) for n, labels, v in samples if n == name
            and all(labels.get(k) == val for k, val in match.items())]


def scrape(client, path: str):
    answer = client.get(path, headers=AUTH)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return parse(answer.text)


def pod_names(store) -> list[str]:
    return sorted(p["metadata"]["name"] for p in store.list(R.PODS.key, NS).items)


# --------------------------------------------------------------------------- endpoints


def test_the_proxy_paths_need_the_token_and_name_real_objects(env):
    store, sim, client, at = env
    at(0)
    assert client.get(CADVISOR).status_code == 401
    assert client.get(KSM).status_code == 401
    missing = client.get("/api/v1/nodes/no-such-node/proxy/metrics/cadvisor", headers=AUTH)
    assert missing.status_code == 404 and missing.json()["reason"] == "NotFound"
    assert client.get(f"/api/v1/nodes/{NODE}/proxy/nothing", headers=AUTH).status_code == 404
    assert client.post(CADVISOR, headers=AUTH).status_code == 405
    # the kubelet's own endpoint, reached as https:NAME:PORT too
    answer = client.get(f"/api/v1/nodes/https:{NODE}:10250/proxy/metrics", headers=AUTH)
    assert answer.status_code == 200 and "kubelet_running_pods 0" in answer.text
    # the Services are real objects; without a backend for a port the proxy has no endpoint
    names = {s["metadata"]["name"] for s in store.list(R.SERVICES.key, "kube-system").items}
    assert {"kube-state-metrics", "pyhpa-app-metrics"} <= names
    assert client.get("/api/v1/namespaces/kube-system/services/kube-state-metrics/proxy/metrics",
                      headers=AUTH).status_code == 200  # the only port, unnamed in the path
    gone = client.get("/api/v1/namespaces/kube-system/services/nope:http-metrics/proxy/metrics",
                      headers=AUTH)
    assert gone.status_code == 404
    store.create(R.SERVICES.key, {"apiVersion": "v1", "kind": "Service",
                                  "metadata": {"name": "web", "namespace": NS},
                                  "spec": {"ports": [{"port": 80}]}})
    assert client.get(f"/api/v1/namespaces/{NS}/services/web/proxy/", headers=AUTH).status_code == 503


def test_exposition_escapes_label_values_and_writes_help_and_type():
    out = Exposition()
    out.family("m", "gauge", "a\\help\nline").add({"b": "2", "a": 'x"y\\z\nw'}, 1.5, 1000)
    out.family("m", "gauge", "ignored").add({}, float("inf"))
    out.family("c_total", "counter", "a counter").add({}, 3)
    assert out.text() == ('# HELP m a\\\\help\\nline\n# TYPE m gauge\n'
                          'm{a="x\\"y\\\\z\\nw",b="2"} 1.5 1000\nm +Inf\n'
                          '# HELP c_total a counter\n# TYPE c_total counter\nc_total 3.0\n')
    with pytest.raises(ValueError):
        out.family("not-a-name", "gauge", "")


# --------------------------------------------------------------------------- cAdvisor


def test_cadvisor_cpu_counters_agree_with_the_metrics_api(env):
    store, sim, client, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 2, {"sim.pyhpa.io/cpu": "600m",
                                                          "sim.pyhpa.io/memory": "100Mi"}))
    at(0)
    at(30)
    _, before = scrape(client, CADVISOR)
    at(60)
    types, after = scrape(client, CADVISOR)
    assert types["container_cpu_usage_seconds_total"] == "counter"
    assert types["container_memory_working_set_bytes"] == "gauge"
    api = client.get(f"/apis/metrics.k8s.io/v1beta1/namespaces/{NS}/pods", headers=AUTH).json()
    usage = {i["metadata"]["name"]: i["containers"][0]["usage"] for i in api["items"]}
    assert sorted(usage) == pod_names(store)
    for pod, u in usage.items():
        (labels, now), = series(after, "container_cpu_usage_seconds_total", pod=pod, container="c0")
        (_, then), = series(before, "container_cpu_usage_seconds_total", pod=pod, container="c0")
        assert labels["namespace"] == NS and labels["image"] == "img0:1"
        assert labels["id"].startswith("/kubepods/burstable/pod") and labels["name"]
        assert now > then  # a counter that grows
        assert (now - then) / 30 == pytest.approx(int(u["cpu"].rstrip("m")) / 1000, abs=0.002)
        (_, mem), = series(after, "container_memory_working_set_bytes", pod=pod, container="c0")
        assert mem == 100 * 2**20 and u["memory"] == "100Mi"
        # the pod's own cgroup: the sum of its containers
        (_, whole), = series(after, "container_cpu_usage_seconds_total", pod=pod, container="")
        assert whole == pytest.approx(now)
    # no CPU limit: no CFS series
    assert not series(after, "container_cpu_cfs_periods_total")


def test_cfs_throttling_counts_while_a_container_is_at_its_limit(env):
    store, sim, client, at = env
    store.create(R.DEPLOYMENTS.key, deployment("hot", 1, {"sim.pyhpa.io/cpu": "800m"}, [
        {"requests": {"cpu": "200m"}, "limits": {"cpu": "200m"}},  # held at 200m of its 400m part
        {"requests": {"cpu": "500m"}}]))
    at(0)
    at(20)
    _, first = scrape(client, CADVISOR)
    at(40)
    _, second = scrape(client, CADVISOR)
    (_, p1), = series(first, "container_cpu_cfs_periods_total", container="c0")
    (_, p2), = series(second, "container_cpu_cfs_periods_total", container="c0")
    (_, t1), = series(first, "container_cpu_cfs_throttled_periods_total", container="c0")
    (_, t2), = series(second, "container_cpu_cfs_throttled_periods_total", container="c0")
    assert p2 - p1 == 200 and t2 - t1 == 200  # 20 s of 100 ms periods, every one throttled
    assert not series(second, "container_cpu_cfs_periods_total", container="c1")  # no limit
    (_, c1), = series(first, "container_cpu_usage_seconds_total", container="c0")
    (_, c2), = series(second, "container_cpu_usage_seconds_total", container="c0")
    assert (c2 - c1) / 20 == pytest.approx(0.2)  # at its limit
    (_, o1), = series(first, "container_cpu_usage_seconds_total", container="c1")
    (_, o2), = series(second, "container_cpu_usage_seconds_total", container="c1")
    assert (o2 - o1) / 20 == pytest.approx(0.4)  # its equal part of the demand
    # the load drops under the limit: periods go on, throttling stops
    store.guaranteed_update(R.DEPLOYMENTS.key, NS, "hot", lambda o: o["metadata"]["annotations"]
                            .update({"sim.pyhpa.io/cpu": "200m"}))
    at(45)
    _, third = scrape(client, CADVISOR)
    at(65)
    _, fourth = scrape(client, CADVISOR)
    (_, t3), = series(third, "container_cpu_cfs_throttled_periods_total", container="c0")
    (_, t4), = series(fourth, "container_cpu_cfs_throttled_periods_total", container="c0")
    (_, p4), = series(fourth, "container_cpu_cfs_periods_total", container="c0")
    assert t4 == t3 and p4 > p2


def test_counters_stay_monotonic_through_scaling_and_a_deleted_pod_is_gone(env):
    store, sim, client, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 3, {"sim.pyhpa.io/cpu": "900m"}))
    seen: dict[tuple[str, str], float] = {}
    for step, t in enumerate(range(0, 150, 10)):
        if t == 60:
            store.guaranteed_update(R.DEPLOYMENTS.key, NS, "web",
                                    lambda o: o["spec"].update({"replicas": 5}))
        if t == 110:
            store.guaranteed_update(R.DEPLOYMENTS.key, NS, "web",
                                    lambda o: o["spec"].update({"replicas": 2}))
        at(t)
        _, samples = scrape(client, CADVISOR)
        for labels, v in series(samples, "container_cpu_usage_seconds_total"):
            key = (labels["pod"], labels["container"])
            assert v >= seen.get(key, 0.0), (t, key)
            seen[key] = v
    live = set(pod_names(store))
    cadvisor_pods = {labels["pod"] for labels, _ in series(samples, "container_cpu_usage_seconds_total")}
    assert len(live) == 2 and cadvisor_pods == live
    assert len({pod for pod, _ in seen}) == 5  # the three deleted pods' series are gone
    _, ksm = scrape(client, KSM)
    assert {labels["pod"] for labels, _ in series(ksm, "kube_pod_info")} == live


# --------------------------------------------------------------------------- kube-state-metrics


def hpa(name: str, target: str) -> dict:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                     "minReplicas": 2, "maxReplicas": 7,
                     "metrics": [
                         {"type": "Resource", "resource": {"name": "cpu", "target": {
                             "type": "Utilization", "averageUtilization": 60}}},
                         {"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {
                             "type": "AverageValue", "averageValue": "500m"}}}]},
            "status": {"currentReplicas": 2, "desiredReplicas": 3, "conditions": [
                {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
                 "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}


def test_kube_state_metrics_reflect_the_objects(env):
    store, sim, client, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 2, {"sim.pyhpa.io/cpu": "600m"}, [
        {"requests": {"cpu": "250m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "256Mi"}}]))
    store.create(R.HPAS.key, hpa("web", "web"))
    at(0)
    at(20)
    types, samples = scrape(client, KSM)
    assert all(t == "gauge" for t in types.values())
    pods = pod_names(store)
    dep = store.get(R.DEPLOYMENTS.key, NS, "web")
    assert series(samples, "kube_deployment_spec_replicas", deployment="web")[0][1] == 2
    assert series(samples, "kube_deployment_status_replicas_ready", deployment="web")[0][1] == \
        dep["status"]["readyReplicas"]
    (rs_owner, _), = series(samples, "kube_replicaset_owner")
    assert rs_owner["owner_kind"] == "Deployment" and rs_owner["owner_name"] == "web" \
        and rs_owner["owner_is_controller"] == "true"
    for pod in pods:
        obj = store.get(R.PODS.key, NS, pod)
        (info, one), = series(samples, "kube_pod_info", pod=pod)
        assert one == 1 and info["node"] == NODE and info["uid"] == obj["metadata"]["uid"]
        assert info["created_by_kind"] == "ReplicaSet" and info["host_ip"] == obj["status"]["hostIP"]
        (owner, _), = series(samples, "kube_pod_owner", pod=pod)
        assert owner["owner_kind"] == "ReplicaSet" and owner["owner_is_controller"] == "true"
        ready = {lbl["condition"]: v for lbl, v in series(samples, "kube_pod_status_ready", pod=pod)}
        assert ready == {"true": 1, "false": 0, "unknown": 0}
        [cond] = [c for c in obj["status"]["conditions"] if c["type"] == "Ready"]
        (_, since), = series(samples, "kube_pod_status_ready_time", pod=pod)
        assert since == int(parse_epoch(cond["lastTransitionTime"]))
        [cs] = [c for c in obj["status"]["containerStatuses"] if c["name"] == "c0"]
        (_, began), = series(samples, "kube_pod_container_state_started", pod=pod, container="c0")
        assert began == int(parse_epoch(cs["state"]["running"]["startedAt"]))
        req = {(lbl["resource"], lbl["unit"]): v for lbl, v in
               series(samples, "kube_pod_container_resource_requests", pod=pod, container="c0")}
        assert req == {("cpu", "core"): 0.25, ("memory", "byte"): 128 * 2**20}
        lim = {(lbl["resource"], lbl["unit"]): v for lbl, v in
               series(samples, "kube_pod_container_resource_limits", pod=pod, container="c0")}
        assert lim == {("cpu", "core"): 1.0, ("memory", "byte"): 256 * 2**20}
    h = {"horizontalpodautoscaler": "web"}
    assert series(samples, "kube_horizontalpodautoscaler_spec_min_replicas", **h)[0][1] == 2
    assert series(samples, "kube_horizontalpodautoscaler_spec_max_replicas", **h)[0][1] == 7
    (info, _), = series(samples, "kube_horizontalpodautoscaler_info", **h)
    assert info["scaletargetref_kind"] == "Deployment" and info["scaletargetref_name"] == "web"
    targets = {(lbl["metric_name"], lbl["metric_target_type"]): v for lbl, v in
               series(samples, "kube_horizontalpodautoscaler_spec_target_metric", **h)}
    assert targets == {("cpu", "utilization"): 60, ("rps", "average"): 0.5}
    stored = store.get(R.HPAS.key, NS, "web")["status"]
    assert series(samples, "kube_horizontalpodautoscaler_status_desired_replicas", **h)[0][1] == \
        stored.get("desiredReplicas", 0)
    conditions = {(lbl["condition"], lbl["status"]): v for lbl, v in
                  series(samples, "kube_horizontalpodautoscaler_status_condition", **h)}
    assert conditions[("AbleToScale", "true")] == 1 and conditions[("AbleToScale", "false")] == 0


def test_statefulset_replicas(env):
    store, sim, client, at = env
    store.create(R.STATEFUL_SETS.key, {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": NS},
        "spec": {"replicas": 2, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                 "template": {"metadata": {"labels": {"app": "db"}},
                              "spec": {"containers": [{"name": "db", "image": "db"}]}}}})
    at(0)
    at(30)
    _, samples = scrape(client, KSM)
    assert series(samples, "kube_statefulset_replicas", statefulset="db")[0][1] == 2
    ready = store.get(R.STATEFUL_SETS.key, NS, "db")["status"].get("readyReplicas", 0)
    assert series(samples, "kube_statefulset_status_replicas_ready", statefulset="db")[0][1] == ready


# --------------------------------------------------------------------------- application metrics


def test_app_metrics_are_per_pod_gauges_as_the_custom_metrics_api_serves_them(env):
    store, sim, client, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 2, {"sim.pyhpa.io/metric.http_requests": "30"}))
    store.create(R.EXTERNAL_METRIC_OBJECTS.key, {
        "apiVersion": "pyhpa.io/v1alpha1", "kind": "ExternalMetric",
        "metadata": {"name": "queue", "namespace": NS},
        "spec": {"name": "queue_depth", "labels": {"queue": "jobs"}, "value": "42"}})
    at(0)
    at(30)
    types, samples = scrape(client, APP)
    assert types["http_requests"] == "gauge" and types["queue_depth"] == "gauge"
    custom = client.get(f"/apis/custom.metrics.k8s.io/v1beta2/namespaces/{NS}/pods/*/http_requests",
                        headers=AUTH).json()
    served = {i["describedObject"]["name"]: i["value"] for i in custom["items"]}
    got = {lbl["pod"]: v for lbl, v in series(samples, "http_requests", namespace=NS)}
    assert sorted(got) == pod_names(store) == sorted(served)
    assert all(v == pytest.approx(15.0) and served[p] == "15" for p, v in got.items())
    (labels, value), = series(samples, "queue_depth")
    assert labels == {"namespace": NS, "queue": "jobs"} and value == 42


# --------------------------------------------------------------------------- promtool


def test_promtool_parses_every_exporter(env):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian package `prometheus`)")
    store, sim, client, at = env
    store.create(R.DEPLOYMENTS.key, deployment("web", 2, {"sim.pyhpa.io/cpu": "600m",
                                                          "sim.pyhpa.io/metric.rps": "10"}, [
        {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}]))
    store.create(R.HPAS.key, hpa("web", "web"))
    at(0)
    at(30)
    for path in (CADVISOR, KSM, APP, f"/api/v1/nodes/{NODE}/proxy/metrics"):
        text = client.get(path, headers=AUTH).text
        assert text.strip()
        done = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                              text=True, timeout=60)
        # lint findings (names the real exporters use too) go to stdout; parse errors fail
        assert "error while linting" not in done.stderr + done.stdout, (path, done.stderr)
        assert done.returncode in (0, 3), (path, done.returncode, done.stderr, done.stdout)



# --------------------------------------------------------------------------- the scrape configuration


def test_prometheus_config_on_stdout_is_valid_for_promtool(tmp_path):
    import sys

    from pyhpa.api import goyaml
    from pyhpa.cluster.apiserver import tls
    from tests.cluster.conftest import REPO

    data = tmp_path / "data"
    cmd = [sys.executable, "-m", "pyhpa.cli", "cluster", "--data-dir", str(data),
           "--prometheus-config", "-"]
    zero = subprocess.run([*cmd, "--listen", "127.0.0.1:0"], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert (zero.returncode, zero.stdout) == (2, "")
    assert zero.stderr.startswith("pyhpa cluster: --prometheus-config -: needs the port") \
        and zero.stderr.count("\n") == 1
    tls.ensure_credentials(data)  # what the cluster's first start creates
    done = subprocess.run([*cmd, "--listen", "127.0.0.1:7443", "--nodes", "2"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    config = goyaml.load_all(done.stdout)[0]
    jobs = {j["job_name"]: j for j in config["scrape_configs"]}
    assert set(jobs) == {"kubernetes-cadvisor", "kube-state-metrics", "pyhpa-app-metrics"}
    for job in jobs.values():
        assert job["scheme"] == "https"
        assert job["authorization"]["credentials_file"] == str((data / "token").resolve())
        assert job["tls_config"]["ca_file"] == str((data / "tls" / "ca.crt").resolve())
    paths = [g["labels"]["__metrics_path__"] for g in jobs["kubernetes-cadvisor"]["static_configs"]]
    assert paths == ["/api/v1/nodes/pyhpa-node/proxy/metrics/cadvisor",
                     "/api/v1/nodes/pyhpa-node-2/proxy/metrics/cadvisor"]
    assert jobs["kube-state-metrics"]["metrics_path"] == KSM
    assert jobs["kube-state-metrics"]["static_configs"] == [{"targets": ["127.0.0.1:7443"]}]
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian package `prometheus`)")
    written = tmp_path / "prometheus.yml"
    written.write_text(done.stdout)
    checked = subprocess.run([promtool, "check", "config", str(written)], capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
