"""The shapes of stored objects the simulation can read, and what is wrong with one that it cannot.

Why a check before every pass: the store holds whatever was written to it (objects stored before
the API server validated them, or written by hand), while the controllers read fields as the
types upstream's schema gives them. An object whose fields have other types is left out of the
pass, with its family (owner and owned objects), and reported, so that it cannot stop the pass
for every other object; the controllers then need not guard each read.

A schema here is a ``dict`` (an object, or null, whose listed fields follow their schemas),
a one-item ``list`` (a list, or null, of items following it), ``STR_MAP`` (an object of string
values), or a Python type (``str``, ``int``, ``bool``; null allowed).
"""

from __future__ import annotations

from typing import Any

from pyhpa.api.selectors import selector_from_label_selector

STR_MAP = "map of strings"

_META: dict[str, Any] = {
    "name": str, "namespace": str, "uid": str, "labels": STR_MAP, "annotations": STR_MAP,
    "ownerReferences": [{"uid": str, "kind": str, "name": str, "controller": bool}],
    "finalizers": [str], "deletionTimestamp": str, "generation": int,
}
_SELECTOR: dict[str, Any] = {
    "matchLabels": STR_MAP,
    "matchExpressions": [{"key": str, "operator": str, "values": [str]}],
}
_RESOURCES: dict[str, Any] = {"requests": {}, "limits": {}}
_CONTAINER: dict[str, Any] = {"name": str, "resources": _RESOURCES}
_POD_SPEC: dict[str, Any] = {
    "containers": [_CONTAINER], "initContainers": [_CONTAINER], "nodeName": str,
    "schedulerName": str, "terminationGracePeriodSeconds": int, "nodeSelector": STR_MAP,
    "tolerations": [{}],
}
_TEMPLATE: dict[str, Any] = {"metadata": {"labels": STR_MAP, "annotations": STR_MAP},
                             "spec": _POD_SPEC}
_STATUS: dict[str, Any] = {"conditions": [{}], "observedGeneration": int}
_WORKLOAD: dict[str, Any] = {
    "metadata": _META,
    "spec": {"replicas": int, "selector": _SELECTOR, "template": _TEMPLATE,
             "minReadySeconds": int, "revisionHistoryLimit": int, "paused": bool,
             "strategy": {"type": str, "rollingUpdate": {}},
             "updateStrategy": {"type": str, "rollingUpdate": {}},
             "podManagementPolicy": str, "serviceName": str},
    "status": {**_STATUS, "collisionCount": int},
}
_RC: dict[str, Any] = {**_WORKLOAD, "spec": {**_WORKLOAD["spec"], "selector": STR_MAP}}
SCHEMAS: dict[str, dict[str, Any]] = {
    "Deployment": _WORKLOAD, "ReplicaSet": _WORKLOAD, "StatefulSet": _WORKLOAD,
    "ReplicationController": _RC,
    "Pod": {"metadata": _META, "spec": _POD_SPEC,
            "status": {**_STATUS, "phase": str, "containerStatuses": [{}]}},
    "Node": {"metadata": _META, "spec": {"taints": [{}], "unschedulable": bool},
             "status": {"capacity": {}, "allocatable": {}, "conditions": [{}]}},
}
# The kinds whose spec.selector and spec.template upstream requires.
_NEEDS_SELECTOR = frozenset({"Deployment", "ReplicaSet", "StatefulSet"})
_DEFAULT: dict[str, Any] = {"metadata": _META, "spec": {"template": _TEMPLATE}, "status": {}}


def shape_problem(kind: str, obj: Any) -> str | None:
    """Why the simulation cannot read ``obj`` (a field path and what it should be), or None."""
    if not isinstance(obj, dict):
        return f"the object is a {_type_name(obj)}, not an object"
    problem = _check(obj, SCHEMAS.get(kind, _DEFAULT), "")
    if problem is not None or kind not in _NEEDS_SELECTOR:
        return problem
    spec = obj.get("spec") or {}
    if not isinstance(spec.get("selector"), dict):
        return "spec.selector: Required value"
    if not isinstance(spec.get("template"), dict):
        return "spec.template: Required value"
    selector = spec["selector"]
    labels = (spec["template"].get("metadata") or {}).get("labels") or {}
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return "spec.selector: Invalid value: empty selector is invalid for " + kind.lower()
    try:
        selects = selector_from_label_selector(selector).matches(labels)
    except ValueError as exc:  # a SelectorError, or a bad key or value
        return f"spec.selector: Invalid value: {exc}"
    if not selects:
        return "spec.template.metadata.labels: Invalid value: `selector` does not match " \
               "template `labels`"
    return None


def _check(value: Any, schema: Any, path: str) -> str | None:
    if value is None:
        return None
    if schema == STR_MAP:
        if not isinstance(value, dict):
            return _wrong(path, "an object of strings", value)
        for k, v in value.items():
            if not isinstance(v, str):
                return _wrong(f"{path}[{k}]", "a string", v)
        return None
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            return _wrong(path, "an object", value)
        for name, sub in schema.items():
            problem = _check(value.get(name), sub, f"{path}.{name}" if path else name)
            if problem is not None:
                return problem
        return None
    if isinstance(schema, list):
        if not isinstance(value, list):
            return _wrong(path, "a list", value)
        for i, item in enumerate(value):
            problem = _check(item, schema[0], f"{path}[{i}]")
            if problem is not None:
                return problem
        return None
    ok = isinstance(value, schema) and (schema is bool or not isinstance(value, bool))
    return None if ok else _wrong(path, {str: "a string", int: "an integer",
                                         bool: "a boolean"}[schema], value)


def _wrong(path: str, want: str, value: Any) -> str:
    return f"{path}: Invalid value: must be {want}, not {_type_name(value)}"


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number"}.get(type(value), type(value).__name__)
