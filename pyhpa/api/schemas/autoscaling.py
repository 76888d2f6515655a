"""Schemas of ``autoscaling/v2`` and ``autoscaling/v1``: the HPA and the Scale subresource.

Generated from the API model (:mod:`pyhpa.api.types`) by :func:`models.from_model`; this module
holds what the model does not say: our descriptions (units, defaults, ranges and the rules
:mod:`pyhpa.api.validation` enforces), int64 fields, upstream's required lists and list markers.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping
from pyhpa.api import types as T
from pyhpa.api.schemas.build import (
    LABEL_SELECTOR, LIST_MAP_KEYS, LIST_TYPE, MERGE_KEY, OBJECT_META, PATCH_STRATEGY, Schema)
from pyhpa.api.schemas.models import Field as F
from pyhpa.api.schemas.models import Type, from_model

V2 = "io.k8s.api.autoscaling.v2."
V1 = "io.k8s.api.autoscaling.v1."

ATOMIC = MappingProxyType({LIST_TYPE: "atomic"})
CONDITIONS = MappingProxyType({LIST_TYPE: "map", LIST_MAP_KEYS: ["type"], MERGE_KEY: "type",
                                PATCH_STRATEGY: "merge"})
SHARED = MappingProxyType({T.ObjectMeta: OBJECT_META, T.LabelSelector: LABEL_SELECTOR})

_API_VERSION = F("The schema version of this object: autoscaling/{v}.", optional=True)
_KIND = F("The type of this object: HorizontalPodAutoscaler.", optional=True)
_METADATA = F("Standard object metadata. The name must be a DNS subdomain; the HPA lives in "
              "the namespace of the workload it scales.")
_OBSERVED_GENERATION = F("The metadata.generation of the HPA this status was computed from.",
                         int64=True)
_LAST_SCALE_TIME = F("When the controller last changed the target's replica count. Read-only.")
_DESIRED = F("Replica count the controller last computed (and wrote to the target's scale "
             "subresource when it could), already bounded by minReplicas and maxReplicas.")
_MIN_REPLICAS = ("Lowest replica count the autoscaler may scale down to. Default 1; must be at "
                 "least 1, or 0 when the HPAScaleToZero feature gate is on (pyhpa's default) "
                 "and the HPA has at least one Object or External metric.")
_MAX_REPLICAS = ("Highest replica count the autoscaler may scale up to. Required; must be at "
                 "least 1 and not below minReplicas.")

_CROSS_REF = Type(
    "Points at an object by apiVersion, kind and name, in the HPA's namespace.",
    {"kind": F("Kind of the object, such as Deployment, StatefulSet or ReplicaSet. Required; "
               "must not be '.', '..' or contain '/' or '%'."),
     "name": F("Name of the object. Required; same character rules as kind."),
     "apiVersion": F("API group and version of the object, such as apps/v1. Needs a group, "
                     "except for kind ReplicationController (apiVersion v1).")})

_CONDITION = Type(
    "One aspect of the autoscaler's state, as True, False or Unknown with the reason.",
    {"type": F("AbleToScale (can the target's scale be read and written), ScalingActive (are "
               "metrics available and is scaling enabled), ScalingLimited (is the desired count "
               "clamped by minReplicas, maxReplicas or a scaling policy) or ScaledToZero.",
               enum=T.CONDITION_TYPES),
     "status": F("True, False or Unknown.", enum=("False", "True", "Unknown")),
     "lastTransitionTime": F("When status last changed.", optional=True),
     "reason": F("One-word reason of the last transition, such as ValidMetricFound, "
                 "FailedGetResourceMetric or TooManyReplicas."),
     "message": F("Human-readable details of the last transition."),
     "observedGeneration": F("The metadata.generation the condition was set for.", int64=True,
                             minimum=0)})

V2_DOCS: Mapping[str, Type] = MappingProxyType({
    "HorizontalPodAutoscaler": Type(
        "Keeps the replica count of a scalable workload (anything with a scale subresource: "
        "Deployment, StatefulSet, ReplicaSet, ReplicationController, or a custom kind such as "
        "Scalable) in line with observed metrics. Each sync (every 15 s by default) the "
        "controller computes desiredReplicas = ceil(currentReplicas * currentValue / target) "
        "for every metric, takes the largest, applies the behavior rules and the replica "
        "bounds, and writes the result to the target's scale subresource.",
        {"apiVersion": F(_API_VERSION.description.format(v="v2"), optional=True),
         "kind": _KIND, "metadata": _METADATA,
         "spec": F("What to scale, between which bounds, on which metrics and how fast.",
                   optional=True),
         "status": F("What the autoscaler last observed and decided. Written by the "
                     "controller; read-only for users.", optional=True)}),
    "HorizontalPodAutoscalerSpec": Type(
        "Desired behaviour of an autoscaler.",
        {"scaleTargetRef": F("The workload to scale. It must have a scale subresource; its "
                             "pods (found through the scale's label selector) supply the Pods "
                             "and Resource metrics."),
         "minReplicas": F(_MIN_REPLICAS, minimum=0),
         "maxReplicas": F(_MAX_REPLICAS, minimum=1),
         "metrics": F("Metrics to scale on; each yields a desired replica count and the highest "
                      "wins. If empty, defaults to one metric: average CPU utilization of 80% "
                      "of the pods' requests. The list is replaced as a whole by patches.",
                      markers=ATOMIC),
         "behavior": F("Scaling speed limits, per direction. If unset, scale-up is limited to "
                       "the larger of 4 pods or 100% per 15 s and scale-down uses a 300 s "
                       "stabilization window. If set (even to {}), missing parts are filled "
                       "with those defaults.")}),
    "CrossVersionObjectReference": _CROSS_REF,
    "MetricSpec": Type(
        "One metric to scale on. Set type and exactly the one source field it names.",
        {"type": F("Which source field is set: Resource, ContainerResource, Pods, Object or "
                   "External.", enum=T.METRIC_TYPES),
         "object": F("A single value describing another object in the namespace (type "
                     "Object), such as requests per second of an Ingress."),
         "pods": F("A custom metric averaged over the target's pods (type Pods), such as "
                   "transactions per second per pod."),
         "resource": F("CPU or memory usage of the target's pods as known to the scheduler "
                       "(type Resource), summed over all containers of each pod."),
         "containerResource": F("CPU or memory usage of one named container in each pod (type "
                                "ContainerResource), ignoring sidecars."),
         "external": F("A metric not tied to any object in the cluster (type External), such "
                       "as the depth of a cloud queue. In pyhpa's cluster, ExternalMetric "
                       "objects (pyhpa.io/v1alpha1) supply these values.")}),
    "ObjectMetricSource": Type(
        "A metric describing one object other than the pods, read from custom.metrics.k8s.io.",
        {"describedObject": F("The object the metric describes, in the HPA's namespace."),
         "target": F("Target value: type Value compares the metric directly; AverageValue "
                     "divides it by the current pod count first. One of value or averageValue "
                     "is required."),
         "metric": F("Name (and optional label selector) of the metric.")}),
    "PodsMetricSource": Type(
        "A custom metric of each pod of the target, averaged, read from custom.metrics.k8s.io.",
        {"metric": F("Name (and optional label selector) of the per-pod metric."),
         "target": F("Target per-pod average; only type AverageValue with averageValue is "
                     "allowed.")}),
    "ResourceMetricSource": Type(
        "Usage of a resource (cpu or memory) by the target's pods, read from metrics.k8s.io.",
        {"name": F("Resource name: cpu or memory (any resource the metrics API reports)."),
         "target": F("Target: type Utilization with averageUtilization (percent of the pods' "
                     "requests), or type AverageValue with averageValue (absolute usage per "
                     "pod, such as 500m CPU or 256Mi memory). Exactly one of the two.")}),
    "ContainerResourceMetricSource": Type(
        "Usage of a resource by one container of each pod, read from metrics.k8s.io.",
        {"name": F("Resource name: cpu or memory."),
         "target": F("Target: averageUtilization (percent of that container's request) or "
                     "averageValue (absolute usage per pod). Exactly one of the two."),
         "container": F("Name of the container whose usage counts; must be a DNS label.")}),
    "ExternalMetricSource": Type(
        "A metric from outside the cluster, read from external.metrics.k8s.io.",
        {"metric": F("Name and label selector of the external series."),
         "target": F("Target: type Value with value (the sum of the matching series compared "
                     "directly) or type AverageValue with averageValue (divided by the current "
                     "pod count). Exactly one of the two."),
         "fallback": F("What to do when this metric cannot be read for a while (KEP-5679, alpha "
                       "upstream; gate HPAExternalMetricFallback, on in pyhpa). Unset: a failing "
                       "metric blocks scale-down, as always.")}),
    "ExternalMetricFallback": Type(
        "Replicas this metric proposes once it has failed without a break for "
        "failureDurationSeconds; the proposal joins the other metrics' through the maximum.",
        {"failureDurationSeconds": F("Seconds the metric must fail, counted from its first "
                                     "failure, before the fallback applies. Default 180, "
                                     "minimum 180.", minimum=180),
         "replicas": F("Replicas proposed while in fallback; greater than 0.", minimum=1),
         "strategy": F("How replicas is used (KEP-5679's proposed follow-up): Static (the "
                       "default) proposes replicas; UseMax the larger of it and the current "
                       "count; UseMin the smaller.", enum=("Static", "UseMax", "UseMin"))}),
    "MetricIdentifier": Type(
        "Names a metric series.",
        {"name": F("Metric name as the metrics API knows it. Required; must not be '.', '..' "
                   "or contain '/' or '%'."),
         "selector": F("Label selector narrowing which series count; for External metrics the "
                       "matching series are summed. Unset means all series of that name.")}),
    "MetricTarget": Type(
        "The value a metric should have. Only the field matching type is used.",
        {"type": F("Utilization (averageUtilization, Resource and ContainerResource only), "
                   "Value (value) or AverageValue (averageValue).", enum=T.TARGET_TYPES),
         "value": F("Target total value of the metric, a quantity such as 100 or 1500m; must "
                    "be positive."),
         "averageValue": F("Target value per pod (metric total divided by the pod count), a "
                           "quantity such as 200m or 256Mi; must be positive."),
         "averageUtilization": F("Target average usage as a percentage of the pods' resource "
                                 "requests (1 or more; values above 100 are allowed). Pods "
                                 "without a request for the resource make the metric "
                                 "unavailable.", minimum=1)}),
    "HorizontalPodAutoscalerBehavior": Type(
        "Separate speed limits for scaling up and down.",
        {"scaleUp": F("Rules when the desired count is above the current one. Default: no "
                      "stabilization; policies Pods 4 per 15 s and Percent 100 per 15 s; "
                      "selectPolicy Max (whichever allows more)."),
         "scaleDown": F("Rules when the desired count is below the current one. Default: the "
                        "controller's 300 s stabilization window; policy Percent 100 per 15 s "
                        "(down to minReplicas at once)."),
         "syncPeriodSeconds": F("Seconds between two reconciles of this HPA, 1 to 3600 (KEP-6003, "
                                "proposed upstream). Unset uses the controller's "
                                "--horizontal-pod-autoscaler-sync-period (15 s). Needs the "
                                "HPAConfigurableSyncPeriod feature gate (on in pyhpa).",
                                minimum=1, maximum=3600),
         "fallback": F("Replicas to use once the metrics have failed in several syncs in a "
                       "row (KEP-5053, proposed upstream; gate HPAFallback, on in pyhpa). "
                       "Unset: failing metrics hold the current count, as always.")}),
    "HPAFallback": Type(
        "The whole HPA's fallback: after more than failureThreshold syncs in a row without a "
        "replica count from the metrics, replicas replaces the recommendation; behavior and "
        "min/maxReplicas still apply.",
        {"failureThreshold": F("Syncs in a row that may fail before the fallback applies (it "
                               "applies on the next one). Default 3; greater than 0.", minimum=1),
         "replicas": F("Replicas recommended while in fallback; greater than 0.", minimum=1)}),
    "HPAScalingRules": Type(
        "Limits for one scaling direction. A field that is set replaces its default as a "
        "whole; unset fields keep the default.",
        {"stabilizationWindowSeconds": F(
            "Seconds of past recommendations to consider: scaling up uses the lowest "
            "recommendation in the window, scaling down the highest, which damps flapping. "
            "0 to 3600. Default 0 for scaleUp; for scaleDown, the controller's "
            "--horizontal-pod-autoscaler-downscale-stabilization (300 s).",
            minimum=0, maximum=3600),
         "selectPolicy": F("Which policy wins when several apply: Max (the one allowing the "
                           "largest change, default), Min (the smallest) or Disabled (never "
                           "scale in this direction).", enum=("Disabled", "Max", "Min")),
         "policies": F("Allowed changes per period. At least one is required once behavior "
                       "is set; an empty list is rejected. Replaced as a whole by patches.",
                       markers=ATOMIC),
         "tolerance": F("Ratio by which the metric may differ from its target before the "
                        "autoscaler acts, as a quantity (0.05 or 50m = 5%); 0 or more. Unset "
                        "uses the controller's --horizontal-pod-autoscaler-tolerance (10%). "
                        "Needs the HPAConfigurableTolerance feature gate (on in pyhpa).")}),
    "HPAScalingPolicy": Type(
        "One limit on how much the replica count may change within a period.",
        {"type": F("Pods (value is an absolute number of pods) or Percent (value is a "
                   "percentage of the replica count at the start of the period).",
                   enum=("Percent", "Pods")),
         "value": F("Allowed change within periodSeconds; greater than 0.", minimum=1),
         "periodSeconds": F("Length of the sliding window the change is measured over, "
                            "1 to 1800 seconds.", minimum=1, maximum=1800)}),
    "HorizontalPodAutoscalerStatus": Type(
        "What the autoscaler last observed and decided.",
        {"observedGeneration": _OBSERVED_GENERATION,
         "lastScaleTime": _LAST_SCALE_TIME,
         "currentReplicas": F("Replica count of the target as last read from its scale "
                              "subresource."),
         "desiredReplicas": _DESIRED,
         "currentMetrics": F("Last value read for each metric of spec.metrics, in the same "
                             "order.", optional=True, markers=ATOMIC),
         "conditions": F("AbleToScale, ScalingActive and ScalingLimited: why the autoscaler "
                         "does or does not scale (kubectl describe shows them).",
                         markers=CONDITIONS),
         "lastScaleDecision": F("Why the controller chose desiredReplicas (KEP-6107, alpha): "
                                "rewritten only when the decision's meaning changes, never just "
                                "to refresh its time. Set with the HPAStatusDecisionTrace gate."),
         "consecutiveMetricRetrievalFailureCount": F(
             "Syncs in a row that could not compute a replica count from the metrics (KEP-5053); "
             "kept only for HPAs with behavior.fallback, reset by the next successful sync.")}),
    "HorizontalPodAutoscalerScaleDecision": Type(
        "The controller's last decision and what shaped it (KEP-6107).",
        {"time": F("When the decision was computed."),
         "observedGeneration": F("The metadata.generation of the spec the decision used; "
                                 "metricIndex refers to that spec.", int64=True),
         "currentReplicas": F("Replica count of the target when the decision was made."),
         "recommendedReplicas": F("The count the metrics proposed, before tolerance, "
                                  "stabilization, policies and min/max; absent when no metric "
                                  "produced one."),
         "desiredReplicas": F("The count decided."),
         "reason": F("The headline: MetricRecommendation, WithinTolerance, Stabilized, "
                     "PolicyLimited, ReplicaLimit, InvalidMetrics or RecommendationFailed "
                     "(clients must tolerate new values)."),
         "metrics": F("One entry per spec.metrics entry.", markers=ATOMIC),
         "constraints": F("Unordered set of what else bounded the count: MinReplicas, "
                          "MaxReplicas, Stabilization, Tolerance, ScalingPolicy, "
                          "InvalidMetricGuard.", markers=ATOMIC)}),
    "MetricDecision": Type(
        "What one metric contributed to the decision.",
        {"metricIndex": F("Index into spec.metrics (of observedGeneration)."),
         "proposedReplicas": F("The count this metric proposed, when it produced one."),
         "status": F("Used (it set the recommendation), Valid or Invalid.",
                     enum=("Invalid", "Used", "Valid")),
         "reason": F("Computed, FetchFailed, InvalidMetricValue, NoMatchingPods or "
                     "SkippedScaleDown.")}),
    "MetricStatus": Type(
        "Last reading of one metric; type names the source field that is set.",
        {"type": F("Resource, ContainerResource, Pods, Object or External.",
                   enum=T.METRIC_TYPES),
         "object": F("Reading of an Object metric."),
         "pods": F("Reading of a Pods metric."),
         "resource": F("Reading of a Resource metric."),
         "containerResource": F("Reading of a ContainerResource metric."),
         "external": F("Reading of an External metric.")}),
    "ObjectMetricStatus": Type(
        "Last reading of an Object metric.",
        {"metric": F("The metric read."),
         "current": F("Value (or per-pod average value) read."),
         "describedObject": F("The object the metric describes.")}),
    "PodsMetricStatus": Type(
        "Last reading of a Pods metric.",
        {"metric": F("The metric read."), "current": F("Average value per pod.")}),
    "ResourceMetricStatus": Type(
        "Last reading of a Resource metric.",
        {"name": F("Resource name."),
         "current": F("Average usage per pod and, if the target is Utilization, the average "
                      "utilization in percent of requests.")}),
    "ContainerResourceMetricStatus": Type(
        "Last reading of a ContainerResource metric.",
        {"name": F("Resource name."),
         "current": F("Average usage of the container per pod and, for a Utilization target, "
                      "its utilization in percent of the container's request."),
         "container": F("Name of the container.")}),
    "ExternalMetricStatus": Type(
        "Last reading of an External metric.",
        {"metric": F("The metric read."),
         "current": F("Total (or per-pod average) value read; empty while the metric fails."),
         "fallbackStatus": F("Normal or Fallback, for a metric with a fallback (KEP-5679)."),
         "firstFailureTime": F("When the metric's current run of failures began; cleared on "
                               "the next successful read.")}),
    "MetricValueStatus": Type(
        "A metric reading; which fields are set follows the metric's target type.",
        {"value": F("Total value, a quantity."),
         "averageValue": F("Value per pod, a quantity."),
         "averageUtilization": F("Average usage as a percentage of the pods' requests.")}),
    "HorizontalPodAutoscalerCondition": _CONDITION,
})

V1_DOCS: Mapping[str, Type] = MappingProxyType({
    "HorizontalPodAutoscaler": Type(
        "The first-generation form of the autoscaler: one CPU utilization target. It is the "
        "same stored object as autoscaling/v2; metrics, behavior and conditions that v1 cannot "
        "express travel in autoscaling.alpha.kubernetes.io/* annotations. Prefer "
        "autoscaling/v2.",
        {"apiVersion": F(_API_VERSION.description.format(v="v1"), optional=True),
         "kind": _KIND, "metadata": _METADATA,
         "spec": F("What to scale, between which bounds, at which CPU utilization.",
                   optional=True),
         "status": F("What the autoscaler last observed and decided. Read-only.",
                     optional=True)}),
    "HorizontalPodAutoscalerSpec": Type(
        "Desired behaviour of a v1 autoscaler.",
        {"scaleTargetRef": F("The workload to scale; it must have a scale subresource."),
         "minReplicas": F(_MIN_REPLICAS, minimum=0),
         "maxReplicas": F(_MAX_REPLICAS, minimum=1),
         "targetCPUUtilizationPercentage": F(
             "Target average CPU usage as a percentage of the pods' CPU requests (1 or more). "
             "If unset, 80% is used (and shown when read back through v1).", minimum=1)}),
    "CrossVersionObjectReference": Type(_CROSS_REF.description, _CROSS_REF.fields, atomic=True),
    "HorizontalPodAutoscalerStatus": Type(
        "What a v1 autoscaler last observed and decided.",
        {"observedGeneration": _OBSERVED_GENERATION,
         "lastScaleTime": _LAST_SCALE_TIME,
         "currentReplicas": F("Replica count of the target as last read."),
         "desiredReplicas": _DESIRED,
         "currentCPUUtilizationPercentage": F("Last average CPU usage of the pods in percent "
                                              "of their requests.")}),
    "Scale": Type(
        "The scale subresource of a workload: the replica count an HPA reads and writes, and "
        "the label selector of the pods.",
        {"apiVersion": F("autoscaling/v1.", optional=True),
         "kind": F("Scale.", optional=True),
         "metadata": F("Name, namespace, uid and resourceVersion of the parent object."),
         "spec": F("Desired replica count."),
         "status": F("Observed replica count and pod selector.", optional=True)}),
    "ScaleSpec": Type(
        "Desired replicas of a scalable object.",
        {"replicas": F("Desired number of replicas; 0 or more.", minimum=0)}),
    "ScaleStatus": Type(
        "Observed replicas of a scalable object.",
        {"replicas": F("Number of replicas that exist."),
         "selector": F("Label selector of the pods in query form (app=web,tier in (a,b)); "
                       "the HPA averages the metrics of the pods it matches.")}),
})


def _v1_name(name: str) -> str:
    return name[:-2] if name.endswith("V1") else name


def definitions() -> dict[str, Schema]:
    defs = from_model(T.HorizontalPodAutoscaler, V2, V2_DOCS, shared=SHARED,
                      gvk=("autoscaling", "v2", "HorizontalPodAutoscaler"))
    defs.update(from_model(T.HorizontalPodAutoscalerV1, V1, V1_DOCS, shared=SHARED,
                           gvk=("autoscaling", "v1", "HorizontalPodAutoscaler"), rename=_v1_name))
    defs.update(from_model(T.Scale, V1, V1_DOCS, shared=SHARED,
                           gvk=("autoscaling", "v1", "Scale")))
    return defs
