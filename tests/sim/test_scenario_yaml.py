"""Scenario files are YAML read the way kubectl reads manifests (pyhpa.api.goyaml)."""

from __future__ import annotations

import pytest

from pyhpa.sim.scenario import ScenarioError, parse_scenario

SCENARIO = """\
start: 2026-01-01T00:00:00Z
duration: 10m
metrics: {resolution: 15s, window: 15s}
workload: {startup: 0s, termination: 0s, cpu: {signal: load, per: 1m}}
load: {load: {constant: 500}}
objects:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: default, annotations: {released: 2026-01-01}}
  spec:
    replicas: 0o17
    selector: {matchLabels: {app: web}}
    template:
      metadata: {labels: {app: web}}
      spec: {containers: [{name: app, resources: {requests: {cpu: 500m}}}]}
- apiVersion: autoscaling/v2
  kind: HorizontalPodAutoscaler
  metadata: {name: web, namespace: default}
  spec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    maxReplicas: %s
"""


def test_go_yaml_numbers_and_dates_as_pyhpa_reconcile_reads_them():
    sc = parse_scenario(SCENARIO % "1e1", "s.yaml")
    assert sc.hpas[0].spec.max_replicas == 10  # go-yaml: 1e1 is a number (PyYAML: a string)
    assert sc.workloads[0].replicas == 15  # 0o17
    assert sc.workloads[0].annotations == {"released": "2026-01-01"}  # a string, not a date


def test_hpa_errors_name_the_line_of_the_field():
    with pytest.raises(ScenarioError, match=r"^s\.yaml:21: objects\[1\]\.spec\.maxReplicas: "):
        parse_scenario(SCENARIO % "1.5", "s.yaml")


def test_yaml_errors_name_the_line():
    with pytest.raises(ScenarioError, match=r"^s\.yaml:21: invalid YAML: .*nan is not a valid JSON number"):
        parse_scenario(SCENARIO % ".nan", "s.yaml")
    with pytest.raises(ScenarioError, match=r"^s\.yaml:3: invalid YAML: "):
        parse_scenario("start: x\nduration: [\n", "s.yaml")
