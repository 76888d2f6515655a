"""GET of one object and of a list (``kubectl get``), as JSON or as a Table.

Why two paths: when the request's version is the stored one and no Table or filter is asked
for, the stored bytes are the answer and are sent as they are (a LIST of thousands of Pods
never decodes them); otherwise objects are decoded, converted and, for a Table, rendered.
"""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from pyhpa.cluster.apiserver import scale as scales
from pyhpa.cluster.apiserver import tables
from pyhpa.cluster.apiserver.handlers.options import ListOptions, list_options
from pyhpa.cluster.apiserver.handlers.request import header, selectors, wants_table
from pyhpa.cluster.apiserver.handlers.scope import (JSON, TABLE_TYPE, RequestScope, Target,
                                                    json_response, map_store_error)
from pyhpa.cluster.apiserver.status import APIError
from pyhpa.cluster.apiserver.storage import StoreError, combine_filters

Obj = dict[str, Any]
_encode = msgspec.json.Encoder().encode


def get(scope: RequestScope, request: Request, t: Target) -> Response:
    key = t.store_res.key
    ns = t.namespace or ""
    try:
        entry = scope.store.get_entry(key, ns, t.name or "")
    except StoreError as exc:
        raise map_store_error(t, exc) from None
    if t.sub == "scale":
        return json_response(scales.to_scale(t.res, entry.obj()))
    table = wants_table(header(request, b"accept"))
    if not table and scope.identity_version(t):
        return Response(entry.raw, media_type=JSON)
    obj = scope.out(t, entry.obj())
    if table:
        doc = tables.table(t.res, [obj], resource_version=str(entry.rv),
                           include_object=request.query_params.get("includeObject", "Metadata"),
                           minor=scope.table_release())
        return Response(_encode(doc), media_type=TABLE_TYPE)
    return json_response(obj)


def _joined_list(start: bytes, items: list[bytes], end: bytes) -> bytes:
    """``start``, the items comma-separated, ``end``: in one join, one copy of the items. Why:
    a list's body runs to megabytes, and each concatenation copied all of it into memory
    freshly mapped for it (``head + b",".join(items) + end`` cost 15 times this)."""
    parts = [start]
    for item in items:
        parts.append(item)
        parts.append(b",")
    if items:
        parts.pop()
    parts.append(end)
    return b"".join(parts)


def too_large_resource_version(rv: int, current: int) -> APIError:
    """upstream's answer to a read at a resourceVersion the store has not reached: a 504 the
    client retries after a second (a watch gets it as an ERROR event)."""
    return APIError(504, "Timeout", f"Timeout: Too large resource version: {rv}, current: "
                                    f"{current}",
                    {"causes": [{"reason": "ResourceVersionTooLarge",
                                 "message": "Too large resource version"}],
                     "retryAfterSeconds": 1})


def _list_point(scope: RequestScope, t: Target, opts: ListOptions) -> str | None:
    """The resourceVersion a list answers at when the request pins one (``Exact``), after
    checking the store can serve ``opts.resource_version`` at all."""
    current = scope.store.resource_version
    rv = opts.resource_version
    if rv > current:
        raise too_large_resource_version(rv, current)
    if not opts.exact or rv == current:
        return None
    # There is no snapshot of the past; the present is the state at ``rv`` when nothing of
    # this kind changed since, else that state is gone, as if compacted.
    if scope.store.unchanged_since(t.store_res.key, t.namespace, rv):
        return str(rv)
    raise APIError(410, "Expired", f"too old resource version: {rv} ({current})")


def list_objects(scope: RequestScope, request: Request, t: Target) -> Response:
    q = request.query_params
    opts = list_options(request)
    label, field = selectors(request, t)
    pinned = _list_point(scope, t, opts)
    limit = opts.limit
    table = wants_table(header(request, b"accept"))
    key = t.store_res.key
    try:
        if not table and scope.identity_version(t) and label is None and field is None:
            raw = scope.store.list_raw(key, t.namespace, limit=limit or None,
                                       continue_token=opts.continue_token)
            meta: Obj = {"resourceVersion": pinned or raw.resource_version}
            if raw.continue_token:
                meta["continue"] = raw.continue_token
                if raw.remaining is not None:
                    meta["remainingItemCount"] = raw.remaining
            head = _encode({"kind": t.res.list_kind, "apiVersion": t.res.api_version(t.version),
                            "metadata": meta})
            return Response(_joined_list(head[:-1] + b',"items":[', raw.items, b"]}"),
                            media_type=JSON)
        decode = None  # a Table's rows read a few fields: decode only those when we can
        if table and q.get("includeObject") != "Object" and field is None \
                and scope.identity_version(t):
            decode = tables.row_decoder(t.res)
        if decode is not None:
            # the label selector reads the views' labels; the stored metadata goes out as it is
            labels = combine_filters(label, None, None)
            rows = scope.store.list(key, t.namespace, limit=limit or None,
                                    continue_token=opts.continue_token, decode=decode,
                                    predicate=None if labels is None
                                    else lambda row: labels(row.view))
            doc = tables.table(t.res, [row.view for row in rows.items],
                               metadata=[row.metadata for row in rows.items],
                               resource_version=pinned or rows.resource_version,
                               include_object=q.get("includeObject", "Metadata"),
                               continue_token=rows.continue_token, minor=scope.table_release())
            return Response(_encode(doc), media_type=TABLE_TYPE)
        res = scope.store.list(key, t.namespace, label_selector=label, field_selector=field,
                               limit=limit or None, continue_token=opts.continue_token)
    except StoreError as exc:
        raise map_store_error(t, exc) from None
    strategy = scope.strategy(t.res)  # once per list, not per item
    items = [strategy.from_storage(o, t.version) for o in res.items]
    resource_version = pinned or res.resource_version
    if table:
        doc = tables.table(t.res, items, resource_version=resource_version,
                           include_object=q.get("includeObject", "Metadata"),
                           continue_token=res.continue_token, minor=scope.table_release())
        return Response(_encode(doc), media_type=TABLE_TYPE)
    meta = {"resourceVersion": resource_version}
    if res.continue_token:
        meta["continue"] = res.continue_token
    return json_response({"kind": t.res.list_kind, "apiVersion": t.res.api_version(t.version),
                          "metadata": meta, "items": items})
