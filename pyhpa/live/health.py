"""`/healthz`, `/readyz`, `/metrics`, `/debug/hpa/NAMESPACE/NAME` (the latest decision trace
of one HPA, JSON) and `/debug/config` (the controller's flags) on `--metrics-bind-address`, served in-process by uvicorn."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any, Callable

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from pyhpa.adapters.tasks import cancel_and_wait
from pyhpa.adapters.listen import ListenError, listening_socket

log = logging.getLogger("pyhpa.health")


Check = Callable[[], "tuple[bool, str]"]


DecisionOf = Callable[[str, str], "dict[str, Any] | None"]  # (namespace, name) -> latest decision


def build_app(render_metrics: Callable[[], bytes], ready: Check, healthy: Check | None = None,
              decision: DecisionOf | None = None, config: dict[str, Any] | None = None) -> Starlette:
    """`/readyz` answers `ready()`; `/healthz` answers `healthy()` (the watchdog: a stalled worker
    loop or a leader that stopped renewing), 503 with the reason when failing; `/debug/hpa/NS/NAME`
    answers `decision(NS, NAME)`, 404 before that HPA's first sync (or on a standby);
    `/debug/config` the controller's published configuration (docs/controller.md#published-configuration)."""

    async def healthz(_: Request) -> Response:
        ok, why = healthy() if healthy is not None else (True, "")
        return PlainTextResponse("ok" if ok else f"unhealthy: {why}", status_code=200 if ok else 503)

    async def readyz(_: Request) -> Response:
        ok, why = ready()
        return PlainTextResponse("ok" if ok else f"not ready: {why}", status_code=200 if ok else 503)

    async def metrics(_: Request) -> Response:
        return Response(render_metrics(), media_type="text/plain; version=0.0.4; charset=utf-8")

    async def debug_hpa(request: Request) -> Response:
        ns, name = request.path_params["namespace"], request.path_params["name"]
        found = decision(ns, name) if decision is not None else None
        if found is None:
            return JSONResponse({"error": f"no decision on HorizontalPodAutoscaler {ns}/{name} yet"}, status_code=404)
        return JSONResponse(found)

    async def debug_config(_: Request) -> Response:
        if config is None:
            return JSONResponse({"error": "no configuration published"}, status_code=404)
        return JSONResponse(config)

    return Starlette(routes=[Route("/healthz", healthz), Route("/readyz", readyz), Route("/metrics", metrics),
                             Route("/debug/hpa/{namespace}/{name}", debug_hpa), Route("/debug/config", debug_config)])


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


class BindError(OSError):
    """`--metrics-bind-address` cannot be listened on (in use, not ours, not allowed)."""


def _listen(host: str, port: int) -> socket.socket:
    try:
        return listening_socket(host, port)
    except ListenError as exc:
        raise BindError(f"--metrics-bind-address: {exc.strerror}") from None


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
        sock = _listen(self.config.host, self.config.port)
        self._task = asyncio.create_task(self.server.serve(sockets=[sock]), name="health-server")
        for _ in range(200):
            if self.server.started:
                return
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        if self._task is not None:
            self.server.should_exit = True
            done, _ = await asyncio.wait({self._task}, timeout=2)
            if not done:
                await cancel_and_wait(self._task)
            elif not self._task.cancelled():
                self._task.exception()  # consumed: the server stopped either way
            self._task = None
