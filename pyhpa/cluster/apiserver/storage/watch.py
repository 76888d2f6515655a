"""Watches of the store: the events it publishes and the subscriptions that receive them.

Why apart from the object storage: a watch is a queue with its own waiting rules (a thread
blocks on a condition, a coroutine on an asyncio event, a slow consumer is cut off with a 410),
while the store only decides which events a new watch replays and then offers it every write.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import msgspec

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode

Obj = dict[str, Any]
Predicate = Callable[[Obj], bool]

ADDED, MODIFIED, DELETED, BOOKMARK, ERROR = "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"


@dataclass
class WatchEvent:
    type: str
    key: str
    namespace: str
    name: str
    rv: int
    raw: bytes
    _obj: Obj | None = field(default=None, repr=False)

    @property
    def object(self) -> Obj:
        """The object as a fresh dict (decoded on first access, then cached for this event)."""
        if self._obj is None:
            self._obj = _decode(self.raw)
        return self._obj


# --------------------------------------------------------------------------- watch


class Watch:
    """A subscription to changes; iterate it (sync or async) and close it when done.

    Events arrive in resourceVersion order. A watch that falls too far behind (more than
    ``max_backlog`` undelivered events, or more than ``max_backlog_bytes`` of them) is ended with
    an ERROR event carrying a 410 Status, as the real apiserver ends slow watchers; its client
    lists again. ``owner`` names who holds it (the API server counts its clients' watches).
    """

    def __init__(self, key: str | None, namespace: str | None, predicate: Predicate | None,
                 unsubscribe: Callable[["Watch"], bool], max_backlog: int = 100_000,
                 max_backlog_bytes: int | None = None, owner: str | None = None) -> None:
        # unsubscribe(watch): the store forgets the watch; True if it still knew it
        self._unsubscribe = unsubscribe
        self.key = key
        self.namespace = namespace
        self.predicate = predicate
        self._queue: collections.deque[WatchEvent] = collections.deque()
        self._cond = threading.Condition(threading.Lock())
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._async_event: asyncio.Event | None = None
        self._max_backlog = max_backlog
        self._max_backlog_bytes = max_backlog_bytes
        self._queued_bytes = 0
        self.owner = owner
        self.closed = False

    # called by the store with its write lock held
    def matches(self, ev: WatchEvent) -> bool:
        if self.key is not None and ev.key != self.key:
            return False
        if self.namespace and ev.namespace != self.namespace:
            return False
        if self.predicate is not None and not self.predicate(ev.object):
            return False
        return True

    def offer(self, ev: WatchEvent) -> None:
        if self.closed or not self.matches(ev):
            return
        self._push(ev)

    def _push(self, ev: WatchEvent) -> None:
        with self._cond:
            limit = self._max_backlog_bytes
            if len(self._queue) >= self._max_backlog or (
                    limit is not None and self._queued_bytes + len(ev.raw) > limit):
                self._queue.clear()
                self._queued_bytes = 0
                self._queue.append(expired_event(ev.key, "watch fell too far behind"))
                self.closed = True
            else:
                self._queue.append(ev)
                self._queued_bytes += len(ev.raw)
            self._cond.notify()
        loop = self._loop
        if loop is not None and self._async_event is not None:
            if threading.get_ident() == self._loop_thread:
                self._async_event.set()
            else:
                try:
                    loop.call_soon_threadsafe(self._async_event.set)
                except RuntimeError:  # loop closed
                    pass

    def _pop(self) -> WatchEvent | None:
        with self._cond:
            if not self._queue:
                return None
            ev = self._queue.popleft()
            self._queued_bytes -= len(ev.raw)
            return ev

    # ---- sync use
    def next(self, timeout: float | None = None) -> WatchEvent | None:
        """The next event, waiting up to ``timeout`` seconds; None on timeout or when closed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._queue:
                if self.closed:
                    return None
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._cond.wait(remaining)
            ev = self._queue.popleft()
            self._queued_bytes -= len(ev.raw)
            return ev

    def iter(self, timeout: float | None = None) -> Iterator[WatchEvent]:
        """Yield events until closed, or until no event came for ``timeout`` seconds."""
        while True:
            ev = self.next(timeout)
            if ev is None:
                return
            yield ev

    def __iter__(self) -> Iterator[WatchEvent]:
        return self.iter()

    # ---- async use
    async def get(self, timeout: float | None = None) -> WatchEvent | None:
        """Await the next event; None on timeout or when closed."""
        if self._async_event is None:
            self._loop = asyncio.get_running_loop()
            self._loop_thread = threading.get_ident()
            self._async_event = asyncio.Event()
        while True:
            ev = self._pop()
            if ev is not None:
                return ev
            if self.closed:
                return None
            self._async_event.clear()
            # re-check after clear to close the race with a producer on another thread
            ev = self._pop()
            if ev is not None:
                return ev
            try:  # a timeout scope, not wait_for: no task per wait, no turn more per event
                async with asyncio.timeout(timeout):
                    await self._async_event.wait()
            except TimeoutError:
                return None

    def __aiter__(self) -> "Watch":
        return self

    async def __anext__(self) -> WatchEvent:
        ev = await self.get()
        if ev is None:
            raise StopAsyncIteration
        return ev

    def pending(self) -> int:
        return len(self._queue)

    def close(self) -> None:
        was_subscribed = self._unsubscribe(self)
        if self.closed and not was_subscribed:
            return
        self.closed = True
        with self._cond:
            self._cond.notify_all()
        if self._loop is not None and self._async_event is not None:
            try:
                if threading.get_ident() == self._loop_thread:
                    self._async_event.set()
                else:
                    self._loop.call_soon_threadsafe(self._async_event.set)
            except RuntimeError:
                pass

    def __enter__(self) -> "Watch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def expired_event(key: str, message: str) -> WatchEvent:
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
              "message": message, "reason": "Expired", "code": 410}
    return WatchEvent(ERROR, key, "", "", 0, _encode(status), status)

