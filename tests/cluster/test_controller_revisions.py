"""ControllerRevisions (controllers/history.py, apiserver/history_strategy.py): their write
rules, and a DaemonSet's history kept to its revisionHistoryLimit."""

from __future__ import annotations

import pytest

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.history_strategy import ControllerRevisionStrategy
from pyhpa.cluster.apiserver.storage import Store
from pyhpa.cluster.controllers.history import recorded_template
from pyhpa.cluster.controllers.simulation import Simulation
from tests.clock import Clock

NS = "default"


def _messages(causes):
    return [f"{c['field']}: {c['message']}" for c in causes]


def test_a_revision_needs_data_never_changes_it_and_counts_from_zero():
    s = ControllerRevisionStrategy(R.CONTROLLER_REVISIONS)
    meta = {"name": "agent-1", "namespace": NS}
    assert _messages(s.validate({"metadata": meta, "revision": -1}, None)) == [
        "data: Required value: data is mandatory",
        "revision: Invalid value: -1: must be greater than or equal to 0"]
    old = {"metadata": meta, "data": {"spec": {}}, "revision": 1}
    assert _messages(s.validate({**old, "revision": 4}, old)) == []
    changed = _messages(s.validate({**old, "data": {"spec": {"x": 1}}}, old))
    assert len(changed) == 1 and changed[0].startswith("data: Invalid value") \
        and changed[0].endswith("field is immutable")


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "store.sqlite")
    yield s
    s.close()


def test_a_daemonset_keeps_its_history_limit_and_the_revision_its_pods_run(store):
    clock = Clock()
    sim = Simulation(store, clock)
    sim.ensure_node()
    store.create(R.DAEMON_SETS.key, {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": NS, "annotations": {"team": "infra"}},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "revisionHistoryLimit": 2,
                 "updateStrategy": {"type": "OnDelete"},  # the first pod keeps running image 1
                 "template": {"metadata": {"labels": {"app": "agent"}},
                              "spec": {"containers": [{"name": "a", "image": "agent:1"}]}}}})
    sim.settle()
    for image in range(2, 7):
        def set_image(o, image=image):
            o["spec"]["template"]["spec"]["containers"][0]["image"] = f"agent:{image}"
        store.guaranteed_update(R.DAEMON_SETS.key, NS, "agent", set_image)
        clock.t += 1
        sim.settle()
    revisions = store.list(R.CONTROLLER_REVISIONS.key, NS).items
    images = {r["revision"]: recorded_template(r)["spec"]["containers"][0]["image"] for r in revisions}
    # the current one, the two before it, and the one the pod still runs
    assert images == {1: "agent:1", 4: "agent:4", 5: "agent:5", 6: "agent:6"}
    assert all(r["metadata"]["annotations"]["team"] == "infra" for r in revisions)
    assert all(r["metadata"]["labels"]["app"] == "agent" for r in revisions)
