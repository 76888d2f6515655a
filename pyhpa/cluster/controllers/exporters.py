"""Where a Prometheus scrapes the embedded cluster: the exporters plugged into the API server's
proxy paths, and the Services that name them.

Why through the API server: on a real cluster a Prometheus outside it reaches the kubelets'
cAdvisor and kube-state-metrics through the API server's proxy, with the API's credentials and
CA; the embedded cluster serves the same paths (every one needs the bearer token):

* ``/api/v1/nodes/{node}/proxy/metrics/cadvisor`` -- :mod:`.cadvisor` (and ``.../proxy/metrics``);
* ``/api/v1/namespaces/kube-system/services/kube-state-metrics:http-metrics/proxy/metrics`` --
  :mod:`.kube_state_metrics`;
* ``/api/v1/namespaces/kube-system/services/pyhpa-app-metrics:http-metrics/proxy/metrics`` --
  :mod:`.app_metrics`.

``pyhpa cluster --prometheus-config FILE`` writes the scrape configuration for them
(:func:`scrape_config`); docs/prometheus-exporters.md describes both.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import record_create
from pyhpa.cluster.apiserver.services import default_service
from pyhpa.cluster.apiserver.storage import AlreadyExists, Store
from pyhpa.cluster.controllers.app_metrics import app_metrics_text
from pyhpa.cluster.controllers.cadvisor import cadvisor_text, kubelet_text
from pyhpa.cluster.controllers.context import SimulationContext
from pyhpa.cluster.controllers.exposition import CONTENT_TYPE
from pyhpa.cluster.controllers.kube_state_metrics import kube_state_metrics_text

if TYPE_CHECKING:
    from pyhpa.cluster.apiserver.server import APIServer

NAMESPACE = "kube-system"
PORT_NAME = "http-metrics"
KUBE_STATE_METRICS = "kube-state-metrics"
APP_METRICS = "pyhpa-app-metrics"
METRICS_PATH = "metrics"


def service_path(service: str) -> str:
    """The API path a Prometheus scrapes a Service's metrics at."""
    return f"/api/v1/namespaces/{NAMESPACE}/services/{service}:{PORT_NAME}/proxy/{METRICS_PATH}"


def install(server: "APIServer", sim: SimulationContext) -> None:
    """Serve the exporters on ``server``'s proxy paths and keep their Services."""
    server.proxies.add_node_path("metrics/cadvisor", lambda node: (cadvisor_text(sim, node), CONTENT_TYPE))
    server.proxies.add_node_path("metrics", lambda node: (kubelet_text(sim, node), CONTENT_TYPE))
    server.proxies.add_service_path(NAMESPACE, KUBE_STATE_METRICS, PORT_NAME, METRICS_PATH,
                                    lambda _: (kube_state_metrics_text(sim.store), CONTENT_TYPE))
    server.proxies.add_service_path(NAMESPACE, APP_METRICS, PORT_NAME, METRICS_PATH,
                                    lambda _: (app_metrics_text(sim), CONTENT_TYPE))
    ensure_service(sim.store, KUBE_STATE_METRICS, 8080)
    ensure_service(sim.store, APP_METRICS, 8080)


def ensure_service(store: Store, name: str, port: int) -> None:
    """``kube-system/<name>`` as its install would create it (kept if it exists)."""
    if store.try_get(R.SERVICES.key, NAMESPACE, name) is not None:
        return
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/component": "exporter"}
    svc: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": dict(labels)},
        "spec": {"selector": {"app.kubernetes.io/name": name},
                 "ports": [{"name": PORT_NAME, "port": port, "targetPort": PORT_NAME}]}}
    default_service(svc, None, store)
    record_create(svc, "pyhpa-simulation", "v1")  # what installs the exporters here
    try:
        store.create(R.SERVICES.key, svc)
    except AlreadyExists:
        pass


def scrape_config(api_url: str, ca_file: Path | None, token_file: Path, nodes: list[str],
                  scrape_interval: str = "15s") -> dict[str, Any]:
    """A Prometheus configuration that scrapes the embedded cluster at ``api_url``: the cAdvisor
    of each of ``nodes`` through the API server's node proxy (the targets Prometheus's Kubernetes
    service discovery of nodes with its example relabelling finds, written out: Debian's
    Prometheus is built without Kubernetes discovery), kube-state-metrics and the application
    metrics through their Services' proxy paths; one job each, the API's token and CA."""
    host = api_url.split("://", 1)[-1].rstrip("/")
    scheme = api_url.split("://", 1)[0] if "://" in api_url else "https"
    client: dict[str, Any] = {"authorization": {"type": "Bearer",
                                                "credentials_file": str(token_file)}}
    if ca_file is not None:
        client["tls_config"] = {"ca_file": str(ca_file)}

    def job(name: str, groups: list[dict[str, Any]], path: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"job_name": name, "scheme": scheme}
        if path is not None:
            out["metrics_path"] = path
        return {**out, **client, "static_configs": groups}

    return {
        "global": {"scrape_interval": scrape_interval, "evaluation_interval": scrape_interval},
        "scrape_configs": [
            job("kubernetes-cadvisor", [
                {"targets": [host],
                 "labels": {"__metrics_path__": f"/api/v1/nodes/{node}/proxy/metrics/cadvisor",
                            "kubernetes_io_hostname": node}} for node in nodes]),
            job("kube-state-metrics", [{"targets": [host]}], service_path(KUBE_STATE_METRICS)),
            job("pyhpa-app-metrics", [{"targets": [host]}], service_path(APP_METRICS)),
        ],
    }
