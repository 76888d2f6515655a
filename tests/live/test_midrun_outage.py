"""An API-server outage that starts under a running `pyhpa run` (no leader election): the
controller says plainly that it lost the connection, `/readyz` turns not ready, it backs off from
the retry period instead of retrying every sync, it recovers when the server is back, and the end
of `--duration` in the middle of an outage exits 1."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from tests import builders
from tests.cluster.conftest import wait_for

from .test_connectivity import ROOT, free_port, log_lines, readyz, run

pytestmark = pytest.mark.slow

# what `kubectl apply -f` creates
MANIFESTS = yaml.safe_dump_all([
    builders.deployment("web", 1, containers=[builders.container("web", image="web")]),
    builders.hpa("web", min_replicas=None, max_replicas=3,
                 metrics=[builders.external_metric("queue_depth", average_value="10")])], sort_keys=False)


def start_cluster(data: Path, port: int) -> subprocess.Popen:
    """`pyhpa cluster` on a fixed port, so that a restart serves the same address and state."""
    proc = subprocess.Popen([sys.executable, "-m", "pyhpa.cli", "cluster", "--listen", f"127.0.0.1:{port}",
                             "--data-dir", str(data)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if re.search(r"serving https://", line):
            return proc
    proc.kill()
    raise RuntimeError("pyhpa cluster did not start")


def kill(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait(10)


def metric(port: int, name: str) -> float:
    """The sum of a counter's samples on `/metrics`."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
        text = r.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(name + "{") or line.startswith(name + " "))


def test_outage_under_a_running_controller(tmp_path):
    api, health = free_port(), free_port()
    data = tmp_path / "cluster"
    address = f"https://127.0.0.1:{api}"
    cluster = start_cluster(data, api)
    ctl = None
    try:
        (tmp_path / "m.yaml").write_text(MANIFESTS)
        subprocess.run(["kubectl", "--kubeconfig", str(data / "kubeconfig"), "apply", "-f", str(tmp_path / "m.yaml")],
                       check=True, capture_output=True, timeout=30)
        ctl = run("--kubeconfig", str(data / "kubeconfig"), "--leader-elect=false", "--duration", "20s",
                  "--horizontal-pod-autoscaler-sync-period", "300ms", "--metrics-bind-address", f"127.0.0.1:{health}")
        reconciles = "horizontal_pod_autoscaler_controller_reconciliations_total"
        wait_for(lambda: readyz(health) == (200, "ok") and metric(health, reconciles) >= 2, 20, "reconciles")

        kill(cluster)  # the API server goes away under the running controller
        answer = wait_for(lambda: (r := readyz(health)) and r[0] == 503 and r, 10, "/readyz not ready")
        assert answer[1].startswith(f"not ready: cannot reach the API server at {address}: "), answer
        sent, done = metric(health, "pyhpa_api_requests_total"), metric(health, reconciles)
        time.sleep(4)  # 13 syncs of 300 ms: the workers wait, the probe backs off from 2 s
        assert metric(health, reconciles) <= done + 2  # at most the ones in flight finish
        assert metric(health, "pyhpa_api_requests_total") - sent <= 16  # informers + probe, backing off (7 seen)

        cluster = start_cluster(data, api)  # back, same address and state
        wait_for(lambda: readyz(health) == (200, "ok"), 40, "/readyz ready again")
        done = metric(health, reconciles)
        wait_for(lambda: metric(health, reconciles) >= done + 3, 10, "reconciles after the outage")

        kill(cluster)  # down again, until the end of --duration
        out = ctl.communicate(timeout=60)[0]
    finally:
        for proc in (ctl, cluster):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert ctl.returncode == 1, out
    lines = log_lines(out)
    lost = [ln for ln in lines if ln["msg"].startswith(f"lost the connection to the API server at {address}: ")]
    assert len(lost) == 2, [ln["msg"] for ln in lines]  # one line per outage
    assert "retrying every 2s" in lost[0]["msg"]
    assert [ln["msg"] for ln in lines if "answers again" in ln["msg"]] == [
        f"the API server at {address} answers again"]
    noisy = [ln for ln in lines if ln["level"] == "warning"]
    assert len(noisy) <= 3, [ln["msg"] for ln in noisy]  # no warning per retry or per sync
    assert lines[-2]["msg"].startswith(f"giving up at the end of --duration: cannot reach the API server at {address}")
