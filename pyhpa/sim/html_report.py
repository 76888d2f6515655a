"""``report.html``: a self-contained interactive report of a run, or of ``--compare`` variants overlaid.

One file (plotly.js inlined), opened by any browser without a network. Three panels on one clock-
time axis (UTC): demand against each variant's Ready capacity, pods (spec replicas, Ready pods,
``status.desiredReplicas``, scale-ups and scale-downs whose hover says the decision and its reason),
and the HPA's metrics against the target with the tolerance band. Under-provisioned intervals are
shaded in the variant's colour across the panels, metrics outages in grey. A short episode stays
visible at any zoom: its shading is drawn at least ``MIN_EPISODE_SHARE`` of the run wide and a
marker (fixed size on screen) sits on it; the worst episodes are listed under the chart, each
zooming the chart on it when clicked. Hover values carry their units, and a scale event whose
metrics proposed another count (a limit or stabilization applied) shows that proposal. A menu picks the HPA
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

from pyhpa.sim.replay import observed_of, replay_lines
from pyhpa.sim.report import SUMMARY_COLUMNS, by_attention, duration_text, episodes, figure_cell

MAX_HPAS = 12  # HPAs selectable in one report
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
UNIT_WORDS = MappingProxyType({"%": "% of request", "avg": "per-pod average", "": "value"})
# One run: a colour per series (as plot.png); compared variants: a colour per variant.
SERIES = MappingProxyType({"capacity": "#2ca02c", "replicas": "#1f77b4", "ready": "#2ca02c", "desired": "#9467bd",
                            "up": "#ff7f0e", "down": "#333333", "short": "#d62728", "metrics": ("#1f77b4", "#ff7f0e", "#9467bd")})
OBSERVED = "#000000"  # the observed replicas (replay check): the same in every variant
EPISODE = "#e4007c"  # under-provisioned episode markers: a colour no other series uses
MIN_EPISODE_SHARE = 0.004  # an episode's shading is drawn at least this share of the run wide
MAX_EPISODES = 10  # episodes in the list under the chart
SATURATED = "#e8a33d"  # observed intervals where usage was capped


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


def with_unit(value: Any, col: dict[str, Any]) -> str:
    """A metric value with its unit: ``133% of request``, ``12.5 per pod``, ``30``."""
    if value is None:
        return "-"
    text = f"{value:.4g}" if isinstance(value, float) else str(value)
    unit = col["unit"]
    if unit == "%":
        return f"{text}% of request" if col.get("type") in ("Resource", "ContainerResource") else f"{text}%"
    return f"{text} per pod" if unit == "avg" else text


def _decision(run: Any, event: Any) -> str:
    """What the HPA decided at a scale event and why: the event message, the metrics' own proposal
    where a limit or stabilization changed it, then the status of that sync."""
    log = run.log
    i = bisect.bisect_left(log.t, event.t)
    lines = [f"<b>{event.old} → {event.new}</b> at {clock(event.t):%Y-%m-%d %H:%M:%S} UTC",
             html.escape(event.message)]
    limited = ""
    if i < len(log) and log.t[i] == event.t:
        rec = log.record(i)
        limited = next((reason or "" for ctype, status, reason in rec.conditions
                        if ctype == "ScalingLimited" and status == "True"), "")
    if event.proposal is not None:
        why = f"limited: {limited}" if limited else "stabilized"
        lines.append(html.escape(f"the metrics proposed {event.proposal} replicas ({why}, uncapped)"))
    if i < len(log) and log.t[i] == event.t:
        for col, cur in zip(run.metrics, rec.currents):
            lines.append(html.escape(f"{col['metric']}: {with_unit(cur, col)} (target {with_unit(col['target'], col)})"))
        for ctype, status, reason in rec.conditions:
            lines.append(html.escape(f"{ctype}={status} {reason or ''}"))
    return "<br>".join(lines)


def _episode_text(ep: dict[str, Any]) -> str:
    return (f"under-provisioned from {clock(ep['start']):%Y-%m-%d %H:%M:%S} UTC for {duration_text(ep['end'] - ep['start'])}: "
            f"up to {ep['maxPodsShort']} pods short, {ep['podSeconds']:g} pod-s")


def _hpa_traces(results: list[Any], key: str, group: int, go: Any) -> tuple[list[tuple[Any, int, int]], list[dict]]:
    """(trace, row, group) for one HPA across the variants, and its shapes (shading)."""
    out: list[tuple[Any, int, int]] = []
    shapes: list[dict] = []
    compare = len(results) > 1
    runs = [next((r for r in res.hpas if r.key == key), None) for res in results]
    present = [r for r in runs if r is not None]
    mode = _metric_mode(present)
    demand_drawn = observed_drawn = False
    for vi, (result, run) in enumerate(zip(results, runs)):
        if run is None:
            continue
        sc = result.scenario
        color = COLORS[vi % len(COLORS)]

        def hue(kind: str, k: int = 0, color: str = color) -> str:
            if compare:
                return color
            c = SERIES[kind]
            return c[k % len(c)] if isinstance(c, tuple) else c

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
                eps = episodes(trace, sc.end)
                out.append((go.Scatter(x=[None], y=[None], mode="markers", hoverinfo="skip",
                                       name=f"{prefix}under-provisioned, shaded ({len(eps)} "
                                            f"interval{'' if len(eps) == 1 else 's'})",
                                       marker={"symbol": "square", "size": 12, "color": _rgba(hue("short"), 0.35)}),
                            1, group))
                least = sc.duration * MIN_EPISODE_SHARE
                for ep in eps:
                    a, b = ep["start"], ep["end"]
                    if b - a < least:  # widened about its middle, to stay visible zoomed out
                        a, b = (a + b - least) / 2, (a + b + least) / 2
                    shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": clock(a), "x1": clock(b),
                                   "y0": 0, "y1": 1, "fillcolor": _rgba(hue("short"), 0.18), "line": {"width": 0},
                                   "layer": "below", "name": f"{prefix}under-provisioned"})
                if eps:
                    out.append((go.Scatter(
                        x=[clock((e["start"] + e["end"]) / 2) for e in eps], y=[e["peakDemand"] for e in eps],
                        mode="markers", name=f"{prefix}under-provisioned episodes ({len(eps)})",
                        marker={"symbol": "diamond", "size": 11, "color": EPISODE, "line": {"width": 1, "color": "white"}},
                        hovertext=[html.escape(_episode_text(e)) for e in eps], hoverinfo="text"), 1, group))
            xs, ys = _changes(times, trace.replicas, sc.end)
            out.append((go.Scatter(x=xs, y=ys, name=f"{prefix}replicas (spec)", line={"color": hue("replicas"), "shape": "hv"}),
                        2, group))
            observed = observed_of(sc, run.target) if not observed_drawn else None
            if observed is not None:
                out += _observed_traces(observed, shapes, go, group)
                observed_drawn = True
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
            # The value and the target with their units (a value is placed in the template as text).
            hover = (f"%{{y:.4g}}% of target ({with_unit(target, col)})" if mode is None
                     else f"{with_unit('%{y:.4g}', col)} (target {with_unit(target, col)})")
            out.append((go.Scatter(x=rx, y=ys, name=f"{prefix}{col['metric']}", connectgaps=False,
                                   hovertemplate=hover,
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


def _observed_traces(observed: tuple[list[float], list[float], list[Any]], shapes: list[dict], go: Any,
                     group: int) -> list[tuple[Any, int, int]]:
    """The observed replicas (the replay check's yardstick) on the pods panel, and the intervals
    where observed usage was capped shaded apart from under-provisioning."""
    times, values, saturated = observed
    xs, ys = _changes(times, values, times[-1])
    out = [(go.Scatter(x=xs, y=ys, name="observed replicas", line={"color": OBSERVED, "shape": "hv", "width": 2,
                                                                   "dash": "longdash"}, opacity=0.7), 2, group)]
    if saturated:
        out.append((go.Scatter(x=[None], y=[None], mode="markers", hoverinfo="skip",
                               name=f"observed usage saturated, shaded ({len(saturated)})",
                               marker={"symbol": "square", "size": 12, "color": _rgba(SATURATED, 0.45)}), 2, group))
        for s in saturated:
            shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": clock(s.start), "x1": clock(s.end),
                           "y0": 0, "y1": 1, "fillcolor": _rgba(SATURATED, 0.22), "line": {"width": 0},
                           "layer": "below", "name": f"observed usage saturated: {s.reason}"})
    return out


def _metric_axis(results: list[Any], key: str) -> str:
    runs = [r for res in results for r in res.hpas if r.key == key]
    mode = _metric_mode(runs)
    if mode is None:
        return "metric (% of target)"
    words = "% of request" if mode["unit"] == "%" and mode["type"] in ("Resource", "ContainerResource") \
        else UNIT_WORDS.get(mode["unit"], mode["unit"])
    return f"{mode['metric']} ({words})"


def _keys(results: list[Any], summaries: list[dict[str, Any]] | None) -> list[str]:
    """The HPAs the report offers, the one needing the most attention first (shown)."""
    first = results[0]
    keys: list[str] = []
    for run in by_attention(list(first.hpas), [s for s in summaries or [] if s.get("label") in (None, first.label or None)]):
        keys.append(run.key)
    for res in results[1:]:
        keys += [r.key for r in res.hpas if r.key not in keys]
    return keys[:MAX_HPAS]


def _episode_list(results: list[Any], summaries: list[dict[str, Any]] | None) -> str:
    """The worst under-provisioned episodes of the HPA shown first (every variant's), most pod-s
    short first, each a link zooming the chart on it."""
    keys = _keys(results, summaries)
    if not keys:
        return ""
    found = []
    for res in results:
        run = next((r for r in res.hpas if r.key == keys[0]), None)
        trace = res.workloads.get(run.target) if run is not None else None
        if trace is not None and trace.capacity is not None:
            found += [(ep, res.label) for ep in episodes(trace, res.scenario.end)]
    if not found:
        return ""
    found.sort(key=lambda e: (-e[0]["podSeconds"], e[0]["start"]))
    items = []
    for ep, label in found[:MAX_EPISODES]:
        pad = max(300.0, 2 * (ep["end"] - ep["start"]))
        a, b = (f"{clock(t):%Y-%m-%d %H:%M:%S}" for t in (ep["start"] - pad, ep["end"] + pad))
        text = _episode_text(ep) + (f" ({label})" if len(results) > 1 else "")
        items.append(f"<li><a href='#timeline' onclick=\"return zoomTo('{a}','{b}')\">{html.escape(text)}</a></li>")
    more = f" ({len(found)} in all)" if len(found) > MAX_EPISODES else ""
    return (f"<h3>Worst under-provisioned episodes of {html.escape(keys[0])}{more}</h3><p class='note'>Click one to "
            f"zoom the chart on it.</p><ol class='episodes'>{''.join(items)}</ol>")


_ZOOM = """<script>function zoomTo(a,b){var d=document.getElementById('timeline');
Plotly.relayout(d,{'xaxis.range':[a,b],'xaxis2.range':[a,b],'xaxis3.range':[a,b]});d.scrollIntoView();return false;}
</script>"""


def build_figure(results: list[Any], summaries: list[dict[str, Any]] | None = None) -> Any:
    """The report's plotly figure: every chosen HPA's traces, the first one's shown."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    first = results[0]
    keys = _keys(results, summaries)
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
            cells.append(figure_cell(s, key, "{:,.2f}"))
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
    replay = "".join(f"<p class='note'>{html.escape(line)}</p>" for line in replay_lines(summaries or []))
    page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(sc.name)} — pyhpa simulate"
            f"</title><style>{_STYLE}</style></head><body>"
            f"<h2>{html.escape(sc.name)}</h2><p class='note'>{clock(sc.start):%Y-%m-%d %H:%M} UTC, "
            f"{duration_text(sc.duration)}. Shaded: under-provisioned (demand above Ready capacity; a short episode "
            "drawn wider, with a ◆ on it), grey: metrics outage. Drag to zoom, double-click to reset; hover a ▲/▼ "
            "for the decision and its reason.</p>"
            f"{warn}{replay}{picked}{chart}{_episode_list(results, summaries)}{_ZOOM}"
            f"<h3>Summary</h3>{_summary_html(summaries or [])}</body></html>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path
