"""The fuzzer's request generator (``bench/fuzz_apiserver.py`` drives it).

Objects of every served kind are built from the kind's published schema (mostly well-formed), then
broken on purpose in two ways: structural faults (bad names and labels, unknown fields, deep
nesting, bodies that are not JSON), and a *leaf fault*: a weighted walk from the kind's root
schema down to one leaf (any depth: a container's ``resources.requests.cpu`` is 8 levels down a
Deployment) that is given a value of the wrong type, null, out of range, huge or tiny, empty or
odd unicode. Requests are creates, updates, merge / strategic / JSON patches, server-side applies,
status and scale writes, deletes and reads with odd options.
"""

from __future__ import annotations

import collections
import json
import random
import re
from typing import Any

Obj = dict[str, Any]
NAMESPACES = ("fuzz-a", "fuzz-b")
DEEP = "__deep__"  # a string body() turns into that many nested arrays
RAW = "__raw__"  # a string body() writes unquoted: a JSON number no float can hold
KIND_SKIP = {"Node", "Namespace"}  # cluster-wide: fuzzed through names only, never broken
NAMES = ("web", "api", "a", "x-1", "db.main", "q0")
BAD_NAMES = ("", "Web", "a/../B_", "a b", "-a", "a" * 300, "..", "名前", "a_b", "a" * 64)
BAD_LABEL_KEYS = ("a/b/c", "/x", "x/", "-a", "a" * 64, "é", "")
ODD_STRINGS = ("", " ", "\u0000", "\ud83d\ude00", "x" * 5000, "\\", '"', "null", "1e309",
               "-0", "\u202e", "a\nb")
MAX_LEAF_DEPTH = 14  # deeper than any built-in kind's leaves; stops recursive definitions
# Leaf faults by the leaf's type (plus COMMON_FAULTS for every leaf).
COMMON_FAULTS = (None, "", [], {}, True, "名前\u202e", "\ud83d\ude00", -1)
LEAF_FAULTS: dict[str, tuple[Any, ...]] = {
    "string": (123, 1.5, "\u0000", "1e309", "x" * 3000, " ", "-1", "a\nb"),
    "integer": (-1, 2 ** 31, 2 ** 63, -(2 ** 63) - 1, 2 ** 64, 1.5, "1", "x", RAW + "1e309",
                RAW + "-1e309", RAW + "1e-400", 1e308, -0.0, 0),
    "number": (-1, 2 ** 63, RAW + "1e309", RAW + "1e-400", "x", 1e308, -1e308),
    "boolean": ("true", 1, "x", 0),
    "quantity": ("1e309", "1e308", "-1e309", "1e-309", "-1", "0.0000000001", "1.5.5", "x",
                 "9223372036854775807", "99999999999999999999Ei", "1e18E", 1e308, -1, 2 ** 63,
                 RAW + "1e309", "+1", "1Zi", "NaN", "Infinity"),
    "intorstring": (-1, "x", "-1%", "999999999999%", 2 ** 63, 1.5, "1e309", "%", "0x10"),
    "time": ("x", "9999-99-99T00:00:00Z", 0, "1970-01-01T00:00:00Z", "10000-01-01T00:00:00Z",
             "2024-05-01T12:00:00+99:00", 1e308),
    "object": ("x", 1, RAW + "1e309", {"unknownField": {"a": [None]}}),
    "array": ("x", 1, {}, [None], [[]], [1, "x", None]),
}
HUGE = (RAW + "1e309", "1e309", "1e308", "-1e309", "1e-309", RAW + "1e-400", 2 ** 63, 2 ** 64,
        -(2 ** 63) - 1, 1e308, "9223372036854775807", "1E18", "999999999999999999999")
CONTENT_TYPES = ("application/json", "application/yaml", "text/plain", "",
                 "application/json-patch+json", "application/merge-patch+json",
                 "application/strategic-merge-patch+json", "application/apply-patch+yaml",
                 "application/vnd.kubernetes.protobuf", "*/*")
LEAF_WEIGHTS = {"quantity": 3, "intorstring": 3, "integer": 3, "number": 3, "time": 2}
MAP_KEYS = ("cpu", "memory", "app", "x", "nvidia.com/gpu", "ephemeral-storage")


def leaf_kind(name: str | None, schema: Obj) -> str:
    from pyhpa.api.schemas.build import INT_OR_STRING, MICRO_TIME, QUANTITY, TIME
    if name == QUANTITY:
        return "quantity"
    if name == INT_OR_STRING:
        return "intorstring"
    if name in (TIME, MICRO_TIME):
        return "time"
    return str(schema.get("type") or "object")


class Generator:
    """Objects and requests from the served kinds' schemas, seeded."""

    def __init__(self, rng: random.Random, widgets_crd: Obj) -> None:
        from pyhpa.api.schemas import BuiltinSchemas
        from pyhpa.cluster.apiserver.crd import resources_for
        from pyhpa.cluster.apiserver.resources import Registry

        self.rng = rng
        self.schemas = BuiltinSchemas.build()
        self.kinds = [(res, v) for res in Registry().resources for v in res.versions
                      if "create" in res.verbs and res.kind not in KIND_SKIP
                      and self.schemas.of_kind(res.group, v, res.kind) is not None]
        self.kinds += [(res, res.versions[0]) for res in resources_for(widgets_crd)]
        self.made: dict[str, list[str]] = collections.defaultdict(list)  # path -> names
        self.leaves: dict[tuple[str, str], list[tuple[tuple[Any, ...], str]]] = {}

    # ---- the schema of a kind
    def root_schema(self, res: Any, version: str) -> Obj:
        from pyhpa.api.schemas.build import ref
        defn = self.schemas.of_kind(res.group, version, res.kind)
        return ref(defn) if defn else (res.extra.get("schema") or {})

    def resolve(self, schema: Obj) -> tuple[str | None, Obj]:
        from pyhpa.api.schemas.build import ref_name
        name = None
        target = ref_name(schema)
        while target is not None:
            name = target
            schema = self.schemas.definitions.get(target, {})
            target = ref_name(schema)
        return name, schema

    def leaf_paths(self, res: Any, version: str) -> list[tuple[tuple[Any, ...], str]]:
        """Every (path, leaf type) of the kind's schema; ``0`` is an array item, ``"*"`` a map
        key. Built once per kind and generator."""
        key = (res.resource + "." + res.group, version)
        if key not in self.leaves:
            out: list[tuple[tuple[Any, ...], str]] = []
            self._walk(self.root_schema(res, version), (), (), out)
            self.leaves[key] = [(p, k) for p, k in out if p[:1] not in (("apiVersion",),
                                                                        ("kind",))]
        return self.leaves[key]

    def _walk(self, schema: Obj, path: tuple[Any, ...], seen: tuple[str, ...],
              out: list[tuple[tuple[Any, ...], str]]) -> None:
        name, schema = self.resolve(schema)
        kind = leaf_kind(name, schema)
        if name in seen or len(path) >= MAX_LEAF_DEPTH:
            out.append((path, kind))
            return
        seen = seen + (name,) if name else seen
        if path:
            out.append((path, kind))  # an inner node is a place for a fault too
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        if kind == "array" and isinstance(schema.get("items"), dict):
            self._walk(schema["items"], path + (0,), seen, out)
        for prop, sub in props.items():
            self._walk(sub, path + (prop,), seen, out)
        if isinstance(extra, dict):
            self._walk(extra, path + ("*",), seen, out)

    def leaf_fault(self, obj: Obj, res: Any, version: str, under: str | None = None
                   ) -> tuple[list[Any], Any]:
        """Set one leaf (or inner node) of ``obj`` to a fault; returns (concrete path, value).
        Leaves are drawn half by weight (numbers and quantities, where overflows hide, count
        thrice, ObjectMeta's a quarter; deep subtrees hold most leaves) and half by depth (every
        depth alike); a numeric leaf gets a huge or tiny number a third of the time."""
        rng = self.rng
        leaves = self.leaf_paths(res, version)
        if under is not None:
            leaves = [lf for lf in leaves if lf[0][:1] == (under,)] or leaves
        if rng.random() < 0.5:
            weights = [LEAF_WEIGHTS.get(k, 1) * (0.25 if p[0] == "metadata" else 1)
                       for p, k in leaves]
            path, kind = rng.choices(leaves, weights)[0]
        else:
            depth = rng.randint(1, max(len(p) for p, _ in leaves))
            at = [lf for lf in leaves if len(lf[0]) == depth] or leaves
            if rng.random() < 0.75:  # ObjectMeta's leaves are every kind's: favour the kind's
                at = [lf for lf in at if lf[0][0] != "metadata"] or at
            path, kind = rng.choice(at)
        if kind in LEAF_WEIGHTS and rng.random() < 0.3:
            value = rng.choice(HUGE)
        else:
            value = rng.choice(LEAF_FAULTS.get(kind, ()) + COMMON_FAULTS)
        return self.set_path(obj, path, value), value

    def set_path(self, obj: Obj, path: tuple[Any, ...], value: Any) -> list[Any]:
        """Materialize ``path`` in ``obj`` (existing list items and map keys preferred) and set
        its end to ``value``; returns the concrete path."""
        rng = self.rng
        cur: Any = obj
        concrete: list[Any] = []
        for i, step in enumerate(path):
            last = i == len(path) - 1
            nxt = path[i + 1] if not last else None
            fresh: Any = [] if nxt == 0 else {}
            if step == 0:
                if not isinstance(cur, list):
                    return concrete
                if not cur or rng.random() < 0.1:
                    cur.append(fresh)
                idx = rng.randrange(len(cur))
                concrete.append(idx)
                if last:
                    cur[idx] = value
                elif not isinstance(cur[idx], (dict, list)):
                    cur[idx] = fresh
                cur = cur[idx]
                continue
            if not isinstance(cur, dict):
                return concrete
            key = step
            if step == "*":
                key = rng.choice(list(cur)) if cur and rng.random() < 0.7 else rng.choice(MAP_KEYS)
            concrete.append(key)
            if last:
                cur[key] = value
            else:
                if not isinstance(cur.get(key), (dict, list)) or \
                        isinstance(cur.get(key), list) != (nxt == 0):
                    cur[key] = fresh
                cur = cur[key]
        return concrete

    # ---- values from a schema
    def value(self, schema: Obj, depth: int) -> Any:
        rng = self.rng
        name, schema = self.resolve(schema)
        kind = leaf_kind(name, schema)
        if kind == "quantity":
            return rng.choice(["1", "100m", "2Gi", "0.5", 3, "1e3", "500Mi"])
        if kind == "intorstring":
            return rng.choice([1, 8080, "25%", "http"])
        if kind == "time":
            return "2024-05-01T12:00:00Z"
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
            if not isinstance(items, dict) or depth > 8:
                return []
            return [self.value(items, depth + 1) for _ in range(rng.randint(0, 2))]
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        out: Obj = {}
        keep = 0.7 / (depth + 1)
        for key, sub in props.items():
            if (key in (schema.get("required") or ()) or rng.random() < keep) and depth < 8:
                out[key] = self.value(sub, depth + 1)
        if isinstance(extra, dict) and depth < 8:
            for _ in range(rng.randint(0, 2)):
                out[rng.choice(NAMES)] = self.value(extra, depth + 1)
        return out

    def object(self, res: Any, version: str, name: str) -> Obj:
        """A mostly well-formed object of ``res``: schema-made, then given what its kind's
        validation wants (selectors matching templates, containers with images, small
        replica counts)."""
        rng = self.rng
        obj = self.value(self.root_schema(res, version), 0)
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

    # ---- structural faults
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
        """One to three deliberate structural faults in ``obj``."""
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
        rng = self.rng
        cur = obj
        for _ in range(rng.randint(1, 10)):
            if isinstance(cur, dict) and cur:
                key = rng.choice(list(cur))
                if rng.random() < 0.2 or not isinstance(cur[key], (dict, list)):
                    cur[key] = value
                    return
                cur = cur[key]
            elif isinstance(cur, list) and cur:
                i = rng.randrange(len(cur))
                if rng.random() < 0.2 or not isinstance(cur[i], (dict, list)):
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
        text = encode(data)
        roll = rng.random()
        if roll < 0.03:
            return text[: rng.randrange(len(text) + 1)].encode()  # cut short
        if roll < 0.05:
            return text.replace('"', '"\\ud800', 1).encode()  # a lone surrogate escape
        if roll < 0.06:
            return bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))
        if roll < 0.07:
            return b"a: &a [x,x,x,x,x,x,x,x,x]\n" + b"".join(
                f"{b}: &{b} [*{a},*{a},*{a},*{a},*{a},*{a},*{a},*{a},*{a}]\n".encode()
                for a, b in zip("abcdefg", "bcdefgh"))
        if roll < 0.08:
            return b"\xef\xbb\xbf" + text.encode()  # a UTF-8 byte order mark
        if roll < 0.09:
            return text.encode(rng.choice(["utf-16", "utf-16-le", "utf-32"]))
        if roll < 0.12 and text.startswith("{") and len(text) > 2:
            key = rng.choice(['"metadata": {"name": "dup"}', '"kind": "ConfigMap"',
                              '"spec": null', '"apiVersion": "v1"'])
            return ("{" + key + ", " + text[1:]).encode()  # a duplicate key
        return text.encode()

    def query(self) -> str:
        rng = self.rng
        params = []
        if rng.random() < 0.1:
            params.append("dryRun=" + rng.choice(["All", "Al", "", "all"]))
        if rng.random() < 0.2:
            params.append("fieldValidation=" + rng.choice(["Strict", "Warn", "Ignore", "x", ""]))
        if rng.random() < 0.2:
            params.append("fieldManager=" + rng.choice(["fuzz", "a" * 200, "%01", ""]))
        if rng.random() < 0.05:
            params.append("force=" + rng.choice(["true", "false", "x"]))
        return ("?" + "&".join(params)) if params else ""


def encode(data: Any) -> str:
    """JSON text of ``data`` (also YAML), with the DEEP and RAW markers spliced in."""
    text = json.dumps(data, allow_nan=True)
    text = re.sub(f'"{DEEP}(\\d+)"', lambda m: "[" * int(m.group(1)) + "1"
                  + "]" * int(m.group(1)), text)
    return re.sub(f'"{RAW}([-+0-9.eE]+)"', lambda m: m.group(1), text)


def pointer(path: list[Any]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


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


def collection(res: Any, version: str, ns: str) -> str:
    base = "/" + ("api/" + version if not res.group else f"apis/{res.group}/{version}")
    return f"{base}/namespaces/{ns}/{res.resource}" if res.namespaced else f"{base}/{res.resource}"


def draw(gen: Generator) -> tuple[Any, str, str, bytes | None, str | None]:
    """One request: (resource, method, path, body, content type)."""
    rng = gen.rng
    res, version = rng.choice(gen.kinds)
    coll = collection(res, version, rng.choice(NAMESPACES))
    known = gen.made[coll]
    name = rng.choice(known) if known and rng.random() < 0.7 else \
        f"{rng.choice(NAMES).split('.')[0]}-{rng.randrange(10_000)}"
    obj: Any = gen.object(res, version, name)
    op = rng.randrange(14)
    sub = ""
    if op in (7, 8, 12) and res.subresource("status") is not None:
        sub = "/status"
    elif op in (9, 13) and res.subresource("scale") is not None:
        sub = "/scale"
        obj = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": name},
               "spec": {"replicas": rng.choice([0, 1, 2])}}
    leaf: list[Any] | None = None
    roll = rng.random()
    if sub == "/scale":
        if roll < 0.6:
            gen.set_path(obj, rng.choice([("spec", "replicas"), ("spec",), ("status", "replicas"),
                                          ("status", "selector"), ("metadata", "name")]),
                         rng.choice(LEAF_FAULTS["integer"] + COMMON_FAULTS))
    elif roll < 0.45:
        under = "status" if sub == "/status" else None
        if under:
            obj["status"] = gen.value(gen.resolve(gen.root_schema(res, version))[1]
                                      .get("properties", {}).get("status", {}), 1)
        leaf, _ = gen.leaf_fault(obj, res, version, under)
    elif roll < 0.7:
        obj = gen.break_object(obj)
    if rng.random() < 0.02:
        obj = rng.choice([[], "x", 5, None])  # not an object at all
    q = gen.query()
    ctype = "application/json"
    if rng.random() < 0.05:
        ctype = rng.choice(CONTENT_TYPES)
    data: Any = obj
    if op <= 2 and not sub:  # create
        if ctype == "application/json" and rng.random() < 0.2:
            ctype = "application/yaml"
        method, path = "POST", coll + q
    elif op <= 4 or op in (7, 9):  # replace
        method, path = "PUT", f"{coll}/{name}{sub}{q}"
    elif op in (5, 8, 12, 13):  # patches
        method, path = "PATCH", f"{coll}/{name}{sub}{q}"
        kind = rng.choice(["merge", "json", "strategic"])
        if ctype == "application/json":
            ctype = {"merge": "application/merge-patch+json",
                     "json": "application/json-patch+json",
                     "strategic": "application/strategic-merge-patch+json"}[kind]
        if kind == "json":
            data = json_patch(rng, gen) if leaf is None or rng.random() < 0.3 else [
                {"op": rng.choice(["add", "replace"]), "path": pointer(leaf),
                 "value": _at(obj, leaf)}]
        elif isinstance(obj, dict):
            data = {k: v for k, v in obj.items() if k in ("metadata", "spec", "status")}
    elif op == 6:  # server-side apply
        method, path = "PATCH", f"{coll}/{name}{sub}{q or '?fieldManager=fuzz'}"
        if ctype == "application/json":
            ctype = "application/apply-patch+yaml"
    elif op == 10:  # delete
        method, path = "DELETE", f"{coll}/{name}{q}"
        data = rng.choice([None, {"propagationPolicy": rng.choice(
            ["Background", "Orphan", "Foreground", "x"])}, {"gracePeriodSeconds": rng.choice(
                [0, -1, "x", 30])}, {"preconditions": gen.junk()}, gen.junk()])
    else:  # reads with odd options, which share the option parsing
        method, data = "GET", None
        path = coll + "?" + rng.choice([
            "limit=-1", "limit=x", "resourceVersion=abc", "resourceVersionMatch=Exact",
            "labelSelector=a%3D%3D", "limit=2", "fieldSelector=metadata.name%3Dx",
            "resourceVersion=0", "watch=true&timeoutSeconds=-1", "watch=true&timeoutSeconds=nan",
            "resourceVersion=1&resourceVersionMatch=NotOlderThan", "continue=x", "limit=1"])
    body = None if data is None and method in ("GET", "DELETE") else gen.body(data, ctype)
    return res, method, path, body, (ctype if body is not None else None)


def _at(obj: Any, path: list[Any]) -> Any:
    for step in path:
        try:
            obj = obj[step]
        except (KeyError, IndexError, TypeError):
            return None
    return obj
