"""How `pyhpa history` turns measured usage intervals into the demand held over each step: the
intervals put where they were (resample), and a load step inside one interval put where it was
(locate_steps); both keep every interval's usage."""

from __future__ import annotations

import pytest

from pyhpa.sim.history import locate_steps, resample


def usage(pieces, a, b):
    return sum(v * max(0.0, min(y, b) - max(x, a)) for x, y, v in pieces)


def test_intervals_at_the_scrape_phase_are_averaged_over_each_step():
    # scrapes at 3.5, 8.5, 13.5; steps at 0, 5, 10
    pieces = [(-1.5, 3.5, 1.0), (3.5, 8.5, 2.0), (8.5, 13.5, 4.0), (13.5, 18.5, 4.0)]
    out = resample(pieces, [0.0, 5.0, 10.0, 15.0, 20.0], 5.0)
    assert out[:4] == pytest.approx([(3.5 * 1 + 1.5 * 2) / 5, (3.5 * 2 + 1.5 * 4) / 5, 4.0, 4.0])
    assert out[4] is None  # nothing measured there


def test_a_step_between_two_steady_levels_is_put_where_its_average_says():
    # 0.1 cores, then 0.5 from 12.0 on: the interval (10, 15] averages 0.1 x 2/5 + 0.5 x 3/5
    pieces = [(0.0, 5.0, 0.1), (5.0, 10.0, 0.1), (10.0, 15.0, 0.34), (15.0, 20.0, 0.5), (20.0, 25.0, 0.5)]
    out = locate_steps(pieces)
    assert [tuple(round(x, 9) for x in p) for p in out] == [
        (0.0, 5.0, 0.1), (5.0, 10.0, 0.1), (10.0, 12.0, 0.1), (12.0, 15.0, 0.5), (15.0, 20.0, 0.5), (20.0, 25.0, 0.5)]
    assert usage(out, 0, 25) == pytest.approx(usage(pieces, 0, 25))


@pytest.mark.parametrize("pieces", [
    [(0, 5, 0.1), (5, 10, 0.2), (10, 15, 0.3), (15, 20, 0.4), (20, 25, 0.5)],  # a ramp: no level is steady
    [(0, 5, 0.1), (5, 10, 0.1), (10, 15, 0.6), (15, 20, 0.5), (20, 25, 0.5)],  # a spike above both levels
    [(0, 5, 0.1), (5, 10, 0.1), (10, 14, 0.3), (16, 20, 0.5), (20, 25, 0.5)],  # a gap: not one interval
])
def test_other_intervals_are_kept_as_measured(pieces):
    assert locate_steps(pieces) == pieces
