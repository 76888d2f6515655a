"""Deleting what a deleted object owned: the garbage collector's job, done synchronously.

Why synchronous and in the server: upstream's garbage collector is a controller that watches
owner references; here a delete (with propagation other than Orphan), a namespace's end and a
CRD's removal walk the owner references at once, so ``kubectl delete deployment`` leaves no
ReplicaSets or Pods behind for the simulation to trip over.
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
                if _owned_by(o, owner):
                    m = o["metadata"]
                    try:
                        store.delete(res.key, namespace, m["name"], grace_finalizers=False)
                    except NotFound:
                        continue
                    todo.append(m.get("uid"))


def _owned_by(o: dict, uid: str) -> bool:
    """Whether ``o`` names ``uid`` among its owners; ownerReferences of another shape (stored
    before they were validated) name none, so a delete never fails on someone else's object."""
    refs = o.get("metadata", {}).get("ownerReferences")
    return isinstance(refs, list) and any(isinstance(r, dict) and r.get("uid") == uid
                                          for r in refs)
