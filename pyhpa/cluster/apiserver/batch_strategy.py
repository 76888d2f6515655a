"""Write rules of Jobs and CronJobs: upstream's defaults (pkg/apis/batch/v1/defaults.go), the
Job's generated selector (pkg/registry/batch/job/strategy.go ``generateSelector``) and the
checks of pkg/apis/batch/validation, with their messages.

Why: a Job whose pods would restart forever (``restartPolicy: Always``), or a CronJob whose
schedule no controller can read, is refused by a real cluster; the selector and labels a Job
gets are what ``kubectl get pods -l job-name=x`` and an HPA's selector see.
"""

from __future__ import annotations


import copy
import uuid
from typing import Any

from pyhpa.api import cron
from pyhpa.api.field_errors import cause
from pyhpa.cluster.apiserver.strategies import Strategy
from pyhpa.cluster.apiserver.workload_defaults import default_pod_spec
from pyhpa.api.workload_validation import (go_string_map, validate_label_selector,
                                                         validate_pod_spec)

Obj = dict[str, Any]
Cause = dict[str, str]
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"
_NONNEGATIVE = "must be greater than or equal to 0"


def _dict(o: Any, key: str) -> Obj:
    v = o.get(key) if isinstance(o, dict) else None
    return v if isinstance(v, dict) else {}


def default_job_spec(spec: Obj, minor: int | None = None) -> None:
    """SetDefaults_Job's spec part (also a CronJob's jobTemplate), as release 1.``minor`` (the
    newest when None) defaults it: ``podReplacementPolicy`` from 1.29 (JobPodReplacementPolicy
    beta)."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    if minor is None or minor >= 29:
        spec.setdefault("podReplacementPolicy",
                        "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")
    template = spec.get("template")
    if isinstance(template, dict):
        default_pod_spec(template.get("spec"))


def _job_spec_causes(spec: Obj, at: str) -> list[Cause]:
    out: list[Cause] = []
    for name in ("parallelism", "completions", "backoffLimit", "activeDeadlineSeconds",
                 "ttlSecondsAfterFinished"):
        v = spec.get(name)
        if isinstance(v, int) and not isinstance(v, bool) and v < 0:
            out.append(cause(f"{at}.{name}", "Invalid", v, _NONNEGATIVE))
    template = _dict(spec, "template")
    tspec = _dict(template, "spec")
    policy = tspec.get("restartPolicy")
    if policy not in ("OnFailure", "Never"):
        out.append({"reason": "FieldValueNotSupported",
                    "field": f"{at}.template.spec.restartPolicy",
                    "message": f'Unsupported value: "{policy or ""}": supported values: '
                               '"OnFailure", "Never"'})
    out += validate_pod_spec(tspec, f"{at}.template.spec")
    return out


class JobStrategy(Strategy):
    """Defaults, the generated selector and labels, and the immutable template."""

    profile: Any = None  # the server's VersionProfile (set by kind_strategies)

    def _default(self, obj: Obj) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        emulated = self.profile is not None and getattr(self.profile, "emulated", False)
        default_job_spec(spec, self.profile.minor if emulated else None)
        labels = _dict(_dict(spec, "template"), "metadata").get("labels")
        meta = obj.setdefault("metadata", {})
        if isinstance(labels, dict) and labels and not meta.get("labels"):
            meta["labels"] = dict(labels)

    def prepare_create(self, obj: Obj) -> None:
        super().prepare_create(obj)
        spec = obj.get("spec")
        if not isinstance(spec, dict) or spec.get("manualSelector"):
            return
        meta = obj.setdefault("metadata", {})
        uid = meta.setdefault("uid", str(uuid.uuid4()))
        template = spec.setdefault("template", {})
        if not isinstance(template, dict):
            return
        tmeta = template.setdefault("metadata", {})
        labels = tmeta.setdefault("labels", {})
        if isinstance(labels, dict):
            name = meta.get("name") or ""
            labels.update({CONTROLLER_UID: uid, JOB_NAME: name, "controller-uid": uid,
                           "job-name": name})
        spec["selector"] = {"matchLabels": {CONTROLLER_UID: uid}}
        if not meta.get("labels") and isinstance(labels, dict):
            meta["labels"] = dict(labels)  # SetDefaults_Job, as the stored Job is read back

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = super().validate(obj, old)
        meta = _dict(obj, "metadata")
        name = meta.get("name") or ""
        if len(name) > 63:
            causes.append(cause("metadata.name", "Invalid", name,
                                "must be no more than 63 characters"))
        spec = _dict(obj, "spec")
        causes += _job_spec_causes(spec, "spec")
        selector = _dict(spec, "selector")
        if not selector:
            causes.append(cause("spec.selector", "Required"))
        else:
            causes += validate_label_selector(selector, "spec.selector")
            labels = _dict(_dict(spec, "template"), "metadata").get("labels") or {}
            want = selector.get("matchLabels") or {}
            if any(labels.get(k) != v for k, v in want.items()):
                causes.append(cause("spec.template.metadata.labels", "Invalid",
                                    shown=go_string_map(labels),
                                    detail="`selector` does not match template `labels`"))
        if old is not None:
            old_spec = _dict(old, "spec")
            shown = {"template": "core.PodTemplateSpec{...}",
                     "selector": "&v1.LabelSelector{...}"}
            for field in ("selector", "completions", "completionMode", "template"):
                if field == "template" and old_spec.get("suspend"):
                    continue  # a suspended Job's template may change
                if spec.get(field) != old_spec.get(field):
                    causes.append(cause(f"spec.{field}", "Invalid", spec.get(field),
                                        "field is immutable", shown=shown.get(field)))
        return causes


class CronJobStrategy(Strategy):
    """Defaults and the schedule, time zone and template checks."""

    profile: Any = None  # the server's VersionProfile (set by kind_strategies)

    def _default(self, obj: Obj) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        spec.setdefault("concurrencyPolicy", "Allow")
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
        jspec = _dict(spec, "jobTemplate").get("spec")
        if isinstance(jspec, dict):
            template = jspec.get("template")
            if isinstance(template, dict):
                default_pod_spec(template.get("spec"))

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = super().validate(obj, old)
        name = _dict(obj, "metadata").get("name") or ""
        if len(name) > 52:
            causes.append(cause("metadata.name", "Invalid", name,
                                "must be no more than 52 characters"))
        spec = _dict(obj, "spec")
        schedule = spec.get("schedule")
        if not schedule:
            causes.append(cause("spec.schedule", "Required"))
        elif "TZ=" in schedule:
            causes.append(cause("spec.schedule", "Invalid", schedule,
                                "cannot use TZ or CRON_TZ in schedule, use timeZone field "
                                "instead"))
        else:
            try:
                cron.parse(schedule)
            except cron.CronError as exc:
                causes.append(cause("spec.schedule", "Invalid", schedule, str(exc)))
        tz = spec.get("timeZone")
        if tz is not None and zone_error(tz):
            causes.append(cause("spec.timeZone", "Invalid", tz, zone_error(tz) or ""))
        policy = spec.get("concurrencyPolicy")
        if policy not in ("Allow", "Forbid", "Replace"):
            causes.append({"reason": "FieldValueNotSupported", "field": "spec.concurrencyPolicy",
                           "message": f'Unsupported value: "{policy or ""}": supported values: '
                                      '"Allow", "Forbid", "Replace"'})
        for field in ("startingDeadlineSeconds", "successfulJobsHistoryLimit",
                      "failedJobsHistoryLimit"):
            v = spec.get(field)
            if isinstance(v, int) and not isinstance(v, bool) and v < 0:
                causes.append(cause(f"spec.{field}", "Invalid", v, _NONNEGATIVE))
        jspec = copy.deepcopy(_dict(_dict(spec, "jobTemplate"), "spec"))
        causes += _job_spec_causes(jspec, "spec.jobTemplate.spec")
        return causes


def zone_error(tz: Any) -> str | None:
    """Why ``tz`` is not a time zone name Go's time.LoadLocation reads, or None."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if not isinstance(tz, str) or not tz or tz == "Local":
        return "unknown time zone " + str(tz)
    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        return f"unknown time zone {tz}"
    return None
