"""PNG plots of simulation runs (matplotlib, headless Agg backend).

One run: per HPA, demand vs Ready capacity on top, replicas/Ready/desired below with scale-ups
(^) and scale-downs (v) marked, and the first metric's current value against its target.
Several runs (``--compare``): demand once, then each variant's capacity and replicas overlaid.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _hours(times: list[float], start: float) -> list[float]:
    return [(t - start) / 3600.0 for t in times]


def _capacity(trace: Any) -> list[float] | None:
    return trace.ready_capacity()


def plot_run(result: Any, path: Path) -> Path:
    scenario = result.scenario
    runs = result.hpas
    fig, axes = plt.subplots(3 * len(runs), 1, figsize=(12, 3.0 * 3 * len(runs)), sharex=True, squeeze=False)
    for k, run in enumerate(runs):
        ax_d, ax_r, ax_m = axes[3 * k][0], axes[3 * k + 1][0], axes[3 * k + 2][0]
        trace = result.workloads.get(run.target)
        if trace is not None:
            x = _hours(trace.times, scenario.start)
            ax_d.step(x, trace.demand, where="post", label=f"demand ({trace.demand_signal})", color="tab:red")
            cap = _capacity(trace)
            if cap is not None:
                ax_d.step(x, cap, where="post", label="Ready capacity", color="tab:green")
            ax_r.step(x, trace.replicas, where="post", label="replicas (spec)", color="tab:blue")
            ax_r.step(x, trace.ready, where="post", label="Ready pods", color="tab:green", alpha=0.7)
        rows = run.rows
        rx = [r["offsetSeconds"] / 3600.0 for r in rows]
        ax_r.step(rx, [r["desiredReplicas"] for r in rows], where="post", label="status.desiredReplicas",
                  color="tab:purple", alpha=0.5, linestyle="--")
        ups = [e for e in run.scale_events if e.new > e.old]
        downs = [e for e in run.scale_events if e.new < e.old]
        if ups:
            ax_r.scatter([(e.t - scenario.start) / 3600 for e in ups], [e.new for e in ups], marker="^",
                         color="tab:orange", zorder=5, label="scale up")
        if downs:
            ax_r.scatter([(e.t - scenario.start) / 3600 for e in downs], [e.new for e in downs], marker="v",
                         color="black", zorder=5, label="scale down")
        for e in run.scale_events:
            ax_d.axvline((e.t - scenario.start) / 3600, color="grey", alpha=0.15, linewidth=0.8)
        if rows and rows[0]["metrics"]:
            m0 = rows[0]["metrics"][0]
            cur = [r["metrics"][0]["current"] if r["metrics"] else None for r in rows]
            ax_m.plot(rx, [c if c is not None else float("nan") for c in cur], label=f"{m0['metric']} current",
                      color="tab:blue")
            ax_m.plot(rx, [r["metrics"][0]["target"] if r["metrics"] else None for r in rows], label="target",
                      color="tab:red", linestyle="--")
            ax_m.set_ylabel(m0["metric"] + (" (%)" if m0["unit"] == "%" else ""))
        for o in scenario.outages:
            for ax in (ax_d, ax_r, ax_m):
                ax.axvspan((o.start - scenario.start) / 3600, (o.end - scenario.start) / 3600, color="red", alpha=0.08)
        ax_d.set_title(f"{run.key} -> {'/'.join(run.target[1:])}")
        ax_d.set_ylabel("demand")
        ax_r.set_ylabel("pods")
        for ax in (ax_d, ax_r, ax_m):
            ax.grid(True, alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(loc="upper left", fontsize=8)
    axes[-1][0].set_xlabel("hours since start")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def plot_compare(results: list[Any], path: Path) -> Path:
    """Demand once; each variant's Ready capacity and replicas overlaid (first HPA of each run)."""
    fig, (ax_d, ax_r) = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    drawn_demand = False
    for i, result in enumerate(results):
        scenario = result.scenario
        color = colors[i % len(colors)]
        run = result.hpas[0]
        trace = result.workloads.get(run.target)
        if trace is None:
            continue
        x = _hours(trace.times, scenario.start)
        if not drawn_demand:
            ax_d.step(x, trace.demand, where="post", color="black", label=f"demand ({trace.demand_signal})")
            drawn_demand = True
        cap = _capacity(trace)
        if cap is not None:
            ax_d.step(x, cap, where="post", color=color, alpha=0.8, label=f"{result.label}: Ready capacity")
        ax_r.step(x, trace.replicas, where="post", color=color, label=f"{result.label}: replicas")
        ev = run.scale_events
        if ev:
            ax_r.scatter([(e.t - scenario.start) / 3600 for e in ev], [e.new for e in ev], color=color, s=12,
                         marker="o", zorder=5)
    ax_d.set_ylabel("demand")
    ax_r.set_ylabel("replicas")
    ax_r.set_xlabel("hours since start")
    for ax in (ax_d, ax_r):
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
