"""CustomResourceDefinitions over real HTTPS: the CRD kind, and the kinds CRDs define."""

from __future__ import annotations

import copy
import json
import threading
import time

import pytest
import yaml

from pyhpa.cluster.apiserver import jsonpath, structural
from pyhpa.cluster.embedded import EmbeddedCluster
from pyhpa.controller.crd import build_crd
from tests import builders
from tests.cluster.conftest import api_client

pytestmark = pytest.mark.slow

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
AGG = {"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}

WIDGET_CRD = yaml.safe_load("""
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, kind: Widget, shortNames: [wd], categories: [all]}
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.size, statusReplicasPath: .status.ready,
              labelSelectorPath: .status.selector}
    selectableFields:
    - {jsonPath: .spec.color}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color, priority: 1}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 0, maximum: 50}
              color: {type: string, enum: [red, blue], default: red}
              tags: {type: array, items: {type: string}, maxItems: 3}
              template: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status:
            type: object
            properties:
              ready: {type: integer}
              selector: {type: string}
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
""")

GADGET_CRD = yaml.safe_load("""
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {plural: gadgets, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
""")


def widget(name: str, version: str = "v1", **spec) -> dict:
    return {"apiVersion": f"example.com/{version}", "kind": "Widget", "metadata": {"name": name},
            "spec": {"size": 1, **spec}}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with EmbeddedCluster(tmp_path_factory.mktemp("crd")) as c:
        with api_client(c) as client:
            for crd in (WIDGET_CRD, GADGET_CRD):
                r = client.post(CRDS, json=crd)
                assert r.status_code == 201, r.text
        yield c


def wait_for(fn, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while True:
        got = fn()
        if got:
            return got
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_crd_is_established_and_its_kinds_are_discovered(client):
    crd = client.get(f"{CRDS}/widgets.example.com").json()
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    assert crd["status"]["acceptedNames"]["listKind"] == "WidgetList"
    assert crd["status"]["storedVersions"] == ["v1"]
    assert crd["spec"]["names"]["singular"] == "widget"
    group = client.get("/apis/example.com").json()
    assert group["preferredVersion"]["version"] == "v1"
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
    legacy = {r["name"]: r for r in client.get("/apis/example.com/v1").json()["resources"]}
    assert legacy["widgets"]["shortNames"] == ["wd"] and legacy["widgets"]["namespaced"]
    assert (legacy["widgets/scale"]["group"], legacy["widgets/scale"]["kind"]) == (
        "autoscaling", "Scale")
    assert "widgets/status" in legacy and legacy["gadgets"]["namespaced"] is False
    beta = {r["name"] for r in client.get("/apis/example.com/v1beta1").json()["resources"]}
    assert beta == {"widgets"}  # no subresources declared in v1beta1
    agg = client.get("/apis", headers=AGG).json()
    mine = next(i for i in agg["items"] if i["metadata"]["name"] == "example.com")
    v1 = next(v for v in mine["versions"] if v["version"] == "v1")
    assert {r["resource"] for r in v1["resources"]} == {"widgets", "gadgets"}
    assert "apiextensions.k8s.io" in {g["name"] for g in client.get("/apis").json()["groups"]}
    table = client.get(CRDS, headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Created At"]


def test_defaults_pruning_strict_fields_and_schema_validation(client):
    r = client.post(WIDGETS, json={**widget("w-def"), "extra": 1,
                                   "spec": {"size": 2, "junk": {"a": 1},
                                            "template": {"anything": [1]}}})
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["spec"] == {"size": 2, "color": "red", "template": {"anything": [1]}}
    assert "extra" not in body
    # in the order the body carries them (the request's spec comes before "extra")
    assert r.headers["Warning"] == '299 - "unknown field \\"spec.junk\\"", 299 - "unknown field \\"extra\\""'
    strict = client.post(WIDGETS + "?fieldValidation=Strict",
                         json={**widget("w-strict"), "spec": {"size": 1, "junk": 1}})
    assert strict.status_code == 400 and 'unknown field "spec.junk"' in strict.json()["message"]
    bad = client.post(WIDGETS, json=widget("w-bad", size="many", color="green",
                                           tags=["a", "b", "c", "d"]))
    assert bad.status_code == 422
    causes = {c["field"]: c for c in bad.json()["details"]["causes"]}
    assert causes["spec.size"]["message"] == (
        'Invalid value: "string": spec.size in body must be of type integer: "string"')
    assert causes["spec.color"]["reason"] == "FieldValueNotSupported"
    assert "spec.tags" in causes
    missing = client.post(WIDGETS, json={**widget("w-missing"), "spec": {}})
    assert missing.status_code == 422
    assert missing.json()["details"]["causes"][0] == {
        "reason": "FieldValueRequired", "message": "Required value", "field": "spec.size"}
    # null in a non-nullable field with a default gets the default
    nulled = client.post(WIDGETS, json=widget("w-null", color=None)).json()
    assert nulled["spec"]["color"] == "red"


def test_status_and_scale_subresources(client):
    created = client.post(WIDGETS, json=widget("w-sub", size=2)).json()
    # the main resource ignores status; the status subresource ignores everything else
    created["status"] = {"ready": 5}
    upd = client.put(f"{WIDGETS}/w-sub", json=created).json()
    assert "status" not in upd
    upd["status"] = {"ready": 2, "selector": "app=w"}
    upd["spec"]["size"] = 9
    st = client.put(f"{WIDGETS}/w-sub/status", json=upd).json()
    assert st["status"] == {"ready": 2, "selector": "app=w"} and st["spec"]["size"] == 2
    scale = client.get(f"{WIDGETS}/w-sub/scale").json()
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"] == {"replicas": 2, "selector": "app=w"}
    r = client.patch(f"{WIDGETS}/w-sub/scale", content=b'{"spec":{"replicas":4}}',
                     headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200 and r.json()["spec"]["replicas"] == 4
    assert client.get(f"{WIDGETS}/w-sub").json()["spec"]["size"] == 4


def test_list_selectors_watch_and_table(cluster, client):
    client.post(WIDGETS, json={**widget("w-blue", color="blue"),
                               "metadata": {"name": "w-blue", "labels": {"tier": "x"}}})
    names = lambda r: [i["metadata"]["name"] for i in r.json()["items"]]  # noqa: E731
    assert names(client.get(WIDGETS, params={"labelSelector": "tier=x"})) == ["w-blue"]
    assert names(client.get(WIDGETS, params={"fieldSelector": "spec.color=blue"})) == ["w-blue"]
    assert names(client.get("/apis/example.com/v1/widgets",
                            params={"fieldSelector": "metadata.name=w-blue"})) == ["w-blue"]
    unsupported = client.get(WIDGETS, params={"fieldSelector": "spec.size=1"})
    assert unsupported.status_code == 400
    assert unsupported.json()["message"] == "field label not supported: spec.size"

    rv = client.get(WIDGETS).json()["metadata"]["resourceVersion"]
    seen: list[tuple[str, str]] = []

    def watch() -> None:
        with api_client(cluster) as c, c.stream(
                "GET", f"{WIDGETS}?watch=true&resourceVersion={rv}&labelSelector=tier%3Dy") as resp:
            for line in resp.iter_lines():
                if line:
                    ev = json.loads(line)
                    seen.append((ev["type"], ev["object"]["metadata"]["name"]))
                if len(seen) == 3:
                    return
    t = threading.Thread(target=watch, daemon=True)
    t.start()
    time.sleep(0.3)
    client.post(WIDGETS, json={**widget("w-watch"), "metadata": {"name": "w-watch",
                                                               "labels": {"tier": "y"}}})
    client.post(WIDGETS, json=widget("w-other"))
    client.patch(f"{WIDGETS}/w-watch", content=b'{"spec":{"size":3}}',
                 headers={"Content-Type": "application/merge-patch+json"})
    client.delete(f"{WIDGETS}/w-watch")
    t.join(10)
    assert seen == [("ADDED", "w-watch"), ("MODIFIED", "w-watch"), ("DELETED", "w-watch")]

    w = client.post(WIDGETS, json=widget("w-table", size=7)).json()
    w["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    client.put(f"{WIDGETS}/w-table/status", json=w)
    doc = client.get(f"{WIDGETS}/w-table", headers=TABLE).json()
    cols = [(c["name"], c["type"], c["priority"]) for c in doc["columnDefinitions"]]
    assert cols == [("Name", "string", 0), ("Size", "integer", 0), ("Color", "string", 1),
                    ("Ready", "string", 0), ("Age", "date", 0)]
    cells = doc["rows"][0]["cells"]
    assert cells[:4] == ["w-table", 7, "red", "True"] and cells[4].endswith("s")
    plain = client.get(f"{WIDGETS}/w-blue", headers=TABLE).json()["rows"][0]["cells"]
    assert plain[3] is None  # no Ready condition: kubectl prints <none>


def test_versions_cluster_scope_and_openapi(client):
    r = client.post("/apis/example.com/v1beta1/namespaces/default/widgets",
                    json={**widget("w-beta", version="v1beta1"), "spec": {"size": 3, "x": 1}})
    assert r.status_code == 201 and r.json()["apiVersion"] == "example.com/v1beta1"
    assert r.json()["spec"]["x"] == 1  # v1beta1 preserves unknown fields
    assert client.get(f"{WIDGETS}/w-beta").json()["apiVersion"] == "example.com/v1"
    gadgets = "/apis/example.com/v1/gadgets"
    g = client.post(gadgets, json={"apiVersion": "example.com/v1", "kind": "Gadget",
                                   "metadata": {"name": "g1"}, "spec": {"any": "thing"}})
    assert g.status_code == 201 and "namespace" not in g.json()["metadata"]
    assert client.get("/apis/example.com/v1/namespaces/default/gadgets/g1").status_code == 404
    index = client.get("/openapi/v3").json()["paths"]
    doc = client.get(index["apis/example.com/v1"]["serverRelativeURL"]).json()
    item = "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"
    assert doc["paths"][item]["patch"]["x-kubernetes-group-version-kind"]["kind"] == "Widget"
    widget_schema = next(s for s in doc["components"]["schemas"].values()
                         if s.get("x-kubernetes-group-version-kind", [{}])[0].get("kind")
                         == "Widget")
    assert widget_schema["properties"]["spec"]["properties"]["size"]["type"] == "integer"
    assert b"/apis/example.com/v1/gadgets/{name}" in client.get("/openapi/v2").content


def test_invalid_crds_are_rejected(client):
    def bad(mutate) -> dict:
        crd = copy.deepcopy(WIDGET_CRD)
        crd["metadata"]["name"] = "things.example.org"
        crd["spec"]["group"] = "example.org"
        crd["spec"]["names"] = {"plural": "things", "kind": "Thing"}
        mutate(crd)
        r = client.post(CRDS, json=crd)
        assert r.status_code == 422, r.text
        return {c["field"] for c in r.json()["details"]["causes"]}

    assert "metadata.name" in bad(lambda c: c["metadata"].update(name="x.example.org"))
    assert "spec.versions[1].schema.openAPIV3Schema" in bad(
        lambda c: c["spec"]["versions"][1].pop("schema"))
    assert "spec.versions" in bad(lambda c: c["spec"]["versions"][0].update(storage=True))
    assert "spec.versions[1].subresources.scale.specReplicasPath" in bad(
        lambda c: c["spec"]["versions"][1]["subresources"]["scale"].update(
            specReplicasPath="size"))
    assert "spec.scope" in bad(lambda c: c["spec"].update(scope="Global"))

    def builtin(c):
        c["metadata"]["name"] = "scalables.demo.pyhpa.io"
        c["spec"]["group"] = "demo.pyhpa.io"
        c["spec"]["names"] = {"plural": "scalables", "kind": "Scalable"}
    assert "spec.names.plural" in bad(builtin)

    def protected(c):
        c["metadata"]["name"] = "things.metrics.k8s.io"
        c["spec"]["group"] = "metrics.k8s.io"
    assert "metadata.annotations[api-approved.kubernetes.io]" in bad(protected)


def test_custom_scalable_with_a_pod_template_gets_simulated_pods(client):
    client.post(WIDGETS, json=widget("w-pods", size=2, template={
        "metadata": {"labels": {"app": "w-pods"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}))
    pods = lambda: client.get("/api/v1/namespaces/default/pods",  # noqa: E731
                              params={"labelSelector": "app=w-pods"}).json()["items"]
    wait_for(lambda: len(pods()) == 2)
    assert pods()[0]["metadata"]["ownerReferences"][0]["kind"] == "Widget"
    # the status first shows the pods not yet Ready; wait until both are
    status = wait_for(lambda: (s := client.get(f"{WIDGETS}/w-pods").json().get("status"))
                      and s.get("ready") == 2 and s)
    assert status == {"ready": 2, "selector": "app=w-pods"}
    client.patch(f"{WIDGETS}/w-pods/scale", content=b'{"spec":{"replicas":1}}',
                 headers={"Content-Type": "application/merge-patch+json"})
    wait_for(lambda: sum(1 for p in pods() if not p["metadata"].get("deletionTimestamp")) == 1)


def test_crds_survive_a_restart_and_deleting_one_deletes_its_objects(tmp_path):
    with EmbeddedCluster(tmp_path) as c, api_client(c) as client:
        assert client.post(CRDS, json=WIDGET_CRD).status_code == 201
        assert client.post(WIDGETS, json=widget("keep")).status_code == 201
    with EmbeddedCluster(tmp_path) as c, api_client(c) as client:
        assert client.get(f"{WIDGETS}/keep").json()["spec"] == {"size": 1, "color": "red"}
        # an update of the CRD (a new printer column) is served at once
        crd = client.get(f"{CRDS}/widgets.example.com").json()
        crd["spec"]["versions"][1]["additionalPrinterColumns"].append(
            {"name": "Tags", "type": "string", "jsonPath": ".spec.tags"})
        assert client.put(f"{CRDS}/widgets.example.com", json=crd).status_code == 200
        cols = client.get(WIDGETS, headers=TABLE).json()["columnDefinitions"]
        assert cols[-1]["name"] == "Tags"
        assert client.delete(f"{CRDS}/widgets.example.com").status_code == 200
        assert client.get(WIDGETS).status_code == 404
        assert client.post(CRDS, json=WIDGET_CRD).status_code == 201
        assert client.get(WIDGETS).json()["items"] == []


def test_the_pyhpa_io_crd_serves_its_hpa_kind(client):
    assert client.post(CRDS, json=build_crd()).status_code == 201
    base = "/apis/pyhpa.io/v1/namespaces/default/horizontalpodautoscalers"
    hpa = {"apiVersion": "pyhpa.io/v1", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "side"},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": "web"}, "minReplicas": 1, "maxReplicas": 4}}
    r = client.post(base, json=hpa)
    assert r.status_code == 201, r.text
    missing = client.post(base, json={**hpa, "metadata": {"name": "x"}, "spec": {"minReplicas": 1}})
    assert missing.status_code == 422
    assert {"spec.scaleTargetRef", "spec.maxReplicas"} <= {
        c["field"] for c in missing.json()["details"]["causes"]}
    # the built-in autoscaling HPAs are untouched, and ExternalMetric (pyhpa.io/v1alpha1) stays
    assert client.get("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
                      ).status_code == 200
    assert client.get("/apis/pyhpa.io/v1alpha1/namespaces/default/externalmetrics"
                      ).status_code == 200
    assert client.get("/apis/pyhpa.io").json()["preferredVersion"]["version"] == "v1"


def test_jsonpath_and_schema_units():
    steps = jsonpath.parse('.status.conditions[?(@.type=="Ready")].status')
    obj = {"status": {"conditions": [{"type": "A", "status": "x"},
                                     {"type": "Ready", "status": "True"}]}}
    assert jsonpath.first(steps, obj) == "True"
    assert jsonpath.first(jsonpath.parse(".metadata.labels['app.kubernetes.io/name']"),
                          {"metadata": {"labels": {"app.kubernetes.io/name": "n"}}}) == "n"
    assert jsonpath.evaluate(jsonpath.parse(".items[*].a"), {"items": [{"a": 1}, {"a": 2}]}) == [1, 2]
    with pytest.raises(jsonpath.JSONPathError):
        jsonpath.parse("spec.x")
    s = {"type": "object", "properties": {"q": {"anyOf": [{"type": "integer"}, {"type": "string"}],
                                                "x-kubernetes-int-or-string": True,
                                                "pattern": "^[0-9]+m?$"}}}
    assert structural.validate({"q": 5}, s) == [] and structural.validate({"q": "50m"}, s) == []
    assert [c["field"] for c in structural.validate({"q": "lots"}, s)] == ["q"]
    assert [c["field"] for c in structural.validate({"q": 1.5}, s)] == ["q"]
    doc = {"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "n"}, "q": 1, "z": {"y": 1}}
    assert structural.prune(doc, s) == ["z"] and doc == {"apiVersion": "a/v1", "kind": "K",
                                                     "metadata": {"name": "n"}, "q": 1}


async def test_side_by_side_controller_autoscales_a_custom_scalable(tmp_path):
    """`pyhpa run --hpa-api-group pyhpa.io` against the embedded cluster: a pyhpa.io/v1 HPA
    scales a CRD-defined kind through its /scale subresource, on an ExternalMetric."""
    import asyncio

    from pyhpa.adapters.kube.client import KubeClient, load_config
    from pyhpa.cluster.embedded import EmbeddedCluster
    from pyhpa.live.loop import ControllerOptions, HPAController
    from pyhpa.engine.config import ControllerConfig

    async with EmbeddedCluster(tmp_path / "cluster", port=0) as cluster:
        cluster.simulation.resolution, cluster.simulation.window = 1.0, 2.0
        client = KubeClient.from_config(load_config(str(cluster.kubeconfig_path)), qps=0)
        ctl = None
        try:
            for crd in (build_crd(), WIDGET_CRD):
                await client.request("POST", CRDS, body=json.dumps(crd).encode())
            await client.request("POST", WIDGETS, body=json.dumps(widget("target", size=1, template={
                "metadata": {"labels": {"app": "target"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}})).encode())
            await client.request("POST", "/apis/pyhpa.io/v1alpha1/namespaces/default/externalmetrics",
                                 body=json.dumps({
                                     "apiVersion": "pyhpa.io/v1alpha1", "kind": "ExternalMetric",
                                     "metadata": {"name": "queue"},
                                     "spec": {"name": "queue_depth", "value": "30"}}).encode())
            hpas = "/apis/pyhpa.io/v1/namespaces/default/horizontalpodautoscalers"
            await client.request("POST", hpas, body=json.dumps(builders.hpa(
                "side", "target", api_version="pyhpa.io/v1", namespace=None, max_replicas=5,
                target_kind="Widget", target_api_version="example.com/v1",
                metrics=[builders.external_metric("queue_depth", average_value="10")])).encode())
            ctl = HPAController(
                KubeClient.from_config(load_config(str(cluster.kubeconfig_path)), qps=0),
                ControllerConfig(sync_period=0.3),
                ControllerOptions(sync_period=0.3, workers=1, hpa_group_version="pyhpa.io/v1"))
            await ctl.start()
            deadline = time.monotonic() + 45
            while True:
                w = json.loads(await client.request("GET", f"{WIDGETS}/target"))
                h = json.loads(await client.request("GET", f"{hpas}/side"))
                if w["spec"]["size"] == 3 and (h.get("status") or {}).get("desiredReplicas") == 3:
                    break
                assert time.monotonic() < deadline, (w, h.get("status"))
                await asyncio.sleep(0.3)
            # the built-in autoscaling/v2 HPAs are not this controller's
            builtin = json.loads(await client.request(
                "GET", "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"))
            assert builtin["items"] == []
        finally:
            if ctl is not None:
                await ctl.stop()
                await ctl.client.close()
            await client.close()


def test_unknown_fields_reports_without_touching_the_object():
    from pyhpa.cluster.apiserver.structural import prune, unknown_fields

    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "object", "properties": {
            "k": {"type": "string"}}}}}}}}
    obj = {"apiVersion": "x/v1", "kind": "W", "metadata": {"name": "w"}, "junk": 1,
           "spec": {"size": None, "tags": [{"k": "a", "v": 1}], "more": {"deep": True}}}
    before = json.loads(json.dumps(obj))
    assert unknown_fields(obj, schema) == ["junk", "spec.tags[0].v", "spec.more"]
    assert obj == before  # reported only
    assert prune(obj, schema) == ["junk", "spec.tags[0].v", "spec.more"]
    assert obj == {"apiVersion": "x/v1", "kind": "W", "metadata": {"name": "w"}, "spec": {"tags": [{"k": "a"}]}}
