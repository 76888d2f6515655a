"""Schema of discovery.k8s.io/v1 EndpointSlice (k8s.io/api discovery/v1 types.go).

Why: the EndpointSlice controller of the simulation keeps one slice per Service from its pods
(``pyhpa.cluster.controllers.endpoints``); ``kubectl get endpointslices`` and ``describe svc``
read them.
"""

from __future__ import annotations

from pyhpa.api.schemas.build import (
    CORE_V1, Schema, atomic_list, boolean, definition, int32, opaque, set_list, string,
    string_map, struct, top_level)

D = "io.k8s.api.discovery.v1."


def definitions() -> dict[str, Schema]:
    return {
        D + "EndpointSlice": top_level(
            "A set of endpoints (pod addresses) of a Service, with the ports they serve.",
            "discovery.k8s.io", "v1", "EndpointSlice",
            {"addressType": string("IPv4, IPv6 or FQDN."),
             "endpoints": atomic_list("The endpoints.", D + "Endpoint"),
             "ports": atomic_list("The ports every endpoint serves.", D + "EndpointPort")},
            required=("addressType", "endpoints")),
        D + "Endpoint": definition(
            "One backend of a Service.",
            {"addresses": set_list("Its addresses (one for IP address types).",
                                   {"type": "string", "default": ""}),
             "conditions": struct(D + "EndpointConditions", "Ready, serving, terminating.",
                                  embedded=True),
             "hostname": string("Hostname of the endpoint."),
             "targetRef": struct(CORE_V1 + "ObjectReference", "The Pod behind it."),
             "deprecatedTopology": string_map("Deprecated topology labels."),
             "nodeName": string("Node it runs on."),
             "zone": string("Zone it runs in."),
             "hints": opaque("Topology-aware routing hints.")},
            required=("addresses",)),
        D + "EndpointConditions": definition(
            "The state of an endpoint.",
            {"ready": boolean("Ready to receive traffic (serving and not terminating)."),
             "serving": boolean("Its Ready condition, whether terminating or not."),
             "terminating": boolean("Being deleted.")}),
        D + "EndpointPort": definition(
            "A port the endpoints serve.",
            {"name": string("Name, matching the Service port's."),
             "protocol": string("TCP, UDP or SCTP."),
             "port": int32("Port number."),
             "appProtocol": string("Application protocol.")},
            atomic=True),
    }
