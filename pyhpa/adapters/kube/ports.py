"""The reconcile ports over a live API server: scale, pods, metrics, status, events, selectors.

Reads come from informer caches wherever the API allows (pods; Deployments, ReplicaSets,
StatefulSets and ReplicationControllers stand in for their `/scale`), so a steady-state sync
costs no request at all for them; any other kind with a `/scale` subresource (CRDs) is found
through discovery and read with a GET. Resource metrics are listed once per namespace per sync
and shared. Writes are the only per-HPA requests left: scale PUTs, status PUTs (only when the
status changed) and Events.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time

import msgspec
from datetime import datetime, timezone
from typing import Any

from pyhpa.adapters.tasks import cancel_and_wait
from pyhpa.adapters.kube.client import ApiError, KubeClient, outage_reported, wait_answering
from pyhpa.adapters.kube.write_scope import WRITING_FOR
from pyhpa.adapters.kube.discovery import Discovery, MappingError as _DiscoveryMappingError, RestMapping, split_api_version
from pyhpa.adapters.kube.informer import Informer
from pyhpa.adapters.kube.metrics_api import MetricsApi, SharedPodMetrics
from pyhpa.adapters.memory import SCALABLE_KINDS
from pyhpa.adapters.metrics_lists import custom_metric_info, resource_metric_info
from pyhpa.api.selectors import Selector
from pyhpa.api.timefmt import format_time
from pyhpa.api.types import (
    CrossVersionObjectReference,
    HorizontalPodAutoscaler,
    ObjectMeta,
    PodView,
    Scale,
    new_scale,
)
from pyhpa.controller.ports import (
    ConflictError,
    MappingError,
    MetricsError,
    PodListError,
    ScaleError,
    StatusUpdateError,
)
from pyhpa.engine.inputs import PodMetricsInfo
from pyhpa.engine.pods import ZERO_TIME, PodSet

log = logging.getLogger("pyhpa.adapters.kube")
EVENT_SOURCE = "horizontal-pod-autoscaler"


def _int_rv(rv: str | None) -> int | None:
    try:
        return int(rv) if rv else None
    except ValueError:
        return None


class _WorkloadSpec(msgspec.Struct, rename="camel"):
    replicas: int | None = None
    selector: dict[str, Any] | None = None  # LabelSelector (apps) or a plain map (RC)


class _WorkloadStatus(msgspec.Struct, rename="camel"):
    replicas: int = 0


class WorkloadWire(msgspec.Struct, rename="camel"):
    """What a scale needs from a built-in workload, decoded leniently from the watch stream."""

    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: _WorkloadSpec = msgspec.field(default_factory=_WorkloadSpec)
    status: _WorkloadStatus = msgspec.field(default_factory=_WorkloadStatus)


def _selector_text(wl: WorkloadWire) -> str:
    sel = wl.spec.selector
    if not sel:
        return ""
    if "matchLabels" in sel or "matchExpressions" in sel:
        from pyhpa.api.selectors import selector_from_label_selector

        return str(selector_from_label_selector(sel))
    return ",".join(f"{k}={sel[k]}" for k in sorted(sel))


class KubeScales:
    """ScaleClient: informer-backed for the built-in workload kinds, discovery + GET for the rest."""

    def __init__(self, client: KubeClient, discovery: Discovery, *, use_informers: bool = True) -> None:
        self.client = client
        self.discovery = discovery
        self.use_informers = use_informers
        self.informers: dict[str, Informer[WorkloadWire]] = {}  # kind -> informer
        self._written: dict[tuple[str, str, str], Scale] = {}  # our last successful PUT per target
        self._bypass_cache: set[tuple[str, str, str]] = set()
        self._starting: set[str] = set()

    def _informer_for(self, ref: CrossVersionObjectReference) -> Informer[WorkloadWire] | None:
        if not self.use_informers:
            return None
        entry = SCALABLE_KINDS.get(ref.kind)
        if entry is None:
            return None
        try:
            group, _ = split_api_version(ref.api_version)
        except ValueError:
            return None
        if group != entry[0]:
            return None
        inf = self.informers.get(ref.kind)
        if inf is None:
            group, resource = entry
            path = f"/apis/{group}/v1/{resource}" if group else f"/api/v1/{resource}"
            inf = Informer(self.client, path, WorkloadWire, name=resource, index_labels=False,
                           transform=without_managed_fields)
            self.informers[ref.kind] = inf
            inf.start()
        return inf if inf.synced.is_set() else None

    async def _mappings(self, ref: CrossVersionObjectReference) -> list[RestMapping]:
        try:
            split_api_version(ref.api_version)
        except ValueError as exc:
            raise ScaleError(f"invalid API version in scale target reference: {exc}") from exc
        try:
            return await self.discovery.scale_mappings(ref.api_version, ref.kind)
        except _DiscoveryMappingError as exc:
            raise MappingError(str(exc)) from exc
        except ApiError as exc:
            raise MappingError(str(exc)) from exc

    async def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        key = (namespace, ref.kind, ref.name)
        if key not in self._bypass_cache:
            inf = self._informer_for(ref)
            if inf is not None:
                wl = inf.get(namespace, ref.name)
                if wl is not None:
                    written = self._written.get(key)
                    wl_rv = _int_rv(wl.metadata.resource_version)
                    if written is not None:
                        w_rv = _int_rv(written.metadata.resource_version)
                        if wl_rv is not None and w_rv is not None and w_rv > wl_rv:
                            return _copy_scale(written)  # the informer has not seen our write yet
                        self._written.pop(key, None)
                    return _scale_of(wl, namespace, ref.name)
        self._bypass_cache.discard(key)
        mappings = await self._mappings(ref)
        first_err: Exception | None = None
        for m in mappings:
            try:
                return await self.client.get(m.object_path(namespace, ref.name) + "/scale", Scale)
            except ApiError as exc:
                first_err = first_err or exc
        if first_err is None:
            raise ScaleError("unrecognized resource")
        raise ScaleError(str(first_err))

    async def update_scale(self, namespace: str, ref: CrossVersionObjectReference, scale: Scale) -> Scale:
        key = (namespace, ref.kind, ref.name)
        mappings = await self._mappings(ref)
        if not mappings:
            raise ScaleError("unrecognized resource")
        path = mappings[0].object_path(namespace, ref.name) + "/scale"
        body = Scale(api_version="autoscaling/v1", kind="Scale", metadata=scale.metadata, spec=scale.spec,
                     status=scale.status)
        try:
            out: Scale = await self.client.put(path, body, Scale)
        except ApiError as exc:
            if exc.is_conflict:
                self._bypass_cache.add(key)  # the retry must read the server's latest, not our cache
                raise ConflictError(str(exc)) from exc
            raise ScaleError(str(exc)) from exc
        self._written[key] = out
        return out

    async def stop(self) -> None:
        for inf in self.informers.values():
            await inf.stop()


def _scale_of(wl: WorkloadWire, namespace: str, name: str) -> Scale:
    replicas = wl.spec.replicas if wl.spec.replicas is not None else 1
    scale = new_scale(name, namespace, replicas, wl.status.replicas, _selector_text(wl))
    scale.metadata.resource_version = wl.metadata.resource_version
    scale.metadata.uid = wl.metadata.uid
    return scale


def _copy_scale(s: Scale) -> Scale:
    out = new_scale(s.metadata.name or "", s.metadata.namespace or "", s.spec.replicas, s.status.replicas, s.status.selector)
    out.metadata.resource_version = s.metadata.resource_version
    return out


def without_managed_fields(obj: Any) -> Any:
    """Informer transform: managedFields are never read by the controller (client-go's
    TransformStripManagedFields, which kube-controller-manager's informers use)."""
    obj.metadata.managed_fields = None
    return obj


def cached_hpa(hpa: Any) -> Any:
    """Informer transform for HPAs: no managedFields, and the texts of the status conditions
    shared: once every HPA has a status, 10,000 HPAs hold 30,000 conditions that say a few
    distinct things (a tenth of a 10,000-HPA controller's growth after its first pass;
    `sys.intern` keeps a text only while in use)."""
    hpa = without_managed_fields(hpa)
    for c in hpa.status.conditions or ():
        c.type, c.status = sys.intern(c.type), sys.intern(c.status)
        if c.reason:
            c.reason = sys.intern(c.reason)
        if c.message:
            c.message = sys.intern(c.message)
    return hpa


def cached_pod(pod: PodView) -> PodView:
    """Informer transform: what the pod cache keeps of a pod is what the HPA reads (name, labels,
    deletion, phase, the Ready condition, start time, container requests) and what the informer
    needs (namespace, resourceVersion). At 100,000 pods every dropped field is megabytes; the
    strings that take few values are shared (`sys.intern` keeps them only while in use)."""
    meta = pod.metadata
    meta.uid = meta.generate_name = meta.self_link = None
    meta.generation = meta.creation_timestamp = meta.deletion_grace_period_seconds = None
    meta.annotations = meta.owner_references = meta.finalizers = meta.managed_fields = None
    if meta.namespace:
        meta.namespace = sys.intern(meta.namespace)
    pod.api_version, pod.kind = "v1", "Pod"
    status = pod.status
    if status.phase:
        status.phase = sys.intern(status.phase)
    if status.conditions:  # the engine reads the first Ready condition only
        ready = tuple(c for c in status.conditions if c.type == "Ready")  # a tuple: untracked by the gc
        for c in ready:
            c.type, c.status = "Ready", sys.intern(c.status)
        status.conditions = ready or None  # type: ignore[assignment]
    return pod


def share_pod_parts(pod: PodView, sibling: PodView) -> None:
    """Informer share: a pod whose labels or spec equal its cached sibling's (the pods of one
    workload) points at the sibling's, so 100,000 pods of 10,000 Deployments hold 10,000 of each."""
    if pod.metadata.labels == sibling.metadata.labels:
        pod.metadata.labels = sibling.metadata.labels
    if pod.spec == sibling.spec:
        pod.spec = sibling.spec


class KubePods:
    """PodLister over a cluster-wide pod informer (namespace + label indexed)."""

    def __init__(self, informer: Informer[PodView]) -> None:
        self.informer = informer

    async def list_pods(self, namespace: str, selector: Selector) -> PodSet:
        if not self.informer.synced.is_set():
            raise PodListError("pod cache not synced yet")
        return PodSet.of(self.informer.select(namespace, selector))


class KubeMetrics:
    """MetricsClient over the three metrics APIs (upstream's podautoscaler/metrics/client.go), with upstream's error texts."""

    def __init__(self, api: MetricsApi, shared: SharedPodMetrics) -> None:
        self.api = api
        self.shared = shared

    async def get_resource_metric(
        self, resource: str, namespace: str, selector: Selector, container: str = ""
    ) -> tuple[PodMetricsInfo, datetime]:
        try:
            usages = await self.shared.pod_usages(namespace, selector)
        except ApiError as exc:
            raise MetricsError(f"unable to fetch metrics from resource metrics API: {exc}") from exc
        return resource_metric_info(usages, resource, container)

    async def get_raw_metric(
        self, metric_name: str, namespace: str, selector: Selector, metric_selector: Selector
    ) -> tuple[PodMetricsInfo, datetime]:
        try:
            items = await self.api.custom_pods_metric(namespace, metric_name, str(selector), str(metric_selector))
        except ApiError as exc:
            raise MetricsError(f"unable to fetch metrics from custom metrics API: {exc}") from exc
        return custom_metric_info(items)

    async def get_object_metric(
        self, metric_name: str, namespace: str, ref: CrossVersionObjectReference, metric_selector: Selector
    ) -> tuple[int, datetime]:
        try:
            items = await self.api.custom_object_metric(
                namespace, ref.api_version, ref.kind, ref.name, metric_name, str(metric_selector))
        except ApiError as exc:
            raise MetricsError(f"unable to fetch metrics from custom metrics API: {exc}") from exc
        if not items:
            raise MetricsError("no metrics returned from custom metrics API")
        return items[0].value.milli_int64(), items[0].timestamp or ZERO_TIME

    async def get_external_metric(
        self, metric_name: str, namespace: str, selector: Selector
    ) -> tuple[list[int], datetime]:
        try:
            items = await self.api.external_metric(namespace, metric_name, str(selector))
        except ApiError as exc:
            raise MetricsError(f"unable to fetch metrics from external metrics API: {exc}") from exc
        if not items:
            raise MetricsError("no metrics returned from external metrics API")
        return [v.value.milli_int64() for v in items], items[0].timestamp or ZERO_TIME


class KubeStatusWriter:
    """StatusWriter: PUT the status subresource; on 409 rebase our status on the latest object once."""

    def __init__(self, client: KubeClient, hpa_base: str, on_written: Any = None) -> None:
        self.client = client
        self.hpa_base = hpa_base  # e.g. "/apis/autoscaling/v2"
        self.on_written = on_written

    def path(self, namespace: str, name: str) -> str:
        return f"{self.hpa_base}/namespaces/{namespace}/horizontalpodautoscalers/{name}"

    async def update_status(self, hpa: HorizontalPodAutoscaler) -> None:
        from pyhpa.api.codec import dumps_json, loads_json

        path = self.path(hpa.metadata.namespace or "", hpa.metadata.name or "")
        try:
            answer = await self.client.request("PUT", path + "/status", body=dumps_json(hpa))
        except ApiError as exc:
            if not exc.is_conflict:
                raise StatusUpdateError(str(exc)) from exc
            try:
                latest = loads_json(await self.client.request("GET", path), HorizontalPodAutoscaler)
                latest.status = hpa.status
                answer = await self.client.request("PUT", path + "/status", body=dumps_json(latest))
            except ApiError as exc2:
                raise StatusUpdateError(str(exc2)) from exc2
        if self.on_written is not None:  # the answer is decoded only for a listener (the informer sees it anyway)
            self.on_written(loads_json(answer, HorizontalPodAutoscaler))


class KubeEvents:
    """EventRecorder: core v1 Events from `horizontal-pod-autoscaler`, sent in the background.

    Repeats of the same (object, type, reason, message) bump `count`/`lastTimestamp` of the
    existing Event, as client-go's event correlator does, instead of creating a new object.
    """

    def __init__(self, client: KubeClient, host: str = "", max_pending: int = 10_000) -> None:
        self.client = client
        self.host = host
        self.queue: asyncio.Queue[tuple[dict[str, Any], str | None]] = asyncio.Queue(max_pending)
        self._seen: dict[tuple[str, ...], dict[str, Any]] = {}
        self._task: asyncio.Task[None] | None = None
        self.sent = 0
        self.dropped = 0
        self._last_stamp = 0  # the time (ns) the last event's name was made of

    def event(self, hpa: HorizontalPodAutoscaler, event_type: str, reason: str, message: str,
              at: datetime | None = None) -> None:
        when = at.timestamp() if at is not None else time.time()
        # unique and in order even for several events of one pass (which share its time)
        stamp = self._last_stamp = max(int(when * 1e9), self._last_stamp + 1)
        now = format_time(datetime.fromtimestamp(when, timezone.utc))
        ns = hpa.metadata.namespace or "default"
        involved = {
            "kind": hpa.kind or "HorizontalPodAutoscaler", "namespace": ns, "name": hpa.metadata.name,
            "uid": hpa.metadata.uid, "apiVersion": hpa.api_version,
            "resourceVersion": hpa.metadata.resource_version,
        }
        ev = {
            "apiVersion": "v1", "kind": "Event",
            # named as client-go's recorder names events, by the time they happen: the rescale's
            # event lists before what the workload's controllers did about it (kubectl events,
            # describe), which come later and are named the same way
            "metadata": {"name": f"{hpa.metadata.name}.{stamp:x}", "namespace": ns},
            "involvedObject": {k: v for k, v in involved.items() if v is not None},
            "reason": reason, "message": message, "type": event_type,
            "source": {"component": EVENT_SOURCE, **({"host": self.host} if self.host else {})},
            "firstTimestamp": now, "lastTimestamp": now, "count": 1,
            "reportingComponent": EVENT_SOURCE, "reportingInstance": self.host,
        }
        log.info("event", extra={"hpa": f"{ns}/{hpa.metadata.name}", "type": event_type, "reason": reason,
                                 "event_message": message})
        try:
            self.queue.put_nowait((ev, WRITING_FOR.get()))  # sent later, fenced as the reconcile's writes
        except asyncio.QueueFull:
            self.dropped += 1

    async def _send(self, ev: dict[str, Any]) -> None:
        inv = ev["involvedObject"]
        key = (inv["namespace"], inv["name"], inv.get("uid") or "", ev["type"], ev["reason"], ev["message"])
        prev = self._seen.get(key)
        ns = inv["namespace"]
        if prev is not None:
            patch = {"count": prev["count"] + 1, "lastTimestamp": ev["lastTimestamp"]}
            try:
                await self.client.merge_patch(f"/api/v1/namespaces/{ns}/events/{prev['metadata']['name']}", patch)
                prev["count"] += 1
                self.sent += 1
                return
            except ApiError:
                self._seen.pop(key, None)
        out = await self.client.post(f"/api/v1/namespaces/{ns}/events", ev)
        self._seen[key] = {"metadata": {"name": out.get("metadata", {}).get("name", ev["metadata"]["name"])},
                           "count": 1}
        if len(self._seen) > 4096:
            self._seen.pop(next(iter(self._seen)))
        self.sent += 1

    async def run(self) -> None:
        while True:
            ev, writing_for = await self.queue.get()
            await wait_answering(self.client)
            token = WRITING_FOR.set(writing_for)
            try:
                await self._send(ev)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.log(logging.DEBUG if outage_reported(self.client, exc) else logging.WARNING,
                        "could not write event %s: %s", ev.get("reason"), exc)
            finally:
                WRITING_FOR.reset(token)

    async def flush(self, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        connection = getattr(self.client, "connection", None)
        while not self.queue.empty() and time.monotonic() < deadline:
            if connection is not None and connection.reachable is False:
                return  # nobody to write them to
            await asyncio.sleep(0.02)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name="events")

    async def stop(self) -> None:
        if self._task is not None:
            await self.flush(2.0)
            await cancel_and_wait(self._task)
            self._task = None
