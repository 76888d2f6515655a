"""The simulated applications' own metrics, as Prometheus would scrape them from the pods.

Why: an HPA on a Pods or Object metric reads a custom metrics adapter that itself queries
Prometheus; to replay such an HPA from history, the history must hold the series the adapter read.
A workload annotated ``sim.pyhpa.io/metric.<name>`` (its total, shared by its Ready pods) is
written as a per-pod gauge ``<name>{namespace, pod}`` whose value is what
``custom.metrics.k8s.io`` serves for that pod (the same window average of the same pipeline), so
``sum by (namespace) (<name>{pod=~"web-.*"})`` is the Object metric's value. An ExternalMetric
object (``pyhpa.io/v1alpha1``) is written as ``<spec.name>{namespace, <spec.labels>}`` with the
value ``external.metrics.k8s.io`` serves.

Served at ``GET /api/v1/namespaces/kube-system/services/pyhpa-app-metrics:http-metrics/proxy/
metrics`` (same bearer token and CA as the API; the Service ``kube-system/pyhpa-app-metrics``
exists). A real application serves its own ``/metrics`` per pod and Prometheus adds ``namespace``
and ``pod`` by relabelling; here one endpoint writes every pod's series with those labels
already set. A metric name that is not a valid Prometheus name is left out.
"""

from __future__ import annotations

import re

from pyhpa.cluster.controllers.context import SimulationContext
from pyhpa.cluster.controllers.exposition import Exposition, valid_metric_name
from pyhpa.cluster.controllers.metrics_server import metric_names

_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def app_metrics_text(sim: SimulationContext) -> str:
    out = Exposition()
    with sim.lock:
        sim.refresh()
        for g in sorted(sim.groups.values(), key=lambda g: (g.namespace, g.name)):
            names = sorted(n for n in metric_names(g) if valid_metric_name(n))
            if not names or g.pipeline.last_scrape is None:
                continue
            ts = int(round(g.pipeline.last_scrape * 1000))
            for sim_pod in sorted(g.workload.pods, key=lambda p: p.name):
                rec = sim.pods.get(sim_pod.uid)
                if rec is None:
                    continue
                for name in names:
                    value = g.pipeline.pod_metric(rec.name, name)
                    if value is not None:
                        out.family(name, "gauge", f"Simulated application metric {name} "
                                   "(sim.pyhpa.io/metric annotation), per pod.").add(
                            {"namespace": rec.namespace, "pod": rec.name}, value, ts)
        scrape = sim.last_scrape(sim.clock())
        for (ns, _name), hist in sorted(sim.external_history.items()):
            current = next((s for t, s in reversed(hist) if t <= scrape), None)
            if current is None or not valid_metric_name(current.metric):
                continue
            labels = {k: v for k, v in sorted(current.labels.items())
                      if _LABEL.match(k) and k != "namespace"}
            out.family(current.metric, "gauge", f"External metric {current.metric} "
                       "(ExternalMetric object).").add({"namespace": ns, **labels},
                                                       current.value_milli / 1000)
    return out.text()
