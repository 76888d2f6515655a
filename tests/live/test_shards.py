"""`pyhpa run --shards N`: the hash, the fair share, and three replica processes sharing 60 HPAs
through a SIGKILL and a SIGSTOP (docs/controller.md#sharding)."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import statistics
import time
from collections import defaultdict
from itertools import dropwhile
from pathlib import Path

import pytest

from pyhpa.offline.live_snapshot import read_controller_config
from pyhpa.live.shards import fair_share, member_lease_name, shard_lease_name, shard_of
from tests.builders import cpu_hpa, deployment
from .harness import wait_until
from .test_live import DEPLOY, HPAS, NS, live  # noqa: F401  (fixture)
from .test_process import spawn, stop


def test_the_shard_of_an_hpa_is_the_first_8_bytes_of_sha256_mod_n():
    # fixed values: any process, machine or Python version must agree on them
    assert shard_of("default/web", 1) == 0
    assert shard_of("default/web", 1000) == 284  # sha256(b"default/web")[:8] big-endian % 1000
    counts = [0] * 6
    for i in range(600):
        counts[shard_of(f"ns-{i % 7}/hpa-{i}", 6)] += 1
    assert min(counts) > 60  # spread evenly enough to share


def test_names_and_fair_share():
    assert shard_lease_name("pyhpa-horizontal-pod-autoscaler", 2, 6) == "pyhpa-horizontal-pod-autoscaler-shard-2-of-6"
    member = member_lease_name("x", "host_1b2c")
    assert re.fullmatch(r"x-member-[0-9a-f]{16}", member) and member != member_lease_name("x", "host_1b2d")
    assert [fair_share(6, n) for n in (1, 2, 3, 4, 6, 7)] == [6, 3, 2, 2, 1, 1]


@pytest.mark.parametrize("args,message", [
    (["--shards", "0"], "--shards: must be 1 or more, got 0"),
    (["--shards", "3", "--leader-elect=false"], "--shards: sharded replicas own their shards through Leases"),
    (["--shards", "3", "--leader-elect-lease-duration=5s"], "--leader-elect-lease-duration must be greater than"),
])
def test_bad_shard_flags_are_refused_before_anything_starts(args, message):
    from typer.testing import CliRunner

    from pyhpa.cli import app

    result = CliRunner().invoke(app, ["run", "--master", "http://127.0.0.1:1", *args])
    assert result.exit_code == 2
    assert message in result.output


class Recorder:
    """The controller's side, as calls: (event, shard)."""

    def __init__(self):
        self.calls = []

    async def acquired(self, shard):
        self.calls.append(("acquired", shard))

    def started(self, shard):
        self.calls.append(("started", shard))

    async def releasing(self, shard):
        self.calls.append(("releasing", shard))

    def lost(self, shard):
        self.calls.append(("lost", shard))


def coordinator(live, identity, shards=4):
    from pyhpa.live.leader import LeaderElectionConfig
    from pyhpa.live.metrics import ControllerMetrics
    from pyhpa.live.shards import ShardCoordinator

    cfg = LeaderElectionConfig(identity, lease_duration=3.0, renew_deadline=2.0, retry_period=0.3)
    c = ShardCoordinator(live.client, cfg, shards, NS, "test-set", {}, ControllerMetrics())
    c.work = Recorder()
    return c


def fenced(c, key):
    from pyhpa.adapters.kube.write_scope import WRITING_FOR

    token = WRITING_FOR.set(key)
    try:
        return c.may_write()
    finally:
        WRITING_FOR.reset(token)


@pytest.mark.slow
async def test_replicas_join_and_leave_with_graceful_handovers(live):
    a, b = coordinator(live, "a"), coordinator(live, "b")
    run_a = asyncio.create_task(a.run())
    run_b = None
    try:
        await wait_until(lambda: len(a.held) == 4, 10, what="a alone takes every shard")
        assert a.metrics.shards_owned._value.get() == 4
        keys = [f"{NS}/hpa-{i}" for i in range(40)]
        assert all(fenced(a, k) for k in keys) and all(a.reconciles(k) for k in keys)
        run_b = asyncio.create_task(b.run())
        await wait_until(lambda: len(a.held) == 2 and len(b.held) == 2, 10, what="a gives b its share")
        assert a.held.isdisjoint(b.held)
        given = sorted(b.held)
        # a stopped, drained and flushed before releasing; b loaded before reconciling
        for i in given:
            assert [e for e, j in a.work.calls if j == i] == ["acquired", "started", "releasing", "lost"]
            assert [e for e, j in b.work.calls if j == i] == ["acquired", "started"]
        for k in keys:  # one writer per HPA
            assert fenced(a, k) != fenced(b, k)
            assert fenced(a, k) == (a.shard(k) in a.held)
        assert fenced(a, None) and fenced(b, None)  # a write for no single HPA: holds some shard
        assert a.metrics.shard_handovers.labels("released")._value.get() == 2
        run_a.cancel()  # a leaves: releases everything; b takes it well before any expiry
        left = time.monotonic()
        await asyncio.gather(run_a, return_exceptions=True)
        await wait_until(lambda: len(b.held) == 4, 2.5, interval=0.02, what="b takes a's released shards")
        print(f"handover on leaving {time.monotonic() - left:.2f}s (lease 3 s)")
        assert not a.held and not any(fenced(a, k) for k in keys)
    finally:
        for t in (run_a, run_b):
            if t is not None:
                t.cancel()
                await asyncio.gather(t, return_exceptions=True)


# ---------------------------------------------------------------------- three processes

SHARDS = 6
HPAS_N = 60
PERIOD = 1.0
LEASE = 3.0
WINDOW = 14.0  # downscale stabilization: long enough to span a takeover
REPLICAS = ("ctl-a", "ctl-b", "ctl-c")
SET = "pyhpa-horizontal-pod-autoscaler"


class Audit:
    """Wraps the embedded API server's ASGI app: every write as it arrives (time, writer, path,
    status) and every successful write of a shard Lease with the holder it wrote."""

    def __init__(self, app):
        self.app = app
        self.writes: list[tuple[float, str, str, int]] = []
        self.leases: dict[int, list[tuple[float, str]]] = defaultdict(list)  # shard -> (time, holder)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] == "GET":
            return await self.app(scope, receive, send)
        arrived = time.time()
        body = bytearray()
        status = [0]

        async def recv():
            msg = await receive()
            body.extend(msg.get("body", b""))
            return msg

        async def snd(msg):
            if msg["type"] == "http.response.start":
                status[0] = msg["status"]
            await send(msg)

        await self.app(scope, recv, snd)
        agent = dict(scope["headers"]).get(b"user-agent", b"").decode().split("/")[0]
        path = scope["path"]
        self.writes.append((arrived, agent, path, status[0]))
        if "/leases" in path and 200 <= status[0] < 300:  # a PUT to the Lease, or its creation
            lease = json.loads(bytes(body))
            m = re.fullmatch(rf"{SET}-shard-(\d+)-of-{SHARDS}", (lease.get("metadata") or {}).get("name", ""))
            if m:
                self.leases[int(m.group(1))].append((arrived, (lease.get("spec") or {}).get("holderIdentity") or ""))

    def holder_at(self, shard: int, t: float) -> str:
        """The holder of the shard's last successful Lease write before `t`."""
        held = ""
        for at, holder in self.leases[shard]:
            if at > t:
                break
            held = holder
        return held

    def holders(self) -> dict[int, str]:
        return {i: (self.leases[i][-1][1] if self.leases[i] else "") for i in range(SHARDS)}

    def hpa_writes(self):
        """(time, writer, HPA key) of the controllers' writes for one HPA: its status, its scale."""
        for at, agent, path, status in self.writes:
            m = re.search(r"/namespaces/([^/]+)/(horizontalpodautoscalers|deployments)/([^/]+)/(status|scale)$", path)
            if m and agent.startswith("pyhpa-ctl"):
                yield at, agent.removeprefix("pyhpa-"), f"{m.group(1)}/{m.group(3)}", status


def reconciles(log: Path) -> list[tuple[float, str]]:
    from datetime import datetime

    out = []
    for line in log.read_text().splitlines():
        if line.startswith("{") and '"reconciled"' in line:
            rec = json.loads(line)
            out.append((datetime.fromisoformat(rec["ts"]).timestamp(), rec["hpa"]))
    return out


async def replicas_of(live, name):
    return (await live.client.get(f"{DEPLOY}/{name}"))["spec"]["replicas"]


@pytest.mark.slow
async def test_three_sharded_replicas_survive_a_sigkill_and_a_sigstop(live, tmp_path):
    audit = Audit(live.cluster._uvicorn.config.loaded_app)
    live.cluster._uvicorn.config.loaded_app = audit  # connections made from now on go through it
    names = [f"w{i}" for i in range(HPAS_N)]
    for name in names:
        await live.client.post(DEPLOY, deployment(name, 1))
        await live.client.post(HPAS, cpu_hpa(name, name, utilization=50))
        live.harness.total_cpu_milli[(NS, name)] = 50  # at target: steady
    flags = ("--shards", str(SHARDS), "--leader-elect-lease-duration", "3s", "--leader-elect-renew-deadline", "2s",
             "--leader-elect-retry-period", "500ms", "--leader-elect-resource-namespace", NS,
             "--horizontal-pod-autoscaler-sync-period", "1s", "--v=4", "--kube-api-qps", "200",
             "--kube-api-burst", "400", "--horizontal-pod-autoscaler-downscale-stabilization", f"{WINDOW:g}s")
    logs = {n: tmp_path / f"{n}.log" for n in REPLICAS}
    procs = {n: spawn(live.kubeconfig, *flags, "--field-manager", f"pyhpa-{n}", name=n, log=logs[n])
             for n in REPLICAS}
    try:
        async def balanced():
            held = list(audit.holders().values())
            return all(held.count(n) == SHARDS // len(REPLICAS) for n in REPLICAS)

        await wait_until(balanced, 60, what="two shards per replica")
        # the hot HPAs: one per shard held by ctl-a (to be SIGKILLed): scale up to 4
        a_shards = [i for i, h in audit.holders().items() if h == "ctl-a"]
        hot = [next(n for n in names if shard_of(f"{NS}/{n}", SHARDS) == i) for i in a_shards]
        for name in hot:
            live.harness.total_cpu_milli[(NS, name)] = 200

        async def all_at(n):
            return all([await replicas_of(live, h) == n for h in hot])

        await wait_until(lambda: all_at(4), 30, what="the hot HPAs scale to 4")
        for name in hot:
            live.harness.total_cpu_milli[(NS, name)] = 20  # proposal 1; the window holds 4
        dropped = time.time()
        await asyncio.sleep(2.5)  # the low recommendations are in the memory, and flushed

        # SIGKILL ctl-a: its shards go to the others within a lease duration
        procs["ctl-a"].send_signal(signal.SIGKILL)
        killed = time.time()
        await wait_until(lambda: _none_held_by(audit, "ctl-a"), 15, interval=0.05, what="ctl-a's shards taken")
        took_kill = {i: _taken(audit, i, "ctl-a", killed) - killed for i in a_shards}
        assert all([await replicas_of(live, h) == 4 for h in hot])  # the new owners remembered
        await asyncio.sleep(2 * PERIOD)  # they reconcile what they took before the next failure

        # SIGSTOP ctl-b: ctl-c takes everything; on SIGCONT ctl-b writes nothing for what it lost
        b_shards = [i for i, h in audit.holders().items() if h == "ctl-b"]
        procs["ctl-b"].send_signal(signal.SIGSTOP)
        stopped = time.time()
        await wait_until(lambda: _none_held_by(audit, "ctl-b"), 15, interval=0.05, what="ctl-b's shards taken")
        took_stop = {i: _taken(audit, i, "ctl-b", stopped) - stopped for i in b_shards}
        await asyncio.sleep(1.5)
        procs["ctl-b"].send_signal(signal.SIGCONT)
        resumed = time.time()
        await wait_until(lambda: all_at(1), WINDOW + 10, what="the hot HPAs scale down after the window")
        scaled_down = time.time() - dropped
        await wait_until(lambda: _held_by(audit, "ctl-b", 3), 20, what="ctl-b rejoins with its share")
        await asyncio.sleep(2 * PERIOD)
        ended = time.time()
        published, why = await read_controller_config(live.client, f"{NS}/{SET}")  # what `pyhpa explain` reads
        assert published is not None, why
        assert published["identity"] in ("ctl-b", "ctl-c") and published["shards"] == SHARDS
        # SIGTERM: ctl-c leaves cleanly, releasing its shards (empty holder) for ctl-b to take
        c_shards = [i for i, h in audit.holders().items() if h == "ctl-c"]
        procs["ctl-c"].send_signal(signal.SIGTERM)
        left = time.time()
        await wait_until(lambda: _held_by(audit, "ctl-b", SHARDS), 10, interval=0.05, what="ctl-b takes all")
        handover = time.time() - left
        await wait_until(lambda: procs["ctl-c"].poll() is not None, 15, what="ctl-c exits")
        assert procs["ctl-c"].returncode == 0
    finally:
        for p in procs.values():
            p.send_signal(signal.SIGCONT)
            stop(p)

    # never two writers: every write for an HPA arrived while its writer held the HPA's shard
    writes = list(audit.hpa_writes())
    assert writes, "no write was observed"
    foreign = [(round(t - resumed, 2), w, k) for t, w, k, status in writes
               if 200 <= status < 300 and audit.holder_at(shard_of(k, SHARDS), t) != w]
    assert foreign == [], foreign
    late_b = [(round(t - resumed, 2), k) for t, w, k, _ in writes if w == "ctl-b" and resumed <= t
              and audit.holder_at(shard_of(k, SHARDS), t) != "ctl-b"]
    assert late_b == [], late_b  # the fence: once resumed, nothing for the shards it lost

    # stabilization memory kept across the move: held 4 for the whole window, not reset by it
    # (the window counts from the last high recommendation: up to a period before the drop; a
    # new owner without the memory would scale down right after its takeover, ~6 s after it)
    assert scaled_down >= WINDOW - PERIOD - 0.5, f"scaled down {scaled_down:.1f}s after the drop"
    assert scaled_down < WINDOW + 6, f"scaled down {scaled_down:.1f}s after the drop"

    # every HPA synced every period, except across a takeover (gaps per HPA, all replicas' logs)
    synced: dict[str, list[float]] = defaultdict(list)
    for n in REPLICAS:
        for t, key in reconciles(logs[n]):
            if killed - 5 <= t <= ended:
                synced[key].append(t)
    assert len(synced) == HPAS_N
    moved = set(a_shards) | set(b_shards)
    steady_gaps, takeover_gaps = [], []
    for key, times in synced.items():
        times.sort()
        gaps = [b - a for a, b in zip(times, times[1:])]
        (takeover_gaps if shard_of(key, SHARDS) in moved else steady_gaps).append(max(gaps))
    print(f"takeover after SIGKILL: {_fmt(took_kill)}; after SIGSTOP: {_fmt(took_stop)} (lease {LEASE:g}s)")
    print(f"largest sync gap per HPA: steady shards max {max(steady_gaps):.2f}s median "
          f"{statistics.median(steady_gaps):.2f}s; moved shards max {max(takeover_gaps):.2f}s "
          f"median {statistics.median(takeover_gaps):.2f}s (period {PERIOD:g}s)")
    print(f"scaled down {scaled_down:.1f}s after the drop (window {WINDOW:g}s); "
          f"SIGTERM handover of 3 shards {handover:.2f}s")
    for i in c_shards:  # released by ctl-c, then taken by ctl-b: not left to expire (a renewal
        # ctl-c had in flight when the signal came may land first)
        after = list(dropwhile(lambda h: h == "ctl-c", [h for t, h in audit.leases[i] if t >= left]))
        assert after[:2] == ["", "ctl-b"], audit.leases[i][-4:]
    assert handover <= 2 * LEASE
    assert max(took_kill.values()) <= 2 * LEASE and max(took_stop.values()) <= 2 * LEASE
    # a takeover: up to a lease after the last renewal, plus one period; the rest allows for
    # three Python processes and the cluster on a loaded 2-core machine
    assert max(takeover_gaps) <= LEASE + 2 * PERIOD + 3.0
    # rebalancing when ctl-b rejoins moves shards gracefully (release, then take)
    assert max(steady_gaps) <= 3 * PERIOD + 2.0


async def _none_held_by(audit, name):
    return name not in audit.holders().values() and "" not in audit.holders().values()


async def _held_by(audit, name, n):
    return list(audit.holders().values()).count(name) == n


def _taken(audit, shard, old, since):
    return next(t for t, h in audit.leases[shard] if t >= since and h not in (old, ""))


def _fmt(took):
    return ", ".join(f"shard {i} {s:.2f}s" for i, s in sorted(took.items()))
