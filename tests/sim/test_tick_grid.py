"""The simulator's load ticks fall on the epoch's grid of the step, whatever the start: a replay
starts at the real controller's sync phase (a fraction of a second, even of a millisecond, into
a step of its history) and each tick must read the load sample of its own step."""

from __future__ import annotations

from types import SimpleNamespace

from pyhpa.sim.runner import _grid


def test_ticks_are_the_grid_instants_and_syncs_keep_the_start_phase():
    start = 1795896417.8555  # 2.1445 s before a multiple of 5 s
    grid = _grid(SimpleNamespace(start=start, duration=20.0, step=5.0), {5026})
    ticks = [t for t, tick, _ in grid if tick]
    assert ticks == [start, 1795896420.0, 1795896425.0, 1795896430.0, 1795896435.0]
    syncs = [round(t - start, 6) for t, _, due in grid if due]
    assert syncs == [5.026, 10.052, 15.078]


def test_a_start_on_the_grid_ticks_as_before():
    grid = _grid(SimpleNamespace(start=1795896420.0, duration=15.0, step=5.0), {15000})
    assert [(t - 1795896420.0, tick, sorted(due)) for t, tick, due in grid] == [
        (0.0, True, []), (5.0, True, []), (10.0, True, []), (15.0, True, [15000])]


def test_two_sync_periods_merge_on_one_grid():
    # KEP-6003: HPAs with their own periods; where both are due, one point names both
    grid = _grid(SimpleNamespace(start=1795896420.0, duration=15.0, step=5.0), {5000, 7500})
    assert [(t - 1795896420.0, tick, sorted(due)) for t, tick, due in grid] == [
        (0.0, True, []), (5.0, True, [5000]), (7.5, False, [7500]), (10.0, True, [5000]),
        (15.0, True, [5000, 7500])]
