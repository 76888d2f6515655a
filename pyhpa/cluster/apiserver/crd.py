"""CustomResourceDefinitions (``apiextensions.k8s.io/v1``) and the kinds they define.

Why: ``kubectl apply -f deploy/crd-pyhpa.io.yaml`` must work, so that the controller's
side-by-side mode (``pyhpa run --hpa-api-group pyhpa.io``) runs against the embedded cluster, and
any kind a user defines with a ``scale`` subresource can be autoscaled. A stored CRD becomes one
:class:`~pyhpa.cluster.apiserver.resources.Resource` per served version (discovery, routing, Tables,
``status``/``scale`` subresources, field selectors) with a :class:`CustomResourceStrategy` that
defaults, prunes and validates objects by the version's structural schema
(:mod:`.structural`). :class:`CustomResources` keeps the registry in step with the
stored CRDs: at start (so they survive restarts) and after every CRD write; deleting a CRD
deletes its objects. Versions are converted with strategy ``None`` (only ``apiVersion`` changes).
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from pyhpa.cluster.apiserver import jsonpath, structural
from pyhpa.cluster.apiserver.columns import Column, TableClock
from pyhpa.cluster.apiserver.garbage_collector import collect_dependents
from pyhpa.cluster.apiserver.openapi import Documents
from pyhpa.cluster.apiserver.resources import (ALL_VERBS, CRDS, RESOURCES, Registry, Resource,
                                               ScalePaths, Subresource, version_priority)
from pyhpa.api.field_errors import cause, object_items
from pyhpa.api.schemas.conform import Conformed
from pyhpa.cluster.apiserver.storage import Store
from pyhpa.api.names import DNS1123_LABEL, DNS1123_SUBDOMAIN
from pyhpa.cluster.apiserver.strategies import Strategy

Obj = dict[str, Any]
Cause = dict[str, str]

STORE_PREFIX = "crd:"  # store keys of custom kinds: crd:<group>/<plural>
_KIND = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
_COLUMN_TYPES = ("integer", "number", "string", "boolean", "date")
_PROTECTED = ("k8s.io", "kubernetes.io")  # upstream wants an approval annotation for these
_APPROVAL = "api-approved.kubernetes.io"


# --------------------------------------------------------------------------- the CRD kind itself


def _spec(crd: Obj) -> Obj:
    spec = crd.get("spec")
    return spec if isinstance(spec, dict) else {}


def _names(crd: Obj) -> Obj:
    names = _spec(crd).get("names")
    return names if isinstance(names, dict) else {}


def _versions(crd: Obj) -> list[Obj]:
    return [v for v in _spec(crd).get("versions") or [] if isinstance(v, dict)]


def storage_version(crd: Obj) -> str:
    return next((v.get("name") or "" for v in _versions(crd) if v.get("storage")), "")


def store_key(group: str, plural: str) -> str:
    """Where a CRD's objects are stored, whatever their version (kept when versions change)."""
    return f"{STORE_PREFIX}{group}/{plural}"


def default_crd(crd: Obj) -> None:
    """Upstream's CRD defaults: singular and listKind from kind, conversion strategy None."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str):
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")
    spec.setdefault("conversion", {"strategy": "None"})


def crd_status(crd: Obj, old_status: Obj | None) -> Obj:
    """What upstream's CRD controllers report once the names are accepted: Established."""
    names = _names(crd)
    accepted = {k: names[k] for k in ("plural", "singular", "shortNames", "kind", "listKind",
                                      "categories") if k in names}
    ts = (crd.get("metadata") or {}).get("creationTimestamp")
    old = old_status or {}
    stored = list(old.get("storedVersions") or [])
    current = storage_version(crd)
    if current and current not in stored:
        stored.append(current)
    previous = {c.get("type"): c for c in old.get("conditions") or [] if isinstance(c, dict)}

    def condition(type_: str, reason: str, message: str) -> Obj:
        kept = previous.get(type_)
        when = kept.get("lastTransitionTime") if kept and kept.get("status") == "True" else ts
        return {"type": type_, "status": "True", "lastTransitionTime": when, "reason": reason,
                "message": message}
    return {"conditions": [condition("NamesAccepted", "NoConflicts", "no conflicts found"),
                           condition("Established", "InitialNamesAccepted",
                                     "the initial names have been accepted")],
            "acceptedNames": accepted, "storedVersions": stored}


def validate_crd(crd: Obj, old: Obj | None) -> list[Cause]:
    """Field errors of a CustomResourceDefinition (the checks the served kinds rely on)."""
    out: list[Cause] = []
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return [cause("spec", "Required")]
    group = spec.get("group")
    names = _names(crd)
    plural, kind = names.get("plural"), names.get("kind")
    if not isinstance(group, str) or not group:
        out.append(cause("spec.group", "Required"))
    elif not DNS1123_SUBDOMAIN.match(group) or "." not in group:
        out.append(cause("spec.group", "Invalid", group, "should be a domain with at least one dot"))
    elif any(group == p or group.endswith("." + p) for p in _PROTECTED) and \
            _APPROVAL not in ((crd.get("metadata") or {}).get("annotations") or {}):
        out.append(cause(f"metadata.annotations[{_APPROVAL}]", "Required",
                         detail=f"protected groups ({', '.join('*.' + p for p in _PROTECTED)}) "
                                "must have an approval annotation"))
    if not isinstance(plural, str) or not plural:
        out.append(cause("spec.names.plural", "Required"))
    elif not DNS1123_LABEL.match(plural):
        out.append(cause("spec.names.plural", "Invalid", plural,
                         "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                         "characters or '-'"))
    for field in ("singular", "listKind"):
        value = names.get(field)
        if value is not None and not isinstance(value, str):
            out.append(cause(f"spec.names.{field}", "Invalid", value, "must be a string"))
    if not isinstance(kind, str) or not kind:
        out.append(cause("spec.names.kind", "Required"))
    elif not _KIND.match(kind):
        out.append(cause("spec.names.kind", "Invalid", kind,
                         "may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?"))
    for field in ("shortNames", "categories"):
        for i, v in enumerate(names.get(field) or []):
            if not isinstance(v, str) or not DNS1123_LABEL.match(v):
                out.append(cause(f"spec.names.{field}[{i}]", "Invalid", v,
                                 "must be a lowercase RFC 1123 label"))
    name = (crd.get("metadata") or {}).get("name")
    if isinstance(plural, str) and isinstance(group, str) and name != f"{plural}.{group}":
        out.append(cause("metadata.name", "Invalid", name,
                         'must be spec.names.plural+"."+spec.group'))
    scope = spec.get("scope")
    if scope not in ("Namespaced", "Cluster"):
        out.append(cause("spec.scope", "NotSupported", scope,
                         'supported values: "Cluster", "Namespaced"'))
    for builtin in RESOURCES:
        if (builtin.group, builtin.resource) == (group, plural):
            out.append(cause("spec.names.plural", "Forbidden",
                             detail=f"{plural}.{group} is served by the embedded cluster itself"))
    out += _validate_versions(spec)
    if old is not None:
        old_spec = _spec(old)
        if old_spec.get("scope") != scope:
            out.append(cause("spec.scope", "Invalid", scope, "field is immutable"))
    return out


def _validate_versions(spec: Obj) -> list[Cause]:
    out: list[Cause] = []
    versions = spec.get("versions")
    if not isinstance(versions, list) or not versions:
        return [cause("spec.versions", "Invalid", None, "must have at least one version")]
    seen: set[str] = set()
    storage = 0
    for path, v in object_items(versions, "spec.versions", out):
        name = v.get("name")
        if not isinstance(name, str) or not DNS1123_LABEL.match(name):
            out.append(cause(f"{path}.name", "Invalid", name, "must be a DNS label"))
        elif name in seen:
            out.append(cause(f"{path}.name", "Duplicate", name))
        seen.add(name if isinstance(name, str) else "")
        storage += 1 if v.get("storage") is True else 0
        for flag in ("served", "storage"):
            if not isinstance(v.get(flag), bool):
                out.append(cause(f"{path}.{flag}", "Required"))
        root = (v.get("schema") or {}).get("openAPIV3Schema") \
            if isinstance(v.get("schema"), dict) else None
        if root is None:
            out.append(cause(f"{path}.schema.openAPIV3Schema", "Required",
                             detail="schemas are required"))
        else:
            out += structural.structural_errors(root, f"{path}.schema.openAPIV3Schema")
        out += _validate_subresources(v.get("subresources"), f"{path}.subresources")
        for cpath, col in object_items(v.get("additionalPrinterColumns") or [],
                                       f"{path}.additionalPrinterColumns", out):
            if not col.get("name"):
                out.append(cause(f"{cpath}.name", "Required"))
            if col.get("type") not in _COLUMN_TYPES:
                out.append(cause(f"{cpath}.type", "NotSupported", col.get("type"),
                                 "supported values: " + ", ".join(f'"{t}"' for t in _COLUMN_TYPES)))
            out += _check_path(col.get("jsonPath"), f"{cpath}.jsonPath")
        for j, sf in enumerate(v.get("selectableFields") or []):
            out += _check_path((sf or {}).get("jsonPath") if isinstance(sf, dict) else None,
                               f"{path}.selectableFields[{j}].jsonPath")
    if versions and storage != 1:
        out.append(cause("spec.versions", "Invalid", None,
                         "must have exactly one version marked as storage version"))
    return out


def _check_path(path: Any, field: str) -> list[Cause]:
    if not isinstance(path, str) or not path:
        return [cause(field, "Required")]
    try:
        jsonpath.parse(path)
    except jsonpath.JSONPathError as exc:
        return [cause(field, "Invalid", path, str(exc))]
    return []


def _validate_subresources(subs: Any, path: str) -> list[Cause]:
    if subs is None:
        return []
    if not isinstance(subs, dict):
        return [cause(path, "Invalid", None, "must be an object")]
    out: list[Cause] = []
    scale = subs.get("scale")
    if scale is not None:
        if not isinstance(scale, dict):
            return [cause(f"{path}.scale", "Invalid", None, "must be an object")]
        for field, prefixes in (("specReplicasPath", (".spec.",)),
                                ("statusReplicasPath", (".status.",)),
                                ("labelSelectorPath", (".spec.", ".status."))):
            value = scale.get(field)
            if value is None:
                if field != "labelSelectorPath":
                    out.append(cause(f"{path}.scale.{field}", "Required"))
                continue
            if not isinstance(value, str) or not value.startswith(prefixes) \
                    or not re.fullmatch(r"(\.[A-Za-z0-9_-]+)+", value):
                out.append(cause(f"{path}.scale.{field}", "Invalid", value,
                                 "should be a json path under " + " or ".join(prefixes)))
    return out


class CRDStrategy(Strategy):
    """CRDs: upstream defaults, validation, and the Established status its controllers set."""

    bump_generation = True

    def prepare_create(self, obj: Obj) -> None:
        super().prepare_create(obj)
        default_crd(obj)
        obj["status"] = crd_status(obj, None)

    def prepare_update(self, new: Obj, old: Obj) -> None:
        super().prepare_update(new, old)
        default_crd(new)
        new["status"] = crd_status(new, old.get("status"))

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        return super().validate(obj, old) + validate_crd(obj, old)


# --------------------------------------------------------------------------- the defined kinds


def _cell(col_type: str, value: Any, now: TableClock) -> Any:
    """A printer column's cell, as upstream's CRD table convertor makes it."""
    if value is None:
        return None
    if col_type == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, (dict, list)):
            return json.dumps(value, separators=(",", ":"))
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)
    if col_type == "integer":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return int(value)
        return None
    if col_type == "number":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        return None
    if col_type == "boolean":
        return value if isinstance(value, bool) else None
    if col_type == "date":
        if not isinstance(value, str):
            return None
        shown = now.age(value)
        return "<invalid>" if shown == "<unknown>" else shown
    return None


def _printer_column(col: Obj) -> Column:
    steps = jsonpath.parse(col["jsonPath"])
    col_type = col.get("type") or "string"

    def cell(o: Obj, now: TableClock) -> Any:
        return _cell(col_type, jsonpath.first(steps, o), now)
    return Column(col.get("name") or "", cell, type=col_type, format=col.get("format") or "",
                  description=col.get("description") or "", priority=int(col.get("priority") or 0))


def _columns(version: Obj) -> tuple[Column, ...]:
    name = Column("Name", lambda o, n: (o.get("metadata") or {}).get("name") or "", format="name",
                  description="Name of the object; unique within its namespace.")
    cols = version.get("additionalPrinterColumns")
    if not cols:
        cols = [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
                 "description": "Time since the object was created."}]
    return (name, *(_printer_column(c) for c in cols))


def resources_for(crd: Obj) -> list[Resource]:
    """One Resource per served version of ``crd``, the preferred version first."""
    spec, names = _spec(crd), _names(crd)
    group, plural, kind = spec["group"], names["plural"], names["kind"]
    storage = storage_version(crd)
    served = sorted((v for v in _versions(crd) if v.get("served")),
                    key=lambda v: version_priority(v.get("name") or ""))
    out: list[Resource] = []
    for v in served:
        subs_spec = v.get("subresources") or {}
        subresources: list[Subresource] = []
        paths = None
        if isinstance(subs_spec.get("scale"), dict):
            sc = subs_spec["scale"]
            subresources.append(Subresource("scale", "autoscaling", "v1", "Scale"))
            paths = ScalePaths(sc["specReplicasPath"], sc["statusReplicasPath"],
                               sc.get("labelSelectorPath"), selector_from_spec=False)
        if isinstance(subs_spec.get("status"), dict):
            subresources.append(Subresource("status"))
        root = ((v.get("schema") or {}).get("openAPIV3Schema")) or {"type": "object"}
        selectable = tuple(sf["jsonPath"].lstrip(".") for sf in v.get("selectableFields") or []
                           if isinstance(sf, dict) and isinstance(sf.get("jsonPath"), str))
        out.append(Resource(
            group, (v["name"],), plural, kind, namespaced=spec.get("scope") != "Cluster",
            singular=names.get("singular") or kind.lower(),
            short_names=tuple(names.get("shortNames") or ()),
            categories=tuple(names.get("categories") or ()),
            subresources=tuple(subresources), verbs=ALL_VERBS, columns=_columns(v),
            scale=paths, strategy="custom", field_labels=selectable, storage=storage,
            store_key=store_key(group, plural),
            extra={"schema": root, "list_kind": names.get("listKind")}))
    storage_res = next((r for r in out if r.versions[0] == storage), None)
    if storage_res is not None:
        for r in out:
            if r != storage_res:  # another served version
                r.extra["storage"] = storage_res
    if len(_versions(crd)) > 1:
        for r in out:  # objects may be stored in an older storage version: always convert
            r.extra["convert"] = True
    return out


class CustomResourceStrategy(Strategy):
    """Writes of a custom kind: the generic rules plus its version's structural schema."""

    @property
    def _schema(self) -> Obj:
        return self.res.extra.get("schema") or {"type": "object"}

    def _normalise(self, obj: Obj) -> None:
        structural.apply_defaults(obj, self._schema)
        structural.prune(obj, self._schema)

    def prepare_create(self, obj: Obj) -> None:
        super().prepare_create(obj)
        self._normalise(obj)

    def prepare_update(self, new: Obj, old: Obj) -> None:
        super().prepare_update(new, old)
        self._normalise(new)

    def prepare_status_update(self, new: Obj, old: Obj) -> None:
        super().prepare_status_update(new, old)
        self._normalise(new)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        by_schema = structural.validate(obj, self._schema)
        fields = {c["field"] for c in by_schema}
        generic = [c for c in super().validate(obj, old) if c["field"] not in fields]
        return generic + by_schema

    def validate_status(self, obj: Obj, old: Obj) -> list[Cause]:
        return [c for c in structural.validate(obj, self._schema)
                if c["field"] == "status" or c["field"].startswith(("status.", "status["))]

    def conform(self, obj: Obj, version: str, *, drop: bool) -> tuple[Obj, Conformed]:
        """Upstream's metadata types, and the fields the structural schema prunes (the pruning
        itself happens in ``prepare_*``)."""
        obj, found = super().conform(obj, version, drop=drop)
        if found.error is None:
            pruned = structural.unknown_fields(obj, self._schema)
            found.unknown += [f for f in pruned if f not in found.unknown]
        return obj, found


# --------------------------------------------------------------------------- keeping them served


class CustomResources:
    """The registry's custom kinds, kept in step with the stored CRDs.

    :meth:`sync` runs at start and after every write to a CRD: new and changed CRDs (re)register
    their versions in ``registry`` and their schemas in ``documents``, removed ones are
    unregistered and their objects (and what those own) deleted; ``on_change`` runs after the
    served kinds changed (the server forgets what it derived from them).
    """

    def __init__(self, store: Store, registry: Registry, documents: Documents,
                 on_change: Callable[[], None]) -> None:
        self.store, self.registry, self.documents = store, registry, documents
        self.on_change = on_change
        self._served: dict[str, tuple[str, list[Resource]]] = {}  # CRD name -> (spec, resources)

    def sync(self) -> None:
        store, registry = self.store, self.registry
        wanted: dict[str, tuple[str, Obj]] = {}
        for crd in store.list(CRDS.key).items:
            name = (crd.get("metadata") or {}).get("name") or ""
            if validate_crd(crd, None):  # stored before a rule existed: not served
                continue
            wanted[name] = (json.dumps(_spec(crd), sort_keys=True), crd)
        served = dict(self._served)  # swapped in whole: the simulation thread reads it
        old_resources: list[Resource] = []
        new_resources: list[Resource] = []
        removed: list[Resource] = []
        for name, (fingerprint, resources) in list(served.items()):
            if name not in wanted or wanted[name][0] != fingerprint:
                old_resources += resources
                del served[name]
                if name not in wanted:
                    removed += resources
        for name, (fingerprint, crd) in wanted.items():
            if name in served:
                continue
            resources = resources_for(crd)
            served[name] = (fingerprint, resources)
            new_resources += resources
        if not old_resources and not new_resources:
            return
        registry.swap(old_resources, new_resources)
        self._served = served
        documents = self.documents
        for r in old_resources:
            documents.withdraw(r.group, r.versions[0], r.kind)
        for r in new_resources:
            documents.contribute(r.group, r.versions[0], r.kind, r.extra["schema"])
        self.on_change()
        for key in {r.key for r in removed}:
            self._delete_objects(key)

    def _delete_objects(self, key: str) -> None:
        store = self.store
        for obj in store.list(key).items:
            meta = obj.get("metadata") or {}
            try:
                store.delete(key, meta.get("namespace") or "", meta.get("name") or "",
                             grace_finalizers=False)
            except Exception:  # noqa: BLE001 - already gone
                continue
            collect_dependents(store, self.registry, meta.get("uid"), meta.get("namespace") or "")

    def scalable(self) -> list[Resource]:
        """The storage-version Resource of every custom kind with a scale subresource."""
        out = []
        for _, resources in self._served.values():
            for r in resources:
                if r.scale is not None and "storage" not in r.extra:
                    out.append(r)
        return out
