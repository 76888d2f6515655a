"""``pyhpa tune``'s outputs: ``frontier.csv``, ``recommended.yaml`` and ``report.html``.

* ``frontier.csv`` -- every evaluated candidate (the first, ``current``, is the scenario's own
  HPAs): its settings, pod-hours, under-provisioned pod-seconds and seconds, scale events (and
  per day), flaps (and per day), and whether it is on the Pareto frontier (no other candidate has
  fewer or equal pod-hours *and* under-provisioned pod-seconds, one of them fewer), within the
  budget (under-provisioning, flaps and scale events: :mod:`pyhpa.sim.tune_choice`), the
  recommended one.
* ``recommended.yaml`` -- the recommended candidate's HPAs as autoscaling/v2 manifests, for
  ``kubectl apply -f`` and ``pyhpa simulate SCENARIO --compare``.
* ``report.html`` -- one self-contained page (plotly inlined): the frontier with the current and
  recommended settings marked, and the two compared over the run's clock time. With observed
  replicas in the scenario, the replay check of the current settings (:mod:`pyhpa.sim.replay`)
  sits beside the recommendation and the observed replicas are drawn with the simulated ones:
  how closely the simulator replays what happened says how far to trust what it recommends.
"""

from __future__ import annotations

import csv
import html
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from pyhpa.sim.replay import observed_of, replay_lines, step_value
from pyhpa.sim.report import duration_text, short_intervals
from pyhpa.sim.tune import Candidate
from pyhpa.sim.tune_choice import CHOICE, within_budget

FIGURE_COLUMNS = (("pod_hours", "podHours"), ("under_provisioned_pod_seconds", "underProvisionedPodSeconds"),
                  ("under_provisioned_seconds", "underProvisionedSeconds"), ("scale_events", "scaleEvents"),
                  ("scale_events_per_day", "scaleEventsPerDay"), ("flaps", "flaps"), ("flaps_per_day", "flapsPerDay"))


def write_outputs(outcome: Any, scenario: Any, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    files = [out_dir / "frontier.csv", out_dir / "recommended.yaml", out_dir / "report.html"]
    write_frontier(files[0], outcome)
    write_recommended(files[1], outcome, scenario)
    write_report(files[2], outcome, scenario)
    return files


def _cell(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return "" if v is None else str(v)


def write_frontier(path: Path, outcome: Any) -> None:
    limit = outcome.limit
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["candidate", *outcome.columns, *(c for c, _ in FIGURE_COLUMNS), "on_frontier", "within_budget",
                    "recommended", "round"])
        for c in outcome.candidates:
            f = c.figures
            w.writerow([c.name, *(_cell(c.settings.get(col)) for col in outcome.columns),
                        *(_cell(f.get(key)) for _, key in FIGURE_COLUMNS), _cell(c.on_frontier),
                        _cell(within_budget(c, limit, outcome.caps)), _cell(c.name == outcome.recommended.name),
                        c.round])


def budget_text(outcome: Any) -> str:
    """``0.5% (120 under-provisioned pod-s), at most 2 flaps/day (--max-flaps)``."""
    caps = outcome.caps.text()
    return f"{outcome.budget.text} ({outcome.limit:g} under-provisioned pod-s)" + (f", {caps}" if caps else "")


def settings_text(c: Candidate) -> str:
    return ", ".join(f"{k}={_short(v)}" for k, v in c.settings.items()) or "(no tuned field)"


def _short(v: Any) -> str:
    """A policies alternative (JSON) as ``Pods 4/60s, Percent 100/15s (Max)``; others as they are."""
    text = str(v)
    if not text.startswith("{"):
        return text
    try:
        alt = json.loads(text)
    except ValueError:
        return text
    if not isinstance(alt, dict):
        return text
    pols = ", ".join(f"{p.get('type')} {p.get('value')}/{p.get('periodSeconds')}s" for p in alt.get("policies") or [])
    return f"[{pols}]" + (f" ({alt['selectPolicy']})" if alt.get("selectPolicy") else "")


def write_recommended(path: Path, outcome: Any, scenario: Any) -> None:
    from pyhpa.api.codec import dumps_yaml

    rec = outcome.recommended
    f = rec.figures
    verdict = (f"within the budget of {budget_text(outcome)}, {CHOICE}" if outcome.within_budget else
               f"NO candidate stays within the budget of {budget_text(outcome)}: the least under-provisioned one")
    header = [f"# pyhpa tune {scenario.source}: candidate {rec.name}, {verdict}.",
              f"# Settings: {settings_text(rec)}.",
              f"# Simulated: {f['podHours']} pod-hours, {f['underProvisionedPodSeconds']} under-provisioned pod-seconds, "
              f"{f['scaleEvents']} scale events, {f['flaps']} flaps (see frontier.csv)."]
    docs = [dumps_yaml(m) for m in rec.manifests]
    path.write_text("\n".join(header) + "\n" + "---\n".join(docs))


# --------------------------------------------------------------------------- report.html


def _clock(times: Sequence[float]) -> list[str]:
    return [datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S") for t in times]


def _summed(result: Any) -> tuple[list[float], list[float], list[int], list[float] | None]:
    """Times, demand, spec replicas and Ready capacity of a run, summed over its HPAs' targets."""
    traces = [result.workloads[run.target] for run in result.hpas if run.target in result.workloads]
    traces = list({t.key: t for t in traces}.values())
    times = list(traces[0].times)
    demand = [sum(t.demand[i] for t in traces) for i in range(len(times))]
    replicas = [sum(t.replicas[i] for t in traces) for i in range(len(times))]
    caps = [t.ready_capacity() for t in traces]
    capacity = None if any(c is None for c in caps) else [sum(c[i] for c in caps) for i in range(len(times))]  # type: ignore[index]
    return times, demand, replicas, capacity


def _observed_summed(result: Any) -> tuple[list[float], list[float]] | None:
    """The observed replicas summed over the run's targets, as ``_summed`` sums the simulated ones
    (None unless every target has them)."""
    targets = list(dict.fromkeys(run.target for run in result.hpas if run.target in result.workloads))
    found = [o for o in (observed_of(result.scenario, t) for t in targets) if o is not None]
    if not found or len(found) < len(targets):
        return None
    times = sorted({t for o in found for t in o[0]})
    return times, [sum(step_value(o[0], o[1], t) for o in found) for t in times]


def report_figure(outcome: Any) -> Any:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    cands = outcome.candidates
    fig = make_subplots(rows=3, cols=1, vertical_spacing=0.09, row_heights=[0.46, 0.3, 0.24],
                        subplot_titles=("Candidates: pod-hours against under-provisioned pod-seconds",
                                        "Demand and Ready capacity", "Replicas (spec)"))
    x = [c.figures["podHours"] for c in cands]
    y = [c.figures["underProvisionedPodSeconds"] for c in cands]
    text = [f"{c.name}: {settings_text(c)}<br>scale events: {c.figures['scaleEvents']} "
            f"({c.figures['scaleEventsPerDay']:g}/day), flaps: {c.figures['flaps']} ({c.figures['flapsPerDay']:g}/day)"
            for c in cands]
    fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name="candidates", text=text, hoverinfo="text+x+y",
                             marker={"color": "#9aa5b1", "size": 7}), row=1, col=1)
    front = sorted((c for c in cands if c.on_frontier), key=lambda c: (c.figures["podHours"],
                                                                       c.figures["underProvisionedPodSeconds"]))
    fig.add_trace(go.Scatter(x=[c.figures["podHours"] for c in front],
                             y=[c.figures["underProvisionedPodSeconds"] for c in front],
                             mode="lines+markers", name="Pareto frontier", line={"color": "#1f77b4", "shape": "hv"},
                             text=[f"{c.name}: {settings_text(c)}" for c in front], hoverinfo="text+x+y"), row=1, col=1)
    fig.add_hline(y=outcome.limit, line={"dash": "dash", "color": "#d62728", "width": 1}, row=1, col=1,
                  annotation_text=f"budget {outcome.budget.text}", annotation_position="top right")
    for c, name, symbol, color in ((cands[0], "current settings", "x", "#d62728"),
                                   (outcome.recommended, "recommended", "star", "#2ca02c")):
        fig.add_trace(go.Scatter(x=[c.figures["podHours"]], y=[c.figures["underProvisionedPodSeconds"]], mode="markers",
                                 name=name, text=[f"{c.name}: {settings_text(c)}"], hoverinfo="text+x+y",
                                 marker={"symbol": symbol, "size": 15, "color": color,
                                         "line": {"width": 1, "color": "black"}}), row=1, col=1)
    fig.update_xaxes(title_text="pod-hours", row=1, col=1)
    fig.update_yaxes(title_text="under-provisioned pod-s", row=1, col=1)
    current, recommended = outcome.results
    times, demand, cur_rep, cur_cap = _summed(current)
    _, _, rec_rep, rec_cap = _summed(recommended)
    clock = _clock(times)
    fig.add_trace(go.Scatter(x=clock, y=demand, name="demand", line={"color": "black", "width": 1}), row=2, col=1)
    if cur_cap is not None and rec_cap is not None:
        fig.add_trace(go.Scatter(x=clock, y=cur_cap, name="Ready capacity, current", line={"color": "#d62728", "width": 1}),
                      row=2, col=1)
        fig.add_trace(go.Scatter(x=clock, y=rec_cap, name="Ready capacity, recommended",
                                 line={"color": "#2ca02c", "width": 1}), row=2, col=1)
    fig.add_trace(go.Scatter(x=clock, y=cur_rep, name="replicas, current", line={"color": "#d62728", "shape": "hv"}),
                  row=3, col=1)
    fig.add_trace(go.Scatter(x=clock, y=rec_rep, name="replicas, recommended", line={"color": "#2ca02c", "shape": "hv"}),
                  row=3, col=1)
    observed = _observed_summed(current)
    if observed is not None:
        fig.add_trace(go.Scatter(x=_clock(observed[0]), y=observed[1], name="observed replicas",
                                 line={"color": "black", "shape": "hv", "dash": "longdash", "width": 2}, opacity=0.7),
                      row=3, col=1)
    signal = next((current.workloads[run.target].demand_signal for run in current.hpas
                   if run.target in current.workloads), None)
    _shade_under_provisioning(fig, go, current, recommended)
    fig.update_yaxes(title_text=f"demand ({signal})" if signal else "demand", row=2, col=1)
    fig.update_yaxes(title_text="pods", row=3, col=1)
    fig.update_xaxes(title_text="time (UTC)", row=3, col=1)
    fig.update_layout(height=1100, template="plotly_white", legend={"orientation": "h", "y": -0.06},
                      margin={"l": 70, "r": 30, "t": 60, "b": 60})
    return fig


def _shade_under_provisioning(fig: Any, go: Any, current: Any, recommended: Any) -> None:
    """Each run's under-provisioned intervals shaded in its colour on the demand and replicas
    panels, as ``pyhpa simulate``'s report shades them, with a legend entry counting them."""
    shapes: list[dict[str, Any]] = []
    for result, name, rgb in ((current, "current", "214,39,40"), (recommended, "recommended", "44,160,44")):
        intervals = [iv for run in result.hpas if run.target in result.workloads
                     for iv in short_intervals(result.workloads[run.target], result.scenario.end)]
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", hoverinfo="skip",
                                 name=f"under-provisioned, {name}, shaded ({len(intervals)})",
                                 marker={"symbol": "square", "size": 12, "color": f"rgba({rgb},0.35)"}), row=2, col=1)
        shapes += [{"type": "rect", "xref": f"x{row}", "yref": f"y{row} domain", "x0": x0, "x1": x1, "y0": 0,
                    "y1": 1, "fillcolor": f"rgba({rgb},0.18)", "line": {"width": 0}, "layer": "below"}
                   for x0, x1 in zip(_clock([a for a, _ in intervals]), _clock([b for _, b in intervals]))
                   for row in (2, 3)]
    fig.update_layout(shapes=[*fig.layout.shapes, *shapes])


def _table(outcome: Any) -> str:
    rows = []
    for label, c in (("current", outcome.candidates[0]), ("recommended", outcome.recommended)):
        f = c.figures
        rows.append("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in (
            label, c.name, settings_text(c), f["podHours"], f["underProvisionedPodSeconds"],
            f["underProvisionedSeconds"], f["scaleEvents"], f["scaleEventsPerDay"], f["flaps"],
            f["flapsPerDay"])) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("", "candidate", "settings", "pod-hours", "under-prov pod-s",
                                             "under-prov s", "scale events", "scale events/day", "flaps",
                                             "flaps/day"))
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _replay_html(outcome: Any) -> str:
    """The replay check of the current settings, beside the recommendation (nothing without
    observed replicas)."""
    lines = replay_lines(outcome.replay, "replay of the current settings,")
    if not lines:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    return ("<h3>Replay check: how far to trust this recommendation</h3><p>The current settings simulated on the "
            "recorded load, against the replicas the cluster really ran. The closer they follow them, the more the "
            f"figures above can be trusted.</p><ul>{items}</ul>")


def _phases_text(outcome: Any) -> str:
    n = getattr(outcome, "phases", 1)
    return (f"; each candidate's figures are its worst over {n} offsets of the sync and scrape phases against the "
            "load (the charts show the plain run)") if n > 1 else ""


def write_report(path: Path, outcome: Any, scenario: Any) -> None:
    fig = report_figure(outcome)
    plot = fig.to_html(full_html=False, include_plotlyjs=True, config={"responsive": True})
    front = sum(1 for c in outcome.candidates if c.on_frontier)
    verdict = (f"within the budget, {CHOICE}" if outcome.within_budget
               else "no candidate is within the budget: the least under-provisioned one")
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>pyhpa tune: {html.escape(scenario.name)}</title>
<style>body{{font-family:sans-serif;margin:1.5em;}} table{{border-collapse:collapse;}}
td,th{{border:1px solid #ccc;padding:3px 8px;text-align:left;}}</style></head>
<body><h1>pyhpa tune: {html.escape(scenario.name)}</h1>
<p>{len(outcome.candidates)} candidates simulated over {duration_text(scenario.duration)} of {html.escape(scenario.source)};
{front} on the Pareto frontier{_phases_text(outcome)}. Budget: {html.escape(budget_text(outcome))} (the demand needed
{outcome.demand_pod_seconds:g} pod-seconds). Recommended: {verdict}.</p>
{_table(outcome)}
{_replay_html(outcome)}
{plot}
</body></html>
"""
    path.write_text(page)
