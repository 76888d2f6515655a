"""The embedded cluster's live workload simulation: the loop that runs the controllers and the
kubelet kube would run, against the :class:`~pyhpa.cluster.apiserver.storage.Store`, on one background thread.

Why here and not in the API server: the server only stores objects; something has to turn a
Deployment into a ReplicaSet and Pods, move the Pods through Pending -> Running -> Ready, end
them after their grace period and report their usage. Each of those is a module of this package,
as kube-controller-manager, kube-scheduler and the kubelet split them (:mod:`.deployment`,
:mod:`.replicaset`, :mod:`.statefulset`, :mod:`.daemonset`, :mod:`.job`, :mod:`.cronjob`,
:mod:`.garbage_collector`, :mod:`.scheduler`, :mod:`.kubelet`, :mod:`.node`, :mod:`.volume`,
:mod:`.resourcequota`, :mod:`.endpoints`, :mod:`.namespace`, :mod:`.external_metrics`), plus :mod:`.usage`, one :class:`~pyhpa.workload.model.Workload` model
per top-level workload, parameterised by its ``sim.pyhpa.io/*`` annotations (the same pure model
drives the virtual-clock simulator; here its clock is ``clock()``), which
:mod:`.metrics_server` reads.

Every pass is level-triggered (list, compare, write what differs), so restarts and edits made with
kubectl converge. Passes run when a relevant object changes (store watch) and when a pod's next
transition is due; an idle cluster costs one wake-up every :attr:`Simulation.idle_seconds`.
Tests drive :meth:`Simulation.settle` with an injected clock instead of starting the thread.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from typing import Any, Callable, Iterable

from pyhpa.api.schemas import BuiltinSchemas
from pyhpa.api.workload_validation import stored_object_problem
from pyhpa.cluster.apiserver import external_metric, resources as R
from pyhpa.cluster.controllers import exporters, logs, metrics_server, node
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot, scoped
from pyhpa.cluster.controllers.deployment import sync_deployment
from pyhpa.cluster.controllers.endpoints import sync_endpoints
from pyhpa.cluster.controllers.external_metrics import sync_external_metrics
from pyhpa.cluster.controllers.disruption import sync_disruption_budgets
from pyhpa.cluster.controllers.cronjob import sync_cronjob
from pyhpa.cluster.controllers.daemonset import sync_daemonset
from pyhpa.cluster.controllers.garbage_collector import collect_garbage
from pyhpa.cluster.controllers.job import sync_job
from pyhpa.cluster.controllers.kubelet import sync_pods
from pyhpa.cluster.controllers.namespace import sync_namespaces
from pyhpa.cluster.controllers.objects import FINALIZER, Obj, uid_of
from pyhpa.cluster.controllers.replicaset import sync_replica_owner, sync_scalable
from pyhpa.cluster.controllers.resourcequota import sync_quotas
from pyhpa.cluster.controllers.scheduler import schedule_pods
from pyhpa.cluster.controllers.statefulset import sync_statefulset
from pyhpa.cluster.controllers.usage import sync_usage_models
from pyhpa.cluster.controllers.volume import sync_volumes
from pyhpa.cluster.apiserver.crd import STORE_PREFIX
from pyhpa.cluster.apiserver.health import Degraded
from pyhpa.cluster.apiserver.storage import AlreadyExists, Conflict, Entry, NotFound, Store, StoreError

log = logging.getLogger(__name__)

# Kinds whose changes can require work (other writes, e.g. Events and Leases, wake nothing).
# A CRD write wakes a pass too: it may define a scalable kind, whose key is then watched.
_EXTERNAL_METRICS_KEY = R.EXTERNAL_METRIC_OBJECTS.key
WATCHED_KEYS = frozenset({R.DEPLOYMENTS.key, R.REPLICA_SETS.key, R.STATEFUL_SETS.key,
                          R.REPLICATION_CONTROLLERS.key, R.SCALABLES.key, R.PODS.key,
                          R.NODES.key, _EXTERNAL_METRICS_KEY, R.CRDS.key, R.PDBS.key,
                          R.JOBS.key, R.CRONJOBS.key, R.DAEMON_SETS.key,
                          R.PERSISTENT_VOLUME_CLAIMS.key,
                          R.PERSISTENT_VOLUMES.key, R.RESOURCE_QUOTAS.key, R.SERVICES.key,
                          R.NAMESPACES.key})
# The kinds a pass reads from the namespaces it covers (Nodes from all, scalables apart).
_SIMULATED = (R.DEPLOYMENTS, R.REPLICA_SETS, R.STATEFUL_SETS, R.REPLICATION_CONTROLLERS, R.PODS,
              R.JOBS, R.CRONJOBS, R.DAEMON_SETS)


class Simulation(SimulationContext):
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

    def __init__(self, store: Store, clock: Callable[[], float] = time.time, **kwargs: Any) -> None:
        super().__init__(store, clock, **kwargs)
        self._watched: frozenset[str] = WATCHED_KEYS
        # what a stored object is checked against before a pass reads it (the server's schemas)
        self.validation_schemas = self.schemas if self.schemas is not None else BuiltinSchemas.build()
        self.next_due: float | None = None
        self._due: dict[str, float] = {}  # namespace -> its next pod transition
        # the store's resourceVersion when the last pass read it: a pass that wrote nothing
        # has seen every change up to there (in its namespaces), so the events of those changes
        # (the simulation's own writes, mostly) need no other pass
        self._read_rv = 0
        self._settled_rv = 0  # ... by a pass over every namespace
        self._ns_settled: dict[str, int] = {}  # ... by a pass over some namespaces
        # key -> namespace -> name -> (store entry, the dict decoded from it); passes only read
        # these dicts (writes go through mutate_object's copy), so an unchanged object is decoded once
        self._decoded: dict[str, dict[str, dict[str, tuple[Entry, Obj]]]] = {}
        # key -> (namespace, name) -> (store entry, why the API server would refuse it, or None)
        self._checked: dict[str, dict[tuple[str, str], tuple[Entry, str | None]]] = {}
        self.passes = 0
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._watch: Any = None  # the background thread's store watch
        # set once the background thread's first pass over everything is over: the model of
        # every stored object is built (`pyhpa cluster` then freezes that heap for the GC)
        self.started_up = threading.Event()
        self.last_error: BaseException | None = None
        # "namespace/resource/name" -> why: the objects the passes leave out (see _list)
        self.skipped: dict[str, str] = {}
        # "uid@resourceVersion" -> why: objects whose sync failed, left out until they change
        self._failed: dict[str, str] = {}

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

    def readiness(self) -> str | Degraded | None:
        """The ``simulation`` line of ``/readyz``: failed when a whole pass failed; the objects
        the passes leave out are listed without failing it (every other object is simulated)."""
        if self.last_error is not None:
            return f"the last pass failed: {type(self.last_error).__name__}"
        skipped = dict(self.skipped)
        if skipped:
            return Degraded(tuple(f"{where}: {why}" for where, why in sorted(skipped.items())))
        return None

    def wake(self) -> None:
        """Ask the background thread for a pass now (e.g. after a write it cannot see)."""
        self._wake.set()

    def ensure_node(self) -> None:
        """Create the simulated nodes that are missing (``kubectl top nodes`` reads them)."""
        node.ensure_node(self)

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
            self.writes = 0
            self._read_rv = self.store.resource_version
            snap = self._snapshot(None if namespaces is None else frozenset(namespaces))
            self.advance_pipelines(now, snap)
            sync_usage_models(self, snap, now)
            sync_external_metrics(self, snap, now)
            collect_garbage(self, snap, now)
            for dep in snap.deployments:
                self._guard(sync_deployment, dep, snap, now)
            for rs in snap.replicasets:
                self._guard(sync_replica_owner, rs, "ReplicaSet", snap, now)
            for rc in snap.rcs:
                self._guard(sync_replica_owner, rc, "ReplicationController", snap, now)
            for sc in snap.scalables:
                self._guard(sync_scalable, sc, snap.scalable_of[uid_of(sc)], snap, now)
            for sts in snap.statefulsets:
                self._guard(sync_statefulset, sts, snap, now)
            for ds in snap.daemonsets:
                self._guard(sync_daemonset, ds, snap, now)
            timed: dict[str, float] = {}  # namespace -> when a Job or CronJob is next due
            for obj, sync in [*((j, sync_job) for j in snap.jobs),
                              *((c, sync_cronjob) for c in snap.cronjobs)]:
                due = self._guard(sync, obj, snap, now)
                ns = obj.get("metadata", {}).get("namespace") or ""
                if isinstance(due, (int, float)) and due < timed.get(ns, math.inf):
                    timed[ns] = due
            schedule_pods(self, snap, now)
            sync_pods(self, snap, now)
            for sync in (sync_volumes, sync_quotas, sync_endpoints, sync_namespaces):
                try:
                    sync(self, snap, now)
                except (Conflict, NotFound, AlreadyExists):
                    self.writes += 1
            try:
                sync_disruption_budgets(self, snap, now)
            except (Conflict, NotFound):
                self.writes += 1
            lease_due = node.renew_lease(self, now) if self.create_node else None
            self._schedule(snap, now, lease_due, timed)
            self.passes += 1
            return self.writes

    def _guard(self, sync: Callable[..., Any], obj: Obj, *args: Any) -> Any:
        """Run one object's sync; a store conflict means the world moved: another pass. Any
        other failure leaves the object (and its family) out of the passes until it changes,
        reported as invalid stored objects are, so it cannot stop every other object's."""
        try:
            return sync(self, obj, *args)
        except (Conflict, NotFound, AlreadyExists):
            self.writes += 1
        except StoreError as exc:
            log.warning("simulation: %s", exc)
        except Exception as exc:  # noqa: BLE001 - one object's failure is reported on it
            log.debug("simulation: syncing %s failed", _uid(obj), exc_info=True)
            why = f"the simulation failed on it: {type(exc).__name__}: {exc}"
            self._failed[_version(obj)] = why
            self.writes += 1  # the next pass leaves it out

    def _snapshot(self, namespaces: frozenset[str] | None = None) -> Snapshot:
        problems: dict[str, str] = {}  # uid -> what the shape check found wrong with it

        def ls(res: R.Resource, scope: frozenset[str] | None) -> list[Obj]:
            return self._list(res.key, scope, res, problems)
        scalables: list[Obj] = []
        scalable_of: dict[str, R.Resource] = {}
        kinds = [R.SCALABLES, *self.custom_scalables()]
        for res in kinds:
            for obj in ls(res, namespaces):
                scalables.append(obj)
                scalable_of[_uid(obj)] = res
        self._watched = WATCHED_KEYS | {res.key for res in kinds}
        lists = {res: ls(res, namespaces) for res in _SIMULATED}
        lists[R.NODES] = ls(R.NODES, None)
        lists[R.SCALABLES] = scalables
        # ExternalMetrics the metrics APIs cannot serve are skipped like unreadable workloads
        lists[R.EXTERNAL_METRIC_OBJECTS] = external = self._list(_EXTERNAL_METRICS_KEY, namespaces)
        for obj in external:
            why = external_metric.unreadable(obj)
            if why is not None:
                problems[_uid(obj)] = why
        lists = self._leave_out_unreadable(lists, problems, scalable_of, namespaces)
        return Snapshot(lists[R.DEPLOYMENTS], lists[R.REPLICA_SETS], lists[R.STATEFUL_SETS],
                        lists[R.REPLICATION_CONTROLLERS], lists[R.SCALABLES], lists[R.PODS],
                        lists[R.NODES], lists[R.EXTERNAL_METRIC_OBJECTS],
                        scalable_of, frozenset(res.kind for res in kinds), namespaces,
                        jobs=lists[R.JOBS], cronjobs=lists[R.CRONJOBS],
                        daemonsets=lists[R.DAEMON_SETS]).index()

    def _leave_out_unreadable(self, lists: dict[R.Resource, list[Obj]], problems: dict[str, str],
                              scalable_of: dict[str, R.Resource],
                              namespaces: frozenset[str] | None) -> dict[R.Resource, list[Obj]]:
        """``lists`` without the objects the controllers cannot read (``problems``, from
        what the API server's validation refuses, and those whose sync failed) and their families, each recorded in
        :attr:`skipped` (an Event on it when newly so)."""
        found: dict[str, tuple[Obj, R.Resource, str]] = {}  # uid -> (object, its kind, why)
        failed = self._failed
        for res, objs in lists.items():
            for o in objs:
                uid = _uid(o)
                why = problems.get(uid) or (failed.get(_version(o)) if failed else None)
                if why is not None:
                    found[uid] = (o, scalable_of.get(uid, res), why)
        if namespaces is None and failed:  # forget the failures of objects changed or gone
            self._failed = {v: why for objs in lists.values() for o in objs
                            if (why := failed.get(v := _version(o))) is not None}
        if found:
            left_out = _families(set(found), lists)
            lists = {res: [o for o in objs if _uid(o) not in left_out]
                     for res, objs in lists.items()}
        if found or self.skipped:
            self._report_skipped(found, namespaces)
        return lists

    def _report_skipped(self, found: dict[str, tuple[Obj, R.Resource, str]],
                        namespaces: frozenset[str] | None) -> None:
        skipped = {k: v for k, v in self.skipped.items()
                   if namespaces is not None and k.count("/") == 2
                   and k.split("/", 1)[0] not in namespaces}
        for uid, (o, res, why) in found.items():
            meta = o.get("metadata") if isinstance(o, dict) else None
            meta = meta if isinstance(meta, dict) else {}
            ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
            where = f"{ns}/{res.resource}/{name}" if ns else f"{res.resource}/{name}"
            skipped[where] = why
            if self.skipped.get(where) != why and uid and isinstance(o, dict):
                log.warning("simulation: skipping %s: %s", where, why)
                self.event(o, "SimulationFailed", f"the simulation skips this object: {why}",
                           "pyhpa-simulation", "Warning")
        self.skipped = skipped

    def _list(self, key: str, namespaces: frozenset[str] | None, res: R.Resource | None = None,
              problems: dict[str, str] | None = None) -> list[Obj]:
        """The objects of one kind in ``namespaces`` (None: all), sorted like Store.list; only
        those written since the last pass are decoded again, and (given their resource ``res``)
        checked again against the API server's validation: what it would refuse is added to
        ``problems`` by uid."""
        cached = self._decoded.get(key, {})
        checks = self._checked.get(key, {})
        # a pass over everything keeps only the checks of the objects it saw
        checked_now = {} if namespaces is None else checks
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
            if hit is None or hit[0].rv != entry.rv:  # written since it was decoded
                hit = (entry, entry.obj())
            names = fresh.get(ns)
            if names is None:
                names = fresh[ns] = {}
            names[name] = hit
            out.append(hit[1])
            if res is not None and problems is not None:
                checked = checks.get((ns, name))
                if checked is None or checked[0].rv != entry.rv:
                    checked = (entry, stored_object_problem(
                        self.validation_schemas, res.group, res.storage_version, res.kind, hit[1]))
                checked_now[(ns, name)] = checked
                if checked[1] is not None:
                    problems[_uid(hit[1])] = checked[1]
        self._decoded[key] = fresh
        if res is not None:
            self._checked[key] = checked_now
        return out

    def _schedule(self, snap: Snapshot, now: float, lease_due: float | None = None,
                  timed: dict[str, float] | None = None) -> None:
        """Note when each namespace of the pass has its next pod transition, and the earliest
        (the node's Lease renewal counts as one of its namespace's, and so do ``timed``: the
        deadlines, TTLs and schedules of its Jobs and CronJobs)."""
        if snap.namespaces is None:
            self._due.clear()
        else:
            for ns in snap.namespaces:
                self._due.pop(ns, None)
        due = self._due
        for rec in scoped(self.pods_by_ns, snap):
            s = rec.sim
            for t in (s.running_at, s.ready_at, s.gone_at, rec.kubelet_due,
                      s.ready_at + rec.min_ready if rec.min_ready else None):
                if t is not None and now < t < due.get(rec.namespace, math.inf):
                    due[rec.namespace] = t
        if lease_due is not None:
            due[node.LEASE_NAMESPACE] = lease_due
        for ns, t in (timed or {}).items():
            if now < t < due.get(ns, math.inf):
                due[ns] = t
        self.next_due = min(due.values()) if due else None


def _version(o: Obj) -> str:
    """An object's uid and resourceVersion: a failure is remembered until the object changes."""
    meta = o.get("metadata") if isinstance(o, dict) else None
    return f"{_uid(o)}@{meta.get('resourceVersion') if isinstance(meta, dict) else None}"


def _uid(o: Any) -> str:
    meta = o.get("metadata") if isinstance(o, dict) else None
    uid = meta.get("uid") if isinstance(meta, dict) else None
    return uid if isinstance(uid, str) else ""


def _controller_uid(o: Obj) -> str | None:
    """The uid of ``o``'s controller, read as warily as an unchecked object must be."""
    refs = o.get("metadata", {}).get("ownerReferences") if isinstance(o.get("metadata"), dict) \
        else None
    for ref in refs if isinstance(refs, list) else ():
        if isinstance(ref, dict) and ref.get("controller") is True:
            uid = ref.get("uid")
            return uid if isinstance(uid, str) and uid else None
    return None


def _families(bad: set[str], lists: dict[R.Resource, list[Obj]]) -> set[str]:
    """The uids of every object related to one of ``bad`` by controller references (up to the
    top-level workload, and everything under that): a pass that saw only part of a family would
    collect the rest as orphans or create what already exists."""
    owner_of = {_uid(o): c for objs in lists.values() for o in objs
                if (c := _controller_uid(o)) is not None}

    def top(uid: str) -> str:
        seen = set()
        while uid in owner_of and uid not in seen:
            seen.add(uid)
            uid = owner_of[uid]
        return uid

    bad_tops = {top(uid) for uid in bad}
    return {uid for objs in lists.values() for o in objs if top(uid := _uid(o)) in bad_tops}


def start(store: Store, clock: Callable[[], float] = time.time, **kwargs: Any) -> Simulation:
    """Build and start a :class:`Simulation` (call ``.stop()`` on the result to end it)."""
    return Simulation(store, clock, **kwargs).start()


def attach(server: Any, clock: Callable[[], float] = time.time, **kwargs: Any) -> Simulation:
    """Start a simulation on ``server.store`` and serve the metrics APIs from it on ``server``.

    The one call the API server's startup makes; ``.stop()`` the result on shutdown.
    """
    kwargs.setdefault("custom_scalables", server.custom.scalable)
    kwargs.setdefault("kubelet_version", server.version_profile.git_version)
    kwargs.setdefault("schemas", server.schemas)
    sim = Simulation(server.store, clock, **kwargs)
    metrics_server.install(server, sim)
    exporters.install(server, sim)  # cAdvisor, kube-state-metrics, app metrics for Prometheus
    server.pod_io.logs = functools.partial(logs.container_log, sim)  # kubectl logs
    server.pod_io.clock = clock
    # Pods created through the API are this kubelet's too: a delete waits for their grace period.
    server.pod_finalizers = (FINALIZER,)
    server.readiness_checks["simulation"] = sim.readiness
    return sim.start()
