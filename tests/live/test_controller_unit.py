"""The live controller's own logic over in-memory ports (no server): the `pyhpa.io` group's
defaulting and validation, memory dropped on delete, the /healthz watchdog, /readyz while the
caches sync."""

from __future__ import annotations

import time

from pyhpa.adapters.kube.client import KubeClient
from pyhpa.live.loop import ControllerOptions, HPAController
from pyhpa.engine.state import AutoscalerState, Recommendation

from tests.controller.builders import CONFIG, NOW, cluster, cpu_metric, hpa


def controller(group_version="autoscaling/v2", mem=None, persist_state=False):
    ctl = HPAController(KubeClient(None), CONFIG,  # type: ignore[arg-type]  # never sends a request here
                        ControllerOptions(hpa_group_version=group_version, persist_state=persist_state),
                        clock=lambda: NOW)
    if mem is not None:
        ctl.ports = mem.ports()
    return ctl


def crd_hpa(**kw):
    h = hpa(**kw)
    h.api_version = "pyhpa.io/v1"
    return h


def test_pyhpa_io_group_reads_and_writes_its_own_resource():
    ctl = controller("pyhpa.io/v1")
    assert ctl.hpa_informer.path == "/apis/pyhpa.io/v1/horizontalpodautoscalers"
    assert ctl.status_writer.path("ns", "web") == "/apis/pyhpa.io/v1/namespaces/ns/horizontalpodautoscalers/web"
    assert ControllerOptions(hpa_group_version="pyhpa.io/v1").hpa_group == "pyhpa.io"


async def test_invalid_pyhpa_io_hpa_is_reported_and_not_acted_on():
    bad = crd_hpa(min_replicas=5, max_replicas=2)  # no API server rejected it: it is a CRD
    mem = cluster([bad], replicas=3, usages=[900, 900, 900])  # would scale up if acted on
    ctl = controller("pyhpa.io/v1", mem)
    ctl.hpa_informer._store(bad)
    assert await ctl.process("ns/web") is False
    scale = await mem.get_scale("ns", bad.spec.scale_target_ref)
    assert scale.spec.replicas == 3
    [event] = mem.events
    assert (event.type, event.reason) == ("Warning", "InvalidSpec")
    assert event.message == "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"
    [written] = mem.status_writes
    assert written.api_version == "pyhpa.io/v1"
    [cond] = [c for c in written.status.conditions if c.type == "ScalingActive"]
    assert (cond.status, cond.reason) == ("False", "InvalidSpec")
    assert cond.message.endswith("must be greater than or equal to `minReplicas`")
    assert 'error="spec"' in ctl.metrics.render().decode()


async def test_pyhpa_io_hpa_is_defaulted_like_the_api_server_defaults_autoscaling_v2():
    h = crd_hpa(metrics=None, min_replicas=None)
    h.spec.metrics = None  # a CRD object as written: no minReplicas, no metrics
    mem = cluster([h], replicas=2, usages=[900, 900])  # 90 % of a 1-CPU request vs the default 80 %
    ctl = controller("pyhpa.io/v1", mem)
    ctl.hpa_informer._store(h)
    await ctl.process("ns/web")
    scale = await mem.get_scale("ns", h.spec.scale_target_ref)
    assert scale.spec.replicas == 3  # ceil(2 * 90 / 80)
    [written] = mem.status_writes
    assert written.spec.min_replicas == 1
    assert written.spec.metrics[0].resource.target.average_utilization == 80
    assert [e.reason for e in mem.events] == ["SuccessfulRescale"]


async def test_autoscaling_group_objects_are_taken_as_the_api_server_stored_them():
    h = hpa(metrics=[cpu_metric(50)], min_replicas=5, max_replicas=2)  # cannot exist; not re-validated
    mem = cluster([h], replicas=3, usages=[100, 100, 100])
    ctl = controller("autoscaling/v2", mem)
    ctl.hpa_informer._store(h)
    await ctl.process("ns/web")
    assert "InvalidSpec" not in [e.reason for e in mem.events]


def test_deleting_an_hpa_drops_its_memory():
    ctl = controller()
    h = hpa()
    ctl.hpa_informer._store(h)
    ctl._on_hpa_add(h)
    ctl.state.put("ns/web", AutoscalerState([Recommendation(4, NOW)], None, None))
    ctl._on_hpa_delete(h)
    assert ctl.state.get("ns/web") is None


def test_healthz_watchdog_fails_when_no_hpa_is_processed_for_several_sync_periods():
    ctl = controller()
    assert ctl.healthy() == (True, "")  # not started: nothing to watch yet
    ctl.started = True
    assert ctl.healthy() == (True, "")  # no HPA: idle is fine
    ctl.hpa_informer._store(hpa())
    ctl.last_progress = time.monotonic()
    assert ctl.healthy() == (True, "")
    ctl.last_progress = time.monotonic() - 3 * ctl.options.sync_period - 31
    ok, why = ctl.healthy()
    assert not ok and why.startswith("no HPA processed for ")


async def test_healthz_watchdog_sees_worker_progress():
    mem = cluster([hpa()], replicas=1, usages=[500])
    ctl = controller(mem=mem)
    ctl.hpa_informer._store(hpa())
    ctl.started = True
    ctl.last_progress = 0.0  # long ago
    assert not ctl.healthy()[0]
    await ctl.process("ns/web")
    assert ctl.healthy() == (True, "")


def test_readyz_reports_cache_sync_progress():
    ctl = controller()
    assert ctl.ready() == (False, "controller not started (not leading yet?)")
    ctl.starting = True
    ctl.hpa_informer.synced.set()
    ctl.hpa_informer._store(hpa())
    ctl.pod_informer.listed = 1500
    assert ctl.ready() == (False, "caches syncing: hpas synced (1), pods listing (1500 so far)")
