"""The PersistentVolume controller (pkg/controller/volume/persistentvolume) with a simulated
provisioner: claims are bound to volumes made for them, or to a fitting volume that exists.

A Pending claim whose StorageClass's provisioner is the simulation's (the default ``standard``
class's, docs/cluster.md) gets a PersistentVolume ``pvc-<claim uid>`` of the requested size,
bound both ways (``claimRef``, ``volumeName``, phase Bound, upstream's bind annotations) with a
``ProvisioningSucceeded`` event. A claim naming no class (``storageClassName: ""``) or another
class binds to the smallest Available volume of that class that fits. A volume whose claim is
gone is deleted (reclaim policy Delete) or Released (Retain).
"""

from __future__ import annotations

from typing import Any

from pyhpa.api.quantity import Quantity
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBE_CONTROLLER_MANAGER as KCM
from pyhpa.cluster.apiserver.policy_bootstrap import PROVISIONER
from pyhpa.cluster.apiserver.storage import AlreadyExists
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot, listed_in
from pyhpa.cluster.controllers.objects import (Obj, is_deleting, meta_of, name_of, namespace_of,
                                               spec_of, status_of, uid_of)

COMPONENT = "persistentvolume-controller"


def _size(v: Any) -> Quantity | None:
    try:
        return Quantity.parse(str(v))
    except Exception:  # noqa: BLE001 - an unreadable size binds nothing
        return None


def sync_volumes(ctx: SimulationContext, snap: Snapshot, now: float) -> None:
    claims = listed_in(ctx.store, R.PERSISTENT_VOLUME_CLAIMS.key, snap)
    volumes = ctx.store.list(R.PERSISTENT_VOLUMES.key).items
    classes = {name_of(c): c for c in ctx.store.list(R.STORAGE_CLASSES.key).items}
    for claim in claims:
        if is_deleting(claim) or status_of(claim).get("phase") == "Bound":
            continue
        _bind(ctx, claim, volumes, classes)
    if snap.namespaces is None:  # a volume's claim may be in any namespace
        live = {uid_of(c) for c in claims}
        for pv in volumes:
            _reclaim(ctx, pv, live)


def _bind(ctx: SimulationContext, claim: Obj, volumes: list[Obj], classes: dict[str, Obj]) -> None:
    spec = spec_of(claim)
    want = _size((spec.get("resources") or {}).get("requests", {}).get("storage"))
    if want is None:
        return
    cls_name = spec.get("storageClassName") or ""
    cls = classes.get(cls_name)
    pv = None
    if spec.get("volumeName"):
        pv = next((v for v in volumes if name_of(v) == spec["volumeName"]), None)
    elif cls is not None and cls.get("provisioner") == PROVISIONER:
        pv = _provision(ctx, claim, cls, want)
    else:
        fits = [v for v in volumes if status_of(v).get("phase") in ("Available", "Pending")
                and not spec_of(v).get("claimRef")
                and (spec_of(v).get("storageClassName") or "") == cls_name
                and (s := _size((spec_of(v).get("capacity") or {}).get("storage"))) is not None
                and s.cmp(want) >= 0
                and set(spec.get("accessModes") or ()) <= set(spec_of(v).get("accessModes") or ())]
        fits.sort(key=lambda v: _size(spec_of(v)["capacity"]["storage"]).milli_value())
        if fits:
            pv = fits[0]
            _claim_volume(ctx, pv, claim)
    if pv is None:
        return
    provisioner = cls.get("provisioner") if cls is not None else None

    def bound(o: Obj) -> None:
        o["spec"]["volumeName"] = name_of(pv)
        annotations = o["metadata"].setdefault("annotations", {})
        annotations["pv.kubernetes.io/bind-completed"] = "yes"
        annotations["pv.kubernetes.io/bound-by-controller"] = "yes"
        if provisioner == PROVISIONER:
            annotations["volume.beta.kubernetes.io/storage-provisioner"] = provisioner
            annotations["volume.kubernetes.io/storage-provisioner"] = provisioner
    ctx.mutate_object(R.PERSISTENT_VOLUME_CLAIMS.key, namespace_of(claim), name_of(claim),
                      bound, manager=KCM)

    def status(o: Obj) -> None:
        o["status"] = {"phase": "Bound", "accessModes": list(spec_of(pv).get("accessModes") or
                                                            spec.get("accessModes") or []),
                       "capacity": dict(spec_of(pv).get("capacity") or {})}
    ctx.mutate_object(R.PERSISTENT_VOLUME_CLAIMS.key, namespace_of(claim), name_of(claim),
                      status, manager=KCM, subresource="status")


def _ref(claim: Obj) -> Obj:
    return {"kind": "PersistentVolumeClaim", "namespace": namespace_of(claim),
            "name": name_of(claim), "uid": uid_of(claim), "apiVersion": "v1",
            "resourceVersion": meta_of(claim).get("resourceVersion", "")}


def _provision(ctx: SimulationContext, claim: Obj, cls: Obj, size: Quantity) -> Obj | None:
    name = f"pvc-{uid_of(claim)}"
    existing = ctx.store.try_get(R.PERSISTENT_VOLUMES.key, "", name)
    if existing is not None:
        return existing
    spec = spec_of(claim)
    pv: Obj = {"apiVersion": "v1", "kind": "PersistentVolume",
               "metadata": {"name": name, "annotations": {
                   "pv.kubernetes.io/provisioned-by": PROVISIONER}},
               "spec": {"capacity": {"storage": str(size)},
                        "accessModes": list(spec.get("accessModes") or []),
                        "persistentVolumeReclaimPolicy": cls.get("reclaimPolicy") or "Delete",
                        "storageClassName": name_of(cls),
                        "volumeMode": spec.get("volumeMode") or "Filesystem",
                        "claimRef": _ref(claim),
                        "hostPath": {"path": f"/var/lib/pyhpa/volumes/{name}",
                                     "type": "DirectoryOrCreate"}},
               "status": {"phase": "Bound"}}
    try:
        created = ctx.create_object(R.PERSISTENT_VOLUMES.key, pv, manager=KCM)
    except AlreadyExists:
        return None
    ctx.event(claim, "ProvisioningSucceeded", f"Successfully provisioned volume {name}",
              COMPONENT)
    return created


def _claim_volume(ctx: SimulationContext, pv: Obj, claim: Obj) -> None:
    def claimed(o: Obj) -> None:
        o["spec"]["claimRef"] = _ref(claim)
    ctx.mutate_object(R.PERSISTENT_VOLUMES.key, "", name_of(pv), claimed, manager=KCM)

    def phase(o: Obj) -> None:
        o["status"] = {"phase": "Bound"}
    ctx.mutate_object(R.PERSISTENT_VOLUMES.key, "", name_of(pv), phase, manager=KCM,
                      subresource="status")


def _reclaim(ctx: SimulationContext, pv: Obj, live: set[str]) -> None:
    ref = spec_of(pv).get("claimRef")
    phase = status_of(pv).get("phase")
    if not isinstance(ref, dict):
        if phase in (None, "Pending"):
            def available(o: Obj) -> None:
                o["status"] = {"phase": "Available"}
            ctx.mutate_object(R.PERSISTENT_VOLUMES.key, "", name_of(pv), available,
                              manager=KCM, subresource="status")
        return
    if not ref.get("uid") or ref.get("uid") in live or is_deleting(pv) or phase == "Released":
        return
    if spec_of(pv).get("persistentVolumeReclaimPolicy") == "Delete":
        ctx.delete_object(R.PERSISTENT_VOLUMES.key, "", name_of(pv), uid=uid_of(pv))
        return

    def released(o: Obj) -> None:
        o["status"] = {"phase": "Released"}
    ctx.mutate_object(R.PERSISTENT_VOLUMES.key, "", name_of(pv), released, manager=KCM,
                      subresource="status")


def ensure_claims(ctx: SimulationContext, sts: Obj, ordinal: int) -> list[Obj]:
    """The claims of one StatefulSet pod from its ``volumeClaimTemplates`` (``<template>-
    <set>-<ordinal>``, made when missing, as stateful_set_utils.go getPersistentVolumeClaims
    names them), and the pod volumes that mount them."""
    from pyhpa.cluster.apiserver.policy_strategy import PersistentVolumeClaimStrategy

    volumes: list[Obj] = []
    selector = (spec_of(sts).get("selector") or {}).get("matchLabels") or {}
    for template in spec_of(sts).get("volumeClaimTemplates") or []:
        if not isinstance(template, dict) or not meta_of(template).get("name"):
            continue
        vname = meta_of(template)["name"]
        claim_name = f"{vname}-{name_of(sts)}-{ordinal}"
        volumes.append({"name": vname, "persistentVolumeClaim": {"claimName": claim_name}})
        if ctx.store.try_get(R.PERSISTENT_VOLUME_CLAIMS.key, namespace_of(sts),
                             claim_name) is not None:
            continue
        claim: Obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                      "metadata": {"name": claim_name, "namespace": namespace_of(sts),
                                   "labels": {**(meta_of(template).get("labels") or {}),
                                              **selector}},
                      "spec": dict(spec_of(template))}
        strategy = PersistentVolumeClaimStrategy(R.PERSISTENT_VOLUME_CLAIMS)
        strategy.store = ctx.store
        strategy.prepare_create(claim)  # the default StorageClass, phase Pending
        try:
            ctx.create_object(R.PERSISTENT_VOLUME_CLAIMS.key, claim, manager=KCM)
        except AlreadyExists:
            continue
        ctx.event(sts, "SuccessfulCreate", f"create Claim {claim_name} Pod "
                  f"{name_of(sts)}-{ordinal} in StatefulSet {name_of(sts)} success",
                  "statefulset-controller")
    return volumes
