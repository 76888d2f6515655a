"""Schemas of core/v1 Pods: Pod, PodSpec, PodTemplateSpec (which the workload kinds embed) and
PodStatus; containers, volumes and scheduling have modules of their own.
"""

from __future__ import annotations

from pyhpa.api.schemas.build import (
    CORE_V1, Schema, atomic_list, boolean, definition, int32, int64, keyed_list, object_meta,
    opaque, plain_list, quantity_map, string, string_map, struct, time, top_level)

P = CORE_V1

POD = P + "Pod"
POD_SPEC = P + "PodSpec"
POD_TEMPLATE_SPEC = P + "PodTemplateSpec"


def _pod_spec() -> Schema:
    return definition(
        "What a pod runs and how it is scheduled.",
        {
            "volumes": keyed_list("Volumes the containers can mount.", P + "Volume", ("name",),
                                  strategy="merge,retainKeys"),
            "initContainers": keyed_list("Containers that run to completion, one after the "
                                         "other, before the app containers start (or, with "
                                         "restartPolicy Always, keep running as sidecars).",
                                         P + "Container", ("name",)),
            "containers": keyed_list("The app containers; at least one.", P + "Container",
                                     ("name",)),
            "ephemeralContainers": keyed_list("Debug containers added to a running pod (kubectl "
                                              "debug).", P + "EphemeralContainer", ("name",)),
            "restartPolicy": string("Always (default), OnFailure or Never: when containers that "
                                    "exit are restarted.", enum=("Always", "Never", "OnFailure")),
            "terminationGracePeriodSeconds": int64("Seconds between the stop signal and the kill "
                                                   "when the pod is deleted. Default 30. pyhpa's "
                                                   "simulated pods stay Terminating this long."),
            "activeDeadlineSeconds": int64("Seconds the pod may be active before it is failed.",
                                           minimum=1),
            "dnsPolicy": string("ClusterFirst (default), ClusterFirstWithHostNet, Default or "
                                "None.", enum=("ClusterFirst", "ClusterFirstWithHostNet",
                                               "Default", "None")),
            "nodeSelector": string_map("Labels a node must carry for the pod to be scheduled "
                                       "there.", atomic=True),
            "serviceAccountName": string("Service account the pod runs as; default if empty."),
            "serviceAccount": string("Deprecated alias of serviceAccountName."),
            "automountServiceAccountToken": boolean("Mount the service account's API token."),
            "nodeName": string("Node the pod is bound to; set by the scheduler, or by hand to "
                               "skip scheduling."),
            "hostNetwork": boolean("Use the node's network namespace."),
            "hostPID": boolean("Use the node's process namespace."),
            "hostIPC": boolean("Use the node's IPC namespace."),
            "shareProcessNamespace": boolean("Containers of the pod see each other's processes."),
            "securityContext": struct(P + "PodSecurityContext", "Security settings for all "
                                      "containers of the pod."),
            "imagePullSecrets": keyed_list("Secrets with registry credentials for pulling "
                                           "images.", P + "LocalObjectReference", ("name",)),
            "hostname": string("Hostname inside the pod; the pod name if empty."),
            "subdomain": string("With hostname, gives the pod the DNS name "
                                "<hostname>.<subdomain>.<namespace>.svc."),
            "affinity": struct(P + "Affinity", "Node and pod (anti-)affinity rules for "
                                               "scheduling."),
            "schedulerName": string("Scheduler that places the pod; default-scheduler if empty."),
            "tolerations": atomic_list("Node taints the pod tolerates.", P + "Toleration"),
            "hostAliases": keyed_list("Extra /etc/hosts entries.", P + "HostAlias", ("ip",)),
            "priorityClassName": string("PriorityClass that sets the pod's priority."),
            "priority": int32("Scheduling priority, filled in from priorityClassName."),
            "dnsConfig": struct(P + "PodDNSConfig", "DNS settings merged into the ones dnsPolicy "
                                                    "produces."),
            "readinessGates": atomic_list("Extra conditions that must be True for the pod to be "
                                          "Ready.", P + "PodReadinessGate"),
            "runtimeClassName": string("RuntimeClass that runs the pod."),
            "enableServiceLinks": boolean("Inject environment variables for the services of the "
                                          "namespace. Default true."),
            "preemptionPolicy": string("PreemptLowerPriority (default) or Never.",
                                       enum=("Never", "PreemptLowerPriority")),
            "overhead": quantity_map("Resources the pod's sandbox uses on top of its "
                                     "containers; set from the RuntimeClass."),
            "topologySpreadConstraints": keyed_list(
                "How to spread the pod's replicas across zones, nodes or other topology "
                "domains.", P + "TopologySpreadConstraint", ("topologyKey", "whenUnsatisfiable")),
            "setHostnameAsFQDN": boolean("Set the fully qualified domain name as hostname."),
            "os": struct(P + "PodOS", "Operating system the pod's containers need."),
            "hostUsers": boolean("Use the node's user namespace (default true); false isolates "
                                 "the pod in its own."),
            "schedulingGates": keyed_list("The pod is not scheduled while any gate remains.",
                                          P + "PodSchedulingGate", ("name",)),
            "resourceClaims": keyed_list("Dynamic resources (devices) the pod needs.",
                                         P + "PodResourceClaim", ("name",),
                                         strategy="merge,retainKeys"),
            "resources": struct(P + "ResourceRequirements", "Pod-level requests and limits "
                                "shared by all containers. When set, the HPA uses the pod-level "
                                "request as the utilization denominator."),
        }, required=("containers",))


def _pod_types() -> dict[str, Schema]:
    return {
        POD: top_level(
            "The smallest deployable unit: one or more containers scheduled together. In "
            "pyhpa's cluster pods are simulated: they start, become Ready and report CPU and "
            "memory usage from the workload's sim.pyhpa.io annotations.",
            "", "v1", "Pod",
            {"spec": struct(POD_SPEC, "What the pod runs."),
             "status": struct(P + "PodStatus", "What the pod is doing. Read-only.")}),
        POD_TEMPLATE_SPEC: definition(
            "The pods a workload creates: their metadata and spec.",
            {"metadata": object_meta("Labels and annotations every created pod gets; the "
                                     "labels must match the workload's selector."),
             "spec": struct(POD_SPEC, "Spec of every created pod.")}),
        POD_SPEC: _pod_spec(),
    }


def _pod_status() -> dict[str, Schema]:
    return {
        P + "PodStatus": definition(
            "What the pod is doing, as last observed.",
            {
                "observedGeneration": int64("metadata.generation the status was computed for."),
                "phase": string("Pending, Running, Succeeded, Failed or Unknown. In pyhpa's "
                                "simulation, pods go Pending, then Running after the startup "
                                "delay.", enum=("Failed", "Pending", "Running", "Succeeded",
                                                "Unknown")),
                "conditions": keyed_list("Current conditions: PodScheduled, Initialized, "
                                         "ContainersReady, Ready.", P + "PodCondition", ("type",)),
                "message": string("Why the pod is in this state."),
                "reason": string("Short machine-readable reason (Evicted, ...)."),
                "nominatedNodeName": string("Node the pod may run on after preemption."),
                "hostIP": string("IP of the node the pod runs on."),
                "hostIPs": keyed_list("IPs of the node, one per address family.", P + "HostIP",
                                      ("ip",)),
                "podIP": string("IP of the pod."),
                "podIPs": keyed_list("IPs of the pod, one per address family.", P + "PodIP",
                                     ("ip",)),
                "startTime": time("When the node accepted the pod."),
                "initContainerStatuses": atomic_list("Status of each init container.",
                                                     P + "ContainerStatus"),
                "containerStatuses": atomic_list("Status of each app container.",
                                                 P + "ContainerStatus"),
                "qosClass": string("Guaranteed, Burstable or BestEffort, from the requests and "
                                   "limits.", enum=("BestEffort", "Burstable", "Guaranteed")),
                "ephemeralContainerStatuses": atomic_list("Status of each debug container.",
                                                          P + "ContainerStatus"),
                "resize": string("Progress of an in-place resize (deprecated)."),
                "resourceClaimStatuses": keyed_list("Generated names of the pod's resource "
                                                    "claims.", P + "PodResourceClaimStatus",
                                                    ("name",), strategy="merge,retainKeys"),
            }),
        P + "PodCondition": definition(
            "One condition of a pod.",
            {
                "type": string("PodScheduled, Initialized, ContainersReady, Ready, or a "
                               "readiness gate's type."),
                "observedGeneration": int64("metadata.generation the condition was set for."),
                "status": string("True, False or Unknown.", enum=("False", "True", "Unknown")),
                "lastProbeTime": time("When the condition was last checked."),
                "lastTransitionTime": time("When status last changed. The HPA uses the Ready "
                                           "transition to ignore CPU samples of just-started "
                                           "pods."),
                "reason": string("Machine-readable reason of the last transition."),
                "message": string("Human-readable detail."),
            }, required=("type", "status")),
        P + "PodIP": definition("One pod IP.", {"ip": string("The address.")},
                                required=("ip",)),
        P + "HostIP": definition("One node IP.", {"ip": string("The address.")},
                                 required=("ip",)),
        P + "PodResourceClaimStatus": definition(
            "The claim generated for a pod resource claim.",
            {"name": string("Name of the pod resource claim."),
             "resourceClaimName": string("Name of the generated ResourceClaim.")},
            required=("name",)),
        P + "ContainerStatus": definition(
            "What one container is doing.",
            {
                "name": string("Container name."),
                "state": struct(P + "ContainerState", "Current state.", embedded=True),
                "lastState": struct(P + "ContainerState", "State before the last restart.",
                                    embedded=True),
                "ready": boolean("Whether the readiness probe passes."),
                "restartCount": int32("How many times the container restarted."),
                "image": string("Image the container runs."),
                "imageID": string("Resolved image ID."),
                "containerID": string("Runtime's ID of the container (<type>://<id>)."),
                "started": boolean("Whether the startup probe passed."),
                "allocatedResources": quantity_map("Resources the node allocated."),
                "resources": struct(P + "ResourceRequirements", "Resources actually applied."),
                "volumeMounts": plain_list("Mounts as applied.",
                                           opaque("One mounted volume.")),
                "user": opaque("Identity of the process (linux uid, gid, supplementalGroups)."),
                "allocatedResourcesStatus": plain_list("Health of allocated devices.",
                                                       opaque("One resource's devices.")),
                "stopSignal": string("Signal that will stop the container."),
            }, required=("name", "ready", "restartCount", "image", "imageID")),
        P + "ContainerState": definition(
            "One of waiting, running or terminated.",
            {"waiting": struct(P + "ContainerStateWaiting", "Not running yet."),
             "running": struct(P + "ContainerStateRunning", "Running."),
             "terminated": struct(P + "ContainerStateTerminated", "Exited.")}),
        P + "ContainerStateWaiting": definition(
            "Why a container is not running.",
            {"reason": string("Short reason (ContainerCreating, CrashLoopBackOff, ...)."),
             "message": string("Detail.")}),
        P + "ContainerStateRunning": definition(
            "A running container.", {"startedAt": time("When it last started.")}),
        P + "ContainerStateTerminated": definition(
            "How a container ended.",
            {"exitCode": int32("Exit status."),
             "signal": int32("Signal that ended it."),
             "reason": string("Short reason (Completed, OOMKilled, Error, ...)."),
             "message": string("Detail."),
             "startedAt": time("When it started."),
             "finishedAt": time("When it ended."),
             "containerID": string("Runtime's ID of the container.")},
            required=("exitCode",)),
    }


def definitions() -> dict[str, Schema]:
    defs: dict[str, Schema] = {}
    for part in (_pod_types(), _pod_status()):
        defs.update(part)
    return defs
