"""What every verb handler works with: the parsed resource URL and the server's shared state.

Why a class of its own: the handlers need the store, the served kinds and their strategies,
and the rules the wiring adds (the finalizers every Pod gets), but not the routing, the
providers or the documents; the server extends this with those.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable

import msgspec
from starlette.responses import Response

from pyhpa.cluster.apiserver.fieldpath import Shape, Shapes, shapes_of
from pyhpa.cluster.apiserver.kind_strategies import KindStrategies
from pyhpa.cluster.apiserver.patch import SchemaView
from pyhpa.cluster.apiserver.resources import Registry, Resource, storage_of
from pyhpa.api.schemas import BuiltinSchemas
from pyhpa.cluster.apiserver.status import APIError
from pyhpa.cluster.apiserver.storage import (AlreadyExists, BadRequest, Conflict, Expired, NotFound,
                                             Store, StoreError, TooLarge)
from pyhpa.cluster.apiserver.strategies import Strategy

Obj = dict[str, Any]
_encode = msgspec.json.Encoder().encode
JSON = "application/json"
TABLE_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io"


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
        return storage_of(self.res)


class RequestScope:
    """The store, the served kinds and their strategies, as every handler sees them.

    ``pod_finalizers``: finalizers every Pod created through the API gets, and that a delete
    with a zero grace period drops (the node agent's, when the wiring runs one).

    The watch bounds: at most ``max_watches_per_client`` open watches per client address (more
    get a 429), and a watch that leaves more than ``watch_backlog`` events or
    ``watch_backlog_bytes`` undelivered is ended with a 410 (its client lists again).
    """

    def __init__(self, store: Store, registry: Registry, profile: Any = None) -> None:
        self.store = store
        self.registry = registry
        self.profile = profile  # pyhpa.api.versions.VersionProfile; None: pyhpa's own
        self.schemas = BuiltinSchemas.build()  # once per server: read by strategies and patches
        self.strategies = KindStrategies(store, self.schemas, profile)
        self.pod_finalizers: tuple[str, ...] = ()
        self.root_ca: str | None = None  # the CA (PEM) each namespace's kube-root-ca.crt holds
        self.max_watches_per_client = 100
        self.watch_backlog = 50_000
        self.watch_backlog_bytes = 64 * 1024 * 1024

    def strategy(self, res: Resource) -> Strategy:
        return self.strategies.get(res)

    def table_release(self) -> int | None:
        """The release whose table columns the server prints: the emulated one, else None."""
        profile = self.profile
        return profile.minor if profile is not None and profile.emulated else None

    def out(self, t: Target, obj: Obj) -> Obj:
        """A stored object as the request's version shows it."""
        return self.strategy(t.res).from_storage(obj, t.version)

    def version_view(self, res: Resource) -> Callable[[Obj, str], Obj | None]:
        """How a stored object of ``res`` reads in an apiVersion (None: not one of its own), for
        managed fields, which are kept in the apiVersion of the write that made them."""
        strat = self.strategy(res)
        stored = res.api_version(res.storage_version)
        identity = "storage" not in res.extra and "convert" not in res.extra  # stored as itself

        def view(obj: Obj, api_version: str) -> Obj | None:
            if identity and api_version == stored:
                return obj  # apiVersion and kind differ at most: ownership ignores them
            group, _, version = api_version.rpartition("/")
            if group != res.group or not version:
                return None
            try:
                return strat.from_storage(copy.deepcopy(obj), version)
            except Exception:  # noqa: BLE001 - a version this kind cannot show: not comparable
                return None
        return view

    def field_shapes(self, res: Resource) -> Shapes:
        """Where ``res``'s objects sit in their schema, per apiVersion: which lists managed
        fields track by element (a custom kind's: its CRD's schema of that version)."""
        if res.strategy != "custom":
            return shapes_of(self.schemas, res.kind)

        def custom(api_version: str) -> Shape:
            group, _, version = api_version.rpartition("/")
            served = self.registry.lookup(group, version, res.resource) \
                if group == res.group else None
            schema = served.extra.get("schema") if served is not None else None
            return SchemaView(schema, {}) if isinstance(schema, dict) else None
        return custom

    def identity_version(self, t: Target) -> bool:
        """True when the stored bytes are already what the request's version shows."""
        return "storage" not in t.res.extra and t.version == t.res.storage_version \
            and "convert" not in t.res.extra


def json_response(obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(_encode(obj), status_code=status, media_type=JSON, headers=headers)


def details(t: Target, name: str | None = None) -> Obj:
    """A Status's ``details`` for the object ``t`` names (or ``name``)."""
    return {"name": name if name is not None else (t.name or ""), "group": t.group,
            "kind": t.res.resource}


def map_store_error(t: Target, exc: StoreError, name: str | None = None) -> APIError:
    gr = t.res.group_resource
    nm = name if name is not None else (exc.name or t.name or "")
    if isinstance(exc, NotFound):
        return APIError(404, "NotFound", f'{gr} "{nm}" not found', details(t, nm))
    if isinstance(exc, AlreadyExists):
        return APIError(409, "AlreadyExists", f'{gr} "{nm}" already exists', details(t, nm))
    if isinstance(exc, Conflict):
        msg = (f'Operation cannot be fulfilled on {gr} "{nm}": the object has been modified; '
               "please apply your changes to the latest version and try again")
        if str(exc).startswith("Precondition failed"):
            msg = f'Operation cannot be fulfilled on {gr} "{nm}": {exc}'
        return APIError(409, "Conflict", msg, details(t, nm))
    if isinstance(exc, Expired):
        return APIError(410, "Expired", str(exc))
    if isinstance(exc, BadRequest):
        return APIError(400, "BadRequest", str(exc))
    if isinstance(exc, TooLarge):
        return APIError(413, "RequestEntityTooLarge", str(exc))
    return APIError(500, "InternalError", str(exc))
