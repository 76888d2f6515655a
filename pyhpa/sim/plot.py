"""PNG plots of simulation runs (matplotlib, headless Agg backend).

One run (``plot.png``): per HPA, demand against Ready capacity; spec replicas, Ready pods and
``status.desiredReplicas`` with scale-ups (▲) and scale-downs (▼) marked (and the observed
replicas, dashed black, when the scenario has them; saturated observed intervals hatched); and the metrics (the
current value against the target for one metric, each metric as a percentage of its target for
several) with the target's tolerance band. Under-provisioned intervals (demand above Ready
capacity) are shaded red, metrics outages grey; the x axis is clock time (UTC) and every y axis
says its unit. With more than one HPA a fleet panel comes first (total replicas and Ready pods, and
how many HPAs are under-provisioned), and with more than ``MAX_DETAIL`` HPAs only the ones needing
the most attention get their own panels (the title says which and how they were chosen). A last
panel zooms on the worst under-provisioned episode (the most unserved demand), which vanishes at
the scale of a whole day. Legends sit outside the axes, so they never hide a line or a marker.

Several runs (``compare.png``): demand and each variant's Ready capacity, then each variant's
replicas with its scale-ups and scale-downs, then each single-HPA variant's metrics as % of target;
a variant with several HPAs is summed over them.
"""

from __future__ import annotations

import bisect
import math
from pathlib import Path
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.dates as mdates  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from pyhpa.sim.html_report import clock  # noqa: E402
from pyhpa.sim.replay import observed_of  # noqa: E402
from pyhpa.sim.report import by_attention, short_intervals, short_ticks  # noqa: E402

MAX_DETAIL = 4  # HPAs with their own panels in one plot
PANEL_HEIGHT = 2.3  # inches
WIDTH = 13.0  # inches (the legends take the right margin)
DPI = 90


def _clock(times: Sequence[float]) -> list[Any]:
    """Clock times (UTC) for the x axis."""
    return [clock(t) for t in times]


def _unit(col: dict[str, Any]) -> str:
    if col["unit"] == "%":
        return "% of request"
    return "per-pod average" if col["unit"] == "avg" else "value"


def _capacity(trace: Any) -> list[float] | None:
    return trace.ready_capacity()


def _legend(ax: Any, x: float = 1.005) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(x, 1.0), borderaxespad=0.0, fontsize=8, frameon=False)


def _outages(ax: Any, scenario: Any) -> None:
    for i, o in enumerate(scenario.outages):
        ax.axvspan(clock(o.start), clock(o.end), color="grey", alpha=0.15,
                   label="metrics outage" if i == 0 else None)


def _shade_short(ax: Any, intervals: list[tuple[float, float]], color: str = "tab:red", label: str = "") -> None:
    """Shade the under-provisioned intervals (at least a few pixels wide, so a 15 s one shows)."""
    for i, (a, b) in enumerate(intervals):
        ax.axvspan(clock(a), clock(b), facecolor=color, alpha=0.18, linewidth=0.6, edgecolor=color,
                   label=f"{label}under-provisioned ({len(intervals)})" if i == 0 else None)


def _observed(ax: Any, observed: tuple[list[float], list[float], list[Any]]) -> None:
    """The observed replicas (the replay check's yardstick), and the intervals where observed
    usage was capped, hatched (unlike under-provisioning's plain red)."""
    times, values, saturated = observed
    ax.step(_clock(times), values, where="post", color="black", linestyle="--", linewidth=1.4, alpha=0.75,
            label="observed replicas")
    for i, s in enumerate(saturated):
        ax.axvspan(clock(s.start), clock(s.end), facecolor="none", edgecolor="tab:orange", hatch="//", linewidth=0.0,
                   label=f"observed usage saturated ({len(saturated)})" if i == 0 else None)


def _band(ax: Any, target: float, tolerance: float, label: str) -> None:
    ax.axhspan(target * (1 - tolerance), target * (1 + tolerance), color="tab:red", alpha=0.08,
               label=f"tolerance band (±{tolerance * 100:g} %)")
    ax.axhline(target, color="tab:red", linestyle="--", label=label)


def _scale_markers(ax: Any, events: Sequence[Any], start: float, color_up: str = "tab:orange",
                   color_down: str = "black", label: str = "", hollow_down: bool = False) -> None:
    """Scale-up (^) and scale-down (v) markers at the new replica count; ``hollow_down`` draws the
    scale-down ones as outlines in ``color_down`` (to tell runs apart on one panel)."""
    ups = [e for e in events if e.new > e.old]
    downs = [e for e in events if e.new < e.old]
    if ups:
        ax.scatter([clock(e.t) for e in ups], [e.new for e in ups], marker="^", s=22, color=color_up,
                   zorder=5, label=f"{label}scale up ({len(ups)})")
    if downs:
        look = {"facecolors": "white", "edgecolors": color_down} if hollow_down else {"color": color_down}
        ax.scatter([clock(e.t) for e in downs], [e.new for e in downs], marker="v", s=22, **look,
                   zorder=5, label=f"{label}scale down ({len(downs)})")


def _pick_detail(runs: list[Any], summaries: list[dict[str, Any]] | None) -> tuple[list[Any], str]:
    """The HPAs that get their own panels, and the words that say how they were chosen."""
    if len(runs) <= MAX_DETAIL:
        return runs, ""
    chosen = by_attention(runs, summaries)[:MAX_DETAIL]
    return chosen, (f"details for {len(chosen)} of {len(runs)} HPAs: the most under-provisioned pod-seconds, "
                    "then the most scale events (every HPA is in timeline.csv and summary.csv)")


def _fleet_panels(result: Any, ax_pods: Any, ax_short: Any) -> None:
    traces = [result.workloads[r.target] for r in result.hpas if r.target in result.workloads]
    if not traces:
        return
    x = _clock(traces[0].times)
    n = len(x)
    total_spec, total_ready, short = [0] * n, [0] * n, [0] * n
    with_cap = 0
    for tr in traces:  # one target at a time: a fleet's per-tick lists never all live at once
        for i, (spec, ready) in enumerate(zip(tr.replicas, tr.ready)):
            total_spec[i] += spec
            total_ready[i] += ready
        flags = short_ticks(tr)
        if flags is not None:
            with_cap += 1
            for i, flag in enumerate(flags):
                short[i] += flag
    ax_pods.step(x, total_spec, where="post", color="tab:blue", label="replicas (spec), all targets")
    ax_pods.step(x, total_ready, where="post", color="tab:green", alpha=0.8, label="Ready pods, all targets")
    ax_pods.set_ylabel("pods (count)")
    ax_pods.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax_pods.set_title(f"fleet: {len(result.hpas)} HPAs" + (f" ({result.label})" if result.label else ""))
    ax_short.step(x, short, where="post", color="tab:red",
                  label=f"under-provisioned HPAs (of {with_cap} with a capacity)")
    ax_short.set_ylabel("HPAs (count)")
    ax_short.set_ylim(0, max(1, max(short)) * 1.1)
    ax_short.yaxis.set_major_locator(MaxNLocator(integer=True))


def _hpa_panels(result: Any, run: Any, ax_d: Any, ax_r: Any, ax_m: Any) -> None:
    scenario = result.scenario
    trace = result.workloads.get(run.target)
    unit = "demand"
    if trace is not None:
        x = _clock(trace.times)
        unit = trace.demand_signal or "demand"
        ax_d.step(x, trace.demand, where="post", label=f"demand ({unit})", color="tab:red")
        cap = _capacity(trace)
        if cap is not None:
            ax_d.step(x, cap, where="post", label="Ready capacity", color="tab:green")
            intervals = short_intervals(trace, scenario.end)
            for i, ax in enumerate((ax_d, ax_r, ax_m)):  # labelled once, on the demand axes
                _shade_short(ax, intervals, label="" if i == 0 else "_")
        ax_r.step(x, trace.replicas, where="post", label="replicas (spec)", color="tab:blue")
        ax_r.step(x, trace.ready, where="post", label="Ready pods", color="tab:green", alpha=0.7)
    observed = observed_of(scenario, run.target)
    if observed is not None:
        _observed(ax_r, observed)
    records = run.records
    rx = _clock([r.t for r in records])
    ax_r.step(rx, [r.desired if r.desired is not None else math.nan for r in records], where="post",
              label="status.desiredReplicas", color="tab:purple", alpha=0.5, linestyle="--")
    _scale_markers(ax_r, run.scale_events, scenario.start)
    columns = run.metrics
    tolerance = scenario.config.tolerance
    if len(columns) == 1:
        col = columns[0]
        ax_m.plot(rx, [r.currents[0] if r.currents[0] is not None else math.nan for r in records],
                  label=f"{col['metric']} current", color="tab:blue")
        if col["target"] is not None:
            _band(ax_m, col["target"], tolerance, f"target ({col['target']:g})")
        ax_m.set_ylabel(f"{col['metric']}\n({_unit(col)})")
    elif columns:
        for k, col in enumerate(columns):
            target = col["target"]
            ys = [r.currents[k] / target * 100.0 if r.currents[k] is not None and target else math.nan for r in records]
            ax_m.plot(rx, ys, label=f"{col['metric']}", linewidth=1.0)
        _band(ax_m, 100.0, tolerance, "target (100 %)")
        ax_m.set_ylabel("metric\n(% of target)")
    ax_d.set_title(f"{run.key} -> {'/'.join(run.target[1:])}")
    ax_d.set_ylabel(f"demand\n({unit})")
    ax_r.set_ylabel("pods (count)")
    ax_r.yaxis.set_major_locator(MaxNLocator(integer=True))


def worst_episode(result: Any, runs: Sequence[Any]) -> tuple[Any, Any, float, float, float] | None:
    """(run, trace, start, end, unserved demand) of the under-provisioned interval with the most
    unserved demand among ``runs`` (None when none was under-provisioned)."""
    best = None
    end = result.scenario.end
    for run in runs:
        trace = result.workloads.get(run.target)
        if trace is None or trace.capacity is None:
            continue
        times = trace.times
        for a, b in short_intervals(trace, end):
            i = bisect.bisect_left(times, a)
            unserved = 0.0
            while i < len(times) and times[i] < b:
                dt = (times[i + 1] if i + 1 < len(times) else end) - times[i]
                unserved += max(0.0, trace.demand[i] - trace.capacity.of(trace.ready[i])) * dt
                i += 1
            if best is None or unserved > best[4]:
                best = (run, trace, a, b, unserved)
    return best


def _zoom_panel(result: Any, episode: tuple[Any, Any, float, float, float], ax: Any) -> None:
    """Demand, Ready capacity and Ready pods around the worst episode (its length on each side,
    at least 5 minutes)."""
    run, trace, a, b, unserved = episode
    scenario = result.scenario
    margin = max(300.0, b - a)
    lo, hi = max(scenario.start, a - margin), min(scenario.end, b + margin)
    idx = [i for i, t in enumerate(trace.times) if lo <= t <= hi]
    x = _clock([trace.times[i] for i in idx])
    unit = trace.demand_signal or "demand"
    ax.step(x, [trace.demand[i] for i in idx], where="post", color="tab:red", label=f"demand ({unit})")
    ax.step(x, [trace.capacity.of(trace.ready[i]) for i in idx], where="post", color="tab:green",
            label="Ready capacity")
    _shade_short(ax, [(max(p, lo), min(q, hi)) for p, q in short_intervals(trace, scenario.end) if q >= lo and p <= hi])
    pods = ax.twinx()
    pods.step(x, [trace.ready[i] for i in idx], where="post", color="tab:blue", alpha=0.6, linestyle=":")
    pods.step(x, [trace.replicas[i] for i in idx], where="post", color="tab:blue", alpha=0.6)
    pods.set_ylabel("pods (count)\nspec solid, Ready dotted", color="tab:blue", fontsize=8)
    pods.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(clock(lo), clock(hi))
    ax.set_ylabel(f"demand\n({unit})")
    ax.set_title(f"zoom: worst under-provisioned episode, {run.key}, {clock(a):%H:%M:%S}-{clock(b):%H:%M:%S} UTC "
                 f"({b - a:g} s, {unserved:,.0f} {unit}·s unserved)", fontsize=10)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(ax.xaxis.get_major_locator()))
    ax.set_xlabel("time (UTC)")


def plot_run(result: Any, path: Path, summaries: list[dict[str, Any]] | None = None) -> Path:
    """The run's plot; ``summaries`` (``report.summarize``) choose the detailed HPAs of a fleet."""
    scenario = result.scenario
    runs = result.hpas
    detail, chosen_by = _pick_detail(runs, summaries)
    fleet = len(runs) > 1
    episode = worst_episode(result, detail)
    n_main = (2 if fleet else 0) + 3 * len(detail)
    n_panels = n_main + (1 if episode is not None else 0)
    fig, axes = plt.subplots(n_panels, 1, figsize=(WIDTH, PANEL_HEIGHT * n_panels), squeeze=False)
    flat = [a[0] for a in axes]
    for ax in flat[1:n_main]:
        ax.sharex(flat[0])
    k = 0
    if fleet:
        _fleet_panels(result, flat[0], flat[1])
        k = 2
    for run in detail:
        _hpa_panels(result, run, flat[k], flat[k + 1], flat[k + 2])
        k += 3
    if episode is not None:
        _zoom_panel(result, episode, flat[-1])
    for i, ax in enumerate(flat):
        if i < n_main:
            _outages(ax, scenario)
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(ax.xaxis.get_major_locator()))
        ax.grid(True, alpha=0.3)
        _legend(ax, 1.005 if i < n_main else 1.07)  # the zoom's pod axis takes the right edge
    for ax in flat[:n_main - 1]:
        ax.tick_params(labelbottom=False)
    flat[n_main - 1].set_xlabel("time (UTC)")
    if chosen_by:
        fig.suptitle(chosen_by, fontsize=9, y=1.0)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def _summed(result: Any) -> tuple[list[Any], list[float], list[float] | None, list[float] | None, list[Any]]:
    """(clock times, replicas, Ready capacity, demand) summed over a variant's HPA targets, and its
    scale events (None where some target has no capacity; demand only for a single target)."""
    traces = [result.workloads[r.target] for r in result.hpas if r.target in result.workloads]
    if not traces:
        return [], [], None, None, []
    x = _clock(traces[0].times)
    n = len(x)
    replicas = [sum(tr.replicas[i] for tr in traces) for i in range(n)]
    caps = [tr.ready_capacity() for tr in traces]
    capacity = None if any(c is None for c in caps) else [sum(c[i] for c in caps) for i in range(n)]  # type: ignore[index]
    demand = list(traces[0].demand) if len(traces) == 1 else None
    events = [e for r in result.hpas for e in r.scale_events] if len(result.hpas) == 1 else []
    return x, replicas, capacity, demand, events


def plot_compare(results: list[Any], path: Path) -> Path:
    """Demand and each variant's Ready capacity (its under-provisioned intervals shaded); each
    variant's replicas with its scale events; each single-HPA variant's metrics as % of target."""
    fig, (ax_d, ax_r, ax_m) = plt.subplots(3, 1, figsize=(WIDTH, 3 * 3.2), sharex=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    drawn_demand = False
    unit = "demand"
    for i, result in enumerate(results):
        color = colors[i % len(colors)]
        x, replicas, capacity, demand, events = _summed(result)
        if not x:
            continue
        n_hpas = len(result.hpas)
        what = result.label + (f" (sum of {n_hpas} HPAs)" if n_hpas > 1 else "")
        if demand is not None:
            trace = result.workloads[result.hpas[0].target]
            unit = trace.demand_signal or unit
            if not drawn_demand:
                ax_d.step(x, demand, where="post", color="black", label=f"demand ({unit})")
                drawn_demand = True
            if trace.capacity is not None:
                _shade_short(ax_d, short_intervals(trace, result.scenario.end), color=color, label=f"{result.label}: ")
        if capacity is not None:
            ax_d.step(x, capacity, where="post", color=color, alpha=0.8, label=f"{what}: Ready capacity")
        ax_r.step(x, replicas, where="post", color=color, label=f"{what}: replicas")
        if events:
            _scale_markers(ax_r, events, 0.0, color, color, f"{result.label}: ", hollow_down=True)
        if n_hpas == 1:
            run = result.hpas[0]
            records = run.records
            rx = _clock([r.t for r in records])
            for k, col in enumerate(run.metrics):
                target = col["target"]
                ys = [r.currents[k] / target * 100.0 if r.currents[k] is not None and target else math.nan
                      for r in records]
                ax_m.plot(rx, ys, color=color, linewidth=1.0, linestyle=["-", ":", "-."][k % 3],
                          label=f"{result.label}: {col['metric']}")
    if results:
        _band(ax_m, 100.0, results[0].scenario.config.tolerance, "target (100 %)")
    ax_d.set_ylabel(f"demand\n({unit})")
    ax_r.set_ylabel("replicas (count)")
    ax_m.set_ylabel("metric\n(% of target)")
    ax_r.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax_m.set_xlabel("time (UTC)")
    for ax in (ax_d, ax_r, ax_m):
        if results:
            _outages(ax, results[0].scenario)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(ax.xaxis.get_major_locator()))
        ax.grid(True, alpha=0.3)
        _legend(ax)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path
