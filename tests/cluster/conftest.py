"""Fixtures: a real `pyhpa cluster` process on 127.0.0.1 with an ephemeral port, and kubectl."""

from __future__ import annotations

import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]


def kubectl_binary(minor: int) -> str | None:
    found = shutil.which("kubectl")
    if not found:
        return None
    path = Path(os.path.realpath(found)).parent / f"kubectl.1.{minor}"
    return str(path) if path.exists() else None


class ClusterProcess:
    """`pyhpa cluster` in a subprocess, so tests can SIGKILL and restart it."""

    def __init__(self, data_dir: Path, *args: str) -> None:
        self.data_dir = data_dir
        self.args = args  # more `pyhpa cluster` flags
        self.kubeconfig = data_dir / "kubeconfig"
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""

    def start(self) -> "ClusterProcess":
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pyhpa.cli", "cluster", "--listen", "127.0.0.1:0",
             "--data-dir", str(self.data_dir), *self.args],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = re.search(r"serving (https://\S+)", line)
            if m:
                self.url = m.group(1)
                return self
        raise RuntimeError("pyhpa cluster did not start")

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.proc = None

    @property
    def token(self) -> str:
        return (self.data_dir / "token").read_text().strip()

    @property
    def ca(self) -> str:
        return str(self.data_dir / "tls" / "ca.crt")


@pytest.fixture(scope="module")
def cluster_proc(tmp_path_factory):
    proc = ClusterProcess(tmp_path_factory.mktemp("cluster")).start()
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def kube_home(tmp_path_factory):
    return tmp_path_factory.mktemp("kubehome")


def make_kubectl(minor: int, proc: ClusterProcess, home: Path):
    binary = kubectl_binary(minor)
    if binary is None:
        pytest.skip(f"kubectl.1.{minor} not installed")
    env = dict(os.environ, HOME=str(home), KUBECACHEDIR=str(home / f"cache{minor}"))

    def run(*args: str, check: bool = True, input: str | None = None,
            extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        cmd = [binary, "--kubeconfig", str(proc.kubeconfig), *args]
        out = subprocess.run(cmd, capture_output=True, text=True, input=input, timeout=60,
                             env={**env, **(extra_env or {})})
        if check and out.returncode != 0:
            raise AssertionError(f"{' '.join(args)} failed ({out.returncode}):\n{out.stdout}\n"
                                 f"{out.stderr}")
        return out

    run.binary = binary  # type: ignore[attr-defined]
    run.env = env  # type: ignore[attr-defined]
    return run


def kubectl_in_namespace(minor: int, proc: ClusterProcess, home: Path, ns: str):
    """Fixture body: kubectl ``minor`` with a namespace of its own (``run.ns``), deleted after."""
    run = make_kubectl(minor, proc, home)
    run("create", "namespace", ns)
    run.ns = ns  # type: ignore[attr-defined]
    yield run
    run("delete", "namespace", ns, "--timeout=50s", check=False)  # Terminating until empty


def api_client(cluster, *, timeout: float = 10, token: bool = True) -> httpx.Client:
    """An HTTPS client of an embedded cluster: trusts its CA, sends its bearer token (unless not
    ``token``)."""
    return httpx.Client(base_url=cluster.url, timeout=timeout,
                        verify=ssl.create_default_context(cafile=str(cluster.ca_path)),
                        headers={"Authorization": f"Bearer {cluster.token}"} if token else None)


@pytest.fixture()
def client(cluster):
    """An API client of the test module's own ``cluster`` fixture (an embedded cluster)."""
    with api_client(cluster) as c:
        yield c


def client_in_namespace(cluster, ns: str):
    """Fixture body: an API client (20 s timeout) of ``cluster`` once namespace ``ns`` exists."""
    with api_client(cluster, timeout=20) as c:
        assert c.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                  "metadata": {"name": ns}}).status_code == 201
        yield c


def embedded_client_in_namespace(tmp_path_factory, ns: str):
    """Fixture body: an API client of a test module's own embedded cluster once namespace ``ns``
    exists."""
    from pyhpa.cluster.embedded import EmbeddedCluster

    with EmbeddedCluster(tmp_path_factory.mktemp(ns)) as cluster:
        yield from client_in_namespace(cluster, ns)


def fast_controller(cluster, log: Path):
    """Fixture body: `pyhpa run` against ``cluster`` with 1 s periods, its output in ``log``,
    stopped by its pid at the end."""
    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pyhpa.cli", "run", "--kubeconfig", str(cluster.kubeconfig_path),
         "--no-leader-elect", "--no-persist-state", "--metrics-bind-address", "0",
         "--horizontal-pod-autoscaler-sync-period", "1s",
         "--horizontal-pod-autoscaler-cpu-initialization-period", "1s",
         "--horizontal-pod-autoscaler-initial-readiness-delay", "1s"],
        cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)},
        stdout=log.open("w"), stderr=subprocess.STDOUT)
    yield proc
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def wait_for(fn, timeout: float = 45.0, what: str = ""):
    """Poll ``fn`` until it returns something truthy (returned); fail naming ``what`` and the
    last value after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}: last={last!r}")
