"""Properties of `pyhpa reconcile`, checked through the command on generated snapshots.

* no snapshot crashes it: exit 0, or exit != 0 with ONE stderr line naming file and document;
* after a pass that computed a decision, min <= desiredReplicas <= max (reconcileAutoscaler, normalizeDesiredReplicas);
* inside the tolerance band nothing changes (replica_calculator.go's tolerance check).
"""

from __future__ import annotations

import copy
import os
import pathlib
import tempfile

import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from pyhpa.cli import app
from tests import builders

NOW = "2026-01-01T00:10:00Z"
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def run(docs_text: str, *extra: str):
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "snap.yaml"
        path.write_text(docs_text)
        result = CliRunner().invoke(app, ["reconcile", "-f", str(path), "--now", NOW, *extra], catch_exceptions=False)
        return result, str(path)


def deployment(replicas, labels=None):
    return builders.deployment("web", replicas, selector={"matchLabels": labels or {"app": "web"}}, template=None,
                               status={"replicas": replicas})


def pod(i, usage_m, request_m=1000, ready="True", phase="Running"):
    """Pod web-<i> requesting ``request_m`` millicores and its PodMetrics (none if ``usage_m`` is None)."""
    p = builders.pod(f"web-{i}", cpu=f"{request_m}m", ready=ready, phase=phase, ready_since="2026-01-01T00:00:10Z")
    return [p, builders.pod_metrics(f"web-{i}", f"{usage_m}m")] if usage_m is not None else [p]


def hpa(min_r, max_r, metrics, behavior=None):
    return builders.hpa("web", min_replicas=min_r, max_replicas=max_r, metrics=metrics, behavior=behavior)


cpu = builders.cpu_metric


def dump(docs) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False, explicit_start=True)


# ----------------------------------------------------------------------------- no crash

junk = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=6),
                 st.lists(st.integers(0, 3), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@st.composite
def mutated_snapshot(draw):
    docs = [deployment(draw(st.integers(0, 6))), *[d for i in range(draw(st.integers(0, 3))) for d in pod(i, 500)],
            hpa(draw(st.integers(0, 3)), draw(st.integers(0, 8)), [cpu(50)], draw(st.sampled_from([None, {}])))]
    docs = copy.deepcopy(docs)
    for _ in range(draw(st.integers(0, 4))):
        doc = draw(st.sampled_from(docs))
        node = doc
        # walk down a random path and replace one value with junk
        for _depth in range(draw(st.integers(0, 4))):
            if isinstance(node, dict) and node:
                key = draw(st.sampled_from(sorted(node, key=str)))
                if isinstance(node[key], (dict, list)) and node[key]:
                    node = node[key]
                    continue
                node[key] = draw(junk)
                break
            if isinstance(node, list) and node:
                i = draw(st.integers(0, len(node) - 1))
                if isinstance(node[i], (dict, list)) and node[i]:
                    node = node[i]
                    continue
                node[i] = draw(junk)
                break
            break
    return dump(docs)


@SETTINGS
@given(mutated_snapshot())
def test_no_snapshot_crashes_the_command(text: str) -> None:
    result, path = run(text)
    if result.exit_code == 0:
        assert yaml.safe_load(result.stdout)["kind"] == "List"
        return
    lines = [ln for ln in result.stderr.splitlines() if ln.strip() and not ln.startswith("warning:")]
    assert len(lines) == 1, result.stderr
    assert path in lines[0] and "document" in lines[0], lines[0]


# Quantities from tiny to far beyond int64 (the API server accepts them all as targets).
extreme_quantity = st.one_of(
    st.builds(lambda m, e: f"{m}e{e}", st.integers(1, 999), st.integers(-9, 400)),
    st.sampled_from(["0", "1m", "9223372036854775807", "9223372036854775808", "8Ei", "16Ei", "-1e400", "1n"]),
)


@SETTINGS
@given(target=extreme_quantity, sample=extreme_quantity, kind=st.sampled_from(["External", "Object", "Pods", "Resource"]),
       target_type=st.sampled_from(["Value", "AverageValue"]))
def test_extreme_quantities_never_crash_the_pass(target, sample, kind, target_type) -> None:
    ts = "2026-01-01T00:09:45Z"
    if kind == "Pods" or kind == "Resource":
        target_type = "AverageValue"
    tgt = {"type": target_type, ("value" if target_type == "Value" else "averageValue"): target}
    metric = {"name": "q"}
    docs = [deployment(2), *pod(0, None), *pod(1, None)]
    if kind == "External":
        source = {"type": "External", "external": {"metric": metric, "target": tgt}}
        docs.append({"apiVersion": "external.metrics.k8s.io/v1beta1", "kind": "ExternalMetricValueList", "metadata": {},
                     "items": [{"metricName": "q", "metricLabels": {}, "timestamp": ts, "window": 60, "value": sample}]})
    elif kind == "Object":
        ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
        source = {"type": "Object", "object": {"metric": metric, "describedObject": ref, "target": tgt}}
        docs.append({"apiVersion": "custom.metrics.k8s.io/v1beta2", "kind": "MetricValueList", "metadata": {},
                     "items": [{"describedObject": {**ref, "namespace": "default"}, "metric": metric, "timestamp": ts,
                                "windowSeconds": 60, "value": sample}]})
    elif kind == "Pods":
        source = {"type": "Pods", "pods": {"metric": metric, "target": tgt}}
        docs.append({"apiVersion": "custom.metrics.k8s.io/v1beta2", "kind": "MetricValueList", "metadata": {},
                     "items": [{"describedObject": {"apiVersion": "/v1", "kind": "Pod", "name": f"web-{i}", "namespace": "default"},
                                "metric": metric, "timestamp": ts, "windowSeconds": 60, "value": sample} for i in (0, 1)]})
    else:
        source = {"type": "Resource", "resource": {"name": "cpu", "target": tgt}}
        docs += [{"apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
                  "metadata": {"name": f"web-{i}", "namespace": "default", "labels": {"app": "web"}},
                  "timestamp": ts, "window": "30s", "containers": [{"name": "app", "usage": {"cpu": sample}}]} for i in (0, 1)]
    docs.append(hpa(1, 10, [source]))
    result, path = run(dump(docs))
    if result.exit_code != 0:  # a negative target is the API server's validation error, in one line
        lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and path in lines[0] and "must be positive" in lines[0], result.stderr
        return
    status = hpa_status(result.stdout)
    assert 1 <= status["desiredReplicas"] <= 10 or status["desiredReplicas"] == 0, status


@SETTINGS
@given(st.text(max_size=80))
def test_arbitrary_text_is_read_or_rejected_in_one_line(text: str) -> None:
    result, path = run(text)
    if result.exit_code != 0:
        lines = [ln for ln in result.stderr.splitlines() if ln.strip() and not ln.startswith("warning:")]
        assert len(lines) == 1 and path in lines[0], result.stderr


# ----------------------------------------------------------------------------- bounds and tolerance


def hpa_status(stdout: str) -> dict:
    out = yaml.safe_load(stdout)
    return next(i for i in out["items"] if i["kind"] == "HorizontalPodAutoscaler")["status"]


@SETTINGS
@given(current=st.integers(1, 12), min_r=st.integers(1, 4), span=st.integers(0, 8),
       usages=st.lists(st.one_of(st.none(), st.integers(0, 3000)), min_size=0, max_size=6),
       target=st.integers(10, 150), behavior=st.sampled_from([None, {}, {"scaleDown": {"stabilizationWindowSeconds": 0}}]),
       history=st.booleans())
def test_desired_within_min_max(current, min_r, span, usages, target, behavior, history) -> None:
    max_r = min_r + span
    docs = [deployment(current), *[d for i, u in enumerate(usages) for d in pod(i, u)], hpa(min_r, max_r, [cpu(target)], behavior)]
    if history:
        docs.append({"apiVersion": "pyhpa.io/v1alpha1", "kind": "AutoscalerState", "metadata": {"namespace": "default", "name": "web"},
                     "recommendations": []})
    result, _ = run(dump(docs))
    assert result.exit_code == 0, result.stderr
    status = hpa_status(result.stdout)
    conds = {c["type"]: c for c in status.get("conditions") or []}
    if conds.get("ScalingActive", {}).get("status") == "False":
        return  # no decision this pass (spec: desiredReplicas keeps the previous value)
    assert min_r <= status["desiredReplicas"] <= max_r, status


@SETTINGS
@given(n=st.integers(1, 8), target=st.integers(20, 100), permille=st.integers(900, 1100), tolerance=st.sampled_from([None, "0.1", "0.2"]))
def test_inside_tolerance_band_nothing_changes(n, target, permille, tolerance) -> None:
    util = target * permille // 1000  # the utilization every pod reports, as an integer percent
    assume(0.9 <= util / target <= 1.1)
    args = [] if tolerance is None else ["--horizontal-pod-autoscaler-tolerance", tolerance]
    docs = [deployment(n), *[d for i in range(n) for d in pod(i, util * 10)], hpa(1, 20, [cpu(target)])]
    result, _ = run(dump(docs), *args)
    assert result.exit_code == 0, result.stderr
    out = yaml.safe_load(result.stdout)
    status = hpa_status(result.stdout)
    assert status["desiredReplicas"] == n
    assert "lastScaleTime" not in status
    assert not any(i["kind"] == "Event" for i in out["items"])
    workload = next(i for i in out["items"] if i["kind"] == "Deployment")
    assert workload["spec"]["replicas"] == n


def test_property_helpers_build_a_valid_snapshot() -> None:
    # A sanity anchor for the generators above: the plain snapshot scales 2 pods at 90% of 50% to 4.
    result, _ = run(dump([deployment(2), *pod(0, 900), *pod(1, 900), hpa(1, 10, [cpu(50)])]))
    assert result.exit_code == 0, result.stderr
    assert hpa_status(result.stdout)["desiredReplicas"] == 4
    assert os.path.exists(pathlib.Path(__file__))
