"""WATCH (``?watch=true``): a stream of JSON lines, one event each, as the apiserver frames them.

Why a 200 with an ERROR event for a too-old resourceVersion: that is what the apiserver sends
(and what informers expect, to relist); bookmarks keep an idle watch's resourceVersion fresh.
"""

from __future__ import annotations

import time

import msgspec
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from pyhpa.cluster.apiserver import tables
from pyhpa.cluster.apiserver.handlers.request import bool_param, selectors, wants_table
from pyhpa.cluster.apiserver.handlers.scope import JSON, TABLE_TYPE, RequestScope, Target
from pyhpa.cluster.apiserver.status import APIError
from pyhpa.cluster.apiserver.storage import Expired

_encode = msgspec.json.Encoder().encode


def watch(scope: RequestScope, request: Request, t: Target) -> Response:
    q = request.query_params
    label, field = selectors(request, t)
    rv = q.get("resourceVersion") or ""
    table = wants_table(request.headers.get("accept"))
    include = q.get("includeObject", "Metadata")
    timeout = None
    if q.get("timeoutSeconds"):
        try:
            timeout = float(q["timeoutSeconds"])
        except ValueError:
            raise APIError(400, "BadRequest", "timeoutSeconds: must be an integer") from None
    bookmarks = bool_param(q.get("allowWatchBookmarks"))
    try:
        since = int(rv) if rv else 0
    except ValueError:
        raise APIError(400, "BadRequest", f"resourceVersion: invalid value {rv!r}") from None
    store = scope.store
    try:
        w = store.watch(t.store_res.key, t.namespace, since=since or None,
                        initial=since == 0, label_selector=label, field_selector=field)
    except Expired as exc:
        # Like the apiserver: a 200 stream with one ERROR event, then the end.
        err = {"type": "ERROR", "object": {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"too old resource version: {since} ({exc})", "reason": "Expired",
            "code": 410}}
        return Response(_encode(err) + b"\n", media_type=JSON)

    async def stream():
        deadline = None if timeout is None else time.monotonic() + timeout
        last_bookmark = time.monotonic()
        try:
            while True:
                wait = 30.0 if deadline is None else max(0.0, deadline - time.monotonic())
                if bookmarks:
                    wait = min(wait, 10.0)
                ev = await w.get(timeout=wait)
                if ev is None:
                    if w.closed or (deadline is not None and time.monotonic() >= deadline):
                        return
                    if bookmarks and time.monotonic() - last_bookmark >= 10.0:
                        last_bookmark = time.monotonic()
                        bm = {"kind": t.res.kind, "apiVersion": t.res.api_version(t.version),
                              "metadata": {"resourceVersion": str(store.resource_version)}}
                        yield _encode({"type": "BOOKMARK", "object": bm}) + b"\n"
                    continue
                if ev.type == "ERROR":
                    yield _encode({"type": "ERROR", "object": ev.object}) + b"\n"
                    return
                if not table and scope.identity_version(t):
                    yield b'{"type":"' + ev.type.encode() + b'","object":' + ev.raw + b"}\n"
                    continue
                obj = scope.out(t, ev.object)
                if table:
                    obj = tables.table(t.res, [obj], resource_version=str(ev.rv),
                                       include_object=include, with_columns=False)
                yield _encode({"type": ev.type, "object": obj}) + b"\n"
        finally:
            w.close()

    return StreamingResponse(stream(), media_type=TABLE_TYPE if table else JSON,
                             headers={"Cache-Control": "no-cache, private"})
