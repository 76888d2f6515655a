"""The store stays bounded through sustained writes (issue 28): the SQLite WAL under its
documented size, the watch history compacted as kube-apiserver compacts etcd (deleted objects'
data gone with it), watches resuming within the window and 410 Gone outside it."""

from __future__ import annotations

import secrets

import pytest

from pyhpa.cluster.apiserver.storage import Expired, Store
from pyhpa.cluster.apiserver.storage.sqlite import WAL_BOUND
from pyhpa.cluster.apiserver.storage.store import COMPACTION_INTERVAL
from tests.clock import Clock

KEY = "configmaps"


def config_map(name: str, size: int, marker: str = "") -> dict:
    return {"metadata": {"name": name, "namespace": "soak"},
            "data": {"blob": secrets.token_hex(size // 2), "marker": marker}}


def test_compaction_window_resume_and_gone(tmp_path):
    clock = Clock(1000.0)
    store = Store(tmp_path / "store.sqlite", compaction_interval=COMPACTION_INTERVAL, clock=clock)
    try:
        store.create(KEY, config_map("secret-ish", 100, marker="deleted-data-marker"))
        early = store.resource_version
        store.delete(KEY, "soak", "secret-ish")
        clock.t += COMPACTION_INTERVAL  # first compaction: to where the previous one stood (0)
        store.create(KEY, config_map("a", 100))
        after_first = store.resource_version
        w = store.watch(KEY, since=early)  # still within the window
        assert [ev.type for ev in w.iter(timeout=0)] == ["DELETED", "ADDED"]
        w.close()
        clock.t += COMPACTION_INTERVAL  # second: everything up to `after_first - 1` goes
        store.create(KEY, config_map("b", 100))
        with pytest.raises(Expired, match="too old resource version"):
            store.watch(KEY, since=early)
        w = store.watch(KEY, since=after_first - 1)
        assert [(ev.type, ev.name) for ev in w.iter(timeout=0)] == [("ADDED", "a"),
                                                                   ("ADDED", "b")]
        w.close()
        rows = store._db.execute("SELECT count(*) FROM events WHERE body LIKE ?",
                                 ("%deleted-data-marker%",)).fetchone()[0]
        assert rows == 0  # the deleted object's last state went with the compaction
    finally:
        store.close()


def test_continue_token_from_before_compaction_is_gone(tmp_path):
    clock = Clock(1000.0)
    store = Store(tmp_path / "store.sqlite", clock=clock)
    try:
        for i in range(3):
            store.create(KEY, config_map(f"c{i}", 10))
        first = store.list(KEY, "soak", limit=1)
        assert first.continue_token
        for i in range(3):  # the token's resourceVersion is compacted by the third
            clock.t += COMPACTION_INTERVAL
            store.create(KEY, config_map(f"later{i}", 10))
        with pytest.raises(Expired, match="continue parameter is too old"):
            store.list(KEY, "soak", limit=1, continue_token=first.continue_token)
    finally:
        store.close()


@pytest.mark.slow
def test_soak_wal_and_history_stay_bounded(tmp_path):
    """Creates, updates and deletes of 256 KiB objects (about 800 MB through the store) with
    the clock passing several compaction intervals: the WAL never passes WAL_BOUND and the
    history holds only the last two intervals' events."""
    clock = Clock(1000.0)
    path = tmp_path / "store.sqlite"
    wal = tmp_path / "store.sqlite-wal"
    store = Store(path, clock=clock)
    largest_wal = 0
    writes_per_interval = 400
    try:
        for step in range(1600):
            name = f"obj{step % 50}"
            if store.try_get(KEY, "soak", name) is None:
                store.create(KEY, config_map(name, 256 * 1024))
            elif step % 7 == 0:
                store.delete(KEY, "soak", name)
            else:
                store.update(KEY, config_map(name, 256 * 1024), check_rv=False)
            if step % writes_per_interval == writes_per_interval - 1:
                clock.t += COMPACTION_INTERVAL
            if wal.exists():
                largest_wal = max(largest_wal, wal.stat().st_size)
        assert largest_wal < WAL_BOUND, largest_wal
        events = store._db.execute("SELECT count(*) FROM events").fetchone()[0]
        assert events <= 2 * writes_per_interval + 1, events
        # a watch resumes from within the window, and not from before it
        recent = store.resource_version - writes_per_interval // 2
        store.watch(KEY, since=recent).close()
        with pytest.raises(Expired):
            store.watch(KEY, since=store.resource_version - 3 * writes_per_interval)
    finally:
        store.close()
    assert store._checkpointer is None or store._checkpointer.checkpoints > 0
