"""The Lease-backed memory: compaction keeps every stabilization decision, round trips, batches writes."""

import random
from datetime import datetime, timedelta, timezone

from pyhpa.adapters.kube.state import compact, expand, LeaseStateStore
from pyhpa.engine.state import AutoscalerState, Recommendation, ScaleEvent

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def window_max(recs, now, window):
    return max((r.replicas for r in recs if r.timestamp >= now - timedelta(seconds=window)), default=None)


def window_min(recs, now, window):
    return min((r.replicas for r in recs if r.timestamp >= now - timedelta(seconds=window)), default=None)


def test_compaction_preserves_max_and_min_over_any_window():
    rng = random.Random(7)
    for _ in range(50):
        recs = [Recommendation(rng.randint(1, 6), T0 + timedelta(seconds=15 * i)) for i in range(40)]
        state = AutoscalerState(recs, [], None)
        now = T0 + timedelta(seconds=15 * 40)
        back = expand(compact(state, now.timestamp()))
        for window in (0, 15, 60, 300, 599):
            assert window_max(back.recommendations, now, window) == window_max(recs, now, window)
            assert window_min(back.recommendations, now, window) == window_min(recs, now, window)
        assert back.scale_up_events == ()
        assert back.scale_down_events is None  # "never seen" stays distinct from "empty"


def test_old_entries_and_outdated_events_are_dropped():
    now = T0 + timedelta(hours=2)
    state = AutoscalerState(
        [Recommendation(3, T0), Recommendation(4, now - timedelta(seconds=10))],
        [ScaleEvent(2, now - timedelta(seconds=30)), ScaleEvent(1, now - timedelta(seconds=20), outdated=True)],
        [ScaleEvent(5, T0)],
    )
    back = expand(compact(state, now.timestamp()))
    assert [r.replicas for r in back.recommendations] == [4]
    assert [e.replica_change for e in back.scale_up_events] == [2]
    assert back.scale_down_events == ()


def test_store_marks_namespaces_dirty_only_on_change():
    store = LeaseStateStore(client=None, flush_period=15)  # type: ignore[arg-type]
    s = AutoscalerState([Recommendation(2, T0)], None, None)
    store.put("a/x", s)
    store.put("b/y", s)
    assert store._dirty == {"a", "b"}
    store._dirty.clear()
    store.put("a/x", AutoscalerState([Recommendation(2, T0)], None, None))
    assert store._dirty == set()
    store.delete("a/x")
    assert store._dirty == {"a"}
    text = store._encode_namespace("b")
    assert '"y"' in text and '"x"' not in text


class FakeLeaseApi:
    """The few Lease requests the store makes, over a dict of (namespace, name) -> Lease."""

    def __init__(self, leases=()):
        self.leases = {(l["metadata"]["namespace"], l["metadata"]["name"]): l for l in leases}
        self.requests = []
        self.rv = 100

    async def get(self, path, typ=dict, params=None):
        self.requests.append(("GET", path, params))
        if path == "/apis/coordination.k8s.io/v1/leases":
            field = (params or {}).get("fieldSelector", "")
            name = field.removeprefix("metadata.name=") if field else None
            return {"items": [l for (ns, n), l in self.leases.items() if name is None or n == name]}
        *_, ns, _, name = path.split("/")
        return self.leases[(ns, name)]

    async def post(self, path, body, typ=dict):
        self.requests.append(("POST", path, None))
        self.rv += 1
        body["metadata"]["resourceVersion"] = str(self.rv)
        self.leases[(body["metadata"]["namespace"], body["metadata"]["name"])] = body
        return body

    async def put(self, path, body, typ=dict):
        self.requests.append(("PUT", path, None))
        return await self.post(path, body)


def state_lease(ns, name, entries):
    import json

    return {"metadata": {"namespace": ns, "name": name, "resourceVersion": "7",
                         "annotations": {"pyhpa.io/autoscaler-state": json.dumps(entries)}}}


async def test_each_hpa_group_has_its_own_state_lease():
    import json

    now = T0.timestamp()
    api = FakeLeaseApi([
        state_lease("a", "pyhpa-autoscaler-state", {"web": {"r": [[5, now]], "uid": "u-auto"}}),
        state_lease("a", "pyhpa-autoscaler-state.pyhpa.io", {"web": {"r": [[2, now]], "uid": "u-crd"}}),
    ])
    crd = LeaseStateStore(api, group="pyhpa.io", uid_of={"a/web": "u-crd"}.get, clock=lambda: now)
    assert await crd.load() == 1
    assert [r.replicas for r in crd.get("a/web").recommendations] == [2]  # not the autoscaling HPA's 5
    assert api.requests[0][2] == {"fieldSelector": "metadata.name=pyhpa-autoscaler-state.pyhpa.io"}
    crd.put("a/web", AutoscalerState([Recommendation(3, T0)], None, None))
    await crd.flush()
    written = api.leases[("a", "pyhpa-autoscaler-state.pyhpa.io")]["metadata"]["annotations"]
    assert json.loads(written["pyhpa.io/autoscaler-state"])["web"] == {"r": [[3, now]], "uid": "u-crd"}
    untouched = api.leases[("a", "pyhpa-autoscaler-state")]["metadata"]["annotations"]
    assert json.loads(untouched["pyhpa.io/autoscaler-state"])["web"]["r"] == [[5, now]]
    auto = LeaseStateStore(api)
    assert await auto.load() == 1
    assert [r.replicas for r in auto.get("a/web").recommendations] == [5]


async def test_prune_forgets_deleted_and_recreated_hpas_and_persists_that():
    import json

    now = T0.timestamp()
    api = FakeLeaseApi([state_lease("a", "pyhpa-autoscaler-state", {
        "kept": {"r": [[4, now]], "uid": "u1"},
        "deleted": {"r": [[4, now]], "uid": "u2"},
        "recreated": {"r": [[4, now]], "uid": "u3"},
        "legacy": {"r": [[4, now]]},  # written before UIDs were recorded: kept while the name exists
    })])
    store = LeaseStateStore(api, clock=lambda: now)
    assert await store.load() == 4
    assert store.prune({"a/kept": "u1", "a/recreated": "u3-new", "a/legacy": "u9"}) == 2
    assert set(store.states) == {"a/kept", "a/legacy"}
    await store.flush()
    entries = json.loads(api.leases[("a", "pyhpa-autoscaler-state")]["metadata"]["annotations"]
                         ["pyhpa.io/autoscaler-state"])
    assert set(entries) == {"kept", "legacy"}
    assert entries["kept"]["uid"] == "u1"
    assert store.prune({"a/kept": "u1", "a/legacy": "u9"}) == 0


class VersionedLeaseApi(FakeLeaseApi):
    """FakeLeaseApi with the API server's answers a merging writer meets: 404 for a missing
    Lease, 409 for a PUT whose resourceVersion is not the current one; `after_get` runs once
    after the next GET of one Lease (another replica writing in between)."""

    after_get = None
    conflicts = 0

    async def get(self, path, typ=dict, params=None):
        from pyhpa.adapters.kube.client import ApiError

        if path != "/apis/coordination.k8s.io/v1/leases":
            *_, ns, _, name = path.split("/")
            if (ns, name) not in self.leases:
                raise ApiError(404, "NotFound", "not found", path)
        out = await super().get(path, typ, params)
        hook, self.after_get = self.after_get, None
        if hook is not None:
            await hook()
        return out

    async def put(self, path, body, typ=dict):
        import copy

        from pyhpa.adapters.kube.client import ApiError

        *_, ns, _, name = path.split("/")
        if body["metadata"].get("resourceVersion") != self.leases[(ns, name)]["metadata"]["resourceVersion"]:
            self.conflicts += 1
            raise ApiError(409, "Conflict", "the object has been modified", path)
        return copy.deepcopy(await super().put(path, copy.deepcopy(body)))


def entries_in(api, ns="a"):
    import json

    return json.loads(api.leases[(ns, "pyhpa-autoscaler-state")]["metadata"]["annotations"]["pyhpa.io/autoscaler-state"])


async def test_sharded_stores_merge_their_entries_into_the_namespace_lease():
    now = T0.timestamp()
    api = VersionedLeaseApi([state_lease("a", "pyhpa-autoscaler-state", {"z": {"r": [[9, now]]}})])
    mine = {"x": lambda k: k.endswith("/x"), "y": lambda k: k.endswith("/y")}
    x = LeaseStateStore(api, clock=lambda: now, writable=mine["x"])
    y = LeaseStateStore(api, clock=lambda: now, writable=mine["y"])
    x.put("a/x", AutoscalerState([Recommendation(3, T0)], None, None))
    x.put("a/y", AutoscalerState([Recommendation(1, T0)], None, None))  # stale: not x's to write
    y.put("a/y", AutoscalerState([Recommendation(5, T0)], None, None))
    await x.flush()

    async def y_writes_in_between():
        await y.flush()

    api.after_get = y_writes_in_between  # x's first PUT meets y's write: 409, merged again
    x.put("a/x", AutoscalerState([Recommendation(4, T0)], None, None))
    await x.flush()
    assert entries_in(api) == {"x": {"r": [[4, now]]}, "y": {"r": [[5, now]]}, "z": {"r": [[9, now]]}}
    assert (x.writes, y.writes, api.conflicts) == (2, 1, 1)  # x's second write: 409, then merged again
    # nothing of its own changed: no write at all
    before = len(api.requests)
    x._dirty.add("a")
    await x.flush()
    assert [m for m, *_ in api.requests[before:]] == ["GET"]


async def test_a_sharded_store_reloads_and_drops_one_shards_memory():
    now = T0.timestamp()
    api = VersionedLeaseApi([state_lease("a", "pyhpa-autoscaler-state", {
        "x": {"r": [[4, now]], "uid": "u1"}, "y": {"r": [[2, now]], "uid": "u2"},
        "gone": {"r": [[3, now]], "uid": "u3"}, "recreated": {"r": [[3, now]], "uid": "u4"}})])
    store = LeaseStateStore(api, clock=lambda: now, writable=lambda k: True)
    store.put("a/x", AutoscalerState([Recommendation(1, T0)], None, None))  # stale local memory
    store._dirty.clear()
    shard = {"a/x", "a/gone", "a/recreated"}.__contains__
    live = {"a/x": "u1", "a/y": "u2", "a/recreated": "u4-new"}
    assert await store.reload(shard, live) == 1
    assert set(store.states) == {"a/x"} and [r.replicas for r in store.get("a/x").recommendations] == [4]
    store.drop(shard)
    assert store.states == {} and store._dirty == set()  # forgotten, nothing to write
