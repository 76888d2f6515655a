"""The OpenAPI documents kubectl fetches: ``/openapi/v3`` (an index plus one document per
group-version) and ``/openapi/v2`` (gnostic protobuf).

What kubectl does with them (k8s.io/kubectl's query-param verifier): ``create``/``apply``/``edit``/``replace``
look for a PATCH operation of the object's group-version-kind with a ``fieldValidation``
parameter; finding one, they send ``fieldValidation=Strict`` and leave validation to the server.
``explain`` renders the kind's schema (v3 on 1.28+, v2 on 1.27), and client-side ``apply`` reads
the list markers (merge keys, patch strategies) of the schema to compute its patch. So every
served kind gets a PATCH operation and a complete schema (:mod:`pyhpa.api.schemas`).

:class:`Documents` builds them once per server and keeps the encoded bytes until something
changes. Kinds that are not built in (served CRDs) publish a schema with
:meth:`Documents.contribute`; a served kind without any schema gets an open one.
"""

from __future__ import annotations

import copy
import hashlib
import threading
from collections.abc import Container
from typing import Any

import msgspec

from pyhpa.cluster.apiserver import gnostic
from pyhpa.cluster.apiserver.resources import Registry, Resource
from pyhpa.api.schemas import BuiltinSchemas, references
from pyhpa.api.schemas.build import (
    GVK, META, PRESERVE, Schema, list_of, ref, ref_name, top_level)
from pyhpa.api.schemas.pyhpa_kinds import schema_name
from pyhpa.api.versions import VersionProfile

V2_CONTENT_TYPE = gnostic.V2_CONTENT_TYPE
SCALE = "io.k8s.api.autoscaling.v1.Scale"
_PARAMS = (
    ("fieldValidation", "How the server treats unknown or duplicate fields: Ignore, Warn or "
                        "Strict (reject)."),
    ("dryRun", "All: validate and report the result without storing it."),
    ("fieldManager", "Name of the client making the change, recorded in managedFields."),
    ("force", "Server-side apply only: take over fields owned by other managers."),
)
_PATCH_TYPES = ("application/apply-patch+yaml", "application/json-patch+json",
                "application/merge-patch+json")
_STRATEGIC = "application/strategic-merge-patch+json"
# Definitions every group-version document carries (its operations use them).
_COMMON = (META + "Patch", META + "Status", META + "DeleteOptions")


def gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _item_path(res: Resource, version: str) -> str:
    base = "/" + gv_path(res.group, version)
    if res.namespaced:
        return f"{base}/namespaces/{{namespace}}/{res.resource}/{{name}}"
    return f"{base}/{res.resource}/{{name}}"


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "kind": kind, "version": version}


def _open_schema(res: Resource, version: str) -> Schema:
    """What a served kind without a published schema gets: any content is accepted."""
    s = top_level(res.description or f"{res.kind} objects.", res.group, version, res.kind, {})
    s[PRESERVE] = True
    return s


def _crd_schema(group: str, version: str, kind: str, schema: Schema) -> Schema:
    """A contributed whole-object schema with upstream's CRD touches: apiVersion, kind and
    metadata described, ObjectMeta referenced, and the group-version-kind extension."""
    s = copy.deepcopy(schema)
    s.setdefault("type", "object")
    base = top_level(s.get("description") or f"{kind} objects.", group, version, kind, {})
    props = s.setdefault("properties", {})
    for key in ("apiVersion", "kind", "metadata"):
        props[key] = base["properties"][key]
    s.setdefault("description", base["description"])
    s[GVK] = base[GVK]
    return s


class Documents:
    """The OpenAPI documents of one server's registry, built on first use and then cached.

    ``skip`` holds (group, version) pairs served by other handlers (the metrics APIs), which
    publish no documents. :meth:`contribute`/:meth:`withdraw` change the schema of one kind
    (a served CRD) and drop the cached documents.
    """

    def __init__(self, registry: Registry, server_version: str, schemas: BuiltinSchemas,
                 skip: Container[tuple[str, str]] = ()) -> None:
        self.registry = registry
        self.server_version = server_version
        self.schemas = schemas
        self.skip = skip
        self._contributed: dict[tuple[str, str, str], Schema] = {}
        self._lock = threading.Lock()
        self._v2: bytes | None = None
        self._v3: dict[str, bytes] | None = None
        self._index: bytes | None = None

    # ---- the extension point
    def contribute(self, group: str, version: str, kind: str, schema: Schema) -> None:
        """Publish ``schema`` (an OpenAPI v3 schema of the whole object, as in a CRD's
        ``openAPIV3Schema``) as the schema of group/version/kind. Takes a copy."""
        with self._lock:
            self._contributed[(group, version, kind)] = _crd_schema(group, version, kind, schema)
            self._drop()

    def withdraw(self, group: str, version: str, kind: str) -> None:
        """Stop publishing a contributed schema (the kind falls back to its built-in schema, or
        to an open one while it is still served)."""
        with self._lock:
            if self._contributed.pop((group, version, kind), None) is not None:
                self._drop()

    def invalidate(self) -> None:
        """The registry changed: rebuild the documents on next use."""
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        self._v2 = self._v3 = self._index = None

    # ---- the served forms
    def v2(self) -> bytes:
        with self._lock:
            if self._v2 is None:
                self._v2 = gnostic.encode_document(self._swagger())
            return self._v2

    def v3_index(self) -> bytes:
        with self._lock:
            self._build_v3()
            assert self._index is not None
            return self._index

    def v3(self, path: str) -> bytes | None:
        """The document of ``path`` (``apis/autoscaling/v2``, ``api/v1``), or None."""
        with self._lock:
            self._build_v3()
            assert self._v3 is not None
            return self._v3.get(path)

    def _build_v3(self) -> None:
        if self._v3 is not None:
            return
        docs = {gv_path(g, v): msgspec.json.encode(self.v3_document(g, v))
                for g, v in self._group_versions()}
        index = {}
        for path, body in docs.items():
            digest = hashlib.sha512(body).hexdigest()[:128].upper()
            index[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
        self._v3 = docs
        self._index = msgspec.json.encode({"paths": index})

    # ---- content
    def _group_versions(self) -> list[tuple[str, str]]:
        return [(g, v) for g, versions in self.registry.groups() for v in versions
                if (g, v) not in self.skip]

    def _kind(self, res: Resource, version: str, extra: dict[str, Schema]) -> tuple[str, bool]:
        """Definition name of a served kind (adding non-built-in schemas to ``extra``) and
        whether it is a native kind (native kinds accept strategic merge patches)."""
        key = (res.group, version, res.kind)
        if key in self._contributed:
            name = schema_name(*key)
            extra[name] = self._contributed[key]
            return name, False
        name = self.schemas.kinds.get(key)
        if name is not None:
            return name, name.startswith("io.k8s.")
        name = schema_name(*key)
        extra[name] = _open_schema(res, version)
        return name, False

    def _group_version(self, group: str, version: str) -> tuple[dict[str, Any], dict[str, Schema]]:
        """(paths, definitions) of one group-version, references as in OpenAPI v3."""
        extra: dict[str, Schema] = {}
        paths: dict[str, Any] = {}
        for res in self.registry.in_group_version(group, version):
            name, native = self._kind(res, version, extra)
            extra[name + "List"] = list_of(name, group, version, res.kind)
            item = _item_path(res, version)
            paths[item] = {"patch": _patch_op(res.kind, _gvk(group, version, res.kind), name,
                                              native, res.namespaced)}
            if res.subresource("scale") is not None:
                paths[item + "/scale"] = {"patch": _patch_op(
                    res.kind + "Scale", _gvk("autoscaling", "v1", "Scale"), SCALE, native,
                    res.namespaced)}
        defs = _closure(extra, self.schemas.definitions, list(extra) + [r for p in paths.values()
                                              for r in references(p)] + list(_COMMON))
        return paths, defs

    def v3_document(self, group: str, version: str) -> dict[str, Any]:
        paths, defs = self._group_version(group, version)
        return {"openapi": "3.0.0",
                "info": {"title": "Kubernetes", "version": self.server_version},
                "paths": paths, "components": {"schemas": defs}}

    def _swagger(self) -> dict[str, Any]:
        paths: dict[str, Any] = {}
        defs: dict[str, Schema] = {}
        for g, v in self._group_versions():
            p, d = self._group_version(g, v)
            paths.update(p)
            defs.update(d)
        return {"swagger": "2.0",
                "info": {"title": "Kubernetes", "version": self.server_version},
                "paths": {k: {verb: _v2_operation(op) for verb, op in item.items()}
                          for k, item in paths.items()},
                "definitions": {k: to_v2(s) for k, s in sorted(defs.items())}}


def _patch_op(kind: str, gvk: dict[str, str], schema: str, native: bool,
              namespaced: bool) -> dict[str, Any]:
    scope = "Namespaced" if namespaced else ""
    types = _PATCH_TYPES + ((_STRATEGIC,) if native else ())
    body = {"content": {t: {"schema": ref(META + "Patch")} for t in sorted(types)},
            "required": True}
    ok = {"content": {"application/json": {"schema": ref(schema)}}}
    return {
        "description": f"partially update the specified {kind}",
        "operationId": f"patch{scope}{kind}",
        "parameters": [{"name": n, "in": "query", "description": d,
                        "schema": {"type": "string", "uniqueItems": True}} for n, d in _PARAMS],
        "requestBody": body,
        "responses": {"200": {"description": "OK", **ok},
                      "201": {"description": "Created", **ok}},
        "x-kubernetes-action": "patch",
        "x-kubernetes-group-version-kind": gvk,
    }


def _v2_operation(op: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in op.items() if k not in ("requestBody", "responses", "parameters")}
    out["consumes"] = sorted(op["requestBody"]["content"])
    out["parameters"] = [{"name": p["name"], "in": p["in"], "description": p["description"],
                          "type": "string", "uniqueItems": True} for p in op["parameters"]]
    out["responses"] = {
        code: {"description": r["description"],
               **({"schema": to_v2(r["content"]["application/json"]["schema"])}
                  if "content" in r else {})}
        for code, r in op["responses"].items()}
    return out


def _closure(local: dict[str, Schema], known: dict[str, Schema],
             roots: list[str]) -> dict[str, Schema]:
    """``roots`` and every definition they reference, from ``local`` first, then ``known``."""
    out: dict[str, Schema] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        schema = local.get(name) or known.get(name)
        if schema is None:
            raise KeyError(f"OpenAPI definition {name!r} is referenced but not defined")
        out[name] = schema
        todo.extend(references(schema))
    return dict(sorted(out.items()))


_V2_DROP = frozenset({"nullable", "oneOf", "anyOf", "not", "default"})


def to_v2(schema: Any) -> Any:
    """An OpenAPI v3 schema in Swagger 2.0 form: references into ``#/definitions``, a one-element
    ``allOf`` folded into ``$ref`` (v2 readers do not resolve allOf), a ``oneOf`` of primitive
    types published as its string type, and v3-only keywords dropped."""
    if isinstance(schema, list):
        return [to_v2(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    target = ref_name(schema)
    if target is not None:
        out["$ref"] = "#/definitions/" + target
    elif "oneOf" in schema and "type" not in schema:
        types = [alt.get("type") for alt in schema["oneOf"] if isinstance(alt, dict)]
        if types and all(isinstance(t, str) for t in types):
            out["type"] = "string" if "string" in types else types[0]
    for key, value in schema.items():
        if key in _V2_DROP or key == "$ref" or (key == "allOf" and target is not None):
            continue
        if key == "properties":
            out[key] = {k: to_v2(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "allOf"):
            out[key] = to_v2(value)
        else:
            out[key] = value
    if out.get("type") == "array" and "items" not in out:
        out["items"] = {}
    return out



def as_released(schemas: BuiltinSchemas, profile: VersionProfile) -> BuiltinSchemas:
    """The schemas as the emulated release publishes them: without the autoscaling/v2 HPA
    fields it does not have (``tolerance`` before 1.33; pyhpa's own fields with their gates
    off), so ``kubectl explain`` under ``--emulated-version 1.27`` lists what 1.27 lists.
    The definitions it changes are copies; the others are shared."""
    paths = profile.unknown_hpa_fields()
    root = schemas.of_kind("autoscaling", "v2", "HorizontalPodAutoscaler")
    if not paths or root is None:
        return schemas
    defs = dict(schemas.definitions)
    copied: set[str] = set()
    for path in paths:
        name, schema, at_definition = root, defs.get(root), True
        for seg in path[:-1]:  # down the definitions (and list items) to the field's parent
            sub = None if schema is None else \
                schema.get("items") if seg == "*" else (schema.get("properties") or {}).get(seg)
            target = ref_name(sub) if isinstance(sub, dict) else None
            schema = defs.get(target) if target is not None else sub
            name, at_definition = target or name, target is not None
        if schema is None or not at_definition or path[-1] not in (schema.get("properties") or {}):
            continue  # not a field of a definition here (or already gone)
        if name not in copied:
            defs[name] = copy.deepcopy(defs[name])
            copied.add(name)
        del defs[name]["properties"][path[-1]]
        required = defs[name].get("required")
        if required and path[-1] in required:
            required.remove(path[-1])
    return BuiltinSchemas(defs, schemas.kinds)
