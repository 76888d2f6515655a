"""`pyhpa run` moves the heap its caches' sync built out of the cyclic collector's reach, with a
young generation larger than a reconcile's burst, and leaves the process's collector as it found
it when it stops (it may run in-process: tests, `pyhpa demo`)."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

from pyhpa.cluster.embedded import EmbeddedCluster
from pyhpa.engine.config import ControllerConfig
from pyhpa.live.loop import ControllerOptions
from pyhpa.adapters.heap import YOUNG_GENERATION
from pyhpa.live.runner import RunOptions, run_controller


async def test_the_synced_heap_is_frozen_while_running_and_released_after(tmp_path: Path) -> None:
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    seen: list[tuple[int, int]] = []
    async with EmbeddedCluster(tmp_path, port=0, simulate=False) as cluster:
        opts = RunOptions(kubeconfig=str(cluster.kubeconfig_path), leader_elect=False, metrics_bind_address="0",
                          duration=3.0, controller=ControllerOptions(sync_period=1.0, persist_state=False))
        stop = asyncio.Event()

        async def watch() -> None:
            while not stop.is_set():
                seen.append((gc.get_freeze_count(), gc.get_threshold()[0]))
                await asyncio.sleep(0.1)

        watcher = asyncio.create_task(watch())
        try:
            assert await run_controller(opts, ControllerConfig(sync_period=1.0), stop) == 0
        finally:
            stop.set()
            await watcher
    assert max(frozen for frozen, _ in seen) > 0  # the synced heap was frozen while it ran
    assert max(young for _, young in seen) == max(before[0], YOUNG_GENERATION)
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before
