"""The `pyhpa.io/v1 HorizontalPodAutoscaler` CRD, generated from our API model.

For managed clusters whose built-in HPA controller cannot be switched off, pyhpa can run side by
side on its own kind with the identical schema (`pyhpa run --hpa-api-group pyhpa.io`). The
schema is derived from the msgspec structs of :mod:`pyhpa.api.types`, so it cannot drift from
what the controller reads and writes: `$ref`s inlined (CRD schemas must be structural),
quantities as int-or-string, times as date-time strings, Go-nullable fields `nullable: true`.

Regenerate the committed manifest with `python -m pyhpa.controller.crd > deploy/crd-pyhpa.io.yaml`.
"""

from __future__ import annotations

import sys
from typing import Any

import msgspec

GROUP = "pyhpa.io"
VERSION = "v1"
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


def _schema_hook(t: type) -> dict[str, Any]:
    from pyhpa.api.quantity import Quantity

    if t is Quantity:
        return {"x-pyhpa-quantity": True}
    raise NotImplementedError(t)


def _convert(node: Any, defs: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in node:
        return _convert(defs[node["$ref"].split("/")[-1]], defs)
    if node.get("x-pyhpa-quantity"):
        return {"anyOf": [{"type": "integer"}, {"type": "string"}], "pattern": QUANTITY_PATTERN,
                "x-kubernetes-int-or-string": True}
    if "anyOf" in node:
        alts = [a for a in node["anyOf"] if a.get("type") != "null"]
        nullable = len(alts) != len(node["anyOf"])
        out: dict[str, Any]
        if len(alts) == 1:
            out = _convert(alts[0], defs)
        else:  # e.g. a selector that may be a LabelSelector or a plain map: keep it open
            out = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        if nullable:
            out = {**out, "nullable": True}
        return out
    typ = node.get("type")
    out = {}
    if typ == "object":
        out["type"] = "object"
        props = node.get("properties")
        if props is not None:
            conv = {name: _convert(sub, defs) for name, sub in props.items()}
            out["properties"] = conv
            required = [r for r in node.get("required", []) if not conv[r].get("nullable")]
            if required:
                out["required"] = required
        elif "additionalProperties" in node:
            out["additionalProperties"] = _convert(node["additionalProperties"], defs)
        else:
            out["x-kubernetes-preserve-unknown-fields"] = True
        return out
    if typ == "array":
        return {"type": "array", "items": _convert(node.get("items", {}), defs)}
    if typ == "string":
        out = {"type": "string"}
        if node.get("format") == "date-time":
            out["format"] = "date-time"
        return out
    if typ in ("integer", "number", "boolean"):
        out = {"type": typ}
        if typ == "integer":
            out["format"] = "int32"
        return out
    return {"x-kubernetes-preserve-unknown-fields": True}


def build_schema() -> dict[str, Any]:
    from pyhpa.api.types import HorizontalPodAutoscaler

    raw = msgspec.json.schema(HorizontalPodAutoscaler, schema_hook=_schema_hook)
    defs = raw["$defs"]
    root = _convert(raw, defs)
    props = root["properties"]
    props["metadata"] = {"type": "object"}
    root["required"] = ["spec"]
    # Wide integers: generation-like fields are int64 upstream.
    status = props["status"]["properties"]
    status["observedGeneration"]["format"] = "int64"
    return root


def build_crd() -> dict[str, Any]:
    columns = [
        {"name": "Reference", "type": "string", "jsonPath": ".spec.scaleTargetRef.name"},
        {"name": "MinPods", "type": "integer", "jsonPath": ".spec.minReplicas"},
        {"name": "MaxPods", "type": "integer", "jsonPath": ".spec.maxReplicas"},
        {"name": "Replicas", "type": "integer", "jsonPath": ".status.currentReplicas"},
        {"name": "Desired", "type": "integer", "jsonPath": ".status.desiredReplicas"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"horizontalpodautoscalers.{GROUP}",
                     "labels": {"app.kubernetes.io/name": "pyhpa"}},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "horizontalpodautoscalers", "singular": "horizontalpodautoscaler",
                      "kind": "HorizontalPodAutoscaler", "listKind": "HorizontalPodAutoscalerList",
                      "shortNames": ["phpa"], "categories": ["all"]},
            "versions": [{
                "name": VERSION, "served": True, "storage": True,
                "subresources": {"status": {}},
                "additionalPrinterColumns": columns,
                "schema": {"openAPIV3Schema": build_schema()},
            }],
        },
    }


def render() -> str:
    from pyhpa.api import goyaml

    header = "# Generated by `python -m pyhpa.controller.crd` from pyhpa/api/types.py. Do not edit.\n"
    return header + goyaml.dump(build_crd(), width=120)


if __name__ == "__main__":
    sys.stdout.write(render())
