"""Pure pieces of the cluster: patches, protobuf codec, Accept negotiation, TARGETS cells."""

from __future__ import annotations

import pytest

from pyhpa.cluster.apiserver import columns, discovery, patch, protobuf, tables
from pyhpa.cluster.apiserver.field_selectors import FieldSelector
from tests.cluster.protobuf_bodies import encode_message, encode_unknown


def test_merge_patch_rfc7386():
    assert patch.merge_patch({"a": 1, "b": {"c": 2, "d": 3}, "l": [1]},
                             {"b": {"c": None, "e": 4}, "l": [2]}) == {
        "a": 1, "b": {"d": 3, "e": 4}, "l": [2]}


def test_json_patch_ops_and_errors():
    doc = {"spec": {"a": 1, "l": [1, 2]}}
    out = patch.json_patch(doc, [{"op": "replace", "path": "/spec/a", "value": 9},
                                 {"op": "add", "path": "/spec/l/-", "value": 3},
                                 {"op": "move", "from": "/spec/a", "path": "/spec/b"},
                                 {"op": "test", "path": "/spec/b", "value": 9}])
    assert out == {"spec": {"b": 9, "l": [1, 2, 3]}} and doc["spec"]["a"] == 1
    with pytest.raises(patch.PatchError):
        patch.json_patch(doc, [{"op": "test", "path": "/spec/a", "value": 2}])
    with pytest.raises(patch.PatchError):
        patch.json_patch(doc, [{"op": "remove", "path": "/nope"}])


def test_strategic_merge_by_key_atomic_lists_and_directives():
    live = {"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}],
                     "metrics": [{"type": "Resource"}, {"type": "Pods"}]},
            "metadata": {"finalizers": ["f1"]}}
    p = {"spec": {"containers": [{"name": "b", "image": "z"}, {"name": "a", "$patch": "delete"}],
                  "metrics": [{"type": "External"}],
                  "$setElementOrder/containers": [{"name": "b"}]},
         "metadata": {"finalizers": ["f2"]}}
    out = patch.strategic_merge_patch(live, p)
    assert out["spec"]["containers"] == [{"name": "b", "image": "z"}]
    assert out["spec"]["metrics"] == [{"type": "External"}]
    assert out["metadata"]["finalizers"] == ["f1", "f2"]
    assert patch.strategic_merge_patch({"a": {"x": 1, "y": 2}},
                                       {"a": {"$patch": "replace", "z": 3}}) == {"a": {"z": 3}}


def test_protobuf_round_trip_hpa_v1():
    obj = {"metadata": {"name": "web", "labels": {"a": "b"}},
           "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web",
                                       "apiVersion": "apps/v1"},
                    "minReplicas": 2, "maxReplicas": 5, "targetCPUUtilizationPercentage": 50}}
    body = encode_unknown("autoscaling/v1", "HorizontalPodAutoscaler",
                                   encode_message("HPAv1", obj))
    assert protobuf.decode_object(body) == {"apiVersion": "autoscaling/v1",
                                            "kind": "HorizontalPodAutoscaler", **obj}


def test_protobuf_rejects_garbage_and_unknown_kinds():
    with pytest.raises(protobuf.ProtobufError):
        protobuf.decode_object(b"not protobuf")
    with pytest.raises(protobuf.ProtobufError, match="only supported"):
        protobuf.decode_object(encode_unknown("v1", "LimitRange", b""))
    with pytest.raises(protobuf.ProtobufError):
        protobuf.parse_fields(b"\x0a\x05ab")  # length past the end


def test_negative_varint_round_trip():
    enc = protobuf.field_varint(1, -3)
    assert protobuf._signed(protobuf.parse_fields(enc)[0][1]) == -3


@pytest.mark.parametrize("accept,want", [
    ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", "v2"),
    ("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
     "v2beta1"),
    ("application/json, */*", None),
    (None, None),
])
def test_discovery_negotiation(accept, want):
    assert discovery.negotiate_discovery(accept) == want


def _metric(kind: str, **target):
    field = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods",
             "Object": "object", "External": "external"}[kind]
    src = {"target": target}
    if kind in ("Resource", "ContainerResource"):
        src["name"] = "cpu" if "averageUtilization" in target else "memory"
    return {"type": kind, field: src}


def test_targets_cell_formats():
    obj = {"spec": {"metrics": [_metric("Resource", type="Utilization", averageUtilization=50)]}}
    assert columns.hpa_targets(obj) == "cpu: <unknown>/50%"
    obj["status"] = {"currentMetrics": [{"type": "Resource", "resource": {
        "name": "cpu", "current": {"averageUtilization": 35}}}]}
    assert columns.hpa_targets(obj) == "cpu: 35%/50%"
    many = {"spec": {"metrics": [
        _metric("Pods", type="AverageValue", averageValue="30"),
        _metric("Resource", type="AverageValue", averageValue="100Mi"),
        _metric("External", type="Value", value="10k")]},
        "status": {"currentMetrics": [
            {"type": "Pods", "pods": {"current": {"averageValue": "30"}}},
            {"type": "Resource", "resource": {"name": "memory",
                                              "current": {"averageValue": "51200k"}}}]}}
    assert columns.hpa_targets(many) == "30/30, memory: 51200k/100Mi + 1 more..."
    assert columns.hpa_targets({"spec": {}}) == "<none>"
    ext = {"spec": {"metrics": [_metric("External", type="AverageValue", averageValue="30")]}}
    assert columns.hpa_targets(ext) == "<unknown>/30 (avg)"


def test_field_selector_terms_in_any_order():
    ev = {"involvedObject": {"name": "web", "kind": "HorizontalPodAutoscaler", "uid": "u"},
          "metadata": {"name": "e1", "namespace": "default"}}
    a = FieldSelector.parse("involvedObject.name=web,involvedObject.kind=HorizontalPodAutoscaler")
    b = FieldSelector.parse("involvedObject.kind=HorizontalPodAutoscaler,involvedObject.name=web")
    assert a.matches(ev) and b.matches(ev)
    assert not FieldSelector.parse("metadata.name!=e1").matches(ev)


def test_pod_rows_from_the_partial_decode_equal_rows_from_the_whole_object():
    import msgspec

    from pyhpa.cluster.apiserver import resources as R

    meta = {"name": "p", "namespace": "ns", "uid": "u", "labels": {"app": "x"},
            "creationTimestamp": "2024-05-01T10:00:00Z", "resourceVersion": "7",
            "ownerReferences": [{"kind": "ReplicaSet", "name": "rs", "uid": "r"}]}
    running = {"phase": "Running", "podIP": "10.0.0.5", "conditions": [{"type": "Ready"}],
               "containerStatuses": [{"name": "a", "ready": True, "restartCount": 2,
                                      "state": {"running": {}}, "image": "nginx"},
                                     {"name": "b", "ready": False, "restartCount": 1,
                                      "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}
    pods = [
        {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
         "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1",
                  "readinessGates": [{"conditionType": "g1"}, {"conditionType": "g2"}]},
         "status": running},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {**meta, "deletionTimestamp": "2024-05-01T10:05:00Z"},
         "spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Running"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {},
         "status": {"phase": "Failed", "reason": "Evicted", "nominatedNodeName": "n2"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare"}},
        # fields of unexpected JSON types: the whole object is decoded instead
        {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
         "spec": {"containers": None},
         "status": {"containerStatuses": [{"ready": "yes", "restartCount": "2", "state": 5}]}},
    ]
    decode = tables.row_decoder(R.PODS)
    assert decode is not None and tables.row_decoder(R.HPAS) is None
    for include in ("Metadata", "None"):
        whole = tables.table(R.PODS, pods, include_object=include, now=1714560000.0 + 3600)
        rows = [decode(msgspec.json.encode(p)) for p in pods]
        partial = tables.table(R.PODS, [r.view for r in rows], include_object=include,
                               metadata=[r.metadata for r in rows], now=1714560000.0 + 3600)
        # the same bytes: the stored metadata goes out as it was stored
        assert msgspec.json.encode(partial) == msgspec.json.encode(whole)
    assert [r["cells"][:4] for r in whole["rows"]][:3] == [
        ["p", "1/2", "CrashLoopBackOff", "3"], ["p", "0/1", "Terminating", "0"],
        ["p", "0/0", "Evicted", "0"]]


def test_pod_rows_show_the_last_restart_and_a_terminated_reason_as_upstream():
    from pyhpa.cluster.apiserver import resources as R

    meta = {"name": "p", "namespace": "ns", "creationTimestamp": "2024-05-01T10:00:00Z"}

    def pod(state: dict, **extra) -> dict:
        cs = {"name": "a", "ready": False, "restartCount": 3, "state": state,
              "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137,
                                           "finishedAt": "2024-05-01T10:59:40Z"}}, **extra}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                "spec": {"containers": [{"name": "a"}]},
                "status": {"phase": "Running", "containerStatuses": [cs]}}
    rows = tables.table(R.PODS, [
        pod({"terminated": {"reason": "OOMKilled", "exitCode": 137}}),
        pod({"waiting": {"reason": "CrashLoopBackOff"}}),
        pod({"terminated": {"exitCode": 2}}),
        pod({"running": {}}, ready=True)], include_object="None", now=1714561200.0)["rows"]
    assert [r["cells"][1:4] for r in rows] == [
        ["0/1", "OOMKilled", "3 (20s ago)"], ["0/1", "CrashLoopBackOff", "3 (20s ago)"],
        ["0/1", "ExitCode:2", "3 (20s ago)"], ["1/1", "Running", "3 (20s ago)"]]


def test_cluster_help_shows_the_default_paths():
    from typer.testing import CliRunner

    from pyhpa.cli import app

    out = CliRunner().invoke(app, ["cluster", "--help"], env={"COLUMNS": "200"}).output
    assert "~/.local/share/pyhpa/cluster" in out and "DATA_DIR/kubeconfig" in out
    assert "the token live ." not in out


def test_no_module_level_memo_in_the_api_server():
    """A memo decorator is module state that outlives a server (and its schemas); each server
    builds what it needs when it is constructed."""
    import ast
    import pathlib

    import pyhpa.cluster.apiserver as pkg

    found = []
    for path in sorted(pathlib.Path(pkg.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for dec in node.decorator_list:
                    text = ast.unparse(dec)
                    if "lru_cache" in text or text.split("(")[0].endswith("cache"):
                        found.append(f"{path.name}:{node.name}")
    assert not found


def test_each_server_builds_its_schemas_once_and_shares_them():
    from pyhpa.cluster.apiserver import resources as R
    from pyhpa.cluster.apiserver.server import APIServer
    from pyhpa.cluster.apiserver.storage import Store

    a, b = APIServer(Store()), APIServer(Store())
    assert a.schemas is not b.schemas
    assert a.openapi.schemas is a.schemas and a.strategy(R.DEPLOYMENTS).schemas is a.schemas
    assert a.schemas.of_kind("apps", "v1", "Deployment") == "io.k8s.api.apps.v1.Deployment"


def test_age_cells_parse_rfc3339_seconds():
    assert columns.age("2024-05-01T10:11:12Z", 1714558272.0 + 3 * 3600) == "3h"
    assert columns.age("2024-05-01T10:11:12.123456Z", 1714558272.0 + 61) == "61s"
    assert columns.age(None, 0.0) == columns.age("garbage", 0.0) == "<unknown>"


def test_a_table_formats_each_distinct_age_once_and_forgets_it():
    clock = columns.TableClock(1714558272.0 + 61)
    assert clock.age("2024-05-01T10:11:12Z") == "61s" == clock.age("2024-05-01T10:11:12Z")
    assert columns.TableClock(1714558272.0 + 3600).age("2024-05-01T10:11:12Z") == "60m"


def test_events_k8s_io_events_convert_to_core_and_back():
    from pyhpa.cluster.apiserver import resources as R
    from pyhpa.cluster.apiserver.strategies import EventStrategy

    strategy = EventStrategy(R.EVENTS_V1)
    new = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"},
           "regarding": {"kind": "Pod", "name": "p"}, "note": "hello", "reason": "Started",
           "reportingController": "kubelet", "deprecatedSource": {"host": "node-1"}}
    core = strategy.to_storage(dict(new), "v1")
    assert core == {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "reason": "Started",
                    "involvedObject": {"kind": "Pod", "name": "p"}, "message": "hello",
                    "reportingComponent": "kubelet", "source": {"host": "node-1", "component": "kubelet"}}
    back = strategy.from_storage(core, "v1")
    assert back == {**new, "deprecatedSource": {"host": "node-1", "component": "kubelet"}}


def test_rolling_update_defaults_of_deployments_and_statefulsets():
    from pyhpa.cluster.apiserver.workload_defaults import default_workload

    dep = {"spec": {"strategy": {"rollingUpdate": {"maxSurge": 1}}}}
    default_workload("Deployment", dep)
    assert dep["spec"]["strategy"] == {"type": "RollingUpdate",
                                       "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"}}
    recreate = {"spec": {"strategy": {"type": "Recreate"}}}
    default_workload("Deployment", recreate)
    assert recreate["spec"]["strategy"] == {"type": "Recreate"}
    sts = {"spec": {}}
    default_workload("StatefulSet", sts)
    assert sts["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
