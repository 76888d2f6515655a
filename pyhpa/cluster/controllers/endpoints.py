"""The Endpoints and EndpointSlice controllers (pkg/controller/endpoint,
pkg/controller/endpointslice): each Service with a selector gets the addresses of the pods it
selects, kept as they start, turn Ready and terminate.

Endpoints ``<service>`` lists Ready pods in ``addresses`` and running unready ones in
``notReadyAddresses`` (terminating pods are left out); one EndpointSlice ``<service>-xxxxx``
(labels ``kubernetes.io/service-name``, ``endpointslice.kubernetes.io/managed-by``, owned by the
Service) lists every pod with an IP and its ``ready``/``serving``/``terminating`` conditions.
A named ``targetPort`` resolves to the pod's container port of that name. The ``kubernetes``
Service's Endpoints, which the API server keeps, are mirrored into its slice ``kubernetes``.
"""

from __future__ import annotations

import random

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBE_CONTROLLER_MANAGER as KCM
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot, listed_in
from pyhpa.cluster.controllers.objects import (Obj, is_deleting, meta_of, name_of, namespace_of,
                                               spec_of, status_of, uid_of)

SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
CONTROLLER = "endpointslice-controller.k8s.io"
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def _ready(pod: Obj) -> bool:
    return any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
               for c in status_of(pod).get("conditions") or [])


def _target_port(port: Obj, pods: list[Obj]) -> int:
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int):
        return target
    for pod in pods:
        for c in spec_of(pod).get("containers") or []:
            for cp in (c.get("ports") or []) if isinstance(c, dict) else []:
                if isinstance(cp, dict) and cp.get("name") == target:
                    return int(cp.get("containerPort") or 0)
    return int(port.get("port") or 0)


def _ref(pod: Obj) -> Obj:
    return {"kind": "Pod", "namespace": namespace_of(pod), "name": name_of(pod),
            "uid": uid_of(pod)}


def sync_endpoints(ctx: SimulationContext, snap: Snapshot, now: float) -> None:
    services = listed_in(ctx.store, R.SERVICES.key, snap)
    by_ns: dict[str, list[Obj]] = {}
    for pod in snap.pods:
        by_ns.setdefault(namespace_of(pod), []).append(pod)
    for svc in services:
        selector = spec_of(svc).get("selector")
        if is_deleting(svc):
            continue
        if not isinstance(selector, dict) or not selector:
            if name_of(svc) == "kubernetes" and namespace_of(svc) == "default":
                _mirror(ctx, svc)
            continue
        pods = [p for p in by_ns.get(namespace_of(svc), [])
                if all((meta_of(p).get("labels") or {}).get(k) == v for k, v in selector.items())
                and status_of(p).get("phase") not in ("Succeeded", "Failed")
                and status_of(p).get("podIP")]
        pods.sort(key=lambda p: (status_of(p).get("podIP"), name_of(p)))
        ports = [p for p in spec_of(svc).get("ports") or [] if isinstance(p, dict)]
        _endpoints(ctx, svc, pods, ports)
        _slice(ctx, svc, _slice_endpoints(pods), [
            {"name": p.get("name") or "", "protocol": p.get("protocol") or "TCP",
             "port": _target_port(p, pods)} for p in ports])
    _drop_orphans(ctx, services, snap.namespaces)


def _endpoints(ctx: SimulationContext, svc: Obj, pods: list[Obj], ports: list[Obj]) -> None:
    live = [p for p in pods if not is_deleting(p)]
    ready = [p for p in live if _ready(p)]
    unready = [p for p in live if not _ready(p)]
    subsets: list[Obj] = []
    if ready or unready:
        subset: Obj = {}

        def address(p: Obj) -> Obj:
            a: Obj = {"ip": status_of(p)["podIP"], "targetRef": _ref(p)}
            if spec_of(p).get("nodeName"):
                a["nodeName"] = spec_of(p)["nodeName"]
            return a
        if ready:
            subset["addresses"] = [address(p) for p in ready]
        if unready:
            subset["notReadyAddresses"] = [address(p) for p in unready]
        subset["ports"] = [{k: v for k, v in (("name", p.get("name")),
                                              ("port", _target_port(p, live)),
                                              ("protocol", p.get("protocol") or "TCP")) if v}
                           for p in ports]
        subsets.append(subset)
    ns, name = namespace_of(svc), name_of(svc)
    labels = dict(meta_of(svc).get("labels") or {})
    current = ctx.store.try_get(R.ENDPOINTS.key, ns, name)
    if current is None:
        obj: Obj = {"apiVersion": "v1", "kind": "Endpoints",
                    "metadata": {"name": name, "namespace": ns}}
        if labels:
            obj["metadata"]["labels"] = labels
        if subsets:
            obj["subsets"] = subsets
        ctx.create_object(R.ENDPOINTS.key, obj, manager=KCM)
        return
    if (current.get("subsets") or []) == subsets and \
            (meta_of(current).get("labels") or {}) == labels:
        return

    def put(o: Obj) -> None:
        if subsets:
            o["subsets"] = subsets
        else:
            o.pop("subsets", None)
        if labels:
            o["metadata"]["labels"] = labels
        else:
            o["metadata"].pop("labels", None)
    ctx.mutate_object(R.ENDPOINTS.key, ns, name, put, manager=KCM)


def _slice_endpoints(pods: list[Obj]) -> list[Obj]:
    out = []
    for p in pods:
        serving = _ready(p)
        terminating = is_deleting(p)
        e: Obj = {"addresses": [status_of(p)["podIP"]],
                  "conditions": {"ready": serving and not terminating, "serving": serving,
                                 "terminating": terminating},
                  "targetRef": _ref(p)}
        if spec_of(p).get("nodeName"):
            e["nodeName"] = spec_of(p)["nodeName"]
        out.append(e)
    return out


def _slice(ctx: SimulationContext, svc: Obj, endpoints: list[Obj], ports: list[Obj],
           name: str | None = None) -> None:
    ns = namespace_of(svc)
    mine = [s for s in ctx.store.list(R.ENDPOINT_SLICES.key, namespace=ns,
                                      label_selector=f"{SERVICE_NAME}={name_of(svc)}").items
            if (meta_of(s).get("labels") or {}).get(MANAGED_BY) == CONTROLLER]
    if not mine:
        slice_name = name or name_of(svc) + "-" + "".join(random.choice(_ALPHABET)
                                                         for _ in range(5))
        obj: Obj = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {"name": slice_name, "namespace": ns,
                                 "labels": {SERVICE_NAME: name_of(svc), MANAGED_BY: CONTROLLER,
                                            **(meta_of(svc).get("labels") or {})},
                                 "ownerReferences": [{"apiVersion": "v1", "kind": "Service",
                                                      "name": name_of(svc), "uid": uid_of(svc),
                                                      "controller": True,
                                                      "blockOwnerDeletion": True}]},
                    "addressType": "IPv4", "endpoints": endpoints, "ports": ports}
        ctx.create_object(R.ENDPOINT_SLICES.key, obj, manager=KCM)
        return
    current = mine[0]
    for extra in mine[1:]:
        ctx.delete_object(R.ENDPOINT_SLICES.key, ns, name_of(extra), uid=uid_of(extra))
    if current.get("endpoints") == endpoints and current.get("ports") == ports:
        return

    def put(o: Obj) -> None:
        o["endpoints"] = endpoints
        o["ports"] = ports
    ctx.mutate_object(R.ENDPOINT_SLICES.key, ns, name_of(current), put, manager=KCM)


def _mirror(ctx: SimulationContext, svc: Obj) -> None:
    """The API server's own Service: its Endpoints (kept by the server) as a slice."""
    ep = ctx.store.try_get(R.ENDPOINTS.key, "default", "kubernetes") or {}
    endpoints: list[Obj] = []
    ports: list[Obj] = []
    for subset in ep.get("subsets") or []:
        for a in subset.get("addresses") or []:
            endpoints.append({"addresses": [a.get("ip")],
                              "conditions": {"ready": True, "serving": True,
                                             "terminating": False}})
        ports = [{"name": p.get("name") or "", "protocol": p.get("protocol") or "TCP",
                  "port": p.get("port")} for p in subset.get("ports") or []]
    _slice(ctx, svc, endpoints, ports, name="kubernetes")


def _in(ctx: SimulationContext, res: R.Resource, namespaces: frozenset[str] | None) -> list[Obj]:
    if namespaces is None:
        return ctx.store.list(res.key).items
    return [o for ns in sorted(namespaces) for o in ctx.store.list(res.key, namespace=ns).items]


def _drop_orphans(ctx: SimulationContext, services: list[Obj],
                  namespaces: frozenset[str] | None) -> None:
    """Endpoints and slices whose Service is gone."""
    have = {(namespace_of(s), name_of(s)) for s in services}
    for ep in _in(ctx, R.ENDPOINTS, namespaces):
        key = (namespace_of(ep), name_of(ep))
        if key not in have and not is_deleting(ep):
            ctx.delete_object(R.ENDPOINTS.key, key[0], key[1], uid=uid_of(ep))
    for sl in _in(ctx, R.ENDPOINT_SLICES, namespaces):
        labels = meta_of(sl).get("labels") or {}
        if labels.get(MANAGED_BY) == CONTROLLER and \
                (namespace_of(sl), labels.get(SERVICE_NAME)) not in have:
            ctx.delete_object(R.ENDPOINT_SLICES.key, namespace_of(sl), name_of(sl),
                              uid=uid_of(sl))

