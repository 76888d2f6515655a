"""The usage side of the simulation: one :class:`~pyhpa.workload.model.Workload` model (and its
metrics pipeline) per top-level workload object, one :class:`PodRecord` per pod.

Why: the pods' load comes from the ``sim.pyhpa.io/*`` annotations of the object at the top of
their ownership chain (a Deployment, not its ReplicaSet), and the model needs every pod -- ours,
the user's and those from before a restart -- with its times, to say when it runs, turns Ready and
is gone. The same pure model drives the virtual-clock simulator.
"""

from __future__ import annotations

import logging
import math
from types import MappingProxyType

from pyhpa.cluster.controllers.context import Group, PodRecord, SimulationContext, Snapshot, scoped, unindex
from pyhpa.cluster.controllers.objects import (
    Obj, controller_ref, is_deleting, meta_of, name_of, namespace_of, ordinal_of, parse_epoch, spec_of,
    status_of, uid_of, written_as,
)
from pyhpa.cluster.controllers.scheduler import SCHEDULER_NAME, node_cpu_milli, pod_requests
from pyhpa.workload.model import ContainerTemplate, SimPod, Workload
from pyhpa.workload.params import WorkloadParamError, WorkloadParams, params_from_annotations
from pyhpa.workload.pipeline import MetricsPipeline

log = logging.getLogger(__name__)

# What a pod does when its workload sets no sim.pyhpa.io annotations, about what a small
# container whose image is on the node does: Running 1 s after it is bound to the node, Ready
# 5 s after (a short readiness delay), gone 2 s after its deletion (it exits on SIGTERM; never
# later than its terminationGracePeriodSeconds). The virtual-clock simulator has its own
# defaults in its scenarios.
CLUSTER_DEFAULTS = WorkloadParams(startup_seconds=5.0, pending_seconds=1.0, termination_seconds=2.0)
# A Job's pods finish: without sim.pyhpa.io/run-duration they run 10 s (docs/cluster.md).
JOB_DEFAULTS = WorkloadParams(startup_seconds=1.0, pending_seconds=1.0, termination_seconds=2.0,
                              run_seconds=10.0)

_KIND_RESOURCE = MappingProxyType({"Deployment": "deployments.apps", "ReplicaSet": "replicasets.apps",
                                    "StatefulSet": "statefulsets.apps", "ReplicationController": "replicationcontrollers",
                                    "Scalable": "scalables.demo.pyhpa.io", "Pod": "pods", "Job": "jobs.batch",
                                    "DaemonSet": "daemonsets.apps"})


def top_owner(pod: Obj, snap: Snapshot) -> Obj:
    """The workload object whose ``sim.pyhpa.io`` annotations set this pod's load."""
    ref = controller_ref(pod)
    owner = snap.by_uid.get(ref.get("uid") or "") if ref else None
    if owner is None:
        return pod
    if owner.get("kind") == "ReplicaSet":
        up = controller_ref(owner)
        dep = snap.by_uid.get(up.get("uid") or "") if up else None
        if dep is not None and dep.get("kind") == "Deployment":
            return dep
    return owner


def top_owner_of(owner: Obj, snap: Snapshot) -> Obj:
    """The top-level workload of a pod-owning object (a ReplicaSet's controller, if present)."""
    if owner.get("kind") == "ReplicaSet":
        up = controller_ref(owner)
        dep = snap.by_uid.get(up.get("uid") or "") if up else None
        if dep is not None:
            return dep
    return owner


def _top_level(snap: Snapshot) -> list[Obj]:
    out = list(snap.deployments) + list(snap.statefulsets) + list(snap.rcs) + list(snap.scalables)
    out += snap.jobs + snap.daemonsets
    for rs in snap.replicasets:
        up = controller_ref(rs)
        if up is None or snap.by_uid.get(up.get("uid") or "") is None:
            out.append(rs)
    return out


def sync_usage_models(ctx: SimulationContext, snap: Snapshot, now: float) -> None:
    """A group per top-level workload, a record per pod: adopt new pods, follow deletions and
    re-parenting, drop what is gone."""
    sync_node_shares(ctx, snap)
    seen: set[str] = set()
    tops = _top_level(snap)
    pod_tops: dict[str, Obj] = {}
    # a pod whose containers exited for good (a Job's, done) runs nothing: no record, no usage
    pods = [p for p in snap.pods if status_of(p).get("phase") not in ("Succeeded", "Failed")]
    for pod in pods:
        top = top_owner(pod, snap)
        pod_tops[uid_of(pod)] = top
        if uid_of(top) == uid_of(pod):  # owned by nothing: its own top
            tops.append(pod)
    for top in tops:
        res = snap.scalable_of.get(uid_of(top))
        g = _ensure_group(ctx, top, now, res.group_resource if res is not None else None)
        seen.add(g.uid)
    # pods: adopt new ones into their group, follow deletions, drop the gone
    live: set[str] = set()
    for pod in pods:
        uid = uid_of(pod)
        live.add(uid)
        top = pod_tops[uid]
        gid = uid_of(top)
        rec = ctx.pods.get(uid)
        version = written_as(pod)
        if rec is not None and version is not None and rec.seen == version and rec.group == gid:
            continue  # same pod object, same group: nothing below would change
        if rec is None:
            rec = _adopt(ctx, pod, ctx.groups[gid], snap, now)
        elif rec.group != gid:  # re-parented (e.g. RS adopted by a Deployment)
            old = ctx.groups.get(rec.group)
            if old is not None:
                old.workload.detach(rec.sim)
            ctx.groups[gid].workload.attach(rec.sim)
            rec.group = gid
        rec.labels = dict(meta_of(pod).get("labels") or {})
        node = spec_of(pod).get("nodeName")
        if node and not rec.node:  # bound by someone else (a Binding, or a write of nodeName)
            ctx.start_pod(rec, node, now)
        if is_deleting(pod):
            limit = _grace_deadline(pod)
            if rec.sim.deleted_at is None:
                ctx.mark_deleted(rec, now, limit)
            elif limit is not None and rec.sim.gone_at is not None \
                    and limit < rec.sim.gone_at - 1:  # a second delete shortened the grace
                ctx.mark_deleted(rec, rec.sim.deleted_at, limit)
        rec.seen, rec.pod = version, pod
    for rec in [r for r in scoped(ctx.pods_by_ns, snap) if r.sim.uid not in live]:
        if rec.node:
            ctx.room_freed = True  # a waiting pod may fit now
        del ctx.pods[rec.sim.uid]
        unindex(ctx.pods_by_ns, rec.namespace, rec.sim.uid)
        g = ctx.groups.get(rec.group)
        if g is not None:
            g.workload.detach(rec.sim)
    for g in [g for g in scoped(ctx.groups_by_ns, snap) if g.uid not in seen]:
        if not g.workload.pods:
            ctx.shares.leave(g.workload)
            del ctx.groups[g.uid]
            unindex(ctx.groups_by_ns, g.namespace, g.uid)


def sync_node_shares(ctx: SimulationContext, snap: Snapshot) -> None:
    """The allocatable CPU of every Node (a cordoned one still runs its pods), which the pods
    bound to it share; a Node that is gone no longer limits anyone."""
    names = set()
    for n in snap.nodes:
        names.add(name_of(n))
        ctx.shares.set_capacity(name_of(n), node_cpu_milli(n))
    for name in [n for n in ctx.shares.capacity if n not in names]:
        ctx.shares.forget_node(name)


def _ensure_group(ctx: SimulationContext, top: Obj, now: float, resource: str | None = None) -> Group:
    uid = uid_of(top)
    g = ctx.groups.get(uid)
    version = written_as(top)
    if g is not None and version is not None and g.synced == version:
        return g  # synced from this very object last time: nothing to update
    kind = top.get("kind") or "Pod"
    annotations = dict(meta_of(top).get("annotations") or {})
    if kind == "Job":  # the knobs may sit on the pod template too (the Job's win)
        tmeta = meta_of(spec_of(top).get("template") or {})
        annotations = {**{k: v for k, v in (tmeta.get("annotations") or {}).items()
                          if str(k).startswith("sim.pyhpa.io/")}, **annotations}
    if kind == "Pod":
        containers = spec_of(top).get("containers") or []
        labels = meta_of(top).get("labels") or {}
    else:
        template = spec_of(top).get("template") or {}
        containers = spec_of(template).get("containers") or []
        labels = meta_of(template).get("labels") or {}
    templates = [ContainerTemplate(c.get("name") or f"c{i}", _resources(c, "requests"),
                                   _resources(c, "limits"))
                 for i, c in enumerate(containers) if isinstance(c, dict)]
    if g is None:
        params, error = _params(ctx, top, annotations, None)
        wl = _new_workload(namespace_of(top), name_of(top), kind, labels, templates, params, uid, now)
        g = Group(uid, namespace_of(top), kind, name_of(top),
                  resource or _KIND_RESOURCE.get(kind, kind.lower() + "s"),
                  wl, MetricsPipeline(wl, resolution=ctx.resolution, window=ctx.window,
                                      now=now), annotations, error)
        ctx.groups[uid] = g
        ctx.shares.join(wl)
        ctx.groups_by_ns.setdefault(g.namespace, {})[uid] = g
        g.synced = version
        return g
    if annotations != g.annotations:
        params, g.param_error = _params(ctx, top, annotations, g.workload.params)
        g.annotations = annotations
        g.workload.set_params(params, now)
    if templates and templates != g.workload.containers:
        try:
            g.workload.set_containers(templates)
        except Exception:  # noqa: BLE001 - a quantity that is not one: keep the containers
            pass
    g.workload.labels = dict(labels)
    g.synced = version
    return g


def _params(ctx: SimulationContext, top: Obj, annotations: dict[str, str],
            previous: WorkloadParams | None) -> tuple[WorkloadParams, str | None]:
    """The workload's parameters from its annotations; on an error the previous ones (warned
    about once, in the log and as an Event on the object)."""
    try:
        base = JOB_DEFAULTS if top.get("kind") == "Job" else CLUSTER_DEFAULTS
        return params_from_annotations(annotations, base), None
    except WorkloadParamError as exc:
        message = f"{top.get('kind')} {namespace_of(top)}/{name_of(top)}: {exc}"
        if (uid_of(top), str(exc)) not in ctx.warned:
            ctx.warned.add((uid_of(top), str(exc)))
            log.warning("simulation: %s", message)
            ctx.event(top, "InvalidSimulationAnnotation", str(exc), "pyhpa-simulation",
                      "Warning")
        return previous or (JOB_DEFAULTS if top.get("kind") == "Job" else CLUSTER_DEFAULTS), \
            str(exc)


def _adopt(ctx: SimulationContext, pod: Obj, g: Group, snap: Snapshot, now: float) -> PodRecord:
    """Start tracking a pod we did not create in this process (user's, or from before a restart)."""
    created = parse_epoch(meta_of(pod).get("creationTimestamp"))
    created = now if created is None or created > now else created
    if not spec_of(pod).get("nodeName"):  # waiting for the scheduler: starts once bound
        running_at = ready_at = math.inf
    else:
        running_at, ready_at = g.workload.params.pod_times(created)
        for c in status_of(pod).get("conditions") or []:
            if c.get("type") == "Ready" and c.get("status") == "True":
                t = parse_epoch(c.get("lastTransitionTime"))
                if t is not None and t <= now:
                    ready_at = t
        running_at = min(running_at, ready_at)
    sim = SimPod(name=name_of(pod), uid=uid_of(pod), created=created, running_at=running_at,
                 ready_at=ready_at)
    if g.kind == "StatefulSet":
        sim.ordinal = ordinal_of(name_of(pod), g.name)
    return track(ctx, pod, sim, g, snap)


def track(ctx: SimulationContext, pod: Obj, sim: SimPod, g: Group, snap: Snapshot | None) -> PodRecord:
    """Record ``pod`` (modelled by ``sim``) as one of ``g``'s."""
    spec = spec_of(pod)
    rec = PodRecord(sim, g.uid, namespace_of(pod), name_of(pod), dict(meta_of(pod).get("labels") or {}),
                    spec.get("nodeName") or "", _grace(pod), _min_ready(pod, snap),
                    requests=pod_requests(spec),
                    schedulable=(spec.get("schedulerName") or SCHEDULER_NAME) == SCHEDULER_NAME)
    sim.node = rec.node  # it shares that node's CPU (see pyhpa.workload.nodes)
    if not rec.node:
        ctx.new_waiting.append(rec)  # one more pod waits for a node: the scheduler has work
    else:
        ctx.waiting_settled = False  # its requests count on its node from now on
    g.workload.attach(sim)
    ctx.pods[sim.uid] = rec
    ctx.pods_by_ns.setdefault(rec.namespace, {})[sim.uid] = rec
    return rec


def _grace(pod: Obj) -> float:
    v = spec_of(pod).get("terminationGracePeriodSeconds")
    return float(v) if isinstance(v, (int, float)) and v >= 0 else 30.0


def _min_ready(pod: Obj, snap: Snapshot | None) -> float:
    ref = controller_ref(pod)
    owner = snap.by_uid.get(ref.get("uid") or "") if (ref and snap) else None
    v = spec_of(owner).get("minReadySeconds") if owner else 0
    return float(v) if isinstance(v, (int, float)) and v > 0 else 0.0


def _grace_deadline(pod: Obj) -> float | None:
    """When a pod deleted through the API must be gone (deletionTimestamp, which is the delete
    time plus the grace period); None for deletes without one (the simulation's own)."""
    grace = meta_of(pod).get("deletionGracePeriodSeconds")
    if not isinstance(grace, int) or grace <= 0:
        return None
    return parse_epoch(meta_of(pod).get("deletionTimestamp"))


def _resources(container: Obj, which: str) -> dict[str, str]:
    """A container's ``requests`` or ``limits``."""
    res = container.get("resources")
    values = res.get(which) if isinstance(res, dict) else None
    return {str(k): str(v) for k, v in values.items()} if isinstance(values, dict) else {}


def _new_workload(ns: str, name: str, kind: str, labels: dict[str, str],
                  containers: list[ContainerTemplate], params: WorkloadParams, uid: str,
                  now: float) -> Workload:
    model_kind = "StatefulSet" if kind == "StatefulSet" else "Deployment"
    try:
        return Workload(ns, name, kind=model_kind, labels=labels or None, containers=containers,
                        params=params, replicas=0, now=now, uid=uid)
    except Exception:  # noqa: BLE001 - e.g. a request that is not a quantity: no requests then
        return Workload(ns, name, kind=model_kind, labels=labels or None,
                        containers=[ContainerTemplate(c.name) for c in containers],
                        params=params, replicas=0, now=now, uid=uid)
