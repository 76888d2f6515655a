"""The ``/scale`` subresource: an autoscaling/v1 Scale mirrored from any scalable kind.

Why path-driven: the HPA must be able to autoscale *any* kind with a scale subresource, so
Deployments, ReplicaSets, StatefulSets, ReplicationControllers and our CRD-style ``Scalable`` all
go through the same CRD-style paths (``specReplicasPath``, ``statusReplicasPath``,
``labelSelectorPath``) declared in :mod:`pyhpa.cluster.apiserver.resources` (upstream's CRD scale subresource).
"""

from __future__ import annotations

from typing import Any

from pyhpa.cluster.apiserver.resources import Resource
from pyhpa.cluster.apiserver.columns import label_selector_string
from pyhpa.api.field_errors import cause

Obj = dict[str, Any]


def _path(p: str) -> list[str]:
    return [x for x in p.split(".") if x]


def path_of(p: str) -> tuple[str, ...]:
    """A CRD-style dotted path (``.spec.replicas``) as the parts of a field path."""
    return tuple(_path(p))


def read_path(obj: Obj, p: str) -> Any:
    """The value at a CRD-style dotted path (``.spec.replicas``), or None."""
    cur: Any = obj
    for part in _path(p):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def write_path(obj: Obj, p: str, value: Any) -> None:
    """Set the value at a CRD-style dotted path, creating the maps on the way."""
    parts = _path(p)
    cur = obj
    for part in parts[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = cur[part] = {}
        cur = nxt
    cur[parts[-1]] = value


def to_scale(res: Resource, obj: Obj) -> Obj:
    """The Scale view of ``obj`` (metadata shared: name, namespace, uid, resourceVersion...)."""
    paths = res.scale
    assert paths is not None
    meta = obj.get("metadata") or {}
    if paths.selector_from_spec:
        selector = label_selector_string(read_path(obj, ".spec.selector"))
    else:
        selector = read_path(obj, paths.label_selector) if paths.label_selector else ""
    spec_replicas = read_path(obj, paths.spec_replicas)
    status: Obj = {"replicas": read_path(obj, paths.status_replicas) or 0}
    if selector:
        status["selector"] = selector
    out_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                     "creationTimestamp") if k in meta}
    spec: Obj = {}
    if spec_replicas is not None:
        spec["replicas"] = spec_replicas
    elif res.scale.selector_from_spec:
        spec["replicas"] = 1  # apps kinds default replicas to 1
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": out_meta,
            "spec": spec, "status": status}


def apply_scale(res: Resource, obj: Obj, scale: Obj) -> Obj:
    """Write the Scale's ``spec.replicas`` back into ``obj`` (in place) and return it."""
    assert res.scale is not None
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    write_path(obj, res.scale.spec_replicas, replicas)
    rv = (scale.get("metadata") or {}).get("resourceVersion")
    obj.setdefault("metadata", {})["resourceVersion"] = rv or ""
    return obj


def validate_scale(scale: Obj) -> list[dict[str, str]]:
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        return [cause("spec.replicas", "Invalid", replicas, "must be greater than or equal to 0")]
    return []
