"""The simulated workload: pods that start, become Ready, share a load and get terminated.

Shared by the embedded cluster's live simulation (real clock) and the simulator (virtual clock),
so it is pure: no I/O, every method takes ``now`` as float seconds since the epoch.
:class:`Workload` holds the pods of one Deployment/StatefulSet, moved towards the desired replica
count the way the ReplicaSet / StatefulSet controllers and the kubelet would, and their usage
(:mod:`pyhpa.workload.params` sets it, :mod:`pyhpa.workload.pipeline` scrapes it).

Per-pod usage is piecewise constant between *breakpoints* (a pod starting, becoming Ready or
being deleted; a parameter change), so integrating it is exact, not sampled.
"""

from __future__ import annotations

import bisect
import hashlib
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping

import msgspec

from pyhpa.api.names import safe_encode
from pyhpa.api.quantity import Quantity
from pyhpa.api.types import (
    ContainerView,
    LabelSelector,
    ObjectMeta,
    OwnerReference,
    PodCondition,
    PodSpecView,
    PodStatusView,
    PodView,
    ResourceRequirements,
)
from pyhpa.workload.params import WorkloadParamError, WorkloadParams



def to_datetime(ts: float) -> datetime:
    """Epoch seconds -> aware UTC datetime (whole microseconds): the model keeps float clocks,
    the API types carry datetimes."""
    return datetime.fromtimestamp(round(ts, 6), tz=timezone.utc)


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
    node: str = ""  # the node it is bound to ("" when on none: its CPU is not shared)

    def phase(self, now: float) -> str:
        return "Running" if now >= self.running_at else "Pending"

    def running(self, now: float) -> bool:
        return now >= self.running_at and (self.deleted_at is None or now < self.deleted_at)

    def ready(self, now: float) -> bool:
        return now >= self.ready_at and (self.deleted_at is None or now < self.deleted_at)

    def terminating(self, now: float) -> bool:
        return self.deleted_at is not None and now >= self.deleted_at


def ready_condition(pod: SimPod, now: float, unready_since: float | None = None) -> tuple[bool, float]:
    """The pod's Ready condition at ``now``: its status, and its lastTransitionTime (upstream's
    PodCondition: the instant the status last changed).

    True from ``ready_at`` on, and through termination when the pod was Ready as it was deleted
    (its containers serve until they stop); False before that, since ``unready_since`` (the
    kubelet's first status of the pod, or a container kill that made it unready; default: the
    pod's creation). A pod deleted before it turned Ready never does.
    """
    ready = now >= pod.ready_at and (pod.deleted_at is None or pod.deleted_at >= pod.ready_at)
    if ready:
        return True, pod.ready_at
    return False, pod.created if unready_since is None else unready_since


@dataclass(frozen=True)
class ContainerTemplate:
    name: str
    requests: Mapping[str, str] = field(default_factory=dict)  # e.g. {"cpu": "500m", "memory": "256Mi"}
    limits: Mapping[str, str] = field(default_factory=dict)  # what the container may use at most


class ResourceLimits:
    """The CPU or memory limits of a pod's containers, and what they make of the pod's demand.

    Why: a pod's demand is shared equally by its containers (as the metrics split it); a
    container never uses more than its limit (CPU is throttled; memory above it is OOMKilled,
    which the embedded cluster's kubelet simulates). ``caps`` are per container, in milli-units
    for CPU and bytes for memory, ``inf`` where a container has no limit.
    """

    __slots__ = ("caps", "_smallest_first")

    def __init__(self, caps: list[float]) -> None:
        self.caps = caps
        self._smallest_first = sorted(range(len(caps)), key=lambda i: caps[i])

    @staticmethod
    def of(containers: Iterable[ContainerTemplate], resource: str) -> "ResourceLimits | None":
        """The limits of ``resource`` (``cpu`` or ``memory``); None when no container has one."""
        caps = []
        for c in containers:
            text = c.limits.get(resource)
            if text is None:
                caps.append(math.inf)
                continue
            q = Quantity.parse(str(text))
            caps.append(float(q.milli_value()) if resource == "cpu" else float(q.value()))
        return ResourceLimits(caps) if any(math.isfinite(c) for c in caps) else None

    def cap(self, demand: float) -> float:
        """What the containers use of a pod's ``demand``: each its equal part, up to its limit."""
        part = demand / len(self.caps)
        return sum(min(part, c) for c in self.caps)

    def exceeded(self, demand: float) -> list[int]:
        """The indexes of the containers whose equal part of ``demand`` is over their limit."""
        part = demand / len(self.caps)
        return [i for i, c in enumerate(self.caps) if part > c]

    def fill(self, total: float, seconds: float) -> list[float]:
        """Each container's part of what a pod used over ``seconds`` (``total``, e.g. milli-core-
        seconds): equal parts as far as each container's limit over that time allows, the rest to
        those with room. For a constant demand this is exactly what :meth:`cap` gave each one."""
        n = len(self.caps)
        parts = [0.0] * n
        order = self._smallest_first
        left = total
        for k, i in enumerate(order):
            level = left / (n - k)
            room = self.caps[i] * seconds if math.isfinite(self.caps[i]) else math.inf
            if room >= level:  # every container from here on takes an equal part
                for j in order[k:]:
                    parts[j] = level
                break
            parts[i] = room
            left -= room
        return parts

    def split(self, total: int, index: int) -> int:
        """Container ``index``'s whole part of a pod's ``total`` (a metric value): equal parts
        as far as the limits allow, the rest to the containers with room, first ones first."""
        n = len(self.caps)
        caps = [math.floor(c) if math.isfinite(c) else total for c in self.caps]
        alloc = [0] * n
        left = total
        open_ = list(range(n))
        while left > 0 and open_:
            base, rest = divmod(left, len(open_))
            still = []
            for j, i in enumerate(open_):
                give = min(base + (rest if j == 0 else 0), caps[i] - alloc[i])
                alloc[i] += give
                left -= give
                if alloc[i] < caps[i]:
                    still.append(i)
            if still == open_:
                break
            open_ = still
        return alloc[index]


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
        gate: Any = None,
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
        # the nodes whose CPU its pods share with others' (pyhpa.workload.nodes.NodeShares, which
        # sets it); None: its pods are never contended (a simulator scenario without nodes)
        self.sharing: Any = None
        self.set_containers(list(containers) or [ContainerTemplate(name=name)])
        self.params = (params or WorkloadParams()).validate()
        self.pod_management_policy = pod_management_policy
        self.replicas = int(replicas)
        self.pods: list[SimPod] = []
        self._version = 0  # bumped whenever the pod set or a pod's deletion changes
        self._status_replicas: tuple[int, float, int] = (-1, math.inf, 0)  # see _counts
        self._pod_times: tuple[int, list[float]] = (-1, [])  # (version, sorted pod transition times)
        # the span between two transition times that ``now`` was last in: [version, from, until,
        # its epoch index, Ready pods then (None until counted)]; pods are equally running, Ready
        # and deleted throughout it, so the hot readers skip the bisection while in it
        self._span: list[Any] = [-1, math.inf, -math.inf, 0, None]
        self._serial = 0
        self._template_hash = _suffix(self.uid, 10)
        # (since, params) of recent parameter changes: usage between pipeline advances may span one.
        self._param_history: list[tuple[float, WorkloadParams]] = [(now, self.params)]
        # what admits and places its new pods (the simulator's quotas and nodes: a PodGate of
        # pyhpa.sim.admission): ``admit(wl, now)`` may refuse one, ``place(wl, pod, now)`` binds
        # it; None: every pod is created, on no node
        self.gate = gate
        self.advance(now)

    def set_containers(self, containers: list[ContainerTemplate]) -> None:
        """The containers of the workload's pods: their names, requests and limits (usage from
        the next instant integrated on uses the new limits)."""
        views = [
            ContainerView(
                name=c.name,
                resources=ResourceRequirements(requests={k: Quantity.parse(str(v)) for k, v in c.requests.items()}),
            )
            for c in containers
        ]
        cpu, memory = ResourceLimits.of(containers, "cpu"), ResourceLimits.of(containers, "memory")
        self.containers = containers
        self._requests_views = views
        self.cpu_limits, self.memory_limits = cpu, memory
        self.cpu_shares = cpu_shares(containers)
        if self.sharing is not None:  # its pods' wants and shares on the nodes change
            self.sharing.changed(self)

    # ----------------------------------------------------------------- driving

    def _changed(self) -> None:
        """The pod set, a pod's times or a deletion changed: a new version, and a change of the
        nodes this workload shares (its neighbours' CPU parts may change with it)."""
        self._version += 1
        if self.sharing is not None:
            self.sharing.changed(self)

    def set_params(self, params: WorkloadParams, now: float) -> None:
        """Change the load; usage integration uses the new values from ``now`` on."""
        if params != self.params:
            self.params = params.validate()
            if self._param_history and self._param_history[-1][0] >= now:
                self._param_history = [h for h in self._param_history if h[0] < now]
            self._param_history.append((now, self.params))
            if self.sharing is not None:
                self.sharing.changed(self)

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
            self._changed()
        active = [p for p in self.pods if p.deleted_at is None]
        if self.kind == "StatefulSet" and self.pod_management_policy == "OrderedReady":
            self._ordered_step(active, now, changes)
        else:
            diff = self.replicas - len(active)
            if diff > 0:
                for _ in range(diff):
                    pod = self._try_create(now)
                    if pod is None:
                        break
                    changes.created.append(pod)
            elif diff < 0:
                for pod in scale_down_victims(active, -diff, now):
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
                pod = self._try_create(now)
                if pod is not None:
                    changes.created.append(pod)
        elif len(active) > self.replicas:
            victim = max(active, key=lambda p: p.ordinal or 0)
            self._delete(victim, now)
            changes.deleting.append(victim)

    def _try_create(self, now: float) -> SimPod | None:
        """A new pod, unless the gate refuses it (then None)."""
        gate = self.gate
        if gate is None:
            return self._create(now)
        if not gate.admit(self, now):
            return None
        pod = self._create(now)
        gate.place(self, pod, now)
        return pod

    def _next_ordinal(self) -> int:
        used = {q.ordinal for q in self.pods}
        return next(i for i in range(len(used) + 1) if i not in used)

    def generate_name(self) -> str:
        """The name the next pod is created with as the API server sees it before naming it: a
        StatefulSet's next pod's name, else the ReplicaSet's ``generateName`` prefix."""
        if self.kind == "StatefulSet":
            return f"{self.name}-{self._next_ordinal()}"
        return f"{self.name}-{self._template_hash}-"

    def _create(self, now: float) -> SimPod:
        self._serial += 1
        running_at, ready_at = self.params.pod_times(now)
        if self.kind == "StatefulSet":
            ordinal = self._next_ordinal()
            name = f"{self.name}-{ordinal}"
        else:
            ordinal = None
            name = f"{self.name}-{self._template_hash}-{_suffix(f'{self.uid}/{self._serial}', 5)}"
        pod = SimPod(
            name=name,
            uid=_stable_uid(f"{self.uid}/{self._serial}"),
            created=now,
            running_at=running_at,
            ready_at=ready_at,
            ordinal=ordinal,
        )
        self.pods.append(pod)
        self._changed()
        return pod

    # The embedded cluster's controllers own pod creation there; they report to the workload here,
    # so the caches keyed on ``_version`` (status replicas, usage breakpoints) stay right.

    def attach(self, pod: SimPod) -> None:
        """Count a pod created or adopted elsewhere as one of this workload's."""
        self.pods.append(pod)
        self._changed()

    def detach(self, pod: SimPod) -> None:
        """Forget a pod that is gone or moved to another workload (no-op if not ours)."""
        if pod in self.pods:
            self.pods.remove(pod)
            self._changed()

    def set_times(self, pod: SimPod, running_at: float, ready_at: float) -> None:
        """Record start times decided elsewhere (a pod that waited for a node, or whose
        container restarts): it runs from ``running_at`` and is Ready from ``ready_at``."""
        pod.running_at = running_at
        pod.ready_at = ready_at
        self._changed()

    def mark_deleted(self, pod: SimPod, now: float, gone_at: float) -> None:
        """Record a deletion decided elsewhere: terminating from ``now``, gone at ``gone_at``."""
        pod.deleted_at = now
        pod.gone_at = gone_at
        self._changed()

    def _delete(self, pod: SimPod, now: float) -> None:
        self._changed()
        pod.deleted_at = now
        pod.gone_at = now + self.params.termination_seconds
        if pod.gone_at <= now:
            self.pods.remove(pod)

    # ----------------------------------------------------------------- reading

    def active_pods(self) -> list[SimPod]:
        return [p for p in self.pods if p.deleted_at is None]

    def ready_count(self, now: float) -> int:
        span = self._span
        if span[0] != self._version or not span[1] <= now < span[2]:
            span = self._span_at(now)
        n = span[4]
        if n is None:
            n = span[4] = sum([p.ready(now) for p in self.pods])
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
        span = self._span
        if span[0] != self._version or not span[1] <= now < span[2]:
            span = self._span_at(now)
        return (span[0], span[3])

    def _span_at(self, now: float) -> list[Any]:
        """The span of ``now`` between two transition times (see ``_span``), made current."""
        times = self._transition_times()
        i = bisect.bisect_right(times, now)
        span = self._span = [self._version, times[i - 1] if i else -math.inf,
                             times[i] if i < len(times) else math.inf, i, None]
        return span

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
        ready, transition = ready_condition(pod, now)
        conditions = [
            PodCondition(type="PodScheduled", status="True", last_transition_time=to_datetime(pod.created)),
            PodCondition(
                # to the second, as metav1.Time is served: the HPA compares it with a metric's window
                type="Ready", status="True" if ready else "False", last_transition_time=to_datetime(math.floor(transition))
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
            status=PodStatusView(phase=pod.phase(now), start_time=to_datetime(math.floor(pod.created)),
                                conditions=conditions),
        )

    def pod_views(self, now: float) -> list[PodView]:
        return [self.pod_view(p, now) for p in self.pods]

    # ----------------------------------------------------------------- usage

    def served_ready(self, now: float) -> int:
        return self.ready_count(now)

    def cpu_rate(self, pod: SimPod, now: float, ready_n: int | None = None) -> float:
        """Instantaneous CPU usage of ``pod`` in millicores (alone on its node)."""
        return self.cpu_used(self.cpu_demand(pod, now, ready_n))

    def cpu_demand(self, pod: SimPod, now: float, ready_n: int | None = None) -> float:
        """The CPU ``pod`` would use without its limits: its startup CPU, or once Ready its
        part of the workload's demand up to ``cpu_capacity_milli``."""
        if not pod.running(now):
            return 0.0
        params = self.params_at(now)
        if not pod.ready(now):
            return params.startup_cpu_milli
        n = self.ready_count(now) if ready_n is None else ready_n
        share = params.cpu_milli / n if n else 0.0
        cap = params.cpu_capacity_milli
        return share if cap is None or share <= cap else cap

    def ready_cpu(self, share: float, params: WorkloadParams) -> float:
        """What a Ready pod uses of ``share``, its part of the workload's CPU demand: at most
        ``cpu_capacity_milli`` (a saturation point), each container at most its CPU limit."""
        cap = params.cpu_capacity_milli
        return self.cpu_used(share if cap is None or share <= cap else cap)

    def cpu_saturation(self, params: WorkloadParams) -> float:
        """The most CPU a Ready pod uses however large the demand (inf when nothing bounds it):
        its CPU limits when every container has one, ``cpu_capacity_milli`` if lower. What a pod
        serves follows from it (the simulator's capacity model)."""
        return self.ready_cpu(math.inf, params)

    def cpu_used(self, demand: float) -> float:
        """What a pod uses of a CPU ``demand``: its containers are throttled at their limits."""
        limits = self.cpu_limits
        return demand if limits is None else limits.cap(demand)

    def metric_rate(self, name: str, pod: SimPod, now: float, ready_n: int | None = None) -> float:
        """Instantaneous per-pod value of custom metric ``name`` (its total shared by Ready pods)."""
        if not pod.ready(now):
            return 0.0
        n = self.ready_count(now) if ready_n is None else ready_n
        return self.params_at(now).metrics.get(name, 0.0) / n if n else 0.0

    def memory_demand(self, pod: SimPod, now: float, ready_n: int | None = None) -> float:
        """The memory ``pod`` would use: the per-pod base plus its share of the shared total when
        Ready (beyond a container's limit, it is OOMKilled)."""
        if not pod.running(now):
            return 0.0
        params = self.params_at(now)
        base = params.memory_bytes
        if params.memory_shared_bytes and pod.ready(now):
            n = self.ready_count(now) if ready_n is None else ready_n
            base += params.memory_shared_bytes / n if n else 0.0
        return base

    def memory_bytes(self, pod: SimPod, now: float, ready_n: int | None = None) -> float:
        """Working set of ``pod``: its demand, each container's part up to its limit."""
        return self.memory_used(self.memory_demand(pod, now, ready_n))

    def memory_used(self, demand: float) -> float:
        limits = self.memory_limits
        return demand if limits is None else limits.cap(demand)

    def split(self, resource: str, total: int, parts: int, index: int) -> int:
        """Container ``index``'s part of a pod's ``total`` of ``resource`` (a metric value):
        equal parts, the first container taking the remainder, as far as the limits allow."""
        limits = self.cpu_limits if resource == "cpu" else self.memory_limits
        if limits is None or len(limits.caps) != parts:
            base, rest = divmod(total, parts)
            return base + (rest if index == 0 else 0)
        return limits.split(total, index)

    def breakpoints(self, start: float, end: float) -> list[float]:
        """Instants in (start, end) where some pod's usage may change (on a shared node, when
        another workload's may: see :class:`pyhpa.workload.nodes.NodeShares`)."""
        if self.sharing is not None and self.uid in self.sharing.workloads:
            return self.sharing.breakpoints(start, end)
        return self.own_breakpoints(start, end)

    def own_breakpoints(self, start: float, end: float) -> list[float]:
        """Instants in (start, end) where this workload's pods or parameters change."""
        span = self._span
        if span[0] == self._version and span[1] <= start and end <= span[2]:
            out = None  # within one span: no pod transition time in between (the usual tick)
        else:
            times = self._transition_times()
            lo, hi = bisect.bisect_right(times, start), bisect.bisect_left(times, end)
            out = set(times[lo:hi]) if lo < hi else None
        for t, _ in self._param_history:
            if start < t < end:
                if out is None:
                    out = set()
                out.add(t)
        return sorted(out) if out else []  # mostly none: a tick's segment holds no transition

    def own_times(self) -> set[float]:
        """Every instant at which this workload's pods or parameters change (what
        :meth:`own_breakpoints` gives the part of in an interval)."""
        out = set(self._transition_times())
        out.update(t for t, _ in self._param_history)
        return out

    def forget_params_before(self, t: float) -> None:
        """Drop parameter history no longer needed for integration (keeps the one in force at t)."""
        hist = self._param_history
        i = len(hist) - 1
        while i > 0 and hist[i][0] > t:
            i -= 1
        if i > 0:
            del hist[:i]
            if self.sharing is not None:  # its instants change, not its pods' usage
                self.sharing.changed(self, usage=False)


def cpu_shares(containers: Iterable[ContainerTemplate]) -> float:
    """A pod's ``cpu.shares``: its containers' CPU requests in millicores (a limit without a
    request is the request, as the API server defaults it), at least the kernel's minimum 2."""
    total = 0.0
    for c in containers:
        text = c.requests.get("cpu") or c.limits.get("cpu")
        if text is not None:
            try:
                total += float(Quantity.parse(str(text)).milli_value())
            except Exception:  # noqa: BLE001 - not a quantity: the set_containers caller decides
                pass
    return max(total, 2.0)


def scale_down_victims(active: list[SimPod], count: int, now: float) -> list[SimPod]:
    """The ``count`` pods a ReplicaSet scale-down deletes: its ActivePods order, "delete first"
    at the front (Pending before Running, unready before Ready, the most recently Ready first,
    the newest first). The embedded cluster's ReplicaSet controller uses it too."""
    def rank(p: SimPod) -> tuple:
        running = p.running(now)
        ready = p.ready(now)
        return (running, ready, -p.ready_at if ready else 0.0, -p.created, p.name)

    return sorted(active, key=rank)[:count]


def _stable_uid(seed: str) -> str:
    h = hashlib.sha1(seed.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _suffix(seed: str, length: int) -> str:
    return safe_encode(hashlib.sha1(seed.encode()).digest()[:length])
