"""One leader at a time: a leader stops writing before its lease can have expired.

A paused leader (SIGSTOP past its lease) is played with a fake clock that jumps while none of its
tasks run; a leader cut off from its Lease is played against the embedded cluster, with a
standby taking over, and the failover timed.
"""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest

from pyhpa.adapters.kube.client import KubeClient, load_config
from pyhpa.engine.config import ControllerConfig
from pyhpa.live.leader import (KubeLeaseClient, LeaderElectionConfig, LeaderElector, NotLeading,
                               fenced_client)
from pyhpa.live.loop import ControllerOptions, HPAController

from tests.builders import cpu_hpa, deployment
from .harness import wait_until
from .test_leader import FakeLeases, SteppedClock, elector
from .test_live import DEPLOY, HPAS, NS, SYNC, live  # noqa: F401  (fixture)

SCALE = "/apis/apps/v1/namespaces/default/deployments/web/scale"


class SentRequests:
    """Stands in for a client's HTTP pool: records what was sent (at `clock()`), answers `{}`."""

    def __init__(self, clock):
        self.clock = clock
        self.sent: list[tuple[float, str, str]] = []

    async def request(self, method, url, **_):
        self.sent.append((self.clock(), method, str(url)))
        return SimpleNamespace(status_code=200, content=b"{}")


def test_writes_pass_only_while_the_last_renewal_is_younger_than_the_renew_deadline():
    leases, clock = FakeLeases(), SteppedClock()
    a = elector("a", leases, clock)  # lease 15 s, renew deadline 10 s, retry 2 s
    http = SentRequests(clock)
    writes = fenced_client(KubeClient(http, qps=0), a.may_write)

    async def scenario():
        with pytest.raises(NotLeading):  # not leading yet
            await writes.put(SCALE, {})
        assert await a.try_acquire_or_renew()
        a.is_leader = True
        clock.t += 9.9
        await writes.put(SCALE, {})
        await writes.get("/api/v1/pods")
        clock.t += 0.2  # 10.1 s after the last renewal: no task ran in between (a pause)
        with pytest.raises(NotLeading, match="not leading"):
            await writes.put(SCALE, {})
        await writes.get("/api/v1/pods")  # reads still pass
        assert not a.is_leader  # noticing the deadline ended leadership

    asyncio.run(scenario())
    assert [(m, round(t - 1_800_000_000.0, 1)) for t, m, _ in http.sent] == [("PUT", 9.9), ("GET", 9.9), ("GET", 10.1)]


async def test_a_leader_resumed_after_a_pause_writes_nothing_once_another_took_over():
    leases, clock = FakeLeases(), SteppedClock()
    a, b = elector("a", leases, clock), elector("b", leases, clock)
    a.sleep = clock.sleep
    http = SentRequests(clock)
    writes = fenced_client(KubeClient(http, qps=0), a.may_write)
    refused = []

    async def lead():  # a worker writing every half second
        while True:
            await clock.sleep(0.5)
            try:
                await writes.put(SCALE, {"spec": {"replicas": 3}})
            except NotLeading:
                refused.append(clock.t)

    leading = asyncio.create_task(a.run(lead))
    await clock.advance(0)
    for _ in range(20):  # ten seconds of leading: renewals every 2 s, writes every 0.5 s
        await clock.advance(0.5)
    assert a.is_leader and len(http.sent) >= 19
    last_renewal = a.last_renew
    # SIGSTOP: none of a's tasks run from here. b sees the Lease stop changing and takes it
    # one lease duration later by its own clock.
    assert not await b.try_acquire_or_renew()
    clock.t += 15.1
    assert await b.try_acquire_or_renew()
    taken_over = clock.t
    clock.t += 5  # SIGCONT 20 s into the pause: every sleeper of a is due at once
    await clock.advance(0)
    for _ in range(4):
        await clock.advance(0.5)
    assert leading.done() and not a.is_leader
    assert max(t for t, _, _ in http.sent) <= last_renewal + 10  # nothing past the renew deadline
    assert all(t < taken_over for t, _, _ in http.sent)
    assert leases.lease["spec"]["holderIdentity"] == "b"  # a did not renew over b either
    assert len(refused) <= 1  # at most the one write that raced the renew loop, refused


async def test_a_renewal_hanging_past_the_deadline_is_abandoned():
    leases, clock = FakeLeases(), SteppedClock()
    a = elector("a", leases, clock)
    a.sleep = clock.sleep
    assert await a.try_acquire_or_renew()
    a.is_leader = True
    hung = asyncio.Event()

    async def hanging_get():
        hung.set()
        await asyncio.Event().wait()

    leases.get = hanging_get
    task = asyncio.create_task(a.renew_loop())
    await clock.advance(0)
    await clock.advance(2)  # the first renewal starts, and never answers
    assert hung.is_set() and not task.done()
    await clock.advance(7.9)
    assert not task.done() and a.is_leader
    await clock.advance(0.1)  # the renew deadline of the last renewal
    assert task.done() and not a.is_leader


# ---------------------------------------------------------------------------- against the embedded cluster


class Cuttable:
    """A Lease port whose requests hang once `cut` is set: the candidate is cut off from its Lease
    (a paused process, a partition), while its other requests still go through."""

    def __init__(self, inner):
        self.inner = inner
        self.cut = asyncio.Event()

    async def _gate(self):
        if self.cut.is_set():
            await asyncio.Event().wait()

    async def get(self):
        await self._gate()
        return await self.inner.get()

    async def create(self, lease):
        await self._gate()
        return await self.inner.create(lease)

    async def update(self, lease):
        await self._gate()
        return await self.inner.update(lease)

    def watch(self):
        return self.inner.watch()


class SentWrites:
    """Wraps a client's HTTP pool; records the wall-clock time of every write that left, but the
    election's own Lease writes."""

    def __init__(self, http, lease_name):
        self.http = http
        self.lease_name = lease_name
        self.times: list[float] = []

    async def request(self, method, url, **kwargs):
        if method != "GET" and not str(url).endswith(f"/leases/{self.lease_name}"):
            self.times.append(time.time())
        return await self.http.request(method, url, **kwargs)

    def __getattr__(self, name):
        return getattr(self.http, name)


@pytest.mark.slow
async def test_failover_from_a_leader_cut_off_from_its_lease_has_one_writer_at_a_time(live):
    lease_name, duration, deadline, retry = "pyhpa-test-leader", 2.0, 1.5, 0.3
    await live.client.post(DEPLOY, deployment("web", 1))
    await live.client.post(HPAS, cpu_hpa("web", "web", utilization=50))
    live.harness.metrics_down = True  # every reconcile records a Warning event: writes all the time
    candidates = {}
    for name in ("a", "b"):
        raw = KubeClient.from_config(load_config(live.kubeconfig), qps=0)
        raw.http = sent = SentWrites(raw.http, lease_name)
        port = Cuttable(KubeLeaseClient(raw, NS, lease_name))
        el = LeaderElector(LeaderElectionConfig(name, duration, deadline, retry), port)
        el.config.validate()
        ctl = HPAController(fenced_client(raw, el.may_write), ControllerConfig(sync_period=SYNC),
                            ControllerOptions(sync_period=SYNC, workers=2, identity=name, persist_state=False))
        candidates[name] = SimpleNamespace(raw=raw, sent=sent, port=port, elector=el, ctl=ctl, task=None)
    a, b = candidates["a"], candidates["b"]
    try:
        a.task = asyncio.create_task(a.elector.run(a.ctl.run))
        await wait_until(lambda: a.elector.is_leader, 10, what="a leads")
        b.task = asyncio.create_task(b.elector.run(b.ctl.run))
        await wait_until(lambda: len(a.sent.times) >= 3, 10, what="a writes (events)")
        a.port.cut.set()  # from now on a cannot renew
        cut_at = time.time()
        await wait_until(lambda: b.elector.is_leader, 10, interval=0.02, what="b takes over")
        taken_over = b.elector.last_renew  # b's clock when it decided to write the Lease
        a_last_renewal = a.elector.last_renew
        await wait_until(lambda: a.task.done(), 5, what="a stops")
        await wait_until(lambda: b.sent.times, 10, what="b writes")
        failover = taken_over - cut_at
        print(f"failover {failover:.2f}s after the leader was cut off (lease {duration}s, deadline {deadline}s)")
        assert a_last_renewal <= cut_at
        assert taken_over - a_last_renewal >= duration  # b never wrote before the lease expired
        assert failover <= duration + 1.0  # about one lease duration: b watched the Lease
        assert max(a.sent.times) <= a_last_renewal + deadline  # a's writes ended at its deadline...
        assert max(a.sent.times) < taken_over < min(b.sent.times)  # ...before b took over and wrote
        assert not a.elector.is_leader and b.elector.is_leader
    finally:
        for c in candidates.values():
            if c.task is not None:
                c.task.cancel()
                try:
                    await c.task
                except (asyncio.CancelledError, Exception):
                    pass
            await c.raw.close()
