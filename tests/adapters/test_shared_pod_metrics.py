"""Resource metrics are listed once per namespace and period, read into usages once, then
selected per HPA through a label index: every HPA must get exactly the usages a plain scan of
the list would give, and a list reads as the HPA reads each of its PodMetrics."""

from __future__ import annotations

import msgspec
import pytest

from pyhpa.adapters.kube.metrics_api import SharedPodMetrics
from pyhpa.adapters.metrics_lists import UsageError, pod_usages
from pyhpa.api.selectors import Selector
from pyhpa.api.types import PodMetricsView, PodMetricsViewList

from tests.builders import pod_metrics


class ListingApi:
    """The part of MetricsApi the shared cache calls, counting the LISTs."""

    def __init__(self, items: list[PodMetricsView]) -> None:
        self.items = items
        self.lists = 0

    async def list_pod_metrics(self, namespace: str, label_selector: str = "") -> list[PodMetricsView]:
        self.lists += 1
        return [m for m in self.items if m.metadata.namespace == namespace]


def _views(docs: list[dict]) -> list[PodMetricsView]:
    """The items of a PodMetricsList answer, decoded as the controller decodes them."""
    data = msgspec.json.encode({"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1",
                                "metadata": {}, "items": docs})
    return msgspec.json.decode(data, type=PodMetricsViewList).items


def _fleet() -> list[PodMetricsView]:
    """Interleaved label sets (more than the index scans), some pods in another namespace, and
    timestamps that differ, so the first match's time is told apart."""
    docs = []
    for i in range(60):
        labels = {"app": f"a{i % 12}", **({"tier": "front"} if i % 3 == 0 else {})}
        docs.append(pod_metrics(f"p{i}", f"{10 + i}m", namespace="ns" if i % 7 else "other", labels=labels,
                                timestamp=f"2026-01-01T00:{i:02d}:00Z"))
    return _views(docs)


async def test_each_selector_gets_what_a_scan_of_the_list_gets() -> None:
    items = _fleet()
    api = ListingApi(items)
    shared = SharedPodMetrics(api, ttl=60.0)  # type: ignore[arg-type]
    usages = pod_usages(items)
    for text in ("app=a3", "app=a0,tier=front", "tier=front", "app in (a1,a2)", "app!=a5", "", "app=none"):
        selector = Selector.parse(text)
        got = await shared.pod_usages("ns", selector)
        scanned = [u for u in usages if u.namespace == "ns" and selector.matches(u.labels)]
        assert sorted(got, key=lambda u: u.names) == sorted(scanned, key=lambda u: u.names), text
        if scanned:
            assert got[0] == scanned[0]  # the list's timestamp is its first match's
    assert api.lists == 1  # one LIST for every HPA of the namespace within the period


def test_a_list_reads_as_the_hpa_reads_each_pod_metrics() -> None:
    """Two containers, a missing resource, numeric and spaced quantities, a window that does not
    parse, no labels, no namespace, no timestamp, no containers."""
    docs = [pod_metrics(f"p{i}", f"{100 + i}m", labels={"app": "web"}) for i in range(4)]
    docs[1]["containers"].append({"name": "side", "usage": {"cpu": 2, "memory": " 64Mi"}})
    docs[2]["containers"][0]["usage"]["memory"] = "1.5Gi"
    docs.append(pod_metrics("badwin", "1", window="thirty", labels={}, namespace=None))
    del docs[-1]["timestamp"]
    docs.append({"metadata": {"name": "empty"}, "containers": []})
    got = pod_usages(_views(docs))
    assert [u.names for u in got] == [("p0",), ("p1",), ("p2",), ("p3",), ("badwin",), ("empty",)]
    assert [u.value("cpu", "") for u in got] == [100, 2101, 102, 103, 1000, None]
    assert got[1].value("cpu", "side") == 2000 and got[1].value("memory", "side") == 64 * 2**20 * 1000
    assert got[1].value("memory", "") is None  # container app reports no memory: the pod is left out
    assert got[2].value("memory", "app") == 1536 * 2**20 * 1000
    assert got[0].window == 30.0 and got[0].window_error is None
    assert got[4].window == 0.0 and "thirty" in (got[4].window_error or "")
    assert got[4].namespace == "" and got[4].labels == {} and got[4].timestamp.year == 1
    assert got[0].namespace == "default" and got[0].labels == {"app": "web"}
    assert got[0].timestamp.isoformat() == "2026-01-01T00:09:45+00:00"


def test_pods_alike_share_their_labels_timestamp_and_usage() -> None:
    """The pods of one workload and one scrape are one object each: most of the usages' memory."""
    docs = [pod_metrics(f"p{i}", "50m", labels={"app": "web"}) for i in range(3)]
    docs.append(pod_metrics("other", "60m", labels={"app": "api"}))
    got = pod_usages(_views(docs))
    assert got[0].labels is got[1].labels is got[2].labels and got[3].labels is not got[0].labels
    assert got[0].timestamp is got[3].timestamp and got[0].namespace is got[3].namespace
    assert got[0].containers is got[2].containers and got[3].containers != got[0].containers


def test_equal_instants_in_other_offsets_keep_their_own_offset() -> None:
    got = pod_usages(_views([pod_metrics("utc", "1m", timestamp="2026-01-01T10:00:00Z"),
                             pod_metrics("east", "1m", timestamp="2026-01-01T12:00:00+02:00")]))
    assert got[0].timestamp == got[1].timestamp
    assert [u.timestamp.utcoffset().total_seconds() for u in got] == [0, 7200]  # type: ignore[union-attr]


def test_a_usage_that_is_no_quantity_names_its_item_and_field() -> None:
    docs = [pod_metrics("p0", "5m"), pod_metrics("p1", "lots")]
    with pytest.raises(UsageError) as caught:
        pod_usages(_views(docs))
    assert caught.value.index == 1 and caught.value.field == "containers[0].usage[cpu]"
    assert str(caught.value).startswith("invalid quantity 'lots'")
    assert str(caught.value).endswith("- at `$.items[1].containers[0].usage[cpu]`") and "\n" not in str(caught.value)


def test_a_usage_of_the_wrong_type_fails_the_decode_naming_it() -> None:
    data = msgspec.json.encode({"items": [pod_metrics("p0", "5m") | {"containers": [{"name": "app", "usage": {"cpu": [1]}}]}]})
    with pytest.raises(msgspec.ValidationError, match=r"items\[0\]\.containers\[0\]\.usage"):
        msgspec.json.decode(data, type=PodMetricsViewList)
