"""POST ``pods/NAME/eviction``: the pod is deleted unless a PodDisruptionBudget that selects it
allows no disruption (429, as upstream), which is what ``kubectl drain`` asks for.

Why upstream's checks: drain retries a 429 until the budget allows one more disruption, so a
budget's ``disruptionsAllowed`` (kept by the simulation's disruption controller) paces it as on
a real cluster; an eviction takes one disruption off the budget at once, so two evictions in a
row cannot both use the same one.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from pyhpa.api.selectors import selector_from_label_selector
from pyhpa.api.timefmt import format_epoch
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.handlers.delete import delete_object
from pyhpa.cluster.apiserver.handlers.options import delete_options
from pyhpa.cluster.apiserver.handlers.request import read_body
from pyhpa.cluster.apiserver.handlers.scope import RequestScope, Target, json_response
from pyhpa.cluster.apiserver.status import APIError

Obj = dict[str, Any]
_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."


async def evict(scope: RequestScope, request: Request, t: Target) -> Response:
    body = await read_body(request, t)
    if not isinstance(body, dict) or body.get("kind", "Eviction") != "Eviction":
        raise APIError(400, "BadRequest", "the body of the request must be an Eviction")
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    if meta.get("name") != t.name:
        raise APIError(400, "BadRequest", "name in URL does not match name in Eviction object")
    raw_opts = body.get("deleteOptions")
    opts = delete_options(request, raw_opts if isinstance(raw_opts, dict) else None)
    ns, name = t.namespace or "", t.name or ""
    pod = scope.store.try_get(R.PODS.key, ns, name)
    if pod is None:
        raise APIError(404, "NotFound", f'pods "{name}" not found',
                       {"name": name, "kind": "pods"})
    if not _can_ignore_budgets(pod):
        _take_a_disruption(scope, pod, opts.dry_run)
    delete_object(scope, Target(R.PODS, "", "v1", ns, name, None), ns, name,
                  dry_run=opts.dry_run, policy=opts.policy, resource_version=opts.resource_version,
                  uid=opts.uid, grace=opts.grace)
    return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {},
                          "status": "Success", "code": 201}, 201)


def _can_ignore_budgets(pod: Obj) -> bool:
    """A pod that is not running (or already going) takes nothing from a budget."""
    phase = (pod.get("status") or {}).get("phase")
    return bool(pod["metadata"].get("deletionTimestamp")) or phase in ("Succeeded", "Failed",
                                                                      "Pending")


def _take_a_disruption(scope: RequestScope, pod: Obj, dry_run: bool) -> None:
    """Check the one budget selecting ``pod`` and count this eviction against it."""
    ns, labels = pod["metadata"].get("namespace") or "", pod["metadata"].get("labels") or {}
    budgets = []
    for pdb in scope.store.list(R.PDBS.key, ns).items:
        try:
            if selector_from_label_selector((pdb.get("spec") or {}).get("selector")).matches(
                    labels):
                budgets.append(pdb)
        except (ValueError, TypeError):
            continue
    if not budgets:
        return
    if len(budgets) > 1:
        raise APIError(500, "InternalError", "This pod has more than one PodDisruptionBudget, "
                                             "which the eviction subresource does not support.")
    pdb = budgets[0]
    status = pdb.get("status") or {}
    pdb_name = pdb["metadata"]["name"]
    if (status.get("observedGeneration") or 0) < (pdb["metadata"].get("generation") or 0):
        _too_many(f"The disruption budget {pdb_name} is still being processed by the server.")
    allowed = status.get("disruptionsAllowed") or 0
    if allowed <= 0:
        _too_many(f"The disruption budget {pdb_name} needs {status.get('desiredHealthy', 0)} "
                  f"healthy pods and has {status.get('currentHealthy', 0)} currently")
    if dry_run:
        return

    def take(o: Obj) -> None:
        st = o.setdefault("status", {})
        st["disruptionsAllowed"] = max(0, (st.get("disruptionsAllowed") or 0) - 1)
        st.setdefault("disruptedPods", {})[pod["metadata"]["name"]] = format_epoch(time.time())
    scope.store.guaranteed_update(R.PDBS.key, ns, pdb_name, take)


def _too_many(cause: str) -> None:
    raise APIError(429, "TooManyRequests", _VIOLATION,
                   {"causes": [{"reason": "DisruptionBudget", "message": cause}]})
