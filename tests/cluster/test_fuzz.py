"""A short run of the API server's fuzzer (``bench/fuzz_apiserver.py``, ``make fuzz`` runs the
long one): 300 random valid and broken writes of every served kind, no 5xx, every error a Status,
and a ready server after each."""

from __future__ import annotations

import importlib.util
import ssl
import sys
from pathlib import Path

import pytest

from pyhpa.cluster.embedded import EmbeddedCluster

pytestmark = pytest.mark.slow

FUZZER = Path(__file__).resolve().parents[2] / "bench" / "fuzz_apiserver.py"


def load_fuzzer():
    spec = importlib.util.spec_from_file_location("fuzz_apiserver", FUZZER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("seed", [1, 6])
def test_random_writes_never_answer_5xx_nor_stop_the_world(tmp_path, seed):
    fuzzer = load_fuzzer()
    with EmbeddedCluster(tmp_path) as cluster:
        figures = fuzzer.fuzz(cluster.port, cluster.token,
                              ssl.create_default_context(cafile=str(cluster.ca_path)),
                              requests=150, seconds=120, seed=seed, reset_every=100)
    assert figures.requests == 150
    assert figures.ok(), "\n".join(figures.lines())
    assert len(figures.statuses) >= 5  # the draws reach successes and many kinds of refusal
