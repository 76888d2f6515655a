"""Live-controller figures against the embedded cluster on this machine.

1. 1,000 HPAs with 10 pods each (10 namespaces), sync period 15 s: is every HPA reconciled in
   every sync period, and how many API requests per HPA per sync period does the steady state
   cost (watches excluded; upstream makes about 2-3: GET scale, LIST PodMetrics, ...)? The same
   fleet is also run in an upstream-like mode (GET /scale and LIST PodMetrics per HPA) for contrast.
2. Memory: resident size of a `pyhpa run` process whose caches hold 10,000 HPAs and 100,000 pods,
   once the caches have synced, and again once it is reconciling (every HPA reconciled at least
   once and one more sync period, so the Deployment cache and the per-HPA memory are included).

Objects are written straight into the cluster's store (fast), then served over HTTPS as usual.
Set PYHPA_BENCH_QUICK=1 for a smaller, faster run (200 HPAs, 20,000 pods in the memory test).
Each part runs on its own: one that fails is reported as a `..._FAILED` figure (NaN, with the
error) and the others' figures are still printed.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
QUICK = os.environ.get("PYHPA_BENCH_QUICK") == "1"


def populate(store: Any, namespaces: int, hpas_per_ns: int, pods_per_target: int) -> None:
    from pyhpa.cluster.apiserver import resources as R

    long_ago = "2026-01-01T00:00:00Z"
    for n in range(namespaces):
        ns = f"bench-{n}"
        store.create(R.NAMESPACES.key, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for i in range(hpas_per_ns):
            name = f"app-{i}"
            labels = {"app": name}
            store.create(R.DEPLOYMENTS.key, {
                "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
                "spec": {"replicas": pods_per_target, "selector": {"matchLabels": labels},
                         "template": {"metadata": {"labels": labels}, "spec": {"containers": [
                             {"name": "app", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]}}},
                "status": {"replicas": pods_per_target}})
            for p in range(pods_per_target):
                store.create(R.PODS.key, {
                    "apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": f"{name}-{p}", "namespace": ns, "labels": labels},
                    "spec": {"containers": [{"name": "app", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]},
                    "status": {"phase": "Running", "startTime": long_ago, "conditions": [
                        {"type": "Ready", "status": "True", "lastTransitionTime": long_ago}]}})
            store.create(R.HPAS.key, {
                "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                         "minReplicas": 1, "maxReplicas": 50,
                         "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                             "type": "Utilization", "averageUtilization": 50}}}]}})


def install_steady_metrics(cluster: Any) -> None:
    """metrics.k8s.io answering 50m per pod (50 % of the request = on target: a steady state)."""
    import msgspec
    from starlette.responses import Response

    from pyhpa.api.selectors import Selector
    from pyhpa.cluster.apiserver import resources as R

    original = cluster.server.handle
    enc = msgspec.json.Encoder().encode

    async def handle(request: Any) -> Any:
        path = request.url.path
        if path.startswith("/apis/metrics.k8s.io/v1beta1/namespaces/"):
            ns = path.split("/")[5]
            sel_text = request.query_params.get("labelSelector", "")
            sel = Selector.parse(sel_text) if sel_text else None
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            items = [{"metadata": {"name": p["metadata"]["name"], "namespace": ns, "labels": p["metadata"]["labels"]},
                      "timestamp": now, "window": "30s",
                      "containers": [{"name": "app", "usage": {"cpu": "50m", "memory": "10Mi"}}]}
                     for p in cluster.store.list(R.PODS.key, ns).items
                     if sel is None or sel.matches(p["metadata"].get("labels") or {})]
            return Response(enc({"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1",
                                 "metadata": {}, "items": items}), media_type="application/json")
        return await original(request)

    cluster.server.handle = handle


async def steady_state(n_hpas: int, sync: float, periods: int, upstream_like: bool) -> dict[str, float]:
    from pyhpa.adapters.kube.client import KubeClient, load_config
    from pyhpa.cluster.embedded import EmbeddedCluster
    from pyhpa.live.loop import ControllerOptions, HPAController
    from pyhpa.engine.config import ControllerConfig

    with tempfile.TemporaryDirectory() as d:
        async with EmbeddedCluster(Path(d), port=0, simulate=False) as cluster:
            populate(cluster.store, 10, n_hpas // 10, 10)
            install_steady_metrics(cluster)
            client = KubeClient.from_config(load_config(str(cluster.kubeconfig_path)), qps=0)
            ctl = HPAController(client, ControllerConfig(sync_period=sync),
                                ControllerOptions(sync_period=sync, workers=5, use_informers=not upstream_like))
            if upstream_like:
                ctl.shared_pod_metrics.cache.ttl = 0.0  # one PodMetrics LIST per HPA, as upstream
            times: dict[str, list[float]] = {}
            inner = ctl.process

            async def recording(key: str) -> bool:
                times.setdefault(key, []).append(time.monotonic())
                return await inner(key)

            ctl.process = recording  # type: ignore[method-assign]
            t0 = time.monotonic()
            try:
                await ctl.start()
                # warm-up: the first pass of every HPA writes its status once (conditions appear)
                await asyncio.sleep(2 * sync)
                base = client.counter.total_excluding("watch")
                cpu0 = time.process_time()
                m0 = time.monotonic()
                await asyncio.sleep(sync * periods)
                m1 = time.monotonic()
                requests = client.counter.total_excluding("watch") - base
                cpu = time.process_time() - cpu0
            finally:
                await ctl.stop()
                await client.close()
            # per HPA: the longest gap between two consecutive reconciles inside the window
            worst = 0.0
            on_time = 0
            for key, ts in times.items():
                inside = [t for t in ts if m0 - sync <= t <= m1]
                gaps = [b - a for a, b in zip(inside, inside[1:])]
                g = max(gaps) if gaps else float("inf")
                worst = max(worst, g)
                on_time += g <= sync * 1.1
            return {
                "requests_per_hpa_per_sync": requests / (n_hpas * periods),
                "hpas_reconciled_every_period": on_time / n_hpas,
                "worst_gap_seconds": worst,
                "cpu_seconds_per_sync": cpu / periods,
                "startup_seconds": time.monotonic() - t0,
            }


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def _scrape(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError as exc:
        return 0, str(exc)


def _counter_sum(metrics_text: str, name: str, **labels: str) -> float:
    total = 0.0
    for line in metrics_text.splitlines():
        if not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        if all(f'{k}="{v}"' in head for k, v in labels.items()):
            total += float(value)
    return total


def memory_figures(n_hpas: int, pods_per: int, sync: float = 15.0) -> dict[str, float]:
    """RSS (MiB) of a `pyhpa run` process once its caches hold the fleet and once it reconciles it,
    and the seconds each stage took. Figures reached before a failure are kept."""
    from pyhpa.cluster.embedded import EmbeddedCluster

    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as d:
        with EmbeddedCluster(Path(d), port=0, simulate=False) as cluster:
            populate(cluster.store, 10, n_hpas // 10, pods_per)
            install_steady_metrics(cluster)
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            started = time.monotonic()
            proc = subprocess.Popen(
                [sys.executable, "-m", "pyhpa.cli", "run", "--kubeconfig", str(cluster.kubeconfig_path),
                 "--horizontal-pod-autoscaler-sync-period", f"{sync:g}s", "--no-persist-state",
                 "--leader-elect=false", "--kube-api-qps", "0",
                 "--metrics-bind-address", f"127.0.0.1:{port}", "--log-level", "WARNING"],
                cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)},
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                def wait(what: str, done: Any, limit: float) -> None:
                    deadline = time.monotonic() + limit
                    while not done():
                        if proc.poll() is not None:
                            raise RuntimeError(f"controller exited ({proc.returncode}) while waiting for {what}")
                        if time.monotonic() > deadline:
                            raise TimeoutError(f"no {what} after {limit:.0f}s")
                        time.sleep(0.5)

                wait("readiness", lambda: _scrape(port, "/readyz")[0] == 200, 900)
                out["synced_seconds"] = time.monotonic() - started
                out["synced_rss"] = _rss_mib(proc.pid)

                def reconciled_all() -> bool:
                    text = _scrape(port, "/metrics")[1]
                    return (_counter_sum(text, "horizontal_pod_autoscaler_controller_reconciliations_total") >= n_hpas
                            and _counter_sum(text, "pyhpa_api_requests_total", verb="list", resource="deployments") >= 1)

                wait("reconcile of every HPA", reconciled_all, 900)
                time.sleep(sync)  # one more period: the steady state reads the Deployment cache
                out["reconciling_seconds"] = time.monotonic() - started
                out["reconciling_rss"] = _rss_mib(proc.pid)
            except Exception as exc:
                out["error"] = exc  # type: ignore[assignment]
            finally:
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
    return out


def run() -> list[tuple[str, float, str]]:
    sys.path.insert(0, str(ROOT))
    n = 200 if QUICK else 1000
    sync = 15.0
    periods = 2 if QUICK else 3
    figures: list[tuple[str, float, str]] = []

    def failed(part: str, exc: BaseException) -> None:
        figures.append((f"{part}_FAILED", float("nan"), repr(exc)))

    try:
        ours = asyncio.run(steady_state(n, sync, periods, upstream_like=False))
        figures += [
            (f"hpas_{n}_requests_per_hpa_per_sync", ours["requests_per_hpa_per_sync"], "requests"),
            (f"hpas_{n}_reconciled_every_sync_period", 100.0 * ours["hpas_reconciled_every_period"],
             f"% (gap <= 1.1 x {sync:.0f}s)"),
            (f"hpas_{n}_worst_gap_between_reconciles", ours["worst_gap_seconds"], "s"),
            (f"hpas_{n}_controller_cpu_per_sync", ours["cpu_seconds_per_sync"], "s (controller+cluster process)"),
        ]
    except Exception as exc:
        failed(f"hpas_{n}", exc)
    try:
        upstream = asyncio.run(steady_state(n, sync, periods, upstream_like=True))
        figures += [
            (f"hpas_{n}_upstream_like_requests_per_hpa_per_sync", upstream["requests_per_hpa_per_sync"], "requests"),
            (f"hpas_{n}_upstream_like_reconciled_every_sync_period", 100.0 * upstream["hpas_reconciled_every_period"], "%"),
        ]
    except Exception as exc:
        failed(f"hpas_{n}_upstream_like", exc)
    mem_hpas, mem_pods = (2000, 10) if QUICK else (10_000, 10)
    fleet = f"{mem_hpas}_hpas_{mem_hpas * mem_pods}_pods"
    try:
        mem = memory_figures(mem_hpas, mem_pods)
    except Exception as exc:
        mem = {"error": exc}  # type: ignore[dict-item]
    for key, label, unit in (("synced_rss", f"memory_rss_{fleet}_caches_synced", "MiB"),
                             ("synced_seconds", f"memory_cache_sync_{fleet}", "s"),
                             ("reconciling_rss", f"memory_rss_{fleet}_reconciling", "MiB (Deployment cache included)"),
                             ("reconciling_seconds", f"memory_first_full_reconcile_{fleet}", "s from start")):
        if key in mem:
            figures.append((label, mem[key], unit))
    if "error" in mem:
        failed(f"memory_{fleet}", mem["error"])  # type: ignore[arg-type]
    return figures


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name}: {value:,.3f} {unit}")
