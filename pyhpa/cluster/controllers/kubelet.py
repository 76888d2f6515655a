"""The kubelet of the simulated node: each bound pod's status (phase, conditions, container
statuses, IPs) as a pure function of its times in the usage model, the events of its containers
(pulled, created, started), and the end of a deleted pod.

Why a finalizer: our pods carry :data:`~pyhpa.cluster.controllers.objects.FINALIZER`, so a
delete through the API marks them Terminating first, as on a real node; the kubelet releases it
once the pod's grace period (its simulated termination time) has passed, and the pod is gone.
"""

from __future__ import annotations

import hashlib
from typing import Callable

from pyhpa.api.timefmt import format_duration, format_epoch
from pyhpa.cluster import resources as R
from pyhpa.cluster.controllers.context import PodRecord, SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import (
    FINALIZER,
    Obj,
    is_deleting,
    meta_of,
    qos_class,
    spec_of,
    status_of,
    uid_of,
)
from pyhpa.cluster.store import Conflict, NotFound


def sync_pods(ctx: SimulationContext, snap: Snapshot, now: float) -> None:
    """Each pod's status as of ``now``; a terminated pod's finalizer released."""
    for pod in snap.pods:
        rec = ctx.pods.get(uid_of(pod))
        if rec is None:
            continue
        sim = rec.sim
        if is_deleting(pod) and sim.gone_at is not None and now >= sim.gone_at:
            if FINALIZER in (meta_of(pod).get("finalizers") or []):
                def release(o: Obj) -> None:
                    fins = [f for f in meta_of(o).get("finalizers") or [] if f != FINALIZER]
                    if fins:
                        o["metadata"]["finalizers"] = fins
                    else:
                        o["metadata"].pop("finalizers", None)
                try:
                    ctx.mutate_object(R.PODS.key, rec.namespace, rec.name, release)
                except (NotFound, Conflict):
                    ctx.writes += 1
            continue
        if not rec.node:
            continue  # not bound to a node yet: the scheduler's
        # everything pod_status reads besides the pod: while the pod object and these stay
        # the same, so does the status it found current last time
        inputs = (sim.created, sim.running_at, sim.ready_at, sim.deleted_at, sim.gone_at,
                  now >= sim.running_at, now >= sim.ready_at, sim.ready(now), rec.scheduled_at)
        if rec.status_seen is not None and rec.status_seen[0] is pod \
                and rec.status_seen[1] == inputs:
            continue
        status = pod_status(pod, rec, now)
        if status == status_of(pod):
            rec.status_seen = (pod, inputs)
        else:
            def put(o: Obj, status: Obj = status) -> None:
                o["status"] = status
            try:
                ctx.mutate_object(R.PODS.key, rec.namespace, rec.name, put)
            except (NotFound, Conflict):
                ctx.writes += 1
                continue
            container_events(ctx, pod, rec, status_of(pod), status)


def container_events(ctx: SimulationContext, pod: Obj, rec: PodRecord, old: Obj,
                     new: Obj) -> None:
    """The events a kubelet records as it starts the containers the new status reports: pulling
    (policy Always) when it first takes the pod on, then pulled, created and started."""
    before = {c.get("name"): c for c in old.get("containerStatuses") or []}
    specs = {c.get("name"): c for c in spec_of(pod).get("containers") or [] if isinstance(c, dict)}
    for cs in new.get("containerStatuses") or []:
        name = cs.get("name") or ""
        c = specs.get(name) or {}
        image = str(c.get("image") or "")
        always = c.get("imagePullPolicy") == "Always"
        prev = before.get(name)
        emit = _container_event(ctx, pod, rec, name)
        if prev is None and always:
            emit("Pulling", f'Pulling image "{image}"')
        if "running" in (cs.get("state") or {}) and "running" not in ((prev or {}).get("state") or {}):
            if always:
                took = format_duration(round(max(0.0, rec.sim.running_at - (
                    rec.scheduled_at if rec.scheduled_at is not None else rec.sim.created)), 3))
                emit("Pulled", f'Successfully pulled image "{image}" in {took} ({took} including '
                               f"waiting). Image size: {_image_size(image)} bytes.")
            else:
                emit("Pulled", f'Container image "{image}" already present on machine')
            emit("Created", f"Created container: {name}")
            emit("Started", f"Started container {name}")


def _container_event(ctx: SimulationContext, pod: Obj, rec: PodRecord,
                     container: str) -> Callable[[str, str], None]:
    def emit(reason: str, message: str) -> None:
        ctx.event(pod, reason, message, "kubelet", host=rec.node,
                  field_path=f"spec.containers{{{container}}}")
    return emit


def _image_size(image: str) -> int:
    """A stable size for an image the simulated node pulls (somewhere in 20-200 MB)."""
    return 20_000_000 + int.from_bytes(hashlib.sha1(image.encode()).digest()[:4], "big") \
        % 180_000_000


def pod_status(pod: Obj, rec: PodRecord, now: float) -> Obj:
    """The status the kubelet would report for ``pod`` at ``now``: a function of its times."""
    sim = rec.sim
    old = status_of(pod)
    spec = spec_of(pod)
    running = now >= sim.running_at
    ready = sim.ready(now) or (sim.deleted_at is not None and sim.deleted_at >= sim.ready_at
                               and now >= sim.ready_at)
    # the kubelet takes the pod on once it is bound: its first status is from then
    started = format_epoch(rec.scheduled_at if rec.scheduled_at is not None else sim.created)
    ready_t = format_epoch(sim.ready_at) if now >= sim.ready_at else started
    names = [c.get("name", "") for c in spec.get("containers") or [] if isinstance(c, dict)]

    def cond(type_: str, ok: bool, t: str) -> Obj:
        c: Obj = {"type": type_, "status": "True" if ok else "False", "lastProbeTime": None,
                  "lastTransitionTime": t}
        if not ok and type_ in ("Ready", "ContainersReady"):
            c["reason"] = "ContainersNotReady"
            c["message"] = f"containers with unready status: [{' '.join(names)}]"
        return c

    conditions = [
        cond("PodReadyToStartContainers", running,
             format_epoch(sim.running_at) if running else started),
        cond("Initialized", True, started),
        cond("Ready", ready, ready_t),
        cond("ContainersReady", ready, ready_t),
        cond("PodScheduled", True, started),
    ]
    host_ip = "10.0.0.10"
    statuses = []
    for c in spec.get("containers") or []:
        if not isinstance(c, dict):
            continue
        cs: Obj = {"name": c.get("name", ""), "image": c.get("image", ""),
                   "imageID": "", "ready": ready, "restartCount": 0, "started": running,
                   "lastState": {}}
        if running:
            cs["state"] = {"running": {"startedAt": format_epoch(sim.running_at)}}
            cs["containerID"] = "containerd://" + hashlib.sha1(
                (sim.uid + cs["name"]).encode()).hexdigest()
            cs["imageID"] = "sim://" + str(c.get("image", ""))
        else:
            cs["state"] = {"waiting": {"reason": "ContainerCreating"}}
        statuses.append(cs)
    status: Obj = {"phase": "Running" if running else "Pending", "conditions": conditions,
                   "hostIP": host_ip, "hostIPs": [{"ip": host_ip}]}
    if running:
        ip = _pod_ip(sim.uid)
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    status["startTime"] = started
    status["containerStatuses"] = statuses
    status["qosClass"] = old.get("qosClass") or qos_class(spec)
    return status


def _pod_ip(uid: str) -> str:
    d = hashlib.sha1(uid.encode()).digest()
    return f"10.244.{d[0] % 250}.{2 + d[1] % 250}"
