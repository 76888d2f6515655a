"""The API server over real HTTPS (an EmbeddedCluster): auth, Status errors, subresources, watch."""

from __future__ import annotations

import json
import ssl
import threading
import time

import httpx
import pytest

from tests.cluster.protobuf_bodies import encode_message, encode_unknown
from pyhpa.cluster.embedded import EmbeddedCluster
from tests import builders
from tests.cluster.conftest import api_client

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with EmbeddedCluster(tmp_path_factory.mktemp("api")) as c:
        yield c


def hpa(name: str, **spec) -> dict:
    """An HPA over `web` with only the fields ``spec`` adds to maxReplicas 5."""
    return builders.hpa(name, "web", min_replicas=None, max_replicas=5, namespace=None, **spec)


HPAS = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"


def test_token_required_except_health(cluster):
    with httpx.Client(base_url=cluster.url, verify=ssl.create_default_context(cafile=str(cluster.ca_path))) as c:
        r = c.get("/api/v1/namespaces")
        assert r.status_code == 401 and r.json()["kind"] == "Status"
        assert r.json()["reason"] == "Unauthorized"
        assert c.get("/healthz").text == "ok"
        bad = c.get("/version", headers={"Authorization": "Bearer nope"})
        assert bad.status_code == 401


def test_kubeconfig_carries_ca_and_token(cluster):
    import base64
    import yaml
    doc = yaml.safe_load(cluster.kubeconfig_path.read_text())
    cl = doc["clusters"][0]["cluster"]
    assert cl["server"] == cluster.url
    assert base64.b64decode(cl["certificate-authority-data"]) == cluster.ca_path.read_bytes()
    assert doc["users"][0]["user"]["token"] == cluster.token


def test_aggregated_discovery_content_type_follows_accept(client):
    v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    v2b1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
    r = client.get("/apis", headers={"Accept": f"{v2b1},application/json"})
    assert r.headers["content-type"] == v2b1
    groups = {i["metadata"]["name"]: i for i in r.json()["items"]}
    assert [v["version"] for v in groups["autoscaling"]["versions"]] == ["v2", "v1"]
    hpa_res = groups["autoscaling"]["versions"][0]["resources"][0]
    assert hpa_res["shortNames"] == ["hpa"] and hpa_res["categories"] == ["all"]
    assert client.get("/apis", headers={"Accept": f"{v2},{v2b1},application/json"}
                      ).headers["content-type"] == v2
    legacy = client.get("/apis", headers={"Accept": "application/json"}).json()
    assert legacy["kind"] == "APIGroupList"
    deploy = client.get("/apis/apps/v1").json()["resources"]
    scale = [r for r in deploy if r["name"] == "deployments/scale"][0]
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")


def test_status_errors(client):
    r = client.get(f"{HPAS}/missing")
    assert r.status_code == 404
    assert r.json()["message"] == 'horizontalpodautoscalers.autoscaling "missing" not found'
    assert r.json()["details"] == {"name": "missing", "group": "autoscaling",
                                   "kind": "horizontalpodautoscalers"}
    assert client.get("/apis/nope/v1/things").json()["reason"] == "NotFound"
    assert client.post(HPAS, json=hpa("dup")).status_code == 201
    again = client.post(HPAS, json=hpa("dup"))
    assert again.status_code == 409 and again.json()["reason"] == "AlreadyExists"
    bad = client.post(HPAS, json=hpa("bad", maxReplicas=0, minReplicas=0))
    body = bad.json()
    assert bad.status_code == 422 and body["reason"] == "Invalid"
    assert body["details"]["kind"] == "HorizontalPodAutoscaler"
    assert any(c["field"] == "spec.maxReplicas" for c in body["details"]["causes"])
    strict = client.post(HPAS + "?fieldValidation=Strict", json={**hpa("s"), "spec": {
        **hpa("s")["spec"], "foo": 1}})
    assert strict.status_code == 400 and 'unknown field "spec.foo"' in strict.json()["message"]
    warn = client.post(HPAS + "?fieldValidation=Warn", json={**hpa("w"), "spec": {
        **hpa("w")["spec"], "foo": 1}})
    assert warn.status_code == 201 and "spec.foo" in warn.headers["warning"]


def test_optimistic_concurrency_and_noop(client):
    created = client.post(HPAS, json=hpa("occ")).json()
    rv = created["metadata"]["resourceVersion"]
    ok = client.put(f"{HPAS}/occ", json={**created, "spec": {**created["spec"], "maxReplicas": 6}})
    assert ok.status_code == 200 and int(ok.json()["metadata"]["resourceVersion"]) > int(rv)
    stale = client.put(f"{HPAS}/occ", json=created)
    assert stale.status_code == 409 and stale.json()["reason"] == "Conflict"
    cur = client.get(f"{HPAS}/occ").json()
    noop = client.patch(f"{HPAS}/occ", content=b'{"spec":{"maxReplicas":6}}',
                        headers={"Content-Type": "application/merge-patch+json"}).json()
    assert noop["metadata"]["resourceVersion"] == cur["metadata"]["resourceVersion"]


def test_v1_view_of_v2_object(client):
    client.post(HPAS, json=hpa("conv", metrics=[{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]))
    v1 = client.get("/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/conv").json()
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 60


def test_protobuf_autoscale_body(client):
    body = encode_unknown("autoscaling/v2", "HorizontalPodAutoscaler",
                                   encode_message("HPAv2", {
                                       "metadata": {"name": "pb"},
                                       "spec": {"scaleTargetRef": {"kind": "Deployment",
                                                                   "name": "web",
                                                                   "apiVersion": "apps/v1"},
                                                "maxReplicas": 4}}))
    r = client.post(HPAS, content=body,
                    headers={"Content-Type": "application/vnd.kubernetes.protobuf"})
    assert r.status_code == 201, r.text
    spec = r.json()["spec"]
    assert spec["minReplicas"] == 1 and spec["metrics"][0]["resource"]["target"][
        "averageUtilization"] == 80


def test_protobuf_delete_options(client):
    """`kubectl drain` deletes pods with a protobuf DeleteOptions body."""
    pods = "/api/v1/namespaces/default/pods"
    assert client.post(pods, json=_pod("pb-del")).status_code == 201

    def delete(**opts):
        body = encode_unknown("v1", "DeleteOptions",
                                       encode_message("DeleteOptions", opts))
        return client.request("DELETE", f"{pods}/pb-del", content=body,
                              headers={"Content-Type": "application/vnd.kubernetes.protobuf"})
    r = delete(dryRun=["All"], preconditions={"uid": "other"})
    assert r.status_code == 409 and "Precondition failed: UID in precondition: other" in r.text
    assert delete(dryRun=["All"]).status_code == 200
    assert client.get(f"{pods}/pb-del").status_code == 200  # a dry run: still there
    assert delete(gracePeriodSeconds=0).status_code == 200
    assert client.get(f"{pods}/pb-del").status_code == 404


def test_scale_subresource_on_custom_kind(client):
    base = "/apis/demo.pyhpa.io/v1/namespaces/default/scalables"
    client.post(base, json={"apiVersion": "demo.pyhpa.io/v1", "kind": "Scalable",
                            "metadata": {"name": "q"}, "spec": {"replicas": 2}})
    client.put(f"{base}/q/status", json={"apiVersion": "demo.pyhpa.io/v1", "kind": "Scalable",
                                         "metadata": {"name": "q"}, "spec": {"replicas": 2},
                                         "status": {"replicas": 2, "selector": "app=q"}})
    scale = client.get(f"{base}/q/scale").json()
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 2
    assert scale["status"] == {"replicas": 2, "selector": "app=q"}
    # kubectl scale --current-replicas sends PUT .../scale without a Content-Type header
    scale["spec"]["replicas"] = 5
    r = client.put(f"{base}/q/scale", content=json.dumps(scale).encode())
    assert r.status_code == 200 and r.json()["spec"]["replicas"] == 5
    assert client.get(f"{base}/q").json()["spec"]["replicas"] == 5
    stale = client.put(f"{base}/q/scale", content=json.dumps(scale).encode())
    assert stale.status_code == 409


def test_server_side_apply_creates_then_merges(client):
    url = f"{HPAS}/ssa?fieldManager=me"
    hdr = {"Content-Type": "application/apply-patch+yaml"}
    first = client.patch(url, content=json.dumps(hpa("ssa", minReplicas=2)).encode(), headers=hdr)
    assert first.status_code == 201
    second = client.patch(url, content=json.dumps(hpa("ssa")).encode(), headers=hdr)
    assert second.status_code == 200
    # minReplicas was dropped from the applied config: it goes back to the default (1)
    assert second.json()["spec"]["minReplicas"] == 1
    client.patch(f"{HPAS}/ssa?fieldManager=other", content=b'{"spec":{"maxReplicas":9}}',
                 headers={"Content-Type": "application/merge-patch+json"})
    conflict = client.patch(url, content=json.dumps(hpa("ssa")).encode(), headers=hdr)
    assert conflict.status_code == 409
    assert conflict.json()["details"]["causes"][0]["field"] == ".spec.maxReplicas"
    forced = client.patch(url + "&force=true", content=json.dumps(hpa("ssa")).encode(),
                          headers=hdr)
    assert forced.status_code == 200 and forced.json()["spec"]["maxReplicas"] == 5


def test_table_for_hpa(client):
    client.post(HPAS, json=hpa("tbl", minReplicas=2))
    r = client.get(f"{HPAS}/tbl", headers={
        "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
    doc = r.json()
    assert doc["kind"] == "Table"
    assert [c["name"] for c in doc["columnDefinitions"]] == [
        "Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"]
    assert doc["columnDefinitions"][0]["format"] == "name"
    cells = doc["rows"][0]["cells"]
    assert cells[:6] == ["tbl", "Deployment/web", "cpu: <unknown>/80%", "2", 5, 0]
    assert doc["rows"][0]["object"]["metadata"]["namespace"] == "default"


def test_dry_run_persists_nothing(client):
    r = client.post(HPAS + "?dryRun=All", json=hpa("dry"))
    assert r.status_code == 201
    assert client.get(f"{HPAS}/dry").status_code == 404


def test_watch_streams_changes_in_order_with_low_latency(cluster, client):
    lst = client.get(HPAS).json()
    rv = lst["metadata"]["resourceVersion"]
    events: list[tuple[str, str, float]] = []
    started = threading.Event()

    def watch() -> None:
        with api_client(cluster) as c:
            with c.stream("GET", f"{HPAS}?watch=true&resourceVersion={rv}") as resp:
                started.set()
                for line in resp.iter_lines():
                    if line:
                        ev = json.loads(line)
                        events.append((ev["type"], ev["object"]["metadata"]["name"],
                                       time.perf_counter()))
                    if len(events) == 21:
                        return

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    started.wait(5)
    sent = []
    for i in range(10):
        sent.append(time.perf_counter())
        client.post(HPAS, json=hpa(f"wt{i}"))
        sent.append(time.perf_counter())
        client.delete(f"{HPAS}/wt{i}")
    sent.append(time.perf_counter())
    client.post(HPAS, json=hpa("wt-last"))
    t.join(10)
    assert [(e[0], e[1]) for e in events] == [
        x for i in range(10) for x in (("ADDED", f"wt{i}"), ("DELETED", f"wt{i}"))
    ] + [("ADDED", "wt-last")]


def test_watch_delivers_every_event_in_order_under_concurrent_writers(cluster, client):
    """Writers on several connections at once: the watch sees each commit once, in
    resourceVersion order, each object's ADDED before its MODIFIED."""
    leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    rv = client.get(leases).json()["metadata"]["resourceVersion"]
    writers, per_writer = 4, 15
    expected = writers * per_writer * 2
    events: list[tuple[str, str, int]] = []
    started = threading.Event()

    def watch() -> None:
        with api_client(cluster, timeout=20) as c:
            with c.stream("GET", f"{leases}?watch=true&resourceVersion={rv}") as resp:
                started.set()
                for line in resp.iter_lines():
                    if line:
                        ev = json.loads(line)
                        meta = ev["object"]["metadata"]
                        events.append((ev["type"], meta["name"], int(meta["resourceVersion"])))
                    if len(events) >= expected:
                        return

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    assert started.wait(5)
    errors: list[BaseException] = []

    def write(w: int) -> None:
        try:
            with api_client(cluster, timeout=20) as c:
                for i in range(per_writer):
                    name = f"cw{w}-{i}"
                    r = c.post(leases, json={"apiVersion": "coordination.k8s.io/v1",
                                             "kind": "Lease", "metadata": {"name": name},
                                             "spec": {"holderIdentity": "a"}})
                    assert r.status_code == 201, r.text
                    r = c.patch(f"{leases}/{name}", json={"spec": {"holderIdentity": "b"}},
                                headers={"Content-Type": "application/merge-patch+json"})
                    assert r.status_code == 200, r.text
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread
            errors.append(exc)

    ws = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for w in ws:
        w.start()
    for w in ws:
        w.join(30)
    t.join(20)
    assert not errors, errors
    assert len(events) == expected
    rvs = [e[2] for e in events]
    assert rvs == sorted(rvs) and len(set(rvs)) == len(rvs)
    names = {f"cw{w}-{i}" for w in range(writers) for i in range(per_writer)}
    for name in names:
        assert [e[0] for e in events if e[1] == name] == ["ADDED", "MODIFIED"]


TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}


def test_events_k8s_io_table_shows_object_and_note(client):
    client.post("/api/v1/namespaces/default/events", json={
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "ev-tbl"},
        "involvedObject": {"kind": "Deployment", "name": "web", "namespace": "default"},
        "reason": "Tested", "message": "hello there", "type": "Normal", "count": 3})
    for base in ("/api/v1", "/apis/events.k8s.io/v1"):
        doc = client.get(f"{base}/namespaces/default/events/ev-tbl", headers=TABLE).json()
        names = [c["name"] for c in doc["columnDefinitions"]]
        cells = dict(zip(names, doc["rows"][0]["cells"]))
        assert (cells["Object"], cells["Message"], cells["Count"]) == (
            "deployment/web", "hello there", 3), base


def test_field_selectors_accept_only_the_kinds_field_labels(client):
    bad = client.get("/api/v1/namespaces/default/pods", params={"fieldSelector": "foo=bar"})
    assert bad.status_code == 400 and bad.json()["reason"] == "BadRequest"
    assert bad.json()["message"] == "field label not supported: foo"
    watch = client.get("/apis/apps/v1/deployments",
                       params={"fieldSelector": "status.phase=Running", "watch": "true"})
    assert watch.status_code == 400 and "not supported: status.phase" in watch.json()["message"]
    for path, sel in (("/api/v1/pods", "status.phase=Running,spec.nodeName=n"),
                      ("/api/v1/namespaces", "metadata.name=default,status.phase=Active"),
                      ("/apis/apps/v1/deployments", "metadata.namespace=default"),
                      ("/api/v1/events", "involvedObject.kind=Pod,reason=x,type=Normal")):
        assert client.get(path, params={"fieldSelector": sel}).status_code == 200, (path, sel)
    client.post("/api/v1/namespaces/default/events", json={
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "ev-fs"}, "reason": "R",
        "involvedObject": {"kind": "Pod", "name": "p-fs"}, "reportingComponent": "me"})
    got = client.get("/apis/events.k8s.io/v1/namespaces/default/events", params={
        "fieldSelector": "regarding.name=p-fs,reportingController=me"}).json()["items"]
    assert [e["metadata"]["name"] for e in got] == ["ev-fs"]
    ns_scoped = client.get("/api/v1/nodes", params={"fieldSelector": "metadata.namespace=x"})
    assert ns_scoped.status_code == 400


def test_services_get_defaults_and_an_allocated_cluster_ip(client):
    base = "/api/v1/namespaces/default/services"
    kube = client.get(f"{base}/kubernetes").json()
    assert kube["spec"]["clusterIP"] == "10.96.0.1" and kube["spec"]["ports"][0]["port"] == 443
    r = client.post(base, json={"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s1"},
                                "spec": {"selector": {"app": "x"}, "type": "NodePort",
                                         "ports": [{"port": 80}]}})
    assert r.status_code == 201, r.text
    spec = r.json()["spec"]
    assert spec["ports"][0] == {"port": 80, "protocol": "TCP", "targetPort": 80,
                                "nodePort": spec["ports"][0]["nodePort"]}
    assert 30000 <= spec["ports"][0]["nodePort"] <= 32767
    assert spec["clusterIP"].startswith("10.") and spec["clusterIP"] != "10.96.0.1"
    # the cluster IP survives an update that leaves it out
    del spec["clusterIP"], spec["clusterIPs"]
    upd = client.put(f"{base}/s1", json={**r.json(), "spec": spec}).json()
    assert upd["spec"]["clusterIP"] == r.json()["spec"]["clusterIP"]
    bad = client.post(base, json={"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s2"},
                                  "spec": {"ports": [{"port": 0}]}})
    assert bad.status_code == 422 and "spec.ports[0].port" in bad.json()["message"]
    table = client.get(base, headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]][:5] == [
        "Name", "Type", "Cluster-IP", "External-IP", "Port(s)"]
    row = next(r["cells"] for r in table["rows"] if r["cells"][0] == "s1")
    assert row[1] == "NodePort" and row[4].startswith("80:") and row[4].endswith("/TCP")
    grants = client.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json={
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "delete", "resource": "pods"}}})
    assert grants.status_code == 201 and grants.json()["status"]["allowed"] is True
    me = client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json={}).json()
    assert me["status"]["userInfo"]["groups"] == ["system:masters", "system:authenticated"]


def _pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def test_pod_delete_honours_the_grace_period(client):
    base = "/api/v1/namespaces/default/pods"
    for name in ("g0", "g1", "g30"):
        pod = _pod(name)
        if name == "g30":  # a workload that takes its whole grace period to terminate
            pod["metadata"]["annotations"] = {"sim.pyhpa.io/termination-seconds": "30"}
        assert client.post(base, json=pod).status_code == 201
        # the simulated kubelet holds every pod made through the API until its grace period ends
        assert "sim.pyhpa.io/termination" in client.get(f"{base}/{name}").json()[
            "metadata"]["finalizers"]
    # --grace-period=0 --force: gone at once, even though the simulated kubelet holds a finalizer
    r = client.request("DELETE", f"{base}/g0", json={"gracePeriodSeconds": 0})
    assert r.status_code == 200 and client.get(f"{base}/g0").status_code == 404
    # the default is the pod's terminationGracePeriodSeconds (30)
    slow = client.request("DELETE", f"{base}/g30").json()
    assert slow["metadata"]["deletionGracePeriodSeconds"] == 30
    # the query form; the pod ends after 1 s, well before the 30 s default
    marked = client.delete(f"{base}/g1", params={"gracePeriodSeconds": "1"}).json()
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 1
    deadline = time.monotonic() + 20
    while client.get(f"{base}/g1").status_code != 404:
        assert time.monotonic() < deadline, "the pod outlived its 1 s grace period by far"
        time.sleep(0.2)
    # a second delete may shorten the grace period of a terminating pod
    again = client.request("DELETE", f"{base}/g30", json={"gracePeriodSeconds": 0})
    assert again.status_code == 200 and client.get(f"{base}/g30").status_code == 404
    bad = client.request("DELETE", f"{base}/g30", json={"gracePeriodSeconds": "soon"})
    assert bad.status_code == 400


def test_server_side_apply_upgrades_client_side_applied_fields(client):
    import copy as _copy

    csa = hpa("up", minReplicas=1)
    last = _copy.deepcopy(csa)
    last["metadata"]["namespace"] = "default"
    csa["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": json.dumps(last) + "\n"}
    assert client.post(f"{HPAS}?fieldManager=kubectl-client-side-apply", json=csa).status_code == 201
    hdr = {"Content-Type": "application/apply-patch+yaml"}
    # another manager's field and a client-side field changed since: those still conflict
    client.patch(f"{HPAS}/up?fieldManager=kubectl-client-side-apply",
                 content=b'{"spec":{"minReplicas":3}}',
                 headers={"Content-Type": "application/merge-patch+json"})
    new = hpa("up", minReplicas=2, maxReplicas=6)
    stuck = client.patch(f"{HPAS}/up?fieldManager=kubectl", content=json.dumps(new).encode(),
                         headers=hdr)
    assert stuck.status_code == 409
    assert [c["field"] for c in stuck.json()["details"]["causes"]] == [".spec.minReplicas"]
    # an apply with another field manager gets no upgrade
    other = client.patch(f"{HPAS}/up?fieldManager=mine",
                         content=json.dumps(hpa("up", minReplicas=3, maxReplicas=6)).encode(),
                         headers=hdr)
    assert other.status_code == 409 and ".spec.maxReplicas" in other.json()["message"]
    ok = client.patch(f"{HPAS}/up?fieldManager=kubectl",
                      content=json.dumps(hpa("up", minReplicas=3, maxReplicas=6)).encode(),
                      headers=hdr)
    assert ok.status_code == 200, ok.text
    body = ok.json()
    assert body["spec"]["maxReplicas"] == 6
    owners = {e["manager"]: e for e in body["metadata"]["managedFields"]}
    assert "f:maxReplicas" in owners["kubectl"]["fieldsV1"]["f:spec"]
    assert "f:maxReplicas" not in owners["kubectl-client-side-apply"]["fieldsV1"].get("f:spec", {})
    annotated = json.loads(body["metadata"]["annotations"][
        "kubectl.kubernetes.io/last-applied-configuration"])
    assert annotated["spec"]["maxReplicas"] == 6  # a later client-side apply diffs against this


def test_workload_and_pod_defaults(client):
    rc = client.post("/api/v1/namespaces/default/replicationcontrollers", json={
        "apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc-d"},
        "spec": {"template": {"metadata": {"labels": {"app": "rc-d"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1.25",
                                                       "ports": [{"containerPort": 80}]}]}}}})
    assert rc.status_code == 201, rc.text
    body = rc.json()
    assert body["metadata"]["labels"] == {"app": "rc-d"}
    assert body["spec"]["selector"] == {"app": "rc-d"} and body["spec"]["replicas"] == 1
    dep = client.post("/apis/apps/v1/namespaces/default/deployments", json={
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "dep-d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx",
                                                       "readinessProbe": {"httpGet": {
                                                           "port": 80}}}]}}}}).json()
    pod_spec = dep["spec"]["template"]["spec"]
    assert {k: pod_spec[k] for k in ("restartPolicy", "dnsPolicy", "schedulerName",
                                      "terminationGracePeriodSeconds", "securityContext")} == {
        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 30,
        "securityContext": {}}
    c = pod_spec["containers"][0]
    assert (c["imagePullPolicy"], c["terminationMessagePath"], c["terminationMessagePolicy"]) == (
        "Always", "/dev/termination-log", "File")
    assert c["readinessProbe"] == {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
                                   "timeoutSeconds": 1, "periodSeconds": 10,
                                   "successThreshold": 1, "failureThreshold": 3}
    assert body["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert body["spec"]["template"]["spec"]["containers"][0]["ports"][0]["protocol"] == "TCP"
    pod = client.post("/api/v1/namespaces/default/pods", json=_pod("pod-d")).json()
    assert pod["spec"]["enableServiceLinks"] is True and pod["spec"]["dnsPolicy"] == "ClusterFirst"
    # what a default cluster's admission adds: kubectl describe's Service Account, Priority and
    # Tolerations lines
    assert {k: pod["spec"][k] for k in ("serviceAccountName", "serviceAccount", "priority",
                                         "preemptionPolicy")} == {
        "serviceAccountName": "default", "serviceAccount": "default", "priority": 0,
        "preemptionPolicy": "PreemptLowerPriority"}
    assert pod["spec"]["tolerations"] == [
        {"key": f"node.kubernetes.io/{t}", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300} for t in ("not-ready", "unreachable")]
    assert "tolerations" not in pod_spec and "priority" not in pod_spec  # not on templates
    # a Pod's requests default to its limits
    limited = _pod("pod-l")
    limited["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "500m", "memory": "1Gi"},
                                                     "requests": {"cpu": "200m"}}
    pod = client.post("/api/v1/namespaces/default/pods", json=limited).json()
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "200m", "memory": "1Gi"}


def test_health_endpoints_list_their_checks(client):
    assert client.get("/readyz").text == "ok"
    verbose = client.get("/readyz?verbose")
    assert verbose.status_code == 200
    lines = verbose.text.splitlines()
    assert "[+]ping ok" in lines and "[+]store ok" in lines and "[+]simulation ok" in lines
    assert lines[-1] == "readyz check passed"
    assert "[+]simulation" not in client.get("/livez?verbose").text
    assert "[+]ping excluded: ok" in client.get("/healthz?verbose&exclude=ping").text
    assert client.get("/readyz/ping").text == "ok"
    assert client.get("/readyz/nope").status_code == 404


def test_a_failed_checks_reason_is_withheld_without_the_token(cluster, client):
    def failing() -> str:
        raise RuntimeError("internal detail: /var/lib/secret")
    cluster.server.readiness_checks["boom"] = failing
    try:
        with httpx.Client(base_url=cluster.url, verify=ssl.create_default_context(
                cafile=str(cluster.ca_path))) as anonymous:
            for path in ("/readyz?verbose", "/readyz", "/readyz/boom"):
                r = anonymous.get(path)
                assert r.status_code == 500
                assert "internal detail" not in r.text and "RuntimeError" not in r.text
            lines = anonymous.get("/readyz?verbose").text.splitlines()
            assert "[-]boom failed: reason withheld" in lines and "[+]ping ok" in lines
        shown = client.get("/readyz?verbose").text
        assert "[-]boom failed: RuntimeError('internal detail: /var/lib/secret')" in shown
    finally:
        del cluster.server.readiness_checks["boom"]
    assert client.get("/readyz").text == "ok"


def test_left_out_objects_are_named_only_with_the_token(cluster, client):
    from pyhpa.cluster.apiserver.health import Degraded

    cluster.server.readiness_checks["left"] = lambda: Degraded(("ns/secrets/db: broken",))
    try:
        with httpx.Client(base_url=cluster.url, verify=ssl.create_default_context(
                cafile=str(cluster.ca_path))) as anonymous:
            text = anonymous.get("/readyz?verbose").text
            assert "db" not in text and "[-]left: 1 left out (names withheld)" in text
            forged = anonymous.get("/readyz?verbose", headers={"Authorization": "Bearer x"})
            assert "db" not in forged.text
        assert "[-]left: ns/secrets/db: broken" in client.get("/readyz?verbose").text
    finally:
        del cluster.server.readiness_checks["left"]


@pytest.mark.parametrize("path", ["/api/v1/namespaces/../pods", "/api/v1/namespaces/./pods",
                                  "/api/v1/namespaces/default/pods/..",
                                  "/apis/apps/v1/namespaces/../deployments"])
def test_dot_path_segments_name_nothing(cluster, path):
    """``..`` and ``.`` are no namespace or name (a raw request; clients clean such paths)."""
    import http.client

    conn = http.client.HTTPSConnection(
        cluster.url.split("//")[1].split(":")[0], int(cluster.url.rsplit(":", 1)[1]),
        context=ssl.create_default_context(cafile=str(cluster.ca_path)))
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {cluster.token}"})
        r = conn.getresponse()
        assert r.status == 404, r.read()
    finally:
        conn.close()


def _namespace_of(size: int) -> bytes:
    """A JSON Namespace body of exactly ``size`` bytes (a small object, padded with spaces)."""
    head = b'{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"big"}'
    return head + b" " * (size - len(head) - 1) + b"}"


def test_bodies_over_3_mib_are_refused_with_a_413_status(client):
    limit = 3 * 1024 * 1024
    r = client.post("/api/v1/namespaces", content=_namespace_of(limit + 1),
                    headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                        "status": "Failure", "message": f"Request entity too large: limit is {limit}",
                        "reason": "RequestEntityTooLarge", "code": 413}
    # a chunked body announces no length: it is cut off once it passes the limit
    def chunks():
        body = _namespace_of(limit + 1)
        for i in range(0, len(body), 65536):
            yield body[i:i + 65536]
    r = client.patch("/api/v1/namespaces/default", content=chunks(),
                     headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 413 and r.json()["reason"] == "RequestEntityTooLarge"
    assert client.get("/api/v1/namespaces/big").status_code == 404
    # the limit itself is allowed
    ok = client.post("/api/v1/namespaces", content=_namespace_of(limit),
                     headers={"Content-Type": "application/json"})
    assert ok.status_code == 201, ok.text
    assert client.delete("/api/v1/namespaces/big").status_code == 200


def test_unquoted_date_in_yaml_body_is_stored_as_string(client):
    """sigs.k8s.io/yaml reads `2026-01-01` as a string; a YAML 1.1 date would fail to decode."""
    body = ("apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n"
            "metadata:\n  name: dated\n  annotations: {note: 2026-01-01}\n"
            "spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n"
            "  maxReplicas: 3\n")
    r = client.post(HPAS, content=body, headers={"Content-Type": "application/yaml"})
    assert r.status_code == 201, r.text
    assert r.json()["metadata"]["annotations"] == {"note": "2026-01-01"}
    applied = body.replace("dated", "dated-ssa").replace("2026-01-01", "2026-02-03")
    r = client.patch(f"{HPAS}/dated-ssa?fieldManager=test", content=applied,
                     headers={"Content-Type": "application/apply-patch+yaml"})
    assert r.status_code == 201, r.text
    assert client.get(f"{HPAS}/dated-ssa").json()["metadata"]["annotations"] == {"note": "2026-02-03"}


def test_version_is_the_newest_with_a_pyhpa_suffix_by_default(client):
    from pyhpa.api.versions import NEWEST_MINOR
    v = client.get("/version").json()
    assert (v["major"], v["minor"], v["gitVersion"]) == ("1", str(NEWEST_MINOR), f"v1.{NEWEST_MINOR}.0-pyhpa")
