"""Shutdowns that always finish (issue 28): the one cancel-and-wait helper, robust to Python
3.11's ``wait_for`` handing a cancelled caller the awaited call's error; a second signal that
exits at once; and SIGTERM at random moments while the API server dies."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pyhpa.adapters.kube.client import ApiError
from pyhpa.adapters.tasks import StopSignals, cancel_and_wait
from pyhpa.live.connectivity import ApiServerStatus, watch_connection

ROOT = Path(__file__).resolve().parents[2]


class GatedClient:
    """A client whose ``/healthz`` probe waits on a future the test completes."""

    def __init__(self) -> None:
        self.gate: asyncio.Future[None] | None = None
        self.probes = 0

    async def request(self, method: str, path: str) -> None:
        self.probes += 1
        self.gate = asyncio.get_running_loop().create_future()
        await self.gate


async def probing(client: GatedClient, probes: int) -> None:
    while client.probes < probes or client.gate is None or client.gate.done():
        await asyncio.sleep(0)


def fail_and_cancel(client: GatedClient, task: asyncio.Task) -> None:
    """The race, forced: the probe fails, then (same loop step) the prober is cancelled; the
    probe's task runs first, so ``wait_for`` sees it done when the cancel reaches it."""
    assert client.gate is not None
    client.gate.set_exception(ApiError(0, "", "connection refused"))
    task.cancel()


async def test_the_race_really_swallows_a_cancel_in_a_naive_retry_loop():
    """What used to hang shutdown: the error comes out instead of CancelledError, the loop
    goes on; cancel_and_wait still ends it by cancelling it again."""
    client = GatedClient()
    swallowed = []

    async def naive() -> None:
        while True:
            try:
                await asyncio.wait_for(client.request("GET", "/healthz"), 5)
            except ApiError:
                swallowed.append(asyncio.current_task().cancelling())
            await asyncio.sleep(0.01)

    task = asyncio.create_task(naive())
    await probing(client, 1)
    fail_and_cancel(client, task)
    await probing(client, 2)  # it went on probing after the cancel
    assert swallowed == [1] and not task.done()
    assert await cancel_and_wait(task, timeout=10)
    assert task.cancelled()


async def test_watch_connection_stops_when_a_probe_fails_as_it_is_cancelled():
    client = GatedClient()
    status = ApiServerStatus("https://127.0.0.1:1", retry_period=0.01)
    status.failed("down")
    task = asyncio.create_task(watch_connection(client, status))  # type: ignore[arg-type]
    await probing(client, 1)
    fail_and_cancel(client, task)
    done, _ = await asyncio.wait({task}, timeout=5)
    assert task in done and task.cancelled()
    assert client.probes == 1  # no probe after the cancel


async def test_cancel_and_wait_consumes_errors_and_bounds_the_wait():
    async def fails() -> None:
        raise RuntimeError("boom")

    release = asyncio.Event()

    async def stubborn() -> None:
        while not release.is_set():
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                pass

    failing = asyncio.create_task(fails())
    await asyncio.sleep(0)
    assert await cancel_and_wait(failing, None)
    endless = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    assert not await cancel_and_wait(endless, timeout=0.3)  # gives up, says so
    assert not endless.done()
    release.set()
    assert await cancel_and_wait(endless, timeout=10)


def test_a_second_signal_exits_at_once():
    stops, exits = [], []
    signals = StopSignals(lambda: stops.append(1), exit=exits.append)
    signals.on_signal(signal.SIGTERM)
    assert stops == [1] and exits == []
    signals.on_signal(signal.SIGINT)
    assert stops == [1] and exits == [128 + signal.SIGINT]


@pytest.mark.slow
def test_sigterm_at_random_moments_while_the_api_server_dies():
    """10 trials here (bench/shutdown_signals.py --runs 100 for the full check)."""
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "shutdown_signals.py"),
                          "--runs", "10", "--seed", "28"], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "10/10 trials within" in out.stdout, out.stdout


async def test_after_the_first_signal_a_plain_handler_takes_over():
    """The second signal must not wait for the loop (which a cleanup may be blocking)."""
    before = signal.getsignal(signal.SIGTERM)
    stops, exits = [], []
    signals = StopSignals(lambda: stops.append(1), exit=exits.append).install()
    try:
        signals.on_signal(signal.SIGTERM)
        handler = signal.getsignal(signal.SIGTERM)
        assert callable(handler) and handler is not before
        handler(signal.SIGTERM, None)  # what the interpreter calls, loop or no loop
        assert stops == [1] and exits == [128 + signal.SIGTERM]
    finally:
        signals.remove()
    assert signal.getsignal(signal.SIGTERM) == before
