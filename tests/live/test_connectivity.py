"""An unreachable API server, told honestly: one log line naming the address and the error,
retries from the retry period with a backoff, `/readyz` not ready, a non-zero exit on giving up."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import httpx2
import pytest

from pyhpa.adapters.kube.client import ApiError
from pyhpa.live.connectivity import MAX_RETRY_DELAY, ApiServerStatus, wait_for_api_server

from .test_leader import SteppedClock, elector

ROOT = Path(__file__).resolve().parents[2]
ADDRESS = "https://127.0.0.1:1"  # a label in messages only: nothing connects to it


def connect_error(path: str) -> ApiError:
    """What the client raises when nothing listens (an ApiError caused by the transport error)."""
    try:
        try:
            raise httpx2.ConnectError("All connection attempts failed")
        except httpx2.ConnectError as exc:
            raise ApiError(0, "ConnectionError", f"GET {path}: {exc!r}", path) from exc
    except ApiError as err:
        return err


class Unreachable:
    """A client whose requests fail `failures` times with a connection error, then answer `ok`."""

    def __init__(self, failures: float = float("inf")) -> None:
        self.failures = failures
        self.calls = 0

    async def request(self, method, path, **_):
        self.calls += 1
        if self.calls <= self.failures:
            raise connect_error(path)
        return b"ok"


@pytest.fixture
def records():
    """Log records of `pyhpa.*`, whatever an earlier `setup_logging` in this process did."""
    got: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record):
            got.append(record)

    logger = logging.getLogger("pyhpa")
    handler, level = Keep(level=logging.INFO), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield got
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def fake_time():
    now = [0.0]
    slept: list[float] = []

    async def sleep(d):
        slept.append(d)
        now[0] += d

    return (lambda: now[0]), sleep, slept


async def test_one_line_per_outage_backoff_from_the_retry_period_and_readiness(records):
    clock, sleep, slept = fake_time()
    status = ApiServerStatus(ADDRESS, retry_period=2.0)
    assert status.ready() == (False, f"waiting for the API server at {ADDRESS}")
    client = Unreachable(failures=7)
    assert await wait_for_api_server(client, status, None, sleep=sleep, clock=clock)
    assert client.calls == 8
    # 2, 4, 8, 16, then the 30 s ceiling; each up to 20 % more (jitter)
    for delay, base in zip(slept, [2, 4, 8, 16, 30, 30, 30]):
        assert base <= delay <= base * 1.2
    errors = [r.getMessage() for r in records if r.levelno >= logging.WARNING]
    assert errors == [f"cannot reach the API server at {ADDRESS}: ConnectError: All connection attempts failed "
                      f"(retrying every 2s, backing off to {MAX_RETRY_DELAY:g}s)"]
    assert [r.getMessage() for r in records if r.levelno == logging.INFO] == [
        f"the API server at {ADDRESS} answers again"]
    assert status.ready() == (True, "") and status.outages == 1


async def test_readyz_reason_names_the_address_and_the_error():
    status = ApiServerStatus(ADDRESS)
    status.failed("ConnectError: All connection attempts failed")
    assert status.ready() == (False, f"cannot reach the API server at {ADDRESS}: "
                                     "ConnectError: All connection attempts failed")


async def test_gives_up_at_the_bound_after_a_last_try():
    clock, sleep, slept = fake_time()
    client = Unreachable()
    status = ApiServerStatus(ADDRESS, retry_period=2.0)
    assert not await wait_for_api_server(client, status, give_up_after=10.0, sleep=sleep, clock=clock)
    assert clock() == pytest.approx(10.0)  # the last wait is cut to the bound, and tried once more
    assert client.calls == len(slept) + 1 == 4
    assert status.reachable is False


async def test_a_candidate_that_cannot_reach_the_api_server_backs_off_and_says_so_once(records):
    import asyncio

    from .test_leader import FakeLeases

    leases, clock = FakeLeases(), SteppedClock()
    a = elector("a", leases, clock)
    a.sleep = clock.sleep
    a.api_server = ApiServerStatus(ADDRESS, retry_period=2.0)
    calls = []
    real_get = leases.get

    async def get():
        calls.append(clock.t)
        await asyncio.sleep(0)  # a real request yields to the loop
        if clock.t < 1_800_000_000.0 + 120:
            raise connect_error("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x")
        return await real_get()

    leases.get = get
    task = asyncio.create_task(a.acquire())
    for _ in range(2000):  # up to 200 s in 0.1 s steps (the retry after 120 s comes within 36 s)
        await clock.advance(0.1)
        if task.done():
            break
    assert task.done() and a.is_leader  # acquired once the API server answered
    failures = [t for t in calls if t < 1_800_000_000.0 + 120]
    assert 6 <= len(failures) <= 8, failures  # 2, 4, 8, 16, 30, 30, 30 s apart: not a tight loop
    warnings = [r.getMessage() for r in records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith(f"cannot reach the API server at {ADDRESS}: ConnectError")
    assert a.api_server.ready() == (True, "")


# ---------------------------------------------------------------------------- `pyhpa run` as a process


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "pyhpa.cli", "run", *args, "--logging-format", "json"],
        env={**os.environ, "PYTHONPATH": str(ROOT), "POD_NAME": "ctl"}, cwd=str(ROOT),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def readyz(port: int) -> tuple[int, str] | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError:
        return None


def log_lines(out: bytes) -> list[dict]:
    return [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]


@pytest.mark.slow
def test_run_against_an_unreachable_api_server_says_so_once_is_not_ready_and_fails_at_the_end():
    api, health = free_port(), free_port()  # nothing listens on `api`
    address = f"http://127.0.0.1:{api}"
    proc = run("--master", address, "--duration", "5s", "--metrics-bind-address", f"127.0.0.1:{health}")
    try:
        deadline = time.monotonic() + 20
        answer = None
        while time.monotonic() < deadline and proc.poll() is None:
            answer = readyz(health)
            if answer is not None and "cannot reach" in answer[1]:
                break
            time.sleep(0.1)
        assert answer is not None and answer[0] == 503, answer
        assert answer[1].startswith(f"not ready: cannot reach the API server at {address}: ConnectError"), answer
        out = proc.communicate(timeout=30)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, out
    lines = log_lines(out)
    unreachable = [ln for ln in lines if ln["msg"].startswith("cannot reach the API server")]
    assert len(unreachable) == 1 and address in unreachable[0]["msg"], out
    assert not [ln for ln in lines if ln["logger"] == "pyhpa.leader"], out  # no lease warnings
    assert lines[-2]["msg"].startswith(f"giving up at the end of --duration: cannot reach the API server at {address}")
    assert lines[-1]["msg"] == "stopped"


@pytest.mark.slow
def test_run_without_leader_election_gives_up_after_ten_seconds():
    address = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    proc = run("--master", address, "--leader-elect=false", "--metrics-bind-address", "0")
    try:
        out = proc.communicate(timeout=40)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    took = time.monotonic() - started
    assert proc.returncode == 1, out
    assert 10 <= took < 25, took
    lines = log_lines(out)
    assert len([ln for ln in lines if ln["msg"].startswith("cannot reach the API server")]) == 1, out
    assert lines[-2]["msg"].startswith(f"giving up: the API server at {address} did not answer within 10s")


async def test_a_connection_lost_mid_run_is_said_so_and_waiters_resume_when_it_answers(records):
    import asyncio

    status = ApiServerStatus(ADDRESS, retry_period=2.0)
    status.connection_answered()  # running: requests answer
    await asyncio.wait_for(status.wait_answering(), 1)  # no wait while it answers
    status.connection_failed(connect_error("/api/v1/pods"))
    status.connection_failed(connect_error("/api/v1/pods"))  # same outage: no second line
    waiter = asyncio.create_task(status.wait_answering())
    await asyncio.sleep(0.01)
    assert not waiter.done() and status.ready()[0] is False
    status.connection_answered()
    await asyncio.wait_for(waiter, 1)
    warnings = [r.getMessage() for r in records if r.levelno >= logging.WARNING]
    assert warnings == [f"lost the connection to the API server at {ADDRESS}: ConnectError: All connection attempts "
                        f"failed (retrying every 2s, backing off to {MAX_RETRY_DELAY:g}s)"]
    assert status.ready() == (True, "") and status.outages == 1
