"""The simulated nodes: their Node objects and the Leases their kubelets renew.

Why a node at all: ``kubectl top nodes``, ``get nodes -o wide`` and ``get pods -o wide`` read
it, and pods carry a ``spec.nodeName``. Why a Lease: a kubelet's heartbeat is its Lease in
``kube-node-lease`` (``kubectl describe node`` shows it, tools that judge node health read it),
renewed every quarter of its duration.
"""

from __future__ import annotations

import copy
import platform

from pyhpa.api.quantity import Quantity
from pyhpa.api.timefmt import format_epoch
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBELET, record_create, record_update
from pyhpa.cluster.controllers.context import SimulationContext
from pyhpa.cluster.controllers.objects import (
    NODE_CAPACITY, NODE_NAME, Obj, name_of, status_of, uid_of)
from pyhpa.cluster.apiserver.storage import AlreadyExists, Conflict, NotFound, StoreError

LEASE_NAMESPACE = "kube-node-lease"
LEASE_SECONDS = 40  # the kubelet's nodeLeaseDurationSeconds
RENEW_SECONDS = LEASE_SECONDS / 4  # it renews at a quarter of the duration


class NodeCapacityError(ValueError):
    """A ``--node-capacity`` value that cannot be used (the message names what is wrong)."""


def parse_node_capacity(text: str) -> dict[str, str]:
    """``cpu=8,memory=32Gi,pods=110`` over :data:`NODE_CAPACITY` (the resources left out keep
    theirs); each value a positive quantity, ``pods`` a whole number."""
    out = dict(NODE_CAPACITY)
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, value = (x.strip() for x in part.partition("="))
        if not sep or name not in NODE_CAPACITY:
            raise NodeCapacityError(f"{part!r}: expected cpu=, memory= or pods=QUANTITY")
        try:
            q = Quantity.parse(value)
        except Exception as exc:  # noqa: BLE001 - the quantity parser's own words
            raise NodeCapacityError(f"{name}={value}: {exc}") from None
        if q.sign() <= 0 or (name == "pods" and q.milli_value() % 1000):
            raise NodeCapacityError(f"{name}={value}: must be a positive "
                                    f"{'whole number' if name == 'pods' else 'quantity'}")
        out[name] = str(q)
    return out


def ensure_node(ctx: SimulationContext) -> None:
    """Create the simulated nodes that are missing; bring those that exist up to date (the
    capacity asked for, what ``get nodes -o wide`` shows, which older data dirs lack)."""
    existing = {name_of(n): n for n in ctx.store.list(R.NODES.key).items}
    for name in existing:  # ours from a run with more nodes: gone (their pods then too)
        number = name.removeprefix(f"{NODE_NAME}-")
        if number != name and number.isdigit() and int(number) > len(ctx.node_names):
            for key, ns in ((R.LEASES.key, LEASE_NAMESPACE), (R.NODES.key, "")):
                try:
                    ctx.store.delete(key, ns, name)
                except StoreError:
                    pass
    for i, name in enumerate(ctx.node_names):
        found = existing.get(name)
        if found is None:
            _create_node(ctx, name, i)
            continue
        status = status_of(found)
        if node_info(ctx.kubelet_version).items() <= (status.get("nodeInfo") or {}).items() and \
                status.get("capacity") == ctx.node_capacity and \
                status.get("allocatable") == ctx.node_capacity:
            continue

        def describe(o: Obj) -> None:
            st = o.setdefault("status", {})
            st.setdefault("nodeInfo", {}).update(node_info(ctx.kubelet_version))
            st["capacity"], st["allocatable"] = dict(ctx.node_capacity), dict(ctx.node_capacity)
        try:
            ctx.mutate_object(R.NODES.key, "", name, describe, manager=KUBELET, subresource="status")
        except (NotFound, Conflict):
            pass


def _create_node(ctx: SimulationContext, name: str, index: int) -> None:
    ts = format_epoch(ctx.clock())
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
              "kubernetes.io/arch": "amd64"}
    if index == 0:
        labels["node-role.kubernetes.io/control-plane"] = ""
    node = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "creationTimestamp": ts, "labels": labels},
        "spec": {},
        "status": {
            "capacity": dict(ctx.node_capacity), "allocatable": dict(ctx.node_capacity),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "kubelet is posting ready status",
                            "lastHeartbeatTime": ts, "lastTransitionTime": ts}],
            "addresses": [{"type": "InternalIP", "address": internal_ip(index)},
                          {"type": "Hostname", "address": name}],
            "nodeInfo": node_info(ctx.kubelet_version)},
    }
    record_create(node, KUBELET, "v1", ctx.field_shape(node, "v1"))  # the kubelet registers its node
    try:
        ctx.store.create(R.NODES.key, node)
    except AlreadyExists:
        pass


def internal_ip(index: int) -> str:
    """The address of the simulation's node number ``index`` (0: the first); its pods' hostIP."""
    return f"10.0.{(10 + index) // 256}.{(10 + index) % 256}"


def node_info(kubelet_version: str) -> Obj:
    # every field the Node schema requires (kubectl validates a List of nodes on the client)
    return {"machineID": "pyhpa-sim", "systemUUID": "pyhpa-sim", "bootID": "pyhpa-sim",
            "kernelVersion": platform.release() or "unknown", "osImage": "pyhpa simulated node",
            "containerRuntimeVersion": "pyhpa://sim", "kubeletVersion": kubelet_version,
            "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"}


def renew_lease(ctx: SimulationContext, now: float) -> float:
    """Create or renew each simulated node's Lease when due; returns when the next renewal is
    due.

    Not counted as a write of the pass: nothing in the simulation reads the Leases.
    """
    if ctx.lease_renewed is not None and now < ctx.lease_renewed + RENEW_SECONDS:
        return ctx.lease_renewed + RENEW_SECONDS
    renew_time = format_epoch(now, micro=True)
    try:
        for name in ctx.node_names:
            _renew(ctx, name, renew_time)
    except StoreError:  # taken or deleted meanwhile: the next pass tries again
        return now + 1.0
    ctx.lease_renewed = now
    return now + RENEW_SECONDS


def _renew(ctx: SimulationContext, name: str, renew_time: str) -> None:
    lease = ctx.store.try_get(R.LEASES.key, LEASE_NAMESPACE, name)
    if lease is None:
        node = ctx.store.try_get(R.NODES.key, "", name)
        if node is None:
            return  # deleted (kubectl delete node): no kubelet heartbeat for it
        meta: Obj = {"name": name, "namespace": LEASE_NAMESPACE, "ownerReferences": [
            {"apiVersion": "v1", "kind": "Node", "name": name, "uid": uid_of(node)}]}
        lease = {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta,
            "spec": {"holderIdentity": name, "leaseDurationSeconds": LEASE_SECONDS,
                     "renewTime": renew_time}}
        record_create(lease, KUBELET, "coordination.k8s.io/v1",
                      ctx.field_shape(lease, "coordination.k8s.io/v1"))
        ctx.store.create(R.LEASES.key, lease)
        return

    def renew(o: Obj) -> None:
        before = copy.deepcopy(o)
        o.setdefault("spec", {}).update(holderIdentity=name, leaseDurationSeconds=LEASE_SECONDS,
                                        renewTime=renew_time)
        record_update(o, before, KUBELET, "coordination.k8s.io/v1")
    ctx.store.guaranteed_update(R.LEASES.key, LEASE_NAMESPACE, name, renew)
