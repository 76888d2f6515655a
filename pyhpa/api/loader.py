"""Manifests from files and streams: YAML (multi-document) or JSON, ``List`` kinds flattened.

Why our own loader: every pyhpa command that takes ``-f`` must read manifests the way kubectl
does (sigs.k8s.io/yaml: timestamps stay strings, keys become strings) and point at the exact
file, document and field when something is wrong.

Document indexes are 0-based positions in the stream (empty documents count but are skipped);
error messages print that same index: ``hpa.yaml: document 2: spec.maxReplicas: Required value``.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field
from typing import Any

import msgspec
import yaml

from pyhpa.api import _yaml
from pyhpa.api.codec import DecodeError
from pyhpa.api.conversion import hpa_from_any_wire
from pyhpa.api.features import FeatureGates
from pyhpa.api.types import HorizontalPodAutoscaler
from pyhpa.api.validation import FieldError, validate_hpa

__all__ = ["Document", "LoadError", "load_stream", "load_files", "load_hpa"]

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


def _jsonish(value: Any, path: str, source: str, index: int) -> Any:
    """What Go's YAML-to-JSON step yields: string keys, no NaN/Inf, no binary."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                if isinstance(k, bool):
                    k = "true" if k else "false"
                elif k is None:
                    k = "null"
                elif isinstance(k, (int, float)):
                    k = str(k)
                else:
                    raise LoadError(
                        f"{_prefix(source, index)}: {path or '<root>'}: unsupported mapping key {k!r}",
                        source=source, index=index, field=path,
                    )
            out[k] = _jsonish(v, f"{path}.{k}" if path else k, source, index)
        return out
    if isinstance(value, list):
        return [_jsonish(v, f"{path}[{i}]", source, index) for i, v in enumerate(value)]
    if isinstance(value, float) and not math.isfinite(value):
        raise LoadError(
            f"{_prefix(source, index)}: {path}: {value} is not a valid JSON number",
            source=source, index=index, field=path,
        )
    if isinstance(value, bytes):
        import base64

        return base64.b64encode(value).decode()
    return value


# Metrics API answers whose items are values, not objects: kept whole (the list carries the namespace).
_VALUE_LISTS = frozenset({"MetricValueList", "ExternalMetricValueList"})


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
            out.extend(_flatten(entry, source, index, f"{inner}[{i}]"))
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
            # Already what _jsonish yields: string keys, and msgspec refuses numbers out of range.
            return _flatten(doc, source, 0)
    docs: list[Document] = []
    index = 0

    def convert(doc: Any, at: int) -> Any:  # documents the fast builder leaves to PyYAML
        return _jsonish(doc, "", source, at)

    try:
        for at, doc in _yaml.load_all(text, convert):
            index = at + 1  # a syntax error from here on is in the next document
            if doc is not None:
                docs.extend(_flatten(doc, source, at))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        detail = f"{context}, {problem}" if context else problem
        where = f"{_prefix(source, index)}: line {line}" if line else _prefix(source, index)
        raise LoadError(f"{where}: YAML syntax error: {detail}", source=source, index=index, line=line) from None
    return docs


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
