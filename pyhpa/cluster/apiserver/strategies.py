"""Per-kind write rules: what create/update/status-update keep, convert, default and validate.

Why separate from the server: the apiserver's generic registry runs a *strategy* per kind
(PrepareForCreate, PrepareForUpdate, Validate, conversion to the storage version). Most of our
kinds share the generic one here; the HPA uses the API model's defaulting, validation and v1⇄v2
conversion (:mod:`pyhpa.cluster.apiserver.hpa_strategy`), and Events convert between core/v1 and
events.k8s.io/v1.
"""

from __future__ import annotations

import copy
from typing import Any

from pyhpa.api import spec_checks
from pyhpa.cluster.apiserver.object_meta import validate_metadata
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.resources import Resource
from pyhpa.api.schemas import BuiltinSchemas
from pyhpa.api.schemas.build import ref
from pyhpa.api.schemas.conform import METADATA_ONLY, Conformed, conform
from pyhpa.api.field_errors import cause
from pyhpa.api.workload_validation import validate_kind, validate_kind_status
from pyhpa.cluster.apiserver.status import APIError

Obj = dict[str, Any]


def fill_system_fields(new: Obj, old: Obj) -> None:
    """An update's uid and creationTimestamp come from the stored object (upstream's
    ``rest.BeforeUpdate``): a plain manifest (``kubectl replace -f``) carries neither, and an
    absent uid means "unset", not "changed to empty". A uid that is sent must match."""
    meta = new.get("metadata")
    old_meta = old.get("metadata") or {}
    if not isinstance(meta, dict):
        return
    if not meta.get("uid") and old_meta.get("uid"):
        meta["uid"] = old_meta["uid"]
    if old_meta.get("creationTimestamp"):
        meta["creationTimestamp"] = old_meta["creationTimestamp"]


class Strategy:
    """The generic strategy: status is owned by the status subresource, spec by the main one."""

    bump_generation = True

    def __init__(self, res: Resource) -> None:
        self.res = res
        self.store: Any = None  # the server's Store, for strategies that allocate (Services)
        self.schemas: BuiltinSchemas | None = None  # the server's, for unknown fields

    # ---- conversion between the request version and the storage version
    def to_storage(self, obj: Obj, version: str) -> Obj:
        obj["apiVersion"] = self.res.api_version(self.res.storage_version)
        obj["kind"] = self.res.kind
        return obj

    def from_storage(self, obj: Obj, version: str) -> Obj:
        obj["apiVersion"] = self.res.api_version(version)
        obj["kind"] = self.res.kind
        return obj

    # ---- a create: conversion, preparation and validation in one step
    def create(self, obj: Obj, version: str) -> tuple[Obj, list[dict[str, str]]]:
        """``obj`` (in the request's ``version``) as it is stored, and its validation causes.
        Why one hook: a kind whose rules live in a typed model (the HPA) decodes the object once
        for all three steps; the others compose the three hooks below."""
        obj = self.to_storage(obj, version)
        self.prepare_create(obj)
        return obj, self.validate(obj, None)

    # ---- write preparation (objects are in the storage version here)
    def prepare_create(self, obj: Obj) -> None:
        if self.res.has_status() and self.res.resource != "namespaces":
            obj.pop("status", None)
            if self.res.resource == "pods":
                obj["status"] = {"phase": "Pending"}
        if self.res.resource == "namespaces":
            obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
            obj["status"] = {"phase": "Active"}
        self._default(obj)

    def prepare_update(self, new: Obj, old: Obj) -> None:
        if self.res.has_status():
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        self._default(new)

    def _default(self, obj: Obj) -> None:
        """The built-in workload kinds' and Pods' defaulting (pyhpa.cluster.apiserver.workload_defaults)."""
        if self.res.group not in ("apps", ""):
            return
        if self.res.scale is not None:
            from pyhpa.cluster.apiserver.workload_defaults import default_workload
            default_workload(self.res.kind, obj)
        elif self.res.resource == "pods":
            from pyhpa.cluster.apiserver.workload_defaults import default_pod
            default_pod(obj)

    def prepare_status_update(self, new: Obj, old: Obj) -> None:
        if "spec" in old:
            new["spec"] = copy.deepcopy(old["spec"])
        else:
            new.pop("spec", None)

    # ---- decoding: the request's object read as upstream's decoder reads it
    def conform(self, obj: Obj, version: str, *, drop: bool) -> tuple[Obj, Conformed]:
        """``obj`` checked against the kind's published schema (just its metadata, for a kind
        without one): the first value of a wrong type, and the unknown fields (dropped when
        ``drop``)."""
        if self.schemas is None:
            return obj, Conformed()
        name = self.schemas.of_kind(self.res.group, version, self.res.kind)
        schema = ref(name) if name is not None else METADATA_ONLY
        return conform(obj, schema, self.schemas.definitions, drop=drop)

    # ---- validation
    def validate(self, obj: Obj, old: Obj | None) -> list[dict[str, str]]:
        if old is None and self.res.namespaced and self.store is not None:
            refuse_in_terminating_namespace(self.store, self.res, obj)
        causes = validate_metadata(self.res, obj) + validate_kind(self.res.group, self.res.kind,
                                                                  obj, old)
        causes += _unread_parts(self.res, obj)
        if self.res.resource == "pods" and self.res.group == "" and old is None and not causes \
                and self.store is not None:
            # the admission plugins, once the pod is named and valid (a 403 when refused)
            from pyhpa.cluster.apiserver.admission import admit_pod
            admit_pod(self.store, obj)
        if self.res.scale is not None and self.res.group not in ("apps", ""):
            from pyhpa.cluster.apiserver.scale import read_path
            path = self.res.scale.spec_replicas
            replicas = read_path(obj, path)
            if replicas is not None and (not isinstance(replicas, int) or isinstance(
                    replicas, bool) or replicas < 0):
                causes.append(cause(path.strip("."), "Invalid", replicas,
                                    "must be greater than or equal to 0"))
        return causes

    def validate_status(self, obj: Obj, old: Obj) -> list[dict[str, str]]:
        causes = validate_kind_status(self.res.group, self.res.kind, obj)
        if self.res.kind == "Deployment" and self.res.group == "apps":
            causes += spec_checks.validate_deployment_status(obj)
        if self.res.resource == "poddisruptionbudgets" and self.res.group == "policy":
            causes += spec_checks.validate_pdb_status(obj)
        return causes


def refuse_in_terminating_namespace(store: Any, res: Resource, obj: Obj) -> None:
    """The NamespaceLifecycle admission plugin: nothing new in a namespace being deleted."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    namespace = meta.get("namespace") or ""
    ns = store.try_get(R.NAMESPACES.key, "", namespace) if namespace else None
    if ns is None or not (ns.get("metadata") or {}).get("deletionTimestamp"):
        return
    name = meta.get("name") or ""
    raise APIError(403, "Forbidden", f'{res.group_resource} "{name}" is forbidden: unable to '
                   f"create new content in namespace {namespace} because it is being terminated",
                   {"name": name, "group": res.group, "kind": res.resource,
                    "causes": [{"reason": "NamespaceTerminating", "field": "metadata.namespace",
                                "message": f"namespace {namespace} is being terminated"}]})


class EventStrategy(Strategy):
    """Core v1 Events are stored; events.k8s.io/v1 requests are converted on the way in/out."""

    _MAP = (("regarding", "involvedObject"), ("note", "message"), ("deprecatedCount", "count"),
            ("deprecatedFirstTimestamp", "firstTimestamp"),
            ("deprecatedLastTimestamp", "lastTimestamp"), ("reportingController", "reportingComponent"),
            ("related", "related"), ("action", "action"), ("series", "series"),
            ("eventTime", "eventTime"), ("reportingInstance", "reportingInstance"))

    def to_storage(self, obj: Obj, version: str) -> Obj:
        if self.res.group == "events.k8s.io":
            obj = _renamed(obj, (*self._MAP, ("deprecatedSource", "source")))
            obj.setdefault("source", {})
            if obj.get("reportingComponent") and not obj["source"].get("component"):
                obj["source"]["component"] = obj["reportingComponent"]
        obj["apiVersion"], obj["kind"] = "v1", "Event"
        return obj

    def from_storage(self, obj: Obj, version: str) -> Obj:
        if self.res.group == "events.k8s.io":
            out = _renamed(obj, (*((core, new) for new, core in self._MAP), ("source", "deprecatedSource")))
            out["apiVersion"], out["kind"] = "events.k8s.io/v1", "Event"
            return out
        obj["apiVersion"], obj["kind"] = "v1", "Event"
        return obj

    def validate(self, obj: Obj, old: Obj | None) -> list[dict[str, str]]:
        # upstream checks little more than the metadata (and involvedObject.namespace), and
        # the type of a new events.k8s.io/v1 Event
        causes = validate_metadata(self.res, obj)
        if old is None and self.res.group == "events.k8s.io":
            causes += spec_checks.validate_new_event_type(obj)
        return causes


def _renamed(obj: Obj, pairs: tuple[tuple[str, str], ...]) -> Obj:
    """A copy of ``obj`` with each field ``a`` of the ``(a, b)`` pairs renamed ``b``."""
    out = {k: v for k, v in obj.items() if k not in {a for a, _ in pairs}}
    for a, b in pairs:
        if a in obj:
            out[b] = obj[a]
    return out


def _unread_parts(res: Resource, obj: Obj) -> list[dict[str, str]]:
    """Upstream's checks of fields the simulation never reads (pyhpa.api.spec_checks): the API
    server applies them to requests, after defaulting; the simulation's check of stored objects
    (workload_validation.stored_object_problem) leaves them out."""
    if res.group == "coordination.k8s.io" and res.resource == "leases":
        return spec_checks.validate_lease(obj)
    if res.group == "" and res.resource == "pods":
        return spec_checks.validate_container_ports(obj.get("spec"), "spec")
    if res.scale is None or res.group not in ("apps", ""):
        return []
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
    causes = spec_checks.validate_container_ports(template.get("spec"), "spec.template.spec")
    if res.kind == "Deployment":
        causes += spec_checks.validate_deployment_strategy(obj)
    return causes
