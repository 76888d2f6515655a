"""`pyhpa run --embedded --emulated-version 1.33`: the cluster and the controller it starts both
behave as 1.33, so no HPA carries a ScaledToZero condition or a lastScaleDecision."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pyhpa.adapters.kube.client import KubeClient, load_config
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.storage import Store
from pyhpa.cluster.embedded import EmbeddedCluster

from .harness import cpu_hpa, deployment

pytestmark = pytest.mark.slow

NS = "default"
DEPLOY = f"/apis/apps/v1/namespaces/{NS}/deployments"
HPAS = f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers"
ROOT = Path(__file__).resolve().parents[2]


def _run_embedded(data: Path, *flags: str) -> dict:
    """Seed a Deployment at 2 replicas under an HPA with minReplicas 3 (a rescale without any
    metric), run the controller for a few seconds, and return the stored HPA."""
    async def seed() -> None:
        async with EmbeddedCluster(data, port=0, simulate=False) as cluster:
            client = KubeClient.from_config(load_config(str(cluster.kubeconfig_path)), qps=0)
            try:
                await client.post(DEPLOY, deployment("web", 2))
                await client.post(HPAS, cpu_hpa("web", "web", min_r=3, max_r=10))
            finally:
                await client.close()

    asyncio.run(seed())
    proc = subprocess.run(
        [sys.executable, "-m", "pyhpa.cli", "run", "--embedded", "--embedded-data-dir", str(data),
         "--horizontal-pod-autoscaler-sync-period", "1s", "--duration", "4s", "--metrics-bind-address", "0",
         *flags],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=str(ROOT), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    store = Store(data / "store.sqlite")
    try:
        (stored,) = store.list(R.HPAS.key).items
    finally:
        store.close()
    return stored


@pytest.mark.parametrize("flags, scaled_to_zero", [
    (("--emulated-version", "1.33"), False),
    ((), True),  # pyhpa's own profile: the condition after every rescale
])
def test_scaled_to_zero_condition_only_in_releases_that_have_it(tmp_path, flags, scaled_to_zero):
    stored = _run_embedded(tmp_path / "cluster", *flags)
    types = [c["type"] for c in stored["status"].get("conditions", [])]
    assert "AbleToScale" in types and stored["status"]["desiredReplicas"] == 3  # the controller ran
    assert ("ScaledToZero" in types) is scaled_to_zero
    assert ("lastScaleDecision" in stored["status"]) is not bool(flags)  # KEP-6107: pyhpa's only
