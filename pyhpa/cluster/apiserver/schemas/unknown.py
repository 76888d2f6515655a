"""Unknown-field detection against the published schemas (``fieldValidation=Strict``/``Warn``).

Why from the schemas: kubectl leaves validation to a server that advertises ``fieldValidation``
(kubectl-protocol.md §6.3), so the server must report a field the kind does not have, as a real
API server's strict decoder does (``unknown field "spec.foo"``). The schemas kubectl explains are
the same ones checked here, so ``explain`` and the server cannot disagree about what exists.
Objects marked ``x-kubernetes-preserve-unknown-fields`` accept anything.
"""

from __future__ import annotations

from typing import Any

from pyhpa.cluster.apiserver.schemas.build import PRESERVE, Schema, ref_name


def unknown_fields(obj: Any, name: str, defs: dict[str, Schema]) -> list[str]:
    """Paths in ``obj`` (``spec.foo``, ``spec.template.spec.containers[0].bar``) that the
    definition ``name`` has no field for, in document order."""
    out: list[str] = []

    def walk(value: Any, schema: Schema, path: str) -> None:
        target = ref_name(schema)
        while target is not None:
            schema = defs.get(target, {})
            target = ref_name(schema)
        if schema.get(PRESERVE):
            return
        if isinstance(value, dict):
            props = schema.get("properties")
            extra = schema.get("additionalProperties")
            for key, item in value.items():
                sub = f"{path}.{key}" if path else key
                if props is not None and key in props:
                    walk(item, props[key], sub)
                elif isinstance(extra, dict):
                    walk(item, extra, sub)
                elif props is not None and extra is not True:
                    out.append(sub)
        elif isinstance(value, list) and isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                walk(item, schema["items"], f"{path}[{i}]")

    walk(obj, defs[name], "")
    return out
