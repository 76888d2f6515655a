"""Flags, metrics names and health endpoints of the live controller."""

import pytest
from starlette.testclient import TestClient

from pyhpa.live.health import build_app, parse_bind_address
from pyhpa.live.loop import ControllerOptions
from pyhpa.live.metrics import ControllerMetrics
from pyhpa.live.runner import hpa_group_version


def test_worker_count_validation_uses_upstream_message():
    with pytest.raises(ValueError, match="concurrent-horizontal-pod-autoscaler-syncs must be greater than 0, but got 0"):
        ControllerOptions(workers=0).validate()


def test_hpa_api_group():
    assert hpa_group_version("autoscaling") == "autoscaling/v2"
    assert hpa_group_version("pyhpa.io") == "pyhpa.io/v1"
    with pytest.raises(ValueError, match="--hpa-api-group"):
        hpa_group_version("apps")


def test_bind_address():
    assert parse_bind_address("0") is None
    assert parse_bind_address("0.0.0.0:10258") == ("0.0.0.0", 10258)
    assert parse_bind_address(":9000") == ("127.0.0.1", 9000)
    with pytest.raises(ValueError, match="--metrics-bind-address"):
        parse_bind_address("nonsense")


def test_metrics_use_upstream_names_and_health_endpoints():
    from pyhpa.adapters.kube.client import RequestCounter, classify

    m = ControllerMetrics()
    counter = RequestCounter()
    counter.add(classify("GET", "/apis/apps/v1/namespaces/a/deployments/b/scale", None))
    m.register_request_counts(counter.snapshot)
    m.observe_hpa_addition()
    m.observe_reconciliation("scale_up", "none", 0.003)
    m.observe_metric_computation("scale_up", "none", 0.001, "Resource")
    m.observe_desired_replicas("ns", "web", 4)
    ready = {"v": (False, "HPA cache not synced")}
    client = TestClient(build_app(m.render, lambda: ready["v"]))
    assert client.get("/healthz").status_code == 200
    r = client.get("/readyz")
    assert r.status_code == 503 and "HPA cache not synced" in r.text
    ready["v"] = (True, "")
    assert client.get("/readyz").status_code == 200
    text = client.get("/metrics").text
    p = "horizontal_pod_autoscaler_controller_"
    for line in [
        p + 'reconciliations_total{action="scale_up",error="none"} 1.0',
        p + 'reconciliation_duration_seconds_bucket{action="scale_up",error="none",le="0.004"} 1.0',
        p + 'metric_computation_total{action="scale_up",error="none",metric_type="Resource"} 1.0',
        p + "num_horizontal_pod_autoscalers 1.0",
        p + 'desired_replicas{hpa_name="web",namespace="ns"} 4.0',
        'pyhpa_api_requests_total{resource="deployments/scale",verb="get"} 1.0',
    ]:
        assert line in text, line
    assert "_created" not in text
    m.observe_hpa_deletion("ns", "web")
    assert 'desired_replicas{hpa_name="web"' not in m.render().decode()


# ---------------------------------------------------------------------------- kube-controller-manager flag forms


def _run_params(*args):
    """Parse `pyhpa run` arguments the way the CLI does, without running anything."""
    import typer.main

    from pyhpa.cli import app

    cmd = typer.main.get_command(app).commands["run"]
    with cmd.make_context("run", list(args)) as ctx:
        return ctx.params


@pytest.mark.parametrize("args,expected", [
    ((), None),  # kube-controller-manager's default applies (see runner)
    (("--leader-elect",), True),
    (("--leader-elect=true",), True),
    (("--leader-elect=True",), True),
    (("--leader-elect=1",), True),
    (("--leader-elect=false",), False),
    (("--leader-elect=F",), False),
    (("--no-leader-elect",), False),
])
def test_leader_elect_takes_pflag_boolean_forms(args, expected):
    assert _run_params(*args)["leader_elect"] is expected


def test_other_boolean_flags_take_the_same_forms():
    p = _run_params("--embedded=true", "--persist-state=false")
    assert p["embedded"] is True and p["persist_state"] is False
    p = _run_params("--embedded=false", "--persist-state=true")
    assert p["embedded"] is False and p["persist_state"] is True


def test_verbosity_flag():
    from pyhpa.live.flags import log_level

    assert _run_params("-v", "4")["verbosity"] == 4
    assert _run_params("--v=2")["verbosity"] == 2
    assert log_level(None, "WARNING") == "WARNING"
    assert log_level(2, "WARNING") == "INFO"
    assert log_level(4, "INFO") == "DEBUG"
    with pytest.raises(ValueError, match="--v"):
        log_level(-1, "INFO")


@pytest.mark.parametrize("args,message", [
    (["--leader-elect=maybe"], 'invalid argument "maybe" for "--leader-elect" flag'),
    (["--leader-elect-resource-lock=configmaps"], '--leader-elect-resource-lock: only "leases" is supported'),
    (["--leader-elect-resource-lock", "endpointsleases"], '--leader-elect-resource-lock: only "leases" is supported'),
    (["--leader-elect-lease-duration=5s"], "--leader-elect-lease-duration must be greater than"),
])
def test_bad_leader_election_flags_are_refused_before_anything_starts(args, message):
    from typer.testing import CliRunner

    from pyhpa.cli import app

    result = CliRunner().invoke(app, ["run", "--master", "http://127.0.0.1:1", *args])
    assert result.exit_code == 2
    assert message in result.output


def test_leases_is_the_accepted_resource_lock():
    assert _run_params("--leader-elect-resource-lock=leases")["resource_lock"] == "leases"


def test_healthz_answers_the_watchdog():
    health = {"v": (True, "")}
    client = TestClient(build_app(lambda: b"", lambda: (True, ""), lambda: health["v"]))
    assert client.get("/healthz").text == "ok"
    health["v"] = (False, "no HPA processed for 61s (limit 45s)")
    r = client.get("/healthz")
    assert r.status_code == 503 and r.text == "unhealthy: no HPA processed for 61s (limit 45s)"


def test_a_busy_metrics_bind_address_is_one_line_not_a_traceback():
    import socket

    from typer.testing import CliRunner

    from pyhpa.cli import app

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        result = CliRunner().invoke(app, ["run", "--master", "http://127.0.0.1:1",
                                          "--metrics-bind-address", f"127.0.0.1:{port}"])
    assert result.exit_code == 2
    assert result.output.strip() == (f"error: --metrics-bind-address: cannot listen on "
                                     f"127.0.0.1:{port}: Address already in use")
