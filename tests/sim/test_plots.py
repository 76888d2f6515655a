"""Plots: bounded size for many HPAs, legends outside the axes, compare plots with every HPA and
up/down scale markers. The PNGs are also checked as files (signature and size)."""

from __future__ import annotations

import struct

import matplotlib.pyplot as plt
import pytest

from pyhpa.sim import plot
from pyhpa.sim.report import summarize
from tests.sim.scenarios import cpu_hpa, deployment, run, scenario, steps


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _fleet(n: int, duration: str = "5m"):
    objects = []
    for i in range(n):
        d, h = deployment(2, name=f"web{i}"), cpu_hpa(name=f"web{i}")
        objects += [d, h]
    # web3 is the only one made to scale up (a load of its own)
    doc = scenario(objects, {"load": steps(500, ("1m", 2000)), "quiet": {"constant": 400}}, duration=duration,
                   workload={"startup": "60s", "termination": "0s", "cpu": {"signal": "quiet", "per": "1m"}},
                   workloads={"web3": {"cpu": {"signal": "load", "per": "1m"}}} if n > 3 else {})
    return run(doc)


@pytest.fixture
def figures(monkeypatch):
    """The figures the plot functions build (kept open for inspection)."""
    kept = []
    close = plt.close
    monkeypatch.setattr(plot.plt, "close", lambda fig: kept.append(fig))
    yield kept
    for fig in kept:
        close(fig)


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_many_hpas_give_a_fleet_panel_and_a_few_detailed_ones(tmp_path, figures):
    res = _fleet(9)
    summaries = summarize(res)
    path = plot.plot_run(res, tmp_path / "plot.png", summaries)
    fig = figures[-1]
    axes = fig.get_axes()
    # fleet (pods, under-provisioned HPAs) + 4 HPAs x 3 + the zoom on the worst episode and its pod axis
    assert len(axes) == 2 + 3 * plot.MAX_DETAIL + 2
    titles = [ax.get_title() for ax in axes if ax.get_title()]
    assert titles[0] == "fleet: 9 HPAs"
    # the one HPA that scaled (and was short of capacity) is detailed first
    assert titles[1] == "default/web3 -> Deployment/web3"
    assert titles[-1].startswith("zoom: worst under-provisioned episode, default/web3, 00:01:00-")
    assert "details for 4 of 9 HPAs" in fig._suptitle.get_text()
    width, height = _png_size(path)
    assert height <= (2 + 3 * plot.MAX_DETAIL + 1) * plot.PANEL_HEIGHT * plot.DPI * 1.2
    fleet_pods = axes[0].get_lines()[0].get_ydata()
    assert fleet_pods[0] == 18  # 9 targets x 2 pods at the start


def test_pick_detail_prefers_under_provisioning_then_scale_events():
    class R:
        def __init__(self, key, events):
            self.key, self.scale_events = key, [None] * events

    runs = [R(f"ns/h{i}", i % 3) for i in range(10)]
    summaries = [{"hpa": f"ns/h{i}", "underProvisionedPodSeconds": 100.0 if i == 7 else 0.0, "peakReplicas": i}
                 for i in range(10)]
    chosen, why = plot._pick_detail(runs, summaries)
    assert [r.key for r in chosen] == ["ns/h7", "ns/h8", "ns/h5", "ns/h2"]
    assert why.startswith("details for 4 of 10 HPAs")
    assert plot._pick_detail(runs[:3], summaries) == (runs[:3], "")


def test_legends_sit_outside_the_axes(tmp_path, figures):
    res = run(scenario([deployment(2), cpu_hpa()], {"load": steps(500, ("1m", 2000))}))
    plot.plot_run(res, tmp_path / "plot.png")
    fig = figures[-1]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = 0
    for ax in fig.get_axes():
        legend = ax.get_legend()
        if legend is None:
            continue
        legends += 1
        assert not _overlaps(legend.get_window_extent(renderer), ax.get_window_extent(renderer))
    assert legends == 4  # three panels and the zoom


def test_shading_clock_axis_units_band_and_zoom(tmp_path, figures):
    # 500 -> 2000 at 1m on 2 pods of 500m (50 % target): under-provisioned until the scale-up is Ready.
    res = run(scenario([deployment(2), cpu_hpa()], {"load": steps(500, ("1m", 2000))},
                       workload={"startup": "30s", "termination": "0s", "cpu": {"signal": "load", "per": "1m"}}))
    plot.plot_run(res, tmp_path / "plot.png")
    ax_d, ax_r, ax_m, zoom, zoom_pods = figures[-1].get_axes()
    from matplotlib.dates import num2date
    from matplotlib.patches import Rectangle

    # the shading: one red span per panel from 00:01:00 (the step) to when capacity caught up
    spans = [p for p in ax_d.patches if isinstance(p, Rectangle)]
    assert len(spans) == 1 and spans[0].get_label() == "under-provisioned (1)"
    x0 = num2date(spans[0].get_x())
    assert (x0.hour, x0.minute, x0.second) == (0, 1, 0)  # clock time (the scenario starts at midnight UTC)
    assert all(any(isinstance(p, Rectangle) for p in ax.patches) for ax in (ax_r, ax_m))
    assert ax_d.get_ylabel() == "demand\n(load)" and ax_r.get_ylabel() == "pods (count)"
    assert ax_m.get_ylabel() == "cpu\n(% of request)" and ax_m.get_xlabel() == "time (UTC)" and ax_r.get_xlabel() == ""
    labels = ax_m.get_legend_handles_labels()[1]
    assert "tolerance band (±10 %)" in labels and "target (50)" in labels
    assert zoom.get_title().startswith("zoom: worst under-provisioned episode, default/web, 00:01:00-")
    lo, hi = (num2date(v) for v in zoom.get_xlim())
    assert (hi - lo).total_seconds() < 20 * 60 and zoom.get_xlabel() == "time (UTC)"


def test_compare_draws_every_hpa_and_marks_up_and_down(tmp_path, figures):
    one = run(scenario([deployment(2), cpu_hpa()], {"load": steps(500, ("1m", 2000), ("3m", 500))}))
    one.label = "one"
    fleet = _fleet(3)
    fleet.label = "fleet"
    path = plot.plot_compare([one, fleet], tmp_path / "compare.png")
    _png_size(path)
    ax_d, ax_r, ax_m = figures[-1].get_axes()
    assert ax_m.get_ylabel() == "metric\n(% of target)"
    assert "one: cpu" in ax_m.get_legend_handles_labels()[1]  # a single-HPA variant's metric
    labels = ax_r.get_legend_handles_labels()[1]
    assert "fleet (sum of 3 HPAs): replicas" in labels and "one: replicas" in labels
    ups = [x for x in labels if x.startswith("one: scale up")]
    downs = [x for x in labels if x.startswith("one: scale down")]
    assert ups == [f"one: scale up ({sum(1 for e in one.hpas[0].scale_events if e.new > e.old)})"]
    assert downs == [f"one: scale down ({sum(1 for e in one.hpas[0].scale_events if e.new < e.old)})"]
    markers = {c.get_label(): c.get_paths()[0] for c in ax_r.collections}
    assert markers[ups[0]] != markers[downs[0]]  # different marker shapes
    # the fleet's replicas are summed over its three targets
    line = next(ln for ln in ax_r.get_lines() if ln.get_label() == "fleet (sum of 3 HPAs): replicas")
    assert line.get_ydata()[0] == 6
