"""The OpenAPI documents over HTTPS (v3 index and per-group documents, v2 gnostic protobuf), the
schemas in them, CRD contributions, and the strict field validation that uses the same schemas."""

from __future__ import annotations

import hashlib
import json
import struct

import msgspec
import pytest

from pyhpa.api import types as T
from pyhpa.cluster.apiserver import patch, protobuf
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.embedded import EmbeddedCluster
from pyhpa.cluster.apiserver.openapi import Documents, to_v2
from pyhpa.cluster.apiserver.resources import Registry
from pyhpa.api.schemas import BuiltinSchemas, references
from pyhpa.api.schemas.build import REF_PREFIX
from pyhpa.api.schemas.models import Field, ModelError, Type, from_model
from pyhpa.api.schemas.conform import unknown_fields

V2_HPA = "io.k8s.api.autoscaling.v2."
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
SCHEMAS = BuiltinSchemas.build()  # what one server builds; the tests only read it


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with EmbeddedCluster(tmp_path_factory.mktemp("openapi")) as c:
        yield c


def v3_documents(client) -> dict[str, dict]:
    index = client.get("/openapi/v3").json()["paths"]
    out = {}
    for path, entry in index.items():
        r = client.get(entry["serverRelativeURL"])
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
        digest = hashlib.sha512(r.content).hexdigest()[:128].upper()
        assert entry["serverRelativeURL"] == f"/openapi/v3/{path}?hash={digest}"
        out[path] = r.json()
    return out


def target(schema: dict) -> str:
    """The definition a property points at (directly or through a one-element allOf)."""
    ref = schema.get("$ref") or schema["allOf"][0]["$ref"]
    return ref[len(REF_PREFIX):]


# --------------------------------------------------------------------------- v3 over HTTP


@pytest.mark.slow
def test_v3_index_lists_one_document_per_served_group_version(client):
    docs = v3_documents(client)
    served = {f"api/{v}" if not g else f"apis/{g}/{v}"
              for g, vs in Registry().groups() for v in vs}
    assert set(docs) == served
    assert "apis/metrics.k8s.io/v1beta1" not in docs  # served by a provider, no schemas
    assert client.get("/openapi/v3/apis/nope/v1").status_code == 404


@pytest.mark.slow
def test_every_served_kind_has_a_patch_operation_and_a_complete_schema(client):
    for path, doc in v3_documents(client).items():
        schemas = doc["components"]["schemas"]
        for name, schema in schemas.items():  # self-contained: every reference resolves
            assert references(schema) <= set(schemas), (path, name)
        ops = [item["patch"] for item in doc["paths"].values()]
        gvks = {(o["x-kubernetes-group-version-kind"]["group"],
                 o["x-kubernetes-group-version-kind"]["version"],
                 o["x-kubernetes-group-version-kind"]["kind"]) for o in ops}
        for op in ops:
            assert "fieldValidation" in [p["name"] for p in op["parameters"]]
            kind_schema = schemas[target(op["responses"]["200"]["content"]["application/json"]
                                  ["schema"])]
            assert kind_schema["x-kubernetes-group-version-kind"][0]["kind"] in (
                op["x-kubernetes-group-version-kind"]["kind"])
        group, _, version = path.removeprefix("apis/").removeprefix("api/").rpartition("/")
        for res in Registry().in_group_version(group, version):
            assert (res.group, version, res.kind) in gvks
            name = SCHEMAS.kinds[(res.group, version, res.kind)]
            assert name in schemas and name + "List" in schemas


@pytest.mark.slow
def test_hpa_v2_schema_matches_upstream_shape(client):
    schemas = client.get(v3_index_url(client, "apis/autoscaling/v2")).json()["components"][
        "schemas"]
    hpa = schemas[V2_HPA + "HorizontalPodAutoscaler"]
    assert "required" not in hpa  # apiVersion, kind, spec, status are all optional upstream
    assert hpa["x-kubernetes-group-version-kind"] == [
        {"group": "autoscaling", "kind": "HorizontalPodAutoscaler", "version": "v2"}]
    spec = schemas[V2_HPA + "HorizontalPodAutoscalerSpec"]
    assert spec["required"] == ["scaleTargetRef", "maxReplicas"]
    props = spec["properties"]
    assert props["maxReplicas"]["type"] == "integer" and props["maxReplicas"]["format"] == "int32"
    assert props["maxReplicas"]["minimum"] == 1
    assert props["metrics"]["x-kubernetes-list-type"] == "atomic"
    assert "default" in props["scaleTargetRef"]  # a non-pointer struct
    assert "default" not in props["behavior"]
    status = schemas[V2_HPA + "HorizontalPodAutoscalerStatus"]
    assert status["required"] == ["desiredReplicas"]
    assert status["properties"]["observedGeneration"]["format"] == "int64"
    conditions = status["properties"]["conditions"]
    assert conditions["x-kubernetes-list-type"] == "map"
    assert conditions["x-kubernetes-list-map-keys"] == ["type"]
    assert conditions["x-kubernetes-patch-merge-key"] == "type"
    assert conditions["x-kubernetes-patch-strategy"] == "merge"
    cond = schemas[V2_HPA + "HorizontalPodAutoscalerCondition"]
    assert cond["required"] == ["type", "status"]
    assert target(cond["properties"]["lastTransitionTime"]).endswith("meta.v1.Time")
    assert schemas["io.k8s.apimachinery.pkg.apis.meta.v1.Time"]["format"] == "date-time"
    rules = schemas[V2_HPA + "HPAScalingRules"]["properties"]
    assert rules["stabilizationWindowSeconds"]["maximum"] == 3600
    assert target(rules["tolerance"]) == QUANTITY
    assert schemas[QUANTITY]["oneOf"] == [{"type": "string"}, {"type": "number"}]
    policy = schemas[V2_HPA + "HPAScalingPolicy"]
    assert policy["required"] == ["type", "value", "periodSeconds"]
    assert policy["properties"]["periodSeconds"]["maximum"] == 1800
    for source in ("Object", "Pods", "Resource", "ContainerResource", "External"):
        assert V2_HPA + source + "MetricSource" in schemas
        assert V2_HPA + source + "MetricStatus" in schemas


def v3_index_url(client, path: str) -> str:
    return client.get("/openapi/v3").json()["paths"][path]["serverRelativeURL"]


@pytest.mark.slow
def test_native_kinds_accept_strategic_merge_patches_and_custom_kinds_do_not(client):
    apps = client.get(v3_index_url(client, "apis/apps/v1")).json()
    ours = client.get(v3_index_url(client, "apis/demo.pyhpa.io/v1")).json()
    dep = apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" in dep["requestBody"]["content"]
    scl = ours["paths"]["/apis/demo.pyhpa.io/v1/namespaces/{namespace}/scalables/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" not in scl["requestBody"]["content"]
    assert "application/merge-patch+json" in scl["requestBody"]["content"]
    scale = ours["paths"]["/apis/demo.pyhpa.io/v1/namespaces/{namespace}/scalables/{name}/scale"]
    assert scale["patch"]["x-kubernetes-group-version-kind"]["kind"] == "Scale"
    assert "io.k8s.api.autoscaling.v1.Scale" in ours["components"]["schemas"]


# --------------------------------------------------------------------------- v2 protobuf


def _fields(buf: bytes) -> list[tuple[int, object]]:
    return protobuf.parse_fields(buf)


def _str(v: object) -> str:
    assert isinstance(v, bytes)
    return v.decode()


def decode_schema(buf: bytes) -> dict:
    """Enough of gnostic's Schema message to compare with what we meant to send."""
    out: dict = {}
    names = {1: "$ref", 2: "format", 4: "description", 13: "pattern"}
    for num, val in _fields(buf):
        if num in names:
            out[names[num]] = _str(val)
        elif num in (7, 9):
            key = "maximum" if num == 7 else "minimum"
            out[key] = struct.unpack("<d", val.to_bytes(8, "little"))[0]
        elif num == 19:
            out.setdefault("required", []).append(_str(val))
        elif num == 20:
            out.setdefault("enum", []).append(json.loads(_fields(val)[0][1]))
        elif num == 21:
            (inner_num, inner), = _fields(val)
            out["additionalProperties"] = decode_schema(inner) if inner_num == 1 else bool(inner)
        elif num == 22:
            out["type"] = _str(_fields(val)[0][1])
        elif num == 23:
            out["items"] = decode_schema(_fields(val)[0][1])
        elif num == 25:
            out["properties"] = dict(_named(val, decode_schema))
        elif num == 31:
            name, value = _named_any(val)
            out[name] = value
        else:
            raise AssertionError(f"unexpected Schema field {num}")
    return out


def _named(buf: bytes, decode) -> list[tuple[str, object]]:
    out = []
    for _, entry in _fields(buf):
        parts = dict(_fields(entry))
        out.append((_str(parts[1]), decode(parts.get(2, b""))))
    return out


def _named_any(buf: bytes) -> tuple[str, object]:
    parts = dict(_fields(buf))
    return _str(parts[1]), json.loads(dict(_fields(parts[2]))[2])


def decode_document(buf: bytes) -> dict:
    doc: dict = {"paths": {}, "definitions": {}}
    for num, val in _fields(buf):
        if num == 1:
            doc["swagger"] = _str(val)
        elif num == 8:
            for _, named in _fields(val):
                parts = dict(_fields(named))
                item = dict(_fields(parts[2]))
                doc["paths"][_str(parts[1])] = decode_operation(item[8])
        elif num == 9:
            doc["definitions"] = dict(_named(val, decode_schema))
    return doc


def decode_operation(buf: bytes) -> dict:
    op: dict = {"parameters": []}
    for num, val in _fields(buf):
        if num == 5:
            op["operationId"] = _str(val)
        elif num == 8:  # ParametersItem > Parameter > NonBodyParameter > QueryParameterSubSchema
            query = _fields(_fields(_fields(val)[0][1])[0][1])[0][1]
            op["parameters"].append(_str(dict(_fields(query))[4]))
        elif num == 13:
            name, value = _named_any(val)
            op[name] = value
    return op


@pytest.mark.slow
def test_v2_protobuf_decodes_to_the_definitions_of_every_kind(client):
    r = client.get("/openapi/v2", headers={
        "Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    doc = decode_document(r.content)
    assert doc["swagger"] == "2.0"
    defs = doc["definitions"]
    for name, schema in defs.items():  # every reference resolves, v2-style
        for ref in _refs(schema):
            assert ref.startswith("#/definitions/") and ref[len("#/definitions/"):] in defs
    for (group, version, kind), name in SCHEMAS.kinds.items():
        assert defs[name]["x-kubernetes-group-version-kind"][0]["kind"] == kind
    patch_op = doc["paths"][
        "/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers/{name}"]
    assert "fieldValidation" in patch_op["parameters"]
    assert patch_op["x-kubernetes-group-version-kind"] == {
        "group": "autoscaling", "kind": "HorizontalPodAutoscaler", "version": "v2"}
    spec = defs[V2_HPA + "HorizontalPodAutoscalerSpec"]
    assert spec["required"] == ["scaleTargetRef", "maxReplicas"]
    assert spec["properties"]["scaleTargetRef"]["$ref"] == (
        "#/definitions/" + V2_HPA + "CrossVersionObjectReference")
    assert spec["properties"]["maxReplicas"] == {
        "description": spec["properties"]["maxReplicas"]["description"], "format": "int32",
        "minimum": 1.0, "type": "integer"}
    assert defs[QUANTITY]["type"] == "string"  # v2 readers know no oneOf
    assert defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    containers = defs["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["items"] == {"$ref": "#/definitions/io.k8s.api.core.v1.Container"}


def _refs(schema: object) -> list[str]:
    if isinstance(schema, dict):
        out = [schema["$ref"]] if "$ref" in schema else []
        for v in schema.values():
            out += _refs(v)
        return out
    return []


def test_v2_form_folds_allof_and_drops_v3_only_keywords():
    prop = {"allOf": [{"$ref": REF_PREFIX + "X"}], "default": {}, "description": "d",
            "x-kubernetes-patch-strategy": "retainKeys"}
    assert to_v2(prop) == {"$ref": "#/definitions/X", "description": "d",
                           "x-kubernetes-patch-strategy": "retainKeys"}
    assert to_v2({"oneOf": [{"type": "integer"}, {"type": "string"}], "format": "int-or-string"}
                 ) == {"type": "string", "format": "int-or-string"}
    assert to_v2({"type": "array", "nullable": True}) == {"type": "array", "items": {}}


# --------------------------------------------------------------------------- the model tables


def test_every_hpa_model_field_is_published():
    defs = SCHEMAS.definitions
    for model, prefix in ((T.HorizontalPodAutoscaler, V2_HPA),
                          (T.HorizontalPodAutoscalerV1, "io.k8s.api.autoscaling.v1.")):
        seen = set()
        todo = [model]
        while todo:
            cls = todo.pop()
            if cls in seen or cls in (T.ObjectMeta, T.LabelSelector):
                continue
            seen.add(cls)
            name = prefix + cls.__name__.removesuffix("V1")
            info = msgspec.inspect.type_info(cls)
            assert set(defs[name]["properties"]) == {f.encode_name for f in info.fields}, name
            for prop in defs[name]["properties"].values():
                assert prop["description"], name
            todo += [t for f in info.fields for t in _structs(f.type)]


def _structs(t) -> list[type]:
    mi = msgspec.inspect
    if isinstance(t, mi.StructType):
        return [t.cls]
    if isinstance(t, mi.UnionType):
        return [c for u in t.types for c in _structs(u)]
    if isinstance(t, mi.ListType):
        return _structs(t.item_type)
    return []


def test_model_generation_refuses_undocumented_or_stray_fields():
    with pytest.raises(ModelError, match="no documentation for ScaleSpec.replicas"):
        from_model(T.ScaleSpec, "x.", {"ScaleSpec": Type("d", {})}, shared={})
    with pytest.raises(ModelError, match="not in the model"):
        from_model(T.ScaleSpec, "x.", {"ScaleSpec": Type("d", {"replicas": Field("r"),
                                                               "typo": Field("t")})}, shared={})


def test_every_schema_property_is_described():
    for name, schema in SCHEMAS.definitions.items():
        for prop, sub in (schema.get("properties") or {}).items():
            assert sub.get("description"), f"{name}.{prop}"


def test_fallback_merge_keys_are_among_the_published_ones():
    """The field-name table (for kinds without a schema) guesses what the schemas say."""
    published: dict[str, set[str]] = {}
    for schema in SCHEMAS.definitions.values():
        for prop, sub in (schema.get("properties") or {}).items():
            if "x-kubernetes-patch-merge-key" in sub:
                published.setdefault(prop, set()).add(sub["x-kubernetes-patch-merge-key"])
    for field, key in patch.MERGE_KEYS.items():
        assert key in published.get(field, set()), field
    for field in ("finalizers",):
        assert field in patch.SET_LISTS


def test_strategic_merge_follows_the_kinds_schema():
    defs = SCHEMAS.definitions
    kinds = SCHEMAS.kinds

    def view(group, version, kind):
        return patch.SchemaView(defs[kinds[(group, version, kind)]], defs)

    svc = {"spec": {"ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]}}
    out = patch.strategic_merge_patch(svc, {"spec": {"ports": [{"port": 443, "name": "tls"}]}},
                                      view("", "v1", "Service"))
    assert out["spec"]["ports"] == [{"name": "http", "port": 80}, {"name": "tls", "port": 443}]
    dep = {"spec": {"template": {"spec": {"containers": [
        {"name": "a", "ports": [{"containerPort": 80, "name": "web"}]}]}}}}
    out = patch.strategic_merge_patch(dep, {"spec": {"template": {"spec": {"containers": [
        {"name": "a", "ports": [{"containerPort": 81}]}]}}}}, view("apps", "v1", "Deployment"))
    assert out["spec"]["template"]["spec"]["containers"][0]["ports"] == [
        {"containerPort": 80, "name": "web"}, {"containerPort": 81}]
    # a list without a merge strategy (HPA metrics) is replaced, as upstream does
    hpa = {"spec": {"metrics": [{"type": "Resource"}, {"type": "Pods"}]}}
    out = patch.strategic_merge_patch(hpa, {"spec": {"metrics": [{"type": "External"}]}},
                                      view("autoscaling", "v2", "HorizontalPodAutoscaler"))
    assert out["spec"]["metrics"] == [{"type": "External"}]


# --------------------------------------------------------------------------- contributions


def test_contributed_crd_schema_is_published_and_withdrawn():
    registry = Registry()
    widgets = R.Resource("example.com", ("v1",), "widgets", "Widget")
    registry.add(widgets)
    docs = Documents(registry, "v1.33.1-pyhpa", SCHEMAS)
    open_doc = json.loads(docs.v3("apis/example.com/v1"))
    open_schema = open_doc["components"]["schemas"]["com.example.v1.Widget"]
    assert open_schema["x-kubernetes-preserve-unknown-fields"] is True
    index_before = docs.v3_index()

    docs.contribute("example.com", "v1", "Widget", {
        "type": "object", "description": "A widget.",
        "properties": {"spec": {"type": "object", "properties": {
            "size": {"type": "integer", "minimum": 1, "description": "How big."}}}}})
    assert docs.v3_index() != index_before  # the hash changes, so kubectl refetches
    doc = json.loads(docs.v3("apis/example.com/v1"))
    schema = doc["components"]["schemas"]["com.example.v1.Widget"]
    assert schema["properties"]["spec"]["properties"]["size"]["minimum"] == 1
    assert target(schema["properties"]["metadata"]).endswith("meta.v1.ObjectMeta")
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": "example.com", "kind": "Widget", "version": "v1"}]
    op = doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" not in op["requestBody"]["content"]
    v2 = decode_document(docs.v2())["definitions"]["com.example.v1.Widget"]
    assert v2["properties"]["spec"]["properties"]["size"]["type"] == "integer"

    docs.withdraw("example.com", "v1", "Widget")
    assert docs.v3_index() == index_before


def test_documents_are_built_once_and_rebuilt_after_a_change():
    docs = Documents(Registry(), "v1.33.1-pyhpa", SCHEMAS)
    first = docs.v2()
    assert docs.v2() is first and docs.v3("api/v1") is docs.v3("api/v1")
    docs.invalidate()
    assert docs.v2() is not first and docs.v2() == first


# --------------------------------------------------------------------------- strict validation


def test_unknown_fields_are_found_against_the_schema():
    defs = SCHEMAS.definitions
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a", "bad": 1},
           "spec": {"foo": 1, "template": {"spec": {"containers": [
               {"name": "c", "resources": {"requests": {"cpu": "1"}}, "nope": True}],
               "affinity": {"nodeAffinity": {}}, "volumes": [
                   {"name": "v", "gcePersistentDisk": {"anything": "goes"}}]}}}}
    assert unknown_fields(dep, "io.k8s.api.apps.v1.Deployment", defs) == [
        "metadata.bad", "spec.foo", "spec.template.spec.containers[0].nope"]
    scalable = {"spec": {"selector": {"whatever": {"deep": 1}}, "replicas": 1}}
    assert unknown_fields(scalable, "io.pyhpa.demo.v1.Scalable", defs) == []


@pytest.mark.slow
def test_strict_field_validation_rejects_unknown_fields_of_any_kind(client):
    base = "/apis/apps/v1/namespaces/default/deployments"
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "strict"},
           "spec": {"selector": {"matchLabels": {"app": "s"}}, "foo": 1, "template": {
               "metadata": {"labels": {"app": "s"}},
               "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    r = client.post(base, params={"fieldValidation": "Strict"}, json=dep)
    assert r.status_code == 400
    assert r.json()["message"] == ('Deployment in version "v1" cannot be handled as a '
                                   'Deployment: strict decoding error: unknown field "spec.foo"')
    r = client.post(base, params={"fieldValidation": "Warn"}, json=dep)
    assert r.status_code == 201 and 'unknown field \\"spec.foo\\"' in r.headers["warning"]
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "strict"}, "spec": {
               "scaleTargetRef": {"kind": "Deployment", "name": "strict", "apiVersion": "apps/v1"},
               "maxReplicas": 2, "behavior": {"scaleUp": {"bogus": 1}}}}
    r = client.post("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
                    params={"fieldValidation": "Strict"}, json=hpa)
    assert r.status_code == 400
    assert r.json()["message"].endswith('unknown field "spec.behavior.scaleUp.bogus"')


def test_objects_the_cluster_writes_itself_match_the_schemas(tmp_path):
    """Nodes, pods, workload status and events the simulation writes: no field outside the
    schema, and every required field present (kubectl validates Lists on the client)."""
    from pyhpa.cluster.controllers.simulation import Simulation
    from pyhpa.cluster.apiserver.storage import Store
    from tests.cluster.test_simulation import Clock, deployment, template

    store = Store(tmp_path / "store.sqlite")
    clock = Clock()
    sim = Simulation(store, clock, resolution=5.0, window=15.0)
    sim.ensure_node()
    store.create(R.DEPLOYMENTS.key, deployment("web", 2))
    store.create(R.STATEFUL_SETS.key, {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "db"}},
                 "template": template("db"), "serviceName": "db"}})
    store.create(R.REPLICATION_CONTROLLERS.key, {
        "apiVersion": "v1", "kind": "ReplicationController",
        "metadata": {"name": "rc", "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"app": "rc"}, "template": template("rc")}})
    store.create(R.SCALABLES.key, {
        "apiVersion": "demo.pyhpa.io/v1", "kind": "Scalable",
        "metadata": {"name": "sc", "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "sc"}},
                 "template": template("sc")}})
    for t in (0.0, 5.0, 60.0):
        clock.t = 1_000_000.0 + t
        sim.settle()
    defs = SCHEMAS.definitions
    checked = 0
    for res in R.RESOURCES:
        name = SCHEMAS.kinds.get((res.group, res.storage_version, res.kind))
        if name is None or res.extra.get("storage"):
            continue
        for obj in store.list(res.key, None).items:
            where = (res.kind, obj["metadata"]["name"])
            assert unknown_fields(obj, name, defs) == [], where
            assert missing_required(obj, defs[name], defs) == [], where
            checked += 1
    store.close()
    assert checked >= 10


def missing_required(value, schema: dict, defs: dict, path: str = "") -> list[str]:
    if "allOf" in schema or "$ref" in schema:
        return missing_required(value, defs[target(schema)], defs, path)
    out = []
    if isinstance(value, dict) and "properties" in schema:
        out += [f"{path}.{r}" for r in schema.get("required", ()) if r not in value]
        for k, v in value.items():
            if k in schema["properties"]:
                out += missing_required(v, schema["properties"][k], defs, f"{path}.{k}")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            out += missing_required(v, schema["items"], defs, f"{path}[{i}]")
    return out
