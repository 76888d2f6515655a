"""`pyhpa reconcile` reports a value of the wrong type in Go's words, from the schemas the
embedded API server checks requests with; unknown fields stay accepted (the contract)."""

from __future__ import annotations

import copy
import pathlib

import pytest
from typer.testing import CliRunner

from pyhpa.api.loader import LoadError, load_stream
from pyhpa.api.timefmt import parse_time
from pyhpa.cli import app
from pyhpa.engine.config import ControllerConfig
from pyhpa.offline.snapshot import reconcile_snapshot

NOW = parse_time("2026-01-01T00:10:00Z")
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: nginx, resources: {requests: {cpu: 200m}}}]}
status: {replicas: 3}
"""
HPA_V2 = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: MAX
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
"""
HPA_V1 = """\
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: prod}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: MAX
  targetCPUUtilizationPercentage: 50
"""


def load_error(text: str) -> LoadError:
    with pytest.raises(LoadError) as info:
        reconcile_snapshot(load_stream(text, "snap.yaml"), ControllerConfig(), NOW)
    return info.value


def test_a_string_in_an_int_field_of_a_v2_hpa_in_a_list(tmp_path: pathlib.Path) -> None:
    items = "\n".join("  " + line for line in HPA_V2.replace("MAX", '"ten"').splitlines())
    snap = tmp_path / "snap.yaml"
    snap.write_text(f"apiVersion: v1\nkind: List\nitems:\n- {items.lstrip()}\n")
    out = CliRunner().invoke(app, ["reconcile", "-f", str(snap)])
    assert out.exit_code == 2  # an input error (docs/exit-codes.md)
    assert out.output == (
        f"error: {snap}: document 0: items[0] (HorizontalPodAutoscaler default/web): json: cannot "
        "unmarshal string into Go struct field HorizontalPodAutoscalerSpec.spec.maxReplicas of type "
        "int32\n")


def test_a_string_in_an_int_field_of_a_v1_hpa() -> None:
    err = load_error(DEPLOYMENT + "---\n" + HPA_V1.replace("MAX", "ten"))
    assert str(err) == ("snap.yaml: document 1 (HorizontalPodAutoscaler prod/web): json: cannot unmarshal "
                        "string into Go struct field HorizontalPodAutoscalerSpec.spec.maxReplicas of type int32")
    assert (err.index, err.field) == (1, "spec.maxReplicas")


def test_an_int_where_a_deployment_has_an_object() -> None:
    err = load_error(DEPLOYMENT.replace("selector: {matchLabels: {app: web}}", "selector: 5")
                     + "---\n" + HPA_V2.replace("MAX", "10"))
    assert str(err) == ("snap.yaml: document 0 (Deployment default/web): json: cannot unmarshal number "
                        "into Go struct field DeploymentSpec.spec.selector of type v1.LabelSelector")
    assert err.field == "spec.selector"


def test_a_valid_snapshot_with_unknown_fields_loads_unchanged() -> None:
    text = (DEPLOYMENT.replace("replicas: 3\n", "replicas: 3\n  notAField: [1]\n", 1)
            + "---\n" + HPA_V2.replace("MAX", "10").replace("minReplicas: 1", "minReplicas: 1\n  extra: {a: b}")
            + "---\n" + HPA_V1.replace("MAX", "5"))
    docs = load_stream(text, "snap.yaml")
    before = copy.deepcopy([d.raw for d in docs])
    result = reconcile_snapshot(docs, ControllerConfig(), NOW)
    assert [d.raw for d in docs] == before
    kinds = [(i["kind"], i["metadata"]["namespace"]) for i in result.output["items"][:3]]
    assert kinds == [("HorizontalPodAutoscaler", "default"), ("HorizontalPodAutoscaler", "prod"),
                     ("Deployment", "default")]
    assert result.output["items"][2]["spec"]["notAField"] == [1]  # echoed as read
