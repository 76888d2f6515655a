"""API objects as the controllers read them: plain dicts decoded from the store.

Why accessors and not typed objects: the controllers see whatever users stored (kubectl writes
partial, null-laden or odd objects), so every read tolerates a missing or null field; and they
share the labels, annotations and hashes by which upstream's controllers recognise their own.
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

from pyhpa.api.names import safe_encode
from pyhpa.api.timefmt import parse_time

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name)

FINALIZER = "sim.pyhpa.io/termination"
NODE_NAME = "pyhpa-node"  # the first simulated node; more are NODE_NAME-2, NODE_NAME-3...
# What each simulated node has, unless `pyhpa cluster --node-capacity` says otherwise.
NODE_CAPACITY = MappingProxyType({"cpu": "8", "memory": "32Gi", "pods": "250"})
HASH_LABEL = "pod-template-hash"
REVISION_ANN = "deployment.kubernetes.io/revision"
DESIRED_ANN = "deployment.kubernetes.io/desired-replicas"
MAX_ANN = "deployment.kubernetes.io/max-replicas"
REVISION_HISTORY_ANN = "deployment.kubernetes.io/revision-history"
ROLLBACK_TO_ANN = "deprecated.deployment.rollback.to"
LAST_APPLIED_ANN = "kubectl.kubernetes.io/last-applied-configuration"
# What the deployment controller never copies from a Deployment to its ReplicaSets, and
# `kubectl rollout undo` never copies back from one (both skip the same set upstream).
NOT_COPIED_ANNS = frozenset({LAST_APPLIED_ANN, REVISION_ANN, REVISION_HISTORY_ANN, DESIRED_ANN,
                             MAX_ANN, ROLLBACK_TO_ANN})
STS_REVISION_LABEL = "controller-revision-hash"
STS_POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
STS_POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"



def node_names(count: int) -> list[str]:
    """The names of the simulation's ``count`` nodes: pyhpa-node, pyhpa-node-2, ..."""
    return [NODE_NAME] + [f"{NODE_NAME}-{i}" for i in range(2, count + 1)]

def meta_of(o: Obj) -> Obj:
    return o.get("metadata") or {}


def spec_of(o: Obj) -> Obj:
    return o.get("spec") or {}


def status_of(o: Obj) -> Obj:
    return o.get("status") or {}


def uid_of(o: Obj) -> str:
    return meta_of(o).get("uid") or ""


def written_as(o: Obj) -> str | None:
    """The object's resourceVersion: the same while the stored object is unchanged (a memo's
    key; None for an object that was never stored, which no memo may trust)."""
    return meta_of(o).get("resourceVersion") or None


def name_of(o: Obj) -> str:
    return meta_of(o).get("name") or ""


def namespace_of(o: Obj) -> str:
    return meta_of(o).get("namespace") or ""


def is_deleting(o: Obj) -> bool:
    return bool(meta_of(o).get("deletionTimestamp"))


def controller_ref(o: Obj) -> Obj | None:
    for ref in meta_of(o).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def replicas_of(o: Obj, default: int = 1) -> int:
    """``spec.replicas``, or ``default`` when it is absent or not a count."""
    v = spec_of(o).get("replicas")
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else default


def set_nonzero(status: Obj, **counts: int) -> None:
    """Set the counts that are not zero: Go's ``omitempty`` on the int32 status fields, which
    a status of upstream's controllers leaves out when they are 0."""
    status.update((k, v) for k, v in counts.items() if v)


def parse_epoch(text: Any) -> float | None:
    """An RFC 3339 timestamp as epoch seconds; None when absent or unreadable (a bad timestamp
    in a user's object is just unknown)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return parse_time(text).timestamp()
    except Exception:  # noqa: BLE001
        return None


def ordinal_of(pod_name: str, sts_name: str) -> int | None:
    """A StatefulSet pod's ordinal (``web-2`` -> 2), None for a name that is not one."""
    prefix = sts_name + "-"
    if not pod_name.startswith(prefix):
        return None
    rest = pod_name[len(prefix):]
    return int(rest) if rest.isdigit() and (rest == "0" or not rest.startswith("0")) else None


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def template_hash(template: Any, collision_count: int = 0) -> str:
    """A pod-template-hash: FNV-32a of the template, encoded the way kube's SafeEncodeString is."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":"))
    if collision_count:
        data += str(collision_count)
    return safe_encode(str(fnv32a(data.encode())).encode())


def normal_template(template: Any) -> Any:
    """A pod template as the apiserver's typed decoding sees it: null, ``{}`` and ``[]`` values
    are the same as absent ones (``kubectl rollout undo`` sends ``creationTimestamp: null``).
    Deployments compare and hash templates in this form, as upstream compares typed ones."""
    if isinstance(template, dict):
        out = {}
        for k, v in template.items():
            v = normal_template(v)
            if v is None or v == {} or v == []:
                continue
            out[k] = v
        return out
    if isinstance(template, list):
        return [normal_template(v) for v in template]
    return template


def qos_class(spec: Obj) -> str:
    """A pod's ``status.qosClass`` from the requests and limits of its containers."""
    containers = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    if not containers:
        return "BestEffort"
    any_set = False
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        if req or lim:
            any_set = True
        for r in ("cpu", "memory"):
            if r not in lim or (r in req and str(req[r]) != str(lim[r])):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"
