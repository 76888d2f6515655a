"""A history written as a strict scenario (``pyhpa simulate``/``pyhpa tune`` take it unchanged)
and a CSV beside it with the series the scenario's ``load:`` and ``observed:`` name.

The CSV's columns: ``time`` (RFC 3339), one demand column per load signal (``cpu`` in cores,
``memory`` in bytes, an application metric in its own unit, each a workload total), ``replicas``
(observed), ``cpu_observed`` (usage as measured, before the saturated intervals' estimate) and
``saturated`` (1 in a saturated step). What was assumed rather than read is repeated as comments
at the top of the scenario, so the file says it wherever it goes.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from pyhpa.api import goyaml
from pyhpa.api.quantity import BINARY_SI, Quantity
from pyhpa.api.timefmt import format_epoch
from pyhpa.sim.history import History
from pyhpa.sim.history_hpa import CONTROLLER_DEFAULTS, defaults_left

OBSERVED_COMMENT = "what the cluster really did; the yardstick of the replay check"


def scenario_name(history: History) -> str:
    return f"{history.request.name}-history"


def write_history(history: History, path: Path) -> Path:
    """Write the scenario at ``path`` and its CSV beside it (same stem, ``.csv``); return the CSV's
    path."""
    csv_path = path.with_suffix(".csv")
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_csv(history, csv_path)
    path.write_text(scenario_text(history, csv_path.name))
    return csv_path


def _write_csv(history: History, path: Path) -> None:
    signals = list(history.demand)
    with path.open("w", newline="") as out:
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["time", *signals, "replicas", "cpu_observed", "saturated"])
        cpu = history.cpu_observed
        for k, t in enumerate(history.times):
            w.writerow([format_epoch(t, micro=t != int(t)), *(_num(history.demand[s][k]) for s in signals), history.replicas[k],
                        _num(cpu[k]) if cpu is not None else "", int(history.saturated[k])])


def _num(v: float) -> str:
    return f"{v:.6g}" if abs(v) < 1e6 else f"{v:.0f}"


def _quantity(amount: float, resource: str) -> str:
    """CPU in cores as millis (``500m``), memory in bytes as binary SI (``256Mi``)."""
    if resource == "cpu":
        return Quantity.from_milli(round(amount * 1000)).canonical()
    return Quantity.from_int(int(round(amount)), BINARY_SI).canonical()


def _seconds(v: float) -> str:
    return f"{int(round(v))}s"


def _seconds_text(v: float) -> str:
    return f"{v:.3f}".rstrip("0").rstrip(".") + "s"


def _default_tick(req: Any) -> float:
    """The simulator's load tick when the scenario names none: min(metrics resolution, sync
    period). A history finer than that is written with its own step, so the load is not held
    over several of its samples."""
    return min(req.metrics.get("resolution", 15.0), req.sync_period)


def _workload_manifest(history: History, replicas: int) -> dict[str, Any]:
    req = history.request
    containers = []
    for name in sorted(set(history.requests) | set(history.limits)):
        resources: dict[str, Any] = {}
        for which, table in (("requests", history.requests), ("limits", history.limits)):
            amounts = table.get(name) or {}
            if amounts:
                resources[which] = {r: _quantity(v, r) for r, v in sorted(amounts.items())}
        containers.append({"name": name, **({"resources": resources} if resources else {})})
    if not containers:
        containers = [{"name": req.name}]
    labels = {"app": req.name}
    spec: dict[str, Any] = {"replicas": replicas, "selector": {"matchLabels": labels},
                            "template": {"metadata": {"labels": labels}, "spec": {"containers": containers}}}
    if req.kind == "StatefulSet":
        spec["serviceName"] = req.name
    return {"apiVersion": "apps/v1", "kind": req.kind, "metadata": {"name": req.name, "namespace": req.namespace},
            "spec": spec}


def _workload_model(history: History) -> dict[str, Any]:
    model: dict[str, Any] = {"startup": _seconds(history.startup or 0.0)}
    if history.pending and history.startup and history.pending <= history.startup:
        model["pending"] = _seconds(history.pending)
    if "cpu" in history.demand:
        model["cpu"] = {"signal": "cpu", "per": 1}
        limits = [(history.limits.get(c) or {}).get("cpu") for c in history.requests or history.limits]
        if limits and all(v is not None and v > 0 for v in limits):
            model["cpuCapacity"] = _quantity(sum(v for v in limits if v is not None), "cpu")
    if "memory" in history.demand:
        model["memory"] = {"signal": "memory", "per": 1}
    if history.metric_signals:
        model["metrics"] = {name: {"signal": name, "per": 1, **({"labels": labels} if labels else {})}
                            for name, (_, labels) in history.metric_signals.items()}
    if "cpu" in history.demand:
        model["demand"] = "cpu"
    return model


def _header(history: History) -> list[str]:
    req = history.request
    lines = [f"Written by `pyhpa history` from prometheus {req.prometheus}:",
             f"  {req.kind.lower()} {req.namespace}/{req.name}, {format_epoch(history.times[0])} .. "
             f"{format_epoch(history.times[-1])}, step {req.step:g}s",
             f"The HPA was read from {history.hpa_source}. Assumed, not read:"]
    lines += [f"  - {a}" for a in history.assumed]
    if "cpu" in history.demand:
        lines.append("Demand cpu: the workload's summed CPU usage rate (cores) from cAdvisor.")
        if history.intervals:
            lines.append(f"  In the {len(history.intervals)} saturated interval(s) (observed.saturated) usage is a "
                         "lower bound; demand there is")
            added = history.demand_added.get("cpu", 0.0)
            lines.append("  max(observed, the straight line between the unsaturated values on both sides): "
                         + (f"at most {added:.3g} cores above the usage observed." if added > 0 else
                            "the usage observed, which was above that line throughout."))
    if history.startup is not None:
        lines.append(f"Startup: median creation -> Ready over {history.pods_started} pods created in the range "
                     f"(90th percentile {history.startup_p90:g}s).")
    else:
        lines.append("Startup: not measured (no pod created and Ready in the range); 0s assumed.")
    return lines


def sync_aligned_start(history: History) -> float:
    """Where the scenario starts: the first step's time, or with an instant the real controller
    synced at, the first instant from it that is a whole number of its sync spacings from that
    one, so the simulated controller, which syncs at start + k x period, syncs when it did (and
    reads the same metrics scrapes); the load ticks stay on the history's steps (the simulator
    ticks on the epoch's grid of the step)."""
    first = history.times[0]
    if history.sync_anchor is None:
        return first
    period = history.sync_interval or history.request.sync_period
    return first + (history.sync_anchor - first) % period


def _measured(history: History) -> dict[str, Any]:
    """The controller's sync period as it behaved: its syncs' spacing, when measured."""
    if history.sync_interval is None:
        return {}
    return {"horizontal-pod-autoscaler-sync-period": _seconds_text(round(history.sync_interval, 3))}


def scenario_text(history: History, csv_name: str) -> str:
    req = history.request
    start = sync_aligned_start(history)
    at = min(len(history.replicas) - 1, int((start - history.times[0]) / req.step + 1e-9))
    doc: dict[str, Any] = {
        "apiVersion": "pyhpa.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": scenario_name(history)},
        "start": format_epoch(start, micro=start != int(start)),
        "duration": _seconds_text(round(history.times[-1] + req.step - start, 6)),
        **({"step": _seconds_text(req.step)} if req.step < _default_tick(req) - 1e-9 else {}),
        "controller": {**CONTROLLER_DEFAULTS, **req.controller, **_measured(history)},
        **({"metrics": {k: _seconds_text(v) for k, v in req.metrics.items()}} if req.metrics else {}),
        "workload": _workload_model(history),
        "load": {s: {"csv": csv_name, "column": s} for s in history.demand},
        "objects": [_workload_manifest(history, history.replicas[at]), history.hpa],
    }
    text = "".join(f"# {line}\n" for line in _header(history))
    body = goyaml.dump(doc)
    left = defaults_left(req.controller)
    given = ", ".join(k.removeprefix("horizontal-pod-autoscaler-") for k in req.controller)
    note = "; ".join(([f"given: {given}"] if given else []) + ([f"assumed: upstream defaults ({left})"] if left else []))
    if history.sync_interval is not None:
        note += ("; sync period: the time between the real controller's syncs, measured from its rescale events "
                 "(a period plus each reconcile's time)")
    body = body.replace("controller:\n", f"controller:  # {note}\n", 1)
    text += body
    section: dict[str, Any] = {"replicas": {"csv": csv_name, "column": "replicas"}}
    if history.intervals:
        section["saturated"] = [{"from": format_epoch(i.start), "to": format_epoch(i.end), "reason": i.reason}
                                for i in history.intervals]
    text += f"observed:  # {OBSERVED_COMMENT}\n" + _indent(goyaml.dump({req.name: section}))
    return text


def _indent(text: str) -> str:
    return "".join(f"  {line}\n" if line else "\n" for line in text.splitlines())
