"""The HPA's registry strategy in the embedded cluster: one stored autoscaling/v2 object,
converted per request version, defaulted and validated by the API model (:mod:`pyhpa.api`).

Why a thin adapter: the rules themselves (defaulting, validation, v1⇄v2 conversion, what
create/update/status keep) belong to the model (pkg/apis/autoscaling, registry strategy.go); this class only maps them onto
the server's strategy hooks and turns model errors into Status causes.
"""

from __future__ import annotations

from typing import Any

from pyhpa.api import types as T
from pyhpa.api.schemas.conform import Conformed
from pyhpa.cluster.apiserver.strategies import Strategy

Obj = dict[str, Any]


def _present(obj: Any, paths: tuple[tuple[str, ...], ...]) -> list[str]:
    """The wire paths (``spec.metrics[0].external.fallback``) at which ``obj`` sets one of
    ``paths`` (``*`` steps into every list item)."""
    found: list[str] = []

    def walk(value: Any, path: tuple[str, ...], shown: str) -> None:
        if not path:
            found.append(shown)
        elif path[0] == "*":
            for i, item in enumerate(value if isinstance(value, list) else ()):
                walk(item, path[1:], f"{shown}[{i}]")
        elif isinstance(value, dict) and value.get(path[0]) is not None:
            walk(value[path[0]], path[1:], f"{shown}.{path[0]}" if shown else path[0])

    for p in paths:
        walk(obj, p, "")
    return found


def _remove(obj: Any, paths: tuple[tuple[str, ...], ...]) -> None:
    """Drop the fields at ``paths`` (``*`` steps into every list item) from ``obj``."""
    def walk(value: Any, path: tuple[str, ...]) -> None:
        if path[0] == "*":
            for item in value if isinstance(value, list) else ():
                walk(item, path[1:])
        elif isinstance(value, dict) and path[0] in value:
            if len(path) == 1:
                del value[path[0]]
            else:
                walk(value[path[0]], path[1:])

    for p in paths:
        walk(obj, p)


class HPAStrategy(Strategy):
    """autoscaling/v2 is stored; v1 requests are converted both ways (upstream's conversion.go, strategy.go)."""

    bump_generation = False  # generation follows the HPAGeneration gate (model's strategy)

    def __init__(self, res: Any, profile: Any = None) -> None:
        super().__init__(res)
        from pyhpa.api.versions import pyhpa_profile
        profile = profile if profile is not None else pyhpa_profile()
        self.gates = profile.gates
        self.rules = profile.rules  # the emulated release's validation rules
        self.unknown_fields = profile.unknown_hpa_fields()  # fields newer than the release

    def _model(self, version: str) -> type:
        return T.HorizontalPodAutoscaler if version == "v2" else T.HorizontalPodAutoscalerV1

    # ---- model hooks (pyhpa.api.codec / defaults / conversion / validation / strategy)
    def _decode(self, wire: Obj, version: str) -> Any:
        from pyhpa.api import codec
        from pyhpa.cluster.apiserver.status import APIError
        try:
            return codec.from_wire(wire, self._model(version))
        except codec.DecodeError as exc:
            raise APIError(400, "BadRequest",
                           f'HorizontalPodAutoscaler in version "{version}" cannot be handled as a '
                           f"HorizontalPodAutoscaler: {exc}") from None

    def _to_hub(self, obj: Obj, version: str) -> Any:
        """The request's object decoded once (Go rules), defaulted in the version it was written
        in, converted to the v2 hub and (a v1 one) defaulted as a read of the stored v2 shows it."""
        from pyhpa.api import codec, defaults
        from pyhpa.api.conversion import hpa_from_any_wire
        from pyhpa.cluster.apiserver.status import APIError
        obj["apiVersion"], obj["kind"] = f"autoscaling/{version}", "HorizontalPodAutoscaler"
        try:
            hpa = hpa_from_any_wire(obj, default=True)  # v2: its one defaulting
        except codec.DecodeError as exc:
            raise APIError(400, "BadRequest",
                           f'HorizontalPodAutoscaler in version "{version}" cannot be handled as a '
                           f"HorizontalPodAutoscaler: {exc}") from None
        if version != "v2":
            defaults.default_hpa(hpa)
        return hpa

    def to_storage(self, obj: Obj, version: str) -> Obj:
        from pyhpa.api import codec
        return codec.to_wire(self._to_hub(obj, version))

    def create(self, obj: Obj, version: str) -> tuple[Obj, list[dict[str, str]]]:
        """Decoded and defaulted once, prepared and validated as the model's struct, encoded
        once for the store."""
        from pyhpa.api import codec, strategy, validation
        hpa = strategy.prepare_for_create(self._to_hub(obj, version), self.gates)
        self._raise(obj, validation.validate_hpa(hpa, old=None, gates=self.gates, rules=self.rules))
        return codec.to_wire(hpa), []

    def from_storage(self, obj: Obj, version: str) -> Obj:
        if version == "v2":
            obj["apiVersion"], obj["kind"] = "autoscaling/v2", "HorizontalPodAutoscaler"
            return obj
        from pyhpa.api.conversion import convert_hpa_wire
        return convert_hpa_wire(obj, "autoscaling/v1")

    def conform(self, obj: Obj, version: str, *, drop: bool) -> tuple[Obj, Conformed]:
        """The values' types, in Go's words (``json: cannot unmarshal string into Go struct
        field HorizontalPodAutoscalerSpec.spec.minReplicas of type int32``), and the unknown
        fields, dropped when ``drop`` (the model's codec keeps unknown fields for clients'
        read-modify-writes; the server stores only what the kind has, as upstream's decoder)."""
        obj, found = super().conform(obj, version, drop=drop)
        if version == "v2":  # fields this release's v2 has not got (the version profile)
            newer = _present(obj, self.unknown_fields)
            found.unknown += [p for p in newer if p not in found.unknown]
            if drop:
                _remove(obj, self.unknown_fields)
        return obj, found

    def prepare_create(self, obj: Obj) -> None:
        from pyhpa.api import strategy
        self._apply_model(obj, lambda hpa: strategy.prepare_for_create(hpa, self.gates))

    def prepare_update(self, new: Obj, old: Obj) -> None:
        from pyhpa.api import strategy
        old_hpa = self._decode(old, "v2")
        self._apply_model(new, lambda hpa: strategy.prepare_for_update(hpa, old_hpa, self.gates))

    def prepare_status_update(self, new: Obj, old: Obj) -> None:
        from pyhpa.api import strategy
        old_hpa = self._decode(old, "v2")
        self._apply_model(new, lambda hpa: strategy.prepare_for_status_update(hpa, old_hpa))

    def _apply_model(self, obj: Obj, fn: Any) -> None:
        from pyhpa.api import codec
        hpa = self._decode(obj, "v2")
        out = fn(hpa)
        result = codec.to_wire(out if out is not None else hpa)
        obj.clear()
        obj.update(result)

    def _raise(self, obj: Obj, errs: list[Any]) -> list[dict[str, str]]:
        if errs:
            from pyhpa.api.field_errors import InvalidError
            name = (obj.get("metadata") or {}).get("name") or ""
            raise InvalidError(errs, name=name)
        return []

    def validate(self, obj: Obj, old: Obj | None) -> list[dict[str, str]]:
        from pyhpa.api import validation
        hpa = self._decode(obj, "v2")
        old_hpa = self._decode(old, "v2") if old is not None else None
        return self._raise(obj, validation.validate_hpa(hpa, old=old_hpa, gates=self.gates, rules=self.rules))

    def validate_status(self, obj: Obj, old: Obj) -> list[dict[str, str]]:
        from pyhpa.api import validation
        errs = validation.validate_hpa_status_update(self._decode(obj, "v2"),
                                                     self._decode(old, "v2"))
        return self._raise(obj, errs)
