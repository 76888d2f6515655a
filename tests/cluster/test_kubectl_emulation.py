"""`pyhpa cluster --emulated-version`: real kubectl of the emulated release sees that release."""

from __future__ import annotations

import json
import re

import pytest

from tests import builders

from .conftest import ClusterProcess, make_kubectl

# (emulated release, --feature-gates); kubectl 1.<minor> drives each.
PROFILES = {33: None, 27: "HPAScaleToZero=true"}


@pytest.fixture(scope="module", params=sorted(PROFILES, reverse=True), ids=lambda m: f"emulated-1.{m}")
def emulated(request, tmp_path_factory):
    minor = request.param
    args = ["--emulated-version", f"1.{minor}"]
    if PROFILES[minor]:
        args += ["--feature-gates", PROFILES[minor]]
    proc = ClusterProcess(tmp_path_factory.mktemp(f"emul{minor}"), *args).start()
    kubectl = make_kubectl(minor, proc, tmp_path_factory.mktemp(f"kubehome-emul{minor}"))
    yield minor, kubectl
    proc.stop()


def hpa(name: str, *, min_replicas: int = 1, max_replicas: int = 5, api_version: str | None = "apps/v1") -> str:
    """The JSON of an HPA over `web` on an External metric (``api_version`` None: a ref without one)."""
    return json.dumps(builders.hpa(name, "web", metrics=[builders.external_metric()], namespace=None,
                                   min_replicas=min_replicas, max_replicas=max_replicas,
                                   target_api_version=api_version))


def test_kubectl_version_reports_the_emulated_release(emulated):
    minor, kubectl = emulated
    server = json.loads(kubectl("version", "-o", "json").stdout)["serverVersion"]
    assert (server["major"], server["minor"], server["gitVersion"]) == ("1", str(minor), f"v1.{minor}.0")


def test_validation_is_the_emulated_releases(emulated):
    minor, kubectl = emulated
    zero = kubectl("create", "-f", "-", input=hpa("zero", min_replicas=0), check=False)
    if minor == 33:  # HPAScaleToZero is alpha (off) in 1.33
        assert zero.returncode == 1
        assert zero.stderr.strip() == ('The HorizontalPodAutoscaler "zero" is invalid: '
                                       "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1")
    else:  # turned on with --feature-gates
        assert zero.returncode == 0, zero.stderr
    maxed = kubectl("create", "-f", "-", input=hpa("maxed", max_replicas=0), check=False)
    assert maxed.returncode == 1
    assert maxed.stderr.strip().splitlines() == [
        'The HorizontalPodAutoscaler "maxed" is invalid: ',
        "* spec.maxReplicas: Invalid value: 0: must be greater than 0",
        "* spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`"]
    # before 1.34 the target's apiVersion is not validated
    kubectl("create", "-f", "-", input=hpa("nogroup", api_version=None))


def test_the_node_reports_the_same_release(emulated):
    minor, kubectl = emulated
    assert kubectl("get", "node", "-o", "jsonpath={.items[0].status.nodeInfo.kubeletVersion}").stdout \
        == f"v1.{minor}.0"


def test_fields_newer_than_the_release_are_unknown_fields(emulated):
    minor, kubectl = emulated
    body = json.loads(hpa("newer"))
    body["spec"]["behavior"] = {"syncPeriodSeconds": 5, "scaleUp": {"tolerance": "0.05"}}
    out = kubectl("create", "-f", "-", input=json.dumps(body), check=False)
    assert out.returncode == 1
    unknown = ['unknown field "spec.behavior.syncPeriodSeconds"']
    if minor < 33:  # tolerance came with 1.33 (alpha)
        unknown.insert(0, 'unknown field "spec.behavior.scaleUp.tolerance"')
    assert out.stderr.strip().endswith("strict decoding error: " + ", ".join(unknown)), out.stderr


def test_explain_lists_only_the_fields_of_the_release(emulated):
    minor, kubectl = emulated
    out = kubectl("explain", "hpa.spec.behavior.scaleUp").stdout
    fields = re.findall(r"^  (\w+)\s+<", out.split("FIELDS:", 1)[1], re.M)
    expected = ["policies", "selectPolicy", "stabilizationWindowSeconds"]
    assert fields == (expected + ["tolerance"] if minor >= 33 else expected), out
    behavior = kubectl("explain", "hpa.spec.behavior").stdout
    assert "syncPeriodSeconds" not in behavior and "fallback" not in behavior


def test_targets_print_as_the_release_printed_them(emulated):
    minor, kubectl = emulated
    body = builders.hpa("columns", "web", namespace=None, metrics=[{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}])
    kubectl("create", "-f", "-", input=json.dumps(body))
    row = kubectl("get", "hpa", "columns").stdout.splitlines()[1].split()
    # the resource name before the value came with 1.30 (kubernetes/kubernetes PR #122804)
    assert row[2:4] == (["cpu:", "<unknown>/50%"] if minor >= 30 else ["<unknown>/50%", "1"])
