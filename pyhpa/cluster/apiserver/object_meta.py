"""The metadata rules every kind's writes follow: names, generated names, labels, annotations,
owner references, finalizers (upstream's ``ValidateObjectMeta``).

Why the API model's validator: the HPA's metadata and every other kind's follow one set of rules
with one set of messages, so this module only adds what differs by kind (namespaces are DNS
labels, Services DNS-1035 labels) and how a name is generated from ``generateName``.
"""

from __future__ import annotations

import random
import re
from typing import Any

from pyhpa.api import codec
from pyhpa.api.types import ObjectMeta
# The name rules and the metadata validator (pyhpa.api.names / meta_validation after the api
# package's split; pyhpa.api.validation re-exports what is used here).
from pyhpa.api.field_errors import InvalidError
from pyhpa.api.meta_validation import validate_object_meta
from pyhpa.api.names import is_dns1123_label, is_dns1123_subdomain
from pyhpa.cluster.apiserver.resources import Resource
from pyhpa.cluster.apiserver.status import cause

Obj = dict[str, Any]
Cause = dict[str, str]

# upstream's names.SimpleNameGenerator: a base cut to 58 characters plus 5 random ones
_MAX_GENERATED_BASE = 58
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1035_MESSAGE = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                    "start with an alphabetic character, and end with an alphanumeric character "
                    "(e.g. 'my-name',  or 'abc-123', regex used for validation is "
                    "'[a-z]([-a-z0-9]*[a-z0-9])?')")


def generate_name(prefix: str) -> str:
    """A name from ``generateName``, as upstream makes one before validating the object."""
    return prefix[:_MAX_GENERATED_BASE] + "".join(random.choice(_ALPHABET) for _ in range(5))


def _dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value.encode()) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1035_LABEL.match(value):
        errs.append(_DNS1035_MESSAGE)
    return errs


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
        return _dns1035_label
    return is_dns1123_subdomain


def _mask_trailing_dash(prefix: str) -> str:
    return prefix[:-2] + "a" if len(prefix) > 1 and prefix.endswith("-") else prefix


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
    errs = validate_object_meta(typed, namespaced=res.namespaced)
    causes = InvalidError(errs).status()["details"]["causes"] if errs else []
    # names by this kind's rule (a generated name ends in random characters: its prefix may end
    # in a dash, which is masked as upstream masks it)
    rule = _name_rule(res)
    causes = [c for c in causes if c["field"] not in ("metadata.name", "metadata.generateName")]
    prefix = meta.get("generateName")
    name = meta.get("name")
    out = [cause("metadata.generateName", "Invalid", prefix, m)
           for m in (rule(_mask_trailing_dash(prefix)) if prefix else ())]
    if name:
        out += [cause("metadata.name", "Invalid", name, m) for m in rule(name)]
    else:
        out.append(cause("metadata.name", "Required", detail="name or generateName is required"))
    return out + causes
