"""An HPA that cannot compute a scale is reported, not shown as a calm run.

Its summary gets the share of syncs with ``ScalingActive=False`` and the reasons, ``pyhpa
simulate`` warns on stderr, and ``--strict`` exits with 2 when an HPA never computed.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from pyhpa.cli import app
from pyhpa.sim.health import format_share, unable_to_compute
from pyhpa.sim.report import summarize
from tests.sim.scenarios import cpu_hpa, deployment, run, scenario, steps


def _no_request() -> dict[str, Any]:
    d = deployment(2)
    del d["spec"]["template"]["spec"]["containers"][0]["resources"]
    return d


def _pods_hpa() -> dict[str, Any]:
    h = cpu_hpa()
    h["spec"]["metrics"] = [{"type": "Pods", "pods": {"metric": {"name": "nobody_serves_this"},
                                                      "target": {"type": "AverageValue", "averageValue": "10"}}}]
    return h


def _second_hpa() -> dict[str, Any]:
    h = cpu_hpa()
    h["metadata"]["name"] = "web-too"
    return h


def _doc(objects: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return scenario(objects, {"load": steps(500, ("1m", 2000))}, duration="3m", **extra)


@pytest.mark.parametrize("objects, reason", [
    ([_no_request(), cpu_hpa()], "FailedGetResourceMetric"),
    ([deployment(2), _pods_hpa()], "FailedGetPodsMetric"),
    ([deployment(2), cpu_hpa(), _second_hpa()], "AmbiguousSelector"),
])
def test_an_hpa_that_never_computes_is_marked(objects, reason):
    summaries = summarize(run(_doc(objects)))
    assert summaries and all(s["unableToCompute"] == 1.0 for s in summaries)
    assert all(s["unableToComputeReasons"] == [reason] for s in summaries)


def test_a_healthy_run_has_no_new_fields():
    res = run(_doc([deployment(2), cpu_hpa()]))
    assert unable_to_compute(res.hpas[0]) == {}
    assert "unableToCompute" not in summarize(res)[0]


def test_an_outage_gives_a_share_between_0_and_1():
    doc = _doc([deployment(2), cpu_hpa()], outages=[{"from": "1m", "to": "2m", "metrics": ["resource"]}])
    [summary] = summarize(run(doc))
    assert 0 < summary["unableToCompute"] < 1
    assert summary["unableToComputeReasons"] == ["FailedGetResourceMetric"]


def test_a_target_scaled_to_zero_is_not_unable_to_compute():
    res = run(_doc([deployment(0), cpu_hpa()]))
    conditions = {c for rec in res.hpas[0].records[1:] for c in rec.conditions}
    assert ("ScalingActive", "False", "ScalingDisabled") in conditions
    assert unable_to_compute(res.hpas[0]) == {}


def test_a_suspended_hpa_is_not_unable_to_compute():
    hpa = cpu_hpa()
    hpa["metadata"]["annotations"] = {"autoscaling.kubernetes.io/suspend": "true"}
    res = run(_doc([deployment(2), hpa]))
    conditions = {c for rec in res.hpas[0].records[1:] for c in rec.conditions}
    assert ("ScalingActive", "False", "Suspended") in conditions  # on purpose, not broken
    assert unable_to_compute(res.hpas[0]) == {}


def test_share_text():
    assert [format_share(x) for x in (1.0, 0.9999, 0.5, 0.125, 0.0004)] == ["100%", "99.9%", "50%", "12.5%", "<0.1%"]


def _cli(tmp_path: Path, doc: dict[str, Any], *args: str) -> Any:
    path = tmp_path / "scn.yaml"
    path.write_text(yaml.safe_dump(copy.deepcopy(doc), sort_keys=False))
    return CliRunner().invoke(app, ["simulate", str(path), "-o", str(tmp_path / "out"), "--no-progress", *args])


def test_cli_warns_and_strict_exits_2(tmp_path):
    doc = _doc([_no_request(), cpu_hpa()])
    plain = _cli(tmp_path, doc)
    assert plain.exit_code == 0
    warning = ("warning: HPA default/web was unable to compute a scale in 100% of its syncs (ScalingActive=False: "
               "FailedGetResourceMetric): failed to get cpu utilization: missing request for cpu in container app of Pod ")
    [line] = plain.stderr.splitlines()
    assert line.startswith(warning)
    out = tmp_path / "out"
    assert json.loads((out / "summary.json").read_text())[0]["unableToCompute"] == 1.0
    header, row = (out / "summary.csv").read_text().splitlines()
    assert header.endswith(",capacitySource,timeToCapacityNotReached,unableToCompute,unableToComputeReasons")
    assert row.endswith(",1,FailedGetResourceMetric")
    assert (out / "summary.md").read_text().splitlines()[2].endswith("| 100% (FailedGetResourceMetric) |")

    strict = _cli(tmp_path, doc, "--strict")
    assert strict.exit_code == 2
    assert strict.stderr.splitlines()[1:] == ["error: --strict: 1 HPA(s) never computed a scale: default/web"]
    assert (out / "summary.json").exists()  # the outputs are written all the same


def test_strict_passes_a_partly_broken_and_a_healthy_run(tmp_path):
    partly = _cli(tmp_path, _doc([deployment(2), cpu_hpa()], outages=[{"from": "1m", "to": "2m"}]), "--strict")
    assert partly.exit_code == 0
    [line] = partly.stderr.splitlines()
    assert line.startswith("warning: HPA default/web was unable to compute a scale in ")
    healthy = _cli(tmp_path, _doc([deployment(2), cpu_hpa()]), "--strict")
    assert (healthy.exit_code, healthy.stderr) == (0, "")
    out = tmp_path / "out"
    assert "unableToCompute" not in (out / "summary.csv").read_text()
    assert "unable to compute" not in (out / "summary.md").read_text()


def test_strict_with_compare_names_the_variant(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(_pods_hpa()))
    res = _cli(tmp_path, _doc([deployment(2), cpu_hpa()]), "--strict", "--compare", str(broken))
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == "error: --strict: 1 HPA(s) never computed a scale: default/web (broken)"
    rows = (tmp_path / "out" / "compare.md").read_text().splitlines()[2:]
    assert rows[0].startswith("| scenario |") and rows[0].endswith("| - |")  # healthy
    assert rows[1].startswith("| broken |") and rows[1].endswith("| 100% (FailedGetPodsMetric) |")
