"""The kubelet of the simulated node: each bound pod's status (phase, conditions, container
statuses, IPs) as a pure function of its times in the usage model, the events of its containers
(pulled, created, started; killing when deleted), containers over their memory limit OOMKilled and restarted with
back-off, and the end of a deleted pod.

Why a finalizer: our pods carry :data:`~pyhpa.cluster.controllers.objects.FINALIZER`, so a
delete through the API marks them Terminating first, as on a real node; the kubelet releases it
once the pod's grace period (its simulated termination time) has passed, and the pod is gone.
"""

from __future__ import annotations

import hashlib
import math
from typing import Callable

from pyhpa.api.timefmt import format_duration, format_epoch
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBELET
from pyhpa.cluster.controllers.context import PodRecord, Restarts, SimulationContext, Snapshot
from pyhpa.cluster.controllers.logs import note_throttling
from pyhpa.cluster.controllers.node import internal_ip
from pyhpa.cluster.controllers.objects import (
    FINALIZER, Obj, is_deleting, meta_of, parse_epoch, qos_class, spec_of, status_of, uid_of, written_as,
)
from pyhpa.cluster.apiserver.storage import Conflict, NotFound
from pyhpa.workload.model import Workload, ready_condition


def sync_pods(ctx: SimulationContext, snap: Snapshot, now: float) -> None:
    """Each pod's status as of ``now``; a terminated pod's finalizer released."""
    for pod in snap.pods:
        rec = ctx.pods.get(uid_of(pod))
        if rec is None:
            if is_deleting(pod) and finished(pod):  # nothing runs: gone at once
                _release(ctx, pod)
            continue
        sim = rec.sim
        if is_deleting(pod) and not rec.stopping_reported:
            rec.stopping_reported = True
            stopping_events(ctx, pod, rec)
        if is_deleting(pod) and sim.gone_at is not None and now >= sim.gone_at:
            _release(ctx, pod)
            continue
        if not rec.node:
            continue  # not bound to a node yet: the scheduler's
        g = ctx.groups.get(rec.group)
        if rec.status_seen is None and rec.restarts is None:  # new to this process
            rec.restarts = restored_restarts(pod)
            if rec.restarts is not None and rec.restarts.back_off_until is not None \
                    and g is not None:
                g.workload.set_times(sim, sim.running_at, math.inf)  # waiting to restart
        if g is not None and not is_deleting(pod):
            kill_and_restart(rec, g.workload, now)
            finish = _finish_at(rec, g.workload)
            if finish is not None and now >= finish:
                _complete(ctx, pod, rec, finish)
                continue
            note_throttling(rec, g.workload, now)
            if finish is not None:
                rec.kubelet_due = finish if rec.kubelet_due is None else \
                    min(rec.kubelet_due, finish)
        st = rec.restarts
        # everything pod_status reads besides the pod: while the pod object and these stay
        # the same, so does the status it found current last time
        inputs = (sim.created, sim.running_at, sim.ready_at, sim.deleted_at, sim.gone_at,
                  now >= sim.running_at, now >= sim.ready_at, sim.ready(now), rec.scheduled_at,
                  None if st is None else (st.count, st.started, st.last_finished,
                                           st.back_off_until is not None))
        version = written_as(pod)
        if version is not None and rec.status_seen is not None and rec.status_seen[0] == version \
                and rec.status_seen[1] == inputs:
            continue
        status = pod_status(pod, rec, now, _host_ip(ctx, rec))
        if status == status_of(pod):
            rec.status_seen = (version, inputs)
        else:
            if not _write_status(ctx, rec, status):
                continue
            container_events(ctx, pod, rec, status_of(pod), status)


def finished(pod: Obj) -> bool:
    """Whether the pod's containers have all exited for good (a Job's pod that is done)."""
    return status_of(pod).get("phase") in ("Succeeded", "Failed")


def _release(ctx: SimulationContext, pod: Obj) -> None:
    """Drop our finalizer from a deleted pod whose containers are gone: the pod goes."""
    if FINALIZER not in (meta_of(pod).get("finalizers") or []):
        return

    def release(o: Obj) -> None:
        fins = [f for f in meta_of(o).get("finalizers") or [] if f != FINALIZER]
        if fins:
            o["metadata"]["finalizers"] = fins
        else:
            o["metadata"].pop("finalizers", None)
    try:
        ctx.mutate_object(R.PODS.key, meta_of(pod).get("namespace") or "",
                          meta_of(pod).get("name") or "", release, manager=KUBELET)
    except (NotFound, Conflict):
        ctx.writes += 1


def _finish_at(rec: PodRecord, wl: Workload) -> float | None:
    """When the pod's containers exit with success: ``sim.pyhpa.io/run-duration`` after they
    started (None: they run until the pod is deleted)."""
    run = wl.params.run_seconds
    if run is None or not math.isfinite(rec.sim.running_at) or rec.restarts is not None:
        return None
    return rec.sim.running_at + run


def _complete(ctx: SimulationContext, pod: Obj, rec: PodRecord, finish: float) -> None:
    """Write the status of a pod whose containers exited at ``finish``: with code 0 phase
    Succeeded, unready with reason PodCompleted, each container terminated with reason
    Completed; with another code (``sim.pyhpa.io/exit-code``) phase Failed, reason Error."""
    status = pod_status(pod, rec, finish, _host_ip(ctx, rec))
    done = format_epoch(finish)
    g = ctx.groups.get(rec.group)
    code = g.workload.params.exit_code if g is not None else 0
    status["phase"] = "Succeeded" if code == 0 else "Failed"
    for c in status["conditions"]:
        if c["type"] in ("Ready", "ContainersReady", "PodReadyToStartContainers"):
            c.update(status="False", lastTransitionTime=done)
            c.pop("message", None)
            if c["type"] != "PodReadyToStartContainers":
                c["reason"] = "PodCompleted" if code == 0 else "PodFailed"
    for cs in container_statuses(status):
        cs.update(ready=False, started=False, state={"terminated": {
            "exitCode": code, "reason": "Completed" if code == 0 else "Error",
            "startedAt": format_epoch(rec.sim.running_at), "finishedAt": done,
            "containerID": cs.get("containerID", "")}})
    _write_status(ctx, rec, status)


def _host_ip(ctx: SimulationContext, rec: PodRecord) -> str:
    """The InternalIP of the pod's node."""
    return internal_ip(ctx.node_names.index(rec.node) if rec.node in ctx.node_names else 0)


def _write_status(ctx: SimulationContext, rec: PodRecord, status: Obj) -> bool:
    """Write the pod's status as the kubelet; False (a write counted) when the pod is gone or
    changed meanwhile."""
    def put(o: Obj) -> None:
        o["status"] = status
    try:
        ctx.mutate_object(R.PODS.key, rec.namespace, rec.name, put, manager=KUBELET,
                          subresource="status")
    except (NotFound, Conflict):
        ctx.writes += 1
        return False
    return True


# How long a container over its memory limit runs before the kernel kills it (the time to
# allocate that much), and the kubelet's restart back-off: none after the first kill, then 10 s
# doubling up to 5 min.
OOM_SECONDS = 1.0
BACK_OFF_SECONDS, MAX_BACK_OFF_SECONDS = 10.0, 300.0


def back_off(restarts: int) -> float:
    """The wait before restarting a container killed after ``restarts`` restarts."""
    return 0.0 if restarts <= 0 else min(BACK_OFF_SECONDS * 2 ** (restarts - 1), MAX_BACK_OFF_SECONDS)


def kill_and_restart(rec: PodRecord, wl: Workload, now: float) -> None:
    """OOM kills and back-off restarts of the pod's containers up to ``now``.

    A running container whose part of the pod's memory demand is over its limit is killed
    :data:`OOM_SECONDS` after it started (or at once, if it went over later); the pod is not
    Ready until a restarted container stays within its limit through its readiness delay.
    The usage model keeps the pod running but unready meanwhile (its startup CPU, capped memory).
    """
    limits, sim, st = wl.memory_limits, rec.sim, rec.restarts
    rec.kubelet_due = None
    if limits is None and st is None:
        return
    st = st or Restarts(started=sim.running_at)
    params = wl.params
    readiness = max(0.0, params.startup_seconds - params.pending_seconds)
    while True:
        if st.back_off_until is not None:
            if now < st.back_off_until:
                rec.kubelet_due = st.back_off_until
                break
            st.count += 1  # the back-off is over: a new container starts
            st.started, st.back_off_until = st.back_off_until, None
            wl.set_times(sim, sim.running_at, st.started + readiness)
        over = [] if limits is None or not sim.running(now) else \
            limits.exceeded(wl.memory_demand(sim, now))
        if not over:
            st.kill_at = None
            break
        if st.kill_at is None:
            st.kill_at = max(st.started + OOM_SECONDS, now)
        if now < st.kill_at:
            rec.kubelet_due = st.kill_at
            break
        names = [c.name for c in wl.containers]
        st.killed = tuple(names[i] for i in over)
        st.last_started, st.last_finished = st.started, st.kill_at
        st.back_off_until, st.kill_at = st.last_finished + back_off(st.count), None
        wl.set_times(sim, sim.running_at, math.inf)  # unready until a container stays up
    if st.last_finished is not None or st.kill_at is not None:
        rec.restarts = st


def restored_restarts(pod: Obj) -> Restarts | None:
    """The restarts a stored pod's status reports (a pod from before a restart of ours)."""
    for cs in container_statuses(status_of(pod)):
        ended = ((cs.get("lastState") or {}).get("terminated") or {})
        count = cs.get("restartCount")
        finished = parse_epoch(ended.get("finishedAt"))
        if ended.get("reason") != "OOMKilled" or not isinstance(count, int) or finished is None:
            continue
        state = cs.get("state") or {}
        running = parse_epoch((state.get("running") or {}).get("startedAt"))
        st = Restarts(started=running if running is not None else finished, count=count,
                      killed=(cs.get("name") or "",),
                      last_started=parse_epoch(ended.get("startedAt")) or finished,
                      last_finished=finished)
        if running is None:
            st.back_off_until = finished + back_off(count)
        return st
    return None


def container_statuses(status: Obj) -> list[Obj]:
    """The container statuses of a stored pod status that are objects: the store holds
    whatever was written (a ``null`` item from before the decoder read it as an empty status),
    and one such item must not stop the kubelet's pass over every other pod."""
    return [cs for cs in status.get("containerStatuses") or [] if isinstance(cs, dict)]


def container_events(ctx: SimulationContext, pod: Obj, rec: PodRecord, old: Obj,
                     new: Obj) -> None:
    """The events a kubelet records as it starts the containers the new status reports: pulling
    (policy Always) when it first takes the pod on, then pulled, created and started (again at
    each restart), and a back-off warning while a killed container waits to restart."""
    before = {c.get("name"): c for c in container_statuses(old)}
    specs = {c.get("name"): c for c in spec_of(pod).get("containers") or [] if isinstance(c, dict)}
    for cs in container_statuses(new):
        name = cs.get("name") or ""
        c = specs.get(name) or {}
        image = str(c.get("image") or "")
        always = c.get("imagePullPolicy") == "Always"
        prev = before.get(name)
        emit = _container_event(ctx, pod, rec, name)
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") == "CrashLoopBackOff" and waiting != \
                ((prev or {}).get("state") or {}).get("waiting"):
            emit("BackOff", f"Back-off restarting failed container {name} in pod "
                            f"{_pod_ref(pod)}", "Warning")
        restarted = cs.get("restartCount") != (prev or {}).get("restartCount", 0)
        if prev is None and always:
            emit("Pulling", f'Pulling image "{image}"')
        if "running" in (cs.get("state") or {}) and \
                ("running" not in ((prev or {}).get("state") or {}) or restarted):
            if always and restarted:
                emit("Pulling", f'Pulling image "{image}"')
            if always:
                took = format_duration(round(max(0.0, rec.sim.running_at - (
                    rec.scheduled_at if rec.scheduled_at is not None else rec.sim.created)), 3))
                emit("Pulled", f'Successfully pulled image "{image}" in {took} ({took} including '
                               f"waiting). Image size: {_image_size(image)} bytes.")
            else:
                emit("Pulled", f'Container image "{image}" already present on machine')
            emit("Created", f"Created container: {name}")
            emit("Started", f"Started container {name}")


def stopping_events(ctx: SimulationContext, pod: Obj, rec: PodRecord) -> None:
    """What a kubelet records as it stops a deleted pod's running containers."""
    for cs in status_of(pod).get("containerStatuses") or []:
        if isinstance(cs, dict) and "running" in (cs.get("state") or {}):
            name = cs.get("name") or ""
            _container_event(ctx, pod, rec, name)("Killing", f"Stopping container {name}")


def _container_event(ctx: SimulationContext, pod: Obj, rec: PodRecord,
                     container: str) -> Callable[..., None]:
    def emit(reason: str, message: str, type_: str = "Normal") -> None:
        ctx.event(pod, reason, message, "kubelet", type_, host=rec.node,
                  field_path=f"spec.containers{{{container}}}")
    return emit


def _pod_ref(pod: Obj) -> str:
    """How the kubelet names a pod in messages: ``name_namespace(uid)``."""
    meta = meta_of(pod)
    return f"{meta.get('name')}_{meta.get('namespace')}({meta.get('uid')})"


def _image_size(image: str) -> int:
    """A stable size for an image the simulated node pulls (somewhere in 20-200 MB)."""
    return 20_000_000 + int.from_bytes(hashlib.sha1(image.encode()).digest()[:4], "big") \
        % 180_000_000


def pod_status(pod: Obj, rec: PodRecord, now: float, host_ip: str) -> Obj:
    """The status the kubelet would report for ``pod`` at ``now`` on the node at ``host_ip``:
    a function of its times."""
    sim = rec.sim
    old = status_of(pod)
    spec = spec_of(pod)
    running = now >= sim.running_at
    # the kubelet takes the pod on once it is bound: its first status is from then
    first_status = rec.scheduled_at if rec.scheduled_at is not None else sim.created
    started = format_epoch(first_status)
    st = rec.restarts
    crashed = set(st.killed) if st is not None and st.last_finished is not None else set()
    names = [c.get("name", "") for c in spec.get("containers") or [] if isinstance(c, dict)]
    unready = [n for n in names if n in crashed] or names
    killed_at = st.last_finished if crashed and st is not None else None
    ready, ready_since = ready_condition(sim, now, first_status if killed_at is None else killed_at)
    ready_t = format_epoch(ready_since)

    def cond(type_: str, ok: bool, t: str) -> Obj:
        c: Obj = {"type": type_, "status": "True" if ok else "False", "lastProbeTime": None,
                  "lastTransitionTime": t}
        if not ok and type_ in ("Ready", "ContainersReady"):
            c["reason"] = "ContainersNotReady"
            c["message"] = f"containers with unready status: [{' '.join(unready)}]"
        return c

    conditions = [
        cond("PodReadyToStartContainers", running,
             format_epoch(sim.running_at) if running else started),
        cond("Initialized", True, started),
        cond("Ready", ready, ready_t),
        cond("ContainersReady", ready, ready_t),
        cond("PodScheduled", True, started),
    ]
    statuses = []
    for c in spec.get("containers") or []:
        if not isinstance(c, dict):
            continue
        name = c.get("name", "")
        cs: Obj = {"name": name, "image": c.get("image", ""),
                   "imageID": "", "ready": ready, "restartCount": 0, "started": running,
                   "lastState": {}}
        if running:
            cs["state"] = {"running": {"startedAt": format_epoch(sim.running_at)}}
            cs["containerID"] = _container_id(sim.uid, name, 0)
            cs["imageID"] = "sim://" + str(c.get("image", ""))
        else:
            cs["state"] = {"waiting": {"reason": "ContainerCreating"}}
        if st is not None and name in crashed:
            _crash_state(cs, st, pod, now)
        elif crashed:  # the pod's other containers run on
            cs["ready"] = running
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


def _crash_state(cs: Obj, st: Restarts, pod: Obj, now: float) -> None:
    """A killed container's status: its restarts, the OOM kill, and the back-off or the run
    since its restart."""
    name = cs["name"]
    cs["restartCount"] = st.count
    cs["lastState"] = {"terminated": {
        "exitCode": 137, "reason": "OOMKilled",
        "startedAt": format_epoch(st.last_started if st.last_started is not None else st.started),
        "finishedAt": format_epoch(st.last_finished if st.last_finished is not None else now),
        "containerID": _container_id(uid_of(pod), name, max(0, st.count - 1)
                                     if st.back_off_until is None else st.count)}}
    if st.back_off_until is not None and now < st.back_off_until:
        wait = format_duration(back_off(st.count))
        cs["state"] = {"waiting": {"reason": "CrashLoopBackOff",
                                   "message": f"back-off {wait} restarting failed container="
                                              f"{name} pod={_pod_ref(pod)}"}}
        cs["ready"] = cs["started"] = False
        cs.pop("containerID", None)
    else:
        cs["state"] = {"running": {"startedAt": format_epoch(st.started)}}
        cs["containerID"] = _container_id(uid_of(pod), name, st.count)


def _container_id(pod_uid: str, name: str, restarts: int) -> str:
    """A container's ID, another one for each restart."""
    seed = pod_uid + name + (f"/{restarts}" if restarts else "")
    return "containerd://" + hashlib.sha1(seed.encode()).hexdigest()


def _pod_ip(uid: str) -> str:
    d = hashlib.sha1(uid.encode()).digest()
    return f"10.244.{d[0] % 250}.{2 + d[1] % 250}"
