"""Core v1 Services and Endpoints: the ``default/kubernetes`` Service, defaults and validation.

Why: ``kubectl cluster-info`` lists Services, ``kubectl get all`` shows ``service/kubernetes``
on every real cluster, and ``kubectl expose``/``create service`` are part of the usual
walkthroughs. Nothing routes traffic here; a Service is stored with the apiserver's defaults
(type ClusterIP, an allocated cluster IP, port protocol and targetPort, a node port for
NodePort/LoadBalancer) so it reads like a real one. The ``kubernetes`` Service and its Endpoints
point at this API server.
"""

from __future__ import annotations

import hashlib
import ipaddress
from typing import Any

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBE_APISERVER, record_create
from pyhpa.api import spec_checks
from pyhpa.api.field_errors import cause, object_items
from pyhpa.cluster.apiserver.storage import AlreadyExists, Conflict, NotFound, Store
from pyhpa.cluster.apiserver.strategies import Strategy

Obj = dict[str, Any]

SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
KUBERNETES_IP = "10.96.0.1"  # the first address of the range, as upstream reserves it
NODE_PORTS = range(30000, 32768)
_TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")
_PROTOCOLS = ("TCP", "UDP", "SCTP")


# --------------------------------------------------------------------------- defaults


def _spec(o: Obj) -> Obj:
    return o.get("spec") if isinstance(o.get("spec"), dict) else {}


def _taken(store: Store | None, field: str) -> set[Any]:
    if store is None:
        return set()
    out: set[Any] = set()
    for svc in store.list(R.SERVICES.key).items:
        spec = _spec(svc)
        if field == "clusterIP":
            out.add(spec.get("clusterIP"))
        else:
            out.update(p.get("nodePort") for p in spec.get("ports") or [] if isinstance(p, dict))
    return out


def allocate_cluster_ip(store: Store | None, seed: str) -> str:
    """A free address of :data:`SERVICE_CIDR`, starting from a spot derived from ``seed``."""
    taken = _taken(store, "clusterIP") | {KUBERNETES_IP}
    size = SERVICE_CIDR.num_addresses - 2
    start = int.from_bytes(hashlib.sha1(seed.encode()).digest()[:4], "big") % size
    for i in range(size):
        ip = str(SERVICE_CIDR.network_address + 1 + (start + i) % size)
        if ip not in taken:
            return ip
    raise RuntimeError("the service IP range is exhausted")


def default_service(obj: Obj, old: Obj | None, store: Store | None) -> None:
    """The apiserver's Service defaulting (plus cluster IP and node port allocation)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    old_spec = _spec(old) if old is not None else {}
    typ = spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    meta = obj.get("metadata") or {}
    if typ != "ExternalName":
        if old_spec.get("clusterIP") and not spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
        if not spec.get("clusterIP"):
            spec["clusterIP"] = allocate_cluster_ip(
                store, f"{meta.get('namespace')}/{meta.get('name') or meta.get('generateName')}")
        if spec["clusterIP"] != "None":
            spec.setdefault("clusterIPs", [spec["clusterIP"]])
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if typ in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    old_node_ports = {p.get("port"): p.get("nodePort") for p in old_spec.get("ports") or []
                      if isinstance(p, dict)}
    taken = None
    for p in spec.get("ports") or []:
        if not isinstance(p, dict):
            continue
        p.setdefault("protocol", "TCP")
        if typ != "ExternalName" and p.get("port") is not None:
            p.setdefault("targetPort", p["port"])
        if typ in ("NodePort", "LoadBalancer") and not p.get("nodePort"):
            if old_node_ports.get(p.get("port")):
                p["nodePort"] = old_node_ports[p.get("port")]
                continue
            taken = _taken(store, "nodePort") if taken is None else taken
            p["nodePort"] = next(n for n in NODE_PORTS if n not in taken)
            taken.add(p["nodePort"])
    if old is None:
        obj["status"] = {"loadBalancer": {}}


def validate_service(obj: Obj, old: Obj | None) -> list[dict[str, str]]:
    spec = _spec(obj)
    causes = []
    typ = spec.get("type")
    if typ not in _TYPES:
        causes.append(cause("spec.type", "NotSupported", typ,
                            "supported values: " + ", ".join(f'"{t}"' for t in _TYPES)))
    ports = spec.get("ports") or []
    if not isinstance(ports, list):
        return causes + [cause("spec.ports", "Invalid", None, "must be a list")]
    if not ports and typ != "ExternalName" and spec.get("clusterIP") != "None":
        causes.append(cause("spec.ports", "Required"))
    if typ == "ExternalName" and not spec.get("externalName"):
        causes.append(cause("spec.externalName", "Required"))
    names: set[str] = set()
    for path, p in object_items(ports, "spec.ports", causes):
        port = p.get("port")
        if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
            causes.append(cause(f"{path}.port", "Invalid", port,
                                "must be between 1 and 65535, inclusive"))
        if p.get("protocol") not in _PROTOCOLS:
            causes.append(cause(f"{path}.protocol", "NotSupported", p.get("protocol"),
                                'supported values: "SCTP", "TCP", "UDP"'))
        name = p.get("name") or ""
        if len(ports) > 1 and not name:
            causes.append(cause(f"{path}.name", "Required"))
        elif name in names:
            causes.append(cause(f"{path}.name", "Duplicate", name))
        names.add(name)
    causes += spec_checks.validate_service_target_ports(obj)
    old_ip = _spec(old).get("clusterIP") if old is not None else None
    if old_ip and spec.get("clusterIP") != old_ip and typ != "ExternalName":
        causes.append(cause("spec.clusterIP", "Invalid", spec.get("clusterIP"),
                            "field is immutable"))
    return causes


class ServiceStrategy(Strategy):
    """The write strategy for Services (generic rules plus defaulting, allocation, validation)."""

    def prepare_create(self, obj: Obj) -> None:
        super().prepare_create(obj)
        default_service(obj, None, self.store)

    def prepare_update(self, new: Obj, old: Obj) -> None:
        super().prepare_update(new, old)
        default_service(new, old, self.store)

    def validate(self, obj: Obj, old: Obj | None) -> list[dict[str, str]]:
        return super().validate(obj, old) + validate_service(obj, old)


# --------------------------------------------------------------------------- the kubernetes Service


def _made_by_the_server(obj: Obj) -> Obj:
    """``obj`` as kube-apiserver creates it for itself (its managedFields name it)."""
    record_create(obj, KUBE_APISERVER, "v1")
    return obj


def ensure_kubernetes_service(store: Store, server_address: str) -> None:
    """``default/kubernetes`` (Service and Endpoints) pointing at this API server.

    The Endpoints follow the current address, which changes between runs on port 0.
    """
    host, _, port_text = server_address.rpartition(":")
    host = host.strip("[]")
    try:
        port = int(port_text)
    except ValueError:
        port = 6443
    svc = store.try_get(R.SERVICES.key, "default", "kubernetes")
    if svc is not None:
        ports = _spec(svc).get("ports") or []
        if len(ports) == 1 and ports[0].get("name") == "https" and ports[0].get("targetPort") != port:
            ports[0]["targetPort"] = port
            try:
                store.update(R.SERVICES.key, svc)
            except (Conflict, NotFound):
                pass
    else:
        try:
            store.create(R.SERVICES.key, _made_by_the_server({
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "kubernetes", "namespace": "default",
                             "labels": {"component": "apiserver", "provider": "kubernetes"}},
                "spec": {"type": "ClusterIP", "clusterIP": KUBERNETES_IP,
                         "clusterIPs": [KUBERNETES_IP], "ipFamilies": ["IPv4"],
                         "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster",
                         "sessionAffinity": "None",
                         "ports": [{"name": "https", "port": 443, "protocol": "TCP",
                                    "targetPort": port}]},
                "status": {"loadBalancer": {}}}))
        except AlreadyExists:
            pass
    subsets = [{"addresses": [{"ip": host}],
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}]
    current = store.try_get(R.ENDPOINTS.key, "default", "kubernetes")
    try:
        if current is None:
            store.create(R.ENDPOINTS.key, _made_by_the_server({
                "apiVersion": "v1", "kind": "Endpoints",
                "metadata": {"name": "kubernetes", "namespace": "default",
                             "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
                "subsets": subsets}))
        elif current.get("subsets") != subsets:
            current["subsets"] = subsets
            store.update(R.ENDPOINTS.key, current)
    except (AlreadyExists, Conflict, NotFound):
        pass
