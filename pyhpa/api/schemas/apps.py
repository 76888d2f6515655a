"""Schemas of the ``apps/v1`` workload kinds: Deployment, ReplicaSet, StatefulSet, DaemonSet, and the
ControllerRevisions the last two record their templates in."""

from __future__ import annotations

from pyhpa.api.schemas.build import (
    Schema, atomic_list, boolean, condition, definition, int32, int64, int_or_string, keyed_list,
    label_selector, opaque, string, struct, top_level)
from pyhpa.api.schemas.core_pod import POD_TEMPLATE_SPEC

A = "io.k8s.api.apps.v1."

_SCALED = ("Has a scale subresource, so an HPA can target it (scaleTargetRef apiVersion apps/v1, "
           "kind {kind}); the HPA then owns spec.replicas.")
_REPLICAS = ("Desired number of pods. Default 1. When an HPA targets this object it sets this "
             "field; leave it out of applied manifests so apply does not fight the HPA.")
_SELECTOR = ("Label selector of the pods this object manages; must match the template's labels. "
             "Cannot be changed after creation.")
_MIN_READY = "Seconds a new pod must be Ready, without crashing, to count as available. Default 0."
_REVISIONS = "How many old revisions to keep for rollback."


def _top(kind: str, description: str) -> Schema:
    return top_level(f"{description} {_SCALED.format(kind=kind)}", "apps", "v1", kind,
                     {"spec": struct(A + kind + "Spec", f"Desired state of the {kind}."),
                      "status": struct(A + kind + "Status", f"Observed state of the {kind}. "
                                                            "Read-only.")})


def _daemonset() -> dict[str, Schema]:
    """DaemonSet: one pod per eligible node (no scale subresource)."""
    return {
        A + "DaemonSet": top_level(
            "One pod on each node its template may run on (node agents, log shippers).",
            "apps", "v1", "DaemonSet",
            {"spec": struct(A + "DaemonSetSpec", "Desired state of the DaemonSet."),
             "status": struct(A + "DaemonSetStatus", "Observed state. Read-only.")}),
        A + "DaemonSetSpec": definition(
            "Desired state of a DaemonSet.",
            {"selector": label_selector(_SELECTOR),
             "template": struct(POD_TEMPLATE_SPEC, "The pod each node runs; a change rolls "
                                "out per updateStrategy.", embedded=True),
             "updateStrategy": struct(A + "DaemonSetUpdateStrategy", "How pods are replaced "
                                      "when the template changes.", embedded=True),
             "minReadySeconds": int32(_MIN_READY, minimum=0),
             "revisionHistoryLimit": int32(_REVISIONS + " Default 10.", minimum=0)},
            required=("selector", "template")),
        A + "DaemonSetUpdateStrategy": definition(
            "How a DaemonSet replaces pods.",
            {"type": string("RollingUpdate (default) or OnDelete.",
                            enum=("OnDelete", "RollingUpdate")),
             "rollingUpdate": struct(A + "RollingUpdateDaemonSet", "Pace of a rolling "
                                     "update.")}),
        A + "RollingUpdateDaemonSet": definition(
            "Pace of a DaemonSet's rolling update.",
            {"maxUnavailable": int_or_string("Nodes whose pod may be unavailable at once "
                                             "(number or percentage; default 1)."),
             "maxSurge": int_or_string("Nodes that may run an old and a new pod at once "
                                       "(default 0).")}),
        A + "DaemonSetStatus": definition(
            "Observed state of a DaemonSet.",
            {"currentNumberScheduled": int32("Nodes running at least one of its pods."),
             "numberMisscheduled": int32("Nodes running its pod that should not."),
             "desiredNumberScheduled": int32("Nodes that should run its pod."),
             "numberReady": int32("Nodes whose pod is Ready."),
             "observedGeneration": int64("The generation observed."),
             "updatedNumberScheduled": int32("Nodes running the current template's pod."),
             "numberAvailable": int32("Nodes whose pod is available."),
             "numberUnavailable": int32("Nodes whose pod is not available."),
             "collisionCount": int32("Hash collisions of its revisions."),
             "conditions": keyed_list("Current conditions.", A + "DaemonSetCondition",
                                      ("type",))},
            required=("currentNumberScheduled", "numberMisscheduled",
                      "desiredNumberScheduled", "numberReady")),
        A + "DaemonSetCondition": condition("DaemonSet", "none defined yet"),
    }


def _controller_revision() -> dict[str, Schema]:
    """ControllerRevision (k8s.io/api apps/v1 types.go): an immutable snapshot of a DaemonSet's or
    StatefulSet's template, which ``kubectl rollout history`` lists and ``undo`` patches back."""
    return {
        A + "ControllerRevision": top_level(
            "An immutable snapshot of state data, recorded by the DaemonSet and StatefulSet "
            "controllers for each pod template they roll out; `kubectl rollout undo` restores one.",
            "apps", "v1", "ControllerRevision",
            {"data": opaque("Data is the serialized representation of the state: a strategic "
                            "merge patch that restores the owner's spec.template."),
             "revision": int64("Revision indicates the revision of the state represented by "
                               "Data.")},
            required=("revision",)),
    }


def definitions() -> dict[str, Schema]:
    conditions = "Current conditions."
    return {**_daemonset(), **_controller_revision(), **_workloads(conditions)}


def _workloads(conditions: str) -> dict[str, Schema]:
    return {
        A + "Deployment": _top("Deployment", "Declarative updates of a set of identical pods "
                               "through ReplicaSets: changing the template rolls out a new "
                               "ReplicaSet."),
        A + "DeploymentSpec": definition(
            "Desired state of a Deployment.",
            {
                "replicas": int32(_REPLICAS, minimum=0),
                "selector": label_selector(_SELECTOR),
                "template": struct(POD_TEMPLATE_SPEC, "Pods to create; a change starts a "
                                   "rollout.", embedded=True),
                "strategy": struct(A + "DeploymentStrategy", "How old pods are replaced by "
                                   "new ones.", embedded=True,
                                   **{"x-kubernetes-patch-strategy": "retainKeys"}),
                "minReadySeconds": int32(_MIN_READY, minimum=0),
                "revisionHistoryLimit": int32(_REVISIONS + " Default 10.", minimum=0),
                "paused": boolean("Stop rolling out template changes until unpaused."),
                "progressDeadlineSeconds": int32("Seconds a rollout may make no progress before "
                                                 "it is reported as failed. Default 600.",
                                                 minimum=1),
            }, required=("selector", "template")),
        A + "DeploymentStrategy": definition(
            "How a Deployment replaces pods.",
            {"type": string("RollingUpdate (default): replace pods gradually; Recreate: delete "
                            "all old pods first.", enum=("Recreate", "RollingUpdate")),
             "rollingUpdate": struct(A + "RollingUpdateDeployment", "Pace of a rolling "
                                     "update; only with type RollingUpdate.")}),
        A + "RollingUpdateDeployment": definition(
            "Pace of a rolling update.",
            {"maxUnavailable": int_or_string("Pods that may be unavailable during the update: a "
                                             "number or a percentage of replicas (rounded "
                                             "down). Default 25%."),
             "maxSurge": int_or_string("Pods that may exist above replicas during the update: a "
                                       "number or a percentage (rounded up). Default 25%.")}),
        A + "DeploymentStatus": definition(
            "Observed state of a Deployment.",
            {
                "observedGeneration": int64("metadata.generation this status reflects."),
                "replicas": int32("Pods of all its ReplicaSets (not terminating)."),
                "updatedReplicas": int32("Pods with the current template."),
                "readyReplicas": int32("Pods that are Ready."),
                "availableReplicas": int32("Pods Ready for at least minReadySeconds."),
                "unavailableReplicas": int32("Pods still needed to reach replicas available."),
                "terminatingReplicas": int32("Pods that are shutting down."),
                "conditions": keyed_list(conditions, A + "DeploymentCondition", ("type",)),
                "collisionCount": int32("Counter that changes the template hash when two "
                                        "templates collide."),
            }),
        A + "DeploymentCondition": condition("Deployment", "Available, Progressing, "
                                              "ReplicaFailure", update_time=True),
        A + "ReplicaSet": _top("ReplicaSet", "Keeps a number of identical pods running. "
                               "Usually created and scaled by a Deployment; an HPA should "
                               "target the Deployment instead."),
        A + "ReplicaSetSpec": definition(
            "Desired state of a ReplicaSet.",
            {"replicas": int32(_REPLICAS, minimum=0),
             "minReadySeconds": int32(_MIN_READY, minimum=0),
             "selector": label_selector(_SELECTOR),
             "template": struct(POD_TEMPLATE_SPEC, "Pods to create.", embedded=True)},
            required=("selector",)),
        A + "ReplicaSetStatus": definition(
            "Observed state of a ReplicaSet.",
            {"replicas": int32("Pods that exist (not terminating)."),
             "fullyLabeledReplicas": int32("Pods whose labels match the template's."),
             "readyReplicas": int32("Pods that are Ready."),
             "availableReplicas": int32("Pods Ready for at least minReadySeconds."),
             "terminatingReplicas": int32("Pods that are shutting down."),
             "observedGeneration": int64("metadata.generation this status reflects."),
             "conditions": keyed_list(conditions, A + "ReplicaSetCondition", ("type",))},
            required=("replicas",)),
        A + "ReplicaSetCondition": condition("ReplicaSet", "ReplicaFailure"),
        A + "StatefulSet": _top("StatefulSet", "Pods with stable names (web-0, web-1, ...) "
                                "created in order, each with its own storage."),
        A + "StatefulSetSpec": definition(
            "Desired state of a StatefulSet.",
            {
                "replicas": int32(_REPLICAS, minimum=0),
                "selector": label_selector(_SELECTOR),
                "template": struct(POD_TEMPLATE_SPEC, "Pods to create; each gets the name "
                                   "<statefulset>-<ordinal>.", embedded=True),
                "volumeClaimTemplates": atomic_list(
                    "PersistentVolumeClaims created for every pod and mounted by name.",
                    "io.k8s.api.core.v1.PersistentVolumeClaim"),
                "serviceName": string("Headless Service that gives the pods their DNS names."),
                "podManagementPolicy": string("OrderedReady (default): one pod at a time, in "
                                              "order; Parallel: all at once.",
                                              enum=("OrderedReady", "Parallel")),
                "updateStrategy": struct(A + "StatefulSetUpdateStrategy", "How pods are "
                                         "replaced when the template changes.", embedded=True),
                "revisionHistoryLimit": int32(_REVISIONS + " Default 10.", minimum=0),
                "minReadySeconds": int32(_MIN_READY, minimum=0),
                "persistentVolumeClaimRetentionPolicy": struct(
                    A + "StatefulSetPersistentVolumeClaimRetentionPolicy",
                    "What happens to the claims when the set is deleted or scaled down."),
                "ordinals": struct(A + "StatefulSetOrdinals", "Numbering of the pods."),
            }, required=("selector", "template")),
        A + "StatefulSetUpdateStrategy": definition(
            "How a StatefulSet replaces pods.",
            {"type": string("RollingUpdate (default) or OnDelete (replace a pod only when you "
                            "delete it).", enum=("OnDelete", "RollingUpdate")),
             "rollingUpdate": struct(A + "RollingUpdateStatefulSetStrategy", "Pace of a "
                                     "rolling update.")}),
        A + "RollingUpdateStatefulSetStrategy": definition(
            "Pace of a StatefulSet rolling update.",
            {"partition": int32("Only pods with an ordinal at or above this are updated. "
                                "Default 0.", minimum=0),
             "maxUnavailable": int_or_string("Pods that may be unavailable during the update: "
                                             "a number or a percentage. Default 1.")}),
        A + "StatefulSetPersistentVolumeClaimRetentionPolicy": definition(
            "Fate of a StatefulSet's claims.",
            {"whenDeleted": string("Retain (default) or Delete the claims when the set is "
                                   "deleted.", enum=("Delete", "Retain")),
             "whenScaled": string("Retain (default) or Delete the claims of pods removed by a "
                                  "scale down.", enum=("Delete", "Retain"))}),
        A + "StatefulSetOrdinals": definition(
            "Numbering of a StatefulSet's pods.",
            {"start": int32("Number of the first pod. Default 0.", minimum=0)}),
        A + "StatefulSetStatus": definition(
            "Observed state of a StatefulSet.",
            {
                "observedGeneration": int64("metadata.generation this status reflects."),
                "replicas": int32("Pods that exist."),
                "readyReplicas": int32("Pods that are Ready."),
                "currentReplicas": int32("Pods at currentRevision."),
                "updatedReplicas": int32("Pods at updateRevision."),
                "currentRevision": string("Revision of the pods before the update."),
                "updateRevision": string("Revision the pods are updated to."),
                "collisionCount": int32("Counter that changes the revision hash when two "
                                        "templates collide."),
                "conditions": keyed_list(conditions, A + "StatefulSetCondition", ("type",)),
                "availableReplicas": int32("Pods Ready for at least minReadySeconds."),
            }, required=("replicas",)),
        A + "StatefulSetCondition": condition("StatefulSet", "none defined upstream yet"),
    }
