"""Upstream's field checks of the parts of objects the simulation does not read.

Why: kube-apiserver refuses a Deployment whose ``strategy.type`` is ``x``, a container port of
-1 or a Lease lasting -1 seconds; a cluster that stored them would accept manifests a real one
rejects (and later readers would trip on them). Each function is the named upstream validation
(kubernetes/kubernetes ``pkg/apis/*/validation``), with its messages; the checks the simulation
depends on live in :mod:`.workload_validation`.
"""

from __future__ import annotations

import re
from typing import Any

from pyhpa.api.names import regex_error
from pyhpa.api.field_errors import cause

Obj = dict[str, Any]
Cause = dict[str, str]

_PORT_RANGE = "must be between 1 and 65535, inclusive"  # IsValidPortNum
_NONNEGATIVE = "must be greater than or equal to 0"
_PERCENT = re.compile(r"^[0-9]+%$")
_PERCENT_MSG = regex_error("a valid percent string must be a numeric string followed by an "
                           "ending '%'", "[0-9]+%", "1%", "93%")


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _intstr_shown(value: Any) -> str:
    """How ``field.Invalid`` prints an ``intstr.IntOrString`` (Go's ``%#v``)."""
    if isinstance(value, str):
        return f'intstr.IntOrString{{Type:1, IntVal:0, StrVal:"{value}"}}'
    return f'intstr.IntOrString{{Type:0, IntVal:{value}, StrVal:""}}'


# --------------------------------------------------------------------------- apps


def _positive_int_or_percent(value: Any, path: str) -> list[Cause]:
    """``ValidatePositiveIntOrPercent``."""
    if isinstance(value, str):
        return [] if _PERCENT.match(value) else [
            cause(path, "Invalid", shown=_intstr_shown(value), detail=_PERCENT_MSG)]
    number = _int(value)
    if number is not None and number < 0:
        return [cause(path, "Invalid", number, _NONNEGATIVE)]
    return []


def _int_or_percent_value(value: Any) -> int:
    """``getIntOrPercentValue``: a percent's number, an int, or 0 (``IntValue`` of text)."""
    if isinstance(value, str):
        text = value[:-1] if _PERCENT.match(value) else value
        return int(text) if text.isdigit() else 0
    return _int(value) or 0


def validate_deployment_strategy(obj: Obj) -> list[Cause]:
    """``ValidateDeploymentStrategy`` and ``ValidateRollingUpdateDeployment``."""
    strategy = _dict(_dict(obj.get("spec")).get("strategy"))
    path = "spec.strategy"
    typ = strategy.get("type")
    rolling = strategy.get("rollingUpdate")
    if typ == "Recreate":
        if rolling is not None:
            return [cause(f"{path}.rollingUpdate", "Forbidden",
                          detail="may not be specified when strategy `type` is 'Recreate'")]
        return []
    if typ != "RollingUpdate":
        return [cause(f"{path}.type", "NotSupported", typ if isinstance(typ, str) else "",
                      'supported values: "Recreate", "RollingUpdate"')]
    if not isinstance(rolling, dict):
        return [cause(f"{path}.rollingUpdate", "Required",
                      detail="this should be defaulted and never be nil")]
    out: list[Cause] = []
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    out += _positive_int_or_percent(unavailable, f"{path}.rollingUpdate.maxUnavailable")
    out += _positive_int_or_percent(surge, f"{path}.rollingUpdate.maxSurge")
    if _int_or_percent_value(unavailable) == 0 and _int_or_percent_value(surge) == 0:
        shown = _intstr_shown(unavailable if unavailable is not None else 0)
        out.append(cause(f"{path}.rollingUpdate.maxUnavailable", "Invalid", shown=shown,
                         detail="may not be 0 when `maxSurge` is 0"))
    if isinstance(unavailable, str) and _PERCENT.match(unavailable) \
            and int(unavailable[:-1]) > 100:
        out.append(cause(f"{path}.rollingUpdate.maxUnavailable", "Invalid",
                         shown=_intstr_shown(unavailable), detail="must not be greater than 100%"))
    return out


def validate_deployment_status(obj: Obj) -> list[Cause]:
    """The cross-field part of ``ValidateDeploymentStatus`` (each count's sign is checked by
    :func:`.workload_validation.validate_workload_status`)."""
    status = _dict(obj.get("status"))
    replicas = _int(status.get("replicas")) or 0
    ready = _int(status.get("readyReplicas")) or 0
    out: list[Cause] = []
    for name in ("updatedReplicas", "readyReplicas", "availableReplicas"):
        count = _int(status.get(name)) or 0
        if count > replicas:
            out.append(cause(f"status.{name}", "Invalid", count,
                             "cannot be greater than status.replicas"))
    available = _int(status.get("availableReplicas")) or 0
    if available > ready:
        out.append(cause("status.availableReplicas", "Invalid", available,
                         "cannot be greater than readyReplicas"))
    return out


def validate_container_ports(pod_spec: Any, path: str) -> list[Cause]:
    """``validateContainerPorts`` of every container (``containerPort`` and ``hostPort``)."""
    out: list[Cause] = []
    for field in ("initContainers", "containers"):
        containers = _dict(pod_spec).get(field)
        for i, container in enumerate(containers if isinstance(containers, list) else []):
            ports = _dict(container).get("ports")
            for j, port in enumerate(ports if isinstance(ports, list) else []):
                where = f"{path}.{field}[{i}].ports[{j}]"
                port = _dict(port)
                number = _int(port.get("containerPort")) or 0
                if number == 0:
                    out.append(cause(f"{where}.containerPort", "Required"))
                elif not 1 <= number <= 65535:
                    out.append(cause(f"{where}.containerPort", "Invalid", number, _PORT_RANGE))
                host = _int(port.get("hostPort")) or 0
                if host != 0 and not 1 <= host <= 65535:
                    out.append(cause(f"{where}.hostPort", "Invalid", host, _PORT_RANGE))
    return out


# --------------------------------------------------------------------------- other groups


def validate_service_target_ports(obj: Obj) -> list[Cause]:
    """The ``targetPort`` number check of ``validateServicePort`` (a name is checked apart)."""
    ports = _dict(obj.get("spec")).get("ports")
    out: list[Cause] = []
    for i, port in enumerate(ports if isinstance(ports, list) else []):
        target = _int(_dict(port).get("targetPort"))
        if target is not None and not 1 <= target <= 65535:
            out.append(cause(f"spec.ports[{i}].targetPort", "Invalid", target, _PORT_RANGE))
    return out


def validate_lease(obj: Obj) -> list[Cause]:
    """``ValidateLeaseSpec``'s numbers."""
    spec = _dict(obj.get("spec"))
    out: list[Cause] = []
    duration = _int(spec.get("leaseDurationSeconds"))
    if duration is not None and duration <= 0:
        out.append(cause("spec.leaseDurationSeconds", "Invalid", duration, "must be greater than 0"))
    transitions = _int(spec.get("leaseTransitions"))
    if transitions is not None and transitions < 0:
        out.append(cause("spec.leaseTransitions", "Invalid", transitions, _NONNEGATIVE))
    return out


def validate_pdb_status(obj: Obj) -> list[Cause]:
    """``ValidatePodDisruptionBudgetStatusUpdate`` (policy/v1)."""
    status = _dict(obj.get("status"))
    out: list[Cause] = []
    for name in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        count = _int(status.get(name))
        if count is not None and count < 0:
            out.append(cause(f"status.{name}", "Invalid", count, _NONNEGATIVE))
    return out


_BAD_SEQUENCES = ("//", "/./", "/../", "/%2e/", "/%2E/")
_BAD_SUFFIXES = ("/..", "/.")


def validate_ingress_path(path: Obj, at: str) -> list[Cause]:
    """``validateHTTPIngressPath`` once ``pathType`` is known good."""
    text = path.get("path")
    text = text if isinstance(text, str) else ""
    out: list[Cause] = []
    if path.get("pathType") in ("Exact", "Prefix"):
        if not text.startswith("/"):
            out.append(cause(f"{at}.path", "Invalid", text, "must be an absolute path"))
        for seq in _BAD_SEQUENCES:
            if seq in text:
                out.append(cause(f"{at}.path", "Invalid", text, f"must not contain '{seq}'"))
        for suffix in _BAD_SUFFIXES:
            if text.endswith(suffix):
                out.append(cause(f"{at}.path", "Invalid", text, f"cannot end with '{suffix}'"))
    elif text and not text.startswith("/"):
        out.append(cause(f"{at}.path", "Invalid", text, "must be an absolute path"))
    return out + validate_ingress_backend(path.get("backend"), f"{at}.backend")


def validate_ingress_backend(backend: Any, at: str) -> list[Cause]:
    """``validateIngressBackend``'s service port (number or name, one of them)."""
    backend = _dict(backend)
    service = backend.get("service")
    if not isinstance(service, dict):
        return []
    port = _dict(service.get("port"))
    name, number = port.get("name") or "", _int(port.get("number")) or 0
    if name and number:
        return [cause(at, "Invalid", "", "cannot set both port name & port number")]
    if number and not 1 <= number <= 65535:
        return [cause(f"{at}.service.port.number", "Invalid", number, _PORT_RANGE)]
    if not name and not number:
        return [cause(at, "Required", detail="port name or number is required")]
    return []


def validate_new_event_type(obj: Obj) -> list[Cause]:
    """``ValidateEventCreate`` for events.k8s.io/v1: ``type`` is Normal or Warning."""
    typ = obj.get("type")
    if typ in ("Normal", "Warning"):
        return []
    return [cause("type", "Invalid", "", f"has invalid value: {typ if typ is not None else ''}")]
