"""The embedded cluster's Kubernetes API server (an ASGI app over the store and registry).

Why one dispatcher instead of a route per endpoint: every resource shares the same URL grammar
(``/api/v1`` or ``/apis/G/V``, optional ``namespaces/NS``, ``resource[/name[/subresource]]``),
so the path is parsed once against the registry and handed to a verb handler. Protocol details
follow kubectl-protocol.md: aggregated discovery by Accept, Table output, watch framing, Status
errors (never a framework error body), protobuf HPA bodies, and the OpenAPI documents
(:mod:`pyhpa.cluster.openapi`).
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import msgspec
import yaml
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from pyhpa.cluster import discovery, managed, openapi, patch as patches, protobuf
from pyhpa.cluster import resources as R
from pyhpa.cluster import scale as scales
from pyhpa.cluster import tables
from pyhpa.cluster.fields import FieldSelector, FieldSelectorError
from pyhpa.cluster.resources import Registry, Resource
from pyhpa.cluster.store import (AlreadyExists, BadRequest, Conflict, Expired, NotFound, Store,
                                 StoreError)
from pyhpa.cluster.strategies import Invalid, Strategy, strategy_for

Obj = dict[str, Any]
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode
JSON = "application/json"
TABLE_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io"
OPEN_PATHS = {"/healthz", "/readyz", "/livez"}
_HEALTH_PREFIXES = tuple(p + "/" for p in OPEN_PATHS)
# events.k8s.io/v1 field labels -> the stored core/v1 Event's paths
_EVENTS_V1_FIELDS = {"regarding": ("involvedObject",), "reportingController": ("reportingComponent",)}
Handler = Callable[[Request, "Target"], Awaitable[Response]]


class APIError(Exception):
    """Raised anywhere in a handler; becomes a metav1.Status response."""

    def __init__(self, code: int, reason: str, message: str, details: Obj | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def status(self) -> Obj:
        out: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": self.message, "reason": self.reason}
        if self.details is not None:
            out["details"] = self.details
        out["code"] = self.code
        return out


def status_response(status: Obj, headers: dict[str, str] | None = None) -> Response:
    return Response(_encode(status), status_code=status.get("code", 500), media_type=JSON,
                    headers=headers)


def not_found_path() -> APIError:
    return APIError(404, "NotFound", "the server could not find the requested resource", {})


@dataclass
class Target:
    """A parsed resource URL."""

    res: Resource
    group: str
    version: str
    namespace: str | None
    name: str | None
    sub: str | None

    @property
    def store_res(self) -> Resource:
        return R.storage_of(self.res)


def _details(t: Target, name: str | None = None) -> Obj:
    return {"name": name if name is not None else (t.name or ""), "group": t.group,
            "kind": t.res.resource}


def map_store_error(t: Target, exc: StoreError, name: str | None = None) -> APIError:
    gr = t.res.group_resource
    nm = name if name is not None else (exc.name or t.name or "")
    if isinstance(exc, NotFound):
        return APIError(404, "NotFound", f'{gr} "{nm}" not found', _details(t, nm))
    if isinstance(exc, AlreadyExists):
        return APIError(409, "AlreadyExists", f'{gr} "{nm}" already exists', _details(t, nm))
    if isinstance(exc, Conflict):
        msg = (f'Operation cannot be fulfilled on {gr} "{nm}": the object has been modified; '
               "please apply your changes to the latest version and try again")
        if str(exc).startswith("Precondition failed"):
            msg = f'Operation cannot be fulfilled on {gr} "{nm}": {exc}'
        return APIError(409, "Conflict", msg, _details(t, nm))
    if isinstance(exc, Expired):
        return APIError(410, "Expired", str(exc))
    if isinstance(exc, BadRequest):
        return APIError(400, "BadRequest", str(exc))
    return APIError(500, "InternalError", str(exc))


def wants_table(accept: str | None) -> bool:
    for mt, params in discovery.parse_accept(accept):
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io":
            return True
        if mt in ("application/json", "*/*") and not params:
            return False
    return False


def _bool_param(v: str | None) -> bool:
    return (v or "").lower() in ("true", "1")


class APIServer:
    """The ASGI application. ``store`` is shared with in-process components.

    Extra API groups (e.g. ``metrics.k8s.io``) are plugged in with :meth:`add_provider`: their
    resources appear in discovery and their requests go to the given handler.
    """

    def __init__(self, store: Store, registry: Registry | None = None, *, token: str | None = None,
                 server_address: str = "127.0.0.1:6443", gates: Any = None) -> None:
        self.store = store
        self.gates = gates
        self.registry = registry or Registry()
        self.token = token
        self.server_address = server_address
        self._strategies: dict[int, Strategy] = {}
        self._providers: dict[tuple[str, str], Handler] = {}
        self.openapi = openapi.Documents(self.registry, discovery.GIT_VERSION,
                                         skip=self._providers)
        # Finalizers every Pod created through the API gets (the simulated kubelet's, if any).
        self.pod_finalizers: tuple[str, ...] = ()
        # More /readyz checks (name -> callable returning None or why not), e.g. the simulation's.
        self.readiness_checks: dict[str, Callable[[], str | None]] = {}
        self.ensure_namespace("default")
        self.ensure_namespace("kube-system")
        self.ensure_namespace("kube-public")
        self.ensure_namespace("kube-node-lease")
        from pyhpa.cluster import reviews, services
        from pyhpa.cluster.crd import CustomResources
        reviews.install(self)
        services.ensure_kubernetes_service(store, server_address)
        self.custom = CustomResources(self)  # the kinds stored CRDs define
        self.custom.sync()

    # ---- setup
    def ensure_namespace(self, name: str) -> None:
        if self.store.try_get(R.NAMESPACES.key, "", name) is None:
            try:
                self.store.create(R.NAMESPACES.key, {
                    "apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
                    "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
            except AlreadyExists:
                pass

    def add_provider(self, group: str, version: str, resources: list[Resource],
                     handler: Handler) -> None:
        """Serve ``/apis/<group>/<version>/...`` with ``handler(request, target)``.

        ``resources`` are listed in discovery; ``target.res`` is the matched one. The handler
        returns a Starlette Response (raise :class:`APIError` for Status errors).
        """
        for r in resources:
            self.registry.add(r)
        self._providers[(group, version)] = handler
        self.clear_caches()

    def clear_caches(self) -> None:
        """Forget what was derived from the registry (after kinds came or went); strategies are
        keyed by id(), which a replaced Resource's successor may reuse."""
        self.openapi.invalidate()
        self._strategies = {}

    def strategy(self, res: Resource) -> Strategy:
        s = self._strategies.get(id(res))
        if s is None:
            s = self._strategies[id(res)] = strategy_for(res, self.gates)
            s.store = self.store
        return s

    # ---- ASGI entry
    async def __call__(self, scope: Obj, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        try:
            response = await self.handle(request)
        except APIError as exc:
            response = status_response(exc.status())
        except Invalid as exc:
            response = status_response(exc.status())
        except Exception as exc:  # noqa: BLE001 - never leak a framework error body
            if callable(getattr(exc, "status", None)):  # the API model's InvalidError
                await status_response(exc.status())(scope, receive, send)
                return
            import traceback
            traceback.print_exc()
            response = status_response(APIError(500, "InternalError",
                                                f"an error on the server has prevented the "
                                                f"request from succeeding: {exc!r}").status())
        await response(scope, receive, send)

    def _authorized(self, request: Request) -> bool:
        if self.token is None or _health_path(request.url.path) is not None:
            return True
        auth = request.headers.get("authorization", "")
        return auth == f"Bearer {self.token}"

    async def handle(self, request: Request) -> Response:
        path = request.url.path
        if len(path) > 1:
            path = path.rstrip("/")
        if not self._authorized(request):
            raise APIError(401, "Unauthorized", "Unauthorized")
        health = _health_path(path)
        if health is not None:
            return self._health(request, *health)
        method = request.method
        if path == "/version":
            return self._json(discovery.version_info())
        if path in ("/api", "/apis"):
            return self._discovery_root(request, path == "/api")
        if path == "/openapi/v2" or path == "/swagger-2.0.0.pb-v1":
            return Response(self.openapi.v2(), media_type=openapi.V2_CONTENT_TYPE)
        if path == "/openapi/v3":
            return Response(self.openapi.v3_index(), media_type=JSON)
        if path.startswith("/openapi/v3/"):
            body = self.openapi.v3(path[len("/openapi/v3/"):])
            if body is None:
                raise not_found_path()
            return Response(body, media_type=JSON)
        parts = [p for p in path.split("/") if p]
        if parts and parts[0] == "api":
            group, rest = "", parts[1:]
        elif parts and parts[0] == "apis":
            if len(parts) == 2:
                doc = discovery.api_group(self.registry, parts[1])
                if doc is None:
                    raise not_found_path()
                return self._json(doc)
            group, rest = (parts[1], parts[2:]) if len(parts) > 2 else ("", [])
        else:
            raise not_found_path()
        if not rest:
            raise not_found_path()
        version, segs = rest[0], rest[1:]
        provider = self._providers.get((group, version))
        if not segs:
            doc = discovery.resource_list(self.registry, group, version)
            if doc is None:
                raise not_found_path()
            return self._json(doc)
        if provider is not None:
            # Providers (the metrics APIs) have their own URL grammar (".../pods/*/METRIC"),
            # so a path the registry cannot parse is still theirs; they re-read request.url.
            try:
                target = self._parse_target(group, version, segs, method)
            except APIError:
                target = Target(None, group, version, None, None, None)  # type: ignore[arg-type]
            return await provider(request, target)
        target = self._parse_target(group, version, segs, method)
        return await self._dispatch(request, target)

    def _parse_target(self, group: str, version: str, segs: list[str], method: str) -> Target:
        namespace = None
        if segs[0] == "namespaces" and len(segs) >= 3 and not (
                len(segs) == 3 and segs[2] in ("status", "finalize")):
            namespace, segs = segs[1], segs[2:]
        if len(segs) > 3:
            raise not_found_path()
        res = self.registry.lookup(group, version, segs[0])
        if res is None:
            raise not_found_path()
        name = segs[1] if len(segs) > 1 else None
        sub = segs[2] if len(segs) > 2 else None
        if res.namespaced and namespace is None and name is not None:
            raise not_found_path()
        if not res.namespaced and namespace is not None:
            raise not_found_path()
        if sub is not None and (sub == "finalize" or res.subresource(sub) is None):
            if not (sub == "finalize" and res is R.NAMESPACES):
                raise not_found_path()
        return Target(res, group, version, namespace, name, sub)

    async def _dispatch(self, request: Request, t: Target) -> Response:
        response = await self._route(request, t)
        if t.res is R.CRDS and request.method != "GET" and response.status_code < 300:
            self.custom.sync()  # a CRD came, changed or went: serve what it defines now
        return response

    async def _route(self, request: Request, t: Target) -> Response:
        m = request.method
        if t.name is None:
            if m == "GET":
                if _bool_param(request.query_params.get("watch")):
                    return self._watch(request, t)
                return self._list(request, t)
            if m == "POST":
                return await self._create(request, t)
            if m == "DELETE":
                return await self._delete_collection(request, t)
        else:
            if m == "GET":
                return self._get(request, t)
            if m == "PUT":
                return await self._update(request, t)
            if m == "PATCH":
                return await self._patch(request, t)
            if m == "DELETE" and t.sub is None:
                return await self._delete(request, t)
            if m == "POST":
                # /namespaces/NS is "namespaced" only for sub-resources; POST to an item is 405
                pass
        raise APIError(405, "MethodNotAllowed",
                       f"the server does not allow this method on the requested resource")

    # ---- health
    def _health_checks(self, endpoint: str) -> dict[str, Callable[[], str | None]]:
        """Named checks of /livez, /readyz, /healthz: each returns None when fine, else why not."""
        def store() -> str | None:
            ok = self.store.try_get(R.NAMESPACES.key, "", "default") is not None
            return None if ok else "the default namespace cannot be read"
        checks: dict[str, Callable[[], str | None]] = {"ping": lambda: None, "store": store}
        if endpoint != "livez":
            checks.update(self.readiness_checks)
        return checks

    def _health(self, request: Request, endpoint: str, only: str | None) -> Response:
        """Upstream's health endpoints: ``ok``, ``?verbose`` lists ``[+]name ok`` per check,
        ``?exclude=name`` skips one, ``/readyz/<name>`` runs one; a failure answers 500."""
        checks = self._health_checks(endpoint)
        if only is not None:
            if only not in checks:
                raise not_found_path()
            checks = {only: checks[only]}
        excluded = set(request.query_params.getlist("exclude"))
        lines, failed = [], False
        for name, check in checks.items():
            if name in excluded:
                lines.append(f"[+]{name} excluded: ok")
                continue
            try:
                reason = check()
            except Exception as exc:  # noqa: BLE001 - a crashing check is a failing check
                reason = repr(exc)
            failed = failed or reason is not None
            lines.append(f"[+]{name} ok" if reason is None else f"[-]{name} failed: {reason}")
        verbose = "verbose" in request.query_params
        if not failed and not verbose:
            return Response(b"ok", media_type="text/plain")
        word = "failed" if failed else "passed"
        label = endpoint if only is None else f"{endpoint}/{only}"
        text = "\n".join(lines) + f"\n{label} check {word}\n"
        return Response(text.encode(), status_code=500 if failed else 200, media_type="text/plain")

    # ---- responses
    def _json(self, obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        return Response(_encode(obj), status_code=status, media_type=JSON, headers=headers)

    def _discovery_root(self, request: Request, core: bool) -> Response:
        agg = discovery.negotiate_discovery(request.headers.get("accept"))
        if agg is not None:
            body = discovery.aggregated(self.registry, core, agg)
            return Response(_encode(body), media_type=discovery.AGG_TYPES[agg],
                            headers={"Vary": "Accept"})
        if core:
            return self._json(discovery.api_versions(self.server_address))
        return self._json(discovery.api_group_list(self.registry))

    # ---- conversions
    def _out(self, t: Target, obj: Obj) -> Obj:
        return self.strategy(t.res).from_storage(obj, t.version)

    def _identity_version(self, t: Target) -> bool:
        return t.res is t.store_res and t.version == t.res.storage_version \
            and "convert" not in t.res.extra

    # ---- reads
    def _get(self, request: Request, t: Target) -> Response:
        key = t.store_res.key
        ns = t.namespace or ""
        try:
            entry = self.store.get_entry(key, ns, t.name or "")
        except StoreError as exc:
            raise map_store_error(t, exc) from None
        if t.sub == "scale":
            return self._json(scales.to_scale(t.res, entry.obj()))
        table = wants_table(request.headers.get("accept"))
        if not table and self._identity_version(t):
            return Response(entry.raw, media_type=JSON)
        obj = self._out(t, entry.obj())
        if table:
            doc = tables.table(t.res, [obj], resource_version=str(entry.rv),
                               include_object=request.query_params.get("includeObject", "Metadata"))
            return Response(_encode(doc), media_type=TABLE_TYPE)
        return self._json(obj)

    def _selectors(self, request: Request, t: Target) -> tuple[Any, Any]:
        q = request.query_params
        ls = q.get("labelSelector") or None
        fs_text = q.get("fieldSelector") or None
        label = None
        if ls:
            try:
                from pyhpa.api.selectors import Selector
                label = Selector.parse(ls)
            except Exception as exc:  # noqa: BLE001 - SelectorError and friends
                raise APIError(400, "BadRequest",
                               f"unable to parse requirement: {exc}") from None
        field = None
        if fs_text:
            try:
                field = FieldSelector.parse(fs_text)
            except FieldSelectorError as exc:
                raise APIError(400, "BadRequest", str(exc)) from None
            allowed = t.res.selectable_fields()
            for term in field.terms:
                name = ".".join(term.path)
                if name not in allowed:
                    raise APIError(400, "BadRequest", f"field label not supported: {name}")
            if t.res.group == "events.k8s.io":  # field names of the served version
                field = FieldSelector([type(term)(_EVENTS_V1_FIELDS.get(
                    term.path[0], (term.path[0],)) + term.path[1:], term.op, term.value)
                    for term in field.terms])
        return label, field

    def _list(self, request: Request, t: Target) -> Response:
        q = request.query_params
        label, field = self._selectors(request, t)
        try:
            limit = int(q.get("limit") or 0)
        except ValueError:
            raise APIError(400, "BadRequest", "limit: must be an integer") from None
        table = wants_table(request.headers.get("accept"))
        key = t.store_res.key
        try:
            if not table and self._identity_version(t) and label is None and field is None:
                raw = self.store.list_raw(key, t.namespace, limit=limit or None,
                                          continue_token=q.get("continue"))
                meta: Obj = {"resourceVersion": raw.resource_version}
                if raw.continue_token:
                    meta["continue"] = raw.continue_token
                    if raw.remaining is not None:
                        meta["remainingItemCount"] = raw.remaining
                head = _encode({"kind": t.res.list_kind, "apiVersion": t.res.api_version(t.version),
                                "metadata": meta})
                body = head[:-1] + b',"items":[' + b",".join(raw.items) + b"]}"
                return Response(body, media_type=JSON)
            decode = None  # a Table's rows read a few fields: decode only those when we can
            if table and q.get("includeObject") != "Object" and field is None \
                    and self._identity_version(t):
                decode = tables.row_decoder(t.res)  # keeps all metadata, so labels filter
            res = self.store.list(key, t.namespace, label_selector=label, field_selector=field,
                                  limit=limit or None, continue_token=q.get("continue"),
                                  decode=decode)
        except StoreError as exc:
            raise map_store_error(t, exc) from None
        items = [self._out(t, o) for o in res.items]
        if table:
            doc = tables.table(t.res, items, resource_version=res.resource_version,
                               include_object=q.get("includeObject", "Metadata"),
                               continue_token=res.continue_token)
            return Response(_encode(doc), media_type=TABLE_TYPE)
        meta = {"resourceVersion": res.resource_version}
        if res.continue_token:
            meta["continue"] = res.continue_token
        return self._json({"kind": t.res.list_kind, "apiVersion": t.res.api_version(t.version),
                           "metadata": meta, "items": items})

    def _watch(self, request: Request, t: Target) -> Response:
        q = request.query_params
        label, field = self._selectors(request, t)
        rv = q.get("resourceVersion") or ""
        table = wants_table(request.headers.get("accept"))
        include = q.get("includeObject", "Metadata")
        timeout = None
        if q.get("timeoutSeconds"):
            try:
                timeout = float(q["timeoutSeconds"])
            except ValueError:
                raise APIError(400, "BadRequest", "timeoutSeconds: must be an integer") from None
        bookmarks = _bool_param(q.get("allowWatchBookmarks"))
        try:
            since = int(rv) if rv else 0
        except ValueError:
            raise APIError(400, "BadRequest", f"resourceVersion: invalid value {rv!r}") from None
        try:
            w = self.store.watch(t.store_res.key, t.namespace, since=since or None,
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
                                  "metadata": {"resourceVersion": str(self.store.resource_version)}}
                            yield _encode({"type": "BOOKMARK", "object": bm}) + b"\n"
                        continue
                    if ev.type == "ERROR":
                        yield _encode({"type": "ERROR", "object": ev.object}) + b"\n"
                        return
                    if not table and self._identity_version(t):
                        yield b'{"type":"' + ev.type.encode() + b'","object":' + ev.raw + b"}\n"
                        continue
                    obj = self._out(t, ev.object)
                    if table:
                        obj = tables.table(t.res, [obj], resource_version=str(ev.rv),
                                           include_object=include, with_columns=False)
                    yield _encode({"type": ev.type, "object": obj}) + b"\n"
            finally:
                w.close()

        return StreamingResponse(stream(), media_type=TABLE_TYPE if table else JSON,
                                 headers={"Cache-Control": "no-cache, private"})

    # ---- body decoding
    async def _body(self, request: Request, t: Target, *, allow_protobuf: bool = True) -> Any:
        raw = await request.body()
        ctype = (request.headers.get("content-type") or JSON).split(";")[0].strip().lower()
        if ctype == protobuf.CONTENT_TYPE:
            if not allow_protobuf:
                raise APIError(415, "UnsupportedMediaType",
                               f"the body of the request was in an unknown format - accepted "
                               f"media types include: application/json, application/yaml")
            try:
                return protobuf.decode_object(raw)
            except protobuf.ProtobufError as exc:
                if "only supported" in str(exc) or "magic" in str(exc):
                    raise APIError(415, "UnsupportedMediaType", str(exc)) from None
                raise APIError(400, "BadRequest", f"unable to decode protobuf body: {exc}") from None
        try:
            if ctype in ("application/yaml", patches.APPLY):
                return yaml.safe_load(raw.decode() or "null")
            return json.loads(raw or b"null")
        except (ValueError, yaml.YAMLError) as exc:
            raise APIError(400, "BadRequest", f"the body of the request could not be decoded: "
                                              f"{exc}") from None

    def _check_object(self, t: Target, body: Any, *, url_name: str | None = None) -> Obj:
        if not isinstance(body, dict):
            raise APIError(400, "BadRequest", "the body of the request must be a JSON object")
        want_av = t.res.api_version(t.version)
        av, kind = body.get("apiVersion"), body.get("kind")
        if (av and av != want_av) or (kind and kind != t.res.kind):
            raise APIError(400, "BadRequest",
                           f"the API version in the data ({av}) does not match the expected API "
                           f"version ({want_av})" if av and av != want_av else
                           f"the kind in the data ({kind}) does not match the expected kind "
                           f"({t.res.kind})")
        meta = body.get("metadata")
        if meta is None:
            meta = body["metadata"] = {}
        if not isinstance(meta, dict):
            raise APIError(400, "BadRequest", "metadata: must be an object")
        if t.res.namespaced:
            ns = meta.get("namespace")
            if ns and ns != t.namespace:
                raise APIError(400, "BadRequest", "the namespace of the provided object does not "
                                                  "match the namespace sent on the request")
            meta["namespace"] = t.namespace
        else:
            meta.pop("namespace", None)
        if url_name is not None and meta.get("name") and meta["name"] != url_name:
            raise APIError(400, "BadRequest", f"the name of the object ({meta['name']}) does not "
                                              f"match the name on the URL ({url_name})")
        if url_name is not None:
            meta["name"] = url_name
        return body

    def _field_validation(self, request: Request, t: Target, obj: Obj,
                          headers: dict[str, str]) -> None:
        mode = request.query_params.get("fieldValidation", "")
        if mode.lower() == "ignore":
            return
        unknown = self.strategy(t.res).unknown_fields(obj, t.version)
        if not unknown:
            return
        if mode.lower() == "strict":
            fields = ", ".join(f'unknown field "{f}"' for f in unknown)
            raise APIError(400, "BadRequest",
                           f'{t.res.kind} in version "{t.version}" cannot be handled as a '
                           f"{t.res.kind}: strict decoding error: {fields}")
        headers["Warning"] = ", ".join(f'299 - "unknown field \\"{f}\\""' for f in unknown)

    def _require_namespace(self, t: Target) -> None:
        if t.res.namespaced and self.store.try_get(R.NAMESPACES.key, "", t.namespace or "") is None:
            raise APIError(404, "NotFound", f'namespaces "{t.namespace}" not found',
                           {"name": t.namespace, "kind": "namespaces"})

    def _invalid(self, t: Target, name: str, causes: list[Obj]) -> Invalid:
        return Invalid(t.res.kind, t.group, name, causes)

    # ---- writes
    async def _create(self, request: Request, t: Target) -> Response:
        body = await self._body(request, t)
        return self._create_object(request, t, body)

    def _create_object(self, request: Request, t: Target, body: Any, *,
                       manager_op: str = "Update", applied: Obj | None = None) -> Response:
        q = request.query_params
        obj = self._check_object(t, body)
        headers: dict[str, str] = {}
        self._field_validation(request, t, obj, headers)
        self._require_namespace(t)
        strat = self.strategy(t.res)
        name = (obj.get("metadata") or {}).get("name") or ""
        obj = strat.to_storage(obj, t.version)
        strat.prepare_create(obj)
        if t.res is R.PODS and self.pod_finalizers:
            meta = obj.setdefault("metadata", {})
            fins = meta.get("finalizers") or []
            meta["finalizers"] = fins + [f for f in self.pod_finalizers if f not in fins]
        causes = strat.validate(obj, None)
        if causes:
            raise self._invalid(t, name, causes)
        manager = q.get("fieldManager") or ""
        if manager:
            owned = managed.leaves(applied if applied is not None else obj)
            if t.res.has_status():  # status is reset on create: nobody owns it yet
                owned = {p for p in owned if p[0] != "status"}
            managed.record(obj, manager, manager_op, t.res.api_version(t.version), owned)
        dry = q.get("dryRun") == "All"
        try:
            created = self.store.create(t.store_res.key, obj, dry_run=dry,
                                        bump_generation=strat.bump_generation)
        except StoreError as exc:
            raise map_store_error(t, exc, name) from None
        return self._json(self._out(t, created), 201, headers)

    async def _update(self, request: Request, t: Target) -> Response:
        # PUT .../scale arrives without Content-Type: _body treats that as JSON.
        body = await self._body(request, t, allow_protobuf=False)
        if t.sub == "scale":
            return self._write_scale(request, t, body)
        obj = self._check_object(t, body, url_name=t.name)
        headers: dict[str, str] = {}
        self._field_validation(request, t, obj, headers)
        result = self._store_update(request, t, obj)
        return self._json(self._out(t, result), 200, headers)

    def _store_update(self, request: Request, t: Target, obj: Obj, *, check_rv: bool = True,
                      manager_op: str = "Update", expect_rv: str | None = None) -> Obj:
        """Run the strategy on ``obj`` (request version) and store it; returns the stored dict."""
        q = request.query_params
        strat = self.strategy(t.res)
        key, ns, name = t.store_res.key, t.namespace or "", t.name or ""
        try:
            old = self.store.get(key, ns, name)
        except StoreError as exc:
            raise map_store_error(t, exc) from None
        new = strat.to_storage(obj, t.version)
        if t.sub == "status":
            strat.prepare_status_update(new, old)
            causes = strat.validate_status(new, old)
        else:
            strat.prepare_update(new, old)
            causes = strat.validate(new, old)
        if causes:
            raise self._invalid(t, name, causes)
        meta = new.setdefault("metadata", {})
        if expect_rv is not None and not meta.get("resourceVersion"):
            meta["resourceVersion"] = expect_rv
        # managedFields: keep the stored ones unless the client sent its own
        if "managedFields" not in meta and "managedFields" in old.get("metadata", {}):
            meta["managedFields"] = copy.deepcopy(old["metadata"]["managedFields"])
        manager = q.get("fieldManager") or ""
        if manager and manager_op == "Update":
            changed = managed.changed_leaves(_sans_meta(old), _sans_meta(new))
            if changed:
                managed.record(new, manager, "Update", t.res.api_version(t.version), changed,
                               subresource=t.sub or "")
        dry = q.get("dryRun") == "All"
        try:
            return self.store.update(key, new, check_rv=check_rv, dry_run=dry,
                                     bump_generation=strat.bump_generation)
        except StoreError as exc:
            raise map_store_error(t, exc) from None

    def _write_scale(self, request: Request, t: Target, scale: Any) -> Response:
        if not isinstance(scale, dict):
            raise APIError(400, "BadRequest", "the body of the request must be a Scale object")
        causes = scales.validate_scale(scale)
        if causes:
            raise Invalid("Scale", "autoscaling", t.name or "", causes)
        key, ns, name = t.store_res.key, t.namespace or "", t.name or ""
        try:
            obj = self.store.get(key, ns, name)
        except StoreError as exc:
            raise map_store_error(t, exc) from None
        scales.apply_scale(t.res, obj, scale)
        dry = request.query_params.get("dryRun") == "All"
        try:
            out = self.store.update(key, obj, dry_run=dry)
        except StoreError as exc:
            raise map_store_error(t, exc) from None
        return self._json(scales.to_scale(t.res, out))

    async def _patch(self, request: Request, t: Target) -> Response:
        ctype = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
        if ctype == patches.APPLY:
            return await self._apply(request, t)
        if ctype not in patches.PATCH_TYPES:
            raise APIError(415, "UnsupportedMediaType",
                           f"the body of the request was in an unknown format - accepted media "
                           f"types include: {', '.join(patches.PATCH_TYPES)}")
        body = await self._body(request, t, allow_protobuf=False)
        key, ns, name = t.store_res.key, t.namespace or "", t.name or ""
        headers: dict[str, str] = {}
        for _attempt in range(8):
            try:
                entry = self.store.get_entry(key, ns, name)
            except StoreError as exc:
                raise map_store_error(t, exc) from None
            current = entry.obj()
            view = scales.to_scale(t.res, current) if t.sub == "scale" else self._out(t, current)
            before_rv = (view.get("metadata") or {}).get("resourceVersion")
            try:
                patched = patches.apply_patch(ctype, copy.deepcopy(view), body,
                                              _patch_schema(t))
            except patches.PatchError as exc:
                raise APIError(422 if ctype == patches.JSON_PATCH else 400,
                               "Invalid" if ctype == patches.JSON_PATCH else "BadRequest",
                               str(exc)) from None
            explicit_rv = (patched.get("metadata") or {}).get("resourceVersion") != before_rv
            if t.sub == "scale":
                if explicit_rv and (patched.get("metadata") or {}).get("resourceVersion"):
                    pass
                try:
                    return self._write_scale(request, t, patched)
                except APIError as exc:
                    if exc.reason == "Conflict" and not explicit_rv:
                        continue
                    raise
            obj = self._check_object(t, patched, url_name=t.name)
            self._field_validation(request, t, obj, headers)
            try:
                result = self._store_update(request, t, obj)
            except APIError as exc:
                if exc.reason == "Conflict" and not explicit_rv:
                    continue  # raced with another writer: re-read and re-apply, as upstream
                raise
            return self._json(self._out(t, result), 200, headers)
        raise map_store_error(t, Conflict(key, ns, name))

    async def _apply(self, request: Request, t: Target) -> Response:
        """Server-side apply (approximate field ownership, see pyhpa.cluster.managed)."""
        q = request.query_params
        manager = q.get("fieldManager")
        if not manager:
            raise APIError(400, "BadRequest",
                           "PATCH /apply: fieldManager is required for apply requests")
        body = await self._body(request, t, allow_protobuf=False)
        applied = self._check_object(t, body, url_name=t.name)
        if t.sub == "scale":
            raise APIError(415, "UnsupportedMediaType", "apply is not supported on /scale")
        key, ns, name = t.store_res.key, t.namespace or "", t.name or ""
        force = _bool_param(q.get("force"))
        current = self.store.try_get(key, ns, name)
        if current is None:
            if t.sub:
                raise map_store_error(t, NotFound(key, ns, name))
            return self._create_object(request, t, copy.deepcopy(applied), manager_op="Apply",
                                       applied=applied)
        live = self._out(t, current)
        applied_cmp = _sans_meta(applied)
        found = managed.conflicts(live, manager, applied_cmp)
        if found and not force:
            found = managed.upgrade_conflicts(live, manager, found)
        if found and not force:
            causes = [{"reason": "FieldManagerConflict",
                       "message": f'conflict with "{m}"' + (f" using {av}" if av else ""),
                       "field": "." + ".".join(p)} for m, av, p in found]
            lines = [f"{c['message']}: {c['field']}" for c in causes]
            n = len(causes)
            msg = (f"Apply failed with {n} conflict{'s' if n > 1 else ''}: " + "\n".join(lines))
            raise APIError(409, "Conflict", msg, {**_details(t), "causes": causes})
        merged = managed.apply(live, manager, applied_cmp)
        managed.sync_last_applied(merged, live, manager, applied)
        # metadata.labels/annotations from the applied config are leaves of applied_cmp too
        managed.record(merged, manager, "Apply", t.res.api_version(t.version),
                       managed.leaves(applied_cmp), replace=True, subresource=t.sub or "")
        merged.setdefault("metadata", {})["resourceVersion"] = \
            (current.get("metadata") or {}).get("resourceVersion")
        obj = self._check_object(t, merged, url_name=t.name)
        headers: dict[str, str] = {}
        self._field_validation(request, t, obj, headers)
        result = self._store_update(request, t, obj, manager_op="Apply")
        return self._json(self._out(t, result), 200, headers)

    async def _read_delete_options(self, request: Request) -> Obj:
        raw = await request.body()
        if not raw:
            return {}
        try:
            opts = json.loads(raw)
        except ValueError:
            raise APIError(400, "BadRequest", "DeleteOptions: invalid JSON") from None
        return opts if isinstance(opts, dict) else {}

    async def _delete(self, request: Request, t: Target) -> Response:
        opts = await self._read_delete_options(request)
        q = request.query_params
        pre = opts.get("preconditions") or {}
        dry = q.get("dryRun") == "All" or "All" in (opts.get("dryRun") or [])
        policy = opts.get("propagationPolicy") or q.get("propagationPolicy") or "Background"
        if opts.get("orphanDependents") is True:
            policy = "Orphan"
        obj = self.delete_object(t, t.namespace or "", t.name or "", dry_run=dry, policy=policy,
                                 resource_version=pre.get("resourceVersion"), uid=pre.get("uid"),
                                 grace=_grace_period(opts, q))
        return self._json(self._out(t, obj))

    def delete_object(self, t: Target, ns: str, name: str, *, dry_run: bool = False,
                      policy: str = "Background", resource_version: str | None = None,
                      uid: str | None = None, grace: int | None = None) -> Obj:
        key = t.store_res.key
        try:
            if t.res is R.PODS:
                grace = self._pod_grace(ns, name, grace)
            released = None
            if grace == 0 and t.res is R.PODS and not dry_run:
                released = self._release_pod(ns, name)
            if released is not None and self.store.try_get(key, ns, name) is None:
                obj, gone = released, True  # it was terminating already: the release ended it
            else:
                obj, gone = self.store.delete(key, ns, name, resource_version=resource_version,
                                              uid=uid, dry_run=dry_run, grace_seconds=grace)
        except StoreError as exc:
            raise map_store_error(t, exc, name) from None
        if gone and not dry_run:
            if t.res is R.NAMESPACES:
                self.store.delete_namespace_contents(name)
            elif policy != "Orphan":
                self.collect_dependents((obj.get("metadata") or {}).get("uid"), ns)
        return obj

    def _pod_grace(self, ns: str, name: str, grace: int | None) -> int | None:
        """A pod's grace period: the request's, else its terminationGracePeriodSeconds (30)."""
        pod = self.store.try_get(R.PODS.key, ns, name)
        if pod is None or grace is not None:
            return grace
        spec_grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
        return spec_grace if isinstance(spec_grace, int) and spec_grace >= 0 else 30

    def _release_pod(self, ns: str, name: str) -> Obj | None:
        """Drop the simulated kubelet's finalizer, so a zero grace period removes the pod now
        (``delete --grace-period=0 --force``); only finalizers of others still hold it.
        Returns the last state when there was one to drop."""
        from pyhpa.cluster.controllers.objects import FINALIZER

        pod = self.store.try_get(R.PODS.key, ns, name)
        if pod is None or FINALIZER not in ((pod.get("metadata") or {}).get("finalizers") or []):
            return None

        def release(o: Obj) -> None:
            meta = o.setdefault("metadata", {})
            fins = [f for f in meta.get("finalizers") or [] if f != FINALIZER]
            if fins:
                meta["finalizers"] = fins
            else:
                meta.pop("finalizers", None)
        return self.store.guaranteed_update(R.PODS.key, ns, name, release)

    def collect_dependents(self, uid: str | None, ns: str) -> None:
        """Garbage-collect objects owned by ``uid`` (what the GC controller does, synchronously)."""
        if not uid:
            return
        todo = [uid]
        while todo:
            owner = todo.pop()
            for res in self.registry.resources:
                if res is not R.storage_of(res) or not res.namespaced:
                    continue
                if res.extra.get("virtual"):
                    continue
                for o in self.store.list(res.key, ns).items:
                    refs = (o.get("metadata") or {}).get("ownerReferences") or []
                    if any(r.get("uid") == owner for r in refs):
                        m = o["metadata"]
                        try:
                            self.store.delete(res.key, ns, m["name"], grace_finalizers=False)
                        except NotFound:
                            continue
                        todo.append(m.get("uid"))

    async def _delete_collection(self, request: Request, t: Target) -> Response:
        opts = await self._read_delete_options(request)
        label, field = self._selectors(request, t)
        dry = request.query_params.get("dryRun") == "All"
        res = self.store.list(t.store_res.key, t.namespace, label_selector=label,
                              field_selector=field)
        out = []
        for o in res.items:
            m = o.get("metadata") or {}
            try:
                out.append(self._out(t, self.delete_object(
                    t, m.get("namespace") or "", m.get("name") or "", dry_run=dry,
                    policy=opts.get("propagationPolicy") or "Background",
                    grace=_grace_period(opts, request.query_params))))
            except APIError as exc:
                if exc.code != 404:
                    raise
        return self._json({"kind": t.res.list_kind, "apiVersion": t.res.api_version(t.version),
                           "metadata": {"resourceVersion": str(self.store.resource_version)},
                           "items": out})


def _health_path(path: str) -> tuple[str, str | None] | None:
    """("readyz", None) for /readyz, ("readyz", "ping") for /readyz/ping; None otherwise."""
    if path in OPEN_PATHS:
        return path[1:], None
    if not path.startswith(_HEALTH_PREFIXES):
        return None  # every API request: keep this cheap
    parts = [p for p in path.split("/") if p]
    if parts and "/" + parts[0] in OPEN_PATHS and len(parts) <= 2:
        return parts[0], parts[1] if len(parts) == 2 else None
    return None


def _grace_period(opts: Obj, query: Any) -> int | None:
    """DeleteOptions.gracePeriodSeconds from the body or the query (negative means 1, as upstream)."""
    raw = opts.get("gracePeriodSeconds")
    if raw is None:
        raw = query.get("gracePeriodSeconds")
    if raw is None or raw == "":
        return None
    try:
        grace = int(raw)
    except (TypeError, ValueError):
        raise APIError(400, "BadRequest",
                       f"gracePeriodSeconds: must be an integer, got {raw!r}") from None
    return 1 if grace < 0 else grace


def _sans_meta(obj: Obj) -> Obj:
    """The object without server-owned metadata, for ownership comparisons."""
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    for k in ("managedFields", "resourceVersion", "generation", "uid", "creationTimestamp"):
        meta.pop(k, None)
    out["metadata"] = meta
    return out


def _patch_schema(t: Target) -> patches.SchemaView | None:
    """The published schema of what a patch changes (the object, or its Scale), whose
    strategic-merge markers say which lists merge by which key; None for a kind without one."""
    from pyhpa.cluster.schemas import builtin, builtin_kinds

    gvk = ("autoscaling", "v1", "Scale") if t.sub == "scale" else (t.res.group, t.version, t.res.kind)
    name = builtin_kinds().get(gvk)
    if name is None:
        return None
    defs = builtin()
    return patches.SchemaView(defs[name], defs)
