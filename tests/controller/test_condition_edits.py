"""Reconcile's condition edits, held until a status changes, against copying and setting each."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from pyhpa.api.types import HorizontalPodAutoscalerCondition
from pyhpa.engine import conditions as C
from tests.sim.scenarios import cpu_hpa

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


condition_types = st.sampled_from(["AbleToScale", "ScalingActive", "ScalingLimited", "ScaledToZero"])
ops = st.lists(st.one_of(
    st.tuples(st.just("set"), condition_types, st.sampled_from(["True", "False"]), st.sampled_from(["A", "B"]),
              st.sampled_from(["m1", "m2"])),
    st.tuples(st.just("remove"), condition_types, st.just(""), st.just(""), st.just("")),
), max_size=10)


@settings(max_examples=300, deadline=None)
@given(initial=st.lists(st.tuples(condition_types, st.sampled_from(["True", "False"]), st.sampled_from(["A", "B"]),
                                  st.sampled_from(["m1", "m2"])), max_size=4, unique_by=lambda x: x[0]),
       operations=ops)
def test_held_condition_edits_equal_copying_and_setting(initial, operations):
    from pyhpa.api.types import HorizontalPodAutoscalerStatus
    from pyhpa.controller.reconcile import _Pass
    from pyhpa.engine.config import ControllerConfig

    earlier = NOW - timedelta(hours=1)
    conds = [HorizontalPodAutoscalerCondition(type=t, status=s, reason=r, message=m, last_transition_time=earlier)
             for t, s, r, m in initial]
    before = [(c.type, c.status, c.reason, c.message, c.last_transition_time) for c in conds]
    from pyhpa.sim.scenario import default_hpa_loader

    hpa = default_hpa_loader(cpu_hpa(), "test")
    hpa = msgspec.structs.replace(hpa, status=msgspec.structs.replace(hpa.status, conditions=conds or None))
    p = _Pass(hpa, None, ControllerConfig(), NOW)
    plain = C.copy_conditions(conds)
    for op, t, s, r, m in operations:
        if op == "set":
            p.set(t, s, r, m)
            C.set_condition(plain, t, s, r, m, NOW)
        else:
            p.remove(t)
            C.remove_condition(plain, t)
    got = p.conditions
    assert [(c.type, c.status, c.reason, c.message, c.last_transition_time) for c in got] == \
        [(c.type, c.status, c.reason, c.message, c.last_transition_time) for c in plain]
    assert [(c.type, c.status, c.reason, c.message, c.last_transition_time) for c in conds] == before  # untouched
    if got is conds:  # shared only when nothing differs
        assert [(c.reason, c.message) for c in got] == [(r, m) for _, _, r, m in initial]
