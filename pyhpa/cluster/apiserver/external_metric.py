"""``pyhpa.io/v1alpha1 ExternalMetric``: an external metric series users set with kubectl.

Why a kind of our own: External metrics come from outside the cluster (queue depth, request rate
at a load balancer). In the embedded cluster a user makes one up and changes it the same way they
change everything else::

    apiVersion: pyhpa.io/v1alpha1
    kind: ExternalMetric
    metadata: {name: jobs-queue, namespace: default}
    spec:
      name: queue_messages_ready     # the metric name HPAs ask for (default: metadata.name)
      labels: {queue: jobs}          # the series' labels, matched by metric.selector
      value: "30"                    # a quantity

``external.metrics.k8s.io`` (:mod:`pyhpa.cluster.metrics_api`) serves every ExternalMetric of a
namespace whose ``spec.name`` matches the requested metric and whose labels match the selector.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pyhpa.api.quantity import Quantity
from pyhpa.api.names import is_label_key, is_valid_label_value
from pyhpa.cluster.apiserver.columns import Column, TableClock
from pyhpa.api.field_errors import cause

Obj = dict[str, Any]

GROUP, VERSION, KIND, PLURAL = "pyhpa.io", "v1alpha1", "ExternalMetric", "externalmetrics"
API_VERSION = f"{GROUP}/{VERSION}"

# What custom-metrics-apiserver accepts as a metric name in a URL path segment.
_METRIC_NAME = re.compile(r"^[A-Za-z_:][A-Za-z0-9_:.\-]*$")


@dataclass(frozen=True)
class ExternalSeries:
    """One ExternalMetric object read for serving: name, labels and value in milli-units."""

    namespace: str
    object_name: str
    metric: str
    labels: dict[str, str]
    value_milli: int


def metric_name(obj: Obj) -> str:
    spec = obj.get("spec") or {}
    return spec.get("name") or (obj.get("metadata") or {}).get("name") or ""


def read_series(obj: Obj) -> ExternalSeries | None:
    """The series an ExternalMetric object describes; None if it is not valid (never served)."""
    if unreadable(obj) is not None:
        return None
    meta = obj.get("metadata") or {}
    spec = obj["spec"]
    return ExternalSeries(meta.get("namespace") or "", meta.get("name") or "", metric_name(obj),
                          dict(spec.get("labels") or {}),
                          Quantity.parse(_value_text(spec.get("value"))).milli_value())


def unreadable(obj: Any) -> str | None:
    """Why the metrics pipeline cannot serve a stored ExternalMetric (one written before its
    checks, or by hand), in field-error words; None when it can."""
    if not isinstance(obj, dict):
        return "the object is not a JSON object"
    causes = validate(obj)
    if not causes:
        return None
    return "; ".join(f"{c.get('field')}: {c.get('message')}" for c in causes)


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        raise ValueError("must be a quantity, not a boolean")
    return str(value) if isinstance(value, (int, float)) else value


def validate(obj: Obj) -> list[dict[str, str]]:
    """Field errors (Status causes) of an ExternalMetric's ``spec``."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [cause("spec", "Required", detail="spec.value is required")]
    causes = []
    name = spec.get("name")
    if name is not None and (not isinstance(name, str) or not _METRIC_NAME.match(name)):
        causes.append(cause("spec.name", "Invalid", name,
                            "a metric name must start with a letter, '_' or ':' and contain only "
                            "letters, digits, '_', ':', '.' or '-'"))
    if name is None and not _METRIC_NAME.match((obj.get("metadata") or {}).get("name") or "x"):
        causes.append(cause("spec.name", "Required",
                            detail="metadata.name is not a valid metric name; set spec.name"))
    labels = spec.get("labels")
    if labels is not None:
        if not isinstance(labels, dict):
            causes.append(cause("spec.labels", "Invalid", None, "must be a map of strings"))
        else:
            for k, v in labels.items():
                if not isinstance(v, str):
                    causes.append(cause(f"spec.labels[{k}]", "Invalid", v, "must be a string"))
                    continue
                errs = is_label_key(k) + is_valid_label_value(v)
                if errs:
                    causes.append(cause(f"spec.labels[{k}]", "Invalid", v, "; ".join(errs)))
    if "value" not in spec or spec.get("value") in (None, ""):
        causes.append(cause("spec.value", "Required", detail="a quantity such as \"30\" or \"1500m\""))
    else:
        try:
            value = Quantity.parse(_value_text(spec["value"]))
        except Exception as exc:  # noqa: BLE001 - any parse failure is the user's input
            causes.append(cause("spec.value", "Invalid", spec["value"], str(exc)))
        else:
            if value.cmp(_HIGHEST) > 0 or value.cmp(_LOWEST) < 0:
                causes.append(cause("spec.value", "Invalid", spec["value"], _RANGE))
    return causes


# The HPA controller reads a metric value as ``Quantity.MilliValue()``, an int64 of milli-units
# (kubernetes/kubernetes pkg/controller/podautoscaler/replica_calculator.go), so a value beyond
# it can never be served faithfully.
_HIGHEST = Quantity.from_milli((1 << 63) - 1)
_LOWEST = Quantity.from_milli(-(1 << 63))
_RANGE = ("must be between -9223372036854775808m and 9223372036854775807m (the int64 of "
          "milli-units the HPA controller reads)")


def _value_cell(o: Obj, now: TableClock) -> str:
    value = (o.get("spec") or {}).get("value")
    return "" if value is None else str(value)


def _labels_cell(o: Obj, now: TableClock) -> str:
    labels = (o.get("spec") or {}).get("labels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>"


def _columns() -> tuple[Column, ...]:
    return (
        Column("Name", lambda o, n: (o.get("metadata") or {}).get("name") or "", format="name",
               description="Name of the ExternalMetric object."),
        Column("Metric", lambda o, n: metric_name(o), description="The metric name HPAs ask for."),
        Column("Value", _value_cell, description="The current value (a quantity)."),
        Column("Labels", _labels_cell, description="The series' labels."),
        Column("Age", lambda o, n: n.age((o.get("metadata") or {}).get("creationTimestamp")),
               description="Time since creation."),
    )


EXTERNAL_METRIC_COLUMNS = _columns()
