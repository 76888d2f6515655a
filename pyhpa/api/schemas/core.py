"""Schemas of the core (``v1``) kinds besides Pods: Namespace, Node, Event,
ReplicationController, Service and Endpoints (Pods and what they embed: :mod:`.core_pod`,
:mod:`.core_container`, :mod:`.core_volume`, :mod:`.core_scheduling`).

What is modelled: every field of the structs below, with upstream's types, required lists and
list markers, so ``kubectl explain`` and client-side apply's patch computation see the real shape.
Deep corners nobody edits in a local cluster (most volume plug-ins, ephemeral volume claim
templates, container status details) are objects that keep whatever they are given.
"""

from __future__ import annotations

from pyhpa.api.schemas.build import (
    CORE_V1, META, Schema, atomic_list, boolean, condition, definition, int32, int64,
    int_or_string, keyed_list, micro_time, opaque, plain_list, quantity_map, set_list, string,
    string_map, strings, struct, time, top_level)
from pyhpa.api.schemas.core_pod import POD_TEMPLATE_SPEC

P = CORE_V1

OBJECT_REFERENCE = P + "ObjectReference"
EVENT_SOURCE = P + "EventSource"


def _replication_controller_types() -> dict[str, Schema]:
    return {
        P + "ReplicationController": top_level(
            "Keeps a number of identical pods running (the older form of ReplicaSet). Has a "
            "scale subresource, so an HPA can target it with apiVersion v1.",
            "", "v1", "ReplicationController",
            {"spec": struct(P + "ReplicationControllerSpec", "Desired pods."),
             "status": struct(P + "ReplicationControllerStatus", "Observed pods. Read-only.")}),
        P + "ReplicationControllerSpec": definition(
            "Desired pods of a ReplicationController.",
            {"replicas": int32("Desired number of pods. Default 1. An HPA targeting this "
                               "controller sets it.", minimum=0),
             "minReadySeconds": int32("Seconds a new pod must be Ready to count as available.",
                                      minimum=0),
             "selector": string_map("Label equality selector of the pods; defaults to the "
                                    "template's labels.", atomic=True),
             "template": struct(POD_TEMPLATE_SPEC, "Pods to create.")}),
        P + "ReplicationControllerStatus": definition(
            "Observed pods of a ReplicationController.",
            {"replicas": int32("Pods that exist."),
             "fullyLabeledReplicas": int32("Pods whose labels match the template's."),
             "readyReplicas": int32("Pods that are Ready."),
             "availableReplicas": int32("Pods Ready for at least minReadySeconds."),
             "observedGeneration": int64("metadata.generation this status reflects."),
             "conditions": keyed_list("Current conditions.",
                                      P + "ReplicationControllerCondition", ("type",))},
            required=("replicas",)),
        P + "ReplicationControllerCondition": condition("ReplicationController",
                                                         "ReplicaFailure"),
    }


def _cluster_types() -> dict[str, Schema]:
    return {
        P + "Namespace": top_level(
            "A scope for names: most objects live in exactly one namespace. default exists "
            "from the start.", "", "v1", "Namespace",
            {"spec": struct(P + "NamespaceSpec", "Finalizers of the namespace."),
             "status": struct(P + "NamespaceStatus", "Phase of the namespace. Read-only.")}),
        P + "NamespaceSpec": definition(
            "Namespace settings.",
            {"finalizers": atomic_list("Steps that must finish before the namespace is "
                                       "removed (kubernetes: delete its content).", strings())}),
        P + "NamespaceStatus": definition(
            "Namespace state.",
            {"phase": string("Active, or Terminating while its content is deleted.",
                             enum=("Active", "Terminating")),
             "conditions": keyed_list("Current conditions.", P + "NamespaceCondition",
                                      ("type",))}),
        P + "NamespaceCondition": condition("Namespace", "NamespaceDeletionContentFailure, ..."),
        P + "Node": top_level(
            "A machine pods run on. pyhpa's cluster has one simulated node.", "", "v1", "Node",
            {"spec": struct(P + "NodeSpec", "How the node is configured."),
             "status": struct(P + "NodeStatus", "What the node reports. Read-only.")}),
        P + "NodeSpec": definition(
            "Node configuration.",
            {"podCIDR": string("Pod IP range of the node."),
             "podCIDRs": set_list("Pod IP ranges, one per address family.", strings(),
                                  strategy="merge"),
             "providerID": string("Cloud provider's ID of the machine."),
             "unschedulable": boolean("Keep new pods off the node (kubectl cordon)."),
             "taints": atomic_list("Taints that repel pods without a matching toleration.",
                                   P + "Taint"),
             "configSource": opaque("Deprecated dynamic kubelet configuration source."),
             "externalID": string("Deprecated.")}),
        P + "Taint": definition(
            "A mark that repels pods.",
            {"key": string("Taint key."), "value": string("Taint value."),
             "effect": string("NoSchedule, PreferNoSchedule or NoExecute.",
                              enum=("NoExecute", "NoSchedule", "PreferNoSchedule")),
             "timeAdded": time("When a NoExecute taint was added.")},
            required=("key", "effect")),
        P + "NodeStatus": definition(
            "What a node reports.",
            {"capacity": quantity_map("Total resources of the node."),
             "allocatable": quantity_map("Resources available to pods."),
             "phase": string("Deprecated."),
             "conditions": keyed_list("Ready, MemoryPressure, DiskPressure, PIDPressure, ...",
                                      P + "NodeCondition", ("type",)),
             "addresses": keyed_list("Addresses of the node.", P + "NodeAddress", ("type",)),
             "daemonEndpoints": opaque("Ports of the node's daemons (kubeletEndpoint)."),
             "nodeInfo": struct(P + "NodeSystemInfo", "Versions and IDs of the node."),
             "images": plain_list("Container images on the node.", opaque("One image.")),
             "volumesInUse": atomic_list("Volumes in use on the node.", strings()),
             "volumesAttached": atomic_list("Volumes attached to the node.",
                                            opaque("One attached volume.")),
             "config": opaque("Status of the node's configuration."),
             "runtimeHandlers": atomic_list("Runtime handlers of the node.",
                                            opaque("One handler.")),
             "features": opaque("Features the node supports.")}),
        P + "NodeCondition": definition(
            "One condition of a node.",
            {"type": string("Ready, MemoryPressure, DiskPressure, PIDPressure, ..."),
             "status": string("True, False or Unknown.", enum=("False", "True", "Unknown")),
             "lastHeartbeatTime": time("When the condition was last reported."),
             "lastTransitionTime": time("When status last changed."),
             "reason": string("Machine-readable reason."),
             "message": string("Human-readable detail.")},
            required=("type", "status")),
        P + "NodeAddress": definition(
            "One address of a node.",
            {"type": string("Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS."),
             "address": string("The address.")},
            required=("type", "address")),
        P + "NodeSystemInfo": definition(
            "Versions and IDs reported by the node.",
            {k: string(d) for k, d in (
                ("machineID", "Machine ID."), ("systemUUID", "System UUID."),
                ("bootID", "Boot ID."), ("kernelVersion", "Kernel version."),
                ("osImage", "Operating system image."),
                ("containerRuntimeVersion", "Container runtime and version."),
                ("kubeletVersion", "Kubelet version."),
                ("kubeProxyVersion", "Deprecated kube-proxy version."),
                ("operatingSystem", "linux or windows."),
                ("architecture", "CPU architecture (amd64, arm64, ...)."))}
            | {"swap": opaque("Swap information.")},
            required=("machineID", "systemUUID", "bootID", "kernelVersion", "osImage",
                      "containerRuntimeVersion", "kubeletVersion", "kubeProxyVersion",
                      "operatingSystem", "architecture")),
    }


def _event_types() -> dict[str, Schema]:
    return {
        P + "Event": top_level(
            "A report of something that happened to an object, such as an HPA's "
            "SuccessfulRescale. Shown by kubectl describe and kubectl events.",
            "", "v1", "Event",
            {
                "involvedObject": struct(OBJECT_REFERENCE, "The object the event is about.",
                                         embedded=True),
                "reason": string("Short machine-readable reason (SuccessfulRescale, "
                                 "FailedGetResourceMetric, ...)."),
                "message": string("Human-readable description."),
                "source": struct(EVENT_SOURCE, "Component that reported the event.",
                                 embedded=True),
                "firstTimestamp": time("When the event first happened."),
                "lastTimestamp": time("When the event most recently happened."),
                "count": int32("How many times it happened."),
                "type": string("Normal or Warning.", enum=("Normal", "Warning")),
                "eventTime": micro_time("When the event was first observed (newer "
                                        "reporters)."),
                "series": struct(P + "EventSeries", "Repetitions of this event."),
                "action": string("What was done or failed."),
                "related": struct(OBJECT_REFERENCE, "A second object involved."),
                "reportingComponent": string("Controller that emitted the event "
                                             "(horizontal-pod-autoscaler)."),
                "reportingInstance": string("Instance of that controller."),
            }, required=("metadata", "involvedObject")),
        P + "EventSeries": definition(
            "Repetitions of an event.",
            {"count": int32("Occurrences so far."),
             "lastObservedTime": micro_time("Time of the last occurrence.")}),
        EVENT_SOURCE: definition(
            "Who reported an event.",
            {"component": string("Reporting component."), "host": string("Node name.")}),
        OBJECT_REFERENCE: definition(
            "A reference to any object, or to a field inside it.",
            {"kind": string("Kind of the object."),
             "namespace": string("Namespace of the object."),
             "name": string("Name of the object."),
             "uid": string("UID of the object."),
             "apiVersion": string("API version of the object."),
             "resourceVersion": string("Version of the object the reference was made at."),
             "fieldPath": string("Part of the object, such as spec.containers{web}.")},
            atomic=True),
    }


def _service_types() -> dict[str, Schema]:
    return {
        P + "Service": top_level(
            "A stable name and virtual IP for a set of pods (chosen by a label selector). In "
            "pyhpa's cluster, default/kubernetes points at the API server itself; other services "
            "are stored and shown but carry no traffic.", "", "v1", "Service",
            {"spec": struct(P + "ServiceSpec", "What the service exposes and how.",
                            embedded=True),
             "status": struct(P + "ServiceStatus", "Load balancer state. Read-only.",
                              embedded=True)}),
        P + "ServiceSpec": definition(
            "How a service is reached and which pods back it.",
            {"ports": keyed_list("Ports the service listens on.", P + "ServicePort",
                                 ("port", "protocol")),
             "selector": string_map("Labels of the pods that back the service; none means the "
                                    "endpoints are managed by someone else.", atomic=True),
             "clusterIP": string("Virtual IP inside the cluster; allocated when empty, None "
                                 "for a headless service. Cannot change."),
             "clusterIPs": atomic_list("Virtual IPs, one per address family; the first equals "
                                       "clusterIP.", strings()),
             "type": string("ClusterIP (default), NodePort, LoadBalancer or ExternalName.",
                            enum=("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")),
             "externalIPs": atomic_list("Extra IPs on which the nodes accept the service's "
                                        "traffic.", strings()),
             "sessionAffinity": string("ClientIP keeps a client on one pod; None (default) "
                                       "does not.", enum=("ClientIP", "None")),
             "loadBalancerIP": string("Deprecated: address asked of the load balancer."),
             "loadBalancerSourceRanges": atomic_list("Client ranges the load balancer lets "
                                                     "in.", strings()),
             "externalName": string("DNS name an ExternalName service is an alias of."),
             "externalTrafficPolicy": string("Cluster (default) spreads outside traffic over "
                                             "all nodes; Local keeps it on the receiving node.",
                                             enum=("Cluster", "Local")),
             "healthCheckNodePort": int32("Node port for load balancer health checks with "
                                          "externalTrafficPolicy Local."),
             "publishNotReadyAddresses": boolean("List pods in DNS before they are Ready."),
             "sessionAffinityConfig": struct(P + "SessionAffinityConfig",
                                             "Settings of ClientIP affinity."),
             "ipFamilies": atomic_list("Address families of the service (IPv4, IPv6).",
                                       string("", enum=("IPv4", "IPv6"))),
             "ipFamilyPolicy": string("SingleStack (default), PreferDualStack or "
                                      "RequireDualStack.",
                                      enum=("PreferDualStack", "RequireDualStack", "SingleStack")),
             "allocateLoadBalancerNodePorts": boolean("Allocate node ports for a LoadBalancer "
                                                      "service. Default true."),
             "loadBalancerClass": string("Which load balancer implementation serves it."),
             "internalTrafficPolicy": string("Cluster (default) or Local for traffic from "
                                             "inside the cluster.", enum=("Cluster", "Local")),
             "trafficDistribution": string("Preference for how traffic reaches endpoints "
                                           "(PreferClose).")}),
        P + "ServicePort": definition(
            "One port of a service.",
            {"name": string("Name of the port; required when there are several, unique in the "
                            "service."),
             "protocol": string("TCP (default), UDP or SCTP.", enum=("SCTP", "TCP", "UDP"),
                                default="TCP"),
             "appProtocol": string("Application protocol of the port, for proxies."),
             "port": int32("Port of the service's virtual IP."),
             "targetPort": int_or_string("Number or named container port on the pods; the same "
                                         "as port when empty."),
             "nodePort": int32("Port on every node for NodePort and LoadBalancer services; "
                               "allocated when empty.")},
            required=("port",)),
        P + "SessionAffinityConfig": definition(
            "Session affinity settings.",
            {"clientIP": struct(P + "ClientIPConfig", "ClientIP affinity settings.")}),
        P + "ClientIPConfig": definition(
            "ClientIP affinity settings.",
            {"timeoutSeconds": int32("Seconds a client stays on its pod (default 10800).")}),
        P + "ServiceStatus": definition(
            "Observed state of a service.",
            {"loadBalancer": struct(P + "LoadBalancerStatus", "The load balancer's addresses.",
                                    embedded=True),
             "conditions": keyed_list("Current conditions.", META + "Condition", ("type",))}),
        P + "LoadBalancerStatus": definition(
            "Addresses of a load balancer.",
            {"ingress": atomic_list("Entry points of the load balancer.",
                                    P + "LoadBalancerIngress")}),
        P + "LoadBalancerIngress": definition(
            "One entry point of a load balancer.",
            {"ip": string("IP address."), "hostname": string("DNS name."),
             "ipMode": string("VIP or Proxy: how traffic reaches the nodes."),
             "ports": atomic_list("Port states.", opaque("A port's state."))}),
        P + "Endpoints": top_level(
            "The addresses that back a service, grouped into subsets of the same ports.", "",
            "v1", "Endpoints",
            {"subsets": atomic_list("Address sets; each address serves each port of its set.",
                                    P + "EndpointSubset")}),
        P + "EndpointSubset": definition(
            "Addresses with the ports they serve.",
            {"addresses": atomic_list("Ready addresses.", P + "EndpointAddress"),
             "notReadyAddresses": atomic_list("Addresses not ready yet.", P + "EndpointAddress"),
             "ports": atomic_list("Ports served.", P + "EndpointPort")}),
        P + "EndpointAddress": definition(
            "One address of an endpoint.",
            {"ip": string("IP address."), "hostname": string("Hostname of the endpoint."),
             "nodeName": string("Node the endpoint runs on."),
             "targetRef": struct(OBJECT_REFERENCE, "Object behind the address (a Pod).")},
            required=("ip",), atomic=True),
        P + "EndpointPort": definition(
            "One port of an endpoint.",
            {"name": string("Name, matching the service port's."),
             "port": int32("Port number."),
             "protocol": string("TCP, UDP or SCTP.", enum=("SCTP", "TCP", "UDP")),
             "appProtocol": string("Application protocol.")},
            required=("port",), atomic=True),
    }


def definitions() -> dict[str, Schema]:
    defs: dict[str, Schema] = {}
    for part in (_replication_controller_types(), _cluster_types(), _event_types(),
                 _service_types()):
        defs.update(part)
    return defs
