"""Feature gates that change HPA behaviour, with kube-controller-manager's `--feature-gates` syntax.

pyhpa turns the HPA gates on by default (upstream has HPAScaleToZero alpha/off): our users opt
out with `--feature-gates HPAScaleToZero=false` to match a cluster that has it off. The same goes
for HPAConfigurableSyncPeriod, the gate of a KEP upstream has not merged (KEP-6003), and for
HPAExternalMetricFallback (KEP-5679, alpha and off upstream) and HPAFallback (KEP-5053). HPAStatusDecisionTrace (KEP-6107's
`status.lastScaleDecision`) is the exception, off by default: only servers that keep the field
(the embedded cluster) should get it. These are pyhpa's own defaults; an upstream release's
(`--emulated-version`) are in :mod:`pyhpa.api.versions`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from types import MappingProxyType

# Gate name -> attribute of FeatureGates.
GATE_NAMES = MappingProxyType({
    "HPAScaleToZero": "scale_to_zero",
    "HPAConfigurableTolerance": "configurable_tolerance",
    "HPAGeneration": "hpa_generation",
    "PodLevelResources": "pod_level_resources",
    "HPAConfigurableSyncPeriod": "configurable_sync_period",  # KEP-6003, proposed upstream
    "HPAExternalMetricFallback": "external_metric_fallback",  # KEP-5679, alpha upstream (off)
    "HPAStatusDecisionTrace": "status_decision_trace",  # KEP-6107 (rev. 20752d3), provisional
    "HPAFallback": "hpa_fallback",  # KEP-5053 (PR #5054), provisional
})


class FeatureGateError(ValueError):
    """A --feature-gates value that cannot be parsed."""


_GO_BOOLS = MappingProxyType({
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
})


def go_parse_bool(text: str) -> bool:
    """Go's ``strconv.ParseBool``: the spellings kube components accept for a bool flag value."""
    try:
        return _GO_BOOLS[text]
    except KeyError:
        raise ValueError(f'strconv.ParseBool: parsing "{text}": invalid syntax') from None


@dataclass(frozen=True)
class FeatureGates:
    scale_to_zero: bool = True
    configurable_tolerance: bool = True
    hpa_generation: bool = False
    pod_level_resources: bool = False
    configurable_sync_period: bool = True
    external_metric_fallback: bool = True
    hpa_fallback: bool = True
    # Off: a real cluster's HPA has no status.lastScaleDecision, so writing it would cost a status
    # write per changed decision for a field the server drops. The embedded cluster turns it on.
    status_decision_trace: bool = False

    def with_overrides(self, spec: str) -> "FeatureGates":
        """Apply `Name=bool,Name=bool` (kube's syntax); unknown gate names are errors."""
        return self.with_values(parse_gate_overrides(spec))

    def with_values(self, values: dict[str, bool]) -> "FeatureGates":
        """These gates, by gate name, set to the given values."""
        return replace(self, **{GATE_NAMES[name]: value for name, value in values.items()})

    def as_dict(self) -> dict[str, bool]:
        by_attr = {attr: gate for gate, attr in GATE_NAMES.items()}
        return {by_attr[f.name]: getattr(self, f.name) for f in fields(self)}


def parse_gate_overrides(spec: str) -> dict[str, bool]:
    """`Name=bool,Name=bool` (kube's syntax) -> {gate name: value}; unknown gate names are errors."""
    values: dict[str, bool] = {}
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {name}")
        if name not in GATE_NAMES:
            known = ", ".join(sorted(GATE_NAMES))
            raise FeatureGateError(f"unrecognized feature gate: {name} (known: {known})")
        try:
            values[name] = go_parse_bool(value.strip())
        except ValueError as exc:
            raise FeatureGateError(f"invalid value of {name}={value}, err: {exc}") from None
    return values


def parse_feature_gates(spec: str | None) -> FeatureGates:
    return FeatureGates().with_overrides(spec or "")
