"""Sharded replicas (`pyhpa run --shards N`, docs/controller.md#sharding).

The HPAs are split over N shards by a hash of ``namespace/name`` that every process computes the
same way (`shard_of`: the first 8 bytes of SHA-256, big-endian, modulo N). Each shard is owned
through its own `coordination.k8s.io/v1` Lease, ``<name>-shard-<i>-of-<N>``, taken, renewed and
fenced with the leader election's rules (:class:`pyhpa.live.leader.LeaderElector`, one per shard):
a replica writes for an HPA only while its last renewal of that HPA's shard is younger than the
renew deadline, so every HPA has one writer at a time.

How many shards a replica takes: each replica also renews a membership Lease of its own
(``<name>-member-<hash of its identity>``); the live replicas are those whose membership Lease
has not expired by this replica's clock, and a replica holds at most ``ceil(N / live)`` shards.
It takes free or expired shards up to that share and, when others join, gives away the ones
above it: it stops reconciling their HPAs, lets the reconciles in flight finish, flushes their
memory and releases the Lease (empty holder), so the next owner takes it at once. One watch on
the Leases of the set (label ``pyhpa.io/shard-set=<name>``) tells it of renewals, releases and
members within milliseconds; without it, it lists them every retry period.

A shard's stabilization memory moves with it: the new owner reloads that shard's entries from
the state Leases (:mod:`pyhpa.adapters.kube.state`) before reconciling its HPAs.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import random
import time
from dataclasses import replace
from typing import Any, Awaitable, Callable, Protocol

from pyhpa.adapters.kube.client import KubeClient, watch_error
from pyhpa.adapters.kube.state import LeaseStateStore
from pyhpa.adapters.kube.write_scope import WRITING_FOR
from pyhpa.controller.flags import SHARD_SET_LABEL
from pyhpa.live.connectivity import ApiServerStatus, Backoff
from pyhpa.api.timefmt import format_epoch
from pyhpa.live.leader import (EXPIRY_MARGIN, WATCH_RETRY, KubeLeaseClient, LeaderElectionConfig, LeaderElector,
                               LeaseConflict)
from pyhpa.live.loop import HPAController
from pyhpa.live.metrics import ControllerMetrics

log = logging.getLogger("pyhpa.shards")
ROLE_LABEL = "pyhpa.io/shard-role"  # "shard" or "member"
SHARDS_ANNOTATION = "pyhpa.io/shards"  # N, on every Lease of the set
RELEASE_WAIT = 10.0  # seconds a graceful release waits for reconciles in flight


def shard_of(key: str, shards: int) -> int:
    """The shard of the HPA ``namespace/name``: stable across processes, machines and Python
    versions (unlike `hash()`, which is salted per process)."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") % shards


def shard_lease_name(name: str, index: int, shards: int) -> str:
    return f"{name}-shard-{index}-of-{shards}"


def member_lease_name(name: str, identity: str) -> str:
    """Identities (``host_uuid``) are not valid object names; a hash of them is."""
    return f"{name}-member-{hashlib.sha256(identity.encode('utf-8')).hexdigest()[:16]}"


def fair_share(shards: int, live: int) -> int:
    return math.ceil(shards / max(1, live))


class LabeledLeaseClient(KubeLeaseClient):
    """A Lease of the shard set: labelled so that one watch (and RBAC) covers the whole set."""

    def __init__(self, client: Any, namespace: str, name: str, labels: dict[str, str],
                 annotations: dict[str, str]) -> None:
        super().__init__(client, namespace, name)
        self.annotations = annotations  # shared by the set: a change is published with the next renewal
        self.labels = labels

    def _annotated(self, metadata: dict[str, Any]) -> dict[str, Any]:
        out = super()._annotated(metadata)
        return {**out, "labels": {**(out.get("labels") or {}), **self.labels}}


class ShardWork(Protocol):
    """What the controller does when a shard comes or goes (:class:`ShardedController`)."""

    async def acquired(self, shard: int) -> None: ...  # load its memory

    def started(self, shard: int) -> None: ...  # reconcile its HPAs now

    async def releasing(self, shard: int) -> None: ...  # no new reconciles; wait; flush its memory

    def lost(self, shard: int) -> None: ...  # forget its memory without writing


class ShardCoordinator:
    """Takes, renews, gives away and loses this replica's shards (see the module doc)."""

    def __init__(self, client: KubeClient, config: LeaderElectionConfig, shards: int, namespace: str, name: str,
                 annotations: dict[str, str], metrics: ControllerMetrics | None = None,
                 api_server: ApiServerStatus | None = None, clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.client = client
        self.config = replace(config, release_on_cancel=True)
        self.shards = shards
        self.namespace = namespace
        self.name = name
        self.metrics = metrics
        self.clock = clock
        self.sleep = sleep
        self.annotations = annotations  # shared: updated in place, sent with every renewal
        self.work: ShardWork | None = None
        annotations[SHARDS_ANNOTATION] = str(shards)

        def lease_client(lease: str, role: str) -> LabeledLeaseClient:
            return LabeledLeaseClient(client, namespace, lease, {SHARD_SET_LABEL: name, ROLE_LABEL: role}, annotations)

        self.electors = [LeaderElector(self.config, lease_client(shard_lease_name(name, i, shards), "shard"),
                                       clock=clock, sleep=sleep, api_server=api_server) for i in range(shards)]
        self.by_lease = {shard_lease_name(name, i, shards): i for i in range(shards)}
        self.member_name = member_lease_name(name, config.identity)
        self.member = LeaderElector(self.config, lease_client(self.member_name, "member"), clock=clock, sleep=sleep,
                                    api_server=api_server)
        self.members: dict[str, LeaderElector] = {}  # other replicas' membership, as observed
        self.held: set[int] = set()  # shards whose Lease this replica holds
        self.loaded: set[int] = set()  # ... whose memory here is current (this replica writes it)
        self.processing: set[int] = set()  # ... whose HPAs the workers reconcile
        self.watching = False
        self._wake = asyncio.Event()
        # where each replica starts looking for free shards: spread, so that starters rarely collide
        self._offset = int(hashlib.sha256(config.identity.encode()).hexdigest(), 16) % shards

    # ------------------------------------------------------------------ the fence and the filter

    def shard(self, key: str) -> int:
        return shard_of(key, self.shards)

    def may_write(self) -> bool:
        """The fence (`fenced_client`): a write for an HPA passes while this replica's last
        renewal of its shard is younger than the renew deadline; a write for no single HPA (the
        memory flush, which only carries entries of `loaded` shards) while any shard is."""
        key = WRITING_FOR.get()
        if key is None:
            return any(self.electors[i].may_write() for i in list(self.held))
        i = self.shard(key)
        return i in self.held and self.electors[i].may_write()

    def reconciles(self, key: str) -> bool:
        i = self.shard(key)
        return i in self.processing and self.electors[i].may_write()

    def writes_memory_of(self, key: str) -> bool:
        i = self.shard(key)
        return i in self.loaded and self.electors[i].may_write()

    def healthy(self) -> tuple[bool, str]:
        for i in sorted(self.held):
            ok, why = self.electors[i].healthy()
            if not ok:
                return False, f"shard {i}: {why}"
        return True, ""

    # ------------------------------------------------------------------ observation

    def live_replicas(self) -> int:
        """This one and every other whose membership Lease has not expired by our clock."""
        return 1 + sum(1 for m in self.members.values() if m.until_expiry() > 0)

    def _observe(self, lease: dict[str, Any] | None, name: str, now: float) -> None:
        """A Lease of the set as watched or listed; wakes the loop when its holder changed."""
        if name == self.member_name:
            return
        if name in self.by_lease:
            elector = self.electors[self.by_lease[name]]
        elif name.startswith(f"{self.name}-member-"):
            elector = self.members.setdefault(name, LeaderElector(self.config, None, clock=self.clock))  # type: ignore[arg-type]
        else:
            return  # a shard Lease of another N (see the limits in docs/controller.md#sharding)
        before = _holder(elector.observed_record)
        if elector.observe(lease, now) and _holder(lease) != before:
            self._wake.set()

    async def _list(self) -> None:
        doc = await self.client.get(f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases", dict,
                                    {"labelSelector": f"{SHARD_SET_LABEL}={self.name}"})
        now = self.clock()
        for item in doc.get("items") or []:
            self._observe(item, (item.get("metadata") or {}).get("name", ""), now)

    async def _watch_loop(self) -> None:
        collection = f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases"
        backoff = Backoff(WATCH_RETRY)
        while True:
            params = {"labelSelector": f"{SHARD_SET_LABEL}={self.name}", "allowWatchBookmarks": "true",
                      "timeoutSeconds": str(random.randint(300, 600))}
            try:
                async for etype, raw in self.client.watch(collection, params):
                    if etype == "BOOKMARK":
                        continue
                    if etype == "ERROR":
                        raise watch_error(raw, collection)
                    self.watching = True
                    backoff.reset()
                    obj = json.loads(bytes(raw))
                    name = (obj.get("metadata") or {}).get("name", "")
                    self._observe(None if etype == "DELETED" else obj, name, self.clock())
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self.watching:
                    log.info("shards: lease watch failed (%s); listing meanwhile", exc)
            self.watching = False
            await self.sleep(backoff.next())

    # ------------------------------------------------------------------ one pass

    async def _renew(self) -> None:
        """Renew the membership and every held shard (at once, each within its deadline)."""
        held = sorted(self.held)
        results = await asyncio.gather(
            self.member._attempt_within(self.config.renew_deadline),
            *(self.electors[i]._attempt_within(max(0.05, self.electors[i].deadline_left())) for i in held))
        if results[0]:
            self.member.is_leader = True
        for i in held:
            if not self.electors[i].may_write():
                self._lose(i)

    def _lose(self, i: int) -> None:
        log.error("shards: %s lost shard %d (not renewed within %.1fs); its HPAs are no longer written here",
                  self.config.identity, i, self.config.renew_deadline)
        self.held.discard(i)
        self.processing.discard(i)
        self.loaded.discard(i)
        self.electors[i].is_leader = False
        if self.work is not None:
            self.work.lost(i)
        self._count("lost")

    def _count(self, event: str) -> None:
        if self.metrics is not None:
            self.metrics.shard_handovers.labels(event).inc()
            self.metrics.shards_owned.set(len(self.held))

    async def _acquire(self, i: int) -> bool:
        e = self.electors[i]
        if not await e._attempt():
            return False
        e.is_leader = True
        self.held.add(i)
        log.info("shards: %s acquired shard %d of %d", self.config.identity, i, self.shards)
        if self.work is not None:
            await self.work.acquired(i)
        if not e.may_write():  # the load outlasted the renew deadline
            self._lose(i)
            return False
        self.loaded.add(i)
        self.processing.add(i)
        self._count("acquired")
        if self.work is not None:
            self.work.started(i)
        return True

    async def release(self, i: int) -> None:
        """Give shard `i` away gracefully: stop, drain, flush its memory, release the Lease."""
        self.processing.discard(i)
        try:
            if self.work is not None:
                await self.work.releasing(i)
        finally:  # whatever happened, the shard is not left held and idle
            self.loaded.discard(i)
            if self.work is not None:
                self.work.lost(i)
            released = await self._release_lease(self.electors[i])
            self.held.discard(i)
        log.info("shards: %s %s shard %d of %d", self.config.identity,
                 "released" if released else "left to expire", i, self.shards)
        self._count("released")

    async def _balance(self) -> None:
        """Take free or expired shards up to the fair share; give away those above it."""
        for i in sorted(self.held):
            if not self.electors[i].is_leader:  # the fence found its deadline passed
                self._lose(i)
        share = fair_share(self.shards, self.live_replicas())
        for i in sorted(self.held, reverse=True)[:max(0, len(self.held) - share)]:
            await self.release(i)
        for k in range(self.shards):
            if len(self.held) >= share:
                break
            i = (self._offset + k) % self.shards
            if i not in self.held and self.electors[i].until_expiry() <= 0:
                await self._acquire(i)

    def _next_wait(self) -> float:
        """Until the next renewal, or sooner: the first expiry of a shard we would take."""
        wait = self.config.retry_period
        if len(self.held) < fair_share(self.shards, self.live_replicas()):
            for i in range(self.shards):
                if i not in self.held:
                    wait = min(wait, max(0.0, self.electors[i].until_expiry()) + EXPIRY_MARGIN)
        return wait

    async def run(self) -> None:
        """Until cancelled; then every held shard is released (gracefully) and the membership too."""
        watcher = asyncio.create_task(self._watch_loop(), name="shard-lease-watch")
        try:
            await self._first_look()
            next_renewal = 0.0
            while True:
                if not self.watching:
                    await _logged(self._list())
                if self.clock() >= next_renewal:
                    next_renewal = self.clock() + self.config.retry_period
                    await self._renew()
                self._wake.clear()  # a change seen from here on makes another pass at once
                await _logged(self._balance())
                await self._sleep_or_wake(min(self._next_wait(), max(0.0, next_renewal - self.clock())))
        finally:
            watcher.cancel()
            try:
                await watcher
            except (asyncio.CancelledError, Exception):
                pass
            await asyncio.shield(self.release_all())

    async def _first_look(self) -> None:
        """Before taking anything: the Leases of the set as they are (so that a replica joining a
        running set sees its members and does not take every free shard for itself)."""
        await _logged(self._list())

    async def release_all(self) -> None:
        """All at once, membership first (the others' fair share grows before the shards come
        free, so each is taken as soon as it is released)."""
        async def release(i: int) -> None:
            try:
                await self.release(i)
            except Exception as exc:  # best effort: its lease expires anyway
                log.warning("shards: releasing shard %d failed: %s", i, exc)

        await self._release_lease(self.member)
        await asyncio.gather(*(release(i) for i in sorted(self.held)))
        if self.metrics is not None:
            self.metrics.shards_owned.set(0)

    async def _release_lease(self, elector: LeaderElector) -> bool:
        """Empty holder, 1 s duration (as `LeaderElector.release`), written over the Lease as read
        now: a renewal cancelled in flight may have moved it past the version last seen, which
        would make the release fail and the Lease be left to expire."""
        elector.is_leader = False
        for _ in range(3):
            try:
                lease = await elector.client.get()
                spec = dict((lease or {}).get("spec") or {})
                if lease is None or spec.get("holderIdentity") != self.config.identity:
                    return False
                now = format_epoch(self.clock(), micro=True)
                spec.update({"holderIdentity": "", "leaseDurationSeconds": 1, "renewTime": now, "acquireTime": now})
                await elector.client.update({**lease, "spec": spec})
                return True
            except LeaseConflict:
                continue
            except Exception as exc:  # best effort: the lease expires anyway
                log.warning("shards: releasing %s failed: %s", getattr(elector.client, "name", "a lease"), exc)
                return False
        return False

    async def _sleep_or_wake(self, seconds: float) -> None:
        sleeper = asyncio.ensure_future(self.sleep(seconds))
        woken = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait({sleeper, woken}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            woken.cancel()


class ShardedController:
    """The controller's side of sharding (:class:`ShardWork`): it reconciles and persists only
    the HPAs of the shards the coordinator gives it; its caches hold every HPA, so a shard taken
    over is reconciled at once."""

    def __init__(self, controller: HPAController, coordinator: ShardCoordinator) -> None:
        self.controller = controller
        self.coordinator = coordinator
        controller.owns = coordinator.reconciles
        if isinstance(controller.state, LeaseStateStore):
            controller.state.writable = coordinator.writes_memory_of
        coordinator.work = self
        self._flushing = asyncio.Lock()

    def _of(self, shard: int) -> Callable[[str], bool]:
        return lambda key: self.coordinator.shard(key) == shard

    def _keys(self, shard: int) -> list[str]:
        return [k for k in list(self.controller.hpa_informer.cache) if self.coordinator.shard(k) == shard]

    async def acquired(self, shard: int) -> None:
        state = self.controller.state
        if isinstance(state, LeaseStateStore):
            live = {k: h.metadata.uid for k, h in self.controller.hpa_informer.cache.items()}
            restored = await state.reload(self._of(shard), live)
            log.info("shards: restored the memory of shard %d", shard, extra={"hpas": restored})

    def started(self, shard: int) -> None:
        for key in self._keys(shard):
            self.controller.queue.add(key)  # at once: the previous owner may be a lease duration late

    async def releasing(self, shard: int) -> None:
        keys = self._keys(shard)
        deadline = time.monotonic() + RELEASE_WAIT
        while any(self.controller.queue.is_processing(k) for k in keys) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        state = self.controller.state
        if isinstance(state, LeaseStateStore):
            async with self._flushing:  # shards released together: the first flush carries them all
                for ns in sorted({k.split("/", 1)[0] for k in state.states if self._of(shard)(k)}):
                    await _logged(state.flush_namespace(ns))

    def lost(self, shard: int) -> None:
        mine = self._of(shard)
        state = self.controller.state
        if isinstance(state, LeaseStateStore):
            state.drop(mine)
        for key in [k for k in self.controller.last_traces if mine(k)]:
            self.controller.last_traces.pop(key, None)


def _holder(lease: dict[str, Any] | None) -> str | None:
    return None if lease is None else (lease.get("spec") or {}).get("holderIdentity") or ""


async def _logged(step: Awaitable[None]) -> None:
    try:
        await step
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.warning("shards: %s", exc)
