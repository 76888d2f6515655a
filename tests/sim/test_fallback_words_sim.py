"""`pyhpa simulate examples/queue-outage.yaml`: while the KEP-5679 fallback decides, the rescale
events name the fallback and the failing metric, not "above target" from a metric with no value."""

from __future__ import annotations

import csv
from pathlib import Path

from pyhpa.sim.simulate import simulate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "queue-outage.yaml"


def test_the_fallbacks_rescales_name_it(tmp_path):
    simulate(EXAMPLE, tmp_path / "out", timeline="csv")
    with open(tmp_path / "out" / "timeline.csv") as fh:
        events = [e for row in csv.DictReader(fh) for e in row["events"].split(" | ") if e]
    rescales = [e for e in events if "SuccessfulRescale" in e]
    by_fallback = [e for e in rescales if "fallback" in e]
    assert by_fallback, rescales
    assert all(e.endswith("reason: external metric queue_depth has failed for 3m0s: fallback 16 replicas")
               for e in by_fallback)
    assert not [e for e in rescales if "(nil) above target" in e and "New size: 16" in e]
    assert any("ExternalMetricFallbackActivated" in e for e in events)
