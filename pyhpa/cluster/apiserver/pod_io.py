"""The pod subresources that reach into a container: ``log`` answered, ``exec``, ``attach``,
``portforward`` and ``ephemeralcontainers`` refused in one clear line.

Why here: on a real cluster the API server forwards these to the pod's kubelet. Simulated pods
run no process, so there is nothing to exec into, attach to or forward to, and ``kubectl
debug`` has nothing to start; each gets a 400 BadRequest saying so (kubectl prints
``Error from server (BadRequest): ...``), never the NotFound that reads as a missing pod.
kubectl 1.30+ first asks for a WebSocket upgrade, then falls back to SPDY; both are plain HTTP
requests here (the server speaks no WebSocket) and get the same answer.

The log is what the simulation registers in :attr:`PodIO.logs` (the lines the kubelet
simulation knows of the container, see :mod:`pyhpa.cluster.controllers.logs`); the
parameters ``container``, ``previous``, ``tailLines``, ``sinceSeconds``, ``sinceTime``,
``timestamps``, ``limitBytes`` and ``follow`` act as the kubelet's log reader does.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, AsyncIterator, Callable

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from pyhpa.api.timefmt import TimeFormatError, parse_time
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.status import APIError
from pyhpa.cluster.apiserver.storage import Store

Obj = dict[str, Any]
# (namespace, pod, container, previous) -> the container's lines (epoch seconds, text), oldest
# first; raises APIError where the kubelet would refuse (a container still waiting, no previous)
LogSource = Callable[[str, str, str, bool], list[tuple[float, str]]]

FOLLOW_POLL_SECONDS = 0.5  # how often a followed log looks for new lines

_REFUSED = MappingProxyType({
    "exec": "there is no process to exec into (kubectl exec and cp need one)",
    "attach": "there is no process to attach to",
    "portforward": "there is no port to forward to",
    "ephemeralcontainers": "no ephemeral container can be started (kubectl debug needs one)",
})
SUBRESOURCES = frozenset(_REFUSED) | {"log"}


class PodIO:
    """The pods' ``log`` and refused process subresources."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.logs: LogSource | None = None
        self.clock: Callable[[], float] = time.time  # the log's clock (sinceSeconds counts back)

    def handles(self, segs: list[str]) -> bool:
        """Whether ``segs`` (a core/v1 path after ``/api/v1``) is one of these subresources."""
        return len(segs) == 5 and segs[0] == "namespaces" and segs[2] == "pods" \
            and segs[4] in SUBRESOURCES

    async def route(self, request: Request, segs: list[str]) -> Response:
        ns, name, sub = segs[1], segs[3], segs[4]
        pod = self.store.try_get(R.PODS.key, ns, name)
        if pod is None:
            raise APIError(404, "NotFound", f'pods "{name}" not found',
                           details={"name": name, "kind": "pods"})
        if sub != "log":
            raise APIError(400, "BadRequest", f'pod "{name}" is simulated by pyhpa and runs no '
                                              f"processes: {_REFUSED[sub]}")
        if request.method not in ("GET", "HEAD"):
            raise APIError(405, "MethodNotAllowed",
                           "the server does not allow this method on the requested resource")
        return self._log(request, ns, name, pod)

    def _log(self, request: Request, ns: str, name: str, pod: Obj) -> Response:
        q = request.query_params
        container = _container(pod, name, q.get("container") or "")
        previous = _bool(q.get("previous"))
        options = _LogOptions(q, self.clock())
        source = self.logs

        def read() -> list[tuple[float, str]]:
            return source(ns, name, container, previous) if source is not None else []

        lines = read()
        if not _bool(q.get("follow")) or previous:
            return Response(options.render(options.select(lines)), media_type="text/plain")

        async def stream() -> AsyncIterator[bytes]:
            sent = options.select(lines)
            yield options.render(sent)
            seen = set(lines)
            budget = options.limit_bytes
            while True:
                await asyncio.sleep(FOLLOW_POLL_SECONDS)
                if await request.is_disconnected():
                    return
                if self.store.try_get(R.PODS.key, ns, name) is None:
                    return  # the pod is gone: so is its log
                try:
                    now_lines = read()
                except APIError:
                    return  # the container is gone or restarting: the stream ends, as kubelet's
                fresh = [line for line in now_lines if line not in seen
                         and line[0] >= options.since]
                seen.update(fresh)
                if fresh:
                    yield options.render(fresh)
                if budget is not None and options.written >= budget:
                    return

        return StreamingResponse(stream(), media_type="text/plain",
                                 headers={"Cache-Control": "no-cache, private"})


class _LogOptions:
    """The filters of a log request (validated: a bad value is a 400 naming the parameter)."""

    def __init__(self, q: Any, now: float) -> None:
        self.timestamps = _bool(q.get("timestamps"))
        self.tail = _int(q.get("tailLines"), "tailLines")
        self.limit_bytes = _int(q.get("limitBytes"), "limitBytes", minimum=1)
        self.since = -float("inf")
        seconds = _int(q.get("sinceSeconds"), "sinceSeconds", minimum=1)
        if seconds is not None:
            self.since = now - seconds
        if q.get("sinceTime"):
            if seconds is not None:
                raise APIError(400, "BadRequest", "at most one of sinceTime or sinceSeconds "
                                                  "may be specified")
            try:
                self.since = parse_time(q["sinceTime"]).timestamp()
            except TimeFormatError as exc:
                raise APIError(400, "BadRequest", f"sinceTime: {exc}") from None
        self.written = 0

    def select(self, lines: list[tuple[float, str]]) -> list[tuple[float, str]]:
        out = [line for line in lines if line[0] >= self.since]
        if self.tail is not None:
            out = out[-self.tail:] if self.tail > 0 else []
        return out

    def render(self, lines: list[tuple[float, str]]) -> bytes:
        text = "".join(f"{_timestamp(t)} {s}\n" if self.timestamps else f"{s}\n"
                       for t, s in lines).encode()
        if self.limit_bytes is not None:
            text = text[:max(0, self.limit_bytes - self.written)]
        self.written += len(text)
        return text


def _container(pod: Obj, name: str, asked: str) -> str:
    """The container a log request is about, as the API server's pod strategy resolves it."""
    spec = pod.get("spec") or {}
    names = [str(c.get("name")) for key in ("containers", "initContainers", "ephemeralContainers")
             for c in spec.get(key) or [] if isinstance(c, dict)]
    if not asked:
        if len(spec.get("containers") or []) == 1:
            return names[0]
        raise APIError(400, "BadRequest", f"a container name must be specified for pod {name}, "
                                          f"choose one of: [{' '.join(names)}]")
    if asked not in names:
        raise APIError(400, "BadRequest", f"container {asked} is not valid for pod {name}")
    return asked


def _timestamp(ts: float) -> str:
    """The kubelet's log timestamps: RFC 3339 with nine fractional digits, UTC."""
    dt = datetime.fromtimestamp(int(ts), tz=timezone.utc)
    nanos = int(round((ts - int(ts)) * 1e9))
    if nanos >= 1_000_000_000:
        dt, nanos = datetime.fromtimestamp(int(ts) + 1, tz=timezone.utc), 0
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos:09d}Z"


def _bool(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1")


def _int(value: str | None, param: str, minimum: int = 0) -> int | None:
    if value is None or value == "":
        return None
    try:
        n = int(value)
    except ValueError:
        raise APIError(400, "BadRequest", f"{param}: Invalid value: {value!r}: must be an "
                                          "integer") from None
    if n < minimum:
        raise APIError(400, "BadRequest", f"{param}: Invalid value: {n}: must be greater than "
                                          f"{'or equal to ' if minimum == 0 else ''}{minimum - (minimum > 0)}")
    return n
