"""A real Prometheus server for the tests: Debian's `prometheus` and `promtool`, on loopback.

`scripts/test.sh` installs the package where it is missing and may (root with apt-get); elsewhere
the tests that need it skip, naming what is missing. A server runs in its own temporary data
directory, listens on a free 127.0.0.1 port and is stopped when its `with` block ends.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pyhpa.api import goyaml


def require_tools() -> tuple[str, str]:
    """The paths of `prometheus` and `promtool`, or skip the calling test saying which is missing."""
    server, promtool = shutil.which("prometheus"), shutil.which("promtool")
    missing = [name for name, path in (("prometheus", server), ("promtool", promtool)) if path is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (Debian package `prometheus`; "
                    "scripts/test.sh installs it when run as root)")
    assert server is not None and promtool is not None
    return server, promtool


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def backfill(openmetrics: str, data_dir: Path, max_block: str | None = None) -> None:
    """Write `openmetrics` (text ending in `# EOF`) into TSDB blocks under `data_dir` with
    `promtool tsdb create-blocks-from openmetrics`, as an operator backfills history.

    `max_block` (`--max-block-duration`, e.g. `192h`): one block for a week instead of 84 of the
    default 2 h, which backfills ~15 times faster."""
    _, promtool = require_tools()
    data_dir.mkdir(parents=True, exist_ok=True)
    source = data_dir.parent / f"{data_dir.name}-backfill.om"
    source.write_text(openmetrics)
    extra = [f"--max-block-duration={max_block}"] if max_block else []
    done = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", *extra, str(source), str(data_dir)],
                          capture_output=True, text=True, timeout=300)
    source.unlink()
    if done.returncode != 0:
        raise AssertionError(f"promtool backfill failed ({done.returncode}): {done.stderr or done.stdout}")


class PrometheusServer:
    """`prometheus` started with `config` (a scrape configuration as a mapping) and stopped on exit.

    `url` is where its HTTP API answers; `log` is its output, read when a test fails."""

    def __init__(self, data_dir: Path, config: dict[str, Any] | None = None, *,
                 retention: str = "30d") -> None:
        self.data_dir = data_dir
        self.config = config if config is not None else {"global": {"scrape_interval": "15s"}}
        self.retention = retention
        self.port = 0
        self.log = data_dir.parent / f"{data_dir.name}-prometheus.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> PrometheusServer:
        server, _ = require_tools()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        config_path = self.data_dir.parent / f"{self.data_dir.name}-prometheus.yml"
        config_path.write_text(goyaml.dump(self.config))
        self.port = free_port()
        with self.log.open("wb") as out:
            self._proc = subprocess.Popen(
                [server, f"--config.file={config_path}", f"--storage.tsdb.path={self.data_dir}",
                 f"--storage.tsdb.retention.time={self.retention}",
                 f"--web.listen-address=127.0.0.1:{self.port}", "--web.enable-lifecycle"],
                stdout=out, stderr=subprocess.STDOUT)
        self._wait_ready()
        return self

    def _wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise AssertionError(f"prometheus exited ({self._proc.returncode}):\n{self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"prometheus not ready after {timeout:.0f}s:\n{self.log.read_text()[-3000:]}")

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def api(self, path: str, **params: str) -> Any:
        """GET `/api/v1/<path>` and return its `data`, failing the test on an error answer."""
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=30) as answer:
            doc = json.load(answer)
        assert doc.get("status") == "success", doc
        return doc["data"]

    def query(self, promql: str, at: float | None = None) -> list[dict[str, Any]]:
        """An instant query's result vector."""
        params = {"query": promql}
        if at is not None:
            params["time"] = f"{at:.3f}"
        return list(self.api("query", **params)["result"])

    def wait_for(self, promql: str, timeout: float = 90.0) -> list[dict[str, Any]]:
        """Poll an instant query until it returns a non-empty vector (a scrape has landed)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            result = self.query(promql)
            if result:
                return result
            time.sleep(1.0)
        targets = self.api("targets")
        raise AssertionError(f"no result for {promql!r} after {timeout:.0f}s; targets: {json.dumps(targets)[:3000]}")
