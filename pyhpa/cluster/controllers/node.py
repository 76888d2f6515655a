"""The simulated node: its Node object, and which node a new pod is placed on.

Why a node at all: ``kubectl top nodes``, ``get nodes -o wide`` and ``get pods -o wide`` read
it, and pods carry a ``spec.nodeName``. Placement spreads pods over the schedulable nodes (the
fewest pods first), as a scheduler with nothing else to weigh would.
"""

from __future__ import annotations

import platform

from pyhpa.api.timefmt import format_epoch
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import Obj, name_of, spec_of, status_of
from pyhpa.cluster.apiserver.storage import AlreadyExists, Conflict, NotFound


def ensure_node(ctx: SimulationContext) -> None:
    """Create the simulated node if the cluster has none (``kubectl top nodes`` reads it)."""
    nodes = ctx.store.list(R.NODES.key).items
    for node in nodes:  # nodes from older data dirs lack what `get nodes -o wide` shows
        if name_of(node) == ctx.node_name and not set(node_info()) <= set(
                status_of(node).get("nodeInfo") or {}):
            def describe(o: Obj) -> None:
                o.setdefault("status", {}).setdefault("nodeInfo", {}).update(node_info())
            try:
                ctx.mutate_object(R.NODES.key, "", ctx.node_name, describe)
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
            "nodeInfo": node_info()},
    }
    try:
        ctx.store.create(R.NODES.key, node)
    except AlreadyExists:
        pass


def pick_node(ctx: SimulationContext, snap: Snapshot) -> str:
    """The schedulable node with the fewest pods (by name on a tie); ours when there is none."""
    ready = [n for n in snap.nodes if not spec_of(n).get("unschedulable")]
    if not ready:
        return ctx.node_name
    load = snap.node_load
    if load is None:  # counted once per pass, then kept up to date here
        load = snap.node_load = {name_of(n): 0 for n in ready}
        for rec in ctx.pods.values():
            if rec.node in load:
                load[rec.node] += 1
    node = min(sorted(load), key=lambda n: load[n])
    load[node] += 1
    return node


def node_info() -> Obj:
    # every field the Node schema requires (kubectl validates a List of nodes on the client)
    return {"machineID": "pyhpa-sim", "systemUUID": "pyhpa-sim", "bootID": "pyhpa-sim",
            "kernelVersion": platform.release() or "unknown", "osImage": "pyhpa simulated node",
            "containerRuntimeVersion": "pyhpa://sim", "kubeletVersion": "v1.33.1-pyhpa",
            "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"}
