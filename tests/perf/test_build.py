"""The suite tests the build it was asked to: ``make test`` runs it on the pure-Python source
and again on the compiled build (``PYHPA_EXPECT_COMPILED=1``, see scripts/test.sh)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from pyhpa import build
from pyhpa.api.selectors import Selector
from pyhpa.engine.calculator import Tolerances
from pyhpa.engine.config import ControllerConfig
from pyhpa.engine.normalize import Rules
from pyhpa.engine.state import AutoscalerState, ScaleEvent
from pyhpa.sim.runner import Capacity

REPO = Path(__file__).resolve().parents[2]


def test_the_imported_build_is_the_one_under_test():
    compiled = build.compiled_modules()
    if os.environ.get("PYHPA_EXPECT_COMPILED") == "1":
        assert compiled == list(build.COMPILED_MODULES), build.describe()
        assert "compiled" in build.describe()
    else:
        # Source edits take effect: no extension module shadows a module of the source tree.
        assert compiled == [], build.describe()
        assert "pure Python" in build.describe()


def test_frozen_records_survive_pickling_in_either_build():
    # Simulation workers (--jobs) receive and return these; compiled frozen dataclasses need
    # pyhpa.api.picklable to be rebuilt through their constructor.
    from datetime import datetime, timezone

    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for obj in (Tolerances(0.1, 0.2), Rules(30, "Max", ()), ScaleEvent(2, now, False),
                AutoscalerState(None, (ScaleEvent(1, now, True),), ()), Selector.parse("app=web,tier in (a,b)"),
                Capacity(100.0, 0.0), ControllerConfig(tolerance=0.2)):
        assert pickle.loads(pickle.dumps(obj)) == obj


_DIGEST = '''
import hashlib, json, sys
from pyhpa.sim.parts import run_variants
from pyhpa.sim.report import summarize
from pyhpa.sim.scenario import load_scenario


def digest(path):
    """Every timeline row and the summaries of one scenario's run, hashed."""
    (result,) = run_variants(load_scenario(path), [("", None)], 1)
    h = hashlib.sha256()
    for run in result.hpas:
        for row in run.iter_rows():
            h.update(json.dumps(row, sort_keys=True, default=str).encode())
    h.update(json.dumps(summarize(result), sort_keys=True, default=str).encode())
    return h.hexdigest()
'''


@pytest.mark.skipif(os.environ.get("PYHPA_EXPECT_COMPILED") != "1",
                    reason="compares the compiled build with the source (the compiled pass of make test)")
def test_compiled_runs_equal_the_source_runs():
    # The source is run by the same interpreter with the repository first on its path, so it
    # shadows the compiled package; both must produce the same timelines and summaries.
    scenarios = sorted(str(p) for p in (REPO / "examples").glob("*.yaml") if "hpa" not in p.stem)
    assert len(scenarios) >= 4
    code = _DIGEST + "\nfrom pyhpa import build\nprint(build.compiled_modules())\n" + \
        "for p in sys.argv[1:]:\n    print(digest(p))\n"
    out = subprocess.run([sys.executable, "-c", code, *scenarios], env=dict(os.environ, PYTHONPATH=str(REPO)),
                         cwd=REPO, capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "[]"  # the source ran
    namespace: dict = {}
    exec(_DIGEST, namespace)
    assert build.compiled_modules()  # and here the compiled build
    assert [namespace["digest"](p) for p in scenarios] == out[1:]
