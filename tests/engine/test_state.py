"""AutoscalerState: the pyhpa.io/v1alpha1 wire form of the controller's memory."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pyhpa.engine.state import AutoscalerState, Recommendation, ScaleEvent, StateError

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def test_round_trip_exact():
    wire = {
        "apiVersion": "pyhpa.io/v1alpha1",
        "kind": "AutoscalerState",
        "metadata": {"namespace": "ns", "name": "web"},
        "recommendations": [{"timestamp": "2026-01-01T00:00:00Z", "replicas": 5}],
        "scaleUpEvents": [{"timestamp": "2026-01-01T00:00:00Z", "replicaChange": 2, "outdated": False}],
        "scaleDownEvents": [],
    }
    st = AutoscalerState.from_wire(wire)
    assert st.recommendations == (Recommendation(5, T0),)
    assert st.scale_up_events == (ScaleEvent(2, T0, False),)
    assert st.scale_down_events == ()
    assert st.to_wire("ns", "web") == wire


def test_absent_lists_stay_none_and_are_omitted():
    st = AutoscalerState.from_wire({"apiVersion": "pyhpa.io/v1alpha1", "kind": "AutoscalerState", "metadata": {"name": "x"}})
    assert (st.recommendations, st.scale_up_events, st.scale_down_events) == (None, None, None)
    assert set(st.to_wire(None, "x")) == {"apiVersion", "kind", "metadata"}


def test_value_object_is_immutable():
    recs = [Recommendation(1, T0)]
    st = AutoscalerState(recs)
    recs.append(Recommendation(2, T0))
    assert len(st.recommendations) == 1
    with pytest.raises(AttributeError):
        st.recommendations = ()  # type: ignore[misc]


def test_yaml_datetime_accepted():
    st = AutoscalerState.from_wire({"recommendations": [{"timestamp": datetime(2026, 1, 1), "replicas": 1}]})
    assert st.recommendations[0].timestamp == T0


@pytest.mark.parametrize(
    "wire, message",
    [
        ({"recommendations": [{"replicas": 1}]}, "recommendations[0].timestamp: Required value"),
        ({"recommendations": [{"timestamp": "2026-01-01T00:00:00Z", "replicas": "3"}]}, "recommendations[0].replicas: Invalid value"),
        ({"scaleUpEvents": [{"timestamp": "nope", "replicaChange": 1}]}, "scaleUpEvents[0].timestamp: Invalid value"),
        ({"scaleDownEvents": {"a": 1}}, "scaleDownEvents: expected a list"),
        ({"scaleDownEvents": [{"timestamp": "2026-01-01T00:00:00Z", "replicaChange": 1, "outdated": "no"}]}, "scaleDownEvents[0].outdated"),
        ({"kind": "Other"}, "apiVersion/kind"),
    ],
)
def test_errors_name_the_field(wire, message):
    with pytest.raises(StateError, match=message.replace("[", r"\[").replace("]", r"\]")):
        AutoscalerState.from_wire(wire)
