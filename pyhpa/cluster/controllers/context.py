"""What every controller of the simulation shares: the store, the clock, the usage models of the
workloads and pods, and the few ways a pass writes.

Why one shared context: the controllers here are functions of (context, snapshot, now), as
kube-controller-manager's controllers share one client and informer factory. The loop that runs
them (:mod:`~pyhpa.cluster.controllers.simulation`) builds on this class; the controllers and the
metrics APIs only import this module, so none of them imports the loop or each other in a cycle.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from pyhpa.api.schemas import BuiltinSchemas
from pyhpa.api.timefmt import format_epoch
from pyhpa.api.versions import pyhpa_profile
from pyhpa.cluster.apiserver import managed_fields as managed
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.fieldpath import Shape, shapes_of
from pyhpa.cluster.controllers.objects import (
    NODE_CAPACITY, Key, Obj, controller_ref, meta_of, node_names, uid_of,
)
from pyhpa.cluster.apiserver.external_metric import ExternalSeries
from pyhpa.cluster.apiserver.storage import Conflict, NotFound, Store, StoreError
from pyhpa.workload.model import SimPod, Workload, ready_condition
from pyhpa.workload.nodes import NodeShares
from pyhpa.workload.placement import NodeLoad
from pyhpa.workload.pipeline import MetricsPipeline


# The most pods the simulation keeps for one workload (a ReplicaSet, StatefulSet, ...), and in
# all: a Deployment of 2^40 replicas must not fill the disk with pods (`pyhpa cluster` flags).
MAX_PODS_PER_WORKLOAD = 1000
MAX_PODS = 5000


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
    # the resourceVersion of the top object this group was last synced from
    synced: str | None = field(default=None, repr=False, compare=False)


@dataclass
class Restarts:
    """Containers of a pod that were OOMKilled and are restarted with back-off, as the kubelet
    does (what ``restartCount`` and ``lastState`` report). Times are epoch seconds."""

    started: float  # when the running (or last) container started
    count: int = 0  # restarts so far
    killed: tuple[str, ...] = ()  # the containers the last kill hit
    last_started: float | None = None  # the killed container's start ...
    last_finished: float | None = None  # ... and end
    kill_at: float | None = None  # when the running container, over its limit, is killed
    back_off_until: float | None = None  # when the killed containers start again


@dataclass
class PodRecord:
    sim: SimPod
    group: str  # Group uid
    namespace: str
    name: str
    labels: dict[str, str]
    node: str  # "" while the pod waits for one
    grace: float  # its terminationGracePeriodSeconds: the longest its termination may take
    min_ready: float = 0.0
    scheduled_at: float | None = None  # when it was bound to its node (None: before we knew)
    restarts: Restarts | None = None  # once a container was OOMKilled
    requests: tuple[int, int] = (0, 0)  # (CPU milli, memory bytes) it takes on its node
    schedulable: bool = True  # the default scheduler places it (its schedulerName is that)
    unschedulable: str | None = None  # why the scheduler found it no node, as last reported
    kubelet_due: float | None = None  # when the kubelet next kills or restarts a container
    stopping_reported: bool = False  # its deletion's Killing events are recorded
    # (since, the containers held at their CPU limit from then on), oldest first: what its
    # log says of throttling (see logs.py)
    throttled: list[tuple[float, tuple[str, ...]]] = field(default_factory=list)
    # memos of the last pass, by the pod's resourceVersion: the pod its labels and deletion were
    # taken from; the pod and inputs its status was found current for
    seen: str | None = field(default=None, repr=False, compare=False)
    pod: Obj | None = field(default=None, repr=False, compare=False)  # as of ``seen`` (exporters, logs)
    status_seen: tuple[str, tuple] | None = field(default=None, repr=False, compare=False)


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
    # what the pods bound to each schedulable node request (see scheduler.place)
    node_load: dict[str, "NodeLoad"] | None = None
    waiting: int = 0  # pods that wait for a node (counted with node_load)
    jobs: list[Obj] = field(default_factory=list)
    cronjobs: list[Obj] = field(default_factory=list)
    daemonsets: list[Obj] = field(default_factory=list)

    def index(self) -> "Snapshot":
        for objs in (self.deployments, self.replicasets, self.statefulsets, self.rcs,
                     self.scalables, self.jobs, self.cronjobs, self.daemonsets):
            for o in objs:
                self.by_uid[uid_of(o)] = o
        for p in self.pods:
            ref = controller_ref(p)
            if ref is not None:
                self.pods_by_owner.setdefault(ref.get("uid") or "", []).append(p)
        return self

    def covers(self, namespace: str) -> bool:
        return self.namespaces is None or namespace in self.namespaces


class SimulationContext:
    """The state the controllers share and the writes they make, counted in :attr:`writes` (a
    pass that wrote nothing has converged).

    ``resolution``/``window``: the metrics-server-like pipeline scrapes every ``resolution``
    seconds and reports averages over ``window`` seconds. ``clock`` is wall time in epoch seconds.
    """

    RECORDED_EVENTS = 4096  # how many recent events a repeat is looked for among

    def __init__(self, store: Store, clock: Callable[[], float] = time.time, *,
                 resolution: float = 5.0, window: float = 15.0, nodes: int = 1,
                 node_capacity: dict[str, str] | None = None,
                 create_node: bool = True, events: bool = True,
                 custom_scalables: Callable[[], list[R.Resource]] | None = None,
                 max_pods_per_workload: int = MAX_PODS_PER_WORKLOAD,
                 max_pods: int = MAX_PODS, kubelet_version: str = pyhpa_profile().git_version,
                 schemas: BuiltinSchemas | None = None) -> None:
        self.store = store
        # the served kinds' schemas (the API server's), which say what managedFields track per
        # list element; without them every list is one leaf
        self.schemas = schemas
        self.kubelet_version = kubelet_version  # the node's, as the API server reports its own
        # the bounds of what the simulation creates (see pod_control.pods_to_create)
        self.max_pods_per_workload = max_pods_per_workload
        self.max_pods = max_pods
        # The CRD-defined kinds with a scale subresource (pyhpa.cluster.apiserver.crd), asked every pass.
        self.custom_scalables = custom_scalables or (lambda: [])
        self.clock = clock
        self.resolution = float(resolution)
        self.window = float(window)
        # the simulated nodes (`pyhpa cluster --nodes`, `--node-capacity`): pyhpa-node,
        # pyhpa-node-2, ...; each with that capacity
        self.node_names = node_names(nodes)
        self.node_capacity = dict(node_capacity or NODE_CAPACITY)
        self.create_node = create_node
        self.events = events
        self.lock = threading.RLock()
        self.groups: dict[str, Group] = {}
        self.pods: dict[str, PodRecord] = {}  # pod uid -> record
        # the nodes' allocatable CPU, shared by the pods bound to them (every group's workload
        # joins it): one CPU model for top, the metrics APIs, the HPA and the cAdvisor counters
        self.shares = NodeShares()
        # the same by namespace -> uid, so a pass over some namespaces visits only theirs
        self.groups_by_ns: dict[str, dict[str, Group]] = {}
        self.pods_by_ns: dict[str, dict[str, PodRecord]] = {}
        # ExternalMetric (namespace, name) -> (since, its series or None when invalid), oldest first
        self.external_history: dict[Key, list[tuple[float, ExternalSeries | None]]] = {}
        self.writes = 0  # by the current pass
        self.warned: set[tuple[str, str]] = set()  # (uid, message) of the warnings logged
        self.lease_renewed: float | None = None  # when our nodes' Leases were last renewed
        # whether the scheduler has work: a bound pod or a node changed since it last found
        # the waiting pods no node (room_freed), or pods wait that it has not tried (new_waiting)
        self.room_freed = True
        self.nodes_seen: tuple = ()  # (name, resourceVersion) of the nodes it saw then
        self.new_waiting: list[PodRecord] = []
        # whether every waiting pod was found no node against the nodes' loads as they are now
        # and reported so: then only new waiting pods need a look (see scheduler.schedule_pods)
        self.waiting_settled = False
        # DaemonSet/StatefulSet uid -> the ControllerRevision last recorded as its latest (history.py)
        self.revisions_recorded: dict[str, str] = {}
        self._event_seq = 0
        # the events recorded lately, to count up instead of repeating (oldest first)
        self._recorded: dict[tuple, str] = {}

    # ------------------------------------------------------------------ writes

    def create_object(self, key: str, obj: Obj, *, manager: str) -> Obj:
        """Create ``obj`` as ``manager`` (recorded in its managedFields, as upstream's
        components are by their User-Agent)."""
        self.writes += 1
        api_version = _api_version(key, obj)
        managed.record_create(obj, manager, api_version, self.field_shape(obj, api_version))
        return self.store.create(key, obj)

    def mutate_object(self, key: str, ns: str, name: str, fn: Callable[[Obj], None], *,
                      manager: str, subresource: str = "") -> Obj:
        """Apply ``fn`` to a fresh copy of the stored object and write it back if it changed,
        as ``manager`` through ``subresource`` (``"status"`` for a status write; ``manager``
        empty: a write upstream keeps out of managedFields, such as a Binding)."""
        entry = self.store.get_entry(key, ns, name)
        before, after = entry.obj(), entry.obj()  # a second decode: the deep copy to change
        fn(after)
        if after == before:
            return before
        self.writes += 1
        if manager:
            api_version = _api_version(key, before)
            managed.record_update(after, before, manager, api_version, subresource,
                                  self.field_shape(before, api_version))
        return self.store.update(key, after)

    def field_shape(self, obj: Obj, api_version: str) -> Shape:
        """Where ``obj`` sits in its kind's schema, for its managedFields."""
        kind = obj.get("kind")
        return shapes_of(self.schemas, kind)(api_version) if isinstance(kind, str) else None

    def delete_object(self, key: str, ns: str, name: str, uid: str | None = None,
                      grace: int | None = None) -> None:
        self.writes += 1
        try:
            self.store.delete(key, ns, name, uid=uid, grace_seconds=grace)
        except (NotFound, Conflict):
            pass

    def event(self, obj: Obj, reason: str, message: str, component: str,
              type_: str = "Normal", *, host: str = "", field_path: str = "") -> None:
        """Record a core/v1 Event on ``obj`` (what the kube components' recorders do); the same
        event again counts up the one recorded, as their correlators do."""
        if not self.events:
            return
        now = self.clock()
        meta = meta_of(obj)
        ts = format_epoch(now)
        ns = meta.get("namespace") or "default"
        key = (meta.get("uid"), reason, message, component, field_path, type_)
        seen = self._recorded.pop(key, None)
        if seen is not None:
            def again(ev: Obj) -> None:
                ev["count"] = int(ev.get("count") or 1) + 1
                ev["lastTimestamp"] = ts
                managed.record(ev, event_manager(component), "Update", "v1",
                               {("count",), ("lastTimestamp",)})
            try:
                self.store.guaranteed_update(R.EVENTS.key, ns, seen, again)
                self._recorded[key] = seen
                return
            except StoreError:
                pass  # gone (events expire): record it anew
        self._event_seq += 1
        name = f"{meta.get('name')}.{int(now * 1e9) + self._event_seq:x}"
        involved: Obj = {"kind": obj.get("kind"), "namespace": meta.get("namespace"),
                         "name": meta.get("name"), "uid": meta.get("uid"),
                         "apiVersion": obj.get("apiVersion"),
                         "resourceVersion": meta.get("resourceVersion")}
        if field_path:
            involved["fieldPath"] = field_path
        source: Obj = {"component": component}
        if host:
            source["host"] = host
        ev = {"apiVersion": "v1", "kind": "Event",
              "metadata": {"name": name, "namespace": ns},
              "involvedObject": involved,
              "reason": reason, "message": message, "source": source,
              "firstTimestamp": ts, "lastTimestamp": ts, "count": 1, "type": type_,
              "eventTime": None, "reportingComponent": component, "reportingInstance": host}
        managed.record_create(ev, event_manager(component), "v1")
        try:
            self.store.create(R.EVENTS.key, ev)  # not counted: events never need another pass
        except StoreError:
            return
        self._recorded[key] = name
        if len(self._recorded) > self.RECORDED_EVENTS:
            del self._recorded[next(iter(self._recorded))]  # the least recently recorded

    # ------------------------------------------------------------------ pods in the model

    def sim_pod(self, pod: Obj) -> SimPod | None:
        rec = self.pods.get(uid_of(pod))
        return rec.sim if rec is not None else None

    def pod_ready(self, pod: Obj, now: float) -> bool:
        """The pod's Ready condition is True (upstream's podutil.IsPodReady)."""
        sim = self.sim_pod(pod)
        return sim is not None and ready_condition(sim, now)[0]

    def pod_available(self, pod: Obj, now: float, min_ready: float) -> bool:
        """Ready for at least ``min_ready`` seconds (upstream's podutil.IsPodAvailable)."""
        sim = self.sim_pod(pod)
        if sim is None:
            return False
        ready, since = ready_condition(sim, now)
        return ready and now >= since + min_ready

    def mark_deleted(self, rec: PodRecord, now: float, limit: float | None = None) -> None:
        """The pod terminates from ``now`` for its workload's termination time, no longer than
        its grace period, and no later than ``limit`` (the end of the grace period its delete
        asked for)."""
        g = self.groups.get(rec.group)
        took = min(g.workload.params.termination_seconds if g is not None else rec.grace,
                   rec.grace)
        gone = now + took if limit is None else max(now, min(now + took, limit))
        if g is not None:
            g.workload.mark_deleted(rec.sim, now, gone)
        else:
            rec.sim.deleted_at, rec.sim.gone_at = now, gone

    def start_pod(self, rec: PodRecord, node: str, now: float) -> None:
        """The pod is bound to ``node`` at ``now``: from here it takes its workload's pending
        and startup times to run and turn Ready."""
        rec.node, rec.scheduled_at = node, now
        rec.sim.node = node  # from now on it shares that node's CPU
        self.waiting_settled = False  # its requests count on the node from now on
        g = self.groups.get(rec.group)
        params = g.workload.params if g is not None else None
        running_at, ready_at = params.pod_times(now) if params is not None else (now, now)
        if g is not None:
            g.workload.set_times(rec.sim, running_at, ready_at)
        else:
            rec.sim.running_at, rec.sim.ready_at = running_at, ready_at

    # ------------------------------------------------------------------ reads for the metrics APIs

    def advance_pipelines(self, now: float, snap: Snapshot | None = None) -> None:
        groups = self.groups.values() if snap is None else scoped(self.groups_by_ns, snap)
        for g in groups:
            g.pipeline.advance(now)

    def refresh(self, now: float | None = None) -> float:
        """Bring every metrics pipeline up to ``now`` (metrics API reads call this); returns now."""
        with self.lock:
            now = self.clock() if now is None else now
            self.advance_pipelines(now)
            return now

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


def event_manager(component: str) -> str:
    """Who writes the Events a component reports: the process it runs in upstream (the
    controllers' recorders run inside kube-controller-manager; our own reports keep their name)."""
    if component in (managed.KUBELET, "pyhpa-simulation"):
        return component
    if component == "default-scheduler":
        return managed.KUBE_SCHEDULER
    return managed.KUBE_CONTROLLER_MANAGER


def _api_version(key: str, obj: Obj) -> str:
    """The apiVersion a stored object is kept in: its own, else its store key's
    (``apps/v1/replicasets``)."""
    return str(obj.get("apiVersion") or key.rpartition("/")[0])


def scoped(index: dict[str, dict[str, Any]], snap: Snapshot) -> list[Any]:
    """The values of a namespace -> uid -> value index in the namespaces of a pass."""
    if snap.namespaces is None:
        return [v for by_uid in index.values() for v in by_uid.values()]
    return [v for ns in snap.namespaces for v in index.get(ns, {}).values()]


def listed_in(store: Store, key: str, snap: Snapshot) -> list[Any]:
    """The stored objects of resource ``key`` in the namespaces of a pass, namespace by namespace."""
    if snap.namespaces is None:
        return store.list(key).items
    return [o for ns in sorted(snap.namespaces) for o in store.list(key, namespace=ns).items]


def unindex(index: dict[str, dict[str, Any]], namespace: str, uid: str) -> None:
    by_uid = index.get(namespace)
    if by_uid is not None:
        by_uid.pop(uid, None)
        if not by_uid:
            del index[namespace]
