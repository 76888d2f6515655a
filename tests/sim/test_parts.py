"""A scenario split into independent parts, run in chunks (one after another, or by ``--jobs``
worker processes) and merged.

The merged result must be the one a single run computes: the same timeline rows, scale events,
workload traces and summaries, for HPAs that interact across namespaces only through an
External metric, for a workload no HPA scales, and for ``--compare`` variants.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from pyhpa.cli import app
from pyhpa.sim.parts import chunks, partition, run_variants
from pyhpa.sim.scenario_nodes import NodeSpec
from pyhpa.sim.report import summarize
from pyhpa.sim.results import SimResult
from pyhpa.sim.runner import run_scenario
from pyhpa.sim.scenario import parse_scenario
from tests import builders
from tests.sim.scenarios import cpu_hpa, deployment, steps


def _in(ns: str, obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["metadata"]["namespace"] = ns
    return obj


def _queue_hpa(ns: str) -> dict[str, Any]:
    return builders.hpa("worker", namespace=ns, min_replicas=0,
                        metrics=[builders.external_metric("queue_messages", average_value="10")],
                        behavior={"scaleDown": {"stabilizationWindowSeconds": 0}})


def _doc() -> dict[str, Any]:
    objects = [
        # "jobs": workers scaled on a queue whose length only the producer (namespace "feed") reports
        _in("jobs", deployment(2, name="worker")), _queue_hpa("jobs"),
        _in("feed", deployment(1, name="producer")),
        # three CPU HPAs in their own namespaces, on two load signals
        _in("shop", deployment(2)), _in("shop", cpu_hpa(50, 1, 12)),
        _in("blog", deployment(3)), _in("blog", cpu_hpa(70, 2, 8)),
        _in("api", deployment(1, name="api")), _in("api", cpu_hpa(60, 1, 20, name="api")),
        # a workload nobody scales: it still has a trace
        _in("idle", deployment(2, name="batch")),
    ]
    return {
        "start": "2026-01-01T00:00:00Z",
        "duration": "20m",
        "metrics": {"resolution": "15s", "window": "30s"},
        "workload": {"startup": "20s", "termination": "15s", "cpu": {"signal": "load", "per": "1m"}},
        "workloads": {
            "producer": {"metrics": {"queue_messages": {"signal": "queue"}}},
            "api": {"cpu": {"signal": "burst", "per": "2m"}, "startup": "45s"},
        },
        "load": {"load": {"sine": {"mean": 1400, "amplitude": 1100, "period": "8m"}},
                 "burst": steps(200, ("3m", 3000), ("11m", 400)),
                 "queue": steps(40, ("4m", 0), ("9m", 120))},
        "objects": objects,
    }


def _scenario(doc: dict[str, Any] | None = None):
    return parse_scenario(yaml.safe_dump(doc or _doc(), sort_keys=False), "parallel.yaml")


def _same(a: SimResult, b: SimResult) -> None:
    assert [r.key for r in a.hpas] == [r.key for r in b.hpas]
    for x, y in zip(a.hpas, b.hpas):
        assert x.rows == y.rows
        assert [(e.t, e.old, e.new, e.message) for e in x.scale_events] == \
               [(e.t, e.old, e.new, e.message) for e in y.scale_events]
    assert list(a.workloads) == list(b.workloads)
    for key in a.workloads:
        ta, tb = a.workloads[key], b.workloads[key]
        assert (list(ta.times), list(ta.demand), list(ta.replicas), list(ta.ready)) == \
               (list(tb.times), list(tb.demand), list(tb.replicas), list(tb.ready))
        assert [(p.name, p.created, p.ready_at, p.deleted_at) for p in ta.pods] == \
               [(p.name, p.created, p.ready_at, p.deleted_at) for p in tb.pods]
    assert a.reconciles == b.reconciles
    assert summarize(a) == summarize(b)


def test_namespaces_joined_by_an_external_metric_form_one_part():
    sc = _scenario()
    parts = partition(sc, sc.hpas)
    by_ns = sorted(sorted({o.namespace for o in wls} | {h.metadata.namespace for h in hpas}) for wls, hpas in parts)
    assert by_ns == [["api"], ["blog"], ["feed", "jobs"], ["idle"], ["shop"]]
    # every workload and HPA is in exactly one part
    assert sorted(o.name + "/" + o.namespace for wls, _ in parts for o in wls) == \
           sorted(o.name + "/" + o.namespace for o in sc.workloads)
    assert sum(len(h) for _, h in parts) == len(sc.hpas)
    # chunks join whole parts, in order, until they hold the HPAs asked for
    assert [len(h) for _, h in chunks(parts, 2)] == [2, 2, 0]
    assert [len(h) for _, h in chunks(parts, 16)] == [4]


def test_namespaces_on_shared_nodes_form_one_part():
    sc = _scenario()
    sc.nodes = [NodeSpec("n1", {"cpu": "8"})]
    (part,) = partition(sc, sc.hpas)
    assert len(part[0]) == len(sc.workloads) and len(part[1]) == len(sc.hpas)


def test_parallel_run_equals_the_single_process_run():
    sc = _scenario()
    single = run_scenario(sc)
    assert any(r.scale_events for r in single.hpas)  # the run does scale
    assert single.hpas[0].key == "jobs/worker" and min(r.replicas for r in single.hpas[0].records) == 0
    seen: list[float] = []
    # More jobs than parts: every part in a process of its own (no lucky grouping hides a split
    # that should not have been made).
    (parallel,) = run_variants(sc, [("", None)], jobs=8, progress=seen.append, chunk_hpas=1)
    assert parallel.scenario is sc
    _same(single, parallel)
    assert seen and seen[-1] == sc.duration and seen == sorted(seen)


def test_chunks_run_one_after_another_equal_the_single_run():
    sc = _scenario()
    seen: list[float] = []
    (chunked,) = run_variants(sc, [("", None)], jobs=1, progress=seen.append, chunk_hpas=1)
    _same(run_scenario(sc), chunked)
    assert seen[-1] == sc.duration and seen == sorted(seen)
    assert any(0 < x < sc.duration / 2 for x in seen)  # chunk by chunk, not 0 .. duration per chunk


def test_parallel_compare_variants_equal_their_single_runs():
    sc = _scenario()
    variant = [h for h in _scenario().hpas]
    for h in variant:
        if h.spec.min_replicas:
            h.spec.min_replicas += 1
    results = run_variants(sc, [("scenario", None), ("tighter", variant)], jobs=2, chunk_hpas=2)
    _same(run_scenario(sc, label="scenario"), results[0])
    _same(run_scenario(sc, hpas=variant, label="tighter"), results[1])
    assert [r.label for r in results] == ["scenario", "tighter"]


def test_one_part_runs_in_process():
    doc = _doc()
    doc["objects"] = [_in("shop", deployment(2)), _in("shop", cpu_hpa(50, 1, 12))]
    del doc["workloads"]  # its entries name workloads no longer in the scenario (an error)
    sc = _scenario(doc)
    (res,) = run_variants(sc, [("", None)], jobs=4)
    _same(run_scenario(sc), res)


def test_cli_jobs_writes_the_same_outputs(tmp_path):
    path = tmp_path / "parallel.yaml"
    path.write_text(yaml.safe_dump(_doc(), sort_keys=False))
    runner = CliRunner()
    one = runner.invoke(app, ["simulate", str(path), "-o", str(tmp_path / "one"), "--no-progress"])
    two = runner.invoke(app, ["simulate", str(path), "-o", str(tmp_path / "two"), "--jobs", "2", "--no-progress"])
    assert one.exit_code == 0, one.output
    assert two.exit_code == 0, two.output
    for name in ("timeline.csv", "summary.json", "summary.csv"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
    bad = runner.invoke(app, ["simulate", str(path), "-o", str(tmp_path / "bad"), "--jobs", "0"])
    assert bad.exit_code == 2 and "--jobs" in bad.output


def test_dask_cluster_runs_the_parts_as_one_run_does(tmp_path):
    """`simulate --dask-scheduler`: every part (one HPA each here) pickled to a worker process of a
    local Dask cluster and back; the merged result and the files equal the single run's."""
    distributed = pytest.importorskip("distributed")
    sc = _scenario()
    path = tmp_path / "parallel.yaml"
    path.write_text(yaml.safe_dump(_doc(), sort_keys=False))
    runner = CliRunner()
    one = runner.invoke(app, ["simulate", str(path), "-o", str(tmp_path / "one"), "--no-progress"])
    assert one.exit_code == 0, one.output
    seen: list[float] = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster:
        (remote,) = run_variants(sc, [("", None)], progress=seen.append, chunk_hpas=1,
                                 dask_scheduler=cluster.scheduler_address)
        cli = runner.invoke(app, ["simulate", str(path), "-o", str(tmp_path / "dask"), "--no-progress",
                                  "--dask-scheduler", cluster.scheduler_address])
    assert remote.scenario is sc
    _same(run_scenario(sc), remote)
    assert seen[-1] == sc.duration and seen == sorted(seen)
    assert len(seen) == len(chunks(partition(sc, sc.hpas), 1))  # told once per part a worker finished
    assert cli.exit_code == 0, cli.output
    for name in ("timeline.csv", "summary.json", "summary.csv"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "dask" / name).read_bytes(), name


def test_unreachable_dask_scheduler_is_a_runtime_error_naming_the_flag(tmp_path, monkeypatch):
    monkeypatch.setattr("pyhpa.sim.dask_run.CONNECT_SECONDS", 1.0)
    path = tmp_path / "parallel.yaml"
    path.write_text(yaml.safe_dump(_doc(), sort_keys=False))
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", str(tmp_path / "out"), "--no-progress",
                                      "--dask-scheduler", "tcp://127.0.0.1:9"])
    assert result.exit_code == 1, result.output  # a runtime failure, not an input error
    assert "error: --dask-scheduler: tcp://127.0.0.1:9: cannot connect" in result.output
    assert "Traceback" not in result.output
