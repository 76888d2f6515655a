"""Runs every acceptance case under tests/offline/cases/ through the real `pyhpa reconcile`.

Each case directory holds `snapshot.yaml`, optional `args` (extra flags; paths relative to the
case directory) and either `expected.yaml` (the full expected List, compared as data) or
`expected-error` (the command must fail with one stderr line containing every listed piece).
All cases run in-process through the typer app; a sample also runs the installed console script.
"""

from __future__ import annotations

import json
import os
import pathlib
import shlex
import subprocess
import sys

import pytest
import yaml
from typer.testing import CliRunner

from pyhpa.cli import app

CASES = pathlib.Path(__file__).resolve().parent / "cases"
NOW = "2026-01-01T00:10:00Z"
PYHPA = pathlib.Path(sys.executable).parent / "pyhpa"


class _NoTimestamps(yaml.SafeLoader):
    """Timestamps stay strings, as in the command's own reading of YAML."""


_NoTimestamps.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _load(text: str):
    return yaml.load(text, Loader=_NoTimestamps)


def case_names() -> list[str]:
    return sorted(p.name for p in CASES.iterdir() if (p / "snapshot.yaml").exists())


def command_args(case: pathlib.Path) -> list[str]:
    extra = shlex.split((case / "args").read_text()) if (case / "args").exists() else []
    args = ["reconcile", "-f", "snapshot.yaml", *extra]
    if "--now" not in extra:
        args += ["--now", NOW]
    return args


def parse_output(text: str, args: list[str]):
    if "json" in args and args[args.index("json") - 1] in ("-o", "--output"):
        return json.loads(text)
    return _load(text)


def check(case: pathlib.Path, code: int, stdout: str, stderr: str, args: list[str]) -> None:
    err_file = case / "expected-error"
    if err_file.exists():
        assert code != 0, f"expected a failure, got exit 0 and:\n{stdout}"
        lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("warning:")]
        assert len(lines) == 1, f"expected one error line, got:\n{stderr}"
        for piece in err_file.read_text().strip().split("|"):
            assert piece in lines[0], f"{piece!r} not in {lines[0]!r}"
        return
    assert code == 0, f"exit {code}: {stderr}"
    got = parse_output(stdout, args)
    want = _load((case / "expected.yaml").read_text())
    if got != want:
        # Compare item by item for a readable failure.
        g_items, w_items = got.get("items", []), want.get("items", [])
        for i, (g, w) in enumerate(zip(g_items, w_items)):
            assert g == w, f"item {i} ({w.get('kind')} {w.get('metadata', {}).get('name')}) differs:\n" \
                           f"got:\n{yaml.safe_dump(g, sort_keys=False)}\nwant:\n{yaml.safe_dump(w, sort_keys=False)}"
        assert len(g_items) == len(w_items), f"{len(g_items)} items, expected {len(w_items)}:\n{stdout}"
        assert got == want


@pytest.mark.parametrize("name", case_names())
def test_case_in_process(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES / name
    monkeypatch.chdir(case)
    args = command_args(case)
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    check(case, result.exit_code, result.stdout, result.stderr, args)


SAMPLE = ["cpu-util-scale-up", "behavior-scale-down-percent-past-events", "output-json", "several-files",
          "missing-scale-target", "v1-metrics-annotation"]


@pytest.mark.parametrize("name", [n for n in SAMPLE if (CASES / n).exists()] +
                         [n for n in case_names() if n.startswith("err-")][:2])
def test_case_console_script(name: str) -> None:
    case = CASES / name
    args = command_args(case)
    proc = subprocess.run([str(PYHPA), *args], cwd=case, capture_output=True, text=True, timeout=60)
    check(case, proc.returncode, proc.stdout, proc.stderr, args)


def test_stdin_snapshot() -> None:
    case = CASES / "cpu-util-scale-up"
    proc = subprocess.run([str(PYHPA), "reconcile", "-f", "-", "--now", NOW], input=(case / "snapshot.yaml").read_text(),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert _load(proc.stdout) == _load((case / "expected.yaml").read_text())


def test_explain_goes_to_stderr_and_leaves_stdout_identical(monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES / "behavior-default-scale-up-rate"
    monkeypatch.chdir(case)
    plain = CliRunner().invoke(app, command_args(case), catch_exceptions=False)
    explained = CliRunner().invoke(app, command_args(case) + ["--explain"], catch_exceptions=False)
    assert explained.exit_code == 0
    assert explained.stdout == plain.stdout
    text = explained.stderr
    assert "HorizontalPodAutoscaler default/web:" in text
    assert "external metric jobs(nil)" in text  # what the metric proposed
    assert "20" in text  # what was done


def test_unknown_kind_warns_on_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES / "unknown-kinds-ignored"
    monkeypatch.chdir(case)
    result = CliRunner().invoke(app, command_args(case), catch_exceptions=False)
    assert result.exit_code == 0
    assert "ConfigMap" in result.stderr and "warning:" in result.stderr


def test_missing_file_is_one_line_error(tmp_path: pathlib.Path) -> None:
    os.chdir(tmp_path)
    result = CliRunner().invoke(app, ["reconcile", "-f", "nope.yaml", "--now", NOW])
    assert result.exit_code != 0
    assert "nope.yaml" in result.stderr and len(result.stderr.strip().splitlines()) == 1
