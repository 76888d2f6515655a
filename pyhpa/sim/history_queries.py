"""The PromQL ``pyhpa history`` sends, in one place (docs/history.md quotes these builders' output).

Only the names and labels of cAdvisor (through the kubelet) and kube-state-metrics v2 are used,
never target labels (``job``, ``instance``), so the same queries run on a real cluster's
Prometheus and on one scraping the embedded cluster. A workload's pods are found the way the
kubernetes-mixin recording rules find them (``namespace_workload_pod:kube_pod_owner:relabel``):
a Deployment's pods through the ReplicaSets it owns, a StatefulSet's directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyhpa.api.timefmt import format_prometheus_duration


class HistoryError(Exception):
    """What makes a history impossible to write; one line."""

# cAdvisor reports a pod-level cgroup (container="") and, with Docker, the pause container ("POD");
# both would count the pod's usage twice.
CONTAINERS = 'container!="", container!="POD"'


def quote(value: str) -> str:
    """A PromQL string literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class WorkloadQueries:
    """Queries about one workload (``kind`` Deployment or StatefulSet) in ``namespace``.

    ``window`` is the rate() window; ``span`` the whole range, for instant queries that look back
    over it (``last_over_time(...[span])``) at the range's end."""

    namespace: str
    kind: str
    name: str
    window: float
    span: float
    step: float

    @property
    def ns(self) -> str:
        return f"namespace={quote(self.namespace)}"

    def _over(self, selector: str, over: bool) -> str:
        return f"last_over_time({selector}[{format_prometheus_duration(self.span)}])" if over else selector

    def owned(self, over: bool = False) -> str:
        """One series per (namespace, pod) of the workload's pods, value 1; ``over``: every pod
        that existed at some time of the range (for instant queries at its end)."""
        if self.kind == "StatefulSet":
            owner = f'kube_pod_owner{{{self.ns}, owner_kind="StatefulSet", owner_name={quote(self.name)}}}'
            return f"max by (namespace, pod) ({self._over(owner, over)})"
        pods = f'kube_pod_owner{{{self.ns}, owner_kind="ReplicaSet"}}'
        sets = f'kube_replicaset_owner{{{self.ns}, owner_kind="Deployment", owner_name={quote(self.name)}}}'
        return ("max by (namespace, pod) ("
                f'label_replace({self._over(pods, over)}, "replicaset", "$1", "owner_name", "(.*)")'
                " * on (namespace, replicaset) group_left () "
                f"max by (namespace, replicaset) ({self._over(sets, over)}))")

    def _of_pods(self, expr: str, over: bool = False) -> str:
        return f"{expr} * on (namespace, pod) group_left () {self.owned(over)}"

    def _rate(self, counter: str) -> str:
        return f"rate({counter}{{{self.ns}, {CONTAINERS}}}[{format_prometheus_duration(self.window)}])"

    # ---- range queries (at the history's step)

    def replicas(self) -> str:
        """The scale target's spec replicas: the observed replica count."""
        if self.kind == "StatefulSet":
            return f"kube_statefulset_replicas{{{self.ns}, statefulset={quote(self.name)}}}"
        return f"kube_deployment_spec_replicas{{{self.ns}, deployment={quote(self.name)}}}"

    def cpu_usage(self) -> str:
        """The workload's CPU usage in cores: summed rate of its containers' usage counters."""
        return f"sum({self._of_pods(self._rate('container_cpu_usage_seconds_total'))})"

    def _counter_steps(self, lookback: float) -> tuple[str, str, str]:
        """(the usage counters' last value in the step, their last value before it, the pods
        created within ``lookback`` before the step)."""
        counter = f"container_cpu_usage_seconds_total{{{self.ns}, {CONTAINERS}}}"
        step = format_prometheus_duration(self.step)
        now = f"last_over_time({counter}[{step}])"
        before = f"last_over_time({counter}[{format_prometheus_duration(lookback)}] offset {step})"
        young = f"kube_pod_created{{{self.ns}}} > time() - {lookback + self.step:g}"
        return now, before, young

    def cpu_increase(self, lookback: float) -> str:
        """Per pod, its CPU time (core-seconds) between the last usage sample of the step before
        and the last of this step (summed over the pods, the workload's), per container counter:
        its increase; after a reset, its value since the reset; for a counter first seen in this step, of a pod created within
        ``lookback``, its whole value (cAdvisor's counter starts at 0 when the container starts,
        so that is its usage since then, which ``rate()`` would lose until a second sample). A
        counter without a sample in the step adds nothing, nor one seen again after a gap longer
        than ``lookback`` (its usage over the gap is unknown)."""
        now, before, young = self._counter_steps(lookback)
        per = (f"(({now} - {before}) >= 0 or ({now} and ({now} - {before}) < 0) "
               f"or (({now} unless {before}) and on (namespace, pod) ({young})))")
        return f"sum by (pod) ({self._of_pods(per)})"

    def cpu_first_seen(self, lookback: float) -> str:
        """Per pod, the CPU time (core-seconds) of its containers at their first usage sample, in
        the step where it is: used since they started, i.e. partly before that step began."""
        now, before, young = self._counter_steps(lookback)
        first = f"(({now} unless {before}) and on (namespace, pod) ({young}))"
        return f"sum by (pod) ({self._of_pods(first)})"

    def cpu_sampled_at(self) -> str:
        """Per pod, the instant of its containers' latest usage sample (cAdvisor's, so
        :meth:`cpu_increase` is known to cover exactly the time between two of these)."""
        counter = f"container_cpu_usage_seconds_total{{{self.ns}, {CONTAINERS}}}"
        return f"max by (pod) ({self._of_pods(f'timestamp({counter})')})"

    def memory_usage(self) -> str:
        """The workload's memory working set in bytes, summed over its containers."""
        return f"sum({self._of_pods(f'container_memory_working_set_bytes{{{self.ns}, {CONTAINERS}}}')})"

    def throttled_share(self) -> str:
        """The share of the workload's CFS periods in which a container hit its CPU quota (limit)."""
        throttled = f"sum({self._of_pods(self._rate('container_cpu_cfs_throttled_periods_total'))})"
        periods = f"sum({self._of_pods(self._rate('container_cpu_cfs_periods_total'))})"
        return f"{throttled} / {periods}"

    def cpu_limits(self) -> str:
        """The summed CPU limits (cores) of the workload's pods."""
        limits = f'kube_pod_container_resource_limits{{{self.ns}, resource="cpu", container!=""}}'
        return f"sum({self._of_pods(limits)})"

    def resets(self) -> str:
        """Counter resets of the usage counters, per container (a pod's new counter starting at 0
        is a new series, not a reset): ``> 0`` where one happened within two steps."""
        counter = f"container_cpu_usage_seconds_total{{{self.ns}, {CONTAINERS}}}"
        per = f"resets({counter}[{format_prometheus_duration(2 * self.step)}])"
        return f"sum by (pod, container) ({self._of_pods(per)}) > 0"

    def _metric(self, metric: str, labels: dict[str, str] | None) -> str:
        matchers = "".join(f", {k}={quote(v)}" for k, v in sorted((labels or {}).items()))
        return f"{metric}{{{self.ns}{matchers}}}"

    def pods_metric(self, metric: str, labels: dict[str, str] | None = None) -> str:
        """A per-pod gauge (a Pods metric; ``labels``: its selector's matchLabels) summed over the
        workload's pods: the workload total."""
        return f"sum({self._of_pods(self._metric(metric, labels))})"

    def namespace_metric(self, metric: str, labels: dict[str, str] | None = None) -> str:
        """An Object or External metric's gauge in the namespace (its total), narrowed by the
        metric selector's matchLabels."""
        return f"sum({self._metric(metric, labels)})"

    # ---- instant queries at the range's end, looking back over the range

    def pods_created(self) -> str:
        """Each of the workload's pods' creation time (unix seconds)."""
        return self._of_pods(self._over(f"kube_pod_created{{{self.ns}}}", True), over=True)

    def pods_ready_time(self) -> str:
        """Each pod's first Ready transition as kube-state-metrics exports it: the Ready condition's
        ``lastTransitionTime``, the earliest seen while the pod was Ready (some releases export it
        for a not-Ready condition too, when it is the time the pod turned unready)."""
        ready = f'kube_pod_status_ready{{{self.ns}, condition="true"}} == 1'
        since = f"kube_pod_status_ready_time{{{self.ns}}} and on (namespace, pod) ({ready})"
        first = f"min_over_time(({since})[{format_prometheus_duration(self.span)}:{format_prometheus_duration(self.step)}])"
        return self._of_pods(first, over=True)

    def pods_running(self) -> str:
        """Each pod's first container start (kube-state-metrics' ``kube_pod_container_state_started``):
        when it left Pending."""
        first = f"min by (namespace, pod) (min_over_time(kube_pod_container_state_started{{{self.ns}}}[{format_prometheus_duration(self.span)}]))"
        return self._of_pods(first, over=True)

    def pods_first_ready(self) -> str:
        """Without ``kube_pod_status_ready_time``: the first step at which a pod's Ready=true
        sample is seen (a subquery at the step, so up to a scrape interval and a step late)."""
        ready = f'kube_pod_status_ready{{{self.ns}, condition="true"}} == 1'
        span, step = format_prometheus_duration(self.span), format_prometheus_duration(self.step)
        first = f"min_over_time(timestamp({ready})[{span}:{step}])"
        return self._of_pods(first, over=True)

    def resources(self, which: str) -> str:
        """Per pod and container, its last CPU and memory ``requests`` or ``limits``."""
        metric = f'kube_pod_container_resource_{which}{{{self.ns}, resource=~"cpu|memory"}}'
        return self._of_pods(self._over(metric, True), over=True)

    def hpas(self) -> str:
        """The HPAs that scaled the workload at some time of the range."""
        return self._over(f"kube_horizontalpodautoscaler_info{{{self.ns}, scaletargetref_kind={quote(self.kind)}, "
                          f"scaletargetref_name={quote(self.name)}}}", True)

    def hpa_series(self, metric: str, hpa: str) -> str:
        """One of an HPA's kube-state-metrics series (``spec_min_replicas``, ``spec_target_metric`` ...)."""
        return self._over(f"kube_horizontalpodautoscaler_{metric}{{{self.ns}, horizontalpodautoscaler={quote(hpa)}}}", True)

    def workloads_in_namespace(self) -> str:
        """The workloads of this kind in the namespace (for an unknown workload's message)."""
        metric = "kube_statefulset_replicas" if self.kind == "StatefulSet" else "kube_deployment_spec_replicas"
        return self._over(f"{metric}{{{self.ns}}}", True)

    def samples(self, metric: str, probe: float) -> str:
        """The most samples one series of ``metric`` in the namespace has in the last ``probe``
        seconds (its exporter's scrape interval is ``probe`` over that)."""
        return f"max(count_over_time({metric}{{{self.ns}}}[{format_prometheus_duration(probe)}]))"

    def any_series(self, metric: str) -> str:
        """Whether ``metric`` has any series in Prometheus over the range (is its exporter scraped?)."""
        return f"count({self._over(metric, True)})"
