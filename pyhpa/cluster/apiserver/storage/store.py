"""The embedded cluster's object store: JSON objects in SQLite (WAL) with resourceVersions and watch.

Why its own store: the API server, the workload simulator and the metrics pieces all need the same
objects with Kubernetes semantics (one global, monotonic ``resourceVersion``; optimistic
concurrency; ordered watch streams), and they all run in one process. The store knows nothing about
kinds: an object is a ``dict`` (the stored JSON), addressed by ``(key, namespace, name)`` where
``key`` is the storage ``group/version/resource`` string of :mod:`pyhpa.cluster.apiserver.resources`
(``"v1/pods"``, ``"apps/v1/deployments"``, ``"autoscaling/v2/horizontalpodautoscalers"``);
cluster-scoped objects use namespace ``""``.

Durability: every write is one SQLite transaction in WAL mode, committed before the call returns,
so a SIGKILLed process loses no acknowledged write (``synchronous=NORMAL`` only risks the last
transactions on a power loss, not on a process kill). The last resourceVersion is stored too, so
it keeps growing across restarts. Reads are served from an in-memory index of the encoded bytes.

How an in-process component (the workload simulator, a controller) uses it::

    from pyhpa.cluster.apiserver import resources as r
    store = cluster.store                       # the running server's Store

    dep = store.get(r.DEPLOYMENTS.key, "default", "web")          # a fresh dict; mutate freely
    pods = store.list(r.PODS.key, "default", label_selector="app=web").items
    store.create(r.PODS.key, {"metadata": {"namespace": "default", "generateName": "web-"}, ...})

    # read-modify-write with retries on conflicts:
    def bump(d): d["status"]["replicas"] = 3; return d
    store.guaranteed_update(r.DEPLOYMENTS.key, "default", "web", bump)

    # watch: replay from a resourceVersion (or start now), then follow; sync or async
    with store.watch(r.DEPLOYMENTS.key, namespace="default", since=lst.resource_version) as w:
        async for ev in w:          # or: for ev in w.iter(timeout=1.0)
            ev.type, ev.object      # "ADDED" | "MODIFIED" | "DELETED", the dict

Writes made here are seen by kubectl and by HTTP watchers exactly like API writes. The store does
not run API defaulting or validation (the server's strategies do); it does maintain the generic
metadata every kind shares: ``uid``, ``creationTimestamp``, ``generateName``, ``generation`` (1 on
create, +1 when ``spec`` changes), ``resourceVersion``, and finalizer-aware deletion.
"""

from __future__ import annotations

import base64
import bisect
import collections
import operator
import os
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import msgspec

from pyhpa.api.names import generate_name
from pyhpa.api.selectors import Selector
from pyhpa.api.timefmt import format_epoch
from pyhpa.cluster.apiserver.field_selectors import FieldSelector
from pyhpa.cluster.apiserver.storage.errors import (AlreadyExists, BadRequest, Conflict, Expired,
                                                    NotFound, TooLarge)
from pyhpa.cluster.apiserver.storage.sqlite import open_database
from pyhpa.cluster.apiserver.storage.watch import (ADDED, DELETED, MODIFIED, Predicate, Watch,
                                                   WatchEvent)

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode

Obj = dict[str, Any]

# Watch history kept in memory (and in SQLite) to resume watches from an older resourceVersion:
# at most this many events, and compacted as kube-apiserver compacts etcd (README, "Storage
# bounds"): every COMPACTION_INTERVAL seconds, the events before the resourceVersion current at
# the previous compaction are dropped (--etcd-compaction-interval, 5 minutes by default), so a
# watch resumes from any resourceVersion of the last 5 minutes (and none older than 10).
HISTORY_LIMIT = 20_000
COMPACTION_INTERVAL = 300.0
_DROP_SLICE_BYTES = 4 * 1024 * 1024  # history dropped from the database per write
# etcd's default request limit (--max-request-bytes, 1.5 MiB): the largest object it stores
MAX_OBJECT_BYTES = 1536 * 1024


# --------------------------------------------------------------------------- helpers


_namespace_name = operator.itemgetter(0, 1)  # the sort key of (namespace, name, entry)


def _meta(obj: Obj) -> dict[str, Any]:
    meta = obj.get("metadata")
    if meta is None:
        meta = obj["metadata"] = {}
    elif not isinstance(meta, dict):
        raise BadRequest("", "", "", "metadata: must be an object")
    return meta


@dataclass(frozen=True)
class Entry:
    """One stored object: its resourceVersion and encoded JSON bytes."""

    rv: int
    raw: bytes

    def obj(self) -> Obj:
        return _decode(self.raw)


@dataclass
class ListResult:
    items: list[Obj]
    resource_version: str
    continue_token: str | None = None
    remaining: int | None = None


@dataclass
class RawListResult:
    """Like ListResult but with each item's stored bytes, for servers that splice JSON."""

    items: list[bytes]
    resource_version: str
    continue_token: str | None = None
    remaining: int | None = None


# --------------------------------------------------------------------------- store


class Store:
    """Objects by (key, namespace, name) with resourceVersions, preconditions and watches.

    Thread-safe: one lock serialises writes (each is one SQLite transaction); reads use the
    in-memory index. ``path=None`` keeps everything in memory (tests).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 history_limit: int = HISTORY_LIMIT,
                 compaction_interval: float = COMPACTION_INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.path = None if path is None else Path(path)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db, self._checkpointer = open_database(self.path)
        self._lock = threading.RLock()
        self._watchers: list[Watch] = []
        self._history: collections.deque[WatchEvent] = collections.deque(maxlen=history_limit)
        self._history_limit = history_limit
        # key -> namespace -> name -> Entry
        self._index: dict[str, dict[str, dict[str, Entry]]] = {}
        self._writes_since_prune = 0
        self._drop_to = self._dropped = 0  # events up to _drop_to go, up to _dropped went
        self._load()
        self._clock = clock
        self._compaction_interval = compaction_interval
        self._next_compaction = clock() + compaction_interval
        self._compact_to = self._rv  # compacted to at the next compaction

    # ---- startup
    def _load(self) -> None:
        row = self._db.execute("SELECT v FROM meta WHERE k='rv'").fetchone()
        self._rv = int(row[0]) if row else 0
        for key, ns, name, rv, body in self._db.execute(
                "SELECT key, namespace, name, rv, body FROM objects"):
            self._index.setdefault(key, {}).setdefault(ns, {})[name] = Entry(rv, bytes(body))
        rows = self._db.execute(
            "SELECT rv, type, key, namespace, name, body FROM events ORDER BY rv DESC LIMIT ?",
            (self._history_limit,)).fetchall()
        for rv, typ, key, ns, name, body in reversed(rows):
            self._history.append(WatchEvent(typ, key, ns, name, rv, bytes(body)))
        # History covers (oldest-1, current]; with none kept, only "now" can be resumed.
        self._history_floor = (self._history[0].rv - 1) if self._history else self._rv

    def close_watches(self) -> None:
        """End every open watch (their iterators stop); used when the server shuts down."""
        with self._lock:
            watchers = list(self._watchers)
        for w in watchers:
            w.close()

    def close(self) -> None:
        self.close_watches()
        with self._lock:
            if self._checkpointer is not None:
                self._checkpointer.close()
            self._db.close()  # the last connection: checkpoints what is left

    @property
    def resource_version(self) -> int:
        """The newest resourceVersion handed out (the list/watch consistency point)."""
        return self._rv

    # ---- reads
    def get(self, key: str, namespace: str, name: str) -> Obj:
        return self.get_entry(key, namespace, name).obj()

    def get_entry(self, key: str, namespace: str, name: str) -> Entry:
        entry = self._index.get(key, {}).get(namespace or "", {}).get(name)
        if entry is None:
            raise NotFound(key, namespace, name)
        return entry

    def try_get(self, key: str, namespace: str, name: str) -> Obj | None:
        entry = self._index.get(key, {}).get(namespace or "", {}).get(name)
        return None if entry is None else entry.obj()

    def unchanged_since(self, key: str, namespace: str | None, rv: int) -> bool:
        """True when no object of ``key`` (in ``namespace``, if given) changed after ``rv``, as
        far as the kept history tells; False when it did or the history does not reach back."""
        with self._lock:
            if rv < self._history_floor:
                return False
            return not any(ev.rv > rv and ev.key == key and (not namespace
                                                             or ev.namespace == namespace)
                           for ev in self._history)

    def count(self, key: str, namespace: str | None = None) -> int:
        by_ns = self._index.get(key, {})
        if namespace:
            return len(by_ns.get(namespace, {}))
        return sum(len(v) for v in by_ns.values())

    def entries(self, key: str, namespace: str | None = None) -> list[tuple[str, str, Entry]]:
        """``(namespace, name, entry)`` of one kind, sorted like :meth:`list`, at one
        resourceVersion. Entries are immutable and replaced on every write, so an in-process
        reader can keep what it decoded from one and decode again only when it changes."""
        return self._sorted_entries(key, namespace)[1]

    def _sorted_entries(self, key: str,
                        namespace: str | None) -> tuple[int, list[tuple[str, str, Entry]]]:
        with self._lock:  # a consistent snapshot of the index at one resourceVersion
            rv = self._rv
            by_ns = self._index.get(key, {})
            if namespace:
                pairs = [(namespace, n, e) for n, e in by_ns.get(namespace, {}).items()]
            else:
                pairs = [(ns, n, e) for ns, names in by_ns.items() for n, e in names.items()]
        pairs.sort(key=_namespace_name)
        return rv, pairs

    def list(self, key: str, namespace: str | None = None, *,
             label_selector: Any = None, field_selector: Any = None,
             predicate: Predicate | None = None, limit: int | None = None,
             continue_token: str | None = None,
             decode: Callable[[bytes], Obj] | None = None) -> ListResult:
        """Objects of one kind, sorted by (namespace, name), optionally filtered and paginated.

        ``label_selector`` is a selector string or an object with ``matches(labels)``;
        ``field_selector`` a string like ``metadata.name=web,status.phase!=Running`` or a
        :class:`~pyhpa.cluster.apiserver.field_selectors.FieldSelector`; ``predicate`` any extra
        filter on the dict.
        ``decode`` turns each stored JSON into the dict (default: all of it; a caller that reads
        a few fields can decode just those, and the filters then see just those).
        """
        raw = self.list_raw(key, namespace, label_selector=label_selector,
                            field_selector=field_selector, predicate=predicate, limit=limit,
                            continue_token=continue_token, _decoded=decode or _decode)
        return ListResult(raw.items, raw.resource_version, raw.continue_token,  # type: ignore[arg-type]
                          raw.remaining)

    def list_raw(self, key: str, namespace: str | None = None, *,
                 label_selector: Any = None, field_selector: Any = None,
                 predicate: Predicate | None = None, limit: int | None = None,
                 continue_token: str | None = None,
                 _decoded: Callable[[bytes], Obj] | None = None) -> RawListResult:
        pred = combine_filters(label_selector, field_selector, predicate)
        rv, pairs = self._sorted_entries(key, namespace)
        start_after: tuple[str, str] | None = None
        if continue_token:
            start_after, rv_token = _decode_continue(key, continue_token)
            if rv_token < self._history_floor:  # compacted away, as etcd answers it
                raise Expired(key, namespace or "", "",
                              "The provided continue parameter is too old to display a consistent "
                              "list result. You can start a new list without the continue "
                              "parameter.")
            rv = rv_token or rv
            # by key: no list of 100,000 (namespace, name) pairs per page of a big kind
            i = bisect.bisect_right(pairs, start_after, key=_namespace_name)
            pairs = pairs[i:]
        out: list[Any] = []
        next_token = None
        remaining = None
        for i, (ns, name, entry) in enumerate(pairs):
            if pred is not None or _decoded:
                obj = (_decoded or _decode)(entry.raw)
                if pred is not None and not pred(obj):
                    continue
                out.append(obj if _decoded else entry.raw)
            else:
                out.append(entry.raw)
            if limit and len(out) >= limit and i + 1 < len(pairs):
                next_token = _encode_continue(key, (ns, name), rv)
                if pred is None:
                    remaining = len(pairs) - i - 1
                break
        return RawListResult(out, str(rv), next_token, remaining)

    # ---- writes
    def create(self, key: str, obj: Obj, *, dry_run: bool = False,
               bump_generation: bool = True) -> Obj:
        """Store a new object; fills uid, creationTimestamp, generation, name from generateName."""
        meta = _meta(obj)
        ns = meta.get("namespace") or ""
        with self._lock:
            name = meta.get("name")
            if not name:
                prefix = meta.get("generateName")
                if not prefix:
                    raise BadRequest(key, ns, "", "name or generateName is required")
                for _ in range(16):
                    name = generate_name(prefix)
                    if name not in self._index.get(key, {}).get(ns, {}):
                        break
                meta["name"] = name
            if name in self._index.get(key, {}).get(ns, {}):
                raise AlreadyExists(key, ns, name)
            meta.setdefault("uid", str(uuid.uuid4()))
            if not meta.get("creationTimestamp"):
                meta["creationTimestamp"] = format_epoch(time.time())
            if bump_generation and "spec" in obj and not meta.get("generation"):
                meta["generation"] = 1
            meta.pop("deletionTimestamp", None)
            return self._write(ADDED, key, ns, name, obj, dry_run)

    def update(self, key: str, obj: Obj, *, check_rv: bool = True, dry_run: bool = False,
               bump_generation: bool = True) -> Obj:
        """Replace a stored object.

        With ``check_rv`` (default) a ``metadata.resourceVersion`` in ``obj`` must equal the stored
        one (else :class:`Conflict`); an empty one means "unconditional". ``uid`` and
        ``creationTimestamp`` are kept from the stored object. A write that changes nothing does
        not bump the resourceVersion and emits no event. Removing the last finalizer of an object
        being deleted deletes it.
        """
        meta = _meta(obj)
        ns = meta.get("namespace") or ""
        name = meta.get("name") or ""
        with self._lock:
            entry = self._index.get(key, {}).get(ns, {}).get(name)
            if entry is None:
                raise NotFound(key, ns, name)
            old = entry.obj()
            old_meta = old.get("metadata", {})
            want_rv = meta.get("resourceVersion")
            if check_rv and want_rv and str(want_rv) != str(entry.rv):
                raise Conflict(key, ns, name)
            want_uid = meta.get("uid")
            if want_uid and want_uid != old_meta.get("uid"):
                raise Conflict(key, ns, name, "Precondition failed: UID in precondition: "
                               f"{want_uid}, UID in object meta: {old_meta.get('uid')}")
            for k in ("uid", "creationTimestamp", "deletionTimestamp",
                      "deletionGracePeriodSeconds"):
                if k in old_meta:
                    meta[k] = old_meta[k]
                else:
                    meta.pop(k, None)
            if bump_generation:
                gen = old_meta.get("generation")
                if gen is not None or "spec" in obj:
                    gen = gen or 1
                    if obj.get("spec") != old.get("spec"):
                        gen += 1
                    meta["generation"] = gen
            elif "generation" not in meta and "generation" in old_meta:
                meta["generation"] = old_meta["generation"]
            meta["resourceVersion"] = str(entry.rv)
            if obj == old:
                return old  # no-op: same resourceVersion, no event
            if meta.get("deletionTimestamp") and not _held(obj):
                return self._remove(key, ns, name, obj, dry_run)
            return self._write(MODIFIED, key, ns, name, obj, dry_run)

    def guaranteed_update(self, key: str, namespace: str, name: str,
                          mutate: Callable[[Obj], Obj | None], *, retries: int = 16) -> Obj:
        """Read-modify-write: call ``mutate(fresh_copy)`` and store it, retrying on conflicts.

        ``mutate`` may change the dict in place (returning None) or return a new one.
        """
        for _ in range(retries):
            current = self.get(key, namespace, name)
            result = mutate(current)
            new = current if result is None else result
            try:
                return self.update(key, new)
            except Conflict:
                continue
        raise Conflict(key, namespace, name)

    def delete(self, key: str, namespace: str, name: str, *, resource_version: str | None = None,
               uid: str | None = None, dry_run: bool = False,
               grace_finalizers: bool = True,
               grace_seconds: int | None = None) -> tuple[Obj, bool]:
        """Delete an object; returns (last state, deleted_now).

        An object with finalizers is only marked (``deletionTimestamp`` set, deleted_now False);
        it goes away when the last finalizer is removed by an update. ``grace_seconds`` (pods)
        becomes ``deletionGracePeriodSeconds`` with ``deletionTimestamp`` that far ahead, as
        upstream; a second delete may shorten it.
        """
        ns = namespace or ""
        with self._lock:
            entry = self._index.get(key, {}).get(ns, {}).get(name)
            if entry is None:
                raise NotFound(key, ns, name)
            obj = entry.obj()
            meta = obj.setdefault("metadata", {})
            if resource_version and str(resource_version) != str(entry.rv):
                raise Conflict(key, ns, name)
            if uid and uid != meta.get("uid"):
                raise Conflict(key, ns, name, "Precondition failed: UID in precondition: "
                               f"{uid}, UID in object meta: {meta.get('uid')}")
            if grace_finalizers and _held(obj):
                if meta.get("deletionTimestamp"):
                    current = meta.get("deletionGracePeriodSeconds")
                    if grace_seconds is None or not isinstance(current, int) \
                            or grace_seconds >= current:
                        return obj, False
                meta["deletionTimestamp"] = format_epoch(time.time() + (grace_seconds or 0))
                meta["deletionGracePeriodSeconds"] = grace_seconds or 0
                return self._write(MODIFIED, key, ns, name, obj, dry_run), False
            return self._remove(key, ns, name, obj, dry_run), True

    def namespace_keys(self, namespace: str) -> list[str]:
        """The keys (kinds) that hold at least one object in ``namespace``."""
        with self._lock:
            return [key for key, by_ns in self._index.items() if by_ns.get(namespace)]

    def delete_namespace_contents(self, namespace: str) -> int:
        """Delete every object in a namespace (what the namespace controller does); returns count."""
        n = 0
        with self._lock:
            for key, by_ns in list(self._index.items()):
                for name in list(by_ns.get(namespace, {})):
                    self.delete(key, namespace, name, grace_finalizers=False)
                    n += 1
        return n

    # ---- internals
    def _write(self, typ: str, key: str, ns: str, name: str, obj: Obj, dry_run: bool) -> Obj:
        meta = obj["metadata"]
        if dry_run:
            return obj
        rv = self._rv + 1
        before = meta.get("resourceVersion")
        meta["resourceVersion"] = str(rv)
        raw = _encode(obj)
        if len(raw) > MAX_OBJECT_BYTES:
            meta["resourceVersion"] = before  # nothing was written
            raise TooLarge(key, ns, name, f"Request entity too large: the object is {len(raw)} "
                                          f"bytes, the limit is {MAX_OBJECT_BYTES}")
        event = WatchEvent(typ, key, ns, name, rv, raw)
        self._commit("INSERT OR REPLACE INTO objects(key, namespace, name, rv, body) VALUES (?,?,?,?,?)",
                     (key, ns, name, rv, raw), event)
        self._index.setdefault(key, {}).setdefault(ns, {})[name] = Entry(rv, raw)
        self._publish(event)
        return obj

    def _commit(self, change: str, args: tuple[Any, ...], event: WatchEvent) -> None:
        """One change to the objects table and its watch event, in one transaction; then the
        store's resourceVersion is the event's."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(change, args)
            db.execute("INSERT INTO events(rv, type, key, namespace, name, body) VALUES (?,?,?,?,?,?)",
                       (event.rv, event.type, event.key, event.namespace, event.name, event.raw))
            db.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('rv', ?)", (str(event.rv),))
            self._maybe_prune(event.rv, len(event.raw))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self._after_commit()
        self._rv = event.rv

    def _remove(self, key: str, ns: str, name: str, obj: Obj, dry_run: bool) -> Obj:
        if dry_run:
            return obj
        rv = self._rv + 1
        obj["metadata"]["resourceVersion"] = str(rv)
        raw = _encode(obj)
        event = WatchEvent(DELETED, key, ns, name, rv, raw)
        self._commit("DELETE FROM objects WHERE key=? AND namespace=? AND name=?", (key, ns, name), event)
        self._index.get(key, {}).get(ns, {}).pop(name, None)
        self._publish(event)
        return obj

    def _maybe_prune(self, rv: int, size: int) -> None:
        if self._checkpointer is not None:
            self._checkpointer.wrote(2 * size)  # the object's row and its event's
        self._writes_since_prune += 1
        if self._writes_since_prune >= 1000:
            self._writes_since_prune = 0
            self._drop_to = max(self._drop_to, rv - self._history_limit)
        now = self._clock()
        if now >= self._next_compaction:
            self.compact(self._compact_to)
            self._compact_to = rv - 1  # this write's own event is kept
            self._next_compaction = now + self._compaction_interval

    def _after_commit(self) -> None:
        """Drop one slice of the compacted history, and checkpoint from the writer when the
        background checkpoints fell behind (rare: a burst of big objects). The write lock is
        held. Slices, not one DELETE: SQLite zeroes deleted rows (``secure_delete``), so one
        transaction dropping 5 minutes of big objects would write them all to the WAL again."""
        if self._drop_to > self._dropped:
            self._drop_slice()
        checkpointer = self._checkpointer
        if checkpointer is not None and checkpointer.writer_must_checkpoint():
            try:
                with checkpointer.lock:
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:  # the write is committed; the next one tries again
                pass

    def _drop_slice(self) -> None:
        rows = self._db.execute("SELECT rv, length(body) FROM events WHERE rv <= ? ORDER BY rv "
                                "LIMIT 256", (self._drop_to,)).fetchall()
        if not rows:
            self._dropped = self._drop_to
            return
        upto, total = rows[-1][0], 0
        for rv, size in rows:
            total += size
            if total >= _DROP_SLICE_BYTES:
                upto = rv
                break
        self._db.execute("DELETE FROM events WHERE rv <= ?", (upto,))
        self._dropped = upto if upto < self._drop_to else self._drop_to
        if self._checkpointer is not None:
            self._checkpointer.wrote(total)

    def compact(self, rv: int) -> None:
        """Drop the watch history up to ``rv`` (deleted objects' last states with it): a watch
        from there on gets 410 Gone, as from a compacted etcd revision. Called with the write
        lock held (inside a write's transaction) or by tests."""
        with self._lock:
            if rv <= self._history_floor:
                return
            while self._history and self._history[0].rv <= rv:
                self._history.popleft()
            self._history_floor = rv
            self._drop_to = max(self._drop_to, rv)  # from the database over the next writes

    def _publish(self, ev: WatchEvent) -> None:
        if len(self._history) == self._history.maxlen:
            self._history_floor = self._history[0].rv
        self._history.append(ev)
        for w in self._watchers:
            w.offer(ev)

    def watches_of(self, owner: str) -> int:
        """How many open watches ``owner`` holds."""
        with self._lock:
            return sum(1 for w in self._watchers if w.owner == owner)

    def _unsubscribe(self, w: Watch) -> bool:
        with self._lock:
            try:
                self._watchers.remove(w)
            except ValueError:
                return False
            return True

    # ---- watch
    def watch(self, key: str | None, namespace: str | None = None, *, since: int | str | None = None,
              initial: bool = False, label_selector: Any = None, field_selector: Any = None,
              predicate: Predicate | None = None, max_backlog: int = 100_000,
              max_backlog_bytes: int | None = None, owner: str | None = None) -> Watch:
        """Subscribe to changes of one kind (``key=None``: every kind).

        ``since``: replay events after that resourceVersion, then follow (raises
        :class:`Expired` when the history no longer reaches back that far). ``since`` None/0 with
        ``initial=True`` first sends a synthetic ADDED for each existing object (the semantics of
        ``resourceVersion=0``/absent on the API); without ``initial`` it starts now.
        ``max_backlog``/``max_backlog_bytes`` bound what may wait undelivered (see
        :class:`Watch`); ``owner`` tags the watch for :meth:`watches_of`.
        """
        pred = combine_filters(label_selector, field_selector, predicate)
        w = Watch(key, namespace, pred, self._unsubscribe, max_backlog, max_backlog_bytes, owner)
        since_rv = int(since) if since not in (None, "") else 0
        with self._lock:
            if since_rv > 0:
                if since_rv < self._history_floor:
                    raise Expired(key or "", namespace or "", "",
                                  f"too old resource version: {since_rv} ({self._history_floor + 1})")
                for ev in self._history:
                    if ev.rv > since_rv:
                        w.offer(ev)
            elif initial and key is not None:
                by_ns = self._index.get(key, {})
                spaces = [namespace] if namespace else sorted(by_ns)
                for ns in spaces:
                    for name, entry in sorted(by_ns.get(ns, {}).items()):
                        w.offer(WatchEvent(ADDED, key, ns, name, entry.rv, entry.raw))
            self._watchers.append(w)
        return w


# --------------------------------------------------------------------------- filters


def combine_filters(label_selector: Any, field_selector: Any,
                    predicate: Predicate | None) -> Predicate | None:
    """One predicate from a label selector, a field selector and a callable (any may be None)."""
    checks: list[Predicate] = []
    if label_selector:
        if isinstance(label_selector, str):
            label_selector = Selector.parse(label_selector)
        sel = label_selector
        if not _is_everything(sel):
            checks.append(lambda o: sel.matches((o.get("metadata") or {}).get("labels") or {}))
    if field_selector:
        fs = FieldSelector.parse(field_selector) if isinstance(field_selector, str) else field_selector
        if not fs.empty():
            checks.append(fs.matches)
    if predicate is not None:
        checks.append(predicate)
    if not checks:
        return None
    if len(checks) == 1:
        return checks[0]
    return lambda o: all(c(o) for c in checks)


def _is_everything(sel: Any) -> bool:
    try:
        return str(sel) == ""
    except Exception:
        return False


def _encode_continue(key: str, last: tuple[str, str], rv: int) -> str:
    payload = _encode({"v": "meta.k8s.io/v1", "rv": rv, "start": f"{last[0]}/{last[1]}"})
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


def _decode_continue(key: str, token: str) -> tuple[tuple[str, str], int]:
    try:
        data = _decode(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        ns, _, name = data["start"].partition("/")
        rv = data["rv"]
    except Exception as exc:  # noqa: BLE001 - any garbage is a bad token
        raise BadRequest(key, "", "", "continue key is not valid: " + str(exc)) from None
    if not isinstance(rv, int) or isinstance(rv, bool) or rv <= 0:  # upstream's DecodeContinue
        raise BadRequest(key, "", "", "continue key is not valid: incorrect encoded start "
                                      "resourceVersion (version meta.k8s.io/v1)")
    return (ns, name), rv


def _held(obj: Obj) -> bool:
    """Whether a deleted object must wait: it has finalizers (a Namespace's in
    ``spec.finalizers``, which the namespace controller removes once it is empty)."""
    if obj.get("metadata", {}).get("finalizers"):
        return True
    spec = obj.get("spec")
    return obj.get("kind") == "Namespace" and isinstance(spec, dict) \
        and bool(spec.get("finalizers"))
