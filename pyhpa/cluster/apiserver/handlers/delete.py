"""DELETE of an object or a collection, with grace periods, preconditions and propagation.

Why the Pod rules here: a Pod's delete waits for its grace period (the node agent's finalizer
holds it Terminating); ``--grace-period=0 --force`` drops that finalizer so it goes at once.
Dependents go with their owner (Background), before it (Foreground: the owner is held by the
``foregroundDeletion`` finalizer until they are gone), or lose their reference to it (Orphan)
(:mod:`..garbage_collector`).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.garbage_collector import (FOREGROUND, collect_dependents,
                                                       has_dependents, hold_for_dependents,
                                                       orphan_dependents, release_foreground)
from pyhpa.cluster.apiserver.handlers.options import DeleteOptions, delete_options
from pyhpa.cluster.apiserver.handlers.request import read_body, selectors
from pyhpa.cluster.apiserver.namespace_deletion import terminate as terminate_namespace
from pyhpa.cluster.apiserver.handlers.scope import (RequestScope, Target, json_response,
                                                    map_store_error)
from pyhpa.api.schemas.build import ref
from pyhpa.api.schemas.conform import conform
from pyhpa.cluster.apiserver.status import APIError
from pyhpa.cluster.apiserver.storage import StoreError

Obj = dict[str, Any]


async def read_delete_options(scope: RequestScope, request: Request, t: Target) -> DeleteOptions:
    """The request's DeleteOptions: its body (JSON, YAML or protobuf) when it has one, its query
    otherwise."""
    body = None
    if await request.body():
        raw = await read_body(request, t)
        if not isinstance(raw, dict):
            raise APIError(400, "BadRequest", "the body of the request must be a DeleteOptions "
                                              "object")
        name = scope.schemas.of_kind("", "v1", "DeleteOptions")
        body, found = conform(raw, ref(name), scope.schemas.definitions) if name else (raw, None)
        if found is not None and found.error is not None:
            raise APIError(400, "BadRequest", f"DeleteOptions in version \"v1\" cannot be handled "
                                              f"as a DeleteOptions: {found.error}")
    return delete_options(request, body)


async def delete(scope: RequestScope, request: Request, t: Target) -> Response:
    opts = await read_delete_options(scope, request, t)
    obj = delete_object(scope, t, t.namespace or "", t.name or "", dry_run=opts.dry_run,
                        policy=opts.policy, resource_version=opts.resource_version,
                        uid=opts.uid, grace=opts.grace)
    return json_response(scope.out(t, obj))


def delete_object(scope: RequestScope, t: Target, ns: str, name: str, *, dry_run: bool = False,
                  policy: str = "Background", resource_version: str | None = None,
                  uid: str | None = None, grace: int | None = None) -> Obj:
    store = scope.store
    key = t.store_res.key
    try:
        if t.res is R.PODS:
            grace = _pod_grace(scope, ns, name, grace)
        if policy == "Foreground" and not dry_run \
                and _hold_if_owning(scope, t, ns, name, resource_version, uid):
            resource_version = None  # checked before the hold changed it
        released = None
        if grace == 0 and t.res is R.PODS and not dry_run:
            released = _release_pod(scope, ns, name)
        if released is not None and store.try_get(key, ns, name) is None:
            obj, gone = released, True  # it was terminating already: the release ended it
        else:
            obj, gone = store.delete(key, ns, name, resource_version=resource_version,
                                     uid=uid, dry_run=dry_run, grace_seconds=grace)
    except StoreError as exc:
        raise map_store_error(t, exc, name) from None
    uid = (obj.get("metadata") or {}).get("uid")
    if dry_run:
        return obj
    if t.res is R.NAMESPACES and not gone:  # held by spec.finalizers: Terminating
        obj = terminate_namespace(store, name, obj)
    elif gone and t.res is R.NAMESPACES:
        store.delete_namespace_contents(name)
    elif gone and policy == "Orphan":
        orphan_dependents(store, scope.registry, uid, ns)
    elif gone:
        collect_dependents(store, scope.registry, uid, ns)
    elif FOREGROUND in ((obj.get("metadata") or {}).get("finalizers") or []):
        if not collect_dependents(store, scope.registry, uid, ns, foreground=True):
            try:  # nothing left to wait for: it goes now
                obj = store.guaranteed_update(key, ns, name, release_foreground)
            except StoreError:
                pass
    return obj


def _hold_if_owning(scope: RequestScope, t: Target, ns: str, name: str,
                    resource_version: str | None, uid: str | None) -> bool:
    """A delete in the foreground: an object that owns others gets ``foregroundDeletion``
    (unless the delete's preconditions fail: the delete then says so). Returns whether it did."""
    meta = (scope.store.try_get(t.store_res.key, ns, name) or {}).get("metadata") or {}
    if resource_version and meta.get("resourceVersion") != resource_version \
            or uid and meta.get("uid") != uid:
        return False
    if not meta.get("uid") or not has_dependents(scope.store, scope.registry, meta["uid"], ns):
        return False
    hold_for_dependents(scope.store, t.store_res.key, ns, name)
    return True


def _pod_grace(scope: RequestScope, ns: str, name: str, grace: int | None) -> int | None:
    """A pod's grace period: the request's, else its terminationGracePeriodSeconds (30)."""
    pod = scope.store.try_get(R.PODS.key, ns, name)
    if pod is None or grace is not None:
        return grace
    spec = pod.get("spec")
    spec_grace = spec.get("terminationGracePeriodSeconds") if isinstance(spec, dict) else None
    return spec_grace if isinstance(spec_grace, int) and spec_grace >= 0 else 30


def _release_pod(scope: RequestScope, ns: str, name: str) -> Obj | None:
    """Drop the node agent's finalizers (``scope.pod_finalizers``), so a zero grace period
    removes the pod now (``delete --grace-period=0 --force``); only finalizers of others still
    hold it. Returns the last state when there was one to drop."""
    held = set(scope.pod_finalizers)
    pod = scope.store.try_get(R.PODS.key, ns, name)
    if pod is None or not held & set((pod.get("metadata") or {}).get("finalizers") or []):
        return None

    def release(o: Obj) -> None:
        meta = o.setdefault("metadata", {})
        fins = [f for f in meta.get("finalizers") or [] if f not in held]
        if fins:
            meta["finalizers"] = fins
        else:
            meta.pop("finalizers", None)
    return scope.store.guaranteed_update(R.PODS.key, ns, name, release)


async def delete_collection(scope: RequestScope, request: Request, t: Target) -> Response:
    opts = await read_delete_options(scope, request, t)
    label, field = selectors(request, t)
    res = scope.store.list(t.store_res.key, t.namespace, label_selector=label,
                           field_selector=field)
    out = []
    for o in res.items:
        m = o.get("metadata") or {}
        try:
            out.append(scope.out(t, delete_object(
                scope, t, m.get("namespace") or "", m.get("name") or "", dry_run=opts.dry_run,
                policy=opts.policy, grace=opts.grace)))
        except APIError as exc:
            if exc.code != 404:
                raise
    return json_response({"kind": t.res.list_kind, "apiVersion": t.res.api_version(t.version),
                          "metadata": {"resourceVersion": str(scope.store.resource_version)},
                          "items": out})
