"""Validation of the kinds the simulation runs: Deployments, ReplicaSets, StatefulSets,
ReplicationControllers and Pods (upstream's apps and core validation, the parts that matter here).

Why in the API layer: the API server refuses a write that breaks these rules, and the simulated
controllers leave out a stored object that breaks them (one stored before the server checked it,
or written to the store by hand) with the same message, so the rules live once. They are
upstream's (``ValidateDeploymentSpec``, ``ValidatePodTemplateSpecForReplicaSet``,
``ValidateReplicationControllerSpec``, ``ValidatePodSpec``), run after defaulting as upstream runs
them.
"""

from __future__ import annotations

from typing import Any

from pyhpa.api.field_errors import cause, go_quote
from pyhpa.api.names import is_dns1123_label, is_qualified_name, is_valid_label_value
from pyhpa.api.quantity import Quantity
from pyhpa.api.schemas import BuiltinSchemas
from pyhpa.api.schemas.build import ref
from pyhpa.api.schemas.conform import METADATA_ONLY, conform
from pyhpa.api.selectors import Selector, SelectorError

Obj = dict[str, Any]
Cause = dict[str, str]
WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController")
_NONNEGATIVE = "must be greater than or equal to 0"
_STATUS_COUNTS = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                  "unavailableReplicas", "fullyLabeledReplicas", "currentReplicas",
                  "terminatingReplicas", "observedGeneration", "collisionCount")


def go_string_map(value: Any) -> str:
    """A ``map[string]string`` as Go's ``%#v`` prints it (keys sorted)."""
    if value is None:
        return "map[string]string(nil)"
    return "map[string]string{" + ", ".join(
        f"{go_quote(k)}:{go_quote(str(v))}" for k, v in sorted(value.items())) + "}"


def _go_selector(sel: Any) -> str:
    """A ``metav1.LabelSelector`` as Go's ``%#v`` prints it."""
    sel = sel if isinstance(sel, dict) else {}
    exprs = sel.get("matchExpressions")
    shown = "[]v1.LabelSelectorRequirement(nil)" if exprs is None else (
        "[]v1.LabelSelectorRequirement{" + ", ".join(
            "v1.LabelSelectorRequirement{Key:" + go_quote(str(e.get("key", ""))) + ", Operator:"
            + go_quote(str(e.get("operator", ""))) + ", Values:" + (
                "[]string(nil)" if e.get("values") is None else
                "[]string{" + ", ".join(go_quote(str(v)) for v in e["values"]) + "}") + "}"
            for e in exprs if isinstance(e, dict)) + "}")
    return ("v1.LabelSelector{MatchLabels:" + go_string_map(sel.get("matchLabels"))
            + ", MatchExpressions:" + shown + "}")


def _nonnegative(value: Any, path: str) -> list[Cause]:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [cause(path, "Invalid", value, _NONNEGATIVE)]
    return []


def validate_labels(labels: Any, path: str) -> list[Cause]:
    """``ValidateLabels``: each key a qualified name, each value a label value."""
    out = []
    for key in sorted(labels or {}):
        out += [cause(path, "Invalid", key, m) for m in is_qualified_name(key)]
        out += [cause(path, "Invalid", labels[key], m) for m in is_valid_label_value(labels[key])]
    return out


def validate_label_selector(sel: Obj, path: str) -> list[Cause]:
    """``ValidateLabelSelector`` (label values checked strictly)."""
    out = validate_labels(sel.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(sel.get("matchExpressions") or []):
        where = f"{path}.matchExpressions[{i}]"
        if not isinstance(expr, dict):  # null: Go decodes it into an empty requirement
            expr = {}
        op, values = expr.get("operator") or "", expr.get("values") or []
        if op in ("In", "NotIn"):
            if not values:
                out.append(cause(f"{where}.values", "Required",
                                 detail="must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                out.append(cause(f"{where}.values", "Forbidden", detail="may not be specified "
                                 "when `operator` is 'Exists' or 'DoesNotExist'"))
        else:
            out.append(cause(f"{where}.operator", "Invalid", op, "not a valid selector operator"))
        out += [cause(f"{where}.key", "Invalid", expr.get("key") or "", m)
                for m in is_qualified_name(expr.get("key") or "")]
        for j, value in enumerate(values):
            out += [cause(f"{where}.values[{j}]", "Invalid", value, m)
                    for m in is_valid_label_value(value)]
    return out


# --------------------------------------------------------------------------- pods


def validate_pod_spec(spec: Any, path: str) -> list[Cause]:
    """The parts of ``ValidatePodSpec`` the simulation depends on: containers that can run."""
    spec = spec if isinstance(spec, dict) else {}
    containers = spec.get("containers") or []
    if not containers:
        return [cause(f"{path}.containers", "Required")]
    out: list[Cause] = []
    names: set[str] = set()
    for i, c in enumerate(containers):
        where = f"{path}.containers[{i}]"
        c = c if isinstance(c, dict) else {}
        name = c.get("name") or ""
        if not name:
            out.append(cause(f"{where}.name", "Required"))
        else:
            out += [cause(f"{where}.name", "Invalid", name, m) for m in is_dns1123_label(name)]
            if name in names:
                out.append(cause(f"{where}.name", "Duplicate", name))
            names.add(name)
        if not c.get("image"):
            out.append(cause(f"{where}.image", "Required"))
        out += _resources(c.get("resources"), f"{where}.resources")
    return out


def _resources(resources: Any, path: str) -> list[Cause]:
    out: list[Cause] = []
    resources = resources if isinstance(resources, dict) else {}
    parsed: dict[str, dict[str, Any]] = {}
    for part in ("limits", "requests"):
        for name, value in sorted((resources.get(part) or {}).items()):
            q = Quantity.parse(value)  # the decoder accepted it, so it parses
            parsed.setdefault(part, {})[name] = q
            if q.sign() < 0:
                out.append(cause(f"{path}.{part}[{name}]", "Invalid", str(q), _NONNEGATIVE))
    for name, request in sorted(parsed.get("requests", {}).items()):
        limit = parsed.get("limits", {}).get(name)
        if limit is not None and request.cmp(limit) > 0:
            out.append(cause(f"{path}.requests", "Invalid", str(request),
                             f"must be less than or equal to {name} limit of {limit}"))
    return out


def validate_pod(obj: Obj) -> list[Cause]:
    return validate_pod_spec(obj.get("spec"), "spec")


# --------------------------------------------------------------------------- workloads


def _template(template: Any, selector: Selector | None, path: str, kind: str) -> list[Cause]:
    """``ValidatePodTemplateSpecFor{ReplicaSet,StatefulSet,RC}``."""
    template = template if isinstance(template, dict) else {}
    labels = (template.get("metadata") or {}).get("labels")
    out: list[Cause] = []
    if selector is not None and not selector.is_empty() and not selector.matches(labels or {}):
        out.append(cause(f"{path}.metadata.labels", "Invalid", shown=go_string_map(labels),
                         detail="`selector` does not match template `labels`"))
    out += validate_labels(labels, f"{path}.metadata.labels")
    spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    out += validate_pod_spec(spec, f"{path}.spec")
    policy = spec.get("restartPolicy", "Always")
    if policy != "Always":
        out.append(cause(f"{path}.spec.restartPolicy", "NotSupported", policy,
                         'supported values: "Always"'))
    if spec.get("activeDeadlineSeconds") is not None:
        noun = {"Deployment": "ReplicaSet"}.get(kind, kind)
        if kind in ("Deployment", "ReplicaSet"):
            out.append(cause(f"{path}.spec.activeDeadlineSeconds", "Invalid",
                             spec["activeDeadlineSeconds"],
                             f"activeDeadlineSeconds in {noun} is not Supported"))
        else:
            out.append(cause(f"{path}.spec.activeDeadlineSeconds", "Forbidden",
                             detail=f"activeDeadlineSeconds in {noun} is not Supported"))
    return out


def _label_selector(spec: Obj, kind: str) -> tuple[list[Cause], Selector | None]:
    """The apps kinds' ``spec.selector`` rules, and the selector when it is one."""
    sel = spec.get("selector")
    if sel is None:
        return [cause("spec.selector", "Required")], None
    out = validate_label_selector(sel, "spec.selector")
    if not sel.get("matchLabels") and not sel.get("matchExpressions"):
        noun = "statefulset" if kind == "StatefulSet" else "deployment"
        out.append(cause("spec.selector", "Invalid", shown=_go_selector(sel),
                         detail=f"empty selector is invalid for {noun}"))
    try:
        return out, Selector.from_label_selector(sel)
    except (SelectorError, TypeError, ValueError):
        detail = "" if kind == "StatefulSet" else "invalid label selector"
        return out + [cause("spec.selector", "Invalid", shown=_go_selector(sel),
                            detail=detail)], None


def validate_workload(kind: str, obj: Obj, old: Obj | None) -> list[Cause]:
    """A Deployment's, ReplicaSet's, StatefulSet's or ReplicationController's spec."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    out = _nonnegative(spec.get("replicas"), "spec.replicas")
    out += _nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    if kind == "ReplicationController":
        selector_map = spec.get("selector") or {}
        if not selector_map:
            out.append(cause("spec.selector", "Required"))
        out += validate_labels(selector_map, "spec.selector")
        if spec.get("template") is None:
            return out + [cause("spec.template", "Required")]
        return out + _template(spec["template"], Selector.from_set(selector_map),
                               "spec.template", kind)
    errors, selector = _label_selector(spec, kind)
    out += errors
    if selector is not None:
        out += _template(spec.get("template"), selector, "spec.template", kind)
    if kind == "Deployment":
        out += _nonnegative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit")
        deadline = spec.get("progressDeadlineSeconds")
        out += _nonnegative(deadline, "spec.progressDeadlineSeconds")
        if isinstance(deadline, int) and deadline <= (spec.get("minReadySeconds") or 0):
            out.append(cause("spec.progressDeadlineSeconds", "Invalid", deadline,
                             "must be greater than minReadySeconds"))
    if old is not None and kind != "ReplicationController":
        old_sel = (old.get("spec") or {}).get("selector")
        if spec.get("selector") != old_sel:
            out.append(cause("spec.selector", "Invalid", shown=_go_selector(spec.get("selector")),
                             detail="field is immutable"))
    return out


def validate_workload_status(obj: Obj) -> list[Cause]:
    """The counts of a workload's status are never negative (``Validate*Status``)."""
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    out: list[Cause] = []
    for name in _STATUS_COUNTS:
        out += _nonnegative(status.get(name), f"status.{name}")
    return out


# --------------------------------------------------------------------------- by kind


def validate_kind(group: str, kind: str, obj: Obj, old: Obj | None) -> list[Cause]:
    """The rules of this module that apply to ``kind`` (none for the kinds it does not cover)."""
    if kind in WORKLOAD_KINDS and group in ("apps", ""):
        return validate_workload(kind, obj, old)
    if kind == "Pod" and group == "":
        return validate_pod(obj)
    if kind == "PodDisruptionBudget" and group == "policy":
        # the disruption controller reads the selector (ValidatePodDisruptionBudgetSpec)
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        sel = spec.get("selector")
        return validate_label_selector(sel, "spec.selector") if isinstance(sel, dict) else []
    return []


def validate_kind_status(group: str, kind: str, obj: Obj) -> list[Cause]:
    if kind in WORKLOAD_KINDS and group in ("apps", ""):
        return validate_workload_status(obj)
    return []

def stored_object_problem(schemas: BuiltinSchemas, group: str, version: str, kind: str,
                          obj: Any) -> str | None:
    """Why the API server would refuse ``obj`` as it is stored, in the server's words (a value
    of the wrong type as its decoder says it, else the field errors of the rules above), or
    None. For readers of the store, which holds whatever was written to it."""
    name = schemas.of_kind(group, version, kind)
    _, found = conform(obj, ref(name) if name is not None else METADATA_ONLY, schemas.definitions,
                       drop=False)
    if found.error is not None:
        return found.error
    errors = validate_kind(group, kind, obj, None) + validate_kind_status(group, kind, obj)
    texts = [f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in errors]
    if not texts:
        return None
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
