"""Resource metrics are listed once per namespace and period, then selected per HPA through a
label index: every HPA must get exactly the usages a plain scan of the list would give."""

from __future__ import annotations

import msgspec

from pyhpa.adapters.kube.metrics_api import SharedPodMetrics
from pyhpa.adapters.metrics_lists import pod_usage
from pyhpa.api.quantity import quantity_dec_hook
from pyhpa.api.selectors import Selector
from pyhpa.api.types import PodMetrics

from tests.builders import pod_metrics


class ListingApi:
    """The part of MetricsApi the shared cache calls, counting the LISTs."""

    def __init__(self, items: list[PodMetrics]) -> None:
        self.items = items
        self.lists = 0

    async def list_pod_metrics(self, namespace: str, label_selector: str = "") -> list[PodMetrics]:
        self.lists += 1
        return [m for m in self.items if m.metadata.namespace == namespace]


def _fleet() -> list[PodMetrics]:
    """Interleaved label sets (more than the index scans), some pods in another namespace, and
    timestamps that differ, so the first match's time is told apart."""
    out = []
    for i in range(60):
        labels = {"app": f"a{i % 12}", **({"tier": "front"} if i % 3 == 0 else {})}
        doc = pod_metrics(f"p{i}", f"{10 + i}m", namespace="ns" if i % 7 else "other", labels=labels,
                          timestamp=f"2026-01-01T00:{i:02d}:00Z")
        out.append(msgspec.json.decode(msgspec.json.encode(doc), type=PodMetrics, dec_hook=quantity_dec_hook))
    return out


async def test_each_selector_gets_what_a_scan_of_the_list_gets() -> None:
    items = _fleet()
    api = ListingApi(items)
    shared = SharedPodMetrics(api, ttl=60.0)  # type: ignore[arg-type]
    for text in ("app=a3", "app=a0,tier=front", "tier=front", "app in (a1,a2)", "app!=a5", "", "app=none"):
        selector = Selector.parse(text)
        got = await shared.pod_usages("ns", selector)
        scanned = [pod_usage(m) for m in items
                   if m.metadata.namespace == "ns" and selector.matches(m.metadata.labels or {})]
        assert sorted(got, key=lambda u: u.names) == sorted(scanned, key=lambda u: u.names), text
        if scanned:
            assert got[0] == scanned[0]  # the list's timestamp is its first match's
    assert api.lists == 1  # one LIST for every HPA of the namespace within the period
