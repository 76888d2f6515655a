"""Deleting what a deleted object owned, or orphaning it: the garbage collector's job, done
synchronously.

Why synchronous and in the server: upstream's garbage collector is a controller that watches
owner references; here a delete (with propagation other than Orphan) and a CRD's removal walk
the owner references at once, so ``kubectl delete deployment`` leaves no ReplicaSets behind
for the simulation to trip over, and its pods Terminating as their nodes stop them. A delete
with propagation Foreground keeps the owner (and each dependent that owns others) with the
``foregroundDeletion`` finalizer until what it owns is gone: here if nothing is left, else the
simulation's garbage collector releases it (:mod:`pyhpa.cluster.controllers.garbage_collector`).
A delete with propagation Orphan removes the owner's references from its dependents instead
(upstream's ``orphan`` finalizer), so they stay and no controller collects them as orphans.
"""

from __future__ import annotations

from typing import Any, Iterator

from pyhpa.cluster.apiserver.resources import Registry, Resource
from pyhpa.cluster.apiserver.storage import NotFound, Store


FOREGROUND = "foregroundDeletion"  # the finalizer that holds an owner until its dependents go


def collect_dependents(store: Store, registry: Registry, uid: str | None, namespace: str, *,
                       foreground: bool = False) -> bool:
    """Delete every object of ``namespace`` owned by ``uid``, and what those own in turn, as a
    delete through the API does: a pod gets its grace period (Terminating while its node stops
    it), an object with finalizers is only marked. With ``foreground`` a dependent that owns
    others is deleted in the foreground too (held by :data:`FOREGROUND` until they are gone).
    Returns whether some dependent is still there."""
    left = False
    todo = [uid] if uid else []
    while todo:
        owner = todo.pop()
        for res, o in list(_owned_by(store, registry, owner, namespace)):
            m = o["metadata"]
            try:
                if foreground and has_dependents(store, registry, m.get("uid"), namespace):
                    hold_for_dependents(store, res.key, namespace, m["name"])
                _, gone = store.delete(res.key, namespace, m["name"],
                                       grace_seconds=pod_grace(o) if res.kind == "Pod" else None)
            except NotFound:
                continue
            left = left or not gone
            todo.append(m.get("uid"))
    return left


def _owned_by(store: Store, registry: Registry, uid: object,
              namespace: str) -> Iterator[tuple[Resource, dict[str, Any]]]:
    for res in registry.resources:
        if "storage" in res.extra or not res.namespaced or res.extra.get("virtual"):
            continue
        for o in store.list(res.key, namespace).items:
            if uid in owner_uids(o):
                yield res, o


def has_dependents(store: Store, registry: Registry, uid: str, namespace: str) -> bool:
    return any(_owned_by(store, registry, uid, namespace))


def hold_for_dependents(store: Store, key: str, namespace: str, name: str) -> None:
    """Add :data:`FOREGROUND` to an object's finalizers (before its delete marks it)."""
    def add(o: dict[str, Any]) -> None:
        fins = o["metadata"].get("finalizers") or []
        if FOREGROUND not in fins:
            o["metadata"]["finalizers"] = [*fins, FOREGROUND]
    store.guaranteed_update(key, namespace, name, add)


def release_foreground(obj: dict[str, Any]) -> None:
    """Drop :data:`FOREGROUND` from an object (an update that removes its last finalizer ends
    a marked object)."""
    meta = obj["metadata"]
    fins = [f for f in meta.get("finalizers") or [] if f != FOREGROUND]
    if fins:
        meta["finalizers"] = fins
    else:
        meta.pop("finalizers", None)


def pod_grace(pod: dict[str, Any]) -> int:
    """A pod's default grace period: its terminationGracePeriodSeconds (30)."""
    spec = pod.get("spec")
    grace = spec.get("terminationGracePeriodSeconds") if isinstance(spec, dict) else None
    return grace if isinstance(grace, int) and not isinstance(grace, bool) and grace >= 0 else 30


def orphan_dependents(store: Store, registry: Registry, uid: str | None, namespace: str) -> None:
    """Remove the owner references to ``uid`` from the objects of ``namespace`` that hold one."""
    if not uid:
        return

    def drop_reference(o: dict[str, Any]) -> None:
        meta = o["metadata"]
        refs = [r for r in meta["ownerReferences"]
                if not (isinstance(r, dict) and r.get("uid") == uid)]
        if refs:
            meta["ownerReferences"] = refs
        else:
            meta.pop("ownerReferences")

    for res, o in list(_owned_by(store, registry, uid, namespace)):
        try:
            store.guaranteed_update(res.key, namespace, o["metadata"]["name"], drop_reference)
        except NotFound:
            continue


def owner_uids(obj: object) -> list[object]:
    """The uids ``obj``'s owner references name; none when its metadata is not of the shape
    the API gives it (an object stored before its metadata was checked must not stop a delete
    of another)."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
    if not isinstance(refs, list):
        return []
    return [r.get("uid") for r in refs if isinstance(r, dict)]
