"""The Lease-backed memory: compaction keeps every stabilization decision, round trips, batches writes."""

import random
from datetime import datetime, timedelta, timezone

from pyhpa.adapters.kube.state import compact, expand, LeaseStateStore
from pyhpa.engine.state import AutoscalerState, Recommendation, ScaleEvent

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def window_max(recs, now, window):
    return max((r.replicas for r in recs if r.timestamp >= now - timedelta(seconds=window)), default=None)


def window_min(recs, now, window):
    return min((r.replicas for r in recs if r.timestamp >= now - timedelta(seconds=window)), default=None)


def test_compaction_preserves_max_and_min_over_any_window():
    rng = random.Random(7)
    for _ in range(50):
        recs = [Recommendation(rng.randint(1, 6), T0 + timedelta(seconds=15 * i)) for i in range(40)]
        state = AutoscalerState(recs, [], None)
        now = T0 + timedelta(seconds=15 * 40)
        back = expand(compact(state, now.timestamp()))
        for window in (0, 15, 60, 300, 599):
            assert window_max(back.recommendations, now, window) == window_max(recs, now, window)
            assert window_min(back.recommendations, now, window) == window_min(recs, now, window)
        assert back.scale_up_events == ()
        assert back.scale_down_events is None  # "never seen" stays distinct from "empty"


def test_old_entries_and_outdated_events_are_dropped():
    now = T0 + timedelta(hours=2)
    state = AutoscalerState(
        [Recommendation(3, T0), Recommendation(4, now - timedelta(seconds=10))],
        [ScaleEvent(2, now - timedelta(seconds=30)), ScaleEvent(1, now - timedelta(seconds=20), outdated=True)],
        [ScaleEvent(5, T0)],
    )
    back = expand(compact(state, now.timestamp()))
    assert [r.replicas for r in back.recommendations] == [4]
    assert [e.replica_change for e in back.scale_up_events] == [2]
    assert back.scale_down_events == ()


def test_store_marks_namespaces_dirty_only_on_change():
    store = LeaseStateStore(client=None, flush_period=15)  # type: ignore[arg-type]
    s = AutoscalerState([Recommendation(2, T0)], None, None)
    store.put("a/x", s)
    store.put("b/y", s)
    assert store._dirty == {"a", "b"}
    store._dirty.clear()
    store.put("a/x", AutoscalerState([Recommendation(2, T0)], None, None))
    assert store._dirty == set()
    store.delete("a/x")
    assert store._dirty == {"a"}
    text = store._encode_namespace("b")
    assert '"y"' in text and '"x"' not in text
