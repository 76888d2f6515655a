"""Builders of small scenarios for the simulator tests (15 s everywhere, so hand computation is easy)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from pyhpa.sim.results import SimResult
from pyhpa.sim.runner import run_scenario
from pyhpa.sim.scenario import parse_scenario
from tests import builders


# A whole scenario file as text (a Deployment `web` at 400 rps and its CPU HPA), for the tests of
# how a file is read: their error messages name its lines.
WEB_SCENARIO_YAML = """\
duration: 5m
metrics: {resolution: 15s}
workload: {startup: 0s, termination: 0s, cpu: {signal: rps, per: 1m}}
load:
  rps: {constant: 400}
objects:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web}
  spec:
    replicas: 2
    selector: {matchLabels: {app: web}}
    template:
      metadata: {labels: {app: web}}
      spec:
        containers:
        - name: app
          resources: {requests: {cpu: 500m}}
- apiVersion: autoscaling/v2
  kind: HorizontalPodAutoscaler
  metadata: {name: web}
  spec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    minReplicas: 1
    maxReplicas: 10
    metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
"""


def deployment(replicas: int = 2, cpu: str = "500m", name: str = "web") -> dict[str, Any]:
    """The simulator's Deployment: one image-less container `app` requesting ``cpu``."""
    return builders.deployment(name, replicas, cpu=cpu, image=None)


def cpu_hpa(target: int = 50, min_replicas: int = 1, max_replicas: int = 10, behavior: Any = None,
            name: str = "web") -> dict[str, Any]:
    """An HPA over the Deployment of the same name at ``target`` % CPU."""
    return builders.cpu_hpa(name, utilization=target, min_replicas=min_replicas,
                            max_replicas=max_replicas, behavior=behavior)


def steps(initial: float, *changes: tuple[str, float]) -> dict[str, Any]:
    return {"steps": {"initial": initial, "changes": [{"at": at, "value": v} for at, v in changes]}}


def scenario(objects: list[dict[str, Any]], load: dict[str, Any], duration: str = "10m",
             workload: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "start": "2026-01-01T00:00:00Z",
        "duration": duration,
        "metrics": {"resolution": "15s", "window": "15s"},
        "workload": workload if workload is not None else {"startup": "0s", "termination": "0s",
                                                           "cpu": {"signal": "load", "per": "1m"}},
        "load": load,
        "objects": objects,
    }
    doc.update(extra)
    return doc


def run(doc: dict[str, Any], base_dir: Path | None = None) -> SimResult:
    text = yaml.safe_dump(copy.deepcopy(doc), sort_keys=False)
    return run_scenario(parse_scenario(text, "test.yaml", base_dir))


def replica_changes(result: SimResult, index: int = 0) -> list[tuple[float, int]]:
    """(offset seconds, spec.replicas) at each sync where the replica count changed, plus the first."""
    out: list[tuple[float, int]] = []
    for rec in result.hpas[index].records:
        if not out or out[-1][1] != rec.replicas:
            out.append((rec.t - result.scenario.start, rec.replicas))
    return out
