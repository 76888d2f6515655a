"""Schemas of the kinds a typical application manifest carries besides its workload and
Service: ConfigMap, Secret and ServiceAccount (core/v1), PodDisruptionBudget (policy/v1) and
Ingress (networking.k8s.io/v1).

Why: ``kubectl apply -f app.yaml`` needs them in OpenAPI to compute patches, and ``kubectl
explain`` reads them. Nothing acts on them here (no ingress controller, no token controller,
the disruption controller's status is left as sent); they are stored and shown as on a real
cluster.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping
from pyhpa.api.schemas.build import (
    CORE_V1, Schema, atomic_list, boolean, condition, definition, int32, int64, int_or_string,
    keyed_list, label_selector, string, string_map, strings, struct, top_level)

P = CORE_V1
POLICY = "io.k8s.api.policy.v1."
NET = "io.k8s.api.networking.v1."

_BYTES_MAP: Mapping[str, Any] = MappingProxyType({
    "type": "object", "additionalProperties": {"type": "string", "format": "byte"}})


def _core_types() -> dict[str, Schema]:
    return {
        P + "ConfigMap": top_level(
            "Configuration data (key -> value) for pods to consume as environment variables, "
            "command-line arguments or files in a volume.", "", "v1", "ConfigMap",
            {"data": string_map("UTF-8 values by key. Keys must consist of alphanumeric "
                                "characters, '-', '_' or '.'."),
             "binaryData": dict(_BYTES_MAP, description="Binary values (base64 on the wire) "
                                                       "by key; keys must not overlap data."),
             "immutable": boolean("When true, data cannot change once set.")}),
        P + "Secret": top_level(
            "Secret data (key -> bytes) such as passwords, tokens or keys. Values are base64 "
            "on the wire.", "", "v1", "Secret",
            {"data": dict(_BYTES_MAP, description="Secret values, base64-encoded, by key."),
             "stringData": string_map("Write-only convenience: plain-text values merged into "
                                      "data on write (they win over data). Never read back."),
             "type": string("Used to ease programmatic handling of secret data (Opaque by "
                            "default, kubernetes.io/tls, kubernetes.io/dockerconfigjson...)."),
             "immutable": boolean("When true, data cannot change once set.")}),
        P + "ServiceAccount": top_level(
            "An identity for processes that run in a pod.", "", "v1", "ServiceAccount",
            {"secrets": keyed_list("Secrets pods of this account may use (legacy token "
                                   "secrets).", P + "ObjectReference", ("name",)),
             "imagePullSecrets": atomic_list("Secrets used to pull images of pods that use "
                                             "this account.", P + "LocalObjectReference"),
             "automountServiceAccountToken": boolean("Whether pods of this account mount an "
                                                     "API token automatically.")}),
    }


def _policy_types() -> dict[str, Schema]:
    return {
        POLICY + "PodDisruptionBudget": top_level(
            "Limits how many pods of a set voluntary disruptions (evictions, drains) may take "
            "down at once.", "policy", "v1", "PodDisruptionBudget",
            {"spec": struct(POLICY + "PodDisruptionBudgetSpec", "Desired budget.",
                            embedded=True),
             "status": struct(POLICY + "PodDisruptionBudgetStatus", "Observed budget. "
                              "Read-only.", embedded=True)}),
        POLICY + "PodDisruptionBudgetSpec": definition(
            "Which pods the budget covers and how many must stay.",
            {"minAvailable": int_or_string("Pods (number or percentage) that must stay "
                                           "available after an eviction. Exclusive with "
                                           "maxUnavailable."),
             "maxUnavailable": int_or_string("Pods (number or percentage) that may be "
                                             "unavailable after an eviction. Exclusive with "
                                             "minAvailable."),
             "selector": label_selector("Label query over the pods the budget covers."),
             "unhealthyPodEvictionPolicy": string(
                 "When unhealthy running pods may be evicted: IfHealthyBudget or "
                 "AlwaysAllow.", enum=("AlwaysAllow", "IfHealthyBudget"))}),
        POLICY + "PodDisruptionBudgetStatus": definition(
            "Observed state of the budget.",
            {"observedGeneration": int64("metadata.generation this status reflects."),
             "disruptedPods": string_map("Pods being evicted, with the time of the eviction."),
             "disruptionsAllowed": int32("Pod disruptions currently allowed."),
             "currentHealthy": int32("Healthy pods now."),
             "desiredHealthy": int32("Minimum healthy pods wanted."),
             "expectedPods": int32("Pods counted by the budget."),
             "conditions": keyed_list("Current conditions (DisruptionAllowed).",
                                      POLICY + "PodDisruptionBudgetCondition", ("type",))},
            required=("disruptionsAllowed", "currentHealthy", "desiredHealthy",
                      "expectedPods")),
        POLICY + "PodDisruptionBudgetCondition": condition("PodDisruptionBudget",
                                                           "DisruptionAllowed"),
    }


def _networking_types() -> dict[str, Schema]:
    return {
        NET + "Ingress": top_level(
            "HTTP(S) routes from outside the cluster to Services, by host and path. Stored "
            "and shown; no ingress controller serves them here.", "networking.k8s.io", "v1",
            "Ingress",
            {"spec": struct(NET + "IngressSpec", "Desired routes.", embedded=True),
             "status": struct(NET + "IngressStatus", "Addresses of the load balancer. "
                              "Read-only.", embedded=True)}),
        NET + "IngressSpec": definition(
            "Routes of an Ingress.",
            {"ingressClassName": string("Name of the IngressClass (controller) to use."),
             "defaultBackend": struct(NET + "IngressBackend", "Where requests no rule "
                                      "matches go."),
             "tls": atomic_list("TLS settings, by host.", NET + "IngressTLS"),
             "rules": atomic_list("Host rules; requests matching none go to the default "
                                  "backend.", NET + "IngressRule")}),
        NET + "IngressTLS": definition(
            "TLS for some hosts.",
            {"hosts": atomic_list("Hosts the certificate covers.", strings()),
             "secretName": string("Secret holding the certificate and key.")}),
        NET + "IngressRule": definition(
            "Routes for one host (all hosts when host is empty).",
            {"host": string("Fully qualified domain name, optionally with a leading '*.'."),
             "http": struct(NET + "HTTPIngressRuleValue", "HTTP paths of the host.")}),
        NET + "HTTPIngressRuleValue": definition(
            "HTTP paths and their backends.",
            {"paths": atomic_list("Paths mapped to backends.", NET + "HTTPIngressPath")},
            required=("paths",)),
        NET + "HTTPIngressPath": definition(
            "One path and its backend.",
            {"path": string("Path matched against the request's path; starts with '/'."),
             "pathType": string("Exact, Prefix or ImplementationSpecific.",
                                enum=("Exact", "ImplementationSpecific", "Prefix")),
             "backend": struct(NET + "IngressBackend", "Where matching requests go.",
                               embedded=True)},
            required=("pathType", "backend")),
        NET + "IngressBackend": definition(
            "A Service port or another resource receiving traffic.",
            {"service": struct(NET + "IngressServiceBackend", "A Service and port."),
             "resource": struct(P + "TypedLocalObjectReference", "Another object in the "
                                "namespace.")}),
        NET + "IngressServiceBackend": definition(
            "A Service and one of its ports.",
            {"name": string("Name of the Service."),
             "port": struct(NET + "ServiceBackendPort", "Port of the Service.",
                            embedded=True)},
            required=("name",)),
        NET + "ServiceBackendPort": definition(
            "A Service port, by name or number.",
            {"name": string("Name of the port."),
             "number": int32("Number of the port.")}),
        NET + "IngressStatus": definition(
            "Observed state of an Ingress.",
            {"loadBalancer": struct(NET + "IngressLoadBalancerStatus", "Load balancer "
                                    "addresses.", embedded=True)}),
        NET + "IngressLoadBalancerStatus": definition(
            "Load balancer addresses.",
            {"ingress": atomic_list("Addresses of the load balancer.",
                                    NET + "IngressLoadBalancerIngress")}),
        NET + "IngressLoadBalancerIngress": definition(
            "One load balancer address.",
            {"ip": string("IP address."), "hostname": string("DNS name."),
             "ports": atomic_list("Ports of the address.", NET + "IngressPortStatus")}),
        NET + "IngressPortStatus": definition(
            "One port of a load balancer address.",
            {"port": int32("Port number."), "protocol": string("TCP, UDP or SCTP."),
             "error": string("Problem with the port, if any.")},
            required=("port", "protocol")),
    }


def definitions() -> dict[str, Schema]:
    return {**_core_types(), **_policy_types(), **_networking_types()}

