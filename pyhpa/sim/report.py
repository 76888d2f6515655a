"""Timelines and summaries of a simulation run, written as CSV, JSON and Markdown.

Summary figures (per HPA, over its scale target):

* ``podHours`` -- exact: each pod's lifetime (creation until its termination finished) inside the run;
* ``underProvisionedSeconds`` / ``underProvisionedPodSeconds`` -- over the ticks where demand exceeded
  Ready capacity (below): the ticks' durations, and the shortfall in whole pods (the fewest Ready
  pods whose capacity covers the demand, minus the Ready pods) times those durations;
* ``peakReplicas`` -- the highest ``spec.replicas`` of the target;
* ``scaleEvents`` -- successful rescales (``SuccessfulRescale`` events), up and down;
* ``flaps`` -- rescales that reversed the previous one's direction within 5 minutes of it;
* ``timeToCapacity`` -- for each episode of under-provisioning, its start, ``durationSeconds`` and
  the seconds from its first tick until Ready capacity covered demand again; null with
  ``capacityReached: false`` when capacity never caught up: the run ended, or demand simply fell
  below the Ready capacity (which does not cover the demand that opened the episode);
  ``max``/``meanSecondsToCapacity`` over the episodes that reached it, and
  ``timeToCapacityNotReached``, how many did not (the text outputs say "not reached");
* ``demandSteps`` -- each demand step (see :func:`demand_steps`: by default demand rising to more
  than 120 % of its lowest level in the 5 minutes before; the scenario's ``summary.demandStepRise``
  and ``summary.demandStepWithin`` change that) with the seconds from the step until Ready capacity
  covered demand (0 if it already did; see :func:`seconds_to_capacity`), and the max/mean of those;
* ``unableToCompute`` / ``unableToComputeReasons`` -- only for an HPA that spent syncs with
  ``ScalingActive=False``: their share and the reasons (:mod:`pyhpa.sim.health`).

* ``unservedDemand`` -- demand dropped or queued: the integral over the under-provisioned ticks of
  demand minus Ready capacity (demand units x seconds: requests, for a demand in requests/s);
* ``cpuUtilizationP50`` / ``cpuUtilizationP95`` -- the CPU a Ready pod uses by the workload model
  (not a scrape; on a scenario's nodes, the mean of what its Ready pods get there), in % of its
  CPU request, over the ticks with a Ready pod.
* ``failedCreates`` / ``lastFailedCreate`` -- only when a ResourceQuota refused some of the target's
  pods (:mod:`pyhpa.sim.admission`): how many ``FailedCreate`` events (one per new reason) and the
  last one's message; the timeline carries each event on the next sync's row.
* ``replay`` -- only when the scenario has observed replicas of the HPA's target: the replay
  check against them (:mod:`pyhpa.sim.replay`).

Ready capacity comes from the capacity model (:mod:`pyhpa.sim.capacity`, ``capacitySource`` says
which part set it): ``Ready pods x P / per - base / per`` through the CPU map, P the CPU at which a
pod saturates (its CPU limit, else ``cpuCapacity``, else its CPU request); the ``base`` CPU is a
workload total, paid once (``capacityOverhead``). ``capacityPerReplica`` overrides it.

The entry points other commands call: :func:`summarize` (a result's summaries, one dict per HPA
with the keys above plus ``hpa``, ``target``, ``label``, ``scaleUps``, ``scaleDowns``,
``capacityPerReplica``) and :func:`summarize_run`.
"""

from __future__ import annotations

import bisect
import csv
import json
from pathlib import Path
from typing import Any

from pyhpa.api.timefmt import format_epoch
from pyhpa.sim.health import summary_cell, unable_to_compute
from pyhpa.sim.replay import replay_summary

FLAP_WINDOW = 300.0


def _iso(t: float) -> str:
    return format_epoch(t)


def _q(q: Any) -> float | None:
    return None if q is None else q.as_float()


def metric_label(spec: Any) -> str:
    if spec.type == "Resource" and spec.resource is not None:
        return spec.resource.name
    if spec.type == "ContainerResource" and spec.container_resource is not None:
        return f"{spec.container_resource.name}({spec.container_resource.container})"
    if spec.type == "Pods" and spec.pods is not None:
        return f"pods/{spec.pods.metric.name}"
    if spec.type == "Object" and spec.object is not None:
        d = spec.object.described_object
        return f"object/{d.kind}/{d.name}/{spec.object.metric.name}"
    if spec.type == "External" and spec.external is not None:
        return f"external/{spec.external.metric.name}"
    return spec.type


def _source(obj: Any) -> Any:
    for attr in ("resource", "container_resource", "pods", "object", "external"):
        sub = getattr(obj, attr, None)
        if sub is not None:
            return sub
    return None


def metric_columns(hpa: Any) -> list[dict[str, Any]]:
    """Each metric of the spec as the timeline shows it: label, target, unit ("%", "avg" or "")
    and where its current value sits in the status (fixed for a run: the spec does not change)."""
    out = []
    for spec in hpa.spec.metrics or []:
        src = _source(spec)
        target = src.target if src is not None else None
        if target is None:
            out.append({"metric": metric_label(spec), "target": None, "unit": "", "type": spec.type, "read": None})
        elif target.type == "Utilization":
            out.append({"metric": metric_label(spec), "target": target.average_utilization, "unit": "%",
                        "type": spec.type, "read": "average_utilization"})
        elif target.type == "AverageValue":
            out.append({"metric": metric_label(spec), "target": _q(target.average_value), "unit": "avg",
                        "type": spec.type, "read": "average_value"})
        else:
            out.append({"metric": metric_label(spec), "target": _q(target.value), "unit": "",
                        "type": spec.type, "read": "value"})
    return out


def metric_currents(columns: list[dict[str, Any]], status: Any) -> tuple[Any, ...]:
    """The status' current value of each metric column (None where the status has none)."""
    statuses = (status.current_metrics or []) if status is not None else []
    out = []
    for i, col in enumerate(columns):
        read = col["read"]
        st = statuses[i] if i < len(statuses) and statuses[i].type == col["type"] else None
        src = _source(st) if st is not None else None
        cur = src.current if src is not None else None
        if read is None or cur is None:
            out.append(None)
        elif read == "average_utilization":
            out.append(cur.average_utilization)
        else:
            out.append(_q(getattr(cur, read)))
    return tuple(out)


def timeline_row(run: Any, rec: Any) -> dict[str, Any]:
    """One HPA after one sync (a runner ``SyncRecord`` of ``run``): the numbers the timeline files show."""
    return {
        "time": _iso(rec.t),
        "offsetSeconds": round(rec.t - run.start, 3),
        "hpa": run.name,
        "demand": rec.demand,
        "capacity": rec.capacity,
        "replicas": rec.replicas,
        "readyReplicas": rec.ready,
        "desiredReplicas": rec.desired,
        "metrics": [{"metric": col["metric"], "current": cur, "target": col["target"], "unit": col["unit"]}
                    for col, cur in zip(run.metrics, rec.currents)],
        "conditions": {ctype: {"status": cstatus, "reason": reason} for ctype, cstatus, reason in rec.conditions},
        "events": list(rec.events),
    }


def _num(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


# --------------------------------------------------------------------------- summary


def pod_hours(trace: Any, start: float, end: float) -> float:
    total = 0.0
    for pod in trace.pods:
        a = max(pod.created, start)
        b = min(pod.gone_at if pod.gone_at is not None else end, end)
        if b > a:
            total += b - a
    return total / 3600.0


def summarize_run(result: Any, run: Any) -> dict[str, Any]:
    scenario = result.scenario
    trace = result.workloads.get(run.target)
    out: dict[str, Any] = {"hpa": run.key, "target": "/".join(run.target), "label": result.label or None}
    ups = sum(1 for e in run.scale_events if e.new > e.old)
    downs = sum(1 for e in run.scale_events if e.new < e.old)
    flaps = 0
    for prev, cur in zip(run.scale_events, run.scale_events[1:]):
        if (cur.new - cur.old) * (prev.new - prev.old) < 0 and cur.t - prev.t <= FLAP_WINDOW:
            flaps += 1
    out.update({"scaleEvents": len(run.scale_events), "scaleUps": ups, "scaleDowns": downs, "flaps": flaps})
    if trace is None:
        return out
    out["podHours"] = round(pod_hours(trace, scenario.start, scenario.end), 6)
    out["peakReplicas"] = max(trace.replicas) if trace.replicas else None
    if trace.failed_creates:
        out["failedCreates"] = len(trace.failed_creates)
        out["lastFailedCreate"] = trace.failed_creates[-1][1]
    cap = trace.capacity
    under_s = 0.0
    under_pod_s = 0.0
    unserved = 0.0
    episodes: list[dict[str, Any]] = []
    open_ep: dict[str, Any] | None = None
    times = trace.times
    covered: list[bool] = []  # per tick: Ready capacity covered demand
    caught: list[bool] = []  # per tick: covered, and not only because demand fell (capacity caught up)
    for i, (t, short) in enumerate(zip(times, short_ticks(trace) or ())):
        dt = (times[i + 1] if i + 1 < len(times) else scenario.end) - t
        demand = trace.demand[i]
        ready = trace.ready[i]
        covered.append(not short)
        # Capacity caught up when it covers the demand that opened the episode it closes.
        caught.append(not short and (open_ep is None or cap.of(ready) + 1e-9 >= open_ep["demand"]))
        if short:
            under_s += dt
            unserved += (demand - cap.of(ready)) * dt
            under_pod_s += max(0, cap.pods_for(demand) - ready) * dt
            if open_ep is None:
                open_ep = {"at": _iso(t), "offsetSeconds": round(t - scenario.start, 3), "demand": demand,
                           "readyReplicas": ready, "durationSeconds": None, "secondsToCapacity": None,
                           "capacityReached": False, "_t": t}
                episodes.append(open_ep)
        elif open_ep is not None:
            open_ep["durationSeconds"] = round(t - open_ep["_t"], 3)
            if caught[i]:
                open_ep["secondsToCapacity"] = open_ep["durationSeconds"]
                open_ep["capacityReached"] = True
            open_ep = None
    for ep in episodes:
        t0 = ep.pop("_t", None)
        if ep["durationSeconds"] is None and t0 is not None:  # still open when the run ended
            ep["durationSeconds"] = round(scenario.end - t0, 3)
    out["capacityPerReplica"] = cap.per_replica if cap is not None else None
    out["underProvisionedSeconds"] = round(under_s, 3) if cap is not None else None
    out["underProvisionedPodSeconds"] = round(under_pod_s, 3) if cap is not None else None
    done = [e["secondsToCapacity"] for e in episodes if e["secondsToCapacity"] is not None]
    out["timeToCapacity"] = episodes
    out["maxSecondsToCapacity"] = max(done) if done else None
    out["meanSecondsToCapacity"] = round(sum(done) / len(done), 3) if done else None
    out["timeToCapacityNotReached"] = len(episodes) - len(done) if cap is not None else None
    out["capacityOverhead"] = cap.overhead if cap is not None else None
    out["capacitySource"] = cap.source if cap is not None else None
    out["unservedDemand"] = round(unserved, 3) if cap is not None else None
    out["cpuUtilizationP50"], out["cpuUtilizationP95"] = cpu_utilization_percentiles(trace, (50, 95))
    steps = demand_steps(times, trace.demand, scenario.step_rise, scenario.step_within)
    for step in steps:
        step["secondsToCapacity"] = seconds_to_capacity(times, covered, step, caught) if cap is not None else None
        step["at"] = _iso(times[step["first"]])
        step["offsetSeconds"] = round(times[step["first"]] - scenario.start, 3)
    out["demandStepCount"] = len(steps)
    out["demandSteps"] = [{k: st[k] for k in ("at", "offsetSeconds", "from", "to", "secondsToCapacity")} for st in steps]
    step_done = [st["secondsToCapacity"] for st in steps if st["secondsToCapacity"] is not None]
    out["maxSecondsFromStepToCapacity"] = max(step_done) if step_done else None
    out["meanSecondsFromStepToCapacity"] = round(sum(step_done) / len(step_done), 3) if step_done else None
    return out


def short_ticks(trace: Any) -> list[bool] | None:
    """Per tick: demand exceeded Ready capacity (under-provisioned); None without a capacity."""
    cap = trace.capacity
    if cap is None:
        return None
    return [demand > cap.of(ready) + 1e-9 for demand, ready in zip(trace.demand, trace.ready)]


def short_intervals(trace: Any, end: float) -> list[tuple[float, float]]:
    """The under-provisioned intervals (first short tick, the next covered tick or ``end``)."""
    out: list[tuple[float, float]] = []
    opened: float | None = None
    times = trace.times
    for t, short in zip(times, short_ticks(trace) or ()):
        if short and opened is None:
            opened = t
        elif not short and opened is not None:
            out.append((opened, t))
            opened = None
    if opened is not None:
        out.append((opened, end))
    return out


def episodes(trace: Any, end: float) -> list[dict[str, Any]]:
    """Each under-provisioned interval (:func:`short_intervals`) with its shortfall: ``start``,
    ``end`` (epoch s), ``podSeconds`` (pods short x seconds), ``maxPodsShort`` and ``peakDemand``."""
    out: list[dict[str, Any]] = []
    cap = trace.capacity
    times = trace.times
    for a, b in short_intervals(trace, end):
        i = bisect.bisect_left(times, a)
        pod_s, worst, peak = 0.0, 0, 0.0
        while i < len(times) and times[i] < b:
            dt = (times[i + 1] if i + 1 < len(times) else end) - times[i]
            short = max(0, cap.pods_for(trace.demand[i]) - trace.ready[i])
            pod_s += short * dt
            worst, peak = max(worst, short), max(peak, trace.demand[i])
            i += 1
        out.append({"start": a, "end": b, "podSeconds": round(pod_s, 3), "maxPodsShort": worst, "peakDemand": peak})
    return out


def duration_text(seconds: float) -> str:
    """``48h``, ``11m``, ``1m 30s``, ``2h 5m 3s``: hours, minutes and seconds, zeros left out."""
    s = round(seconds)
    if s <= 0:
        return f"{seconds:g}s"
    parts = [(s // 3600, "h"), (s % 3600 // 60, "m"), (s % 60, "s")]
    return " ".join(f"{v}{u}" for v, u in parts if v)


def cpu_utilization_percentiles(trace: Any, percents: tuple[float, ...]) -> tuple[float | None, ...]:
    """Percentiles (linear between ranks) over the ticks with a Ready pod of the CPU one Ready pod
    uses by the workload model, in % of its CPU request (None without a request)."""
    if not trace.cpu_request:
        return tuple(None for _ in percents)
    scale = 100.0 / trace.cpu_request
    values = sorted(cpu * scale for cpu, ready in zip(trace.ready_pod_cpu, trace.ready) if ready)
    if not values:
        return tuple(None for _ in percents)
    out = []
    for p in percents:
        pos = (len(values) - 1) * p / 100.0
        lo = int(pos)
        hi = min(lo + 1, len(values) - 1)
        out.append(round(values[lo] + (values[hi] - values[lo]) * (pos - lo), 2))
    return tuple(out)


def demand_steps(times: Any, demand: Any, rise: float, within: float) -> list[dict[str, Any]]:
    """The demand steps of a run (ticks in order, demand per tick).

    A tick *rises* when its demand is above the previous tick's and more than ``1 + rise`` times
    the lowest demand of the ticks in the ``within`` seconds before it (from zero, any increase).
    A step is a run of consecutive rising ticks: it starts at the first (``first``), its rise ends
    at the last (``last``), and it goes ``from`` the demand just before it ``to`` the highest demand
    of the run. A slow trend (a diurnal wave) rises too little within the window to be a step.
    """
    steps: list[dict[str, Any]] = []
    window: list[int] = []  # indices of the ticks before i; window[lo:] has increasing demand
    lo = 0
    current: dict[str, Any] | None = None
    for i, t in enumerate(times):
        while lo < len(window) and times[window[lo]] < t - within - 1e-9:
            lo += 1
        d = demand[i]
        low = demand[window[lo]] if lo < len(window) else None
        if low is not None and d > demand[i - 1] and d > low * (1.0 + rise) and d > low:
            if current is None:
                current = {"first": i, "last": i, "from": demand[i - 1], "to": d}
                steps.append(current)
            else:
                current["last"] = i
                current["to"] = max(current["to"], d)
        else:
            current = None
        while len(window) > lo and demand[window[-1]] >= d:
            window.pop()
        window.append(i)
    return steps


def seconds_to_capacity(times: Any, covered: list[bool], step: dict[str, Any],
                        caught: list[bool] | None = None) -> float | None:
    """Seconds from a step's first tick until Ready capacity covered demand: 0 when it covered
    demand at every tick of the rise; else until the first covered tick after the last
    under-provisioned tick of the rise. None if capacity never caught up: the run ended first, or
    (``caught``, per tick: the covering was capacity's doing) demand simply fell below it."""
    first, last = step["first"], step["last"]
    short = [i for i in range(first, last + 1) if not covered[i]]
    if not short:
        return 0.0
    for i in range(short[-1] + 1, len(times)):
        if covered[i]:
            return round(times[i] - times[first], 3) if caught is None or caught[i] else None
    return None


def by_attention(runs: list[Any], summaries: list[dict[str, Any]] | None) -> list[Any]:
    """The HPAs in the order they need attention: the most under-provisioned pod-seconds, then the
    most scale events, then the highest peak (the plots and the HTML report detail the first)."""
    by_key = {s["hpa"]: s for s in summaries or []}

    def attention(run: Any) -> tuple:
        s = by_key.get(run.key, {})
        return (-(s.get("underProvisionedPodSeconds") or 0.0), -len(run.scale_events), -(s.get("peakReplicas") or 0),
                run.key)

    return sorted(runs, key=attention)


def summarize(result: Any) -> list[dict[str, Any]]:
    return [{**summarize_run(result, run), **unable_to_compute(run), **replay_summary(result, run)}
            for run in result.hpas]


SUMMARY_COLUMNS = (
    ("label", "variant"), ("hpa", "hpa"), ("podHours", "pod-hours"), ("underProvisionedSeconds", "under-prov s"),
    ("underProvisionedPodSeconds", "under-prov pod-s"), ("peakReplicas", "peak"), ("scaleEvents", "scale events"),
    ("flaps", "flaps"), ("maxSecondsToCapacity", "max s to capacity"), ("meanSecondsToCapacity", "mean s to capacity"),
    ("demandStepCount", "demand steps"), ("maxSecondsFromStepToCapacity", "max s step to capacity"),
    ("unservedDemand", "unserved demand"), ("cpuUtilizationP50", "CPU p50 %"), ("cpuUtilizationP95", "CPU p95 %"),
    ("unableToCompute", "unable to compute"),
)
# Columns shown only when some summary has them (the summaries of healthy runs stay as they were).
OPTIONAL_COLUMNS = ("label", "unableToCompute", "unableToComputeReasons")
# summary.csv: the first columns keep their places; later additions go at the end.
CSV_COLUMNS = (
    "label", "hpa", "podHours", "underProvisionedSeconds", "underProvisionedPodSeconds", "peakReplicas",
    "scaleEvents", "flaps", "maxSecondsToCapacity", "meanSecondsToCapacity", "scaleUps", "scaleDowns",
    "capacityPerReplica", "target", "demandStepCount", "maxSecondsFromStepToCapacity", "meanSecondsFromStepToCapacity",
    "capacityOverhead", "unservedDemand", "cpuUtilizationP50", "cpuUtilizationP95", "capacitySource",
    "timeToCapacityNotReached", "unableToCompute", "unableToComputeReasons",  # the optional ones last
)


def figure_cell(s: dict[str, Any], key: str, float_format: str) -> str:
    """One summary figure as the text outputs show it; time to capacity says "not reached" for
    the episodes whose capacity never caught up."""
    v = s.get(key)
    text = "-" if v is None else (float_format.format(v) if isinstance(v, float) else str(v))
    missed = s.get("timeToCapacityNotReached") or 0
    if key in ("maxSecondsToCapacity", "meanSecondsToCapacity") and missed:
        return "not reached" if v is None else f"{text} ({missed} not reached)"
    return text


def summary_table(summaries: list[dict[str, Any]]) -> str:
    """A Markdown table of the headline figures."""
    cols = [c for c in SUMMARY_COLUMNS if c[0] not in OPTIONAL_COLUMNS or any(s.get(c[0]) for s in summaries)]
    lines = ["| " + " | ".join(h for _, h in cols) + " |", "|" + "|".join(" --- " for _ in cols) + "|"]
    for s in summaries:
        cells = []
        for key, _ in cols:
            if key == "unableToCompute":
                cells.append(summary_cell(s))
                continue
            cells.append(figure_cell(s, key, "{:.2f}"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_summary(summaries: list[dict[str, Any]], out_dir: Path, stem: str = "summary") -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"{stem}.json"
    json_path.write_text(json.dumps(summaries, indent=1) + "\n")
    md_path = out_dir / f"{stem}.md"
    md_path.write_text(summary_table(summaries))
    csv_path = out_dir / f"{stem}.csv"
    with csv_path.open("w", newline="") as fh:
        w = csv.writer(fh)
        keys = [k for k in CSV_COLUMNS if k not in OPTIONAL_COLUMNS or k == "label" or any(k in s for s in summaries)]
        w.writerow(keys)
        for s in summaries:
            w.writerow([";".join(v) if isinstance(v := s.get(k), list) else _num(v) for k in keys])
    return [json_path, md_path, csv_path]
