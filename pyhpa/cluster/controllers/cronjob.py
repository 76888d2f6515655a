"""The CronJob controller (pkg/controller/cronjob/cronjob_controllerv2.go): Jobs started on the
schedule, on the cluster's clock.

Each pass looks for the most recent scheduled time since ``status.lastScheduleTime`` (or the
CronJob's creation) that is not past; if there is one it starts a Job named
``<cronjob>-<scheduled minutes since the epoch>`` from ``jobTemplate`` (unless ``suspend``, a
``startingDeadlineSeconds`` already past, or ``concurrencyPolicy: Forbid`` with a Job running;
``Replace`` deletes the running ones first). Finished Jobs beyond the history limits are
deleted, oldest first. The schedule is read in ``timeZone`` (UTC when unset).
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone, tzinfo
from zoneinfo import ZoneInfo

from pyhpa.api import cron
from pyhpa.api.timefmt import format_epoch
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.batch_strategy import JobStrategy, zone_error
from pyhpa.cluster.apiserver.managed_fields import KUBE_CONTROLLER_MANAGER as KCM
from pyhpa.cluster.controllers.context import SimulationContext, Snapshot
from pyhpa.cluster.controllers.job import finished_at, succeeded
from pyhpa.cluster.controllers.objects import (
    Obj, controller_ref, is_deleting, meta_of, name_of, namespace_of, parse_epoch, spec_of, status_of, uid_of,
)

COMPONENT = "cronjob-controller"
SCHEDULED_AT = "batch.kubernetes.io/cronjob-scheduled-timestamp"
_MAX_MISSED = 100  # upstream gives up counting missed schedules past this many


def _zone(spec: Obj) -> tzinfo:
    tz = spec.get("timeZone")
    return ZoneInfo(tz) if isinstance(tz, str) and not zone_error(tz) else timezone.utc


def _latest_due(schedule: cron.Schedule, since: float, now: float, tz: tzinfo) -> tuple[
        float | None, float]:
    """(the most recent scheduled time in (since, now], or None; the next one after now)."""
    t = datetime.fromtimestamp(since, timezone.utc)
    latest = None
    for _ in range(_MAX_MISSED + 1):
        nxt = schedule.next_after(t, tz)
        if nxt.timestamp() > now:
            return latest, nxt.timestamp()
        latest, t = nxt.timestamp(), nxt
    # too many missed: jump to the schedule after now
    return latest, schedule.next_after(datetime.fromtimestamp(now, timezone.utc), tz).timestamp()


def _ref(job: Obj) -> Obj:
    return {"kind": "Job", "namespace": namespace_of(job), "name": name_of(job),
            "uid": uid_of(job), "apiVersion": "batch/v1",
            "resourceVersion": meta_of(job).get("resourceVersion", "")}


def sync_cronjob(ctx: SimulationContext, cj: Obj, snap: Snapshot, now: float) -> float | None:
    """One CronJob: start what is due, trim the history, update the status; returns when its
    next schedule is due (None when suspended or unreadable)."""
    if is_deleting(cj):
        return None
    spec, old = spec_of(cj), status_of(cj)
    try:
        schedule = cron.parse(str(spec.get("schedule") or ""))
    except cron.CronError:
        return None
    tz = _zone(spec)
    jobs = [j for j in snap.jobs if (controller_ref(j) or {}).get("uid") == uid_of(cj)]
    running = [j for j in jobs if finished_at(j) is None and not is_deleting(j)]
    status = json.loads(json.dumps(old))
    for j in jobs:
        if finished_at(j) is not None and not is_deleting(j) and \
                any(a.get("uid") == uid_of(j) for a in old.get("active") or []):
            kind = "Complete" if succeeded(j) else "Failed"
            ctx.event(cj, "SawCompletedJob", f"Saw completed job: {name_of(j)}, condition: "
                      f"{kind}", COMPONENT)
    since = parse_epoch(old.get("lastScheduleTime")) or \
        parse_epoch(meta_of(cj).get("creationTimestamp")) or now
    latest, upcoming = _latest_due(schedule, since, now, tz)
    suspended = spec.get("suspend") is True
    if latest is not None and not suspended:
        deadline = spec.get("startingDeadlineSeconds")
        late = isinstance(deadline, int) and now - latest > deadline
        policy = spec.get("concurrencyPolicy") or "Allow"
        if late:
            ctx.event(cj, "MissSchedule", "Missed scheduled time to start a job: "
                      f"{format_epoch(latest)}", COMPONENT, "Warning")
            status["lastScheduleTime"] = format_epoch(latest)
        elif policy == "Forbid" and running:
            pass  # tried again at the next schedule; lastScheduleTime stays
        else:
            if policy == "Replace":
                for j in running:
                    ctx.delete_object(R.JOBS.key, namespace_of(j), name_of(j), uid=uid_of(j))
                    ctx.event(cj, "SuccessfulDelete", f"Deleted job {name_of(j)}", COMPONENT)
                running = []
            job = _start(ctx, cj, latest, tz)
            if job is not None:
                running.append(job)
            status["lastScheduleTime"] = format_epoch(latest)
    _trim_history(ctx, cj, [j for j in jobs if finished_at(j) is not None])
    active = [_ref(j) for j in running if finished_at(j) is None]
    if active:
        status["active"] = active
    else:
        status.pop("active", None)
    done = [t for j in jobs if succeeded(j)
            and (t := parse_epoch(status_of(j).get("completionTime"))) is not None]
    if done:
        status["lastSuccessfulTime"] = format_epoch(max(done))
    if status != old:
        def put(o: Obj) -> None:
            o["status"] = status
        ctx.mutate_object(R.CRONJOBS.key, namespace_of(cj), name_of(cj), put, manager=KCM,
                          subresource="status")
    return None if suspended else upcoming


def _start(ctx: SimulationContext, cj: Obj, at: float, tz: tzinfo) -> Obj | None:
    """Create the Job of the schedule at ``at`` (None if it exists already)."""
    template = spec_of(cj).get("jobTemplate") or {}
    tmeta = meta_of(template) if isinstance(template, dict) else {}
    name = f"{name_of(cj)}-{int(at // 60)}"
    if ctx.store.try_get(R.JOBS.key, namespace_of(cj), name) is not None:
        return None
    annotations = dict(tmeta.get("annotations") or {})
    annotations[SCHEDULED_AT] = datetime.fromtimestamp(at, tz).isoformat().replace("+00:00",
                                                                                   "Z")
    job: Obj = {"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": name, "namespace": namespace_of(cj),
                             "labels": dict(tmeta.get("labels") or {}),
                             "annotations": annotations,
                             "ownerReferences": [{
                                 "apiVersion": "batch/v1", "kind": "CronJob",
                                 "name": name_of(cj), "uid": uid_of(cj), "controller": True,
                                 "blockOwnerDeletion": True}]},
                "spec": copy.deepcopy(spec_of(template) if isinstance(template, dict) else {})}
    if not job["metadata"]["labels"]:
        del job["metadata"]["labels"]
    JobStrategy(R.JOBS).prepare_create(job)  # defaults and the generated selector
    created = ctx.create_object(R.JOBS.key, job, manager=KCM)
    ctx.event(cj, "SuccessfulCreate", f"Created job {name}", COMPONENT)
    return created


def _trim_history(ctx: SimulationContext, cj: Obj, finished: list[Obj]) -> None:
    spec = spec_of(cj)
    for ok, limit_key, default in ((True, "successfulJobsHistoryLimit", 3),
                                   (False, "failedJobsHistoryLimit", 1)):
        limit = spec.get(limit_key)
        limit = limit if isinstance(limit, int) and limit >= 0 else default
        mine = sorted((j for j in finished if succeeded(j) == ok and not is_deleting(j)),
                      key=lambda j: (finished_at(j) or 0.0, name_of(j)))
        for j in mine[:max(len(mine) - limit, 0)]:
            ctx.delete_object(R.JOBS.key, namespace_of(j), name_of(j), uid=uid_of(j))
            ctx.event(cj, "SuccessfulDelete", f"Deleted job {name_of(j)}", COMPONENT)
