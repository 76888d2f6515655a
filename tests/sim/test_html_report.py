"""report.html: built as a plotly figure (checked here) and rendered by a real browser (headless
Chromium: a screenshot that is not blank, and the DOM plotly drew, with the chart's elements)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pyhpa.cli import app
from pyhpa.sim.html_report import build_figure
from pyhpa.sim.report import summarize
from tests.sim.scenarios import cpu_hpa, deployment, run, scenario, steps

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)

# 500 -> 2000 at 2m (2 pods of 500m, 30 s startup): the scenario's 50 % target is short until its
# scale-up is Ready; the 30 % variant ("fast") is on the same trace.
DOC = scenario([deployment(2), cpu_hpa()], {"load": steps(500, ("2m", 2000), ("6m", 600))},
               workload={"startup": "30s", "termination": "0s", "cpu": {"signal": "load", "per": "1m"}})


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("report")
    (tmp / "s.yaml").write_text(yaml.safe_dump(DOC))
    (tmp / "fast.yaml").write_text(yaml.safe_dump(cpu_hpa(target=30)))
    out = tmp / "out"
    result = CliRunner().invoke(app, ["simulate", str(tmp / "s.yaml"), "-o", str(out), "--compare",
                                      str(tmp / "fast.yaml")])
    assert result.exit_code == 0, result.output
    return out / "report.html"


def test_report_is_one_self_contained_file(report):
    text = report.read_text()
    assert "<script" in text and "Plotly.newPlot" in text
    assert not re.search(r"<script[^>]*\ssrc=", text)  # plotly.js inlined: no script to fetch
    assert "<table class='summary'>" in text and "fast" in text  # the summary of both variants


def test_figure_has_clock_axis_units_band_shading_and_decisions():
    res = run(DOC)
    fig = build_figure([res], summarize(res))
    names = [t.name for t in fig.data]
    assert {"demand (load)", "Ready capacity", "replicas (spec)", "Ready pods", "status.desiredReplicas",
            "cpu", "tolerance band (±10 %)", "target (50)"} <= set(names)
    assert "under-provisioned, shaded (1 interval)" in names
    layout = fig.layout
    assert layout.xaxis.type == "date" and layout.xaxis3.title.text == "time (UTC)"
    assert str(fig.data[0].x[0]) == "2026-01-01T00:00:00.000"  # clock time, from the scenario's start
    assert (layout.yaxis.title.text, layout.yaxis2.title.text, layout.yaxis3.title.text) == (
        "demand (load)", "pods", "cpu (% of request)")
    [shade] = layout.shapes
    assert str(shade.x0) == "2026-01-01 00:02:00" and shade.yref == "paper"
    band = next(t for t in fig.data if t.name.startswith("tolerance band"))
    assert (min(band.y), max(band.y)) == (45.0, pytest.approx(55.0))
    up = next(t for t in fig.data if t.name.startswith("scale up"))
    assert "New size: " in up.hovertext[0] and "reason: cpu resource utilization" in up.hovertext[0]
    assert "AbleToScale=True" in up.hovertext[0]
    assert layout.xaxis.rangeselector.buttons and layout.xaxis3.rangeslider.visible


def test_per_hpa_menu_switches_traces_and_shading():
    objects = []
    for i in range(3):
        objects += [deployment(2, name=f"web{i}"), cpu_hpa(name=f"web{i}")]
    doc = scenario(objects, {"load": steps(500, ("1m", 2000)), "quiet": {"constant": 400}}, duration="4m",
                   workload={"startup": "60s", "termination": "0s", "cpu": {"signal": "quiet", "per": "1m"}},
                   workloads={"web2": {"cpu": {"signal": "load", "per": "1m"}}})
    res = run(doc)
    fig = build_figure([res], summarize(res))
    [menu] = fig.layout.updatemenus
    assert [b.label for b in menu.buttons] == ["default/web2", "default/web0", "default/web1"]  # most attention first
    first, second = menu.buttons[0].args, menu.buttons[1].args
    assert first[1]["shapes"] and not second[1]["shapes"]  # only web2 was under-provisioned
    assert sum(first[0]["visible"]) == sum(t.visible for t in fig.data)  # the first HPA shows at first
    assert not any(a and b for a, b in zip(first[0]["visible"], second[0]["visible"]))


def _chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_report_renders_in_headless_chromium(report, tmp_path):
    url = report.resolve().as_uri()
    dom = _chromium("--dump-dom", "--virtual-time-budget=5000", "--window-size=1400,1000", url).stdout
    assert dom.count('class="main-svg"') >= 2  # plotly drew the chart
    for text in ("demand (load)", "scenario: Ready capacity", "fast: Ready capacity", "scenario: scale up",
                 "tolerance band (±10 %)", "time (UTC)", "pods", "metric (% of target)",
                 "scenario: under-provisioned, shaded (1 interval)", "15m", "s — scenario, fast: default/web"):
        assert f'data-unformatted="{text}' in dom, text
    assert "Jan 1, 2026" in dom  # clock-time ticks
    # the shaded under-provisioned interval, drawn as a shape
    assert 'class="shapelayer"><g class="shape-group"' in dom and "fill-opacity: 0.18" in dom
    shot = tmp_path / "report.png"
    _chromium(f"--screenshot={shot}", "--window-size=1400,1000", "--virtual-time-budget=5000", url)
    import matplotlib.image as mpimg
    import numpy as np

    pixels = mpimg.imread(shot)[..., :3]
    assert pixels.shape[:2] == (1000, 1400)
    colours = np.unique((pixels * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colours) > 200  # lines, markers, text: not a blank page
    white = (pixels.min(axis=2) > 0.97).mean()
    assert 0.3 < white < 0.98
