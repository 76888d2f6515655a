"""Small constructors for the OpenAPI v3 schemas the embedded cluster publishes.

Why helpers: the definitions in this package are tables of fields; each helper spells one
upstream convention once (a struct field is ``allOf: [$ref]`` beside its description, a keyed list
carries the four list markers strategic merge and server-side apply read, an opaque object is
``x-kubernetes-preserve-unknown-fields``), so the tables stay short and cannot drift between kinds.

Every schema here is OpenAPI v3 (``#/components/schemas/NAME`` references);
:mod:`pyhpa.cluster.apiserver.openapi` derives the Swagger 2.0 form from it.
"""

from __future__ import annotations

from typing import Any, Iterable

Schema = dict[str, Any]
REF_PREFIX = "#/components/schemas/"

# Definition names of the shared apimachinery types (upstream's names, so kubectl shows the
# familiar type names such as <Quantity>, <ObjectMeta>, <Time>).
META = "io.k8s.apimachinery.pkg.apis.meta.v1."
CORE_V1 = "io.k8s.api.core.v1."
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
TIME = META + "Time"
MICRO_TIME = META + "MicroTime"
OBJECT_META = META + "ObjectMeta"
LIST_META = META + "ListMeta"
LABEL_SELECTOR = META + "LabelSelector"

GVK = "x-kubernetes-group-version-kind"
LIST_TYPE = "x-kubernetes-list-type"
LIST_MAP_KEYS = "x-kubernetes-list-map-keys"
MAP_TYPE = "x-kubernetes-map-type"
MERGE_KEY = "x-kubernetes-patch-merge-key"
PATCH_STRATEGY = "x-kubernetes-patch-strategy"
PRESERVE = "x-kubernetes-preserve-unknown-fields"


def ref(name: str) -> Schema:
    return {"$ref": REF_PREFIX + name}


def ref_name(schema: Schema) -> str | None:
    """The definition a schema points at, directly or through a one-element ``allOf``."""
    target = schema.get("$ref")
    if target is None and len(schema.get("allOf") or ()) == 1:
        target = schema["allOf"][0].get("$ref")
    if isinstance(target, str) and target.startswith(REF_PREFIX):
        return target[len(REF_PREFIX):]
    return None


def _with(schema: Schema, description: str, extra: dict[str, Any]) -> Schema:
    if description:
        schema["description"] = description
    schema.update({k: v for k, v in extra.items() if v is not None})
    return schema


# --------------------------------------------------------------------------- scalars


def string(description: str, *, enum: Iterable[str] | None = None, fmt: str | None = None,
           default: str | None = None, **extra: Any) -> Schema:
    s: Schema = {"type": "string"}
    if fmt:
        s["format"] = fmt
    if enum is not None:
        s["enum"] = list(enum)
    if default is not None:
        s["default"] = default
    return _with(s, description, extra)


def int32(description: str, *, minimum: int | None = None, maximum: int | None = None,
          default: int | None = None) -> Schema:
    return _integer("int32", description, minimum, maximum, default)


def int64(description: str, *, minimum: int | None = None, maximum: int | None = None,
          default: int | None = None) -> Schema:
    return _integer("int64", description, minimum, maximum, default)


def _integer(fmt: str, description: str, minimum: int | None, maximum: int | None,
             default: int | None) -> Schema:
    s: Schema = {"type": "integer", "format": fmt}
    return _with(s, description, {"minimum": minimum, "maximum": maximum, "default": default})


def boolean(description: str, *, default: bool | None = None) -> Schema:
    return _with({"type": "boolean"}, description, {"default": default})


# --------------------------------------------------------------------------- references


def struct(name: str, description: str, *, embedded: bool = False, **extra: Any) -> Schema:
    """A field holding another definition. ``embedded`` = a non-pointer Go struct (never null),
    which upstream marks with an empty-object default."""
    s: Schema = {"allOf": [ref(name)]}
    if embedded:
        s["default"] = {}
    return _with(s, description, extra)


def quantity(description: str) -> Schema:
    return struct(QUANTITY, description)


def int_or_string(description: str) -> Schema:
    return struct(INT_OR_STRING, description)


def time(description: str) -> Schema:
    return struct(TIME, description)


def micro_time(description: str) -> Schema:
    return struct(MICRO_TIME, description)


_OBJECT_META = ("Standard object metadata: name, namespace, labels, annotations, owners and "
                "bookkeeping set by the server.")


def object_meta(description: str = _OBJECT_META) -> Schema:
    return struct(OBJECT_META, description, embedded=True)


def list_meta() -> Schema:
    return struct(LIST_META, "List metadata: the resourceVersion of the list and the "
                             "continue token for paging.", embedded=True)


def label_selector(description: str) -> Schema:
    return struct(LABEL_SELECTOR, description)


# --------------------------------------------------------------------------- collections


def _items(item: Schema | str) -> Schema:
    return ref(item) if isinstance(item, str) else item


def atomic_list(description: str, item: Schema | str) -> Schema:
    """A list replaced as a whole by patches and by server-side apply."""
    return _with({"type": "array", "items": _items(item), LIST_TYPE: "atomic"}, description, {})


def keyed_list(description: str, item: str, keys: tuple[str, ...], *,
               strategy: str | None = "merge") -> Schema:
    """A list of objects identified by ``keys``; strategic merge patches match on the first key.

    ``strategy=None`` is a list upstream keys for server-side apply only (no patch strategy).
    """
    s: Schema = {"type": "array", "items": ref(item), LIST_TYPE: "map",
                 LIST_MAP_KEYS: list(keys)}
    if strategy:
        s[MERGE_KEY] = keys[0]
        s[PATCH_STRATEGY] = strategy
    return _with(s, description, {})


def set_list(description: str, item: Schema, *, strategy: str | None = None) -> Schema:
    """A list of unique scalars; with ``strategy="merge"`` patches add to it, not replace it."""
    s: Schema = {"type": "array", "items": item, LIST_TYPE: "set"}
    if strategy:
        s[PATCH_STRATEGY] = strategy
    return _with(s, description, {})


def plain_list(description: str, item: Schema | str) -> Schema:
    """A list without markers (upstream leaves some, mostly in status, unannotated)."""
    return _with({"type": "array", "items": _items(item)}, description, {})


def strings() -> Schema:
    return {"type": "string", "default": ""}


def string_map(description: str, *, atomic: bool = False) -> Schema:
    s: Schema = {"type": "object", "additionalProperties": strings()}
    if atomic:
        s[MAP_TYPE] = "atomic"
    return _with(s, description, {})


def quantity_map(description: str) -> Schema:
    return _with({"type": "object", "additionalProperties": ref(QUANTITY)}, description, {})


def opaque(description: str) -> Schema:
    """An object whose inside we do not model: any content is kept as sent."""
    return _with({"type": "object", PRESERVE: True}, description, {})


# --------------------------------------------------------------------------- definitions


def definition(description: str, properties: dict[str, Schema], *, required: Iterable[str] = (),
               atomic: bool = False, gvk: tuple[str, str, str] | None = None) -> Schema:
    """A named object type. ``gvk`` = (group, version, kind) for a top-level kind."""
    s: Schema = {"description": description, "type": "object",
                 "properties": dict(sorted(properties.items()))}
    req = list(required)
    if req:
        s["required"] = req
    if atomic:
        s[MAP_TYPE] = "atomic"
    if gvk is not None:
        s[GVK] = [{"group": gvk[0], "kind": gvk[2], "version": gvk[1]}]
    return s


def condition(kind: str, types: str, *, update_time: bool = False) -> Schema:
    """A status condition of ``kind`` (its types listed in the description)."""
    props = {
        "type": string(f"Condition type ({types})."),
        "status": string("True, False or Unknown.", enum=("False", "True", "Unknown")),
        "lastTransitionTime": time("When status last changed."),
        "reason": string("Machine-readable reason of the last transition."),
        "message": string("Human-readable detail."),
    }
    if update_time:
        props["lastUpdateTime"] = time("When the condition was last updated.")
    return definition(f"One condition of a {kind}.", props, required=("type", "status"))


def top_level(description: str, group: str, version: str, kind: str, properties: dict[str, Schema],
              *, required: Iterable[str] = ()) -> Schema:
    """A kind's schema: apiVersion, kind and metadata first-class, plus ``properties``."""
    api_version = f"{group}/{version}" if group else version
    props = {
        "apiVersion": string(f"The schema version of this object; {api_version} here."),
        "kind": string(f"The type of this object; {kind} here."),
        "metadata": object_meta(),
        **properties,
    }
    return definition(description, props, required=required, gvk=(group, version, kind))


def list_of(kind_name: str, group: str, version: str, kind: str) -> Schema:
    """The ``<Kind>List`` definition for a kind named ``kind_name``."""
    api_version = f"{group}/{version}" if group else version
    return definition(
        f"A page of {kind} objects, as returned by a list request.",
        {"apiVersion": string(f"The schema version of this list; {api_version} here."),
         "kind": string(f"The type of this list; {kind}List here."),
         "metadata": list_meta(),
         "items": plain_list(f"The {kind} objects of this page.", kind_name)},
        required=("items",), gvk=(group, version, kind + "List"))
