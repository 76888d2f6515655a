"""Work-queue semantics of upstream's HPA work queue (rate_limiters.go), driven by a fake clock."""

import asyncio

import pytest

from pyhpa.live.queue import ShutDown, WorkQueue
from tests.clock import Clock


def test_rate_limited_add_waits_exactly_one_sync_period():
    clock = Clock(1000.0)
    q = WorkQueue(15.0, clock)
    q.add_rate_limited("ns/a")
    assert q.try_get() is None
    clock.t += 14.9
    assert q.try_get() is None
    clock.t += 0.1
    assert q.try_get() == "ns/a"


def test_earlier_ready_time_wins_and_no_duplicates():
    clock = Clock(1000.0)
    q = WorkQueue(15.0, clock)
    q.add_after("k", 10)
    q.add_after("k", 5)
    q.add_after("k", 20)
    clock.t += 5
    assert q.try_get() == "k"
    q.done("k")
    clock.t += 100
    assert q.try_get() is None  # the 10 s and 20 s entries were superseded


def test_queued_key_not_queued_twice():
    q = WorkQueue(15.0, Clock(1000.0))
    q.add("k")
    q.add("k")
    q.add_after("k", 3)
    assert len(q) == 1
    assert q.try_get() == "k"
    assert q.try_get() is None


def test_key_in_processing_is_not_handed_out_twice_but_runs_again_after_done():
    q = WorkQueue(15.0, Clock(1000.0))
    q.add("k")
    assert q.try_get() == "k"
    q.add("k")  # re-added while processing
    assert q.try_get() is None
    q.done("k")
    assert q.try_get() == "k"
    q.done("k")
    assert q.try_get() is None


def test_order_is_fifo_across_keys():
    q = WorkQueue(15.0, Clock(1000.0))
    for k in "abc":
        q.add(k)
    assert [q.try_get() for _ in range(3)] == ["a", "b", "c"]


async def test_async_get_wakes_on_add_and_on_shutdown():
    q = WorkQueue(0.05)
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0.01)
    q.add_rate_limited("x")
    assert await asyncio.wait_for(getter, 2) == "x"
    getter2 = asyncio.create_task(q.get())
    await asyncio.sleep(0.01)
    q.shut_down()
    with pytest.raises(ShutDown):
        await asyncio.wait_for(getter2, 2)


async def test_many_workers_with_many_timeouts_stay_healthy():
    """Workers waiting on short deadlines while keys keep arriving: nothing crashes, nothing is lost."""
    q = WorkQueue(0.001)
    seen = []

    async def worker():
        while True:
            try:
                key = await q.get()
            except ShutDown:
                return
            seen.append(key)
            await asyncio.sleep(0)
            q.done(key)

    workers = [asyncio.create_task(worker()) for _ in range(5)]
    for i in range(300):
        q.add_after(f"k{i % 50}", 0.001 * (i % 7))
        if i % 10 == 0:
            await asyncio.sleep(0.001)
    await asyncio.sleep(0.2)
    q.shut_down()
    await asyncio.wait_for(asyncio.gather(*workers), 2)
    assert set(seen) == {f"k{i}" for i in range(50)}
    assert q.waiting == 0
