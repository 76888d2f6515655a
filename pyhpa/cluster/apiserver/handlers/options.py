"""A request's options (its query parameters, and a delete's body) read and checked as upstream.

Why checked, not just read: a typo must not change what a request does. ``dryRun=Al`` once
stored the object it meant to test, a negative ``limit`` cut a list short and ``timeoutSeconds=nan``
pinned a core. Upstream validates each options kind (CreateOptions, UpdateOptions, PatchOptions,
DeleteOptions, ListOptions) and answers 422 Invalid with field causes, or 400 when a value is not
even of its type; the messages here are upstream's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from pyhpa.api.selectors import go_quote
from pyhpa.cluster.apiserver.managed_fields import manager_from_user_agent
from pyhpa.api.field_errors import cause
from pyhpa.cluster.apiserver.status import APIError, Invalid

Obj = dict[str, Any]
DRY_RUN_ALL = "All"
FIELD_VALIDATION = ("", "Ignore", "Strict", "Warn")
PROPAGATION = ("Foreground", "Background", "Orphan")
MAX_FIELD_MANAGER = 128
_INT = re.compile(r"[+-]?[0-9]+\Z")
_UINT = re.compile(r"[0-9]+\Z")


def options_invalid(kind: str, causes: list[dict[str, str]]) -> Invalid:
    """The 422 upstream answers for bad options: ``CreateOptions.meta.k8s.io "" is invalid``."""
    return Invalid(kind, "meta.k8s.io", "", causes)


def _go_strings(values: list[str]) -> str:
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def parse_int64(name: str, text: str) -> int:
    """A query parameter as Go's ``strconv.ParseInt`` reads it; a 400 when it is not one."""
    if not _INT.match(text) or not -(2 ** 63) <= int(text) < 2 ** 63:
        why = "invalid syntax" if not _INT.match(text) else "value out of range"
        raise APIError(400, "BadRequest",
                       f'{name}: strconv.ParseInt: parsing {go_quote(text)}: {why}')
    return int(text)


def parse_resource_version(text: str) -> int:
    """``resourceVersion`` as the storage layer reads it (empty and "0" are 0); a 400 otherwise."""
    if text in ("", "0"):
        return 0
    if not _UINT.match(text) or int(text) >= 2 ** 64:
        why = "invalid syntax" if not _UINT.match(text) else "value out of range"
        raise APIError(400, "BadRequest",
                       f"invalid resource version: resourceVersion: Invalid value: "
                       f"{go_quote(text)}: strconv.ParseUint: parsing {go_quote(text)}: {why}")
    return int(text)


# --------------------------------------------------------------------------- writes


@dataclass(frozen=True)
class WriteOptions:
    """CreateOptions / UpdateOptions / PatchOptions: what a write request asked for."""

    dry_run: bool
    field_validation: str  # "", "Ignore", "Warn" or "Strict"
    field_manager: str
    force: bool


def _dry_run_causes(values: list[str]) -> list[dict[str, str]]:
    if all(v == DRY_RUN_ALL for v in values):
        return []
    return [cause("dryRun", "NotSupported", shown=_go_strings(values),
                  detail=f"supported values: {go_quote(DRY_RUN_ALL)}")]


def _field_manager_causes(manager: str) -> list[dict[str, str]]:
    out = []
    if len(manager) > MAX_FIELD_MANAGER:
        out.append(cause("fieldManager", "TooLong",
                         detail=f"may not be more than {MAX_FIELD_MANAGER} bytes"))
    for i, ch in enumerate(manager):
        if not ch.isprintable():
            out.append(cause("fieldManager", "Invalid", manager,
                             f"invalid character U+{ord(ch):04X} (at position {i})"))
    return out


def write_options(request: Request, kind: str, *, apply: bool = False) -> WriteOptions:
    """The options of a POST (``CreateOptions``), PUT (``UpdateOptions``) or PATCH
    (``PatchOptions``; ``apply`` for server-side apply), validated as upstream does."""
    q = request.query_params
    dry_run = q.getlist("dryRun")
    mode = q.get("fieldValidation", "")
    manager = q.get("fieldManager", "")
    force = q.get("force")
    causes = []
    if kind == "PatchOptions":
        if not apply and force is not None:
            causes.append(cause("force", "Forbidden", detail="may not be specified for non-apply "
                                                             "patch"))
        if apply and not manager:
            causes.append(cause("fieldManager", "Required", detail="is required for apply patch"))
    causes += _field_manager_causes(manager)
    causes += _dry_run_causes(dry_run)
    if mode not in FIELD_VALIDATION:
        causes.append(cause("fieldValidation", "NotSupported", mode, "supported values: "
                            + ", ".join(go_quote(v) for v in FIELD_VALIDATION)))
    if causes:
        raise options_invalid(kind, causes)
    if not manager:  # upstream names the manager of a write by its client's User-Agent
        manager = manager_from_user_agent(request.headers.get("user-agent", ""))
    return WriteOptions(bool(dry_run), mode, manager, bool_param(force))


def bool_param(text: str | None) -> bool:
    """A boolean query parameter as upstream's parameter codec reads it: absent, ``0`` or
    ``false`` (any case) is false, anything else (``?watch``, ``watch=yes``) true."""
    return text is not None and text != "0" and text.lower() != "false"


# --------------------------------------------------------------------------- deletes


@dataclass(frozen=True)
class DeleteOptions:
    dry_run: bool
    policy: str  # Background, Foreground or Orphan
    grace: int | None  # None: the kind's default; negative means 1, as upstream
    resource_version: str | None
    uid: str | None


def delete_options(request: Request, body: Obj | None) -> DeleteOptions:
    """``body`` (a decoded DeleteOptions, or None) with what it leaves out taken from the
    query, validated."""
    q = request.query_params
    body = dict(body or {})
    if body.get("gracePeriodSeconds") is None and q.get("gracePeriodSeconds"):
        body["gracePeriodSeconds"] = parse_int64("gracePeriodSeconds", q["gracePeriodSeconds"])
    if body.get("propagationPolicy") is None and q.get("propagationPolicy"):
        body["propagationPolicy"] = q["propagationPolicy"]
    if body.get("orphanDependents") is None and q.get("orphanDependents"):
        body["orphanDependents"] = bool_param(q["orphanDependents"])
    dry_run = body.get("dryRun") or q.getlist("dryRun")
    policy = body.get("propagationPolicy")
    orphan = body.get("orphanDependents")
    causes = []
    if orphan is not None and policy is not None:
        causes.append(cause("propagationPolicy", "Invalid", policy,
                            "orphanDependents and deletionPropagation cannot be both set"))
    if policy is not None and policy not in PROPAGATION:
        causes.append(cause("propagationPolicy", "NotSupported", policy, "supported values: "
                            + ", ".join(go_quote(v) for v in (*PROPAGATION, "nil"))))
    causes += _dry_run_causes(list(dry_run))
    if causes:
        raise options_invalid("DeleteOptions", causes)
    if orphan is True:
        policy = "Orphan"
    grace = body.get("gracePeriodSeconds")
    pre = body.get("preconditions") or {}
    return DeleteOptions(bool(dry_run), policy or "Background",
                         None if grace is None else (1 if grace < 0 else grace),
                         pre.get("resourceVersion"), pre.get("uid"))


# --------------------------------------------------------------------------- reads


@dataclass(frozen=True)
class ListOptions:
    limit: int  # 0: no limit (upstream treats a negative limit the same)
    resource_version: int  # 0: the latest
    exact: bool  # resourceVersionMatch=Exact
    continue_token: str | None


def list_options(request: Request) -> ListOptions:
    q = request.query_params
    limit = parse_int64("limit", q["limit"]) if q.get("limit") else 0
    rv_text = q.get("resourceVersion", "")
    match = q.get("resourceVersionMatch", "")
    token = q.get("continue") or None
    causes = []
    if match:
        if not rv_text:
            causes.append(cause("resourceVersionMatch", "Forbidden", detail="resourceVersionMatch "
                                "is forbidden unless resourceVersion is provided"))
        if token:
            causes.append(cause("resourceVersionMatch", "Forbidden", detail="resourceVersionMatch "
                                "is forbidden when continue is provided"))
        if match not in ("Exact", "NotOlderThan"):
            causes.append(cause("resourceVersionMatch", "NotSupported", match,
                                'supported values: "Exact", "NotOlderThan", ""'))
        if match == "Exact" and rv_text == "0":
            causes.append(cause("resourceVersionMatch", "Forbidden", detail='resourceVersionMatch '
                                '"exact" is forbidden for resourceVersion "0"'))
    if q.get("sendInitialEvents") is not None:
        causes.append(cause("sendInitialEvents", "Forbidden",
                            detail="sendInitialEvents is forbidden for list"))
    if causes:
        raise options_invalid("ListOptions", causes)
    rv = parse_resource_version(rv_text)
    if token and rv:
        raise APIError(400, "BadRequest",
                       "specifying resource version is not allowed when using continue")
    return ListOptions(max(limit, 0), rv, match == "Exact", token)


@dataclass(frozen=True)
class WatchOptions:
    resource_version: int  # 0: from now, with the current objects first
    timeout: float | None  # seconds; None: until the client goes; <= 0: end at once
    # sendInitialEvents=true (a WatchList, KEP-3157): the current objects first, then a bookmark
    # marked k8s.io/initial-events-end, whatever the resourceVersion
    send_initial: bool = False


def watch_options(request: Request) -> WatchOptions:
    q = request.query_params
    match = q.get("resourceVersionMatch", "")
    if match and q.get("sendInitialEvents") is None:
        causes = [cause("resourceVersionMatch", "Forbidden", detail="resourceVersionMatch is "
                        "forbidden for watch unless sendInitialEvents is provided")]
        if match != "NotOlderThan":
            causes.append(cause("resourceVersionMatch", "NotSupported", match,
                                'supported values: "NotOlderThan"'))
        raise options_invalid("ListOptions", causes)
    send_initial = q.get("sendInitialEvents")
    if send_initial is not None:  # upstream's ValidateListOptions
        causes = []
        if match != "NotOlderThan":
            causes.append(cause("resourceVersionMatch", "Forbidden", detail="sendInitialEvents "
                                "requires setting resourceVersionMatch to NotOlderThan"))
        if not bool_param(q.get("allowWatchBookmarks")):
            causes.append(cause("allowWatchBookmarks", "Forbidden", detail="sendInitialEvents "
                                "requires setting allowWatchBookmarks to true"))
        if causes:
            raise options_invalid("ListOptions", causes)
    timeout = None
    if q.get("timeoutSeconds"):
        seconds = parse_int64("timeoutSeconds", q["timeoutSeconds"])
        timeout = None if seconds == 0 else float(seconds)  # 0: the server's default (none)
    return WatchOptions(parse_resource_version(q.get("resourceVersion", "")), timeout,
                        bool_param(send_initial))
