"""kube-controller-manager's HPA flags, and the one way from their values to a ControllerConfig.

Why one place: `run`, `demo`, `reconcile`, `snapshot`, `explain`, `simulate`, `tune` and a
scenario's `controller:` mapping all take these flags; each used to parse them itself and they
drifted (different errors, missing gates, the emulated release's switches forgotten offline).
Here are the names, defaults (upstream's, kube-controller-manager's HPAControllerOptions),
parsing (Go durations), validation, and errors that name the flag; the typer declarations of
the same flags are in :mod:`pyhpa.controller.flag_options`.

A :class:`FlagValues` also says where each value came from (the command line, the running
controller's published configuration, or the default), which `explain` prints
(docs/controller.md#published-configuration).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Mapping

from pyhpa.api.features import GATE_NAMES, FeatureGateError, FeatureGates, parse_gate_overrides
from pyhpa.api.timefmt import format_duration, parse_duration
from pyhpa.api.versions import VersionProfile, parse_emulated_version, pyhpa_profile
from pyhpa.engine.config import ControllerConfig

FEATURE_GATES = "feature-gates"
EMULATED_VERSION = "emulated-version"

# Where a value came from (FlagValues.sources).
FROM_FLAGS = "flags"
FROM_DEFAULT = "default"


@dataclass(frozen=True)
class Flag:
    """One kube-controller-manager HPA flag: its name (without --), the ControllerConfig field it
    sets, duration or number, upstream's default, and help."""

    name: str
    attr: str
    duration: bool
    default: str
    help: str
    positive: bool = False  # 0 refused too (the sync period: a loop needs a period)


HPA_FLAGS: tuple[Flag, ...] = (
    Flag("horizontal-pod-autoscaler-sync-period", "sync_period", True, "15s",
         "The period for syncing the number of pods in horizontal pod autoscaler.", positive=True),
    Flag("horizontal-pod-autoscaler-tolerance", "tolerance", False, "0.1",
         "The minimum change (from 1.0) in the desired-to-actual metrics ratio for scaling."),
    Flag("horizontal-pod-autoscaler-downscale-stabilization", "downscale_stabilization", True, "5m0s",
         "The period for which autoscaler will look backwards and not scale down below any "
         "recommendation it made during that period."),
    Flag("horizontal-pod-autoscaler-cpu-initialization-period", "cpu_initialization_period", True, "5m0s",
         "The period after pod start when CPU samples might be skipped."),
    Flag("horizontal-pod-autoscaler-initial-readiness-delay", "initial_readiness_delay", True, "30s",
         "The period after pod start during which readiness changes will be treated as initial readiness."),
)
FLAGS_BY_NAME = MappingProxyType({f.name: f for f in HPA_FLAGS})
ALL_FLAG_NAMES = (*FLAGS_BY_NAME, FEATURE_GATES, EMULATED_VERSION)


class FlagError(ValueError):
    """A flag value that cannot be used: ``--flag: reason`` (``reason`` alone for a file's field)."""

    def __init__(self, flag: str, reason: str) -> None:
        super().__init__(f"--{flag}: {reason}")
        self.flag = flag
        self.reason = reason


def parse_flag(flag: Flag, value: Any) -> float:
    """Seconds (durations: Go's syntax, or a number of seconds from a file) or the number."""
    if isinstance(value, bool):
        raise FlagError(flag.name, f"invalid value {value!r}")
    if isinstance(value, (int, float)):
        number = float(value)
    elif flag.duration:
        text = str(value).strip()
        try:
            number = -parse_duration(text[1:]) if text.startswith("-") else parse_duration(text)
        except ValueError:
            raise FlagError(flag.name, f'invalid duration "{value}"') from None
    else:
        try:
            number = float(str(value).strip())
        except ValueError:
            raise FlagError(flag.name, f'invalid number "{value}"') from None
    if not math.isfinite(number) or number < 0 or (number == 0 and flag.positive):
        raise FlagError(flag.name, f'invalid value "{value}": must be {"greater than 0" if flag.positive else "0 or greater"}')
    return number


def release_profile(emulated_version: str | None) -> VersionProfile:
    """pyhpa's own profile, or the upstream release `--emulated-version` names."""
    if emulated_version is None:
        return pyhpa_profile()
    try:
        return parse_emulated_version(str(emulated_version))
    except ValueError as exc:
        raise FlagError(EMULATED_VERSION, str(exc).removeprefix(f"--{EMULATED_VERSION} ")) from None


def gates_of(profile: VersionProfile, feature_gates: str | Mapping[str, bool] | None) -> FeatureGates:
    """The release's gate defaults with `--feature-gates` (text, or a published {name: bool}) on top."""
    try:
        if isinstance(feature_gates, Mapping):
            return profile.gates.with_values({str(k): bool(v) for k, v in feature_gates.items()})
        return profile.with_feature_gates(feature_gates).gates
    except (FeatureGateError, KeyError) as exc:
        raise FlagError(FEATURE_GATES, str(exc).strip("'")) from None


@dataclass(frozen=True)
class FlagValues:
    """The flags' values (by flag name; a missing one is its default) and where each came from."""

    values: Mapping[str, Any] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def given(cls, source: str = FROM_FLAGS, **by_attr: Any) -> "FlagValues":
        """From keyword arguments named after ControllerConfig fields (plus feature_gates and
        emulated_version); None means not given."""
        names = {f.attr: f.name for f in HPA_FLAGS}
        names.update(feature_gates=FEATURE_GATES, emulated_version=EMULATED_VERSION)
        values = {names[k]: v for k, v in by_attr.items() if v is not None}
        return cls(values, dict.fromkeys(values, source))

    def over(self, base: "FlagValues") -> "FlagValues":
        """These values where given, ``base``'s elsewhere (explicit flags win). `--feature-gates`
        given over a published gate map changes only the gates it names."""
        values = {**base.values, **self.values}
        sources = {**base.sources, **self.sources}
        gates, base_gates = self.values.get(FEATURE_GATES), base.values.get(FEATURE_GATES)
        if isinstance(gates, str) and isinstance(base_gates, Mapping):
            try:
                values[FEATURE_GATES] = {**base_gates, **parse_gate_overrides(gates)}
            except FeatureGateError as exc:
                raise FlagError(FEATURE_GATES, str(exc)) from None
            below = base.source(FEATURE_GATES)
            sources[FEATURE_GATES] = f"{self.source(FEATURE_GATES)} over {below.removeprefix('from ')}"
        return FlagValues(values, sources)

    def source(self, name: str) -> str:
        return self.sources.get(name, FROM_DEFAULT)

    def config(self) -> ControllerConfig:
        """The ControllerConfig: every flag checked (the error names it), the gate defaults and
        switches of the emulated release (ScaledToZero condition, memory-status format)."""
        profile = release_profile(self.values.get(EMULATED_VERSION))
        numbers = {f.attr: parse_flag(f, self.values.get(f.name, f.default)) for f in HPA_FLAGS}
        return ControllerConfig(
            **numbers,
            gates=gates_of(profile, self.values.get(FEATURE_GATES)),
            scaled_to_zero_condition=profile.scaled_to_zero_condition,
            memory_status_binary_si=profile.memory_status_binary_si,
        )


def build_config(**by_attr: Any) -> ControllerConfig:
    """ControllerConfig from flag values named after its fields (None: the default)."""
    return FlagValues.given(**by_attr).config()


def published_flags(config: ControllerConfig, emulated_version: str | None) -> dict[str, Any]:
    """The effective flag values of a running controller, as it publishes them: durations in
    Go's syntax, every gate's value, the emulated release (None: pyhpa's own)."""
    out: dict[str, Any] = {}
    for f in HPA_FLAGS:
        value = getattr(config, f.attr)
        out[f.name] = format_duration(value) if f.duration else value
    out[FEATURE_GATES] = config.gates.as_dict()
    out[EMULATED_VERSION] = emulated_version
    return out


def read_published_flags(flags: Mapping[str, Any], source: str) -> FlagValues:
    """The published flag values (see :func:`published_flags`), each marked as from ``source``;
    unknown names are ignored (a newer controller may publish more)."""
    values = {k: v for k, v in flags.items()
              if k in ALL_FLAG_NAMES and (v is not None or k == EMULATED_VERSION)}  # None: pyhpa's own profile
    if isinstance(values.get(FEATURE_GATES), Mapping):  # gates this pyhpa does not know are left out
        values[FEATURE_GATES] = {k: v for k, v in values[FEATURE_GATES].items() if k in GATE_NAMES}
    return FlagValues(values, dict.fromkeys(values, source))


def with_decision_trace(config: ControllerConfig, on: bool = True) -> ControllerConfig:
    """The config with HPAStatusDecisionTrace set (the server serves `status.lastScaleDecision`)."""
    return replace(config, gates=replace(config.gates, status_decision_trace=on))


# ----------------------------------------------------------------- the published configuration
# A running `pyhpa run` publishes its effective flags as this document: JSON in the annotation
# below on its leader-election Lease, and at `/debug/config`; `pyhpa snapshot` records it in the
# snapshot (docs/controller.md#published-configuration).

CONFIG_ANNOTATION = "pyhpa.io/controller-config"
CONFIG_API_VERSION = "pyhpa.io/v1alpha1"
CONFIG_KIND = "ControllerConfiguration"
DEFAULT_LEASE = "kube-system/pyhpa-horizontal-pod-autoscaler"  # `pyhpa run`'s leader-election Lease
# `pyhpa run --shards N`: label of the shard and membership Leases, valued with the election's
# Lease name (they are named after it; docs/controller.md#sharding)
SHARD_SET_LABEL = "pyhpa.io/shard-set"


def config_document(config: ControllerConfig, emulated_version: str | None, identity: str,
                    lease: str | None = None) -> dict[str, Any]:
    """The published document of a controller named ``identity`` (its leader-election Lease
    ``lease`` as NAMESPACE/NAME, when it elects)."""
    doc: dict[str, Any] = {"apiVersion": CONFIG_API_VERSION, "kind": CONFIG_KIND,
                           "metadata": {"name": identity}, "identity": identity}
    if lease:
        doc["lease"] = lease
    doc["flags"] = published_flags(config, emulated_version)
    return doc


def document_origin(doc: Mapping[str, Any]) -> str:
    """Where a published document's values come from, for the user: ``the running controller
    NAME (Lease NS/NAME)``."""
    identity = doc.get("identity") or (doc.get("metadata") or {}).get("name") or "(unnamed)"
    lease = doc.get("lease")
    return f"the running controller {identity}" + (f" (Lease {lease})" if lease else "")


def flags_of_document(doc: Mapping[str, Any]) -> FlagValues:
    """The flag values of a published document, each marked as from its controller; a document
    that is not one is an error naming what is wrong."""
    if doc.get("kind") != CONFIG_KIND or not isinstance(doc.get("flags"), Mapping):
        raise ValueError(f"not a {CONFIG_API_VERSION} {CONFIG_KIND} with flags")
    flags = read_published_flags(doc["flags"], f"from {document_origin(doc)}")
    flags.config()  # every value checked: a bad one names its flag
    return flags


def describe_sources(flags: FlagValues) -> list[str]:
    """One line per flag: its effective value and where it came from (flags, the running
    controller, default)."""
    config = flags.config()
    out = []
    for name, value in published_flags(config, flags.values.get(EMULATED_VERSION)).items():
        if name == FEATURE_GATES:
            value = ",".join(f"{k}={str(v).lower()}" for k, v in sorted(value.items()))
        elif value is None:
            value = "pyhpa's own profile"
        source = flags.source(name)
        where = source if source == FROM_DEFAULT or source.startswith("from ") else f"from {source}"
        out.append(f"--{name}={value} ({where})")
    return out


def assumed_defaults(flags: FlagValues) -> str | None:
    """The defaults ``flags`` fall back to, as one phrase (None: every value was given or published)."""
    assumed = [f"--{f.name}={f.default}" for f in HPA_FLAGS if f.name not in flags.values]
    if FEATURE_GATES not in flags.values:
        release = flags.values.get(EMULATED_VERSION)
        assumed.append("--feature-gates of " + (f"release {release}" if release else "pyhpa's own profile"))
    return ", ".join(assumed) if assumed else None
