"""The HPA work queue: client-go's delaying, de-duplicating queue with a fixed-interval limiter.

Semantics kept from upstream (client-go workqueue, podautoscaler/rate_limiters.go):
* `add_after(key, d)`: a key already waiting keeps the *earlier* ready time;
* a key already queued (ready) is not queued twice;
* a key being processed is never handed to a second worker; re-added meanwhile, it is queued
  again when `done(key)` is called;
* `add_rate_limited(key)` delays by exactly the sync period, always (no exponential backoff):
  the key's own period when it has one (KEP-6003's per-item interval, `set_interval`), else the
  global one. A key waits at most once, so a slow controller never piles work up: an overdue key
  runs once, and the next period counts from the end of that run.

The clock is injectable; waiting uses one asyncio condition, woken by adds and by the earliest
deadline, so idle workers cost nothing. (One `asyncio.Event`, not a Condition: waking must never
need a lock that a timed-out waiter could fail to re-acquire.)
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections import Counter, deque
from typing import Callable

from pyhpa.adapters.tasks import raise_if_cancelling


class ShutDown(Exception):
    """The queue was shut down; workers exit."""


class WorkQueue:
    def __init__(self, sync_period: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.sync_period = sync_period
        self._clock = clock
        self._queue: deque[str] = deque()
        self._queued: set[str] = set()  # "dirty" in client-go
        self._processing: set[str] = set()
        self._waiting: dict[str, float] = {}  # key -> ready time
        self._heap: list[tuple[float, int, str]] = []
        self._seq = itertools.count()
        self._wakeup = asyncio.Event()
        self._shutdown = False
        self.adds = 0
        self._intervals: dict[str, float] = {}  # key -> its own period (absent: sync_period)
        self._interval_uses: Counter[float] = Counter()  # own period -> how many keys have it

    # -- producers (sync: callable from informer handlers)

    def add(self, key: str) -> None:
        if self._shutdown:
            return
        self._waiting.pop(key, None)
        if key in self._queued:
            return
        self._queued.add(key)
        self.adds += 1
        if key not in self._processing:
            self._queue.append(key)
        self._notify()

    def add_after(self, key: str, delay: float) -> None:
        if self._shutdown:
            return
        if delay <= 0:
            self.add(key)
            return
        if key in self._queued and key not in self._processing:
            return  # already ready: sooner than any delay
        ready = self._clock() + delay
        current = self._waiting.get(key)
        if current is not None and current <= ready:
            return
        self._waiting[key] = ready
        heapq.heappush(self._heap, (ready, next(self._seq), key))
        self._notify()

    def add_rate_limited(self, key: str) -> None:
        self.add_after(key, self._intervals.get(key, self.sync_period))

    # -- per-key periods (KEP-6003)

    def set_interval(self, key: str, seconds: float | None) -> None:
        """Give ``key`` its own period; None returns it to the global one (also on delete)."""
        old = self._intervals.pop(key, None)
        if old is not None:
            self._interval_uses[old] -= 1
            if not self._interval_uses[old]:
                del self._interval_uses[old]
        if seconds is not None:
            self._intervals[key] = seconds
            self._interval_uses[seconds] += 1

    def interval(self, key: str) -> float:
        return self._intervals.get(key, self.sync_period)

    @property
    def own_intervals(self) -> int:
        """How many keys have their own period."""
        return len(self._intervals)

    def shortest_own_interval(self) -> float | None:
        """The shortest own period of any key (None when no key has one); cheap: one entry per
        distinct period."""
        return min(self._interval_uses) if self._interval_uses else None

    def forget(self, key: str) -> None:
        """Fixed-interval limiter: nothing to forget (kept for upstream's call shape)."""

    def discard(self, key: str) -> None:
        """Drop a pending delayed add (used when the HPA is deleted)."""
        self._waiting.pop(key, None)

    def _notify(self) -> None:
        self._wakeup.set()  # waiters re-check; those finding nothing clear it and wait again

    # -- consumers

    def _promote_due(self) -> float | None:
        """Move due delayed keys to the queue; return seconds until the next deadline."""
        now = self._clock()
        while self._heap:
            ready, _, key = self._heap[0]
            if self._waiting.get(key) != ready:
                heapq.heappop(self._heap)  # superseded entry
                continue
            if ready > now:
                return ready - now
            heapq.heappop(self._heap)
            del self._waiting[key]
            if key not in self._queued:
                self._queued.add(key)
                self.adds += 1
                if key not in self._processing:
                    self._queue.append(key)
        return None

    def try_get(self) -> str | None:
        """Non-blocking get (for tests and synchronous drivers)."""
        self._promote_due()
        if not self._queue:
            return None
        return self._take()

    def _take(self) -> str:
        key = self._queue.popleft()
        self._queued.discard(key)
        self._processing.add(key)
        return key

    async def get(self) -> str:
        while True:
            if self._shutdown:
                raise ShutDown()
            wait = self._promote_due()
            if self._queue:
                return self._take()
            # No await between the check above and clear(): no add can slip in unseen.
            self._wakeup.clear()
            try:
                await asyncio.wait_for(self._wakeup.wait(), timeout=wait)
            except asyncio.TimeoutError:
                pass
            raise_if_cancelling()  # 3.11's wait_for may have returned instead of raising it

    def done(self, key: str) -> None:
        self._processing.discard(key)
        if key in self._queued:
            self._queue.append(key)
            self._notify()

    def shut_down(self) -> None:
        self._shutdown = True
        self._notify()

    # -- introspection

    def __len__(self) -> int:
        return len(self._queue)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def is_processing(self, key: str) -> bool:
        return key in self._processing
