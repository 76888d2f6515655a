"""What every namespace holds on a real cluster: the ``default`` ServiceAccount (the service
account controller's) and the ``kube-root-ca.crt`` ConfigMap (the root CA publisher's).

Why: ``kubectl get serviceaccounts,configmaps -n NS`` lists them on any cluster, and pods run as
``default`` (:mod:`.workload_defaults`). Here they are made with their namespace, and for every
namespace as the server starts (a store from before they were); one deleted is not made again
until the next start, where upstream's controllers would make it at once.
"""

from __future__ import annotations

from typing import Any

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBE_CONTROLLER_MANAGER, record_create
from pyhpa.cluster.apiserver.storage import AlreadyExists, Store

ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters.")


def ensure_namespace_objects(store: Store, namespace: str, root_ca: str | None) -> None:
    """Create the ``default`` ServiceAccount of ``namespace`` and, when the server has a CA
    (``root_ca``, PEM), its ``kube-root-ca.crt`` ConfigMap, unless they exist."""
    made: list[tuple[str, dict[str, Any]]] = [(R.SERVICE_ACCOUNTS.key, {
        "apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "default", "namespace": namespace}})]
    if root_ca:
        made.append((R.CONFIG_MAPS.key, {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": ROOT_CA_CONFIGMAP, "namespace": namespace,
                         "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION}},
            "data": {"ca.crt": root_ca}}))
    for key, obj in made:
        if store.try_get(key, namespace, obj["metadata"]["name"]) is not None:
            continue
        record_create(obj, KUBE_CONTROLLER_MANAGER, "v1")
        try:
            store.create(key, obj)
        except AlreadyExists:
            pass
