"""A property-based fuzzer of the embedded API server's write paths (issue 18).

Properties, checked after every request to a real ``pyhpa cluster`` on 127.0.0.1:
  1. no answer is a 5xx, and every error answer is a Kubernetes ``Status`` (JSON);
  2. the world keeps turning: ``/readyz`` answers ``ok`` (store and simulation healthy);
and, every :data:`PROBE_EVERY` requests: reads of the three metrics APIs and of
``/readyz?verbose`` answer without a 5xx, a request with a wrong or no token gets 401, and one
input of an oracle list that kube-apiserver refuses (:data:`ORACLE`) is refused. When the
server runs as a process, its log must hold no traceback.

Requests are drawn from a seeded generator: objects of every served kind built from the kind's
published schema (so they are mostly well-formed), then often broken on purpose (wrong types,
bad names and labels, unknown fields, deep nesting, huge or odd strings, bodies that are not
JSON), sent as creates, updates, status and scale writes, merge / JSON / strategic patches,
server-side applies and deletes with random options. Faults land at any depth (a walk down to
a leaf of the object, not a fixed few levels), and bodies come with repeated keys, byte-order
marks or in UTF-16. Replica counts of valid objects stay small:
capping what a simulated workload may ask for is the simulation's business, not the server's.

Usage: ``python bench/fuzz_apiserver.py [--requests 100000] [--seconds 600] [--seed 1]``
(``make fuzz``). Prints the figures; exits 1 when a property failed.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import random
import re
import ssl
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

Obj = dict[str, Any]
NAMESPACES = ("fuzz-a", "fuzz-b")
DEEP = "__deep__"  # a string body() turns into that many nested arrays
KIND_SKIP = {"Node", "Namespace"}  # cluster-wide: fuzzed through names only, never broken
NAMES = ("web", "api", "a", "x-1", "db.main", "q0")
BAD_NAMES = ("", "Web", "a/../B_", "a b", "-a", "a" * 300, "..", "名前", "a_b", "a" * 64)
BAD_LABEL_KEYS = ("a/b/c", "/x", "x/", "-a", "a" * 64, "é", "")
ODD_STRINGS = ("", " ", "\u0000", "\ud83d\ude00", "x" * 5000, "\\", '"', "null", "1e309",
               "-0", "\u202e", "a\nb")
# A custom kind to fuzz as well: served once this CRD is stored.
WIDGETS_CRD: Obj = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.fuzz.pyhpa.io"},
    "spec": {"group": "fuzz.pyhpa.io", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "subresources": {"status": {}, "scale": {
                               "specReplicasPath": ".spec.replicas",
                               "statusReplicasPath": ".status.replicas"}},
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": {"type": "object", "properties": {
                                   "replicas": {"type": "integer", "minimum": 0},
                                   "size": {"type": "string", "enum": ["s", "m", "l"]},
                                   "ports": {"type": "array", "items": {"type": "integer"}},
                                   "free": {"type": "object",
                                            "x-kubernetes-preserve-unknown-fields": True}}},
                               "status": {"type": "object", "properties": {
                                   "replicas": {"type": "integer"}}}}}}}]}}
CONTENT_TYPES = ("application/json", "application/yaml", "text/plain", "",
                 "application/json-patch+json", "application/merge-patch+json",
                 "application/strategic-merge-patch+json", "application/apply-patch+yaml",
                 "application/vnd.kubernetes.protobuf", "*/*")


PROBE_EVERY = 25  # requests between the reads, token and oracle probes
# Inputs kube-apiserver refuses (path, content type, body, query): each must get a 4xx.
_DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "oracle"},
               "spec": {"selector": {"matchLabels": {"a": "b"}},
                        "template": {"metadata": {"labels": {"a": "b"}},
                                     "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
_LEASE = '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"oracle"}}'


def _with(obj: Obj, path: str, value: Any) -> Obj:
    out = json.loads(json.dumps(obj))
    cur = out
    keys = path.split(".")
    for k in keys[:-1]:
        cur = cur[int(k)] if isinstance(cur, list) else cur.setdefault(k, {})
    cur[keys[-1]] = value
    return out


ORACLE: list[tuple[str, str, bytes, str]] = [
    ("/apis/apps/v1/namespaces/NS/deployments", "application/json",
     json.dumps(_with(_DEPLOYMENT, "spec.strategy.type", "x")).encode(), ""),
    ("/apis/apps/v1/namespaces/NS/deployments", "application/json",
     json.dumps(_with(_DEPLOYMENT, "spec.strategy.rollingUpdate.maxSurge", -1)).encode(), ""),
    ("/apis/apps/v1/namespaces/NS/deployments", "application/json",
     json.dumps(_with(_DEPLOYMENT, "spec.template.spec.containers.0.ports",
                      [{"containerPort": -1}])).encode(), ""),
    ("/apis/coordination.k8s.io/v1/namespaces/NS/leases", "application/json",
     _LEASE[:-1].encode() + b',"spec":{"leaseDurationSeconds":-1}}', ""),
    ("/apis/coordination.k8s.io/v1/namespaces/NS/leases", "application/json",
     b"\xef\xbb\xbf" + _LEASE.encode(), ""),
    ("/apis/coordination.k8s.io/v1/namespaces/NS/leases", "application/json",
     _LEASE.encode("utf-16"), ""),
    ("/apis/coordination.k8s.io/v1/namespaces/NS/leases", "application/json",
     _LEASE[:-1].encode() + b',"kind":"Lease"}', "fieldValidation=Strict"),
    ("/apis/pyhpa.io/v1alpha1/namespaces/NS/externalmetrics", "application/json",
     b'{"apiVersion":"pyhpa.io/v1alpha1","kind":"ExternalMetric","metadata":{"name":"oracle"},'
     b'"spec":{"value":"1e309"}}', ""),
    ("/apis/events.k8s.io/v1/namespaces/NS/events", "application/json",
     b'{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"oracle"},'
     b'"eventTime":"2026-01-01T00:00:00.000000Z","type":"x","reason":"R","action":"A",'
     b'"reportingController":"c/x","reportingInstance":"i"}', ""),
]
READS = ("/apis/metrics.k8s.io/v1beta1/namespaces/NS/pods", "/apis/metrics.k8s.io/v1beta1/nodes",
         "/apis/custom.metrics.k8s.io/v1beta2/namespaces/NS/pods/*/http_requests",
         "/apis/external.metrics.k8s.io/v1beta1/namespaces/NS/queue", "/readyz?verbose",
         "/apis/pyhpa.io/v1alpha1/namespaces/NS/externalmetrics")


@dataclass
class Figures:
    requests: int = 0
    statuses: collections.Counter = field(default_factory=collections.Counter)
    server_errors: int = 0
    non_status_errors: int = 0
    stopped_world: int = 0
    oracle_accepted: int = 0
    token_bypasses: int = 0
    tracebacks: int = 0
    seconds: float = 0.0
    samples: list[str] = field(default_factory=list)

    def ok(self) -> bool:
        return self.server_errors == 0 and self.stopped_world == 0 and \
            self.non_status_errors == 0 and self.oracle_accepted == 0 and \
            self.token_bypasses == 0 and self.tracebacks == 0

    def lines(self) -> list[str]:
        hist = ", ".join(f"{code}: {n}" for code, n in sorted(self.statuses.items()))
        return [f"requests: {self.requests:,}", f"status codes: {hist}",
                f"5xx: {self.server_errors}", f"error bodies that are not a Status: "
                f"{self.non_status_errors}", f"stopped-world states: {self.stopped_world}",
                f"oracle inputs accepted: {self.oracle_accepted}",
                f"requests without the token served: {self.token_bypasses}",
                f"tracebacks in the server log: {self.tracebacks}",
                f"seconds: {self.seconds:.1f}"] + [f"  e.g. {s}" for s in self.samples[:10]]


class Client:
    """One keep-alive HTTPS connection, reopened when the server closes it."""

    def __init__(self, port: int, token: str, ctx: ssl.SSLContext) -> None:
        self.port, self.token, self.ctx = port, token, ctx
        self.conn: http.client.HTTPSConnection | None = None

    def request(self, method: str, path: str, body: bytes | None = None,
                ctype: str | None = None, auth: bool | str = True) -> tuple[int, bytes, str]:
        """``auth``: True sends the token, False none, a string that header value."""
        headers = {"Accept": "application/json"}
        if auth:
            headers["Authorization"] = f"Bearer {self.token}" if auth is True else auth
        if ctype:
            headers["Content-Type"] = ctype
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx,
                                                        timeout=60)
            try:
                self.conn.request(method, path, body=body, headers=headers)
                r = self.conn.getresponse()
                data = r.read()
                if r.getheader("connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return r.status, data, r.getheader("content-type", "")
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")


# --------------------------------------------------------------------------- generation


class Generator:
    """Objects and requests from the served kinds' schemas, seeded."""

    def __init__(self, rng: random.Random) -> None:
        from pyhpa.cluster.apiserver.resources import Registry
        from pyhpa.api.schemas import BuiltinSchemas

        self.rng = rng
        self.schemas = BuiltinSchemas.build()
        from pyhpa.cluster.apiserver.crd import resources_for
        self.kinds = [(res, v) for res in Registry().resources for v in res.versions
                      if "create" in res.verbs and res.kind not in KIND_SKIP
                      and self.schemas.of_kind(res.group, v, res.kind) is not None]
        self.kinds += [(res, res.versions[0]) for res in resources_for(WIDGETS_CRD)]
        self.made: dict[str, list[str]] = collections.defaultdict(list)  # path -> names

    # ---- values from a schema
    def value(self, schema: Obj, depth: int) -> Any:
        from pyhpa.api.schemas.build import (INT_OR_STRING, QUANTITY, TIME,
                                                           MICRO_TIME, ref_name)
        rng = self.rng
        name = None
        target = ref_name(schema)
        while target is not None:
            name = target
            schema = self.schemas.definitions.get(target, {})
            target = ref_name(schema)
        if name == QUANTITY:
            return rng.choice(["1", "100m", "2Gi", "0.5", 3, "1e3", "500Mi"])
        if name == INT_OR_STRING:
            return rng.choice([1, 8080, "25%", "http"])
        if name in (TIME, MICRO_TIME):
            return "2024-05-01T12:00:00Z"
        kind = schema.get("type")
        if kind == "string":
            return rng.choice(schema.get("enum") or NAMES)
        if kind == "integer":
            return rng.randint(0, 3)
        if kind == "number":
            return rng.choice([0, 0.5, 2])
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "array":
            items = schema.get("items")
            if not isinstance(items, dict) or depth > 5:
                return []
            return [self.value(items, depth + 1) for _ in range(rng.randint(0, 2))]
        if kind == "object" or "properties" in schema:
            props = schema.get("properties") or {}
            extra = schema.get("additionalProperties")
            out: Obj = {}
            keep = 0.7 / (depth + 1)
            for key, sub in props.items():
                if key in (schema.get("required") or ()) or rng.random() < keep:
                    if depth < 6:
                        out[key] = self.value(sub, depth + 1)
            if isinstance(extra, dict) and depth < 6:
                for _ in range(rng.randint(0, 2)):
                    out[rng.choice(NAMES)] = self.value(extra, depth + 1)
            return out
        return {}

    def object(self, res: Any, version: str, name: str) -> Obj:
        """A mostly well-formed object of ``res``: schema-made, then given what its kind's
        validation wants (selectors matching templates, containers with images, small
        replica counts)."""
        from pyhpa.api.schemas.build import ref
        rng = self.rng
        defn = self.schemas.of_kind(res.group, version, res.kind)
        obj = self.value(ref(defn) if defn else res.extra.get("schema") or {}, 0)
        obj["apiVersion"] = res.api_version(version)
        obj["kind"] = res.kind
        obj["metadata"] = {"name": name, "labels": {"app": name}}
        obj.pop("status", None)
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        pod_spec = {"containers": [{"name": "c", "image": "nginx",
                                    "resources": {"requests": {"cpu": "100m"}}}]}
        if res.kind in ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController",
                        "HorizontalPodAutoscaler", "Scalable", "Widget"):
            obj["spec"] = spec
        if res.kind in ("Deployment", "ReplicaSet", "StatefulSet"):
            spec.update({"replicas": rng.randint(0, 3),
                         "selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec}})
            for key in ("strategy", "updateStrategy", "minReadySeconds", "ordinals",
                        "progressDeadlineSeconds", "volumeClaimTemplates"):
                spec.pop(key, None)
        elif res.kind == "ReplicationController":
            spec.update({"replicas": rng.randint(0, 3), "selector": {"app": name},
                         "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec}})
        elif res.kind == "Pod":
            obj["spec"] = pod_spec
        elif res.kind == "HorizontalPodAutoscaler":
            spec.update({"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                            "name": name}, "maxReplicas": rng.randint(1, 5)})
            spec.pop("minReplicas", None)
        elif res.kind in ("Scalable", "Widget"):
            spec.update({"replicas": rng.randint(0, 3)})
        return obj

    # ---- breaking things
    def fault_at_leaf(self, obj: Obj, res: Any, version: str) -> None:
        """A value of the wrong kind (null, a string, a huge number, ...) at a leaf of the
        kind's schema, reached by a random walk down its fields (maps and lists get an entry on
        the way), so faults land at every depth: ``spec.template.spec.containers[0].resources
        .requests[cpu]`` is as likely as ``spec.replicas``."""
        from pyhpa.api.schemas.build import INT_OR_STRING, QUANTITY, ref, ref_name
        rng = self.rng
        defn = self.schemas.of_kind(res.group, version, res.kind)
        schema: Obj = ref(defn) if defn else res.extra.get("schema") or {}
        parent: Any = None
        slot: Any = None
        cur: Any = obj
        for _ in range(24):
            name = None
            target = ref_name(schema)
            while target is not None:
                name = target
                schema = self.schemas.definitions.get(target, {})
                target = ref_name(schema)
            props = schema.get("properties") or {}
            extra = schema.get("additionalProperties")
            items = schema.get("items")
            if name in (QUANTITY, INT_OR_STRING) or not (props or isinstance(extra, dict)
                                                           or isinstance(items, dict)):
                break  # a leaf
            if isinstance(items, dict):
                if not isinstance(cur, list) or not cur:
                    if parent is None:
                        return
                    cur = parent[slot] = [self.value(items, 3)]
                parent, slot, cur, schema = cur, 0, cur[0], items
                continue
            if not isinstance(cur, dict):
                if parent is None:
                    return
                cur = parent[slot] = {}
            keys = [k for k in props if k not in ("apiVersion", "kind", "metadata")] or \
                list(props)
            if isinstance(extra, dict) and (not keys or rng.random() < 0.5):
                key, sub_schema = rng.choice(list(cur) or ["cpu", "memory", "app"]), extra
            elif keys:
                key = rng.choice(keys)
                sub_schema = props[key]
            else:
                break
            parent, slot = cur, key
            cur, schema = cur.get(key), sub_schema
        if parent is not None:
            parent[slot] = rng.choice([None, None, "", "x", -1, 2 ** 63, 1e308, "1e309", [],
                                       {}, True, rng.choice(ODD_STRINGS)])

    def junk(self, depth: int = 0) -> Any:
        rng = self.rng
        pick = rng.randrange(12)
        if pick == 0 and depth < 3:
            return {rng.choice(NAMES + ODD_STRINGS): self.junk(depth + 1)
                    for _ in range(rng.randint(0, 3))}
        if pick == 1 and depth < 3:
            return [self.junk(depth + 1) for _ in range(rng.randint(0, 3))]
        return rng.choice([None, True, False, 0, -1, 2 ** 31, 2 ** 63, -(2 ** 70), 1.5, 1e300,
                           "x", "3", rng.choice(ODD_STRINGS), [], {}, -5, 999999999])

    def break_object(self, obj: Obj) -> Obj:
        """One to three deliberate faults in ``obj``."""
        rng = self.rng
        for _ in range(rng.randint(1, 3)):
            fault = rng.randrange(10)
            meta = obj.setdefault("metadata", {}) if isinstance(obj.get("metadata"), dict) \
                else obj
            if fault == 0:
                meta["name"] = rng.choice(BAD_NAMES + (123, None, ["a"]))
            elif fault == 1:
                meta.pop("name", None)
                meta["generateName"] = rng.choice(BAD_NAMES + ("web-", 5))
            elif fault == 2:
                meta["labels"] = rng.choice([{rng.choice(BAD_LABEL_KEYS): "v"}, {"k": "v" * 64},
                                             ["a"], "x", {"k": 1}])
            elif fault == 3:
                meta[rng.choice(["annotations", "ownerReferences", "finalizers",
                                 "managedFields", "resourceVersion", "uid"])] = self.junk()
            elif fault == 4:
                meta["annotations"] = {"a": "x" * rng.choice([1000, 300_000])}
            elif fault == 5:
                self.set_random_path(obj, self.junk())
            elif fault == 6:
                self.set_random_path(obj, {"unknownField": 1})
            elif fault == 7:  # nesting, spliced in as bytes by body()
                self.set_random_path(obj, f"{DEEP}{rng.choice([50, 150, 3000, 100_000])}")
            elif fault == 8:
                obj[rng.choice(["kind", "apiVersion"])] = rng.choice(["Other", "v9", 1, None])
            else:
                self.set_random_path(obj, None)
        return obj

    def set_random_path(self, obj: Any, value: Any) -> None:
        """Put ``value`` somewhere in ``obj``: a walk that stops at each level with a small
        chance and always at a leaf, so the deepest fields (a container's resources, eight
        levels down a Deployment) are reached as often as the top ones."""
        rng = self.rng
        cur = obj
        for _ in range(32):
            if isinstance(cur, dict) and cur:
                key = rng.choice(list(cur))
                if rng.random() < 0.12 or not isinstance(cur[key], (dict, list)):
                    cur[key] = value
                    return
                cur = cur[key]
            elif isinstance(cur, list) and cur:
                i = rng.randrange(len(cur))
                if rng.random() < 0.12 or not isinstance(cur[i], (dict, list)):
                    cur[i] = value
                    return
                cur = cur[i]
            else:
                break
        if isinstance(cur, dict):
            cur[rng.choice(NAMES)] = value

    def body(self, data: Any, ctype: str) -> bytes:
        """``data`` encoded for ``ctype``, sometimes mangled at the byte level."""
        rng = self.rng
        text = json.dumps(data, allow_nan=True)  # JSON is YAML too
        text = re.sub(f'"{DEEP}(\\d+)"', lambda m: "[" * int(m.group(1)) + "1"
                      + "]" * int(m.group(1)), text)
        roll = rng.random()
        if roll < 0.04:
            return text[: rng.randrange(len(text) + 1)].encode()  # cut short
        if roll < 0.07:
            return text.replace('"', '"\\ud800', 1).encode()  # a lone surrogate escape
        if roll < 0.09:
            return bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))
        if roll < 0.11:
            return b"a: &a [x,x,x,x,x,x,x,x,x]\n" + b"".join(
                f"{b}: &{b} [*{a},*{a},*{a},*{a},*{a},*{a},*{a},*{a},*{a}]\n".encode()
                for a, b in zip("abcdefg", "bcdefgh"))
        if roll < 0.14 and text.startswith("{") and len(text) > 2:  # repeated keys
            first = text[1:].split(",", 1)[0].rstrip("}")
            return ("{" + first + "," + text[1:]).encode()
        if roll < 0.15:
            return b"\xef\xbb\xbf" + text.encode()
        if roll < 0.16:
            return text.encode(rng.choice(["utf-16", "utf-16-le", "utf-32"]), "surrogatepass")
        return text.encode()

    def query(self) -> str:
        rng = self.rng
        params = []
        if rng.random() < 0.15:
            params.append("dryRun=" + rng.choice(["All", "Al", "", "all"]))
        if rng.random() < 0.2:
            params.append("fieldValidation=" + rng.choice(["Strict", "Warn", "Ignore", "x", ""]))
        if rng.random() < 0.3:
            params.append("fieldManager=" + rng.choice(["fuzz", "a" * 200, "%01", ""]))
        if rng.random() < 0.05:
            params.append("force=" + rng.choice(["true", "false", "x"]))
        return ("?" + "&".join(params)) if params else ""


# --------------------------------------------------------------------------- requests


def json_patch(rng: random.Random, gen: Generator) -> list[Any]:
    ops = []
    for _ in range(rng.randint(1, 4)):
        path = rng.choice(["/spec", "/metadata/labels", "/metadata/labels/x", "/spec/replicas",
                           "/metadata/annotations", "/status", "", "/spec/0", "x", 5,
                           "/metadata/name", "/spec/template/spec/containers/0/image"])
        ops.append(rng.choice([
            {"op": "add", "path": path, "value": gen.junk()},
            {"op": "replace", "path": path, "value": gen.junk()},
            {"op": "remove", "path": path},
            {"op": "copy", "from": rng.choice(["/metadata", "/spec", "", 7]), "path": path},
            {"op": "move", "from": rng.choice(["/metadata/labels", "/spec"]), "path": path},
            {"op": "test", "path": path, "value": gen.junk()},
            {"op": rng.choice(["nope", 1, None]), "path": path},
            gen.junk()]))
    return ops


def one_request(gen: Generator, client: Client) -> tuple[str, str, int, bytes, str]:
    """Draw one request, send it; returns (method, path, status, body, content-type)."""
    rng = gen.rng
    res, version = rng.choice(gen.kinds)
    ns = rng.choice(NAMESPACES)
    base = "/" + ("api/" + version if not res.group else f"apis/{res.group}/{version}")
    coll = f"{base}/namespaces/{ns}/{res.resource}" if res.namespaced else f"{base}/{res.resource}"
    known = gen.made[coll]
    name = rng.choice(known) if known and rng.random() < 0.7 else \
        f"{rng.choice(NAMES).split('.')[0]}-{rng.randrange(10_000)}"
    obj = gen.object(res, version, name)
    broken = rng.random() < 0.5
    if broken:
        obj = gen.break_object(obj)
        if rng.random() < 0.5:
            gen.fault_at_leaf(obj, res, version)
    if rng.random() < 0.03:
        obj = rng.choice([[], "x", 5, None])  # not an object at all
    op = rng.randrange(12)
    q = gen.query()
    sub = ""
    if op in (7, 8) and res.subresource("status") is not None:
        sub = "/status"
    elif op == 9 and res.subresource("scale") is not None:
        sub = "/scale"
        obj = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": name},
               "spec": {"replicas": rng.choice([0, 1, 2, -1, "x", 2 ** 40])}}
    ctype = "application/json"
    if rng.random() < 0.08:
        ctype = rng.choice(CONTENT_TYPES)
    if op <= 2:  # create
        if ctype == "application/json" and rng.random() < 0.2:
            ctype = "application/yaml"
        method, path = "POST", coll + q
        data: Any = obj
    elif op <= 4 or sub in ("/status", "/scale") and op in (7, 9):  # replace
        method, path, data = "PUT", f"{coll}/{name}{sub}{q}", obj
    elif op in (5, 8):  # patches
        method, path = "PATCH", f"{coll}/{name}{sub}{q}"
        kind = rng.choice(["merge", "json", "strategic"])
        if ctype == "application/json":
            ctype = {"merge": "application/merge-patch+json",
                     "json": "application/json-patch+json",
                     "strategic": "application/strategic-merge-patch+json"}[kind]
        data = json_patch(rng, gen) if kind == "json" else (
            {k: v for k, v in obj.items() if k in ("metadata", "spec", "status")}
            if isinstance(obj, dict) else obj)
    elif op == 6:  # server-side apply
        method, path = "PATCH", f"{coll}/{name}{q or '?fieldManager=fuzz'}"
        if ctype == "application/json":
            ctype = "application/apply-patch+yaml"
        data = obj
    elif op == 10:  # delete
        method, path = "DELETE", f"{coll}/{name}{q}"
        data = rng.choice([None, {"propagationPolicy": rng.choice(
            ["Background", "Orphan", "Foreground", "x"])}, {"gracePeriodSeconds": rng.choice(
                [0, -1, "x", 30])}, {"preconditions": gen.junk()}, gen.junk()])
    else:  # reads with odd options, which share the option parsing
        method = "GET"
        params = rng.choice(["limit=-1", "limit=x", "resourceVersion=abc",
                             "resourceVersionMatch=Exact", "labelSelector=a%3D%3D", "limit=2",
                             "fieldSelector=metadata.name%3Dx", "resourceVersion=0",
                             "watch=true&timeoutSeconds=-1", "watch=true&timeoutSeconds=nan",
                             "resourceVersion=1&resourceVersionMatch=NotOlderThan"])
        path, data = f"{coll}?{params}", None
    body = None if data is None and method in ("GET", "DELETE") else gen.body(data, ctype)
    status, payload, rtype = client.request(method, path, body, ctype if body is not None
                                            else None)
    if method == "POST" and status == 201:
        try:
            made = json.loads(payload)["metadata"]["name"]
            known.append(made)
            del known[:-20]
        except (ValueError, KeyError, TypeError):
            pass
    return method, path, status, payload, rtype


def _reset_namespaces(client: Client, gen: Generator) -> None:
    for ns in NAMESPACES:
        client.request("DELETE", f"/api/v1/namespaces/{ns}")
    for _ in range(100):
        if all(client.request("GET", f"/api/v1/namespaces/{ns}")[0] == 404 for ns in NAMESPACES):
            break
        time.sleep(0.1)
    for ns in NAMESPACES:
        client.request("POST", "/api/v1/namespaces", json.dumps(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}).encode(),
            "application/json")
    gen.made.clear()


def fuzz(port: int, token: str, ctx: ssl.SSLContext, *, requests: int, seconds: float,
         seed: int, reset_every: int = 1000) -> Figures:
    """Run the fuzzer against a server on 127.0.0.1:``port``."""
    rng = random.Random(seed)
    gen = Generator(rng)
    client = Client(port, token, ctx)
    figures = Figures()
    started = time.monotonic()
    status = client.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                            json.dumps(WIDGETS_CRD).encode(), "application/json")[0]
    if status not in (201, 409):
        raise RuntimeError(f"the fuzzer's CRD was refused: {status}")
    _reset_namespaces(client, gen)
    while figures.requests < requests and time.monotonic() - started < seconds:
        if figures.requests and figures.requests % reset_every == 0:
            _reset_namespaces(client, gen)  # the simulation runs what was made: keep it small
        method, path, status, payload, rtype = one_request(gen, client)
        figures.requests += 1
        figures.statuses[status] += 1
        if status >= 500:
            figures.server_errors += 1
            figures.samples.append(f"{status} {method} {path[:100]}: {payload[:300]!r}")
        elif status >= 400:
            try:
                is_status = json.loads(payload).get("kind") == "Status"
            except (ValueError, AttributeError):
                is_status = False
            if not is_status and status != 431:
                figures.non_status_errors += 1
                figures.samples.append(f"{status} {method} {path[:100]} ({rtype}): "
                                       f"{payload[:200]!r}")
        if figures.requests % PROBE_EVERY == 0:
            _probe(rng, client, figures)
        ready, text, _ = client.request("GET", "/readyz")
        if ready != 200 or text != b"ok":
            figures.stopped_world += 1
            why = client.request("GET", "/readyz?verbose")[1]
            figures.samples.append(f"stopped world after {method} {path[:100]}: "
                                   f"{why[-300:]!r}")
    figures.seconds = time.monotonic() - started
    return figures


def _probe(rng: random.Random, client: Client, figures: Figures) -> None:
    """Reads of the derived APIs, a request with a bad token and one oracle input."""
    ns = rng.choice(NAMESPACES)
    for path in READS:
        status, payload, _ = client.request("GET", path.replace("NS", ns))
        if status >= 500:
            figures.server_errors += 1
            figures.samples.append(f"{status} GET {path}: {payload[:300]!r}")
    auth = rng.choice([False, "Bearer wrong", f"Bearer {client.token}x", "Basic eDp5", "Bearer "])
    status = client.request("GET", f"/api/v1/namespaces/{ns}/pods", auth=auth)[0]
    if status != 401:
        figures.token_bypasses += 1
        figures.samples.append(f"{status} for a request with Authorization {auth!r}")
    path, ctype, body, query = rng.choice(ORACLE)
    url = path.replace("NS", ns) + (f"?{query}" if query else "")
    status, payload, _ = client.request("POST", url, body, ctype)
    if status < 400 or status >= 500:
        figures.oracle_accepted += status < 400
        figures.server_errors += status >= 500
        figures.samples.append(f"oracle input answered {status}: POST {url} {body[:120]!r}")
        if status < 400:  # not left behind for the next draw
            name = json.loads(payload).get("metadata", {}).get("name", "")
            client.request("DELETE", f"{path.replace('NS', ns)}/{name}")


def run_against_new_server(requests: int, seconds: float, seed: int) -> Figures:
    # The benchmarks' `pyhpa cluster` process (bench/ is on sys.path when this runs as a script).
    from bench_cluster import Server

    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp))
        try:
            figures = fuzz(server.port, server.token, server.ctx, requests=requests,
                           seconds=seconds, seed=seed)
        finally:
            server.stop()
        figures.tracebacks = server.log_text().count("Traceback (most recent call last)")
        if figures.tracebacks:
            at = server.log_text().index("Traceback (most recent call last)")
            figures.samples.append("server log: " + server.log_text()[at:at + 1500])
        return figures


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=600.0, help="stop after this long")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    figures = run_against_new_server(args.requests, args.seconds, args.seed)
    print("\n".join(figures.lines()))
    return 0 if figures.ok() else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
