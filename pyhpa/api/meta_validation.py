"""Validation of object metadata (apimachinery's ``ValidateObjectMeta`` and its update rules).

Why apart from the HPA rules: every kind's metadata follows these rules (names, namespaces,
labels, annotations, finalizers, owner references, immutable identity fields), and they come
first in every create and update error list.
"""

from __future__ import annotations

from typing import Any, Callable

from pyhpa.api.field_errors import INVALID, TOO_LONG, FieldError, Verbatim, forbidden, invalid, required
from pyhpa.api.names import is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value
from pyhpa.api.types import ObjectMeta

__all__ = ["validate_object_meta", "validate_object_meta_update"]

_TOTAL_ANNOTATION_SIZE = 256 * 1024


def _validate_labels(labels: dict[str, str] | None, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for k in sorted(labels or {}):  # Go ranges over a map: any order; sorted is stable
        for m in is_qualified_name(k):
            errs.append(invalid(path, k, m))
        for m in is_valid_label_value(labels[k]):  # type: ignore[index]
            errs.append(invalid(path, labels[k], m))
    return errs


def _validate_annotations(annotations: dict[str, str] | None, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    total = 0
    for k in sorted(annotations or {}):
        for m in is_qualified_name(k.lower()):
            errs.append(invalid(path, k, m))
        total += len(k.encode()) + len(annotations[k].encode())  # type: ignore[index]
    if total > _TOTAL_ANNOTATION_SIZE:
        errs.append(FieldError(TOO_LONG, path, None, f"may not be more than {_TOTAL_ANNOTATION_SIZE} bytes"))
    return errs


def _validate_finalizers(finalizers: list[str] | None, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for f in finalizers or []:
        for m in is_qualified_name(f):
            errs.append(invalid(path, f, m))
    if finalizers and "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(
            invalid(path, list(finalizers), "finalizer orphan and foregroundDeletion cannot be both set", json_value=True)
        )
    return errs


def _validate_owner_references(meta: ObjectMeta, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    controller = ""
    for ref in meta.owner_references or []:
        version = ref.api_version.rsplit("/", 1)[-1] if ref.api_version.count("/") <= 1 else ""
        if not version:
            errs.append(invalid(path + ".apiVersion", ref.api_version, "version must not be empty"))
        if not ref.kind:
            errs.append(invalid(path + ".kind", ref.kind, "kind must not be empty"))
        if not ref.name:
            errs.append(invalid(path + ".name", ref.name, "name must not be empty"))
        if not ref.uid:
            errs.append(invalid(path + ".uid", ref.uid, "uid must not be empty", json_value=True))
        if ref.api_version == "v1" and ref.kind == "Event":
            errs.append(invalid(path, _owner_json(ref), "/v1, Kind=Event is disallowed from being an owner", json_value=True))
        if ref.controller:
            current = f"{ref.kind}/{ref.name}"
            if controller:
                errs.append(
                    invalid(
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


def mask_trailing_dash(prefix: str) -> str:
    """upstream's maskTrailingDash: a generated name's prefix may end in a dash (random characters
    follow it), so its last two characters are checked as an ``a``."""
    return prefix[:-2] + "a" if len(prefix) > 1 and prefix.endswith("-") else prefix


def validate_object_meta(meta: ObjectMeta, *, namespaced: bool = True, path: str = "metadata",
                         name_rule: Callable[[str], list[str]] = is_dns1123_subdomain) -> list[FieldError]:
    """``ValidateObjectMeta`` for a create; names follow the kind's ``name_rule`` (most kinds'
    is a DNS subdomain)."""
    errs: list[FieldError] = []
    if meta.generate_name:
        for m in name_rule(mask_trailing_dash(meta.generate_name)):
            errs.append(invalid(path + ".generateName", meta.generate_name, m))
    if not meta.name:
        errs.append(required(path + ".name", "name or generateName is required"))
    else:
        for m in name_rule(meta.name):
            errs.append(invalid(path + ".name", meta.name, m))
    if namespaced:
        if not meta.namespace:
            errs.append(required(path + ".namespace"))
        else:
            for m in is_dns1123_label(meta.namespace):
                errs.append(invalid(path + ".namespace", meta.namespace, m))
    elif meta.namespace:
        errs.append(forbidden(path + ".namespace", "not allowed on this type"))
    errs.extend(_common_meta(meta, path))
    return errs


def _common_meta(meta: ObjectMeta, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if meta.generation is not None and meta.generation < 0:
        errs.append(invalid(path + ".generation", meta.generation, "must be greater than or equal to 0"))
    if meta.labels:
        errs.extend(_validate_labels(meta.labels, path + ".labels"))
    if meta.annotations:
        errs.extend(_validate_annotations(meta.annotations, path + ".annotations"))
    if meta.owner_references:
        errs.extend(_validate_owner_references(meta, path + ".ownerReferences"))
    if meta.finalizers:
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
                forbidden(path + ".finalizers", f"no new finalizers can be added if the object is being deleted, found new finalizers {_go_list(added)}")
            )
    if not new.resource_version:
        errs.append(invalid(path + ".resourceVersion", new.resource_version or "", "must be specified for an update"))
    if (new.generation or 0) < (old.generation or 0):
        errs.append(invalid(path + ".generation", new.generation or 0, "must not be decremented"))
    for attr, wire in (("name", "name"), ("namespace", "namespace")):
        if (getattr(new, attr) or "") != (getattr(old, attr) or ""):
            errs.append(invalid(f"{path}.{wire}", getattr(new, attr) or "", "field is immutable"))
    if (new.uid or "") != (old.uid or ""):
        errs.append(invalid(path + ".uid", new.uid or "", "field is immutable", json_value=True))
    for attr, wire in (("creation_timestamp", "creationTimestamp"), ("deletion_timestamp", "deletionTimestamp")):
        if getattr(new, attr) != getattr(old, attr):
            errs.append(FieldError(INVALID, f"{path}.{wire}", Verbatim(_go_time(getattr(new, attr))), "field is immutable"))
    if new.deletion_grace_period_seconds != old.deletion_grace_period_seconds:
        errs.append(
            invalid(path + ".deletionGracePeriodSeconds", new.deletion_grace_period_seconds, "field is immutable")
        )
    errs.extend(_validate_finalizers(new.finalizers, path + ".finalizers"))
    errs.extend(_validate_labels(new.labels, path + ".labels"))
    errs.extend(_validate_annotations(new.annotations, path + ".annotations"))
    errs.extend(_validate_owner_references(new, path + ".ownerReferences"))
    if new.generation is not None and new.generation < 0:
        errs.append(invalid(path + ".generation", new.generation, "must be greater than or equal to 0"))
    return errs


def _go_list(items: list[str]) -> str:
    return "[" + " ".join(items) + "]"
