"""`pyhpa reconcile` of a snapshot with the running controller's recorded configuration."""

from __future__ import annotations

import pytest

from pyhpa.api.loader import Document, LoadError
from pyhpa.controller.flags import FlagValues, build_config, config_document
from pyhpa.offline.snapshot import published_flags_in


def _doc(i, raw):
    return Document("snap.yaml", i, raw)


def test_the_recorded_configuration_is_used_and_flags_win():
    recorded = config_document(build_config(downscale_stabilization="1m", emulated_version="1.33"), "1.33", "ctl")
    found = published_flags_in([_doc(0, {"kind": "ConfigMap"}), _doc(1, recorded)])
    cfg = FlagValues.given(tolerance="0.3").over(found).config()
    assert (cfg.downscale_stabilization, cfg.tolerance) == (60.0, 0.3)
    assert not cfg.scaled_to_zero_condition and not cfg.memory_status_binary_si
    assert published_flags_in([_doc(0, {"kind": "ConfigMap"})]) is None


def test_a_bad_or_second_configuration_names_its_document():
    good = config_document(build_config(), None, "ctl")
    bad = {**good, "flags": {"horizontal-pod-autoscaler-sync-period": "soon"}}
    with pytest.raises(LoadError, match='document 0.*--horizontal-pod-autoscaler-sync-period: invalid duration "soon"'):
        published_flags_in([_doc(0, bad)])
    with pytest.raises(LoadError, match="document 1: a second ControllerConfiguration"):
        published_flags_in([_doc(0, good), _doc(1, good)])


SNAPSHOT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec: {replicas: 1, selector: {matchLabels: {app: web}}}
status: {replicas: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: default, labels: {app: web}}
spec: {containers: [{name: app, resources: {requests: {memory: 256Mi}}}]}
status:
  phase: Running
  startTime: '2026-01-01T00:00:00Z'
  conditions: [{type: Ready, status: 'True', lastTransitionTime: '2026-01-01T00:00:10Z'}]
---
apiVersion: metrics.k8s.io/v1beta1
kind: PodMetrics
metadata: {name: web-0, namespace: default, labels: {app: web}}
timestamp: '2026-01-01T00:09:45Z'
window: 30s
containers: [{name: app, usage: {memory: 200Mi}}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  metrics: [{type: Resource, resource: {name: memory, target: {type: AverageValue, averageValue: 100Mi}}}]
"""


@pytest.mark.parametrize("args, current, scaled_to_zero", [
    ([], "200Mi", True),
    (["--emulated-version", "1.33"], "209715200", False),  # 1.33: DecimalSI, no ScaledToZero condition
])
def test_reconcile_sets_what_the_emulated_release_implies(tmp_path, args, current, scaled_to_zero):
    import json

    from typer.testing import CliRunner

    from pyhpa.cli import app

    path = tmp_path / "snap.yaml"
    path.write_text(SNAPSHOT)
    out = CliRunner().invoke(app, ["reconcile", "-f", str(path), "-o", "json", "--now", "2026-01-01T00:10:00Z", *args])
    assert out.exit_code == 0, out.output
    hpa = next(i for i in json.loads(out.stdout)["items"] if i["kind"] == "HorizontalPodAutoscaler")
    assert hpa["status"]["currentMetrics"][0]["resource"]["current"]["averageValue"] == current
    assert any(c["type"] == "ScaledToZero" for c in hpa["status"]["conditions"]) is scaled_to_zero
