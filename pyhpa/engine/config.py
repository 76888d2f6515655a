"""The controller's tunables (kube-controller-manager flags) and feature gates, in one value.

Durations are float seconds so the engine's arithmetic stays in plain numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyhpa.api.features import FeatureGates


@dataclass(frozen=True)
class ControllerConfig:
    """Flag values with upstream's defaults (kube-controller-manager's hpacontroller.go options)."""

    tolerance: float = 0.1
    downscale_stabilization: float = 300.0
    cpu_initialization_period: float = 300.0
    initial_readiness_delay: float = 30.0
    sync_period: float = 15.0
    gates: FeatureGates = field(default_factory=FeatureGates)
    # KEP-2021's ScaledToZero condition (1.36+). False: an older release's controller
    # (`--emulated-version`), which never writes it and, at 0 replicas, computes metrics only
    # when minReplicas is 0 (upstream's reconcileAutoscaler before KEP-2021).
    scaled_to_zero_condition: bool = True
    # Memory Resource statuses in BinarySI (1.34+ buildQuantity, kubernetes#132351: `150Mi`).
    # False: a release up to 1.33, whose statuses are DecimalSI (`157286400`).
    memory_status_binary_si: bool = True
