"""Jobs and CronJobs: write rules (:mod:`pyhpa.cluster.apiserver.batch_strategy`), cron
schedules (:mod:`pyhpa.api.cron`) and the simulated Job and CronJob controllers
(:mod:`pyhpa.cluster.controllers.job`, ``.cronjob``) driven with an injected clock."""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from pyhpa.api import cron
from pyhpa.api.timefmt import format_epoch
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.batch_strategy import CronJobStrategy, JobStrategy
from tests.cluster.simulated import simulated

NS = "default"
START = 1_800_000_000.0  # 2027-01-15T08:00:00Z, on a minute


@pytest.fixture
def env(tmp_path):
    with simulated(tmp_path, START) as c:
        yield c.store, c.sim, c.at


def job(name: str, annotations: dict | None = None, **spec) -> dict:
    obj = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": name, "namespace": NS, "annotations": annotations or {}},
           "spec": {"template": {"metadata": {"labels": {"app": name}},
                                 "spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "c", "image": "busybox"}]}},
                    **spec}}
    JobStrategy(R.JOBS).prepare_create(obj)
    return obj


def pods_of(store, name: str) -> list[dict]:
    return store.list(R.PODS.key, NS, label_selector=f"job-name={name}").items


def conditions(obj: dict) -> list[tuple[str, str]]:
    return [(c["type"], c.get("reason", "")) for c in obj["status"].get("conditions", [])]


def test_schedules_read_as_robfig_cron_reads_them():
    t = datetime(2027, 1, 15, 8, 0, 30, tzinfo=timezone.utc)
    assert cron.parse("*/15 * * * *").next_after(t) == datetime(2027, 1, 15, 8, 15,
                                                                tzinfo=timezone.utc)
    assert cron.parse("@hourly").next_after(t).hour == 9
    assert cron.parse("0 9 * * MON-FRI").next_after(t) == datetime(2027, 1, 15, 9, 0,
                                                                   tzinfo=timezone.utc)
    # Friday 09:00 in Paris is 08:00 UTC, already past: the next weekday is Monday
    assert cron.parse("0 9 * * MON-FRI").next_after(t, ZoneInfo("Europe/Paris")) == \
        datetime(2027, 1, 18, 8, 0, tzinfo=timezone.utc)
    assert cron.parse("@every 90s").next_after(t) == datetime(2027, 1, 15, 8, 2,
                                                              tzinfo=timezone.utc)
    for bad, message in (("* * *", "expected exactly 5 fields, found 3: * * *"),
                         ("0 24 * * *", "end of range (24) above maximum (23): 24"),
                         ("@fortnightly", "unrecognized descriptor: @fortnightly")):
        with pytest.raises(cron.CronError, match=message.replace("*", r"\*").replace(
                "(", r"\(").replace(")", r"\)")):
            cron.parse(bad)


def _messages(causes):
    return [f"{c['field']}: {c['message']}" for c in causes]


def test_job_and_cronjob_validation_use_upstream_messages():
    j = job("x")
    j["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    assert _messages(JobStrategy(R.JOBS).validate(j, None)) == [
        'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: '
        '"OnFailure", "Never"']
    assert j["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"] == \
        j["metadata"]["uid"]
    assert j["spec"]["completions"] == 1 and j["spec"]["backoffLimit"] == 6
    cj = {"metadata": {"name": "c" * 53, "namespace": NS},
          "spec": {"schedule": "61 * * * *", "timeZone": "Mars/Olympus",
                   "jobTemplate": {"spec": {"template": {"spec": {
                       "restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}}}}
    s = CronJobStrategy(R.CRONJOBS)
    s.prepare_create(cj)
    assert cj["spec"]["concurrencyPolicy"] == "Allow" and \
        cj["spec"]["successfulJobsHistoryLimit"] == 3
    assert _messages(s.validate(cj, None)) == [
        f'metadata.name: Invalid value: "{"c" * 53}": must be no more than 52 characters',
        'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61',
        'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus']


def test_a_job_runs_its_completions_parallelism_at_a_time_then_completes(env):
    store, sim, at = env
    store.create(R.JOBS.key, job("batch", {"sim.pyhpa.io/run-duration": "20s"},
                                 completions=3, parallelism=2))
    at(0)
    assert len(pods_of(store, "batch")) == 2
    at(5)
    st = store.get(R.JOBS.key, NS, "batch")["status"]
    assert st["active"] == 2 and st["ready"] == 2 and "succeeded" not in st
    at(22)  # the first two ran their 20 s (from Running at 1 s) and succeeded
    pods = pods_of(store, "batch")
    done = [p for p in pods if p["status"]["phase"] == "Succeeded"]
    assert len(done) == 2 and len(pods) == 3
    term = done[0]["status"]["containerStatuses"][0]["state"]["terminated"]
    assert term["exitCode"] == 0 and term["reason"] == "Completed"
    # a finished pod runs nothing: no usage record (no metrics), its node room freed
    assert all(sim.record(NS, p["metadata"]["name"]) is None for p in done)
    at(45)
    j = store.get(R.JOBS.key, NS, "batch")
    assert j["status"]["succeeded"] == 3 and "active" not in j["status"]
    assert conditions(j) == [("SuccessCriteriaMet", "CompletionsReached"),
                             ("Complete", "CompletionsReached")]
    assert j["status"]["completionTime"]
    reasons = [e["reason"] for e in store.list(R.EVENTS.key, NS).items
               if e["involvedObject"]["name"] == "batch"]
    assert reasons.count("SuccessfulCreate") == 3 and "Completed" in reasons


def test_deadline_fails_the_job_and_ttl_deletes_it_with_its_pods(env):
    store, sim, at = env
    store.create(R.JOBS.key, job("slow", {"sim.pyhpa.io/run-duration": "10m"},
                                 activeDeadlineSeconds=30, ttlSecondsAfterFinished=60))
    at(0)
    at(10)
    assert len(pods_of(store, "slow")) == 1
    at(31)
    j = store.get(R.JOBS.key, NS, "slow")
    assert conditions(j)[-1] == ("Failed", "DeadlineExceeded")
    assert j["status"]["failed"] == 1
    at(40)
    assert pods_of(store, "slow") == []  # deleted, their termination over
    at(92)  # 60 s after it failed
    assert store.try_get(R.JOBS.key, NS, "slow") is None


def cronjob(name: str, schedule: str, **spec) -> dict:
    obj = {"apiVersion": "batch/v1", "kind": "CronJob",
           "metadata": {"name": name, "namespace": NS,
                        "creationTimestamp": format_epoch(START)},
           "spec": {"schedule": schedule, "jobTemplate": {
               "metadata": {"annotations": {"sim.pyhpa.io/run-duration": "90s"}},
               "spec": {"template": {"spec": {
                   "restartPolicy": "OnFailure",
                   "containers": [{"name": "c", "image": "busybox"}]}}}}, **spec}}
    CronJobStrategy(R.CRONJOBS).prepare_create(obj)
    return obj


def test_a_cronjob_starts_jobs_on_schedule_forbids_overlap_and_keeps_its_history(env):
    store, sim, at = env
    store.create(R.CRONJOBS.key, cronjob("tick", "*/1 * * * *", concurrencyPolicy="Forbid",
                                         successfulJobsHistoryLimit=1))
    at(30)
    assert store.list(R.JOBS.key, NS).items == []
    at(61)
    jobs = store.list(R.JOBS.key, NS).items
    assert [j["metadata"]["name"] for j in jobs] == [f"tick-{int(START // 60) + 1}"]
    assert jobs[0]["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    cj = store.get(R.CRONJOBS.key, NS, "tick")
    assert [a["name"] for a in cj["status"]["active"]] == [jobs[0]["metadata"]["name"]]
    at(121)  # the first still runs (90 s): Forbid skips this schedule
    assert len(store.list(R.JOBS.key, NS).items) == 1
    at(181)  # the first is done: a new one starts
    names = sorted(j["metadata"]["name"] for j in store.list(R.JOBS.key, NS).items)
    assert names == [f"tick-{int(START // 60) + 1}", f"tick-{int(START // 60) + 3}"]
    at(300)  # the second is done too: only one successful Job is kept
    names = [j["metadata"]["name"] for j in store.list(R.JOBS.key, NS).items]
    assert names == [f"tick-{int(START // 60) + 3}", f"tick-{int(START // 60) + 5}"]
    cj = store.get(R.CRONJOBS.key, NS, "tick")
    assert cj["status"]["lastSuccessfulTime"]


def test_a_suspended_cronjob_starts_nothing(env):
    store, sim, at = env
    store.create(R.CRONJOBS.key, cronjob("off", "@every 10s", suspend=True))
    at(60)
    assert store.list(R.JOBS.key, NS).items == []


def test_finished_job_pods_an_hpa_selects_are_missing_metrics_as_upstream_counts_them(env):
    """The pitfall: an HPA whose selector also matches a Job's pods lists them (the HPA lists
    pods by selector, replica_calculator.go groupPods ignores only deleted and Failed pods), but
    metrics-server reports none for a Succeeded pod: it is a *missing* pod, counted at 100% of
    its request on a scale-down and at 0% on a scale-up."""
    from datetime import datetime, timezone

    from pyhpa.api import codec
    from pyhpa.api.types import PodView
    from pyhpa.cluster.controllers.metrics_server import MetricsAPI
    from pyhpa.engine.inputs import PodMetric
    from pyhpa.engine.pods import PodSet, group_pods

    store, sim, at = env
    j = job("web-warmup", {"sim.pyhpa.io/run-duration": "30s"})
    j["spec"]["template"]["metadata"]["labels"]["app"] = "web"
    store.create(R.JOBS.key, j)
    at(0)
    at(20)
    api = MetricsAPI(sim)
    running = [m["metadata"]["name"] for m in api.pod_metrics(NS)]
    assert len(running) == 1  # metrics while it runs: the HPA averages it in
    at(40)
    pods = store.list(R.PODS.key, NS, label_selector="app=web").items
    assert [p["status"]["phase"] for p in pods] == ["Succeeded"]
    assert api.pod_metrics(NS) == []  # metrics-server has nothing for a finished pod
    views = PodSet.of(codec.from_wire(p, PodView) for p in pods)
    now = datetime.fromtimestamp(START + 40, timezone.utc)
    groups = group_pods(views, {}, "cpu", 300.0, 30.0, now)
    assert groups.missing == [pods[0]["metadata"]["name"]] and groups.ignored == []
    later = group_pods(views, {"x": PodMetric(1, now, 15.0)}, "memory", 300.0, 30.0, now)
    assert later.missing == [pods[0]["metadata"]["name"]]


def test_failing_pods_are_retried_with_back_off_until_the_backoff_limit(env):
    store, sim, at = env
    store.create(R.JOBS.key, job("flaky", {"sim.pyhpa.io/run-duration": "5s",
                                           "sim.pyhpa.io/exit-code": "1"}, backoffLimit=1))
    at(0)
    at(7)  # Running at 1 s, failed at 6 s
    pods = pods_of(store, "flaky")
    assert [p["status"]["phase"] for p in pods] == ["Failed"]
    term = pods[0]["status"]["containerStatuses"][0]["state"]["terminated"]
    assert term["exitCode"] == 1 and term["reason"] == "Error"
    assert store.get(R.JOBS.key, NS, "flaky")["status"]["failed"] == 1
    at(12)  # the back-off (10 s after the failure) has not passed: no new pod yet
    assert len(pods_of(store, "flaky")) == 1
    at(17)
    assert len(pods_of(store, "flaky")) == 2
    at(30)  # the second failed too: past backoffLimit 1
    j = store.get(R.JOBS.key, NS, "flaky")
    assert j["status"]["failed"] == 2
    assert conditions(j)[-1] == ("Failed", "BackoffLimitExceeded")
    assert conditions(j)[-2] == ("FailureTarget", "BackoffLimitExceeded")


def test_replace_deletes_the_running_job_and_the_schedule_reads_in_its_time_zone(env):
    store, sim, at = env
    # 09:01 in Paris is 08:01 UTC in January: one minute after START
    store.create(R.CRONJOBS.key, cronjob("paris", "1 9 * * *", timeZone="Europe/Paris",
                                         concurrencyPolicy="Replace"))
    store.create(R.CRONJOBS.key, cronjob("often", "*/1 * * * *", concurrencyPolicy="Replace"))
    at(61)
    paris = [j for j in store.list(R.JOBS.key, NS).items
             if j["metadata"]["name"].startswith("paris-")]
    assert len(paris) == 1
    assert paris[0]["metadata"]["annotations"][
        "batch.kubernetes.io/cronjob-scheduled-timestamp"] == "2027-01-15T09:01:00+01:00"
    first = [j["metadata"]["name"] for j in store.list(R.JOBS.key, NS).items
             if j["metadata"]["name"].startswith("often-")]
    at(121)  # the first still runs (90 s): Replace deletes it and starts the next
    names = [j["metadata"]["name"] for j in store.list(R.JOBS.key, NS).items
             if j["metadata"]["name"].startswith("often-")]
    assert first[0] not in names and names == [f"often-{int(START // 60) + 2}"]
    reasons = [e["reason"] for e in store.list(R.EVENTS.key, NS).items
               if e["involvedObject"]["name"] == "often"]
    assert "SuccessfulDelete" in reasons
