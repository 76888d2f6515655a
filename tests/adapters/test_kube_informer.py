"""Informer: list + watch, bookmarks, re-list on 410 Gone with a diff, label-indexed selection."""

import asyncio

import msgspec
import pytest

from pyhpa.adapters.kube.client import ApiError, KubeClient, RequestCounter, classify
from pyhpa.adapters.kube.informer import Informer, equality_terms
from pyhpa.api.selectors import Selector
from pyhpa.api.types import PodView


def pod(name, rv, ns="default", **labels):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "resourceVersion": str(rv), "labels": labels}}


class FakeClient(KubeClient):
    """Serves scripted list pages and watch streams instead of HTTP."""

    def __init__(self):
        super().__init__(http=None, qps=0)  # type: ignore[arg-type]
        self.lists = []  # each: list of pages (dict)
        self.watches = []  # each: list of (type, obj) or an Exception
        self.watch_params = []

    async def request(self, method, path, *, params=None, body=None, content_type=""):
        self.counter.add(classify(method, path, params))
        pages = self.lists[0]
        page = pages.pop(0)
        if not pages:
            self.lists.pop(0)
        return msgspec.json.encode(page)

    async def watch(self, path, params):
        self.watch_params.append(params)
        self.counter.add(classify("GET", path, {**params, "watch": "true"}))
        script = self.watches.pop(0) if self.watches else None
        if script is None:
            await asyncio.Event().wait()
        if isinstance(script, Exception):
            raise script
        for etype, obj in script:
            yield etype, msgspec.Raw(msgspec.json.encode(obj))


async def wait_for(cond, timeout=2.0):
    for _ in range(int(timeout / 0.01)):
        if cond():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached")


async def test_paginated_list_then_watch_with_bookmark_and_delete():
    c = FakeClient()
    c.lists.append([
        {"metadata": {"resourceVersion": "10", "continue": "x"}, "items": [pod("a", 5, app="web")]},
        {"metadata": {"resourceVersion": "10"}, "items": [pod("b", 6, app="db")]},
    ])
    c.watches.append([
        ("ADDED", pod("c", 11, app="web")),
        ("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": "15"}}),
        ("DELETED", pod("a", 16, app="web")),
    ])
    events = []
    inf = Informer(c, "/api/v1/pods", PodView, name="pods")
    inf.add_handlers(lambda o: events.append(("add", o.metadata.name)),
                     lambda o, n: events.append(("update", n.metadata.name)),
                     lambda o: events.append(("delete", o.metadata.name)))
    inf.start()
    await wait_for(lambda: len(events) == 4)
    assert events == [("add", "a"), ("add", "b"), ("add", "c"), ("delete", "a")]
    assert inf.resource_version == "16"
    assert c.watch_params[0]["resourceVersion"] == "10"
    assert c.watch_params[0]["allowWatchBookmarks"] == "true"
    # second watch resumes from the newest version, without a re-list
    await wait_for(lambda: len(c.watch_params) == 2)
    assert c.watch_params[1]["resourceVersion"] == "16"
    assert inf.relists == 1
    sel = Selector.parse("app=web")
    assert [p.metadata.name for p in inf.select("default", sel)] == ["c"]
    await inf.stop()


async def test_gone_triggers_relist_and_diff():
    c = FakeClient()
    c.lists.append([{"metadata": {"resourceVersion": "10"}, "items": [pod("a", 5), pod("b", 6)]}])
    c.watches.append(ApiError(410, "Expired", "too old resource version"))
    c.lists.append([{"metadata": {"resourceVersion": "30"}, "items": [pod("b", 20), pod("d", 21)]}])
    events = []
    inf = Informer(c, "/api/v1/pods", PodView)
    inf.add_handlers(lambda o: events.append(("add", o.metadata.name)),
                     lambda o, n: events.append(("update", n.metadata.name)),
                     lambda o: events.append(("delete", o.metadata.name)))
    inf.start()
    await wait_for(lambda: inf.relists == 2)
    assert events == [("add", "a"), ("add", "b"), ("delete", "a"), ("update", "b"), ("add", "d")]
    assert sorted(inf.cache) == ["default/b", "default/d"]
    assert inf.resource_version == "30"
    await inf.stop()


async def test_error_event_410_in_stream_also_relists():
    c = FakeClient()
    c.lists.append([{"metadata": {"resourceVersion": "1"}, "items": []}])
    c.watches.append([("ERROR", {"kind": "Status", "code": 410, "reason": "Expired", "message": "gone"})])
    c.lists.append([{"metadata": {"resourceVersion": "2"}, "items": [pod("x", 2)]}])
    inf = Informer(c, "/api/v1/pods", PodView)
    inf.start()
    await wait_for(lambda: inf.relists == 2)
    assert list(inf.cache) == ["default/x"]
    await inf.stop()


async def test_other_errors_back_off_and_resume_the_watch():
    c = FakeClient()
    c.lists.append([{"metadata": {"resourceVersion": "1"}, "items": []}])
    c.watches.append(ApiError(0, "ConnectionError", "reset"))
    c.watches.append([("ADDED", pod("y", 3))])
    inf = Informer(c, "/api/v1/pods", PodView, backoff_initial=0.01)
    inf.start()
    await wait_for(lambda: "default/y" in inf.cache)
    assert inf.relists == 1  # a dropped connection resumes from the resourceVersion
    await inf.stop()


def test_select_uses_namespace_and_label_index():
    c = FakeClient()
    inf = Informer(c, "/api/v1/pods", PodView)
    dec = msgspec.json.Decoder(PodView)
    for i in range(50):
        inf._store(dec.decode(msgspec.json.encode(pod(f"p{i}", i, ns="a" if i % 2 else "b", app=f"w{i % 5}", tier="x"))))
    got = inf.select("a", Selector.parse("app=w1,tier=x"))
    assert sorted(p.metadata.name for p in got) == sorted(f"p{i}" for i in range(50) if i % 2 and i % 5 == 1)
    got = inf.select("a", Selector.parse("app in (w1,w3)"))
    assert len(got) == len([i for i in range(50) if i % 2 and i % 5 in (1, 3)])
    assert inf.select("b", Selector.nothing()) == []


def test_equality_terms():
    assert equality_terms("a=b,c==d,e!=f,g in (h,i),!j") == [("a", "b"), ("c", "d")]


def test_classify_counts_requests_by_verb():
    counter = RequestCounter()
    counter.add(classify("GET", "/api/v1/pods", {"watch": "true"}))
    counter.add(classify("GET", "/api/v1/namespaces/x/pods", None))
    counter.add(classify("PUT", "/apis/apps/v1/namespaces/x/deployments/d/scale", None))
    verbs = sorted(k.verb for k in counter.snapshot())
    assert verbs == ["list", "update", "watch"]
    assert counter.total_excluding("watch") == 2


async def test_token_bucket_limits_rate_with_fake_clock():
    from pyhpa.adapters.kube.ratelimit import TokenBucket

    t = [0.0]
    slept = []

    async def sleep(d):
        slept.append(d)

    b = TokenBucket(qps=10, burst=3, clock=lambda: t[0], sleep=sleep)
    for _ in range(3):
        await b.acquire()
    assert slept == []
    await b.acquire()
    assert slept == [pytest.approx(0.1)]
    t[0] += 1.0
    await b.acquire()
    assert len(slept) == 1


async def test_transform_applies_to_listed_and_watched_objects():
    """What is cached is what the transform returns, whether the object came by list or watch."""
    c = FakeClient()
    listed = pod("a", 5, app="web")
    listed["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update"}]
    c.lists.append([{"metadata": {"resourceVersion": "10"}, "items": [listed]}])
    watched = pod("b", 11, app="web")
    watched["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update"}]
    c.watches.append([("ADDED", watched)])
    seen = []

    def strip(obj):
        seen.append(obj.metadata.name)
        obj.metadata.managed_fields = None
        return obj

    inf = Informer(c, "/api/v1/pods", PodView, name="pods", transform=strip)
    inf.start()
    await wait_for(lambda: len(inf) == 2)
    assert seen == ["a", "b"]
    assert [inf.get("default", n).metadata.managed_fields for n in ("a", "b")] == [None, None]
    await inf.stop()


async def test_share_points_new_objects_at_a_siblings_equal_parts():
    """Pods of one workload (same first label pair, equal labels and spec) share them; a pod
    whose spec differs keeps its own, and every cached pod still reads as it was sent."""
    from pyhpa.adapters.kube.ports import share_pod_parts

    def with_spec(doc, cpu):
        doc["spec"] = {"containers": [{"name": "app", "resources": {"requests": {"cpu": cpu}}}]}
        return doc

    c = FakeClient()
    c.lists.append([{"metadata": {"resourceVersion": "10"}, "items": [
        with_spec(pod("a", 5, app="web"), "100m"), with_spec(pod("b", 6, app="web"), "100m"),
        with_spec(pod("odd", 7, app="web"), "200m"), with_spec(pod("db", 8, app="db"), "100m")]}])
    c.watches.append([("ADDED", with_spec(pod("c", 11, app="web"), "100m"))])
    inf = Informer(c, "/api/v1/pods", PodView, name="pods", share=share_pod_parts)
    inf.start()
    await wait_for(lambda: len(inf) == 5)
    a, b, odd, db, new = (inf.get("default", n) for n in ("a", "b", "odd", "db", "c"))
    assert a.metadata.labels is b.metadata.labels is new.metadata.labels is odd.metadata.labels
    assert a.spec is b.spec is new.spec and odd.spec is not a.spec and db.spec is not a.spec
    assert db.metadata.labels == {"app": "db"} and db.metadata.labels is not a.metadata.labels
    assert [p.spec.containers[0].resources.requests["cpu"].milli_value() for p in (a, odd, db, new)] == \
        [100, 200, 100, 100]
    await inf.stop()


async def test_the_cache_reads_by_namespace_name_keys_and_forgets_emptied_namespaces():
    """The objects live in namespace buckets; `cache` shows them by client-go's keys, a
    cluster-scoped object's key being its name alone, and a deletion empties the indexes."""
    c = FakeClient()
    node = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "n1", "resourceVersion": "3"}}
    c.lists.append([{"metadata": {"resourceVersion": "3"},
                     "items": [pod("a", 1, app="web"), pod("a", 2, ns="other", app="web"), node]}])
    c.watches.append([("DELETED", pod("a", 4, ns="other", app="web"))])
    inf = Informer(c, "/api/v1/pods", PodView)
    inf.start()
    await wait_for(lambda: "other/a" not in inf.cache and inf.synced.is_set())
    assert sorted(inf.cache) == ["default/a", "n1"] and len(inf) == len(inf.cache) == 2
    assert inf.cache["n1"].metadata.name == "n1" and inf.get("", "n1") is inf.cache["n1"]
    assert inf.cache["default/a"] is inf.get("default", "a")
    assert inf.get("other", "a") is None and inf.cache.get("other/a") is None
    assert inf.list_namespace("other") == [] and inf.select("other", Selector.parse("app=web")) == []
    assert [p.metadata.name for p in inf.select("default", Selector.parse("app=web"))] == ["a"]
    with pytest.raises(KeyError):
        inf.cache["nowhere/a"]
    await inf.stop()
