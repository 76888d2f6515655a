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
    assert not (tmp_path / "data" / "store.sqlite").exists()  # nothing was started


def test_an_unknown_emulated_version_is_one_line_naming_the_flag_and_range(tmp_path):
    from pyhpa.api.versions import NEWEST_MINOR
    r = subprocess.run([sys.executable, "-m", "pyhpa.cli", "cluster", "--emulated-version", "1.26",
                        "--data-dir", str(tmp_path / "data")],
                       cwd=REPO, capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (f"pyhpa cluster: --emulated-version '1.26': must be a release from 1.27 to "
                        f"1.{NEWEST_MINOR} (MAJOR.MINOR, e.g. 1.33)\n")
    assert not (tmp_path / "data").exists()
