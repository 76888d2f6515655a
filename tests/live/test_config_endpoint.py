"""The controller's published configuration at /debug/config and on its Lease (fast, no cluster)."""

from __future__ import annotations

import json

from starlette.testclient import TestClient

from pyhpa.controller.flags import CONFIG_ANNOTATION, build_config, config_document, flags_of_document
from pyhpa.live.health import build_app
from pyhpa.live.leader import KubeLeaseClient


def test_debug_config_serves_the_document_and_404_without_one():
    doc = config_document(build_config(downscale_stabilization="1m"), None, "pyhpa-a", "kube-system/l")
    served = TestClient(build_app(lambda: b"", lambda: (True, ""), config=doc)).get("/debug/config")
    assert served.status_code == 200
    assert flags_of_document(served.json()).config().downscale_stabilization == 60.0
    assert TestClient(build_app(lambda: b"", lambda: (True, ""))).get("/debug/config").status_code == 404


class _Recorder:
    def __init__(self):
        self.sent = []

    async def post(self, path, body):
        self.sent.append(body)
        return body

    async def put(self, path, body):
        self.sent.append(body)
        return body


async def test_every_lease_write_carries_the_annotation_and_keeps_others():
    http = _Recorder()
    leases = KubeLeaseClient(http, "kube-system", "l", annotations={CONFIG_ANNOTATION: "{}"})
    await leases.create({"spec": {"holderIdentity": "a"}})
    await leases.update({"metadata": {"name": "l", "annotations": {"other": "x"}}, "spec": {}})
    assert http.sent[0]["metadata"]["annotations"] == {CONFIG_ANNOTATION: "{}"}
    assert http.sent[1]["metadata"]["annotations"] == {"other": "x", CONFIG_ANNOTATION: "{}"}
    assert json.loads(http.sent[0]["metadata"]["annotations"][CONFIG_ANNOTATION]) == {}
