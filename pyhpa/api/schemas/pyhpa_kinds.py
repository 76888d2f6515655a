"""Schemas of pyhpa's own kinds: ``pyhpa.io/v1alpha1 ExternalMetric`` and the CRD-style
``demo.pyhpa.io/v1 Scalable``. Named like CRD schemas (reversed group, then version and kind)."""

from __future__ import annotations

from pyhpa.api.schemas.build import (
    PRESERVE, Schema, definition, int32, quantity, string, string_map, struct, top_level)
from pyhpa.api.schemas.core_pod import POD_TEMPLATE_SPEC


def schema_name(group: str, version: str, kind: str) -> str:
    """CRD-style definition name: ``io.pyhpa.demo.v1.Scalable`` for demo.pyhpa.io/v1."""
    return ".".join(reversed(group.split("."))) + f".{version}.{kind}"


EXTERNAL_METRIC = schema_name("pyhpa.io", "v1alpha1", "ExternalMetric")
SCALABLE = schema_name("demo.pyhpa.io", "v1", "Scalable")


def definitions() -> dict[str, Schema]:
    return {
        EXTERNAL_METRIC: top_level(
            "One series of an external metric, served by external.metrics.k8s.io/v1beta1 to "
            "HPAs with an External metric. Change spec.value with kubectl to simulate the "
            "outside world (a queue length, a request rate); the HPA reads the new value at "
            "its next sync.", "pyhpa.io", "v1alpha1", "ExternalMetric",
            {"spec": struct(EXTERNAL_METRIC + "Spec", "The series: metric name, labels and "
                                                      "current value.")}),
        EXTERNAL_METRIC + "Spec": definition(
            "An external metric series.",
            {"name": string("Metric name HPAs ask for (metric.name of an External metric). "
                            "Defaults to metadata.name; must start with a letter, '_' or ':' "
                            "and contain only letters, digits, '_', ':', '.' or '-'."),
             "labels": string_map("Labels of the series, matched by the HPA's "
                                  "metric.selector. Valid label keys and values."),
             "value": quantity("Current value of the series, a quantity such as 30, 1500m or "
                               "2k. Required.")},
            required=("value",)),
        SCALABLE: top_level(
            "A custom workload kind with a scale subresource (CRD-style paths .spec.replicas, "
            ".status.replicas, .status.selector), proving that an HPA can scale any such kind. "
            "With a pod template, the cluster runs its pods like a ReplicaSet does.",
            "demo.pyhpa.io", "v1", "Scalable",
            {"spec": struct(SCALABLE + "Spec", "Desired replicas and, optionally, the pods to "
                                               "run."),
             "status": struct(SCALABLE + "Status", "Observed replicas and pod selector, "
                                                   "maintained by the cluster.")}),
        SCALABLE + "Spec": definition(
            "Desired state of a Scalable.",
            {"replicas": int32("Desired replica count, read and written through the scale "
                               "subresource. Default 0.", minimum=0),
             "selector": {"description": "Pod selector: a LabelSelector object "
                                         "({matchLabels: ...}) or the query string form "
                                         "(app=web); copied to status.selector. Defaults to the "
                                         "template's labels.", PRESERVE: True},
             "template": struct(POD_TEMPLATE_SPEC, "Pods to run. Without a template the "
                                "object only records replicas and someone else maintains its "
                                "status."),
             "minReadySeconds": int32("Seconds a new pod must be Ready to count as available.",
                                      minimum=0)}),
        SCALABLE + "Status": definition(
            "Observed state of a Scalable.",
            {"replicas": int32("Pods that exist (or spec.replicas without a template)."),
             "selector": string("Pod selector in query form; the scale subresource reports "
                                "it and the HPA averages the metrics of these pods.")}),
    }
