"""The simulated workload: pods that start, become Ready, share a load and get terminated.

Shared by the embedded cluster's live simulation (real clock) and the simulator (virtual clock),
so it is pure: no I/O, every method takes ``now`` as float seconds since the epoch. Three parts:

* :class:`WorkloadParams` -- the knobs (CPU demand, memory, startup delay, custom metric totals),
  readable from ``sim.pyhpa.io/*`` annotations with :func:`params_from_annotations`;
* :class:`Workload` -- the pods of one Deployment/StatefulSet, moved towards the desired replica
  count the way the ReplicaSet / StatefulSet controllers and the kubelet would;
* :class:`MetricsPipeline` -- a metrics-server-like view of those pods: cumulative counters scraped
  every ``resolution`` seconds on a fixed grid, reported as averages over ``window``.

Per-pod usage is piecewise constant between *breakpoints* (a pod starting, becoming Ready or
being deleted; a parameter change; a scrape), so integrating it is exact, not sampled.
"""

from __future__ import annotations

import msgspec
from mypy_extensions import mypyc_attr

import bisect
import functools
import hashlib
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping

from pyhpa.api.picklable import picklable
from pyhpa.api.quantity import Quantity
from pyhpa.api.types import (
    ContainerMetrics,
    ContainerView,
    ExternalMetricValue,
    LabelSelector,
    MetricIdentifierView,
    MetricValue,
    ObjectMeta,
    ObjectReferenceView,
    OwnerReference,
    PodCondition,
    PodMetrics,
    PodSpecView,
    PodStatusView,
    PodView,
    ResourceRequirements,
)

ANNOTATION_PREFIX = "sim.pyhpa.io/"
ANN_CPU = ANNOTATION_PREFIX + "cpu"
ANN_CPU_CAPACITY = ANNOTATION_PREFIX + "cpu-capacity"
ANN_MEMORY = ANNOTATION_PREFIX + "memory"
ANN_STARTUP = ANNOTATION_PREFIX + "startup-seconds"
ANN_PENDING = ANNOTATION_PREFIX + "pending-seconds"
ANN_TERMINATION = ANNOTATION_PREFIX + "termination-seconds"
ANN_METRIC = ANNOTATION_PREFIX + "metric."

# Alphabet of Kubernetes' rand.String (no vowels, no confusable digits).
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


class WorkloadParamError(ValueError):
    """A workload parameter (annotation or scenario field) that cannot be used; names the field."""


# --------------------------------------------------------------------------- parameters


class WorkloadParams(msgspec.Struct, frozen=True):
    """How the workload behaves. Units: CPU in millicores, memory in bytes, time in seconds.

    ``cpu_milli`` and ``metrics`` are *workload totals* shared equally by the Ready pods (the
    Service spreads requests over ready endpoints); ``memory_bytes`` is per pod.
    """

    cpu_milli: float = 0.0
    cpu_capacity_milli: float | None = None  # per-pod usage cap (a CPU limit / saturation point)
    startup_cpu_milli: float = 0.0  # usage of a Running pod that is not Ready yet
    memory_bytes: float = 0.0  # per pod
    memory_shared_bytes: float = 0.0  # a total spread over the Ready pods (request buffers, caches)
    startup_seconds: float = 0.0  # creation -> Ready
    pending_seconds: float = 0.0  # creation -> Running (capped at startup_seconds)
    termination_seconds: float = 30.0  # deletion -> gone (terminationGracePeriodSeconds)
    metrics: Mapping[str, float] = {}  # custom metric totals, plain units

    def validate(self) -> "WorkloadParams":
        inf = math.inf
        if (0.0 <= self.cpu_milli < inf and 0.0 <= self.startup_cpu_milli < inf and 0.0 <= self.memory_bytes < inf
                and 0.0 <= self.memory_shared_bytes < inf and 0.0 <= self.startup_seconds < inf
                and 0.0 <= self.pending_seconds < inf and 0.0 <= self.termination_seconds < inf
                and (self.cpu_capacity_milli is None or self.cpu_capacity_milli > 0)
                and (not self.metrics or all(-inf < v < inf for v in self.metrics.values()))):
            return self  # every check below passes (the comparisons fail for NaN): the usual case
        for name in ("cpu_milli", "startup_cpu_milli", "memory_bytes", "memory_shared_bytes", "startup_seconds", "pending_seconds",
                     "termination_seconds"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise WorkloadParamError(f"{name}: Invalid value: {value!r}: must be a finite number >= 0")
        if self.cpu_capacity_milli is not None and not (self.cpu_capacity_milli > 0):
            raise WorkloadParamError(f"cpu_capacity_milli: Invalid value: {self.cpu_capacity_milli!r}: must be > 0")
        for key, value in self.metrics.items():
            if not math.isfinite(value):
                raise WorkloadParamError(f"metrics[{key}]: Invalid value: {value!r}: must be finite")
        return self


def _quantity_milli(text: str, field_name: str) -> float:
    try:
        return float(Quantity.parse(text.strip()).milli_value())
    except Exception as exc:
        raise WorkloadParamError(f"{field_name}: Invalid value: {text!r}: {exc}") from None


def _seconds(text: str, field_name: str) -> float:
    raw = text.strip()
    try:
        value = float(raw)
    except ValueError:
        try:
            from pyhpa.api.timefmt import parse_duration

            value = parse_duration(raw)
        except Exception as exc:
            raise WorkloadParamError(f"{field_name}: Invalid value: {text!r}: {exc}") from None
    if not math.isfinite(value) or value < 0:
        raise WorkloadParamError(f"{field_name}: Invalid value: {text!r}: must be >= 0")
    return value


def params_from_annotations(
    annotations: Mapping[str, str] | None, base: WorkloadParams | None = None
) -> WorkloadParams:
    """Read ``sim.pyhpa.io/*`` annotations over ``base`` (defaults when None).

    ``sim.pyhpa.io/cpu`` (e.g. ``1500m``: total demand), ``sim.pyhpa.io/memory`` (per pod, e.g.
    ``256Mi``), ``sim.pyhpa.io/startup-seconds`` (``30`` or ``30s``), ``sim.pyhpa.io/metric.<name>``
    (workload total of a custom metric), plus ``cpu-capacity``, ``pending-seconds`` and
    ``termination-seconds``. Unknown ``sim.pyhpa.io/`` keys are errors, so typos do not go unnoticed.
    """
    params = base or WorkloadParams()
    if not annotations:
        return params
    changes: dict[str, Any] = {}
    metrics = dict(params.metrics)
    for key, text in annotations.items():
        if not key.startswith(ANNOTATION_PREFIX):
            continue
        where = f"metadata.annotations[{key}]"
        if not isinstance(text, str):
            raise WorkloadParamError(f"{where}: Invalid value: {text!r}: must be a string")
        if key == ANN_CPU:
            changes["cpu_milli"] = _quantity_milli(text, where)
        elif key == ANN_CPU_CAPACITY:
            changes["cpu_capacity_milli"] = _quantity_milli(text, where) or None
        elif key == ANN_MEMORY:
            changes["memory_bytes"] = _quantity_milli(text, where) / 1000.0
        elif key == ANN_STARTUP:
            changes["startup_seconds"] = _seconds(text, where)
        elif key == ANN_PENDING:
            changes["pending_seconds"] = _seconds(text, where)
        elif key == ANN_TERMINATION:
            changes["termination_seconds"] = _seconds(text, where)
        elif key.startswith(ANN_METRIC) and len(key) > len(ANN_METRIC):
            metrics[key[len(ANN_METRIC):]] = _quantity_milli(text, where) / 1000.0
        else:
            raise WorkloadParamError(f"{where}: Unsupported value: unknown simulation annotation")
    for name, value in changes.items():
        if isinstance(value, float) and value < 0:
            raise WorkloadParamError(f"{name}: Invalid value: {value!r}: must be >= 0")
    return msgspec.structs.replace(params, metrics=metrics, **changes).validate()


# --------------------------------------------------------------------------- pods


@functools.lru_cache(maxsize=4096)
def to_datetime(ts: float) -> datetime:
    """Epoch seconds -> aware UTC datetime (whole microseconds).

    Cached: the simulator converts the same instants (sync times, scrape times, pod
    transitions) over and over, and datetimes are immutable.
    """
    return datetime.fromtimestamp(round(ts, 6), tz=timezone.utc)


def to_epoch(dt: datetime) -> float:
    return dt.timestamp()


@mypyc_attr(serializable=True)  # crosses process boundaries (--jobs)
@dataclass(slots=True)
class SimPod:
    """One pod's life as timestamps; its phase at any instant is a pure function of them."""

    name: str
    uid: str
    created: float
    running_at: float  # phase Pending -> Running, containers started
    ready_at: float  # Ready condition -> True
    ordinal: int | None = None
    deleted_at: float | None = None  # deletionTimestamp
    gone_at: float | None = None  # removed from the API

    def phase(self, now: float) -> str:
        return "Running" if now >= self.running_at else "Pending"

    def running(self, now: float) -> bool:
        return now >= self.running_at and (self.deleted_at is None or now < self.deleted_at)

    def ready(self, now: float) -> bool:
        return now >= self.ready_at and (self.deleted_at is None or now < self.deleted_at)

    def terminating(self, now: float) -> bool:
        return self.deleted_at is not None and now >= self.deleted_at


@dataclass(frozen=True)
class ContainerTemplate:
    name: str
    requests: Mapping[str, str] = field(default_factory=dict)  # e.g. {"cpu": "500m", "memory": "256Mi"}


class WorkloadChanges(msgspec.Struct):
    """What one :meth:`Workload.advance` did, for events/stores of the caller."""

    created: list[SimPod] = []
    deleting: list[SimPod] = []
    removed: list[SimPod] = []

    def __bool__(self) -> bool:
        return bool(self.created or self.deleting or self.removed)


class Workload:
    """The pods of one Deployment or StatefulSet, driven towards ``replicas``.

    Deployment: pods are created at once; on scale-down the ReplicaSet controller's order picks
    victims (Pending before Running, unready before Ready, more recently Ready first, newest
    first). StatefulSet: ordinals; with ``OrderedReady`` one pod at a time (create the next only
    when all are Ready, delete the highest only when none is terminating), ``Parallel`` at once.
    """

    def __init__(
        self,
        namespace: str,
        name: str,
        *,
        kind: str = "Deployment",
        labels: Mapping[str, str] | None = None,
        containers: Iterable[ContainerTemplate] = (),
        params: WorkloadParams | None = None,
        replicas: int = 0,
        now: float = 0.0,
        pod_management_policy: str = "OrderedReady",
        uid: str | None = None,
    ) -> None:
        if kind not in ("Deployment", "StatefulSet", "ReplicaSet"):
            raise WorkloadParamError(f"kind: Unsupported value: {kind!r}: supported values: Deployment, StatefulSet, ReplicaSet")
        if pod_management_policy not in ("OrderedReady", "Parallel"):
            raise WorkloadParamError(
                f"podManagementPolicy: Unsupported value: {pod_management_policy!r}: supported values: OrderedReady, Parallel"
            )
        self.namespace = namespace
        self.name = name
        self.kind = kind
        self.uid = uid or _stable_uid(f"{namespace}/{kind}/{name}")
        self.labels = dict(labels or {"app": name})
        self.containers = list(containers) or [ContainerTemplate(name=name)]
        self.params = (params or WorkloadParams()).validate()
        self.pod_management_policy = pod_management_policy
        self.replicas = int(replicas)
        self.pods: list[SimPod] = []
        self._version = 0  # bumped whenever the pod set or a pod's deletion changes
        self._status_replicas: tuple[int, float, int] = (-1, math.inf, 0)  # see _counts
        self._pod_times: tuple[int, list[float]] = (-1, [])  # (version, sorted pod transition times)
        self._ready_cache: tuple[Any, int] = (None, 0)
        self._serial = 0
        self._template_hash = _suffix(self.uid, 10)
        # (since, params) of recent parameter changes: usage between pipeline advances may span one.
        self._param_history: list[tuple[float, WorkloadParams]] = [(now, self.params)]
        self._requests_views = [
            ContainerView(
                name=c.name,
                resources=ResourceRequirements(requests={k: Quantity.parse(str(v)) for k, v in c.requests.items()}),
            )
            for c in self.containers
        ]
        self.advance(now)

    # ----------------------------------------------------------------- driving

    def set_params(self, params: WorkloadParams, now: float) -> None:
        """Change the load; usage integration uses the new values from ``now`` on."""
        if params is not self.params and params != self.params:
            self.params = params.validate()
            if self._param_history and self._param_history[-1][0] >= now:
                self._param_history = [h for h in self._param_history if h[0] < now]
            self._param_history.append((now, self.params))

    def params_at(self, t: float) -> WorkloadParams:
        hist = self._param_history
        for since, params in reversed(hist):
            if since <= t:
                return params
        return hist[0][1] if hist else self.params

    def scale(self, replicas: int, now: float) -> WorkloadChanges:
        """Set the desired replica count (the scale subresource's PUT) and reconcile pods."""
        if replicas < 0:
            raise WorkloadParamError(f"spec.replicas: Invalid value: {replicas}: must be >= 0")
        self.replicas = int(replicas)
        return self.advance(now)

    def advance(self, now: float) -> WorkloadChanges:
        """Remove pods whose termination finished and create/delete pods towards ``replicas``."""
        changes = WorkloadChanges()
        version, first_gone, active_n = self._counts()
        if now < first_gone and active_n == self.replicas:
            return changes  # nothing to remove, and the active pods already match replicas
        removed = [pod for pod in self.pods if pod.gone_at is not None and now >= pod.gone_at]
        if removed:
            changes.removed.extend(removed)
            self.pods = [pod for pod in self.pods if not (pod.gone_at is not None and now >= pod.gone_at)]
            self._version += 1
        active = [p for p in self.pods if p.deleted_at is None]
        if self.kind == "StatefulSet" and self.pod_management_policy == "OrderedReady":
            self._ordered_step(active, now, changes)
        else:
            diff = self.replicas - len(active)
            if diff > 0:
                for _ in range(diff):
                    changes.created.append(self._create(now))
            elif diff < 0:
                for pod in self._victims(active, -diff, now):
                    self._delete(pod, now)
                    changes.deleting.append(pod)
        return changes

    def next_change_after(self, now: float) -> float | None:
        """The next instant at which :meth:`advance` would do something (for event-driven callers)."""
        times = [p.gone_at for p in self.pods if p.gone_at is not None and p.gone_at > now]
        if self.kind == "StatefulSet" and self.pod_management_policy == "OrderedReady":
            times += [p.ready_at for p in self.pods if p.deleted_at is None and p.ready_at > now]
        return min(times) if times else None

    def _ordered_step(self, active: list[SimPod], now: float, changes: WorkloadChanges) -> None:
        if any(p.deleted_at is not None for p in self.pods):
            return  # wait for the terminating pod to go
        if len(active) < self.replicas:
            if all(p.ready(now) for p in active):
                changes.created.append(self._create(now))
        elif len(active) > self.replicas:
            victim = max(active, key=lambda p: p.ordinal or 0)
            self._delete(victim, now)
            changes.deleting.append(victim)

    def _create(self, now: float) -> SimPod:
        self._serial += 1
        p = self.params
        startup = p.startup_seconds
        pending = min(p.pending_seconds, startup)
        if self.kind == "StatefulSet":
            used = {q.ordinal for q in self.pods}
            ordinal = next(i for i in range(len(used) + 1) if i not in used)
            name = f"{self.name}-{ordinal}"
        else:
            ordinal = None
            name = f"{self.name}-{self._template_hash}-{_suffix(f'{self.uid}/{self._serial}', 5)}"
        pod = SimPod(
            name=name,
            uid=_stable_uid(f"{self.uid}/{self._serial}"),
            created=now,
            running_at=now + pending,
            ready_at=now + startup,
            ordinal=ordinal,
        )
        self.pods.append(pod)
        self._version += 1
        return pod

    # The embedded cluster's controllers own pod creation there; they report to the workload here,
    # so the caches keyed on ``_version`` (status replicas, usage breakpoints) stay right.

    def attach(self, pod: SimPod) -> None:
        """Count a pod created or adopted elsewhere as one of this workload's."""
        self.pods.append(pod)
        self._version += 1

    def detach(self, pod: SimPod) -> None:
        """Forget a pod that is gone or moved to another workload (no-op if not ours)."""
        if pod in self.pods:
            self.pods.remove(pod)
            self._version += 1

    def mark_deleted(self, pod: SimPod, now: float, gone_at: float) -> None:
        """Record a deletion decided elsewhere: terminating from ``now``, gone at ``gone_at``."""
        pod.deleted_at = now
        pod.gone_at = gone_at
        self._version += 1

    def _delete(self, pod: SimPod, now: float) -> None:
        self._version += 1
        pod.deleted_at = now
        pod.gone_at = now + self.params.termination_seconds
        if pod.gone_at <= now:
            self.pods.remove(pod)

    @staticmethod
    def _victims(active: list[SimPod], count: int, now: float) -> list[SimPod]:
        # ReplicaSet controller's ActivePods order, "delete first" at the front.
        def rank(p: SimPod) -> tuple:
            running = p.running(now)
            ready = p.ready(now)
            return (running, ready, -p.ready_at if ready else 0.0, -p.created, p.name)

        return sorted(active, key=rank)[:count]

    # ----------------------------------------------------------------- reading

    def active_pods(self) -> list[SimPod]:
        return [p for p in self.pods if p.deleted_at is None]

    def ready_count(self, now: float) -> int:
        key = (self._version, bisect.bisect_right(self._transition_times(), now))  # self.epoch(now), inlined: hot
        if self._ready_cache[0] == key:
            return self._ready_cache[1]
        n = sum([p.ready(now) for p in self.pods])
        self._ready_cache = (key, n)
        return n

    def status_replicas(self) -> int:
        """``status.replicas``: pods that exist and are not terminating (ReplicaSet counting)."""
        return self._counts()[2]

    def _counts(self) -> tuple[int, float, int]:
        """(version, earliest gone_at or inf, pods not deleted), recounted when the version moves."""
        counts = self._status_replicas
        if counts[0] != self._version:  # the pod set or a deletion changed
            gone = [p.gone_at for p in self.pods if p.gone_at is not None]
            counts = (self._version, min(gone) if gone else math.inf,
                      sum(1 for p in self.pods if p.deleted_at is None))
            self._status_replicas = counts
        return counts

    def _transition_times(self) -> list[float]:
        """Sorted instants at which some pod starts running, becomes Ready or is deleted."""
        version, times = self._pod_times
        if version != self._version:  # pod times change only with the pod set or a deletion
            times = sorted({t for p in self.pods for t in (p.running_at, p.ready_at, p.deleted_at) if t is not None})
            self._pod_times = (self._version, times)
        return times

    def epoch(self, now: float) -> tuple[int, int]:
        """Equal at two instants exactly when every pod is equally running, Ready and deleted at both
        (no pod-set change, no transition time in between): views and counts can be reused."""
        return (self._version, bisect.bisect_right(self._transition_times(), now))

    def selector(self) -> LabelSelector:
        return LabelSelector(match_labels=dict(self.labels))

    def selector_string(self) -> str:
        return ",".join(f"{k}={v}" for k, v in sorted(self.labels.items()))

    def pod_labels(self, pod: SimPod) -> dict[str, str]:
        labels = dict(self.labels)
        if self.kind == "StatefulSet":
            labels["statefulset.kubernetes.io/pod-name"] = pod.name
        else:
            labels["pod-template-hash"] = self._template_hash
        return labels

    def pod_view(self, pod: SimPod, now: float) -> PodView:
        """The pod as the API would show it at ``now`` (the fields the HPA reads, and a few more)."""
        ready = pod.ready(now) or (pod.deleted_at is not None and pod.deleted_at >= pod.ready_at)
        # Ready condition: False from the kubelet's first status (at creation), True at ready_at.
        transition = pod.ready_at if now >= pod.ready_at else pod.created
        conditions = [
            PodCondition(type="PodScheduled", status="True", last_transition_time=to_datetime(pod.created)),
            PodCondition(
                type="Ready", status="True" if ready else "False", last_transition_time=to_datetime(transition)
            ),
        ]
        owner_kind = "StatefulSet" if self.kind == "StatefulSet" else "ReplicaSet"
        owner_name = self.name if owner_kind == "StatefulSet" else f"{self.name}-{self._template_hash}"
        meta = ObjectMeta(
            name=pod.name,
            namespace=self.namespace,
            uid=pod.uid,
            creation_timestamp=to_datetime(pod.created),
            deletion_timestamp=to_datetime(pod.deleted_at) if pod.deleted_at is not None else None,
            deletion_grace_period_seconds=int(self.params.termination_seconds) if pod.deleted_at is not None else None,
            labels=self.pod_labels(pod),
            owner_references=[
                OwnerReference(api_version="apps/v1", kind=owner_kind, name=owner_name,
                               uid=_stable_uid(owner_name + self.uid), controller=True, block_owner_deletion=True)
            ],
        )
        return PodView(
            metadata=meta,
            spec=PodSpecView(containers=list(self._requests_views)),
            status=PodStatusView(phase=pod.phase(now), start_time=to_datetime(pod.created), conditions=conditions),
        )

    def pod_views(self, now: float) -> list[PodView]:
        return [self.pod_view(p, now) for p in self.pods]

    # ----------------------------------------------------------------- usage

    def served_ready(self, now: float) -> int:
        return self.ready_count(now)

    def cpu_rate(self, pod: SimPod, now: float, ready_n: int | None = None) -> float:
        """Instantaneous CPU usage of ``pod`` in millicores."""
        if not pod.running(now):
            return 0.0
        params = self.params_at(now)
        if not pod.ready(now):
            return params.startup_cpu_milli
        n = self.ready_count(now) if ready_n is None else ready_n
        share = params.cpu_milli / n if n else 0.0
        cap = params.cpu_capacity_milli
        return min(share, cap) if cap is not None else share

    def metric_rate(self, name: str, pod: SimPod, now: float, ready_n: int | None = None) -> float:
        """Instantaneous per-pod value of custom metric ``name`` (its total shared by Ready pods)."""
        if not pod.ready(now):
            return 0.0
        n = self.ready_count(now) if ready_n is None else ready_n
        return self.params_at(now).metrics.get(name, 0.0) / n if n else 0.0

    def memory_bytes(self, pod: SimPod, now: float, ready_n: int | None = None) -> float:
        """Working set of ``pod``: the per-pod base plus its share of the shared total when Ready."""
        if not pod.running(now):
            return 0.0
        params = self.params_at(now)
        base = params.memory_bytes
        if params.memory_shared_bytes and pod.ready(now):
            n = self.ready_count(now) if ready_n is None else ready_n
            base += params.memory_shared_bytes / n if n else 0.0
        return base

    def breakpoints(self, start: float, end: float) -> list[float]:
        """Instants in (start, end) where some pod's usage may change."""
        times = self._transition_times()
        lo, hi = bisect.bisect_right(times, start), bisect.bisect_left(times, end)
        out = set(times[lo:hi]) if lo < hi else None
        for t, _ in self._param_history:
            if start < t < end:
                if out is None:
                    out = set()
                out.add(t)
        return sorted(out) if out else []  # mostly none: a tick's segment holds no transition

    def forget_params_before(self, t: float) -> None:
        """Drop parameter history no longer needed for integration (keeps the one in force at t)."""
        hist = self._param_history
        i = len(hist) - 1
        while i > 0 and hist[i][0] > t:
            i -= 1
        if i > 0:
            del hist[:i]


# --------------------------------------------------------------------------- metrics pipeline


class _Scrape(msgspec.Struct):
    ts: float
    cpu: float  # milli-core-seconds used since the scrape before (the counter's increment)
    metrics: dict[str, float]  # value-seconds per custom metric since the scrape before
    memory: float  # instantaneous bytes


@dataclass(slots=True, eq=False)
class _Cohort:
    """Pods that receive exactly the same increments and hold the same scrape history, so they
    share one counter list and one history (the same list objects under each member's name in
    ``_cum`` / ``_history``): pods whose counters started together and that run, become Ready
    and are deleted at the same instants; and pods that have been Ready through a whole equal
    history, which :meth:`MetricsPipeline._merge_settled` joins (their times then read as the
    latest of the members': every later instant compares the same with either)."""

    running_at: float
    ready_at: float
    deleted_at: float | None
    cum: list[float]
    hist: list[_Scrape]
    members: list[SimPod] = field(default_factory=list)


class MetricsPipeline:
    """A metrics-server-like view of one workload.

    Every pod carries counters (CPU milli-core-seconds; value-seconds per custom metric),
    integrated exactly. Scrapes happen at multiples of ``resolution`` (aligned to the epoch, as one
    metrics-server scrapes all nodes together). A pod's sample at the latest scrape ``t`` is the
    counter difference to the scrape ``window`` seconds earlier divided by the window, with
    ``timestamp = t`` and ``window``; a pod needs both scrapes while Running, so a new pod shows up
    one window after it started. Memory is the working set at the scrape instant. Workload-level
    totals (for External/Object metrics) are the values at the latest scrape.

    The history keeps each scrape's counter *increment* (the counters restart from zero at every
    scrape), and a window's difference is the sum of its increments: pods that were Ready through
    the same history then hold bit-identical histories, whenever they started, and share one.
    """

    def __init__(self, workload: Workload, *, resolution: float = 15.0, window: float | None = None,
                 now: float | None = None) -> None:
        if not resolution > 0:
            raise WorkloadParamError(f"resolution: Invalid value: {resolution!r}: must be > 0")
        window = resolution if window is None else window
        steps = window / resolution
        if window <= 0 or abs(steps - round(steps)) > 1e-9:
            raise WorkloadParamError(f"window: Invalid value: {window!r}: must be a positive multiple of resolution ({resolution})")
        self.workload = workload
        self.resolution = float(resolution)
        self.window = float(window)
        self._keep = int(round(steps)) + 1
        self._last = workload._param_history[0][0] if now is None else now
        self._cum: dict[str, list[float]] = {}  # pod name -> [cpu, metric...] since the latest scrape
        self._metric_names: list[str] = []
        self._history: dict[str, list[_Scrape]] = {}  # pod name -> recent scrapes (oldest first)
        self._cohorts: list[_Cohort] = []
        self._waiting: list[SimPod] = []  # pods without counters yet, by running_at
        self._grouped = -1  # the workload version the cohorts were built for
        self._totals: Mapping[str, float] = {}
        self.last_scrape: float | None = None
        self._usage_cache: dict[tuple, list[tuple[int | None, list[SimPod]]]] = {}  # answers at _usage_at
        self._usage_at: float | None = None
        self._window_text = _format_window(self.window)
        if abs(self._last / self.resolution - round(self._last / self.resolution)) < 1e-9:
            self._metric_names = sorted(workload.params.metrics)
            self._scrape(self._last, self._metric_names)  # starting on the grid: scrape now

    def advance(self, now: float) -> None:
        """Integrate usage from the last call up to ``now``, scraping at every grid point passed."""
        if now <= self._last:
            return
        wl = self.workload
        names = self._metric_names
        for _, params in wl._param_history:
            if params.metrics and any(n not in names for n in params.metrics):
                names = sorted(set(names) | set(params.metrics))
        self._metric_names = names
        grid = math.floor(self._last / self.resolution + 1e-9) * self.resolution + self.resolution
        if grid <= self._last + 1e-9:
            grid += self.resolution
        t = self._last
        while t < now:
            seg_end = now if now < grid else grid
            for b in wl.breakpoints(t, seg_end):  # usage is constant between breakpoints
                self._integrate(t, b - t, names)
                t = b
            self._integrate(t, seg_end - t, names)
            t = seg_end
            if abs(t - grid) < 1e-9:
                self._scrape(grid, names)
                grid += self.resolution
        self._last = now
        wl.forget_params_before(now)

    def _regroup(self) -> None:
        """Cohorts and waiting pods after a pod-set or deletion change; the counters and histories
        of pods no longer in the workload are dropped (a later pod of the same name starts fresh).
        A cohort keeps its times; pods of one that are deleted at different instants split."""
        wl = self.workload
        cums, history = self._cum, self._history
        owner = {id(c.cum): c for c in self._cohorts}
        counted = {id(m) for c in self._cohorts for m in c.members}  # pod objects the counters are of
        live = {p.name for p in wl.pods}
        for pod in wl.pods:
            if pod.name in cums and id(pod) not in counted:  # a new pod under a reused name: fresh
                del cums[pod.name]
        for name in [n for n in cums if n not in live]:
            del cums[name]
        for name in [n for n in history if n not in live]:
            del history[name]
        cohorts: dict[tuple, _Cohort] = {}
        waiting: list[SimPod] = []
        for pod in wl.pods:
            cum = cums.get(pod.name)
            if cum is None:
                waiting.append(pod)
                history.pop(pod.name, None)
                continue
            key = (id(cum), pod.deleted_at)
            c = cohorts.get(key)
            if c is None:
                hist = history.get(pod.name)
                old = owner[key[0]]
                if any(k[0] == key[0] for k in cohorts):  # members now differ: split off a copy
                    cum, hist = list(cum), list(hist or ())
                c = cohorts[key] = _Cohort(old.running_at, old.ready_at, pod.deleted_at, cum,
                                           hist if hist is not None else [])
            c.members.append(pod)
            cums[pod.name] = c.cum
            history[pod.name] = c.hist
        waiting.sort(key=lambda p: p.running_at)
        self._cohorts = list(cohorts.values())
        self._waiting = waiting
        self._grouped = wl._version

    def _join(self, at: float, width: int) -> None:
        """Give counters (from zero) to the waiting pods running at ``at``; a waiting pod deleted
        before it ever ran never will."""
        still: list[SimPod] = []
        fresh: dict[tuple, _Cohort] = {}
        for i, pod in enumerate(self._waiting):
            if pod.running_at > at:
                still.extend(self._waiting[i:])
                break
            deleted = pod.deleted_at
            if deleted is not None and at >= deleted:
                continue
            key = (pod.running_at, pod.ready_at, deleted)
            c = fresh.get(key)
            if c is None:
                c = fresh[key] = _Cohort(pod.running_at, pod.ready_at, deleted, [0.0] * width, [])
                self._cohorts.append(c)
            c.members.append(pod)
            self._cum[pod.name] = c.cum
            self._history[pod.name] = c.hist
        self._waiting = still

    def _integrate(self, at: float, dt: float, names: list[str]) -> None:
        if dt <= 0:
            return
        wl = self.workload
        if self._grouped != wl._version:
            self._regroup()
        width = 1 + len(names)
        if self._waiting and self._waiting[0].running_at <= at:
            self._join(at, width)
        ready_n = wl.ready_count(at)
        params = wl.params_at(at)
        # Every Ready pod has the same rates, every Running-not-Ready pod too: compute them once,
        # and add them once per cohort (the same additions, in the same order, as per pod).
        share = params.cpu_milli / ready_n if ready_n else 0.0
        cap = params.cpu_capacity_milli
        ready_cpu = (min(share, cap) if cap is not None else share) * dt
        start_cpu = params.startup_cpu_milli * dt
        ready_metrics = [params.metrics.get(n, 0.0) / ready_n * dt if ready_n else 0.0 for n in names] if names else ()
        for c in self._cohorts:
            deleted = c.deleted_at
            if at < c.running_at or (deleted is not None and at >= deleted):
                continue  # not running
            cum = c.cum
            if len(cum) < width:
                cum.extend([0.0] * (width - len(cum)))
            if at >= c.ready_at:  # running, so not deleted yet: ready
                cum[0] += ready_cpu
                if ready_metrics:
                    for i, v in enumerate(ready_metrics, 1):
                        cum[i] += v
            else:
                cum[0] += start_cpu

    def _scrape(self, ts: float, names: list[str]) -> None:
        wl = self.workload
        if self._grouped != wl._version:
            self._regroup()
        if self._waiting and self._waiting[0].running_at <= ts:
            self._join(ts, 1 + len(names))  # a pod running since ts: its first sample reads zero counters
        ready_n = wl.ready_count(ts)
        params = wl.params_at(ts)
        mem_unready = params.memory_bytes
        mem_ready = mem_unready + (params.memory_shared_bytes / ready_n if ready_n else 0.0)
        keep = self._keep
        no_metrics: dict[str, float] = {}  # shared by this scrape's samples: they are only read
        settled = 0
        for c in self._cohorts:
            hist = c.hist
            deleted = c.deleted_at
            cum = c.cum
            if ts < c.running_at or (deleted is not None and ts >= deleted):
                hist.clear()  # not running: no sample, and the next one needs a fresh window
                cum[:] = [0.0] * len(cum)
                continue
            metrics = {n: cum[i] for i, n in enumerate(names, 1) if i < len(cum)} if names else no_metrics
            hist.append(_Scrape(ts, cum[0], metrics, mem_ready if ts >= c.ready_at else mem_unready))
            cum[:] = [0.0] * len(cum)  # in place: the members' names point at this list
            if len(hist) > keep:
                del hist[0]
            if deleted is None and ts >= c.ready_at:
                settled += 1
        self._totals = params.metrics
        self.last_scrape = ts
        if settled > 1:
            self._merge_settled(ts)

    def _merge_settled(self, ts: float) -> None:
        """Join the cohorts that are Ready, not deleted and hold equal histories (one window's
        increments, the window's timestamps and the latest memory; the oldest increment of a full
        history is never read again): from now on they receive the same increments too."""
        first: dict[tuple, _Cohort] = {}
        kept: list[_Cohort] = []
        for c in self._cohorts:
            hist = c.hist
            if c.deleted_at is not None or ts < c.ready_at or not hist:
                kept.append(c)
                continue
            sig = (len(c.cum), tuple([h.ts for h in hist]), hist[-1].memory,
                   tuple([(h.cpu, tuple(h.metrics.items())) for h in hist[1:]]))
            into = first.get(sig)
            if into is None:
                first[sig] = c
                kept.append(c)
                continue
            into.members.extend(c.members)
            into.running_at = max(into.running_at, c.running_at)
            into.ready_at = max(into.ready_at, c.ready_at)
            for pod in c.members:
                self._cum[pod.name] = into.cum
                self._history[pod.name] = into.hist
        self._cohorts = kept

    # ----------------------------------------------------------------- samples

    def _window(self, pod_name: str) -> list[_Scrape] | None:
        """The pod's history when it spans a full window ending at the latest scrape, else None."""
        hist = self._history.get(pod_name)
        if not hist or len(hist) < self._keep or hist[-1].ts != self.last_scrape:
            return None
        if abs((hist[-1].ts - hist[0].ts) - self.window) > 1e-6:
            return None
        return hist

    def pod_cpu_milli(self, pod_name: str) -> float | None:
        hist = self._window(pod_name)
        return None if hist is None else _window_sum(hist) / self.window

    def pod_metric(self, pod_name: str, metric: str) -> float | None:
        hist = self._window(pod_name)
        return None if hist is None else _window_sum(hist, metric) / self.window

    def pod_metrics(self) -> list[PodMetrics]:
        """metrics.k8s.io PodMetrics of every pod with a full window at the latest scrape."""
        if self.last_scrape is None:
            return []
        wl = self.workload
        ts = to_datetime(self.last_scrape)
        out: list[PodMetrics] = []
        n_containers = len(wl.containers)
        for pod in wl.pods:
            hist = self._window(pod.name)
            if hist is None:
                continue
            last = hist[-1]
            cpu = _window_sum(hist) / self.window
            containers = []
            for i, c in enumerate(wl.containers):
                # Split evenly; the first container takes the rounding remainder.
                cpu_milli = _split(math.ceil(cpu - 1e-9), n_containers, i)
                mem = _split(int(round(last.memory)), n_containers, i)
                containers.append(
                    ContainerMetrics(
                        name=c.name,
                        usage={"cpu": Quantity.from_milli(cpu_milli), "memory": Quantity.from_milli(mem * 1000, fmt="BinarySI")},
                    )
                )
            out.append(
                PodMetrics(
                    metadata=ObjectMeta(name=pod.name, namespace=wl.namespace, labels=wl.pod_labels(pod),
                                        creation_timestamp=ts),
                    timestamp=ts,
                    window=self._window_text,
                    containers=containers,
                )
            )
        return out

    def resource_usage(self, resource: str, container: str = "") -> list[tuple[int | None, list[SimPod]]]:
        """The pods with a PodMetrics at the latest scrape, grouped by the milli-value it carries for
        ``resource`` (summed over containers, or the named container's; None where the PodMetrics
        has no such value), without building objects: the simulator's fast path. One group per
        cohort (pods with one counter history); computed once per scrape."""
        key = (resource, container)
        if self._usage_at == self.last_scrape:
            cached = self._usage_cache.get(key)
            if cached is not None:
                return cached
        else:
            self._usage_cache = {}
            self._usage_at = self.last_scrape
        wl = self.workload
        names = [c.name for c in wl.containers]
        n = len(names)
        index = names.index(container) if container in names else (-1 if container else None)
        known = resource in ("cpu", "memory") and index != -1
        out: list[tuple[int | None, list[SimPod]]] = []
        if self.last_scrape is not None:
            if self._grouped != wl._version:
                self._regroup()
            keep, last_scrape, window = self._keep, self.last_scrape, self.window
            for c in self._cohorts:
                hist = c.hist
                # _window, inlined
                if len(hist) < keep or hist[-1].ts != last_scrape:
                    continue
                first, last = hist[0], hist[-1]
                if abs((last.ts - first.ts) - window) > 1e-6:
                    continue
                value: int | None = None
                if known:
                    if resource == "cpu":
                        total = math.ceil(_window_sum(hist) / window - 1e-9)
                        value = total if index is None else _split(total, n, index)
                    else:
                        total = int(round(last.memory))
                        value = 1000 * (total if index is None else _split(total, n, index))
                out.append((value, c.members))
        self._usage_cache[key] = out
        return out

    def pods_custom_metric(self, metric: str) -> list[MetricValue]:
        """custom.metrics.k8s.io values of ``metric`` for every pod with a full window."""
        if self.last_scrape is None:
            return []
        wl = self.workload
        ts = to_datetime(self.last_scrape)
        out = []
        for pod in wl.pods:
            value = self.pod_metric(pod.name, metric)
            if value is None:
                continue
            out.append(
                MetricValue(
                    described_object=ObjectReferenceView(kind="Pod", namespace=wl.namespace, name=pod.name, api_version="/v1"),
                    metric=MetricIdentifierView(name=metric),
                    timestamp=ts,
                    window_seconds=int(self.window),
                    value=Quantity.from_milli(math.ceil(value * 1000 - 1e-6)),
                )
            )
        return out

    def total(self, metric: str) -> float | None:
        """The workload total of ``metric`` at the latest scrape (None before the first scrape)."""
        if self.last_scrape is None or metric not in self._totals:
            return None
        return self._totals[metric]

    def object_metric(self, metric: str, described: ObjectReferenceView) -> MetricValue | None:
        value = self.total(metric)
        if value is None:
            return None
        return MetricValue(
            described_object=described,
            metric=MetricIdentifierView(name=metric),
            timestamp=to_datetime(self.last_scrape),  # type: ignore[arg-type]
            window_seconds=int(self.window),
            value=Quantity.from_milli(math.ceil(value * 1000 - 1e-6)),
        )

    def external_metric(self, metric: str, labels: Mapping[str, str] | None = None) -> ExternalMetricValue | None:
        value = self.total(metric)
        if value is None:
            return None
        return ExternalMetricValue(
            metric_name=metric,
            metric_labels=dict(labels) if labels else None,
            timestamp=to_datetime(self.last_scrape),  # type: ignore[arg-type]
            window=int(self.window),
            value=Quantity.from_milli(math.ceil(value * 1000 - 1e-6)),
        )


# --------------------------------------------------------------------------- helpers


def _window_sum(hist: list[_Scrape], metric: str | None = None) -> float:
    """CPU milli-core-seconds (or ``metric``'s value-seconds) over a full history's window: its
    increments after the oldest, added in order (the same additions for every pod holding that
    history; not ``sum()``, whose float rounding differs between Python versions)."""
    total = 0.0
    if metric is None:
        for h in hist[1:]:
            total += h.cpu
    else:
        for h in hist[1:]:
            total += h.metrics.get(metric, 0.0)
    return total


def _split(total: int, parts: int, index: int) -> int:
    base, rest = divmod(total, parts)
    return base + (rest if index == 0 else 0)


def _stable_uid(seed: str) -> str:
    h = hashlib.sha1(seed.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _suffix(seed: str, length: int) -> str:
    digest = hashlib.sha1(seed.encode()).digest()
    return "".join(_NAME_ALPHABET[b % len(_NAME_ALPHABET)] for b in digest[:length])


def _format_window(seconds: float) -> str:
    try:
        from pyhpa.api.timefmt import format_duration

        return format_duration(seconds)
    except ImportError:  # timefmt not there yet: Go style for whole seconds is enough
        return f"{int(seconds)}s" if seconds < 60 else f"{int(seconds // 60)}m{int(seconds % 60)}s"


picklable(ContainerTemplate)
