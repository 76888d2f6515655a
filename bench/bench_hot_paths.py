"""The two hot paths of issue 23, per operation: creating an HPA and one sync of an HPA.

Create path: the HPA strategy's share of a create alone (decode, default, prepare, validate,
encode); a POST of an autoscaling/v2 (and v1) HPA handed to the embedded API server's ASGI
application in this process (no TLS, no sockets: decoding, defaulting, validation, managed
fields, the SQLite write and the response), plain and as ``kubectl create -f`` sends it
(``fieldManager=kubectl-create``, ``fieldValidation=Strict``); and the same kubectl-style POST
over HTTPS to a ``pyhpa cluster`` process, with that server's CPU per create.

Sync path: one reconcile of one HPA (one CPU metric, 10 pods) over the in-memory ports, as the
simulator and ``pyhpa reconcile`` run it; and one ``HPAController.process`` of the live
controller (informer caches, PodMetrics over HTTPS, status unchanged) against an embedded
cluster.

Each figure is the best of ``BENCH_HOT_REPEATS`` (default 5) rounds: per-op microseconds and
operations per second, in this process's CPU time (on a shared machine the wall clock mostly
measures the others; the HTTPS figures are wall time and that server's CPU).
``python bench/bench_hot_paths.py`` prints them alone.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import pathlib
import sys
import tempfile
import time
from datetime import timedelta
from typing import Any, Callable

HERE = pathlib.Path(__file__).resolve().parent
REPEATS = int(os.environ.get("BENCH_HOT_REPEATS", "5"))
clock = time.process_time
CREATES = 1500  # per round; every create has its own name
SYNC_HPAS = 20  # HPAs in the live controller's cluster


def _hpa_body(name: str, version: str = "v2") -> bytes:
    if version == "v1":
        return json.dumps({
            "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "minReplicas": 2, "maxReplicas": 10, "targetCPUUtilizationPercentage": 60}}).encode()
    return json.dumps({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "minReplicas": 2, "maxReplicas": 10,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                     "type": "Utilization", "averageUtilization": 60}}},
                             {"type": "Pods", "pods": {"metric": {"name": "packets-per-second"},
                                                      "target": {"type": "AverageValue", "averageValue": "1k"}}}],
                 "behavior": {"scaleDown": {"stabilizationWindowSeconds": 120,
                                            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}}}).encode()


KUBECTL_QUERY = b"fieldManager=kubectl-create&fieldValidation=Strict"


async def _asgi_post(app: Any, path: str, query: bytes, body: bytes) -> int:
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "", "query_string": query,
             "headers": [(b"content-type", b"application/json"), (b"accept", b"application/json"),
                         (b"content-length", str(len(body)).encode())],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}
    sent = False
    status = 0

    async def receive() -> dict:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


def create_in_process(version: str, query: bytes) -> float:
    """Best per-create seconds of the ASGI application (a fresh store per round)."""
    from pyhpa.cluster.apiserver.server import APIServer
    from pyhpa.cluster.apiserver.storage import Store

    path = f"/apis/autoscaling/{version}/namespaces/default/horizontalpodautoscalers"
    bodies = [_hpa_body(f"web-{i}", version) for i in range(CREATES)]
    best = float("inf")
    for _ in range(REPEATS):
        with tempfile.TemporaryDirectory() as d:
            store = Store(pathlib.Path(d) / "store.sqlite")
            app = APIServer(store)

            async def round_() -> float:
                for warm in range(20):
                    assert await _asgi_post(app, path, query, _hpa_body(f"warm-{warm}", version)) == 201
                started = clock()
                for body in bodies:
                    status = await _asgi_post(app, path, query, body)
                    if status != 201:
                        raise AssertionError(f"create answered {status}")
                return (clock() - started) / len(bodies)

            best = min(best, asyncio.run(round_()))
            store.close()
    return best


def create_strategy_only(version: str) -> float:
    """Best per-create CPU seconds of the HPA strategy's part alone (decode, default, prepare,
    validate, encode), without the store and the HTTP layers. A tree without the one-step
    ``create`` hook is measured through its three hooks (what a create ran there)."""
    import copy

    from pyhpa.cluster.apiserver import resources as R
    from pyhpa.cluster.apiserver.kind_strategies import strategy_for

    strat = strategy_for(R.HPAS, None)
    wire = json.loads(_hpa_body("web", version))
    wire["metadata"]["namespace"] = "default"

    def three_hooks(obj: dict, v: str) -> tuple[dict, list]:
        obj = strat.to_storage(obj, v)
        strat.prepare_create(obj)
        return obj, strat.validate(obj, None)

    create = getattr(strat, "create", None) or three_hooks
    return _best_per_op(lambda: create(copy.deepcopy(wire), version))


def create_over_https() -> tuple[float, float]:
    """kubectl-style creates over HTTPS to a `pyhpa cluster` process: best (wall seconds per
    create, server CPU seconds per create), one keep-alive connection."""
    sys.path.insert(0, str(HERE))
    from bench_cluster import Server

    path = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers?" + KUBECTL_QUERY.decode()
    best_wall = best_cpu = float("inf")
    for r in range(REPEATS):
        with tempfile.TemporaryDirectory() as d:
            s = Server(pathlib.Path(d))
            try:
                c = s.conn()
                for warm in range(20):
                    status, _ = s.request(c, "POST", path, _hpa_body(f"warm-{warm}"))
                    assert status == 201, status
                n = CREATES // 3
                cpu0 = s.cpu()
                started = time.perf_counter()
                for i in range(n):
                    status, _ = s.request(c, "POST", path, _hpa_body(f"web-{i}"))
                    if status != 201:
                        raise AssertionError(f"create answered {status}")
                wall = (time.perf_counter() - started) / n
                cpu = (s.cpu() - cpu0) / n
                c.close()
            finally:
                s.stop()
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
    return best_wall, best_cpu


def _best_per_op(fn: Callable[[], None], seconds: float = 1.0) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        for _ in range(50):
            fn()
        n = 0
        started = clock()
        while True:
            for _ in range(200):
                fn()
            n += 200
            elapsed = clock() - started
            if elapsed >= seconds:
                break
        best = min(best, elapsed / n)
    return best


def sync_in_memory() -> float:
    """Best per-reconcile seconds over the in-memory ports (bench_engine's 10-pod HPA)."""
    sys.path.insert(0, str(HERE))
    import bench_engine as be

    from pyhpa.adapters.memory import MemoryCluster
    from pyhpa.api.types import (CrossVersionObjectReference, HorizontalPodAutoscalerSpec, LabelSelector,
                                 ObjectMeta, WorkloadSpecView, WorkloadStatusView, WorkloadView, new_hpa)
    from pyhpa.api.types import ContainerMetrics, PodMetrics
    from pyhpa.api.quantity import Quantity
    from pyhpa.controller.reconcile import reconcile_hpa, run_sync

    pods = be._pods(10)
    metrics = [PodMetrics(metadata=ObjectMeta(name=p.metadata.name, namespace="ns", labels=dict(be.LABELS)),
                          timestamp=be.NOW, window="30s",
                          containers=[ContainerMetrics(name="app", usage={"cpu": Quantity.from_milli(be._usage(i))})])
               for i, p in enumerate(pods)]
    hpa = new_hpa(HorizontalPodAutoscalerSpec(
        scale_target_ref=CrossVersionObjectReference(kind="Deployment", name="web", api_version="apps/v1"),
        min_replicas=1, max_replicas=1000, metrics=[be.SPEC]), metadata=ObjectMeta(name="web", namespace="ns"))
    wl = WorkloadView(api_version="apps/v1", kind="Deployment", metadata=ObjectMeta(name="web", namespace="ns"),
                      spec=WorkloadSpecView(replicas=10, selector=LabelSelector(match_labels=dict(be.LABELS))),
                      status=WorkloadStatusView(replicas=10))
    cluster = MemoryCluster(hpas=[hpa], workloads=[wl], pods=pods, pod_metrics=metrics)
    ports = cluster.ports()
    clock = [be.NOW]
    step = timedelta(seconds=15)

    def one() -> None:
        clock[0] += step  # one sync period per pass, as the loop does
        run_sync(reconcile_hpa(cluster.hpas["ns/web"], ports, be.CONFIG, clock[0]))

    return _best_per_op(one)


async def _live_sync() -> float:
    sys.path.insert(0, str(HERE))
    from bench_controller import install_steady_metrics, populate

    from pyhpa.adapters.kube.client import KubeClient, load_config
    from pyhpa.cluster.embedded import EmbeddedCluster
    from pyhpa.engine.config import ControllerConfig
    from pyhpa.live.loop import ControllerOptions, HPAController

    sync = 3600.0  # the workers' first passes are spread over the period: the timed calls are ours
    with tempfile.TemporaryDirectory() as d:
        async with EmbeddedCluster(pathlib.Path(d), port=0, simulate=False) as cluster:
            populate(cluster.store, 2, SYNC_HPAS // 2, 10)
            install_steady_metrics(cluster)
            client = KubeClient.from_config(load_config(str(cluster.kubeconfig_path)), qps=0)
            ctl = HPAController(client, ControllerConfig(sync_period=sync),
                                ControllerOptions(sync_period=sync, workers=2, persist_state=False))
            try:
                await ctl.start()
                keys = sorted(ctl.hpa_informer.cache.keys())
                assert len(keys) == SYNC_HPAS, keys
                for key in keys:  # the first pass writes the status (conditions appear) ...
                    await ctl.process(key)
                await asyncio.sleep(0.5)  # ... which the informer brings back to the cache
                for key in keys:
                    await ctl.process(key)
                best = float("inf")
                for _ in range(REPEATS):
                    n = 0
                    started = clock()
                    while clock() - started < 1.0:
                        for key in keys:
                            await ctl.process(key)
                        n += len(keys)
                    best = min(best, (clock() - started) / n)
            finally:
                await ctl.stop()
                await client.close()
    return best


def run() -> list[tuple[str, float, str]]:
    if importlib.util.find_spec("pyhpa") is None:
        sys.path.insert(0, str(HERE.parent))
    out: list[tuple[str, float, str]] = []

    def per_op(name: str, seconds: float, what: str) -> None:
        out.append((f"{name}_per_op", seconds * 1e6, "µs" if "https" in name else "µs CPU"))
        out.append((f"{name}_rate", 1.0 / seconds, what))

    per_op("create_v2_strategy", create_strategy_only("v2"), "creates/CPU s")
    per_op("create_v1_strategy", create_strategy_only("v1"), "creates/CPU s")
    per_op("create_v2_asgi", create_in_process("v2", b""), "creates/CPU s")
    per_op("create_v2_asgi_kubectl", create_in_process("v2", KUBECTL_QUERY), "creates/CPU s")
    per_op("create_v1_asgi_kubectl", create_in_process("v1", KUBECTL_QUERY), "creates/CPU s")
    wall, cpu = create_over_https()
    per_op("create_v2_https_kubectl", wall, "creates/s (one connection)")
    out.append(("create_v2_https_kubectl_server_cpu_per_op", cpu * 1e6, "µs server CPU"))
    per_op("sync_in_memory_10_pods", sync_in_memory(), "syncs/CPU s")
    per_op("sync_live_process", asyncio.run(_live_sync()), "syncs/CPU s (controller + cluster in one process)")
    return out


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name}: {value:,.1f} {unit}")
