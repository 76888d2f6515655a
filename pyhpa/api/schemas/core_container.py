"""Schemas of core/v1 Containers: ports, env, resources, probes, lifecycle, security context.
"""

from __future__ import annotations

from pyhpa.api.schemas.build import (
    CORE_V1, Schema, atomic_list, boolean, definition, int32, int64, int_or_string, keyed_list,
    quantity, quantity_map, string, strings, struct)

P = CORE_V1


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


def definitions() -> dict[str, Schema]:
    return _container_types()
