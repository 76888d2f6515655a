"""Reading a scenario file's fields, with errors that name file, line and field.

Why apart from :mod:`pyhpa.sim.scenario`: the scenario's own fields, its workloads
(:mod:`pyhpa.sim.scenario_workloads`), its load series and the HPA manifests in it are all read
from marked YAML and report ``file:line: field.path: message`` the same way.

Reading is strict: a typo (``minReplica: 3``, ``scaleup:``, ``interpolation: linear``) would
otherwise run with the default and the result would look valid. A key set twice in one mapping
is refused when the YAML is read; a key a scenario mapping does not take is refused by
:func:`check_fields`; Deployment, StatefulSet and HPA manifests are checked against the built-in
schemas the embedded API server decodes with under ``fieldValidation=Strict``
(:class:`ManifestSchemas`).
"""

from __future__ import annotations

import difflib
import math
import re
from typing import Any, Callable, Iterable, Mapping

from pyhpa.api import goyaml
from pyhpa.api.quantity import Quantity
from pyhpa.api.timefmt import parse_duration

__all__ = ["ScenarioError", "LineDict", "LineList", "FieldLocator", "load_yaml_documents", "plain", "line_at",
           "read_duration", "read_quantity", "read_fraction", "unknown_field", "check_fields", "ManifestSchemas",
           "NOT_NEGATIVE"]

# The end of the message for a negative value where none may be (Kubernetes' wording).
NOT_NEGATIVE = "must be greater than or equal to 0"


class ScenarioError(ValueError):
    """A scenario that cannot be run; the message starts with ``file:line: field:``."""


# --------------------------------------------------------------------------- YAML with line numbers

# Mappings and sequences of a scenario carry the lines of their keys and items (for messages).
LineDict = goyaml.MarkedDict
LineList = goyaml.MarkedList


def load_yaml_documents(text: str, source: str) -> list[Any]:
    """The non-empty documents of a file, read as kubectl reads YAML (``1e1`` is 10, ``0o17``
    is 15, dates stay strings), with line marks; a key set twice in one mapping is an error."""
    try:
        return [d for d in goyaml.load_all_marked(text, source=source, unique_keys=True) if d is not None]
    except goyaml.YAMLError as exc:
        line = f":{exc.line}" if exc.line is not None else ""
        if exc.path and exc.problem.startswith("duplicate field "):
            raise ScenarioError(f"{source}{line}: {exc.path}: {exc.problem}") from None
        field = f" {exc.path}:" if exc.path else ""
        raise ScenarioError(f"{source}{line}: invalid YAML:{field} {exc.problem}") from None


def plain(obj: Any) -> Any:
    """LineDict/LineList -> dict/list (for handing manifests to other modules)."""
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [plain(v) for v in obj]
    return obj


class FieldLocator:
    """Renders ``file:line: path`` for a field of a LineDict."""

    def __init__(self, source: str) -> None:
        self.source = source

    def at(self, node: Any, path: str, key: str | int | None = None) -> str:
        line = 0
        if isinstance(node, LineDict):
            line = node.line_of(key) if isinstance(key, str) else node.line
        elif isinstance(node, LineList):
            line = node.item_lines[key] if isinstance(key, int) and key < len(node.item_lines) else node.line
        full = path if key is None else (f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else key))
        return f"{self.source}:{line}: {full}" if line else f"{self.source}: {full}"

    def fail(self, node: Any, path: str, key: str | int | None, message: str) -> ScenarioError:
        return ScenarioError(f"{self.at(node, path, key)}: {message}")



# --------------------------------------------------------------------------- strict fields

FEW_NAMES = 12  # an unknown field's message lists the allowed names when there are at most this many


def unknown_field(key: Any, allowed: Iterable[str]) -> str:
    """``unknown field "minReplica" (did you mean minReplicas? allowed: ...)``: the nearest name
    when one is close, every allowed name when they are few."""
    names = sorted(str(n) for n in allowed)
    hints = []
    close = difflib.get_close_matches(str(key), names, n=1, cutoff=0.6)
    if close:
        hints.append(f"did you mean {close[0]}?")
    if len(names) <= FEW_NAMES:
        hints.append(f"allowed: {', '.join(names)}")
    return f'unknown field "{key}"' + (f" ({' '.join(hints)})" if hints else "")


def check_fields(loc: "FieldLocator", node: Any, path: str, allowed: Iterable[str]) -> None:
    """Every key of the mapping ``node`` (at ``path``) must be one of ``allowed``."""
    names = tuple(allowed)
    if isinstance(node, Mapping):
        for k in node:
            if k not in names:
                raise loc.fail(node, path, k, unknown_field(k, names))


class ManifestSchemas:
    """The built-in schemas (:mod:`pyhpa.api.schemas`), built once per file read: a manifest
    field its kind does not have is an error, as under ``fieldValidation=Strict``."""

    def __init__(self) -> None:
        from pyhpa.api.schemas import BuiltinSchemas

        self.schemas = BuiltinSchemas.build()

    def check(self, loc: "FieldLocator", doc: Any, path: str) -> None:
        """Raise on the first unknown field of ``doc`` (at ``path`` in ``loc``'s file); a kind or
        version without a schema is left to the reader that refuses it. Wrong types are left to
        the readers too (they name the field in their own words)."""
        from pyhpa.api.schemas.build import ref
        from pyhpa.api.schemas.conform import conform

        if not isinstance(doc, Mapping):
            return
        group, _, version = str(doc.get("apiVersion") or "").rpartition("/")
        kind = str(doc.get("kind"))
        name = self.schemas.of_kind(group, version, kind)
        if name is None and kind in ("Deployment", "StatefulSet"):
            name = self.schemas.of_kind("apps", "v1", kind)  # what the simulator reads it as, whatever its version
        if name is None:
            return
        found = conform(plain(doc), ref(name), self.schemas.definitions, drop=False, types=False)[1]
        if found.unknown:
            field = found.unknown[0]
            key = field.rsplit(".", 1)[-1]
            line = line_at(None, "", doc, field)
            where = f"{loc.source}:{line}" if line else loc.source
            raise ScenarioError(f"{where}: {path}.{field}: {unknown_field(key, found.allowed.get(field, ()))}")


# --------------------------------------------------------------------------- fields


def line_at(parent: Any, key: str, node: Any, path: str) -> int:
    """Line of the deepest node along ``path`` (``a.b[2].c``) below ``node`` (itself ``parent[key]``)."""
    line = parent.line_of(key) if isinstance(parent, LineDict) else getattr(node, "line", 0)
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path):
        if name and isinstance(node, LineDict) and name in node:
            line, node = node.line_of(name), node[name]
        elif index and isinstance(node, LineList) and int(index) < len(node):
            line, node = node.item_lines[int(index)], node[int(index)]
        else:
            break
    return line


def read_duration(loc: FieldLocator, node: Any, path: str, key: str, default: float | None = None, *,
              allow_zero: bool = False) -> float:
    raw = node.get(key) if isinstance(node, Mapping) else None
    if raw is None:
        if default is None:
            raise loc.fail(node, path, key, "Required value")
        return default
    value = _read_number(loc, node, path, key, raw, "a duration", _parse_signed_duration)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise loc.fail(node, path, key, f"Invalid value: {raw!r}: must be " + (">= 0" if allow_zero else "> 0"))
    return value


def read_quantity(loc: FieldLocator, node: Any, path: str, key: str, *, milli: bool) -> float:
    raw = node.get(key)
    value = _read_number(loc, node, path, key, raw, "a quantity", _parse_quantity)
    if not math.isfinite(value):
        raise loc.fail(node, path, key, f"Invalid value: {raw!r}: not finite")
    return value * 1000.0 if milli else value


def _read_number(loc: FieldLocator, node: Any, path: str, key: str, raw: Any, what: str,
                 parse_text: Callable[[str], float]) -> float:
    """A YAML number as it is, or a text read by ``parse_text``; a boolean or an unreadable text
    fails on the field."""
    try:
        if isinstance(raw, bool):
            raise ValueError(f"not {what}")
        if isinstance(raw, (int, float)):
            return float(raw)
        return parse_text(str(raw).strip())
    except Exception as exc:
        raise loc.fail(node, path, key, f"Invalid value: {raw!r}: {exc}") from None


def _parse_signed_duration(text: str) -> float:
    return -parse_duration(text[1:]) if text.startswith("-") else parse_duration(text)


def _parse_quantity(text: str) -> float:
    return Quantity.parse(text).as_float()


def read_fraction(loc: FieldLocator, node: Any, path: str, key: str) -> float:
    """A positive fraction: ``0.2`` or ``"20%"``."""
    raw = node.get(key)
    try:
        if isinstance(raw, bool):
            raise ValueError("not a number")
        text = str(raw).strip()
        value = float(text[:-1]) / 100.0 if text.endswith("%") else float(text)
    except ValueError as exc:
        raise loc.fail(node, path, key, f"Invalid value: {raw!r}: {exc}") from None
    if not math.isfinite(value) or value <= 0:
        raise loc.fail(node, path, key, f"Invalid value: {raw!r}: must be > 0")
    return value
