"""The simulated scale targets: a workload model and its metrics pipeline per workload object,
and what the in-memory cluster serves of them (workload view, pod views, resource metrics).

What the cluster serves is rebuilt only when it changes: pod views when the workload's epoch
(pod set, and which pods run, are Ready or deleted) moves; resource metrics at each scrape.
"""

from __future__ import annotations

from datetime import datetime
from operator import attrgetter
from typing import Any

from pyhpa.adapters.metrics_lists import PodUsage
from pyhpa.api.types import PodView, WorkloadView
from pyhpa.workload.model import SimPod, Workload, to_datetime
from pyhpa.workload.params import WorkloadParams
from pyhpa.workload.pipeline import MetricsPipeline
from pyhpa.sim.admission import PodAdmission
from pyhpa.sim.capacity import capacity_of, container_templates, cpu_request_milli, demand_signal
from pyhpa.sim.results import WorkloadTrace
from pyhpa.sim.scenario import Scenario, WorkloadModel, WorkloadObject

__all__ = ["SimTarget", "params_for", "demand_signal", "capacity_of"]

_NAME = attrgetter("name")


def params_for(model: WorkloadModel, signals: dict[str, float]) -> WorkloadParams:
    """The workload parameters at one instant, from the load signals through the model's maps."""
    return WorkloadParams(
        cpu_milli=max(0.0, model.cpu.evaluate(signals)),
        cpu_capacity_milli=model.cpu_capacity_milli,
        startup_cpu_milli=model.startup_cpu_milli,
        memory_bytes=max(0.0, model.memory.base),
        memory_shared_bytes=max(0.0, model.memory.evaluate(signals) - model.memory.base),
        startup_seconds=model.startup_seconds,
        pending_seconds=model.pending_seconds,
        termination_seconds=model.termination_seconds,
        metrics={name: max(0.0, sm.evaluate(signals)) for name, sm in model.metrics.items()},
    )


class SimTarget:
    """One workload: the model, its pipeline, and what the in-memory cluster serves of it."""

    def __init__(self, obj: WorkloadObject, scenario: Scenario, signals0: dict[str, float],
                 admission: PodAdmission | None = None, warm: bool = True) -> None:
        """``admission``: the run's nodes and quotas (None: pods on no node, never refused);
        ``warm``: bring the model to the scenario's start now (else :meth:`warm_up` does, once
        every target sharing the nodes exists)."""
        self.obj = obj
        self.key = (obj.namespace, obj.kind, obj.name)
        model = obj.model
        warmup = (model.startup_seconds + scenario.config.cpu_initialization_period
                  + scenario.window + 2 * scenario.resolution)
        born = scenario.start - warmup
        born -= born % scenario.resolution  # on the scrape grid, so the first scrape is at birth
        self._born = born
        gate = None
        if admission is not None and admission.active:
            gate = admission.gate(self.key, (obj.manifest.get("spec") or {}).get("template") or {})
        self.workload = Workload(
            obj.namespace, obj.name, kind=obj.kind, labels=obj.labels,
            containers=container_templates(obj),
            params=params_for(model, signals0), replicas=obj.replicas, now=born,
            pod_management_policy=obj.pod_management_policy, gate=gate,
        )
        self.pipeline = MetricsPipeline(self.workload, resolution=scenario.resolution, window=scenario.window, now=born,
                                        counters=False)  # no cAdvisor reads its counters here
        manifest = obj.manifest
        self.view = WorkloadView(
            api_version=str(manifest.get("apiVersion") or "apps/v1"),
            kind=obj.kind,
            metadata=_meta(obj),
            spec=_spec_view(obj),
        )
        self.trace = WorkloadTrace(self.key, demand_signal(model), capacity_of(obj), cpu_request_milli(obj))
        if gate is not None:
            self.trace.failed_creates = gate.failed_creates  # the events, as they come
        self._container_names = [c.name for c in self.workload.containers]
        self._labels: dict[str, dict[str, str]] = {}  # pod name -> its labels (a function of the name)
        self._label_sets: dict[frozenset, dict[str, str]] = {}  # one dict per distinct label set
        self._view_cache: dict[tuple, PodView] = {}
        self._views_state: list[tuple] | None = None
        self._views_epoch: tuple[int, int] | None = None
        self.views: list[PodView] = []
        self.views_version = 0  # counts the pod view lists built: equal while ``views`` holds
        if warm:
            self.warm_up(scenario.start)

    def warm_up(self, start: float) -> None:
        """Advance the model and its pipeline from its birth to ``start``."""
        t = self._born
        while self.workload.next_change_after(t) is not None and t < start:
            t = min(self.workload.next_change_after(t) or start, start)
            self.workload.advance(t)
        self.workload.advance(start)
        self.pipeline.advance(start)
        self.view.status.replicas = self.workload.status_replicas()
        self.trace.pods.extend(self.workload.pods)

    def labels_of(self, pod: SimPod) -> dict[str, str]:
        """The pod's labels; pods with equal labels (a Deployment's) get the same, never mutated
        dict, so their metrics are reported together."""
        labels = self._labels.get(pod.name)
        if labels is None:
            fresh = self.workload.pod_labels(pod)
            labels = self._label_sets.setdefault(frozenset(fresh.items()), fresh)
            if len(self._labels) > 4 * len(self.workload.pods) + 16:  # forget pods long gone
                live = {p.name for p in self.workload.pods}
                self._labels = {k: v for k, v in self._labels.items() if k in live}
                kept = {frozenset(v.items()) for v in self._labels.values()} | {frozenset(labels.items())}
                self._label_sets = {k: v for k, v in self._label_sets.items() if k in kept}
            self._labels[pod.name] = labels
        return labels

    def refresh_views(self, now: float) -> int:
        """Bring ``views`` (the pods as the API shows them at ``now``) up to date and return
        ``views_version``. The list is rebuilt only when the workload's epoch moved and some pod
        shows differently; a view only when what it shows changes (phase, readiness, deletion)."""
        epoch = self.workload.epoch(now)
        if epoch == self._views_epoch:
            return self.views_version
        self._views_epoch = epoch
        # (name, phase is Running, Ready condition True, deletionTimestamp) per pod, in order.
        state = [(p.name, now >= p.running_at, now >= p.ready_at, p.deleted_at) for p in self.workload.pods]
        if state == self._views_state:
            return self.views_version
        out = []
        cache = self._view_cache
        fresh: dict[tuple, PodView] = {}
        for pod, k in zip(self.workload.pods, state):
            view = cache.get(k)
            if view is None:
                view = self.workload.pod_view(pod, now)
                view.metadata.labels = self.labels_of(pod)
            fresh[k] = view
            out.append(view)
        self._view_cache = fresh
        self._views_state, self.views = state, out
        self.views_version += 1
        return self.views_version

    def pod_usage(self, t: float | None = None, at: datetime | None = None) -> list[PodUsage]:
        """The resource metrics of the latest scrape, as metrics.k8s.io would report them: the
        pods of one metrics cohort (equal samples) that carry one label set report together.
        ``at``: ``t`` as a datetime, the timestamp when the latest scrape was at ``t`` (the
        usual case: then not converted again for every workload)."""
        pipeline = self.pipeline
        if pipeline.last_scrape is None:
            return []
        ts = at if at is not None and pipeline.last_scrape == t else to_datetime(pipeline.last_scrape)
        window = pipeline.window
        namespace = self.key[0]
        containers = self._container_names
        cohorts = pipeline.cohort_usage()
        lone = containers[0] if len(containers) == 1 else None  # a lone container's usage is the pod's
        columns = [] if lone is not None else \
            [(name, pipeline.resource_usage("cpu", name), pipeline.resource_usage("memory", name))
             for name in containers]  # each container's part, as the PodMetrics' containers report it
        out: list[PodUsage] = []
        known = self._labels.get
        for i, (cpu, memory, members) in enumerate(cohorts):
            if not members:
                continue
            usage = ((lone, {"cpu": cpu, "memory": 1000 * memory}),) if lone is not None else \
                tuple([(name, {"cpu": cpus[i][0], "memory": mems[i][0]}) for name, cpus, mems in columns])
            names = list(map(_NAME, members))
            labels = list(map(known, names))
            if None in labels:  # a pod not seen yet
                labels = [self.labels_of(p) for p in members]
            first = labels[0]
            if labels.count(first) == len(labels):  # equal label sets share one dict (labels_of)
                out.append(PodUsage(namespace, tuple(names), first, ts, window, usage))
                continue
            start = 0
            for j in range(1, len(members) + 1):  # runs of pods with one label set
                if j == len(members) or labels[j] != labels[start]:
                    out.append(PodUsage(namespace, tuple(names[start:j]), labels[start], ts, window, usage))
                    start = j
        return out

    def contended_ready_cpu(self, t: float) -> float:
        """The CPU a Ready pod uses at ``t`` on the nodes it shares with others' pods (their
        mean, millicores): the summary's CPU utilization where the scenario has nodes."""
        wl = self.workload
        sharing = wl.sharing
        if sharing is None:
            return 0.0
        got = [sharing.on_node(p.node, t).get((wl.uid, True), 0.0) for p in wl.pods if p.ready(t)]
        return sum(got) / len(got) if got else 0.0

    def record(self, changes: Any) -> None:
        if changes.created:
            self.trace.pods.extend(changes.created)


def _meta(obj: WorkloadObject):
    from pyhpa.api.types import ObjectMeta

    return ObjectMeta(name=obj.name, namespace=obj.namespace, labels=dict(obj.labels), annotations=obj.annotations or None)


def _spec_view(obj: WorkloadObject):
    from pyhpa.api.types import LabelSelector, LabelSelectorRequirement, WorkloadSpecView

    sel = obj.selector
    exprs = [LabelSelectorRequirement(key=e["key"], operator=e["operator"], values=e.get("values"))
             for e in sel.get("matchExpressions") or []]
    return WorkloadSpecView(
        replicas=obj.replicas,
        selector=LabelSelector(match_labels=dict(sel.get("matchLabels") or {}) or None, match_expressions=exprs or None),
    )


