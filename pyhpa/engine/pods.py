"""Pod facts the calculator needs: readiness grouping (spec §7.2) and requests (§7.3)."""

from __future__ import annotations

import msgspec

from datetime import datetime, timezone
from typing import Sequence

from pyhpa.api.types import PodView
from pyhpa.engine.durations import seconds
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


class _PodSet:
    """Time-independent facts of one sequence of pod objects, computed once and remembered.

    Pods handed to the engine are values that nobody mutates afterwards (the informer replaces
    objects, the memory adapters hand out what they store, the simulator builds new views), and
    every sync reads the same pods again; see ``_pod_set``.
    """

    __slots__ = ("pods", "ignored", "pending", "candidates", "settled_start", "requests", "label_sets", "rows")

    def __init__(self, pods: Sequence[PodView]) -> None:
        self.pods = tuple(pods)  # held: no other object can take these ids while the entry lives
        self.rows = _pod_rows(self.pods)  # for grouping while not settled
        self.ignored: list[str] = []  # deleted or Failed
        self.pending: list[str] = []
        self.candidates: list[str] = []  # neither: grouped by their metrics (and readiness for CPU)
        # The latest start time when every candidate has started and is Ready=True (None if not):
        # once that start is past the CPU initialization period, CPU grouping needs no per-pod look.
        latest: datetime | None = None
        settled = True
        for name, kind, cond_status, _, start in self.rows:
            if kind == _IGNORED:
                self.ignored.append(name)
            elif kind == _PENDING:
                self.pending.append(name)
            else:
                self.candidates.append(name)
                if kind == _NEVER_READY or cond_status != "True":
                    settled = False
                elif latest is None or start > latest:  # type: ignore[operator]
                    latest = start
        self.settled_start = latest if settled else None
        self.requests: dict[tuple, dict[str, int]] = {}
        self.label_sets: list[dict[str, str]] | None = None  # see distinct_label_sets


# (id of each pod...) -> facts of that sequence of pod objects
_POD_SETS: dict[tuple, _PodSet] = {}
_POD_SETS_KEPT = 16384  # above the HPAs of a large fleet, so each keeps its entry between syncs


# id(tuple) -> facts, for sequences passed as tuples (immutable: the same tuple, the same pods)
_BY_TUPLE: dict[int, _PodSet] = {}


def _pod_set(pods: Sequence[PodView]) -> _PodSet:
    if type(pods) is tuple:
        facts = _BY_TUPLE.get(id(pods))
        if facts is not None and facts.pods is pods:
            return facts
    key = tuple(map(id, pods))
    facts = _POD_SETS.get(key)
    if facts is None:
        facts = _PodSet(pods)
        if len(_POD_SETS) >= _POD_SETS_KEPT:
            _POD_SETS.clear()
            _BY_TUPLE.clear()
        _POD_SETS[key] = facts
    if type(pods) is tuple and facts.pods is pods:
        if len(_BY_TUPLE) >= _POD_SETS_KEPT:
            _BY_TUPLE.clear()
        _BY_TUPLE[id(pods)] = facts
    return facts


def distinct_label_sets(pods: Sequence[PodView]) -> list[dict[str, str]]:
    """The pods' label dicts, one per distinct label set, in the order the pods first carry them
    (a pod without labels counts as ``{}``). Remembered per sequence of pod objects (see
    ``_PodSet``): the ambiguity check asks the selector registry once per label set on every sync.
    """
    facts = _pod_set(pods)
    out = facts.label_sets
    if out is None:
        out = []
        seen: set[frozenset] = set()
        previous: dict[str, str] | None = None
        for pod in facts.pods:
            labels = pod.metadata.labels or {}
            if labels is previous or labels == previous:  # a workload's pods mostly share one, and come together
                continue
            previous = labels
            label_set = frozenset(labels.items())
            if label_set not in seen:
                seen.add(label_set)
                out.append(labels)
        facts.label_sets = out
    return out


def group_pods(
    pods: Sequence[PodView],
    metrics: PodMetricsInfo,
    resource: str,
    cpu_initialization_period: float,
    initial_readiness_delay: float,
    now: datetime,
) -> PodGroups:
    """Ready / unready / missing / ignored pods (upstream's groupPods).

    The usual case needs no per-pod look: every pod that is neither deleted, Failed nor Pending
    is Ready and started more than the CPU initialization period ago (or the resource is not
    CPU); then readiness cannot make a pod unready and only the metrics decide (a pod without one
    is missing). Otherwise every pod goes through ``_group_rows``, over what it reads of each pod
    (remembered with the pod facts).
    """
    facts = _pod_set(pods)
    if resource == "cpu":
        settled = facts.settled_start
        try:
            unsettled = (settled is None or not facts.candidates
                         or settled > now - seconds(cpu_initialization_period))  # start + period > now for some pod
        except OverflowError:
            unsettled = True
        if unsettled:
            return _group_rows(facts.rows, metrics, resource, cpu_initialization_period, initial_readiness_delay, now)
    missing = [name for name in facts.candidates if name not in metrics]
    return PodGroups(len(facts.candidates) - len(missing), list(facts.pending), missing, list(facts.ignored))


def _group_pods(
    pods: Sequence[PodView],
    metrics: PodMetricsInfo,
    resource: str,
    cpu_initialization_period: float,
    initial_readiness_delay: float,
    now: datetime,
) -> PodGroups:
    """Every pod looked at afresh (what ``group_pods`` answers from remembered facts)."""
    return _group_rows(_pod_rows(pods), metrics, resource, cpu_initialization_period, initial_readiness_delay, now)


_IGNORED, _PENDING, _NEVER_READY, _CANDIDATE = range(4)  # a pod row's kind


def _pod_rows(pods: Sequence[PodView]) -> list[tuple[str, int, str | None, datetime | None, datetime | None]]:
    """What grouping reads of each pod, in order: (name, kind, Ready status, Ready transition, start).

    ``_NEVER_READY``: running but without a Ready condition or a start time (always unready for CPU).
    """
    rows: list[tuple[str, int, str | None, datetime | None, datetime | None]] = []
    for pod in pods:
        meta = pod.metadata
        status = pod.status
        name = meta.name or ""
        phase = status.phase
        if meta.deletion_timestamp is not None or phase == "Failed":
            rows.append((name, _IGNORED, None, None, None))
        elif phase == "Pending":
            rows.append((name, _PENDING, None, None, None))
        else:
            cond = _ready_condition(pod)
            start = status.start_time
            if cond is None or start is None:
                rows.append((name, _NEVER_READY, None, None, None))
            else:
                rows.append((name, _CANDIDATE, cond.status, cond.last_transition_time or ZERO_TIME, start))
    return rows


def _group_rows(
    rows: list[tuple[str, int, str | None, datetime | None, datetime | None]],
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
    init_period = seconds(cpu_initialization_period)
    delay = seconds(initial_readiness_delay)
    is_cpu = resource == "cpu"
    # start + period > now  <=>  start > now - period (datetimes are exact integer microseconds):
    # one subtraction per pass instead of an addition per pod; the addition where it underflows.
    try:
        init_limit: datetime | None = now - init_period
    except OverflowError:
        init_limit = None
    metric_of = metrics.get
    for name, kind, cond_status, transition, start in rows:  # hot: every pod of an unsettled HPA, every sync
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
                is_unready = cond_status == "False" or metric.timestamp < transition + seconds(metric.window)  # type: ignore[operator]
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


def pod_requests(
    pods: Sequence[PodView], resource: str, container: str, pod_level_resources: bool
) -> dict[str, int]:
    """Each pod's request of ``resource`` in milli-units (the answer is shared: do not mutate it).

    Remembered per sequence of the same pod objects (see ``_PodSet``): every sync reads the
    requests of the same pods again.
    """
    facts = _pod_set(pods)
    key = (resource, container, pod_level_resources)
    out = facts.requests.get(key)
    if out is None:
        out = facts.requests[key] = _pod_requests(pods, resource, container, pod_level_resources)
    return out


def _pod_requests(
    pods: Sequence[PodView], resource: str, container: str, pod_level_resources: bool
) -> dict[str, int]:
    if container or pod_level_resources:
        return {(p.metadata.name or ""): pod_request(p, resource, container, pod_level_resources) for p in pods}
    # The common case (every container's request summed), inlined: it runs for every pod of
    # every HPA on every sync. Same order, same errors as _container_requests.
    out: dict[str, int] = {}
    for p in pods:
        name = p.metadata.name or ""
        total = 0
        spec = p.spec
        for c in spec.containers if not spec.init_containers else _containers(p):
            reqs = c.resources.requests if c.resources is not None else None
            q = reqs.get(resource) if reqs else None
            if q is None:
                raise CalculationError(f"missing request for {resource} in container {c.name} of Pod {name}")
            total += q.milli_int64()
        out[name] = total
    return out
