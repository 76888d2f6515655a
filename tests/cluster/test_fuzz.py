"""A short run of the API server's fuzzer (``bench/fuzz_apiserver.py``; ``make fuzz`` runs the
long one): a few thousand random valid and broken requests of every served kind from several
connections against a real ``pyhpa cluster`` process, with a SIGKILL and restart in the middle;
no 5xx, no traceback in its log, every error a Status, the read side answering, a new Deployment
Ready, watches that saw every acknowledged write, and those writes still there after the
restart. The oracle (inputs kube-apiserver refuses) has its own test."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.long(seconds=90)]

BENCH = Path(__file__).resolve().parents[2] / "bench"


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("seed", [1, 6])
def test_random_requests_keep_every_property(tmp_path, seed):
    fuzzer = load("fuzz_apiserver")
    figures = fuzzer.fuzz_new_server(tmp_path / "data", requests=2500, seed=seed, workers=3,
                                     check_every=800, ready_every=800, reset_every=1250,
                                     oracle_report_only=True, seconds=120)
    report = "\n".join(figures.lines())
    assert figures.requests == 2500
    assert figures.restarts == 1 and figures.restart_checked > 0 and figures.restart_failures == 0
    assert figures.acks > 0 and figures.watch_misses == 0, report
    assert figures.ready_checks >= 3 and figures.dead_simulation == 0, report
    assert figures.read_failures == 0 and figures.protocol_failures == 0, report
    assert figures.non_status_errors == 0, report
    assert len(figures.statuses) >= 5  # the draws reach successes and many kinds of refusal
    assert figures.server_errors == 0 and figures.tracebacks == 0, report
    assert figures.ok(), report


def test_leaf_faults_reach_every_depth_of_a_deployment():
    import random

    fuzzer = load("fuzz_apiserver")
    gen = sys.modules["fuzz_gen"].Generator(random.Random(3), fuzzer.WIDGETS_CRD)
    res, version = next(k for k in gen.kinds if k[0].kind == "Deployment")
    paths = {p for p, _ in gen.leaf_paths(res, version)}
    assert ("spec", "template", "spec", "containers", 0, "resources", "requests", "*") in paths
    obj = gen.object(res, version, "web")
    concrete = gen.set_path(obj, ("spec", "template", "spec", "containers", 0, "resources",
                                  "requests", "*"), None)
    assert len(concrete) == 8
    assert obj["spec"]["template"]["spec"]["containers"][concrete[4]]["resources"][
        "requests"][concrete[7]] is None
    assert obj["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx"  # kept valid


def test_the_oracle_inputs_are_all_refused(tmp_path):
    fuzzer = load("fuzz_apiserver")
    probes = sys.modules["fuzz_probes"]
    server = fuzzer.Server(tmp_path / "data")
    try:
        client = fuzzer.Client(server.port, server.token, server.ctx)
        accepted, twins_refused = probes.run_oracle(client.request)
    finally:
        server.stop()
    assert twins_refused == []
    assert accepted == []


def test_the_watch_check_reports_an_acknowledged_write_no_watch_saw():
    load("fuzz_apiserver")
    watch = sys.modules["fuzz_watch"]
    acks = watch.Acks()
    body = b'{"kind":"ConfigMap","metadata":{"name":"a","namespace":"n","resourceVersion":"7"}}'
    acks.record("", "configmaps", "POST", "/api/v1/namespaces/n/configmaps", 201, body)
    acks.record("", "configmaps", "POST", "/api/v1/namespaces/n/configmaps?dryRun=All", 201,
                body.replace(b'"7"', b'"8"'))  # a dry run acknowledges nothing
    watches = watch.Watches(0, "", None, [("", "v1", "configmaps")])
    assert watches.misses(acks, wait=0) == ["configmaps. resourceVersion 7"]
    watches.watches[("", "configmaps")].seen.add(7)
    assert watches.misses(acks, wait=0) == []


class _Gone:
    def request(self, method, path, body=None, ctype=None):
        return 404, b'{"kind":"Status","code":404}', "application/json"


def test_the_restart_check_reports_an_acknowledged_object_that_is_gone():
    load("fuzz_apiserver")
    watch = sys.modules["fuzz_watch"]
    acks = watch.Acks()
    acks.record("", "configmaps", "PUT", "/api/v1/namespaces/n/configmaps/a", 200,
                b'{"kind":"ConfigMap","metadata":{"name":"a","namespace":"n",'
                b'"resourceVersion":"7"}}')
    watches = watch.Watches(0, "", None, [("", "v1", "configmaps")])
    watches.watches[("", "configmaps")].deleted[("n", "b")] = 9  # another object's deletion
    bad = watch.check_after_restart(_Gone(), acks, watches, wait=0)
    assert bad == ["GET /api/v1/namespaces/n/configmaps/a: 404, acknowledged at "
                   "resourceVersion 7 and no deletion seen"]
    watches.watches[("", "configmaps")].deleted[("n", "a")] = 9
    assert watch.check_after_restart(_Gone(), acks, watches, wait=0) == []
