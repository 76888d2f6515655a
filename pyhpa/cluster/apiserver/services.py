"""Core v1 Services and Endpoints: the ``default/kubernetes`` Service, defaults and columns.

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
from typing import TYPE_CHECKING, Any

from pyhpa.cluster.apiserver.tables import Column, age_cell, name_cell, selector_cell

if TYPE_CHECKING:
    from pyhpa.cluster.apiserver.storage import Store

Obj = dict[str, Any]

SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
KUBERNETES_IP = "10.96.0.1"  # the first address of the range, as upstream reserves it
NODE_PORTS = range(30000, 32768)
_TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")
_PROTOCOLS = ("TCP", "UDP", "SCTP")


# --------------------------------------------------------------------------- columns


def _spec(o: Obj) -> Obj:
    return o.get("spec") if isinstance(o.get("spec"), dict) else {}


def _external_ip(o: Obj, now: float) -> str:
    spec = _spec(o)
    typ = spec.get("type") or "ClusterIP"
    external = list(spec.get("externalIPs") or [])
    if typ == "ExternalName":
        return spec.get("externalName") or "<none>"
    if typ == "LoadBalancer":
        ingress = ((o.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        ips = [i.get("ip") or i.get("hostname") or "" for i in ingress] + external
        return ",".join(ips) if ips else "<pending>"
    return ",".join(external) if external else "<none>"


def _ports(o: Obj, now: float) -> str:
    out = []
    for p in _spec(o).get("ports") or []:
        if not isinstance(p, dict):
            continue
        node = f":{p['nodePort']}" if p.get("nodePort") else ""
        out.append(f"{p.get('port')}{node}/{p.get('protocol') or 'TCP'}")
    return ",".join(out) or "<none>"


def _endpoints(o: Obj, now: float) -> str:
    addrs = []
    for subset in o.get("subsets") or []:
        ports = [p.get("port") for p in subset.get("ports") or []] or [None]
        for a in subset.get("addresses") or []:
            for port in ports:
                addrs.append(f"{a.get('ip')}:{port}" if port is not None else str(a.get("ip")))
    if not addrs:
        return "<none>"
    shown = ",".join(addrs[:3])
    return shown + (f" + {len(addrs) - 3} more..." if len(addrs) > 3 else "")


SERVICE_COLUMNS = (
    Column("Name", name_cell, format="name", description="Name of the Service."),
    Column("Type", lambda o, n: _spec(o).get("type") or "ClusterIP",
           description="The type of the service."),
    Column("Cluster-IP", lambda o, n: _spec(o).get("clusterIP") or "<none>",
           description="The cluster IP of the service."),
    Column("External-IP", _external_ip, description="The external IPs of the service."),
    Column("Port(s)", _ports, description="The ports exposed by the service."),
    Column("Age", age_cell, description="Time since creation."),
    Column("Selector", selector_cell, priority=1,
           description="Route service traffic to pods with label keys and values matching this "
                       "selector."),
)

ENDPOINTS_COLUMNS = (
    Column("Name", name_cell, format="name", description="Name of the Endpoints object."),
    Column("Endpoints", _endpoints, description="Endpoints of the service."),
    Column("Age", age_cell, description="Time since creation."),
)


# --------------------------------------------------------------------------- defaults


def _taken(store: "Store | None", field: str) -> set[Any]:
    from pyhpa.cluster.apiserver import resources as R

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


def allocate_cluster_ip(store: "Store | None", seed: str) -> str:
    """A free address of :data:`SERVICE_CIDR`, starting from a spot derived from ``seed``."""
    taken = _taken(store, "clusterIP") | {KUBERNETES_IP}
    size = SERVICE_CIDR.num_addresses - 2
    start = int.from_bytes(hashlib.sha1(seed.encode()).digest()[:4], "big") % size
    for i in range(size):
        ip = str(SERVICE_CIDR.network_address + 1 + (start + i) % size)
        if ip not in taken:
            return ip
    raise RuntimeError("the service IP range is exhausted")


def default_service(obj: Obj, old: Obj | None, store: "Store | None") -> None:
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
    from pyhpa.cluster.apiserver.strategies import cause

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
    for i, p in enumerate(ports):
        path = f"spec.ports[{i}]"
        if not isinstance(p, dict):
            causes.append(cause(path, "Invalid", None, "must be an object"))
            continue
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
    old_ip = _spec(old).get("clusterIP") if old is not None else None
    if old_ip and spec.get("clusterIP") != old_ip and typ != "ExternalName":
        causes.append(cause("spec.clusterIP", "Invalid", spec.get("clusterIP"),
                            "field is immutable"))
    return causes


def make_strategy(res: Any) -> Any:
    """The write strategy for Services (generic rules plus defaulting, allocation, validation)."""
    from pyhpa.cluster.apiserver.strategies import Strategy

    class ServiceStrategy(Strategy):
        def prepare_create(self, obj: Obj) -> None:
            super().prepare_create(obj)
            default_service(obj, None, self.store)

        def prepare_update(self, new: Obj, old: Obj) -> None:
            super().prepare_update(new, old)
            default_service(new, old, self.store)

        def validate(self, obj: Obj, old: Obj | None) -> list[dict[str, str]]:
            return super().validate(obj, old) + validate_service(obj, old)

    return ServiceStrategy(res)


# --------------------------------------------------------------------------- the kubernetes Service


def ensure_kubernetes_service(store: "Store", server_address: str) -> None:
    """``default/kubernetes`` (Service and Endpoints) pointing at this API server.

    The Endpoints follow the current address, which changes between runs on port 0.
    """
    from pyhpa.cluster.apiserver import resources as R
    from pyhpa.cluster.apiserver.storage import AlreadyExists, Conflict, NotFound

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
            store.create(R.SERVICES.key, {
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "kubernetes", "namespace": "default",
                             "labels": {"component": "apiserver", "provider": "kubernetes"}},
                "spec": {"type": "ClusterIP", "clusterIP": KUBERNETES_IP,
                         "clusterIPs": [KUBERNETES_IP], "ipFamilies": ["IPv4"],
                         "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster",
                         "sessionAffinity": "None",
                         "ports": [{"name": "https", "port": 443, "protocol": "TCP",
                                    "targetPort": port}]},
                "status": {"loadBalancer": {}}})
        except AlreadyExists:
            pass
    subsets = [{"addresses": [{"ip": host}],
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}]
    current = store.try_get(R.ENDPOINTS.key, "default", "kubernetes")
    try:
        if current is None:
            store.create(R.ENDPOINTS.key, {
                "apiVersion": "v1", "kind": "Endpoints",
                "metadata": {"name": "kubernetes", "namespace": "default",
                             "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
                "subsets": subsets})
        elif current.get("subsets") != subsets:
            current["subsets"] = subsets
            store.update(R.ENDPOINTS.key, current)
    except (AlreadyExists, Conflict, NotFound):
        pass
