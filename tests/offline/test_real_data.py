"""`pyhpa reconcile` on data as real clusters serve it: the metrics APIs' lists (`kubectl get
--raw`, items without kind/apiVersion), and the warnings for what a dump lacks."""

from __future__ import annotations

import json
import pathlib

import yaml
from typer.testing import CliRunner

from pyhpa.cli import app
from tests import builders

NOW = "2026-01-01T00:00:10Z"


def _hpa(metric: dict) -> dict:
    return builders.hpa("web", metrics=[metric])


DEPLOY = builders.deployment("web", 2, template=None, status={"replicas": 2})


def _pod(name: str) -> dict:
    return builders.pod(name, containers=[builders.container("c", image=None, cpu="500m")],
                        started="2025-12-31T00:00:00Z")


STATE = {"apiVersion": "pyhpa.io/v1alpha1", "kind": "AutoscalerState",
         "metadata": {"namespace": "default", "name": "web"},
         "recommendations": [], "scaleUpEvents": [], "scaleDownEvents": []}

CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}
# As `kubectl get --raw /apis/metrics.k8s.io/v1beta1/namespaces/default/pods` prints it.
POD_METRICS_LIST = {"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {}, "items": [
    {"metadata": {"name": f"web-{i}", "namespace": "default", "labels": {"app": "web"}},
     "timestamp": "2026-01-01T00:00:00Z", "window": "30s",
     "containers": [{"name": "c", "usage": {"cpu": "400m", "memory": "10Mi"}}]} for i in (1, 2)]}


def _run(tmp_path: pathlib.Path, docs: list[dict], *raw_lists: dict) -> tuple[int, dict, list[str]]:
    snap = tmp_path / "snap.yaml"
    snap.write_text(yaml.safe_dump_all(docs))
    args = ["reconcile", "-f", str(snap), "--now", NOW, "-o", "json"]
    for i, raw in enumerate(raw_lists):
        path = tmp_path / f"raw{i}.json"
        path.write_text(json.dumps(raw))
        args += ["-f", str(path)]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    out = json.loads(result.stdout) if result.exit_code == 0 else {}
    return result.exit_code, out, [ln for ln in result.stderr.splitlines() if ln.startswith("warning:")]


def _status(out: dict) -> dict:
    return out["items"][0]["status"]


def test_raw_pod_metrics_list_is_accepted(tmp_path: pathlib.Path) -> None:
    code, out, warnings = _run(tmp_path, [_hpa(CPU), DEPLOY, _pod("web-1"), _pod("web-2"), STATE], POD_METRICS_LIST)
    assert code == 0
    assert _status(out)["desiredReplicas"] == 4  # 80% of request vs 50%: ceil(2 * 1.6)
    assert warnings == []


def test_raw_custom_metrics_v1beta1_and_v1beta2_lists(tmp_path: pathlib.Path) -> None:
    pods_metric = {"type": "Pods", "pods": {"metric": {"name": "rps"},
                                            "target": {"type": "AverageValue", "averageValue": "10"}}}
    item = {"describedObject": {"kind": "Pod", "namespace": "default", "name": "web-1", "apiVersion": "/v1"},
            "timestamp": "2026-01-01T00:00:00Z", "windowSeconds": 60, "value": "15"}
    v1beta1 = {"kind": "MetricValueList", "apiVersion": "custom.metrics.k8s.io/v1beta1", "metadata": {},
               "items": [item | {"metricName": "rps"}, item | {"metricName": "rps", "describedObject":
                                                               item["describedObject"] | {"name": "web-2"}}]}
    code, out, warnings = _run(tmp_path, [_hpa(pods_metric), DEPLOY, _pod("web-1"), _pod("web-2"), STATE], v1beta1)
    assert code == 0 and warnings == []
    assert _status(out)["desiredReplicas"] == 3
    v1beta2 = {"kind": "MetricValueList", "apiVersion": "custom.metrics.k8s.io/v1beta2", "metadata": {},
               "items": [{k: v for k, v in it.items() if k != "metricName"} | {"metric": {"name": "rps"}}
                         for it in v1beta1["items"]]}
    code, out2, _ = _run(tmp_path, [_hpa(pods_metric), DEPLOY, _pod("web-1"), _pod("web-2"), STATE], v1beta2)
    assert _status(out2)["desiredReplicas"] == 3


def test_raw_external_metrics_list(tmp_path: pathlib.Path) -> None:
    ext = {"type": "External", "external": {"metric": {"name": "queue"},
                                            "target": {"type": "AverageValue", "averageValue": "5"}}}
    raw = {"kind": "ExternalMetricValueList", "apiVersion": "external.metrics.k8s.io/v1beta1", "metadata": {},
           "items": [{"metricName": "queue", "metricLabels": {"q": "a"}, "timestamp": "2026-01-01T00:00:00Z",
                      "value": "15"}]}
    code, out, warnings = _run(tmp_path, [_hpa(ext), DEPLOY, _pod("web-1"), _pod("web-2"), STATE], raw)
    assert code == 0 and warnings == []
    assert _status(out)["desiredReplicas"] == 3


def test_items_of_a_plain_list_still_need_a_kind(tmp_path: pathlib.Path) -> None:
    plain = {"kind": "List", "apiVersion": "v1", "items": [{"metadata": {"name": "x"}}]}
    code, _, _ = _run(tmp_path, [DEPLOY], plain)
    assert code != 0


def test_warns_when_the_snapshot_lacks_the_metrics_its_hpas_read(tmp_path: pathlib.Path) -> None:
    code, out, warnings = _run(tmp_path, [_hpa(CPU), DEPLOY, _pod("web-1"), _pod("web-2"), STATE])
    assert code == 0
    assert len(warnings) == 1
    assert "no PodMetrics" in warnings[0] and "default/web" in warnings[0] and "resource metrics API" in warnings[0]
    # stdout is still the contract's List
    kinds = [i["kind"] for i in out["items"]]
    assert kinds[:2] == ["HorizontalPodAutoscaler", "Deployment"] and kinds[-1] == "AutoscalerState"


def test_warns_once_when_no_autoscaler_state(tmp_path: pathlib.Path) -> None:
    code, _, warnings = _run(tmp_path, [_hpa(CPU), DEPLOY, _pod("web-1"), _pod("web-2")], POD_METRICS_LIST)
    assert code == 0
    assert len(warnings) == 1 and "no AutoscalerState" in warnings[0] and "artifact" in warnings[0]


def test_no_warning_without_hpas(tmp_path: pathlib.Path) -> None:
    code, _, warnings = _run(tmp_path, [DEPLOY, _pod("web-1")])
    assert code == 0 and warnings == []
