"""Lease leader election with client-go semantics, against an in-memory Lease and a fake clock."""

import copy

import pytest

from pyhpa.live.leader import LeaderElectionConfig, LeaderElector, LeaseConflict
from tests.clock import Clock

START = 1_800_000_000.0  # the fake clocks' first reading


class FakeLeases:
    """One Lease with resourceVersion conflicts, like the API server."""

    def __init__(self) -> None:
        self.lease = None
        self.rv = 0

    async def get(self):
        return copy.deepcopy(self.lease)

    async def create(self, lease):
        if self.lease is not None:
            raise LeaseConflict("exists")
        self.rv += 1
        self.lease = {"metadata": {"resourceVersion": str(self.rv)}, "spec": lease["spec"]}
        return copy.deepcopy(self.lease)

    async def update(self, lease):
        if lease["metadata"]["resourceVersion"] != self.lease["metadata"]["resourceVersion"]:
            raise LeaseConflict("conflict")
        self.rv += 1
        self.lease = copy.deepcopy(lease)
        self.lease["metadata"]["resourceVersion"] = str(self.rv)
        return copy.deepcopy(self.lease)


def elector(name, leases, clock):
    cfg = LeaderElectionConfig(identity=name, lease_duration=15, renew_deadline=10, retry_period=2)
    cfg.validate()
    return LeaderElector(cfg, leases, clock=clock)


async def test_first_candidate_acquires_second_waits_until_expiry_on_its_own_clock():
    leases, clock = FakeLeases(), Clock(START)
    a, b = elector("a", leases, clock), elector("b", leases, clock)
    assert await a.try_acquire_or_renew()
    assert leases.lease["spec"]["holderIdentity"] == "a"
    assert leases.lease["spec"]["leaseTransitions"] == 0
    assert not await b.try_acquire_or_renew()  # b observes the record now
    clock.t += 14
    assert not await b.try_acquire_or_renew()
    clock.t += 1.5  # 15.5 s after b first saw the unchanged record
    assert await b.try_acquire_or_renew()
    spec = leases.lease["spec"]
    assert spec["holderIdentity"] == "b"
    assert spec["leaseTransitions"] == 1
    assert spec["acquireTime"] == spec["renewTime"]


async def test_renewal_moves_renew_time_only_and_keeps_others_out():
    leases, clock = FakeLeases(), Clock(START)
    a, b = elector("a", leases, clock), elector("b", leases, clock)
    await a.try_acquire_or_renew()
    acquired = leases.lease["spec"]["acquireTime"]
    for _ in range(10):
        clock.t += 2
        assert await a.try_acquire_or_renew()
        assert not await b.try_acquire_or_renew()
    assert leases.lease["spec"]["acquireTime"] == acquired
    assert leases.lease["spec"]["renewTime"] != acquired
    assert leases.lease["spec"]["leaseTransitions"] == 0


async def test_stale_write_loses_on_conflict():
    leases, clock = FakeLeases(), Clock(START)
    a = elector("a", leases, clock)
    await a.try_acquire_or_renew()

    class Racing(FakeLeases):
        pass

    b = elector("b", leases, clock)
    clock.t += 100
    got = await leases.get()
    # someone else updates between b's read and write
    await a.try_acquire_or_renew()
    stale = copy.deepcopy(got)
    stale["spec"]["holderIdentity"] = "b"
    with pytest.raises(LeaseConflict):
        await leases.update(stale)
    assert leases.lease["spec"]["holderIdentity"] == "a"
    del b


async def test_release_lets_the_standby_take_over_at_once():
    leases, clock = FakeLeases(), Clock(START)
    a, b = elector("a", leases, clock), elector("b", leases, clock)
    await a.try_acquire_or_renew()
    a.is_leader = True
    assert not await b.try_acquire_or_renew()
    await a.release()
    assert leases.lease["spec"]["holderIdentity"] == ""
    assert await b.try_acquire_or_renew()
    assert leases.lease["spec"]["holderIdentity"] == "b"


def test_config_validation_names_the_flags():
    with pytest.raises(ValueError, match="lease-duration"):
        LeaderElectionConfig("x", lease_duration=5, renew_deadline=10).validate()
    with pytest.raises(ValueError, match="renew-deadline"):
        LeaderElectionConfig("x", lease_duration=15, renew_deadline=2, retry_period=2).validate()


async def test_renew_loop_gives_up_after_the_deadline():
    leases, clock = FakeLeases(), Clock(START)
    a = elector("a", leases, clock)

    async def fake_sleep(d):
        clock.t += d

    a.sleep = fake_sleep
    await a.acquire()
    assert a.is_leader

    async def broken_get():
        raise RuntimeError("apiserver down")

    leases.get = broken_get
    await a.renew_loop()
    assert not a.is_leader


# ---------------------------------------------------------------------------- standby timing


class WatchedLeases(FakeLeases):
    """FakeLeases whose changes are also delivered to watchers, like a Lease watch by name."""

    def __init__(self) -> None:
        super().__init__()
        self.watchers = []
        self.gets = []

    async def get(self):
        self.gets.append(None)
        return await super().get()

    def _publish(self):
        for q in self.watchers:
            q.put_nowait(copy.deepcopy(self.lease))

    async def create(self, lease):
        out = await super().create(lease)
        self._publish()
        return out

    async def update(self, lease):
        out = await super().update(lease)
        self._publish()
        return out

    async def watch(self):
        import asyncio

        q = asyncio.Queue()
        self.watchers.append(q)
        try:
            if self.lease is not None:  # a watch without resourceVersion starts with the current state
                yield copy.deepcopy(self.lease)
            while True:
                yield await q.get()
        finally:
            self.watchers.remove(q)


class SteppedClock(Clock):
    """A fake clock whose sleepers wake when the test advances it past their deadline."""

    def __init__(self):
        super().__init__(START)
        self.sleepers = []

    async def sleep(self, d):
        import asyncio

        fut = asyncio.get_running_loop().create_future()
        self.sleepers.append((self.t + d, fut))
        try:
            await fut
        finally:
            self.sleepers = [s for s in self.sleepers if s[1] is not fut]

    async def advance(self, dt):
        import asyncio

        self.t += dt
        for deadline, fut in list(self.sleepers):
            if deadline <= self.t and not fut.done():
                fut.set_result(None)
        for _ in range(50):
            await asyncio.sleep(0)


def standby(name, leases, clock):
    e = elector(name, leases, clock)
    e.sleep = clock.sleep
    return e


async def test_watching_standby_takes_over_one_lease_duration_after_the_last_renewal():
    import asyncio

    leases, clock = WatchedLeases(), SteppedClock()
    a, b = elector("a", leases, clock), standby("b", leases, clock)
    assert await a.try_acquire_or_renew()
    writes = []  # (clock, holder) of every write b makes
    real_update = leases.update

    async def recording_update(lease):
        writes.append((clock.t, lease["spec"]["holderIdentity"]))
        return await real_update(lease)

    leases.update = recording_update
    task = asyncio.create_task(b.acquire())
    await clock.advance(0)
    for _ in range(5):  # the leader renews every 2 s; b sees each renewal through its watch
        await clock.advance(2)
        assert await a.try_acquire_or_renew()
        await clock.advance(0)  # the watch delivers it (no latency in this fake)
    last_renewal = clock.t  # then the leader dies
    gets_before = len(leases.gets)
    while not task.done():
        await clock.advance(0.05)
        assert clock.t < last_renewal + 30, "no takeover"
    took_over = clock.t
    assert b.is_leader and leases.lease["spec"]["holderIdentity"] == "b"
    # exactly at expiry by b's observed clock (one 50 ms step of the fake clock at most), never before
    assert last_renewal + 15 <= took_over <= last_renewal + 15 + 0.05 + 0.01
    assert [w for w in writes if w[1] == "b" and w[0] < last_renewal + 15] == []
    # b slept until the expiry it computed instead of polling every retry period
    assert len(leases.gets) - gets_before == 1


async def test_watching_standby_takes_a_released_lease_at_once():
    import asyncio

    leases, clock = WatchedLeases(), SteppedClock()
    a, b = elector("a", leases, clock), standby("b", leases, clock)
    assert await a.try_acquire_or_renew()
    a.is_leader = True
    task = asyncio.create_task(b.acquire())
    await clock.advance(1)
    assert not task.done()
    await a.release()
    await clock.advance(0)  # no time passes: the watch event wakes b
    assert task.done() and b.is_leader
    assert leases.lease["spec"]["holderIdentity"] == "b"


async def test_blind_standby_polls_and_also_tries_exactly_at_the_expiry_it_knows():
    import asyncio

    leases, clock = FakeLeases(), SteppedClock()  # no watch: polling
    a, b = elector("a", leases, clock), standby("b", leases, clock)
    assert await a.try_acquire_or_renew()
    task = asyncio.create_task(b.acquire())
    await clock.advance(0)
    acquired_at = None
    while not task.done():
        await clock.advance(0.05)
        acquired_at = clock.t
        assert clock.t < 1_800_000_000.0 + 30
    # observed at t0 (the leader never renewed): expiry is t0 + 15, never earlier
    assert 1_800_000_000.0 + 15 <= acquired_at <= 1_800_000_000.0 + 15 + 0.1


async def test_standby_never_writes_before_expiry_even_when_the_watch_lags():
    """A record first seen late (watch down, then a GET) counts from when it was seen."""
    leases, clock = FakeLeases(), Clock(START)
    a, b = elector("a", leases, clock), elector("b", leases, clock)
    assert await a.try_acquire_or_renew()
    clock.t += 10  # b was not looking while the leader renewed at t0 and died
    assert not await b.try_acquire_or_renew()
    assert b.until_expiry() == 15
    clock.t += 14.9
    assert not await b.try_acquire_or_renew()
    clock.t += 0.1
    assert await b.try_acquire_or_renew()


def test_leader_health_follows_renewals():
    leases, clock = FakeLeases(), Clock(START)
    a = elector("a", leases, clock)
    assert a.healthy() == (True, "")  # a standby is healthy
    a.is_leader, a.last_renew = True, clock.t
    clock.t += 14
    assert a.healthy()[0]
    clock.t += 2
    ok, why = a.healthy()
    assert not ok and "not renewed for 16.0s" in why
