"""POST of a new object: decode, check, default and validate it by its kind's strategy, store it.

Why :func:`create_object` is apart from the verb: server-side apply of an object that does not
exist yet creates it the same way, with the applied configuration as what its manager owns.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from pyhpa.cluster.apiserver import managed_fields as managed
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.namespace_objects import ensure_namespace_objects
from pyhpa.cluster.apiserver.handlers.options import WriteOptions, write_options
from pyhpa.cluster.apiserver.handlers.request import decode_object, read_body
from pyhpa.cluster.apiserver.handlers.scope import (RequestScope, Target, json_response,
                                                    map_store_error)
from pyhpa.api.names import generate_name
from pyhpa.cluster.apiserver.status import APIError, Invalid
from pyhpa.cluster.apiserver.storage import AlreadyExists, StoreError

Obj = dict[str, Any]
# names tried for one generateName before a clash is reported (upstream retries as well)
_GENERATE_ATTEMPTS = 8


async def create(scope: RequestScope, request: Request, t: Target) -> Response:
    opts = write_options(request, "CreateOptions")
    body = await read_body(request, t)
    return create_object(scope, t, body, opts)


def require_namespace(scope: RequestScope, t: Target) -> None:
    """A namespaced object is only created in a namespace that exists."""
    if t.res.namespaced and scope.store.try_get(R.NAMESPACES.key, "", t.namespace or "") is None:
        raise APIError(404, "NotFound", f'namespaces "{t.namespace}" not found',
                       {"name": t.namespace, "kind": "namespaces"})


def create_object(scope: RequestScope, t: Target, body: Any, opts: WriteOptions, *,
                  manager_op: str = "Update", applied: Obj | None = None) -> Response:
    headers: dict[str, str] = {}
    obj = decode_object(scope, t, body, opts.field_validation, headers)
    require_namespace(scope, t)
    strat = scope.strategy(t.res)
    meta = obj["metadata"]  # metadata reads the same in every version of a kind
    if t.res is R.PODS and scope.pod_finalizers:
        fins = meta.get("finalizers") or []
        meta["finalizers"] = fins + [f for f in scope.pod_finalizers if f not in fins]
    prefix = meta.get("generateName") if not meta.get("name") else None
    if prefix:  # named before validation, as upstream names it, so the name is checked too
        meta["name"] = generate_name(prefix)
    managed.take_request_entries(obj, None)
    obj, causes = strat.create(obj, t.version)
    meta = obj.setdefault("metadata", {})
    if causes:
        raise Invalid(t.res.kind, t.group, meta.get("name") or "", causes)
    if opts.field_manager:
        api_version = t.res.api_version(t.version)
        # owned in the request's terms (a v1 HPA's f:targetCPUUtilizationPercentage), defaults
        # included, as upstream records a create
        shown = applied if applied is not None else scope.version_view(t.res)(obj, api_version)
        shape = scope.field_shapes(t.res)(api_version if shown is not None else
                                          t.res.api_version(t.res.storage_version))
        owned = managed.leaves(shown if shown is not None else obj, shape)
        if t.res.has_status():  # status is reset on create: nobody owns it yet
            owned = {p for p in owned if p[0] != "status"}
        managed.record(obj, opts.field_manager, manager_op, api_version, owned)
    for attempt in range(_GENERATE_ATTEMPTS if prefix else 1):
        try:
            created = scope.store.create(t.store_res.key, obj, dry_run=opts.dry_run,
                                         bump_generation=strat.bump_generation)
            break
        except AlreadyExists as exc:
            if not prefix or attempt == _GENERATE_ATTEMPTS - 1:
                raise map_store_error(t, exc, meta["name"]) from None
            meta["name"] = generate_name(prefix)  # another object has that name: draw again
        except StoreError as exc:
            raise map_store_error(t, exc, meta.get("name") or "") from None
    if t.res is R.NAMESPACES and not opts.dry_run:
        ensure_namespace_objects(scope.store, meta["name"], scope.root_ca)
    return json_response(scope.out(t, created), 201, headers)
