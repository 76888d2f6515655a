"""The PriorityClasses and the default StorageClass every cluster starts with.

Why: pods of system add-ons name ``system-cluster-critical``/``system-node-critical`` (upstream's
built-in classes, pkg/apis/scheduling SystemPriorityClasses), and application manifests carry
PersistentVolumeClaims without a class, which a real cluster's default StorageClass provisions
(kind's and minikube's ``standard``). Made once when absent; then they are the user's.
"""

from __future__ import annotations

from typing import Any

from pyhpa.cluster.apiserver import managed_fields as managed
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.storage import AlreadyExists

Obj = dict[str, Any]
DEFAULT_STORAGE_CLASS = "standard"
PROVISIONER = "pyhpa.io/simulated-volume"  # controllers/volume.py provisions its claims
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"


def _priority(name: str, value: int, description: str) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value, "description": description,
            "preemptionPolicy": "PreemptLowerPriority"}


def _objects() -> list[tuple[R.Resource, Obj]]:
    return [
        (R.PRIORITY_CLASSES, _priority(
            "system-node-critical", 2000001000,
            "Used for system critical pods that must not be moved from their current node.")),
        (R.PRIORITY_CLASSES, _priority(
            "system-cluster-critical", 2000000000,
            "Used for system critical pods that must run in the cluster, but can be moved to "
            "another node if necessary.")),
        (R.STORAGE_CLASSES, {
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": DEFAULT_STORAGE_CLASS,
                         "annotations": {DEFAULT_CLASS_ANNOTATION: "true"}},
            "provisioner": PROVISIONER, "reclaimPolicy": "Delete",
            "volumeBindingMode": "Immediate", "allowVolumeExpansion": True}),
    ]


def ensure_cluster_defaults(store: Any) -> None:
    """Create the built-in PriorityClasses and the default StorageClass that are missing."""
    for res, obj in _objects():
        if store.try_get(res.key, "", obj["metadata"]["name"]) is not None:
            continue
        managed.record_create(obj, managed.KUBE_APISERVER, obj["apiVersion"])
        try:
            store.create(res.key, obj)
        except AlreadyExists:
            pass
