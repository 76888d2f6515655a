"""A week of history in a real Prometheus (backfilled with promtool), read by `pyhpa history` at a
30 s step, then tuned with `pyhpa tune --prometheus`: the scenario decodes strictly, what the week
holds (the saturated hour, the gap, the counter reset, requests, limits, startup, the replicas) is
read back as generated, and the recommendation reproduces under `pyhpa simulate --compare`."""

from __future__ import annotations

import csv
import json
import re
import statistics
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pyhpa.api.timefmt import format_epoch
from pyhpa.cli import app
from tests.prometheus_server import PrometheusServer, backfill, require_tools
from tests.sim import history_data as data

pytestmark = [pytest.mark.slow, pytest.mark.long(seconds=200)]

UNTIL = format_epoch(data.START + data.WEEK)
FLAGS = ["deployment/web", "-n", "shop", "--since", "7d", "--until", UNTIL, "--step", "30s", "--no-progress"]


@pytest.fixture(scope="module")
def week():
    return data.generate()


@pytest.fixture(scope="module")
def prometheus(week, tmp_path_factory):
    require_tools()
    root = tmp_path_factory.mktemp("week")
    backfill(week.openmetrics, root / "data", max_block="192h")
    with PrometheusServer(root / "data") as server:
        yield server


def run_history(url: str, out: Path) -> tuple[list[str], float]:
    began = time.monotonic()
    result = CliRunner().invoke(app, ["history", "--prometheus", url, *FLAGS, "-o", str(out)])
    took = time.monotonic() - began
    assert result.exit_code == 0, result.output
    return result.output.splitlines(), took


@pytest.fixture(scope="module")
def written(prometheus, tmp_path_factory):
    out = tmp_path_factory.mktemp("history") / "history.yaml"
    lines, took = run_history(prometheus.url, out)
    print(f"\npyhpa history over 7 days at a 30 s step: {took:.1f}s wall (goal < 30 s)")
    return out, lines


def _at(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def test_week_is_read_back_as_generated(week, written):
    out, lines = written
    assert "Traceback" not in "\n".join(lines)
    [saturated] = [line for line in lines if line.startswith("warning: saturated from ")]
    begin, end = (_at(t) for t in re.findall(r"\d{4}-\d\d-\d\dT[\d:]+Z", saturated)[:2])
    assert abs(begin - data.SATURATED[0]) <= 120 and abs(end - data.SATURATED[1]) <= 180, saturated
    [gap] = [line for line in lines if line.startswith("warning: gap in cpu usage")]
    begin, end = (_at(t) for t in re.findall(r"\d{4}-\d\d-\d\dT[\d:]+Z", gap)[:2])
    assert data.GAP[0] <= begin + 180 and end <= data.GAP[1] + 180, gap
    [reset] = [line for line in lines if line.startswith("warning: counter reset")]
    assert 'pod="web-5d8f7c-00001", container="app"' in reset
    assert abs(_at(re.findall(r"\d{4}-\d\d-\d\dT[\d:]+Z", reset)[0]) - data.RESET_AT) <= 60

    text = out.read_text()
    doc = yaml.safe_load(text)
    deployment, hpa = doc["objects"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container == {"name": "app", "resources": {"requests": {"cpu": "1", "memory": "256Mi"},
                                                      "limits": {"cpu": "1"}}}
    assert doc["workload"]["startup"] == f"{week.startup_median:.0f}s"
    assert f"over {week.pods_started} pods created in the range" in text
    assert deployment["spec"]["replicas"] == week.replicas[0]
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (data.MIN_REPLICAS, data.MAX_REPLICAS)
    assert hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 60
    assert doc["duration"] == "604800s" and doc["start"] == "2026-01-05T00:00:00Z"

    rows = list(csv.DictReader(out.with_suffix(".csv").open()))
    assert len(rows) == len(week.times) - 1
    blind = (data.GAP[0], data.GAP[1] + 300)  # the gap and the 5 minutes Prometheus looks back over it
    mismatched = [r["time"] for r, want in zip(rows, week.replicas)
                  if not blind[0] <= _at(r["time"]) < blind[1] and int(r["replicas"]) != want]
    assert mismatched == []
    errors = [abs(float(r["cpu_observed"]) - used) / used for r, used, t in zip(rows, week.used, week.times)
              if not data.GAP[0] <= t < data.GAP[1] + 300]
    assert statistics.median(errors) < 0.05


def test_week_scenario_decodes_strictly_and_simulates_with_a_replay_check(written, tmp_path):
    out, _ = written
    assert "observed:" in out.read_text()
    result = CliRunner().invoke(app, ["simulate", str(out), "-o", str(tmp_path / "sim"), "--no-progress"])
    assert result.exit_code == 0, result.output
    [summary] = json.loads((tmp_path / "sim" / "summary.json").read_text())
    replay = summary["replay"]
    assert replay["saturatedIntervals"] >= 1
    assert replay["observedScaleEvents"] > 0 and replay["withinOneReplica"] > 0.5


def test_tune_from_prometheus_recommends_and_reproduces(prometheus, tmp_path, monkeypatch):
    out = tmp_path / "tune"
    # the controller and metrics-server flags `pyhpa history` takes, as the week's controller ran
    ran = ["--horizontal-pod-autoscaler-sync-period=30s", "--horizontal-pod-autoscaler-downscale-stabilization=5m",
           "--metrics-resolution", "30s"]
    result = CliRunner().invoke(app, ["tune", "--prometheus", prometheus.url, *FLAGS, *ran, "-o", str(out),
                                      "--target", "60,75", "--min-replicas", "2", "--scale-down-window", "300",
                                      "--refine", "0"])
    assert result.exit_code == 0, result.output
    assert (out / "history.yaml").exists() and (out / "history.csv").exists()
    text = (out / "history.yaml").read_text()
    doc = yaml.safe_load(text)
    assert doc["controller"]["horizontal-pod-autoscaler-sync-period"] == "30s"
    assert doc["controller"]["horizontal-pod-autoscaler-downscale-stabilization"] == "300s"
    assert doc["metrics"] == {"resolution": "30s"}
    assert "controller:  # given: sync-period, downscale-stabilization; assumed:" in text
    rows = list(csv.DictReader((out / "frontier.csv").open()))
    [rec] = [r for r in rows if r["recommended"] == "true"]
    sim = tmp_path / "sim"
    result = CliRunner().invoke(app, ["simulate", str(out / "history.yaml"), "-o", str(sim), "--no-progress",
                                      "--compare", str(out / "recommended.yaml")])
    assert result.exit_code == 0, result.output
    table = {s["label"]: s for s in json.loads((sim / "compare.json").read_text())}
    assert table["recommended"]["podHours"] == float(rec["pod_hours"])
    assert table["recommended"]["underProvisionedPodSeconds"] == float(rec["under_provisioned_pod_seconds"])
    assert table["recommended"]["scaleEvents"] == int(rec["scale_events"])
