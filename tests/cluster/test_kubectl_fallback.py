"""The real kubectl against a `pyhpa cluster` process: KEP-5679's external.fallback (and its
follow-up's strategy) and KEP-5053's behavior.fallback on
autoscaling/v2 (defaulting, validation naming the field, explain, the v1 metrics annotation) and on
the pyhpa.io/v1 CRD (in its schema, so not pruned)."""

from __future__ import annotations

import json

import pytest

from tests.cluster.conftest import REPO
from tests.cluster.test_kubectl_suspend_and_sync_period import apply, k  # noqa: F401 (fixture)

pytestmark = [pytest.mark.kubectl, pytest.mark.slow]

HPA = """
apiVersion: {api}
kind: HorizontalPodAutoscaler
metadata: {{name: queue}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: worker}}
  minReplicas: 1
  maxReplicas: 20
  metrics:
  - type: External
    external:
      metric: {{name: queue_depth}}
      target: {{type: AverageValue, averageValue: "30"}}
      fallback: {fallback}
"""


def test_fallback_on_autoscaling_v2(k, tmp_path):  # noqa: F811
    ns = k.ns
    assert "horizontalpodautoscaler.autoscaling/queue created" in apply(
        k, tmp_path, HPA.format(api="autoscaling/v2", fallback="{replicas: 8}")).stdout
    hpa = json.loads(k("-n", ns, "get", "hpa", "queue", "-o", "json").stdout)
    assert hpa["spec"]["metrics"][0]["external"]["fallback"] == {
        "failureDurationSeconds": 180, "replicas": 8, "strategy": "Static"}
    v1 = json.loads(k("-n", ns, "get", "horizontalpodautoscalers.v1.autoscaling", "queue", "-o", "json").stdout)
    metrics = json.loads(v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"])
    assert metrics[0]["external"]["fallback"] == {"failureDurationSeconds": 180, "replicas": 8, "strategy": "Static"}
    bad = apply(k, tmp_path, HPA.format(api="autoscaling/v2", fallback="{replicas: 0}"), check=False)
    assert bad.returncode != 0
    assert "spec.metrics[0].external.fallback.replicas: Invalid value: 0: must be greater than 0" in bad.stderr
    bad = apply(k, tmp_path, HPA.format(api="autoscaling/v2", fallback="{replicas: 3, failureDurationSeconds: 60}"),
                check=False)
    assert ("spec.metrics[0].external.fallback.failureDurationSeconds: Invalid value: 60: "
            "must be greater than or equal to 180") in bad.stderr
    bad = apply(k, tmp_path, HPA.format(api="autoscaling/v2", fallback="{replicas: 3, strategy: Max}"), check=False)
    assert ('spec.metrics[0].external.fallback.strategy: Unsupported value: "Max": '
            'supported values: "Static", "UseMax", "UseMin"') in bad.stderr
    explained = k("explain", "hpa.spec.metrics.external.fallback", "--api-version=autoscaling/v2").stdout
    assert "KEP-5679" in explained and "failureDurationSeconds" in explained and "UseMax" in explained


WHOLE = """
apiVersion: {api}
kind: HorizontalPodAutoscaler
metadata: {{name: whole}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: worker}}
  maxReplicas: 20
  behavior:
    fallback: {fallback}
"""


def test_hpa_fallback_on_autoscaling_v2(k, tmp_path):  # noqa: F811
    """KEP-5053's behavior.fallback: defaulted, validated naming the field, explained, and
    carried through autoscaling/v1's behavior annotation."""
    ns = k.ns
    apply(k, tmp_path, WHOLE.format(api="autoscaling/v2", fallback="{replicas: 4}"))
    hpa = json.loads(k("-n", ns, "get", "hpa", "whole", "-o", "json").stdout)
    assert hpa["spec"]["behavior"]["fallback"] == {"failureThreshold": 3, "replicas": 4}
    v1 = json.loads(k("-n", ns, "get", "horizontalpodautoscalers.v1.autoscaling", "whole", "-o", "json").stdout)
    behavior = json.loads(v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/behavior"])
    assert behavior["Fallback"] == {"FailureThreshold": 3, "Replicas": 4}
    bad = apply(k, tmp_path, WHOLE.format(api="autoscaling/v2", fallback="{replicas: 4, failureThreshold: 0}"),
                check=False)
    assert bad.returncode != 0
    assert "spec.behavior.fallback.failureThreshold: Invalid value: 0: must be greater than 0" in bad.stderr
    explained = k("explain", "hpa.spec.behavior.fallback", "--api-version=autoscaling/v2").stdout
    assert "KEP-5053" in explained and "failureThreshold" in explained


def test_fallback_on_the_pyhpa_io_crd(k, tmp_path):  # noqa: F811
    k("apply", "-f", str(REPO / "deploy" / "crd-pyhpa.io.yaml"))
    k("wait", "--for=condition=established", "crd/horizontalpodautoscalers.pyhpa.io", "--timeout=20s")
    assert "horizontalpodautoscaler.pyhpa.io/queue created" in apply(
        k, tmp_path, HPA.format(api="pyhpa.io/v1", fallback="{replicas: 8, failureDurationSeconds: 300}")).stdout
    got = k("-n", k.ns, "get", "horizontalpodautoscalers.pyhpa.io", "queue",
            "-o", "jsonpath={.spec.metrics[0].external.fallback.replicas}").stdout
    assert got == "8"  # in the CRD schema: not pruned
    apply(k, tmp_path, WHOLE.format(api="pyhpa.io/v1", fallback="{replicas: 4, failureThreshold: 2}"))
    got = k("-n", k.ns, "get", "horizontalpodautoscalers.pyhpa.io", "whole",
            "-o", "jsonpath={.spec.behavior.fallback.failureThreshold}").stdout
    assert got == "2"
