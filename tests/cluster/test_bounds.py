"""Bounded resources: no request, connection or watcher can make the API server hold more than
its limits (issue 18): YAML aliases, object size, JSON patches, idle and slow connections, the
number of watches a client holds and what a slow watcher leaves undelivered."""

from __future__ import annotations

import json
import socket
import ssl
import time

import pytest

from pyhpa.cluster.apiserver import connections
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.embedded import EmbeddedCluster
from tests.cluster.conftest import api_client

pytestmark = pytest.mark.slow

NS = "default"
LEASES = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # short connection timeouts, read when the server starts and when a connection opens
    patch = pytest.MonkeyPatch()
    patch.setattr(connections, "IDLE_TIMEOUT", 1.0)
    patch.setattr(connections, "HEADER_TIMEOUT", 1.0)
    patch.setattr(connections, "BODY_TIMEOUT", 1.0)
    with EmbeddedCluster(tmp_path_factory.mktemp("bounds"), simulate=False) as c:
        yield c
    patch.undo()


@pytest.fixture()
def client(cluster):
    with api_client(cluster, timeout=30) as c:
        yield c


def lease(name: str, holder: str = "me") -> dict:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name},
            "spec": {"holderIdentity": holder}}


def raw_connection(cluster) -> ssl.SSLSocket:
    ctx = ssl.create_default_context(cafile=str(cluster.ca_path))
    sock = socket.create_connection(("127.0.0.1", cluster.port), timeout=10)
    return ctx.wrap_socket(sock, server_hostname="127.0.0.1")


def closed_within(sock: ssl.SSLSocket, seconds: float) -> tuple[bool, bytes]:
    """Whether the server closed ``sock`` within ``seconds``, and what it sent first."""
    sock.settimeout(seconds)
    data = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return True, data
            data += chunk
    except (socket.timeout, TimeoutError):
        return False, data
    except (ConnectionResetError, ssl.SSLError):
        return True, data


def test_yaml_alias_bombs_are_refused(client):
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{b}: &{b} [*{a},*{a},*{a},*{a},*{a},*{a},*{a},*{a},*{a}]\n"
        for a, b in zip("abcdefgh", "bcdefghi"))
    body = "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: bomb}\n" + bomb
    r = client.post(LEASES, content=body, headers={"Content-Type": "application/yaml"})
    assert r.status_code == 400 and "excessive aliasing" in r.json()["message"]
    r = client.patch(f"{LEASES}/bomb", params={"fieldManager": "t"}, content=body,
                     headers={"Content-Type": "application/apply-patch+yaml"})
    assert r.status_code == 400 and "excessive aliasing" in r.json()["message"]
    # aliases within go-yaml's ratio are fine
    ok = "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: few, labels: &l " \
         "{a: b}, annotations: *l}\nspec: {holderIdentity: me}\n"
    r = client.post(LEASES, content=ok, headers={"Content-Type": "application/yaml"})
    assert r.status_code == 201 and r.json()["metadata"]["annotations"] == {"a": "b"}


def test_objects_over_etcds_limit_are_a_413(client):
    r = client.post(LEASES, json=lease("huge", "x" * (1600 * 1024)))
    assert r.status_code == 413, r.text
    body = r.json()
    assert body["kind"] == "Status" and body["reason"] == "RequestEntityTooLarge"
    assert "the limit is 1572864" in body["message"]
    assert client.get(f"{LEASES}/huge").status_code == 404
    assert client.post(LEASES, json=lease("big", "x" * (1400 * 1024))).status_code == 201
    r = client.patch(f"{LEASES}/big", json={"spec": {"holderIdentity": "y" * (1600 * 1024)}},
                     headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 413
    assert len(client.get(f"{LEASES}/big").json()["spec"]["holderIdentity"]) == 1400 * 1024


def test_json_patches_are_bounded(client):
    assert client.post(LEASES, json=lease("p")).status_code == 201
    many = [{"op": "test", "path": "/kind", "value": "Lease"}] * 10_001
    r = client.patch(f"{LEASES}/p", content=json.dumps(many),
                     headers={"Content-Type": "application/json-patch+json"})
    assert r.status_code == 413
    assert r.json()["message"] == ("The allowed maximum operations in a JSON patch is 10000, "
                                   "got 10001")
    doubling = [{"op": "add", "path": "/metadata/annotations", "value": {"a": "x" * 1000}}] + [
        {"op": "copy", "from": "/metadata/annotations", "path": f"/metadata/annotations/c{i}"}
        for i in range(40)]
    r = client.patch(f"{LEASES}/p", content=json.dumps(doubling),
                     headers={"Content-Type": "application/json-patch+json"})
    assert r.status_code == 413 and "accumulated size increase of copy" in r.json()["message"]


def test_idle_and_slow_connections_are_closed(cluster):
    closed, _ = closed_within(raw_connection(cluster), 5)
    assert closed  # never sent a request
    sock = raw_connection(cluster)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # and the rest of the headers never
    assert closed_within(sock, 5)[0]
    sock = raw_connection(cluster)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1024 * 1024 + 10))
    closed, sent = closed_within(sock, 5)
    assert closed and sent.startswith(b"HTTP/1.1 431")
    sock = raw_connection(cluster)
    sock.sendall(b"POST " + LEASES.encode() + b" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                 + cluster.token.encode() + b"\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 100\r\n\r\n{\"kind\"")  # ... and the body stops there
    closed, sent = closed_within(sock, 5)
    assert closed and sent.startswith(b"HTTP/1.1 408") and b'"reason":"Timeout"' in sent
    sock = raw_connection(cluster)  # a request, then nothing: the keep-alive ends
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    closed, sent = closed_within(sock, 5)
    assert closed and sent.startswith(b"HTTP/1.1 200") and sent.endswith(b"ok")


def test_a_client_may_hold_only_so_many_watches(cluster, client):
    cluster.server.max_watches_per_client = 3
    try:
        streams = [client.stream("GET", LEASES, params={"watch": "true"}) for _ in range(3)]
        opened = [s.__enter__() for s in streams]
        assert all(r.status_code == 200 for r in opened)
        r = client.get(LEASES, params={"watch": "true"})
        assert r.status_code == 429 and r.headers["retry-after"] == "1"
        assert r.json()["reason"] == "TooManyRequests" and r.json()["details"] == {
            "retryAfterSeconds": 1}
        streams[0].__exit__(None, None, None)
        deadline = time.monotonic() + 5
        while cluster.store.watches_of("127.0.0.1") >= 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        with client.stream("GET", LEASES, params={"watch": "true"}) as again:
            assert again.status_code == 200
        for s in streams[1:]:
            s.__exit__(None, None, None)
    finally:
        cluster.server.max_watches_per_client = 100


def test_a_slow_watcher_is_dropped_with_a_410(cluster, client):
    cluster.server.watch_backlog = 20
    try:
        rv = client.get(LEASES).json()["metadata"]["resourceVersion"]
        with client.stream("GET", LEASES, params={"watch": "true", "resourceVersion": rv}) as w:
            assert w.status_code == 200
            written = 300  # 45 MB: more than the sockets between us buffer
            for i in range(written):  # faster than the watcher reads: nothing reads yet
                cluster.store.create(R.LEASES.key, {
                    **lease(f"slow{i:03d}", "z" * 150_000), "metadata": {
                        "name": f"slow{i:03d}", "namespace": NS}})
            events = [json.loads(line) for line in w.iter_lines() if line]
        assert events[-1]["type"] == "ERROR"
        assert events[-1]["object"]["code"] == 410
        assert events[-1]["object"]["reason"] == "Expired"
        assert len(events) - 1 < written  # dropped before it had them all
    finally:
        cluster.server.watch_backlog = 50_000


def test_the_server_stays_ready(client):
    assert client.get("/readyz").text == "ok"
