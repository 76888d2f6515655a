"""Simulator speed: one HPA for 7 days, and many HPAs (extrapolated to 1,000 HPAs x 24 h).

Both runs use a 15 s sync period, a 15 s metrics resolution and a diurnal CPU load, so every
sync does real work (scale events, metric windows). Wall time covers the simulation and its
summary, not writing files or plotting.
"""

from __future__ import annotations

import os
import time
from typing import Any

import yaml

from pyhpa.sim.report import summarize
from pyhpa.sim.runner import run_scenario
from pyhpa.sim.scenario import parse_scenario

# How many HPAs the "many" run measures (1,000 x 24 h is extrapolated from it).
MANY_HPAS = int(os.environ.get("BENCH_SIM_HPAS", "40"))
MANY_HOURS = float(os.environ.get("BENCH_SIM_HOURS", "6"))


def _objects(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        ns = f"team-{i:04d}"
        out.append({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": ns},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "500m"}}}]}}},
        })
        out.append({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web", "namespace": ns},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "minReplicas": 2, "maxReplicas": 30,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]},
        })
    return out


def _scenario(n_hpas: int, hours: float) -> Any:
    doc = {
        "start": "2026-01-05T00:00:00Z",
        "duration": f"{hours}h",
        "metrics": {"resolution": "15s", "window": "30s"},
        "workload": {"startup": "30s", "termination": "30s", "cpu": {"base": "100m", "signal": "rps", "per": "2m"},
                     "demand": "rps", "capacityPerReplica": 200},
        "load": {"rps": {"sum": [{"diurnal": {"min": 200, "max": 2400, "peak": "14:00"}},
                                 {"randomWalk": {"start": 0, "stddev": 20, "interval": "1m", "min": -200, "max": 200, "seed": 1}}]}},
        "objects": _objects(n_hpas),
    }
    return parse_scenario(yaml.safe_dump(doc), "bench.yaml")


def run() -> list[tuple[str, float, str]]:
    results: list[tuple[str, float, str]] = []

    sc = _scenario(1, 7 * 24)
    started = time.perf_counter()
    res = run_scenario(sc)
    summary = summarize(res)[0]
    wall = time.perf_counter() - started
    results += [
        ("one_hpa_7d_wall", wall, "s (goal < 5)"),
        ("one_hpa_7d_sim_per_wall", sc.duration / wall, "simulated s / wall s"),
        ("one_hpa_7d_reconcile_rate", res.reconciles / wall, "reconciles / s"),
        ("one_hpa_7d_scale_events", float(summary["scaleEvents"]), "events"),
    ]

    sc = _scenario(MANY_HPAS, MANY_HOURS)
    started = time.perf_counter()
    res = run_scenario(sc)
    summarize(res)
    wall = time.perf_counter() - started
    rate = res.reconciles / wall
    full = 1000 * 24 * 3600 / sc.config.sync_period
    results += [
        (f"hpas_{MANY_HPAS}_x_{MANY_HOURS:g}h_wall", wall, "s"),
        (f"hpas_{MANY_HPAS}_x_{MANY_HOURS:g}h_reconcile_rate", rate, "reconciles / s"),
        (f"hpas_{MANY_HPAS}_x_{MANY_HOURS:g}h_sim_per_wall", sc.duration / wall, "simulated s / wall s (all HPAs together)"),
        ("hpas_1000_x_24h_extrapolated_wall", full / rate, "s (goal < 300; extrapolated from the measured rate)"),
    ]
    return results


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name}: {value:,.2f} {unit}")
