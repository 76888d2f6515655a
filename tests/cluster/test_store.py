"""Store semantics: resourceVersions, preconditions, no-op writes, watch order, persistence."""

from __future__ import annotations

import asyncio
import threading

import pytest

from pyhpa.cluster.apiserver import resources as r
from pyhpa.cluster.apiserver.storage import AlreadyExists, Conflict, Expired, NotFound, Store
from tests import builders


def deployment(name: str, replicas: int = 1, labels: dict | None = None) -> dict:
    """A bare Deployment (only spec.replicas): the store does not care for the rest."""
    return builders.deployment(name, replicas, labels=labels or {"app": name}, selector=None, template=None,
                               status={})


def test_create_get_update_delete_bump_resource_version():
    s = Store()
    created = s.create(r.DEPLOYMENTS.key, deployment("web"))
    rv1 = int(created["metadata"]["resourceVersion"])
    assert created["metadata"]["uid"] and created["metadata"]["generation"] == 1
    got = s.get(r.DEPLOYMENTS.key, "default", "web")
    got["spec"]["replicas"] = 3
    updated = s.update(r.DEPLOYMENTS.key, got)
    assert int(updated["metadata"]["resourceVersion"]) > rv1
    assert updated["metadata"]["generation"] == 2
    deleted, now = s.delete(r.DEPLOYMENTS.key, "default", "web")
    assert now and int(deleted["metadata"]["resourceVersion"]) > int(updated["metadata"]["resourceVersion"])
    with pytest.raises(NotFound):
        s.get(r.DEPLOYMENTS.key, "default", "web")


def test_duplicate_create_and_stale_update_are_rejected():
    s = Store()
    s.create(r.DEPLOYMENTS.key, deployment("web"))
    with pytest.raises(AlreadyExists):
        s.create(r.DEPLOYMENTS.key, deployment("web"))
    stale = s.get(r.DEPLOYMENTS.key, "default", "web")
    fresh = s.get(r.DEPLOYMENTS.key, "default", "web")
    fresh["spec"]["replicas"] = 2
    s.update(r.DEPLOYMENTS.key, fresh)
    stale["spec"]["replicas"] = 5
    with pytest.raises(Conflict):
        s.update(r.DEPLOYMENTS.key, stale)


def test_noop_update_keeps_resource_version_and_emits_nothing():
    s = Store()
    obj = s.create(r.DEPLOYMENTS.key, deployment("web"))
    w = s.watch(r.DEPLOYMENTS.key, since=obj["metadata"]["resourceVersion"])
    same = s.update(r.DEPLOYMENTS.key, s.get(r.DEPLOYMENTS.key, "default", "web"))
    assert same["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]
    assert w.next(timeout=0.05) is None


def test_status_change_does_not_bump_generation():
    s = Store()
    s.create(r.DEPLOYMENTS.key, deployment("web"))
    def set_status(d):
        d["status"]["replicas"] = 1
    out = s.guaranteed_update(r.DEPLOYMENTS.key, "default", "web", set_status)
    assert out["metadata"]["generation"] == 1


def test_generate_name():
    s = Store()
    pod = s.create(r.PODS.key, {"metadata": {"generateName": "web-", "namespace": "default"},
                                "spec": {}})
    assert pod["metadata"]["name"].startswith("web-") and len(pod["metadata"]["name"]) == 9


def test_list_label_field_selectors_and_pagination():
    s = Store()
    for i in range(7):
        s.create(r.DEPLOYMENTS.key, deployment(f"d{i}", labels={"app": "a" if i % 2 else "b"}))
    assert [o["metadata"]["name"] for o in s.list(r.DEPLOYMENTS.key, "default",
                                                  field_selector="metadata.name=d3").items] == ["d3"]
    page = s.list(r.DEPLOYMENTS.key, "default", limit=3)
    names = [o["metadata"]["name"] for o in page.items]
    while page.continue_token:
        page = s.list(r.DEPLOYMENTS.key, "default", limit=3, continue_token=page.continue_token)
        names += [o["metadata"]["name"] for o in page.items]
    assert names == [f"d{i}" for i in range(7)]
    assert s.list(r.DEPLOYMENTS.key, "other").items == []


def test_finalizers_defer_deletion():
    s = Store()
    d = deployment("web")
    d["metadata"]["finalizers"] = ["x/y"]
    s.create(r.DEPLOYMENTS.key, d)
    obj, now = s.delete(r.DEPLOYMENTS.key, "default", "web")
    assert not now and obj["metadata"]["deletionTimestamp"]
    cur = s.get(r.DEPLOYMENTS.key, "default", "web")
    cur["metadata"]["finalizers"] = []
    s.update(r.DEPLOYMENTS.key, cur)
    with pytest.raises(NotFound):
        s.get(r.DEPLOYMENTS.key, "default", "web")


def test_watch_replays_from_resource_version_in_order_and_follows():
    s = Store()
    first = s.create(r.DEPLOYMENTS.key, deployment("a"))
    s.create(r.DEPLOYMENTS.key, deployment("b"))
    s.create(r.PODS.key, {"metadata": {"name": "p", "namespace": "default"}})
    w = s.watch(r.DEPLOYMENTS.key, since=first["metadata"]["resourceVersion"])
    s.delete(r.DEPLOYMENTS.key, "default", "a")
    evs = [w.next(timeout=1) for _ in range(2)]
    assert [(e.type, e.name) for e in evs] == [("ADDED", "b"), ("DELETED", "a")]
    assert evs[0].rv < evs[1].rv
    w.close()


def test_watch_initial_state_and_selector_filtering():
    s = Store()
    s.create(r.DEPLOYMENTS.key, deployment("a"))
    s.create(r.DEPLOYMENTS.key, deployment("b"))
    w = s.watch(r.DEPLOYMENTS.key, initial=True, field_selector="metadata.name=b")
    ev = w.next(timeout=1)
    assert (ev.type, ev.name) == ("ADDED", "b")
    assert w.next(timeout=0.05) is None


def test_async_watch_from_another_thread():
    s = Store()

    async def main():
        w = s.watch(r.PODS.key)
        t = threading.Thread(target=lambda: [s.create(r.PODS.key, {"metadata": {
            "name": f"p{i}", "namespace": "default"}}) for i in range(50)])
        t.start()
        names = []
        async for ev in w:
            names.append(ev.name)
            if len(names) == 50:
                break
        t.join()
        w.close()
        return names

    assert asyncio.run(main()) == [f"p{i}" for i in range(50)]


def test_persistence_and_monotonic_rv_across_restart(tmp_path):
    path = tmp_path / "db.sqlite"
    s = Store(path)
    s.create(r.DEPLOYMENTS.key, deployment("a"))
    b = s.create(r.DEPLOYMENTS.key, deployment("b"))
    s.delete(r.DEPLOYMENTS.key, "default", "b")
    last = s.resource_version
    s.close()
    s2 = Store(path)
    assert s2.resource_version == last
    assert [o["metadata"]["name"] for o in s2.list(r.DEPLOYMENTS.key).items] == ["a"]
    w = s2.watch(r.DEPLOYMENTS.key, since=b["metadata"]["resourceVersion"])
    assert w.next(timeout=1).type == "DELETED"
    new = s2.create(r.DEPLOYMENTS.key, deployment("c"))
    assert int(new["metadata"]["resourceVersion"]) == last + 1


def test_watch_from_too_old_resource_version_expires():
    s = Store(history_limit=3)
    for i in range(6):
        s.create(r.PODS.key, {"metadata": {"name": f"p{i}", "namespace": "default"}})
    with pytest.raises(Expired):
        s.watch(r.PODS.key, since=1)


def test_the_wal_is_checkpointed_off_the_writing_thread(tmp_path, monkeypatch):
    import sqlite3
    import time

    from pyhpa.cluster.apiserver.storage.sqlite import Checkpointer

    monkeypatch.setattr(Checkpointer, "every", 20)
    path = tmp_path / "db.sqlite"
    s = Store(path)
    # the writing connection never checkpoints by itself
    assert s._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    size = path.stat().st_size
    for i in range(100):
        s.create(r.PODS.key, {"metadata": {"name": f"p{i}", "namespace": "default"}})
    deadline = time.monotonic() + 10
    while path.stat().st_size == size and time.monotonic() < deadline:
        time.sleep(0.05)
    assert path.stat().st_size > size  # the checkpoint thread copied the WAL into the file
    s.close()
    # everything is in the database file once closed (no WAL left behind)
    assert not (tmp_path / "db.sqlite-wal").exists()
    db = sqlite3.connect(str(path))
    assert db.execute("SELECT count(*) FROM objects").fetchone()[0] == 100
    db.close()
    assert [o["metadata"]["name"] for o in Store(path).list(r.PODS.key).items][:2] == ["p0", "p1"]
