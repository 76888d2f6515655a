"""The Prometheus HTTP API client: chunked range queries and one-line errors naming the server."""

from __future__ import annotations

import pytest

from pyhpa.adapters.prometheus import MAX_POINTS_PER_SERIES, PrometheusClient, PrometheusError, chunks
from tests.fake_prometheus import FakePrometheus, Rule
from tests.prometheus_server import free_port


def test_chunks_cover_the_range_once_within_the_limit():
    week = chunks(0, 7 * 86400, 30)
    times = [a + k * 30 for a, b in week for k in range(int((b - a) / 30) + 1)]
    assert times == [k * 30 for k in range(7 * 2880 + 1)]
    assert all((b - a) / 30 + 1 <= MAX_POINTS_PER_SERIES for a, b in week)
    assert len(week) == 3
    assert chunks(100, 100, 15) == [(100, 100)]


def test_range_query_is_cut_into_chunks_and_joined_by_labels():
    rule = Rule("up", series=[({"job": "a"}, 1.0), ({"job": "b"}, 2.0)])
    with FakePrometheus([rule]) as fake:
        with PrometheusClient(fake.url) as client:
            calls = []
            got = client.query_range("up", 0, 7 * 86400, 30, calls.append)
    assert len([r for r in fake.requests if r[0].endswith("query_range")]) == 3 == len(calls)
    assert sorted(s.labels["job"] for s in got) == ["a", "b"]
    a = next(s for s in got if s.labels["job"] == "a")
    assert a.times == [k * 30.0 for k in range(7 * 2880 + 1)]
    assert set(a.values) == {1.0}


def test_unreachable_server_is_one_line_naming_it():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(PrometheusError) as err:
        PrometheusClient(url).query("up", 0)
    assert str(err.value) == f"prometheus {url}: connection refused"


def test_bad_promql_carries_prometheus_error_text():
    rule = Rule("sum(", error=(400, "bad_data", 'invalid parameter "query": 1:5: parse error: unclosed left parenthesis'))
    with FakePrometheus([rule]) as fake, PrometheusClient(fake.url) as client:
        with pytest.raises(PrometheusError) as err:
            client.query("sum(up", 0)
    text = str(err.value)
    assert text.startswith(f"prometheus {fake.url}: bad_data: ")
    assert "unclosed left parenthesis" in text and "(query: sum(up)" in text and "\n" not in text


def test_answer_that_is_not_the_api_is_named():
    with FakePrometheus() as fake, PrometheusClient(fake.url + "/not-prometheus") as client:
        fake.answer = lambda path, params: (404, "404 page not found")  # type: ignore[method-assign]
        with pytest.raises(PrometheusError) as err:
            client.query("up", 0)
    assert str(err.value).startswith(f"prometheus {fake.url}/not-prometheus: HTTP 404 Not Found on /api/v1/query")


def test_url_that_is_not_http_is_refused():
    with pytest.raises(PrometheusError, match="not an http"):
        PrometheusClient("127.0.0.1:9090")
