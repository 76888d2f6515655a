"""SIGTERM at random moments while the API server dies: every process must exit in time.

Each trial starts a ``pyhpa cluster`` and a ``pyhpa run`` against it, SIGKILLs the cluster at a
random moment, sends ``pyhpa run`` SIGTERM at a random moment around it (before, with, or
after the server's death, so a health probe can fail in the same step as the cancel) and
measures how long the controller takes to exit; every few trials it is ``pyhpa cluster`` that
gets the SIGTERM, under load of ``pyhpa run``'s requests. A trial fails when a process takes
longer than the documented bound (README, "Shutdown") or exits with a traceback.

    python bench/shutdown_signals.py --runs 100 --seed 1
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STOP_BOUND = 10.0  # seconds from the first SIGTERM to exit (README, "Shutdown")


@dataclass
class Trial:
    which: str  # the process signalled: "run" or "cluster"
    kill_at: float  # seconds after start when the cluster was SIGKILLed (NaN: not killed)
    term_at: float
    exit_seconds: float
    returncode: int | None
    problem: str = ""


def _start_cluster(data_dir: Path) -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "pyhpa.cli", "cluster", "--listen", "127.0.0.1:0",
         "--data-dir", str(data_dir)], cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if re.search(r"serving https://", line):
            return proc, data_dir / "kubeconfig"
    proc.kill()
    raise RuntimeError("pyhpa cluster did not start")


def _wait_exit(proc: subprocess.Popen[str], bound: float) -> tuple[float, int | None]:
    began = time.monotonic()
    try:
        proc.wait(bound + 5)
    except subprocess.TimeoutExpired:
        pass
    return time.monotonic() - began, proc.poll()


def _wait_started(log: Path, run: subprocess.Popen[str]) -> None:
    """Until ``pyhpa run`` has its signal handlers (its first log line comes after them)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and run.poll() is None:
        if log.stat().st_size > 0:
            return
        time.sleep(0.05)


def trial(rng: random.Random, work: Path, which: str) -> Trial:
    data = Path(tempfile.mkdtemp(dir=work))
    cluster, kubeconfig = _start_cluster(data)
    log = open(data / "run.log", "w+")
    run = subprocess.Popen(
        [sys.executable, "-m", "pyhpa.cli", "run", "--kubeconfig", str(kubeconfig),
         "--metrics-bind-address", "0", "--leader-elect-retry-period", "0.2s",
         f"--leader-elect={rng.choice(['true', 'false'])}"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "POD_NAME": "shutdown-trial"})
    try:
        _wait_started(data / "run.log", run)
        started = time.monotonic()
        kill_at = rng.uniform(0.0, 1.5)
        term_at = max(0.2, kill_at + rng.uniform(-0.3, 0.3))
        target = run if which == "run" else cluster
        events = sorted([(kill_at, "kill"), (term_at, "term")]) if which == "run" \
            else [(term_at, "term")]
        for at, what in events:
            time.sleep(max(0.0, started + at - time.monotonic()))
            if what == "kill":
                cluster.kill()
            else:
                target.send_signal(signal.SIGTERM)
        seconds, code = _wait_exit(target, STOP_BOUND)
        result = Trial(which, kill_at if which == "run" else float("nan"), term_at, seconds, code)
        if code is None:
            result.problem = f"still running {seconds:.1f}s after SIGTERM"
        elif seconds > STOP_BOUND:
            result.problem = f"took {seconds:.1f}s (bound {STOP_BOUND:g}s)"
        else:
            log.flush()
            log.seek(0)
            text = log.read() if which == "run" else (cluster.stdout.read() if cluster.stdout else "")
            if "Traceback" in text:
                result.problem = "traceback in the log:\n" + text[-3000:]
        return result
    finally:
        for p in (run, cluster):
            if p.poll() is None:
                p.kill()
                p.wait(10)
        log.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cluster-only", action="store_true",
                        help="signal pyhpa cluster in every trial")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    failures = 0
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="pyhpa-shutdown-") as work:
        for i in range(args.runs):
            which = "cluster" if i % 5 == 4 or args.cluster_only else "run"
            t = trial(rng, Path(work), which)
            worst = max(worst, t.exit_seconds)
            status = "FAIL " + t.problem if t.problem else "ok"
            killed = f"server killed at {t.kill_at:.2f}s" if t.which == "run" else \
                "under pyhpa run's requests"
            print(f"trial {i + 1}/{args.runs}: SIGTERM to {t.which} at {t.term_at:.2f}s "
                  f"({killed}): exited in {t.exit_seconds:.2f}s code {t.returncode}: {status}",
                  flush=True)
            failures += bool(t.problem)
    print(f"{args.runs - failures}/{args.runs} trials within {STOP_BOUND:g}s; "
          f"slowest exit {worst:.2f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
