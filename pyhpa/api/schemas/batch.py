"""Schemas of batch/v1 Job and CronJob (k8s.io/api batch/v1 types.go).

Why: application manifests carry migrations and periodic tasks; the embedded cluster runs them
as simulated pods that finish (``pyhpa.cluster.controllers.job``, ``.cronjob``).
"""

from __future__ import annotations

from pyhpa.api.schemas.build import (
    CORE_V1, Schema, atomic_list, boolean, definition, int32, int64, keyed_list,
    label_selector, object_meta, opaque, string, struct, time, top_level)
from pyhpa.api.schemas.core_pod import POD_TEMPLATE_SPEC

B = "io.k8s.api.batch.v1."


def _job_spec() -> Schema:
    return definition(
        "What a Job runs and how many of its pods must succeed.",
        {"parallelism": int32("The most pods running at once (default 1)."),
         "completions": int32("Successful pods needed to complete the Job (default 1 when "
                              "parallelism is unset too)."),
         "activeDeadlineSeconds": int64("Seconds from the Job's start after which it fails "
                                        "(reason DeadlineExceeded)."),
         "podFailurePolicy": opaque("How pod failures count towards backoffLimit."),
         "successPolicy": opaque("When an Indexed Job is declared succeeded."),
         "backoffLimit": int32("Retries (failed pods) before the Job fails (default 6)."),
         "backoffLimitPerIndex": int32("Retries per index of an Indexed Job."),
         "maxFailedIndexes": int32("Failed indexes before an Indexed Job fails."),
         "selector": label_selector("Pods of the Job; generated from its uid unless "
                                    "manualSelector."),
         "manualSelector": boolean("Whether the selector is set by the user."),
         "template": struct(POD_TEMPLATE_SPEC, "The pods the Job runs (restartPolicy Never "
                            "or OnFailure).", embedded=True),
         "ttlSecondsAfterFinished": int32("Seconds after the Job finishes before it is "
                                          "deleted (with its pods)."),
         "completionMode": string("NonIndexed (default) or Indexed."),
         "suspend": boolean("When true, no pods run (running ones are deleted)."),
         "podReplacementPolicy": string("When a replacement pod is made: TerminatingOrFailed "
                                        "or Failed."),
         "managedBy": string("The controller that reconciles the Job.")},
        required=("template",))


def _job_status() -> Schema:
    return definition(
        "Observed state of a Job.",
        {"conditions": keyed_list("Conditions (SuccessCriteriaMet, Complete, FailureTarget, "
                                  "Failed, Suspended).", B + "JobCondition", ("type",)),
         "startTime": time("When the Job controller started the Job."),
         "completionTime": time("When the Job completed (only when Complete)."),
         "active": int32("Pods pending or running."),
         "succeeded": int32("Pods that succeeded."),
         "failed": int32("Pods that failed."),
         "terminating": int32("Pods terminating."),
         "ready": int32("Pods ready."),
         "completedIndexes": string("Completed indexes of an Indexed Job."),
         "failedIndexes": string("Failed indexes of an Indexed Job."),
         "uncountedTerminatedPods": opaque("Finished pods not counted yet.")})


def definitions() -> dict[str, Schema]:
    return {
        B + "Job": top_level(
            "A task run to completion by one or more pods.", "batch", "v1", "Job",
            {"spec": struct(B + "JobSpec", "Desired behaviour of the Job.", embedded=True),
             "status": struct(B + "JobStatus", "Observed state. Read-only.", embedded=True)}),
        B + "JobSpec": _job_spec(),
        B + "JobStatus": _job_status(),
        B + "JobCondition": definition(
            "One condition of a Job.",
            {"type": string("SuccessCriteriaMet, Complete, FailureTarget, Failed or "
                            "Suspended."),
             "status": string("True, False or Unknown."),
             "lastProbeTime": time("Last time the condition was checked."),
             "lastTransitionTime": time("When status last changed."),
             "reason": string("Machine-readable reason of the last transition."),
             "message": string("Human-readable detail.")},
            required=("type", "status")),
        B + "CronJob": top_level(
            "Runs a Job on a schedule.", "batch", "v1", "CronJob",
            {"spec": struct(B + "CronJobSpec", "Schedule and Job template.", embedded=True),
             "status": struct(B + "CronJobStatus", "Observed state. Read-only.",
                              embedded=True)}),
        B + "CronJobSpec": definition(
            "When and what a CronJob runs.",
            {"schedule": string("Cron schedule (minute hour day-of-month month day-of-week, "
                                "or @hourly, @daily, @every 5m...)."),
             "timeZone": string("Time zone of the schedule (e.g. Europe/Paris); the "
                                "cluster's (UTC) when unset."),
             "startingDeadlineSeconds": int64("Seconds after a missed schedule it may still "
                                              "start."),
             "concurrencyPolicy": string("Allow (default), Forbid or Replace.",
                                         enum=("Allow", "Forbid", "Replace")),
             "suspend": boolean("When true, no new Jobs are started (default false)."),
             "jobTemplate": struct(B + "JobTemplateSpec", "The Jobs it starts.",
                                   embedded=True),
             "successfulJobsHistoryLimit": int32("Finished successful Jobs kept (default 3)."),
             "failedJobsHistoryLimit": int32("Failed Jobs kept (default 1).")},
            required=("schedule", "jobTemplate")),
        B + "JobTemplateSpec": definition(
            "The Jobs a CronJob starts.",
            {"metadata": object_meta(), "spec": struct(B + "JobSpec", "The Jobs' spec.",
                                                       embedded=True)}),
        B + "CronJobStatus": definition(
            "Observed state of a CronJob.",
            {"active": atomic_list("Jobs running now.", CORE_V1 + "ObjectReference"),
             "lastScheduleTime": time("When a Job was last started on schedule."),
             "lastSuccessfulTime": time("When a Job last completed.")}),
    }
