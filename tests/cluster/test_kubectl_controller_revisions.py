"""`kubectl rollout history` and `rollout undo` of DaemonSets and StatefulSets (issue 26), with the
real kubectl 1.32, 1.33 and 1.27: their controllers record ControllerRevisions, served with
upstream's columns, which the history lists and an undo patches back."""

from __future__ import annotations

import json
import zlib
from types import SimpleNamespace

import pytest

from pyhpa.cluster.embedded import EmbeddedCluster

from .conftest import make_kubectl, wait_for

pytestmark = pytest.mark.kubectl

DS = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: agent, namespace: {ns}}}
spec:
  selector: {{matchLabels: {{app: agent}}}}
  template:
    metadata: {{labels: {{app: agent}}}}
    spec:
      containers: [{{name: agent, image: "agent:1"}}]
"""

STS = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db, namespace: {ns}}}
spec:
  replicas: 2
  serviceName: db
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec:
      containers: [{{name: db, image: "db:1"}}]
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with EmbeddedCluster(tmp_path_factory.mktemp("revisions")) as c:
        c.simulation.resolution = 1.0
        yield c


@pytest.fixture(params=[32, 33, 27])
def k(request, cluster, tmp_path):
    run = make_kubectl(request.param, SimpleNamespace(kubeconfig=cluster.kubeconfig_path), tmp_path)
    # One namespace per test: the previous test's namespace may still be terminating.
    ns = f"rev{request.param}-{zlib.crc32(request.node.nodeid.encode()):x}"
    run("create", "namespace", ns)
    run.ns = ns  # type: ignore[attr-defined]
    yield run
    run("delete", "namespace", ns, "--wait=false", check=False)


def _revisions(k, kind: str, name: str) -> list[tuple[int, str]]:
    """(revision, change-cause) rows of `kubectl rollout history`, once it lists any."""
    out = k("-n", k.ns, "rollout", "history", f"{kind}/{name}").stdout
    return [(int(r.split()[0]), r.split(None, 1)[1]) for r in out.splitlines()[2:] if r.strip()]


def _image(k, kind: str, name: str) -> str:
    return k("-n", k.ns, "get", kind, name, "-o",
             "jsonpath={.spec.template.spec.containers[0].image}").stdout


def test_a_daemonset_rollout_history_lists_its_revisions_and_undo_restores_one(k):
    ns = k.ns
    k("apply", "-f", "-", input=DS.format(ns=ns))
    wait_for(lambda: _revisions(k, "daemonset", "agent") == [(1, "<none>")], what="revision 1")
    k("-n", ns, "annotate", "ds/agent", "kubernetes.io/change-cause=agent 2")
    k("-n", ns, "set", "image", "ds/agent", "agent=agent:2")
    wait_for(lambda: _revisions(k, "daemonset", "agent") == [(1, "<none>"), (2, "agent 2")],
             what="revision 2")
    rows = [r.split() for r in k("-n", ns, "get", "controllerrevisions").stdout.splitlines()]
    assert rows[0] == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    assert sorted((r[1], r[2]) for r in rows[1:]) == [("daemonset.apps/agent", "1"),
                                                      ("daemonset.apps/agent", "2")]
    revisions = json.loads(k("-n", ns, "get", "controllerrevisions", "-o", "json").stdout)["items"]
    by_number = {r["revision"]: r for r in revisions}
    first = by_number[1]
    assert first["data"]["spec"]["template"]["$patch"] == "replace"
    assert first["data"]["spec"]["template"]["spec"]["containers"][0]["image"] == "agent:1"
    assert first["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"
    assert first["metadata"]["name"] == "agent-" + first["metadata"]["labels"]["controller-revision-hash"]
    pods = json.loads(k("-n", ns, "get", "pods", "-l", "app=agent", "-o", "json").stdout)["items"]
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in pods} <= \
        {r["metadata"]["labels"]["controller-revision-hash"] for r in revisions}

    shown = k("-n", ns, "rollout", "history", "ds/agent", "--revision=1").stdout
    assert "daemonset.apps/agent with revision #1" in shown and "Image:\tagent:1" in shown
    undone = k("-n", ns, "rollout", "undo", "ds/agent", "--to-revision=1")
    assert undone.stdout.strip() == "daemonset.apps/agent rolled back"
    assert _image(k, "ds", "agent") == "agent:1"
    # the old revision becomes the latest
    wait_for(lambda: [n for n, _ in _revisions(k, "daemonset", "agent")] == [2, 3], what="renumbered")
    again = k("-n", ns, "rollout", "undo", "ds/agent", "--to-revision=3")
    assert again.stdout.strip() == ("daemonset.apps/agent skipped rollback (current template "
                                    "already matches revision 3)")
    missing = k("-n", ns, "rollout", "undo", "ds/agent", "--to-revision=9", check=False)
    assert missing.returncode == 1 and "unable to find specified revision 9" in missing.stderr
    # they go with their DaemonSet
    k("-n", ns, "delete", "ds", "agent")
    wait_for(lambda: not k("-n", ns, "get", "controllerrevisions", "-o", "name").stdout.strip(),
             what="revisions gone")


def test_a_statefulset_rollout_history_and_undo(k):
    ns = k.ns
    k("apply", "-f", "-", input=STS.format(ns=ns))
    wait_for(lambda: _revisions(k, "statefulset", "db") == [(1, "<none>")], what="revision 1")
    k("-n", ns, "set", "image", "sts/db", "db=db:2")
    wait_for(lambda: [n for n, _ in _revisions(k, "statefulset", "db")] == [1, 2], what="revision 2")
    sts = json.loads(k("-n", ns, "get", "sts", "db", "-o", "json").stdout)
    names = set(k("-n", ns, "get", "controllerrevisions", "-o", "name").stdout.split())
    assert f"controllerrevision.apps/{sts['status']['updateRevision']}" in names
    shown = k("-n", ns, "rollout", "history", "sts/db", "--revision=2").stdout
    assert "statefulset.apps/db with revision #2" in shown and "Image:\tdb:2" in shown
    assert k("-n", ns, "rollout", "undo", "sts/db").stdout.strip() == "statefulset.apps/db rolled back"
    assert _image(k, "sts", "db") == "db:1"
    wait_for(lambda: [n for n, _ in _revisions(k, "statefulset", "db")] == [2, 3], what="renumbered")
    # the pods roll back to the revision the first one was created with
    first = json.loads(k("-n", ns, "get", "controllerrevisions", "-o", "json").stdout)["items"]
    restored = next(r["metadata"]["name"] for r in first if r["revision"] == 3)
    wait_for(lambda: json.loads(k("-n", ns, "get", "sts", "db", "-o", "json").stdout)["status"]
             .get("updateRevision") == restored, what="update revision")
