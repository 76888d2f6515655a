"""Discovery documents: /version, aggregated discovery (apidiscovery.k8s.io v2/v2beta1) and the
legacy /api, /apis, /api/v1, /apis/G/V lists.

Why both: kubectl 1.27-1.29 accept only v2beta1 aggregated discovery, 1.30+ prefer v2, and other
clients (lightkube, client-go informers) use the legacy documents. The response Content-Type
decides how kubectl reads the body (client-go's discovery client), so the server picks it from the
Accept header with :func:`negotiate_discovery`.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from pyhpa.cluster.apiserver.resources import Registry, Resource


AGG_TYPES = MappingProxyType({"v2": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
                               "v2beta1": "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"})


def version_info(git_version: str) -> dict[str, str]:
    """/version for ``v1.MINOR.PATCH[-suffix]`` (the server's version profile's)."""
    major, minor = git_version.removeprefix("v").split(".")[:2]
    return {"major": major, "minor": minor, "gitVersion": git_version,
            "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
            "buildDate": "2026-01-01T00:00:00Z", "goVersion": "python",
            "compiler": "cpython", "platform": "linux/amd64"}


def parse_accept(header: str | None) -> list[tuple[str, dict[str, str]]]:
    """Media types of an Accept header in order, each with its parameters (q ignored)."""
    out = []
    for part in (header or "").split(","):
        part = part.strip()
        if not part:
            continue
        mt, *params = [p.strip() for p in part.split(";")]
        kv = {}
        for p in params:
            k, _, v = p.partition("=")
            kv[k.strip().lower()] = v.strip()
        out.append((mt.lower(), kv))
    return out


def negotiate_discovery(accept: str | None) -> str | None:
    """The aggregated discovery version to answer with ("v2"/"v2beta1"), or None for legacy."""
    for mt, params in parse_accept(accept):
        if mt == "application/json" and params.get("as") == "APIGroupDiscoveryList" \
                and params.get("g") == "apidiscovery.k8s.io" and params.get("v") in AGG_TYPES:
            return params["v"]
        if mt in ("application/json", "*/*", "application/*"):
            return None
    return None


def _sub_kind(res: Resource, sub_name: str, version: str) -> dict[str, str]:
    sub = res.subresource(sub_name)
    assert sub is not None
    if sub.kind:
        return {"group": sub.group, "version": sub.version, "kind": sub.kind}
    return {"group": res.group, "version": version, "kind": res.kind}


def _agg_resource(res: Resource, version: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resource": res.resource,
        "responseKind": {"group": res.group, "version": version, "kind": res.kind},
        "scope": "Namespaced" if res.namespaced else "Cluster",
        "singularResource": res.singular_name,
        "verbs": sorted(res.verbs),
    }
    if res.short_names:
        out["shortNames"] = list(res.short_names)
    if res.categories:
        out["categories"] = list(res.categories)
    if res.subresources:
        out["subresources"] = [{"subresource": s.name, "responseKind": _sub_kind(res, s.name, version),
                                "verbs": sorted(s.verbs)} for s in res.subresources]
    return out


def from_legacy(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An APIResourceList's entries as aggregated discovery shows them, as kube-aggregator
    converts an aggregated server's list: ``pods/http_requests`` is subresource
    ``http_requests`` of ``pods``, a parent made up (with an empty kind) when none is listed."""
    out: list[dict[str, Any]] = []
    parents: dict[str, dict[str, Any]] = {}
    for r in resources:
        if "/" not in r["name"]:
            parents[r["name"]] = {
                "resource": r["name"], "responseKind": {"group": "", "version": "",
                                                        "kind": r.get("kind", "")},
                "scope": "Namespaced" if r.get("namespaced") else "Cluster",
                "singularResource": r.get("singularName", ""), "verbs": list(r.get("verbs", []))}
            out.append(parents[r["name"]])
    for r in resources:
        parent, slash, sub = r["name"].partition("/")
        if not slash:
            continue
        if parent not in parents:
            parents[parent] = {"resource": parent, "responseKind": {},
                               "scope": "Namespaced" if r.get("namespaced") else "Cluster",
                               "singularResource": "", "verbs": []}
            out.append(parents[parent])
        parents[parent].setdefault("subresources", []).append({
            "subresource": sub, "verbs": list(r.get("verbs", [])),
            "responseKind": {"group": "", "version": "", "kind": r.get("kind", "")}})
    return out


def aggregated(registry: Registry, legacy_core: bool, version: str = "v2",
               listed: Any = None) -> dict[str, Any]:
    """The APIGroupDiscoveryList for /api (``legacy_core``) or /apis; ``listed(group, version)``
    is the APIResourceList of a group that lists its resources itself (None for the others)."""
    items = []
    for group, versions in registry.groups():
        if (group == "") != legacy_core:
            continue
        vs = []
        for v in versions:
            own = listed(group, v) if listed is not None else None
            resources = from_legacy(own["resources"]) if own is not None else \
                [_agg_resource(r, v) for r in registry.in_group_version(group, v)]
            vs.append({"version": v, "resources": resources, "freshness": "Current"})
        items.append({"metadata": {"name": group, "creationTimestamp": None}, "versions": vs})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{version}",
            "metadata": {}, "items": items}


def api_versions(server_address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                            "serverAddress": server_address}]}


def _group(group: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}


def api_group_list(registry: Registry) -> dict[str, Any]:
    groups = [_group(g, vs) for g, vs in registry.groups() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, group: str) -> dict[str, Any] | None:
    for g, vs in registry.groups():
        if g == group and g:
            return {"kind": "APIGroup", "apiVersion": "v1", **_group(g, vs)}
    return None


def resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    resources = registry.in_group_version(group, version)
    if not resources:
        return None
    out = []
    for r in resources:
        entry: dict[str, Any] = {"name": r.resource, "singularName": r.singular_name,
                                 "namespaced": r.namespaced, "kind": r.kind,
                                 "verbs": sorted(r.verbs)}
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        out.append(entry)
        for s in r.subresources:
            sub: dict[str, Any] = {"name": f"{r.resource}/{s.name}", "singularName": "",
                                   "namespaced": r.namespaced, "kind": s.kind or r.kind,
                                   "verbs": sorted(s.verbs)}
            if s.kind:
                sub["group"], sub["version"] = s.group, s.version
            out.append(sub)
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out}
