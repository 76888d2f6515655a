"""Pod Tables (what `kubectl get pods` reads) built from the stored bytes: rows carry each pod's
metadata exactly as a GET returns it, label selectors and pages pick the same pods as a JSON
list; and the connection's joined writes keep a response whole and in order."""

from __future__ import annotations

import asyncio

import pytest
from starlette.testclient import TestClient

from pyhpa.cluster.apiserver import connections
from pyhpa.cluster.apiserver.server import APIServer
from pyhpa.cluster.apiserver.storage import Store

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


@pytest.fixture()
def client(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    c = TestClient(APIServer(store))
    for i in range(7):
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": f"p{i}", "labels": {"tier": "web" if i % 2 else "db"},
                            "annotations": {"note": "é \u2028 \"quoted\""}},
               "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
        assert c.post("/api/v1/namespaces/default/pods", json=pod).status_code == 201
    try:
        yield c
    finally:
        c.close()
        store.close()


def _names(doc: dict) -> list[str]:
    return [r["cells"][0] for r in doc["rows"]]


def test_rows_carry_the_metadata_a_get_returns(client):
    doc = client.get("/api/v1/namespaces/default/pods", headers={"Accept": TABLE}).json()
    assert _names(doc) == [f"p{i}" for i in range(7)]
    for row in doc["rows"]:
        got = client.get(f"/api/v1/namespaces/default/pods/{row['cells'][0]}").json()
        assert row["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                 "metadata": got["metadata"]}
        assert got["metadata"]["managedFields"]  # the bulk the row sends on as stored


def test_label_selectors_and_pages_pick_what_a_json_list_picks(client):
    base = "/api/v1/namespaces/default/pods?labelSelector=tier%3Dweb&limit=2"
    json_names, table_names = [], []
    for accept, names in (("application/json", json_names), (TABLE, table_names)):
        url = base
        while True:
            doc = client.get(url, headers={"Accept": accept}).json()
            names += [i["metadata"]["name"] for i in doc["items"]] if "items" in doc \
                else _names(doc)
            token = doc["metadata"].get("continue")
            if not token:
                break
            url = f"{base}&continue={token}"
    assert table_names == json_names == ["p1", "p3", "p5"]


class _Transport:
    def __init__(self) -> None:
        self.sends: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.sends.append(data)

    def writelines(self, data: list[bytes]) -> None:
        self.sends.append(b"".join(data))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


def test_a_head_leaves_with_the_next_write_and_other_writes_at_once():
    async def run() -> _Transport:
        inner = _Transport()
        joined = connections.JoinedWrites(inner, asyncio.get_running_loop())  # type: ignore[arg-type]
        joined.hold_next()
        joined.write(b"HTTP/1.1 200 OK\r\n\r\n")
        assert inner.sends == []  # the head waits for the body
        joined.write(b"body")
        assert inner.sends == [b"HTTP/1.1 200 OK\r\n\r\nbody"]  # together, at once
        joined.write(b"event")  # a streamed part: at once
        assert len(inner.sends) == 2
        joined.hold_next()
        joined.write(b"HTTP/1.1 200 OK\r\n\r\n")  # a stream whose first part is late
        await asyncio.sleep(0)  # the turn ended: the head went alone
        assert inner.sends[2] == b"HTTP/1.1 200 OK\r\n\r\n"
        joined.hold_next()
        joined.write(b"HEAD")
        joined.write(b"x" * (connections.HELD_BYTES + 1))  # too big to copy: two parts
        joined.hold_next()
        joined.write(b"last")
        joined.close()  # what is held goes before the close
        assert inner.closed
        await asyncio.sleep(0)
        return inner

    inner = asyncio.run(run())
    assert inner.sends == [b"HTTP/1.1 200 OK\r\n\r\nbody", b"event", b"HTTP/1.1 200 OK\r\n\r\n",
                           b"HEAD" + b"x" * (connections.HELD_BYTES + 1), b"last"]


def test_pod_cells_read_fields_of_unexpected_types_as_empty():
    from pyhpa.cluster.apiserver import resources, tables
    pods = [{"metadata": {"name": "a"}, "spec": {"containers": [{"name": "c"}]},
             "status": {"phase": "Running", "containerStatuses": 5}},
            {"metadata": {"name": "b"}, "status": "Running"},
            {"metadata": {"name": "c"}, "spec": {"containers": [{}, {}]},
             "status": {"containerStatuses": [
                 None, {"ready": True, "state": "running", "restartCount": 2,
                        "lastState": {"terminated": {"finishedAt": "2026-01-01T00:00:00Z"}}},
                 {"ready": True, "state": {"running": {}}, "restartCount": "x"}]}}]
    rows = tables.table(resources.PODS, pods, now=1767225660.0)["rows"]
    assert [row["cells"][:4] for row in rows] == [
        ["a", "0/1", "Running", "0"], ["b", "0/0", "Pending", "0"],
        ["c", "1/2", "Pending", "2 (60s ago)"]]
