"""The controller's memory (recommendations, scale events) kept in the cluster, so it survives restarts.

Choice: one `coordination.k8s.io/v1` Lease per namespace and HPA API group,
`pyhpa-autoscaler-state` for `autoscaling` HPAs and `pyhpa-autoscaler-state.<group>` for another
group (`--hpa-api-group pyhpa.io`), whose annotation `pyhpa.io/autoscaler-state` holds the state of
every HPA of that namespace and group. One Lease per group, not one shared Lease with qualified
keys: two controllers of different groups would otherwise overwrite each other's entries, and an
HPA of one group could inherit the memory of a same-named HPA of the other.
Why a Lease and not the alternatives:
* an annotation on each HPA would write to the user's object: each write is an HPA update event
  (waking every HPA watcher, kubectl -w included), fights GitOps tools and `kubectl apply`, and
  costs one request per HPA per change;
* a ConfigMap would do, but the controller already needs Lease RBAC for leader election, every
  Kubernetes cluster (and our embedded one) serves Leases, and Leases are the kind meant for
  small controller-owned coordination records;
* one object per namespace batches the writes: at most one PUT per namespace per flush period
  (default: the sync period), whatever the number of HPAs there.

Each entry carries the HPA's UID: memory is only for the object it was recorded for. Entries of
HPAs that no longer exist are pruned once the HPA cache has synced (`prune`), and an HPA's entry
is dropped when it is deleted, so a re-created HPA starts fresh, as upstream's would.

What is stored is compacted without changing any decision: for stabilization only the set of
recommended values inside the window matters, so each distinct value keeps only its newest
timestamp, and entries older than an hour (the API's maximum stabilization window) are dropped;
scale events older than 30 minutes (the maximum policy period) are dropped. A SIGKILL loses at
most one flush period of history; a clean shutdown flushes.

Sharded replicas (docs/controller.md#sharding) share a namespace's Lease: each is given
``writable`` (is this HPA's memory mine to write now?), writes only those entries, merged into
the Lease as just read (a concurrent write makes the PUT fail with 409 and the merge is redone),
and reloads a shard's entries when it takes the shard (`reload`), forgetting them when it loses it
(`drop`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, Callable, Mapping

from pyhpa.adapters.tasks import cancel_and_wait
from pyhpa.adapters.kube.client import ApiError, KubeClient, outage_reported, wait_answering
from pyhpa.api.timefmt import format_micro_time
from pyhpa.engine.state import AutoscalerState, Recommendation, ScaleEvent

log = logging.getLogger("pyhpa.state")

LEASE_NAME = "pyhpa-autoscaler-state"  # of the autoscaling group's HPAs
ANNOTATION = "pyhpa.io/autoscaler-state"
LABELS = MappingProxyType({"app.kubernetes.io/managed-by": "pyhpa", "pyhpa.io/role": "autoscaler-state"})
MAX_WINDOW = 3600.0
MAX_PERIOD = 1800.0
MAX_BYTES = 240_000  # annotations of one object are limited to 256 KiB
MERGE_ATTEMPTS = 8  # sharded: read-merge-write rounds before a flush is left for the next period


def _ts(dt: datetime) -> float:
    return round(dt.timestamp(), 3)


def _dt(x: float) -> datetime:
    return datetime.fromtimestamp(x, tz=timezone.utc)


def compact(state: AutoscalerState, now: float, max_recs: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if state.recommendations is not None:
        newest: dict[int, float] = {}
        for r in state.recommendations:
            t = _ts(r.timestamp)
            if now - t > MAX_WINDOW:
                continue
            if t > newest.get(r.replicas, -1.0):
                newest[r.replicas] = t
        recs = sorted(([v, t] for v, t in newest.items()), key=lambda x: x[1])
        if max_recs is not None:
            recs = recs[-max_recs:]
        out["r"] = recs
    for key, events in (("u", state.scale_up_events), ("d", state.scale_down_events)):
        if events is not None:
            out[key] = [[e.replica_change, _ts(e.timestamp)] for e in events
                        if not e.outdated and now - _ts(e.timestamp) <= MAX_PERIOD]
    return out


def lease_name_for(group: str) -> str:
    """The state Lease of one HPA API group (the built-in group keeps the historical name)."""
    return LEASE_NAME if group in ("", "autoscaling") else f"{LEASE_NAME}.{group}"


def expand(doc: dict[str, Any]) -> AutoscalerState:
    recs = None if "r" not in doc else [Recommendation(int(v), _dt(float(t))) for v, t in doc["r"]]
    ups = None if "u" not in doc else [ScaleEvent(int(c), _dt(float(t)), False) for c, t in doc["u"]]
    downs = None if "d" not in doc else [ScaleEvent(int(c), _dt(float(t)), False) for c, t in doc["d"]]
    return AutoscalerState(recs, ups, downs)


class LeaseStateStore:
    """StateStore port: in memory for the reconcile, flushed per namespace to a Lease."""

    def __init__(self, client: KubeClient, identity: str = "pyhpa", flush_period: float = 15.0,
                 clock: Callable[[], float] = time.time, *, group: str = "autoscaling",
                 uid_of: Callable[[str], str | None] | None = None,
                 writable: Callable[[str], bool] | None = None) -> None:
        self.client = client
        self.writable = writable  # sharded: the keys whose entries this replica writes (None: all)
        self.identity = identity
        self.flush_period = flush_period
        self._clock = clock
        self.lease_name = lease_name_for(group)
        self._uid_of = uid_of or (lambda key: None)  # the live HPA's UID (from the informer cache)
        self.states: dict[str, AutoscalerState] = {}
        self._uids: dict[str, str] = {}  # UID recorded with a loaded entry
        self._dirty: set[str] = set()
        self._rv: dict[str, str] = {}
        self._task: asyncio.Task[None] | None = None
        self.writes = 0

    # -- port (synchronous: the reconcile never waits on persistence)

    def get(self, key: str) -> AutoscalerState | None:
        return self.states.get(key)

    def put(self, key: str, state: AutoscalerState) -> None:
        if self.states.get(key) != state:
            self.states[key] = state
            self._dirty.add(key.split("/", 1)[0])

    def delete(self, key: str) -> None:
        self._uids.pop(key, None)
        if self.states.pop(key, None) is not None:
            self._dirty.add(key.split("/", 1)[0])

    def recorded_uid(self, key: str) -> str | None:
        """The UID of the HPA a loaded entry was recorded for (None when not recorded)."""
        return self._uids.get(key)

    def prune(self, live: Mapping[str, str | None]) -> int:
        """Forget entries of HPAs not in `live` (key -> UID, the synced HPA cache), or recorded
        for another object of the same name (a re-created HPA). Returns the entries dropped."""
        gone = [k for k in self.states
                if k not in live or (self._uids.get(k) and live[k] and self._uids[k] != live[k])]
        for k in gone:
            self.delete(k)
        return len(gone)

    # -- persistence

    @staticmethod
    def _collection(ns: str) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"

    async def load(self) -> int:
        """Read every namespace's state Lease of our group (one cluster-wide LIST, by name so that
        RBAC can limit it with resourceNames); returns the HPAs restored."""
        try:
            doc = await self.client.get("/apis/coordination.k8s.io/v1/leases", dict,
                                        {"fieldSelector": f"metadata.name={self.lease_name}"})
        except ApiError as exc:
            log.warning("could not load autoscaler state: %s", exc)
            return 0
        n = 0
        for item in doc.get("items") or []:
            meta = item.get("metadata") or {}
            ns = meta.get("namespace") or ""
            if meta.get("name") != self.lease_name:
                continue
            self._rv[ns] = meta.get("resourceVersion") or ""
            for key, compacted in self._entries_of(item).items():
                self.states[key] = expand(compacted)
                if compacted.get("uid"):
                    self._uids[key] = str(compacted["uid"])
                n += 1
        return n

    def _entries_of(self, lease: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The compacted entries of one namespace's Lease, by key (unreadable: none, logged)."""
        meta = lease.get("metadata") or {}
        ns = meta.get("namespace") or ""
        raw = (meta.get("annotations") or {}).get(ANNOTATION)
        if not raw:
            return {}
        try:
            entries = json.loads(raw)
            return {f"{ns}/{name}": dict(compacted) for name, compacted in entries.items()}
        except (ValueError, TypeError, AttributeError) as exc:
            log.warning("ignoring unreadable autoscaler state in %s/%s: %s", ns, self.lease_name, exc)
            return {}

    async def reload(self, keys: Callable[[str], bool], live: Mapping[str, str | None]) -> int:
        """Sharded: replace the memory of the HPAs `keys` selects by what the Lease holds now (the
        previous owner's last flush), keeping only entries of HPAs in `live` (key -> UID) and
        recorded for that object. Returns the HPAs restored."""
        doc = await self.client.get("/apis/coordination.k8s.io/v1/leases", dict,
                                    {"fieldSelector": f"metadata.name={self.lease_name}"})
        self.drop(keys)
        n = 0
        for item in doc.get("items") or []:
            for key, compacted in self._entries_of(item).items():
                uid = compacted.get("uid")
                if not keys(key) or key not in live or (uid and live[key] and uid != live[key]):
                    continue
                self.states[key] = expand(compacted)
                if uid:
                    self._uids[key] = str(uid)
                n += 1
        return n

    def drop(self, keys: Callable[[str], bool]) -> None:
        """Sharded: forget, without writing anything, the memory of the HPAs `keys` selects (a
        shard given away or lost: its new owner writes it from now on)."""
        for key in [k for k in self.states if keys(k)]:
            self.states.pop(key, None)
            self._uids.pop(key, None)

    def _entry(self, key: str, state: AutoscalerState, now: float, max_recs: int | None = None) -> dict[str, Any]:
        doc = compact(state, now, max_recs)
        uid = self._uid_of(key) or self._uids.get(key)
        if uid:
            doc["uid"] = uid
        return doc

    def _encode_namespace(self, ns: str, others: Mapping[str, Any] | None = None) -> str:
        """The namespace's annotation: our entries, plus `others` (sharded: the entries this
        replica does not write, as read from the Lease)."""
        now = self._clock()
        prefix = ns + "/"
        mine = [(k, s) for k, s in self.states.items()
                if k.startswith(prefix) and (self.writable is None or self.writable(k))]
        entries = {**(others or {}), **{k[len(prefix):]: self._entry(k, s, now) for k, s in mine}}
        text = json.dumps(entries, separators=(",", ":"), sort_keys=True)
        if len(text) > MAX_BYTES:
            log.warning("autoscaler state of namespace %s is %d bytes; keeping the 8 newest recommendations per HPA",
                        ns, len(text))
            entries = {**(others or {}), **{k[len(prefix):]: self._entry(k, s, now, max_recs=8) for k, s in mine}}
            text = json.dumps(entries, separators=(",", ":"), sort_keys=True)
        return text

    async def _merged_namespace(self, ns: str) -> str | None:
        """Sharded: read the namespace's Lease (its version becomes the PUT's precondition) and
        merge our entries into the others'; None when that changes nothing (no write)."""
        coll = self._collection(ns)
        try:
            cur = await self.client.get(f"{coll}/{self.lease_name}")
        except ApiError as exc:
            if not exc.is_not_found:
                raise
            self._rv.pop(ns, None)
            cur = {"metadata": {"namespace": ns}}
        self._rv[ns] = (cur.get("metadata") or {}).get("resourceVersion") or ""
        current = self._entries_of({**cur, "metadata": {**(cur.get("metadata") or {}), "namespace": ns}})
        assert self.writable is not None
        others = {k.split("/", 1)[1]: v for k, v in current.items() if not self.writable(k)}
        text = self._encode_namespace(ns, others)
        if json.loads(text) == {k.split("/", 1)[1]: v for k, v in current.items()}:
            return None
        return text

    def _lease(self, ns: str, text: str, rv: str | None) -> dict[str, Any]:
        now = format_micro_time(datetime.now(timezone.utc))
        meta: dict[str, Any] = {"name": self.lease_name, "namespace": ns, "labels": dict(LABELS),
                                "annotations": {ANNOTATION: text}}
        if rv:
            meta["resourceVersion"] = rv
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta,
                "spec": {"holderIdentity": self.identity, "renewTime": now}}

    async def flush_namespace(self, ns: str) -> None:
        coll = self._collection(ns)
        if self.writable is not None:
            return await self._flush_merged(ns)
        text = self._encode_namespace(ns)
        for _ in range(3):
            if await self._write(ns, text):
                return
            # 404: deleted behind our back -> create; 409: someone wrote -> take its version
            try:
                cur = await self.client.get(f"{coll}/{self.lease_name}")
                self._rv[ns] = (cur.get("metadata") or {}).get("resourceVersion") or ""
            except ApiError as exc:
                if not exc.is_not_found:
                    raise
                self._rv.pop(ns, None)
        raise RuntimeError(f"could not write {ns}/{self.lease_name} after 3 attempts")

    async def _write(self, ns: str, text: str) -> bool:
        """Create or update the namespace's Lease with ``text`` at the version last seen; False
        when the API answers 404 or 409 (gone, or written by someone else meanwhile)."""
        coll = self._collection(ns)
        rv = self._rv.get(ns)
        try:
            if rv:
                out = await self.client.put(f"{coll}/{self.lease_name}", self._lease(ns, text, rv))
            else:
                out = await self.client.post(coll, self._lease(ns, text, None))
        except ApiError as exc:
            if exc.code not in (404, 409):
                raise
            return False
        self._rv[ns] = (out.get("metadata") or {}).get("resourceVersion") or ""
        self.writes += 1
        return True

    async def _flush_merged(self, ns: str) -> None:
        """Sharded: read, merge, PUT with the read version; on a conflict (another replica wrote
        the namespace's Lease in between) wait a random moment, so that replicas flushing
        together fall apart, and merge again."""
        for attempt in range(MERGE_ATTEMPTS):
            text = await self._merged_namespace(ns)
            if text is None:
                return
            if await self._write(ns, text):
                return
            await asyncio.sleep(random.uniform(0.0, 0.02 * 2 ** attempt))
        raise RuntimeError(f"could not write {ns}/{self.lease_name} after {MERGE_ATTEMPTS} attempts")

    async def flush(self) -> None:
        dirty, self._dirty = self._dirty, set()
        for ns in sorted(dirty):
            try:
                await self.flush_namespace(ns)
            except Exception as exc:
                log.log(logging.DEBUG if outage_reported(self.client, exc) else logging.WARNING,
                        "could not persist autoscaler state of namespace %s: %s", ns, exc)
                self._dirty.add(ns)

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.flush_period)
            await wait_answering(self.client)
            await self.flush()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name="state-flush")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None
        await self.flush()
