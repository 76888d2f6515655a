"""`pyhpa demo` end to end, short and in plain mode: the replica story (rise to the plateau's
count, back to the minimum by the end), one line per change, nothing left in the temp dir."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pyhpa.demo import demo_timing

pytestmark = [pytest.mark.slow, pytest.mark.long(seconds=50)]
ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(r"^\s*(\d+)s (\w+) demand=(\d+)m replicas=(\d+) desired=(\d+) (.*)$")


def test_timing_scales_with_the_duration():
    full = demo_timing(240)
    assert (full.sync_period, full.downscale_stabilization, full.metrics_window, full.policy_period) == (5, 30, 15, 15)
    short = demo_timing(60)
    assert (short.sync_period, short.downscale_stabilization, short.metrics_window, short.policy_period) == (1.25, 7.5, 3.75, 4)


def test_demo_takes_the_version_profile_flags():
    from typer.testing import CliRunner

    from pyhpa.cli import app

    out = CliRunner().invoke(app, ["demo", "--help"], env={"COLUMNS": "80"}, terminal_width=80)
    assert out.exit_code == 0
    assert "--emulated-version" in out.output and "--feature-gates" in out.output
    bad = CliRunner().invoke(app, ["demo", "--emulated-version", "1.30",
                                   "--feature-gates", "HPAConfigurableTolerance=true"])
    assert bad.exit_code == 2
    assert "error: --feature-gates: cannot set feature gate HPAConfigurableTolerance to true, " \
        "feature is PreAlpha at emulated version 1.30" in bad.output


def test_short_plain_demo_tells_the_whole_story(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "pyhpa.cli", "demo", "--duration", "40s", "--plain"],
        env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp)}, cwd=str(ROOT),
        capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [m.groups() for m in map(LINE.match, proc.stdout.splitlines()) if m]
    assert rows, proc.stdout
    phases = [r[1] for r in rows]
    assert phases.index("rise") < phases.index("plateau") < phases.index("fall") < phases.index("idle")
    replicas = [int(r[3]) for r in rows]
    peak = max(replicas)
    assert replicas[0] == 1
    assert 6 <= peak <= 10, replicas  # 800m of demand over 200m requests at a 50 % target: 8
    assert replicas[-1] == 1, replicas  # back at minReplicas before the end
    assert phases[replicas.index(peak)] in ("rise", "plateau")  # reached under load, not after it
    bodies = [" ".join(r[1:]) for r in rows]
    assert all(a != b for a, b in zip(bodies, bodies[1:])), "an unchanged line was printed again"
    assert f"done: peak {peak} replicas, final 1" in proc.stdout
    assert list(tmp.iterdir()) == []  # the embedded cluster's temporary data dir is gone
