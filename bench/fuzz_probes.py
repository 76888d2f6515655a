"""The fuzzer's fixed checks (``bench/fuzz_apiserver.py`` runs them between random requests).

* the oracle: inputs kube-apiserver refuses, each beside a valid twin; the input must get a 4xx
  (and the twin a 2xx, else the case proves nothing);
* the protocol: bad and missing tokens are 401s, oversized bodies 413s;
* the read side: every metrics API, ``/readyz?verbose``, and the Prometheus exporter pages (no
  5xx, every page parses);
* the simulation: a new Deployment becomes Ready within a bound.
"""

from __future__ import annotations

import base64
import json
import re
import time
from dataclasses import dataclass
from typing import Any, Callable

Obj = dict[str, Any]
ORACLE_NS = "fuzz-oracle"
READY_NS = "fuzz-ready"
MAX_BODY = 3 * 1024 * 1024
READY_BOUND = 30.0  # seconds for a new one-replica Deployment (startup 0 s) to become Ready


def deployment(name: str, **spec: Any) -> Obj:
    pod: Obj = {"containers": [{"name": "c", "image": "nginx",
                                "resources": {"requests": {"cpu": "100m"}}}]}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "annotations": {
                "sim.pyhpa.io/startup-seconds": "0s", "sim.pyhpa.io/cpu": "50m",
                "sim.pyhpa.io/metric.http_requests": "10"}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": pod},
                     **spec}}


def _container_port(port: Any) -> Obj:
    d = deployment("port")
    d["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": port}]
    return d


def _service(target: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"},
            "spec": {"selector": {"app": "x"}, "ports": [{"port": 80, "targetPort": target}]}}


def _lease(**spec: Any) -> Obj:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
            "spec": {"holderIdentity": "me", **spec}}


def _ingress(path: str, port: int) -> Obj:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "ing"},
            "spec": {"rules": [{"http": {"paths": [{
                "path": path, "pathType": "Prefix",
                "backend": {"service": {"name": "svc", "port": {"number": port}}}}]}}]}}


def _event(kind: str) -> Obj:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "ev"},
            "eventTime": "2024-05-01T12:00:00.000000Z", "reportingController": "fuzz.io/c",
            "reportingInstance": "i", "action": "Fuzz", "reason": "Fuzzed", "type": kind,
            "regarding": {"kind": "Pod", "namespace": ORACLE_NS, "name": "p", "apiVersion": "v1"},
            "note": "n"}


def _strategy(**rolling: Any) -> Obj:
    return deployment("strat", strategy={"type": "RollingUpdate", "rollingUpdate": rolling})


def _pdb(expressions: list[Any] | None = None) -> Obj:
    selector: Obj = {"matchLabels": {"app": "x"}}
    if expressions is not None:
        selector["matchExpressions"] = expressions
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
            "spec": {"minAvailable": 1, "selector": selector}}


def _selector(obj: Obj, expressions: list[Any]) -> Obj:
    obj["spec"]["selector"]["matchExpressions"] = expressions
    return obj


_CM_DUP_JSON = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},' \
               b'"data":{"a":"1","a":"2"}}'
_CM_DUP_YAML = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup\ndata:\n  a: '1'\n  a: '2'\n"
_CM = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "enc"},
                  "data": {"a": "1"}})
_CM_OK = _CM.encode()


@dataclass(frozen=True)
class Case:
    """One oracle case: ``bad`` must be refused (4xx); ``good``, its twin, accepted (2xx).
    ``setup`` is created first (a parent for a status write); all are deleted after."""

    name: str
    method: str
    path: str
    bad: bytes
    good: bytes | None
    ctype: str = "application/json"
    setup: Obj | None = None
    setup_path: str = ""


def _j(o: Any) -> bytes:
    return json.dumps(o).encode()


def _status_case(name: str, coll: str, parent: Obj, bad: Obj, good: Obj) -> Case:
    item = f"{coll}/{parent['metadata']['name']}/status"
    return Case(name, "PATCH", item, _j({"status": bad}), _j({"status": good}),
                "application/merge-patch+json", parent, coll)


def oracle_cases() -> list[Case]:
    ns = f"/namespaces/{ORACLE_NS}"
    deps, cms = f"/apis/apps/v1{ns}/deployments", f"/api/v1{ns}/configmaps"
    forged = base64.urlsafe_b64encode(json.dumps(
        {"v": "meta.k8s.io/v1", "rv": -1, "start": "a/"}).encode()).decode().rstrip("=")
    return [
        Case("deployment strategy.type x", "POST", deps,
             _j(deployment("st", strategy={"type": "x"})),
             _j(deployment("st", strategy={"type": "Recreate"}))),
        Case("deployment maxSurge 'x'", "POST", deps, _j(_strategy(maxSurge="x")),
             _j(_strategy(maxSurge="25%"))),
        Case("deployment maxSurge -1", "POST", deps, _j(_strategy(maxSurge=-1)),
             _j(_strategy(maxSurge=1))),
        Case("deployment maxUnavailable 'x'", "POST", deps, _j(_strategy(maxUnavailable="x")),
             _j(_strategy(maxUnavailable="25%"))),
        Case("deployment maxUnavailable -1", "POST", deps, _j(_strategy(maxUnavailable=-1)),
             _j(_strategy(maxUnavailable=1))),
        Case("containerPort -1", "POST", deps, _j(_container_port(-1)), _j(_container_port(80))),
        Case("containerPort null", "POST", deps, _j(_container_port(None)),
             _j(_container_port(80))),
        Case("service targetPort -1", "POST", f"/api/v1{ns}/services", _j(_service(-1)),
             _j(_service(8080))),
        Case("lease leaseDurationSeconds -1", "POST", f"/apis/coordination.k8s.io/v1{ns}/leases",
             _j(_lease(leaseDurationSeconds=-1)), _j(_lease(leaseDurationSeconds=15))),
        Case("lease leaseTransitions -1", "POST", f"/apis/coordination.k8s.io/v1{ns}/leases",
             _j(_lease(leaseTransitions=-1)), _j(_lease(leaseTransitions=0))),
        _status_case("pdb status currentHealthy -1", f"/apis/policy/v1{ns}/poddisruptionbudgets",
                     _pdb(), {"currentHealthy": -1}, {"currentHealthy": 0}),
        _status_case("pdb status disruptionsAllowed -1",
                     f"/apis/policy/v1{ns}/poddisruptionbudgets", _pdb(),
                     {"disruptionsAllowed": -1}, {"disruptionsAllowed": 0}),
        _status_case("deployment status replicas -1", deps, deployment("stat"),
                     {"replicas": -1}, {"replicas": 0}),
        _status_case("deployment status readyReplicas > replicas", deps, deployment("stat"),
                     {"replicas": 1, "readyReplicas": 5}, {"replicas": 1, "readyReplicas": 1}),
        Case("ingress path 'x'", "POST", f"/apis/networking.k8s.io/v1{ns}/ingresses",
             _j(_ingress("x", 80)), _j(_ingress("/x", 80))),
        Case("ingress backend port -1", "POST", f"/apis/networking.k8s.io/v1{ns}/ingresses",
             _j(_ingress("/x", -1)), _j(_ingress("/x", 80))),
        Case("events.k8s.io type 'x'", "POST", f"/apis/events.k8s.io/v1{ns}/events",
             _j(_event("x")), _j(_event("Normal"))),
        Case("deployment selector matchExpressions [null]", "POST", deps,
             _j(_selector(deployment("sel"), [None])),
             _j(_selector(deployment("sel"), [{"key": "a", "operator": "DoesNotExist"}]))),
        Case("pdb selector matchExpressions [null]", "POST",
             f"/apis/policy/v1{ns}/poddisruptionbudgets", _j(_pdb([None])),
             _j(_pdb([{"key": "a", "operator": "Exists"}]))),
        Case("duplicate JSON keys, fieldValidation=Strict", "POST", cms + "?fieldValidation=Strict",
             _CM_DUP_JSON, _CM_OK),
        Case("duplicate YAML keys, fieldValidation=Strict", "POST", cms + "?fieldValidation=Strict",
             _CM_DUP_YAML, _CM_OK, "application/yaml"),
        Case("UTF-16 body", "POST", cms, _CM.encode("utf-16"), _CM_OK),
        Case("UTF-8 BOM body", "POST", cms, b"\xef\xbb\xbf" + _CM_OK, _CM_OK),
        Case("forged continue token (rv -1)", "GET", f"{cms}?limit=1&continue={forged}", b"", None),
        Case("namespace path segment '..'", "GET", "/api/v1/namespaces/../pods", b"", None),
    ]


def run_oracle(request: Callable[..., tuple[int, bytes, str]]) -> tuple[list[str], list[str]]:
    """Every oracle case once; returns (accepted bad inputs, refused good twins), each a line
    naming the case and the answer."""
    accepted, refused = [], []
    request("POST", "/api/v1/namespaces", _j({"apiVersion": "v1", "kind": "Namespace",
                                               "metadata": {"name": ORACLE_NS}}),
            "application/json")
    for case in oracle_cases():
        created: list[str] = []
        if case.setup is not None:
            request("POST", case.setup_path, _j(case.setup), "application/json")
            created.append(f"{case.setup_path}/{case.setup['metadata']['name']}")
        body = case.bad if case.method != "GET" else None
        status, payload, _ = request(case.method, case.path, body, case.ctype)
        if not 400 <= status < 500:
            accepted.append(f"{case.name}: {status}")
        _cleanup(request, case, status, payload, created)
        if case.good is not None:
            status, payload, _ = request(case.method, case.path, case.good,
                                         case.ctype or "application/json")
            if not 200 <= status < 300:
                refused.append(f"{case.name} (valid twin): {status} {payload[:160]!r}")
            _cleanup(request, case, status, payload, created)
        for path in created:
            request("DELETE", path + "?gracePeriodSeconds=0")
    return accepted, refused


def _cleanup(request: Callable[..., Any], case: Case, status: int, payload: bytes,
             created: list[str]) -> None:
    if case.method == "POST" and status in (200, 201):
        try:
            name = json.loads(payload)["metadata"]["name"]
        except (ValueError, KeyError, TypeError):
            return
        request("DELETE", f"{case.path.split('?')[0]}/{name}?gracePeriodSeconds=0")


# --------------------------------------------------------------------------- the protocol


def protocol_checks(client: Any, big: bool) -> list[str]:
    """Bad and missing tokens answer 401, an oversized body 413 (``big``: it costs 3 MiB)."""
    out = []
    for method, path in (("GET", "/api/v1/namespaces/fuzz-a/pods"),
                         ("POST", "/api/v1/namespaces/fuzz-a/configmaps"),
                         ("GET", "/apis/metrics.k8s.io/v1beta1/pods"),
                         ("GET", "/api/v1/namespaces/kube-system/services/"
                                 "kube-state-metrics:http-metrics/proxy/metrics")):
        body = _CM_OK if method == "POST" else None
        for auth in ("", "Bearer wrong", f"Bearer {client.token}x", "Bearer ", "Basic YTpi",
                     f"bearer{client.token}"):
            status, payload, _ = client.request(method, path, body, "application/json"
                                                if body else None, authorization=auth)
            if status != 401:
                out.append(f"{method} {path} with Authorization {auth[:12]!r}: {status}, "
                           f"want 401")
    if big:
        for extra in (1, 1024 * 1024):
            body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":' \
                   b'{"a":"' + b"x" * (MAX_BODY + extra) + b'"}}'
            status, payload, _ = client.request("POST", "/api/v1/namespaces/fuzz-a/configmaps",
                                                body, "application/json")
            if status != 413:
                out.append(f"POST {len(body)} bytes: {status}, want 413")
    return out


# --------------------------------------------------------------------------- the read side

_SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"'
                     r',?)*\})? (\S+)( -?\d+)?$')


def exposition_errors(text: str) -> list[str]:
    """Lines of a Prometheus text page that do not parse (value included)."""
    bad = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if m is None:
            bad.append(line[:160])
            continue
        try:
            float(m.group(2))
        except ValueError:
            bad.append(line[:160])
    return bad


def read_side(client: Any, names: dict[str, list[str]]) -> tuple[list[str], int]:
    """Every metrics API, /readyz?verbose and the exporters once; returns (failures, degraded
    items listed by /readyz?verbose)."""
    out: list[str] = []
    paths = ["/apis/metrics.k8s.io/v1beta1/pods", "/apis/metrics.k8s.io/v1beta1/nodes",
             f"/apis/metrics.k8s.io/v1beta1/namespaces/{READY_NS}/pods",
             "/apis/metrics.k8s.io/v1beta1/namespaces/fuzz-a/pods",
             f"/apis/custom.metrics.k8s.io/v1beta2/namespaces/{READY_NS}/pods/*/http_requests",
             f"/apis/custom.metrics.k8s.io/v1beta1/namespaces/{READY_NS}/pods/*/http_requests",
             "/apis/custom.metrics.k8s.io/v1beta2/namespaces/fuzz-a/pods/*/http_requests",
             "/api/v1/namespaces/kube-system/services/kube-state-metrics:http-metrics/proxy/"
             "metrics",
             "/api/v1/namespaces/kube-system/services/pyhpa-app-metrics:http-metrics/proxy/"
             "metrics"]
    for ns in ("fuzz-a", "fuzz-b"):
        for dep in names.get(f"deployments/{ns}", []):
            paths.append(f"/apis/custom.metrics.k8s.io/v1beta2/namespaces/{ns}/"
                         f"deployments.apps/{dep}/http_requests")
        for metric in names.get(f"externalmetrics/{ns}", []):
            paths.append(f"/apis/external.metrics.k8s.io/v1beta1/namespaces/{ns}/{metric}")
    for node in names.get("nodes", [])[:2]:
        paths.append(f"/api/v1/nodes/{node}/proxy/metrics/cadvisor")
        paths.append(f"/apis/metrics.k8s.io/v1beta1/nodes/{node}")
    for path in paths:
        status, payload, ctype = client.request("GET", path)
        if status >= 500:
            out.append(f"GET {path}: {status} {payload[:200]!r}")
        elif status == 200 and "/proxy/" in path:
            bad = exposition_errors(payload.decode("utf-8", "replace"))
            if bad:
                out.append(f"GET {path}: {len(bad)} unparseable lines, e.g. {bad[0]!r}")
        elif status == 200:
            try:
                json.loads(payload)
            except ValueError:
                out.append(f"GET {path}: 200 but not JSON: {payload[:120]!r}")
    status, payload, _ = client.request("GET", "/readyz?verbose")
    if status != 200:
        out.append(f"GET /readyz?verbose: {status} {payload[-300:]!r}")
    return out, payload.count(b"[-]")


def names_for_reads(client: Any) -> dict[str, list[str]]:
    """Names the read side asks about: nodes, the fuzzed Deployments and ExternalMetrics."""
    out: dict[str, list[str]] = {}
    lists = {"nodes": "/api/v1/nodes"}
    for ns in ("fuzz-a", "fuzz-b"):
        lists[f"deployments/{ns}"] = f"/apis/apps/v1/namespaces/{ns}/deployments"
        lists[f"externalmetrics/{ns}"] = f"/apis/pyhpa.io/v1alpha1/namespaces/{ns}/externalmetrics"
    for key, path in lists.items():
        status, payload, _ = client.request("GET", path + "?limit=100")
        if status != 200:
            continue
        items = json.loads(payload).get("items") or []
        if key.startswith("externalmetrics"):
            out[key] = [str((i.get("spec") or {}).get("name") or i["metadata"]["name"])
                        for i in items if isinstance(i.get("spec"), dict)]
        else:
            out[key] = [i["metadata"]["name"] for i in items]
    return out


# --------------------------------------------------------------------------- the simulation


def new_workload_ready(client: Any, n: int, bound: float = READY_BOUND) -> str | None:
    """Create Deployment ``ready-<n>``: its one pod must be Ready within ``bound`` seconds.
    Returns why not, or None; the Deployment is deleted after."""
    coll = f"/apis/apps/v1/namespaces/{READY_NS}/deployments"
    status, payload, _ = client.request("POST", coll, _j(deployment(f"ready-{n}")),
                                        "application/json")
    if status != 201:
        return f"creating Deployment ready-{n}: {status} {payload[:200]!r}"
    started = time.monotonic()
    last: Obj = {}
    try:
        while time.monotonic() - started < bound:
            status, payload, _ = client.request("GET", f"{coll}/ready-{n}")
            if status == 200:
                last = json.loads(payload).get("status") or {}
                if last.get("readyReplicas") == 1:
                    return None
            time.sleep(0.2)
        return f"Deployment ready-{n} not Ready within {bound:.0f} s: status {last}"
    finally:
        client.request("DELETE", f"{coll}/ready-{n}")


def ensure_namespace(client: Any, ns: str) -> None:
    client.request("POST", "/api/v1/namespaces", _j({"apiVersion": "v1", "kind": "Namespace",
                                                     "metadata": {"name": ns}}),
                   "application/json")



def follow_up_read(kind: str, payload: bytes) -> str | None:
    """The metrics API read that serves what a 2xx write of ``kind`` answered with ``payload``:
    the pod's usage, the Deployment's custom metric, the ExternalMetric's series."""
    if kind not in ("Pod", "Deployment", "ExternalMetric"):
        return None
    try:
        obj = json.loads(payload)
        meta = obj["metadata"]
        ns, name = str(meta["namespace"]), str(meta["name"])
    except (ValueError, KeyError, TypeError):
        return None
    if kind == "Pod":
        return f"/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods/{name}"
    if kind == "Deployment":
        return (f"/apis/custom.metrics.k8s.io/v1beta2/namespaces/{ns}/deployments.apps/{name}/"
                f"http_requests")
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    metric = spec.get("name") if isinstance(spec.get("name"), str) and spec.get("name") else name
    return f"/apis/external.metrics.k8s.io/v1beta1/namespaces/{ns}/{metric}"
