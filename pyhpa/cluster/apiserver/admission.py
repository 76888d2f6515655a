"""Pod admission: the Priority, LimitRanger and ResourceQuota admission plugins of a default
cluster (plugin/pkg/admission/priority, .../limitranger, .../resourcequota), with their
messages.

Why one function both pod paths call: a pod created through the API (``kubectl run``) and one a
ReplicaSet creates meet the same rules; a refused ReplicaSet pod becomes the controller's
``FailedCreate`` event (``Error creating: pods "web-7d9-x2x7j" is forbidden: exceeded quota:
q, requested: cpu=500m, used: cpu=2, limited: cpu=2``) and the workload runs fewer pods.

What a pod counts against a quota and when a quota refuses it is :mod:`pyhpa.workload.quota`'s
(the simulator refuses its pods with it too). Quota usage is counted from the stored pods at
admission (what the quota controller writes to ``status.used`` later), so a quota works from
the moment it is created.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from pyhpa.api.quantity import Quantity
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.status import APIError
from pyhpa.workload.quota import add_usage, forbidden_message, pod_usage, refusal
from pyhpa.workload.quota import q as _q

Obj = dict[str, Any]
LIMIT_RANGER_ANNOTATION = "kubernetes.io/limit-ranger"


def _d(o: Any, key: str) -> Obj:
    v = o.get(key) if isinstance(o, dict) else None
    return v if isinstance(v, dict) else {}


def forbidden(pod: Obj, reason: str) -> APIError:
    name = _d(pod, "metadata").get("name") or _d(pod, "metadata").get("generateName") or ""
    return APIError(403, "Forbidden", forbidden_message(name, reason),
                    {"name": name, "kind": "pods"})


def _containers(pod: Obj) -> list[Obj]:
    return [c for c in _d(pod, "spec").get("containers") or [] if isinstance(c, dict)]


# --------------------------------------------------------------------------- priority


def _priority(store: Any, pod: Obj) -> None:
    spec = _d(pod, "spec")
    name = spec.get("priorityClassName")
    classes = store.list(R.PRIORITY_CLASSES.key).items
    if not name:
        default = next((c for c in classes if c.get("globalDefault")), None)
        if default is None:
            return
        name = spec["priorityClassName"] = _d(default, "metadata").get("name")
    found = next((c for c in classes if _d(c, "metadata").get("name") == name), None)
    if found is None:
        raise forbidden(pod, f"no PriorityClass with name {name} was found")
    spec["priority"] = found.get("value", 0)
    spec["preemptionPolicy"] = found.get("preemptionPolicy") or "PreemptLowerPriority"


# --------------------------------------------------------------------------- limit ranges


def _limit_ranger(store: Any, pod: Obj) -> None:
    ns = _d(pod, "metadata").get("namespace") or ""
    ranges = store.list(R.LIMIT_RANGES.key, namespace=ns).items
    if not ranges:
        return
    items = [i for r in ranges for i in _d(r, "spec").get("limits") or [] if isinstance(i, dict)]
    notes: list[str] = []
    for item in items:
        if item.get("type") != "Container":
            continue
        for c in _containers(pod):
            res = c.setdefault("resources", {})
            for field, key, what in (("limits", "default", "limit"),
                                     ("requests", "defaultRequest", "request")):
                have = res.setdefault(field, {})
                for r, v in (item.get(key) or {}).items():
                    if r not in have:
                        have[r] = v
                        notes.append(f"{r} {what} for container {c.get('name')}")
            for field in ("limits", "requests"):
                if not res.get(field):
                    res.pop(field, None)
    if notes:
        meta = pod.setdefault("metadata", {})
        annotations = meta.get("annotations") or {}
        annotations[LIMIT_RANGER_ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)
        meta["annotations"] = annotations
    errors: list[str] = []
    for item in items:
        kind = item.get("type")
        if kind == "Container":
            for c in _containers(pod):
                res = _d(c, "resources")
                errors += _bounds(item, "Container", _d(res, "requests"), _d(res, "limits"))
        elif kind == "Pod":
            requests: dict[str, Quantity] = {}
            limits: dict[str, Quantity] = {}
            for c in _containers(pod):
                for total, field in ((requests, "requests"), (limits, "limits")):
                    for r, v in _d(_d(c, "resources"), field).items():
                        total[r] = total[r] + _q(v) if r in total else _q(v)
            errors += _bounds(item, "Pod", requests, limits)
    if errors:
        raise forbidden(pod, errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")


def _bounds(item: Obj, kind: str, requests: dict[str, Any], limits: dict[str, Any]) -> list[str]:
    """limitranger.go minConstraint/maxConstraint/limitRequestRatioConstraint."""
    out = []
    for r, v in sorted((item.get("min") or {}).items()):
        lo = _q(v)
        if r not in requests:
            out.append(f"minimum {r} usage per {kind} is {lo}.  No request is specified")
        elif _q(requests[r]).cmp(lo) < 0:
            out.append(f"minimum {r} usage per {kind} is {lo}, but request is "
                       f"{_q(requests[r])}")
    for r, v in sorted((item.get("max") or {}).items()):
        hi = _q(v)
        if r not in limits:
            out.append(f"maximum {r} usage per {kind} is {hi}.  No limit is specified")
        elif _q(limits[r]).cmp(hi) > 0:
            out.append(f"maximum {r} usage per {kind} is {hi}, but limit is {_q(limits[r])}")
    for r, v in sorted((item.get("maxLimitRequestRatio") or {}).items()):
        if r in limits and r in requests and _q(requests[r]).milli_value() > 0:
            ratio = _q(limits[r]).milli_value() / _q(requests[r]).milli_value()
            if ratio > _q(v).milli_value() / 1000:
                out.append(f"{r} max limit to request ratio per {kind} is {_q(v)}, but "
                           f"provided ratio is {ratio:f}")
    return out


# --------------------------------------------------------------------------- quota


def counted(pod: Obj, now: float) -> bool:
    """Whether a stored pod counts against quota: not finished, not past its deletion."""
    if _d(pod, "status").get("phase") in ("Succeeded", "Failed"):
        return False
    deleted = _d(pod, "metadata").get("deletionTimestamp")
    if deleted:
        try:
            return datetime.fromisoformat(str(deleted).replace("Z", "+00:00")).timestamp() > now
        except ValueError:
            return False
    return True


def namespace_usage(store: Any, namespace: str, now: float) -> dict[str, Quantity]:
    used: dict[str, Quantity] = {}
    for p in store.list(R.PODS.key, namespace=namespace).items:
        if counted(p, now):
            add_usage(used, pod_usage(p))
    return used


def _quota(store: Any, pod: Obj) -> None:
    ns = _d(pod, "metadata").get("namespace") or ""
    quotas = store.list(R.RESOURCE_QUOTAS.key, namespace=ns).items
    if not quotas:
        return
    used = namespace_usage(store, ns, time.time())
    for quota in quotas:
        reason = refusal(_d(quota, "metadata").get("name") or "", _d(_d(quota, "spec"), "hard"), used, pod)
        if reason is not None:
            raise forbidden(pod, reason)


def admit_pod(store: Any, pod: Obj) -> None:
    """Apply the admission plugins to a new pod (in place); raise a 403 when one refuses it."""
    _priority(store, pod)
    _limit_ranger(store, pod)
    _quota(store, pod)
