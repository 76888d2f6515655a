"""Schemas of where core/v1 Pods may run: affinity, tolerations, topology spread constraints.
"""

from __future__ import annotations

from pyhpa.api.schemas.build import (
    CORE_V1, Schema, atomic_list, boolean, definition, int32, int64, label_selector, string,
    strings, struct)

P = CORE_V1


def _scheduling_types() -> dict[str, Schema]:
    weight = "Preference weight, 1 to 100; matching terms add their weights per node."
    return {
        P + "Affinity": definition(
            "Scheduling constraints relative to nodes and other pods.",
            {"nodeAffinity": struct(P + "NodeAffinity", "Rules on the labels of nodes."),
             "podAffinity": struct(P + "PodAffinity", "Place the pod near matching pods."),
             "podAntiAffinity": struct(P + "PodAntiAffinity", "Keep the pod away from "
                                                              "matching pods.")}),
        P + "NodeAffinity": definition(
            "Node selection rules.",
            {"requiredDuringSchedulingIgnoredDuringExecution": struct(
                P + "NodeSelector", "Nodes the pod may run on; not re-checked later."),
             "preferredDuringSchedulingIgnoredDuringExecution": atomic_list(
                 "Weighted preferences among the allowed nodes.", P + "PreferredSchedulingTerm")}),
        P + "NodeSelector": definition(
            "A node matches if any of its terms matches.",
            {"nodeSelectorTerms": atomic_list("Terms, ORed.", P + "NodeSelectorTerm")},
            required=("nodeSelectorTerms",), atomic=True),
        P + "NodeSelectorTerm": definition(
            "Requirements on one node, ANDed.",
            {"matchExpressions": atomic_list("Requirements on node labels.",
                                             P + "NodeSelectorRequirement"),
             "matchFields": atomic_list("Requirements on node fields (metadata.name).",
                                        P + "NodeSelectorRequirement")}, atomic=True),
        P + "NodeSelectorRequirement": definition(
            "key operator values, on a node label or field.",
            {"key": string("Label key or field path."),
             "operator": string("In, NotIn, Exists, DoesNotExist, Gt or Lt.",
                                enum=("DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn")),
             "values": atomic_list("Values for In/NotIn; one integer for Gt/Lt; empty "
                                   "otherwise.", strings())},
            required=("key", "operator")),
        P + "PreferredSchedulingTerm": definition(
            "A weighted node preference.",
            {"weight": int32(weight, minimum=1, maximum=100),
             "preference": struct(P + "NodeSelectorTerm", "The preferred nodes.",
                                  embedded=True)},
            required=("weight", "preference")),
        P + "PodAffinity": definition(
            "Co-location rules.",
            {"requiredDuringSchedulingIgnoredDuringExecution": atomic_list(
                "Terms that must all hold at scheduling time.", P + "PodAffinityTerm"),
             "preferredDuringSchedulingIgnoredDuringExecution": atomic_list(
                 "Weighted terms that are preferred.", P + "WeightedPodAffinityTerm")}),
        P + "PodAntiAffinity": definition(
            "Separation rules.",
            {"requiredDuringSchedulingIgnoredDuringExecution": atomic_list(
                "Terms that must all hold at scheduling time.", P + "PodAffinityTerm"),
             "preferredDuringSchedulingIgnoredDuringExecution": atomic_list(
                 "Weighted terms that are preferred.", P + "WeightedPodAffinityTerm")}),
        P + "PodAffinityTerm": definition(
            "Pods matching labelSelector (in the given namespaces) within the same topology "
            "domain.",
            {
                "labelSelector": label_selector("Pods this term is about."),
                "namespaces": atomic_list("Namespaces to look in; the pod's own if empty and "
                                          "namespaceSelector is unset.", strings()),
                "topologyKey": string("Node label that defines the domain, such as "
                                      "kubernetes.io/hostname or topology.kubernetes.io/zone."),
                "namespaceSelector": label_selector("Namespaces to look in, by label; {} means "
                                                    "all."),
                "matchLabelKeys": atomic_list("Label keys whose values are copied from this pod "
                                              "into the selector (In).", strings()),
                "mismatchLabelKeys": atomic_list("Label keys whose values are copied from this "
                                                 "pod into the selector (NotIn).", strings()),
            }, required=("topologyKey",)),
        P + "WeightedPodAffinityTerm": definition(
            "A weighted pod (anti-)affinity preference.",
            {"weight": int32(weight, minimum=1, maximum=100),
             "podAffinityTerm": struct(P + "PodAffinityTerm", "The preferred placement.",
                                       embedded=True)},
            required=("weight", "podAffinityTerm")),
        P + "Toleration": definition(
            "Allows scheduling on (and staying on) nodes with a matching taint.",
            {
                "key": string("Taint key; empty with operator Exists matches every taint."),
                "operator": string("Equal (default) or Exists.", enum=("Equal", "Exists")),
                "value": string("Taint value for Equal."),
                "effect": string("Taint effect to match (NoSchedule, PreferNoSchedule, "
                                 "NoExecute); all if empty.",
                                 enum=("NoExecute", "NoSchedule", "PreferNoSchedule")),
                "tolerationSeconds": int64("For NoExecute: seconds the pod may stay after the "
                                           "taint appears; forever if unset."),
            }),
        P + "TopologySpreadConstraint": definition(
            "Spread matching pods evenly across topology domains.",
            {
                "maxSkew": int32("Largest allowed difference in matching pods between two "
                                 "domains.", minimum=1),
                "topologyKey": string("Node label whose values are the domains."),
                "whenUnsatisfiable": string("DoNotSchedule or ScheduleAnyway.",
                                            enum=("DoNotSchedule", "ScheduleAnyway")),
                "labelSelector": label_selector("Pods that count."),
                "minDomains": int32("Minimum number of eligible domains (DoNotSchedule only).",
                                    minimum=1),
                "nodeAffinityPolicy": string("Honor (default) or Ignore the pod's node affinity "
                                             "when counting domains.", enum=("Honor", "Ignore")),
                "nodeTaintsPolicy": string("Honor or Ignore (default) node taints when counting "
                                           "domains.", enum=("Honor", "Ignore")),
                "matchLabelKeys": atomic_list("Label keys whose values from this pod narrow the "
                                              "selector (for example pod-template-hash).",
                                              strings()),
            }, required=("maxSkew", "topologyKey", "whenUnsatisfiable")),
        P + "PodSecurityContext": definition(
            "Security settings for all containers of a pod.",
            {
                "seLinuxOptions": struct(P + "SELinuxOptions", "SELinux context."),
                "windowsOptions": struct(P + "WindowsSecurityContextOptions",
                                         "Windows-specific settings."),
                "runAsUser": int64("UID containers run as."),
                "runAsGroup": int64("Primary GID of container processes."),
                "runAsNonRoot": boolean("Refuse to start containers that would run as UID 0."),
                "supplementalGroups": atomic_list("Extra GIDs of the first process.",
                                                  {"type": "integer", "format": "int64"}),
                "supplementalGroupsPolicy": string("Merge (default) or Strict: whether groups "
                                                   "from the image's /etc/group are added.",
                                                   enum=("Merge", "Strict")),
                "fsGroup": int64("GID that owns mounted volumes and is added to every process."),
                "sysctls": atomic_list("Namespaced kernel parameters to set.", P + "Sysctl"),
                "fsGroupChangePolicy": string("OnRootMismatch or Always: when volume ownership is "
                                              "changed to fsGroup.",
                                              enum=("Always", "OnRootMismatch")),
                "seccompProfile": struct(P + "SeccompProfile", "Seccomp filter."),
                "appArmorProfile": struct(P + "AppArmorProfile", "AppArmor profile."),
                "seLinuxChangePolicy": string("MountOption or Recursive: how volumes get their "
                                              "SELinux label."),
            }),
        P + "Sysctl": definition(
            "One kernel parameter.",
            {"name": string("Parameter name."), "value": string("Value to set.")},
            required=("name", "value")),
        P + "PodDNSConfig": definition(
            "Extra DNS settings.",
            {"nameservers": atomic_list("DNS server IPs.", strings()),
             "searches": atomic_list("Search domains.", strings()),
             "options": atomic_list("Resolver options.", P + "PodDNSConfigOption")}),
        P + "PodDNSConfigOption": definition(
            "One resolver option.",
            {"name": string("Option name (ndots, ...)."), "value": string("Option value.")}),
        P + "HostAlias": definition(
            "An /etc/hosts entry.",
            {"ip": string("IP address."),
             "hostnames": atomic_list("Names for the address.", strings())},
            required=("ip",)),
        P + "LocalObjectReference": definition(
            "A reference to an object in the same namespace.",
            {"name": string("Name of the object.")}, atomic=True),
        P + "PodReadinessGate": definition(
            "An extra readiness condition.",
            {"conditionType": string("Pod condition type that must be True.")},
            required=("conditionType",)),
        P + "PodOS": definition(
            "Operating system of a pod.", {"name": string("linux or windows.")},
            required=("name",)),
        P + "PodSchedulingGate": definition(
            "A scheduling gate.", {"name": string("Name of the gate; unique in the pod.")},
            required=("name",)),
        P + "PodResourceClaim": definition(
            "A dynamic resource claim of the pod.",
            {"name": string("Name the containers use to refer to it."),
             "resourceClaimName": string("Existing ResourceClaim to use."),
             "resourceClaimTemplateName": string("ResourceClaimTemplate to create a claim "
                                                 "from.")},
            required=("name",)),
    }


def definitions() -> dict[str, Schema]:
    return _scheduling_types()
