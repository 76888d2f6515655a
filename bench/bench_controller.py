"""Live-controller figures against the embedded cluster on this machine.

1. 1,000 HPAs with 10 pods each (10 namespaces), sync period 15 s, controller and cluster in this
   process: is every HPA reconciled in every sync period, and how many API requests per HPA per
   sync period does the steady state cost (watches excluded; upstream makes about 2-3: GET scale,
   LIST PodMetrics, ...)? The same fleet is also run in an upstream-like mode (GET /scale and LIST
   PodMetrics per HPA) for contrast.
2. Fleets (1,000 and 10,000 HPAs with 10 pods each): `pyhpa run` in its own process against the
   cluster in this one: cache sync, first full pass, RSS synced and reconciling, CPU of each
   process per period, the share of HPAs reconciled in every period and the lag distribution
   (docs/benchmarks.md, "The live controller at fleet size").

Objects are written straight into the cluster's store (fast), then served over HTTPS as usual.
Set PYHPA_BENCH_QUICK=1 for a smaller, faster run (200 HPAs, a 2,000-HPA fleet);
PYHPA_BENCH_FLEET=1000,10000 picks the fleet sizes; `bench_controller.py 10000` runs one fleet.
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


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (from /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


CHILD_FLAG = "--controller-child"


def controller_child(argv: list[str]) -> None:
    """`pyhpa run` as is, with the time of every reconcile recorded and written to
    $PYHPA_BENCH_TIMES at exit (and a cProfile to $PYHPA_BENCH_PROFILE: of the whole process, or
    from $PYHPA_BENCH_PROFILE_AFTER seconds after the caches' sync)."""
    import atexit
    import json

    from pyhpa.cli import main
    from pyhpa.live.loop import HPAController

    times: dict[str, list[float]] = {}
    marks: dict[str, float] = {}
    inner_process, inner_start = HPAController.process, HPAController.start

    async def process(self: Any, key: str) -> bool:
        times.setdefault(key, []).append(time.monotonic())
        return await inner_process(self, key)

    profile_path = os.environ.get("PYHPA_BENCH_PROFILE")
    profiler = None
    if profile_path:
        import cProfile

        profiler = cProfile.Profile()
        atexit.register(lambda: (profiler.disable(), profiler.dump_stats(profile_path)))
    # seconds after the caches' sync to start profiling (e.g. past the first pass: the steady state)
    profile_after = float(os.environ.get("PYHPA_BENCH_PROFILE_AFTER", "0"))
    if profiler is not None and not profile_after:
        profiler.enable()

    async def start(self: Any) -> None:
        await inner_start(self)
        marks["synced"] = time.monotonic()
        if profiler is not None and profile_after:
            asyncio.get_running_loop().call_later(profile_after, profiler.enable)

    HPAController.process = process  # type: ignore[method-assign]
    HPAController.start = start  # type: ignore[method-assign]
    def dump() -> None:
        Path(os.environ["PYHPA_BENCH_TIMES"]).write_text(json.dumps({"marks": marks, "times": times}))

    atexit.register(dump)
    sys.argv = ["pyhpa", *argv]
    main()


def fleet_figures(n_hpas: int, pods_per: int, sync: float = 15.0, periods: int = 3) -> dict[str, Any]:
    """`pyhpa run` in its own process against the embedded cluster (this process) holding
    `n_hpas` HPAs of `pods_per` pods each: when its caches synced, when it finished its first
    pass over every HPA, its resident size then and while reconciling, the CPU it and the
    cluster spend per sync period, and the gaps between consecutive reconciles of each HPA
    over `periods` periods after the first pass. Figures reached before a failure are kept."""
    import json

    from pyhpa.cluster.embedded import EmbeddedCluster

    out: dict[str, Any] = {"load_before": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as d:
        with EmbeddedCluster(Path(d), port=0, simulate=False) as cluster:
            populate(cluster.store, 10, n_hpas // 10, pods_per)
            install_steady_metrics(cluster)
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            times_path = Path(d) / "times.json"
            env = {**os.environ, "PYTHONPATH": str(ROOT), "PYHPA_BENCH_TIMES": str(times_path)}
            started = time.monotonic()
            proc = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), CHILD_FLAG,
                 "run", "--kubeconfig", str(cluster.kubeconfig_path),
                 "--horizontal-pod-autoscaler-sync-period", f"{sync:g}s", "--no-persist-state",
                 "--leader-elect=false", "--kube-api-qps", "0",
                 "--metrics-bind-address", f"127.0.0.1:{port}", "--log-level", "WARNING"],
                cwd=str(ROOT), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            peak = 0.0
            try:
                def wait(what: str, done: Any, limit: float, every: float = 0.5) -> None:
                    """Poll `done` every `every` s (sampling the RSS every 0.5 s meanwhile)."""
                    nonlocal peak
                    deadline = time.monotonic() + limit
                    next_poll = 0.0
                    while True:
                        if time.monotonic() >= next_poll:
                            if done():
                                return
                            next_poll = time.monotonic() + every
                        if proc.poll() is not None:
                            raise RuntimeError(f"controller exited ({proc.returncode}) while waiting for {what}")
                        if time.monotonic() > deadline:
                            raise TimeoutError(f"no {what} after {limit:.0f}s")
                        peak = max(peak, _rss_mib(proc.pid))
                        time.sleep(0.5)

                wait("readiness", lambda: _scrape(port, "/readyz")[0] == 200, 1200)
                out["synced_seconds"] = time.monotonic() - started
                out["synced_rss"] = _rss_mib(proc.pid)

                def reconciled_all() -> bool:
                    text = _scrape(port, "/metrics")[1]
                    return _counter_sum(text, "horizontal_pod_autoscaler_controller_reconciliations_total") >= n_hpas

                # /metrics of 10,000 HPAs costs the controller ~0.1 CPU-s to render: asked every 5 s
                wait("reconcile of every HPA", reconciled_all, 1200, every=5.0)
                cpu_ctl, cpu_cluster, m0 = _cpu_seconds(proc.pid), time.process_time(), time.monotonic()
                wait("the steady-state window", lambda: time.monotonic() - m0 >= sync * periods, sync * periods + 5)
                m1 = time.monotonic()
                out["controller_cpu_per_sync"] = (_cpu_seconds(proc.pid) - cpu_ctl) / periods
                out["cluster_cpu_per_sync"] = (time.process_time() - cpu_cluster) / periods
                out["reconciling_rss"] = _rss_mib(proc.pid)
                out["peak_rss"] = peak
            except Exception as exc:
                out["error"] = exc
            finally:
                proc.terminate()
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
            out["load_after"] = os.getloadavg()[0]
            if "reconciling_rss" in out and times_path.exists():
                doc = json.loads(times_path.read_text())
                synced_at = doc["marks"].get("synced", float("nan"))
                firsts = [ts[0] for ts in doc["times"].values() if ts]
                if len(firsts) >= n_hpas:
                    # the pass counted from the caches' sync (the workers start then)
                    out["first_pass_seconds"] = max(firsts) - started
                    out["first_pass_after_sync"] = max(firsts) - synced_at
                gaps: list[float] = []
                on_time = 0
                for ts in doc["times"].values():
                    inside = [t for t in ts if m0 - sync <= t <= m1]
                    own = [b - a for a, b in zip(inside, inside[1:])]
                    gaps += own
                    on_time += bool(own) and max(own) <= sync * 1.1
                out["reconciled_every_period"] = on_time / n_hpas
                out["gap_p50"] = _percentile(gaps, 0.50)
                out["gap_p99"] = _percentile(gaps, 0.99)
                out["gap_max"] = max(gaps) if gaps else float("nan")
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
    sizes = os.environ.get("PYHPA_BENCH_FLEET", "2000" if QUICK else "1000,10000")
    for size in (int(x) for x in sizes.split(",") if x.strip()):
        figures += fleet_lines(size, fleet_figures(size, 10, sync))
    return figures


def fleet_lines(n: int, got: dict[str, Any]) -> list[tuple[str, float, str]]:
    fleet = f"{n}_hpas_{n * 10}_pods"
    load = f"load {got.get('load_before', float('nan')):.1f} -> {got.get('load_after', float('nan')):.1f}"
    sync = 15.0
    rows = (("synced_seconds", "cache_sync", "s from start (goal <= 60)"),
            ("synced_rss", "rss_caches_synced", "MiB (goal <= 300)"),
            ("first_pass_seconds", "first_full_pass", "s from start"),
            ("first_pass_after_sync", "first_full_pass_after_sync", f"s (goal <= {2 * sync:.0f})"),
            ("reconciling_rss", "rss_reconciling", "MiB (goal <= 300)"),
            ("peak_rss", "rss_peak", "MiB"),
            ("controller_cpu_per_sync", "controller_cpu_per_sync", f"CPU-s per period; {load}"),
            ("cluster_cpu_per_sync", "cluster_cpu_per_sync", "CPU-s per period (API server + bench)"),
            ("reconciled_every_period", "reconciled_every_period", "fraction (gap <= 1.1 x period; goal 1)"),
            ("gap_p50", "lag_p50", "s beyond the period"),
            ("gap_p99", "lag_p99", "s beyond the period"),
            ("gap_max", "lag_max", "s beyond the period"))
    out = []
    for key, label, unit in rows:
        if key in got:
            value = float(got[key]) - (sync if key.startswith("gap_") else 0.0)
            out.append((f"fleet_{fleet}_{label}", value, unit))
    if "error" in got:
        out.append((f"fleet_{fleet}_FAILED", float("nan"), repr(got["error"])))
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == [CHILD_FLAG]:
        controller_child(sys.argv[2:])
    elif sys.argv[1:]:  # only the separate-process fleet runs, e.g. `bench_controller.py 1000 10000`
        sys.path.insert(0, str(ROOT))
        for size in sys.argv[1:]:
            for name, value, unit in fleet_lines(int(size), fleet_figures(int(size), 10)):
                print(f"{name}: {value:,.3f} {unit}", flush=True)
    else:
        for name, value, unit in run():
            print(f"{name}: {value:,.3f} {unit}")
