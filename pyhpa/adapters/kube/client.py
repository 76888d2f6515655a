"""The one HTTP client the live controller uses to talk to a Kubernetes API server.

Why this shape: lightkube gives us what is tedious and security-relevant — kubeconfig parsing
(contexts, exec plugins, client certificates), in-cluster service-account config with token
rotation, TLS setup — and hands back its async HTTP client. Requests themselves are sent raw
and decoded with msgspec into our own structs: the controller needs paths lightkube has no
model for (the `/scale` subresource of any kind, the three metrics APIs, watch with bookmarks),
and decoding large pod lists with msgspec is several times faster than through lightkube models.

Every request passes the client-side token bucket (`--kube-api-qps`/`--kube-api-burst`) and is
counted by verb and resource, so "API requests per HPA per sync period" is a measured figure.
"""

from __future__ import annotations

import collections
import json
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, AsyncIterator, Protocol

import httpx2 as httpx
import msgspec
from lightkube.config.client_adapter import AsyncClient as _lightkube_http_client
from lightkube.config.client_adapter import ConnectionParams
from lightkube.config.kubeconfig import KubeConfig, SingleConfig
from lightkube.config.models import Cluster, User

from pyhpa.adapters.kube.ratelimit import TokenBucket

# The controller's name on the API server: its User-Agent's product, which the server records as
# the field manager of its writes (managedFields). Upstream's HPA controller runs inside
# kube-controller-manager and is named so; against the embedded cluster we take that name, so
# its managedFields read as a real cluster's.
MANAGER = "pyhpa-controller"
CONTROLLER_MANAGER = "kube-controller-manager"


def user_agent(manager: str = MANAGER) -> str:
    return f"{manager}/0.1 (horizontal-pod-autoscaler)"


def check_manager(manager: str) -> None:
    """A manager name the server can read back from the User-Agent: at most 128 printable
    characters, no ``/`` (the product ends there) and no space."""
    if len(manager) > 128 or not manager.isprintable() or "/" in manager or " " in manager:
        raise ValueError(f"--field-manager: {manager!r} must be at most 128 printable characters "
                         "without '/' or spaces")



class ApiError(Exception):
    """A non-2xx answer from the API server, carrying the Status fields when there is one."""

    def __init__(self, code: int, reason: str, message: str, path: str = "", server: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.path = path
        self.server = server  # the API server's address, on a request that got no answer (code 0)

    @property
    def is_conflict(self) -> bool:
        return self.code == 409

    @property
    def is_not_found(self) -> bool:
        return self.code == 404

    @property
    def is_gone(self) -> bool:
        return self.code == 410

    def __str__(self) -> str:
        return self.message


def _error_from_response(code: int, body: bytes, path: str) -> ApiError:
    reason, message = "", ""
    try:
        status = json.loads(body)
        if isinstance(status, dict):
            reason = str(status.get("reason") or "")
            message = str(status.get("message") or status.get("detail") or "")
    except ValueError:
        message = body.decode("utf-8", "replace")[:500]
    if not message:
        message = f"the server responded with the status code {code} but did not return more information"
    return ApiError(code, reason or _REASONS.get(code, "Unknown"), message, path)


class _Status(msgspec.Struct):
    code: int | None = None
    reason: str | None = None
    message: str | None = None


def watch_error(raw: bytes | msgspec.Raw, path: str) -> ApiError:
    """The error a watch ``ERROR`` event (a Status object) stands for."""
    st = msgspec.json.decode(raw, type=_Status)
    return ApiError(st.code or 500, st.reason or "", st.message or "watch error", path)


_REASONS = MappingProxyType({400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 409: "Conflict",
                              410: "Expired", 422: "Invalid", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable"})


@dataclass(frozen=True)
class RequestKey:
    verb: str  # get, list, watch, create, update, patch, delete
    resource: str  # e.g. "horizontalpodautoscalers/status", "deployments/scale", "pods.metrics.k8s.io"


def classify(method: str, path: str, params: dict[str, Any] | None) -> RequestKey:
    """Name a request the way the API server's audit log would: verb + resource[/subresource]."""
    parts = [p for p in path.split("?")[0].split("/") if p]
    group = ""
    if parts[:1] == ["api"]:
        rest = parts[2:]
    elif parts[:1] == ["apis"]:
        group = parts[1] if len(parts) > 1 else ""
        rest = parts[3:]
    else:
        rest = parts
    if rest[:1] == ["namespaces"] and len(rest) >= 3:
        rest = rest[2:]
    resource = rest[0] if rest else "discovery"
    named = len(rest) >= 2
    sub = rest[2] if len(rest) >= 3 else ""
    if group and group not in ("apps", "autoscaling", "coordination.k8s.io", ""):
        resource = f"{resource}.{group}"
    if sub:
        resource = f"{resource}/{sub}"
    m = method.upper()
    if m == "GET":
        if params and str(params.get("watch", "")).lower() in ("true", "1"):
            verb = "watch"
        else:
            verb = "get" if named else "list"
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(m, m.lower())
    return RequestKey(verb, resource)


class RequestCounter:
    """Counts requests by (verb, resource); cheap enough to keep on for every request."""

    def __init__(self) -> None:
        self.counts: collections.Counter[RequestKey] = collections.Counter()

    def add(self, key: RequestKey) -> None:
        self.counts[key] += 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def total_excluding(self, *verbs: str) -> int:
        return sum(n for k, n in self.counts.items() if k.verb not in verbs)

    def snapshot(self) -> dict[RequestKey, int]:
        return dict(self.counts)


# ------------------------------------------------------------------------------ configuration


def load_config(
    kubeconfig: str | Path | None = None,
    context: str | None = None,
    *,
    server: str | None = None,
    token: str | None = None,
    ca_file: str | None = None,
    insecure: bool = False,
) -> SingleConfig:
    """Client config: explicit server, else `kubeconfig`, else in-cluster, else $KUBECONFIG/~/.kube/config."""
    if server:
        user = User(token=token) if token else User()
        cluster = Cluster(server=server, certificate_auth=ca_file, insecure=insecure)
        return KubeConfig.from_one(cluster=cluster, user=user).get()
    if kubeconfig:
        path = Path(kubeconfig)
        if not path.exists():
            raise FileNotFoundError(f"--kubeconfig: file not found: {path}")
        cfg = KubeConfig.from_file(path).get(context_name=context)
    else:
        cfg = KubeConfig.from_env().get(context_name=context)
    if cfg is None:
        raise ValueError("no usable context in the Kubernetes client configuration")
    return cfg


class ConnectionObserver(Protocol):
    """Told of each request that got no answer at all and of each answer (whatever its status),
    so one place can say when the API server is lost and when it is back
    (:class:`pyhpa.live.connectivity.ApiServerStatus`)."""

    reachable: bool | None  # False: known not to answer

    def connection_failed(self, error: ApiError) -> None: ...

    def connection_answered(self) -> None: ...

    async def wait_answering(self) -> None:
        """Return at once unless the API server is known not to answer; else once it does."""


async def wait_answering(client: Any) -> None:
    """Background writers (events, state) call this first: no retry loop while the API server is
    known to be down (the observer probes it with a backoff instead)."""
    connection = getattr(client, "connection", None)
    if connection is not None:
        await connection.wait_answering()


def outage_reported(client: Any, exc: BaseException) -> bool:
    """``exc`` is a request that got no answer (refused, reset, timed out: not an HTTP error) and
    ``client`` has an observer that reports the outage once: the caller need not warn again."""
    return isinstance(exc, ApiError) and exc.code == 0 and getattr(client, "connection", None) is not None


class KubeClient:
    """Raw, counted, throttled requests to one API server; JSON bodies decoded with msgspec."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        qps: float = 20.0,
        burst: int = 30,
        counter: RequestCounter | None = None,
    ) -> None:
        self.http = http
        self.limiter = TokenBucket(qps, burst)
        self.counter = counter or RequestCounter()
        self._decoders: dict[Any, msgspec.json.Decoder[Any]] = {}
        self._encoder = msgspec.json.Encoder()
        self.connection: ConnectionObserver | None = None  # set by `pyhpa run`

    @classmethod
    def from_config(cls, config: SingleConfig, *, qps: float = 20.0, burst: int = 30, timeout: float = 30.0,
                    manager: str = MANAGER) -> "KubeClient":
        """A client whose writes the server records as ``manager``'s."""
        params = ConnectionParams(timeout=httpx.Timeout(timeout), trust_env=False)
        http = _lightkube_http_client(config, params)
        http.headers["User-Agent"] = user_agent(manager)
        return cls(http, qps=qps, burst=burst)

    async def close(self) -> None:
        await self.http.aclose()

    # -- decoding

    def decoder(self, typ: Any) -> msgspec.json.Decoder[Any]:
        dec = self._decoders.get(typ)
        if dec is None:
            from pyhpa.api.quantity import quantity_dec_hook

            dec = msgspec.json.Decoder(typ, dec_hook=quantity_dec_hook)
            self._decoders[typ] = dec
        return dec

    def encode(self, obj: Any) -> bytes:
        if isinstance(obj, (bytes, bytearray)):
            return bytes(obj)
        if isinstance(obj, msgspec.Struct):
            from pyhpa.api.quantity import quantity_enc_hook

            return msgspec.json.encode(obj, enc_hook=quantity_enc_hook)
        return self._encoder.encode(obj)

    # -- requests

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> bytes:
        await self.limiter.acquire()
        self.counter.add(classify(method, path, params))
        content = None if body is None else self.encode(body)
        headers = {"Accept": "application/json"}
        if content is not None:
            headers["Content-Type"] = content_type
        try:
            resp = await self.http.request(method, path, params=params, content=content, headers=headers)
        except httpx.HTTPError as exc:
            raise self._no_answer(ApiError(0, "ConnectionError", f"{method} {path}: {exc!r}", path), exc) from exc
        if self.connection is not None:
            self.connection.connection_answered()
        if resp.status_code >= 400:
            raise _error_from_response(resp.status_code, resp.content, path)
        return resp.content

    async def get(self, path: str, typ: Any = dict, params: dict[str, Any] | None = None) -> Any:
        return self.decoder(typ).decode(await self.request("GET", path, params=params))

    async def put(self, path: str, obj: Any, typ: Any = dict) -> Any:
        return self.decoder(typ).decode(await self.request("PUT", path, body=obj))

    async def post(self, path: str, obj: Any, typ: Any = dict) -> Any:
        return self.decoder(typ).decode(await self.request("POST", path, body=obj))

    async def merge_patch(self, path: str, patch: Any, typ: Any = dict) -> Any:
        data = await self.request("PATCH", path, body=patch, content_type="application/merge-patch+json")
        return self.decoder(typ).decode(data)

    async def delete(self, path: str) -> None:
        await self.request("DELETE", path)

    async def watch(self, path: str, params: dict[str, Any]) -> AsyncIterator[tuple[str, msgspec.Raw]]:
        """Stream `(type, raw object)` watch events until the server closes the stream."""
        params = {**params, "watch": "true"}
        await self.limiter.acquire()
        self.counter.add(classify("GET", path, params))
        timeout = httpx.Timeout(30.0, read=None)
        try:
            async with self.http.stream("GET", path, params=params, timeout=timeout,
                                        headers={"Accept": "application/json"}) as resp:
                if self.connection is not None:
                    self.connection.connection_answered()
                if resp.status_code >= 400:
                    raise _error_from_response(resp.status_code, await resp.aread(), path)
                dec = self.decoder(WatchEvent)
                async for line in resp.aiter_lines():
                    if not line.strip():
                        continue
                    ev = dec.decode(line)
                    yield ev.type, ev.object
        except httpx.HTTPError as exc:
            raise self._no_answer(ApiError(0, "ConnectionError", f"watch {path}: {exc!r}", path), exc) from exc

    def _no_answer(self, error: ApiError, cause: BaseException) -> ApiError:
        error.__cause__ = cause  # before the observer describes it
        error.server = str(self.http.base_url).rstrip("/")
        if self.connection is not None:
            self.connection.connection_failed(error)
        return error


class WatchEvent(msgspec.Struct):
    type: str
    object: msgspec.Raw
