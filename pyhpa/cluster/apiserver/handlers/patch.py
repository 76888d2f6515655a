"""PATCH: JSON patch, merge patch and strategic merge patch, and server-side apply.

Why a retry loop: a patch is a read-modify-write; when another writer got in between, upstream
re-reads and re-applies the patch (unless the patch itself named a resourceVersion), so a
``kubectl patch`` never fails on a conflict it did not cause. Server-side apply is a patch too:
it retries the same way (kube-apiserver's patcher re-runs the apply on the object its
GuaranteedUpdate re-reads), and answers 409 only to an applied object that carries a
``metadata.resourceVersion`` (a precondition) or to a field-ownership conflict.
"""

from __future__ import annotations

import copy
from types import MappingProxyType
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from pyhpa.cluster.apiserver import managed_fields as managed
from pyhpa.cluster.apiserver import patch as patches
from pyhpa.cluster.apiserver import scale as scales
from pyhpa.cluster.apiserver.handlers.create import create_object
from pyhpa.cluster.apiserver.handlers.options import WriteOptions, write_options
from pyhpa.cluster.apiserver.handlers.request import decode_object, read_body, unknown_format
from pyhpa.cluster.apiserver.handlers.scope import (RequestScope, Target, details, json_response,
                                                    map_store_error)
from pyhpa.cluster.apiserver.handlers.update import sans_meta, store_update, write_scale
from pyhpa.cluster.apiserver.status import APIError
from pyhpa.cluster.apiserver.storage import Conflict, NotFound, StoreError

Obj = dict[str, Any]

# How often a patch or an apply is re-run on a freshly read object after losing a race with
# another writer before the request fails with a 409.
CONFLICT_RETRIES = 8


def _resource_version(obj: Obj) -> Any:
    meta = obj.get("metadata")
    return meta.get("resourceVersion") if isinstance(meta, dict) else None


async def patch(scope: RequestScope, request: Request, t: Target) -> Response:
    ctype = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
    if ctype not in patches.PATCH_TYPES:
        raise unknown_format(patches.PATCH_TYPES)
    opts = write_options(request, "PatchOptions", apply=ctype == patches.APPLY)
    if ctype == patches.APPLY:
        return await apply(scope, request, t, opts)
    body = await read_body(request, t, allow_protobuf=False, patch=True)
    key, ns, name = t.store_res.key, t.namespace or "", t.name or ""
    headers: dict[str, str] = {}
    for _attempt in range(CONFLICT_RETRIES):
        try:
            entry = scope.store.get_entry(key, ns, name)
        except StoreError as exc:
            raise map_store_error(t, exc) from None
        current = entry.obj()
        view = scales.to_scale(t.res, current) if t.sub == "scale" else scope.out(t, current)
        before_rv = _resource_version(view)
        try:
            patched = patches.apply_patch(ctype, copy.deepcopy(view), body,
                                          patch_schema(scope, t))
        except patches.PatchTooLarge as exc:
            raise APIError(413, "RequestEntityTooLarge", str(exc)) from None
        except patches.PatchError as exc:
            raise _patch_error(ctype, body, exc) from None
        explicit_rv = _resource_version(patched) != before_rv
        if t.sub == "scale":
            try:
                return write_scale(scope, t, patched, opts)
            except APIError as exc:
                if exc.reason == "Conflict" and not explicit_rv:
                    continue
                raise
        obj = decode_object(scope, t, patched, opts.field_validation, headers, url_name=t.name)
        try:
            result = store_update(scope, t, obj, opts)
        except APIError as exc:
            if exc.reason == "Conflict" and not explicit_rv:
                continue  # raced with another writer: re-read and re-apply, as upstream
            raise
        return json_response(scope.out(t, result), 200, headers)
    raise map_store_error(t, Conflict(key, ns, name))


async def apply(scope: RequestScope, request: Request, t: Target, opts: WriteOptions,
                ) -> Response:
    """Server-side apply (field ownership, see :mod:`..managed_fields`)."""
    body = await read_body(request, t, allow_protobuf=False, patch=True)
    headers: dict[str, str] = {}
    applied = decode_object(scope, t, body, opts.field_validation, headers, url_name=t.name)
    if t.sub == "scale":
        raise APIError(415, "UnsupportedMediaType", "apply is not supported on /scale")
    key, ns, name = t.store_res.key, t.namespace or "", t.name or ""
    precondition = _resource_version(applied)
    for _attempt in range(CONFLICT_RETRIES):
        current = scope.store.try_get(key, ns, name)
        attempt_headers = dict(headers)
        try:
            if current is None:
                if t.sub:
                    raise map_store_error(t, NotFound(key, ns, name))
                return create_object(scope, t, copy.deepcopy(applied), opts, manager_op="Apply",
                                     applied=applied)
            return _apply_to(scope, t, opts, applied, current, precondition, attempt_headers)
        except APIError as exc:
            # lost a race (another writer changed it, or created it first): re-read and re-apply
            if precondition is None and exc.reason in ("Conflict", "AlreadyExists") \
                    and not (exc.details or {}).get("causes"):
                continue
            raise
    raise map_store_error(t, Conflict(key, ns, name))


def _apply_to(scope: RequestScope, t: Target, opts: WriteOptions, applied: Obj, current: Obj,
              precondition: Any, headers: dict[str, str]) -> Response:
    """Apply ``applied`` to the stored ``current`` and write it, expecting ``current``'s
    resourceVersion (or the applied object's own, when it names one)."""
    manager, force = opts.field_manager, opts.force
    live = scope.out(t, copy.deepcopy(current))
    applied_cmp = sans_meta(applied)
    if t.res.has_status():  # the other half is reset by the strategy: nobody applies it
        applied_cmp.pop("spec" if t.sub == "status" else "status", None)
    api_version = t.res.api_version(t.version)
    shapes = scope.field_shapes(t.res)
    shape = shapes(api_version)
    merged = managed.apply(live, manager, applied_cmp, shape)
    versions = managed.Versions(current, _stored(scope, t, merged), scope.version_view(t.res),
                                known={api_version: (live, merged)}, shapes=shapes)
    found = managed.conflicts(live, manager, versions.changed)
    if found and not force:
        found = managed.upgrade_conflicts(live, manager, found, shape)
    if found and not force:
        msg, causes = managed.conflict_error(found)
        raise APIError(409, "Conflict", msg, {**details(t), "causes": causes})
    managed.sync_last_applied(merged, live, manager, applied)
    # metadata.labels/annotations from the applied config are leaves of applied_cmp too
    managed.record(merged, manager, "Apply", api_version, managed.leaves(applied_cmp, shape),
                   changed_in=versions.changed, replace=True, subresource=t.sub or "")
    merged.setdefault("metadata", {})["resourceVersion"] = precondition if precondition \
        is not None else (current.get("metadata") or {}).get("resourceVersion")
    obj = decode_object(scope, t, merged, opts.field_validation, headers, url_name=t.name)
    result = store_update(scope, t, obj, opts, manager_op="Apply")
    return json_response(scope.out(t, result), 200, headers)


# What kube-apiserver answers to a JSON patch it cannot apply (a failed ``test``, a path that is
# not there, an unknown op): a generic 422 (patch.go's applyJSPatch, NewGenericServerResponse),
# kubectl printing ``The request is invalid: the server rejected our request ...``.
JSON_PATCH_NOT_APPLIED = "the server rejected our request due to an error in our request"
_GO_TYPES = MappingProxyType({dict: "object", str: "string", bool: "bool", int: "number", float: "number"})


def _patch_error(ctype: str, body: Any, exc: Exception) -> APIError:
    """The Status of a patch that cannot be applied, in kube-apiserver's words."""
    if ctype != patches.JSON_PATCH:
        return APIError(400, "BadRequest", str(exc))
    if not isinstance(body, list):  # jsonpatch.DecodePatch refuses it: a 400
        return APIError(400, "BadRequest", f"json: cannot unmarshal "
                                           f"{_GO_TYPES.get(type(body), 'value')} into Go value "
                                           "of type jsonpatch.Patch")
    return APIError(422, "Invalid", JSON_PATCH_NOT_APPLIED, {})


def _stored(scope: RequestScope, t: Target, obj: Obj) -> Obj:
    """``obj`` (in the request's version) as it would be stored, to view it in other versions;
    a body the kind cannot decode is reported by the store path that follows, so: unchanged."""
    try:
        return scope.strategy(t.res).to_storage(copy.deepcopy(obj), t.version)
    except APIError:
        return obj


def patch_schema(scope: RequestScope, t: Target) -> patches.SchemaView | None:
    """The published schema of what a patch changes (the object, or its Scale), whose
    strategic-merge markers say which lists merge by which key; None for a kind without one."""
    gvk = ("autoscaling", "v1", "Scale") if t.sub == "scale" else (t.res.group, t.version, t.res.kind)
    name = scope.schemas.of_kind(*gvk)
    if name is None:
        return None
    defs = scope.schemas.definitions
    return patches.SchemaView(defs[name], defs)
