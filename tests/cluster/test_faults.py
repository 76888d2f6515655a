"""Faults against a real `pyhpa cluster` process: a SIGKILL in the middle of a stream of writes.

What must hold (the store's promise to its clients): every write the server acknowledged (201)
is there after a restart, nothing that was never created appears, and resourceVersions keep
rising across the restart. Bounded: two seconds of writes from two threads, loopback only.
"""

from __future__ import annotations

import ssl
import threading
import time

import httpx
import pytest

from .conftest import ClusterProcess

pytestmark = pytest.mark.slow

NS_PATH = "/api/v1/namespaces/default/configmaps"


def _client(proc: ClusterProcess) -> httpx.Client:
    return httpx.Client(base_url=proc.url, timeout=5, verify=ssl.create_default_context(cafile=proc.ca),
                        headers={"Authorization": f"Bearer {proc.token}"})


def _writer(proc: ClusterProcess, prefix: str, acked: list[str], stop: threading.Event) -> None:
    with _client(proc) as c:
        i = 0
        while not stop.is_set():
            name = f"{prefix}-{i}"
            i += 1
            try:
                r = c.post(NS_PATH, json={"apiVersion": "v1", "kind": "ConfigMap",
                                          "metadata": {"name": name}, "data": {"n": str(i)}})
            except httpx.HTTPError:
                return  # the server is gone: what was acknowledged so far is what counts
            if r.status_code == 201:
                acked.append(name)


def test_acknowledged_writes_survive_a_sigkill_mid_stream(tmp_path):
    proc = ClusterProcess(tmp_path).start()
    try:
        with _client(proc) as c:
            before = int(c.get(NS_PATH).json()["metadata"]["resourceVersion"])
        stop = threading.Event()
        acked: dict[str, list[str]] = {"a": [], "b": []}
        threads = [threading.Thread(target=_writer, args=(proc, p, acked[p], stop)) for p in acked]
        for t in threads:
            t.start()
        time.sleep(2.0)
        proc.kill()  # SIGKILL while both writers are sending
        stop.set()
        for t in threads:
            t.join(10)
        assert all(acked.values()), "the writers got no acknowledgement before the kill"

        proc.start()
        with _client(proc) as c:
            listed = c.get(NS_PATH).json()
        names = {item["metadata"]["name"] for item in listed["items"]}
        for prefix, done in acked.items():
            assert set(done) <= names, f"acknowledged {prefix} writes lost: {sorted(set(done) - names)[:5]}"
            # nothing appears that was never sent: each writer's names are a prefix of its sequence
            mine = sorted(int(n.split("-")[1]) for n in names if n.startswith(prefix + "-"))
            assert mine == list(range(len(mine)))
        after = int(listed["metadata"]["resourceVersion"])
        assert after > before
        with _client(proc) as c:  # and the restarted store goes on from there
            r = c.post(NS_PATH, json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late"}})
            assert r.status_code == 201, r.text
            assert int(r.json()["metadata"]["resourceVersion"]) > after
    finally:
        proc.stop()
