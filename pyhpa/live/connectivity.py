"""Whether the API server answers, told honestly: one log line per outage, `/readyz`, a backoff.

Why: an unreachable API server must read as one outage, not as a stream of lease warnings from
a process that still says it is ready. The first failure logs one line naming the address and
the error, later failures of the same outage log at debug level only, retries start at the retry
period and double up to `MAX_RETRY_DELAY`, and `/readyz` says what is wrong.

Before it starts, `pyhpa run` checks `/healthz`, as kube-controller-manager does before it starts
its controllers: without leader election it gives up after `API_SERVER_WAIT` seconds (upstream's
bound; the process exits 1 and its supervisor restarts it); with leader election it keeps trying,
as upstream's election loop does, while `/readyz` reports the outage.

Once running, the client reports every request that got no answer and every answer
(:class:`pyhpa.adapters.kube.client.ConnectionObserver`), so an outage that starts under a running
controller is said plainly too ("lost the connection to the API server at ..."), with or without
leader election: `/readyz` turns not ready, the HPA workers wait instead of failing every sync,
`watch_connection` probes `/healthz` from the retry period with the same backoff until it
answers, and the end of `--duration` in the middle of an outage exits 1.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass
from typing import Awaitable, Callable

from pyhpa.adapters.kube.client import ApiError, KubeClient
from pyhpa.adapters.tasks import raise_if_cancelling

log = logging.getLogger("pyhpa.connectivity")
MAX_RETRY_DELAY = 30.0  # seconds: the backoff's ceiling (client-go's reflector uses the same)
API_SERVER_WAIT = 10.0  # seconds: kube-controller-manager's wait for /healthz before starting controllers
MIN_PROBE_TIMEOUT = 5.0  # seconds: one /healthz probe that gets no answer counts as a failure


def describe(exc: BaseException) -> str:
    """The error of a failed request without our own `METHOD path:` prefix, e.g.
    `ConnectError: All connection attempts failed` or `503 ServiceUnavailable: ...`."""
    if isinstance(exc, ApiError):
        if exc.code == 0 and exc.__cause__ is not None:
            cause = exc.__cause__
            return f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
        return f"{exc.code} {exc.reason}: {exc.message}" if exc.code else exc.message
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return "no answer (timed out)"
    return f"{type(exc).__name__}: {exc}"


@dataclass
class Backoff:
    """Delays between retries: the retry period, doubled after each failure up to `cap`, each
    with client-go's jitter (up to 20 % more) so that replicas do not retry in step."""

    initial: float
    cap: float = MAX_RETRY_DELAY
    _next: float = 0.0

    def next(self) -> float:
        delay = self._next or self.initial
        self._next = min(max(self.cap, self.initial), delay * 2)
        return delay * random.uniform(1.0, 1.2)

    def reset(self) -> None:
        self._next = 0.0


@dataclass
class ApiServerStatus:
    """What we last learnt about the API server at `address`: answering, failing, or not asked yet."""

    address: str
    retry_period: float = 2.0
    reachable: bool | None = None  # None: no answer yet
    error: str = ""
    outages: int = 0  # how many times it went from answering (or unknown) to failing
    _changed: asyncio.Event | None = None  # set on every change of `reachable`

    def failed(self, why: str) -> None:
        if self.reachable is not False:
            self.outages += 1
            what = "lost the connection to" if self.reachable else "cannot reach"
            log.error("%s the API server at %s: %s (retrying every %gs, backing off to %gs)", what,
                      self.address, why, self.retry_period, max(MAX_RETRY_DELAY, self.retry_period))
            self._set(False)
        else:
            log.debug("API server at %s still unreachable: %s", self.address, why)
        self.error = why

    def answered(self) -> None:
        if self.reachable is not True:
            if self.reachable is False:
                log.info("the API server at %s answers again", self.address)
            self._set(True)
        self.error = ""

    # the client's ConnectionObserver
    def connection_failed(self, error: ApiError) -> None:
        self.failed(describe(error))

    def connection_answered(self) -> None:
        if self.reachable is not True:  # the common case costs one comparison
            self.answered()

    def _set(self, reachable: bool) -> None:
        self.reachable = reachable
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def changed(self) -> None:
        """Wait for the next change of `reachable`."""
        if self._changed is None:
            self._changed = asyncio.Event()
        await self._changed.wait()

    async def wait_answering(self) -> None:
        """Return at once unless the API server is known to be unreachable; else when it answers."""
        while self.reachable is False:
            await self.changed()

    def ready(self) -> tuple[bool, str]:
        if self.reachable is None:
            return False, f"waiting for the API server at {self.address}"
        if self.reachable is False:
            return False, f"cannot reach the API server at {self.address}: {self.error}"
        return True, ""


async def wait_for_api_server(
    client: KubeClient, status: ApiServerStatus, give_up_after: float | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep, clock: Callable[[], float] = time.monotonic,
) -> bool:
    """GET `/healthz` until it answers 200, retrying with a `Backoff` from the retry period.
    True once it did; False when `give_up_after` seconds passed first (None: never give up)."""
    backoff = Backoff(status.retry_period)
    began = clock()
    timeout = max(MIN_PROBE_TIMEOUT, status.retry_period)
    while True:
        try:
            await asyncio.wait_for(client.request("GET", "/healthz"), timeout)
            status.answered()
            return True
        except (ApiError, asyncio.TimeoutError) as exc:
            raise_if_cancelling()  # 3.11's wait_for may have turned our cancel into this error
            status.failed(describe(exc))
        delay = backoff.next()
        if give_up_after is not None:
            left = began + give_up_after - clock()
            if left <= 0:
                return False
            delay = min(delay, left)
        await sleep(delay)


async def watch_connection(client: KubeClient, status: ApiServerStatus) -> None:
    """Until cancelled: whenever the API server is lost, probe `/healthz` with the backoff from
    the retry period until it answers (requests that still answer end the outage sooner)."""
    while True:
        while status.reachable is not False:
            await status.changed()
        await wait_for_api_server(client, status)
