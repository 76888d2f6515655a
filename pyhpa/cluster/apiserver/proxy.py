"""The API server's ``proxy`` subresources of Nodes and Services, for the in-process components
that stand behind them (the simulated kubelets, kube-state-metrics).

Why: on a real cluster Prometheus scrapes a kubelet's cAdvisor through
``/api/v1/nodes/{node}/proxy/metrics/cadvisor`` and a Service's endpoints through
``/api/v1/namespaces/{ns}/services/[scheme:]{name}[:port]/proxy/{path}``, with the credentials
of the API server. The embedded cluster has no processes to forward to, so the components
register handlers here (the server does not know them; see
:mod:`pyhpa.cluster.controllers.exporters`). Only GET (and HEAD) are proxied; what is not
registered answers as a cluster whose target does not serve that path: 404, or 503 for a
Service with no endpoint. Pages are written on a worker thread: kube-state-metrics' of a few
thousand pods takes a second, which the API's other requests need not wait for.
"""

from __future__ import annotations

from typing import Callable

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.status import APIError
from pyhpa.cluster.apiserver.storage import Store

# what a proxied endpoint returns: (body, content type)
Page = Callable[[str], tuple[str, str]]  # called with the node's name (services: "")


class Proxies:
    """Handlers by node path (``metrics/cadvisor``) and by (namespace, service, port name, path)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.node_paths: dict[str, Page] = {}
        self.service_paths: dict[tuple[str, str, str, str], Page] = {}

    def add_node_path(self, path: str, page: Page) -> None:
        self.node_paths[path.strip("/")] = page

    def add_service_path(self, namespace: str, service: str, port: str, path: str, page: Page) -> None:
        self.service_paths[(namespace, service, port, path.strip("/"))] = page

    async def route(self, request: Request, segs: list[str]) -> Response | None:
        """The answer to a core/v1 path (``segs`` after ``/api/v1``) if it is a proxy path."""
        if len(segs) >= 3 and segs[0] == "nodes" and segs[2] == "proxy":
            return await self._node(request, segs[1], "/".join(segs[3:]))
        if len(segs) >= 5 and segs[0] == "namespaces" and segs[2] == "services" \
                and segs[4] == "proxy":
            return await self._service(request, segs[1], segs[3], "/".join(segs[5:]))
        return None

    async def _node(self, request: Request, name: str, path: str) -> Response:
        _check_method(request)
        node = _host(name)[0]
        if self.store.try_get(R.NODES.key, "", node) is None:
            raise APIError(404, "NotFound", f'nodes "{node}" not found',
                           details={"name": node, "kind": "nodes"})
        page = self.node_paths.get(path)
        if page is None:
            return Response("404 page not found\n", status_code=404, media_type="text/plain")
        return _answer(request, *await run_in_threadpool(page, node))

    async def _service(self, request: Request, namespace: str, name: str, path: str) -> Response:
        _check_method(request)
        service, port = _host(name)
        svc = self.store.try_get(R.SERVICES.key, namespace, service)
        if svc is None:
            raise APIError(404, "NotFound", f'services "{service}" not found',
                           details={"name": service, "kind": "services"})
        ports = [p for p in (svc.get("spec") or {}).get("ports") or [] if isinstance(p, dict)]
        chosen = next((p for p in ports if port in (str(p.get("name") or ""), str(p.get("port")))),
                      ports[0] if ports and not port else None)
        port_name = str(chosen.get("name") or "") if chosen else ""
        page = self.service_paths.get((namespace, service, port_name, path)) if chosen else None
        if page is None:
            if not any(k[:3] == (namespace, service, port_name) for k in self.service_paths):
                raise APIError(503, "ServiceUnavailable",
                               f'no endpoints available for service "{name}"')
            return Response("404 page not found\n", status_code=404, media_type="text/plain")
        return _answer(request, *await run_in_threadpool(page, ""))


def _host(name: str) -> tuple[str, str]:
    """``[scheme:]name[:port]`` -> (name, port), as the proxy's target names are written."""
    parts = name.split(":")
    if len(parts) == 3 or (len(parts) == 2 and parts[0] in ("http", "https")):
        parts = parts[1:]
    return parts[0], parts[1] if len(parts) > 1 else ""


def _check_method(request: Request) -> None:
    if request.method not in ("GET", "HEAD"):
        raise APIError(405, "MethodNotAllowed",
                       "the server does not allow this method on the requested resource")


def _answer(request: Request, body: str, content_type: str) -> Response:
    return Response(b"" if request.method == "HEAD" else body.encode(), media_type=content_type)
