"""`pyhpa run --embedded --emulated-version 1.33`: the cluster and the controller it starts both
behave as 1.33, so no HPA carries a ScaledToZero condition or a lastScaleDecision."""

from __future__ import annotations

import pytest

from tests.builders import cpu_hpa

from .harness import run_embedded

pytestmark = pytest.mark.slow


def _run_embedded(data, *flags: str) -> dict:
    """A Deployment at 2 replicas under an HPA with minReplicas 3 (a rescale without any
    metric), the controller run for a few seconds: the stored HPA."""
    return run_embedded(data, cpu_hpa("web", "web", min_replicas=3, max_replicas=10), *flags)


@pytest.mark.parametrize("flags, scaled_to_zero", [
    (("--emulated-version", "1.33"), False),
    ((), True),  # pyhpa's own profile: the condition after every rescale
])
def test_scaled_to_zero_condition_only_in_releases_that_have_it(tmp_path, flags, scaled_to_zero):
    stored = _run_embedded(tmp_path / "cluster", *flags)
    types = [c["type"] for c in stored["status"].get("conditions", [])]
    assert "AbleToScale" in types and stored["status"]["desiredReplicas"] == 3  # the controller ran
    assert ("ScaledToZero" in types) is scaled_to_zero
    assert ("lastScaleDecision" in stored["status"]) is not bool(flags)  # KEP-6107: pyhpa's only
