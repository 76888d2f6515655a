"""`kubectl get` columns of NetworkPolicies, IngressClasses, PriorityClasses, LimitRanges,
ResourceQuotas, StorageClasses, PersistentVolumes and PersistentVolumeClaims, as upstream's
printers compute them (pkg/printers/internalversion/printers.go).

Why apart: these kinds came together (:mod:`pyhpa.api.schemas.policy_kinds`); they share the
name and age cells and nothing else with the others.
"""

from __future__ import annotations

from types import MappingProxyType

from typing import Any

from pyhpa.api.quantity import Quantity
from pyhpa.api.selectors import format_label_selector
from pyhpa.cluster.apiserver.columns import Column, TableClock, age_col, created_at_col, name_col

Obj = dict[str, Any]
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
_MODES = MappingProxyType({"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX",
          "ReadWriteOncePod": "RWOP"})


def _d(o: Any, *path: str) -> Any:
    for p in path:
        o = o.get(p) if isinstance(o, dict) else None
    return o


NETWORKPOLICY_COLUMNS = (
    name_col(),
    Column("Pod-Selector", lambda o, n: format_label_selector(_d(o, "spec", "podSelector") or {}),
           description="Selects the pods to which this NetworkPolicy object applies."),
    age_col(),
)


def _parameters(o: Obj, now: TableClock) -> str:
    p = _d(o, "spec", "parameters")
    if not isinstance(p, dict):
        return "<none>"
    kind = p.get("kind") or ""
    if p.get("apiGroup") is not None:
        kind += "." + str(p["apiGroup"])
    return f"{kind}/{p.get('name') or ''}"


INGRESSCLASS_COLUMNS = (
    name_col(),
    Column("Controller", lambda o, n: _d(o, "spec", "controller") or "",
           description="Controller that is responsible for handling this class."),
    Column("Parameters", _parameters, description="A reference to a resource with additional "
                                                  "parameters."),
    age_col(),
)

PRIORITYCLASS_COLUMNS = (
    name_col(),
    Column("Value", lambda o, n: o.get("value") or 0, type="integer",
           description="The value of this priority class."),
    Column("Global-Default", lambda o, n: bool(o.get("globalDefault")), type="boolean",
           description="globalDefault specifies whether this PriorityClass should be "
                       "considered as the default priority."),
    age_col(),
    Column("PreemptionPolicy", lambda o, n: o.get("preemptionPolicy") or "",
           description="PreemptionPolicy is the Policy for preempting pods with lower "
                       "priority."),
)

LIMITRANGE_COLUMNS = (name_col(), created_at_col())


def _quota_cell(limits: bool):
    def cell(o: Obj, now: TableClock) -> str:
        hard = _d(o, "status", "hard") or _d(o, "spec", "hard") or {}
        used = _d(o, "status", "used") or {}
        parts = []
        for res in sorted(hard):
            if res.startswith("limits.") != limits:
                continue
            u = used.get(res, "0")
            parts.append(f"{res}: {_canonical(u)}/{_canonical(hard[res])}")
        return ", ".join(parts)
    return cell


def _canonical(q: Any) -> str:
    try:
        return str(Quantity.parse(str(q)))
    except Exception:  # noqa: BLE001 - shown as stored
        return str(q)


RESOURCEQUOTA_COLUMNS = (
    name_col(),
    age_col(),
    Column("Request", _quota_cell(False), description="Request represents a minimum amount of "
                                                      "cpu/memory that a container may consume."),
    Column("Limit", _quota_cell(True), description="Limits control the maximum amount of "
                                                   "cpu/memory that a container may use "
                                                   "independent of contention on the node."),
)


def _class_name(o: Obj, now: TableClock) -> str:
    name = _d(o, "metadata", "name") or ""
    annotations = _d(o, "metadata", "annotations") or {}
    return name + " (default)" if annotations.get(DEFAULT_CLASS) == "true" else name


STORAGECLASS_COLUMNS = (
    Column("Name", _class_name, format="name", description="Name must be unique within a "
                                                           "namespace."),
    Column("Provisioner", lambda o, n: o.get("provisioner") or "",
           description="Indicates the type of the provisioner."),
    Column("ReclaimPolicy", lambda o, n: o.get("reclaimPolicy") or "Delete",
           description="Dynamically provisioned PersistentVolumes of this storage class are "
                       "created with this reclaimPolicy. Defaults to Delete."),
    Column("VolumeBindingMode", lambda o, n: o.get("volumeBindingMode") or "Immediate",
           description="VolumeBindingMode indicates how PersistentVolumeClaims should be "
                       "provisioned and bound. When unset, VolumeBindingImmediate is used."),
    Column("AllowVolumeExpansion", lambda o, n: bool(o.get("allowVolumeExpansion")),
           type="boolean", description="AllowVolumeExpansion shows whether the storage class "
                                       "allow volume expand."),
    age_col(),
)


def _modes(modes: Any) -> str:
    return ",".join(_MODES.get(m, m) for m in modes or () if isinstance(m, str))


def _claim(o: Obj, now: TableClock) -> str:
    ref = _d(o, "spec", "claimRef")
    return f"{ref.get('namespace') or ''}/{ref.get('name') or ''}" if isinstance(ref, dict) \
        else ""


def _class_columns(storage_class: str, what: str) -> tuple[Column, Column]:
    """The StorageClass and VolumeAttributesClass columns of a volume or a claim (``what``)."""
    return (Column("StorageClass", lambda o, n: _d(o, "spec", "storageClassName") or "",
                   description=storage_class),
            # KEP-3751's VolumeAttributesClass API (1.29) brought this column.
            Column("VolumeAttributesClass",
                   lambda o, n: _d(o, "spec", "volumeAttributesClassName") or "<unset>",
                   description=f"VolumeAttributesClassName of the {what}.", since=29))


PV_COLUMNS = (
    name_col(),
    Column("Capacity", lambda o, n: _canonical(_d(o, "spec", "capacity", "storage") or "0"),
           description="Capacity of the volume."),
    Column("Access Modes", lambda o, n: _modes(_d(o, "spec", "accessModes")),
           description="AccessModes contains all ways the volume can be mounted."),
    Column("Reclaim Policy", lambda o, n: _d(o, "spec", "persistentVolumeReclaimPolicy") or "",
           description="What happens to a persistent volume when released from its claim."),
    Column("Status", lambda o, n: _d(o, "status", "phase") or "",
           description="Phase indicates if a volume is available, bound to a claim, or "
                       "released by a claim."),
    Column("Claim", _claim, description="ClaimRef is part of a bi-directional binding between "
                                        "PersistentVolume and PersistentVolumeClaim."),
    *_class_columns("StorageClassName is the name of StorageClass to which this persistent "
                    "volume belongs.", "volume"),
    Column("Reason", lambda o, n: _d(o, "status", "reason") or "",
           description="Reason is a brief CamelCase string that describes any failure."),
    age_col(),
    Column("VolumeMode", lambda o, n: _d(o, "spec", "volumeMode") or "", priority=1,
           description="volumeMode defines if a volume is intended to be used with a formatted "
                       "filesystem or to remain in raw block state."),
)

PVC_COLUMNS = (
    name_col(),
    Column("Status", lambda o, n: "Terminating" if _d(o, "metadata", "deletionTimestamp")
           else _d(o, "status", "phase") or "",
           description="Phase represents the current phase of PersistentVolumeClaim."),
    Column("Volume", lambda o, n: _d(o, "spec", "volumeName") or "",
           description="VolumeName is the binding reference to the PersistentVolume backing "
                       "this claim."),
    Column("Capacity", lambda o, n: _canonical(_d(o, "status", "capacity", "storage"))
           if _d(o, "status", "capacity", "storage") else "",
           description="Capacity represents the actual resources of the underlying volume."),
    Column("Access Modes", lambda o, n: _modes(_d(o, "status", "accessModes")),
           description="AccessModes contains all ways the volume can be mounted."),
    *_class_columns("StorageClassName is the name of the StorageClass required by the claim.",
                    "claim"),
    age_col(),
    Column("VolumeMode", lambda o, n: _d(o, "spec", "volumeMode") or "", priority=1,
           description="volumeMode defines what type of volume is required by the claim."),
)
