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


# The write-ahead log's bound (README, "Storage bounds"): after each checkpoint SQLite cuts a
# longer WAL back to JOURNAL_SIZE_LIMIT, and one found longer than that is truncated to zero.
JOURNAL_SIZE_LIMIT = 16 * 1024 * 1024
CHECKPOINT_BYTES = 8 * 1024 * 1024  # bytes written between checkpoints (or Checkpointer.every writes)
WAL_BOUND = 64 * 1024 * 1024  # documented: the WAL stays under this through sustained writes
# a WAL this long when a write ends is checkpointed (TRUNCATE) by the writer itself, at once:
# the background thread fell behind (it cannot make a busy writer wait)
WRITER_CHECKPOINT = 40 * 1024 * 1024


class Checkpointer:
    """Copies the WAL into the database file from its own thread and connection.

    SQLite's automatic checkpoint runs inside the commit that crosses its threshold, so about
    one write in a thousand (often the API server's, on its event loop) waited milliseconds for
    the copy and its fsync. With it off, writes only count here, and this thread runs PASSIVE
    checkpoints, which never block a writer (the sqlite3 module releases the GIL meanwhile).
    A killed process loses nothing either way: committed transactions are in the WAL.

    Bounded: a checkpoint is due every :attr:`every` writes or :data:`CHECKPOINT_BYTES` written,
    whichever comes first (big objects fill the WAL long before 500 writes); after it the next
    write starts the WAL over and SQLite cuts the file to :data:`JOURNAL_SIZE_LIMIT`; a WAL
    still longer (a checkpoint that could not finish) gets a TRUNCATE checkpoint, which waits
    for the writer a moment and leaves an empty file. Should writes still outrun it, the store's
    writer checkpoints itself once the WAL passes :data:`WRITER_CHECKPOINT`
    (:meth:`writer_must_checkpoint`), which keeps the WAL under :data:`WAL_BOUND`.
    """

    every = 500  # writes between checkpoints

    def __init__(self, path: Path) -> None:
        self.path = path
        self.wal = path.with_name(path.name + "-wal")
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute(f"PRAGMA journal_size_limit={JOURNAL_SIZE_LIMIT}")
        self._writes = 0
        self._bytes = 0
        self._unchecked = 0  # bytes written since the WAL's size was last looked at
        # held while a checkpoint runs: SQLite refuses a second one at once (busy), so the
        # writer's waits for the thread's instead of failing
        self.lock = threading.Lock()
        self._due = threading.Event()
        self._stopping = False
        self.checkpoints = 0  # how many ran (tests and benchmarks read it)
        self._thread = threading.Thread(target=self._run, name="pyhpa-store-checkpoint",
                                        daemon=True)
        self._thread.start()

    def wrote(self, size: int = 0) -> None:
        self._writes += 1
        self._bytes += size
        self._unchecked += size
        if self._writes >= self.every or self._bytes >= CHECKPOINT_BYTES:
            self._writes = 0
            self._bytes = 0
            self._due.set()

    def writer_must_checkpoint(self) -> bool:
        """Whether the WAL has grown past :data:`WRITER_CHECKPOINT` (its size is looked at
        once per few MiB written, not on every write)."""
        if self._unchecked < CHECKPOINT_BYTES // 2:
            return False
        self._unchecked = 0
        return _size(self.wal) > WRITER_CHECKPOINT

    def _run(self) -> None:
        while True:
            self._due.wait()
            self._due.clear()
            if self._stopping:
                return
            try:
                with self.lock:
                    self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                    if _size(self.wal) > JOURNAL_SIZE_LIMIT:
                        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    self.checkpoints += 1
            except sqlite3.Error:  # e.g. busy: the next round (or closing) catches up
                pass

    def close(self) -> None:
        self._stopping = True
        self._due.set()
        self._thread.join(10)
        self._db.close()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


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
    db.execute(f"PRAGMA journal_size_limit={JOURNAL_SIZE_LIMIT}")  # the writer restarts the WAL
    return db, Checkpointer(path)
