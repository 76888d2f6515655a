"""Scale reads from the workload cache, our own writes overlaying a lagging cache, fresh GETs
after a 409, and Event correlation — against a scripted client."""

import msgspec
import pytest

from pyhpa.adapters.kube.client import ApiError, KubeClient, classify
from pyhpa.adapters.kube.discovery import Discovery
from pyhpa.adapters.kube.ports import KubeEvents, KubeScales, WorkloadWire
from pyhpa.api.types import CrossVersionObjectReference, ObjectMeta, new_hpa, HorizontalPodAutoscalerSpec

REF = CrossVersionObjectReference(kind="Deployment", name="web", api_version="apps/v1")
DISCOVERY = {
    "/api": {"versions": ["v1"]},
    "/apis": {"groups": [{"name": "apps", "versions": [{"version": "v1"}], "preferredVersion": {"version": "v1"}}]},
    "/apis/apps/v1": {"resources": [{"name": "deployments", "kind": "Deployment", "namespaced": True},
                                    {"name": "deployments/scale", "kind": "Scale", "namespaced": True}]},
}


def scale_doc(replicas, rv):
    return {"apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": {"name": "web", "namespace": "ns", "resourceVersion": str(rv)},
            "spec": {"replicas": replicas}, "status": {"replicas": replicas, "selector": "app=web"}}


class Scripted(KubeClient):
    def __init__(self):
        super().__init__(http=None, qps=0)  # type: ignore[arg-type]
        self.server_scale = scale_doc(3, 10)
        self.conflicts = 0
        self.calls = []

    async def request(self, method, path, *, params=None, body=None, content_type=""):
        self.counter.add(classify(method, path, params))
        self.calls.append((method, path))
        if path in DISCOVERY:
            return msgspec.json.encode(DISCOVERY[path])
        if path.endswith("/scale"):
            if method == "GET":
                return msgspec.json.encode(self.server_scale)
            if self.conflicts:
                self.conflicts -= 1
                raise ApiError(409, "Conflict", "the object has been modified")
            sent = msgspec.json.decode(self.encode(body))
            rv = int(self.server_scale["metadata"]["resourceVersion"]) + 1
            self.server_scale = scale_doc(sent["spec"]["replicas"], rv)
            return msgspec.json.encode(self.server_scale)
        if path.endswith("/events") and method == "POST":
            return self.encode(body)
        if "/events/" in path and method == "PATCH":
            return b"{}"
        raise ApiError(404, "NotFound", path)


def cached_workload(replicas, rv):
    return msgspec.convert({"metadata": {"name": "web", "namespace": "ns", "resourceVersion": str(rv)},
                            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}},
                            "status": {"replicas": replicas}}, WorkloadWire)


async def make_scales():
    client = Scripted()
    scales = KubeScales(client, Discovery(client))
    # a synced informer with one cached Deployment, without running list+watch
    scales._informer_for(REF)
    inf = scales.informers["Deployment"]
    await inf.stop()
    inf._store(cached_workload(3, 10))
    inf.synced.set()
    return client, scales, inf


async def test_scale_read_from_cache_costs_no_request_and_renders_the_selector():
    client, scales, _ = await make_scales()
    before = client.counter.total
    s = await scales.get_scale("ns", REF)
    assert (s.spec.replicas, s.status.selector, s.metadata.resource_version) == (3, "app=web", "10")
    assert client.counter.total == before


async def test_own_write_overlays_a_lagging_cache_until_the_watch_catches_up():
    client, scales, inf = await make_scales()
    s = await scales.get_scale("ns", REF)
    s.spec.replicas = 5
    await scales.update_scale("ns", REF, s)
    assert (await scales.get_scale("ns", REF)).spec.replicas == 5  # cache still says 3 @ rv 10
    inf._store(cached_workload(5, 11))  # the watch delivers our write
    assert (await scales.get_scale("ns", REF)).spec.replicas == 5
    assert scales._written == {}


async def test_conflict_makes_the_next_read_a_fresh_get():
    from pyhpa.controller.ports import ConflictError

    client, scales, _ = await make_scales()
    client.server_scale = scale_doc(4, 12)  # someone else wrote; our cache is behind
    client.conflicts = 1
    s = await scales.get_scale("ns", REF)
    s.spec.replicas = 6
    with pytest.raises(ConflictError):
        await scales.update_scale("ns", REF, s)
    fresh = await scales.get_scale("ns", REF)
    assert fresh.metadata.resource_version == "12"
    assert ("GET", "/apis/apps/v1/namespaces/ns/deployments/web/scale") in client.calls
    fresh.spec.replicas = 6
    await scales.update_scale("ns", REF, fresh)
    assert client.server_scale["spec"]["replicas"] == 6


async def test_events_are_created_once_then_counted_up():
    client = Scripted()
    events = KubeEvents(client, host="node-a")
    hpa = new_hpa(HorizontalPodAutoscalerSpec(scale_target_ref=REF, max_replicas=3),
                  ObjectMeta(name="web", namespace="ns", uid="u1"))
    events.start()
    for _ in range(3):
        events.event(hpa, "Warning", "FailedGetResourceMetric", "no metrics")
    events.event(hpa, "Normal", "SuccessfulRescale", "New size: 2; reason: x")
    await events.flush()
    await events.stop()
    verbs = [m for m, p in client.calls if "/events" in p]
    assert verbs == ["POST", "PATCH", "PATCH", "POST"]


def test_cached_pod_keeps_every_fact_the_engine_reads():
    """The pod cache's transform drops fields, never a decision: the PodSet of cached pods equals
    the PodSet of the pods as decoded (readiness, phases, requests, label sets)."""
    import copy

    import msgspec

    from pyhpa.adapters.kube.ports import cached_pod
    from pyhpa.api.quantity import quantity_dec_hook
    from pyhpa.api.types import PodView
    from pyhpa.engine.pods import PodSet
    from tests.builders import pod

    docs = [pod("ready"), pod("unready", ready="False"), pod("pending", phase="Pending"),
            pod("failed", phase="Failed"), pod("deleted", deletionTimestamp="2026-01-01T00:05:00Z"),
            pod("big", cpu="250m", labels={"app": "web", "tier": "front"})]
    docs[1]["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
        *docs[1]["status"]["conditions"],
        {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:01Z"}]  # the first counts
    for d in docs:
        d["metadata"].update(uid="u-" + d["metadata"]["name"], managedFields=[{"manager": "k"}],
                             annotations={"a": "b"}, ownerReferences=[{"kind": "ReplicaSet", "name": "r",
                                                                       "apiVersion": "apps/v1", "uid": "x"}])
    decode = msgspec.json.Decoder(PodView, dec_hook=quantity_dec_hook).decode
    plain = [decode(msgspec.json.encode(d)) for d in docs]
    cached = [cached_pod(decode(msgspec.json.encode(d))) for d in copy.deepcopy(docs)]
    a, b = PodSet.of(plain), PodSet.of(cached)
    assert (a.rows, a.ignored, a.pending, a.candidates, a.settled_start, a.running_and_ready, a.label_sets,
            dict(a.requests)) == (b.rows, b.ignored, b.pending, b.candidates, b.settled_start,
                                  b.running_and_ready, b.label_sets, dict(b.requests))
    assert all(p.metadata.managed_fields is None and p.metadata.uid is None for p in cached)
    assert [p.metadata.resource_version for p in cached] == [p.metadata.resource_version for p in plain]


def test_cached_hpa_shares_equal_condition_texts_and_keeps_them():
    """Two HPAs saying the same things hold one copy of each text; what they say is unchanged."""
    from pyhpa.adapters.kube.ports import cached_hpa
    from pyhpa.live.loop import decode_hpa

    def doc(name: str) -> bytes:
        conditions = [{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z",
                       "reason": "ReadyForNewScale", "message": "recommended size matches " + "current size"},
                      {"type": "ScalingActive", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z",
                       "reason": "FailedGetResourceMetric", "message": f"no metrics for {name}"}]
        return msgspec.json.encode({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": "ns", "managedFields": [{"manager": "k"}]},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": name, "apiVersion": "apps/v1"},
                     "maxReplicas": 5},
            "status": {"currentReplicas": 1, "desiredReplicas": 1, "conditions": conditions}})

    plain = [decode_hpa(doc(n)) for n in ("a", "b")]
    cached = [cached_hpa(decode_hpa(doc(n))) for n in ("a", "b")]
    assert [h.status.conditions for h in cached] == [h.status.conditions for h in plain]
    assert all(h.metadata.managed_fields is None for h in cached)
    first, second = (h.status.conditions[0] for h in cached)
    assert first.message is second.message and first.reason is second.reason
    assert (plain[0].status.conditions[0].message is not plain[1].status.conditions[0].message)  # decoded apart
    assert cached[0].status.conditions[1].message == "no metrics for a"
    no_status = cached_hpa(decode_hpa(msgspec.json.encode({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                                                          "metadata": {"name": "c"}, "spec": {"maxReplicas": 1}})))
    assert no_status.status.conditions in (None, [])
