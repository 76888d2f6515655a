"""Acceptance cases for KEP-5679's external-metric fallback (docs/beyond-upstream.md).

Same rules as `corpus.py`: numbers and texts are written by hand from the KEP facts and the
controller spec; `casekit` only writes the echo. The KEP names no condition reasons and gives an
event example only: those texts are pyhpa's (pyhpa/controller/fallback.py, docs/beyond-upstream.md).

Every case: a Deployment `web` with one CPU metric (target 50 %) and the External metric
`queue_depth` (AverageValue 30, fallback 6 replicas after the default 180 s). The snapshot has no
ExternalMetricValueList unless said, so `queue_depth` fails to fetch.

Usage: python tests/offline/corpus_fallback.py   (rewrites the kep5679 case directories)
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from casekit import (  # noqa: E402
    CPU_UTIL, EMPTY_STATUS, NOW, able, active, case, cond, cpu_pods, cpu_util, deploy, ev, ext_avg, ext_item,
    external_list, hpa, inactive, limited, out_state, rescale_ev, rescaled, s_ext, s_util, state, status, stz, t,
)

QUEUE = "external metric queue_depth(nil)"


def fallback_used(replicas: int) -> str:
    """What the rescale reason and ScalingActive say while queue_depth's fallback decides (pyhpa's text)."""
    return f"external metric queue_depth has failed for 3m0s: fallback {replicas} replicas"


def fb_active(replicas: int, ltt=NOW) -> dict:
    return cond("ScalingActive", "True", "ValidMetricFound",
                f"the HPA is using a fallback for its replica count: {fallback_used(replicas)}", ltt)

NO_SERIES = "unable to get external metric default/queue_depth/nil: no metrics returned from external metrics API"
FAILED_GET = ev("Warning", "FailedGetExternalMetric", NO_SERIES)
INVALID_1_OF_2 = ("invalid metrics (1 invalid out of 2), first error is: failed to get queue_depth external metric "
                  "value: failed to get queue_depth external metric: " + NO_SERIES)
ACTIVATED = ev("Normal", "ExternalMetricFallbackActivated",
               "external metric queue_depth has failed for 3m0s: using its fallback of 6 replicas")


def queue(fallback=None):
    m = ext_avg("queue_depth", "30")
    m["external"]["fallback"] = {"replicas": 6} if fallback is None else fallback
    return m


def defaulted(max_r=10, fallback=None):
    """The echoed spec: the fallback gets failureDurationSeconds 180 and strategy Static."""
    fb = {"replicas": 6} if fallback is None else dict(fallback)
    fb.setdefault("failureDurationSeconds", 180)
    fb.setdefault("strategy", "Static")
    q = queue(fb)
    return {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
            "minReplicas": 1, "maxReplicas": max_r, "metrics": [cpu_util(50), q]}


def s_queue(fallback_status, first=None, avg=None):
    s = s_ext("queue_depth", avg=avg) if avg is not None else {"type": "External", "external": {
        "metric": {"name": "queue_depth"}, "current": {}}}
    s["external"]["fallbackStatus"] = fallback_status
    if first is not None:
        s["external"]["firstFailureTime"] = first
    return s


def fb_cond(active_, ltt=NOW):
    if active_:
        return cond("ExternalMetricFallbackActive", "True", "FallbackActive",
                    "the HPA is using the fallback replicas of external metric(s): queue_depth", ltt)
    return cond("ExternalMetricFallbackActive", "False", "NoFallbackActive", "no external metric is in fallback", ltt)


EARLIER = t(-60)


def before(current, desired, metrics, conds):
    """The status the previous pass left (its condition times one minute ago)."""
    return status(current, desired, metrics, conds)


def main() -> None:
    steady4 = [deploy(replicas=4), *cpu_pods(["500m"] * 4)]  # CPU 50 % of 50 %: ratio 1, proposal 4
    idle4 = [deploy(replicas=4), *cpu_pods(["100m"] * 4)]  # CPU 10 %: ratio 0.2, proposal ceil(0.8) = 1
    prior_conds = [able("ReadyForNewScale", EARLIER), active(CPU_UTIL, EARLIER), limited("DesiredWithinRange", EARLIER),
                   fb_cond(False, EARLIER)]

    case("kep5679-first-failure-starts-the-clock", about="""
No status yet. queue_depth fails: its status entry gets firstFailureTime = now and fallbackStatus Normal; it
counts as failed as without a fallback (Warning FailedGetExternalMetric). CPU proposes 4 = current, not below
current, so the failed metric does not block: held at 4 (ReadyForNewScale), ScalingActive from the CPU metric,
ExternalMetricFallbackActive False.
""", snapshot=[*steady4, hpa(metrics=[cpu_util(50), queue()])],
        spec={"web": defaulted()},
        hpas={"web": status(4, 4, [s_util(50, "500m"), s_queue("Normal", NOW)],
                            [able("ReadyForNewScale"), active(CPU_UTIL), fb_cond(False), limited("DesiredWithinRange")])},
        events=[FAILED_GET], states=[out_state("web", [(4, NOW), (4, NOW)])])

    case("kep5679-one-second-short-blocks-scale-down", about="""
firstFailureTime is 179 s ago (kept, not reset): 179 < 180, so no fallback yet. CPU alone proposes 1 < current 4,
and a failed metric blocks scale-down (upstream): the pass stops with ScalingActive False/FailedGetExternalMetric,
desiredReplicas stays 4, no rescale; the status keeps firstFailureTime -179s.
""", snapshot=[*idle4, hpa(metrics=[cpu_util(50), queue()], status=before(
            4, 4, [s_util(50, "500m"), s_queue("Normal", t(-179))], prior_conds)),
            state("web", [(4, t(-60))])],
        spec={"web": defaulted()},
        hpas={"web": status(4, 4, [s_util(10, "100m"), s_queue("Normal", t(-179))],
                            [able("SucceededGetScale", EARLIER), inactive("FailedGetExternalMetric", NO_SERIES),
                             limited("DesiredWithinRange", EARLIER), fb_cond(False, EARLIER)])},
        events=[FAILED_GET, ev("Warning", "FailedComputeMetricsReplicas", INVALID_1_OF_2)],
        states=[out_state("web", [(4, t(-60))])])

    case("kep5679-fallback-after-the-duration", about="""
firstFailureTime is exactly 180 s ago: 180 >= 180, so queue_depth goes to Fallback and proposes exactly 6. It is a
valid proposal: max(CPU 4, 6) = 6 > 4, scale up (legacy limit max(2x4, 4) = 8 does not bind). Events: the
activation (Normal ExternalMetricFallbackActivated, duration in Go format), then SuccessfulRescale; no
FailedGetExternalMetric (the metric is answered by its fallback). ExternalMetricFallbackActive turns True.
""", snapshot=[*steady4, hpa(metrics=[cpu_util(50), queue()], status=before(
            4, 4, [s_util(50, "500m"), s_queue("Normal", t(-180))], prior_conds)),
            state("web", [(4, t(-60))])],
        spec={"web": defaulted()},
        hpas={"web": status(4, 6, [s_util(50, "500m"), s_queue("Fallback", t(-180))],
                            [rescaled(6, EARLIER), fb_active(6, EARLIER), limited("DesiredWithinRange", EARLIER), fb_cond(True),
                             stz(False)],
                            NOW)},
        scaled={"web": 6},
        events=[ACTIVATED, rescale_ev(6, fallback_used(6))],
        states=[out_state("web", [(4, t(-60)), (6, NOW)])])

    steady6 = [deploy(replicas=6), *cpu_pods(["250m"] * 6)]  # CPU 25 %: ratio 0.5, proposal 3
    in_fallback = [rescaled(6, EARLIER), active(QUEUE, EARLIER), limited("DesiredWithinRange", EARLIER),
                   fb_cond(True, EARLIER)]
    case("kep5679-fallback-continues-without-a-new-event", about="""
Already in Fallback since an earlier pass (firstFailureTime -600s kept): max(CPU 3, 6) = 6 = current, held
(ReadyForNewScale). No second ExternalMetricFallbackActivated; the condition stays True with its old time.
""", snapshot=[*steady6, hpa(metrics=[cpu_util(50), queue()], status=before(
            6, 6, [s_util(25, "250m"), s_queue("Fallback", t(-600))], in_fallback)),
            state("web", [(6, t(-60))])],
        spec={"web": defaulted()},
        hpas={"web": status(6, 6, [s_util(25, "250m"), s_queue("Fallback", t(-600))],
                            [able("ReadyForNewScale", EARLIER), fb_active(6, EARLIER), limited("DesiredWithinRange", EARLIER),
                             fb_cond(True, EARLIER)])},
        states=[out_state("web", [(6, t(-60)), (6, NOW)])])

    case("kep5679-success-clears-the-failure", about="""
queue_depth answers again (120 over status.replicas 6: 20 per pod vs 30, ratio 0.667, ceil(4.0) = 4): the entry
is Normal with no firstFailureTime; ExternalMetricFallbackActive turns False now. max(CPU 3, 4) = 4 < 6, but the
5 min window holds 6 (6@-60s): ScaleDownStabilized, no rescale.
""", snapshot=[*steady6, external_list([ext_item("queue_depth", "120")]),
               hpa(metrics=[cpu_util(50), queue()], status=before(
                   6, 6, [s_util(25, "250m"), s_queue("Fallback", t(-600))], in_fallback)),
               state("web", [(6, t(-60))])],
        spec={"web": defaulted()},
        hpas={"web": status(6, 6, [s_util(25, "250m"), s_queue("Normal", avg="20")],
                            [able("ScaleDownStabilized", EARLIER), active(QUEUE, EARLIER), limited("DesiredWithinRange", EARLIER),
                             fb_cond(False)])},
        states=[out_state("web", [(6, t(-60)), (4, NOW)])])

    case("kep5679-fallback-lets-scale-down", about="""
In Fallback with replicas 2 (firstFailureTime -600s): unlike a plain failed metric it does not block scale-down.
max(CPU 1, 2) = 2 < 4; the only recommendation (4@-301s) is outside the 5 min window: 4 -> 2, reason "All metrics
below target".
""", snapshot=[*idle4, hpa(metrics=[cpu_util(50), queue({"replicas": 2})], status=before(
            4, 4, [s_util(50, "500m"), s_queue("Fallback", t(-600))], in_fallback)),
            state("web", [(4, t(-301))])],
        spec={"web": defaulted(fallback={"replicas": 2})},
        hpas={"web": status(4, 2, [s_util(10, "100m"), s_queue("Fallback", t(-600))],
                            [rescaled(2, EARLIER), fb_active(2, EARLIER), limited("DesiredWithinRange", EARLIER),
                             fb_cond(True, EARLIER), stz(False)], NOW)},
        scaled={"web": 2}, events=[rescale_ev(2, "All metrics below target")],
        states=[out_state("web", [(2, NOW)])])

    case("kep5679-fallback-capped-by-max-replicas", about="""
Fallback replicas 20 with maxReplicas 10: the proposal joins as usual and the limits apply after it. 20 -> the
legacy scale-up limit max(2x4, 4) = 8 (ScaleUpLimit), then within 1..10: 4 -> 8.
""", snapshot=[*steady4, hpa(metrics=[cpu_util(50), queue({"replicas": 20})], status=before(
            4, 4, [s_util(50, "500m"), s_queue("Normal", t(-200))], prior_conds)),
            state("web", [(4, t(-60))])],
        spec={"web": defaulted(fallback={"replicas": 20})},
        hpas={"web": status(4, 8, [s_util(50, "500m"), s_queue("Fallback", t(-200))],
                            [rescaled(8, EARLIER), fb_active(20, EARLIER), limited("ScaleUpLimit"), fb_cond(True), stz(False)],
                            NOW)},
        scaled={"web": 8},
        events=[ev("Normal", "ExternalMetricFallbackActivated",
                   "external metric queue_depth has failed for 3m0s: using its fallback of 20 replicas"),
                rescale_ev(8, fallback_used(20))],
        states=[out_state("web", [(4, t(-60)), (20, NOW)])])  # legacy memory keeps the proposal

    case("kep5679-gate-off-ignores-the-fallback", about="""
--feature-gates HPAExternalMetricFallback=false: the API drops fallback from the (new) object, so queue_depth
fails as it always did (the placeholder status entry, no firstFailureTime) and the fallback condition is removed.
CPU proposes 4 = current: held.
""", snapshot=[*steady4, hpa(metrics=[cpu_util(50), queue()], status=before(
            4, 4, [s_util(50, "500m"), s_queue("Normal", t(-600))], prior_conds)),
            state("web", [(4, t(-60))])],
        args="--feature-gates HPAExternalMetricFallback=false",
        spec={"web": {**defaulted(), "metrics": [cpu_util(50), ext_avg("queue_depth", "30")]}},
        hpas={"web": status(4, 4, [s_util(50, "500m"), EMPTY_STATUS],
                            [able("ReadyForNewScale", EARLIER), active(CPU_UTIL, EARLIER), limited("DesiredWithinRange", EARLIER)])},
        events=[FAILED_GET], states=[out_state("web", [(4, t(-60)), (4, NOW)])])

    for name, fallback, message in (
            ("replicas-zero", {"replicas": 0}, "spec.metrics[1].external.fallback.replicas: Invalid value: 0: must be greater than 0"),
            ("duration-below-180", {"replicas": 3, "failureDurationSeconds": 179},
             "spec.metrics[1].external.fallback.failureDurationSeconds: Invalid value: 179: must be greater than or equal to 180")):
        case(f"err-kep5679-{name}", about=f"external.fallback {fallback} is invalid.",
             snapshot=[deploy(), hpa(metrics=[cpu_util(50), queue(fallback)])],
             error=f"document 1|{message}")


if __name__ == "__main__":
    main()
