"""Leader election on a `coordination.k8s.io/v1` Lease, with client-go's leaderelection semantics.

* A candidate reads the Lease; it may take it when the Lease is absent, has no holder, is its
  own, or when the record has not changed for `leaseDurationSeconds` as measured on the
  candidate's *own* clock since it last saw the record change (client-go's `observedTime`: no
  trust in other machines' clocks).
* Taking it from someone else sets `acquireTime` and increments `leaseTransitions`; renewing
  only moves `renewTime`.
* The leader renews every `retry_period`; if it cannot renew within `renew_deadline` of its
  last renewal it stops leading (`on_stopped_leading`; kube-controller-manager exits). On clean
  shutdown it releases the Lease (empty holder, 1 s duration), so a standby takes over at once.

One leader at a time: the renew deadline counts from the last successful renewal, and every write
of the controller is checked against it when it is sent (`may_write`, `fenced_client`). Others
take over no sooner than one lease duration after they saw that renewal, and the lease duration
is longer than the renew deadline, so a leader that was paused (SIGSTOP, a stalled VM) or cut off
past its deadline writes nothing more once it runs again: its writes are refused and its workers
stopped. A renewal still hanging at the deadline is abandoned.

How a standby is fast without being unsafe: client-go polls every retry period, so it notices a
renewal up to one retry period late, and its expiry (observed time + lease duration) lands up
to a retry period after the real one. A standby here *watches* the Lease: it observes every
renewal within milliseconds and sleeps until exactly observed time + lease duration (woken
earlier by any change: a renewal pushes the expiry out, a release makes it immediate). So it
takes over within one lease duration of the leader's last renewal, hence of its death. The
rule itself is unchanged: it never writes before the lease has expired by its own observed
clock, and the write carries the read resourceVersion, so a renewal racing it wins (409).
Without a watch (forbidden, or an API without it) it polls, at most one retry period apart and
also exactly at the expiry it computed.

Failed attempts back off (from the retry period, doubling) instead of retrying at once, and an
unreachable API server is reported through :class:`ApiServerStatus` (one log line per outage).

The clock and sleep are injectable; Lease I/O goes through a small port (get, create, update,
and optionally watch).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable, Protocol

from pyhpa.adapters.tasks import cancel_and_wait
from pyhpa.adapters.kube.client import ApiError, KubeClient, watch_error
from pyhpa.api.timefmt import format_epoch
from pyhpa.live.connectivity import ApiServerStatus, Backoff, describe

log = logging.getLogger("pyhpa.leader")
EXPIRY_MARGIN = 0.01  # seconds past the computed expiry before trying (float rounding, not safety)
WATCH_RETRY = 0.5  # seconds before re-opening a failed Lease watch, the first time (then doubling)


class LeaseConflict(Exception):
    """The Lease changed since we read it (HTTP 409), or was created by someone else first."""


class NotLeading(ApiError):
    """A write refused because this replica's lease may have run out (see `LeaderElector.may_write`)."""

    def __init__(self, method: str, path: str) -> None:
        super().__init__(0, "NotLeading", f"{method} {path}: refused: not leading "
                                          "(the lease was not renewed within the renew deadline)", path)


class LeaseClient(Protocol):
    async def get(self) -> dict[str, Any] | None: ...

    async def create(self, lease: dict[str, Any]) -> dict[str, Any]: ...

    async def update(self, lease: dict[str, Any]) -> dict[str, Any]: ...

    # Optional: `watch()` yields the Lease on every change (None when deleted) until the stream ends.


def _record_key(spec: dict[str, Any]) -> tuple[Any, ...]:
    """What makes a leader record "changed" (client-go compares the whole record)."""
    return (spec.get("holderIdentity"), spec.get("renewTime"), spec.get("acquireTime"),
            spec.get("leaseTransitions"), spec.get("leaseDurationSeconds"))


@dataclass
class LeaderElectionConfig:
    identity: str
    lease_duration: float = 15.0  # --leader-elect-lease-duration
    renew_deadline: float = 10.0  # --leader-elect-renew-deadline
    retry_period: float = 2.0  # --leader-elect-retry-period
    release_on_cancel: bool = True

    def validate(self) -> None:
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline")
        if self.renew_deadline <= 1.2 * self.retry_period:
            raise ValueError("--leader-elect-renew-deadline must be greater than 1.2 x --leader-elect-retry-period")
        if not self.identity:
            raise ValueError("leader election identity must not be empty")


@dataclass
class LeaderElector:
    config: LeaderElectionConfig
    client: LeaseClient
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    observed_record: dict[str, Any] | None = None
    observed_time: float = 0.0
    is_leader: bool = False
    transitions_seen: int = 0
    last_renew: float = 0.0  # our clock at the last successful acquire/renew
    watching: bool = False  # a Lease watch is delivering changes
    api_server: ApiServerStatus | None = None  # told when the API server cannot be reached
    last_error: str | None = None  # why the last attempt could not ask the API server
    _last_spec: tuple[Any, ...] | None = field(default=None, repr=False)
    _changed: asyncio.Event | None = field(default=None, repr=False)
    _lost: asyncio.Event | None = field(default=None, repr=False)

    # ------------------------------------------------------------------ observation

    def observe(self, lease: dict[str, Any] | None, now: float) -> bool:
        """Note a Lease as read or watched at `now` (our clock); the observed time only moves when
        the record changed. True when it changed."""
        self.observed_record = lease
        key = None if lease is None else _record_key(lease.get("spec") or {})
        if key == self._last_spec:
            return False
        self._last_spec = key
        self.observed_time = now
        return True

    def until_expiry(self) -> float:
        """Seconds until another holder's lease expires by our observed clock (<= 0: try now)."""
        if self.observed_record is None:
            return 0.0
        spec = self.observed_record.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        if not holder or holder == self.config.identity:
            return 0.0
        duration = float(spec.get("leaseDurationSeconds") or self.config.lease_duration)
        return self.observed_time + duration - self.clock()

    def deadline_left(self) -> float:
        """Seconds until the renew deadline of the last successful renewal (<= 0: passed)."""
        return self.config.renew_deadline - (self.clock() - self.last_renew)

    def may_write(self) -> bool:
        """True while a write by this replica is covered by its lease: it leads, and its last
        renewal is younger than the renew deadline. Finding the deadline passed ends leadership
        at once (the renew loop may be asleep, e.g. right after the process was resumed)."""
        if not self.is_leader:
            return False
        if self.deadline_left() > 0:
            return True
        self._stop_leading()
        return False

    def _stop_leading(self) -> None:
        if self.is_leader:
            self.is_leader = False
            log.error("leader election: %s failed to renew the lease within %.1fs (last renewal %.1fs ago); "
                      "stopping", self.config.identity, self.config.renew_deadline, self.clock() - self.last_renew)
        if self._lost is not None:
            self._lost.set()

    def healthy(self) -> tuple[bool, str]:
        """For /healthz: a leader whose renewals stopped (longer than a lease) is not healthy."""
        if not self.is_leader:
            return True, ""
        age = self.clock() - self.last_renew
        if age > self.config.lease_duration:
            return False, f"leader election: lease not renewed for {age:.1f}s"
        return True, ""

    # ------------------------------------------------------------------ one attempt

    async def try_acquire_or_renew(self) -> bool:
        cfg = self.config
        lease = await self.client.get()
        now = self.clock()  # observed when the answer arrived (later = more conservative)
        if lease is None:
            spec = {
                "holderIdentity": cfg.identity,
                "leaseDurationSeconds": int(cfg.lease_duration),
                "acquireTime": format_epoch(now, micro=True),
                "renewTime": format_epoch(now, micro=True),
                "leaseTransitions": 0,
            }
            try:
                created = await self.client.create({"spec": spec})
            except LeaseConflict:
                return False
            self._observe(created, now)
            return True

        spec = dict(lease.get("spec") or {})
        self.observe(lease, now)
        holder = spec.get("holderIdentity") or ""
        duration = float(spec.get("leaseDurationSeconds") or cfg.lease_duration)
        mine = holder == cfg.identity
        if holder and not mine and self.observed_time + duration > now:
            return False  # someone else holds a lease that has not expired (by our clock)

        new_spec = dict(spec)
        new_spec["holderIdentity"] = cfg.identity
        new_spec["leaseDurationSeconds"] = int(cfg.lease_duration)
        new_spec["renewTime"] = format_epoch(now, micro=True)
        if not mine:
            new_spec["acquireTime"] = format_epoch(now, micro=True)
            new_spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        updated = dict(lease)
        updated["spec"] = new_spec
        try:
            result = await self.client.update(updated)
        except LeaseConflict:
            return False
        self._observe(result, now)
        return True

    def _observe(self, lease: dict[str, Any], now: float) -> None:
        """Our own successful write."""
        spec = lease.get("spec") or {}
        self.observed_record = lease
        self.observed_time = now
        self.last_renew = now
        self._last_spec = _record_key(spec)
        self.transitions_seen = int(spec.get("leaseTransitions") or 0)

    async def release(self) -> None:
        if not self.is_leader or self.observed_record is None:
            return
        lease = dict(self.observed_record)
        spec = dict(lease.get("spec") or {})
        if spec.get("holderIdentity") != self.config.identity:
            return
        now = self.clock()
        spec.update({"holderIdentity": "", "leaseDurationSeconds": 1, "renewTime": format_epoch(now, micro=True),
                     "acquireTime": format_epoch(now, micro=True)})
        lease["spec"] = spec
        try:
            await self.client.update(lease)
        except Exception as exc:  # best effort: the lease expires anyway
            log.warning("leader election: release failed: %s", exc)
        self.is_leader = False

    # ------------------------------------------------------------------ loops

    async def _attempt(self) -> bool:
        """One acquire-or-renew; False when it did not succeed, with `last_error` set when the
        API server could not be asked (then the caller backs off)."""
        try:
            won = await self.try_acquire_or_renew()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.last_error = describe(exc)
            if self.api_server is not None and isinstance(exc, ApiError) and exc.code == 0:
                self.api_server.failed(self.last_error)  # one line per outage
            else:
                log.warning("leader election: error retrieving or updating the lease: %s", exc)
            return False
        self.last_error = None
        if self.api_server is not None:
            self.api_server.answered()
        return won

    async def acquire(self) -> None:
        """Block until this candidate holds the Lease."""
        self._changed = asyncio.Event()
        watcher = asyncio.create_task(self._watch_loop(), name="lease-watch") \
            if callable(getattr(self.client, "watch", None)) else None
        backoff = Backoff(self.config.retry_period)
        try:
            while True:
                if await self._attempt():
                    self.is_leader = True
                    log.info("leader election: %s acquired the lease", self.config.identity)
                    return
                if self.last_error is not None:
                    await self.sleep(backoff.next())
                    continue
                backoff.reset()
                await self._wait_for_chance()
        finally:
            await cancel_and_wait(watcher)
            self.watching = False

    async def _wait_for_chance(self) -> None:
        """Sleep until the observed lease may have expired, or until the record changes."""
        poll = self.config.retry_period * random.uniform(1.0, 1.2)
        while True:
            remaining = self.until_expiry()
            if remaining <= 0:
                return
            assert self._changed is not None
            self._changed.clear()
            if not self.watching:  # blind: poll, but also exactly at the expiry we know of
                await self._sleep_or_change(min(poll, remaining + EXPIRY_MARGIN))
                return
            if not await self._sleep_or_change(remaining + EXPIRY_MARGIN):
                return

    async def _sleep_or_change(self, seconds: float) -> bool:
        """Sleep `seconds`; True if the watched record changed first."""
        assert self._changed is not None
        sleeper = asyncio.ensure_future(self.sleep(seconds))
        changed = asyncio.ensure_future(self._changed.wait())
        try:
            done, _ = await asyncio.wait({sleeper, changed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            changed.cancel()
        return changed in done

    async def _watch_loop(self) -> None:
        """Keep `observed_record`/`observed_time` current from a watch while waiting to lead."""
        backoff = Backoff(WATCH_RETRY)
        while True:
            try:
                async for lease in self.client.watch():  # type: ignore[attr-defined]
                    self.watching = True
                    backoff.reset()
                    if self.observe(lease, self.clock()):
                        assert self._changed is not None
                        self._changed.set()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self.watching:
                    log.info("leader election: lease watch failed (%s); polling meanwhile", exc)
                self.watching = False
                await self.sleep(backoff.next())

    async def renew_loop(self) -> None:
        """Renew every retry period; return when no renewal succeeded within the renew deadline of
        the last successful one. Counting from that renewal (not from when this round of attempts
        began) is what stops a leader resumed after a pause at once; an attempt still hanging at
        the deadline is abandoned."""
        cfg = self.config
        while True:
            await self.sleep(cfg.retry_period)
            while True:
                left = self.deadline_left()
                if left <= 0 or not self.is_leader:
                    self._stop_leading()
                    return
                renewed = await self._attempt_within(left)
                if renewed:
                    break
                left = self.deadline_left()
                if left <= 0:
                    self._stop_leading()
                    return
                await self.sleep(min(cfg.retry_period, max(0.05, cfg.renew_deadline / 10), left))

    async def _attempt_within(self, seconds: float) -> bool:
        """`_attempt()`, abandoned (False) if it has not answered after `seconds` of our sleep."""
        attempt = asyncio.ensure_future(self._attempt())
        timer = asyncio.ensure_future(self.sleep(seconds))
        try:
            await asyncio.wait({attempt, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
            if not attempt.done():
                attempt.cancel()
                try:
                    await attempt
                except asyncio.CancelledError:
                    task = asyncio.current_task()
                    if task is not None and task.cancelling():
                        raise  # we are being cancelled ourselves
        return not attempt.cancelled() and attempt.result()

    async def run(self, lead: Callable[[], Awaitable[None]]) -> None:
        """Acquire, run `lead()` while leading; stop it when leadership is lost. Returns after loss."""
        await self.acquire()
        self._lost = asyncio.Event()
        lead_task = asyncio.create_task(lead(), name="leading")
        renew_task = asyncio.create_task(self.renew_loop(), name="lease-renew")
        lost_task = asyncio.create_task(self._lost.wait(), name="lease-lost")
        tasks = (lead_task, renew_task, lost_task)
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            await cancel_and_wait(*tasks)
            if self.config.release_on_cancel:
                await self.release()
            self.is_leader = False
            self._lost = None


class _WriteFence:
    """Stands in for the controller client's HTTP connection pool: a write leaves the process only
    while `may_write()`. Checked as it is sent, after the client's rate limiter, not when queued."""

    def __init__(self, http: Any, may_write: Callable[[], bool]) -> None:
        self._http = http
        self._may_write = may_write

    async def request(self, method: str, url: Any, **kwargs: Any) -> Any:
        if method != "GET" and not self._may_write():
            raise NotLeading(method, str(url))
        return await self._http.request(method, url, **kwargs)

    def __getattr__(self, name: str) -> Any:  # stream (watches), headers, aclose ...
        return getattr(self._http, name)


def fenced_client(client: KubeClient, may_write: Callable[[], bool]) -> KubeClient:
    """The controller's view of `client`: same connections, rate limiter and request counter, but
    its writes (scale, HPA status, events, state) raise `NotLeading` unless `may_write()`. The
    Lease itself is renewed through `client`, unfenced."""
    view = KubeClient(_WriteFence(client.http, may_write), counter=client.counter)
    view.limiter = client.limiter  # one request budget for the whole process
    view.connection = client.connection  # one report of the API server's outages
    return view


class KubeLeaseClient:
    """The Lease port over the HTTP adapter. ``annotations`` go on the Lease with every write of
    the holder (the controller's published configuration: whoever reads the Lease sees the
    leader's)."""

    def __init__(self, client: Any, namespace: str, name: str, annotations: dict[str, str] | None = None) -> None:
        self.client = client
        self.namespace = namespace
        self.name = name
        self.collection = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        self.annotations = dict(annotations or {})

    def _annotated(self, metadata: dict[str, Any]) -> dict[str, Any]:
        if not self.annotations:
            return metadata
        return {**metadata, "annotations": {**(metadata.get("annotations") or {}), **self.annotations}}

    async def get(self) -> dict[str, Any] | None:
        try:
            return await self.client.get(f"{self.collection}/{self.name}")
        except ApiError as exc:
            if exc.is_not_found:
                return None
            raise

    async def create(self, lease: dict[str, Any]) -> dict[str, Any]:
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": self._annotated({"name": self.name, "namespace": self.namespace}), "spec": lease["spec"]}
        try:
            return await self.client.post(self.collection, body)
        except ApiError as exc:
            if exc.code == 409:
                raise LeaseConflict(str(exc)) from exc
            raise

    async def update(self, lease: dict[str, Any]) -> dict[str, Any]:
        try:
            return await self.client.put(f"{self.collection}/{self.name}",
                                         {**lease, "metadata": self._annotated(dict(lease.get("metadata") or {}))})
        except ApiError as exc:
            if exc.code == 409:
                raise LeaseConflict(str(exc)) from exc
            raise

    async def watch(self) -> AsyncIterator[dict[str, Any] | None]:
        """The Lease on each change, from its current state on (a watch by name, so RBAC can
        grant it with resourceNames)."""
        params = {"fieldSelector": f"metadata.name={self.name}", "allowWatchBookmarks": "true",
                  "timeoutSeconds": str(random.randint(300, 600))}
        async for etype, raw in self.client.watch(self.collection, params):
            if etype == "BOOKMARK":
                continue
            if etype == "ERROR":
                raise watch_error(raw, self.collection)
            yield None if etype == "DELETED" else json.loads(bytes(raw))
