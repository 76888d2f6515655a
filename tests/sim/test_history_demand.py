"""How `pyhpa history` turns measured usage intervals into the demand held over each step: the
intervals put where they were (resample), a load step inside one interval put where it was
(locate_steps), both keeping every interval's usage, and a stopped pod's usage after its last
sample added (add_stopped_pods)."""

from __future__ import annotations

import pytest

from pyhpa.sim.history_demand import add_stopped_pods, locate_steps, resample


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


def two_pods(b_until: int):
    """Pods a and b at 0.1 cores each, sampled every 5 s at 0, 5, 10, ...; b's samples end at
    ``b_until`` x 5 s. As `pyhpa history` reads them: per pod, the core-seconds of each step k
    (from the sample at 5k to the one at 5k + 5) and its latest sample's instant at each step's
    start; and the workload's intervals, which hold only what the samples hold."""
    used = {"a": {k: 0.5 for k in range(6)}, "b": {k: 0.5 for k in range(b_until)}}
    sampled = {"a": {k: 5.0 * k for k in range(7)}, "b": {k: 5.0 * min(k, b_until) for k in range(7)}}
    spans = [[5.0 * k, 5.0 * k + 5, sum(p.get(k, 0.0) for p in used.values()), k] for k in range(6)]
    return spans, used, sampled


def test_a_pod_deleted_at_a_scale_down_used_cpu_until_then():
    spans, used, sampled = two_pods(2)  # b's last sample at 10; the workload scaled down at 13
    add_stopped_pods(spans, used, sampled, 5.0, [13.0])
    assert [s[2] for s in spans] == pytest.approx([1.0, 1.0, 0.5 + 0.1 * 3, 0.5, 0.5, 0.5])
    spans, used, sampled = two_pods(2)  # also when the scale-down before deleted another pod
    add_stopped_pods(spans, used, sampled, 5.0, [8.0, 13.0])
    assert [s[2] for s in spans] == pytest.approx([1.0, 1.0, 0.5 + 0.1 * 3, 0.5, 0.5, 0.5])


def test_a_pod_sampled_after_the_scale_down_that_deleted_it_lost_nothing():
    spans, used, sampled = two_pods(2)  # scaled down at 8: b's sample at 10 was taken while it terminated
    add_stopped_pods(spans, used, sampled, 5.0, [8.0])
    assert [s[2] for s in spans] == pytest.approx([1.0, 1.0, 0.5, 0.5, 0.5, 0.5])


def test_a_pod_whose_last_interval_fell_short_of_its_siblings_stopped_within_it():
    # b deleted at 9 by a scale-down and sampled at 10 while terminating (0.4 core-seconds, its
    # counter still from 9); the scale-down at 14 deleted another pod
    spans, used, sampled = two_pods(2)
    used["b"][1] = 0.4
    spans[1][2] = 0.9
    add_stopped_pods(spans, used, sampled, 5.0, [9.0, 14.0])
    assert [s[2] for s in spans] == pytest.approx([1.0, 0.9, 0.5, 0.5, 0.5, 0.5])
    add_stopped_pods(spans, used, sampled, 5.0, [])  # the same without the HPA's events
    assert [s[2] for s in spans] == pytest.approx([1.0, 0.9, 0.5, 0.5, 0.5, 0.5])


def test_a_pod_stopped_without_a_scale_down_stopped_in_the_middle_of_the_next_scrape_interval():
    spans, used, sampled = two_pods(2)
    add_stopped_pods(spans, used, sampled, 5.0, [])
    assert [s[2] for s in spans] == pytest.approx([1.0, 1.0, 0.5 + 0.1 * 2.5, 0.5, 0.5, 0.5])
    demand = resample([(a, b, v / (b - a)) for a, b, v, _ in spans], [5.0, 10.0, 15.0], 5.0)
    assert demand == pytest.approx([0.2, 0.15, 0.1])


def test_a_pod_still_sampled_at_the_range_end_or_sampled_once_has_nothing_added():
    spans, used, sampled = two_pods(6)  # b sampled up to the last instant, as a
    add_stopped_pods(spans, used, sampled, 5.0, [])
    assert [s[2] for s in spans] == pytest.approx([1.0] * 6)
    spans, used, sampled = two_pods(0)
    used["b"], sampled["b"] = {2: 0.3}, {3: 15.0}  # b's first and only sample, at 15: no interval to rate
    add_stopped_pods(spans, used, sampled, 5.0, [])
    assert [s[2] for s in spans] == pytest.approx([0.5] * 6)
