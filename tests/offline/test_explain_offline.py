"""`pyhpa explain`'s rendering and KEP-6107 reasons over hand-made snapshots (no cluster)."""

from __future__ import annotations

import copy
from datetime import datetime, timezone

import pytest

from pyhpa.engine.config import ControllerConfig
from pyhpa.offline.explain import NO_HISTORY, explain_hpa
from tests import builders

NOW = datetime(2026, 1, 1, 0, 10, tzinfo=timezone.utc)
LONG_AGO = "2025-12-31T00:00:00Z"
KEY = "default/web"


def _hpa(max_r: int = 10, min_r: int = 1, metrics: list | None = None) -> dict:
    return builders.hpa("web", min_replicas=min_r, max_replicas=max_r, metrics=metrics or [builders.cpu_metric(50)])


def _deploy(replicas: int) -> dict:
    return builders.deployment("web", replicas, template=None, status={"replicas": replicas})


def _pod(name: str, ready: str = "True", deleted: bool = False) -> dict:
    return builders.pod(name, containers=[builders.container("c", image=None, cpu="100m")], ready=ready,
                        started=LONG_AGO, **({"deletionTimestamp": "2026-01-01T00:09:00Z"} if deleted else {}))


def _usage(name: str, cpu: str) -> dict:
    return builders.pod_metrics(name, cpu, container_name="c", timestamp="2026-01-01T00:09:50Z")


def _state(recs: list[tuple[str, int]]) -> dict:
    return {"apiVersion": "pyhpa.io/v1alpha1", "kind": "AutoscalerState",
            "metadata": {"namespace": "default", "name": "web"},
            "recommendations": [{"timestamp": t, "replicas": r} for t, r in recs]}


def _explain(items: list[dict], persisted: bool = True):
    return explain_hpa(copy.deepcopy(items), KEY, ControllerConfig(), NOW, persisted)


def test_within_tolerance() -> None:
    ex = _explain([_hpa(), _deploy(2), _pod("a"), _pod("b"), _usage("a", "50m"), _usage("b", "52m"), _state([])])
    d = ex.to_json()
    assert (d["reason"], d["constraints"], d["desiredReplicas"]) == ("WithinTolerance", ["Tolerance"], 2)
    assert "tolerance band [0.9, 1.1]: ratio 1.020 inside: keep the current count" in "\n".join(ex.lines)


def test_stabilized_by_a_stored_recommendation_shows_it_and_its_expiry() -> None:
    ex = _explain([_hpa(), _deploy(4), *[_pod(n) for n in "abcd"], *[_usage(n, "10m") for n in "abcd"],
                   _state([("2026-01-01T00:08:00Z", 4)])])
    d = ex.to_json()
    assert (d["reason"], d["recommendedReplicas"], d["desiredReplicas"]) == ("Stabilized", 1, 4)
    assert d["constraints"] == ["Stabilization"]
    text = "\n".join(ex.lines)
    assert "2026-01-01T00:08:00Z  4 replicas, leaves the scale-down window at 2026-01-01T00:13:00Z (in 180s)" \
           " ← held the count" in text
    assert "controller memory: the state" in text


def test_fresh_controller_says_so() -> None:
    ex = _explain([_hpa(), _deploy(2), _pod("a"), _pod("b"), _usage("a", "50m"), _usage("b", "50m")], False)
    assert NO_HISTORY in ex.lines
    assert any("a fresh controller first records the current count (2)" in ln for ln in ex.lines)


def test_replica_limit_at_max() -> None:
    ex = _explain([_hpa(max_r=3), _deploy(2), _pod("a"), _pod("b"), _usage("a", "200m"), _usage("b", "200m"),
                   _state([])])
    d = ex.to_json()
    assert (d["reason"], d["desiredReplicas"]) == ("ReplicaLimit", 3)
    assert "MaxReplicas" in d["constraints"]


def test_invalid_metrics_without_values() -> None:
    ex = _explain([_hpa(), _deploy(2), _pod("a"), _pod("b"), _state([])])
    d = ex.to_json()
    assert d["reason"] == "InvalidMetrics" and "recommendedReplicas" not in d
    assert d["metrics"] == [{"metricIndex": 0, "status": "Invalid", "reason": "FetchFailed"}]


@pytest.mark.parametrize("pods,cls,rule", [
    ([_pod("a"), _pod("b", ready="False"), _usage("b", "100m")], "unready", "not Ready"),
    ([_pod("a"), _pod("b")], "missing", "no sample from the metrics API"),
    ([_pod("a"), _pod("b", deleted=True)], "deleted", "deletionTimestamp set"),
])
def test_pod_table_classes(pods: list, cls: str, rule: str) -> None:
    ex = _explain([_hpa(), _deploy(2), *pods, _usage("a", "100m"), _state([])])
    row = next(ln for ln in ex.lines if ln.startswith("    b "))
    assert f" {cls} " in row and rule in row
    assert any(ln.startswith("    a ") and " ready " in ln for ln in ex.lines)


def test_hpa_fallback_says_why_it_replaced_the_recommendation() -> None:
    """KEP-5053: the 4th failed sync in a row (threshold 3) uses behavior.fallback's 5 replicas."""
    hpa = _hpa()
    hpa["spec"]["behavior"] = {"fallback": {"replicas": 5}}
    hpa["status"] = {"currentReplicas": 2, "desiredReplicas": 2, "currentMetrics": None,
                     "consecutiveMetricRetrievalFailureCount": 3}
    ex = _explain([hpa, _deploy(2), _pod("a"), _pod("b"), _state([])])
    d = ex.to_json()
    assert (d["reason"], d["desiredReplicas"]) == ("RecommendationFailed", 5) and "recommendedReplicas" not in d
    text = "\n".join(ex.lines)
    assert "behavior.fallback of 5 replicas after 4 syncs without metrics" in text
    assert "recommendation (KEP-5053 fallback): 5:" in text


def test_external_metric_fallback_shows_the_failure_run_and_its_proposal() -> None:
    """KEP-5679: queue_depth has failed since 00:06:00 (240 s >= 180 s), so it proposes its 6 replicas."""
    hpa = _hpa(metrics=[{"type": "External", "external": {
        "metric": {"name": "queue_depth"}, "target": {"type": "AverageValue", "averageValue": "30"},
        "fallback": {"replicas": 6}}}])
    hpa["status"] = {"currentReplicas": 4, "desiredReplicas": 4, "currentMetrics": [{"type": "External", "external": {
        "metric": {"name": "queue_depth"}, "current": {}, "fallbackStatus": "Normal",
        "firstFailureTime": "2026-01-01T00:06:00Z"}}]}
    ex = _explain([hpa, _deploy(4), _state([])])
    assert ex.to_json()["desiredReplicas"] == 6
    text = "\n".join(ex.lines)
    assert "  in fallback (KEP-5679): failing for 4m0s (since 2026-01-01T00:06:00Z): fallback of 6 replicas" in text
    assert "  proposal: 6 replicas [used: the largest proposal]" in text
    assert "None" not in text


def test_external_metric_failing_before_its_fallback_says_when_it_takes_over() -> None:
    hpa = _hpa(metrics=[{"type": "External", "external": {
        "metric": {"name": "queue_depth"}, "target": {"type": "AverageValue", "averageValue": "30"},
        "fallback": {"replicas": 6, "failureDurationSeconds": 300}}}])
    hpa["status"] = {"currentReplicas": 4, "desiredReplicas": 4, "currentMetrics": [{"type": "External", "external": {
        "metric": {"name": "queue_depth"}, "current": {}, "fallbackStatus": "Normal",
        "firstFailureTime": "2026-01-01T00:08:00Z"}}]}
    ex = _explain([hpa, _deploy(4), _state([])])
    assert ex.to_json()["desiredReplicas"] == 4
    assert ("  fallback (KEP-5679): failing since 2026-01-01T00:08:00Z; its 6 replicas take over at "
            "2026-01-01T00:13:00Z (in 180s), after failureDurationSeconds 300") in ex.lines
