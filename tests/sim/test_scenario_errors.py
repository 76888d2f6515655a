"""Scenario and trace parsing: generators, traces, and errors that name file, line and field."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from pyhpa.sim.scenario import ScenarioError, load_scenario, parse_scenario
from pyhpa.sim.series import build_series
from pyhpa.sim.traces import SeriesError, read_csv, read_prometheus
from tests.sim.scenarios import cpu_hpa, deployment, scenario, steps

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def _where(k):
    return f"x: {k}"


def _write(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "scn.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _line_of(path: Path, needle: str) -> int:
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(needle)


def good(load=None, **kw) -> dict:
    return scenario([deployment(2), cpu_hpa()], load or {"load": steps(500, ("2m", 2000))}, **kw)


# ----------------------------------------------------------------------------- generators


def test_generators_values():
    b = lambda spec: build_series(spec, start=T0, end=T0 + 86400, base_dir=Path("."), where=_where)  # noqa: E731
    assert b(7).value(T0) == 7
    s = b({"step": {"before": 1, "after": 5, "at": "10m"}})
    assert (s.value(T0 + 599), s.value(T0 + 600)) == (1, 5)
    r = b({"ramp": {"from": 0, "to": 100, "start": "0s", "end": "100s"}})
    assert (r.value(T0 - 1), r.value(T0 + 50), r.value(T0 + 500)) == (0, 50, 100)
    d = b({"diurnal": {"min": 100, "max": 300, "peak": "14:00"}})
    assert d.value(T0 + 14 * 3600) == pytest.approx(300)
    assert d.value(T0 + 2 * 3600) == pytest.approx(100)
    sine = b({"sine": {"mean": 10, "amplitude": 2, "period": "1h", "peak": "15m"}})
    assert sine.value(T0 + 900) == pytest.approx(12) and sine.value(T0 + 2700) == pytest.approx(8)
    sp = b({"spikes": {"base": 1, "height": 9, "times": ["1h", "2h"], "length": "5m"}})
    assert [sp.value(T0 + x) for x in (3599, 3600, 3899, 3900, 7300)] == [1, 10, 10, 1, 10]
    w1 = b({"randomWalk": {"start": 100, "stddev": 5, "interval": "1m", "min": 90, "max": 110, "seed": 3}})
    w2 = b({"randomWalk": {"start": 100, "stddev": 5, "interval": "1m", "min": 90, "max": 110, "seed": 3}})
    vals = [w1.value(T0 + 60 * i) for i in range(200)]
    assert vals == [w2.value(T0 + 60 * i) for i in range(200)]
    assert min(vals) >= 90 and max(vals) <= 110 and len(set(vals)) > 10
    total = b({"sum": [5, {"step": {"before": 0, "after": 1, "at": "1m"}}]})
    assert (total.value(T0), total.value(T0 + 60)) == (5, 6)


def test_csv_trace_step_and_linear(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("timestamp,value\n2026-01-01T00:00:00Z,1\n2026-01-01T00:01:00Z,3\n2026-01-01T00:02:00Z,500m\n")
    tr = read_csv(p, T0)
    assert (tr.value(T0 + 30), tr.value(T0 + 60), tr.value(T0 + 120)) == (1, 3, 0.5)
    lin = read_csv(p, T0, interpolate="linear")
    assert lin.value(T0 + 30) == 2
    # offsets relative to the start, aligned
    p2 = tmp_path / "o.csv"
    p2.write_text("0,10\n60,20\n")
    assert read_csv(p2, T0).value(T0 + 61) == 20


def test_prometheus_trace(tmp_path):
    p = tmp_path / "q.json"
    doc = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"queue": "a"}, "values": [[1700000000, "1"], [1700000015, "2"], [1700000030, "4"]]},
        {"metric": {"queue": "b"}, "values": [[1700000000, "10"], [1700000015, "20"], [1700000030, "40"]]},
    ]}}
    p.write_text(json.dumps(doc))
    with pytest.raises(SeriesError, match="2 series"):
        read_prometheus(p, T0)
    assert read_prometheus(p, T0, match={"queue": "b"}).value(1700000016) == 20
    summed = read_prometheus(p, T0, aggregate="sum", align=True)
    assert summed.value(T0 + 15) == 22 and summed.times[0] == T0


# ----------------------------------------------------------------------------- errors


def test_unknown_kind_names_file_line_and_field(tmp_path):
    doc = good()
    doc["objects"].append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    path = _write(tmp_path, doc)
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    line = _line_of(path, "kind: ConfigMap")
    assert str(err.value).startswith(f"{path}:{line}: objects[2].kind: Unsupported value: 'ConfigMap'")


def test_negative_duration(tmp_path):
    path = _write(tmp_path, good(duration="-5m"))
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert str(err.value).startswith(f"{path}:{_line_of(path, 'duration:')}: duration: Invalid value: '-5m'")


def test_trace_with_a_gap(tmp_path):
    (tmp_path / "gap.csv").write_text("0,1\n15,1\n30,1\n45,1\n600,1\n615,1\n")
    path = _write(tmp_path, good(load={"load": {"csv": "gap.csv"}}))
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert str(err.value).startswith(f"{tmp_path / 'gap.csv'}:5: timestamp: gap of 555s")


def test_trace_with_non_monotonic_times(tmp_path):
    (tmp_path / "back.csv").write_text("timestamp,value\n0,1\n15,2\n10,3\n")
    path = _write(tmp_path, good(load={"load": {"csv": "back.csv"}}))
    with pytest.raises(ScenarioError, match=r"back\.csv:4: timestamp: times must increase"):
        load_scenario(path)


def test_trace_with_unparsable_value(tmp_path):
    (tmp_path / "nan.csv").write_text("0,1\n15,lots\n")
    path = _write(tmp_path, good(load={"load": {"csv": "nan.csv"}}))
    with pytest.raises(ScenarioError, match=r"nan\.csv:2: value: Invalid value: 'lots'"):
        load_scenario(path)
    p = tmp_path / "q.json"
    p.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {}, "values": [[1700000000, "1"], [1700000015, "NaN"]]}]}}))
    with pytest.raises(SeriesError, match=r"q\.json:1: data\.result\[0\]\.values\[1\]\[1\]: Invalid value: 'NaN'"):
        read_prometheus(p, T0)


def test_a_long_hole_in_a_short_trace_is_a_gap(tmp_path):
    # 1-minute points with a 28-minute hole: half of the spacings are long, so a median-based
    # limit would accept it; the lower quartile (60 s) gives a default maxGap of 180 s.
    (tmp_path / "gap.csv").write_text("timestamp,value\n0,1\n60,2\n120,3\n1800,4\n3600,5\n")
    path = _write(tmp_path, good(load={"load": {"csv": "gap.csv"}}, duration="1h"))
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert str(err.value) == (f"{tmp_path / 'gap.csv'}:5: timestamp: gap of 1680s after 2026-01-01T00:02:00Z exceeds "
                              "the default maxGap 180s (3 x the trace's typical spacing of 60s); "
                              "set load.load.maxGap to accept longer gaps")
    # An explicit maxGap is the limit: 30 minutes accepts the hole, 10 minutes names it.
    assert load_scenario(_write(tmp_path, good(load={"load": {"csv": "gap.csv", "maxGap": "30m"}}, duration="1h")))
    with pytest.raises(ScenarioError, match=r"gap\.csv:5: timestamp: gap of 1680s .* exceeds maxGap 600s"):
        load_scenario(_write(tmp_path, good(load={"load": {"csv": "gap.csv", "maxGap": "10m"}}, duration="1h")))
    # Evenly spaced traces, however coarse, have no gap; nor does jitter around the spacing.
    (tmp_path / "even.csv").write_text("".join(f"{900 * i},1\n" for i in range(5)))
    assert read_csv(tmp_path / "even.csv", T0).max_gap == 2700
    (tmp_path / "jitter.csv").write_text("".join(f"{15 * i + (i % 3)},1\n" for i in range(40)))
    read_csv(tmp_path / "jitter.csv", T0)


def test_typical_spacing_is_the_lower_quartile():
    from pyhpa.sim.traces import typical_spacing

    assert typical_spacing([0, 60, 120, 1800, 3600]) == 60
    assert typical_spacing([0, 10, 20, 30, 1000, 2000, 3000, 4000, 5000]) == 10
    assert typical_spacing([0]) is None


def _prom(values: list) -> str:
    # One key or item per line, as `curl | jq .` prints it.
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"job": "api"}, "values": values}]}}, indent=2)


@pytest.mark.parametrize("bad, field, needle", [
    ("abc", "values[3][1]: Invalid value: 'abc'", '"abc"'),
    (None, "values[3][1]: Invalid value: None", "null"),
])
def test_prometheus_value_errors_name_the_line(tmp_path, bad, field, needle):
    values = [[1767225600 + 60 * i, str(i)] for i in range(6)]
    values[3][1] = bad
    p = tmp_path / "q.json"
    p.write_text(_prom(values))
    with pytest.raises(SeriesError) as err:
        read_prometheus(p, T0)
    line = next(i for i, text in enumerate(p.read_text().splitlines(), 1) if needle in text)
    assert str(err.value).startswith(f"{p}:{line}: data.result[0].{field}")


def test_prometheus_time_and_gap_errors_name_the_line(tmp_path):
    p = tmp_path / "q.json"
    values = [[1767225600 + 60 * i, "1"] for i in range(6)]
    values[4][0] = 1767225600  # back in time
    p.write_text(_prom(values))
    with pytest.raises(SeriesError) as err:
        read_prometheus(p, T0)
    lines = p.read_text().splitlines()
    point = [i for i, text in enumerate(lines, 1) if text.strip() == "["][4]  # the 5th point's "["
    assert str(err.value).startswith(f"{p}:{point}: data.result[0].values[4]: timestamp: times must increase")
    values = [[1767225600 + 60 * i, "1"] for i in range(6)] + [[1767225600 + 3600, "1"]]
    p.write_text(_prom(values))
    with pytest.raises(SeriesError) as err:
        read_prometheus(p, T0)
    point = [i for i, text in enumerate(p.read_text().splitlines(), 1) if text.strip() == "["][6]
    assert str(err.value).startswith(f"{p}:{point}: data.result[0].values[6]: timestamp: gap of 3300s")
    p.write_text(json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}}, indent=1))
    with pytest.raises(SeriesError, match=r"q\.json:4: data\.resultType: expected \"matrix\""):
        read_prometheus(p, T0)


def test_json_line_follows_keys_and_indices():
    from pyhpa.sim.traces import json_line

    text = '{\n "a": [1,\n  {"b": 2,\n   "c": [3,\n 4]}],\n "d": {"e": 5}, "a": [9]\n}'
    assert json_line(text, []) == 1
    assert json_line(text, ["a"]) == 6  # a later duplicate key wins, as in json.loads
    assert json_line(text, ["d", "e"]) == 6
    assert json_line(text, ["a", 5]) == 6  # no such item: the deepest container found
    assert json_line(text, ["x"]) == 1  # missing: the deepest container found
    assert json_line('{"x": [1, {"y": [2,\n3]}]}', ["x", 1, "y", 1]) == 2


def test_trace_not_covering_the_run(tmp_path):
    (tmp_path / "short.csv").write_text("0,1\n15,1\n30,1\n")
    path = _write(tmp_path, good(load={"load": {"csv": "short.csv"}}))
    with pytest.raises(ScenarioError, match=r"load\.load: trace .*short\.csv covers"):
        load_scenario(path)


def test_generator_field_errors_name_their_line(tmp_path):
    path = _write(tmp_path, good(load={"load": {"ramp": {"from": 1, "to": "many"}}}))
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert f":{_line_of(path, 'to: many')}: load.load.ramp.to: Invalid value: 'many'" in str(err.value)


@pytest.mark.parametrize("mutate,expected", [
    (lambda d: d["workload"].update(cpu={"signal": "nope"}), "workload.cpu.signal: Not found: 'nope'"),
    (lambda d: d.update(controller={"horizontal-pod-autoscaler-sync-period": "0s"}), "controller.horizontal-pod-autoscaler-sync-period: Invalid value"),
    (lambda d: d.update(controller={"no-such-flag": 1}), "controller.no-such-flag: unknown flag"),
    (lambda d: d["objects"][1]["spec"].update(maxReplicas=0), "objects[1].spec.maxReplicas: Invalid value"),
    (lambda d: d["objects"][0]["spec"].update(replicas=-1), "objects[0].spec.replicas: Invalid value: -1"),
    (lambda d: d.update(outages=[{"from": "5m", "to": "1m"}]), "outages[0].to: must be after from"),
    (lambda d: d.update(outages=[{"from": "5m", "to": "9m", "duration": "1m"}]),
     "outages[0].duration: Forbidden: give to or duration, not both"),
    (lambda d: d.update(outages=[{"from": "5m", "duration": "0s"}]), "outages[0].duration: Invalid value: '0s'"),
    (lambda d: d.update(outages=[{"from": "5m", "duration": "1m", "metrics": "resource/cpu"}]),
     "outages[0].metrics: Unsupported value: 'resource/cpu'"),
    (lambda d: d.update(outages=[{"from": "5m", "duration": "1m", "metrics": ["external/"]}]),
     "outages[0].metrics: Unsupported value: 'external/'"),
    (lambda d: d.update(outages=[{"from": "10m", "duration": "1m"}]),
     "outages[0].from: Invalid value: '10m': must be before the end of the run (10m0s)"),
    (lambda d: d.update(outages=[{"from": "5m", "duration": "1m", "metrics": ["resource", "external/queue_dept"]}]),
     "outages[0].metrics: Not found: 'external/queue_dept': no workload serves a metric named 'queue_dept' "
     "(workload metrics: none)"),
    (lambda d: d.update(metrics={"resolution": "15s", "window": "20s"}), "metrics.window: Invalid value"),
    (lambda d: d.update(bogus=1), "bogus: unknown field"),
])
def test_field_errors(tmp_path, mutate, expected):
    doc = good()
    mutate(doc)
    path = _write(tmp_path, doc)
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}:") and expected in msg
    line = int(msg.split(":")[1])
    assert line >= 1


def test_invalid_yaml_reports_line():
    with pytest.raises(ScenarioError, match=r"^s\.yaml:3: invalid YAML"):
        parse_scenario("duration: 1m\nobjects: [\n", "s.yaml")


def test_parsed_scenario_fields(tmp_path):
    path = _write(tmp_path, good(controller={"horizontal-pod-autoscaler-tolerance": 0.2,
                                             "feature-gates": "HPAScaleToZero=false"}))
    sc = load_scenario(path)
    assert sc.duration == 600 and sc.step == 15 and sc.config.tolerance == 0.2
    assert sc.config.gates.scale_to_zero is False
    assert sc.workloads[0].containers == [("app", {"cpu": "500m"})]
    assert sc.hpas[0].spec.min_replicas == 1 and not math.isnan(sc.load["load"].value(sc.start))


# ----------------------------------------------------------------------------- HPA fields and targets


def test_hpa_validation_error_names_the_line_of_the_bad_field(tmp_path):
    doc = good()
    doc["objects"][1]["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] = -5
    path = _write(tmp_path, doc)
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert str(err.value) == (f"{path}:{_line_of(path, 'averageUtilization: -5')}: objects[1].spec.metrics[0]"
                              ".resource.target.averageUtilization: Invalid value: -5: must be greater than 0")


def test_hpa_decode_error_names_its_line(tmp_path):
    doc = good()
    doc["objects"][1]["spec"]["minReplicas"] = "two"
    path = _write(tmp_path, doc)
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert str(err.value).startswith(f"{path}:{_line_of(path, 'minReplicas: two')}: objects[1].spec.minReplicas")


def test_hpa_whose_target_is_not_in_the_scenario_is_an_error(tmp_path):
    doc = good()
    doc["objects"][1]["spec"]["scaleTargetRef"]["name"] = "nope"
    path = _write(tmp_path, doc)
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert str(err.value) == (f"{path}:{_line_of(path, 'name: nope')}: objects[1].spec.scaleTargetRef.name: Not found: "
                              "Deployment default/nope is not in the scenario (workloads: Deployment default/web)")
    doc["objects"][1]["spec"]["scaleTargetRef"].update(kind="StatefulSet", name="web")
    path = _write(tmp_path, doc)
    with pytest.raises(ScenarioError, match=r"objects\[1\]\.spec\.scaleTargetRef\.kind: Not found: StatefulSet default/web"):
        load_scenario(path)


def test_compare_files_are_checked_with_lines(tmp_path):
    from pyhpa.sim.simulate import simulate

    path = _write(tmp_path, good())
    other = tmp_path / "other.yaml"
    hpa = cpu_hpa(max_replicas=5)
    hpa["metadata"].pop("namespace")  # takes the scenario HPA's namespace
    hpa["spec"]["scaleTargetRef"]["name"] = "elsewhere"
    other.write_text(yaml.safe_dump(hpa, sort_keys=False))
    with pytest.raises(ScenarioError) as err:
        simulate(path, tmp_path / "out", [other], progress=False)
    assert str(err.value).startswith(f"{other}:{_line_of(other, 'name: elsewhere')}: document[0].spec.scaleTargetRef.name")
    hpa["spec"]["scaleTargetRef"]["name"] = "web"
    hpa["spec"]["maxReplicas"] = 0
    other.write_text(yaml.safe_dump(hpa, sort_keys=False))
    with pytest.raises(ScenarioError) as err:
        simulate(path, tmp_path / "out", [other], progress=False)
    assert str(err.value).startswith(f"{other}:{_line_of(other, 'maxReplicas: 0')}: document[0].spec.maxReplicas")


def test_outage_of_one_named_metric_with_a_duration(tmp_path):
    workload = {"startup": "0s", "termination": "0s", "cpu": {"signal": "load", "per": "1m"},
                "metrics": {"queue_depth": {"signal": "load"}}}
    path = _write(tmp_path, good(outages=[{"from": "2m", "duration": "3m", "metrics": "external/queue_depth"}],
                                 workload=workload))
    sc = load_scenario(path)
    t0 = sc.start + 120
    assert sc.outage(t0, "external", "queue_depth") and sc.outage(t0 + 179, "external", "queue_depth")
    assert not sc.outage(t0 + 180, "external", "queue_depth")  # [from, from + duration)
    assert not sc.outage(t0, "external", "other") and not sc.outage(t0, "external")
    assert not sc.outage(t0, "pods", "queue_depth")
