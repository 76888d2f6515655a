"""Protobuf request bodies as kubectl sends them, for the tests of the server's protobuf decoding."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from pyhpa.cluster.apiserver.protobuf import MAGIC, SCHEMAS, field_bytes, field_varint


def encode_unknown(api_version: str, kind: str, raw: bytes) -> bytes:
    """Wrap message bytes the way kubectl does."""
    type_meta = field_bytes(1, api_version) + field_bytes(2, kind)
    return MAGIC + field_bytes(1, type_meta) + field_bytes(2, raw) + field_bytes(3, b"") + \
        field_bytes(4, b"")


def encode_message(schema: str, obj: dict[str, Any]) -> bytes:
    """The inverse of the server's decode_message for the same schemas."""
    fields = SCHEMAS[schema]
    out = bytearray()
    for num, (name, typ) in sorted(fields.items()):
        if name not in obj or obj[name] is None:
            continue
        val = obj[name]
        values = val if typ.startswith("[") else [val]
        base = typ[1:-1] if typ.startswith("[") else typ
        if typ in ("map", "qtymap"):
            for k, v in val.items():
                vb = field_bytes(1, str(v)) if typ == "qtymap" else v
                out += field_bytes(num, field_bytes(1, k) + field_bytes(2, vb))
            continue
        base = base.rstrip("?")
        for v in values:
            if base == "str":
                out += field_bytes(num, v)
            elif base in ("int", "bool"):
                out += field_varint(num, int(v))
            elif base == "time":
                ts = datetime.strptime(v, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
                out += field_bytes(num, field_varint(1, int(ts.timestamp())))
            elif base == "qty":
                out += field_bytes(num, field_bytes(1, str(v)))
            elif base == "intstr":
                out += field_bytes(num, field_varint(1, 1) + field_bytes(3, v) if isinstance(v, str)
                                   else field_varint(1, 0) + field_varint(2, v))
            else:
                out += field_bytes(num, encode_message(base, v))
    return bytes(out)
