"""The simulated node: its Node object and the Lease its kubelet renews.

Why a node at all: ``kubectl top nodes``, ``get nodes -o wide`` and ``get pods -o wide`` read
it, and pods carry a ``spec.nodeName``. Why a Lease: a kubelet's heartbeat is its Lease in
``kube-node-lease`` (``kubectl describe node`` shows it, tools that judge node health read it),
renewed every quarter of its duration.
"""

from __future__ import annotations

import copy
import platform

from pyhpa.api.timefmt import format_epoch
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBELET, record_create, record_update
from pyhpa.cluster.controllers.context import SimulationContext
from pyhpa.cluster.controllers.objects import Obj, name_of, status_of, uid_of
from pyhpa.cluster.apiserver.storage import AlreadyExists, Conflict, NotFound, StoreError

LEASE_NAMESPACE = "kube-node-lease"
LEASE_SECONDS = 40  # the kubelet's nodeLeaseDurationSeconds
RENEW_SECONDS = LEASE_SECONDS / 4  # it renews at a quarter of the duration


def ensure_node(ctx: SimulationContext) -> None:
    """Create the simulated node if the cluster has none (``kubectl top nodes`` reads it)."""
    nodes = ctx.store.list(R.NODES.key).items
    info = node_info(ctx.kubelet_version)
    for node in nodes:  # nodes from older data dirs (or versions) lack what `get nodes -o wide` shows
        if name_of(node) == ctx.node_name and not info.items() <= (
                status_of(node).get("nodeInfo") or {}).items():
            def describe(o: Obj) -> None:
                o.setdefault("status", {}).setdefault("nodeInfo", {}).update(info)
            try:
                ctx.mutate_object(R.NODES.key, "", ctx.node_name, describe, manager=KUBELET,
                                  subresource="status")
            except (NotFound, Conflict):
                pass
    if nodes:
        return
    ts = format_epoch(ctx.clock())
    node = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": ctx.node_name, "creationTimestamp": ts,
                     "labels": {"kubernetes.io/hostname": ctx.node_name,
                                "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                                "node-role.kubernetes.io/control-plane": ""}},
        "spec": {},
        "status": {
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "250"},
            "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "250"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "kubelet is posting ready status",
                            "lastHeartbeatTime": ts, "lastTransitionTime": ts}],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.10"},
                          {"type": "Hostname", "address": ctx.node_name}],
            "nodeInfo": info},
    }
    record_create(node, KUBELET, "v1")  # the kubelet registers its node
    try:
        ctx.store.create(R.NODES.key, node)
    except AlreadyExists:
        pass


def node_info(kubelet_version: str) -> Obj:
    # every field the Node schema requires (kubectl validates a List of nodes on the client)
    return {"machineID": "pyhpa-sim", "systemUUID": "pyhpa-sim", "bootID": "pyhpa-sim",
            "kernelVersion": platform.release() or "unknown", "osImage": "pyhpa simulated node",
            "containerRuntimeVersion": "pyhpa://sim", "kubeletVersion": kubelet_version,
            "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"}


def renew_lease(ctx: SimulationContext, now: float) -> float:
    """Create or renew our node's Lease when due; returns when the next renewal is due.

    Not counted as a write of the pass: nothing in the simulation reads the Lease.
    """
    if ctx.lease_renewed is not None and now < ctx.lease_renewed + RENEW_SECONDS:
        return ctx.lease_renewed + RENEW_SECONDS
    renew_time = format_epoch(now, micro=True)
    try:
        lease = ctx.store.try_get(R.LEASES.key, LEASE_NAMESPACE, ctx.node_name)
        if lease is None:
            node = ctx.store.try_get(R.NODES.key, "", ctx.node_name)
            meta: Obj = {"name": ctx.node_name, "namespace": LEASE_NAMESPACE}
            if node is not None:
                meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node",
                                            "name": ctx.node_name, "uid": uid_of(node)}]
            lease = {
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta,
                "spec": {"holderIdentity": ctx.node_name, "leaseDurationSeconds": LEASE_SECONDS,
                         "renewTime": renew_time}}
            record_create(lease, KUBELET, "coordination.k8s.io/v1")
            ctx.store.create(R.LEASES.key, lease)
        else:
            def renew(o: Obj) -> None:
                before = copy.deepcopy(o)
                o.setdefault("spec", {}).update(holderIdentity=ctx.node_name,
                                                leaseDurationSeconds=LEASE_SECONDS,
                                                renewTime=renew_time)
                record_update(o, before, KUBELET, "coordination.k8s.io/v1")
            ctx.store.guaranteed_update(R.LEASES.key, LEASE_NAMESPACE, ctx.node_name, renew)
    except StoreError:  # taken or deleted meanwhile: the next pass tries again
        return now + 1.0
    ctx.lease_renewed = now
    return now + RENEW_SECONDS
