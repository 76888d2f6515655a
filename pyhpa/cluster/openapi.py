"""The OpenAPI documents kubectl fetches before create/apply/edit/replace.

Why stubs: kubectl only needs to learn that the server validates fields itself (a PATCH operation
per kind carrying the group-version-kind extension and a ``fieldValidation`` query parameter);
it then sends ``fieldValidation=Strict`` and skips client-side schema checks
(kubectl-protocol.md §6). 1.29+ read the v3 JSON index and per-group-version documents; 1.27/1.28
read ``/openapi/v2`` as gnostic protobuf, which we hand-encode. Where a kind has a msgspec model
(the HPA), its JSON schema is included so ``kubectl explain`` has something to show.
"""

from __future__ import annotations

import copy
import hashlib
from functools import lru_cache
from typing import Any

import msgspec

from pyhpa.cluster.protobuf import field_bytes
from pyhpa.cluster.resources import Registry, Resource

V2_CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
_PARAMS = ("fieldValidation", "dryRun", "fieldManager", "force")


def gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _item_path(res: Resource, version: str) -> str:
    base = "/" + gv_path(res.group, version)
    if res.namespaced:
        return f"{base}/namespaces/{{namespace}}/{res.resource}/{{name}}"
    return f"{base}/{res.resource}/{{name}}"


def _gvk(res: Resource, version: str) -> dict[str, str]:
    return {"group": res.group, "version": version, "kind": res.kind}


def _schema_name(res: Resource, version: str) -> str:
    group = res.group or "core"
    return f"io.k8s.api.{group}.{version}.{res.kind}"


def _model_schema(res: Resource, version: str) -> dict[str, Any] | None:
    """A JSON schema for kinds that have a msgspec model (HPA), for `kubectl explain`."""
    if res.kind != "HorizontalPodAutoscaler":
        return None
    try:
        from pyhpa.api import types
        model = types.HorizontalPodAutoscaler if version == "v2" else types.HorizontalPodAutoscalerV1
        return _hpa_schema(model)
    except Exception:  # noqa: BLE001 - explain is best-effort; validation must not depend on it
        return None


@lru_cache(maxsize=4)
def _hpa_schema(model: type) -> dict[str, Any]:
    schema = msgspec.json.schema(model, schema_hook=_schema_hook,
                                 ref_template="#/components/schemas/{name}")
    return schema


def _schema_hook(t: type) -> dict[str, Any]:
    # Quantities are strings or numbers on the wire.
    return {"oneOf": [{"type": "string"}, {"type": "number"}],
            "x-kubernetes-int-or-string": True}


def v3_document(registry: Registry, group: str, version: str, server_version: str) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for res in registry.in_group_version(group, version):
        gvk = _gvk(res, version)
        params = [{"name": p, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
                  for p in _PARAMS]
        ref_name = _schema_name(res, version)
        model = custom_resource_schema(res) or _model_schema(res, version)
        content: dict[str, Any] = {}
        if model is not None:
            defs = model.pop("$defs", {}) if "$defs" in model else {}
            for name, d in defs.items():
                schemas.setdefault(name, d)
            top = dict(model)
            if "$ref" in top:
                name = top["$ref"].rsplit("/", 1)[1]
                top = dict(schemas.pop(name, {}))
            top["x-kubernetes-group-version-kind"] = [gvk]
            schemas[ref_name] = top
            content = {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref_name}"}}}
        op = {"operationId": f"patch{res.kind}", "x-kubernetes-action": "patch",
              "x-kubernetes-group-version-kind": gvk, "parameters": params,
              "responses": {"200": {"description": "OK", **({"content": content} if content else {})}}}
        paths[_item_path(res, version)] = {"patch": op}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": server_version},
            "paths": paths, "components": {"schemas": schemas}}


def v3_index(registry: Registry, documents: dict[str, bytes]) -> dict[str, Any]:
    """The /openapi/v3 index; ``documents`` maps a gv path to its encoded document (for hashes)."""
    out = {}
    for path, body in documents.items():
        digest = hashlib.sha512(body).hexdigest()[:128].upper()
        out[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": out}


def v2_protobuf(registry: Registry, server_version: str) -> bytes:
    """The gnostic openapi.v2.Document with one PATCH operation per served kind and version."""
    info = field_bytes(1, "Kubernetes") + field_bytes(2, server_version)
    paths = bytearray()
    for group, versions in registry.groups():
        for version in versions:
            for res in registry.in_group_version(group, version):
                params = b""
                for p in _PARAMS:
                    q = field_bytes(2, "query") + field_bytes(4, p) + field_bytes(6, "string")
                    nbp = field_bytes(3, q)
                    param = field_bytes(2, nbp)
                    params += field_bytes(8, field_bytes(1, param))
                gvk_yaml = f'group: "{res.group}"\nversion: {version}\nkind: {res.kind}\n'
                ext = field_bytes(13, field_bytes(1, "x-kubernetes-group-version-kind")
                                  + field_bytes(2, field_bytes(2, gvk_yaml)))
                op = field_bytes(5, f"patch{res.kind}") + params + field_bytes(9, b"") + ext
                item = field_bytes(8, op)
                named = field_bytes(1, _item_path(res, version)) + field_bytes(2, item)
                paths += field_bytes(2, named)
    return field_bytes(1, "2.0") + field_bytes(2, info) + field_bytes(8, bytes(paths))


def custom_resource_schema(res: Resource) -> dict[str, Any] | None:
    """A custom kind's schema (its CRD version's openAPIV3Schema), for `kubectl explain`."""
    schema = res.extra.get("schema") if res.strategy == "custom" else None
    return copy.deepcopy(schema) if isinstance(schema, dict) else None
