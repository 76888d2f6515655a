"""A property-based fuzzer of the embedded API server (issues 18 and 28).

It starts a real ``pyhpa cluster`` on 127.0.0.1 (its output to a log file, read for tracebacks)
and sends seeded random requests from several connections at once (:mod:`fuzz_gen`: every
served kind, faults at every depth of its schema, every write verb, patch type and subresource,
duplicate keys, BOMs and UTF-16 bodies). Between them (:mod:`fuzz_probes`, :mod:`fuzz_watch`):

  1. no answer is a 5xx, and every error answer is a Kubernetes ``Status``;
  2. every metrics API, ``/readyz?verbose`` and the Prometheus exporter pages answer, parseably;
  3. a new Deployment becomes Ready within a bound (the simulation is alive);
  4. bad and missing tokens get 401, oversized bodies 413;
  5. open watches see every acknowledged write;
  6. after a SIGKILL and a restart mid-run, every acknowledged write is still there;
  7. the server's log holds no traceback;
  8. the oracle: every input kube-apiserver refuses is refused (``--oracle-report-only`` lists
     the accepted ones without failing the run).

Usage: ``python bench/fuzz_apiserver.py [--requests 100000] [--seed 1] [--workers 4]``
(``make fuzz``); docs/benchmarks.md. Prints the figures; exits 1 when a property failed.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import random
import re
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for _p in (str(REPO), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import fuzz_gen  # noqa: E402
import fuzz_probes  # noqa: E402
import fuzz_watch  # noqa: E402

Obj = dict[str, Any]
TRACEBACK = "Traceback (most recent call last)"
ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b")
# A custom kind to fuzz as well: served once this CRD is stored.
WIDGETS_CRD: Obj = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.fuzz.pyhpa.io"},
    "spec": {"group": "fuzz.pyhpa.io", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "subresources": {"status": {}, "scale": {
                               "specReplicasPath": ".spec.replicas",
                               "statusReplicasPath": ".status.replicas"}},
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": {"type": "object", "properties": {
                                   "replicas": {"type": "integer", "minimum": 0},
                                   "size": {"type": "string", "enum": ["s", "m", "l"]},
                                   "ports": {"type": "array", "items": {"type": "integer"}},
                                   "free": {"type": "object",
                                            "x-kubernetes-preserve-unknown-fields": True}}},
                               "status": {"type": "object", "properties": {
                                   "replicas": {"type": "integer"}}}}}}}]}}


@dataclass
class Figures:
    requests: int = 0
    statuses: collections.Counter = field(default_factory=collections.Counter)
    server_errors: int = 0
    non_status_errors: int = 0
    read_failures: int = 0  # metrics APIs, /readyz?verbose, exporter pages
    degraded_items: int = 0  # [-] lines of /readyz?verbose (skipped objects), most seen
    dead_simulation: int = 0
    ready_checks: int = 0
    protocol_failures: int = 0
    tracebacks: int = 0
    client_errors: int = 0  # the fuzzer's own failures to send a request (a run cut short)
    oracle_accepted: list[str] = field(default_factory=list)
    oracle_twins_refused: list[str] = field(default_factory=list)
    acks: int = 0
    watch_misses: int = 0
    watch_gaps: int = 0
    restarts: int = 0
    restart_failures: int = 0
    restart_checked: int = 0
    seconds: float = 0.0
    samples: list[str] = field(default_factory=list)
    failed_requests: list[Obj] = field(default_factory=list)  # each 5xx request, to replay
    oracle_report_only: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def sample(self, line: str) -> None:
        if len(self.samples) < 60:
            self.samples.append(line)

    def ok(self) -> bool:
        return not (self.server_errors or self.non_status_errors or self.read_failures
                    or self.dead_simulation or self.protocol_failures or self.tracebacks
                    or self.watch_misses or self.restart_failures or self.client_errors
                    or (self.oracle_accepted and not self.oracle_report_only))

    def lines(self) -> list[str]:
        hist = ", ".join(f"{code}: {n}" for code, n in sorted(self.statuses.items()))
        rate = self.requests / self.seconds if self.seconds else 0.0
        oracle = [f"  accepted: {c}" for c in self.oracle_accepted] + \
                 [f"  twin refused: {c}" for c in self.oracle_twins_refused]
        return [f"requests: {self.requests:,} in {self.seconds:.1f} s ({rate:.0f}/s)",
                f"status codes: {hist}", f"5xx: {self.server_errors}",
                f"error bodies that are not a Status: {self.non_status_errors}",
                f"tracebacks in the server log: {self.tracebacks}",
                f"read-side failures (metrics APIs, /readyz?verbose, exporters): "
                f"{self.read_failures}; most [-] items in /readyz?verbose: {self.degraded_items}",
                f"new Deployments not Ready in time: {self.dead_simulation} of "
                f"{self.ready_checks}",
                f"token / body-size failures: {self.protocol_failures}; requests the fuzzer "
                f"failed to send: {self.client_errors}",
                f"oracle inputs accepted: {len(self.oracle_accepted)}"
                + (" (report only)" if self.oracle_report_only else "")
                + f"; valid twins refused: {len(self.oracle_twins_refused)}", *oracle,
                f"acknowledged writes: {self.acks:,}; watch misses: {self.watch_misses}; "
                f"watch resumes refused (410): {self.watch_gaps}",
                f"restarts (SIGKILL): {self.restarts}; objects checked after: "
                f"{self.restart_checked:,}; missing or older: {self.restart_failures}"] + \
            [f"  e.g. {s}" for s in self.samples]


class Client:
    """One keep-alive HTTPS connection, reopened when the server closes it."""

    def __init__(self, port: int, token: str, ctx: ssl.SSLContext) -> None:
        self.port, self.token, self.ctx = port, token, ctx
        self.conn: http.client.HTTPSConnection | None = None

    def request(self, method: str, path: str, body: bytes | None = None,
                ctype: str | None = None, authorization: str | None = None
                ) -> tuple[int, bytes, str]:
        """``authorization`` None sends the cluster's token, "" no header, else that header."""
        headers = {"Accept": "application/json"}
        if authorization is None:
            authorization = f"Bearer {self.token}"
        if authorization:
            headers["Authorization"] = authorization
        if ctype is not None:
            headers["Content-Type"] = ctype
        # a drawn name may hold non-ASCII characters: send them percent-encoded, as Go's and
        # every other HTTP client does (http.client refuses a non-ASCII request line)
        path = "".join(c if c.isascii() else urllib.parse.quote(c) for c in path)
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx,
                                                        timeout=60)
            try:
                self.conn.request(method, path, body=body, headers=headers)
                r = self.conn.getresponse()
                data = r.read()
                if r.getheader("connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return r.status, data, r.getheader("content-type", "")
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class Server:
    """``pyhpa cluster`` in a child process on a fixed port, its output in ``log`` (never a
    pipe: nobody has to keep reading it for the server to go on)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.log = data_dir.parent / f"{data_dir.name}.log"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()
        self.token = (data_dir / "token").read_text().strip()
        self.ctx = ssl.create_default_context(cafile=str(data_dir / "tls" / "ca.crt"))

    def start(self, timeout: float = 60.0) -> None:
        offset = self.log.stat().st_size if self.log.exists() else 0
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "pyhpa.cli", "cluster", "--listen",
                 f"127.0.0.1:{self.port}", "--data-dir", str(self.data_dir)],
                cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.log, "rb") as f:
                f.seek(offset)
                if b"serving https://127.0.0.1:" in f.read():
                    return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError(f"the server did not start; its log: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def tracebacks(self) -> list[str]:
        """Each traceback in the log so far, cut to its last lines (the error)."""
        text = self.log.read_text(errors="replace")
        out = []
        for part in text.split(TRACEBACK)[1:]:
            lines = [ln for ln in part.splitlines()[1:400] if ln.strip()]
            tail = next((i for i, ln in enumerate(lines) if ERROR_LINE.match(ln)), None)
            out.append(" | ".join(lines[max(0, (tail or 0) - 2):(tail or 0) + 1]))
        return out


class Run:
    """The fuzzer's state for one run: workers, their barriers and the checks between."""

    def __init__(self, server: Server, *, requests: int, seed: int, workers: int,
                 check_every: int, ready_every: int, reset_every: int, restart: bool,
                 oracle_report_only: bool, seconds: float) -> None:
        self.server, self.total, self.seed = server, requests, seed
        self.workers, self.check_every, self.ready_every = workers, check_every, ready_every
        self.reset_every, self.restart, self.seconds = reset_every, restart, seconds
        self.figures = Figures(oracle_report_only=oracle_report_only)
        self.acks = fuzz_watch.Acks()
        # Workers stop at ``limit`` (a barrier: a restart, a namespace reset, the end) until
        # the monitor has done what is due there and moves it on.
        self.cond = threading.Condition()
        self.busy = 0
        self.issued = 0
        self.limit = 0
        self.made: dict[str, list[str]] = collections.defaultdict(list)
        self.started = time.monotonic()

    def client(self) -> Client:
        return Client(self.server.port, self.server.token, self.server.ctx)

    # ---- workers
    def claim(self) -> bool:
        with self.cond:
            while self.issued >= self.limit and self.issued < self.total:
                self.cond.wait()
            if self.issued >= self.total or time.monotonic() - self.started > self.seconds:
                return False
            self.issued += 1
            self.busy += 1
            return True

    def release(self) -> None:
        with self.cond:
            self.busy -= 1
            self.cond.notify_all()

    def at_barrier(self) -> bool:
        with self.cond:
            return self.issued >= self.limit and self.busy == 0

    def move_barrier(self, limit: int) -> None:
        with self.cond:
            self.limit = min(limit, self.total)
            self.cond.notify_all()

    def worker(self, index: int) -> None:
        gen = fuzz_gen.Generator(random.Random(self.seed * 1000 + index), WIDGETS_CRD)
        gen.made = self.made
        client = self.client()
        follow: str | None = None
        while self.claim():
            try:
                if follow is not None:  # the metrics API read of what the last write made
                    status, payload, rtype = client.request("GET", follow)
                    self.account(None, "GET", follow, None, None, status, payload, rtype)
                    follow = None
                    continue
                res, method, path, body, ctype = fuzz_gen.draw(gen)
                try:
                    status, payload, rtype = client.request(method, path, body, ctype)
                except (ValueError, http.client.HTTPException, OSError) as exc:
                    with self.figures.lock:  # counted and shown, not a dead worker
                        self.figures.client_errors += 1
                        self.figures.sample(f"fuzzer could not send {method} {path[:100]}: "
                                            f"{exc!r}")
                    continue
                self.account(res, method, path, body, ctype, status, payload, rtype)
                if method != "GET" and 200 <= status < 300 and "dryRun=" not in path:
                    follow = fuzz_probes.follow_up_read(res.kind, payload)
            finally:
                self.release()
        client.close()

    def account(self, res: Any, method: str, path: str, body: bytes | None, ctype: str | None,
                status: int, payload: bytes, rtype: str) -> None:
        f = self.figures
        if res is not None:
            self.acks.record(res.group, res.resource, method, path, status, payload)
        with f.lock:
            f.requests += 1
            f.statuses[status] += 1
            if status >= 500:
                f.server_errors += 1
                f.sample(f"{status} {method} {path[:100]}: {payload[:300]!r}")
                f.failed_requests.append({"method": method, "path": path, "content_type": ctype,
                                          "body": (body or b"").decode("utf-8", "replace"),
                                          "status": status})
            elif status >= 400 and status != 431:
                try:
                    is_status = json.loads(payload).get("kind") == "Status"
                except (ValueError, AttributeError):
                    is_status = False
                if not is_status:
                    f.non_status_errors += 1
                    f.sample(f"{status} {method} {path[:100]} ({rtype}): {payload[:200]!r}")
        if method == "POST" and status == 201:
            try:
                made = json.loads(payload)["metadata"]["name"]
            except (ValueError, KeyError, TypeError):
                return
            known = self.made[path.split("?")[0]]
            known.append(made)
            del known[:-20]

    # ---- the checks between
    def checks(self, client: Client, n: int, final: bool = False) -> None:
        f = self.figures
        failures, degraded = fuzz_probes.read_side(client, fuzz_probes.names_for_reads(client))
        f.read_failures += len(failures)
        f.degraded_items = max(f.degraded_items, degraded)
        for line in failures:
            f.sample("read: " + line)
        if final or n % self.ready_every < self.check_every:
            f.ready_checks += 1
            why = fuzz_probes.new_workload_ready(client, n)
            if why:
                f.dead_simulation += 1
                f.sample("simulation: " + why)
        if final or n % (self.ready_every * 2) < self.check_every:
            bad = fuzz_probes.protocol_checks(client,
                                              big=final or n % 20_000 < self.check_every)
            f.protocol_failures += len(bad)
            for line in bad:
                f.sample("protocol: " + line)

    def reset_namespaces(self, client: Client) -> None:
        for ns in fuzz_gen.NAMESPACES:
            client.request("DELETE", f"/api/v1/namespaces/{ns}")
        for _ in range(200):
            if all(client.request("GET", f"/api/v1/namespaces/{ns}")[0] == 404
                   for ns in fuzz_gen.NAMESPACES):
                break
            time.sleep(0.1)
        for ns in fuzz_gen.NAMESPACES:
            fuzz_probes.ensure_namespace(client, ns)
        self.made.clear()

    def kill_and_restart(self, client: Client, watches: fuzz_watch.Watches) -> None:
        f = self.figures
        self.note_misses(watches, "before the restart")
        self.server.kill()
        client.close()
        self.server.start()
        f.restarts += 1
        bad = fuzz_watch.check_after_restart(client, self.acks, watches)
        with self.acks.lock:
            f.restart_checked += sum(1 for v in self.acks.last.values() if not v[1])
        f.restart_failures += len(bad)
        for line in bad[:10]:
            f.sample("after restart: " + line)

    def note_misses(self, watches: fuzz_watch.Watches, when: str) -> None:
        misses = watches.misses(self.acks)
        self.figures.watch_misses = max(self.figures.watch_misses, len(misses))
        for line in misses[:5]:
            self.figures.sample(f"watch miss ({when}): {line}")

    def oracle(self, client: Client) -> None:
        accepted, refused = fuzz_probes.run_oracle(client.request)
        f = self.figures
        f.oracle_accepted = sorted(set(f.oracle_accepted) | set(accepted))
        f.oracle_twins_refused = sorted(set(f.oracle_twins_refused) | set(refused))

    def tracebacks(self) -> None:
        tbs = self.server.tracebacks()
        self.figures.tracebacks = len(tbs)
        seen = {s for s in self.figures.samples if s.startswith("traceback: ")}
        for tb in tbs:
            if f"traceback: {tb}" not in seen:
                self.figures.sample(f"traceback: {tb[:400]}")
                seen.add(f"traceback: {tb}")

    def run(self) -> Figures:
        f = self.figures
        client = self.client()
        status = client.request("POST", "/apis/apiextensions.k8s.io/v1/"
                                "customresourcedefinitions", json.dumps(WIDGETS_CRD).encode(),
                                "application/json")[0]
        if status not in (201, 409):
            raise RuntimeError(f"the fuzzer's CRD was refused: {status}")
        for ns in fuzz_gen.NAMESPACES + (fuzz_probes.READY_NS,):
            fuzz_probes.ensure_namespace(client, ns)
        self.oracle(client)
        gen = fuzz_gen.Generator(random.Random(self.seed), WIDGETS_CRD)
        watches = fuzz_watch.Watches(self.server.port, self.server.token, self.server.ctx, [
            (res.group, version, res.resource) for res, version in gen.kinds])
        watches.start()
        self.started = time.monotonic()
        threads = [threading.Thread(target=self.worker, args=(i,), daemon=True)
                   for i in range(self.workers)]
        for t in threads:
            t.start()
        next_check = self.check_every
        barriers = sorted({self.total, *range(self.reset_every, self.total, self.reset_every)}
                          | ({self.total // 2} if self.restart else set()))
        restart_at = self.total // 2 if self.restart else -1
        self.move_barrier(barriers.pop(0))
        try:
            while any(t.is_alive() for t in threads):
                time.sleep(0.02)
                if self.issued >= next_check:
                    next_check += self.check_every
                    self.checks(client, self.issued)  # while the workers go on
                    self.tracebacks()
                if not self.at_barrier() or self.limit >= self.total:
                    continue
                if self.limit == restart_at:
                    self.kill_and_restart(client, watches)
                if self.limit % self.reset_every == 0:
                    self.note_misses(watches, "before a namespace reset")
                    self.reset_namespaces(client)
                self.move_barrier(barriers.pop(0))
            f.seconds = time.monotonic() - self.started
            self.note_misses(watches, "at the end")
            self.checks(client, self.issued, final=True)
            self.oracle(client)
        finally:
            self.move_barrier(self.total)
            watches.stop()
            f.acks = self.acks.count()
            f.watch_gaps = watches.gaps()
            for line in watches.errors()[:5]:
                f.sample("watch: " + line)
            self.tracebacks()
            client.close()
        return f


def fuzz_new_server(data_dir: Path, *, requests: int, seed: int, workers: int = 4,
                    check_every: int = 2000, ready_every: int = 5000,
                    reset_every: int = 5000, restart: bool = True,
                    oracle_report_only: bool = False, seconds: float = 900.0) -> Figures:
    """Start a server in ``data_dir`` and fuzz it."""
    server = Server(data_dir)
    try:
        return Run(server, requests=requests, seed=seed, workers=workers,
                   check_every=check_every, ready_every=ready_every, reset_every=reset_every,
                   restart=restart, oracle_report_only=oracle_report_only,
                   seconds=seconds).run()
    finally:
        server.stop()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=900.0, help="stop after this long")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=4, help="concurrent connections")
    parser.add_argument("--check-every", type=int, default=2000,
                        help="requests between reads of the metrics APIs, /readyz, exporters")
    parser.add_argument("--ready-every", type=int, default=5000,
                        help="requests between new Deployments that must become Ready")
    parser.add_argument("--reset-every", type=int, default=5000,
                        help="requests between namespace resets (keeps the simulation small)")
    parser.add_argument("--no-restart", action="store_true", help="no SIGKILL mid-run")
    parser.add_argument("--oracle-report-only", action="store_true",
                        help="list accepted oracle inputs without failing the run")
    parser.add_argument("--keep-log", type=Path, help="copy the server's log here")
    parser.add_argument("--failed-requests", type=Path,
                        help="write each request answered 5xx here (JSON lines), to replay")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        try:
            figures = fuzz_new_server(
                data, requests=args.requests, seed=args.seed, workers=args.workers,
                check_every=args.check_every, ready_every=args.ready_every,
                reset_every=args.reset_every, restart=not args.no_restart,
                oracle_report_only=args.oracle_report_only, seconds=args.seconds)
        finally:
            if args.keep_log is not None and (Path(tmp) / "data.log").exists():
                args.keep_log.write_bytes((Path(tmp) / "data.log").read_bytes())
    print("\n".join(figures.lines()))
    if args.failed_requests is not None:
        args.failed_requests.write_text("".join(json.dumps(r) + "\n"
                                                for r in figures.failed_requests))
    return 0 if figures.ok() else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
