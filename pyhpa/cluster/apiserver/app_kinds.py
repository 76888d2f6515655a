"""Write rules of ConfigMaps, Secrets and PodDisruptionBudgets (ServiceAccounts and Ingresses
use the generic strategy): the checks and defaults a real API server applies to them.

Why: ``kubectl apply -f app.yaml`` of a typical application carries these kinds; a cluster that
stores a Secret whose ``data`` is not base64, or a ConfigMap key a pod could never mount, would
accept manifests a real one rejects. Secret values never reach a log or an error message here.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from pyhpa.api import spec_checks
from pyhpa.api.field_errors import cause
from pyhpa.api.names import is_config_map_key
from pyhpa.cluster.apiserver.status import APIError
from pyhpa.cluster.apiserver.strategies import Strategy

Obj = dict[str, Any]

MAX_DATA_BYTES = 1024 * 1024  # upstream's MaxSecretSize, also the ConfigMap limit
_BASE64 = re.compile(r"[A-Za-z0-9+/=]")
_PERCENT = re.compile(r"^[0-9]+%$")


def _base64_error(value: Any) -> str | None:
    """Go's decoding error for a ``[]byte`` field (the value itself is never echoed)."""
    if not isinstance(value, str):
        return None  # reported by _check_bytes_map as Go's type error
    for i, ch in enumerate(value):
        if not _BASE64.match(ch) and ch not in "\r\n":
            return f"illegal base64 data at input byte {i}"
    try:
        base64.b64decode(value.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return f"illegal base64 data at input byte {len(value.rstrip('=')) // 4 * 4}"
    return None


def _check_bytes_map(res_kind: str, obj: Obj, field: str) -> None:
    """A map of base64 values decodes, or the request is a 400 as upstream's decoder gives."""
    data = obj.get(field)
    if data is None:
        return
    if not isinstance(data, dict):
        raise APIError(400, "BadRequest", f'{res_kind} in version "v1" cannot be handled as a '
                       f"{res_kind}: json: cannot unmarshal array into Go struct field "
                       f"{res_kind}.{field} of type map[string][]uint8")
    for value in data.values():
        if not isinstance(value, str):
            go_type = {bool: "bool", dict: "object", list: "array"}.get(type(value), "number")
            raise APIError(400, "BadRequest", f'{res_kind} in version "v1" cannot be handled '
                           f"as a {res_kind}: json: cannot unmarshal {go_type} into Go struct "
                           f"field {res_kind}.{field} of type []uint8")
        err = _base64_error(value)
        if err:
            raise APIError(400, "BadRequest", f'{res_kind} in version "v1" cannot be handled '
                           f"as a {res_kind}: {err}")


def _keys_and_size(field: str, data: Any, decoded: bool) -> tuple[list[dict[str, str]], int]:
    causes: list[dict[str, str]] = []
    size = 0
    for key, value in (data or {}).items():
        causes.extend(cause(f"{field}[{key}]", "Invalid", key, m) for m in is_config_map_key(key))
        if isinstance(value, str):
            size += len(key) + (len(base64.b64decode(value)) if decoded else len(value.encode()))
    return causes, size


def _immutable_causes(obj: Obj, old: Obj | None, fields: tuple[str, ...]) -> list[dict[str, str]]:
    if old is None or not old.get("immutable"):
        return []
    out = []
    for f in fields:
        if obj.get(f) != old.get(f):
            out.append(cause(f, "Forbidden", detail="field is immutable when `immutable` is set"))
    if not obj.get("immutable"):
        out.append(cause("immutable", "Forbidden",
                         detail="field is immutable when `immutable` is set"))
    return out


class ConfigMapStrategy(Strategy):
    def to_storage(self, obj: Obj, version: str) -> Obj:
        _check_bytes_map("ConfigMap", obj, "binaryData")
        return super().to_storage(obj, version)

    def validate(self, obj: Obj, old: Obj | None) -> list[dict[str, str]]:
        causes = super().validate(obj, old)
        data_causes, size = _keys_and_size("data", obj.get("data"), decoded=False)
        bin_causes, bin_size = _keys_and_size("binaryData", obj.get("binaryData"), decoded=True)
        causes += data_causes + bin_causes
        for key in set(obj.get("data") or {}) & set(obj.get("binaryData") or {}):
            causes.append(cause(f"data[{key}]", "Invalid", key,
                                "duplicate of key present in binaryData"))
        if size + bin_size > MAX_DATA_BYTES:
            causes.append({"reason": "FieldValueTooLong", "field": "",
                           "message": f"Too long: must have at most {MAX_DATA_BYTES} bytes"})
        return causes + _immutable_causes(obj, old, ("data", "binaryData"))


class SecretStrategy(Strategy):
    """``stringData`` is merged into ``data`` (its values win) and dropped, type defaults to
    Opaque, and ``type`` cannot change - as upstream's Secret strategy and defaulting do."""

    def to_storage(self, obj: Obj, version: str) -> Obj:
        _check_bytes_map("Secret", obj, "data")
        string_data = obj.pop("stringData", None)
        if isinstance(string_data, dict) and string_data:
            data = obj.get("data") if isinstance(obj.get("data"), dict) else {}
            for key, value in string_data.items():
                data[key] = base64.b64encode(str(value).encode()).decode()
            obj["data"] = data
        if not obj.get("type"):
            obj["type"] = "Opaque"
        return super().to_storage(obj, version)

    def validate(self, obj: Obj, old: Obj | None) -> list[dict[str, str]]:
        causes = super().validate(obj, old)
        data_causes, size = _keys_and_size("data", obj.get("data"), decoded=True)
        causes += data_causes
        if size > MAX_DATA_BYTES:
            causes.append({"reason": "FieldValueTooLong", "field": "data",
                           "message": f"Too long: must have at most {MAX_DATA_BYTES} bytes"})
        if old is not None and obj.get("type") != old.get("type"):
            causes.append(cause("type", "Invalid", obj.get("type"), "field is immutable"))
        return causes + _immutable_causes(obj, old, ("data",))


def _int_or_percent_causes(path: str, value: Any) -> list[dict[str, str]]:
    if value is None:
        return []
    if isinstance(value, int) and not isinstance(value, bool):
        return ([cause(path, "Invalid", value, "must be greater than or equal to 0")]
                if value < 0 else [])
    if isinstance(value, str) and _PERCENT.match(value):
        if int(value[:-1]) > 100:
            return [cause(path, "Invalid", value, "must not be greater than 100%")]
        return []
    return [cause(path, "Invalid", value, "must be an integer or percentage (e.g '5%')")]


class PodDisruptionBudgetStrategy(Strategy):
    def validate(self, obj: Obj, old: Obj | None) -> list[dict[str, str]]:
        causes = super().validate(obj, old)
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
            causes.append(cause("spec", "Invalid", _go_struct(spec),
                                "minAvailable and maxUnavailable cannot be both set"))
        causes += _int_or_percent_causes("spec.minAvailable", spec.get("minAvailable"))
        causes += _int_or_percent_causes("spec.maxUnavailable", spec.get("maxUnavailable"))
        return causes


def _go_struct(spec: Obj) -> str:
    """A short stand-in for Go's ``%v`` of the spec (only shown in the error)."""
    return "{" + " ".join(f"{k}:{v}" for k, v in sorted(spec.items()) if k != "selector") + "}"


class IngressStrategy(Strategy):
    def validate(self, obj: Obj, old: Obj | None) -> list[dict[str, str]]:
        causes = super().validate(obj, old)
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        for i, rule in enumerate(spec.get("rules") or []):
            paths = ((rule or {}).get("http") or {}).get("paths") or []
            for j, path in enumerate(paths):
                at = f"spec.rules[{i}].http.paths[{j}]"
                if not isinstance(path, dict):
                    continue
                if not path.get("pathType"):
                    causes.append(cause(at + ".pathType", "Required",
                                        detail="pathType must be specified"))
                elif path["pathType"] not in ("Exact", "Prefix", "ImplementationSpecific"):
                    causes.append({"reason": "FieldValueNotSupported",
                                   "field": at + ".pathType",
                                   "message": f'Unsupported value: "{path["pathType"]}": '
                                              'supported values: "Exact", '
                                              '"ImplementationSpecific", "Prefix"'})
                else:
                    causes += spec_checks.validate_ingress_path(path, at)
        if isinstance(spec.get("defaultBackend"), dict):
            causes += spec_checks.validate_ingress_backend(spec["defaultBackend"],
                                                           "spec.defaultBackend")
        return causes
