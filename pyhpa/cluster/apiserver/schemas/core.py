"""Schemas of the core (``v1``) kinds the embedded cluster serves: Pod, Namespace, Node, Event,
ReplicationController, Service, Endpoints, and the pod template types the workload kinds embed.

What is modelled: every field of the structs below, with upstream's types, required lists and
list markers, so ``kubectl explain`` and client-side apply's patch computation see the real shape.
Deep corners nobody edits in a local cluster (most volume plug-ins, ephemeral volume claim
templates, container status details) are objects that keep whatever they are given.
"""

from __future__ import annotations

from pyhpa.cluster.apiserver.schemas.build import (
    META, Schema, atomic_list, boolean, condition, definition, int32, int64, int_or_string,
    keyed_list, label_selector, micro_time, object_meta, opaque, plain_list, quantity,
    quantity_map, set_list, string, string_map, strings, struct, time, top_level)

P = "io.k8s.api.core.v1."

POD = P + "Pod"
POD_SPEC = P + "PodSpec"
POD_TEMPLATE_SPEC = P + "PodTemplateSpec"
OBJECT_REFERENCE = P + "ObjectReference"
EVENT_SOURCE = P + "EventSource"


def _probe_handlers() -> dict[str, Schema]:
    return {
        "exec": struct(P + "ExecAction", "Run a command inside the container; exit status 0 "
                                          "counts as success."),
        "httpGet": struct(P + "HTTPGetAction", "Send an HTTP GET; a status from 200 to 399 "
                                               "counts as success."),
        "tcpSocket": struct(P + "TCPSocketAction", "Open a TCP connection; success if it "
                                                   "connects."),
    }


def _container_fields(ephemeral: bool) -> dict[str, Schema]:
    fields: dict[str, Schema] = {
        "name": string("Name of the container, unique within the pod (a DNS label)."),
        "image": string("Container image reference, for example nginx:1.27. pyhpa's simulated "
                        "pods never pull it."),
        "command": atomic_list("Entrypoint override; the image's ENTRYPOINT is used if empty. "
                               "$(VAR) references to env vars are expanded.", strings()),
        "args": atomic_list("Arguments to the entrypoint; the image's CMD is used if empty.",
                            strings()),
        "workingDir": string("Working directory; the image's default if empty."),
        "ports": keyed_list("Ports the container listens on (informational; any listening port "
                            "is reachable).", P + "ContainerPort", ("containerPort", "protocol")),
        "envFrom": atomic_list("Sources whose every key becomes an environment variable; "
                               "explicit env entries win.", P + "EnvFromSource"),
        "env": keyed_list("Environment variables, in order; later ones may refer to earlier "
                          "ones with $(NAME).", P + "EnvVar", ("name",)),
        "resources": struct(P + "ResourceRequirements", "Compute resources requested and "
                            "limited. The HPA's Utilization targets divide usage by the sum of "
                            "the pods' requests, so set requests for every metric you scale on.",
                            embedded=True),
        "resizePolicy": atomic_list("Whether changing a resource in place restarts the "
                                    "container.", P + "ContainerResizePolicy"),
        "restartPolicy": string("Only for init containers: Always makes it a sidecar that keeps "
                                "running beside the app containers."),
        "volumeMounts": keyed_list("Volumes mounted into the container's filesystem.",
                                   P + "VolumeMount", ("mountPath",)),
        "volumeDevices": keyed_list("Block volumes exposed as devices.", P + "VolumeDevice",
                                    ("devicePath",)),
        "livenessProbe": struct(P + "Probe", "Check that the container is alive; it is "
                                             "restarted after repeated failures."),
        "readinessProbe": struct(P + "Probe", "Check that the container can serve; the pod is "
                                              "not Ready while it fails. Unready pods are left "
                                              "out of most HPA averages."),
        "startupProbe": struct(P + "Probe", "Check that the container finished starting; the "
                                            "other probes wait until it succeeds."),
        "lifecycle": struct(P + "Lifecycle", "Actions run right after start and right before "
                                             "stop."),
        "terminationMessagePath": string("File whose content becomes the termination message. "
                                         "Default /dev/termination-log."),
        "terminationMessagePolicy": string("File (read the message file) or "
                                           "FallbackToLogsOnError (use the log tail if the file "
                                           "is empty and the container failed).",
                                           enum=("FallbackToLogsOnError", "File")),
        "imagePullPolicy": string("Always, IfNotPresent or Never. Defaults to Always for :latest "
                                  "or untagged images, IfNotPresent otherwise.",
                                  enum=("Always", "IfNotPresent", "Never")),
        "securityContext": struct(P + "SecurityContext", "Privileges and access control "
                                                         "settings of the container."),
        "stdin": boolean("Keep a stdin buffer open for the container."),
        "stdinOnce": boolean("Close stdin after the first attach session ends."),
        "tty": boolean("Allocate a terminal (needs stdin)."),
    }
    if ephemeral:
        fields["targetContainerName"] = string("Container whose process namespace the debug "
                                               "container joins.")
        for k in ("ports", "resources", "livenessProbe", "readinessProbe", "startupProbe",
                  "lifecycle"):
            fields[k] = {**fields[k], "description": "Not allowed for ephemeral containers."}
    return fields


def _volume_sources() -> dict[str, Schema]:
    modelled = {
        "emptyDir": struct(P + "EmptyDirVolumeSource", "A scratch directory that lives as long "
                                                       "as the pod."),
        "hostPath": struct(P + "HostPathVolumeSource", "A file or directory of the node."),
        "configMap": struct(P + "ConfigMapVolumeSource", "The keys of a ConfigMap as files."),
        "secret": struct(P + "SecretVolumeSource", "The keys of a Secret as files."),
        "persistentVolumeClaim": struct(P + "PersistentVolumeClaimVolumeSource",
                                        "A PersistentVolumeClaim in the pod's namespace."),
        "projected": struct(P + "ProjectedVolumeSource", "Several sources (secrets, config "
                                                         "maps, downward API, tokens) merged "
                                                         "into one directory."),
        "downwardAPI": struct(P + "DownwardAPIVolumeSource", "Pod fields and container "
                                                             "resources as files."),
        "csi": struct(P + "CSIVolumeSource", "An inline volume from a CSI driver."),
        "nfs": struct(P + "NFSVolumeSource", "An NFS export."),
        "image": struct(P + "ImageVolumeSource", "The content of an OCI image or artifact, "
                                                 "read-only."),
        "ephemeral": struct(P + "EphemeralVolumeSource", "A volume provisioned for this pod "
                                                         "from a claim template and deleted "
                                                         "with it."),
    }
    legacy = ("awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "fc",
              "flexVolume", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", "iscsi",
              "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos",
              "vsphereVolume")
    for name in legacy:
        modelled[name] = opaque(f"A {name} volume (a storage plug-in not modelled in detail "
                                "here; its fields are kept as given).")
    return modelled


def _key_to_path_items(what: str) -> Schema:
    return atomic_list(f"Which keys of the {what} to project and where; all keys, each as a "
                       "file named after it, if empty.", P + "KeyToPath")


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


def _container_types() -> dict[str, Schema]:
    return {
        P + "Container": definition("One container of a pod.", _container_fields(False),
                                    required=("name",)),
        P + "EphemeralContainer": definition(
            "A temporary debug container added to a running pod.", _container_fields(True),
            required=("name",)),
        P + "ContainerPort": definition(
            "A port a container listens on.",
            {
                "name": string("Name other objects can use to refer to the port (an "
                               "IANA_SVC_NAME, unique in the pod)."),
                "hostPort": int32("Port to expose on the node as well; rarely needed.",
                                  minimum=1, maximum=65535),
                "containerPort": int32("Port number on the pod's IP.", minimum=1, maximum=65535),
                "protocol": string("TCP (default), UDP or SCTP.", enum=("SCTP", "TCP", "UDP"),
                                   default="TCP"),
                "hostIP": string("Node IP to bind hostPort to."),
            }, required=("containerPort",)),
        P + "EnvVar": definition(
            "One environment variable.",
            {
                "name": string("Variable name."),
                "value": string("Literal value; $(OTHER) expands an earlier variable, $$ gives a "
                                "literal $."),
                "valueFrom": struct(P + "EnvVarSource", "Take the value from a field, a "
                                                        "resource, a ConfigMap or a Secret."),
            }, required=("name",)),
        P + "EnvVarSource": definition(
            "Where an environment variable's value comes from; set exactly one field.",
            {
                "fieldRef": struct(P + "ObjectFieldSelector", "A pod field such as "
                                   "metadata.name or status.podIP."),
                "resourceFieldRef": struct(P + "ResourceFieldSelector", "A container's request "
                                           "or limit, such as limits.cpu."),
                "configMapKeyRef": struct(P + "ConfigMapKeySelector", "A key of a ConfigMap."),
                "secretKeyRef": struct(P + "SecretKeySelector", "A key of a Secret."),
            }),
        P + "EnvFromSource": definition(
            "A source of many environment variables.",
            {
                "prefix": string("Prefix added to every variable name."),
                "configMapRef": struct(P + "ConfigMapEnvSource", "A ConfigMap whose keys "
                                                                  "become variables."),
                "secretRef": struct(P + "SecretEnvSource", "A Secret whose keys become "
                                                           "variables."),
            }),
        P + "ConfigMapEnvSource": definition(
            "A ConfigMap used as a variable source.",
            {"name": string("Name of the ConfigMap."),
             "optional": boolean("Start even if the ConfigMap does not exist.")}),
        P + "SecretEnvSource": definition(
            "A Secret used as a variable source.",
            {"name": string("Name of the Secret."),
             "optional": boolean("Start even if the Secret does not exist.")}),
        P + "ConfigMapKeySelector": definition(
            "One key of a ConfigMap.",
            {"name": string("Name of the ConfigMap."),
             "key": string("The key to read."),
             "optional": boolean("Start even if the ConfigMap or key is missing.")},
            required=("key",), atomic=True),
        P + "SecretKeySelector": definition(
            "One key of a Secret.",
            {"name": string("Name of the Secret."),
             "key": string("The key to read."),
             "optional": boolean("Start even if the Secret or key is missing.")},
            required=("key",), atomic=True),
        P + "ObjectFieldSelector": definition(
            "A field of the pod.",
            {"apiVersion": string("Version the path is written in; v1 by default."),
             "fieldPath": string("Path of the field, such as metadata.labels['app'] or "
                                 "spec.nodeName.")},
            required=("fieldPath",), atomic=True),
        P + "ResourceFieldSelector": definition(
            "A container's resource request or limit.",
            {"containerName": string("Container to read; required for volumes."),
             "resource": string("requests.cpu, limits.memory, ..."),
             "divisor": quantity("Unit of the exposed value; 1 by default (cores for CPU, "
                                 "bytes for memory).")},
            required=("resource",), atomic=True),
        P + "ResourceRequirements": definition(
            "Compute resources of a container or pod.",
            {
                "limits": quantity_map("Upper bounds, per resource name (cpu in cores or "
                                       "millicores such as 500m, memory in bytes such as 256Mi)."),
                "requests": quantity_map("Amounts reserved for scheduling; a missing request "
                                         "defaults to the limit. The HPA computes Utilization "
                                         "as usage divided by these requests."),
                "claims": keyed_list("Dynamic resource claims of the pod this container uses.",
                                     P + "ResourceClaim", ("name",), strategy=None),
            }),
        P + "ResourceClaim": definition(
            "A pod resource claim a container uses.",
            {"name": string("Name of an entry in the pod's spec.resourceClaims."),
             "request": string("One request of the claim; all if empty.")},
            required=("name",)),
        P + "ContainerResizePolicy": definition(
            "How a container reacts to an in-place resource change.",
            {"resourceName": string("cpu or memory."),
             "restartPolicy": string("NotRequired (default) or RestartContainer.",
                                     enum=("NotRequired", "RestartContainer"))},
            required=("resourceName", "restartPolicy")),
        P + "VolumeMount": definition(
            "Where a volume appears in a container.",
            {
                "name": string("Name of a volume of the pod."),
                "readOnly": boolean("Mount read-only."),
                "recursiveReadOnly": string("Disabled, IfPossible or Enabled: whether sub-mounts "
                                            "are read-only too."),
                "mountPath": string("Path inside the container; must not contain ':'."),
                "subPath": string("Mount only this sub-path of the volume."),
                "mountPropagation": string("None, HostToContainer or Bidirectional.",
                                           enum=("Bidirectional", "HostToContainer", "None")),
                "subPathExpr": string("Like subPath, with $(VAR) expansion from the container's "
                                      "environment."),
            }, required=("name", "mountPath")),
        P + "VolumeDevice": definition(
            "A block volume exposed as a device.",
            {"name": string("Name of a persistentVolumeClaim volume of the pod."),
             "devicePath": string("Device path inside the container.")},
            required=("name", "devicePath")),
        P + "Probe": definition(
            "A periodic health check. Set exactly one of exec, httpGet, tcpSocket or grpc.",
            {
                **_probe_handlers(),
                "grpc": struct(P + "GRPCAction", "Call the gRPC health checking service."),
                "initialDelaySeconds": int32("Seconds after start before the first check."),
                "timeoutSeconds": int32("Seconds before one check times out. Default 1.",
                                        minimum=1),
                "periodSeconds": int32("Seconds between checks. Default 10.", minimum=1),
                "successThreshold": int32("Consecutive successes needed after a failure. "
                                          "Default 1; must be 1 for liveness and startup.",
                                          minimum=1),
                "failureThreshold": int32("Consecutive failures that count as failed. "
                                          "Default 3.", minimum=1),
                "terminationGracePeriodSeconds": int64("Grace period used when a failed probe "
                                                       "kills the container; the pod's value if "
                                                       "unset."),
            }),
        P + "ExecAction": definition(
            "A command run in the container (no shell unless you call one).",
            {"command": atomic_list("The command line.", strings())}),
        P + "HTTPGetAction": definition(
            "An HTTP GET request.",
            {
                "path": string("Path to request."),
                "port": int_or_string("Port number or name on the container."),
                "host": string("Host to connect to; the pod IP if empty."),
                "scheme": string("HTTP (default) or HTTPS (certificate not verified).",
                                 enum=("HTTP", "HTTPS")),
                "httpHeaders": atomic_list("Extra request headers.", P + "HTTPHeader"),
            }, required=("port",)),
        P + "HTTPHeader": definition(
            "One HTTP header.",
            {"name": string("Header name."), "value": string("Header value.")},
            required=("name", "value")),
        P + "TCPSocketAction": definition(
            "A TCP connection attempt.",
            {"port": int_or_string("Port number or name on the container."),
             "host": string("Host to connect to; the pod IP if empty.")},
            required=("port",)),
        P + "GRPCAction": definition(
            "A gRPC health check call.",
            {"port": int32("Port of the gRPC service.", minimum=1, maximum=65535),
             "service": string("Service name sent in the health check request.", default="")},
            required=("port",)),
        P + "Lifecycle": definition(
            "Hooks around a container's start and stop.",
            {
                "postStart": struct(P + "LifecycleHandler", "Runs right after the container "
                                    "is created; the container is restarted if it fails."),
                "preStop": struct(P + "LifecycleHandler", "Runs before the container is "
                                  "stopped; counts against the grace period."),
                "stopSignal": string("Signal used to stop the container instead of the image's "
                                     "STOPSIGNAL."),
            }),
        P + "LifecycleHandler": definition(
            "One hook action; set exactly one field.",
            {**_probe_handlers(),
             "sleep": struct(P + "SleepAction", "Wait for a number of seconds.")}),
        P + "SleepAction": definition(
            "A pause.", {"seconds": int64("Seconds to sleep.")}, required=("seconds",)),
        P + "SecurityContext": definition(
            "Security settings of one container; they override the pod's.",
            {
                "capabilities": struct(P + "Capabilities", "Linux capabilities to add or "
                                                           "drop."),
                "privileged": boolean("Run with all host privileges."),
                "seLinuxOptions": struct(P + "SELinuxOptions", "SELinux context."),
                "windowsOptions": struct(P + "WindowsSecurityContextOptions",
                                         "Windows-specific settings."),
                "runAsUser": int64("UID the process runs as."),
                "runAsGroup": int64("Primary GID of the process."),
                "runAsNonRoot": boolean("Refuse to start if the process would run as UID 0."),
                "readOnlyRootFilesystem": boolean("Mount the root filesystem read-only."),
                "allowPrivilegeEscalation": boolean("Whether a process may gain more privileges "
                                                    "than its parent (no_new_privs)."),
                "procMount": string("Default or Unmasked /proc.", enum=("Default", "Unmasked")),
                "seccompProfile": struct(P + "SeccompProfile", "Seccomp filter."),
                "appArmorProfile": struct(P + "AppArmorProfile", "AppArmor profile."),
            }),
        P + "Capabilities": definition(
            "Capability changes.",
            {"add": atomic_list("Capabilities to add (NET_ADMIN, ...).", strings()),
             "drop": atomic_list("Capabilities to drop (ALL, ...).", strings())}),
        P + "SELinuxOptions": definition(
            "An SELinux label.",
            {"user": string("SELinux user."), "role": string("SELinux role."),
             "type": string("SELinux type."), "level": string("SELinux level.")}),
        P + "WindowsSecurityContextOptions": definition(
            "Windows container settings.",
            {"gmsaCredentialSpecName": string("Name of the GMSA credential spec to use."),
             "gmsaCredentialSpec": string("Inline GMSA credential spec."),
             "runAsUserName": string("User name the entrypoint runs as."),
             "hostProcess": boolean("Run as a host process container.")}),
        P + "SeccompProfile": definition(
            "A seccomp profile.",
            {"type": string("RuntimeDefault, Unconfined or Localhost.",
                            enum=("Localhost", "RuntimeDefault", "Unconfined")),
             "localhostProfile": string("Profile file on the node, for type Localhost.")},
            required=("type",)),
        P + "AppArmorProfile": definition(
            "An AppArmor profile.",
            {"type": string("RuntimeDefault, Unconfined or Localhost.",
                            enum=("Localhost", "RuntimeDefault", "Unconfined")),
             "localhostProfile": string("Profile loaded on the node, for type Localhost.")},
            required=("type",)),
    }


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


def _volume_types() -> dict[str, Schema]:
    mode = "File mode bits (0000 to 0777, or 0 to 511 in decimal); 0644 by default."
    return {
        P + "Volume": definition(
            "A named volume; set exactly one source besides name.",
            {"name": string("Name the containers' volumeMounts refer to (a DNS label)."),
             **_volume_sources()},
            required=("name",)),
        P + "EmptyDirVolumeSource": definition(
            "A scratch directory.",
            {"medium": string("Storage medium: empty for the node's disk, Memory for tmpfs."),
             "sizeLimit": quantity("Upper bound of the directory's size.")}),
        P + "HostPathVolumeSource": definition(
            "A path on the node.",
            {"path": string("Path on the node."),
             "type": string("What must exist there: DirectoryOrCreate, Directory, FileOrCreate, "
                            "File, Socket, CharDevice, BlockDevice, or empty for no check.")},
            required=("path",)),
        P + "KeyToPath": definition(
            "One key projected to a file.",
            {"key": string("Key to project."),
             "path": string("Relative file path; must not contain '..'."),
             "mode": int32(mode)},
            required=("key", "path")),
        P + "ConfigMapVolumeSource": definition(
            "A ConfigMap as files.",
            {"name": string("Name of the ConfigMap."),
             "items": _key_to_path_items("ConfigMap"),
             "defaultMode": int32(mode),
             "optional": boolean("Mount an empty directory if the ConfigMap is missing.")}),
        P + "SecretVolumeSource": definition(
            "A Secret as files.",
            {"secretName": string("Name of the Secret."),
             "items": _key_to_path_items("Secret"),
             "defaultMode": int32(mode),
             "optional": boolean("Mount an empty directory if the Secret is missing.")}),
        P + "PersistentVolumeClaimVolumeSource": definition(
            "A claim in the pod's namespace.",
            {"claimName": string("Name of the PersistentVolumeClaim."),
             "readOnly": boolean("Mount read-only.")},
            required=("claimName",)),
        P + "ProjectedVolumeSource": definition(
            "Several sources in one directory.",
            {"sources": atomic_list("The sources.", P + "VolumeProjection"),
             "defaultMode": int32(mode)}),
        P + "VolumeProjection": definition(
            "One source of a projected volume; set exactly one field.",
            {"configMap": struct(P + "ConfigMapProjection", "Keys of a ConfigMap."),
             "secret": struct(P + "SecretProjection", "Keys of a Secret."),
             "downwardAPI": struct(P + "DownwardAPIProjection", "Pod fields and resources."),
             "serviceAccountToken": struct(P + "ServiceAccountTokenProjection",
                                           "A bound service account token."),
             "clusterTrustBundle": struct(P + "ClusterTrustBundleProjection",
                                          "Certificates of ClusterTrustBundle objects.")}),
        P + "ClusterTrustBundleProjection": definition(
            "Certificates of one or more ClusterTrustBundles written to a file.",
            {"name": string("Name of one ClusterTrustBundle; excludes signerName."),
             "signerName": string("Take all bundles of this signer (narrowed by "
                                  "labelSelector)."),
             "labelSelector": label_selector("With signerName: bundles to include."),
             "optional": boolean("Write nothing instead of failing when nothing matches."),
             "path": string("Relative file path.")},
            required=("path",)),
        P + "ConfigMapProjection": definition(
            "Keys of a ConfigMap in a projected volume.",
            {"name": string("Name of the ConfigMap."), "items": _key_to_path_items("ConfigMap"),
             "optional": boolean("Skip it if the ConfigMap is missing.")}),
        P + "SecretProjection": definition(
            "Keys of a Secret in a projected volume.",
            {"name": string("Name of the Secret."), "items": _key_to_path_items("Secret"),
             "optional": boolean("Skip it if the Secret is missing.")}),
        P + "DownwardAPIProjection": definition(
            "Pod information in a projected volume.",
            {"items": atomic_list("Files to write.", P + "DownwardAPIVolumeFile")}),
        P + "ServiceAccountTokenProjection": definition(
            "A token for the pod's service account.",
            {"audience": string("Intended audience; the API server's if empty."),
             "expirationSeconds": int64("Requested lifetime; default 3600, at least 600."),
             "path": string("Relative file path of the token.")},
            required=("path",)),
        P + "DownwardAPIVolumeSource": definition(
            "Pod information as files.",
            {"items": atomic_list("Files to write.", P + "DownwardAPIVolumeFile"),
             "defaultMode": int32(mode)}),
        P + "DownwardAPIVolumeFile": definition(
            "One file with pod information.",
            {"path": string("Relative file path."),
             "fieldRef": struct(P + "ObjectFieldSelector", "A pod field (metadata.labels, "
                                                           "metadata.annotations, ...)."),
             "resourceFieldRef": struct(P + "ResourceFieldSelector", "A container's request "
                                                                     "or limit."),
             "mode": int32(mode)},
            required=("path",)),
        P + "CSIVolumeSource": definition(
            "An inline CSI volume.",
            {"driver": string("Name of the CSI driver."),
             "readOnly": boolean("Mount read-only."),
             "fsType": string("Filesystem type, passed to the driver."),
             "volumeAttributes": string_map("Driver-specific settings."),
             "nodePublishSecretRef": struct(P + "LocalObjectReference", "Secret passed to the "
                                                                        "driver.")},
            required=("driver",)),
        P + "NFSVolumeSource": definition(
            "An NFS export.",
            {"server": string("Host name or IP of the NFS server."),
             "path": string("Exported path."),
             "readOnly": boolean("Mount read-only.")},
            required=("server", "path")),
        P + "EphemeralVolumeSource": definition(
            "A per-pod volume claimed from a template.",
            {"volumeClaimTemplate": struct(P + "PersistentVolumeClaimTemplate", "The claim to "
                                           "create; it is named <pod>-<volume> and owned by "
                                           "the pod.")}),
        P + "PersistentVolumeClaimTemplate": definition(
            "A claim to create, as metadata and spec.",
            {"metadata": object_meta("Labels and annotations of the created claim."),
             "spec": struct(P + "PersistentVolumeClaimSpec", "Spec of the created claim.",
                            embedded=True)},
            required=("spec",)),
        P + "PersistentVolumeClaim": definition(
            "A request for storage (here as a StatefulSet claim template).",
            {"apiVersion": string("v1."), "kind": string("PersistentVolumeClaim."),
             "metadata": object_meta("Name (prefixed to the pod name) and labels of the "
                                     "claims."),
             "spec": struct(P + "PersistentVolumeClaimSpec", "The storage requested.",
                            embedded=True),
             "status": opaque("Observed state of a claim (phase, capacity, conditions).")}),
        P + "PersistentVolumeClaimSpec": definition(
            "The storage a claim requests.",
            {"accessModes": atomic_list("ReadWriteOnce, ReadOnlyMany, ReadWriteMany or "
                                        "ReadWriteOncePod.", strings()),
             "selector": label_selector("Labels of the volumes that may be bound."),
             "resources": struct(P + "VolumeResourceRequirements", "Minimum (and maximum) "
                                 "size.", embedded=True),
             "volumeName": string("Bind to this PersistentVolume."),
             "storageClassName": string("StorageClass to provision from; the default class if "
                                        "unset, none if empty."),
             "volumeMode": string("Filesystem (default) or Block.",
                                  enum=("Block", "Filesystem")),
             "dataSource": struct(P + "TypedLocalObjectReference", "Populate the volume from a "
                                  "snapshot or another claim."),
             "dataSourceRef": struct(P + "TypedObjectReference", "Populate the volume from any "
                                     "populator object."),
             "volumeAttributesClassName": string("VolumeAttributesClass of the volume.")}),
        P + "VolumeResourceRequirements": definition(
            "Size of a claim.",
            {"limits": quantity_map("Largest size (storage)."),
             "requests": quantity_map("Smallest size (storage), such as 1Gi.")}),
        P + "TypedLocalObjectReference": definition(
            "A reference to an object of any kind in the same namespace.",
            {"apiGroup": string("API group; core if empty."), "kind": string("Kind."),
             "name": string("Name.")},
            required=("kind", "name"), atomic=True),
        P + "TypedObjectReference": definition(
            "A reference to an object of any kind.",
            {"apiGroup": string("API group; core if empty."), "kind": string("Kind."),
             "name": string("Name."), "namespace": string("Namespace; the claim's if empty.")},
            required=("kind", "name")),
        P + "ImageVolumeSource": definition(
            "An OCI image or artifact as a read-only volume.",
            {"reference": string("Image or artifact reference."),
             "pullPolicy": string("Always, Never or IfNotPresent.",
                                  enum=("Always", "IfNotPresent", "Never"))}),
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


def _workload_types() -> dict[str, Schema]:
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
    for part in (_workload_types(), _container_types(), _scheduling_types(), _volume_types(),
                 _pod_status(), _cluster_types(), _event_types(), _service_types()):
        defs.update(part)
    return defs

