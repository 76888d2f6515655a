"""WATCH (``?watch=true``): a stream of JSON lines, one event each, as the apiserver frames them.

Why a 200 with an ERROR event for a too-old resourceVersion: that is what the apiserver sends
(and what informers expect, to relist); bookmarks keep an idle watch's resourceVersion fresh.
A WatchList (``sendInitialEvents=true``, KEP-3157) gets the current objects as ADDED events and
then a bookmark annotated ``k8s.io/initial-events-end: "true"``, which tells the client its
list is complete (client-go's reflector waits for it).
"""

from __future__ import annotations

import time

import msgspec
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from pyhpa.cluster.apiserver import tables
from pyhpa.cluster.apiserver.handlers.get import too_large_resource_version
from pyhpa.cluster.apiserver.handlers.options import bool_param, watch_options
from pyhpa.cluster.apiserver.handlers.request import selectors, wants_table
from pyhpa.cluster.apiserver.handlers.scope import JSON, TABLE_TYPE, RequestScope, Target
from pyhpa.cluster.apiserver.status import APIError
from pyhpa.cluster.apiserver.storage import Expired

_encode = msgspec.json.Encoder().encode
CHUNK_BYTES = 64 * 1024  # ready events joined into one write at most


def _error_stream(status: dict) -> Response:
    """A watch that ends at once with one ERROR event, as upstream ends a watch it cannot serve
    once the request itself was valid."""
    return Response(_encode({"type": "ERROR", "object": status}) + b"\n", media_type=JSON)


def watch(scope: RequestScope, request: Request, t: Target) -> Response:
    q = request.query_params
    opts = watch_options(request)
    label, field = selectors(request, t)
    table = wants_table(request.headers.get("accept"))
    include = q.get("includeObject", "Metadata")
    timeout = opts.timeout
    bookmarks = bool_param(q.get("allowWatchBookmarks"))
    since = opts.resource_version
    store = scope.store
    if since > store.resource_version:  # never handed out: nothing to wait for
        return _error_stream(too_large_resource_version(since, store.resource_version).status())
    client = request.client.host if request.client is not None else ""
    held = store.watches_of(client)
    if held >= scope.max_watches_per_client:
        raise APIError(429, "TooManyRequests",
                       f"Too many requests: {held} watches are open from {client}, the most one "
                       f"client may hold; close some and try again",
                       {"retryAfterSeconds": 1}, {"Retry-After": "1"})
    send_initial = opts.send_initial
    try:
        w = store.watch(t.store_res.key, t.namespace, since=None if send_initial else since or None,
                        initial=since == 0 or send_initial, label_selector=label, field_selector=field,
                        max_backlog=scope.watch_backlog,
                        max_backlog_bytes=scope.watch_backlog_bytes, owner=client)
    except Expired as exc:
        # Like the apiserver: a 200 stream with one ERROR event, then the end.
        return _error_stream(APIError(410, "Expired", str(exc)).status())

    # the initial events are queued first and carry versions up to this one: the end-of-initial-
    # events bookmark goes before the first event past it (or when the queue runs dry)
    initial_end = store.resource_version if send_initial else None

    def bookmark(rv: int | str, annotations: dict | None = None) -> bytes:
        meta: dict = {"resourceVersion": str(rv)}
        if annotations:
            meta["annotations"] = annotations
        return _encode({"type": "BOOKMARK", "object": {
            "kind": t.res.kind, "apiVersion": t.res.api_version(t.version), "metadata": meta}}) + b"\n"

    async def lines():
        nonlocal initial_end
        deadline = None if timeout is None else time.monotonic() + timeout
        last_bookmark = time.monotonic()
        try:
            while True:
                wait = 30.0 if deadline is None else max(0.0, deadline - time.monotonic())
                if bookmarks:
                    wait = min(wait, 10.0)
                ev = await w.get(timeout=0 if initial_end is not None else wait)
                if initial_end is not None and (ev is None or ev.rv > initial_end):
                    yield bookmark(initial_end, {"k8s.io/initial-events-end": "true"})
                    initial_end = None
                    last_bookmark = time.monotonic()
                    if ev is None:
                        continue
                if ev is None:
                    if w.closed or (deadline is not None and time.monotonic() >= deadline):
                        return
                    if bookmarks and time.monotonic() - last_bookmark >= 10.0:
                        last_bookmark = time.monotonic()
                        yield bookmark(store.resource_version)
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
                                       minor=scope.table_release(),
                                       include_object=include, with_columns=False)
                yield _encode({"type": ev.type, "object": obj}) + b"\n"
        finally:
            w.close()

    async def stream():
        """The lines of events that are ready together (a backlog, the initial events) as one
        chunk: one write and one TLS record for them, not one each; a line with nothing
        behind it leaves at once."""
        batch: list[bytes] = []
        size = 0
        source = lines()
        try:
            async for line in source:
                batch.append(line)
                size += len(line)
                if size >= CHUNK_BYTES or not w.pending():
                    yield b"".join(batch)
                    batch.clear()
                    size = 0
            if batch:
                yield b"".join(batch)
        finally:
            await source.aclose()  # the watch closes with the response, not when collected

    return StreamingResponse(stream(), media_type=TABLE_TYPE if table else JSON,
                             headers={"Cache-Control": "no-cache, private"})
