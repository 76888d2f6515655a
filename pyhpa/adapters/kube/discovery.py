"""API discovery and REST mapping: which resource serves a kind's `/scale`, and preferred versions.

Upstream resolves a scale target's group+kind through a discovery-backed RESTMapper and asks the
scale client for `<resource>/scale`; custom metrics use the preferred version of
`custom.metrics.k8s.io`. Both read the same discovery documents, cached here and refreshed on a
miss (at most once per `min_refresh` seconds) or when the loop invalidates it every sync period.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from pyhpa.adapters.kube.client import ApiError, KubeClient


@dataclass(frozen=True)
class RestMapping:
    group: str
    version: str
    resource: str  # plural, e.g. "deployments"
    kind: str
    namespaced: bool
    has_scale: bool

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def collection_path(self, namespace: str | None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if namespace is not None and self.namespaced:
            return f"{base}/namespaces/{namespace}/{self.resource}"
        return f"{base}/{self.resource}"

    def object_path(self, namespace: str | None, name: str) -> str:
        return f"{self.collection_path(namespace)}/{name}"

    @property
    def group_resource(self) -> str:
        """`deployments.apps` / `services`: how the custom metrics API names a resource."""
        return f"{self.resource}.{self.group}" if self.group else self.resource


class MappingError(LookupError):
    pass


def split_api_version(api_version: str | None) -> tuple[str, str]:
    """`apps/v1` -> ("apps", "v1"); `v1` -> ("", "v1"); errors name the value like Go's ParseGroupVersion."""
    text = (api_version or "").strip()
    if not text:
        return "", ""
    if text.count("/") > 1:
        raise ValueError(f"unexpected GroupVersion string: {text}")
    if "/" in text:
        group, version = text.split("/")
        if not group or not version:
            raise ValueError(f"unexpected GroupVersion string: {text}")
        return group, version
    return "", text


class Discovery:
    def __init__(self, client: KubeClient, *, min_refresh: float = 5.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.min_refresh = min_refresh
        self._clock = clock
        self._groups: dict[str, tuple[str, list[str]]] | None = None  # group -> (preferred, versions)
        self._resources: dict[str, list[RestMapping]] = {}  # "group/version" -> mappings
        self._last_refresh = -1e18

    def invalidate(self) -> None:
        self._groups = None
        self._resources.clear()

    def invalidate_preferred_versions(self) -> None:
        """Upstream refreshes only the custom-metrics version cache every sync period; so do we,
        lazily: the next `preferred_version` call re-reads `/apis` (no request if none is made)."""
        self._stale_preferred = True

    async def groups(self) -> dict[str, tuple[str, list[str]]]:
        if self._groups is None:
            groups: dict[str, tuple[str, list[str]]] = {}
            try:
                core = await self.client.get("/api")
                versions = list(core.get("versions") or ["v1"])
                groups[""] = (versions[0], versions)
            except ApiError:
                groups[""] = ("v1", ["v1"])
            doc = await self.client.get("/apis")
            for g in doc.get("groups") or []:
                versions = [v["version"] for v in g.get("versions") or []]
                preferred = (g.get("preferredVersion") or {}).get("version") or (versions[0] if versions else "")
                groups[g["name"]] = (preferred, versions)
            self._groups = groups
            self._last_refresh = self._clock()
        return self._groups

    async def preferred_version(self, group: str) -> str | None:
        if getattr(self, "_stale_preferred", False):
            self._stale_preferred = False
            self._groups = None
        groups = await self.groups()
        if group not in groups and self._may_refresh():
            self._groups = None
            groups = await self.groups()
        entry = groups.get(group)
        return entry[0] if entry else None

    async def resources(self, group: str, version: str) -> list[RestMapping]:
        gv = f"{group}/{version}" if group else version
        cached = self._resources.get(gv)
        if cached is not None:
            return cached
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        try:
            doc = await self.client.get(path)
        except ApiError as exc:
            if exc.is_not_found:
                self._resources[gv] = []
                return []
            raise
        names = {r.get("name", "") for r in doc.get("resources") or []}
        out = [
            RestMapping(group, version, r["name"], r.get("kind", ""), bool(r.get("namespaced")),
                        f"{r['name']}/scale" in names)
            for r in doc.get("resources") or []
            if "/" not in r.get("name", "/")
        ]
        self._resources[gv] = out
        return out

    def _may_refresh(self) -> bool:
        return self._clock() - self._last_refresh >= self.min_refresh

    async def rest_mappings(self, group: str, kind: str, version: str | None = None) -> list[RestMapping]:
        """Mappings of group+kind, the requested version first, then the group's preferred and others."""
        for attempt in range(2):
            groups = await self.groups()
            preferred, versions = groups.get(group, ("", []))
            order = [v for v in [version, preferred, *versions] if v]
            seen: list[str] = []
            found: list[RestMapping] = []
            for v in order:
                if v in seen:
                    continue
                seen.append(v)
                for m in await self.resources(group, v):
                    if m.kind == kind:
                        found.append(m)
            if found or attempt == 1 or not self._may_refresh():
                return found
            self.invalidate()
        return []

    async def scale_mappings(self, api_version: str | None, kind: str) -> list[RestMapping]:
        group, version = split_api_version(api_version)
        mappings = await self.rest_mappings(group, kind, version or None)
        if not mappings:
            gk = f"{kind}.{group}" if group else kind
            raise MappingError(f'no matches for kind "{kind}" in group "{group}"' if group else f'no matches for kind "{gk}"')
        return mappings

    async def mapping_for(self, api_version: str | None, kind: str) -> RestMapping | None:
        group, version = split_api_version(api_version)
        found = await self.rest_mappings(group, kind, version or None)
        return found[0] if found else None


async def serves_status_field(client: KubeClient, group_version: str, kind: str, field: str) -> bool:
    """Whether the server's OpenAPI v3 schema of ``kind`` in ``group_version`` has ``status.field``
    (a server that drops unknown fields would discard a write of it). False when the document
    cannot be read: writing a field nobody keeps is the cost to avoid."""
    group, _, version = group_version.rpartition("/")
    path = f"/openapi/v3/apis/{group}/{version}" if group else f"/openapi/v3/api/{version}"
    try:
        doc = await client.get(path, dict)
    except ApiError:
        return False
    schemas = (doc.get("components") or {}).get("schemas") or {}

    def resolve(node: Any) -> dict[str, Any]:
        for _ in range(8):  # $ref and allOf chains are short
            if not isinstance(node, dict):
                return {}
            ref = node.get("$ref") or next((s.get("$ref") for s in node.get("allOf") or () if isinstance(s, dict)), None)
            if not ref:
                return node
            node = schemas.get(ref.rpartition("/")[2])
        return {}

    for schema in schemas.values():
        gvks = schema.get("x-kubernetes-group-version-kind") or ()
        if any(g.get("group", "") == group and g.get("version") == version and g.get("kind") == kind for g in gvks):
            status = resolve((schema.get("properties") or {}).get("status"))
            return field in (status.get("properties") or {})
    return False
