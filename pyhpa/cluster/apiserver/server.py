"""The embedded cluster's Kubernetes API server (an ASGI app over the store and registry).

Why one dispatcher instead of a route per endpoint: every resource shares the same URL grammar
(``/api/v1`` or ``/apis/G/V``, optional ``namespaces/NS``, ``resource[/name[/subresource]]``),
so the path is parsed once against the registry and handed to a verb handler
(:mod:`pyhpa.cluster.apiserver.handlers`). Protocol details follow what kubectl sends and reads:
aggregated discovery by Accept, Table output, watch framing, Status errors (never a framework
error body), protobuf HPA bodies, and the OpenAPI documents (:mod:`.openapi`).

What the server does not know: the simulation. The wiring (:mod:`pyhpa.cluster.embedded`) adds
its parts through :meth:`APIServer.add_provider` (the metrics APIs), ``proxies`` (what the
nodes' and Services' proxy paths reach), ``readiness_checks`` and ``pod_finalizers``.
"""

from __future__ import annotations

import asyncio
import hmac
import traceback
from typing import Any, Awaitable, Callable

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from pyhpa.api.versions import VersionProfile, pyhpa_profile
from pyhpa.cluster.apiserver import discovery, openapi, pod_io, proxy, rbac, reviews, services
from pyhpa.cluster.apiserver import managed_fields as managed
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.crd import CustomResources
from pyhpa.cluster.apiserver.handlers import create, delete, eviction, get, patch, update, watch
from pyhpa.cluster.apiserver.handlers.options import bool_param
from pyhpa.cluster.apiserver.handlers.request import (BODY_WARNINGS_KEY, check_content_length,
                                                      header, limit_body, warning_header)
from pyhpa.cluster.apiserver.handlers.scope import JSON, RequestScope, Target, json_response
from pyhpa.cluster.apiserver.health import Check, health_path, health_response
from pyhpa.cluster.apiserver.namespace_objects import ensure_namespace_objects
from pyhpa.cluster.apiserver.policy_bootstrap import ensure_cluster_defaults
from pyhpa.cluster.apiserver.rbac_bootstrap import ensure_bootstrap_policy
from pyhpa.cluster.apiserver.resources import Registry, Resource
from pyhpa.cluster.apiserver.status import APIError, Invalid, not_found_path, status_response
from pyhpa.cluster.apiserver.storage import AlreadyExists, Store

Obj = dict[str, Any]
_DOT_SEGMENTS = (".", "..")  # never a namespace or a name (IsValidPathSegmentName)
_encode = msgspec.json.Encoder().encode
Handler = Callable[[Request, Target], Awaitable[Response]]


class APIServer(RequestScope):
    """The ASGI application. ``store`` is shared with in-process components.

    Extra API groups (e.g. ``metrics.k8s.io``) are plugged in with :meth:`add_provider`: their
    resources appear in discovery and their requests go to the given handler.
    """

    def __init__(self, store: Store, registry: Registry | None = None, *, token: str | None = None,
                 server_address: str = "127.0.0.1:6443", profile: VersionProfile | None = None,
                 root_ca: str | None = None) -> None:
        self.version_profile = profile or pyhpa_profile()  # reported by /version, rules for HPAs
        super().__init__(store, registry or Registry(), self.version_profile)
        self.root_ca = root_ca
        self.token = token
        self._bearer = f"Bearer {token}".encode()  # what the Authorization header must hold
        self.server_address = server_address
        self._providers: dict[tuple[str, str], Handler] = {}
        self.openapi = openapi.Documents(self.registry, self.version_profile.git_version,
                                         openapi.as_released(self.schemas, self.version_profile),
                                         skip=self._providers)
        # What the nodes/proxy and services/proxy paths reach (the simulated kubelets' metrics...)
        self.proxies = proxy.Proxies(store)
        # pods' log (what the simulation registers) and the refused exec/attach/port-forward
        self.pod_io = pod_io.PodIO(store)
        # More /readyz checks (name -> callable returning None or why not), e.g. the simulation's.
        self.readiness_checks: dict[str, Check] = {}
        self.ensure_namespace("default")
        self.ensure_namespace("kube-system")
        self.ensure_namespace("kube-public")
        self.ensure_namespace("kube-node-lease")  # the nodes' Leases, as the kubelet keeps them
        for ns in store.list(R.NAMESPACES.key).items:
            ensure_namespace_objects(store, ns["metadata"]["name"], root_ca)
        ensure_bootstrap_policy(store)
        ensure_cluster_defaults(store)
        self.authorizer = rbac.Authorizer(store)
        review_handler = reviews.Reviews(self.authorizer)
        for group, version, resources in reviews.GROUP_VERSIONS:
            self.add_provider(group, version, list(resources), review_handler)
        services.ensure_kubernetes_service(store, server_address)
        # the kinds stored CRDs define
        self.custom = CustomResources(store, self.registry, self.openapi, self.clear_caches)
        self.custom.sync()

    # ---- setup
    def ensure_namespace(self, name: str) -> None:
        if self.store.try_get(R.NAMESPACES.key, "", name) is None:
            try:
                namespace = {
                    "apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
                    "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
                managed.record_create(namespace, managed.KUBE_APISERVER, "v1")
                self.store.create(R.NAMESPACES.key, namespace)
            except AlreadyExists:
                pass

    def add_provider(self, group: str, version: str, resources: list[Resource],
                     handler: Handler) -> None:
        """Serve ``/apis/<group>/<version>/...`` with ``handler(request, target)``.

        ``resources`` are listed in discovery; ``target.res`` is the matched one. The handler
        returns a Starlette Response (raise :class:`~.status.APIError` for Status errors).
        """
        for r in resources:
            self.registry.add(r)
        self._providers[(group, version)] = handler
        self.clear_caches()

    def clear_caches(self) -> None:
        """Forget what was derived from the registry (after kinds came or went)."""
        self.openapi.invalidate()
        self.strategies.clear()

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
        request = Request(scope, limit_body(receive))
        try:
            response = await self.handle(request)
        except asyncio.CancelledError:
            return  # the server is shutting down (see below)
        except APIError as exc:
            response = status_response(exc.status(), exc.headers)
        except Invalid as exc:
            response = status_response(exc.status())
        except Exception as exc:  # noqa: BLE001 - never leak a framework error body
            if callable(getattr(exc, "status", None)):  # the API model's InvalidError
                await status_response(exc.status())(scope, receive, send)
                return
            traceback.print_exc()
            response = status_response(APIError(500, "InternalError",
                                                f"an error on the server has prevented the "
                                                f"request from succeeding: {exc!r}").status())
        body_warnings = scope.get(BODY_WARNINGS_KEY)
        if body_warnings and response.status_code < 400:  # keys a body set twice
            earlier = response.headers.get("warning")
            response.headers["Warning"] = warning_header(body_warnings) + (
                f", {earlier}" if earlier else "")
        try:
            await response(scope, receive, send)
        except asyncio.CancelledError:
            # the server's shutdown ends a request still streaming (a watch) this way; that
            # is no error of the application (uvicorn would log it with a traceback)
            return

    def _holds_token(self, request: Request) -> bool:
        """The request's bearer token is ours (compared in constant time)."""
        if self.token is None:
            return True
        auth = (header(request, b"authorization") or "").encode()
        return hmac.compare_digest(auth, self._bearer)

    async def handle(self, request: Request) -> Response:
        # the percent-decoded path, as upstream reads Go's URL.Path (Starlette's request.url
        # re-escapes "?" and "#" in it, and builds a URL object per request to do so)
        path = request.scope["path"]
        if len(path) > 1:
            path = path.rstrip("/")
        health = health_path(path)
        if health is None and not self._holds_token(request):
            raise APIError(401, "Unauthorized", "Unauthorized")
        self._authorize(request, path, health is not None)
        check_content_length(request)
        if health is not None:
            endpoint, only = health
            reveal = self._holds_token(request)
            return health_response(request, endpoint, only, self._health_checks(endpoint),
                                   reveal=reveal)
        method = request.method
        if path == "/version":
            return json_response(discovery.version_info(self.version_profile.git_version))
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
                return json_response(doc)
            group, rest = (parts[1], parts[2:]) if len(parts) > 2 else ("", [])
        else:
            raise not_found_path()
        if not rest:
            raise not_found_path()
        version, segs = rest[0], rest[1:]
        if not group and version == "v1" and self.pod_io.handles(segs):
            return await self.pod_io.route(request, segs)
        if not group and version == "v1" and "proxy" in segs[2:5]:
            proxied = await self.proxies.route(request, segs)
            if proxied is not None:
                return proxied
        provider = self._providers.get((group, version))
        if not segs:
            doc = self._listed(group, version) or \
                discovery.resource_list(self.registry, group, version)
            if doc is None:
                raise not_found_path()
            return json_response(doc)
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

    def _authorize(self, request: Request, path: str, health: bool) -> None:
        """Requests with impersonation headers are what their user may do by RBAC (the token
        itself may do everything: docs/cluster.md#access-control). The identity is kept in the
        request's scope for the access reviews."""
        if not any(key.startswith(b"impersonate-") for key, _ in request.scope["headers"]):
            return  # nearly every request: no header names another user
        user = rbac.impersonated(request.headers, request.headers.raw)
        if user is None:
            return
        request.scope[reviews.USER_SCOPE_KEY] = user
        if user.privileged or health:
            return
        attrs = self._attributes(request, path)
        if not self.authorizer.authorize(user, attrs).allowed:
            raise rbac.forbidden(user, attrs)

    def _attributes(self, request: Request, path: str) -> rbac.Attributes:
        """What a request asks, as upstream's RequestInfoFactory reads the URL."""
        method = request.method
        parts = [p for p in path.split("/") if p]
        rest: list[str] = []
        group = ""
        if parts[:1] == ["api"]:
            rest = parts[1:]
        elif parts[:1] == ["apis"] and len(parts) > 2:
            group, rest = parts[1], parts[2:]
        if len(rest) >= 2:
            try:
                t = self._parse_target(group, rest[0], rest[1:], method)
            except APIError:
                t = None
            if t is not None:
                if method == "GET":
                    verb = "watch" if bool_param(request.query_params.get("watch")) else (
                        "get" if t.name is not None else "list")
                elif method == "DELETE":
                    verb = "delete" if t.name is not None else "deletecollection"
                else:
                    verb = {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(
                        method, method.lower())
                namespace = t.namespace or (t.name if t.res is R.NAMESPACES else None) or ""
                return rbac.Attributes(verb, t.res.resource, group, t.sub or "", namespace,
                                       t.name or "")
        return rbac.Attributes(method.lower(), path=path, resource_request=False)

    def _parse_target(self, group: str, version: str, segs: list[str], method: str) -> Target:
        namespace = None
        if segs[0] == "namespaces" and len(segs) >= 3 and not (
                len(segs) == 3 and segs[2] in ("status", "finalize")):
            namespace, segs = segs[1], segs[2:]
        # "/namespaces/../pods" names no namespace (Go's server cleans such paths)
        if len(segs) > 3 or namespace in _DOT_SEGMENTS or segs[1:2] in ([".."], ["."]):
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
        """The verb handler of the request's method on a collection or an object."""
        m = request.method
        if t.sub == "eviction":
            if m == "POST":
                return await eviction.evict(self, request, t)
        elif t.name is None:
            if m == "GET":
                if bool_param(request.query_params.get("watch")):
                    return watch.watch(self, request, t)
                return get.list_objects(self, request, t)
            if m == "POST":
                return await create.create(self, request, t)
            if m == "DELETE":
                return await delete.delete_collection(self, request, t)
        else:
            if m == "GET":
                return get.get(self, request, t)
            if m == "PUT":
                return await update.update(self, request, t)
            if m == "PATCH":
                return await patch.patch(self, request, t)
            if m == "DELETE" and t.sub is None:
                return await delete.delete(self, request, t)
            # POST to an item (/namespaces/NS is "namespaced" only for sub-resources) is a 405
        raise APIError(405, "MethodNotAllowed",
                       f"the server does not allow this method on the requested resource")

    # ---- health
    def _health_checks(self, endpoint: str) -> dict[str, Check]:
        """Named checks of /livez, /readyz, /healthz: each returns None when fine, else why not."""
        def store() -> str | None:
            ok = self.store.try_get(R.NAMESPACES.key, "", "default") is not None
            return None if ok else "the default namespace cannot be read"
        checks: dict[str, Check] = {"ping": lambda: None, "store": store}
        if endpoint != "livez":
            checks.update(self.readiness_checks)
        return checks

    # ---- discovery
    def _listed(self, group: str, version: str) -> Obj | None:
        """The APIResourceList of a provider whose resources change (an adapter's metrics),
        which it lists itself; None for the others (the registry lists theirs)."""
        listed = getattr(self._providers.get((group, version)), "resource_list", None)
        return listed(group, version) if listed is not None else None

    def _discovery_root(self, request: Request, core: bool) -> Response:
        agg = discovery.negotiate_discovery(request.headers.get("accept"))
        if agg is not None:
            body = discovery.aggregated(self.registry, core, agg, self._listed)
            return Response(_encode(body), media_type=discovery.AGG_TYPES[agg],
                            headers={"Vary": "Accept"})
        if core:
            return json_response(discovery.api_versions(self.server_address))
        return json_response(discovery.api_group_list(self.registry))
