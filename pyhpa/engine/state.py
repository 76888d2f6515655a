"""The controller's per-HPA memory: recommendations and scale events.

Upstream keeps three maps keyed by HPA; lost on restart. ``None`` lists mean "never seen"
(Go's nil slice), which matters for recommendations: a pass over a never-seen HPA first
records the current replica count. The engine treats an ``AutoscalerState`` as a value: it
reads one and returns a new one, never mutating the input.
"""

from __future__ import annotations

import msgspec

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pyhpa.api.timefmt import format_time, parse_time

API_VERSION = "pyhpa.io/v1alpha1"
KIND = "AutoscalerState"


class StateError(ValueError):
    """An AutoscalerState document that cannot be read; the message names the field."""


class Recommendation(msgspec.Struct, frozen=True):
    replicas: int
    timestamp: datetime


@dataclass(frozen=True, slots=True)
class ScaleEvent:
    replica_change: int
    timestamp: datetime
    outdated: bool = False


@dataclass(frozen=True, slots=True)
class AutoscalerState:
    recommendations: tuple[Recommendation, ...] | None = None
    scale_up_events: tuple[ScaleEvent, ...] | None = None
    scale_down_events: tuple[ScaleEvent, ...] | None = None

    def __init__(
        self,
        recommendations: Any = None,
        scale_up_events: Any = None,
        scale_down_events: Any = None,
    ) -> None:
        # Accept lists for convenience; store tuples so the value is immutable.
        object.__setattr__(self, "recommendations", None if recommendations is None else tuple(recommendations))
        object.__setattr__(self, "scale_up_events", None if scale_up_events is None else tuple(scale_up_events))
        object.__setattr__(self, "scale_down_events", None if scale_down_events is None else tuple(scale_down_events))

    def to_wire(self, namespace: str | None, name: str) -> dict[str, Any]:
        """The ``pyhpa.io/v1alpha1 AutoscalerState`` object; a ``None`` list is omitted."""
        meta: dict[str, Any] = {}
        if namespace is not None:
            meta["namespace"] = namespace
        meta["name"] = name
        out: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND, "metadata": meta}
        if self.recommendations is not None:
            out["recommendations"] = [
                {"timestamp": format_time(r.timestamp), "replicas": r.replicas} for r in self.recommendations
            ]
        for key, events in (("scaleUpEvents", self.scale_up_events), ("scaleDownEvents", self.scale_down_events)):
            if events is not None:
                out[key] = [
                    {"timestamp": format_time(e.timestamp), "replicaChange": e.replica_change, "outdated": e.outdated}
                    for e in events
                ]
        return out

    @classmethod
    def from_wire(cls, obj: dict[str, Any]) -> "AutoscalerState":
        """Read the wire object; an absent list stays ``None``, ``[]`` stays empty."""
        if not isinstance(obj, dict):
            raise StateError("AutoscalerState: expected an object")
        if obj.get("apiVersion", API_VERSION) != API_VERSION or obj.get("kind", KIND) != KIND:
            raise StateError(f"AutoscalerState: apiVersion/kind must be {API_VERSION}/{KIND}")
        recs = _read_list(obj, "recommendations", _read_recommendation)
        ups = _read_list(obj, "scaleUpEvents", _read_event)
        downs = _read_list(obj, "scaleDownEvents", _read_event)
        return cls(recs, ups, downs)


def _read_list(obj: dict[str, Any], key: str, read: Any) -> list[Any] | None:
    raw = obj.get(key)
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise StateError(f"{key}: expected a list")
    return [read(item, f"{key}[{i}]") for i, item in enumerate(raw)]


def _read_time(item: dict[str, Any], path: str) -> datetime:
    raw = item.get("timestamp")
    if raw is None:
        raise StateError(f"{path}.timestamp: Required value")
    if isinstance(raw, datetime):  # YAML loaders may already give a datetime
        if raw.tzinfo is None:
            from datetime import timezone

            raw = raw.replace(tzinfo=timezone.utc)
        return raw
    try:
        return parse_time(str(raw))
    except Exception as exc:
        raise StateError(f"{path}.timestamp: Invalid value: {raw!r}: {exc}") from None


def _read_int(item: dict[str, Any], key: str, path: str) -> int:
    raw = item.get(key)
    if raw is None:
        raise StateError(f"{path}.{key}: Required value")
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise StateError(f"{path}.{key}: Invalid value: {raw!r}: must be an integer")
    return raw


def _read_recommendation(item: Any, path: str) -> Recommendation:
    if not isinstance(item, dict):
        raise StateError(f"{path}: expected an object")
    return Recommendation(_read_int(item, "replicas", path), _read_time(item, path))


def _read_event(item: Any, path: str) -> ScaleEvent:
    if not isinstance(item, dict):
        raise StateError(f"{path}: expected an object")
    outdated = item.get("outdated", False)
    if not isinstance(outdated, bool):
        raise StateError(f"{path}.outdated: Invalid value: {outdated!r}: must be a boolean")
    return ScaleEvent(_read_int(item, "replicaChange", path), _read_time(item, path), outdated)

