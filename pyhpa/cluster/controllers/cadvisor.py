"""What a node's kubelet serves at ``/metrics/cadvisor``: per-container usage as cAdvisor reports
it, read from the same workload model the metrics APIs serve.

Why here: ``kubectl top``, the HPA and a Prometheus scraping cAdvisor must see one usage. The
counters come from each workload's metrics pipeline (:meth:`~pyhpa.workload.pipeline.
MetricsPipeline.container_counters`), which integrates the usage whose window averages
``metrics.k8s.io`` serves; so ``rate(container_cpu_usage_seconds_total[w])`` over a steady load
is the PodMetrics value, and a rate over a window equal to the metrics window matches it exactly.

Reached as Prometheus's Kubernetes service discovery reaches a kubelet through the API server:
``GET /api/v1/nodes/{node}/proxy/metrics/cadvisor`` (same bearer token and CA as the API; see
docs/prometheus-exporters.md). ``/api/v1/nodes/{node}/proxy/metrics`` is the kubelet's own
(only ``kubelet_running_pods`` here).

Series (names, types and labels of the kubelet's cAdvisor endpoint; each sample carries the
instant it is current at, in milliseconds, as the kubelet writes them):

* ``container_cpu_usage_seconds_total`` (counter, current to the request) and
  ``container_memory_working_set_bytes`` (gauge, as of the pipeline's latest scrape): one per
  container ``{container, id, image, name, namespace, pod}``, plus the pod's cgroup with
  ``container=""``, ``image=""``, ``name=""``;
* ``container_cpu_cfs_periods_total`` and ``container_cpu_cfs_throttled_periods_total``
  (counters) for the containers with a CPU limit: 10 periods of 100 ms per second the pod runs,
  throttled ones while the container is held at its limit.

Not as on a real node: no ``POD`` (pause) container, no node-level (``id="/"``) or system
cgroups, no network, filesystem or other families; the periods count every second the pod runs
(a real cgroup counts only the periods it had work in); a pod's counters start at zero when its
first scrape finds it running, and again after a restart of the cluster (a counter reset).
"""

from __future__ import annotations

from pyhpa.cluster.controllers.context import SimulationContext
from pyhpa.cluster.controllers.exposition import Exposition
from pyhpa.cluster.controllers.objects import qos_class, spec_of, status_of

PERIODS_PER_SECOND = 10  # the CFS period is 100 ms (cpu.cfs_period_us = 100000)


def _cgroup(pod: dict, uid: str) -> str:
    """The pod's cgroup path under the kubelet's cgroupfs layout, by QoS class."""
    qos = qos_class(spec_of(pod))
    parent = {"Guaranteed": "/kubepods", "Burstable": "/kubepods/burstable",
              "BestEffort": "/kubepods/besteffort"}[qos]
    return f"{parent}/pod{uid}"


def _runtime_ids(pod: dict) -> dict[str, str]:
    """Container name -> its runtime ID (``containerID`` without the ``containerd://``)."""
    out = {}
    for cs in status_of(pod).get("containerStatuses") or []:
        if isinstance(cs, dict) and cs.get("containerID"):
            out[str(cs.get("name"))] = str(cs["containerID"]).partition("://")[2]
    return out


def cadvisor_text(sim: SimulationContext, node: str) -> str:
    """The exposition of every container running on ``node`` at the latest scrape."""
    out = Exposition()
    cpu = out.family("container_cpu_usage_seconds_total", "counter",
                     "Cumulative cpu time consumed in seconds.")
    memory = out.family("container_memory_working_set_bytes", "gauge",
                        "Current working set in bytes.")
    periods = out.family("container_cpu_cfs_periods_total", "counter",
                         "Number of elapsed enforcement period intervals.")
    throttled = out.family("container_cpu_cfs_throttled_periods_total", "counter",
                           "Number of throttled period intervals.")
    with sim.lock:
        sim.refresh()
        for g in sorted(sim.groups.values(), key=lambda g: (g.namespace, g.name)):
            counters = g.pipeline.container_counters()
            if not counters:
                continue
            wl = g.workload
            caps = wl.cpu_limits.caps if wl.cpu_limits is not None else None
            for sim_pod in sorted(wl.pods, key=lambda p: p.name):
                rec = sim.pods.get(sim_pod.uid)
                c = counters.get(sim_pod.name)
                if rec is None or c is None or rec.node != node:
                    continue
                pod = rec.pod or {}
                cgroup = _cgroup(pod, sim_pod.uid)
                images = {str(x.get("name")): str(x.get("image") or "")
                          for x in spec_of(pod).get("containers") or [] if isinstance(x, dict)}
                ids = _runtime_ids(pod)
                ts = int(round(c.at * 1000))
                base = {"namespace": rec.namespace, "pod": rec.name}
                whole = {"container": "", "id": cgroup, "image": "", "name": "", **base}
                cpu.add(whole, sum(c.cpu_seconds), ts)
                memory.add(whole, sum(c.memory_bytes), ts)
                for i, tmpl in enumerate(wl.containers):
                    if i >= len(c.cpu_seconds):
                        break
                    runtime_id = ids.get(tmpl.name, "")
                    labels = {"container": tmpl.name,
                              "id": f"{cgroup}/{runtime_id}" if runtime_id else cgroup,
                              "image": images.get(tmpl.name, ""), "name": runtime_id, **base}
                    cpu.add(labels, c.cpu_seconds[i], ts)
                    memory.add(labels, c.memory_bytes[i], ts)
                    if caps is not None and i < len(caps) and caps[i] != float("inf"):
                        periods.add(labels, int(c.running_seconds * PERIODS_PER_SECOND + 1e-6), ts)
                        throttled.add(labels, int(c.throttled_seconds[i] * PERIODS_PER_SECOND
                                                  + 1e-6), ts)
    return out.text()


def kubelet_text(sim: SimulationContext, node: str) -> str:
    """The kubelet's own ``/metrics``: only how many pods it runs."""
    out = Exposition()
    running = out.family("kubelet_running_pods", "gauge",
                         "[ALPHA] Number of pods that have a running pod sandbox")
    now = sim.clock()
    with sim.lock:
        n = sum(1 for rec in sim.pods.values() if rec.node == node and rec.sim.running(now))
    running.add({}, n)
    return out.text()

