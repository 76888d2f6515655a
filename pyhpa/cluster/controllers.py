"""The embedded cluster's live workload simulation: the controllers and kubelet kube would run.

Why here and not in the API server: the server only stores objects; something has to turn a
Deployment into a ReplicaSet and Pods, move the Pods through Pending -> Running -> Ready, end
them after their grace period and report their usage. :class:`Simulation` does that against the
:class:`~pyhpa.cluster.apiserver.storage.Store`, in-process, on one background thread:

* **controllers** -- Deployment -> ReplicaSet (pod-template-hash, revisions, a simple rolling
  update honouring maxSurge/maxUnavailable, Recreate), ReplicaSet / ReplicationController /
  Scalable / a CRD kind with a scale subresource and a ``spec.template`` -> Pods (the
  ReplicaSet controller's deletion order), StatefulSet -> ordinal Pods
  (OrderedReady or Parallel, rolling update by revision), garbage collection of Pods and
  ReplicaSets whose controller is gone, and the status fields ``kubectl rollout status`` reads;
* **kubelet** -- Pod status (phase, conditions, containerStatuses, IPs) as a pure function of
  the pod's timestamps, and the end of a deleted Pod once its grace period has passed (our Pods
  carry the finalizer :data:`FINALIZER`, so a delete marks them Terminating first);
* **usage** -- one :class:`~pyhpa.cluster.workload.Workload` model (plus its
  :class:`~pyhpa.cluster.workload.MetricsPipeline`) per top-level workload, parameterised by the
  ``sim.pyhpa.io/*`` annotations of that workload object. The same pure model drives the virtual
  clock simulator; here its clock is ``clock()``. :mod:`pyhpa.cluster.metrics_api` reads it.

Every pass is level-triggered (list, compare, write what differs), so restarts and edits made with
kubectl converge. Passes run when a relevant object changes (store watch) and when a pod's next
transition is due; an idle cluster costs one wake-up every :attr:`Simulation.idle_seconds`.
Tests drive :meth:`Simulation.settle` with an injected clock instead of starting the thread.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterable

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.workload_defaults import default_pod_spec
from pyhpa.cluster.apiserver.storage import AlreadyExists, Conflict, Entry, NotFound, Store, StoreError
from pyhpa.cluster.workload import (
    ANN_TERMINATION,
    ContainerTemplate,
    MetricsPipeline,
    SimPod,
    Workload,
    WorkloadParamError,
    WorkloadParams,
    params_from_annotations,
)

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name)

FINALIZER = "sim.pyhpa.io/termination"
NODE_NAME = "pyhpa-node"
HASH_LABEL = "pod-template-hash"
REVISION_ANN = "deployment.kubernetes.io/revision"
DESIRED_ANN = "deployment.kubernetes.io/desired-replicas"
MAX_ANN = "deployment.kubernetes.io/max-replicas"
STS_REVISION_LABEL = "controller-revision-hash"
STS_POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
STS_POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

# What a pod does when its workload sets no sim.pyhpa.io annotations: Pending until the
# simulated kubelet takes it on, Running, then Ready 5 s after creation (as a container with a
# short readiness delay on a real node), 30 s of termination unless its grace period is
# shorter. The virtual-clock simulator has its own defaults in its scenarios.
CLUSTER_DEFAULTS = WorkloadParams(startup_seconds=5.0)

# Kinds whose changes can require work (other writes, e.g. Events and Leases, wake nothing).
# A CRD write wakes a pass too: it may define a scalable kind, whose key is then watched.
_EXTERNAL_METRICS_KEY = R.EXTERNAL_METRIC_OBJECTS.key
WATCHED_KEYS = frozenset({R.DEPLOYMENTS.key, R.REPLICA_SETS.key, R.STATEFUL_SETS.key,
                          R.REPLICATION_CONTROLLERS.key, R.SCALABLES.key, R.PODS.key,
                          R.NODES.key, _EXTERNAL_METRICS_KEY, R.CRDS.key})


# --------------------------------------------------------------------------- small helpers


def fmt_time(ts: float) -> str:
    """Epoch seconds as metav1.Time (RFC 3339, whole seconds, UTC)."""
    return _fmt_second(math.floor(ts))


@functools.lru_cache(maxsize=4096)  # a pod's status shows a few instants, shared by its peers
def _fmt_second(second: int) -> str:
    return datetime.fromtimestamp(second, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: Any) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        from pyhpa.api.timefmt import parse_time as _parse

        return _parse(text).timestamp()
    except Exception:  # noqa: BLE001 - a bad timestamp in a user object is just unknown
        return None


def _meta(o: Obj) -> Obj:
    return o.get("metadata") or {}


def _spec(o: Obj) -> Obj:
    return o.get("spec") or {}


def _status(o: Obj) -> Obj:
    return o.get("status") or {}


def _uid(o: Obj) -> str:
    return _meta(o).get("uid") or ""


def _name(o: Obj) -> str:
    return _meta(o).get("name") or ""


def _ns(o: Obj) -> str:
    return _meta(o).get("namespace") or ""


def _deleting(o: Obj) -> bool:
    return bool(_meta(o).get("deletionTimestamp"))


def controller_ref(o: Obj) -> Obj | None:
    for ref in _meta(o).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def _replicas(o: Obj, default: int = 1) -> int:
    v = _spec(o).get("replicas")
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else default


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def template_hash(template: Any, collision_count: int = 0) -> str:
    """A pod-template-hash: FNV-32a of the template, encoded the way kube's SafeEncodeString is."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":"))
    if collision_count:
        data += str(collision_count)
    return "".join(_NAME_ALPHABET[b % len(_NAME_ALPHABET)] for b in str(fnv32a(data.encode())).encode())


def _strip_hash(template: Any) -> Any:
    """A ReplicaSet's template without its pod-template-hash label (to compare with the Deployment's)."""
    if not isinstance(template, dict):
        return template
    out = json.loads(json.dumps(template))
    labels = (out.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(HASH_LABEL, None)
        if not labels:
            out["metadata"].pop("labels")
        if not out["metadata"]:
            out.pop("metadata")
    return out


def normal_template(template: Any) -> Any:
    """A pod template as the apiserver's typed decoding sees it: null, ``{}`` and ``[]`` values
    are the same as absent ones (``kubectl rollout undo`` sends ``creationTimestamp: null``).
    Deployments compare and hash templates in this form, as upstream compares typed ones."""
    if isinstance(template, dict):
        out = {}
        for k, v in template.items():
            v = normal_template(v)
            if v is None or v == {} or v == []:
                continue
            out[k] = v
        return out
    if isinstance(template, list):
        return [normal_template(v) for v in template]
    return template


def _comparable(template: Any) -> Any:
    """A pod template defaulted and normalised, so templates stored before the server defaulted
    them still match their ReplicaSets' (no rollout when a later write adds the defaults)."""
    if not isinstance(template, dict):
        return template
    out = json.loads(json.dumps(template))
    default_pod_spec(out.get("spec"))
    return normal_template(out)


def _int_or_percent(value: Any, total: int, round_up: bool, default: str) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if value is None:
        value = default
    if isinstance(value, int) and not isinstance(value, bool):
        return max(0, value)
    text = str(value).strip()
    if text.endswith("%"):
        try:
            pct = float(text[:-1])
        except ValueError:
            pct = float(default.rstrip("%"))
        raw = pct * total / 100
        return max(0, math.ceil(raw - 1e-9) if round_up else math.floor(raw + 1e-9))
    try:
        return max(0, int(text))
    except ValueError:
        return 0


def _pod_ip(uid: str) -> str:
    d = hashlib.sha1(uid.encode()).digest()
    return f"10.244.{d[0] % 250}.{2 + d[1] % 250}"


def _selector_from_template(template: Obj) -> str:
    labels = _meta(template).get("labels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


# --------------------------------------------------------------------------- model bookkeeping


@dataclass
class Group:
    """One top-level workload (Deployment, StatefulSet, RC, standalone ReplicaSet, Scalable or a
    bare Pod): the pure usage model and its metrics-server view."""

    uid: str
    namespace: str
    kind: str
    name: str
    resource: str  # "deployments.apps", "pods", ... (how the custom metrics API names it)
    workload: Workload
    pipeline: MetricsPipeline
    annotations: dict[str, str] = field(default_factory=dict)
    param_error: str | None = None
    # the decoded top object this group was last synced from (the same dict while it is unchanged)
    synced: Obj | None = field(default=None, repr=False, compare=False)


@dataclass
class PodRecord:
    sim: SimPod
    group: str  # Group uid
    namespace: str
    name: str
    labels: dict[str, str]
    node: str
    grace: float
    min_ready: float = 0.0
    # memos of the last pass (decoded objects are the same dict while unchanged): the pod object
    # its labels and deletion were taken from; the pod and inputs its status was found current for
    seen: Obj | None = field(default=None, repr=False, compare=False)
    status_seen: tuple[Obj, tuple] | None = field(default=None, repr=False, compare=False)


@dataclass
class Snapshot:
    """All objects a pass looks at, read once at the start of the pass: those of ``namespaces``
    (and every Node), or of every namespace when it is None."""

    deployments: list[Obj]
    replicasets: list[Obj]
    statefulsets: list[Obj]
    rcs: list[Obj]
    scalables: list[Obj]
    pods: list[Obj]
    nodes: list[Obj]
    external: list[Obj]
    scalable_of: dict[str, R.Resource] = field(default_factory=dict)  # scalable uid -> its kind
    scalable_kinds: frozenset[str] = frozenset()
    namespaces: frozenset[str] | None = None
    by_uid: dict[str, Obj] = field(default_factory=dict)
    pods_by_owner: dict[str, list[Obj]] = field(default_factory=dict)
    node_load: dict[str, int] | None = None  # pods per schedulable node (see _pick_node)

    def index(self) -> "Snapshot":
        for objs in (self.deployments, self.replicasets, self.statefulsets, self.rcs,
                     self.scalables):
            for o in objs:
                self.by_uid[_uid(o)] = o
        for p in self.pods:
            ref = controller_ref(p)
            if ref is not None:
                self.pods_by_owner.setdefault(ref.get("uid") or "", []).append(p)
        return self

    def covers(self, namespace: str) -> bool:
        return self.namespaces is None or namespace in self.namespaces


_KIND_RESOURCE = {"Deployment": "deployments.apps", "ReplicaSet": "replicasets.apps",
                  "StatefulSet": "statefulsets.apps", "ReplicationController": "replicationcontrollers",
                  "Scalable": "scalables.demo.pyhpa.io", "Pod": "pods"}


# --------------------------------------------------------------------------- the simulation


class Simulation:
    """Controllers + kubelet + usage model over a store; ``start()``/``stop()`` a background thread.

    ``resolution``/``window``: the metrics-server-like pipeline scrapes every ``resolution``
    seconds and reports averages over ``window`` seconds. ``clock`` is wall time in epoch seconds
    (inject a fake one in tests and call :meth:`settle`).
    """

    idle_seconds = 30.0  # the longest sleep between passes when nothing is due
    min_sleep = 0.02
    # After a pass that took d seconds the thread rests min(rest_ratio * d, max_rest) before the
    # next one, so a burst of writes to a large namespace cannot keep the API server's loop from
    # the GIL, while a long first pass over a big cluster does not leave it unattended for long.
    rest_ratio = 1.0
    max_rest = 1.0

    def __init__(self, store: Store, clock: Callable[[], float] = time.time, *,
                 resolution: float = 5.0, window: float = 15.0, node_name: str = NODE_NAME,
                 create_node: bool = True, events: bool = True,
                 custom_scalables: Callable[[], list[R.Resource]] | None = None) -> None:
        self.store = store
        # The CRD-defined kinds with a scale subresource (pyhpa.cluster.apiserver.crd), asked every pass.
        self.custom_scalables = custom_scalables or (lambda: [])
        self._watched: frozenset[str] = WATCHED_KEYS
        self.clock = clock
        self.resolution = float(resolution)
        self.window = float(window)
        self.node_name = node_name
        self.create_node = create_node
        self.events = events
        self.lock = threading.RLock()
        self.groups: dict[str, Group] = {}
        self.pods: dict[str, PodRecord] = {}  # pod uid -> record
        # the same by namespace -> uid, so a pass over some namespaces visits only theirs
        self._ns_groups: dict[str, dict[str, Group]] = {}
        self._ns_pods: dict[str, dict[str, PodRecord]] = {}
        self.external_history: dict[Key, list[tuple[float, Obj]]] = {}
        self.next_due: float | None = None
        self._due: dict[str, float] = {}  # namespace -> its next pod transition
        # the store's resourceVersion when the last pass read it: a pass that wrote nothing
        # has seen every change up to there (in its namespaces), so the events of those changes
        # (the simulation's own writes, mostly) need no other pass
        self._read_rv = 0
        self._settled_rv = 0  # ... by a pass over every namespace
        self._ns_settled: dict[str, int] = {}  # ... by a pass over some namespaces
        # key -> namespace -> name -> (store entry, the dict decoded from it); passes only read
        # these dicts (writes go through _mutate's copy), so an unchanged object is decoded once
        self._decoded: dict[str, dict[str, dict[str, tuple[Entry, Obj]]]] = {}
        self.passes = 0
        self._writes = 0
        self._event_seq = 0
        self._warned: set[tuple[str, str]] = set()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._watch: Any = None  # the background thread's store watch
        # set once the background thread's first pass over everything is over: the model of
        # every stored object is built (`pyhpa cluster` then freezes that heap for the GC)
        self.started_up = threading.Event()
        self.last_error: BaseException | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "Simulation":
        """Run the simulation on a daemon thread until :meth:`stop`."""
        if self._thread is not None:
            return self
        self._stop.clear()
        if self.create_node:
            self.ensure_node()
        self._thread = threading.Thread(target=self._run, name="pyhpa-simulation", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        watch = self._watch
        if watch is not None:
            watch.close()  # ends the thread's wait for the next event
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def wake(self) -> None:
        """Ask the background thread for a pass now (e.g. after a write it cannot see)."""
        self._wake.set()

    def _run(self) -> None:
        watch = self._watch = self.store.watch(None)
        try:
            # namespaces with changes since the last pass; None: every namespace (the first
            # pass, a wake-up, a cluster-scoped change, the idle refresh)
            pending: set[str] | None = None
            resting_until = 0.0
            while not self._stop.is_set():
                if pending is None or pending:
                    rest = resting_until - time.monotonic()
                    if rest > 0:
                        if self._stop.wait(rest):
                            break
                        pending = self._drain(watch, pending)
                    started = time.monotonic()
                    try:
                        self.settle(namespaces=pending)
                        self.last_error = None
                    except Exception as exc:  # noqa: BLE001 - keep simulating; report once
                        if repr(exc) != repr(self.last_error):
                            log.exception("simulation pass failed")
                        self.last_error = exc
                        self._stop.wait(0.5)
                    spent = time.monotonic() - started
                    self.started_up.set()
                    resting_until = time.monotonic() + min(spent * self.rest_ratio, self.max_rest)
                    pending = set()
                now = self.clock()
                due = self.next_due if self.next_due is not None else now + self.idle_seconds
                timeout = min(max(due - now, self.min_sleep), self.idle_seconds)
                if watch.closed:
                    if self._stop.wait(min(timeout, 0.5)):
                        break
                    pending = None
                    continue
                ev = watch.next(timeout)
                if self._stop.is_set():
                    break
                if ev is None:  # timed out: some namespaces' transitions are due, or the refresh
                    now = self.clock() + self.min_sleep
                    pending = self._drain(watch, {ns for ns, t in self._due.items() if t <= now}
                                          or None)
                    continue
                pending = self._drain(watch, self._note(ev, pending))
        finally:
            watch.close()

    def _note(self, ev: Any, pending: set[str] | None) -> set[str] | None:
        """Add what a store event makes dirty to ``pending``."""
        if pending is None or not self._relevant(ev.key) or ev.rv <= self._settled_rv \
                or ev.rv <= self._ns_settled.get(ev.namespace, 0):
            return pending
        if not ev.namespace:  # a Node or a CRD: every namespace may be concerned
            return None
        pending.add(ev.namespace)
        return pending

    def _relevant(self, key: str) -> bool:
        """Whether a write to ``key`` may need a pass (a custom kind may be newly scalable)."""
        if key in self._watched:
            return True
        from pyhpa.cluster.apiserver.crd import STORE_PREFIX

        return key.startswith(STORE_PREFIX) and any(r.key == key for r in self.custom_scalables())

    def _drain(self, watch: Any, pending: set[str] | None) -> set[str] | None:
        """Fold the events already queued (a burst of writes) and a wake-up into ``pending``."""
        while True:
            more = watch.next(0)
            if more is None:
                break
            pending = self._note(more, pending)
        if self._wake.is_set():
            self._wake.clear()
            pending = None
        return pending

    # ------------------------------------------------------------------ passes

    def settle(self, now: float | None = None, max_passes: int = 25, *,
               namespaces: Iterable[str] | None = None) -> int:
        """Run passes at ``now`` until one writes nothing; returns the number of passes."""
        n = 0
        namespaces = None if namespaces is None else frozenset(namespaces)
        for n in range(1, max_passes + 1):
            if not self.step(now, namespaces=namespaces):
                if namespaces is None:
                    self._settled_rv = self._read_rv
                    self._ns_settled.clear()
                else:
                    self._ns_settled.update(dict.fromkeys(namespaces, self._read_rv))
                break
        return n

    def step(self, now: float | None = None, *, namespaces: Iterable[str] | None = None) -> int:
        """One level-triggered pass at ``now`` (default ``clock()``); returns how many writes it made.

        ``namespaces`` limits the pass to the objects of those namespaces (every controller here
        works within one namespace, as owner references do), so a write costs a pass over its
        namespace rather than over the whole cluster; None passes over everything.
        """
        with self.lock:
            now = self.clock() if now is None else now
            self._writes = 0
            self._read_rv = self.store.resource_version
            snap = self._snapshot(None if namespaces is None else frozenset(namespaces))
            self._advance_pipelines(now, snap)
            self._sync_groups(snap, now)
            self._sync_external(snap, now)
            self._garbage_collect(snap, now)
            for dep in snap.deployments:
                self._guard(self._sync_deployment, dep, snap, now)
            for rs in snap.replicasets:
                self._guard(self._sync_replica_owner, rs, "ReplicaSet", snap, now)
            for rc in snap.rcs:
                self._guard(self._sync_replica_owner, rc, "ReplicationController", snap, now)
            for sc in snap.scalables:
                self._guard(self._sync_scalable, sc, snap.scalable_of[_uid(sc)], snap, now)
            for sts in snap.statefulsets:
                self._guard(self._sync_statefulset, sts, snap, now)
            self._kubelet(snap, now)
            self._schedule(snap, now)
            self.passes += 1
            return self._writes

    def _guard(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except (Conflict, NotFound, AlreadyExists):
            self._writes += 1  # the world moved under us: run another pass
        except StoreError as exc:
            log.warning("simulation: %s", exc)

    def _snapshot(self, namespaces: frozenset[str] | None = None) -> Snapshot:
        ls = self._list
        scalables: list[Obj] = []
        scalable_of: dict[str, R.Resource] = {}
        kinds = [R.SCALABLES, *self.custom_scalables()]
        for res in kinds:
            for obj in ls(res.key, namespaces):
                scalables.append(obj)
                scalable_of[_uid(obj)] = res
        self._watched = WATCHED_KEYS | {res.key for res in kinds}
        return Snapshot(ls(R.DEPLOYMENTS.key, namespaces), ls(R.REPLICA_SETS.key, namespaces),
                        ls(R.STATEFUL_SETS.key, namespaces),
                        ls(R.REPLICATION_CONTROLLERS.key, namespaces),
                        scalables, ls(R.PODS.key, namespaces),
                        ls(R.NODES.key, None), ls(_EXTERNAL_METRICS_KEY, namespaces),
                        scalable_of, frozenset(res.kind for res in kinds), namespaces).index()

    def _list(self, key: str, namespaces: frozenset[str] | None) -> list[Obj]:
        """The objects of one kind in ``namespaces`` (None: all), sorted like Store.list; only
        those written since the last pass are decoded again."""
        cached = self._decoded.get(key, {})
        if namespaces is None:
            entries = self.store.entries(key)
            fresh: dict[str, dict[str, tuple[Entry, Obj]]] = {}
        else:
            entries = [e for ns in sorted(namespaces) for e in self.store.entries(key, ns)]
            fresh = {ns: names for ns, names in cached.items() if ns not in namespaces}
        out: list[Obj] = []
        for ns, name, entry in entries:
            old = cached.get(ns)
            hit = old.get(name) if old else None
            if hit is None or hit[0] is not entry:
                hit = (entry, entry.obj())
            names = fresh.get(ns)
            if names is None:
                names = fresh[ns] = {}
            names[name] = hit
            out.append(hit[1])
        self._decoded[key] = fresh
        return out

    def _advance_pipelines(self, now: float, snap: Snapshot | None = None) -> None:
        groups = self.groups.values() if snap is None else _scoped(self._ns_groups, snap)
        for g in groups:
            g.pipeline.advance(now)

    def refresh(self, now: float | None = None) -> float:
        """Bring every metrics pipeline up to ``now`` (metrics API reads call this); returns now."""
        with self.lock:
            now = self.clock() if now is None else now
            self._advance_pipelines(now)
            return now

    # ------------------------------------------------------------------ writes

    def _create(self, key: str, obj: Obj) -> Obj:
        self._writes += 1
        return self.store.create(key, obj)

    def _update(self, key: str, obj: Obj) -> Obj:
        self._writes += 1
        return self.store.update(key, obj)

    def _mutate(self, key: str, ns: str, name: str, fn: Callable[[Obj], None]) -> Obj:
        entry = self.store.get_entry(key, ns, name)
        before, after = entry.obj(), entry.obj()  # a second decode: the deep copy to change
        fn(after)
        if after == before:
            return before
        self._writes += 1
        return self.store.update(key, after)

    def _delete(self, key: str, ns: str, name: str, uid: str | None = None,
                grace: int | None = None) -> None:
        self._writes += 1
        try:
            self.store.delete(key, ns, name, uid=uid, grace_seconds=grace)
        except (NotFound, Conflict):
            pass

    def event(self, obj: Obj, reason: str, message: str, component: str,
              type_: str = "Normal") -> None:
        """Record a core/v1 Event on ``obj`` (what the kube controllers' recorders do)."""
        if not self.events:
            return
        now = self.clock()
        self._event_seq += 1
        meta = _meta(obj)
        ts = fmt_time(now)
        ev = {"apiVersion": "v1", "kind": "Event",
              "metadata": {"name": f"{meta.get('name')}.{int(now * 1e9) + self._event_seq:x}",
                           "namespace": meta.get("namespace") or "default"},
              "involvedObject": {"kind": obj.get("kind"), "namespace": meta.get("namespace"),
                                 "name": meta.get("name"), "uid": meta.get("uid"),
                                 "apiVersion": obj.get("apiVersion"),
                                 "resourceVersion": meta.get("resourceVersion")},
              "reason": reason, "message": message, "source": {"component": component},
              "firstTimestamp": ts, "lastTimestamp": ts, "count": 1, "type": type_,
              "eventTime": None, "reportingComponent": component, "reportingInstance": ""}
        try:
            self.store.create(R.EVENTS.key, ev)  # not counted: events never need another pass
        except StoreError:
            pass

    # ------------------------------------------------------------------ nodes

    def ensure_node(self) -> None:
        """Create the simulated node if the cluster has none (``kubectl top nodes`` reads it)."""
        nodes = self.store.list(R.NODES.key).items
        for node in nodes:  # nodes from older data dirs lack what `get nodes -o wide` shows
            if _name(node) == self.node_name and not set(_node_info()) <= set(
                    _status(node).get("nodeInfo") or {}):
                def describe(o: Obj) -> None:
                    o.setdefault("status", {}).setdefault("nodeInfo", {}).update(_node_info())
                try:
                    self._mutate(R.NODES.key, "", self.node_name, describe)
                except (NotFound, Conflict):
                    pass
        if nodes:
            return
        ts = fmt_time(self.clock())
        node = {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": self.node_name, "creationTimestamp": ts,
                         "labels": {"kubernetes.io/hostname": self.node_name,
                                    "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                                    "node-role.kubernetes.io/control-plane": ""}},
            "spec": {},
            "status": {
                "capacity": {"cpu": "8", "memory": "32Gi", "pods": "250"},
                "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "250"},
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                "message": "kubelet is posting ready status",
                                "lastHeartbeatTime": ts, "lastTransitionTime": ts}],
                "addresses": [{"type": "InternalIP", "address": "10.0.0.10"},
                              {"type": "Hostname", "address": self.node_name}],
                "nodeInfo": _node_info()},
        }
        try:
            self.store.create(R.NODES.key, node)
        except AlreadyExists:
            pass

    def _pick_node(self, snap: Snapshot) -> str:
        ready = [n for n in snap.nodes if not _spec(n).get("unschedulable")]
        if not ready:
            return self.node_name
        load = snap.node_load
        if load is None:  # counted once per pass, then kept up to date here
            load = snap.node_load = {_name(n): 0 for n in ready}
            for rec in self.pods.values():
                if rec.node in load:
                    load[rec.node] += 1
        node = min(sorted(load), key=lambda n: load[n])
        load[node] += 1
        return node

    # ------------------------------------------------------------------ groups (usage model)

    def _top_owner(self, pod: Obj, snap: Snapshot) -> Obj:
        """The workload object whose ``sim.pyhpa.io`` annotations set this pod's load."""
        ref = controller_ref(pod)
        owner = snap.by_uid.get(ref.get("uid") or "") if ref else None
        if owner is None:
            return pod
        if owner.get("kind") == "ReplicaSet":
            up = controller_ref(owner)
            dep = snap.by_uid.get(up.get("uid") or "") if up else None
            if dep is not None and dep.get("kind") == "Deployment":
                return dep
        return owner

    def _top_level(self, snap: Snapshot) -> list[Obj]:
        out = list(snap.deployments) + list(snap.statefulsets) + list(snap.rcs) + list(snap.scalables)
        for rs in snap.replicasets:
            up = controller_ref(rs)
            if up is None or snap.by_uid.get(up.get("uid") or "") is None:
                out.append(rs)
        return out

    def _sync_groups(self, snap: Snapshot, now: float) -> None:
        seen: set[str] = set()
        tops = self._top_level(snap)
        pod_tops: dict[str, Obj] = {}
        for pod in snap.pods:
            top = self._top_owner(pod, snap)
            pod_tops[_uid(pod)] = top
            if top is pod:
                tops.append(pod)
        for top in tops:
            res = snap.scalable_of.get(_uid(top))
            g = self._ensure_group(top, now, res.group_resource if res is not None else None)
            seen.add(g.uid)
        # pods: adopt new ones into their group, follow deletions, drop the gone
        live: set[str] = set()
        for pod in snap.pods:
            uid = _uid(pod)
            live.add(uid)
            top = pod_tops[uid]
            gid = _uid(top)
            rec = self.pods.get(uid)
            if rec is not None and rec.seen is pod and rec.group == gid:
                continue  # same pod object, same group: nothing below would change
            if rec is None:
                rec = self._adopt(pod, self.groups[gid], snap, now)
            elif rec.group != gid:  # re-parented (e.g. RS adopted by a Deployment)
                old = self.groups.get(rec.group)
                if old is not None:
                    old.workload.detach(rec.sim)
                self.groups[gid].workload.attach(rec.sim)
                rec.group = gid
            rec.labels = dict(_meta(pod).get("labels") or {})
            if _deleting(pod):
                limit = _grace_deadline(pod)
                if rec.sim.deleted_at is None:
                    self._mark_deleted(rec, now, limit)
                elif limit is not None and rec.sim.gone_at is not None \
                        and limit < rec.sim.gone_at - 1:  # a second delete shortened the grace
                    self._mark_deleted(rec, rec.sim.deleted_at, limit)
            rec.seen = pod
        for rec in [r for r in _scoped(self._ns_pods, snap) if r.sim.uid not in live]:
            del self.pods[rec.sim.uid]
            _unindex(self._ns_pods, rec.namespace, rec.sim.uid)
            g = self.groups.get(rec.group)
            if g is not None:
                g.workload.detach(rec.sim)
        for g in [g for g in _scoped(self._ns_groups, snap) if g.uid not in seen]:
            if not g.workload.pods:
                del self.groups[g.uid]
                _unindex(self._ns_groups, g.namespace, g.uid)

    def _ensure_group(self, top: Obj, now: float, resource: str | None = None) -> Group:
        uid = _uid(top)
        g = self.groups.get(uid)
        if g is not None and g.synced is top:
            return g  # synced from this very object last time: nothing to update
        kind = top.get("kind") or "Pod"
        annotations = dict(_meta(top).get("annotations") or {})
        if kind == "Pod":
            containers = _spec(top).get("containers") or []
            labels = _meta(top).get("labels") or {}
        else:
            template = _spec(top).get("template") or {}
            containers = _spec(template).get("containers") or []
            labels = _meta(template).get("labels") or {}
        templates = [ContainerTemplate(c.get("name") or f"c{i}", _requests(c))
                     for i, c in enumerate(containers) if isinstance(c, dict)]
        if g is None:
            params, error = self._params(top, annotations, None)
            wl = _new_workload(_ns(top), _name(top), kind, labels, templates, params, uid, now)
            g = Group(uid, _ns(top), kind, _name(top),
                      resource or _KIND_RESOURCE.get(kind, kind.lower() + "s"),
                      wl, MetricsPipeline(wl, resolution=self.resolution, window=self.window,
                                          now=now), annotations, error)
            self.groups[uid] = g
            self._ns_groups.setdefault(g.namespace, {})[uid] = g
            g.synced = top
            return g
        if annotations != g.annotations:
            params, g.param_error = self._params(top, annotations, g.workload.params)
            g.annotations = annotations
            g.workload.set_params(params, now)
        if templates and [c.name for c in templates] != [c.name for c in g.workload.containers]:
            g.workload.containers = templates
        g.workload.labels = dict(labels)
        g.synced = top
        return g

    def _params(self, top: Obj, annotations: dict[str, str],
                previous: WorkloadParams | None) -> tuple[WorkloadParams, str | None]:
        try:
            return params_from_annotations(annotations, CLUSTER_DEFAULTS), None
        except WorkloadParamError as exc:
            message = f"{top.get('kind')} {_ns(top)}/{_name(top)}: {exc}"
            if (_uid(top), str(exc)) not in self._warned:
                self._warned.add((_uid(top), str(exc)))
                log.warning("simulation: %s", message)
                self.event(top, "InvalidSimulationAnnotation", str(exc), "pyhpa-simulation",
                           "Warning")
            return previous or CLUSTER_DEFAULTS, str(exc)

    def _adopt(self, pod: Obj, g: Group, snap: Snapshot, now: float) -> PodRecord:
        """Start tracking a pod we did not create in this process (user's, or from before a restart)."""
        created = parse_time(_meta(pod).get("creationTimestamp"))
        created = now if created is None or created > now else created
        params = g.workload.params
        ready_at = created + params.startup_seconds
        for c in _status(pod).get("conditions") or []:
            if c.get("type") == "Ready" and c.get("status") == "True":
                t = parse_time(c.get("lastTransitionTime"))
                if t is not None and t <= now:
                    ready_at = t
        running_at = min(created + min(params.pending_seconds, params.startup_seconds), ready_at)
        sim = SimPod(name=_name(pod), uid=_uid(pod), created=created, running_at=running_at,
                     ready_at=ready_at)
        if g.kind == "StatefulSet":
            sim.ordinal = _ordinal(_name(pod), g.name)
        return self._track(pod, sim, g, snap)

    def _track(self, pod: Obj, sim: SimPod, g: Group, snap: Snapshot | None) -> PodRecord:
        rec = PodRecord(sim, g.uid, _ns(pod), _name(pod), dict(_meta(pod).get("labels") or {}),
                        _spec(pod).get("nodeName") or self.node_name,
                        self._grace(pod, g), self._min_ready(pod, snap))
        g.workload.attach(sim)
        self.pods[sim.uid] = rec
        self._ns_pods.setdefault(rec.namespace, {})[sim.uid] = rec
        return rec

    def _grace(self, pod: Obj, g: Group) -> float:
        if ANN_TERMINATION in g.annotations and g.param_error is None:
            return g.workload.params.termination_seconds
        v = _spec(pod).get("terminationGracePeriodSeconds")
        return float(v) if isinstance(v, (int, float)) and v >= 0 else 30.0

    def _min_ready(self, pod: Obj, snap: Snapshot | None) -> float:
        ref = controller_ref(pod)
        owner = snap.by_uid.get(ref.get("uid") or "") if (ref and snap) else None
        v = _spec(owner).get("minReadySeconds") if owner else 0
        return float(v) if isinstance(v, (int, float)) and v > 0 else 0.0

    def _mark_deleted(self, rec: PodRecord, now: float, limit: float | None = None) -> None:
        """The pod terminates from ``now`` for its simulated termination time, but no later
        than ``limit`` (the end of the grace period its delete asked for)."""
        gone = now + rec.grace if limit is None else max(now, min(now + rec.grace, limit))
        g = self.groups.get(rec.group)
        if g is not None:
            g.workload.mark_deleted(rec.sim, now, gone)
        else:
            rec.sim.deleted_at, rec.sim.gone_at = now, gone

    # ------------------------------------------------------------------ pod creation / deletion

    def _new_pod(self, owner: Obj, template: Obj, snap: Snapshot, now: float, *,
                 name: str | None = None, extra_labels: dict[str, str] | None = None,
                 extra_spec: Obj | None = None) -> None:
        tmeta = _meta(template)
        spec = json.loads(json.dumps(_spec(template)))
        default_pod_spec(spec)
        spec.setdefault("enableServiceLinks", True)
        spec["nodeName"] = self._pick_node(snap)
        spec.update(extra_spec or {})
        labels = dict(tmeta.get("labels") or {})
        labels.update(extra_labels or {})
        meta: Obj = {"namespace": _ns(owner), "labels": labels, "creationTimestamp": fmt_time(now),
                     "finalizers": [FINALIZER],
                     "ownerReferences": [{"apiVersion": owner.get("apiVersion") or "apps/v1",
                                          "kind": owner.get("kind"), "name": _name(owner),
                                          "uid": _uid(owner), "controller": True,
                                          "blockOwnerDeletion": True}]}
        if name:
            meta["name"] = name
        else:
            meta["generateName"] = _name(owner) + "-"
        if tmeta.get("annotations"):
            meta["annotations"] = dict(tmeta["annotations"])
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
               "status": {"phase": "Pending", "qosClass": _qos_class(spec)}}
        g = self.groups[_uid(self._top_owner_of(owner, snap))]
        params = g.workload.params
        pending = min(params.pending_seconds, params.startup_seconds)
        created = self._create(R.PODS.key, pod)
        sim = SimPod(name=_name(created), uid=_uid(created), created=now,
                     running_at=now + pending, ready_at=now + params.startup_seconds)
        if g.kind == "StatefulSet":
            sim.ordinal = _ordinal(sim.name, g.name)
        self._track(created, sim, g, snap)
        component = "statefulset-controller" if owner.get("kind") == "StatefulSet" else \
            ("replication-controller" if owner.get("kind") == "ReplicationController"
             else "replicaset-controller")
        if owner.get("kind") == "StatefulSet":
            self.event(owner, "SuccessfulCreate",
                       f"create Pod {sim.name} in StatefulSet {_name(owner)} successful", component)
        else:
            self.event(owner, "SuccessfulCreate", f"Created pod: {sim.name}", component)

    def _top_owner_of(self, owner: Obj, snap: Snapshot) -> Obj:
        if owner.get("kind") == "ReplicaSet":
            up = controller_ref(owner)
            dep = snap.by_uid.get(up.get("uid") or "") if up else None
            if dep is not None:
                return dep
        return owner

    def _delete_pod(self, pod: Obj, now: float, owner: Obj | None = None) -> None:
        spec_grace = _spec(pod).get("terminationGracePeriodSeconds")
        grace = spec_grace if isinstance(spec_grace, int) and spec_grace > 0 else 30
        self._delete(R.PODS.key, _ns(pod), _name(pod), uid=_uid(pod), grace=grace)
        rec = self.pods.get(_uid(pod))
        if rec is not None and rec.sim.deleted_at is None:
            self._mark_deleted(rec, now)
        if owner is not None:
            if owner.get("kind") == "StatefulSet":
                self.event(owner, "SuccessfulDelete",
                           f"delete Pod {_name(pod)} in StatefulSet {_name(owner)} successful",
                           "statefulset-controller")
            else:
                component = "replication-controller" if owner.get("kind") == \
                    "ReplicationController" else "replicaset-controller"
                self.event(owner, "SuccessfulDelete", f"Deleted pod: {_name(pod)}", component)

    def _sim(self, pod: Obj) -> SimPod | None:
        rec = self.pods.get(_uid(pod))
        return rec.sim if rec is not None else None

    def _ready(self, pod: Obj, now: float) -> bool:
        sim = self._sim(pod)
        return sim is not None and sim.ready(now)

    def _available(self, pod: Obj, now: float, min_ready: float) -> bool:
        sim = self._sim(pod)
        return sim is not None and sim.ready(now) and now >= sim.ready_at + min_ready

    # ------------------------------------------------------------------ garbage collection

    def _garbage_collect(self, snap: Snapshot, now: float) -> None:
        for rs in snap.replicasets:
            ref = controller_ref(rs)
            if ref and ref.get("kind") == "Deployment" and ref.get("uid") not in snap.by_uid:
                self._delete(R.REPLICA_SETS.key, _ns(rs), _name(rs), uid=_uid(rs))
        owners = {"ReplicaSet", "StatefulSet", "ReplicationController"} | snap.scalable_kinds
        for pod in snap.pods:
            ref = controller_ref(pod)
            if ref and ref.get("kind") in owners and ref.get("uid") not in snap.by_uid \
                    and not _deleting(pod):
                self._delete_pod(pod, now)

    # ------------------------------------------------------------------ ReplicaSet / RC / Scalable

    def _replicate(self, owner: Obj, template: Obj, desired: int, snap: Snapshot,
                   now: float) -> list[Obj]:
        """Create or delete pods of ``owner`` towards ``desired``; returns the active ones."""
        pods = snap.pods_by_owner.get(_uid(owner), [])
        active = [p for p in pods if not _deleting(p)
                  and _status(p).get("phase") not in ("Succeeded", "Failed")]
        diff = desired - len(active)
        if diff > 0:
            for _ in range(diff):
                self._new_pod(owner, template, snap, now)
        elif diff < 0:
            sims = {id(s): p for p in active if (s := self._sim(p)) is not None}
            ranked = Workload._victims([self._sim(p) for p in active if self._sim(p)], -diff,
                                       now)  # the ReplicaSet controller's deletion order
            for sim in ranked:
                self._delete_pod(sims[id(sim)], now, owner)
        return active

    def _sync_replica_owner(self, owner: Obj, kind: str, snap: Snapshot, now: float) -> None:
        if _deleting(owner):
            return
        key = {"ReplicaSet": R.REPLICA_SETS.key,
               "ReplicationController": R.REPLICATION_CONTROLLERS.key}[kind]
        template = _spec(owner).get("template")
        desired = _replicas(owner, 1)
        if isinstance(template, dict):
            active = self._replicate(owner, template, desired, snap, now)
        else:
            active = [p for p in snap.pods_by_owner.get(_uid(owner), []) if not _deleting(p)
                      and _status(p).get("phase") not in ("Succeeded", "Failed")]
        min_ready = float(_spec(owner).get("minReadySeconds") or 0)
        tlabels = _meta(template).get("labels") or {} if isinstance(template, dict) else {}
        status: Obj = {"replicas": len(active) if isinstance(template, dict) else desired}
        status["fullyLabeledReplicas"] = sum(
            1 for p in active if all((_meta(p).get("labels") or {}).get(k) == v
                                     for k, v in tlabels.items()))
        ready = sum(1 for p in active if self._ready(p, now))
        avail = sum(1 for p in active if self._available(p, now, min_ready))
        if ready:
            status["readyReplicas"] = ready
        if avail:
            status["availableReplicas"] = avail
        status["observedGeneration"] = _meta(owner).get("generation") or 1
        old = _status(owner)
        keep = {k: v for k, v in old.items() if k not in (
            "replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
            "observedGeneration", "selector")}
        new_status = {**keep, **status}
        if new_status != old:
            def put(o: Obj) -> None:
                o["status"] = new_status
            self._mutate(key, _ns(owner), _name(owner), put)

    def _sync_scalable(self, owner: Obj, res: R.Resource, snap: Snapshot, now: float) -> None:
        """A kind with a scale subresource (our Scalable, or a CRD's) whose objects carry a pod
        template at ``spec.template``: pods follow the replicas at its ``specReplicasPath``, and
        its ``statusReplicasPath`` (and a ``.status`` ``labelSelectorPath``) report them."""
        from pyhpa.cluster.apiserver.scale import read_path, write_path
        from pyhpa.cluster.apiserver.columns import label_selector_string

        template = _spec(owner).get("template")
        if _deleting(owner) or not isinstance(template, dict) or res.scale is None:
            return  # without a pod template the object is someone else's: its status is theirs
        paths = res.scale
        desired = read_path(owner, paths.spec_replicas)
        if not isinstance(desired, int) or isinstance(desired, bool) or desired < 0:
            desired = 0
        active = self._replicate(owner, template, desired, snap, now)
        after = {"status": json.loads(json.dumps(_status(owner)))}
        write_path(after, paths.status_replicas, len(active))
        if paths.label_selector and paths.label_selector.startswith(".status."):
            sel = _spec(owner).get("selector")
            if isinstance(sel, str):
                selector = sel
            elif isinstance(sel, dict):
                selector = label_selector_string(sel)
            else:
                selector = read_path(owner, paths.label_selector) or \
                    _selector_from_template(template)
            write_path(after, paths.label_selector, selector)
        if after["status"] != _status(owner):
            def put(o: Obj) -> None:
                o["status"] = after["status"]
            self._mutate(res.key, _ns(owner), _name(owner), put)

    # ------------------------------------------------------------------ Deployment

    def _sync_deployment(self, dep: Obj, snap: Snapshot, now: float) -> None:
        if _deleting(dep):
            return
        spec = _spec(dep)
        desired = _replicas(dep, 1)
        template = spec.get("template") or {}
        ns = _ns(dep)
        owned = sorted((rs for rs in snap.replicasets
                        if (controller_ref(rs) or {}).get("uid") == _uid(dep)),
                       key=lambda o: (_meta(o).get("creationTimestamp") or "", _name(o)))
        normal = _comparable(template)
        new = next((rs for rs in owned
                    if _comparable(_strip_hash(_spec(rs).get("template"))) == normal), None)
        olds = [rs for rs in owned if rs is not new]
        strategy = spec.get("strategy") or {}
        rolling = (strategy.get("type") or "RollingUpdate") == "RollingUpdate"
        ru = strategy.get("rollingUpdate") or {}
        surge = _int_or_percent(ru.get("maxSurge"), desired, True, "25%") if rolling else 0
        unavailable = _int_or_percent(ru.get("maxUnavailable"), desired, False, "25%") if rolling else 0
        if rolling and surge == 0 and unavailable == 0:
            unavailable = 1
        paused = bool(spec.get("paused"))
        olds_running = [rs for rs in olds if _replicas(rs, 0) > 0 or _status(rs).get("replicas")]

        if new is None:
            if paused:
                self._deployment_status(dep, owned, None, desired, unavailable, now)
                return
            revision = 1 + max([_revision(rs) for rs in owned] or [0])
            collision = int(_status(dep).get("collisionCount") or 0)
            h = template_hash(normal_template(template), collision)
            rs_template = json.loads(json.dumps(template))
            rs_template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = h
            selector = json.loads(json.dumps(spec.get("selector") or {}))
            selector.setdefault("matchLabels", {})[HASH_LABEL] = h
            start = 0 if olds_running else desired  # Recreate: wait for the old pods to go
            if rolling and olds_running:
                total = sum(_replicas(rs, 0) for rs in owned)
                start = max(0, min(desired + surge - total, desired))
            rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                  "metadata": {"name": f"{_name(dep)}-{h}", "namespace": ns,
                               "creationTimestamp": fmt_time(now),
                               "labels": dict(_meta(rs_template).get("labels") or {}),
                               "annotations": {REVISION_ANN: str(revision),
                                               DESIRED_ANN: str(desired),
                                               MAX_ANN: str(desired + surge)},
                               "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                                    "name": _name(dep), "uid": _uid(dep),
                                                    "controller": True,
                                                    "blockOwnerDeletion": True}]},
                  "spec": {"replicas": start, "minReadySeconds": spec.get("minReadySeconds") or 0,
                           "selector": selector, "template": rs_template},
                  "status": {"replicas": 0}}
            try:
                self._create(R.REPLICA_SETS.key, rs)
            except AlreadyExists:  # a hash collision with a different template: bump the count
                def bump(o: Obj) -> None:
                    o.setdefault("status", {})["collisionCount"] = collision + 1
                self._mutate(R.DEPLOYMENTS.key, ns, _name(dep), bump)
                return
            if start:
                self.event(dep, "ScalingReplicaSet",
                           f"Scaled up replica set {rs['metadata']['name']} from 0 to {start}",
                           "deployment-controller")
            self._set_revision(dep, revision)
            return  # the next pass sees the new ReplicaSet

        newest = max([_revision(rs) for rs in olds] or [0])
        if _revision(new) <= newest:  # an old template is back (rollout undo): next revision
            self._bump_rs_revision(new, newest + 1)
            return  # the next pass sees the ReplicaSet with its new revision
        self._set_revision(dep, _revision(new))
        if not paused:
            if not rolling:  # Recreate: old pods all gone before the new ones start
                if any(_replicas(rs, 0) > 0 for rs in olds):
                    for rs in olds:
                        self._scale_rs(dep, rs, 0, desired, surge)
                elif not any(snap.pods_by_owner.get(_uid(rs)) for rs in olds):
                    self._scale_rs(dep, new, desired, desired, surge)
            elif not olds_running:
                self._scale_rs(dep, new, desired, desired, surge)
            else:
                self._roll(dep, new, olds, owned, desired, surge, unavailable)
        self._cleanup_history(dep, olds)
        self._deployment_status(dep, owned, new, desired, unavailable, now)

    def _roll(self, dep: Obj, new: Obj, olds: list[Obj], owned: list[Obj], desired: int,
              surge: int, unavailable: int) -> None:
        """One step of the rolling update (upstream's reconcileNewReplicaSet / reconcileOldReplicaSets)."""
        total = sum(_replicas(rs, 0) for rs in owned)
        new_n = _replicas(new, 0)
        if new_n > desired:
            self._scale_rs(dep, new, desired, desired, surge)
            return
        if new_n < desired:
            allowed = desired + surge - total
            target = new_n + max(0, min(allowed, desired - new_n))
            if target != new_n:
                self._scale_rs(dep, new, target, desired, surge)
                return
        min_available = desired - unavailable
        new_unavailable = new_n - int(_status(new).get("availableReplicas") or 0)
        max_down = total - min_available - new_unavailable
        if max_down <= 0:
            return
        targets = {_uid(rs): _replicas(rs, 0) for rs in olds}
        cleaned = 0
        for rs in olds:  # unhealthy old replicas first
            unhealthy = targets[_uid(rs)] - int(_status(rs).get("availableReplicas") or 0)
            down = max(0, min(max_down - cleaned, unhealthy))
            targets[_uid(rs)] -= down
            cleaned += down
        available = sum(int(_status(rs).get("availableReplicas") or 0) for rs in owned)
        budget = available - min_available - cleaned
        for rs in olds:
            if budget <= 0:
                break
            down = min(targets[_uid(rs)], budget)
            targets[_uid(rs)] -= down
            budget -= down
        for rs in olds:
            if targets[_uid(rs)] != _replicas(rs, 0):
                self._scale_rs(dep, rs, targets[_uid(rs)], desired, surge)

    def _scale_rs(self, dep: Obj, rs: Obj, replicas: int, desired: int, surge: int) -> None:
        before = _replicas(rs, 0)
        anns = _meta(rs).get("annotations") or {}
        if before == replicas and anns.get(DESIRED_ANN) == str(desired) \
                and anns.get(MAX_ANN) == str(desired + surge):
            return

        def scale(o: Obj) -> None:
            o.setdefault("spec", {})["replicas"] = replicas
            a = o.setdefault("metadata", {}).setdefault("annotations", {})
            a[DESIRED_ANN] = str(desired)
            a[MAX_ANN] = str(desired + surge)
        self._mutate(R.REPLICA_SETS.key, _ns(rs), _name(rs), scale)
        if before != replicas:
            word = "up" if replicas > before else "down"
            self.event(dep, "ScalingReplicaSet",
                       f"Scaled {word} replica set {_name(rs)} from {before} to {replicas}",
                       "deployment-controller")

    def _set_revision(self, dep: Obj, revision: int) -> None:
        if (_meta(dep).get("annotations") or {}).get(REVISION_ANN) == str(revision):
            return

        def put(o: Obj) -> None:
            o.setdefault("metadata", {}).setdefault("annotations", {})[REVISION_ANN] = str(revision)
        self._mutate(R.DEPLOYMENTS.key, _ns(dep), _name(dep), put)

    def _bump_rs_revision(self, rs: Obj, revision: int) -> None:
        def put(o: Obj) -> None:
            o.setdefault("metadata", {}).setdefault("annotations", {})[REVISION_ANN] = str(revision)
        self._mutate(R.REPLICA_SETS.key, _ns(rs), _name(rs), put)

    def _cleanup_history(self, dep: Obj, olds: list[Obj]) -> None:
        limit = _spec(dep).get("revisionHistoryLimit")
        limit = 10 if not isinstance(limit, int) or limit < 0 else limit
        idle = [rs for rs in olds if _replicas(rs, 0) == 0 and not _status(rs).get("replicas")]
        idle.sort(key=_revision)
        for rs in idle[:max(0, len(idle) - limit)]:
            self._delete(R.REPLICA_SETS.key, _ns(rs), _name(rs), uid=_uid(rs))

    def _deployment_status(self, dep: Obj, owned: list[Obj], new: Obj | None, desired: int,
                           unavailable: int, now: float) -> None:
        def total(field_: str) -> int:
            return sum(int(_status(rs).get(field_) or 0) for rs in owned)

        replicas = total("replicas")
        updated = int(_status(new).get("replicas") or 0) if new is not None else 0
        ready, available = total("readyReplicas"), total("availableReplicas")
        spec_total = sum(_replicas(rs, 0) for rs in owned)
        old = _status(dep)
        status: Obj = {"observedGeneration": _meta(dep).get("generation") or 1}
        if replicas:
            status["replicas"] = replicas
        if updated:
            status["updatedReplicas"] = updated
        if ready:
            status["readyReplicas"] = ready
        if available:
            status["availableReplicas"] = available
        if max(0, spec_total - available):
            status["unavailableReplicas"] = max(0, spec_total - available)
        if old.get("collisionCount"):
            status["collisionCount"] = old["collisionCount"]
        ts = fmt_time(now)
        conds = {c.get("type"): c for c in old.get("conditions") or []}

        def cond(type_: str, status_: str, reason: str, message: str) -> Obj:
            prev = conds.get(type_)
            if prev and prev.get("status") == status_ and prev.get("reason") == reason \
                    and prev.get("message") == message:
                return prev
            transition = prev.get("lastTransitionTime") if prev and prev.get("status") == status_ \
                else ts
            return {"type": type_, "status": status_, "lastUpdateTime": ts,
                    "lastTransitionTime": transition, "reason": reason, "message": message}

        if available >= desired - unavailable:
            avail = cond("Available", "True", "MinimumReplicasAvailable",
                         "Deployment has minimum availability.")
        else:
            avail = cond("Available", "False", "MinimumReplicasUnavailable",
                         "Deployment does not have minimum availability.")
        name = _name(new) if new is not None else _name(dep)
        done = new is not None and updated == desired and replicas == desired \
            and available >= desired
        if _spec(dep).get("paused"):
            prog = cond("Progressing", "Unknown", "DeploymentPaused", "Deployment is paused")
        elif done:
            prog = cond("Progressing", "True", "NewReplicaSetAvailable",
                        f'ReplicaSet "{name}" has successfully progressed.')
        else:
            prog = cond("Progressing", "True", "ReplicaSetUpdated",
                        f'ReplicaSet "{name}" is progressing.')
        status["conditions"] = [avail, prog]
        if status != old:
            def put(o: Obj) -> None:
                o["status"] = status
            self._mutate(R.DEPLOYMENTS.key, _ns(dep), _name(dep), put)

    # ------------------------------------------------------------------ StatefulSet

    def _sync_statefulset(self, sts: Obj, snap: Snapshot, now: float) -> None:
        if _deleting(sts):
            return
        spec = _spec(sts)
        desired = _replicas(sts, 1)
        template = spec.get("template") or {}
        ordered = (spec.get("podManagementPolicy") or "OrderedReady") == "OrderedReady"
        name = _name(sts)
        revision = f"{name}-{template_hash(template)}"
        pods: dict[int, Obj] = {}
        for p in snap.pods_by_owner.get(_uid(sts), []):
            i = _ordinal(_name(p), name)
            if i is not None:
                pods[i] = p
        min_ready = float(spec.get("minReadySeconds") or 0)

        def healthy(p: Obj) -> bool:
            return not _deleting(p) and self._ready(p, now)

        acted = False
        for i in range(desired):  # create missing ordinals (in order when OrderedReady)
            p = pods.get(i)
            if p is None:
                extra = {"hostname": f"{name}-{i}"}
                if spec.get("serviceName"):
                    extra["subdomain"] = spec["serviceName"]
                self._new_pod(sts, template, snap, now, name=f"{name}-{i}", extra_spec=extra,
                              extra_labels={STS_REVISION_LABEL: revision,
                                            STS_POD_NAME_LABEL: f"{name}-{i}",
                                            STS_POD_INDEX_LABEL: str(i)})
                acted = True
                if ordered:
                    break
            elif ordered and not healthy(p):
                acted = True  # wait for this one before touching the next
                break
        condemned = sorted((i for i in pods if i >= desired), reverse=True)
        if condemned and not (ordered and acted):
            terminating = any(_deleting(p) for p in pods.values())
            if not ordered:
                for i in condemned:
                    if not _deleting(pods[i]):
                        self._delete_pod(pods[i], now, sts)
            elif not terminating and all(healthy(pods[i]) for i in pods if i < desired):
                self._delete_pod(pods[condemned[0]], now, sts)
            acted = True
        strategy = (spec.get("updateStrategy") or {})
        if not acted and (strategy.get("type") or "RollingUpdate") == "RollingUpdate":
            partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
            stale = sorted((i for i, p in pods.items() if i < desired and i >= partition
                            and (_meta(p).get("labels") or {}).get(STS_REVISION_LABEL) != revision),
                           reverse=True)
            if stale and all(healthy(p) for p in pods.values()):
                self._delete_pod(pods[stale[0]], now, sts)
        # status
        existing = list(pods.values())
        old = _status(sts)
        updated = sum(1 for p in existing
                      if (_meta(p).get("labels") or {}).get(STS_REVISION_LABEL) == revision)
        current_rev = old.get("currentRevision") or revision
        if updated == desired and len(existing) == desired and all(healthy(p) for p in existing):
            current_rev = revision
        current = sum(1 for p in existing
                      if (_meta(p).get("labels") or {}).get(STS_REVISION_LABEL) == current_rev)
        status: Obj = {"observedGeneration": _meta(sts).get("generation") or 1,
                       "replicas": len(existing)}
        ready = sum(1 for p in existing if healthy(p))
        if ready:
            status["readyReplicas"] = ready
        if current:
            status["currentReplicas"] = current
        if updated:
            status["updatedReplicas"] = updated
        status["currentRevision"] = current_rev
        status["updateRevision"] = revision
        status["collisionCount"] = 0
        status["availableReplicas"] = sum(
            1 for p in existing if not _deleting(p) and self._available(p, now, min_ready))
        if status != old:
            def put(o: Obj) -> None:
                o["status"] = status
            self._mutate(R.STATEFUL_SETS.key, _ns(sts), name, put)

    # ------------------------------------------------------------------ kubelet

    def _kubelet(self, snap: Snapshot, now: float) -> None:
        for pod in snap.pods:
            rec = self.pods.get(_uid(pod))
            if rec is None:
                continue
            sim = rec.sim
            if _deleting(pod) and sim.gone_at is not None and now >= sim.gone_at:
                if FINALIZER in (_meta(pod).get("finalizers") or []):
                    def release(o: Obj) -> None:
                        fins = [f for f in _meta(o).get("finalizers") or [] if f != FINALIZER]
                        if fins:
                            o["metadata"]["finalizers"] = fins
                        else:
                            o["metadata"].pop("finalizers", None)
                    try:
                        self._mutate(R.PODS.key, rec.namespace, rec.name, release)
                    except (NotFound, Conflict):
                        self._writes += 1
                continue
            # everything _pod_status reads besides the pod: while the pod object and these stay
            # the same, so does the status it found current last time
            inputs = (sim.created, sim.running_at, sim.ready_at, sim.deleted_at, sim.gone_at,
                      now >= sim.running_at, now >= sim.ready_at, sim.ready(now))
            if rec.status_seen is not None and rec.status_seen[0] is pod \
                    and rec.status_seen[1] == inputs:
                continue
            status = self._pod_status(pod, rec, now)
            if status == _status(pod):
                rec.status_seen = (pod, inputs)
            else:
                def put(o: Obj, status: Obj = status) -> None:
                    o["status"] = status
                try:
                    self._mutate(R.PODS.key, rec.namespace, rec.name, put)
                except (NotFound, Conflict):
                    self._writes += 1

    def _pod_status(self, pod: Obj, rec: PodRecord, now: float) -> Obj:
        sim = rec.sim
        old = _status(pod)
        spec = _spec(pod)
        running = now >= sim.running_at
        ready = sim.ready(now) or (sim.deleted_at is not None and sim.deleted_at >= sim.ready_at
                                   and now >= sim.ready_at)
        created = fmt_time(sim.created)
        ready_t = fmt_time(sim.ready_at if now >= sim.ready_at else sim.created)
        names = [c.get("name", "") for c in spec.get("containers") or [] if isinstance(c, dict)]

        def cond(type_: str, ok: bool, t: str) -> Obj:
            c: Obj = {"type": type_, "status": "True" if ok else "False", "lastProbeTime": None,
                      "lastTransitionTime": t}
            if not ok and type_ in ("Ready", "ContainersReady"):
                c["reason"] = "ContainersNotReady"
                c["message"] = f"containers with unready status: [{' '.join(names)}]"
            return c

        conditions = [
            cond("PodReadyToStartContainers", running,
                 fmt_time(sim.running_at) if running else created),
            cond("Initialized", True, created),
            cond("Ready", ready, ready_t),
            cond("ContainersReady", ready, ready_t),
            cond("PodScheduled", True, created),
        ]
        host_ip = "10.0.0.10"
        statuses = []
        for c in spec.get("containers") or []:
            if not isinstance(c, dict):
                continue
            cs: Obj = {"name": c.get("name", ""), "image": c.get("image", ""),
                       "imageID": "", "ready": ready, "restartCount": 0, "started": running,
                       "lastState": {}}
            if running:
                cs["state"] = {"running": {"startedAt": fmt_time(sim.running_at)}}
                cs["containerID"] = "containerd://" + hashlib.sha1(
                    (sim.uid + cs["name"]).encode()).hexdigest()
                cs["imageID"] = "sim://" + str(c.get("image", ""))
            else:
                cs["state"] = {"waiting": {"reason": "ContainerCreating"}}
            statuses.append(cs)
        status: Obj = {"phase": "Running" if running else "Pending", "conditions": conditions,
                       "hostIP": host_ip, "hostIPs": [{"ip": host_ip}]}
        if running:
            ip = _pod_ip(sim.uid)
            status["podIP"] = ip
            status["podIPs"] = [{"ip": ip}]
        status["startTime"] = created
        status["containerStatuses"] = statuses
        status["qosClass"] = old.get("qosClass") or _qos_class(spec)
        return status

    # ------------------------------------------------------------------ external metrics

    def _sync_external(self, snap: Snapshot, now: float) -> None:
        from pyhpa.cluster.apiserver.external_metric import read_series

        seen: set[Key] = set()
        for o in snap.external:
            key = (_ns(o), _name(o))
            seen.add(key)
            series = read_series(o)
            hist = self.external_history.setdefault(key, [])
            value = None if series is None else series
            if not hist or hist[-1][1] != value:
                hist.append((now, value))  # type: ignore[arg-type]
            # keep the entry in force at the oldest scrape anyone can still see
            cutoff = now - 2 * self.resolution
            while len(hist) > 1 and hist[1][0] <= cutoff:
                del hist[0]
        for key in [k for k in self.external_history if k not in seen and snap.covers(k[0])]:
            del self.external_history[key]

    # ------------------------------------------------------------------ scheduling

    def _schedule(self, snap: Snapshot, now: float) -> None:
        """Note when each namespace of the pass has its next pod transition, and the earliest."""
        if snap.namespaces is None:
            self._due.clear()
        else:
            for ns in snap.namespaces:
                self._due.pop(ns, None)
        due = self._due
        for rec in _scoped(self._ns_pods, snap):
            s = rec.sim
            for t in (s.running_at, s.ready_at, s.gone_at,
                      s.ready_at + rec.min_ready if rec.min_ready else None):
                if t is not None and t > now and t < due.get(rec.namespace, math.inf):
                    due[rec.namespace] = t
        self.next_due = min(due.values()) if due else None

    # ------------------------------------------------------------------ reads for the metrics APIs

    def last_scrape(self, now: float) -> float:
        """The latest scrape instant at or before ``now`` (scrapes sit on a fixed grid)."""
        return math.floor(now / self.resolution + 1e-9) * self.resolution

    def groups_in(self, namespace: str | None) -> Iterable[Group]:
        return [g for g in self.groups.values() if namespace is None or g.namespace == namespace]

    def record(self, namespace: str, name: str) -> PodRecord | None:
        for rec in self.pods.values():
            if rec.namespace == namespace and rec.name == name:
                return rec
        return None


# --------------------------------------------------------------------------- module helpers


def _requests(container: Obj) -> dict[str, str]:
    req = ((container.get("resources") or {}).get("requests") or {})
    return {str(k): str(v) for k, v in req.items()} if isinstance(req, dict) else {}


def _new_workload(ns: str, name: str, kind: str, labels: dict[str, str],
                  containers: list[ContainerTemplate], params: WorkloadParams, uid: str,
                  now: float) -> Workload:
    model_kind = "StatefulSet" if kind == "StatefulSet" else "Deployment"
    try:
        return Workload(ns, name, kind=model_kind, labels=labels or None, containers=containers,
                        params=params, replicas=0, now=now, uid=uid)
    except Exception:  # noqa: BLE001 - e.g. a request that is not a quantity: no requests then
        return Workload(ns, name, kind=model_kind, labels=labels or None,
                        containers=[ContainerTemplate(c.name) for c in containers],
                        params=params, replicas=0, now=now, uid=uid)


def _scoped(index: dict[str, dict[str, Any]], snap: Snapshot) -> list[Any]:
    """The values of a namespace -> uid -> value index in the namespaces of a pass."""
    if snap.namespaces is None:
        return [v for by_uid in index.values() for v in by_uid.values()]
    return [v for ns in snap.namespaces for v in index.get(ns, {}).values()]


def _unindex(index: dict[str, dict[str, Any]], namespace: str, uid: str) -> None:
    by_uid = index.get(namespace)
    if by_uid is not None:
        by_uid.pop(uid, None)
        if not by_uid:
            del index[namespace]


def _ordinal(pod_name: str, sts_name: str) -> int | None:
    prefix = sts_name + "-"
    if not pod_name.startswith(prefix):
        return None
    rest = pod_name[len(prefix):]
    return int(rest) if rest.isdigit() and (rest == "0" or not rest.startswith("0")) else None


def _grace_deadline(pod: Obj) -> float | None:
    """When a pod deleted through the API must be gone (deletionTimestamp, which is the delete
    time plus the grace period); None for deletes without one (the simulation's own)."""
    grace = _meta(pod).get("deletionGracePeriodSeconds")
    if not isinstance(grace, int) or grace <= 0:
        return None
    return parse_time(_meta(pod).get("deletionTimestamp"))


def _node_info() -> Obj:
    import platform

    # every field the Node schema requires (kubectl validates a List of nodes on the client)
    return {"machineID": "pyhpa-sim", "systemUUID": "pyhpa-sim", "bootID": "pyhpa-sim",
            "kernelVersion": platform.release() or "unknown", "osImage": "pyhpa simulated node",
            "containerRuntimeVersion": "pyhpa://sim", "kubeletVersion": "v1.33.1-pyhpa",
            "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"}


def _revision(rs: Obj) -> int:
    try:
        return int((_meta(rs).get("annotations") or {}).get(REVISION_ANN) or 0)
    except ValueError:
        return 0


def _qos_class(spec: Obj) -> str:
    containers = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    if not containers:
        return "BestEffort"
    any_set = False
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        if req or lim:
            any_set = True
        for r in ("cpu", "memory"):
            if r not in lim or (r in req and str(req[r]) != str(lim[r])):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def start(store: Store, clock: Callable[[], float] = time.time, **kwargs: Any) -> Simulation:
    """Build and start a :class:`Simulation` (call ``.stop()`` on the result to end it)."""
    return Simulation(store, clock, **kwargs).start()


def attach(server: Any, clock: Callable[[], float] = time.time, **kwargs: Any) -> Simulation:
    """Start a simulation on ``server.store`` and serve the metrics APIs from it on ``server``.

    The one call the API server's startup makes; ``.stop()`` the result on shutdown.
    """
    from pyhpa.cluster import metrics_api

    kwargs.setdefault("custom_scalables", server.custom.scalable)
    sim = Simulation(server.store, clock, **kwargs)
    metrics_api.install(server, sim)
    # Pods created through the API are this kubelet's too: a delete waits for their grace period.
    server.pod_finalizers = (FINALIZER,)
    server.readiness_checks["simulation"] = \
        lambda: None if sim.last_error is None else f"the last pass failed: {sim.last_error!r}"
    return sim.start()
