"""The OpenAPI v3 schemas of every kind the embedded cluster serves, by definition name.

:func:`builtin` assembles them once per process; the API server's OpenAPI documents
(``pyhpa.cluster.apiserver.openapi``) pick the ones each document needs, and its decoder and the
simulator's strict manifest reading check objects against them (:mod:`.conform`); they live in
the API layer so both can. The HPA and Scale schemas come from the API model, the others are tables
(one module per API group).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyhpa.api.schemas.build import GVK, Schema


def builtin() -> dict[str, Schema]:
    """All built-in definitions, assembled anew on every call."""
    from pyhpa.api.schemas import (apiextensions, app_kinds, apps, autoscaling,
                                                 coordination, core, core_container, core_pod,
                                                 core_scheduling, core_volume, events, meta,
                                                 pyhpa_kinds, rbac, batch,
                                                 policy_kinds, discovery)

    defs: dict[str, Schema] = {}
    for module in (meta, core_pod, core_container, core_scheduling, core_volume, core, app_kinds,
                   apps, autoscaling, coordination, events, apiextensions, pyhpa_kinds, rbac,
                   batch, policy_kinds, discovery):
        part = module.definitions()
        clash = set(part) & set(defs)
        if clash:
            raise ValueError(f"definitions defined twice: {sorted(clash)}")
        defs.update(part)
    return defs


@dataclass(frozen=True)
class BuiltinSchemas:
    """The built-in definitions and the definition of each served (group, version, kind).

    Built once per server and shared by its parts: readers must not mutate them.
    """

    definitions: dict[str, Schema]
    kinds: dict[tuple[str, str, str], str]

    @classmethod
    def build(cls) -> "BuiltinSchemas":
        defs = builtin()
        return cls(defs, kinds_of(defs))

    def of_kind(self, group: str, version: str, kind: str) -> str | None:
        """The definition name of a built-in kind, or None for a kind without one."""
        return self.kinds.get((group, version, kind))


def kinds_of(defs: dict[str, Schema]) -> dict[tuple[str, str, str], str]:
    """(group, version, kind) -> definition name, from the group-version-kind extensions."""
    out: dict[tuple[str, str, str], str] = {}
    for name, schema in defs.items():
        for gvk in schema.get(GVK) or ():
            out.setdefault((gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", "")),
                           name)
    return out


def references(schema: Any) -> set[str]:
    """Definition names referenced anywhere inside ``schema``."""
    from pyhpa.api.schemas.build import REF_PREFIX

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
