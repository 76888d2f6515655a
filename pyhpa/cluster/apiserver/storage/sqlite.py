"""The store's SQLite database: its tables, its durability settings and the thread that
checkpoints its write-ahead log.

Why WAL with ``synchronous=NORMAL``: every write is one transaction committed before the store
call returns, so a SIGKILLed process loses no acknowledged write; NORMAL only risks the last
transactions on a power loss, not on a process kill, and costs no fsync per commit.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from pyhpa.cluster.apiserver.private_files import private_file, restrict


class Checkpointer:
    """Copies the WAL into the database file from its own thread and connection.

    SQLite's automatic checkpoint runs inside the commit that crosses its threshold, so about
    one write in a thousand (often the API server's, on its event loop) waited milliseconds for
    the copy and its fsync. With it off, writes only count here, and this thread runs PASSIVE
    checkpoints, which never block a writer (the sqlite3 module releases the GIL meanwhile).
    A killed process loses nothing either way: committed transactions are in the WAL.
    """

    every = 500  # writes between checkpoints

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._writes = 0
        self._due = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="pyhpa-store-checkpoint",
                                        daemon=True)
        self._thread.start()

    def wrote(self) -> None:
        self._writes += 1
        if self._writes >= self.every:
            self._writes = 0
            self._due.set()

    def _run(self) -> None:
        while True:
            self._due.wait()
            self._due.clear()
            if self._stopping:
                return
            try:
                self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.Error:  # e.g. busy: the next round (or closing) catches up
                pass

    def close(self) -> None:
        self._stopping = True
        self._due.set()
        self._thread.join(10)
        self._db.close()


SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
    key TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
    rv INTEGER NOT NULL, body BLOB NOT NULL,
    PRIMARY KEY (key, namespace, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (
    rv INTEGER PRIMARY KEY, type TEXT NOT NULL, key TEXT NOT NULL,
    namespace TEXT NOT NULL, name TEXT NOT NULL, body BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
"""


def open_database(path: Path | None) -> tuple[sqlite3.Connection, Checkpointer | None]:
    """The store's connection (``path=None``: in memory) with :data:`SCHEMA` in place, and the
    checkpointer that runs beside it for a file (None in memory).

    The file is owner-only; SQLite gives its ``-wal`` and ``-shm`` files the database file's mode.
    """
    if path is not None:
        private_file(path)
        for suffix in ("-wal", "-shm"):  # left by an older version with the umask's mode
            restrict(path.with_name(path.name + suffix))
    db = sqlite3.connect(":memory:" if path is None else str(path), isolation_level=None,
                         check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(SCHEMA)
    if path is None:
        return db, None
    db.execute("PRAGMA wal_autocheckpoint=0")
    return db, Checkpointer(path)
