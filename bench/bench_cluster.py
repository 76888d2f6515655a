"""Embedded API server speed: GET one object, LIST 1,000 pods (as JSON and as the Table
`kubectl get pods` asks for), watch delivery latency, with 1,000 and with 10,000 pods stored.
Goals (issue #27) at 10,000 stored objects: GET >= 5,000 req/s, watch p99 <= 10 ms, the Table
of 1,000 pods <= 20 ms; 10,000 stored pods slow nothing by more than 2x.

Each size runs twice, each time in a fresh server process: as users run it (`pyhpa cluster`,
the workload simulation in the same process, labels ``1k``/``10k``) and the API server alone
(``EmbeddedCluster(simulate=False)``, labels ``1k_api_only``/``10k_api_only``). Why both: the
simulation shares the server's interpreter (its GIL), so its background work at rest
(``idle_cpu_*``, CPU seconds per second) slows every figure of the first kind; the second kind
is what the server itself costs. Every figure has a wall form and the server's CPU beside it,
and ``machine_load_*`` is the 1-minute load average when the size started (the machine is
shared: compare runs made back to back). The client uses keep-alive HTTPS connections from a
few threads.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import resource
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _pod(name: str, ns: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": ns}},
            "spec": {"containers": [{"name": "app", "image": "nginx",
                                     "resources": {"requests": {"cpu": "100m"}}}]},
            "status": {"phase": "Running", "podIP": "10.0.0.1"}}


def seed(data_dir: Path, ns: str, count: int) -> None:
    from pyhpa.cluster.apiserver import resources as r
    from pyhpa.cluster.apiserver.storage import Store
    store = Store(data_dir / "store.sqlite")
    if store.try_get(r.NAMESPACES.key, "", ns) is None:
        store.create(r.NAMESPACES.key, {"apiVersion": "v1", "kind": "Namespace",
                                        "metadata": {"name": ns}, "status": {"phase": "Active"}})
    for i in range(count):
        store.create(r.PODS.key, _pod(f"p{i:05d}", ns))
    store.close()


# The API server alone in its own process: the embedded cluster without its simulation, on
# uvloop and with the memory settings `pyhpa cluster` makes (young generation, freed buffers kept).
_API_ONLY = """
import asyncio, sys
import uvloop
from pyhpa.adapters.heap import server_process
from pyhpa.cluster.embedded import EmbeddedCluster

async def main():
    cluster = EmbeddedCluster(sys.argv[1], simulate=False)
    await cluster.start()
    print(f"serving {cluster.url}", flush=True)
    try:
        await cluster.serve_forever()
    finally:
        await cluster.stop()

try:
    with server_process(), asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(main())
except KeyboardInterrupt:
    pass
"""


class Server:
    """A server process over ``data_dir``: `pyhpa cluster`, or with ``simulate=False`` the
    API server alone."""

    def __init__(self, data_dir: Path, simulate: bool = True) -> None:
        cmd = [sys.executable, "-m", "pyhpa.cli", "cluster", "--listen", "127.0.0.1:0",
               "--data-dir", str(data_dir)] if simulate else \
            [sys.executable, "-c", _API_ONLY, str(data_dir)]
        self.proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        assert self.proc.stdout is not None
        self.log: list[str] = []  # everything the server printed
        for line in self.proc.stdout:
            self.log.append(line)
            m = re.search(r"serving https://127.0.0.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
        else:
            raise RuntimeError("server did not start")
        # keep reading: a full pipe would block the server's next write to it
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        self.token = (data_dir / "token").read_text().strip()
        self.ctx = ssl.create_default_context(cafile=str(data_dir / "tls" / "ca.crt"))

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.log.append(line)

    def log_text(self) -> str:
        """What the server printed so far (all of it once it stopped)."""
        return "".join(self.log)

    def cpu(self) -> float:
        """CPU seconds (user + system) the server process has used so far (Linux /proc)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mib(self) -> float:
        """The server process's resident memory now, in MiB (Linux /proc)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def conn(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=30)

    def request(self, c: http.client.HTTPSConnection, method: str, path: str,
                body: bytes | None = None, ctype: str = "application/json") -> tuple[int, bytes]:
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = ctype
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        return r.status, r.read()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self._reader.join(5)


def _own_cpu() -> float:
    """CPU seconds this process (the bench's client) has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def bench_get(s: Server, threads: int = 4, per_thread: int = 1500) -> tuple[float, float, float]:
    """Requests per second, and the server's and the client's CPU microseconds per request.

    Why the client's: it shares the machine's cores with the server, and its Python threads
    share one interpreter, so on a loaded machine its CPU bounds the rate as much as the
    server's does."""
    path = "/api/v1/namespaces/bench/pods/p00000"

    def worker() -> None:
        c = s.conn()
        for _ in range(per_thread):
            status, _ = s.request(c, "GET", path)
            assert status == 200
        c.close()

    c = s.conn()
    s.request(c, "GET", path)
    ts = [threading.Thread(target=worker) for _ in range(threads)]
    cpu0, own0 = s.cpu(), _own_cpu()
    start = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    n = threads * per_thread
    return (n / (time.perf_counter() - start), (s.cpu() - cpu0) / n * 1e6,
            (_own_cpu() - own0) / n * 1e6)


def bench_list(s: Server, rounds: int = 20, table: bool = False) -> tuple[float, float]:
    """Median LIST time and the server's mean CPU per LIST, in ms; ``table`` asks for the Table
    form `kubectl get pods` uses."""
    c = s.conn()
    times = []
    headers = {"Authorization": f"Bearer {s.token}", "Accept": (
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json" if table
        else "application/json")}
    cpu0 = s.cpu()
    for _ in range(rounds):
        t0 = time.perf_counter()
        c.request("GET", "/api/v1/namespaces/bench/pods?limit=500000", headers=headers)
        r = c.getresponse()
        body = r.read()
        times.append(time.perf_counter() - t0)
        doc = json.loads(body)
        assert r.status == 200 and len(doc["rows" if table else "items"]) == 1000
    return statistics.median(times) * 1000, (s.cpu() - cpu0) / rounds * 1000


def bench_watch(s: Server, ns: str, events: int = 200) -> tuple[float, float, float]:
    """Latency from sending a create to its ADDED event's arrival on a watch of the namespace:
    median and p99 in ms, and the server's CPU per create (its delivery included) in ms."""
    c = s.conn()
    s.request(c, "POST", "/api/v1/namespaces", json.dumps(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}).encode())
    _, body = s.request(c, "GET", f"/api/v1/namespaces/{ns}/pods")
    rv = json.loads(body)["metadata"]["resourceVersion"]
    wc = s.conn()
    wc.request("GET", f"/api/v1/namespaces/{ns}/pods?watch=true&resourceVersion={rv}",
               headers={"Authorization": f"Bearer {s.token}"})
    resp = wc.getresponse()
    arrived: dict[str, float] = {}
    done = threading.Event()

    def reader() -> None:
        while len(arrived) < events:
            line = resp.readline()
            if not line:
                break
            ev = json.loads(line)
            # the first event of a pod is its ADDED; later MODIFIED ones (the simulation's
            # status writes) must not move its arrival time
            arrived.setdefault(ev["object"]["metadata"]["name"], time.perf_counter())
        done.set()

    threading.Thread(target=reader, daemon=True).start()
    sent: dict[str, float] = {}
    cpu0 = s.cpu()
    for i in range(events):
        name = f"w{i:04d}"
        sent[name] = time.perf_counter()
        status, _ = s.request(c, "POST", f"/api/v1/namespaces/{ns}/pods",
                              json.dumps(_pod(name, ns)).encode())
        assert status == 201
        time.sleep(0.002)
    done.wait(30)
    cpu = (s.cpu() - cpu0) / events * 1000
    lat = sorted((arrived[n] - sent[n]) * 1000 for n in sent if n in arrived)
    assert len(lat) == events, f"{len(lat)} of {events} watch events arrived"
    wc.close()
    return statistics.median(lat), lat[int(len(lat) * 0.99) - 1], cpu


def settle(s: Server, idle: float = 0.05, limit: float = 30.0) -> float:
    """Wait until the server is idle (under ``idle`` CPU seconds per second over one second):
    on start the simulation adopts the seeded pods and writes their status, and the figures
    are about a cluster at rest. Returns the seconds that took (``limit`` when it never got
    idle: the simulation's work at rest then shows in ``idle_cpu_*``)."""
    start = time.perf_counter()
    before = s.cpu()
    while time.perf_counter() - start < limit:
        time.sleep(1.0)
        now = s.cpu()
        if now - before < idle:
            break
        before = now
    return time.perf_counter() - start - 1.0


def idle_cpu(s: Server, seconds: float = 2.0) -> float:
    """The server's CPU seconds per second while no request is made."""
    before = s.cpu()
    time.sleep(seconds)
    return (s.cpu() - before) / seconds


def _measure(s: Server, label: str) -> list[tuple[str, float, str]]:
    load = os.getloadavg()[0]
    ready = settle(s)
    idle = idle_cpu(s)
    get, get_cpu, get_client_cpu = bench_get(s)
    lst, lst_cpu = bench_list(s)
    lst_table, lst_table_cpu = bench_list(s, table=True)
    p50, p99, watch_cpu = bench_watch(s, "watch-" + label.replace("_", "-"))
    rss = s.rss_mib()  # after the lists: what the allocator kept of their buffers included
    return [(f"machine_load_{label}", load, "load avg 1m"),
            (f"startup_settle_{label}", ready, "s"), (f"idle_cpu_{label}", idle, "cpu s/s"),
            (f"get_one_{label}", get, "req/s"), (f"get_one_server_cpu_{label}", get_cpu, "us/req"),
            (f"get_one_client_cpu_{label}", get_client_cpu, "us/req"),
            (f"list_1000_pods_{label}", lst, "ms"),
            (f"list_1000_pods_server_cpu_{label}", lst_cpu, "ms"),
            (f"list_1000_pods_table_{label}", lst_table, "ms"),
            (f"list_1000_pods_table_server_cpu_{label}", lst_table_cpu, "ms"),
            (f"watch_latency_p50_{label}", p50, "ms"), (f"watch_latency_p99_{label}", p99, "ms"),
            (f"watch_server_cpu_per_event_{label}", watch_cpu, "ms"),
            (f"server_rss_{label}", rss, "MiB")]


def _sized(data: Path, label: str, api_only_first: bool) -> list[tuple[str, float, str]]:
    """Both runs of one size. The API server alone goes where it reads the same stored pods in
    every run: after the simulation's run when that one settles (it then adopted every pod),
    before it when it does not (what it wrote by its 30 s would vary from run to run)."""
    out: list[tuple[str, float, str]] = []
    runs = [(True, ""), (False, "_api_only")]
    for simulate, suffix in (runs[::-1] if api_only_first else runs):
        s = Server(data, simulate=simulate)
        try:
            out += _measure(s, label + suffix)
        finally:
            s.stop()
    return out


def run() -> list[tuple[str, float, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        seed(data, "bench", 1000)
        out = _sized(data, "1k", api_only_first=False)
        seed(data, "other", 9000)  # 10,000 pods stored in all
        out += _sized(data, "10k", api_only_first=True)
    return out


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name}: {value:,.2f} {unit}")
