"""PNG plots of simulation runs (matplotlib, headless Agg backend).

One run (``plot.png``): per HPA, demand against Ready capacity; spec replicas, Ready pods and
``status.desiredReplicas`` with scale-ups (▲) and scale-downs (▼) marked; and the metrics (the
current value against the target for one metric, each metric as a percentage of its target for
several). With more than one HPA a fleet panel comes first (total replicas and Ready pods, and how
many HPAs are under-provisioned), and with more than ``MAX_DETAIL`` HPAs only the ones needing the
most attention get their own panels (the title says which and how they were chosen). Legends sit
outside the axes, so they never hide a line or a marker.

Several runs (``compare.png``): demand and each variant's Ready capacity, then each variant's
replicas with its scale-ups and scale-downs; a variant with several HPAs is summed over them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

MAX_DETAIL = 4  # HPAs with their own panels in one plot
PANEL_HEIGHT = 2.3  # inches
WIDTH = 13.0  # inches (the legends take the right margin)
DPI = 90


def _hours(times: Sequence[float], start: float) -> list[float]:
    return [(t - start) / 3600.0 for t in times]


def _capacity(trace: Any) -> list[float] | None:
    return trace.ready_capacity()


def _legend(ax: Any) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0.0, fontsize=8, frameon=False)


def _outages(ax: Any, scenario: Any) -> None:
    for o in scenario.outages:
        ax.axvspan((o.start - scenario.start) / 3600, (o.end - scenario.start) / 3600, color="red", alpha=0.08,
                   label="metrics outage" if o is scenario.outages[0] else None)


def _scale_markers(ax: Any, events: Sequence[Any], start: float, color_up: str = "tab:orange",
                   color_down: str = "black", label: str = "") -> None:
    ups = [e for e in events if e.new > e.old]
    downs = [e for e in events if e.new < e.old]
    if ups:
        ax.scatter([(e.t - start) / 3600 for e in ups], [e.new for e in ups], marker="^", s=22, color=color_up,
                   zorder=5, label=f"{label}scale up ({len(ups)})")
    if downs:
        ax.scatter([(e.t - start) / 3600 for e in downs], [e.new for e in downs], marker="v", s=22, color=color_down,
                   zorder=5, label=f"{label}scale down ({len(downs)})")


def _pick_detail(runs: list[Any], summaries: list[dict[str, Any]] | None) -> tuple[list[Any], str]:
    """The HPAs that get their own panels, and the words that say how they were chosen."""
    if len(runs) <= MAX_DETAIL:
        return runs, ""
    by_key = {s["hpa"]: s for s in summaries or []}

    def attention(run: Any) -> tuple:
        s = by_key.get(run.key, {})
        return (-(s.get("underProvisionedPodSeconds") or 0.0), -len(run.scale_events), -(s.get("peakReplicas") or 0),
                run.key)

    chosen = sorted(runs, key=attention)[:MAX_DETAIL]
    return chosen, (f"details for {len(chosen)} of {len(runs)} HPAs: the most under-provisioned pod-seconds, "
                    "then the most scale events (every HPA is in timeline.csv and summary.csv)")


def _fleet_panels(result: Any, ax_pods: Any, ax_short: Any) -> None:
    scenario = result.scenario
    traces = [result.workloads[r.target] for r in result.hpas if r.target in result.workloads]
    if not traces:
        return
    x = _hours(traces[0].times, scenario.start)
    n = len(x)
    total_spec, total_ready, short = [0] * n, [0] * n, [0] * n
    with_cap = 0
    for tr in traces:  # one target at a time: a fleet's per-tick lists never all live at once
        for i, (spec, ready) in enumerate(zip(tr.replicas, tr.ready)):
            total_spec[i] += spec
            total_ready[i] += ready
        if tr.capacity is not None:
            with_cap += 1
            for i, (demand, cap) in enumerate(zip(tr.demand, tr.ready_capacity())):
                if demand > cap + 1e-9:
                    short[i] += 1
    ax_pods.step(x, total_spec, where="post", color="tab:blue", label="replicas (spec), all targets")
    ax_pods.step(x, total_ready, where="post", color="tab:green", alpha=0.8, label="Ready pods, all targets")
    ax_pods.set_ylabel("pods")
    ax_pods.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax_pods.set_title(f"fleet: {len(result.hpas)} HPAs" + (f" ({result.label})" if result.label else ""))
    ax_short.step(x, short, where="post", color="tab:red",
                  label=f"under-provisioned HPAs (of {with_cap} with a capacity)")
    ax_short.set_ylabel("HPAs")
    ax_short.set_ylim(0, max(1, max(short)) * 1.1)
    ax_short.yaxis.set_major_locator(MaxNLocator(integer=True))


def _hpa_panels(result: Any, run: Any, ax_d: Any, ax_r: Any, ax_m: Any) -> None:
    scenario = result.scenario
    trace = result.workloads.get(run.target)
    if trace is not None:
        x = _hours(trace.times, scenario.start)
        ax_d.step(x, trace.demand, where="post", label=f"demand ({trace.demand_signal})", color="tab:red")
        cap = _capacity(trace)
        if cap is not None:
            ax_d.step(x, cap, where="post", label="Ready capacity", color="tab:green")
        ax_r.step(x, trace.replicas, where="post", label="replicas (spec)", color="tab:blue")
        ax_r.step(x, trace.ready, where="post", label="Ready pods", color="tab:green", alpha=0.7)
    records = run.records
    rx = [(r.t - scenario.start) / 3600.0 for r in records]
    ax_r.step(rx, [r.desired if r.desired is not None else math.nan for r in records], where="post",
              label="status.desiredReplicas", color="tab:purple", alpha=0.5, linestyle="--")
    _scale_markers(ax_r, run.scale_events, scenario.start)
    columns = run.metrics
    if len(columns) == 1:
        col = columns[0]
        ax_m.plot(rx, [r.currents[0] if r.currents[0] is not None else math.nan for r in records],
                  label=f"{col['metric']} current", color="tab:blue")
        if col["target"] is not None:
            ax_m.axhline(col["target"], color="tab:red", linestyle="--", label="target")
        ax_m.set_ylabel(col["metric"] + (" (%)" if col["unit"] == "%" else ""))
    elif columns:
        for k, col in enumerate(columns):
            target = col["target"]
            ys = [r.currents[k] / target * 100.0 if r.currents[k] is not None and target else math.nan for r in records]
            ax_m.plot(rx, ys, label=f"{col['metric']}", linewidth=1.0)
        ax_m.axhline(100.0, color="tab:red", linestyle="--", label="target (100 %)")
        ax_m.set_ylabel("% of target")
    ax_d.set_title(f"{run.key} -> {'/'.join(run.target[1:])}")
    ax_d.set_ylabel("demand")
    ax_r.set_ylabel("pods")
    ax_r.yaxis.set_major_locator(MaxNLocator(integer=True))


def plot_run(result: Any, path: Path, summaries: list[dict[str, Any]] | None = None) -> Path:
    """The run's plot; ``summaries`` (``report.summarize``) choose the detailed HPAs of a fleet."""
    scenario = result.scenario
    runs = result.hpas
    detail, chosen_by = _pick_detail(runs, summaries)
    fleet = len(runs) > 1
    n_panels = (2 if fleet else 0) + 3 * len(detail)
    fig, axes = plt.subplots(n_panels, 1, figsize=(WIDTH, PANEL_HEIGHT * n_panels), sharex=True, squeeze=False)
    flat = [a[0] for a in axes]
    k = 0
    if fleet:
        _fleet_panels(result, flat[0], flat[1])
        k = 2
    for run in detail:
        _hpa_panels(result, run, flat[k], flat[k + 1], flat[k + 2])
        k += 3
    for ax in flat:
        _outages(ax, scenario)
        ax.grid(True, alpha=0.3)
        _legend(ax)
    flat[-1].set_xlabel("hours since start")
    if chosen_by:
        fig.suptitle(chosen_by, fontsize=9, y=1.0)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def _summed(result: Any) -> tuple[list[float], list[float], list[float] | None, list[float] | None, list[Any]]:
    """(hours, replicas, Ready capacity, demand) summed over a variant's HPA targets, and its scale
    events (None where some target has no capacity; demand only for a single target)."""
    scenario = result.scenario
    traces = [result.workloads[r.target] for r in result.hpas if r.target in result.workloads]
    if not traces:
        return [], [], None, None, []
    x = _hours(traces[0].times, scenario.start)
    n = len(x)
    replicas = [sum(tr.replicas[i] for tr in traces) for i in range(n)]
    caps = [tr.ready_capacity() for tr in traces]
    capacity = None if any(c is None for c in caps) else [sum(c[i] for c in caps) for i in range(n)]  # type: ignore[index]
    demand = list(traces[0].demand) if len(traces) == 1 else None
    events = [e for r in result.hpas for e in r.scale_events] if len(result.hpas) == 1 else []
    return x, replicas, capacity, demand, events


def plot_compare(results: list[Any], path: Path) -> Path:
    """Demand and each variant's Ready capacity; each variant's replicas with its scale events."""
    fig, (ax_d, ax_r) = plt.subplots(2, 1, figsize=(WIDTH, 2 * 3.4), sharex=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    drawn_demand = False
    for i, result in enumerate(results):
        color = colors[i % len(colors)]
        x, replicas, capacity, demand, events = _summed(result)
        if not x:
            continue
        n_hpas = len(result.hpas)
        what = result.label + (f" (sum of {n_hpas} HPAs)" if n_hpas > 1 else "")
        if demand is not None and not drawn_demand:
            trace = result.workloads[result.hpas[0].target]
            ax_d.step(x, demand, where="post", color="black", label=f"demand ({trace.demand_signal})")
            drawn_demand = True
        if capacity is not None:
            ax_d.step(x, capacity, where="post", color=color, alpha=0.8, label=f"{what}: Ready capacity")
        ax_r.step(x, replicas, where="post", color=color, label=f"{what}: replicas")
        if events:
            start = result.scenario.start
            ups = [e for e in events if e.new > e.old]
            downs = [e for e in events if e.new < e.old]
            if ups:
                ax_r.scatter([(e.t - start) / 3600 for e in ups], [e.new for e in ups], marker="^", s=22, color=color,
                             zorder=5, label=f"{result.label}: scale up ({len(ups)})")
            if downs:
                ax_r.scatter([(e.t - start) / 3600 for e in downs], [e.new for e in downs], marker="v", s=22,
                             facecolors="white", edgecolors=color, zorder=5,
                             label=f"{result.label}: scale down ({len(downs)})")
    ax_d.set_ylabel("demand")
    ax_r.set_ylabel("replicas")
    ax_r.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax_r.set_xlabel("hours since start")
    if results:
        for ax in (ax_d, ax_r):
            _outages(ax, results[0].scenario)
    for ax in (ax_d, ax_r):
        ax.grid(True, alpha=0.3)
        _legend(ax)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path
