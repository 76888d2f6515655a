"""A tiny stand-in for the Prometheus HTTP API on loopback, for fast tests of errors and chunking.

It does not evaluate PromQL: each rule pairs a piece of query text with what to answer (series
of constant values, or an error), the first rule whose text is in the query wins, and a query
matching none gets an empty result. Every request is recorded.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Rule:
    text: str  # answered when this text is in the query
    series: list[tuple[dict[str, str], float]] = field(default_factory=list)  # (labels, constant value)
    error: tuple[int, str, str] | None = None  # (HTTP status, errorType, error)
    skip: tuple[float, float] | None = None  # range queries: no points in [from, to)


class FakePrometheus:
    def __init__(self, rules: list[Rule] | None = None, paths: dict[str, Any] | None = None) -> None:
        self.rules = list(rules or [])
        self.paths = dict(paths or {})  # other paths answered with this JSON (a fake API server's)
        self.requests: list[tuple[str, dict[str, str]]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                url = urllib.parse.urlparse(self.path)
                params = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
                fake.requests.append((url.path, params))
                status, body = fake.answer(url.path, params)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakePrometheus:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, path: str, params: dict[str, str]) -> tuple[int, Any]:
        if path in self.paths:
            return 200, self.paths[path]
        query = params.get("query", "")
        rule = next((r for r in self.rules if r.text in query), None)
        if rule is not None and rule.error is not None:
            status, kind, text = rule.error
            return status, {"status": "error", "errorType": kind, "error": text}
        series = rule.series if rule is not None else []
        if path.endswith("/query_range"):
            start, end, step = float(params["start"]), float(params["end"]), float(params["step"])
            n = int(round((end - start) / step)) + 1
            if n > 11000:
                return 400, {"status": "error", "errorType": "bad_data",
                             "error": "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing "
                                      "the query resolution (?step=XX)"}
            times = [start + k * step for k in range(n)]
            if rule is not None and rule.skip is not None:
                times = [t for t in times if not rule.skip[0] <= t < rule.skip[1]]
            result = [{"metric": labels, "values": [[t, str(value)] for t in times]} for labels, value in series]
            return 200, {"status": "success", "data": {"resultType": "matrix", "result": result}}
        at = float(params.get("time", "0"))
        result = [{"metric": labels, "value": [at, str(value)]} for labels, value in series]
        return 200, {"status": "success", "data": {"resultType": "vector", "result": result}}
