"""Simulator outputs at fleet size: 50 HPAs x 24 h (issue 15), the timeline files and the report.

The run itself is not timed (``bench_sim`` does that); timed: writing ``timeline.csv`` (the
default of ``pyhpa simulate --timeline``), ``timeline.json`` (``--timeline json``), the summary,
``plot.png`` and ``report.html``, with the files' sizes.

Measured here (2 shared cores, noisy): before, both timeline files were always written, rows
built as dicts: 22 s (a 63 MB CSV and a 201 MB indented JSON; 36 s on the issue's machine). Now
``timeline.csv`` alone (the default) 1.4-2.2 s; ``--timeline json`` 5.6 s (166 MB, a row per
line); ``report.html`` 1.1 s (10 MB, 12 HPAs selectable); ``plot.png`` 2-3 s.

``BENCH_OUT_HPAS`` / ``BENCH_OUT_HOURS`` change the fleet size.
"""

from __future__ import annotations

import os
import pathlib
import sys
import tempfile
import time
from typing import Any

HPAS = int(os.environ.get("BENCH_OUT_HPAS", "50"))
HOURS = float(os.environ.get("BENCH_OUT_HOURS", "24"))
HERE = pathlib.Path(__file__).resolve().parent


def _fleet_result() -> Any:
    sys.path.insert(0, str(HERE))
    from bench_sim import fleet_scenario

    from pyhpa.sim.parts import run_variants

    (result,) = run_variants(fleet_scenario(HPAS, HOURS), [("", None)], 1)
    return result


def run() -> list[tuple[str, float, str]]:
    from pyhpa.sim.html_report import write_html_report
    from pyhpa.sim.plot import plot_run
    from pyhpa.sim.report import summarize, write_summary
    from pyhpa.sim.timeline_files import write_timeline

    result = _fleet_result()
    tag = f"hpas_{HPAS}_x_{HOURS:g}h"
    out: list[tuple[str, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ("csv", "json"):
            started = time.perf_counter()
            [path] = write_timeline(result, pathlib.Path(tmp), fmt)
            out.append((f"{tag}_timeline_{fmt}", time.perf_counter() - started, "s"))
            out.append((f"{tag}_timeline_{fmt}_size", path.stat().st_size / 1e6, "MB"))
            path.unlink()
        started = time.perf_counter()
        summaries = summarize(result)
        write_summary(summaries, pathlib.Path(tmp))
        out.append((f"{tag}_summary", time.perf_counter() - started, "s"))
        started = time.perf_counter()
        plot_run(result, pathlib.Path(tmp) / "plot.png", summaries)
        out.append((f"{tag}_plot_png", time.perf_counter() - started, "s"))
        started = time.perf_counter()
        html = write_html_report([result], pathlib.Path(tmp) / "report.html", summaries)
        out.append((f"{tag}_report_html", time.perf_counter() - started, "s"))
        out.append((f"{tag}_report_html_size", html.stat().st_size / 1e6, "MB"))
    return out


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name}: {value:,.2f} {unit}")
