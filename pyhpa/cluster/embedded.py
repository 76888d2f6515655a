"""The embedded cluster started in this process: ``async with EmbeddedCluster(dir) as c`` on the
caller's event loop, or ``with EmbeddedCluster(dir) as c`` on a loop of its own in a daemon thread.

Why in-process: the live controller (``pyhpa run --embedded``), the demo, the tests and the bench
want a real API server (real HTTPS, real kubectl) without a subprocess to manage; they talk to it
only over HTTP through its kubeconfig, as to any other cluster. Either form exposes ``url``,
``token``, ``ca_path``, ``kubeconfig_path``, ``store`` and ``server``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import tempfile
import threading
from pathlib import Path
from typing import Any, Coroutine

import uvicorn

from pyhpa.adapters.listen import listening_socket
from pyhpa.api.versions import VersionProfile
from pyhpa.cluster.apiserver import connections, kubeconfig, tls
from pyhpa.cluster.apiserver.private_files import private_dir
from pyhpa.cluster.apiserver.resources import Registry
from pyhpa.cluster.apiserver.server import APIServer
from pyhpa.cluster.apiserver.storage import Store

DEFAULT_DATA_DIR = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") \
    / "pyhpa" / "cluster"


class EmbeddedCluster:
    """An API server over a SQLite store in ``data_dir``, serving HTTPS on ``host:port``.

    Without ``data_dir`` it lives in a fresh temporary directory (named ``temporary_prefix...``)
    that :meth:`stop` removes: nothing is left behind once the caller ends. ``port=0`` picks a
    free port. ``kubeconfig_path`` defaults to ``<data_dir>/kubeconfig``.
    ``tls=False`` serves plain http (kubectl then sends no token, so auth is off too).
    ``simulate`` runs the workload simulation and the metrics APIs, with ``simulation_options``
    (e.g. ``resolution``, ``window``) passed to it. ``profile`` is what the server behaves and
    reports itself as (:mod:`pyhpa.api.versions`; None: pyhpa's own profile).
    """

    def __init__(self, data_dir: str | os.PathLike[str] | None = None, *, host: str = "127.0.0.1",
                 port: int = 0, kubeconfig_path: str | os.PathLike[str] | None = None,
                 tls: bool = True, registry: Registry | None = None,
                 simulate: bool = True, simulation_options: dict[str, Any] | None = None,
                 profile: VersionProfile | None = None,
                 temporary_prefix: str = "pyhpa-cluster-") -> None:
        self.data_dir = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix=temporary_prefix))
        self.temporary = None if data_dir else self.data_dir  # removed by stop()
        self.host, self.port = host, port
        self.tls = tls
        self.kubeconfig_path = Path(kubeconfig_path) if kubeconfig_path else \
            self.data_dir / "kubeconfig"
        self._registry = registry
        self.simulate = simulate  # run the workload simulation + metrics APIs (controllers.py)
        self.simulation_options = dict(simulation_options or {})
        self.profile = profile
        self.simulation: Any = None
        self.store: Store | None = None
        self.server: APIServer | None = None
        self.url = ""
        self.token = ""
        self.ca_path: Path | None = None
        self._uvicorn: uvicorn.Server | None = None
        self._task: asyncio.Task[Any] | None = None
        self._sock: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # its own, when started by `with`
        self._thread: threading.Thread | None = None

    @property
    def kubeconfig(self) -> str:
        return str(self.kubeconfig_path)

    async def start(self) -> "EmbeddedCluster":
        """Serve; a failed start leaves nothing running (and no temporary directory)."""
        try:
            return await self._start()
        except BaseException:
            await self.stop()
            raise

    async def _start(self) -> "EmbeddedCluster":
        self._sock = listening_socket(self.host, self.port, backlog=2048)  # first: a busy port leaves nothing behind
        private_dir(self.data_dir)  # objects, CA key, token: owner-only (private_files)
        self.port = self._sock.getsockname()[1]
        shown_host = f"[{self.host}]" if ":" in self.host else self.host
        if self.host in ("0.0.0.0", "::"):
            shown_host = "127.0.0.1"
        creds = tls.ensure_credentials(self.data_dir, self.host) if self.tls else None
        scheme = "https" if creds else "http"
        self.url = f"{scheme}://{shown_host}:{self.port}"
        self.store = Store(self.data_dir / "store.sqlite")
        self.token = creds.token if creds else ""
        self.ca_path = creds.ca_path if creds else None
        self.server = APIServer(self.store, self._registry, token=self.token or None,
                                server_address=f"{shown_host}:{self.port}", profile=self.profile,
                                root_ca=creds.ca_path.read_text() if creds else None)
        if self.simulate:
            from pyhpa.cluster.controllers.simulation import attach
            self.simulation = attach(self.server, **self.simulation_options)
        config = uvicorn.Config(
            self.server, log_level="warning", access_log=False, lifespan="off",
            ws="none", timeout_graceful_shutdown=2,
            ssl_certfile=str(creds.cert_path) if creds else None,
            ssl_keyfile=str(creds.key_path) if creds else None,
            **connections.uvicorn_options())  # idle, header and size bounds
        self._uvicorn = uvicorn.Server(config)
        serve = getattr(self._uvicorn, "_serve", None) or self._uvicorn.serve
        self._task = asyncio.get_running_loop().create_task(serve(sockets=[self._sock]))
        while not self._uvicorn.started:
            if self._task.done():
                self._task.result()
                raise RuntimeError("the API server stopped during startup")
            await asyncio.sleep(0.01)
        if creds:
            kubeconfig.write(self.kubeconfig_path, self.url, creds.ca_path, creds.token)
        else:
            kubeconfig.write_plain(self.kubeconfig_path, self.url)
        return self

    async def stop(self) -> None:
        # Close the store's watches first: the simulation's thread blocks in a watch read that
        # its stop() does not interrupt, which would cost a join timeout.
        if self.store is not None:
            self.store.close_watches()
        if self.simulation is not None:
            self.simulation.stop()
            self.simulation = None
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, 10)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                self._task.cancel()
        if self._sock is not None:
            self._sock.close()
        if self.store is not None:
            self.store.close()
        self._task = None
        if self.temporary is not None:
            shutil.rmtree(self.temporary, ignore_errors=True)

    async def serve_forever(self) -> None:
        """Wait until the server stops (Ctrl-C in the CLI)."""
        assert self._task is not None
        await self._task

    async def __aenter__(self) -> "EmbeddedCluster":
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ---- on a loop of its own, for synchronous callers (tests, the bench)

    def __enter__(self) -> "EmbeddedCluster":
        ready = threading.Event()
        error: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # noqa: BLE001 - reported to the starting thread
                error.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.stop())
            loop.close()

        self._thread = threading.Thread(target=run, name="pyhpa-cluster", daemon=True)
        self._thread.start()
        ready.wait()
        if error:
            raise error[0]
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(15)
            self._loop = None

    def call(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run a coroutine on the cluster's own loop (started by ``with``) and wait for its result."""
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()
