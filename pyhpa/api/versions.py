"""Version profiles: what the embedded cluster behaves as, pyhpa's own or an upstream release's.

Why a table: `pyhpa cluster --emulated-version 1.33` must give exactly that release's gate
defaults, validation rules and condition sets, so nothing reports 1.33 while behaving as a
later release. Each difference between releases is one switch here, set per minor version;
validation and the controller read the switches, never a version number.

Facts (upstream's autoscaling types, validation.go and its declarative rules, the controller's
flags and pkg/features/kube_features.go per release; release notes):
* autoscaling/v1 and v2 are served by every release 1.27+ (v2beta2 went in 1.26), so the served
  HPA versions are the same in every profile.
* ``spec.scaleTargetRef.apiVersion`` (and an Object metric's ``describedObject.apiVersion``) is
  validated from 1.34; 1.33 and older accept any value, including none.
* ``maxReplicas < 1``: up to 1.35 ``Invalid value: N: must be greater than 0``; 1.36 says
  ``Required value: must be set and greater than 0`` for 0; 1.37 enforces the declarative rule
  (``Required value``, reported after the hand-written errors).
* The ``ScaledToZero`` condition (KEP-2021) is written from 1.36, when HPAScaleToZero is on.
* Gates that exist upstream: HPAScaleToZero from 1.16, PodLevelResources from 1.32,
  HPAConfigurableTolerance from 1.33; setting one under an older emulated release is an error
  (``feature is PreAlpha``), as from that release's components.
* Gates on by default upstream: HPAConfigurableTolerance from 1.35 (alpha 1.33-1.34),
  PodLevelResources from 1.34, HPAScaleToZero from 1.37 (beta). Every other gate, including all
  of pyhpa's beyond-upstream ones (KEP-5679, KEP-6003, KEP-6107, KEP-5053), is off in every
  upstream release: a gate a release does not list is off.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from pyhpa.api.features import GATE_NAMES, FeatureGateError, FeatureGates, parse_gate_overrides

__all__ = [
    "OLDEST_MINOR", "NEWEST_MINOR", "ValidationRules", "VersionProfile", "EmulatedVersionError",
    "emulated_profile", "parse_emulated_version", "pyhpa_profile",
]

OLDEST_MINOR = 27
NEWEST_MINOR = 37  # the newest release whose rules pyhpa implements (docs/cluster.md#version-emulation)

# Upstream gate -> first minor release where it is on by default. Absent: off in every release.
_ON_BY_DEFAULT_FROM = MappingProxyType({
    "HPAConfigurableTolerance": 35,
    "PodLevelResources": 34,
    "HPAScaleToZero": 37,
})

# Upstream gate -> first minor release that has it (as alpha). In an older release the gate is
# PreAlpha: kube-apiserver and kube-controller-manager refuse to set it, to true or to false.
# HPAGeneration: its maturity is not known to our specs, so every emulated release is taken to
# have it. pyhpa's beyond-upstream gates are absent on purpose: no release has them, and they
# may be turned on under any release as pyhpa extensions. No gate here is GA (locked) by 1.37.
_EXISTS_FROM = MappingProxyType({
    "HPAScaleToZero": 16,
    "HPAConfigurableTolerance": 33,
    "PodLevelResources": 32,
    "HPAGeneration": OLDEST_MINOR,
})

# autoscaling/v2 HPA fields some releases do not have: (path, "*" for every list item; its gate;
# the first release with the field, None: no upstream release). Such a field is unknown to the
# emulated release unless its gate is turned on (then the request is the gate's to judge).
_NEWER_FIELDS = (
    (("spec", "behavior", "scaleUp", "tolerance"), "HPAConfigurableTolerance", 33),
    (("spec", "behavior", "scaleDown", "tolerance"), "HPAConfigurableTolerance", 33),
    (("spec", "behavior", "syncPeriodSeconds"), "HPAConfigurableSyncPeriod", None),
    (("spec", "metrics", "*", "external", "fallback"), "HPAExternalMetricFallback", None),
    (("spec", "behavior", "fallback"), "HPAFallback", None),  # KEP-5053
)

# maxReplicas < 1, by release (validation.go's maxReplicas rule).
MAX_REPLICAS_GREATER_THAN_0 = "greater-than-0"  # <= 1.35
MAX_REPLICAS_HANDWRITTEN = "handwritten"  # 1.36: the declarative rule only shadows
MAX_REPLICAS_DECLARATIVE = "declarative"  # 1.37+: the declarative rule is enforced


@dataclass(frozen=True)
class ValidationRules:
    """The HPA validation rules that changed between releases."""

    scale_target_api_version: bool = True  # 1.34+: apiVersion must parse and name a group
    max_replicas: str = MAX_REPLICAS_DECLARATIVE


@dataclass(frozen=True)
class VersionProfile:
    """What a server (and the controller run with it) behaves as."""

    minor: int
    emulated: bool  # False: pyhpa's own profile (newest rules, its own gate defaults)
    gates: FeatureGates
    rules: ValidationRules
    scaled_to_zero_condition: bool  # the controller writes ScaledToZero (when the gate is on)
    memory_status_binary_si: bool = True  # 1.34+: memory statuses in BinarySI

    @property
    def git_version(self) -> str:
        return f"v1.{self.minor}.0" if self.emulated else f"v1.{self.minor}.0-pyhpa"

    def unknown_hpa_fields(self) -> tuple[tuple[str, ...], ...]:
        """Paths of autoscaling/v2 HPA fields this release does not have (with their gates off):
        a request setting one gets ``unknown field`` as from that release's server."""
        if not self.emulated:
            return ()
        on = self.gates.as_dict()  # a gate pyhpa does not have is off
        return tuple(path for path, gate, since in _NEWER_FIELDS
                     if not on.get(gate, False) and (since is None or self.minor < since))

    def with_feature_gates(self, spec: str | None) -> "VersionProfile":
        """The profile with `--feature-gates` applied on top of its defaults; under an emulated
        release, a gate that release does not have yet is refused as upstream refuses it."""
        values = parse_gate_overrides(spec or "")
        if self.emulated:
            for name, value in values.items():
                if self.minor < _EXISTS_FROM.get(name, 0):
                    raise FeatureGateError(
                        f"cannot set feature gate {name} to {str(value).lower()}, "
                        f"feature is PreAlpha at emulated version 1.{self.minor}")
        return replace(self, gates=self.gates.with_values(values))


def _upstream_gates(minor: int) -> FeatureGates:
    by_attr = {attr: _ON_BY_DEFAULT_FROM.get(gate, 10**6) <= minor for gate, attr in GATE_NAMES.items()}
    return FeatureGates(**by_attr)


def _upstream_rules(minor: int) -> ValidationRules:
    if minor <= 35:
        max_replicas = MAX_REPLICAS_GREATER_THAN_0
    elif minor == 36:
        max_replicas = MAX_REPLICAS_HANDWRITTEN
    else:
        max_replicas = MAX_REPLICAS_DECLARATIVE
    return ValidationRules(scale_target_api_version=minor >= 34, max_replicas=max_replicas)


def pyhpa_profile() -> VersionProfile:
    """pyhpa's own profile: the newest rules, its own gate defaults (scale to zero on)."""
    return VersionProfile(minor=NEWEST_MINOR, emulated=False, gates=FeatureGates(),
                          rules=ValidationRules(), scaled_to_zero_condition=True)


def emulated_profile(minor: int) -> VersionProfile:
    """Upstream release 1.<minor>, OLDEST_MINOR..NEWEST_MINOR."""
    if not OLDEST_MINOR <= minor <= NEWEST_MINOR:
        raise EmulatedVersionError(f"1.{minor}")
    return VersionProfile(minor=minor, emulated=True, gates=_upstream_gates(minor),
                          rules=_upstream_rules(minor), scaled_to_zero_condition=minor >= 36,
                          memory_status_binary_si=minor >= 34)


class EmulatedVersionError(ValueError):
    """An `--emulated-version` outside the releases pyhpa emulates."""

    def __init__(self, text: str) -> None:
        super().__init__(f"--emulated-version {text!r}: must be a release from 1.{OLDEST_MINOR} "
                         f"to 1.{NEWEST_MINOR} (MAJOR.MINOR, e.g. 1.33)")


def parse_emulated_version(text: str) -> VersionProfile:
    """`1.33` (or `v1.33`, or upstream's component form `kube=1.33`) -> that release's profile;
    upstream's flag takes MAJOR.MINOR only."""
    major, sep, minor = text.strip().removeprefix("kube=").removeprefix("v").partition(".")
    if major != "1" or not sep or not minor.isdigit():
        raise EmulatedVersionError(text)
    return emulated_profile(int(minor))
