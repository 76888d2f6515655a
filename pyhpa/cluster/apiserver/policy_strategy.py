"""Write rules of the policy kinds (:mod:`pyhpa.api.schemas.policy_kinds`): upstream's defaults
and the checks of pkg/apis/{networking,scheduling,core,storage}/validation, with their messages.

Why: these kinds act at admission (:mod:`.admission`); one stored with a bound that contradicts
itself, a reserved priority, or a claim without a size would make every pod admitted after it
behave as no real cluster lets it.
"""

from __future__ import annotations

from types import MappingProxyType

import ipaddress
from typing import Any

from pyhpa.api.quantity import Quantity
from pyhpa.api.field_errors import cause
from pyhpa.cluster.apiserver.strategies import Strategy
from pyhpa.api.workload_validation import validate_label_selector

Obj = dict[str, Any]
Cause = dict[str, str]
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
SYSTEM_PRIORITIES = MappingProxyType({"system-node-critical": 2000001000, "system-cluster-critical": 2000000000})
HIGHEST_USER_PRIORITY = 1000000000


def _d(o: Any, key: str) -> Obj:
    v = o.get(key) if isinstance(o, dict) else None
    return v if isinstance(v, dict) else {}


def _not_supported(field: str, value: Any, allowed: tuple[str, ...]) -> Cause:
    shown = ", ".join(f'"{a}"' for a in allowed)
    return {"reason": "FieldValueNotSupported", "field": field,
            "message": f'Unsupported value: "{value}": supported values: {shown}'}


def _q(v: Any) -> Quantity | None:
    try:
        return Quantity.parse(str(v))
    except Exception:  # noqa: BLE001 - the schema reports a value that is not a quantity
        return None


class NetworkPolicyStrategy(Strategy):
    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = super().validate(obj, old)
        spec = _d(obj, "spec")
        causes += validate_label_selector(_d(spec, "podSelector"), "spec.podSelector")
        for i, t in enumerate(spec.get("policyTypes") or []):
            if t not in ("Ingress", "Egress"):
                causes.append(_not_supported(f"spec.policyTypes[{i}]", t, ("Egress", "Ingress")))
        for direction, peers_key in (("ingress", "from"), ("egress", "to")):
            for i, rule in enumerate(spec.get(direction) or []):
                at = f"spec.{direction}[{i}]"
                for j, port in enumerate(_d({"r": rule}, "r").get("ports") or []):
                    proto = port.get("protocol") if isinstance(port, dict) else None
                    if proto is not None and proto not in ("TCP", "UDP", "SCTP"):
                        causes.append(_not_supported(f"{at}.ports[{j}].protocol", proto,
                                                     ("SCTP", "TCP", "UDP")))
                for j, peer in enumerate(_d({"r": rule}, "r").get(peers_key) or []):
                    causes += _peer_causes(peer, f"{at}.{peers_key}[{j}]")
        return causes


def _peer_causes(peer: Any, at: str) -> list[Cause]:
    if not isinstance(peer, dict):
        return []
    given = [k for k in ("podSelector", "namespaceSelector", "ipBlock") if peer.get(k) is not None]
    if not given:
        return [cause(at, "Required", detail="must specify a peer")]
    if "ipBlock" in given and len(given) > 1:
        return [cause(at, "Forbidden", detail="may not specify more than 1 peer")]
    block = _d(peer, "ipBlock")
    if block:
        cidr = str(block.get("cidr") or "")
        try:
            ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            return [cause(f"{at}.ipBlock.cidr", "Invalid", cidr,
                          "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")]
    return []


class PriorityClassStrategy(Strategy):
    """Reserved names and values; ``preemptionPolicy`` defaulted; ``value`` immutable."""

    def _default(self, obj: Obj) -> None:
        obj.setdefault("preemptionPolicy", "PreemptLowerPriority")

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = super().validate(obj, old)
        name = _d(obj, "metadata").get("name") or ""
        value = obj.get("value")
        if name.startswith("system-") and name not in SYSTEM_PRIORITIES:
            causes.append(cause("metadata.name", "Invalid", name, "priority class names with "
                                "'system-' prefix are reserved for system use only"))
        elif name in SYSTEM_PRIORITIES and value != SYSTEM_PRIORITIES[name]:
            causes.append(cause("metadata.name", "Invalid", name, "the value of system "
                                f"priority class must be {SYSTEM_PRIORITIES[name]}"))
        elif isinstance(value, int) and value > HIGHEST_USER_PRIORITY:
            causes.append(cause("value", "Forbidden", detail="maximum allowed value of a user "
                                f"defined priority is {HIGHEST_USER_PRIORITY}"))
        if obj.get("preemptionPolicy") not in ("PreemptLowerPriority", "Never"):
            causes.append(_not_supported("preemptionPolicy", obj.get("preemptionPolicy"),
                                         ("Never", "PreemptLowerPriority")))
        if old is not None and old.get("value") != value:
            causes.append(cause("value", "Forbidden", detail="may not be changed in an update."))
        if obj.get("globalDefault") and self.store is not None:
            from pyhpa.cluster.apiserver import resources as R
            for other in self.store.list(R.PRIORITY_CLASSES.key).items:
                if other.get("globalDefault") and _d(other, "metadata").get("name") != name:
                    causes.append(cause("globalDefault", "Invalid", shown="true", detail=(
                        "globalDefault is already set by PriorityClass "
                        f"{_d(other, 'metadata').get('name')}")))
        return causes


class LimitRangeStrategy(Strategy):
    """SetDefaults_LimitRangeItem, and ValidateLimitRange's ordering checks."""

    def _default(self, obj: Obj) -> None:
        for item in _d(obj, "spec").get("limits") or []:
            if not isinstance(item, dict) or item.get("type") != "Container":
                continue
            default = item.setdefault("default", {})
            request = item.setdefault("defaultRequest", {})
            for k, v in (item.get("max") or {}).items():
                default.setdefault(k, v)
            for k, v in default.items():
                request.setdefault(k, v)
            for k, v in (item.get("min") or {}).items():
                request.setdefault(k, v)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = super().validate(obj, old)
        for i, item in enumerate(_d(obj, "spec").get("limits") or []):
            if not isinstance(item, dict):
                continue
            at = f"spec.limits[{i}]"
            kind = item.get("type")
            if kind not in ("Container", "Pod", "PersistentVolumeClaim"):
                causes.append(_not_supported(f"{at}.type", kind or "",
                                             ("Container", "PersistentVolumeClaim", "Pod")))
            if kind == "Pod":
                for key in ("default", "defaultRequest"):
                    if item.get(key):
                        causes.append(cause(f"{at}.{key}", "Forbidden", detail=(
                            "may not be specified when `type` is 'Pod'")))
            causes += _ordering(item, at)
        return causes


def _ordering(item: Obj, at: str) -> list[Cause]:
    out: list[Cause] = []
    lo, hi = item.get("min") or {}, item.get("max") or {}
    default, request = item.get("default") or {}, item.get("defaultRequest") or {}
    for k in sorted(set(lo) | set(hi) | set(default) | set(request)):
        mn, mx, df, rq = (_q(d.get(k)) if k in d else None for d in (lo, hi, default, request))
        checks = ((mn, mx, "min", f"min value {{a}} is greater than max value {{b}}"),
                  (mn, df, "default", "min value {a} is greater than default value {b}"),
                  (df, mx, "default", "default value {a} is greater than max value {b}"),
                  (mn, rq, "defaultRequest", "min value {a} is greater than default request "
                                             "value {b}"),
                  (rq, mx, "defaultRequest", "default request value {a} is greater than max "
                                             "value {b}"),
                  (rq, df, "defaultRequest", "default request value {a} is greater than "
                                             "default limit value {b}"))
        for a, b, field, text in checks:
            if a is not None and b is not None and a.cmp(b) > 0:
                shown = {"min": a, "default": b, "defaultRequest": b}[field]
                out.append(cause(f"{at}.{field}[{k}]", "Invalid", str(shown),
                                 text.format(a=a, b=b)))
    return out


class ResourceQuotaStrategy(Strategy):
    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = super().validate(obj, old)
        for k, v in (_d(obj, "spec").get("hard") or {}).items():
            q = _q(v)
            if q is not None and q.cmp(0) < 0:
                causes.append(cause(f"spec.hard[{k}]", "Invalid", str(v),
                                    "must be greater than or equal to 0"))
        return causes


class StorageClassStrategy(Strategy):
    def _default(self, obj: Obj) -> None:
        obj.setdefault("reclaimPolicy", "Delete")
        obj.setdefault("volumeBindingMode", "Immediate")

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = super().validate(obj, old)
        if not obj.get("provisioner"):
            causes.append(cause("provisioner", "Required"))
        if obj.get("reclaimPolicy") not in ("Delete", "Retain"):
            causes.append(_not_supported("reclaimPolicy", obj.get("reclaimPolicy"),
                                         ("Delete", "Retain")))
        if obj.get("volumeBindingMode") not in ("Immediate", "WaitForFirstConsumer"):
            causes.append(_not_supported("volumeBindingMode", obj.get("volumeBindingMode"),
                                         ("Immediate", "WaitForFirstConsumer")))
        if old is not None:
            for field in ("parameters", "provisioner", "reclaimPolicy"):
                if obj.get(field) != old.get(field):
                    causes.append(cause(field, "Forbidden",
                                        detail=f"updates to {field} are forbidden."))
            if obj.get("volumeBindingMode") != old.get("volumeBindingMode"):
                causes.append(cause("volumeBindingMode", "Invalid", obj.get("volumeBindingMode"),
                                    "field is immutable"))
        return causes


class PersistentVolumeStrategy(Strategy):
    def prepare_create(self, obj: Obj) -> None:
        super().prepare_create(obj)
        obj["status"] = {"phase": "Pending"}
        obj.setdefault("spec", {}).setdefault("persistentVolumeReclaimPolicy", "Retain")
        obj["spec"].setdefault("volumeMode", "Filesystem")


class PersistentVolumeClaimStrategy(Strategy):
    """The DefaultStorageClass admission plugin (an unset class becomes the default one),
    ``volumeMode`` defaulted, a size and an access mode required, the spec frozen once bound."""

    def prepare_create(self, obj: Obj) -> None:
        super().prepare_create(obj)
        obj["status"] = {"phase": "Pending"}
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict) and "storageClassName" not in spec and self.store is not None:
            from pyhpa.cluster.apiserver import resources as R
            for sc in self.store.list(R.STORAGE_CLASSES.key).items:
                if (_d(sc, "metadata").get("annotations") or {}).get(DEFAULT_CLASS) == "true":
                    spec["storageClassName"] = _d(sc, "metadata").get("name")
                    break

    def _default(self, obj: Obj) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.setdefault("volumeMode", "Filesystem")

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = super().validate(obj, old)
        spec = _d(obj, "spec")
        if not spec.get("accessModes"):
            causes.append(cause("spec.accessModes", "Required",
                                detail="at least 1 access mode is required"))
        for i, m in enumerate(spec.get("accessModes") or []):
            if m not in ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"):
                causes.append(_not_supported(f"spec.accessModes[{i}]", m, (
                    "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")))
        size = _d(_d(spec, "resources"), "requests").get("storage")
        if size is None:
            causes.append(cause("spec.resources[storage]", "Required"))
        elif (q := _q(size)) is not None and q.cmp(0) <= 0:
            causes.append(cause("spec.resources[storage]", "Invalid", str(size),
                                "must be greater than zero"))
        if old is not None and _d(old, "status").get("phase") == "Bound":
            frozen = {k: v for k, v in _d(old, "spec").items()
                      if k not in ("resources", "volumeAttributesClassName", "volumeName")}
            now = {k: v for k, v in spec.items()
                   if k not in ("resources", "volumeAttributesClassName", "volumeName")}
            if frozen != now:
                causes.append(cause("spec", "Forbidden", detail=(
                    "spec is immutable after creation except resources.requests and "
                    "volumeAttributesClassName for bound claims")))
        return causes
