"""PUT of an object (or of its ``status``), and of its ``scale`` subresource.

Why :func:`store_update` is apart from the verb: a patch and a server-side apply end the same
way, with the patched object run through the kind's strategy and stored.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from pyhpa.cluster.apiserver import managed_fields as managed
from pyhpa.cluster.apiserver import scale as scales
from pyhpa.cluster.apiserver.handlers.options import WriteOptions, write_options
from pyhpa.cluster.apiserver.handlers.request import decode_object, read_body
from pyhpa.api.schemas.build import ref
from pyhpa.api.schemas.conform import conform
from pyhpa.cluster.apiserver.handlers.scope import (RequestScope, Target, json_response,
                                                    map_store_error)
from pyhpa.cluster.apiserver.status import APIError, Invalid
from pyhpa.cluster.apiserver.storage import StoreError
from pyhpa.cluster.apiserver.strategies import fill_system_fields

Obj = dict[str, Any]


async def update(scope: RequestScope, request: Request, t: Target) -> Response:
    opts = write_options(request, "UpdateOptions")
    # PUT .../scale arrives without Content-Type: read_body treats that as JSON.
    body = await read_body(request, t, allow_protobuf=False)
    if t.sub == "scale":
        return write_scale(scope, t, body, opts)
    headers: dict[str, str] = {}
    obj = decode_object(scope, t, body, opts.field_validation, headers, url_name=t.name)
    result = store_update(scope, t, obj, opts)
    return json_response(scope.out(t, result), 200, headers)


def sans_meta(obj: Obj) -> Obj:
    """The object without server-owned metadata, for ownership comparisons."""
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    for k in ("managedFields", "resourceVersion", "generation", "uid", "creationTimestamp"):
        meta.pop(k, None)
    out["metadata"] = meta
    return out


def store_update(scope: RequestScope, t: Target, obj: Obj, opts: WriteOptions, *,
                 check_rv: bool = True, manager_op: str = "Update",
                 expect_rv: str | None = None) -> Obj:
    """Run the strategy on ``obj`` (request version) and store it; returns the stored dict."""
    strat = scope.strategy(t.res)
    key, ns, name = t.store_res.key, t.namespace or "", t.name or ""
    try:
        old = scope.store.get(key, ns, name)
    except StoreError as exc:
        raise map_store_error(t, exc) from None
    new = strat.to_storage(obj, t.version)
    fill_system_fields(new, old)
    managed.take_request_entries(new, old, t.sub or "")
    if t.sub == "status":
        strat.prepare_status_update(new, old)
        causes = strat.validate_status(new, old)
    else:
        strat.prepare_update(new, old)
        causes = strat.validate(new, old)
    if causes:
        raise Invalid(t.res.kind, t.group, name, causes)
    meta = new.setdefault("metadata", {})
    if expect_rv is not None and not meta.get("resourceVersion"):
        meta["resourceVersion"] = expect_rv
    manager = opts.field_manager
    if manager and manager_op == "Update":
        record_update(scope, t, old, new, manager)
    try:
        return scope.store.update(key, new, check_rv=check_rv, dry_run=opts.dry_run,
                                  bump_generation=strat.bump_generation)
    except StoreError as exc:
        raise map_store_error(t, exc) from None


def record_update(scope: RequestScope, t: Target, old: Obj, new: Obj, manager: str) -> None:
    """``manager`` (an Update in the request's apiVersion) owns the fields it changed, as that
    apiVersion shows them; every other manager loses them, each in its own apiVersion."""
    versions = managed.Versions(old, new, scope.version_view(t.res),
                                shapes=scope.field_shapes(t.res))
    api_version = t.res.api_version(t.version)
    kept = versions.kept(api_version)
    if kept or versions.changed(api_version):
        managed.record(new, manager, "Update", api_version, kept, changed_in=versions.changed,
                       subresource=t.sub or "")


def write_scale(scope: RequestScope, t: Target, scale: Any, opts: WriteOptions) -> Response:
    """Store a Scale's ``spec.replicas`` into the object it views; answers the new Scale."""
    if not isinstance(scale, dict):
        raise APIError(400, "BadRequest", "the body of the request must be a Scale object")
    name = scope.schemas.of_kind("autoscaling", "v1", "Scale")
    if name is not None:
        scale, found = conform(scale, ref(name), scope.schemas.definitions)
        if found.error is not None:
            raise APIError(400, "BadRequest", f'Scale in version "v1" cannot be handled as a '
                                              f"Scale: {found.error}")
    causes = scales.validate_scale(scale)
    if causes:
        raise Invalid("Scale", "autoscaling", t.name or "", causes)
    key, ns, name = t.store_res.key, t.namespace or "", t.name or ""
    try:
        obj = scope.store.get(key, ns, name)
    except StoreError as exc:
        raise map_store_error(t, exc) from None
    before = scales.read_path(obj, t.res.scale.spec_replicas) if t.res.scale else None
    scales.apply_scale(t.res, obj, scale)
    if opts.field_manager and t.res.scale is not None and \
            scales.read_path(obj, t.res.scale.spec_replicas) != before:
        # upstream maps the Scale's spec.replicas onto the parent's replicas field, owned by
        # the writer as an Update of the parent's apiVersion with subresource "scale"
        replicas = scales.path_of(t.res.scale.spec_replicas)
        managed.record(obj, opts.field_manager, "Update", t.res.api_version(t.version),
                       {replicas}, changed_in=lambda _v: {replicas}, subresource="scale")
    try:
        out = scope.store.update(key, obj, dry_run=opts.dry_run)
    except StoreError as exc:
        raise map_store_error(t, exc) from None
    return json_response(scales.to_scale(t.res, out))
