"""The live HPA controller: informers feed a work queue, N workers reconcile one HPA each.

Mechanics are upstream's (upstream's horizontal.go Run and worker): every HPA add/update/resync is a rate-limited add (the HPA
is processed one sync period later), every processed key is re-added rate-limited, errors do
not retry faster, a key is never processed by two workers at once, a deleted HPA's memory is
dropped. With KEP-6003 (gate HPAConfigurableSyncPeriod) "one sync period" is the HPA's own
``spec.behavior.syncPeriodSeconds`` when set, and a spec change is queued at once. What
differs, on purpose:
* reads come from informer caches (HPAs, pods, built-in workloads) and resource metrics are
  listed once per namespace per sync, so the steady state costs well under one request per HPA;
* the per-HPA memory (recommendations, scale events) is persisted per namespace in a Lease
  (see :mod:`pyhpa.adapters.kube.state`) and reloaded when this replica starts leading, so a
  restart or failover keeps stabilization windows;
* HPAs of a group no API server validates (our `pyhpa.io` CRD) are defaulted and validated here
  (:mod:`pyhpa.controller.admission`); an invalid one is reported, never acted on.

Start-up waits for the HPA and pod caches without a deadline, as upstream does: a big or slow
cluster takes as long as it takes (progress is logged and `/readyz` says so). `/healthz` turns
unhealthy when no HPA has been processed for several sync periods while there are HPAs.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import socket
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable


from pyhpa.adapters.tasks import cancel_and_wait, raise_if_cancelling
from pyhpa.adapters.kube.client import KubeClient
from pyhpa.adapters.kube.discovery import Discovery
from pyhpa.adapters.kube.informer import Informer
from pyhpa.adapters.kube.metrics_api import MetricsApi, SharedPodMetrics
from pyhpa.adapters.kube.ports import (
    KubeEvents,
    KubeMetrics,
    KubePods,
    KubeScales,
    KubeStatusWriter,
    cached_hpa,
    cached_pod,
    share_pod_parts,
)
from pyhpa.adapters.kube.state import LeaseStateStore
from pyhpa.adapters.kube.write_scope import WRITING_FOR
from pyhpa.adapters.memory import MemoryStateStore
from pyhpa.adapters.selector_index import IndexedSelectorRegistry
from pyhpa.api.codec import loads_json
from pyhpa.api.types import METRIC_TYPES, HorizontalPodAutoscaler, PodView, hpa_key
from pyhpa.controller.admission import admit
from pyhpa.controller.ports import Ports
from pyhpa.controller.reconcile import reconcile_hpa, report_invalid
from pyhpa.controller.suspend import SUSPEND_ANNOTATION
from pyhpa.controller.sync_period import own_sync_period
from pyhpa.engine.trace import DecisionTrace, kep6107_decision
from pyhpa.live.connectivity import ApiServerStatus
from pyhpa.live.metrics import ControllerMetrics
from pyhpa.live.queue import ShutDown, WorkQueue

log = logging.getLogger("pyhpa.controller")
SYNC_PROGRESS_INTERVAL = 10.0  # seconds between "waiting for caches" log lines
STALL_SYNC_PERIODS = 3  # /healthz: no HPA processed for this many sync periods (at least STALL_MIN)
STALL_MIN = 30.0


def default_identity() -> str:
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass
class ControllerOptions:
    sync_period: float = 15.0  # --horizontal-pod-autoscaler-sync-period
    workers: int = 5  # --concurrent-horizontal-pod-autoscaler-syncs
    hpa_group_version: str = "autoscaling/v2"  # --hpa-api-group pyhpa.io selects "pyhpa.io/v1"
    identity: str = field(default_factory=default_identity)
    persist_state: bool = True
    state_flush_period: float | None = None  # default: the sync period
    use_informers: bool = True  # False: upstream-like GETs of /scale (for comparison)

    @property
    def hpa_group(self) -> str:
        return self.hpa_group_version.rpartition("/")[0]

    def validate(self) -> None:
        if self.workers < 1:
            raise ValueError(
                f"concurrent-horizontal-pod-autoscaler-syncs must be greater than 0, but got {self.workers}")
        if self.sync_period <= 0:
            raise ValueError("--horizontal-pod-autoscaler-sync-period must be greater than 0")


@dataclass
class Outcome:
    action: str = "none"
    error: str = "none"


class HPAController:
    def __init__(
        self,
        client: KubeClient,
        config: Any,
        options: ControllerOptions | None = None,
        metrics: ControllerMetrics | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
    ) -> None:
        self.client = client
        self.config = config
        self.options = options or ControllerOptions()
        self.options.validate()
        self.metrics = metrics or ControllerMetrics()
        self.clock = clock
        opts = self.options
        group_version = opts.hpa_group_version
        self.hpa_base = f"/apis/{group_version}"
        self.discovery = Discovery(client)
        self.metrics_api = MetricsApi(client, self.discovery)
        self.shared_pod_metrics = SharedPodMetrics(self.metrics_api, ttl=opts.sync_period * 0.9)
        self.hpa_informer: Informer[HorizontalPodAutoscaler] = Informer(
            client, f"{self.hpa_base}/horizontalpodautoscalers", HorizontalPodAutoscaler, name="hpas",
            index_labels=False, decode_item=decode_hpa, transform=cached_hpa)
        self.pod_informer: Informer[PodView] = Informer(client, "/api/v1/pods", PodView, name="pods",
                                                        transform=cached_pod, share=share_pod_parts)
        self.scales = KubeScales(client, self.discovery, use_informers=opts.use_informers)
        self.events = KubeEvents(client, host=opts.identity.split("_")[0])
        if opts.persist_state:
            self.state: Any = LeaseStateStore(client, identity=opts.identity,
                                              flush_period=opts.state_flush_period or opts.sync_period,
                                              group=opts.hpa_group, uid_of=self._uid_of)
        else:
            self.state = MemoryStateStore()
        self.selectors = IndexedSelectorRegistry()
        self.status_writer = KubeStatusWriter(client, self.hpa_base)
        self.ports = Ports(
            scales=self.scales,
            pods=KubePods(self.pod_informer),
            metrics=TimedMetrics(KubeMetrics(self.metrics_api, self.shared_pod_metrics)),
            status=self.status_writer,
            events=self.events,
            state=self.state,
            selectors=self.selectors,
        )
        self.queue = WorkQueue(opts.sync_period)
        self.reconciles = 0
        self.errors = 0
        self.requests_per_hpa_per_sync = 0.0
        self.last_reconciled: dict[str, float] = {}
        self.last_traces: dict[str, tuple[DecisionTrace, int | None]] = {}  # key -> latest trace, generation
        self.last_progress = time.monotonic()  # when a worker last finished an HPA (the watchdog)
        self.starting = False  # waiting for the caches
        self.started = False
        # Told by the client when the API server stops answering (`pyhpa run` sets it): workers
        # then wait for it instead of failing every sync, and the watchdog does not count it.
        self.api_server: ApiServerStatus | None = None
        # Sharded replicas (pyhpa.live.shards): whether this replica reconciles the HPA now.
        self.owns: Callable[[str], bool] = lambda key: True
        self._tasks: list[asyncio.Task[Any]] = []
        self.hpa_informer.add_handlers(self._on_hpa_add, self._on_hpa_update, self._on_hpa_delete)

    # ------------------------------------------------------------------ informer handlers

    def _on_hpa_add(self, hpa: HorizontalPodAutoscaler) -> None:
        key = self._register(hpa)
        # First pass one period after it is seen, as upstream; never later than the global period
        # (an HPA of syncPeriodSeconds: 3600 must not wait an hour for its first status).
        self.queue.add_after(key, min(self.queue.interval(key), self.options.sync_period))

    def _on_hpa_update(self, old: HorizontalPodAutoscaler, new: HorizontalPodAutoscaler) -> None:
        key = self._register(new)
        if self.config.gates.configurable_sync_period and spec_changed(old, new):
            self.queue.add(key)  # KEP-6003: a spec change is acted on at once...
        else:
            self.queue.add_rate_limited(key)  # ...a status write never (no hot loop)

    def _register(self, hpa: HorizontalPodAutoscaler) -> str:
        key = hpa_key(hpa)
        if key not in self.selectors:
            self.selectors.register(key)
            self.metrics.observe_hpa_addition()
        self._set_interval(key, own_sync_period(hpa, self.config.gates))
        return key

    def _set_interval(self, key: str, seconds: float | None) -> None:
        """The key's own period in the queue; resource metrics are shared per namespace for at
        most 0.9 of the shortest period in use, so a fast HPA never reads a slow one's list."""
        if seconds == self.queue.interval(key) or (seconds is None and not self.queue.own_intervals):
            return
        self.queue.set_interval(key, seconds)
        shortest = min(self.options.sync_period, self.queue.shortest_own_interval() or self.options.sync_period)
        self.shared_pod_metrics.cache.ttl = shortest * 0.9

    def shortest_period(self) -> float:
        """The shortest period any HPA has: the watchdog's unit."""
        own = self.queue.shortest_own_interval()
        if own is None:
            return self.options.sync_period
        if self.queue.own_intervals < len(self.hpa_informer):  # some HPAs use the global period
            return min(own, self.options.sync_period)
        return own

    def _on_hpa_delete(self, hpa: HorizontalPodAutoscaler) -> None:
        key = hpa_key(hpa)
        self.queue.forget(key)
        self._set_interval(key, None)
        self._forget(key)
        if key in self.selectors:
            self.selectors.remove(key)
            self.metrics.observe_hpa_deletion(hpa.metadata.namespace or "", hpa.metadata.name or "")

    def _forget(self, key: str) -> None:
        """Drop a gone HPA's memory: a re-created HPA of the same name starts with none."""
        self.state.delete(key)
        self.last_reconciled.pop(key, None)
        self.last_traces.pop(key, None)

    def decision(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The latest decision on one HPA (`/debug/hpa/NS/NAME`): the KEP-6107 trace, the full
        trace and its plain words; None before the first sync of that HPA."""
        found = self.last_traces.get(f"{namespace}/{name}")
        if found is None:
            return None
        trace, generation = found
        return {"hpa": f"{namespace}/{name}", "lastScaleDecision": kep6107_decision(trace, generation),
                "trace": trace.to_dict(), "explain": trace.explain()}

    def _uid_of(self, key: str) -> str | None:
        hpa = self.hpa_informer.cache.get(key)
        return hpa.metadata.uid if hpa is not None else None

    # ------------------------------------------------------------------ processing

    async def process(self, key: str) -> bool:
        """Reconcile one key; True when the HPA is gone (not re-queued)."""
        ns, _, name = key.partition("/")
        cached = self.hpa_informer.get(ns, name) if name else None
        if cached is None:
            self._forget(key)
            return True
        if not self.owns(key):
            self.last_progress = time.monotonic()  # looked at: the watchdog counts an idle shard as progress
            return False  # another replica's (sharded): looked at again next period
        hpa = cached  # only read: the reconcile returns the new status instead of writing it here
        started = time.perf_counter()
        outcome = Outcome()
        token = _FETCH_TIMES.set([])
        scope = WRITING_FOR.set(key)  # the writes of this reconcile are for this HPA (the fence)
        try:
            if self.options.hpa_group != "autoscaling":
                hpa, errors = admit(hpa, self.config.gates)
                if errors:
                    outcome = Outcome(error="spec")
                    self.errors += 1
                    await report_invalid(hpa, errors, self.ports, self.config, self.clock())
                    return False
            result = await reconcile_hpa(hpa, self.ports, self.config, self.clock())
            self.last_traces[key] = (result.trace, hpa.metadata.generation)
            outcome = _outcome_of(result)
            self._observe_result(hpa, result, _FETCH_TIMES.get())
        except Exception as exc:
            outcome = Outcome(error="internal")
            self.errors += 1
            log.warning("reconcile failed", extra={"hpa": key, "error": str(exc)})
        finally:
            seconds = time.perf_counter() - started
            self.metrics.observe_reconciliation(outcome.action, outcome.error, seconds)
            if log.isEnabledFor(logging.DEBUG):  # -v=4
                log.debug("reconciled", extra={"hpa": key, "action": outcome.action, "error": outcome.error,
                                               "seconds": round(seconds, 4)})
            _FETCH_TIMES.reset(token)
            WRITING_FOR.reset(scope)
            self.reconciles += 1
            self.last_reconciled[key] = self.last_progress = time.monotonic()
        return False

    def _observe_result(self, hpa: HorizontalPodAutoscaler, result: Any, fetch_seconds: list[float]) -> None:
        """Upstream's monitor calls: desired-replicas gauge and one observation per metric computed."""
        if result is None:
            return
        ns, name = hpa.metadata.namespace or "", hpa.metadata.name or ""
        if result.desired_replicas is not None and result.trace.branch != "failed-get-scale":
            self.metrics.observe_desired_replicas(ns, name, result.desired_replicas)
        traces = result.trace.metrics or []
        previous = hpa.status.current_replicas
        for i, mt in enumerate(traces):
            failed = bool(mt.error or mt.invalid)
            if failed:
                action = "none"
            elif mt.replicas is None or mt.replicas == previous:
                action = "none"
            else:
                action = "scale_up" if mt.replicas > previous else "scale_down"
            error = ("spec" if mt.type not in METRIC_TYPES else "internal") if failed else "none"
            seconds = fetch_seconds[i] if len(fetch_seconds) == len(traces) else sum(fetch_seconds) / max(1, len(traces))
            self.metrics.observe_metric_computation(action, error, seconds, mt.type)
        if result.error:
            self.errors += 1
            log.info("reconcile returned an error", extra={"hpa": f"{ns}/{name}", "error": result.error})

    async def _worker(self, n: int) -> None:
        while True:
            try:
                key = await self.queue.get()
            except ShutDown:
                return
            if self.api_server is not None and self.api_server.reachable is False:
                await self.api_server.wait_answering()
                self.last_progress = time.monotonic()  # the outage was no stall of ours
            deleted = False
            try:
                deleted = await self.process(key)
            except asyncio.CancelledError:
                self.queue.done(key)
                raise
            except Exception:
                log.exception("worker %d: processing %s failed", n, key)
            self.queue.done(key)
            if not deleted:
                self.queue.add_rate_limited(key)

    async def _supervised_worker(self, n: int) -> None:
        while True:
            try:
                await self._worker(n)
                return
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("worker %d crashed; restarting in 1s", n)
                await asyncio.sleep(1.0)

    async def _periodic(self) -> None:
        """Every sync period: informer-style resync of HPAs and a fresh discovery of metrics APIs."""
        last = self.client.counter.total_excluding("watch")
        while True:
            await asyncio.sleep(self.options.sync_period)
            now_total = self.client.counter.total_excluding("watch")
            self.requests_per_hpa_per_sync = (now_total - last) / max(1, len(self.hpa_informer))
            self.metrics.requests_per_hpa_per_sync.set(self.requests_per_hpa_per_sync)
            last = now_total
            self.discovery.invalidate_preferred_versions()
            for key in list(self.hpa_informer.cache):
                self.queue.add_rate_limited(key)

    # ------------------------------------------------------------------ lifecycle

    def cache_progress(self) -> str:
        """e.g. `hpas synced (1000), pods listing (41500 so far)`."""
        parts = []
        for inf in (self.hpa_informer, self.pod_informer):
            if inf.synced.is_set():
                parts.append(f"{inf.name} synced ({len(inf)})")
            else:
                parts.append(f"{inf.name} listing ({inf.listed} so far)")
        return ", ".join(parts)

    def ready(self) -> tuple[bool, str]:
        if self.starting:
            return False, f"caches syncing: {self.cache_progress()}"
        if not self.started:
            return False, "controller not started (not leading yet?)"
        return True, ""

    def healthy(self) -> tuple[bool, str]:
        """The watchdog: unhealthy when HPAs exist but none was processed for a while."""
        if not self.started or not len(self.hpa_informer):
            return True, ""
        if self.api_server is not None and self.api_server.reachable is False:
            return True, ""  # waiting for the API server: /readyz says so, a restart would not help
        limit = max(STALL_MIN, STALL_SYNC_PERIODS * self.shortest_period())
        idle = time.monotonic() - self.last_progress
        if idle > limit:
            return False, f"no HPA processed for {idle:.0f}s (limit {limit:.0f}s)"
        return True, ""

    async def _wait_for_caches(self) -> None:
        """Wait, without a deadline, for the HPA and pod caches; log progress meanwhile."""
        began = time.monotonic()
        for inf in (self.hpa_informer, self.pod_informer):
            while not inf.synced.is_set():
                try:
                    await asyncio.wait_for(inf.synced.wait(), SYNC_PROGRESS_INTERVAL)
                    raise_if_cancelling()  # 3.11's wait_for can return instead of raising it
                except asyncio.TimeoutError:
                    log.info("waiting for caches to sync", extra={
                        "seconds": round(time.monotonic() - began), "caches": self.cache_progress()})

    async def start(self) -> None:
        """Load the memory, fill the caches, start the workers. Cancelling it is safe: `stop()`
        (which `run()` always calls) undoes whatever part had started."""
        self.starting = True
        try:
            if self.options.persist_state:
                restored = await self.state.load()
                log.info("restored autoscaler state", extra={"hpas": restored})
            self.events.start()
            self.pod_informer.start()
            self.hpa_informer.start()
            await self._wait_for_caches()
            if self.options.persist_state:
                live = {key: hpa.metadata.uid for key, hpa in self.hpa_informer.cache.items()}
                pruned = self.state.prune(live)
                if pruned:
                    log.info("dropped the memory of deleted HPAs", extra={"hpas": pruned})
                self.state.start()
            self.last_progress = time.monotonic()
            self._tasks = [asyncio.create_task(self._supervised_worker(i), name=f"hpa-worker-{i}")
                           for i in range(self.options.workers)]
            self._tasks.append(asyncio.create_task(self._periodic(), name="hpa-resync"))
            self.started = True
        finally:
            self.starting = False
        log.info("controller started", extra={"workers": self.options.workers, "hpas": len(self.hpa_informer),
                                              "pods": len(self.pod_informer)})

    async def stop(self) -> None:
        """Stop everything `start()` started, whatever state it reached. Idempotent."""
        self.started = False
        self.starting = False
        self.queue.shut_down()
        await cancel_and_wait(*self._tasks)
        self._tasks = []
        if self.options.persist_state:
            await self.state.stop()
        await self.events.stop()
        await self.scales.stop()
        await self.hpa_informer.stop()
        await self.pod_informer.stop()

    async def run(self) -> None:
        """Start and run until cancelled (the leader-election `lead` callback); stops cleanly even
        when cancelled while the caches are still syncing."""
        try:
            await self.start()
            await asyncio.Event().wait()
        finally:
            await asyncio.shield(self.stop())


_FETCH_TIMES: contextvars.ContextVar[list[float]] = contextvars.ContextVar("pyhpa_fetch_times")


class TimedMetrics:
    """Times each metrics-API call of the current reconcile (for the metric_computation histogram)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self.inner, name)

        async def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                times = _FETCH_TIMES.get(None)
                if times is not None:
                    times.append(time.perf_counter() - started)

        return timed


def spec_changed(old: HorizontalPodAutoscaler, new: HorizontalPodAutoscaler) -> bool:
    """A change the user made to what the HPA should do: its spec, or its suspend annotation
    (which acts like a spec field; our own status writes never touch either)."""
    if old.spec != new.spec:
        return True
    return (old.metadata.annotations or {}).get(SUSPEND_ANNOTATION) != \
        (new.metadata.annotations or {}).get(SUSPEND_ANNOTATION)


def decode_hpa(data: bytes) -> HorizontalPodAutoscaler:
    """HPAs are decoded the Go way (missing fields = zero values), so one odd object cannot
    stop the informer."""
    return loads_json(bytes(data), HorizontalPodAutoscaler)


def _outcome_of(result: Any) -> Outcome:
    if result is None:
        return Outcome()
    action = getattr(result, "action", None) or "none"
    err = getattr(result, "error_kind", None) or getattr(result, "error_label", None)
    if err is None:
        err = "internal" if getattr(result, "error", None) else "none"
    return Outcome(str(action), str(err))


def env_identity() -> str:
    return os.environ.get("POD_NAME") or default_identity()
