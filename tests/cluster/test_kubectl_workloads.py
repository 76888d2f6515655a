"""Workload behaviour users notice through real kubectl: rollouts, pod lifecycles, resources."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest

from pyhpa.cluster.embedded import ThreadedCluster

from .conftest import make_kubectl

pytestmark = [pytest.mark.kubectl, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with ThreadedCluster(tmp_path_factory.mktemp("workloads")) as c:
        c.simulation.resolution = 1.0  # a fast metrics pipeline: `kubectl top` within seconds
        c.simulation.window = 2.0
        yield c


def kubectl(cluster, tmp_path_factory, minor: int):
    proc = SimpleNamespace(kubeconfig=cluster.kubeconfig_path)
    return make_kubectl(minor, proc, tmp_path_factory.mktemp(f"kubehome{minor}"))


@pytest.fixture(scope="module")
def k(cluster, tmp_path_factory):
    return kubectl(cluster, tmp_path_factory, 33)


def wait_for(fn, timeout: float = 45.0, what: str = ""):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}: last={last!r}")


def get(k, *args: str) -> dict:
    return json.loads(k("get", *args, "-o", "json").stdout)


@pytest.mark.parametrize("minor", [33, 27])
def test_rollout_undo_restores_the_annotations_of_the_revision(cluster, tmp_path_factory, minor):
    k = kubectl(cluster, tmp_path_factory, minor)
    name = f"undo{minor}"
    k("create", "deployment", name, "--image=nginx:1.25")
    k("annotate", "deployment", name, "sim.pyhpa.io/cpu=500m", "sim.pyhpa.io/startup-seconds=1",
      "sim.pyhpa.io/termination-seconds=1", "kubernetes.io/change-cause=first")
    k("rollout", "status", f"deployment/{name}", "--timeout=40s")
    k("set", "image", f"deployment/{name}", "nginx=nginx:1.26")
    k("annotate", "deployment", name, "--overwrite", "sim.pyhpa.io/cpu=900m",
      "kubernetes.io/change-cause=second")
    k("rollout", "status", f"deployment/{name}", "--timeout=40s")
    history = k("rollout", "history", f"deployment/{name}").stdout
    assert [ln.split() for ln in history.splitlines()[2:] if ln.strip()] == \
        [["1", "first"], ["2", "second"]]

    out = k("rollout", "undo", f"deployment/{name}").stdout
    assert "rolled back" in out
    k("rollout", "status", f"deployment/{name}", "--timeout=40s")
    dep = get(k, "deployment", name)
    anns = dep["metadata"]["annotations"]
    # the annotations of revision 1 are back, the load settings among them
    assert anns["sim.pyhpa.io/cpu"] == "500m" and anns["sim.pyhpa.io/startup-seconds"] == "1"
    assert anns["kubernetes.io/change-cause"] == "first"
    assert anns["deployment.kubernetes.io/revision"] == "3"
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    rss = {rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs["metadata"]["annotations"]
           for rs in get(k, "rs", "-l", f"app={name}")["items"]}
    assert rss["nginx:1.25"]["deployment.kubernetes.io/revision-history"] == "1"
    assert "kubectl.kubernetes.io/last-applied-configuration" not in rss["nginx:1.25"]
    history = k("rollout", "history", f"deployment/{name}").stdout
    assert [ln.split() for ln in history.splitlines()[2:] if ln.strip()] == \
        [["2", "second"], ["3", "first"]]
