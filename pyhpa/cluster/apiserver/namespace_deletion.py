"""Namespace deletion as a real cluster does it: the namespace turns ``Terminating``, its
content is deleted (pods gracefully), and it goes once nothing is left, with the namespace
controller's conditions meanwhile (pkg/controller/namespace/deletion
namespaced_resources_deleter.go).

Why in two steps: ``kubectl delete ns app`` returns while pods still run their termination;
``kubectl get ns`` shows ``Terminating`` until the last one is gone. The delete handler starts
it (:func:`terminate`); the simulation's namespace controller sweeps again and finishes it as pods
go. Without a simulation, pods carry no finalizer and the namespace goes at once.
"""

from __future__ import annotations

import time
from typing import Any

from pyhpa.api.timefmt import format_epoch
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.storage import NotFound, StoreError

Obj = dict[str, Any]
FINALIZER = "kubernetes"
# the kubelet simulation's own finalizer stands for a pod's graceful termination, which
# upstream does not count as content holding a finalizer
_TERMINATION = "sim.pyhpa.io/termination"


def terminating(ns: Obj) -> bool:
    return bool((ns.get("metadata") or {}).get("deletionTimestamp"))


def _grace(pod: Obj) -> int:
    v = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    return v if isinstance(v, int) and v >= 0 else 30


def sweep(store: Any, name: str) -> tuple[dict[str, int], dict[str, int]]:
    """Delete what is in the namespace (pods with their grace period); returns what remains,
    by resource (``pods.``, ``deployments.apps``) and by finalizer."""
    remaining: dict[str, int] = {}
    finalizers: dict[str, int] = {}
    for key in store.namespace_keys(name):
        resource = key.rsplit("/", 1)[-1]
        group = key.split("/")[0] if key.count("/") == 2 else ""
        for obj in store.list(key, namespace=name).items:
            meta = obj.get("metadata") or {}
            try:
                if not meta.get("deletionTimestamp"):
                    grace = _grace(obj) if key == R.PODS.key else None
                    _, gone = store.delete(key, name, meta.get("name") or "", grace_seconds=grace)
                    if gone:
                        continue
            except NotFound:
                continue
            except StoreError:
                pass
            remaining[f"{resource}.{group}"] = remaining.get(f"{resource}.{group}", 0) + 1
            for f in meta.get("finalizers") or []:
                if f != _TERMINATION:
                    finalizers[f] = finalizers.get(f, 0) + 1
    return remaining, finalizers


def conditions(remaining: dict[str, int], finalizers: dict[str, int], at: str,
               old: list[Obj] | None = None) -> list[Obj]:
    """The namespace controller's status conditions (times kept while a status holds)."""
    def cond(kind: str, ok: bool, reason: str, message: str) -> Obj:
        c = {"type": kind, "status": "True" if ok else "False", "lastTransitionTime": at,
             "reason": reason, "message": message}
        for o in old or []:
            if o.get("type") == kind and o.get("status") == c["status"]:
                c["lastTransitionTime"] = o.get("lastTransitionTime", at)
        return c
    content = ", ".join(f"{r} has {n} resource instances" for r, n in sorted(remaining.items()))
    fins = ", ".join(f"{f} in {n} resource instances" for f, n in sorted(finalizers.items()))
    return [
        cond("NamespaceDeletionDiscoveryFailure", False, "ResourcesDiscovered",
             "All resources successfully discovered"),
        cond("NamespaceDeletionGroupVersionParsingFailure", False, "ParsedGroupVersions",
             "All legacy kube types successfully parsed"),
        cond("NamespaceDeletionContentFailure", False, "ContentDeleted",
             "All content successfully deleted, may be waiting on finalization"),
        cond("NamespaceContentRemaining", bool(remaining),
             "SomeResourcesRemain" if remaining else "ContentRemoved",
             f"Some resources are remaining: {content}" if remaining
             else "All content successfully removed"),
        cond("NamespaceFinalizersRemaining", bool(finalizers),
             "SomeFinalizersRemain" if finalizers else "ContentHasNoFinalizers",
             f"Some content in the namespace has finalizers remaining: {fins}" if finalizers
             else "All content-preserving finalizers finished"),
    ]


def progress(store: Any, name: str) -> bool:
    """One step of a Terminating namespace: sweep, record the conditions, and remove it once
    empty. Returns whether it is gone."""
    remaining, finalizers = sweep(store, name)
    if not remaining:
        try:
            def drop(o: Obj) -> None:
                fins = [f for f in (o.get("spec") or {}).get("finalizers") or [] if f != FINALIZER]
                o.setdefault("spec", {})["finalizers"] = fins
                if not fins:
                    o["spec"].pop("finalizers")
            store.guaranteed_update(R.NAMESPACES.key, "", name, drop)
            store.delete(R.NAMESPACES.key, "", name)
        except NotFound:
            pass
        return True
    at = format_epoch(time.time())

    def record(o: Obj) -> None:
        status = o.setdefault("status", {})
        status["phase"] = "Terminating"
        status["conditions"] = conditions(remaining, finalizers, at, status.get("conditions"))
    try:
        ns = store.get(R.NAMESPACES.key, "", name)
        want = conditions(remaining, finalizers, at, (ns.get("status") or {}).get("conditions"))
        if (ns.get("status") or {}).get("conditions") != want:
            store.guaranteed_update(R.NAMESPACES.key, "", name, record)
    except NotFound:
        return True
    return False


def terminate(store: Any, name: str, marked: Obj) -> Obj:
    """Go on with deleting namespace ``name``, which the store has just marked (``marked``,
    held by its ``kubernetes`` finalizer): Terminating now, its content deleted, gone once
    empty. Returns the namespace after this first step (its last state, if already gone)."""
    def phase(o: Obj) -> None:
        o.setdefault("status", {})["phase"] = "Terminating"
    try:
        marked = store.guaranteed_update(R.NAMESPACES.key, "", name, phase)
    except NotFound:
        return marked
    if progress(store, name):
        return marked
    return store.try_get(R.NAMESPACES.key, "", name) or marked
