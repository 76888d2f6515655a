"""What an emulated release publishes and answers, without pyhpa's newer fields leaking in:
OpenAPI per release, TARGETS as the release printed them, the WatchList bookmark, managedFields
of stored fields only, and JSON-patch failures in kube-apiserver's words (ASGI, no sockets)."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from pyhpa.api.versions import emulated_profile
from pyhpa.cluster.apiserver.server import APIServer
from pyhpa.cluster.apiserver.storage import Store
from tests import builders

HPAS = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def server(tmp_path, minor: int | None) -> TestClient:
    profile = emulated_profile(minor) if minor is not None else None
    return TestClient(APIServer(Store(tmp_path / "store.sqlite"), profile=profile))


def hpa(name: str, **spec) -> dict:
    return builders.hpa(name, "web", namespace=None, metrics=[{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}], **spec)


def v2_schemas(client: TestClient) -> dict:
    return client.get("/openapi/v3/apis/autoscaling/v2").json()["components"]["schemas"]


@pytest.mark.parametrize("minor, tolerance, pyhpa_fields", [
    (27, False, False), (33, True, False), (None, True, True)])
def test_openapi_lists_the_fields_the_release_has(tmp_path, minor, tolerance, pyhpa_fields):
    client = server(tmp_path, minor)
    defs = v2_schemas(client)
    rules = defs["io.k8s.api.autoscaling.v2.HPAScalingRules"]["properties"]
    assert ("tolerance" in rules) is tolerance
    behavior = defs["io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerBehavior"]["properties"]
    assert ("syncPeriodSeconds" in behavior) is pyhpa_fields
    assert ("fallback" in defs["io.k8s.api.autoscaling.v2.ExternalMetricSource"]["properties"]) \
        is pyhpa_fields


@pytest.mark.parametrize("minor, cell", [(27, "<unknown>/50%"), (29, "<unknown>/50%"),
                                         (30, "cpu: <unknown>/50%"), (None, "cpu: <unknown>/50%")])
def test_targets_as_the_release_printed_them(tmp_path, minor, cell):
    client = server(tmp_path, minor)
    assert client.post(HPAS, json=hpa("web")).status_code == 201
    table = client.get(HPAS, headers={"Accept": TABLE}).json()
    assert table["rows"][0]["cells"][2] == cell
    one = client.get(HPAS + "/web", headers={"Accept": TABLE}).json()
    assert one["rows"][0]["cells"][2] == cell


JOBS = "/apis/batch/v1/namespaces/default/jobs"
CRONJOBS = "/apis/batch/v1/namespaces/default/cronjobs"
JOB_TEMPLATE = {"template": {"spec": {"restartPolicy": "Never",
                                      "containers": [{"name": "run", "image": "run:1"}]}}}


@pytest.mark.parametrize("minor, job_columns, cronjob_columns", [
    (29, ["Name", "Completions", "Duration", "Age"],
     ["Name", "Schedule", "Suspend", "Active", "Last Schedule", "Age"]),
    (30, ["Name", "Status", "Completions", "Duration", "Age"],
     ["Name", "Schedule", "TimeZone", "Suspend", "Active", "Last Schedule", "Age"]),
    (None, ["Name", "Status", "Completions", "Duration", "Age"],
     ["Name", "Schedule", "TimeZone", "Suspend", "Active", "Last Schedule", "Age"]),
])
def test_job_columns_as_the_release_printed_them(tmp_path, minor, job_columns, cronjob_columns):
    """1.30 added the Job's STATUS and the CronJob's TIMEZONE columns; older releases print
    neither, in the column definitions and in the cells alike."""
    client = server(tmp_path, minor)
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once"}, "spec": JOB_TEMPLATE}
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 2 * * *", "jobTemplate": {"spec": JOB_TEMPLATE}}}
    assert client.post(JOBS, json=job).status_code == 201
    assert client.post(CRONJOBS, json=cron).status_code == 201
    for path, expected in ((JOBS, job_columns), (CRONJOBS, cronjob_columns)):
        table = client.get(path, headers={"Accept": TABLE}).json()
        shown = [c["name"] for c in table["columnDefinitions"] if c["priority"] == 0]
        assert shown == expected
        assert len(table["rows"][0]["cells"]) == len(table["columnDefinitions"])


@pytest.mark.parametrize("minor, shown", [(28, False), (29, True), (None, True)])
def test_a_claim_prints_its_volume_attributes_class_from_1_29(tmp_path, minor, shown):
    client = server(tmp_path, minor)
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    path = "/api/v1/namespaces/default/persistentvolumeclaims"
    assert client.post(path, json=claim).status_code == 201
    table = client.get(path, headers={"Accept": TABLE}).json()
    names = [c["name"] for c in table["columnDefinitions"]]
    assert ("VolumeAttributesClass" in names) is shown
    assert len(table["rows"][0]["cells"]) == len(names)


def test_a_watch_list_ends_its_initial_events_with_the_marked_bookmark(tmp_path):
    client = server(tmp_path, None)
    for name in ("a", "b"):
        client.post(HPAS, json=hpa(name))
    r = client.get(HPAS, params={"watch": "true", "sendInitialEvents": "true",
                                 "resourceVersionMatch": "NotOlderThan",
                                 "allowWatchBookmarks": "true", "timeoutSeconds": "1"})
    events = [json.loads(line) for line in r.text.splitlines()]
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in events[:2]] == [
        ("ADDED", "a"), ("ADDED", "b")]
    bookmark = events[2]
    assert bookmark["type"] == "BOOKMARK"
    assert bookmark["object"]["kind"] == "HorizontalPodAutoscaler"
    assert bookmark["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    latest = client.get(HPAS).json()["metadata"]["resourceVersion"]
    assert bookmark["object"]["metadata"]["resourceVersion"] == latest
    # an empty collection: the bookmark alone
    r = client.get("/apis/apps/v1/namespaces/default/deployments",
                   params={"watch": "true", "sendInitialEvents": "true",
                           "resourceVersionMatch": "NotOlderThan",
                           "allowWatchBookmarks": "true", "timeoutSeconds": "1"})
    [only] = [json.loads(line) for line in r.text.splitlines()]
    assert only["type"] == "BOOKMARK"
    assert only["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    # without bookmarks, as upstream's ListOptions validation says
    bad = client.get(HPAS, params={"watch": "true", "sendInitialEvents": "true",
                                   "resourceVersionMatch": "NotOlderThan"})
    assert bad.status_code == 422
    assert "sendInitialEvents requires setting allowWatchBookmarks to true" in bad.json()["message"]


@pytest.mark.parametrize("path, body", [
    (HPAS + "/web", {"spec": {"foo": 1}, "metadata": {"labels": {"x": "y"}}}),
    (DEPLOYMENTS + "/web", {"spec": {"foo": 1}, "metadata": {"labels": {"x": "y"}}}),
])
def test_a_dropped_unknown_field_is_neither_stored_nor_owned(tmp_path, path, body):
    client = server(tmp_path, None)
    client.post(HPAS, json=hpa("web"))
    client.post(DEPLOYMENTS, json=builders.deployment("web", 1, namespace=None))
    r = client.patch(path + "?fieldValidation=Warn&fieldManager=me", content=json.dumps(body),
                     headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200 and 'unknown field \\"spec.foo\\"' in r.headers["warning"]
    mine = [m["fieldsV1"] for m in r.json()["metadata"]["managedFields"] if m["manager"] == "me"]
    assert mine == [{"f:metadata": {"f:labels": {"f:x": {}}}}]
    assert "foo" not in client.get(path).json()["spec"]
    again = client.patch(path + "?fieldValidation=Warn&fieldManager=me", content=b'{"metadata":{}}',
                         headers={"Content-Type": "application/merge-patch+json"})
    assert "warning" not in again.headers  # nothing unknown was kept to warn about again


def test_json_patch_failures_read_as_kube_apiservers(tmp_path):
    client = server(tmp_path, None)
    client.post(HPAS, json=hpa("web"))
    for ops in ([{"op": "test", "path": "/spec/maxReplicas", "value": 99}],
                [{"op": "test", "path": "/spec/x", "value": 1}],
                [{"op": "remove", "path": "/spec/nothere"}]):
        r = client.patch(HPAS + "/web", content=json.dumps(ops),
                         headers={"Content-Type": "application/json-patch+json"})
        assert r.status_code == 422
        assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                            "status": "Failure", "message": "the server rejected our request due "
                            "to an error in our request", "reason": "Invalid", "details": {},
                            "code": 422}
    r = client.patch(HPAS + "/web", content=b'{"op": "test"}',
                     headers={"Content-Type": "application/json-patch+json"})
    assert (r.status_code, r.json()["message"]) == (
        400, "json: cannot unmarshal object into Go value of type jsonpatch.Patch")
