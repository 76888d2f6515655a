"""`pyhpa cluster` as a command: what it says when it cannot start."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_a_busy_port_is_one_clear_line_and_a_failing_exit(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "pyhpa.cli", "cluster",
                            "--listen", f"127.0.0.1:{port}", "--data-dir", str(tmp_path / "data")],
                           cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr == f"pyhpa cluster: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    assert not (tmp_path / "data").exists()  # nothing was started, not even its data dir


def test_an_unknown_emulated_version_is_one_line_naming_the_flag_and_range(tmp_path):
    from pyhpa.api.versions import NEWEST_MINOR
    r = subprocess.run([sys.executable, "-m", "pyhpa.cli", "cluster", "--emulated-version", "1.26",
                        "--data-dir", str(tmp_path / "data")],
                       cwd=REPO, capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (f"pyhpa cluster: --emulated-version '1.26': must be a release from 1.27 to "
                        f"1.{NEWEST_MINOR} (MAJOR.MINOR, e.g. 1.33)\n")
    assert not (tmp_path / "data").exists()


def test_a_gate_the_emulated_release_lacks_is_one_line_and_nothing_starts(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pyhpa.cli", "cluster", "--listen", "127.0.0.1:0",
                        "--data-dir", str(tmp_path / "data"), "--emulated-version", "1.30",
                        "--feature-gates", "HPAConfigurableTolerance=true"],
                       cwd=REPO, capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == ("pyhpa cluster: --feature-gates: cannot set feature gate HPAConfigurableTolerance "
                        "to true, feature is PreAlpha at emulated version 1.30\n")
    assert not (tmp_path / "data").exists()


def test_bad_node_flags_are_one_line_naming_the_flag(tmp_path):
    for args, line in [(["--nodes", "0"], "pyhpa cluster: --nodes 0: must be 1 to 1000"),
                       (["--node-capacity", "cpu=8,gpu=1"],
                        "pyhpa cluster: --node-capacity 'gpu=1': expected cpu=, memory= or "
                        "pods=QUANTITY")]:
        r = subprocess.run([sys.executable, "-m", "pyhpa.cli", "cluster", "--listen",
                            "127.0.0.1:0", "--data-dir", str(tmp_path / "data"), *args],
                           cwd=REPO, capture_output=True, text=True, timeout=60)
        assert (r.returncode, r.stdout, r.stderr) == (2, "", line + "\n")
    assert not (tmp_path / "data").exists()


def test_help_shows_whole_flag_names_at_80_columns():
    """Every command's --help in a terminal of 80 columns: each flag whole, no line wider."""
    import re

    import typer
    from typer.testing import CliRunner

    from pyhpa.cli import app

    group = typer.main.get_command(app)
    runner = CliRunner()
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        out = runner.invoke(app, [name, "--help"], env={"COLUMNS": "80"}, terminal_width=80)
        assert out.exit_code == 0, out.output
        flags = [o for p in command.params for o in (*p.opts, *p.secondary_opts)
                 if o.startswith("--")]
        assert flags, name
        for flag in flags:
            assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", out.output), (name, flag)
        assert max(map(len, out.output.splitlines())) <= 80, name
        assert "…" not in out.output, name
    # the command list: each summary whole, wrapped rather than cut with "..."
    out = runner.invoke(app, ["--help"], env={"COLUMNS": "80"}, terminal_width=80).output
    listed = out.split("Commands:", 1)[1]
    assert "..." not in listed and max(map(len, listed.splitlines())) <= 80
    assert "Leases) for kubectl." in listed
