"""The OpenAPI v3 schemas of every kind the embedded cluster serves, by definition name.

:func:`builtin` assembles them once per process; :mod:`..openapi` picks the ones each
document needs. The HPA and Scale schemas come from the API model, the others are tables
(one module per API group).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pyhpa.cluster.apiserver.schemas.build import GVK, Schema


@lru_cache(maxsize=1)
def builtin() -> dict[str, Schema]:
    """All built-in definitions. Shared and cached: callers must not mutate them."""
    from pyhpa.cluster.apiserver.schemas import (apiextensions, app_kinds, apps, autoscaling,
                                                 coordination, core, core_container, core_pod,
                                                 core_scheduling, core_volume, events, meta,
                                                 pyhpa_kinds)

    defs: dict[str, Schema] = {}
    for module in (meta, core_pod, core_container, core_scheduling, core_volume, core, app_kinds,
                   apps, autoscaling, coordination, events, apiextensions, pyhpa_kinds):
        part = module.definitions()
        clash = set(part) & set(defs)
        if clash:
            raise ValueError(f"definitions defined twice: {sorted(clash)}")
        defs.update(part)
    return defs


@lru_cache(maxsize=1)
def builtin_kinds() -> dict[tuple[str, str, str], str]:
    """(group, version, kind) -> definition name, from the group-version-kind extensions."""
    return kinds_of(builtin())


def kinds_of(defs: dict[str, Schema]) -> dict[tuple[str, str, str], str]:
    out: dict[tuple[str, str, str], str] = {}
    for name, schema in defs.items():
        for gvk in schema.get(GVK) or ():
            out.setdefault((gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", "")),
                           name)
    return out


def references(schema: Any) -> set[str]:
    """Definition names referenced anywhere inside ``schema``."""
    from pyhpa.cluster.apiserver.schemas.build import REF_PREFIX

    out: set[str] = set()
    stack = [schema]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            target = cur.get("$ref")
            if isinstance(target, str) and target.startswith(REF_PREFIX):
                out.add(target[len(REF_PREFIX):])
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)
    return out
