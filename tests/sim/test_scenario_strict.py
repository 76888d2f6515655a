"""Strict scenario input: every typo, duplicate key and negative load is one clean error line.

Each bad input runs through ``pyhpa simulate`` and must give exit code 1 and exactly one line on
stderr naming the file, the line and the field (no traceback), before any simulating.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pyhpa.cli import app
from pyhpa.sim.scenario import load_hpa_file, load_scenario, parse_scenario
from tests.sim.scenarios import WEB_SCENARIO_YAML

BASE = WEB_SCENARIO_YAML

HPA = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 6
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}]
"""

HPA_FIELDS = "behavior, maxReplicas, metrics, minReplicas, scaleTargetRef"


def _line(text: str, needle: str) -> int:
    [line] = [i for i, x in enumerate(text.splitlines(), 1) if needle in x]
    return line


def _edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def _fails(tmp_path: Path, text: str, *extra: str) -> tuple[Path, str]:
    """Run the scenario ``text``; it must fail with one error line, which is returned."""
    path = tmp_path / "scn.yaml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", str(tmp_path / "out"), "--no-progress", *extra])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert not (tmp_path / "out").exists()  # refused before anything ran or was written
    return path, lines[0][len("error: "):]


# ----------------------------------------------------------------------------- unknown fields


def test_unknown_hpa_field_names_line_path_and_allowed_names(tmp_path):
    text = _edit(BASE, "    minReplicas: 1", "    minReplica: 3")
    path, err = _fails(tmp_path, text)
    assert err == (f'{path}:{_line(text, "minReplica:")}: objects[1].spec.minReplica: unknown field "minReplica" '
                   f"(did you mean minReplicas? allowed: {HPA_FIELDS})")


def test_unknown_behavior_field(tmp_path):
    text = _edit(BASE, "    maxReplicas: 10", "    maxReplicas: 10\n    behavior:\n      scaleup: {selectPolicy: Max}")
    path, err = _fails(tmp_path, text)
    assert err == (f'{path}:{_line(text, "scaleup:")}: objects[1].spec.behavior.scaleup: unknown field "scaleup" '
                   "(did you mean scaleUp? allowed: fallback, scaleDown, scaleUp, syncPeriodSeconds)")


def test_unknown_deployment_field_deep_in_the_pod_template(tmp_path):
    text = _edit(BASE, "          resources: {requests: {cpu: 500m}}", "          resource: {requests: {cpu: 500m}}")
    path, err = _fails(tmp_path, text)
    # a container has many fields: the nearest one, not the list
    assert err == (f'{path}:{_line(text, "resource: {requests")}: objects[0].spec.template.spec.containers[0].resource: '
                   'unknown field "resource" (did you mean resources?)')


def test_unknown_field_in_an_objects_file(tmp_path):
    (tmp_path / "hpa.yaml").write_text(_edit(HPA, "  minReplicas: 2", "  minReplica: 2"))
    text = BASE[:BASE.index("- apiVersion: autoscaling/v2")] + "- file: hpa.yaml\n"
    _, err = _fails(tmp_path, text)
    assert err.startswith(f'{tmp_path / "hpa.yaml"}:6: document[0].spec.minReplica: unknown field "minReplica"')


@pytest.mark.parametrize("edit, field, message", [
    (("  rps: {constant: 400}", "  rps: {csv: rps.csv, interpolation: linear}"), "load.rps.interpolation",
     'unknown field "interpolation" (did you mean interpolate? allowed: align, column, csv, interpolate, maxGap, '
     "scale)"),
    (("  rps: {constant: 400}", "  rps: {ramp: {form: 1, to: 5}}"), "load.rps.ramp.form",
     'unknown field "form" (did you mean from? allowed: end, from, start, to)'),
    (("  rps: {constant: 400}", "  rps: {constant: 400, interpolate: linear}"), "load.rps.interpolate",
     'unknown field "interpolate" (allowed: constant)'),
    (("duration: 5m", "duration: 5m\nsumary: {demandStepRise: 10%}"), "sumary", 'unknown field "sumary" (did you mean summary?)'),
    (("workload: {startup: 0s,", "workload: {startpu: 0s,"), "workload.startpu",
     'unknown field "startpu" (did you mean startup? allowed: capacityPerReplica, cpu, cpuCapacity, demand, '
     "memory, metrics, pending, podManagementPolicy, startup, startupCpu, termination)"),
])
def test_unknown_scenario_and_series_fields(tmp_path, edit, field, message):
    (tmp_path / "rps.csv").write_text("0,400\n60,400\n")
    text = _edit(BASE, *edit)
    path, err = _fails(tmp_path, text)
    needle = field.rsplit(".", 1)[-1] + ":"
    assert err == f"{path}:{_line(text, needle)}: {field}: {message}"


def test_workloads_entry_must_name_a_workload(tmp_path):
    text = _edit(BASE, "\nload:", "\nworkloads:\n  webb: {cpu: {signal: rps, per: 2m}}\nload:")
    path, err = _fails(tmp_path, text)
    assert err == (f"{path}:{_line(text, 'webb:')}: workloads.webb: Not found: no Deployment or StatefulSet "
                   "named 'webb' (workloads: web)")


# ----------------------------------------------------------------------------- duplicate keys


def test_duplicate_key_in_the_scenario(tmp_path):
    text = BASE + "duration: 1h\n"
    path, err = _fails(tmp_path, text)
    assert err == f'{path}:{len(text.splitlines())}: duration: duplicate field "duration" (first set on line 1)'


def test_duplicate_key_in_a_manifest(tmp_path):
    text = _edit(BASE, "    maxReplicas: 10", "    maxReplicas: 10\n    maxReplicas: 3")
    path, err = _fails(tmp_path, text)
    first = _line(text, "maxReplicas: 10")
    assert err == (f'{path}:{first + 1}: objects[1].spec.maxReplicas: duplicate field "maxReplicas" '
                   f"(first set on line {first})")


# ----------------------------------------------------------------------------- negative values

GE0 = "must be greater than or equal to 0"


@pytest.mark.parametrize("edit, needle, field, message", [
    (("  rps: {constant: 400}", "  rps: -5"), "rps:", "load.rps", f"Invalid value: -5: {GE0}"),
    (("  rps: {constant: 400}", "  rps: {constant: -5}"), "rps:", "load.rps.constant", f"Invalid value: -5: {GE0}"),
    (("  rps: {constant: 400}", "  rps: {steps: [{at: 1m, value: -1}]}"), "rps:", "load.rps.steps[0].value",
     f"Invalid value: -1: {GE0}"),
    (("  rps: {constant: 400}", "  rps: {sine: {mean: 100, amplitude: 150, period: 1h}}"), "rps:",
     "load.rps.sine.amplitude", f"Invalid value: 150: the wave reaches -50; mean - |amplitude| {GE0}"),
    (("  rps: {constant: 400}", "  rps: {sum: [{constant: 100}, {step: {before: 0, after: -200, at: 2m}}]}"), "rps:",
     "load.rps", f"Invalid value: the sum is -100 at 2026-01-01T00:02:00Z: {GE0}"),
    (("  rps: {constant: 400}", "  rps: {csv: rps.csv, scale: -1}"), "rps:", "load.rps.scale", f"Invalid value: -1: {GE0}"),
    (("cpu: {signal: rps, per: 1m}", "cpu: {signal: rps, per: -1m}"), "workload:", "workload.cpu.per",
     f"Invalid value: '-1m': {GE0}"),
    (("cpu: {signal: rps, per: 1m}", "cpu: {signal: rps, per: 1m, base: -100m}"), "workload:", "workload.cpu.base",
     f"Invalid value: '-100m': {GE0}"),
    (("workload: {startup: 0s,", "workload: {startupCpu: -1, startup: 0s,"), "workload:", "workload.startupCpu",
     f"Invalid value: -1: {GE0}"),
    (("{requests: {cpu: 500m}}", "{requests: {cpu: -500m}}"), "cpu: -500m",
     "objects[0].spec.template.spec.containers[0].resources.requests.cpu", f"Invalid value: '-500m': {GE0}"),
    (("\nload:", "\nworkloads:\n  web:\n    cpu: {signal: rps, per: -2m}\nload:"), "cpu: {signal: rps, per: -2m}",
     "workloads.web.cpu.per", f"Invalid value: '-2m': {GE0}"),
])
def test_negative_loads_and_coefficients(tmp_path, edit, needle, field, message):
    (tmp_path / "rps.csv").write_text("0,400\n60,400\n")
    text = _edit(BASE, *edit)
    path, err = _fails(tmp_path, text)
    assert err == f"{path}:{_line(text, needle)}: {field}: {message}"


def test_negative_point_of_a_trace_names_its_line(tmp_path):
    (tmp_path / "rps.csv").write_text("timestamp,value\n0,400\n60,-3\n120,400\n")
    _, err = _fails(tmp_path, _edit(BASE, "  rps: {constant: 400}", "  rps: {csv: rps.csv}"))
    assert err == f"{tmp_path / 'rps.csv'}:3: value: Invalid value: -3: {GE0}"


def test_random_walk_that_goes_negative_needs_a_min(tmp_path):
    text = _edit(BASE, "  rps: {constant: 400}", "  rps: {randomWalk: {start: 1, stddev: 50, interval: 1m, seed: 0}}")
    path, err = _fails(tmp_path, text)
    assert err == (f"{path}:{_line(text, 'rps:')}: load.rps.randomWalk.min: Required value: the walk reaches "
                   "-88.0211 at 2026-01-01T00:05:00Z; set min: 0 (a load may not be negative)")


def test_negative_parts_of_a_sum_are_fine_while_the_sum_is_not_negative():
    text = _edit(BASE, "  rps: {constant: 400}",
                 "  rps: {sum: [{constant: 400}, {randomWalk: {start: 0, stddev: 50, interval: 1m, min: -300, seed: 1}}]}")
    sc = parse_scenario(text, "scn.yaml")
    assert min(sc.load["rps"].value(sc.start + 60 * i) for i in range(6)) >= 0


# ----------------------------------------------------------------------------- --compare and -o


def test_compare_file_with_an_unknown_field(tmp_path):
    hpa = tmp_path / "hpa.yaml"
    hpa.write_text(_edit(HPA, "  minReplicas: 2", "  minReplica: 2"))
    _, err = _fails(tmp_path, BASE, "--compare", str(hpa))
    assert err == (f'{hpa}:6: document[0].spec.minReplica: unknown field "minReplica" '
                   f"(did you mean minReplicas? allowed: {HPA_FIELDS})")


def _as_list(hpa: str) -> str:
    """``kubectl get hpa -o yaml``: a v1 List whose items carry server fields and a status."""
    item = "\n".join("  " + x if x else x for x in hpa.splitlines())
    item = _edit(item, "  metadata: {name: web}", "  metadata:\n    name: web\n    namespace: default\n"
                 "    uid: 3f1c0d6e-0000-4000-8000-000000000001\n    resourceVersion: \"812\"\n"
                 "    creationTimestamp: \"2025-12-31T10:00:00Z\"\n"
                 "    annotations: {kubectl.kubernetes.io/last-applied-configuration: '{}'}")
    status = ("  status:\n    currentReplicas: 7\n    desiredReplicas: 7\n    lastScaleTime: \"2025-12-31T11:00:00Z\"\n"
              "    conditions:\n    - {type: ScalingActive, status: \"False\", reason: FailedGetResourceMetric,"
              " message: x, lastTransitionTime: \"2025-12-31T11:00:00Z\"}\n")
    return "apiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"\"}\nitems:\n-" + item[1:] + "\n" + status


def test_compare_accepts_a_v1_list_and_runs_it_like_the_plain_manifest(tmp_path):
    scn = tmp_path / "scn.yaml"
    scn.write_text(BASE)
    (tmp_path / "plain.yaml").write_text(HPA)
    (tmp_path / "listed.yaml").write_text(_as_list(HPA))
    sc = load_scenario(scn)
    [(plain, _)] = load_hpa_file(tmp_path / "plain.yaml", sc.config.gates, sc.workloads, "default")
    [(listed, _)] = load_hpa_file(tmp_path / "listed.yaml", sc.config.gates, sc.workloads, "default")
    assert listed.spec == plain.spec and listed.status == plain.status  # the other cluster's status is dropped
    result = CliRunner().invoke(app, ["simulate", str(scn), "-o", str(tmp_path / "out"), "--no-progress",
                                      "--compare", str(tmp_path / "plain.yaml"), str(tmp_path / "listed.yaml")])
    assert result.exit_code == 0, result.output
    strip = lambda p: (tmp_path / "out" / p / "timeline.csv").read_text()  # noqa: E731
    assert strip("plain") == strip("listed")


def test_compare_list_with_an_unknown_field(tmp_path):
    listed = tmp_path / "listed.yaml"
    listed.write_text(_edit(_as_list(HPA), "kind: List", "kind: List\nitem: []"))
    _, err = _fails(tmp_path, BASE, "--compare", str(listed))
    assert err == f'{listed}:3: document[0].item: unknown field "item" (did you mean items? allowed: apiVersion, items, kind, metadata)'
    listed.write_text(_edit(_as_list(HPA), "    minReplicas: 2", "    minReplica: 2"))
    _, err = _fails(tmp_path, BASE, "--compare", str(listed))
    assert err.startswith(f'{listed}:{_line(listed.read_text(), "minReplica:")}: document[0].items[0].spec.minReplica: '
                          'unknown field "minReplica"')


def test_output_that_is_a_file_is_refused_before_the_run(tmp_path, monkeypatch):
    from pyhpa.sim import simulate as simulate_module

    def no_run(*args, **kwargs):
        raise AssertionError("simulated although -o is unusable")

    monkeypatch.setattr(simulate_module, "_run", no_run)
    scn = tmp_path / "scn.yaml"
    scn.write_text(BASE)
    taken = tmp_path / "taken"
    taken.write_text("keep me\n")
    for out, message in [(taken, f"-o: {taken}: exists and is not a directory"),
                         (taken / "sub", f"-o: {taken / 'sub'}: cannot create a directory under {taken}: it is not a directory")]:
        result = CliRunner().invoke(app, ["simulate", str(scn), "-o", str(out), "--no-progress"])
        assert (result.exit_code, result.stderr) == (2, f"error: {message}\n")
    assert taken.read_text() == "keep me\n"


def test_examples_are_valid_under_strict_reading():
    examples = Path(__file__).resolve().parents[2] / "examples"
    for path in sorted(examples.glob("*.yaml")):
        if "objects:" in path.read_text():
            load_scenario(path)
        else:  # an HPA manifest for --compare
            load_hpa_file(path)


@pytest.mark.parametrize("edit, needle, field, message", [
    (("duration: 5m", "duration: 5m\noutages: [{from: 1m, to: 2m, metric: resource}]"), "outages:", "outages[0].metric",
     'unknown field "metric" (did you mean metrics? allowed: duration, from, metrics, to)'),
    (("duration: 5m", "duration: 5m\nmetadata: {nmae: x}"), "nmae", "metadata.nmae",
     'unknown field "nmae" (did you mean name? allowed: annotations, labels, name, namespace)'),
    (("metrics: {resolution: 15s}", "metrics: {resolution: 15s, widnow: 15s}"), "widnow", "metrics.widnow",
     'unknown field "widnow" (did you mean window? allowed: resolution, window)'),
])
def test_unknown_outage_metadata_and_metrics_fields(tmp_path, edit, needle, field, message):
    text = _edit(BASE, *edit)
    path, err = _fails(tmp_path, text)
    assert err == f"{path}:{_line(text, needle)}: {field}: {message}"


def test_deployment_without_api_version_is_checked_as_apps_v1(tmp_path):
    text = _edit(_edit(BASE, "- apiVersion: apps/v1\n  kind: Deployment", "- kind: Deployment"),
                 "    replicas: 2", "    replica: 2")
    path, err = _fails(tmp_path, text)
    assert err == (f'{path}:{_line(text, "replica:")}: objects[0].spec.replica: unknown field "replica" (did you mean '
                   "replicas? allowed: minReadySeconds, paused, progressDeadlineSeconds, replicas, "
                   "revisionHistoryLimit, selector, strategy, template)")
