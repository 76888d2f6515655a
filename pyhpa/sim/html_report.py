"""``report.html``: a self-contained interactive report of a run, or of ``--compare`` variants overlaid.

One file (plotly.js inlined), opened by any browser without a network. Three panels on one clock-
time axis (UTC): demand against each variant's Ready capacity, pods (spec replicas, Ready pods,
``status.desiredReplicas``, scale-ups and scale-downs whose hover says the decision and its reason),
and the HPA's metrics against the target with the tolerance band. Under-provisioned intervals are
shaded in the variant's colour across the panels, metrics outages in grey. A menu picks the HPA
(a fleet: the ``MAX_HPAS`` needing the most attention); zoom by dragging, the range buttons or the
slider. The summary table follows the chart.

Step series (replicas, Ready pods, capacity) are written only where they change, so a long run
stays a few MB; demand keeps every tick.
"""

from __future__ import annotations

import bisect
import html
import math
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any, Sequence

from pyhpa.sim.report import SUMMARY_COLUMNS, by_attention, short_intervals

MAX_HPAS = 12  # HPAs selectable in one report
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
UNIT_WORDS = MappingProxyType({"%": "% of request", "avg": "per-pod average", "": "value"})
# One run: a colour per series (as plot.png); compared variants: a colour per variant.
SERIES = MappingProxyType({"capacity": "#2ca02c", "replicas": "#1f77b4", "ready": "#2ca02c", "desired": "#9467bd",
                            "up": "#ff7f0e", "down": "#333333", "short": "#d62728", "metrics": ["#1f77b4", "#ff7f0e", "#9467bd"]})


def clock(ts: float) -> datetime:
    """Epoch seconds as a naive UTC datetime (the axis is labelled UTC)."""
    return datetime.fromtimestamp(ts, tz=timezone.utc).replace(tzinfo=None)


def _axis(times: Sequence[float]) -> Any:
    """Clock times as a numpy datetime64 array (UTC): plotly takes arrays without copying them
    value by value, which a long run's lists cost seconds."""
    import numpy as np

    return (np.asarray(times, dtype="float64") * 1000.0).round().astype("datetime64[ms]")


def _values(values: Sequence[Any]) -> Any:
    import numpy as np

    return np.asarray([math.nan if v is None else v for v in values], dtype="float64")


def _changes(times: Sequence[float], values: Sequence[float], end: float) -> tuple[Any, Any]:
    """A step series reduced to the points where it changes, and its last value at ``end``."""
    xs: list[float] = []
    ys: list[float] = []
    last: Any = object()
    for t, v in zip(times, values):
        if v != last and not (v != v and last != last):  # NaN runs are one run
            xs.append(t)
            ys.append(v)
            last = v
    if ys:
        xs.append(end)
        ys.append(ys[-1])
    return _axis(xs), _values(ys)


def _rgba(color: str, alpha: float) -> str:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _metric_mode(runs: list[Any]) -> dict[str, Any] | None:
    """One metric with the same label, unit and target in every variant: plotted in its units;
    else (None) each metric as a percentage of its target."""
    cols = [r.metrics for r in runs]
    if all(len(c) == 1 for c in cols) and len({(c[0]["metric"], c[0]["unit"], c[0]["target"]) for c in cols}) == 1:
        return cols[0][0]
    return None


def _decision(run: Any, event: Any) -> str:
    """What the HPA decided at a scale event and why: the event message, then the status of that sync."""
    log = run.log
    i = bisect.bisect_left(log.t, event.t)
    lines = [f"<b>{event.old} → {event.new}</b> at {clock(event.t):%Y-%m-%d %H:%M:%S} UTC",
             html.escape(event.message)]
    if i < len(log) and log.t[i] == event.t:
        rec = log.record(i)
        for col, cur in zip(run.metrics, rec.currents):
            lines.append(html.escape(f"{col['metric']}: {cur if cur is not None else '-'} "
                                     f"(target {col['target']}{'%' if col['unit'] == '%' else ''})"))
        for ctype, status, reason in rec.conditions:
            lines.append(html.escape(f"{ctype}={status} {reason or ''}"))
    return "<br>".join(lines)


def _hpa_traces(results: list[Any], key: str, group: int, go: Any) -> tuple[list[tuple[Any, int, int]], list[dict]]:
    """(trace, row, group) for one HPA across the variants, and its shapes (shading)."""
    out: list[tuple[Any, int, int]] = []
    shapes: list[dict] = []
    compare = len(results) > 1
    runs = [next((r for r in res.hpas if r.key == key), None) for res in results]
    present = [r for r in runs if r is not None]
    mode = _metric_mode(present)
    demand_drawn = False
    for vi, (result, run) in enumerate(zip(results, runs)):
        if run is None:
            continue
        sc = result.scenario
        color = COLORS[vi % len(COLORS)]

        def hue(kind: str, k: int = 0, color: str = color) -> str:
            if compare:
                return color
            c = SERIES[kind]
            return c[k % len(c)] if isinstance(c, list) else c

        prefix = f"{result.label or 'run'}: " if compare else ""
        trace = result.workloads.get(run.target)
        if trace is not None and len(trace.times):
            times = trace.times
            if not demand_drawn and trace.demand_signal:
                out.append((go.Scatter(x=_axis(times), y=_values(trace.demand), name=f"demand ({trace.demand_signal})",
                                       line={"color": "black", "width": 1.2, "shape": "hv"}), 1, group))
                demand_drawn = True
            cap = trace.ready_capacity()
            if cap is not None:
                xs, ys = _changes(times, cap, sc.end)
                out.append((go.Scatter(x=xs, y=ys, name=f"{prefix}Ready capacity", line={"color": hue("capacity"), "shape": "hv"}),
                            1, group))
                intervals = short_intervals(trace, sc.end)
                out.append((go.Scatter(x=[None], y=[None], mode="markers", hoverinfo="skip",
                                       name=f"{prefix}under-provisioned, shaded ({len(intervals)} "
                                            f"interval{'' if len(intervals) == 1 else 's'})",
                                       marker={"symbol": "square", "size": 12, "color": _rgba(hue("short"), 0.35)}),
                            1, group))
                for a, b in intervals:
                    shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": clock(a), "x1": clock(b),
                                   "y0": 0, "y1": 1, "fillcolor": _rgba(hue("short"), 0.18), "line": {"width": 0},
                                   "layer": "below", "name": f"{prefix}under-provisioned"})
            xs, ys = _changes(times, trace.replicas, sc.end)
            out.append((go.Scatter(x=xs, y=ys, name=f"{prefix}replicas (spec)", line={"color": hue("replicas"), "shape": "hv"}),
                        2, group))
            xs, ys = _changes(times, trace.ready, sc.end)
            out.append((go.Scatter(x=xs, y=ys, name=f"{prefix}Ready pods",
                                   line={"color": hue("ready"), "shape": "hv", "dash": "dot"}), 2, group))
        log = run.log
        records = [log.record(i) for i in range(len(log))]
        xs, ys = _changes(log.t, [math.nan if r.desired is None else r.desired for r in records], sc.end)
        out.append((go.Scatter(x=xs, y=ys, name=f"{prefix}status.desiredReplicas", opacity=0.6,
                               line={"color": hue("desired"), "shape": "hv", "dash": "dash", "width": 1}), 2, group))
        for up in (True, False):
            events = [e for e in run.scale_events if (e.new > e.old) == up]
            if events:
                out.append((go.Scatter(
                    x=[clock(e.t) for e in events], y=[e.new for e in events], mode="markers",
                    name=f"{prefix}scale {'up' if up else 'down'} ({len(events)})",
                    marker={"symbol": "triangle-up" if up else "triangle-down", "size": 9,
                            "color": hue("up" if up else "down"),
                            "line": {"width": 1, "color": "black"}},
                    hovertext=[_decision(run, e) for e in events], hoverinfo="text"), 2, group))
        rx = _axis(log.t)
        for k, col in enumerate(run.metrics):
            target = col["target"]
            if mode is not None:
                ys = _values([r.currents[k] for r in records])
            else:
                ys = _values([r.currents[k] / target * 100.0 if r.currents[k] is not None and target else None
                              for r in records])
            out.append((go.Scatter(x=rx, y=ys, name=f"{prefix}{col['metric']}", connectgaps=False,
                                   line={"color": hue("metrics", k), "width": 1.2,
                                         "dash": ["solid", "dot", "dashdot"][k % 3] if compare else "solid"}),
                        3, group))
    # The target and the tolerance band (from the first variant's controller flags).
    sc = results[0].scenario
    tol = sc.config.tolerance
    target = (mode["target"] if mode is not None else 100.0) if present else None
    if target is not None:
        x0, x1 = clock(sc.start), clock(sc.end)
        lo, hi = target * (1 - tol), target * (1 + tol)
        out.append((go.Scatter(x=[x0, x1, x1, x0, x0], y=[lo, lo, hi, hi, lo], fill="toself", mode="lines",
                               fillcolor="rgba(214,39,40,0.10)", line={"width": 0}, hoverinfo="skip",
                               name=f"tolerance band (±{tol * 100:g} %)"), 3, group))
        out.append((go.Scatter(x=[x0, x1], y=[target, target], mode="lines", name=f"target ({target:g})",
                               line={"color": "#d62728", "dash": "dash", "width": 1.2}), 3, group))
    for o in sc.outages:
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": clock(o.start), "x1": clock(o.end),
                       "y0": 0, "y1": 1, "fillcolor": "rgba(120,120,120,0.15)", "line": {"width": 0},
                       "layer": "below", "name": "metrics outage"})
    return out, shapes


def _metric_axis(results: list[Any], key: str) -> str:
    runs = [r for res in results for r in res.hpas if r.key == key]
    mode = _metric_mode(runs)
    if mode is None:
        return "metric (% of target)"
    words = "% of request" if mode["unit"] == "%" and mode["type"] in ("Resource", "ContainerResource") \
        else UNIT_WORDS.get(mode["unit"], mode["unit"])
    return f"{mode['metric']} ({words})"


def build_figure(results: list[Any], summaries: list[dict[str, Any]] | None = None) -> Any:
    """The report's plotly figure: every chosen HPA's traces, the first one's shown."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    first = results[0]
    keys: list[str] = []
    for run in by_attention(list(first.hpas), [s for s in summaries or [] if s.get("label") in (None, first.label or None)]):
        keys.append(run.key)
    for res in results[1:]:
        keys += [r.key for r in res.hpas if r.key not in keys]
    keys = keys[:MAX_HPAS]
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.05, row_heights=[0.38, 0.32, 0.30])
    groups: list[int] = []
    shapes_of: list[list[dict]] = []
    titles: list[tuple[str, str, str]] = []
    for g, key in enumerate(keys):
        traces, shapes = _hpa_traces(results, key, g, go)
        for tr, row, group in traces:
            tr.visible = g == 0
            tr.legendgroup = tr.name
            fig.add_trace(tr, row=row, col=1)
            groups.append(group)
        shapes_of.append(shapes)
        sig = next((res.workloads[r.target].demand_signal for res in results for r in res.hpas
                    if r.key == key and r.target in res.workloads), None)
        titles.append((f"demand ({sig})" if sig else "demand", "pods", _metric_axis(results, key)))
    sc = first.scenario
    head = sc.name + (" — " + ", ".join(r.label for r in results) if len(results) > 1 else "")
    buttons = []
    for g, key in enumerate(keys):
        buttons.append({"label": key, "method": "update",
                        "args": [{"visible": [x == g for x in groups]},
                                 {"shapes": shapes_of[g], "title.text": f"{head}: {key}",
                                  "yaxis.title.text": titles[g][0], "yaxis3.title.text": titles[g][2]}]})
    fig.update_layout(
        title={"text": f"{head}: {keys[0]}" if keys else f"{head}: no HPAs"},
        height=900, hovermode="x unified", template="plotly_white", shapes=shapes_of[0] if keys else [],
        legend={"orientation": "v", "x": 1.01, "y": 1.0, "font": {"size": 11}},
        margin={"l": 70, "r": 260, "t": 90, "b": 50},
        updatemenus=[{"buttons": buttons, "direction": "down", "x": 0.0, "xanchor": "left", "y": 1.09,
                      "yanchor": "bottom", "showactive": True}] if len(keys) > 1 else [],
    )
    fig.update_xaxes(type="date", showspikes=True, spikemode="across", spikethickness=1)
    fig.update_xaxes(row=1, col=1, rangeselector={"buttons": [
        {"count": 15, "label": "15m", "step": "minute", "stepmode": "backward"},
        {"count": 1, "label": "1h", "step": "hour", "stepmode": "backward"},
        {"count": 6, "label": "6h", "step": "hour", "stepmode": "backward"},
        {"step": "all", "label": "all"}], "y": 1.02, "x": 0.35})
    fig.update_xaxes(row=3, col=1, title_text="time (UTC)", rangeslider={"visible": True, "thickness": 0.05})
    if keys:
        fig.update_yaxes(row=1, col=1, title_text=titles[0][0], rangemode="tozero")
        fig.update_yaxes(row=2, col=1, title_text=titles[0][1], rangemode="tozero")
        fig.update_yaxes(row=3, col=1, title_text=titles[0][2], rangemode="tozero")
    return fig


def _summary_html(summaries: list[dict[str, Any]]) -> str:
    cols = [c for c in SUMMARY_COLUMNS if c[0] != "label" or any(s.get("label") for s in summaries)]
    head = "".join(f"<th>{html.escape(h)}</th>" for _, h in cols)
    rows = []
    for s in summaries:
        cells = []
        for key, _ in cols:
            v = s.get(key)
            cells.append("-" if v is None else (f"{v:,.2f}" if isinstance(v, float) else str(v)))
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return f"<table class='summary'><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


_STYLE = """body{font-family:system-ui,sans-serif;margin:16px;color:#222}
table.summary{border-collapse:collapse;font-size:13px;margin-top:12px}
table.summary th,table.summary td{border:1px solid #ccc;padding:3px 8px;text-align:right}
table.summary th{background:#f3f3f3}.note{color:#555;font-size:13px}.warn{color:#a15c00;font-size:13px}"""


def write_html_report(results: list[Any], path: Path, summaries: list[dict[str, Any]] | None = None,
                      warnings: Sequence[str] = ()) -> Path:
    """Write ``report.html`` for one result or several variants on the same trace."""
    fig = build_figure(results, summaries)
    chart = fig.to_html(full_html=False, include_plotlyjs=True, div_id="timeline",
                        config={"displaylogo": False, "scrollZoom": True, "responsive": True})
    sc = results[0].scenario
    n = max(len(r.hpas) for r in results)
    picked = (f"<p class='note'>The menu holds the {MAX_HPAS} of {n} HPAs needing the most attention (most "
              "under-provisioned pod-seconds, then most scale events); every HPA is in the summary below.</p>"
              if n > MAX_HPAS else "")
    warn = "".join(f"<p class='warn'>warning: {html.escape(w)}</p>" for w in warnings)
    page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(sc.name)} — pyhpa simulate"
            f"</title><style>{_STYLE}</style></head><body>"
            f"<h2>{html.escape(sc.name)}</h2><p class='note'>{clock(sc.start):%Y-%m-%d %H:%M} UTC, "
            f"{sc.duration / 3600:g} h. Shaded: under-provisioned (demand above Ready capacity), grey: metrics "
            "outage. Drag to zoom, double-click to reset; hover a ▲/▼ for the decision and its reason.</p>"
            f"{warn}{picked}{chart}<h3>Summary</h3>{_summary_html(summaries or [])}</body></html>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path
