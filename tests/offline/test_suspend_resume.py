"""KEP-3428 through `pyhpa reconcile`, pass after pass: each pass reads the previous one's output
(HPA, Deployment, AutoscalerState), as a user replaying a cluster would.

Hand-computed: 4 pods at 100m of 1 CPU against 50 % propose 1; the memory holds 4 from 60 s before
the suspension; the legacy window is 5 minutes, so the 4 counts until 00:14:00 inclusive.
"""

from __future__ import annotations

import pathlib

import yaml
from typer.testing import CliRunner

from pyhpa.cli import app

from .test_cases import CASES, _load

SUSPEND = "autoscaling.kubernetes.io/suspend"


def reconcile(tmp_path: pathlib.Path, docs: list[dict], now: str) -> list[dict]:
    snap = tmp_path / f"snap-{now}.yaml"
    snap.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    res = CliRunner().invoke(app, ["reconcile", "-f", str(snap), "--now", now])
    assert res.exit_code == 0, res.output
    return _load(res.stdout)["items"]


def by_kind(items: list[dict], kind: str) -> dict:
    return next(i for i in items if i["kind"] == kind)


def test_suspend_then_resume_keeps_the_stabilization_window(tmp_path):
    snapshot = [d for d in _load_all(CASES / "kep3428-suspend-holds-during-window" / "snapshot.yaml")]
    pods = [d for d in snapshot if d["kind"] in ("Pod", "PodMetrics")]

    out = reconcile(tmp_path, snapshot, "2026-01-01T00:10:00Z")  # suspended at 00:10, memory {4@00:09}
    h = by_kind(out, "HorizontalPodAutoscaler")
    assert h["status"]["desiredReplicas"] == 4
    assert [(c["type"], c["reason"]) for c in h["status"]["conditions"]] == [
        ("AbleToScale", "SucceededGetScale"), ("ScalingActive", "Suspended")]
    assert by_kind(out, "AutoscalerState")["recommendations"] == [{"timestamp": "2026-01-01T00:09:00Z", "replicas": 4}]

    del h["metadata"]["annotations"][SUSPEND]  # kubectl annotate hpa web autoscaling.kubernetes.io/suspend-
    out = reconcile(tmp_path, out + pods, "2026-01-01T00:12:00Z")
    h = by_kind(out, "HorizontalPodAutoscaler")
    assert (by_kind(out, "Deployment")["spec"]["replicas"], h["status"]["desiredReplicas"]) == (4, 4)
    assert ("AbleToScale", "ScaleDownStabilized") in [(c["type"], c["reason"]) for c in h["status"]["conditions"]]
    assert not [i for i in out if i["kind"] == "Event"]

    out = reconcile(tmp_path, [i for i in out if i["kind"] != "Event"] + pods, "2026-01-01T00:14:00Z")
    assert by_kind(out, "Deployment")["spec"]["replicas"] == 4  # the 4 of 00:09 is exactly at the cutoff
    out = reconcile(tmp_path, [i for i in out if i["kind"] != "Event"] + pods, "2026-01-01T00:14:01Z")
    assert by_kind(out, "Deployment")["spec"]["replicas"] == 1
    assert [e["message"] for e in out if e["kind"] == "Event"] == ["New size: 1; reason: All metrics below target"]


def _load_all(path: pathlib.Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]
