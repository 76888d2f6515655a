"""`pyhpa history` against a fake Prometheus: every error is one line with a non-zero exit, every
doubtful figure one warning line saying what was done, and the scenario it writes simulates."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pyhpa.cli import app
from tests.fake_prometheus import FakePrometheus, Rule
from tests.prometheus_server import free_port

UNTIL = "2026-01-05T01:00:00Z"
T0 = 1767571200.0  # 2026-01-05T00:00:00Z
POD = {"namespace": "shop", "pod": "web-5d8f7c-00001"}


def cpu_rules(usage: float = 1.2, throttled: float = 0.0, **overrides: Rule) -> list[Rule]:
    """A Deployment shop/web at 3 replicas under an HPA on 60 % CPU, in the queries' words."""
    rules = {
        "resets": Rule("resets("),
        "replicas": Rule('kube_deployment_spec_replicas{namespace="shop", deployment="web"}',
                         [({"namespace": "shop", "deployment": "web"}, 3)]),
        "info": Rule("kube_horizontalpodautoscaler_info", [({"horizontalpodautoscaler": "web"}, 1)]),
        "min": Rule("kube_horizontalpodautoscaler_spec_min_replicas", [({}, 2)]),
        "max": Rule("kube_horizontalpodautoscaler_spec_max_replicas", [({}, 10)]),
        "target": Rule("kube_horizontalpodautoscaler_spec_target_metric",
                       [({"metric_name": "cpu", "metric_target_type": "utilization"}, 60)]),
        "throttled": Rule("container_cpu_cfs_throttled_periods_total", [({}, throttled)]),
        "cpu": Rule("container_cpu_usage_seconds_total", [({}, usage)]),
        "limit_sum": Rule('kube_pod_container_resource_limits{namespace="shop", resource="cpu"', [({}, 3.0)]),
        "limits": Rule("kube_pod_container_resource_limits", [({**POD, "container": "app", "resource": "cpu"}, 1.0)]),
        "requests": Rule("kube_pod_container_resource_requests",
                         [({**POD, "container": "app", "resource": "cpu"}, 0.5),
                          ({**POD, "container": "app", "resource": "memory"}, 268435456)]),
        "ready": Rule("kube_pod_status_ready", [(POD, T0 + 600 + 45)]),
        "created": Rule("kube_pod_created", [(POD, T0 + 600)]),
    }
    rules.update(overrides)
    return list(rules.values())


def history(fake_url: str, tmp_path: Path, *extra: str) -> tuple[int, list[str], Path]:
    out = tmp_path / "history.yaml"
    result = CliRunner().invoke(app, ["history", "deployment/web", "-n", "shop", "--prometheus", fake_url,
                                      "--since", "1h", "--until", UNTIL, "-o", str(out), *extra])
    assert "Traceback" not in result.output
    return result.exit_code, result.output.splitlines(), out


def errors(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("error:")]


def test_history_writes_a_scenario_that_simulates(tmp_path):
    with FakePrometheus(cpu_rules()) as fake:
        code, lines, out = history(fake.url, tmp_path, "--step", "15s")
    assert code == 0, lines
    assert not [line for line in lines if "coarser" in line]  # 15 s is the sync period
    doc = yaml.safe_load(out.read_text())
    assert doc["observed"]["web"]["replicas"] == {"csv": "history.csv", "column": "replicas"}
    deployment, hpa = doc["objects"]
    assert deployment["spec"]["replicas"] == 3
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"] == {"requests": {"cpu": "500m", "memory": "256Mi"}, "limits": {"cpu": "1"}}
    assert doc["workload"]["startup"] == "45s" and doc["workload"]["cpuCapacity"] == "1"
    assert hpa["spec"]["minReplicas"] == 2 and hpa["spec"]["maxReplicas"] == 10
    assert hpa["spec"]["metrics"][0]["resource"]["target"] == {"type": "Utilization", "averageUtilization": 60}
    assert "behavior" not in hpa["spec"]
    assert "# The HPA was read from kube-state-metrics. Assumed, not read:" in out.read_text()
    assert any(line.startswith("warning: kube-state-metrics has no HPA behavior") for line in lines)
    rows = list(csv.DictReader((tmp_path / "history.csv").open()))
    assert len(rows) == 240 and rows[0]["time"] == "2026-01-05T00:00:00Z"
    assert {r["replicas"] for r in rows} == {"3"} and {float(r["cpu"]) for r in rows} == {1.2}
    sim = CliRunner().invoke(app, ["simulate", str(out), "-o", str(tmp_path / "sim"), "--no-progress"])
    assert sim.exit_code == 0, sim.output


def test_observed_section_names_the_csv_and_saturated_intervals(tmp_path):
    rules = cpu_rules(usage=3.0, throttled=0.4)
    with FakePrometheus(rules) as fake:
        code, lines, out = history(fake.url, tmp_path)
    assert code == 0, lines
    observed = yaml.safe_load(out.read_text())["observed"]
    assert observed["web"]["replicas"] == {"csv": "history.csv", "column": "replicas"}
    [interval] = observed["web"]["saturated"]
    assert (interval["from"], interval["to"]) == ("2026-01-05T00:00:00Z", "2026-01-05T01:00:00Z")
    assert [line for line in lines if line.startswith("warning: saturated from 2026-01-05T00:00:00Z")]
    assert "observed:  # what the cluster really did; the yardstick of the replay check" in out.read_text()


def test_unreachable_prometheus_is_one_line(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    code, lines, _ = history(url, tmp_path)
    assert code == 1
    assert errors(lines) == [f"error: prometheus {url}: connection refused"]


def test_unknown_workload_lists_those_in_the_namespace(tmp_path):
    rules = [Rule("count(last_over_time(kube_deployment_spec_replicas[", [({}, 4)]),
             Rule('last_over_time(kube_deployment_spec_replicas{namespace="shop"}',
                  [({"deployment": "api"}, 2), ({"deployment": "worker"}, 1)])]
    with FakePrometheus(rules) as fake:
        code, lines, _ = history(fake.url, tmp_path)
    assert code == 1
    assert errors(lines) == ["error: unknown workload: no Deployment shop/web in kube_deployment_spec_replicas between "
                             "2026-01-05T00:00:00Z and 2026-01-05T00:59:30Z (Deployments in shop: api, worker)"]


def test_no_kube_state_metrics_is_a_missing_series(tmp_path):
    with FakePrometheus([]) as fake:
        code, lines, _ = history(fake.url, tmp_path)
    assert code == 1
    [line] = errors(lines)
    assert line.startswith(f"error: missing series: no kube-state-metrics (kube_deployment_spec_replicas) in prometheus "
                           f"{fake.url}") and line.endswith("(is kube-state-metrics scraped?)")


def test_no_cadvisor_data_is_a_missing_series(tmp_path):
    with FakePrometheus(cpu_rules(cpu=Rule("container_cpu_usage_seconds_total"))) as fake:
        code, lines, _ = history(fake.url, tmp_path)
    assert code == 1
    assert errors(lines) == ["error: missing series: no cAdvisor CPU usage (container_cpu_usage_seconds_total) for the "
                             "pods of deployment/web in namespace shop (is the kubelet's /metrics/cadvisor scraped?)"]


def test_empty_range_is_one_line(tmp_path):
    with FakePrometheus(cpu_rules()) as fake:
        code, lines, _ = history(fake.url, tmp_path, "--since", "10s")
        assert not fake.requests
    assert code == 1
    [line] = errors(lines)
    assert line.startswith("error: empty range: ") and "--since" in line


def test_bad_promql_in_query_is_prometheus_own_error(tmp_path):
    pods_metric = Rule("kube_horizontalpodautoscaler_spec_target_metric",
                       [({"metric_name": "queue_depth", "metric_target_type": "average"}, 30)])
    bad = Rule("sum(rate(jobs_total[5m]", error=(400, "bad_data", "1:24: parse error: unclosed left parenthesis"))
    with FakePrometheus([bad, *cpu_rules(target=pods_metric)]) as fake:
        code, lines, _ = history(fake.url, tmp_path, "--query", "queue_depth=sum(rate(jobs_total[5m])")
    assert code == 1
    assert errors(lines) == [f"error: prometheus {fake.url}: bad_data: 1:24: parse error: unclosed left parenthesis "
                             "(query: sum(rate(jobs_total[5m]))"]
    assert [line for line in lines if "queue_depth: an AverageValue target taken as a Pods metric" in line]


def test_query_for_a_metric_the_hpa_lacks_is_an_error(tmp_path):
    with FakePrometheus(cpu_rules()) as fake:
        code, lines, _ = history(fake.url, tmp_path, "--query", "rps=sum(rate(http_requests_total[2m]))")
    assert code == 1
    assert errors(lines) == ["error: --query rps: the HPA has no metric of that name (its metrics: cpu)"]


def test_two_hpas_on_the_workload_is_an_error_then_hpa_picks(tmp_path):
    two = Rule("kube_horizontalpodautoscaler_info", [({"horizontalpodautoscaler": "web"}, 1),
                                                      ({"horizontalpodautoscaler": "web-old"}, 1)])
    with FakePrometheus(cpu_rules(info=two)) as fake:
        code, lines, _ = history(fake.url, tmp_path)
        assert code == 1
        assert errors(lines) == ["error: 2 HPAs scale deployment/web in namespace shop (kube_horizontalpodautoscaler_info: "
                                 "web, web-old): name the one to replay with --hpa NAME"]
        code, lines, out = history(fake.url, tmp_path, "--hpa", "web-old")
    assert code == 0, lines
    assert yaml.safe_load(out.read_text())["objects"][1]["metadata"]["name"] == "web-old"


def test_two_series_for_one_workload_are_merged_and_said(tmp_path):
    two = Rule('kube_deployment_spec_replicas{namespace="shop", deployment="web"}',
               [({"deployment": "web", "instance": "ksm-a"}, 3), ({"deployment": "web", "instance": "ksm-b"}, 4)])
    with FakePrometheus(cpu_rules(replicas=two)) as fake:
        code, lines, out = history(fake.url, tmp_path)
    assert code == 0, lines
    [line] = [line for line in lines if "series match" in line]
    assert line.startswith("warning: observed replicas: 2 series match kube_deployment_spec_replicas")
    assert "differ in instance" in line and line.endswith("using their maximum at each step")
    assert {r["replicas"] for r in csv.DictReader((tmp_path / "history.csv").open())} == {"4"}


def test_gap_reset_and_coarse_step_are_reported(tmp_path):
    gap = Rule("container_cpu_usage_seconds_total", [({}, 1.2)], skip=(T0 + 600, T0 + 900))
    reset = Rule("resets(", [({"pod": "web-5d8f7c-00001", "container": "app"}, 1)], skip=(T0, T0 + 1800))
    with FakePrometheus(cpu_rules(cpu=gap, resets=reset)) as fake:
        code, lines, _ = history(fake.url, tmp_path)
    assert code == 0, lines
    # the rate of the step at t is evaluated at t + 75s (half the 120s window plus half a step: the
    # window then covers [t, t + step)), so the evaluations missing from 00:10:00 fall on the steps 75s earlier
    assert "warning: gap in cpu usage: no sample from 2026-01-05T00:09:00Z to 2026-01-05T00:13:30Z (300s, 10 steps): " \
           "filled with the straight line between its edges" in lines
    assert 'warning: counter reset of container_cpu_usage_seconds_total{pod="web-5d8f7c-00001", container="app"} near ' \
           "2026-01-05T00:30:00Z: rate() counts from the reset, so usage there is kept as Prometheus computes it" in lines
    assert [line for line in lines if line.startswith("warning: --step 30s is coarser than the HPA sync period")]


@pytest.mark.parametrize(("flags", "message"), [
    (["--since", "a week"], "error: --since: Invalid value: 'a week': expected a duration such as 30s, 12h or 7d"),
    (["--step", "0s"], "error: --step: Invalid value: '0s': must be > 0"),
    (["--query", "cpu"], "error: --query: Invalid value: 'cpu': expected NAME=PROMQL"),
    (["--horizontal-pod-autoscaler-sync-period", "0s"],
     "error: --horizontal-pod-autoscaler-sync-period: Invalid value: '0s': must be > 0"),
    (["--horizontal-pod-autoscaler-downscale-stabilization", "soon"],
     "error: --horizontal-pod-autoscaler-downscale-stabilization: Invalid value: 'soon': expected a duration such "
     "as 15s or 5m0s"),
    (["--horizontal-pod-autoscaler-tolerance", "-1"],
     "error: --horizontal-pod-autoscaler-tolerance: Invalid value: '-1': must be >= 0"),
    (["--metrics-resolution", "5s", "--metrics-window", "7s"],
     "error: --metrics-window: Invalid value: '7s': must be a multiple of the metrics resolution (5s)"),
])
def test_bad_flags_exit_2_naming_the_flag(tmp_path, flags, message):
    code, lines, _ = history("http://127.0.0.1:9", tmp_path, *flags)
    assert (code, errors(lines)) == (2, [message])


def test_controller_flags_and_metrics_pipeline_given_are_written(tmp_path):
    """What Prometheus cannot tell, given as the controller and metrics-server ran: written in
    place of the upstream defaults; the flags not given stay assumed and are said so."""
    with FakePrometheus(cpu_rules()) as fake:
        code, lines, out = history(fake.url, tmp_path, "--step", "5s", "--horizontal-pod-autoscaler-sync-period", "5s",
                                   "--horizontal-pod-autoscaler-downscale-stabilization", "1m0s",
                                   "--horizontal-pod-autoscaler-tolerance", "0.05",
                                   "--metrics-resolution", "5s", "--metrics-window", "15s")
    assert code == 0, lines
    text = out.read_text()
    doc = yaml.safe_load(text)
    assert doc["controller"] == {"horizontal-pod-autoscaler-sync-period": "5s",
                                 "horizontal-pod-autoscaler-tolerance": 0.05,
                                 "horizontal-pod-autoscaler-downscale-stabilization": "60s",
                                 "horizontal-pod-autoscaler-cpu-initialization-period": "5m",
                                 "horizontal-pod-autoscaler-initial-readiness-delay": "30s"}
    assert doc["metrics"] == {"resolution": "5s", "window": "15s"}
    assert ("controller:  # given: sync-period, tolerance, downscale-stabilization; assumed: upstream defaults "
            "(cpu initialization period 5m, initial readiness delay 30s)") in text
    [ksm] = [line for line in lines if line.startswith("warning: kube-state-metrics has no HPA behavior")]
    assert "sync period" not in ksm and "cpu initialization period 5m" in ksm
    assert not [line for line in lines if "coarser" in line]  # a 5 s step is the 5 s sync period given
    assert "step" not in doc  # the simulator's default tick, min(resolution, sync period), is 5 s too
    sim = CliRunner().invoke(app, ["simulate", str(out), "-o", str(tmp_path / "sim"), "--no-progress"])
    assert sim.exit_code == 0, sim.output


def test_a_history_finer_than_the_default_tick_keeps_its_step(tmp_path):
    with FakePrometheus(cpu_rules()) as fake:
        code, lines, out = history(fake.url, tmp_path, "--since", "10m", "--step", "2s")
    assert code == 0, lines
    doc = yaml.safe_load(out.read_text())
    assert doc["step"] == "2s"  # else the simulator would hold each load sample over 15 s
    sim = CliRunner().invoke(app, ["simulate", str(out), "-o", str(tmp_path / "sim"), "--no-progress"])
    assert sim.exit_code == 0, sim.output


def test_workload_must_be_deployment_or_statefulset(tmp_path):
    result = CliRunner().invoke(app, ["history", "pod/web", "--prometheus", "http://127.0.0.1:9"])
    assert result.exit_code == 2
    assert result.output.splitlines() == ["error: WORKLOAD: Invalid value: 'pod/web': expected deployment/NAME or "
                                          "statefulset/NAME"]


def test_statefulset_queries_its_own_series(tmp_path):
    rules = cpu_rules(replicas=Rule('kube_statefulset_replicas{namespace="shop", statefulset="db"}',
                                    [({"statefulset": "db"}, 2)]))
    with FakePrometheus(rules) as fake:
        result = CliRunner().invoke(app, ["history", "statefulset/db", "-n", "shop", "--prometheus", fake.url,
                                          "--since", "1h", "--until", UNTIL, "-o", str(tmp_path / "h.yaml")])
        queries = [p.get("query", "") for _, p in fake.requests]
    assert result.exit_code == 0, result.output
    assert any('owner_kind="StatefulSet", owner_name="db"' in q for q in queries)
    assert any('scaletargetref_kind="StatefulSet", scaletargetref_name="db"' in q for q in queries)
    doc = yaml.safe_load((tmp_path / "h.yaml").read_text())
    assert doc["objects"][0]["kind"] == "StatefulSet" and doc["objects"][0]["spec"]["replicas"] == 2


def test_tune_prometheus_unreachable_is_one_line(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    result = CliRunner().invoke(app, ["tune", "--prometheus", url, "deployment/web", "-n", "shop", "-o", str(tmp_path)])
    assert result.exit_code == 1
    assert errors(result.output.splitlines()) == [f"error: prometheus {url}: connection refused"]


def test_progress_lines_on_a_stderr_that_is_no_terminal(tmp_path, monkeypatch):
    monkeypatch.setattr("pyhpa.sim.progress.LINE_INTERVAL", 0.0)
    with FakePrometheus(cpu_rules()) as fake:
        result = CliRunner().invoke(app, ["history", "deployment/web", "-n", "shop", "--prometheus", fake.url,
                                          "--since", "7d", "--until", UNTIL, "-o", str(tmp_path / "h.yaml")])
    assert result.exit_code == 0, result.output
    progress = [line for line in result.output.splitlines() if line.startswith("history: ") and "range-query chunks (" in line]
    assert progress and progress[-1].split()[1].split("/")[0] == str(len(progress))
    assert any(line.startswith("history: done, ") for line in result.output.splitlines())


def kubeconfig(tmp_path: Path, server: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u", "namespace": "shop"}}]}))
    return path


def hpa_list(*items: tuple[str, dict]) -> dict:
    return {"kind": "HorizontalPodAutoscalerList", "apiVersion": "autoscaling/v2",
            "items": [{"metadata": {"name": name, "namespace": "shop"}, "spec": spec} for name, spec in items]}


HPAS = "/apis/autoscaling/v2/namespaces/shop/horizontalpodautoscalers"


def test_external_metric_is_queried_with_its_selector_and_simulates(tmp_path):
    spec = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 8,
            "metrics": [{"type": "External", "external": {
                "metric": {"name": "queue_depth", "selector": {"matchLabels": {"queue": "jobs"}}},
                "target": {"type": "AverageValue", "averageValue": "30"}}}]}
    queue = Rule('queue_depth{namespace="shop", queue="jobs"}', [({}, 90.0)])
    with FakePrometheus([queue, *cpu_rules()], {HPAS: hpa_list(("web", spec))}) as fake:
        code, lines, out = history(fake.url, tmp_path, "--kubeconfig", str(kubeconfig(tmp_path, fake.url)))
    assert code == 0, lines
    doc = yaml.safe_load(out.read_text())
    assert doc["workload"]["metrics"] == {"queue_depth": {"signal": "queue_depth", "per": 1, "labels": {"queue": "jobs"}}}
    assert doc["load"]["queue_depth"] == {"csv": "history.csv", "column": "queue_depth"}
    assert {r["queue_depth"] for r in csv.DictReader((tmp_path / "history.csv").open())} == {"90"}
    sim = CliRunner().invoke(app, ["simulate", str(out), "-o", str(tmp_path / "sim"), "--no-progress"])
    assert sim.exit_code == 0, sim.output


def test_kubeconfig_reads_the_hpa_whole_from_the_cluster(tmp_path):
    spec = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 3, "maxReplicas": 12,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                "type": "Utilization", "averageUtilization": 70}}}],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60,
                                       "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}]}}}
    other = {**spec, "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"}}
    listing = hpa_list(("api", other), ("web-hpa", spec))
    listing["items"][1]["status"] = {"currentReplicas": 3, "desiredReplicas": 3,  # not kept: the sim starts afresh
                                     "lastScaleTime": "2026-01-05T00:10:07Z"}  # but its sync phase is
    with FakePrometheus(cpu_rules(), {HPAS: listing}) as fake:
        code, lines, out = history(fake.url, tmp_path, "--kubeconfig", str(kubeconfig(tmp_path, fake.url)))
        queries = [p.get("query", "") for _, p in fake.requests]
    assert code == 0, lines
    hpa = yaml.safe_load(out.read_text())["objects"][1]
    assert hpa == {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                   "metadata": {"name": "web-hpa", "namespace": "shop"}, "spec": spec}
    assert not [q for q in queries if "kube_horizontalpodautoscaler" in q]
    # the simulated syncs (start + k x 15s) fall where the real one scaled: 00:10:07 and its
    # second (lastScaleTime is written to the second); the history's steps stay on the minute
    doc = yaml.safe_load(out.read_text())
    assert (doc["start"], doc["duration"]) == ("2026-01-05T00:00:07.500000Z", "3592.5s")
    times = [row["time"] for row in csv.DictReader((tmp_path / "history.csv").open())]
    assert times[:2] == ["2026-01-05T00:00:00Z", "2026-01-05T00:00:30Z"] and len(times) == 120
    assert [line for line in lines if line.startswith("warning: HPA web-hpa read from the cluster; the controller's flags")]
    sim = CliRunner().invoke(app, ["simulate", str(out), "-o", str(tmp_path / "sim"), "--no-progress"])
    assert sim.exit_code == 0, sim.output


def rescale(name: str, at: float, size: int, **extra) -> dict:
    """A SuccessfulRescale event as client-go's recorder writes it: named by its UnixNano in hex."""
    return {"metadata": {"name": f"{name}.{int(at * 1e9):x}", "namespace": "shop"},
            "involvedObject": {"kind": "HorizontalPodAutoscaler", "name": name, "namespace": "shop"},
            "reason": "SuccessfulRescale", "message": f"New size: {size}; reason: cpu resource utilization "
            "(percentage of request) above target", "lastTimestamp": "2026-01-05T00:00:00Z", "count": 1, **extra}


def test_the_hpa_rescale_events_set_the_sync_phase_and_spacing(tmp_path):
    spec = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 10,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                "type": "Utilization", "averageUtilization": 60}}}]}
    listing = hpa_list(("web", spec))
    listing["items"][0]["status"] = {"lastScaleTime": "2026-01-05T00:40:01Z"}
    # a controller on a 5 s period whose reconciles take 20 ms: it syncs every 5.02 s from 3.1 s
    # on, and scaled at 4 of those syncs; another HPA's event and a non-rescale event are not its syncs
    syncs = [T0 + 3.1 + k * 5.02 for k in (4, 5, 9, 16)]
    events = {"kind": "EventList", "apiVersion": "v1", "items": [
        *(rescale("web", t, 2 + i) for i, t in enumerate(syncs)),
        rescale("api", T0 + 900 + 1.0, 2), {**rescale("web", T0 + 1800 + 1.0, 2), "reason": "FailedGetScale"}]}
    # kube-state-metrics' latest sample at every step is from 00:00:30 (it saw 3 replicas then)
    seen = Rule("timestamp(kube_deployment_spec_replicas", [({}, T0 + 30)])
    with FakePrometheus([seen, *cpu_rules()], {HPAS: listing, "/api/v1/namespaces/shop/events": events}) as fake:
        code, lines, out = history(fake.url, tmp_path, "--kubeconfig", str(kubeconfig(tmp_path, fake.url)),
                                   "--step", "5s", "--horizontal-pod-autoscaler-sync-period=5s")
        asked = [p for path, p in fake.requests if path.endswith("/events")]
    assert code == 0, lines
    assert asked == [{"fieldSelector": "involvedObject.kind=HorizontalPodAutoscaler"}]
    text = out.read_text()
    doc = yaml.safe_load(text)
    assert doc["start"] == "2026-01-05T00:00:03.100000Z"  # not lastScaleTime's phase (1.5 s)
    assert doc["controller"]["horizontal-pod-autoscaler-sync-period"] == "5.02s"
    assert "measured from its rescale events" in text
    # the observed replicas: the rescales since that sample, each from the first step after it
    rows = [(row["time"][14:], int(row["replicas"])) for row in csv.DictReader((tmp_path / "history.csv").open())]
    assert rows[8:11] == [("00:40Z", 3), ("00:45Z", 3), ("00:50Z", 4)]  # the 3rd rescale: 48.28 s
    assert rows[15:18] == [("01:15Z", 4), ("01:20Z", 4), ("01:25Z", 5)]  # the 4th: 83.42 s


def test_events_named_otherwise_fall_back_to_their_timestamps():
    from pyhpa.sim.history_hpa import rescale_events

    named = rescale("web", T0 + 6.25, 3)
    renamed = {**rescale("web", T0 + 99, 4), "metadata": {"name": "web-rescale"},
               "eventTime": "2026-01-05T00:00:21.750000Z"}
    repeated = {**rescale("web", T0 + 30, 5), "count": 2, "lastTimestamp": "2026-01-05T00:01:00Z"}
    found = rescale_events({"items": [repeated, renamed, named]}, "web")
    # the repeat's first time is its name's, its last its lastTimestamp's (to the second)
    assert [(round(t - T0, 6), size, exact) for t, size, exact in found] == [
        (6.25, 3, True), (21.75, 4, True), (30.0, 5, True), (60.5, 5, False)]


def test_missing_kubeconfig_is_one_line(tmp_path):
    with FakePrometheus(cpu_rules()) as fake:
        code, lines, _ = history(fake.url, tmp_path, "--kubeconfig", str(tmp_path / "nope"))
    assert code == 1
    assert errors(lines) == [f"error: --kubeconfig: file not found: {tmp_path / 'nope'}"]


def test_tune_takes_metrics_flags_only_with_prometheus(tmp_path):
    result = CliRunner().invoke(app, ["tune", str(tmp_path / "scenario.yaml"), "--metrics-window", "15s",
                                      "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.splitlines() == ["error: --metrics-window: only with --prometheus (a scenario file sets its "
                                          "own metrics: section)"]
