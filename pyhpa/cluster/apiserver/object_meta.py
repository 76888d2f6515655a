"""The metadata rules every kind's writes follow: names, generated names, labels, annotations,
owner references, finalizers (upstream's ``ValidateObjectMeta``).

Why the API model's validator: the HPA's metadata and every other kind's follow one set of rules
with one set of messages, so this module only adds what differs by kind (namespaces are DNS
labels, Services DNS-1035 labels).
"""

from __future__ import annotations

from typing import Any

from pyhpa.api import codec
from pyhpa.api.field_errors import InvalidError, cause
from pyhpa.api.meta_validation import validate_object_meta
from pyhpa.api.names import is_dns1035_label, is_dns1123_label, is_dns1123_subdomain
from pyhpa.api.types import ObjectMeta
from pyhpa.cluster.apiserver.resources import Resource

Obj = dict[str, Any]
Cause = dict[str, str]


def path_segment_name(value: str) -> list[str]:
    """``path.IsValidPathSegmentName``: RBAC objects may be named ``system:controller:x``."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in "/%" if c in value]


def _name_rule(res: Resource) -> Any:
    """The kind's name rule: a DNS subdomain, but for namespaces, Services and RBAC kinds."""
    if res.group == "rbac.authorization.k8s.io":
        return path_segment_name
    if res.resource == "namespaces":
        return is_dns1123_label
    if res.resource == "services":
        return is_dns1035_label
    return is_dns1123_subdomain


def validate_metadata(res: Resource, obj: Obj) -> list[Cause]:
    """The causes ``obj``'s metadata fails (an empty list when it passes).

    Expects metadata of the right JSON types (the decoder checked them) and, on create, the
    generated name already in place.
    """
    meta = obj.get("metadata") or {}
    try:
        typed = codec.from_wire(meta, ObjectMeta)
    except codec.DecodeError as exc:
        return [cause("metadata", "Invalid", None, str(exc))]
    errs = validate_object_meta(typed, namespaced=res.namespaced, name_rule=_name_rule(res))
    return InvalidError(errs).status()["details"]["causes"] if errs else []
