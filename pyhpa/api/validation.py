"""API validation of HorizontalPodAutoscalers and Scales, with upstream's exact messages.

Why exact: users (and kubectl's output) see these strings verbatim, and scripts match on them.
Rules, their order, field paths and texts follow hpa-api.md §3 (Kubernetes 1.37: the
declarative ``minReplicas``/``maxReplicas`` minimum rules are enforced, so their errors come
after the hand-written ones and ``maxReplicas: 0`` reads ``Required value``).

Also here: :class:`InvalidError` (the 422 ``Status`` and kubectl's rendering of it) and the
registry strategy hooks (§5) the embedded API server calls before validating a write.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from dataclasses import dataclass
from typing import Any, Iterable

from pyhpa.api.features import FeatureGates
from pyhpa.api.quantity import Quantity
from pyhpa.api.types import (
    CrossVersionObjectReference,
    HorizontalPodAutoscaler,
    HorizontalPodAutoscalerStatus,
    HPAScalingRules,
    MetricIdentifier,
    MetricSpec,
    MetricTarget,
    ObjectMeta,
    Scale,
)

__all__ = [
    "FieldError",
    "InvalidError",
    "REQUIRED",
    "INVALID",
    "NOT_SUPPORTED",
    "FORBIDDEN",
    "INTERNAL",
    "TOO_LONG",
    "validate_hpa",
    "validate_hpa_status_update",
    "validate_scale",
    "validate_object_meta",
    "validate_object_meta_update",
    "prepare_for_create",
    "prepare_for_update",
    "prepare_for_status_update",
    "drop_disabled_fields",
    "go_quote",
    "go_json",
]

REQUIRED = "Required"
INVALID = "Invalid"
NOT_SUPPORTED = "NotSupported"
FORBIDDEN = "Forbidden"
INTERNAL = "Internal"
TOO_LONG = "TooLong"

_WORDS = {
    REQUIRED: "Required value",
    INVALID: "Invalid value",
    NOT_SUPPORTED: "Unsupported value",
    FORBIDDEN: "Forbidden",
    INTERNAL: "Internal error",
    TOO_LONG: "Too long",
}
_CAUSE = {
    REQUIRED: "FieldValueRequired",
    INVALID: "FieldValueInvalid",
    NOT_SUPPORTED: "FieldValueNotSupported",
    FORBIDDEN: "FieldValueForbidden",
    INTERNAL: "InternalError",
    TOO_LONG: "FieldValueTooLong",
}
_NO_VALUE = (REQUIRED, FORBIDDEN, INTERNAL, TOO_LONG)


# --------------------------------------------------------------------------- rendering


def go_quote(s: str) -> str:
    """Go's ``strconv.Quote`` (``%q``): printable Unicode kept, the rest escaped."""
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch.isprintable() and ch != "\u00ad":
            out.append(ch)
        else:
            code = ord(ch)
            esc = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}.get(code)
            if esc:
                out.append(esc)
            elif code < 0x80:
                out.append(f"\\x{code:02x}")
            elif code < 0x10000:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def go_json(value: Any) -> str:
    """Go's ``json.Marshal`` of a plain value (``<``, ``>``, ``&`` escaped)."""
    if isinstance(value, Quantity):
        value = str(value)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return (
        text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    )


@dataclass(frozen=True)
class FieldError:
    """One ``field.Error``: ``type`` is REQUIRED/INVALID/NOT_SUPPORTED/FORBIDDEN/INTERNAL/TOO_LONG.

    ``json_value`` marks bad values Go prints through JSON (named string types such as enums,
    structs, lists); plain strings print Go-quoted, ints and bools bare, Quantities as JSON.
    """

    type: str
    field: str
    bad_value: Any = None
    detail: str = ""
    json_value: bool = False

    def body(self) -> str:
        """The text after ``<path>: `` (the ``message`` of a Status cause)."""
        s = _WORDS[self.type]
        if self.type not in _NO_VALUE:
            s += ": " + self._value_text()
        if self.detail:
            s += ": " + self.detail
        return s

    def _value_text(self) -> str:
        v = self.bad_value
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, Verbatim):
            return v.text
        if isinstance(v, (int, float)):
            return str(v)
        if isinstance(v, str) and not self.json_value:
            return go_quote(v)
        return go_json(v)

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}" if self.field else self.body()


def _required(path: str, detail: str = "") -> FieldError:
    return FieldError(REQUIRED, path, None, detail)


def _invalid(path: str, value: Any, detail: str, *, json_value: bool = False) -> FieldError:
    return FieldError(INVALID, path, value, detail, json_value)


def _forbidden(path: str, detail: str) -> FieldError:
    return FieldError(FORBIDDEN, path, None, detail)


def _not_supported(path: str, value: Any, supported: Iterable[str]) -> FieldError:
    detail = "supported values: " + ", ".join(go_quote(s) for s in supported)
    return FieldError(NOT_SUPPORTED, path, value, detail, json_value=True)


def dedupe(errors: Iterable[FieldError]) -> list[FieldError]:
    """Drop errors whose rendered text repeats an earlier one (``ToAggregate`` does the same)."""
    seen: set[str] = set()
    out = []
    for e in errors:
        text = str(e)
        if text not in seen:
            seen.add(text)
            out.append(e)
    return out


def render(errors: list[FieldError]) -> str:
    """The aggregate text: one error alone, several as ``[e1, e2]``."""
    texts = [str(e) for e in dedupe(errors)]
    if len(texts) == 1:
        return texts[0]
    return "[" + ", ".join(texts) + "]"


class InvalidError(Exception):
    """A rejected write: carries the field errors and renders them as the API server and
    kubectl do."""

    def __init__(
        self,
        errors: list[FieldError],
        *,
        name: str | None = "",
        kind: str = "HorizontalPodAutoscaler",
        group: str = "autoscaling",
    ) -> None:
        self.errors = dedupe(errors)
        self.name = name or ""
        self.kind = kind
        self.group = group
        super().__init__(self.kubectl_text())

    @property
    def message(self) -> str:
        """The Status ``message``: ``HorizontalPodAutoscaler.autoscaling "web" is invalid: ...``."""
        qualified = f"{self.kind}.{self.group}" if self.group else self.kind
        return f"{qualified} {go_quote(self.name)} is invalid: {render(self.errors)}"

    def status(self) -> dict[str, Any]:
        """The 422 ``Status`` body, keys in Go's order."""
        details: dict[str, Any] = {}
        if self.name:
            details["name"] = self.name
        if self.group:
            details["group"] = self.group
        details["kind"] = self.kind
        details["causes"] = [
            {"reason": _CAUSE[e.type], "message": e.body(), "field": e.field} for e in self.errors
        ]
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": "Invalid",
            "details": details,
            "code": 422,
        }

    def kubectl_text(self) -> str:
        """What kubectl prints for this response (without the ``error: `` prefix)."""
        head = f"The {self.kind} {go_quote(self.name)} is invalid: "
        if len(self.errors) == 1:
            return head + str(self.errors[0])
        return head + "".join("\n* " + str(e) for e in self.errors)

    def __str__(self) -> str:
        return self.kubectl_text()


# --------------------------------------------------------------------------- name rules

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = _DNS1123_LABEL + "(\\." + _DNS1123_LABEL + ")*"
_QUALIFIED_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = "(" + _QUALIFIED_NAME + ")?"
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL + r"\Z")
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN + r"\Z")
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME + r"\Z")
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE + r"\Z")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return msg + " (regex used for validation is '" + fmt + "')"
    msg += " (e.g. "
    for i, ex in enumerate(examples):
        if i > 0:
            msg += " or "
        msg += "'" + ex + "', "
    return msg + "regex used for validation is '" + fmt + "')"


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


@lru_cache(maxsize=4096)  # names repeat across objects; results are never mutated
def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(_max_len(63))
    if not _DNS1123_LABEL_RE.match(value):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                "and must start and end with an alphanumeric character",
                _DNS1123_LABEL,
                "my-name",
                "123-abc",
            )
        )
    return errs


@lru_cache(maxsize=4096)  # names repeat across objects; results are never mutated
def is_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append(_max_len(253))
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                "or '.', and must start and end with an alphanumeric character",
                _DNS1123_SUBDOMAIN,
                "example.com",
            )
        )
    return errs


_QN_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)


@lru_cache(maxsize=4096)  # names repeat across objects; results are never mutated
def is_qualified_name(value: str) -> list[str]:
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + _regex_error(_QN_MSG, _QUALIFIED_NAME, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len(63))
    if not _QUALIFIED_NAME_RE.match(name):
        errs.append("name part " + _regex_error(_QN_MSG, _QUALIFIED_NAME, "MyName", "my.name", "123-abc"))
    return errs


@lru_cache(maxsize=4096)  # names repeat across objects; results are never mutated
def is_valid_label_value(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(_max_len(63))
    if not _LABEL_VALUE_RE.match(value):
        errs.append(
            _regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
                "or '.', and must start and end with an alphanumeric character",
                _LABEL_VALUE,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return errs


def is_valid_path_segment_name(name: str) -> list[str]:
    if "/" not in name and "%" not in name and name not in (".", ".."):
        return []
    for bad in (".", ".."):
        if name == bad:
            return [f"may not be '{bad}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


# --------------------------------------------------------------------------- metadata

_TOTAL_ANNOTATION_SIZE = 256 * 1024


def _validate_labels(labels: dict[str, str] | None, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for k in sorted(labels or {}):  # Go ranges over a map: any order; sorted is stable
        errs.extend(_invalid(path, k, m) for m in is_qualified_name(k))
        errs.extend(_invalid(path, labels[k], m) for m in is_valid_label_value(labels[k]))  # type: ignore[index]
    return errs


def _validate_annotations(annotations: dict[str, str] | None, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    total = 0
    for k in sorted(annotations or {}):
        errs.extend(_invalid(path, k, m) for m in is_qualified_name(k.lower()))
        total += len(k.encode()) + len(annotations[k].encode())  # type: ignore[index]
    if total > _TOTAL_ANNOTATION_SIZE:
        errs.append(FieldError(TOO_LONG, path, None, f"may not be more than {_TOTAL_ANNOTATION_SIZE} bytes"))
    return errs


def _validate_finalizers(finalizers: list[str] | None, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for f in finalizers or []:
        errs.extend(_invalid(path, f, m) for m in is_qualified_name(f))
    if finalizers and "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(
            _invalid(path, list(finalizers), "finalizer orphan and foregroundDeletion cannot be both set", json_value=True)
        )
    return errs


def _validate_owner_references(meta: ObjectMeta, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    controller = ""
    for ref in meta.owner_references or []:
        version = ref.api_version.rsplit("/", 1)[-1] if ref.api_version.count("/") <= 1 else ""
        if not version:
            errs.append(_invalid(path + ".apiVersion", ref.api_version, "version must not be empty"))
        if not ref.kind:
            errs.append(_invalid(path + ".kind", ref.kind, "must not be empty"))
        if not ref.name:
            errs.append(_invalid(path + ".name", ref.name, "must not be empty"))
        if not ref.uid:
            errs.append(_invalid(path + ".uid", ref.uid, "must not be empty", json_value=True))
        if ref.api_version == "v1" and ref.kind == "Event":
            errs.append(_invalid(path, _owner_json(ref), "/v1, Kind=Event is disallowed from being an owner", json_value=True))
        if ref.controller:
            current = f"{ref.kind}/{ref.name}"
            if controller:
                errs.append(
                    _invalid(
                        path,
                        [_owner_json(r) for r in meta.owner_references or []],
                        'Only one reference can have Controller set to true. Found "true" in references for '
                        f"{controller} and {current}",
                        json_value=True,
                    )
                )
            else:
                controller = current
    return errs


def _owner_json(ref: Any) -> Any:
    import msgspec

    return msgspec.to_builtins(ref)


def validate_object_meta(meta: ObjectMeta, *, namespaced: bool = True, path: str = "metadata") -> list[FieldError]:
    """``ValidateObjectMeta`` for a create, with DNS-subdomain names."""
    errs: list[FieldError] = []
    if meta.generate_name:
        masked = meta.generate_name[:-1] + "a" if meta.generate_name.endswith("-") else meta.generate_name
        errs.extend(_invalid(path + ".generateName", meta.generate_name, m) for m in is_dns1123_subdomain(masked))
    if not meta.name:
        errs.append(_required(path + ".name", "name or generateName is required"))
    else:
        errs.extend(_invalid(path + ".name", meta.name, m) for m in is_dns1123_subdomain(meta.name))
    if namespaced:
        if not meta.namespace:
            errs.append(_required(path + ".namespace"))
        else:
            errs.extend(_invalid(path + ".namespace", meta.namespace, m) for m in is_dns1123_label(meta.namespace))
    elif meta.namespace:
        errs.append(_forbidden(path + ".namespace", "not allowed on this type"))
    errs.extend(_common_meta(meta, path))
    return errs


def _common_meta(meta: ObjectMeta, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if meta.generation is not None and meta.generation < 0:
        errs.append(_invalid(path + ".generation", meta.generation, "must be greater than or equal to 0"))
    errs.extend(_validate_labels(meta.labels, path + ".labels"))
    errs.extend(_validate_annotations(meta.annotations, path + ".annotations"))
    errs.extend(_validate_owner_references(meta, path + ".ownerReferences"))
    errs.extend(_validate_finalizers(meta.finalizers, path + ".finalizers"))
    return errs


def _go_time(dt: Any) -> str:
    # metav1.Time prints through time.Time.String().
    return dt.strftime("%Y-%m-%d %H:%M:%S +0000 UTC") if dt is not None else "null"


def validate_object_meta_update(new: ObjectMeta, old: ObjectMeta, path: str = "metadata") -> list[FieldError]:
    """``ValidateObjectMetaUpdate``: immutable identity fields plus the common checks."""
    errs: list[FieldError] = []
    if old.deletion_timestamp is not None:
        added = [f for f in new.finalizers or [] if f not in (old.finalizers or [])]
        if added:
            errs.append(
                _forbidden(path + ".finalizers", f"no new finalizers can be added if the object is being deleted, found new finalizers {_go_list(added)}")
            )
    if not new.resource_version:
        errs.append(_invalid(path + ".resourceVersion", new.resource_version or "", "must be specified for an update"))
    if (new.generation or 0) < (old.generation or 0):
        errs.append(_invalid(path + ".generation", new.generation or 0, "must not be decremented"))
    for attr, wire in (("name", "name"), ("namespace", "namespace")):
        if (getattr(new, attr) or "") != (getattr(old, attr) or ""):
            errs.append(_invalid(f"{path}.{wire}", getattr(new, attr) or "", "field is immutable"))
    if (new.uid or "") != (old.uid or ""):
        errs.append(_invalid(path + ".uid", new.uid or "", "field is immutable", json_value=True))
    for attr, wire in (("creation_timestamp", "creationTimestamp"), ("deletion_timestamp", "deletionTimestamp")):
        if getattr(new, attr) != getattr(old, attr):
            errs.append(FieldError(INVALID, f"{path}.{wire}", Verbatim(_go_time(getattr(new, attr))), "field is immutable"))
    if new.deletion_grace_period_seconds != old.deletion_grace_period_seconds:
        errs.append(
            _invalid(path + ".deletionGracePeriodSeconds", new.deletion_grace_period_seconds, "field is immutable")
        )
    errs.extend(_validate_finalizers(new.finalizers, path + ".finalizers"))
    errs.extend(_validate_labels(new.labels, path + ".labels"))
    errs.extend(_validate_annotations(new.annotations, path + ".annotations"))
    errs.extend(_validate_owner_references(new, path + ".ownerReferences"))
    if new.generation is not None and new.generation < 0:
        errs.append(_invalid(path + ".generation", new.generation, "must be greater than or equal to 0"))
    return errs


def _go_list(items: list[str]) -> str:
    return "[" + " ".join(items) + "]"


@dataclass(frozen=True)
class Verbatim:
    """A bad value Go prints through its ``String()`` method (e.g. a ``metav1.Time``)."""

    text: str

    def __str__(self) -> str:
        return self.text


# --------------------------------------------------------------------------- spec


@dataclass(frozen=True)
class _RefOptions:
    allow_empty_group: bool = False
    allow_invalid_api_version: bool = False


@dataclass(frozen=True)
class _Options:
    min_replicas_lower_bound: int = 1
    scale_target_ref: _RefOptions = _RefOptions()
    described_object: _RefOptions = _RefOptions(allow_empty_group=True)
    old_spec: Any = None  # for declarative ratcheting


METRIC_SOURCE_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
SELECT_POLICIES = ("Disabled", "Max", "Min")
POLICY_TYPES = ("Percent", "Pods")
MAX_STABILIZATION_WINDOW_SECONDS = 3600
MAX_PERIOD_SECONDS = 1800
SYNC_PERIOD_SECONDS_RANGE = (1, 3600)  # KEP-6003's spec.behavior.syncPeriodSeconds


def _parse_group(api_version: str) -> tuple[str | None, str | None]:
    """(group, error) of ``schema.ParseGroupVersion``."""
    if api_version in ("", "/"):
        return "", None
    n = api_version.count("/")
    if n == 0:
        return "", None
    if n == 1:
        return api_version.split("/", 1)[0], None
    return None, f"unexpected GroupVersion string: {api_version}"


def _api_version_fails(ref: CrossVersionObjectReference, allow_empty_group: bool) -> bool:
    group, err = _parse_group(ref.api_version or "")
    return err is not None or (group == "" and not allow_empty_group)


def validate_cross_version_object_reference(
    ref: CrossVersionObjectReference, path: str, opts: _RefOptions = _RefOptions()
) -> list[FieldError]:
    errs: list[FieldError] = []
    for attr in ("kind", "name"):
        value = getattr(ref, attr)
        if not value:
            errs.append(_required(f"{path}.{attr}"))
        else:
            errs.extend(_invalid(f"{path}.{attr}", value, m) for m in is_valid_path_segment_name(value))
    if not opts.allow_invalid_api_version:
        api_version = ref.api_version or ""
        group, err = _parse_group(api_version)
        if err is not None:
            errs.append(_invalid(path + ".apiVersion", api_version, err))
        elif group == "" and not opts.allow_empty_group:
            errs.append(_invalid(path + ".apiVersion", api_version, "apiVersion must specify API group"))
    return errs


def _validate_metric_identifier(ident: MetricIdentifier, path: str) -> list[FieldError]:
    if not ident.name:
        return [_required(path + ".name", "must specify a metric name")]
    return [_invalid(path + ".name", ident.name, m) for m in is_valid_path_segment_name(ident.name)]


def _validate_metric_target(t: MetricTarget, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not t.type:
        errs.append(_required(path + ".type", "must specify a metric target type"))
    if t.type not in ("Utilization", "Value", "AverageValue"):
        errs.append(
            _invalid(path + ".type", t.type, "must be either Utilization, Value, or AverageValue", json_value=True)
        )
    if t.value is not None and t.value.sign() != 1:
        errs.append(_invalid(path + ".value", t.value, "must be positive"))
    if t.average_value is not None and t.average_value.sign() != 1:
        errs.append(_invalid(path + ".averageValue", t.average_value, "must be positive"))
    if t.average_utilization is not None and t.average_utilization < 1:
        errs.append(_invalid(path + ".averageUtilization", t.average_utilization, "must be greater than 0"))
    return errs


_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = frozenset(
    {
        "cpu", "memory", "ephemeral-storage",
        "requests.cpu", "requests.memory", "requests.ephemeral-storage",
        "limits.cpu", "limits.memory", "limits.ephemeral-storage",
        "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
        "persistentvolumeclaims", "storage", "requests.storage",
        "services.nodeports", "services.loadbalancers",
    }
)


def _is_standard_resource(name: str) -> bool:
    return (
        name in _STANDARD_RESOURCES
        or name.startswith("hugepages-")
        or name.startswith("requests.hugepages-")
    )


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def validate_container_resource_name(name: str, path: str) -> list[FieldError]:
    errs = [_invalid(path, name, m) for m in is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name:
        if not _is_standard_resource(name):
            return [_invalid(path, name, "must be a standard resource type or fully qualified", json_value=True)]
        if not (name in _STANDARD_CONTAINER_RESOURCES or name.startswith("hugepages-")):
            return [_invalid(path, name, "must be a standard resource for containers", json_value=True)]
    elif not _is_native(name):
        extended = not name.startswith("requests.") and not is_qualified_name("requests." + name)
        if not extended:
            return [_invalid(path, name, "doesn't follow extended resource name standard", json_value=True)]
    return []


def _validate_either_utilization(t: MetricTarget, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if t.average_utilization is None and t.average_value is None:
        errs.append(_required(path + ".target.averageUtilization", "must set either a target raw value or a target utilization"))
    if t.average_utilization is not None and t.average_value is not None:
        errs.append(_forbidden(path + ".target.averageValue", "may not set both a target raw value and a target utilization"))
    return errs


def _validate_source(source: str, src: Any, path: str, opts: _Options) -> list[FieldError]:
    errs: list[FieldError] = []
    if source == "object":
        errs += validate_cross_version_object_reference(src.described_object, path + ".describedObject", opts.described_object)
        errs += _validate_metric_identifier(src.metric, path + ".metric")
        errs += _validate_metric_target(src.target, path + ".target")
        if src.target.value is None and src.target.average_value is None:
            errs.append(_required(path + ".target.averageValue", "must set either a target value or averageValue"))
    elif source == "external":
        errs += _validate_metric_identifier(src.metric, path + ".metric")
        errs += _validate_metric_target(src.target, path + ".target")
        if src.target.value is None and src.target.average_value is None:
            errs.append(_required(path + ".target.averageValue", "must set either a target value for metric or a per-pod target"))
        if src.target.value is not None and src.target.average_value is not None:
            errs.append(_forbidden(path + ".target.value", "may not set both a target value for metric and a per-pod target"))
    elif source == "pods":
        errs += _validate_metric_identifier(src.metric, path + ".metric")
        errs += _validate_metric_target(src.target, path + ".target")
        if src.target.average_value is None:
            errs.append(_required(path + ".target.averageValue", "must specify a positive target averageValue"))
    elif source == "resource":
        if not src.name:
            errs.append(_required(path + ".name", "must specify a resource name"))
        errs += _validate_metric_target(src.target, path + ".target")
        errs += _validate_either_utilization(src.target, path)
    else:  # containerResource
        if not src.name:
            errs.append(_required(path + ".name", "must specify a resource name"))
        else:
            errs += validate_container_resource_name(src.name, path + ".name")
        if not src.container:
            errs.append(_required(path + ".container", "must specify a container"))
        else:
            errs += [_invalid(path + ".container", src.container, m) for m in is_dns1123_label(src.container)]
        errs += _validate_metric_target(src.target, path + ".target")
        errs += _validate_either_utilization(src.target, path)
    return errs


# (wire name, attribute) in the order upstream validates the first populated source.
_SOURCES = (
    ("object", "object"),
    ("external", "external"),
    ("pods", "pods"),
    ("resource", "resource"),
    ("containerResource", "container_resource"),
)
_EXPECTED = {"Object": "object", "Pods": "pods", "Resource": "resource", "External": "external",
             "ContainerResource": "containerResource"}


def _validate_metric_spec(m: MetricSpec, path: str, opts: _Options) -> list[FieldError]:
    errs: list[FieldError] = []
    if not m.type:
        errs.append(_required(path + ".type", "must specify a metric source type"))
    if m.type not in _EXPECTED:
        errs.append(_not_supported(path + ".type", m.type, METRIC_SOURCE_TYPES))
    present: list[str] = []
    for wire, attr in _SOURCES:
        src = getattr(m, attr)
        if src is not None:
            present.append(wire)
            if len(present) == 1:
                errs += _validate_source(wire, src, f"{path}.{wire}", opts)
    expected = _EXPECTED.get(m.type, "")
    if expected:
        if getattr(m, "container_resource" if expected == "containerResource" else expected) is None:
            errs.append(_required(f"{path}.{expected}", "must populate information for the given metric source"))
    else:
        errs.append(_not_supported(path + ".type", m.type, METRIC_SOURCE_TYPES))
    # Upstream lists the extra sources from a sorted string set.
    for wire in sorted(present):
        if wire != expected:
            errs.append(_forbidden(f"{path}.{wire}", "must populate the given metric source only"))
    return errs


def _validate_metrics(metrics: list[MetricSpec] | None, min_replicas: int | None, opts: _Options) -> list[FieldError]:
    errs: list[FieldError] = []
    has_object_or_external = False
    for i, m in enumerate(metrics or []):
        errs += _validate_metric_spec(m, f"spec.metrics[{i}]", opts)
        if m.type in ("Object", "External"):
            has_object_or_external = True
    if min_replicas == 0 and not has_object_or_external:
        errs.append(
            _forbidden("spec.metrics", "must specify at least one Object or External metric to support scaling to zero replicas")
        )
    return errs


def _validate_scaling_rules(rules: HPAScalingRules | None, path: str) -> list[FieldError]:
    if rules is None:
        return []
    errs: list[FieldError] = []
    w = rules.stabilization_window_seconds
    if w is not None and w < 0:
        errs.append(_invalid(path + ".stabilizationWindowSeconds", w, "must be greater than or equal to zero"))
    if w is not None and w > MAX_STABILIZATION_WINDOW_SECONDS:
        errs.append(
            _invalid(path + ".stabilizationWindowSeconds", w, f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}")
        )
    if rules.select_policy is not None and rules.select_policy not in SELECT_POLICIES:
        errs.append(_not_supported(path + ".selectPolicy", rules.select_policy, SELECT_POLICIES))
    if not rules.policies:
        errs.append(_required(path + ".policies", "must specify at least one Policy"))
    for j, p in enumerate(rules.policies or []):
        pp = f"{path}.policies[{j}]"
        if p.type not in POLICY_TYPES:
            errs.append(_not_supported(pp + ".type", p.type, POLICY_TYPES))
        if p.value <= 0:
            errs.append(_invalid(pp + ".value", p.value, "must be greater than zero"))
        if p.period_seconds <= 0:
            errs.append(_invalid(pp + ".periodSeconds", p.period_seconds, "must be greater than zero"))
        if p.period_seconds > MAX_PERIOD_SECONDS:
            errs.append(_invalid(pp + ".periodSeconds", p.period_seconds, f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
    if rules.tolerance is not None and rules.tolerance.sign() < 0:
        errs.append(_invalid(path + ".tolerance", str(rules.tolerance), "must be greater than or equal to 0"))
    return errs


def _validate_spec(hpa: HorizontalPodAutoscaler, opts: _Options) -> tuple[list[FieldError], list[FieldError]]:
    """(hand-written errors, declarative errors appended after them)."""
    spec = hpa.spec
    errs: list[FieldError] = []
    declarative: list[FieldError] = []
    old = opts.old_spec
    lower = opts.min_replicas_lower_bound
    if spec.min_replicas is not None and spec.min_replicas < lower:
        e = _invalid("spec.minReplicas", spec.min_replicas, f"must be greater than or equal to {lower}")
        # Declarative rule (beta, enforced): same text, reported after the hand-written list;
        # on update an unchanged value is not re-checked (ratcheting).
        if old is not None and old.min_replicas == spec.min_replicas:
            errs.append(e)
        else:
            declarative.append(e)
    if spec.max_replicas < 1:
        if old is not None and old.max_replicas == spec.max_replicas:
            if spec.max_replicas == 0:
                errs.append(_required("spec.maxReplicas", "must be set and greater than 0"))
            else:
                errs.append(_invalid("spec.maxReplicas", spec.max_replicas, "must be greater than or equal to 1"))
        elif spec.max_replicas == 0:
            declarative.append(_required("spec.maxReplicas"))
        else:
            declarative.append(_invalid("spec.maxReplicas", spec.max_replicas, "must be greater than or equal to 1"))
    if spec.min_replicas is not None and spec.max_replicas < spec.min_replicas:
        errs.append(_invalid("spec.maxReplicas", spec.max_replicas, "must be greater than or equal to `minReplicas`"))
    errs += validate_cross_version_object_reference(spec.scale_target_ref, "spec.scaleTargetRef", opts.scale_target_ref)
    errs += _validate_metrics(spec.metrics, spec.min_replicas, opts)
    if spec.behavior is not None:
        errs += _validate_scaling_rules(spec.behavior.scale_up, "spec.behavior.scaleUp")
        errs += _validate_scaling_rules(spec.behavior.scale_down, "spec.behavior.scaleDown")
        errs += _validate_sync_period(spec.behavior.sync_period_seconds)
    return errs, declarative


def _validate_sync_period(seconds: int | None) -> list[FieldError]:
    low, high = SYNC_PERIOD_SECONDS_RANGE
    if seconds is not None and seconds < low:
        return [_invalid("spec.behavior.syncPeriodSeconds", seconds, f"must be greater than or equal to {low}")]
    if seconds is not None and seconds > high:
        return [_invalid("spec.behavior.syncPeriodSeconds", seconds, f"must be less than or equal to {high}")]
    return []


def _options(hpa: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler | None, gates: FeatureGates) -> _Options:
    lower = 0 if gates.scale_to_zero or (old is not None and old.spec.min_replicas == 0) else 1
    ref = hpa.spec.scale_target_ref
    skip_ref = (
        old is not None
        and (old.spec.scale_target_ref.api_version or "") == (ref.api_version or "")
        and old.spec.scale_target_ref.kind == ref.kind
    )
    skip_described = old is not None and any(
        m.object is not None and _api_version_fails(m.object.described_object, True) for m in old.spec.metrics or []
    )
    return _Options(
        min_replicas_lower_bound=lower,
        scale_target_ref=_RefOptions(allow_empty_group=ref.kind == "ReplicationController", allow_invalid_api_version=skip_ref),
        described_object=_RefOptions(allow_empty_group=True, allow_invalid_api_version=skip_described),
        old_spec=old.spec if old is not None else None,
    )


def validate_hpa(
    hpa: HorizontalPodAutoscaler,
    *,
    old: HorizontalPodAutoscaler | None = None,
    gates: FeatureGates = FeatureGates(),
) -> list[FieldError]:
    """Every error of a create (``old is None``) or update, in upstream order, de-duplicated.

    Expects a defaulted hub (v2) object, as the API server validates after defaulting.
    """
    if old is None and plainly_valid_create(hpa, gates):
        return []
    return validate_hpa_by_rules(hpa, old, gates)


def validate_hpa_by_rules(
    hpa: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler | None, gates: FeatureGates
) -> list[FieldError]:
    """:func:`validate_hpa` without the quick acceptance: every rule, in upstream order."""
    if old is None:
        errs = validate_object_meta(hpa.metadata)
    else:
        errs = validate_object_meta_update(hpa.metadata, old.metadata)
    hand, declarative = _validate_spec(hpa, _options(hpa, old, gates))
    return dedupe(errs + hand + declarative)


# --------------------------------------------------------------------------- quick acceptance
# Most writes are valid and of a few common shapes. Walking them with the rules above costs
# tens of list allocations and path strings per object; the check below says "valid" for the
# common shapes in one pass, and leaves everything else (any doubt, any error) to the rules.
# It may only answer True where validate_hpa(old=None) answers []: a differential property
# test holds it to that.

_CREATE_OPTIONS = _Options(described_object=_RefOptions(allow_empty_group=True))
_TARGET_TYPES = frozenset(("Utilization", "Value", "AverageValue"))


def _target_ok(t: MetricTarget) -> bool:
    return (
        t.type in _TARGET_TYPES
        and (t.value is None or t.value.sign() == 1)
        and (t.average_value is None or t.average_value.sign() == 1)
        and (t.average_utilization is None or t.average_utilization >= 1)
    )


def _metric_ok(m: MetricSpec) -> bool:
    expected = _EXPECTED.get(m.type)
    if expected is None:
        return False
    present = (
        (m.object is not None) + (m.external is not None) + (m.pods is not None)
        + (m.resource is not None) + (m.container_resource is not None)
    )
    attr = "container_resource" if expected == "containerResource" else expected
    src = getattr(m, attr)
    if present != 1 or src is None:  # exactly the expected source
        return False
    if expected == "resource":
        t = src.target
        return bool(src.name) and _target_ok(t) and (t.average_utilization is None) != (t.average_value is None)
    if expected == "pods":
        name = src.metric.name
        return (
            bool(name) and not is_valid_path_segment_name(name)
            and _target_ok(src.target) and src.target.average_value is not None
        )
    return not _validate_source(expected, src, "", _CREATE_OPTIONS)


def _rules_ok(rules: HPAScalingRules | None) -> bool:
    if rules is None:
        return True
    w = rules.stabilization_window_seconds
    if w is not None and not 0 <= w <= MAX_STABILIZATION_WINDOW_SECONDS:
        return False
    if rules.select_policy is not None and rules.select_policy not in SELECT_POLICIES:
        return False
    if not rules.policies:
        return False
    for p in rules.policies:
        if p.type not in POLICY_TYPES or p.value <= 0 or not 0 < p.period_seconds <= MAX_PERIOD_SECONDS:
            return False
    return rules.tolerance is None or rules.tolerance.sign() >= 0


def _meta_ok(meta: ObjectMeta) -> bool:
    if meta.generate_name or meta.owner_references or meta.finalizers:
        return False
    if not meta.name or is_dns1123_subdomain(meta.name):
        return False
    if not meta.namespace or is_dns1123_label(meta.namespace):
        return False
    if meta.generation is not None and meta.generation < 0:
        return False
    if meta.labels:
        for k, v in meta.labels.items():
            if is_qualified_name(k) or is_valid_label_value(v):
                return False
    return not meta.annotations


def plainly_valid_create(hpa: HorizontalPodAutoscaler, gates: FeatureGates = FeatureGates()) -> bool:
    """True only if ``validate_hpa(hpa, gates=gates)`` finds nothing; False means "ask it"."""
    if not _meta_ok(hpa.metadata):
        return False
    spec = hpa.spec
    lower = 0 if gates.scale_to_zero else 1
    if spec.min_replicas is not None and (spec.min_replicas < lower or spec.max_replicas < spec.min_replicas):
        return False
    if spec.max_replicas < 1:
        return False
    ref = spec.scale_target_ref
    if not ref.kind or not ref.name or is_valid_path_segment_name(ref.kind) or is_valid_path_segment_name(ref.name):
        return False
    group, err = _parse_group(ref.api_version or "")
    if err is not None or (group == "" and ref.kind != "ReplicationController"):
        return False
    scales_to_zero = spec.min_replicas == 0
    for m in spec.metrics or ():
        if not _metric_ok(m):
            return False
        if m.type in ("Object", "External"):
            scales_to_zero = False
    if scales_to_zero:
        return False
    behavior = spec.behavior
    return behavior is None or (_rules_ok(behavior.scale_up) and _rules_ok(behavior.scale_down)
                                and not _validate_sync_period(behavior.sync_period_seconds))


def validate_hpa_status_update(new: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler) -> list[FieldError]:
    """Errors of a ``/status`` write: metadata update rules and non-negative counters."""
    errs = validate_object_meta_update(new.metadata, old.metadata)
    status = new.status
    for i, c in enumerate(status.conditions or []):
        if c.observed_generation is not None and c.observed_generation < 0:
            errs.append(
                _invalid(f"status.conditions[{i}].observedGeneration", c.observed_generation, "must be greater than or equal to 0")
            )
    if status.current_replicas < 0:
        errs.append(_invalid("status.currentReplicas", status.current_replicas, "must be greater than or equal to 0"))
    if status.desired_replicas < 0:
        errs.append(_invalid("status.desiredReplicas", status.desired_replicas, "must be greater than or equal to 0"))
    return dedupe(errs)


def validate_scale(scale: Scale, *, old: Scale | None = None) -> list[FieldError]:
    """Errors of a Scale write: DNS-subdomain name, ``spec.replicas >= 0``."""
    errs = validate_object_meta(scale.metadata) if old is None else []
    if scale.spec.replicas < 0:
        errs.append(_invalid("spec.replicas", scale.spec.replicas, "must be greater than or equal to 0"))
    return dedupe(errs)


# --------------------------------------------------------------------------- registry strategy


def _tolerance_in_use(hpa: HorizontalPodAutoscaler | None) -> bool:
    if hpa is None or hpa.spec.behavior is None:
        return False
    b = hpa.spec.behavior
    return any(r is not None and r.tolerance is not None for r in (b.scale_up, b.scale_down))


def drop_disabled_fields(new: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler | None, gates: FeatureGates) -> None:
    """Clear ``tolerance`` (``syncPeriodSeconds``) when HPAConfigurableTolerance
    (HPAConfigurableSyncPeriod) is off, unless the stored object uses it."""
    if new.spec.behavior is not None and not gates.configurable_sync_period and (
            old is None or old.spec.behavior is None or old.spec.behavior.sync_period_seconds is None):
        new.spec.behavior.sync_period_seconds = None
    if gates.configurable_tolerance or _tolerance_in_use(old) or new.spec.behavior is None:
        return
    for rules in (new.spec.behavior.scale_up, new.spec.behavior.scale_down):
        if rules is not None:
            rules.tolerance = None


def _empty_status() -> HorizontalPodAutoscalerStatus:
    return HorizontalPodAutoscalerStatus(desired_replicas=0, current_metrics=None)


def prepare_for_create(hpa: HorizontalPodAutoscaler, gates: FeatureGates = FeatureGates()) -> HorizontalPodAutoscaler:
    """Create: status cleared, ``generation = 1`` under HPAGeneration, disabled fields dropped."""
    hpa.status = _empty_status()
    if gates.hpa_generation:
        hpa.metadata.generation = 1
    drop_disabled_fields(hpa, None, gates)
    return hpa


def prepare_for_update(
    new: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler, gates: FeatureGates = FeatureGates()
) -> HorizontalPodAutoscaler:
    """Update of the main resource: the stored status wins, generation is the stored one and,
    under HPAGeneration, goes up by one when the spec changed; an empty resourceVersion takes
    the stored one (unconditional updates are allowed)."""
    new.status = old.status
    new.metadata.generation = old.metadata.generation
    if not new.metadata.resource_version:
        new.metadata.resource_version = old.metadata.resource_version
    drop_disabled_fields(new, old, gates)
    if gates.hpa_generation and new.spec != old.spec:
        new.metadata.generation = (old.metadata.generation or 0) + 1
    return new


def prepare_for_status_update(new: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler) -> HorizontalPodAutoscaler:
    """``/status`` write: the stored spec wins; metadata edits are kept."""
    new.spec = old.spec
    new.metadata.generation = old.metadata.generation
    if not new.metadata.resource_version:
        new.metadata.resource_version = old.metadata.resource_version
    return new
