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


def test_hover_carries_units_and_the_uncapped_proposal_where_a_limit_applied():
    res = run(DOC)
    fig = build_figure([res], summarize(res))
    up = next(t for t in fig.data if t.name.startswith("scale up"))
    # 2000m over 2 pods is 200 % against 50 %: 8 replicas, but scale-up is limited to 4 in 15 s.
    assert "<b>2 → 4</b>" in up.hovertext[0]
    assert "the metrics proposed 8 replicas (limited: ScaleUpLimit, uncapped)" in up.hovertext[0]
    assert "cpu: 200% of request (target 50% of request)" in up.hovertext[0]
    cpu = next(t for t in fig.data if t.name == "cpu")
    assert cpu.hovertemplate == "%{y:.4g}% of request (target 50% of request)"
    [episode] = next(t for t in fig.data if t.name == "under-provisioned episodes (1)").hovertext
    assert episode == "under-provisioned from 2026-01-01 00:02:00 UTC for 45s: up to 2 pods short, 90 pod-s"


# 48 h at 2 pods (maxReplicas 2) of 500 rps: six 60 s spikes to 1500 rps nobody can serve.
SPIKES = ["6h", "13h", "20h", "27h", "34h", "41h"]
LONG = scenario([deployment(2), cpu_hpa(target=80, min_replicas=2, max_replicas=2)],
                {"rps": {"spikes": {"base": 600, "height": 900, "length": "60s", "times": SPIKES}}}, duration="48h",
                workload={"startup": "0s", "termination": "0s", "cpu": {"signal": "rps", "per": "1m"},
                          "demand": "rps", "capacityPerReplica": 500})


@pytest.fixture(scope="module")
def long_report(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("long")
    (tmp / "s.yaml").write_text(yaml.safe_dump(LONG))
    result = CliRunner().invoke(app, ["simulate", str(tmp / "s.yaml"), "-o", str(tmp / "out"), "--timeline", "none"])
    assert result.exit_code == 0, result.output
    return tmp / "out" / "report.html"


def test_long_report_lists_the_worst_episodes_with_h_m_s_durations(long_report):
    text = long_report.read_text()
    assert "48h. Shaded" in text and "0.183333 h" not in text and "class='warn'" not in text
    assert "<h3>Worst under-provisioned episodes of default/web</h3>" in text
    items = re.findall(r"<li><a href='#timeline' onclick=\"return zoomTo\('([^']+)','([^']+)'\)\">([^<]+)</a>", text)
    assert len(items) == len(SPIKES)
    starts = sorted(re.search(r"from (\S+ \S+) UTC", t).group(1) for _, _, t in items)
    assert starts == [f"2026-01-0{1 + int(h[:-1]) // 24} {int(h[:-1]) % 24:02d}:00:00" for h in SPIKES]
    assert all("for 1m: up to 1 pods short, 60 pod-s" in t for _, _, t in items)
    a, b, _ = items[0]  # the zoom spans the episode with 5 minutes either side
    assert (a[-8:], b[-8:]) in {(f"{int(h[:-1]) % 24 - 1:02d}:55:00", f"{int(h[:-1]) % 24:02d}:06:00") for h in SPIKES}


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_every_short_episode_of_a_48h_report_is_found_in_the_screenshot(long_report, tmp_path):
    """Six 60 s episodes in 48 h are 0.03 % of the axis each, under a pixel: the drawn minimum
    width and the markers keep each one visible. Found as columns of the marker's colour and of
    the shading's, in six separate clusters, in the top (demand) panel."""
    import matplotlib.image as mpimg
    import numpy as np

    shot = tmp_path / "long.png"
    _chromium(f"--screenshot={shot}", "--window-size=1400,1000", "--virtual-time-budget=8000",
              long_report.resolve().as_uri())
    pixels = (mpimg.imread(shot)[..., :3] * 255).astype(int)
    pixels[:, pixels.shape[1] - 300:] = 255  # the legend (its own marker and swatch) is not the chart
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]

    def clusters(mask) -> list[tuple[int, int]]:
        cols = np.flatnonzero(mask.any(axis=0))
        groups: list[tuple[int, int]] = []
        for c in cols:
            if groups and c - groups[-1][1] <= 2:
                groups[-1] = (groups[-1][0], c)
            else:
                groups.append((c, c))
        return groups

    marker = (r > 190) & (g < 80) & (b > 80) & (b < 170)  # the episode marker's magenta (#e4007c)
    found = clusters(marker)
    assert len(found) == len(SPIKES), found
    # The shading (#d62728 at 18 % on white: about (245, 222, 222)) around each marker, at least 3 px wide.
    shade = (abs(r - 245) <= 6) & (abs(g - 221) <= 8) & (abs(b - 221) <= 8)
    shaded = [c for c in clusters(shade) if c[1] - c[0] >= 2]
    for lo, hi in found:
        mid = (lo + hi) / 2
        assert any(a - 3 <= mid <= z + 3 for a, z in shaded), (mid, shaded)
