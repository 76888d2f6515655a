"""Progress of long commands on stderr (pyhpa/sim/progress.py): lines at most every 10 s when
stderr is not a terminal, with what is done, the total and the time elapsed; nothing for short runs."""

from __future__ import annotations

import io
import re

import yaml
from typer.testing import CliRunner

from pyhpa.cli import app
from pyhpa.sim.progress import Progress, progress_mode
from tests.sim.scenarios import cpu_hpa, deployment, scenario
from tests.clock import Clock


def test_lines_at_most_one_per_interval_with_done_total_and_elapsed():
    clock, out = Clock(100.0), io.StringIO()
    with Progress("tuning: 40 candidates", 40, "candidates", "lines", stream=out, clock=clock) as p:
        for _ in range(40):
            clock.t += 1.0
            p.advance()
    lines = out.getvalue().splitlines()
    assert lines == ["tuning: 40 candidates: 10/40 candidates (25 %), elapsed 0:00:10",
                     "tuning: 40 candidates: 20/40 candidates (50 %), elapsed 0:00:20",
                     "tuning: 40 candidates: 30/40 candidates (75 %), elapsed 0:00:30",
                     "tuning: 40 candidates: 40/40 candidates (100 %), elapsed 0:00:40",
                     "tuning: 40 candidates: done, 40/40 candidates in 0:00:40"]


def test_a_short_run_prints_nothing_and_off_prints_nothing():
    clock, out = Clock(100.0), io.StringIO()
    with Progress("simulating", 3600, "h simulated", "lines", stream=out, clock=clock,
                  show=lambda s: f"{s / 3600:.1f}") as p:
        clock.t += 9.0
        p.update(3600)
    assert out.getvalue() == ""
    with Progress("simulating", 10, "s", "off", stream=out, clock=clock) as p:
        clock.t += 60.0
        p.update(5)
    assert out.getvalue() == ""


def test_mode_follows_the_flag_and_whether_stderr_is_a_terminal():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert progress_mode(None, io.StringIO()) == "lines"
    assert progress_mode(True, io.StringIO()) == "lines"
    assert progress_mode(None, Tty()) == "bar"
    assert progress_mode(False, Tty()) == "off"
    out = Tty()
    with Progress("simulating", 10, "s", "bar", stream=out) as p:  # a live bar, drawn on that stream
        p.update(10)
    assert p.lines == 0 and "simulating" in out.getvalue()


def _doc() -> dict:
    load = {"load": {"sine": {"mean": 1100, "amplitude": 900, "period": "20m", "peak": "5m"}}}
    workload = {"startup": "60s", "termination": "0s", "cpu": {"signal": "load", "per": "1m"},
                "demand": "load", "capacityPerReplica": 450}
    return scenario([deployment(2), cpu_hpa(target=60, min_replicas=2, max_replicas=10)], load, duration="1h",
                    workload=workload)


def test_simulate_and_tune_print_progress_lines_when_stderr_is_not_a_terminal(tmp_path, monkeypatch):
    monkeypatch.setattr("pyhpa.sim.progress.LINE_INTERVAL", 0.0)  # every update, not every 10 s
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(_doc(), sort_keys=False))
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", str(tmp_path / "sim")])
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("simulating")]
    assert lines and re.fullmatch(r"simulating .*: \d\.\d/1\.0 h simulated \(\d+ %\), elapsed 0:00:\d\d", lines[0])
    assert lines[-1].startswith("simulating") and ": done, 1.0/1.0 h simulated in " in lines[-1]
    assert "simulating" not in result.stdout
    result = CliRunner().invoke(app, ["tune", str(path), "-o", str(tmp_path / "tune"), "--target", "50,60,70",
                                      "--min-replicas", "2", "--scale-down-window", "300", "--refine", "0",
                                      "--budget", "100%"])
    assert result.exit_code == 0, result.output
    assert "tuning: 4 candidates (1 jobs): 1/4 candidates (25 %), elapsed 0:00:0" in result.stderr
    assert "tuning: 4 candidates (1 jobs): done, 4/4 candidates in 0:00:" in result.stderr
    quiet = CliRunner().invoke(app, ["simulate", str(path), "-o", str(tmp_path / "q"), "--no-progress"])
    assert "simulating" not in quiet.stderr
