"""Timeline outputs: ``--timeline csv|json|none``, and the columnar CSV writer against the rows."""

from __future__ import annotations

import csv
import io

import pytest
import yaml
from typer.testing import CliRunner

from pyhpa.cli import app
from pyhpa.sim.timeline_files import write_timeline, write_timeline_csv
from tests.sim.scenarios import cpu_hpa, deployment, run, scenario, steps


def _reference_csv(result) -> list[list[str]]:
    """The CSV as the JSON rows (report.timeline_row) say it, built the plain way."""
    def num(v):
        return "" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v))

    labels: list[str] = []
    for r in result.hpas:
        labels += [x for x in r.metric_labels if x not in labels]
    out = []
    for r in result.hpas:
        for row in r.iter_rows():
            by = {m["metric"]: m for m in row["metrics"]}
            line = [row["time"], str(row["offsetSeconds"]), row["hpa"], num(row["demand"]), num(row["capacity"]),
                    num(row["replicas"]), num(row["readyReplicas"]), num(row["desiredReplicas"])]
            for label in labels:
                m = by.get(label)
                line += [num(m["current"]) if m else "", num(m["target"]) if m else ""]
            line.append(";".join(f"{k}={v['status']}:{v['reason']}" for k, v in row["conditions"].items()))
            line.append(" | ".join(row["events"]))
            out.append(line)
    return out


@pytest.fixture(scope="module")
def two_hpas():
    # Two HPAs with different metric sets (an int utilization, a float average value): every
    # column kind, missing metrics, conditions and events (scale-ups).
    web, api = deployment(2, name="web"), deployment(2, name="api")
    rps = cpu_hpa(name="api")
    rps["spec"]["metrics"].append({"type": "Pods", "pods": {"metric": {"name": "qps"},
                                                            "target": {"type": "AverageValue", "averageValue": "150m"}}})
    doc = scenario([web, cpu_hpa(name="web"), api, rps], {"load": steps(500, ("1m", 2000))}, duration="4m",
                   workload={"startup": "30s", "termination": "0s", "cpu": {"signal": "load", "per": "1m"},
                             "metrics": {"qps": {"signal": "load", "per": "1m"}}, "demand": "load"})
    return run(doc)


def test_columnar_csv_equals_the_rows(two_hpas):
    buf = io.StringIO()
    write_timeline_csv(two_hpas, buf)
    lines = list(csv.reader(io.StringIO(buf.getvalue())))
    assert lines[0][8:] == ["cpu current", "cpu target", "pods/qps current", "pods/qps target", "conditions", "events"]
    assert lines[1:] == _reference_csv(two_hpas)
    assert any(line[-1] for line in lines[1:]) and any(line[10] for line in lines[1:])  # events, float currents


def test_timeline_formats(tmp_path, two_hpas):
    assert [p.name for p in write_timeline(two_hpas, tmp_path / "a")] == ["timeline.csv"]
    assert [p.name for p in write_timeline(two_hpas, tmp_path / "b", "json")] == ["timeline.json"]
    assert write_timeline(two_hpas, tmp_path / "c", "none") == [] and not (tmp_path / "c").exists()
    with pytest.raises(ValueError, match="Unsupported value: 'xml'"):
        write_timeline(two_hpas, tmp_path / "d", "xml")


def test_cli_timeline_none_and_bad_value(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario([deployment(2), cpu_hpa()], {"load": steps(500, ("1m", 2000))},
                                            duration="2m")))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", str(out), "--timeline", "none"])
    assert result.exit_code == 0, result.output
    assert not list(out.glob("timeline.*")) and (out / "summary.json").exists()
    bad = CliRunner().invoke(app, ["simulate", str(path), "-o", str(out), "--timeline", "xml"])
    assert bad.exit_code == 2 and "--timeline: Unsupported value: 'xml'" in bad.output
