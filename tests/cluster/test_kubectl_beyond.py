"""The real kubectl against a `pyhpa cluster` process: KEP-6003's spec.behavior.syncPeriodSeconds
on autoscaling/v2 (schema, validation, v1 round trip) and on the pyhpa.io/v1 CRD, and KEP-3428's
suspend annotation (an ordinary annotation: any cluster stores it)."""

from __future__ import annotations

import json

import pytest

from tests.cluster.conftest import REPO, make_kubectl

pytestmark = [pytest.mark.kubectl, pytest.mark.slow]

HPA = """
apiVersion: {api}
kind: HorizontalPodAutoscaler
metadata: {{name: fast}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  minReplicas: 1
  maxReplicas: 5
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 80}}}}
  behavior:
    syncPeriodSeconds: {period}
"""


@pytest.fixture(params=[33, 27], ids=["kubectl-1.33", "kubectl-1.27"])
def k(request, cluster_proc, kube_home):
    run = make_kubectl(request.param, cluster_proc, kube_home)
    ns = f"beyond-{request.param}"
    run("create", "namespace", ns)
    run.ns = ns  # type: ignore[attr-defined]
    yield run
    run("delete", "namespace", ns, "--timeout=50s", check=False)  # Terminating until empty


def apply(k, tmp_path, text, check=True):
    path = tmp_path / "obj.yaml"
    path.write_text(text)
    return k("-n", k.ns, "apply", "-f", str(path), check=check)


def test_sync_period_seconds_on_autoscaling_v2(k, tmp_path):
    ns = k.ns
    assert "horizontalpodautoscaler.autoscaling/fast created" in apply(
        k, tmp_path, HPA.format(api="autoscaling/v2", period=5)).stdout
    hpa = json.loads(k("-n", ns, "get", "hpa", "fast", "-o", "json").stdout)
    assert hpa["spec"]["behavior"]["syncPeriodSeconds"] == 5
    assert hpa["spec"]["behavior"]["scaleUp"]["selectPolicy"] == "Max"  # the behavior was defaulted
    # autoscaling/v1 carries it in the behavior annotation, in Go field names
    v1 = json.loads(k("-n", ns, "get", "horizontalpodautoscalers.v1.autoscaling", "fast", "-o", "json").stdout)
    behavior = json.loads(v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/behavior"])
    assert behavior["SyncPeriodSeconds"] == 5
    # a change through the apply path (server-side validation of the field name included)
    assert "configured" in apply(k, tmp_path, HPA.format(api="autoscaling/v2", period=3600)).stdout
    assert k("-n", ns, "get", "hpa", "fast", "-o", "jsonpath={.spec.behavior.syncPeriodSeconds}").stdout == "3600"
    bad = apply(k, tmp_path, HPA.format(api="autoscaling/v2", period=0), check=False)
    assert bad.returncode != 0
    assert "spec.behavior.syncPeriodSeconds: Invalid value: 0: must be greater than or equal to 1" in bad.stderr
    bad = apply(k, tmp_path, HPA.format(api="autoscaling/v2", period=3601), check=False)
    assert "spec.behavior.syncPeriodSeconds: Invalid value: 3601: must be less than or equal to 3600" in bad.stderr
    explained = k("explain", "hpa.spec.behavior.syncPeriodSeconds", "--api-version=autoscaling/v2").stdout
    assert "KEP-6003" in explained and "3600" in explained


def test_sync_period_seconds_on_the_pyhpa_io_crd(k, tmp_path):
    k("apply", "-f", str(REPO / "deploy" / "crd-pyhpa.io.yaml"))
    k("wait", "--for=condition=established", "crd/horizontalpodautoscalers.pyhpa.io", "--timeout=20s")
    assert "horizontalpodautoscaler.pyhpa.io/fast created" in apply(
        k, tmp_path, HPA.format(api="pyhpa.io/v1", period=7)).stdout
    got = k("-n", k.ns, "get", "horizontalpodautoscalers.pyhpa.io", "fast",
            "-o", "jsonpath={.spec.behavior.syncPeriodSeconds}").stdout
    assert got == "7"  # in the CRD schema: not pruned


def test_the_suspend_annotation_is_stored_and_removed(k, tmp_path):
    ns = k.ns
    apply(k, tmp_path, HPA.format(api="autoscaling/v2", period=5))
    k("-n", ns, "annotate", "hpa", "fast", "autoscaling.kubernetes.io/suspend=true")
    path = "jsonpath={.metadata.annotations.autoscaling\\.kubernetes\\.io/suspend}"
    assert k("-n", ns, "get", "hpa", "fast", "-o", path).stdout == "true"
    k("-n", ns, "annotate", "hpa", "fast", "autoscaling.kubernetes.io/suspend-")
    assert k("-n", ns, "get", "hpa", "fast", "-o", path).stdout == ""
