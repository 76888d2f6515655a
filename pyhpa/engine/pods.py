"""Pod facts the calculator needs: readiness grouping (replica_calculator.go groupPods) and requests (calculatePodRequests).

The pods an HPA selects reach the engine as a ``PodSet``: the pods plus their time-independent
facts, computed once by whoever lists them, where the pod list changes (the in-memory cluster's
index when pods are stored, the live adapter per listing), so the calculator reads them on every
sync without looking at each pod again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Iterable, Mapping, Sequence

import msgspec

from pyhpa.api.types import PodView
from pyhpa.engine.inputs import PodMetricsInfo

# Go's zero time, used where upstream reads an unset metav1.Time.
ZERO_TIME = datetime(1, 1, 1, tzinfo=timezone.utc)


class CalculationError(Exception):
    """A calculator failure; ``str(err)`` is upstream's error text."""


class PodGroups(msgspec.Struct):
    """Result of grouping the listed pods against the fetched samples."""

    ready_count: int
    unready: list[str]
    missing: list[str]
    ignored: list[str]


def _ready_condition(pod: PodView):  # -> PodCondition | None
    conds = pod.status.conditions
    if conds:
        for c in conds:
            if c.type == "Ready":
                return c
    return None


def is_running_and_ready(pod: PodView) -> bool:
    """Upstream's ready-pod count for Object/External Value targets."""
    if pod.status.phase != "Running":
        return False
    c = _ready_condition(pod)
    return c is not None and c.status == "True"


_IGNORED, _PENDING, _NEVER_READY, _CANDIDATE = range(4)  # a pod row's kind

# What grouping reads of one pod: (name, kind, Ready status, Ready transition, start).
PodRow = tuple[str, int, "str | None", "datetime | None", "datetime | None"]


def _pod_row(pod: PodView) -> PodRow:
    """``_NEVER_READY``: running but without a Ready condition or a start time (always unready for CPU)."""
    meta = pod.metadata
    status = pod.status
    name = meta.name or ""
    phase = status.phase
    if meta.deletion_timestamp is not None or phase == "Failed":
        return (name, _IGNORED, None, None, None)
    if phase == "Pending":
        return (name, _PENDING, None, None, None)
    cond = _ready_condition(pod)
    start = status.start_time
    if cond is None or start is None:
        return (name, _NEVER_READY, None, None, None)
    return (name, _CANDIDATE, cond.status, cond.last_transition_time or ZERO_TIME, start)


@dataclass(frozen=True, slots=True, eq=False)
class PodSet:
    """The pods an HPA selects, with what the engine reads of them computed once (``PodSet.of``).

    ``candidates`` are the pods neither deleted, Failed nor Pending (grouped by their metrics, and
    readiness for CPU); ``settled_start`` is the latest start time when every candidate has started
    and is Ready=True (else None): once that is past the CPU initialization period, CPU grouping
    needs no per-pod look. ``requests`` holds, per resource any container requests, each pod's
    request summed over its containers (or the error text of the first pod missing one).
    """

    pods: tuple[PodView, ...]
    rows: tuple[PodRow, ...]
    ignored: tuple[str, ...]
    pending: tuple[str, ...]
    candidates: tuple[str, ...]
    settled_start: datetime | None
    running_and_ready: int
    label_sets: tuple[dict[str, str], ...]  # distinct label dicts, in the order pods first carry them
    requests: Mapping[str, dict[str, int] | str]

    @staticmethod
    def of(pods: Iterable[PodView]) -> "PodSet":
        """The facts of ``pods`` (kept in their order)."""
        listed = tuple(pods)
        rows = tuple(_pod_row(p) for p in listed)
        ignored: list[str] = []
        pending: list[str] = []
        candidates: list[str] = []
        latest: datetime | None = None
        settled = True
        for name, kind, cond_status, _, start in rows:
            if kind == _IGNORED:
                ignored.append(name)
            elif kind == _PENDING:
                pending.append(name)
            else:
                candidates.append(name)
                if kind == _NEVER_READY or cond_status != "True":
                    settled = False
                elif latest is None or start > latest:  # type: ignore[operator]
                    latest = start
        return PodSet(
            pods=listed,
            rows=rows,
            ignored=tuple(ignored),
            pending=tuple(pending),
            candidates=tuple(candidates),
            settled_start=latest if settled else None,
            running_and_ready=sum(1 for p in listed if is_running_and_ready(p)),
            label_sets=_distinct_label_sets(listed),
            requests=_summed_requests(listed),
        )

    def __len__(self) -> int:
        return len(self.pods)


def _distinct_label_sets(pods: Sequence[PodView]) -> tuple[dict[str, str], ...]:
    """The pods' label dicts, one per distinct label set (a pod without labels counts as ``{}``):
    the ambiguity check asks the selector registry once per label set."""
    out: list[dict[str, str]] = []
    seen: set[frozenset] = set()
    previous: dict[str, str] | None = None
    for pod in pods:
        labels = pod.metadata.labels or {}
        if labels == previous:  # a workload's pods mostly share one label set, and come together
            continue
        previous = labels
        label_set = frozenset(labels.items())
        if label_set not in seen:
            seen.add(label_set)
            out.append(labels)
    return tuple(out)


def _summed_requests(pods: Sequence[PodView]) -> dict[str, dict[str, int] | str]:
    """Per resource some container requests: ``pod_requests(pods, resource, "", False)``'s answer,
    or its error text."""
    resources: dict[str, None] = {}
    for pod in pods:
        for c in _containers(pod):
            reqs = c.resources.requests if c.resources is not None else None
            if reqs:
                resources.update(dict.fromkeys(reqs))
    out: dict[str, dict[str, int] | str] = {}
    for resource in resources:
        try:
            out[resource] = {(p.metadata.name or ""): _container_requests(p, p.metadata.name or "", resource, "")
                             for p in pods}
        except CalculationError as exc:
            out[resource] = str(exc)
    return out


EMPTY_PODS = PodSet.of(())  # what a selector that matches nothing selects


def group_pods(
    pods: PodSet,
    metrics: PodMetricsInfo,
    resource: str,
    cpu_initialization_period: float,
    initial_readiness_delay: float,
    now: datetime,
) -> PodGroups:
    """Ready / unready / missing / ignored pods (upstream's groupPods).

    The usual case needs no per-pod look: every candidate is Ready and started more than the CPU
    initialization period ago (or the resource is not CPU); then readiness cannot make a pod
    unready and only the metrics decide (a pod without one is missing). Otherwise every pod's
    row goes through ``_group_rows``.
    """
    if resource == "cpu":
        settled = pods.settled_start
        try:
            unsettled = (settled is None or not pods.candidates
                         or settled > now - timedelta(seconds=cpu_initialization_period))  # start + period > now for some pod
        except OverflowError:
            unsettled = True
        if unsettled:
            return _group_rows(pods.rows, metrics, resource, cpu_initialization_period, initial_readiness_delay, now)
    missing = [name for name in pods.candidates if name not in metrics]
    return PodGroups(len(pods.candidates) - len(missing), list(pods.pending), missing, list(pods.ignored))


def _group_rows(
    rows: Sequence[PodRow],
    metrics: PodMetricsInfo,
    resource: str,
    cpu_initialization_period: float,
    initial_readiness_delay: float,
    now: datetime,
) -> PodGroups:
    ready = 0
    unready: list[str] = []
    missing: list[str] = []
    ignored: list[str] = []
    init_period = timedelta(seconds=cpu_initialization_period)
    delay = timedelta(seconds=initial_readiness_delay)
    is_cpu = resource == "cpu"
    # start + period > now  <=>  start > now - period (datetimes are exact integer microseconds):
    # one subtraction per pass instead of an addition per pod; the addition where it underflows.
    try:
        init_limit: datetime | None = now - init_period
    except OverflowError:
        init_limit = None
    metric_of = metrics.get
    for name, kind, cond_status, transition, start in rows:  # every pod of an unsettled HPA, every sync
        if kind == _IGNORED:
            ignored.append(name)
            continue
        if kind == _PENDING:
            unready.append(name)
            continue
        metric = metric_of(name)
        if metric is None:
            missing.append(name)
            continue
        if is_cpu:
            if kind == _NEVER_READY:
                is_unready = True
            elif (start > init_limit) if init_limit is not None else (start + init_period > now):  # type: ignore[operator]
                is_unready = cond_status == "False" or metric.timestamp < transition + timedelta(seconds=metric.window)  # type: ignore[operator]
            else:
                is_unready = cond_status == "False" and start + delay > transition  # type: ignore[operator]
            if is_unready:
                unready.append(name)
                continue
        ready += 1
    return PodGroups(ready, unready, missing, ignored)


def _pod_level_set(pod: PodView) -> bool:
    res = pod.spec.resources
    if res is None or not res.requests:
        return False
    return any(k in ("cpu", "memory") or k.startswith("hugepages-") for k in res.requests)


def pod_request(pod: PodView, resource: str, container: str, pod_level_resources: bool) -> int:
    """The pod's request of ``resource`` in milli-units, or ``CalculationError`` (upstream's text)."""
    name = pod.metadata.name or ""
    if pod_level_resources and not container and _pod_level_set(pod):
        q = pod.spec.resources.requests.get(resource)  # type: ignore[union-attr]
        if q is not None:
            return q.milli_int64()
        # Resources not set at pod level fall back to the containers' aggregate. [UNCONFIRMED]
        try:
            return _container_requests(pod, name, resource, "")
        except CalculationError:
            raise CalculationError(f"missing pod-level request for {resource} in Pod {name}") from None
    return _container_requests(pod, name, resource, container)


def _containers(pod: PodView) -> Sequence:
    """The containers whose requests count: regular ones, then restartable init (sidecar) ones."""
    spec = pod.spec
    if not spec.init_containers:
        return spec.containers
    return [*spec.containers, *(c for c in spec.init_containers if c.restart_policy == "Always")]


def _container_requests(pod: PodView, pod_name: str, resource: str, container: str) -> int:
    total = 0
    for c in _containers(pod):
        if not container or container == c.name:
            reqs = c.resources.requests if c.resources is not None else None
            q = reqs.get(resource) if reqs else None
            if q is None:
                raise CalculationError(f"missing request for {resource} in container {c.name} of Pod {pod_name}")
            total += q.milli_int64()
        if container and container == c.name:
            return total
    if container:
        raise CalculationError(f"container {container} not found in Pod {pod_name}")
    return total


def pod_requests(pods: PodSet, resource: str, container: str, pod_level_resources: bool) -> dict[str, int]:
    """Each pod's request of ``resource`` in milli-units (the answer is shared: do not mutate it).

    Every container's request summed (the usual case) was computed with the pod set; a named
    container, pod-level resources or a resource no container requests are looked up here.
    """
    if not container and not pod_level_resources:
        summed = pods.requests.get(resource)
        if summed is not None:
            if isinstance(summed, str):
                raise CalculationError(summed)
            return summed
    return {(p.metadata.name or ""): pod_request(p, resource, container, pod_level_resources) for p in pods.pods}
