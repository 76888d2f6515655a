"""Lease leader election with client-go semantics, against an in-memory Lease and a fake clock."""

import copy

import pytest

from pyhpa.controller.leader import LeaderElectionConfig, LeaderElector, LeaseConflict


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


class Clock:
    def __init__(self):
        self.t = 1_800_000_000.0

    def __call__(self):
        return self.t


def elector(name, leases, clock):
    cfg = LeaderElectionConfig(identity=name, lease_duration=15, renew_deadline=10, retry_period=2)
    cfg.validate()
    return LeaderElector(cfg, leases, clock=clock)


async def test_first_candidate_acquires_second_waits_until_expiry_on_its_own_clock():
    leases, clock = FakeLeases(), Clock()
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
    leases, clock = FakeLeases(), Clock()
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
    leases, clock = FakeLeases(), Clock()
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
    leases, clock = FakeLeases(), Clock()
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
    leases, clock = FakeLeases(), Clock()
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
