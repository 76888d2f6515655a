"""Manifests from files and streams: YAML (multi-document) or JSON, ``List`` kinds flattened.

Why our own loader: every pyhpa command that takes ``-f`` must read manifests the way kubectl
does (sigs.k8s.io/yaml: timestamps stay strings, keys become strings) and point at the exact
file, document and field when something is wrong.

Document indexes are 0-based positions in the stream (empty documents count but are skipped);
error messages print that same index: ``hpa.yaml: document 2: spec.maxReplicas: Required value``.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any

import msgspec

from pyhpa.api import goyaml
from pyhpa.api.codec import DecodeError
from pyhpa.api.conversion import hpa_from_any_wire
from pyhpa.api.features import FeatureGates
from pyhpa.api.types import HorizontalPodAutoscaler
from pyhpa.api.field_errors import FieldError
from pyhpa.api.schemas import BuiltinSchemas
from pyhpa.api.schemas.build import ref
from pyhpa.api.schemas.conform import conform
from pyhpa.api.validation import validate_hpa

__all__ = ["Document", "LoadError", "load_stream", "load_files", "load_hpa", "check_types"]

class LoadError(ValueError):
    """A manifest that cannot be read; the message names file, document and line or field."""

    def __init__(
        self,
        message: str,
        *,
        source: str = "",
        index: int | None = None,
        line: int | None = None,
        field: str | None = None,
        errors: list[FieldError] | None = None,
    ) -> None:
        self.source = source
        self.index = index
        self.line = line
        self.field = field
        self.errors = errors or []
        super().__init__(message)


@dataclass
class Document:
    """One object of a manifest stream (an item of a ``List`` keeps the list's index and says
    which item it is, so an error points at ``document 0: items[3]``)."""

    source: str
    index: int
    raw: dict[str, Any] = field(repr=False)
    item: str = ""  # the path inside a List document (``items[3]``), empty for a plain one

    @property
    def where(self) -> str:
        at = f"{self.source}: document {self.index}"
        return f"{at}: {self.item}" if self.item else at


def _prefix(source: str, index: int | None) -> str:
    return f"{source}: document {index}" if index is not None else source


# Metrics API answers whose items are values, not objects: kept whole (the list carries the namespace).
_VALUE_LISTS = frozenset({"MetricValueList", "ExternalMetricValueList"})


def _typed_item(entry: Any, list_kind: str, api_version: Any) -> Any:
    """An item of a typed list (``PodMetricsList``) as the API serves it has no kind or
    apiVersion (``kubectl get --raw`` prints it so): they are the list's, as in Go's typed lists."""
    if not isinstance(entry, dict) or list_kind == "List" or "kind" in entry:
        return entry
    out = {"apiVersion": api_version, "kind": list_kind[: -len("List")]} if api_version else {"kind": list_kind[: -len("List")]}
    out.update(entry)
    return out


def _flatten(doc: Any, source: str, index: int, item: str = "") -> list[Document]:
    at = f"{_prefix(source, index)}: {item}" if item else _prefix(source, index)
    if not isinstance(doc, dict):
        kind = "array" if isinstance(doc, list) else type(doc).__name__
        raise LoadError(
            f"{at}: expected an object{'' if item else ' with apiVersion and kind'}, got {kind}",
            source=source, index=index, field=item or None,
        )
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc and kind not in _VALUE_LISTS:
        items = doc.get("items")
        inner = f"{item}.items" if item else "items"
        if items is None:
            return []
        if not isinstance(items, list):
            raise LoadError(f"{at}: items: expected array", source=source, index=index, field=inner)
        out = []
        for i, entry in enumerate(items):
            out.extend(_flatten(_typed_item(entry, kind, doc.get("apiVersion")), source, index, f"{inner}[{i}]"))
        return out
    return [Document(source, index, doc, item)]


def load_stream(data: str | bytes, source: str = "<stream>") -> list[Document]:
    """Every object in a YAML or JSON stream, ``List`` kinds flattened, empty documents skipped."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise LoadError(f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start})", source=source) from None
    else:
        text = data
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise LoadError(f"{source}: not valid Unicode text ({exc.reason} at character {exc.start})", source=source) from None
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            doc = msgspec.json.decode(stripped)
        except msgspec.DecodeError:
            pass  # maybe several JSON objects or YAML flow style: let the YAML parser decide
        else:
            # What goyaml would give (JSON is YAML), straight from msgspec: JSON input is the
            # fast way to read a large snapshot.
            return _flatten(doc, source, 0)
    try:
        values = goyaml.load_all(text, source=source)
    except goyaml.YAMLError as exc:
        raise _yaml_error(exc, source) from None
    docs: list[Document] = []
    for index, doc in enumerate(values):
        if doc is not None:
            docs.extend(_flatten(doc, source, index))
    return docs


def _yaml_error(exc: goyaml.YAMLError, source: str) -> LoadError:
    """A stream goyaml refuses: a bad field names its path, anything else its line."""
    prefix = _prefix(source, exc.document)
    if exc.path:
        return LoadError(f"{prefix}: {exc.path}: {exc.problem}", source=source, index=exc.document,
                         line=exc.line, field=exc.path)
    where = f"{prefix}: line {exc.line}" if exc.line else prefix
    kind = "YAML syntax error: " if exc.syntax else ""
    return LoadError(f"{where}: {kind}{exc.problem}", source=source, index=exc.document, line=exc.line)


def _read(path: str) -> tuple[str, bytes]:
    if path == "-":
        return "<stdin>", sys.stdin.buffer.read()
    try:
        with open(path, "rb") as fh:
            return path, fh.read()
    except FileNotFoundError:
        raise LoadError(f"{path}: no such file or directory", source=path) from None
    except OSError as exc:
        raise LoadError(f"{path}: {exc.strerror}", source=path) from None


def load_files(paths: list[str]) -> list[Document]:
    """Documents of every path in order; ``-`` is stdin, a directory means its
    ``*.yaml``/``*.yml``/``*.json`` files in name order (as ``kubectl -f dir``)."""
    docs: list[Document] = []
    for path in paths:
        if path != "-" and os.path.isdir(path):
            names = sorted(n for n in os.listdir(path) if n.endswith((".yaml", ".yml", ".json")))
            docs.extend(load_files([os.path.join(path, n) for n in names]))
            continue
        source, data = _read(path)
        docs.extend(load_stream(data, source))
    return docs


def load_hpa(
    doc: Document,
    gates: FeatureGates = FeatureGates(),
    *,
    namespace: str | None = "default",
) -> HorizontalPodAutoscaler:
    """Decode a v1 or v2 HPA document, convert to v2, default and validate it as a create.

    ``namespace`` fills a missing ``metadata.namespace`` as kubectl does from its context
    (``None`` leaves it empty, so validation reports it). Raises :class:`LoadError`.
    """
    raw = doc.raw
    try:
        hpa = hpa_from_any_wire(raw, default=True)
    except DecodeError as exc:
        raise LoadError(f"{doc.where}: {exc}", source=doc.source, index=doc.index, field=exc.path or None) from None
    if namespace and not hpa.metadata.namespace:
        hpa.metadata.namespace = namespace
    errors = validate_hpa(hpa, gates=gates)
    if errors:
        text = "; ".join(str(e) for e in errors)
        raise LoadError(f"{doc.where}: {text}", source=doc.source, index=doc.index, field=errors[0].field, errors=errors)
    return hpa


# Go's decoder naming the field a value of the wrong JSON type was given for.
_GO_FIELD = re.compile(r"^json: cannot unmarshal .* into Go struct field [^.\s]+\.(\S+) of type ")


def check_types(doc: Document, schemas: BuiltinSchemas) -> None:
    """Read the document's values as the API server's decoder does, against its kind's published
    schema (:mod:`pyhpa.api.schemas.conform`, what the embedded server checks a request with): a
    value of the wrong JSON type is a :class:`LoadError` in Go's words, ``json: cannot unmarshal
    string into Go struct field HorizontalPodAutoscalerSpec.spec.maxReplicas of type int32``.

    Only types: unknown fields stay accepted, and a kind without a schema is left to its reader.
    So are values whose Go message names no field (a quantity's or a time's syntax, an
    int-or-string): the readers name the field of those."""
    raw = doc.raw
    group, _, version = str(raw.get("apiVersion") or "").rpartition("/")
    kind = str(raw.get("kind") or "")
    name = schemas.of_kind(group, version, kind)
    if name is None:
        return
    error = conform(raw, ref(name), schemas.definitions, drop=False)[1].error
    found = _GO_FIELD.match(error or "")
    if found is None:
        return
    raise LoadError(f"{doc.where} ({_identity(kind, raw.get('metadata'))}): {error}",
                    source=doc.source, index=doc.index, field=found.group(1))


def _identity(kind: str, metadata: Any) -> str:
    """``Kind namespace/name`` of an object for messages (namespace ``default`` when unset)."""
    meta = metadata if isinstance(metadata, dict) else {}
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        return kind
    namespace = meta.get("namespace")
    return f"{kind} {namespace if isinstance(namespace, str) and namespace else 'default'}/{name}"
