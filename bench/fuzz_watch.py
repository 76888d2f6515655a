"""The fuzzer's durability checks: open watches must see every acknowledged write, and every
acknowledged write must still be there after the server is killed and restarted.

Acknowledged: a 2xx answer to a non-dry-run write that carries the object's resourceVersion.
Seen: an event of a cluster-wide watch of that resource (one per group and resource, resumed
from its last resourceVersion whenever the stream ends, across restarts too) with that
resourceVersion.
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import time
from collections import defaultdict
from typing import Any

Key = tuple[str, str, str, str]  # group, resource, namespace, name


class Acks:
    """Writes the server acknowledged, by object; thread-safe."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rvs: dict[tuple[str, str], set[int]] = defaultdict(set)  # (group, resource) -> rvs
        self.last: dict[Key, tuple[int, bool, str]] = {}  # -> (rv, deleted, item path)

    def record(self, group: str, resource: str, method: str, path: str, status: int,
               payload: bytes) -> None:
        if method not in ("POST", "PUT", "PATCH", "DELETE") or not 200 <= status < 300 \
                or "dryRun=" in path:
            return
        try:
            obj = json.loads(payload)
            meta = obj["metadata"]
            rv, name = int(meta["resourceVersion"]), str(meta["name"])
        except (ValueError, KeyError, TypeError):
            return
        if obj.get("kind") in ("Status", None):
            return
        base = path.split("?")[0]
        for sub in ("/status", "/scale"):
            base = base.removesuffix(sub)
        item = base if method != "POST" else f"{base}/{name}"
        ns = str(meta.get("namespace") or "")
        key = (group, resource, ns, name)
        with self.lock:
            self.rvs[(group, resource)].add(rv)
            prev = self.last.get(key)
            if prev is None or rv >= prev[0]:
                self.last[key] = (rv, method == "DELETE" and "deletionTimestamp" not in meta,
                                  item)

    def count(self) -> int:
        with self.lock:
            return sum(len(v) for v in self.rvs.values())


class Watch(threading.Thread):
    """A cluster-wide watch of one resource, resumed from its last resourceVersion."""

    def __init__(self, owner: "Watches", group: str, version: str, resource: str) -> None:
        super().__init__(daemon=True, name=f"watch-{resource}.{group}")
        self.owner, self.group, self.resource = owner, group, resource
        base = "/api/" + version if not group else f"/apis/{group}/{version}"
        self.path = f"{base}/{resource}"
        self.rv = "0"
        self.seen: set[int] = set()
        self.deleted: dict[tuple[str, str], int] = {}
        self.gaps = 0  # 410s: the history no longer reached our resourceVersion
        self.errors: list[str] = []
        self.conn: http.client.HTTPSConnection | None = None

    def start_at(self, rv: str) -> None:
        self.rv = rv
        self.start()

    def run(self) -> None:
        while not self.owner.stopping.is_set():
            try:
                self._stream()
            except (OSError, http.client.HTTPException, ValueError):
                time.sleep(0.2)  # the server is away (a restart): try again

    def _stream(self) -> None:
        o = self.owner
        self.conn = http.client.HTTPSConnection("127.0.0.1", o.port, context=o.ctx, timeout=30)
        try:
            self.conn.request("GET", f"{self.path}?watch=true&allowWatchBookmarks=true"
                                     f"&resourceVersion={self.rv}&timeoutSeconds=600",
                              headers={"Authorization": f"Bearer {o.token}"})
            r = self.conn.getresponse()
            if r.status != 200:
                self.errors.append(f"watch {self.path}: {r.status} {r.read()[:200]!r}")
                time.sleep(0.5)
                return
            for line in r:
                if not line.strip():
                    continue
                event = json.loads(line)
                obj = event.get("object") or {}
                if event.get("type") == "ERROR":
                    if obj.get("code") == 410:
                        self.gaps += 1
                        self.rv = self._current_rv()
                    else:
                        self.errors.append(f"watch {self.path}: {obj}")
                    return
                meta = obj.get("metadata") or {}
                rv = meta.get("resourceVersion")
                if rv is None:
                    continue
                with o.lock:
                    if event.get("type") != "BOOKMARK":
                        self.seen.add(int(rv))
                    if event.get("type") == "DELETED":
                        self.deleted[(str(meta.get("namespace") or ""), str(meta.get("name")))] \
                            = int(rv)
                    self.rv = rv
        finally:
            self.conn.close()

    def _current_rv(self) -> str:
        o = self.owner
        c = http.client.HTTPSConnection("127.0.0.1", o.port, context=o.ctx, timeout=30)
        try:
            c.request("GET", f"{self.path}?limit=1",
                      headers={"Authorization": f"Bearer {o.token}"})
            return str(json.loads(c.getresponse().read())["metadata"]["resourceVersion"])
        finally:
            c.close()


class Watches:
    """One watch per (group, resource) fuzzed; compares what they saw with the acks."""

    def __init__(self, port: int, token: str, ctx: ssl.SSLContext,
                 resources: list[tuple[str, str, str]]) -> None:
        self.port, self.token, self.ctx = port, token, ctx
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.watches: dict[tuple[str, str], Watch] = {}
        for group, version, resource in resources:
            if (group, resource) not in self.watches:
                self.watches[(group, resource)] = Watch(self, group, version, resource)

    def start(self) -> None:
        for w in self.watches.values():
            w.start_at(w._current_rv())

    def stop(self) -> None:
        self.stopping.set()
        for w in self.watches.values():
            if w.conn is not None and w.conn.sock is not None:
                try:
                    w.conn.sock.shutdown(2)
                except OSError:
                    pass

    def misses(self, acks: Acks, wait: float = 15.0) -> list[str]:
        """Acknowledged resourceVersions no watch saw (waiting up to ``wait`` s for them)."""
        deadline = time.monotonic() + wait
        while True:
            with acks.lock, self.lock:
                missing = [(k, rv) for k, rvs in acks.rvs.items() if k in self.watches
                           for rv in rvs - self.watches[k].seen]
            if not missing or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        return [f"{k[1]}.{k[0]} resourceVersion {rv}" for k, rv in sorted(missing)]

    def deleted_after(self, key: tuple[str, str, str, str], rv: int) -> bool:
        w = self.watches.get((key[0], key[1]))
        with self.lock:
            return w is not None and w.deleted.get((key[2], key[3]), -1) >= rv

    def gaps(self) -> int:
        return sum(w.gaps for w in self.watches.values())

    def errors(self) -> list[str]:
        return [e for w in self.watches.values() for e in w.errors]


def check_after_restart(client: Any, acks: Acks, watches: Watches, wait: float = 5.0
                        ) -> list[str]:
    """Every acknowledged write still there (the object at that resourceVersion or later), or a
    watch saw it deleted later; returns the failures."""
    with acks.lock:
        last = dict(acks.last)
    out = []
    for key, (rv, deleted, item) in last.items():
        if deleted:
            continue
        status, payload, _ = client.request("GET", item)
        if status == 200:
            try:
                now = int(json.loads(payload)["metadata"]["resourceVersion"])
            except (ValueError, KeyError, TypeError):
                out.append(f"GET {item}: 200 but no resourceVersion")
                continue
            if now < rv:
                out.append(f"GET {item}: resourceVersion {now}, acknowledged {rv}")
        elif status == 404:
            deadline = time.monotonic() + wait
            while not watches.deleted_after(key, rv) and time.monotonic() < deadline:
                time.sleep(0.2)
            if not watches.deleted_after(key, rv):
                out.append(f"GET {item}: 404, acknowledged at resourceVersion {rv} and no "
                           f"deletion seen")
        else:
            out.append(f"GET {item}: {status} {payload[:120]!r}")
    return out
