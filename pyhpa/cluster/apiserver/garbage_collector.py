"""Deleting what a deleted object owned, or orphaning it: the garbage collector's job, done
synchronously.

Why synchronous and in the server: upstream's garbage collector is a controller that watches
owner references; here a delete (with propagation other than Orphan), a namespace's end and a
CRD's removal walk the owner references at once, so ``kubectl delete deployment`` leaves no
ReplicaSets or Pods behind for the simulation to trip over. A delete with propagation Orphan
removes the owner's references from its dependents instead (upstream's ``orphan`` finalizer),
so they stay and no controller collects them as orphans of a gone owner.
"""

from __future__ import annotations

from pyhpa.cluster.apiserver.resources import Registry, storage_of
from pyhpa.cluster.apiserver.storage import NotFound, Store


def collect_dependents(store: Store, registry: Registry, uid: str | None, namespace: str) -> None:
    """Delete every object of ``namespace`` owned by ``uid``, and what those own in turn."""
    if not uid:
        return
    todo = [uid]
    while todo:
        owner = todo.pop()
        for res in registry.resources:
            if res is not storage_of(res) or not res.namespaced:
                continue
            if res.extra.get("virtual"):
                continue
            for o in store.list(res.key, namespace).items:
                if owner in owner_uids(o):
                    m = o["metadata"]
                    try:
                        store.delete(res.key, namespace, m["name"], grace_finalizers=False)
                    except NotFound:
                        continue
                    todo.append(m.get("uid"))


def orphan_dependents(store: Store, registry: Registry, uid: str | None, namespace: str) -> None:
    """Remove the owner references to ``uid`` from the objects of ``namespace`` that hold one."""
    if not uid:
        return

    def drop_reference(o: dict) -> None:
        meta = o["metadata"]
        refs = [r for r in meta["ownerReferences"]
                if not (isinstance(r, dict) and r.get("uid") == uid)]
        if refs:
            meta["ownerReferences"] = refs
        else:
            meta.pop("ownerReferences")

    for res in registry.resources:
        if res is not storage_of(res) or not res.namespaced or res.extra.get("virtual"):
            continue
        for o in store.list(res.key, namespace).items:
            if uid in owner_uids(o):
                try:
                    store.guaranteed_update(res.key, namespace, o["metadata"]["name"],
                                            drop_reference)
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
