"""Swagger 2.0 documents encoded as gnostic ``openapi.v2.Document`` protobuf.

Why: kubectl 1.27/1.28 read ``/openapi/v2`` only in this form (JSON fails to parse), and every
kubectl uses it for ``explain`` fallbacks and client-side apply's patch metadata. We encode the
subset of the message set our documents use: the document's swagger/info/paths/definitions,
PATCH operations with query parameters, and full Schema objects (field numbers from gnostic's
OpenAPIv2.proto, github.com/google/gnostic-models). Vendor extensions carry their value as YAML;
JSON text is valid YAML, so values are written with the JSON encoder.
"""

from __future__ import annotations

import struct as _struct
from types import MappingProxyType
from typing import Any, Mapping

import msgspec

from pyhpa.cluster.apiserver.protobuf import encode_varint, field_bytes, field_varint

V2_CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

# Schema message: JSON keyword -> (field number, wire kind).
_SCHEMA_FIELDS: Mapping[str, tuple[int, str]] = MappingProxyType({
    "$ref": (1, "str"), "format": (2, "str"), "title": (3, "str"), "description": (4, "str"),
    "default": (5, "any"), "multipleOf": (6, "double"), "maximum": (7, "double"),
    "exclusiveMaximum": (8, "bool"), "minimum": (9, "double"), "exclusiveMinimum": (10, "bool"),
    "maxLength": (11, "int"), "minLength": (12, "int"), "pattern": (13, "str"),
    "maxItems": (14, "int"), "minItems": (15, "int"), "uniqueItems": (16, "bool"),
    "maxProperties": (17, "int"), "minProperties": (18, "int"), "required": (19, "strs"),
    "enum": (20, "anys"), "additionalProperties": (21, "additional"), "type": (22, "type"),
    "items": (23, "items"), "allOf": (24, "schemas"), "properties": (25, "properties"),
    "discriminator": (26, "str"), "readOnly": (27, "bool"), "example": (30, "any"),
})
_SCHEMA_EXTENSIONS = 31


def _yaml(value: Any) -> bytes:
    return msgspec.json.encode(value)


def _any(value: Any) -> bytes:
    """An ``Any`` message holding ``value`` as YAML (field 2)."""
    return field_bytes(2, _yaml(value))


def _named_any(name: str, value: Any) -> bytes:
    return field_bytes(1, name) + field_bytes(2, _any(value))


def _double(num: int, value: float) -> bytes:
    return encode_varint(num << 3 | 1) + _struct.pack("<d", float(value))


def encode_schema(schema: dict[str, Any]) -> bytes:
    """A Swagger 2.0 Schema object as a gnostic ``Schema`` message; ``x-*`` keys become vendor
    extensions and keywords gnostic has no field for are dropped."""
    out = bytearray()
    for key, value in schema.items():
        if key.startswith("x-"):
            out += field_bytes(_SCHEMA_EXTENSIONS, _named_any(key, value))
            continue
        spec = _SCHEMA_FIELDS.get(key)
        if spec is None:
            continue
        num, kind = spec
        if kind == "str":
            out += field_bytes(num, str(value))
        elif kind == "bool":
            out += field_varint(num, 1 if value else 0)
        elif kind == "int":
            out += field_varint(num, int(value))
        elif kind == "double":
            out += _double(num, value)
        elif kind == "any":
            out += field_bytes(num, _any(value))
        elif kind == "strs":
            for s in value:
                out += field_bytes(num, str(s))
        elif kind == "anys":
            for v in value:
                out += field_bytes(num, _any(v))
        elif kind == "type":  # TypeItem{repeated string value = 1}
            types = value if isinstance(value, list) else [value]
            out += field_bytes(num, b"".join(field_bytes(1, t) for t in types))
        elif kind == "items":  # ItemsItem{repeated Schema schema = 1}
            items = value if isinstance(value, list) else [value]
            out += field_bytes(num, b"".join(field_bytes(1, encode_schema(s)) for s in items))
        elif kind == "schemas":
            for s in value:
                out += field_bytes(num, encode_schema(s))
        elif kind == "additional":  # AdditionalPropertiesItem{oneof: Schema=1 | bool=2}
            inner = (field_varint(2, 1 if value else 0) if isinstance(value, bool)
                     else field_bytes(1, encode_schema(value)))
            out += field_bytes(num, inner)
        elif kind == "properties":  # Properties{repeated NamedSchema additional_properties = 1}
            out += field_bytes(num, _named_schemas(value))
    return bytes(out)


def _named_schemas(schemas: dict[str, dict[str, Any]]) -> bytes:
    return b"".join(field_bytes(1, field_bytes(1, name) + field_bytes(2, encode_schema(s)))
                    for name, s in schemas.items())


def _parameter(param: dict[str, Any]) -> bytes:
    """A query parameter: ParametersItem{Parameter{NonBodyParameter{QueryParameterSubSchema}}}."""
    q = (field_bytes(2, param.get("in", "query")) + field_bytes(4, param["name"])
         + field_bytes(6, param.get("type", "string")))
    if param.get("description"):
        q = field_bytes(3, param["description"]) + q
    if param.get("uniqueItems"):
        q += field_varint(20, 1)
    return field_bytes(1, field_bytes(2, field_bytes(3, q)))


def _response(resp: dict[str, Any]) -> bytes:
    """Response{description=1, schema=2 (SchemaItem{schema=1})}."""
    out = field_bytes(1, resp.get("description", ""))
    if "schema" in resp:
        out += field_bytes(2, field_bytes(1, encode_schema(resp["schema"])))
    return out


def _operation(op: dict[str, Any]) -> bytes:
    out = bytearray()
    if op.get("description"):
        out += field_bytes(3, op["description"])
    out += field_bytes(5, op["operationId"])
    for c in op.get("consumes", ()):
        out += field_bytes(7, c)
    for p in op.get("parameters", ()):
        out += field_bytes(8, _parameter(p))
    codes = b"".join(  # Responses{response_code=1: NamedResponseValue{name, ResponseValue{1}}}
        field_bytes(1, field_bytes(1, code) + field_bytes(2, field_bytes(1, _response(r))))
        for code, r in op.get("responses", {}).items())
    out += field_bytes(9, codes)
    for key, value in op.items():
        if key.startswith("x-"):
            out += field_bytes(13, _named_any(key, value))
    return bytes(out)


_PATH_OPS = MappingProxyType({"get": 2, "put": 3, "post": 4, "delete": 5, "patch": 8})


def encode_document(doc: dict[str, Any]) -> bytes:
    """A Swagger 2.0 document (swagger, info, paths, definitions) as gnostic protobuf."""
    info = doc.get("info", {})
    out = field_bytes(1, doc.get("swagger", "2.0"))
    out += field_bytes(2, field_bytes(1, info.get("title", ""))
                       + field_bytes(2, info.get("version", "")))
    paths = bytearray()
    for path, item in doc.get("paths", {}).items():
        body = b"".join(field_bytes(_PATH_OPS[verb], _operation(op))
                        for verb, op in item.items() if verb in _PATH_OPS)
        paths += field_bytes(2, field_bytes(1, path) + field_bytes(2, body))
    out += field_bytes(8, bytes(paths))
    if doc.get("definitions"):
        out += field_bytes(9, _named_schemas(doc["definitions"]))
    return out
