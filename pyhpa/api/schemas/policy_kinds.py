"""Schemas of the cluster policy kinds application manifests carry: NetworkPolicy and
IngressClass (networking.k8s.io/v1), PriorityClass (scheduling.k8s.io/v1), LimitRange and
ResourceQuota (core/v1), StorageClass (storage.k8s.io/v1) and PersistentVolume (core/v1).
Field names and list markers follow k8s.io/api.

Why together: each is stored and checked, and acts only at admission (priority, limits,
quota, the default StorageClass) or through one small controller (volume binding, quota
usage); none has a pod template.
"""

from __future__ import annotations

from pyhpa.api.schemas.build import (
    CORE_V1, Schema, atomic_list, boolean, definition, int32, int_or_string,
    label_selector, opaque, quantity_map, string, string_map, strings, struct, top_level)

P = CORE_V1
NET = "io.k8s.api.networking.v1."
SCHED = "io.k8s.api.scheduling.v1."
STORAGE = "io.k8s.api.storage.v1."


def _networking() -> dict[str, Schema]:
    return {
        NET + "NetworkPolicy": top_level(
            "Which traffic pods may receive and send. Stored; no network plugin enforces it "
            "here.", "networking.k8s.io", "v1", "NetworkPolicy",
            {"spec": struct(NET + "NetworkPolicySpec", "The policy.", embedded=True)}),
        NET + "NetworkPolicySpec": definition(
            "Pods selected and the traffic allowed to them.",
            {"podSelector": label_selector("Pods the policy applies to (all when empty)."),
             "ingress": atomic_list("Allowed incoming traffic.",
                                    NET + "NetworkPolicyIngressRule"),
             "egress": atomic_list("Allowed outgoing traffic.", NET + "NetworkPolicyEgressRule"),
             "policyTypes": atomic_list("Ingress, Egress or both.", strings())}),
        NET + "NetworkPolicyIngressRule": definition(
            "Traffic from peers to ports.",
            {"ports": atomic_list("Ports (all when empty).", NET + "NetworkPolicyPort"),
             "from": atomic_list("Sources (all when empty).", NET + "NetworkPolicyPeer")}),
        NET + "NetworkPolicyEgressRule": definition(
            "Traffic to peers on ports.",
            {"ports": atomic_list("Ports (all when empty).", NET + "NetworkPolicyPort"),
             "to": atomic_list("Destinations (all when empty).", NET + "NetworkPolicyPeer")}),
        NET + "NetworkPolicyPeer": definition(
            "Pods, namespaces or an IP block.",
            {"podSelector": label_selector("Pods."),
             "namespaceSelector": label_selector("Namespaces."),
             "ipBlock": struct(NET + "IPBlock", "A CIDR with exceptions.")}),
        NET + "IPBlock": definition(
            "A CIDR and the CIDRs excepted from it.",
            {"cidr": string("A CIDR such as 10.0.0.0/8."),
             "except": atomic_list("CIDRs inside cidr that are excluded.", strings())},
            required=("cidr",)),
        NET + "NetworkPolicyPort": definition(
            "A port or a port range.",
            {"protocol": string("TCP (default), UDP or SCTP."),
             "port": int_or_string("Port number or name."),
             "endPort": int32("End of a port range starting at port.")}),
        NET + "IngressClass": top_level(
            "An ingress controller Ingresses may name (ingressClassName).",
            "networking.k8s.io", "v1", "IngressClass",
            {"spec": struct(NET + "IngressClassSpec", "The controller.", embedded=True)}),
        NET + "IngressClassSpec": definition(
            "The controller implementing the class.",
            {"controller": string("Name of the controller, e.g. k8s.io/ingress-nginx."),
             "parameters": struct(NET + "IngressClassParametersReference",
                                  "Controller-specific configuration.")}),
        NET + "IngressClassParametersReference": definition(
            "An object holding the class's parameters.",
            {"apiGroup": string("API group."), "kind": string("Kind."),
             "name": string("Name."), "namespace": string("Namespace (scope Namespace)."),
             "scope": string("Cluster or Namespace.")},
            required=("kind", "name")),
    }


def _scheduling() -> dict[str, Schema]:
    return {
        SCHED + "PriorityClass": top_level(
            "A named pod priority; pods naming it in priorityClassName get its value.",
            "scheduling.k8s.io", "v1", "PriorityClass",
            {"value": int32("The priority; higher runs first. At most 1000000000 for user "
                            "classes."),
             "globalDefault": boolean("The priority of pods naming no class (one class at "
                                      "most)."),
             "description": string("What the class is for."),
             "preemptionPolicy": string("PreemptLowerPriority (default) or Never.")},
            required=("value",)),
    }


def _limits() -> dict[str, Schema]:
    return {
        P + "LimitRange": top_level(
            "Defaults and bounds of the resources of each pod or container in a namespace, "
            "applied when pods are admitted.", "", "v1", "LimitRange",
            {"spec": struct(P + "LimitRangeSpec", "The limits.", embedded=True)}),
        P + "LimitRangeSpec": definition(
            "The limits, by kind of object.",
            {"limits": atomic_list("Limits.", P + "LimitRangeItem")}, required=("limits",)),
        P + "LimitRangeItem": definition(
            "Bounds and defaults for one kind of object.",
            {"type": string("Container, Pod or PersistentVolumeClaim."),
             "max": quantity_map("Most of each resource."),
             "min": quantity_map("Least of each resource."),
             "default": quantity_map("Default limits."),
             "defaultRequest": quantity_map("Default requests."),
             "maxLimitRequestRatio": quantity_map("Largest limit/request ratio.")},
            required=("type",)),
        P + "ResourceQuota": top_level(
            "Caps what a namespace's objects may request in total, enforced at admission.",
            "", "v1", "ResourceQuota",
            {"spec": struct(P + "ResourceQuotaSpec", "The hard caps.", embedded=True),
             "status": struct(P + "ResourceQuotaStatus", "Caps and current usage. Read-only.",
                              embedded=True)}),
        P + "ResourceQuotaSpec": definition(
            "The caps.",
            {"hard": quantity_map("Cap per resource (requests.cpu, limits.memory, pods, "
                                  "count/deployments.apps...)."),
             "scopes": atomic_list("Scopes the quota covers.", strings()),
             "scopeSelector": opaque("Scopes the quota covers, as expressions.")}),
        P + "ResourceQuotaStatus": definition(
            "Caps and current usage.",
            {"hard": quantity_map("Enforced caps."), "used": quantity_map("Current usage.")}),
    }


def _storage() -> dict[str, Schema]:
    return {
        STORAGE + "StorageClass": top_level(
            "A kind of storage PersistentVolumeClaims provision volumes from.",
            "storage.k8s.io", "v1", "StorageClass",
            {"provisioner": string("The volume plugin that makes volumes."),
             "parameters": string_map("Provisioner parameters."),
             "reclaimPolicy": string("Delete (default) or Retain."),
             "mountOptions": atomic_list("Mount options of the volumes.", strings()),
             "allowVolumeExpansion": boolean("Whether claims may grow."),
             "volumeBindingMode": string("Immediate (default) or WaitForFirstConsumer."),
             "allowedTopologies": atomic_list("Where volumes may be made.",
                                              opaque("A topology selector term."))},
            required=("provisioner",)),
        P + "PersistentVolume": top_level(
            "A piece of storage claims bind to.", "", "v1", "PersistentVolume",
            {"spec": struct(P + "PersistentVolumeSpec", "The volume.", embedded=True),
             "status": struct(P + "PersistentVolumeStatus", "Phase. Read-only.",
                              embedded=True)}),
        P + "PersistentVolumeSpec": definition(
            "Size, access and where the storage is.",
            {"capacity": quantity_map("Size (storage)."),
             "accessModes": atomic_list("ReadWriteOnce, ReadOnlyMany, ReadWriteMany or "
                                        "ReadWriteOncePod.", strings()),
             "claimRef": struct(P + "ObjectReference", "The claim bound to it.",
                                **{"x-kubernetes-map-type": "granular"}),
             "persistentVolumeReclaimPolicy": string("Retain, Delete or Recycle."),
             "storageClassName": string("Its StorageClass."),
             "mountOptions": atomic_list("Mount options.", strings()),
             "volumeMode": string("Filesystem (default) or Block."),
             "nodeAffinity": opaque("Nodes that can reach it."),
             "hostPath": struct(P + "HostPathVolumeSource", "A directory of the node."),
             "local": opaque("A local disk."), "csi": opaque("A CSI volume."),
             "nfs": opaque("An NFS export."),
             "volumeAttributesClassName": string("VolumeAttributesClass.")}),
        P + "PersistentVolumeStatus": definition(
            "Phase of a volume.",
            {"phase": string("Pending, Available, Bound, Released or Failed."),
             "message": string("Why it is in this phase."), "reason": string("Reason."),
             "lastPhaseTransitionTime": struct("io.k8s.apimachinery.pkg.apis.meta.v1.Time",
                                               "When the phase last changed.")}),
        P + "PersistentVolumeClaimStatus": definition(
            "Phase and what a claim got.",
            {"phase": string("Pending, Bound or Lost."),
             "accessModes": atomic_list("Access modes of the bound volume.", strings()),
             "capacity": quantity_map("Size of the bound volume."),
             "conditions": atomic_list("Conditions (Resizing...).", opaque("A condition.")),
             "allocatedResources": quantity_map("Allocated size."),
             "currentVolumeAttributesClassName": string("Current VolumeAttributesClass.")}),
    }


def definitions() -> dict[str, Schema]:
    return {**_networking(), **_scheduling(), **_limits(), **_storage()}
