"""The Job controller (pkg/controller/job/job_controller.go) and the TTL-after-finished
controller, for simulated pods that finish.

A Job's pods run for ``sim.pyhpa.io/run-duration`` (an annotation on the Job or on its pod
template; the kubelet simulation then marks them Succeeded, :mod:`.kubelet`) and the Job keeps
``parallelism`` of them running until ``completions`` have succeeded; then it is Complete. Past
``activeDeadlineSeconds`` its running pods are deleted and it is Failed (DeadlineExceeded); a
suspended Job runs none. ``ttlSecondsAfterFinished`` deletes a finished Job (its pods go with
it). Conditions are the emulated release's: from 1.31 a terminal condition is preceded by
SuccessCriteriaMet or FailureTarget, as the Job controller adds them before the pods are gone.

With ``sim.pyhpa.io/exit-code`` set non-zero the pods fail instead (phase Failed): each is
replaced after the controller's back-off (10 s doubling) until more than ``backoffLimit`` have
failed, and the Job is Failed (BackoffLimitExceeded). A pod with ``restartPolicy: OnFailure``
is replaced too, where a node would restart its container.
"""

from __future__ import annotations

from pyhpa.api.timefmt import format_epoch
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.managed_fields import KUBE_CONTROLLER_MANAGER as KCM
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import (
    Obj, is_deleting, meta_of, name_of, namespace_of, parse_epoch, set_nonzero, spec_of, status_of, uid_of,
)
from pyhpa.cluster.controllers.pod_control import create_pod, delete_pod, pod_room

COMPONENT = "job-controller"
_FINISHED = ("Complete", "Failed")


def condition(obj: Obj, kind: str) -> Obj | None:
    for c in status_of(obj).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == kind and c.get("status") == "True":
            return c
    return None


def finished_at(job: Obj) -> float | None:
    """When the Job became Complete or Failed, or None while it runs."""
    for kind in _FINISHED:
        c = condition(job, kind)
        if c is not None:
            return parse_epoch(c.get("lastTransitionTime")) or 0.0
    return None


def succeeded(job: Obj) -> bool:
    return condition(job, "Complete") is not None


def _minor(ctx: SimulationContext) -> int:
    """The emulated release's minor version (the kubelet's, which is the server's)."""
    try:
        return int(ctx.kubelet_version.lstrip("v").split(".")[1])
    except (IndexError, ValueError):
        return 99


def _cond(kind: str, reason: str, message: str, at: str) -> Obj:
    c: Obj = {"type": kind, "status": "True", "lastProbeTime": at, "lastTransitionTime": at}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def _int(v: object, default: int) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def sync_job(ctx: SimulationContext, job: Obj, snap: Snapshot, now: float) -> float | None:
    """One Job: its pods towards what it still needs, its status; returns when it next needs
    a pass by time alone (its deadline, its TTL), or None."""
    if is_deleting(job):
        return None
    spec, old = spec_of(job), status_of(job)
    pods = [p for p in snap.pods_by_owner.get(uid_of(job), [])]
    done = [p for p in pods if status_of(p).get("phase") == "Succeeded"]
    failures = [p for p in pods if status_of(p).get("phase") == "Failed"]
    running = [p for p in pods if not is_deleting(p)
               and status_of(p).get("phase") not in ("Succeeded", "Failed")]
    terminating = [p for p in pods if is_deleting(p)
                   and status_of(p).get("phase") not in ("Succeeded", "Failed")]
    ended = finished_at(job)
    if ended is not None:
        return _expire(ctx, job, ended, now)
    status = {k: v for k, v in old.items() if k in ("conditions", "startTime", "failed")}
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    stamp = format_epoch(now)
    suspended = spec.get("suspend") is True
    failed = max(_int(status.get("failed"), 0), len(failures))
    if suspended:
        for p in running:
            delete_pod(ctx, p, now, job)
        running = []
        if not any(c.get("type") == "Suspended" and c.get("status") == "True"
                   for c in conditions):
            conditions = [c for c in conditions if c.get("type") != "Suspended"]
            conditions.append(_cond("Suspended", "JobSuspended", "Job suspended", stamp))
            ctx.event(job, "Suspended", "Job suspended", COMPONENT)
    else:
        if any(c.get("type") == "Suspended" for c in conditions):
            conditions = [c for c in conditions if c.get("type") != "Suspended"]
            conditions.append({**_cond("Suspended", "JobResumed", "Job resumed", stamp),
                               "status": "False"})
            ctx.event(job, "Resumed", "Job resumed", COMPONENT)
        status.setdefault("startTime", stamp)
    completions = spec.get("completions")
    parallelism = max(_int(spec.get("parallelism"), 1), 0)
    n_done = len(done)
    deadline = spec.get("activeDeadlineSeconds")
    started = parse_epoch(status.get("startTime"))
    due: float | None = None
    terminal: tuple[str, str, str] | None = None
    if isinstance(deadline, int) and started is not None and not suspended:
        if now >= started + deadline:
            for p in running:
                delete_pod(ctx, p, now, job)
            failed += len(running)
            running = []
            terminal = ("Failed", "DeadlineExceeded",
                        "Job was active longer than specified deadline")
        else:
            due = started + deadline
    if terminal is None and not suspended and failed > _int(spec.get("backoffLimit"), 6):
        for p in running:
            delete_pod(ctx, p, now, job)
        running = []
        terminal = ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff "
                                                      "limit")
    if terminal is None and not suspended:
        complete = (n_done >= completions) if isinstance(completions, int) \
            else (n_done >= 1 and not running)
        if complete:
            for p in running:  # more than needed ran at once: the rest are not
                delete_pod(ctx, p, now, job)
            running = []
            terminal = ("Complete", "CompletionsReached" if _minor(ctx) >= 31 else "",
                        "Reached expected number of succeeded pods" if _minor(ctx) >= 31
                        else "")
        else:
            if isinstance(completions, int):
                want = min(parallelism, completions - n_done)
            else:  # a work queue: once one pod succeeded no more start
                want = 0 if n_done else parallelism
            retry = _retry_at(failures)
            if retry is not None and now < retry and want > len(running):
                due = retry if due is None else min(due, retry)  # backing off
            else:
                make = pod_room(ctx, job, max(want - len(running), 0), snap)
                template = spec.get("template") if isinstance(spec.get("template"), dict) \
                    else {}
                for _ in range(make):
                    create_pod(ctx, job, template, snap, now)
                if make:
                    return due  # the new pods are seen by the next pass
    if terminal is not None:
        kind, reason, message = terminal
        first = {"Complete": "SuccessCriteriaMet", "Failed": "FailureTarget"}[kind]
        if _minor(ctx) >= 31:
            conditions.append(_cond(first, reason, message, stamp))
        conditions.append(_cond(kind, reason, message, stamp))
        if kind == "Complete":
            status["completionTime"] = stamp
            ctx.event(job, "Completed", "Job completed", COMPONENT)
        else:
            ctx.event(job, reason, message, COMPONENT, "Warning")
    if conditions:
        status["conditions"] = conditions
    status["active"] = len(running)
    status["ready"] = sum(1 for p in running if ctx.pod_ready(p, now))
    status["terminating"] = len(terminating)
    status["uncountedTerminatedPods"] = {}
    set_nonzero(status, succeeded=n_done, failed=failed)
    for k in ("active", "succeeded", "failed"):
        if status.get(k) == 0:
            del status[k]
    if status != old:
        def put(o: Obj) -> None:
            o["status"] = status
        ctx.mutate_object(R.JOBS.key, namespace_of(job), name_of(job), put, manager=KCM,
                          subresource="status")
    return due


def _retry_at(failures: list[Obj]) -> float | None:
    """When a failed pod may be replaced: the Job controller's back-off, 10 s doubling with
    each failure up to 6 min, from the last failure (job_controller.go getFinishedTime)."""
    if not failures:
        return None
    ends = [parse_epoch(((cs.get("state") or {}).get("terminated") or {}).get("finishedAt"))
            for p in failures for cs in status_of(p).get("containerStatuses") or []
            if isinstance(cs, dict)]
    last = max((t for t in ends if t is not None), default=None)
    if last is None:
        return None
    return last + min(10.0 * 2 ** (len(failures) - 1), 360.0)


def _expire(ctx: SimulationContext, job: Obj, ended: float, now: float) -> float | None:
    """The TTL-after-finished controller: delete a finished Job once its TTL has passed."""
    ttl = spec_of(job).get("ttlSecondsAfterFinished")
    if not isinstance(ttl, int) or isinstance(ttl, bool):
        return None
    if now < ended + ttl:
        return ended + ttl
    ctx.delete_object(R.JOBS.key, namespace_of(job), name_of(job), uid=uid_of(job))
    return None


def job_annotations(job: Obj) -> dict[str, str]:
    """The ``sim.pyhpa.io`` knobs of a Job's pods: its template's, then its own (which win)."""
    template = spec_of(job).get("template")
    tmeta = meta_of(template) if isinstance(template, dict) else {}
    out = dict(tmeta.get("annotations") or {})
    out.update(meta_of(job).get("annotations") or {})
    return {k: v for k, v in out.items() if isinstance(k, str) and k.startswith("sim.pyhpa.io/")}
