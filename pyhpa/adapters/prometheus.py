"""A client of the Prometheus HTTP API (``/api/v1/query`` and ``/api/v1/query_range``).

Why plain HTTP over httpx2 (already the kube client's HTTP library) rather than a client library:
two GET endpoints and their JSON are all ``pyhpa history`` needs; the Python client libraries add
pandas-sized dependencies for that. Every failure is one :class:`PrometheusError` line that names
the server: no answer (``connection refused``), an HTTP error with Prometheus's own ``error`` text
(bad PromQL, a timeout, too many samples), or an answer that is not the API's JSON.

A range query is cut into chunks: Prometheus refuses one of more than 11,000 points per series
(``web/api/v1/api.go``, ``queryRange``: "exceeded maximum resolution of 11,000 points per
timeseries"), and 7 days at a 30 s step are 20,160.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import httpx2 as httpx
import msgspec

MAX_POINTS_PER_SERIES = 11_000  # Prometheus's limit per range query
CHUNK_POINTS = 10_000  # points per chunk we send, under that limit


class PrometheusError(Exception):
    """One line naming the server: ``prometheus http://...: <what went wrong>``."""


@dataclass
class InstantSample:
    labels: dict[str, str]
    value: float
    time: float


@dataclass
class RangeSeries:
    """One series of a range query: its labels and its (time, value) points, times ascending."""

    labels: dict[str, str]
    times: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)


def one_line(promql: str) -> str:
    """A query as one line (for messages): whitespace runs collapsed."""
    return re.sub(r"\s+", " ", promql).strip()


def chunks(start: float, end: float, step: float, points: int = CHUNK_POINTS) -> list[tuple[float, float]]:
    """[start, end] cut into (chunk start, chunk end) pairs of at most ``points`` evaluation times
    each, on the grid start + k x step, with no time evaluated twice."""
    if step <= 0:
        raise ValueError("step must be > 0")
    total = int(math.floor((end - start) / step + 1e-9)) + 1
    out = []
    k = 0
    while k < total:
        n = min(points, total - k)
        out.append((start + k * step, start + (k + n - 1) * step))
        k += n
    return out


class PrometheusClient:
    """Queries against one server; ``url`` is its base (``http://127.0.0.1:9090``, a path prefix allowed)."""

    def __init__(self, url: str, *, timeout: float = 120.0, http: Any = None) -> None:
        self.url = url.rstrip("/")
        if not re.match(r"^https?://[^/]+", self.url):
            raise PrometheusError(f"prometheus {url}: not an http:// or https:// URL")
        self._http = http or httpx.Client(timeout=httpx.Timeout(timeout), trust_env=False)
        self._decode = msgspec.json.Decoder()

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> PrometheusClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def fail(self, detail: str) -> PrometheusError:
        return PrometheusError(f"prometheus {self.url}: {detail}")

    def _get(self, path: str, params: dict[str, str]) -> Any:
        try:
            answer = self._http.get(f"{self.url}/api/v1/{path}", params=params)
        except httpx.TimeoutException:
            raise self.fail("timed out") from None
        except httpx.HTTPError as exc:
            raise self.fail(_no_answer_text(exc)) from None
        try:
            doc = self._decode.decode(answer.content)
        except msgspec.DecodeError:
            doc = None
        if isinstance(doc, dict) and doc.get("status") == "error":
            kind = doc.get("errorType") or f"HTTP {answer.status_code}"
            query = params.get("query")
            where = f" (query: {one_line(query)})" if query else ""
            raise self.fail(f"{kind}: {one_line(str(doc.get('error')))}{where}")
        if answer.status_code >= 400:
            body = one_line(answer.text)[:200]
            raise self.fail(f"HTTP {answer.status_code} {answer.reason_phrase} on /api/v1/{path}" + (f": {body}" if body else ""))
        if not isinstance(doc, dict) or doc.get("status") != "success" or not isinstance(doc.get("data"), dict):
            raise self.fail(f"not a Prometheus API answer on /api/v1/{path} (is this Prometheus?)")
        return doc["data"]

    def query(self, promql: str, at: float) -> list[InstantSample]:
        """An instant query evaluated at ``at`` (epoch seconds); its result vector."""
        data = self._get("query", {"query": promql, "time": _fmt(at)})
        kind, result = data.get("resultType"), data.get("result")
        if kind == "scalar" and isinstance(result, list):
            return [InstantSample({}, float(result[1]), float(result[0]))]
        if kind != "vector" or not isinstance(result, list):
            raise self.fail(f"expected a vector from {one_line(promql)}, got {kind}")
        return [InstantSample(dict(r["metric"]), float(r["value"][1]), float(r["value"][0])) for r in result]

    def query_range(self, promql: str, start: float, end: float, step: float,
                    progress: Callable[[int], None] | None = None) -> list[RangeSeries]:
        """A range query over [start, end] at ``step``, in chunks of at most :data:`CHUNK_POINTS`
        points; series of the chunks are joined by their labels. ``progress(n)`` after each chunk."""
        merged: dict[tuple[tuple[str, str], ...], RangeSeries] = {}
        for a, b in chunks(start, end, step):
            data = self._get("query_range", {"query": promql, "start": _fmt(a), "end": _fmt(b), "step": _fmt(step)})
            if data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
                raise self.fail(f"expected a matrix from {one_line(promql)}, got {data.get('resultType')}")
            for r in data["result"]:
                labels = dict(r["metric"])
                key = tuple(sorted(labels.items()))
                series = merged.get(key)
                if series is None:
                    series = merged[key] = RangeSeries(labels)
                for t, v in r["values"]:
                    series.times.append(float(t))
                    series.values.append(float(v))
            if progress is not None:
                progress(1)
        return list(merged.values())


def _fmt(t: float) -> str:
    return f"{t:.3f}".rstrip("0").rstrip(".")


def _no_answer_text(exc: BaseException) -> str:
    """``connection refused`` from ``[Errno 111] Connection refused`` (however deep the cause)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror[:1].lower() + seen.strerror[1:]
        seen = seen.__cause__ or seen.__context__
    text = re.sub(r"^\[Errno -?\d+\]\s*", "", str(exc)) or type(exc).__name__
    return text[:1].lower() + text[1:]
