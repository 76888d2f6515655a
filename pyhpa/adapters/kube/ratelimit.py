"""Client-side request throttling with client-go's token bucket (`--kube-api-qps`, `--kube-api-burst`).

A bucket of `burst` tokens refilled at `qps` per second; each request takes one token and waits
when none is left. qps <= 0 disables throttling, as in client-go. The clock and sleep are
injectable so the arithmetic is testable without real waiting.
"""

from __future__ import annotations

import asyncio
import time
from typing import Awaitable, Callable


class TokenBucket:
    def __init__(
        self,
        qps: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if burst < 1 and qps > 0:
            raise ValueError(f"--kube-api-burst must be at least 1, got {burst}")
        self.qps = qps
        self.burst = max(1, burst)
        self._clock = clock
        self._sleep = sleep
        self._tokens = float(self.burst)
        self._last = clock()
        # Reservations are taken in arrival order: the next free slot time is tracked, not a lock.

    def reserve(self) -> float:
        """Take one token; return how long the caller must wait before using it."""
        if self.qps <= 0:
            return 0.0
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        if self._tokens >= 0:
            return 0.0
        return -self._tokens / self.qps

    async def acquire(self) -> None:
        delay = self.reserve()
        if delay > 0:
            await self._sleep(delay)
