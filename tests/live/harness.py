"""Test stand-ins for what a real cluster runs beside the API server: a kubelet/ReplicaSet
controller that keeps one Ready pod per replica of each Deployment, and metrics APIs
(metrics.k8s.io PodMetrics, external.metrics.k8s.io) whose values the test sets.

The metrics APIs are served by intercepting the embedded API server's request handler, so the
controller reaches them over HTTPS at the same URL as everything else, like an aggregated API.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from starlette.responses import JSONResponse

from pyhpa.adapters.kube.client import KubeClient, load_config
from pyhpa.api.selectors import Selector
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.storage import Store
from pyhpa.cluster.embedded import EmbeddedCluster
from tests.builders import deployment

ROOT = Path(__file__).resolve().parents[2]


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _long_ago() -> str:
    return (datetime.now(timezone.utc) - timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")


class FakeNodeAndMetrics:
    def __init__(self, cluster: Any, interval: float = 0.1) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.interval = interval
        self.total_cpu_milli: dict[tuple[str, str], int] = {}  # (ns, deployment) -> CPU shared by its pods
        self.external: dict[tuple[str, str], list[int]] = {}  # (ns, metric) -> milli values
        self.metrics_down = False
        self.requests = 0
        self._seq = itertools.count()
        self._task: asyncio.Task[None] | None = None
        self._orig_handle = cluster.server.handle
        cluster.server.handle = self._handle

    # ------------------------------------------------------------------ metrics APIs

    async def _handle(self, request: Any) -> Any:
        path = request.url.path
        if path.startswith("/apis/metrics.k8s.io/") or path.startswith("/apis/external.metrics.k8s.io/"):
            self.requests += 1
            if self.metrics_down:
                return JSONResponse({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                     "message": "the server is currently unable to handle the request",
                                     "reason": "ServiceUnavailable", "code": 503}, status_code=503)
            parts = path.strip("/").split("/")
            if path.startswith("/apis/metrics.k8s.io/") and len(parts) >= 6 and parts[5] == "pods":
                return JSONResponse(self._pod_metrics(parts[4], request.query_params.get("labelSelector", "")))
            if path.startswith("/apis/external.metrics.k8s.io/") and len(parts) >= 6:
                return JSONResponse(self._external(parts[4], parts[5]))
            return JSONResponse({"kind": "Status", "code": 404, "reason": "NotFound",
                                 "message": "the server could not find the requested resource"}, status_code=404)
        return await self._orig_handle(request)

    def _pod_metrics(self, ns: str, selector: str) -> dict[str, Any]:
        sel = Selector.parse(selector) if selector else Selector.everything()
        items = []
        for pod in self.store.list(R.PODS.key, ns).items:
            labels = pod["metadata"].get("labels") or {}
            if not sel.matches(labels):
                continue
            owner = labels.get("harness/deployment", "")
            n = max(1, len(self._pods_of(ns, owner)))
            usage = self.total_cpu_milli.get((ns, owner), 0) // n
            items.append({"metadata": {"name": pod["metadata"]["name"], "namespace": ns, "labels": labels},
                          "timestamp": _now(), "window": "30s",
                          "containers": [{"name": "app", "usage": {"cpu": f"{usage}m", "memory": "10Mi"}}]})
        return {"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {}, "items": items}

    def _external(self, ns: str, metric: str) -> dict[str, Any]:
        values = self.external.get((ns, metric), [])
        return {"kind": "ExternalMetricValueList", "apiVersion": "external.metrics.k8s.io/v1beta1", "metadata": {},
                "items": [{"metricName": metric, "metricLabels": {}, "timestamp": _now(), "value": f"{v}m"}
                          for v in values]}

    # ------------------------------------------------------------------ pods

    def _pods_of(self, ns: str, dep: str) -> list[dict[str, Any]]:
        return self.store.list(R.PODS.key, ns, label_selector=f"harness/deployment={dep}").items

    def sync(self) -> None:
        for dep in self.store.list(R.DEPLOYMENTS.key).items:
            meta = dep["metadata"]
            ns, name = meta["namespace"], meta["name"]
            want = dep.get("spec", {}).get("replicas", 1)
            pods = self._pods_of(ns, name)
            template = dep["spec"]["template"]
            for _ in range(want - len(pods)):
                labels = dict(template["metadata"].get("labels") or {})
                labels["harness/deployment"] = name
                self.store.create(R.PODS.key, {
                    "apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": f"{name}-{next(self._seq)}", "namespace": ns, "labels": labels},
                    "spec": template["spec"],
                    "status": {"phase": "Running", "startTime": _long_ago(),
                               "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": _long_ago()}]},
                })
            for pod in pods[want:] if len(pods) > want else []:
                self.store.delete(R.PODS.key, ns, pod["metadata"]["name"])
            have = min(want, max(len(pods), want))
            if dep.get("status", {}).get("replicas") != have:
                def set_status(d: dict[str, Any], have: int = have) -> dict[str, Any]:
                    d.setdefault("status", {})["replicas"] = have
                    return d

                self.store.guaranteed_update(R.DEPLOYMENTS.key, ns, name, set_status)

    async def run(self) -> None:
        while True:
            try:
                self.sync()
            except Exception as exc:  # keep going: a race with a delete is harmless
                print("harness sync:", repr(exc))
            await asyncio.sleep(self.interval)

    def start(self) -> "FakeNodeAndMetrics":
        self._task = asyncio.create_task(self.run())
        return self

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
        self.cluster.server.handle = self._orig_handle


def run_embedded(data: Path, hpa: dict[str, Any], *flags: str, duration: str = "4s") -> dict[str, Any]:
    """Seed Deployment `web` at 2 replicas under ``hpa`` in a fresh embedded cluster's data dir,
    run `pyhpa run --embedded` on it for ``duration`` (sync period 1 s), and return the HPA as
    the cluster stored it."""
    async def seed() -> None:
        async with EmbeddedCluster(data, port=0, simulate=False) as cluster:
            client = KubeClient.from_config(load_config(str(cluster.kubeconfig_path)), qps=0)
            try:
                await client.post("/apis/apps/v1/namespaces/default/deployments", deployment("web", 2))
                await client.post("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", hpa)
            finally:
                await client.close()

    asyncio.run(seed())
    proc = subprocess.run(
        [sys.executable, "-m", "pyhpa.cli", "run", "--embedded", "--embedded-data-dir", str(data),
         "--horizontal-pod-autoscaler-sync-period", "1s", "--duration", duration, "--metrics-bind-address", "0",
         *flags],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=str(ROOT), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    store = Store(data / "store.sqlite")
    try:
        (stored,) = store.list(R.HPAS.key).items
    finally:
        store.close()
    return stored


async def wait_until(fn: Any, timeout: float, interval: float = 0.1, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if asyncio.iscoroutine(last):
            last = await last
        if last:
            return last
        await asyncio.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what or fn}; last={last!r}")


class SilentServer:
    """A TCP server on 127.0.0.1 that accepts connections and never answers: an API server
    that is reachable but hopelessly slow (a cache sync that cannot finish)."""

    def __init__(self) -> None:
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.conns: list[Any] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)

    def __enter__(self) -> "SilentServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        import socket

        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        for c in self.conns:
            c.close()
