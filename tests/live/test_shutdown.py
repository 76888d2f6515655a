"""Clean shutdown in every state, above all before the caches have synced: nothing left running,
no "exception was never retrieved", no log line after `stopped`."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pyhpa.adapters.kube.client import KubeClient, load_config
from pyhpa.live.loop import ControllerOptions, HPAController
from pyhpa.engine.config import ControllerConfig

from .harness import SilentServer, wait_until

ROOT = Path(__file__).resolve().parents[2]


async def test_cancelling_a_controller_whose_caches_are_syncing_stops_everything():
    loop = asyncio.get_running_loop()
    problems: list[dict] = []
    loop.set_exception_handler(lambda _loop, context: problems.append(context))
    with SilentServer() as server:
        client = KubeClient.from_config(load_config(server=server.url), qps=0)
        ctl = HPAController(client, ControllerConfig(), ControllerOptions(persist_state=False))
        before = asyncio.all_tasks()
        task = asyncio.create_task(ctl.run())
        await wait_until(lambda: ctl.starting and ctl.pod_informer._task is not None, 5, what="syncing")
        ok, why = ctl.ready()
        assert not ok and why == "caches syncing: hpas listing (0 so far), pods listing (0 so far)"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert ctl.hpa_informer._task is None and ctl.pod_informer._task is None and ctl.events._task is None
        assert not ctl.started and not ctl.starting
        await client.close()
        leftover = [t for t in asyncio.all_tasks() - before if t is not asyncio.current_task() and not t.done()]
        assert leftover == []
    gc.collect()
    await asyncio.sleep(0)
    assert problems == []


@pytest.mark.slow
@pytest.mark.parametrize("leader_elect", ["false", "true"])
async def test_sigterm_before_the_caches_sync_exits_cleanly(tmp_path, leader_elect):
    with SilentServer() as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pyhpa.cli", "run", "--master", server.url, f"--leader-elect={leader_elect}",
             "--metrics-bind-address", "0", "--logging-format", "json", "--v=4"],
            env={**os.environ, "PYTHONPATH": str(ROOT), "POD_NAME": "ctl"}, cwd=str(ROOT),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            # both states hold a request the server never answers: the lease GET or the cache lists
            await wait_until(lambda: len(server.conns) >= 1, 20, what="the controller connected")
            await asyncio.sleep(0.5)
            assert proc.poll() is None
            proc.send_signal(signal.SIGTERM)
            await wait_until(lambda: proc.poll() is not None, 20, what="exit after SIGTERM")
        finally:
            if proc.poll() is None:
                proc.kill()
            out = proc.communicate(timeout=10)[0].decode()
    assert proc.returncode == 0, out
    assert "Traceback" not in out and "never retrieved" not in out, out
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert lines and lines[-1]["msg"] == "stopped", out


@pytest.mark.slow
def test_embedded_run_leaves_nothing_in_the_temp_dir(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "pyhpa.cli", "run", "--embedded", "--duration", "2s", "--metrics-bind-address", "0",
         "--logging-format", "json"],
        env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp)}, cwd=str(ROOT),
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"embedded cluster kubeconfig: {tmp}" in proc.stdout
    logs = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    assert "acquired the lease" not in proc.stderr  # no election against a cluster only this process can reach
    assert logs[-1]["msg"] == "stopped"
    assert list(tmp.iterdir()) == []


@pytest.mark.slow
def test_embedded_run_in_side_by_side_mode_installs_the_pyhpa_io_crd(tmp_path):
    from pyhpa.cluster.apiserver import resources as R
    from pyhpa.cluster.apiserver.storage import Store

    data = tmp_path / "cluster"
    proc = subprocess.run(
        [sys.executable, "-m", "pyhpa.cli", "run", "--embedded", "--embedded-data-dir", str(data),
         "--hpa-api-group", "pyhpa.io", "--duration", "4s", "--metrics-bind-address", "0",
         "--logging-format", "json"],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=str(ROOT), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "installed the pyhpa.io HorizontalPodAutoscaler CRD" in proc.stderr
    assert "could not find the requested resource" not in proc.stderr, proc.stderr
    store = Store(data / "store.sqlite")
    try:
        names = [o["metadata"]["name"] for o in store.list(R.CRDS.key).items]
    finally:
        store.close()
    assert names == ["horizontalpodautoscalers.pyhpa.io"]
