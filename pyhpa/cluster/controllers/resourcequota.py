"""The ResourceQuota controller (pkg/controller/resourcequota): each quota's ``status.hard``
and ``status.used``, recounted from the namespace's objects every pass.

Why recounted: usage is a sum over the namespace (pods not finished, Services, ConfigMaps,
Secrets, claims and their storage), which the admission plugin enforces with the same counting
(``pyhpa.cluster.apiserver.admission``); ``kubectl describe quota`` and ``get quota`` read it.
"""

from __future__ import annotations

from types import MappingProxyType

from typing import Any

from pyhpa.api.quantity import Quantity
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.admission import namespace_usage
from pyhpa.cluster.apiserver.managed_fields import KUBE_CONTROLLER_MANAGER as KCM
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot, listed_in
from pyhpa.cluster.controllers.objects import Obj, is_deleting, name_of, namespace_of, spec_of

# object counts a quota may cap, by the names upstream accepts for them
_COUNTED = MappingProxyType({"services": R.SERVICES, "configmaps": R.CONFIG_MAPS, "secrets": R.SECRETS,
            "persistentvolumeclaims": R.PERSISTENT_VOLUME_CLAIMS,
            "replicationcontrollers": R.REPLICATION_CONTROLLERS,
            "resourcequotas": R.RESOURCE_QUOTAS})
_BY_COUNT_NAME = MappingProxyType({f"count/{r.group_resource}": r for r in (
    R.SERVICES, R.CONFIG_MAPS, R.SECRETS, R.PERSISTENT_VOLUME_CLAIMS, R.DEPLOYMENTS,
    R.REPLICA_SETS, R.STATEFUL_SETS, R.JOBS, R.CRONJOBS, R.HPAS, R.INGRESSES)})


def _quantity(v: Any) -> Quantity:
    try:
        return Quantity.parse(str(v))
    except Exception:  # noqa: BLE001 - shown as zero
        return Quantity.parse("0")


def _usage(ctx: SimulationContext, ns: str, hard: dict[str, Any], now: float) -> dict[str, str]:
    used = {k: str(v) for k, v in namespace_usage(ctx.store, ns, now).items()}
    out: dict[str, str] = {}
    for name in hard:
        res = _COUNTED.get(name) or _BY_COUNT_NAME.get(name)
        if res is not None:
            out[name] = str(len([o for o in ctx.store.list(res.key, namespace=ns).items
                                 if not is_deleting(o)]))
        elif name == "requests.storage":
            total = Quantity.parse("0")
            for c in ctx.store.list(R.PERSISTENT_VOLUME_CLAIMS.key, namespace=ns).items:
                total = total + _quantity(((spec_of(c).get("resources") or {})
                                           .get("requests") or {}).get("storage", "0"))
            out[name] = str(total)
        else:
            out[name] = used.get(name, "0")
    return out


def sync_quotas(ctx: SimulationContext, snap: Snapshot, now: float) -> None:
    for quota in listed_in(ctx.store, R.RESOURCE_QUOTAS.key, snap):
        if is_deleting(quota):
            continue
        hard = dict(spec_of(quota).get("hard") or {})
        status: Obj = {"hard": hard, "used": _usage(ctx, namespace_of(quota), hard, now)}
        if status != quota.get("status"):
            def put(o: Obj, status: Obj = status) -> None:
                o["status"] = status
            ctx.mutate_object(R.RESOURCE_QUOTAS.key, namespace_of(quota), name_of(quota), put,
                              manager=KCM, subresource="status")
