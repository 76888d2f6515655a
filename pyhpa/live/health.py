"""`/healthz`, `/readyz` and `/metrics` on `--metrics-bind-address`, served in-process by uvicorn."""

from __future__ import annotations

import asyncio
import logging
from typing import Callable

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

log = logging.getLogger("pyhpa.health")


Check = Callable[[], "tuple[bool, str]"]


def build_app(render_metrics: Callable[[], bytes], ready: Check, healthy: Check | None = None) -> Starlette:
    """`/readyz` answers `ready()`; `/healthz` answers `healthy()` (the watchdog: a stalled worker
    loop or a leader that stopped renewing), 503 with the reason when failing."""

    async def healthz(_: Request) -> Response:
        ok, why = healthy() if healthy is not None else (True, "")
        return PlainTextResponse("ok" if ok else f"unhealthy: {why}", status_code=200 if ok else 503)

    async def readyz(_: Request) -> Response:
        ok, why = ready()
        return PlainTextResponse("ok" if ok else f"not ready: {why}", status_code=200 if ok else 503)

    async def metrics(_: Request) -> Response:
        return Response(render_metrics(), media_type="text/plain; version=0.0.4; charset=utf-8")

    return Starlette(routes=[Route("/healthz", healthz), Route("/readyz", readyz), Route("/metrics", metrics)])


def parse_bind_address(text: str) -> tuple[str, int] | None:
    """`host:port`; `0` (or an empty string) disables the server, as in kube components."""
    text = text.strip()
    if text in ("", "0"):
        return None
    host, sep, port = text.rpartition(":")
    if not sep:
        raise ValueError(f"--metrics-bind-address: expected host:port, got {text!r}")
    try:
        p = int(port)
    except ValueError:
        raise ValueError(f"--metrics-bind-address: invalid port in {text!r}") from None
    return (host.strip("[]") or "127.0.0.1"), p


class HealthServer:
    def __init__(self, app: Starlette, host: str, port: int) -> None:
        self.config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                                     lifespan="off")
        self.server = uvicorn.Server(self.config)
        self.server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        self._task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        servers = getattr(self.server, "servers", None) or []
        for s in servers:
            for sock in s.sockets:
                return int(sock.getsockname()[1])
        return self.config.port

    async def start(self) -> None:
        self._task = asyncio.create_task(self.server.serve(), name="health-server")
        for _ in range(200):
            if self.server.started:
                return
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        if self._task is not None:
            self.server.should_exit = True
            try:
                await asyncio.wait_for(self._task, 5)
            except (asyncio.TimeoutError, Exception):
                self._task.cancel()
            self._task = None
