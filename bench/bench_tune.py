"""`pyhpa tune examples/web-diurnal.yaml -o DIR` with the default search space: its wall time.

Goal (issue 15, item 5): under 2 minutes on 2 cores (``--jobs 2``: both cores simulate
candidates). Timed: the whole command in a fresh process (import, every candidate's 48-hour run,
the report), as a user runs it; its CPU seconds too (the command and its workers), which tell the
wall time on two idle cores when the machine is shared. Then the recommended HPA is simulated with `pyhpa simulate
--compare` and its pod-hours and under-provisioned pod-seconds are checked against the row
``frontier.csv`` claims for it (a mismatch fails the benchmark).

``BENCH_TUNE_JOBS`` changes the number of worker processes (default 2).
"""

from __future__ import annotations

import csv
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from typing import Any

JOBS = int(os.environ.get("BENCH_TUNE_JOBS", "2"))
REPO = pathlib.Path(__file__).resolve().parent.parent
SCENARIO = REPO / "examples" / "web-diurnal.yaml"


def _pyhpa(*args: str) -> subprocess.CompletedProcess[str]:
    import pyhpa

    env = dict(os.environ)
    root = str(pathlib.Path(pyhpa.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, "-m", "pyhpa.cli", *args], capture_output=True, text=True, env=env,
                          timeout=900)


def run() -> list[tuple[str, float, str]]:
    with tempfile.TemporaryDirectory(prefix="bench-tune-") as tmp:
        out = pathlib.Path(tmp) / "tune"
        started = time.perf_counter()
        cpu_before = _children_cpu()
        done = _pyhpa("tune", str(SCENARIO), "-o", str(out), "--jobs", str(JOBS), "--no-progress")
        wall = time.perf_counter() - started
        cpu = _children_cpu() - cpu_before
        if done.returncode not in (0, 3):
            raise RuntimeError(f"pyhpa tune failed ({done.returncode}): {done.stderr[-2000:]}")
        with (out / "frontier.csv").open() as fh:
            rows = list(csv.DictReader(fh))
        rec: dict[str, Any] = next(r for r in rows if r["recommended"] == "true")
        sim = pathlib.Path(tmp) / "sim"
        checked = _pyhpa("simulate", str(SCENARIO), "-o", str(sim), "--compare", str(out / "recommended.yaml"),
                         "--jobs", str(JOBS), "--no-progress")
        if checked.returncode != 0:
            raise RuntimeError(f"pyhpa simulate failed: {checked.stderr[-2000:]}")
        figures = {s["label"]: s for s in json.loads((sim / "compare.json").read_text())}["recommended"]
        claimed = (float(rec["pod_hours"]), float(rec["under_provisioned_pod_seconds"]))
        simulated = (figures["podHours"], figures["underProvisionedPodSeconds"])
        if claimed != simulated:
            raise RuntimeError(f"recommended {rec['candidate']}: frontier.csv claims {claimed}, simulate gives {simulated}")
        print(f"  recommended {rec['candidate']}: {claimed[0]} pod-hours, {claimed[1]} under-provisioned pod-s "
              f"(pyhpa simulate agrees); {len(rows)} candidates", flush=True)
        return [(f"web_diurnal_wall_jobs{JOBS}", wall, "s"), ("web_diurnal_candidates", float(len(rows)), "candidates"),
                ("web_diurnal_cpu", cpu, "CPU-s (all processes; / jobs = the wall time on idle cores)"),
                ("web_diurnal_per_candidate", cpu / len(rows), "CPU-s per candidate")]


def _children_cpu() -> float:
    """CPU seconds of the finished child processes (the command and its workers)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name}: {value:,.2f} {unit}")
