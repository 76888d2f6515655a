"""What ``kubectl logs`` shows of a simulated container: the lines of its life the kubelet
simulation knows -- started, ready, throttled at its CPU limit, OOMKilled, told to stop.

Why lines and not nothing: simulated pods run no process, but a user debugging an HPA reads the
log first; these lines say, with the container's own timestamps, what happened to it. The
current container's lines, or with ``previous`` those of the one an OOM kill ended, as the
kubelet keeps the last terminated container's log. The API server filters them (``tailLines``,
``sinceSeconds``, ``timestamps``) and follows them (:mod:`pyhpa.cluster.apiserver.pod_io`).
"""

from __future__ import annotations

import math

from pyhpa.api.quantity import Quantity
from pyhpa.cluster.apiserver.status import APIError
from pyhpa.cluster.controllers.context import PodRecord, SimulationContext
from pyhpa.cluster.controllers.objects import spec_of
from pyhpa.workload.model import Workload

MAX_THROTTLE_NOTES = 200  # the transitions a pod's log keeps (the oldest go first)

Line = tuple[float, str]


def note_throttling(rec: PodRecord, wl: Workload, now: float) -> None:
    """Record when the pod's containers start or stop being held at their CPU limit (each
    pass of the kubelet simulation looks, as the kernel's CFS quota throttles them)."""
    limits = wl.cpu_limits
    if limits is None and not rec.throttled:
        return
    over: tuple[str, ...] = ()
    sim = rec.sim
    if limits is not None and sim.running(now) and len(limits.caps) == len(wl.containers):
        demand = wl.cpu_demand(sim, now)
        names = [c.name for c in wl.containers]
        over = tuple(names[i] for i in limits.exceeded(demand))
        sharing = wl.sharing
        if over and sharing is not None and sharing.contended(sim):
            # on a busy node CFS shares may hold it below its limits: then no quota throttles it
            got = sharing.on_node(sim.node, now).get((wl.uid, sim.ready(now)), 0.0)
            if got < limits.cap(demand) * (1 - 1e-9):
                over = ()
    last = rec.throttled[-1][1] if rec.throttled else ()
    if over != last:
        rec.throttled.append((now, over))
        del rec.throttled[:-MAX_THROTTLE_NOTES]


def container_log(ctx: SimulationContext, namespace: str, name: str, container: str,
                  previous: bool) -> list[Line]:
    """The lines of ``container`` of pod ``namespace/name`` up to now, oldest first; an
    APIError with the kubelet's words when there is no such log."""
    with ctx.lock:
        now = ctx.clock()
        rec = ctx.record(namespace, name)
        if rec is None:
            return []  # not simulated (a pod of another scheduler's node): nothing printed
        g = ctx.groups.get(rec.group)
        pod = rec.pod or {}
        images = {str(c.get("name")): str(c.get("image") or "")
                  for c in spec_of(pod).get("containers") or [] if isinstance(c, dict)}
        st = rec.restarts
        crashed = st is not None and st.last_finished is not None and container in st.killed
        if previous:
            if not crashed or st is None or st.last_started is None:
                raise APIError(400, "BadRequest", f'previous terminated container "{container}" '
                                                  f'in pod "{name}" not found')
            return _instance(rec, g.workload if g else None, container, images.get(container, ""),
                             st.last_started, st.last_finished, now, oom=True)
        sim = rec.sim
        if not rec.node or now < sim.running_at:
            raise APIError(400, "BadRequest", f'container "{container}" in pod "{name}" is '
                                              "waiting to start: ContainerCreating")
        if crashed and st is not None and st.back_off_until is not None and now < st.back_off_until:
            # waiting to restart: the log is the killed container's, as the kubelet's is
            return _instance(rec, g.workload if g else None, container, images.get(container, ""),
                             st.last_started or sim.running_at, st.last_finished, now, oom=True)
        start = st.started if crashed and st is not None else sim.running_at
        return _instance(rec, g.workload if g else None, container, images.get(container, ""),
                         start, None, now, oom=False)


def _instance(rec: PodRecord, wl: Workload | None, container: str, image: str, start: float,
              end: float | None, now: float, *, oom: bool) -> list[Line]:
    """The lines of one run of ``container``, from ``start`` to ``end`` (None: still running)."""
    until = now if end is None else min(end, now)
    lines: list[Line] = [(start, f"started: image {image or '<none>'} (a simulated container: "
                                 "no process runs, its usage is modelled)")]
    sim = rec.sim
    if math.isfinite(sim.ready_at) and start <= sim.ready_at <= until:
        lines.append((sim.ready_at, "ready: serving"))
    limit = _cpu_limit(wl, container)
    before = [container in over for since, over in rec.throttled if since <= start]
    was = bool(before) and before[-1]  # held at its limit when this run started
    if was:
        lines.append((start, f"CPU throttled: held at its limit {limit}"))
    for since, over in rec.throttled:
        if start < since <= until and (container in over) != was:
            was = not was
            lines.append((since, f"CPU throttled: held at its limit {limit}" if was
                          else "CPU no longer throttled"))
    if oom and end is not None and end <= now:
        mem = _memory_limit(wl, container)
        lines.append((end, f"OOMKilled: memory over its limit {mem}, killed by the kernel "
                           "(exit code 137)"))
    if end is None and sim.deleted_at is not None and sim.deleted_at <= now:
        lines.append((sim.deleted_at, "received SIGTERM: shutting down"))
        if sim.gone_at is not None and sim.gone_at <= now:
            lines.append((sim.gone_at, "terminated (exit code 0)"))
    lines.sort(key=lambda line: line[0])
    return lines


def _cpu_limit(wl: Workload | None, container: str) -> str:
    return _limit(wl, container, "cpu")


def _memory_limit(wl: Workload | None, container: str) -> str:
    return _limit(wl, container, "memory")


def _limit(wl: Workload | None, container: str, resource: str) -> str:
    for c in wl.containers if wl is not None else ():
        if c.name == container and resource in c.limits:
            try:
                return str(Quantity.parse(str(c.limits[resource])))
            except Exception:  # noqa: BLE001 - not a quantity: say it as written
                return str(c.limits[resource])
    return "<none>"
