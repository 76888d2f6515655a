"""`pyhpa reconcile` of a snapshot with the running controller's recorded configuration."""

from __future__ import annotations

import pytest

from pyhpa.api.loader import Document, LoadError
from pyhpa.controller.flags import FlagValues, build_config, config_document
from pyhpa.offline.snapshot import published_flags_in


def _doc(i, raw):
    return Document("snap.yaml", i, raw)


def test_the_recorded_configuration_is_used_and_flags_win():
    recorded = config_document(build_config(downscale_stabilization="1m", emulated_version="1.33"), "1.33", "ctl")
    found = published_flags_in([_doc(0, {"kind": "ConfigMap"}), _doc(1, recorded)])
    cfg = FlagValues.given(tolerance="0.3").over(found).config()
    assert (cfg.downscale_stabilization, cfg.tolerance) == (60.0, 0.3)
    assert not cfg.scaled_to_zero_condition and not cfg.memory_status_binary_si
    assert published_flags_in([_doc(0, {"kind": "ConfigMap"})]) is None


def test_a_bad_or_second_configuration_names_its_document():
    good = config_document(build_config(), None, "ctl")
    bad = {**good, "flags": {"horizontal-pod-autoscaler-sync-period": "soon"}}
    with pytest.raises(LoadError, match='document 0.*--horizontal-pod-autoscaler-sync-period: invalid duration "soon"'):
        published_flags_in([_doc(0, bad)])
    with pytest.raises(LoadError, match="document 1: a second ControllerConfiguration"):
        published_flags_in([_doc(0, good), _doc(1, good)])
