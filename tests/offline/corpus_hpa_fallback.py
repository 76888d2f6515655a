"""Acceptance cases for KEP-5053's whole-HPA fallback and KEP-5679's follow-up `strategy`
(docs/beyond-upstream.md).

Same rules as `corpus.py`: numbers and texts are written by hand from the KEP facts and the
controller (pkg/controller/podautoscaler); `casekit` only writes the echo. The condition texts are
KEP-5053's table; the FallbackThresholdReached event's and the rescale reason's texts are
pyhpa's (the KEP names the event only; pyhpa/controller/hpa_fallback.py, docs/beyond-upstream.md).

KEP-5053 cases: a Deployment `web` scaled on the External metric `queue_depth` (AverageValue 30)
alone, with `behavior: {fallback: {replicas: R}}` (failureThreshold defaults to 3). With a
behavior the controller takes the behavior path: scale-up window 0 s, policies Pods 4 / Percent
100 per 15 s; scale-down window 300 s (the flag), Percent 100 per 15 s. The snapshot has no
ExternalMetricValueList unless said, so `queue_depth` fails and the metrics give no count.

Usage: python tests/offline/corpus_hpa_fallback.py   (rewrites the kep5053 / strategy cases)
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from casekit import (  # noqa: E402
    CPU_UTIL, DEFAULT_DOWN, DEFAULT_UP, EMPTY_STATUS, NOW, able, active, case, cond, cpu_pods, cpu_util, deploy,
    ev, ext_avg, ext_item, external_list, hpa, inactive, limited, out_state, rescale_ev, rescaled, s_ext, s_util,
    state, status, stz, t,
)

EARLIER = t(-60)
QUEUE = "external metric queue_depth(nil)"
NO_SERIES = "unable to get external metric default/queue_depth/nil: no metrics returned from external metrics API"
FAILED_GET = ev("Warning", "FailedGetExternalMetric", NO_SERIES)
FIRST_ERROR = ("failed to get queue_depth external metric value: failed to get queue_depth external metric: "
               + NO_SERIES)
ALL_INVALID = "invalid metrics (1 invalid out of 1), first error is: " + FIRST_ERROR
ONE_OF_TWO = "invalid metrics (1 invalid out of 2), first error is: " + FIRST_ERROR
FAILED_COMPUTE = ev("Warning", "FailedComputeMetricsReplicas", ALL_INVALID)
SUCCEEDED_MSG = "the HPA controller was able to compute the desired replicas"


def not_reached(count, ltt=NOW, threshold=3):
    return cond("FallbackActive", "False", "FallbackThresholdNotReached",
                f"Threshold is set to {threshold} failures. Current failure count is {count}", ltt)


def reached(error=ALL_INVALID, ltt=NOW):
    return cond("FallbackActive", "True", "FallbackThresholdReached", error, ltt)


def succeeded(ltt=NOW):
    return cond("FallbackActive", "False", "SucceededToComputeDesiredReplicas", SUCCEEDED_MSG, ltt)


def failing(ltt=EARLIER):
    return inactive("FailedGetExternalMetric", NO_SERIES, ltt)


def threshold_event(count, replicas, threshold=3, error=ALL_INVALID):
    return ev("Warning", "FallbackThresholdReached",
              f"metrics failed in {count} syncs in a row (failureThreshold {threshold}): "
              f"using the fallback of {replicas} replicas: {error}")


def fallback_reason(replicas, count):
    return f"behavior.fallback of {replicas} replicas after {count} syncs without metrics"


def spec_of(replicas=6, threshold=3, max_r=10, metrics=None):
    """The echoed spec: behavior completed with both directions' defaults, the threshold 3."""
    return {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
            "minReplicas": 1, "maxReplicas": max_r, "metrics": metrics or [ext_avg("queue_depth", "30")],
            "behavior": {"scaleUp": DEFAULT_UP, "scaleDown": DEFAULT_DOWN,
                         "fallback": {"failureThreshold": threshold, "replicas": replicas}}}


def web(replicas=6, max_r=10, st=None, metrics=None, threshold=None, meta_extra=None):
    fb = {"replicas": replicas} if threshold is None else {"replicas": replicas, "failureThreshold": threshold}
    return hpa(metrics=metrics or [ext_avg("queue_depth", "30")], max_r=max_r, behavior={"fallback": fb}, status=st,
               meta_extra=meta_extra)


def counted(st: dict, count: int) -> dict:
    st["consecutiveMetricRetrievalFailureCount"] = count
    return st


def strategy_cases() -> None:
    """KEP-5679's follow-up: what an External metric in fallback proposes under each strategy.
    `queue_depth` has failed since -600s (well past 180 s) and CPU is idle: 4 pods at 10 % of a
    50 % target, ratio 0.2, ceil(0.8) = 1. No behavior: the legacy path (5 min window)."""
    idle4 = [deploy(replicas=4), *cpu_pods(["100m"] * 4)]
    prior = [able("ReadyForNewScale", EARLIER), active(QUEUE, EARLIER), limited("DesiredWithinRange", EARLIER),
             cond("ExternalMetricFallbackActive", "False", "NoFallbackActive", "no external metric is in fallback",
                  EARLIER)]
    fb_true = cond("ExternalMetricFallbackActive", "True", "FallbackActive",
                   "the HPA is using the fallback replicas of external metric(s): queue_depth")

    def fb_active(replicas, how):  # ScalingActive while the fallback decides (pyhpa's text)
        return cond("ScalingActive", "True", "ValidMetricFound",
                    "the HPA is using a fallback for its replica count: external metric queue_depth has failed "
                    f"for 3m0s: fallback {replicas} replicas ({how})", EARLIER)

    def queue(replicas, strategy):
        m = ext_avg("queue_depth", "30")
        m["external"]["fallback"] = {"replicas": replicas, "strategy": strategy}
        return m

    def echoed(replicas, strategy):
        m = queue(replicas, strategy)
        m["external"]["fallback"]["failureDurationSeconds"] = 180
        return {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                "minReplicas": 1, "maxReplicas": 10, "metrics": [cpu_util(50), m]}

    def s_queue():
        return {"type": "External", "external": {"metric": {"name": "queue_depth"}, "current": {},
                                                 "fallbackStatus": "Fallback", "firstFailureTime": t(-600)}}

    def before(first_status):
        return status(4, 4, [s_util(10, "100m"), {"type": "External", "external": {
            "metric": {"name": "queue_depth"}, "current": {}, "fallbackStatus": first_status,
            "firstFailureTime": t(-600)}}], prior)

    case("strategy-usemax-holds-instead-of-scaling-down", about="""
strategy UseMax, fallback.replicas 2, current 4: the fallback proposes max(4, 2) = 4 (Static would propose 2 and
scale down, see kep5679-fallback-lets-scale-down). max(CPU 1, 4) = 4 = current: held (ReadyForNewScale), the
queue metric's proposal is the one used. The activation event names the strategy.
""", snapshot=[*idle4, hpa(metrics=[cpu_util(50), queue(2, "UseMax")], status=before("Normal")),
               state("web", [(4, t(-301))])],
        spec={"web": echoed(2, "UseMax")},
        hpas={"web": status(4, 4, [s_util(10, "100m"), s_queue()],
                            [able("ReadyForNewScale", EARLIER), fb_active(4, "UseMax of current 4 and fallback.replicas 2"),
                             limited("DesiredWithinRange", EARLIER), fb_true])},
        events=[ev("Normal", "ExternalMetricFallbackActivated",
                   "external metric queue_depth has failed for 3m0s: using its fallback of 4 replicas "
                   "(UseMax of current 4 and fallback.replicas 2)")],
        states=[out_state("web", [(4, NOW)])])

    case("strategy-usemin-holds-instead-of-scaling-up", about="""
strategy UseMin, fallback.replicas 6, current 4: the fallback proposes min(4, 6) = 4 (Static would scale up to
6). max(CPU 1, 4) = 4 = current: held.
""", snapshot=[*idle4, hpa(metrics=[cpu_util(50), queue(6, "UseMin")], status=before("Normal")),
               state("web", [(4, t(-301))])],
        spec={"web": echoed(6, "UseMin")},
        hpas={"web": status(4, 4, [s_util(10, "100m"), s_queue()],
                            [able("ReadyForNewScale", EARLIER), fb_active(4, "UseMin of current 4 and fallback.replicas 6"),
                             limited("DesiredWithinRange", EARLIER), fb_true])},
        events=[ev("Normal", "ExternalMetricFallbackActivated",
                   "external metric queue_depth has failed for 3m0s: using its fallback of 4 replicas "
                   "(UseMin of current 4 and fallback.replicas 6)")],
        states=[out_state("web", [(4, NOW)])])

    case("strategy-usemin-scales-down-to-replicas", about="""
strategy UseMin, fallback.replicas 2, current 4, already in Fallback (no new event): min(4, 2) = 2;
max(CPU 1, 2) = 2 < 4 and the only recommendation (4@-301s) is outside the window: 4 -> 2.
""", snapshot=[*idle4, hpa(metrics=[cpu_util(50), queue(2, "UseMin")], status=before("Fallback")),
               state("web", [(4, t(-301))])],
        spec={"web": echoed(2, "UseMin")},
        hpas={"web": status(4, 2, [s_util(10, "100m"), s_queue()],
                            [rescaled(2, EARLIER), fb_active(2, "UseMin of current 4 and fallback.replicas 2"), limited("DesiredWithinRange", EARLIER),
                             fb_true, stz(False)], NOW)},
        scaled={"web": 2}, events=[rescale_ev(2, "All metrics below target")],
        states=[out_state("web", [(2, NOW)])])

    case("err-strategy-unknown", about="external.fallback.strategy must be Static, UseMax or UseMin.",
         snapshot=[deploy(), hpa(metrics=[cpu_util(50), queue(2, "Highest")])],
         error='document 1|spec.metrics[1].external.fallback.strategy: Unsupported value: "Highest": '
               'supported values: "Static", "UseMax", "UseMin"')


def main() -> None:
    strategy_cases()
    d4, d8 = deploy(replicas=4), deploy(replicas=8)

    case("kep5053-first-failure-is-counted", about="""
No status yet. queue_depth fails, the only metric: no count (all metrics invalid). The failed-metrics path as
upstream (desiredReplicas stays 0, no scale, Warnings FailedGetExternalMetric and FailedComputeMetricsReplicas),
plus the count 1 in consecutiveMetricRetrievalFailureCount and FallbackActive False: "count is 1" of 3.
""", snapshot=[d4, web()], spec={"web": spec_of()},
        hpas={"web": counted(status(4, 0, [EMPTY_STATUS],
                                    [able("SucceededGetScale"), failing(NOW), not_reached(1)]), 1)},
        events=[FAILED_GET, FAILED_COMPUTE], states=[out_state("web", [(4, NOW)])])

    prior3 = [able("SucceededGetScale", EARLIER), failing(), not_reached(3, EARLIER)]
    case("kep5053-third-failure-is-not-yet-enough", about="""
The count was 2; this failure makes 3, and only a count above failureThreshold 3 activates (the KEP's count >
threshold): no fallback. The condition keeps status False (its time stays), its message says 3.
""", snapshot=[d4, web(st=counted(status(4, 4, [EMPTY_STATUS], [able("SucceededGetScale", EARLIER), failing(),
                                                                 not_reached(2, EARLIER)]), 2)),
               state("web", [(4, EARLIER)])],
        spec={"web": spec_of()},
        hpas={"web": counted(status(4, 4, [EMPTY_STATUS], prior3), 3)},
        events=[FAILED_GET, FAILED_COMPUTE], states=[out_state("web", [(4, EARLIER)])])

    case("kep5053-fourth-failure-scales-to-the-fallback", about="""
The count was 3: this failure makes 4 > 3, so the fallback's 6 replaces the recommendation and the pass goes on.
Behavior path: up window 0 s holds nothing, down window keeps max(6, 4@-60s) = 6, so 6; the scale-up limit is
max(4 + 4, 4 x 2) = 8 >= 6: DesiredWithinRange; 4 -> 6. ScalingActive stays False (the metrics did fail),
FallbackActive turns True with the error text. Events: the failure's two Warnings, Warning
FallbackThresholdReached (once, on activation), SuccessfulRescale with the fallback as reason. A scale-up event
+2 is recorded (HPAs with behavior).
""", snapshot=[d4, web(st=counted(status(4, 4, [EMPTY_STATUS], prior3), 3)), state("web", [(4, EARLIER)])],
        spec={"web": spec_of()},
        hpas={"web": counted(status(4, 6, [EMPTY_STATUS],
                                    [rescaled(6, EARLIER), failing(), reached(), limited("DesiredWithinRange"),
                                     stz(False)], NOW), 4)},
        scaled={"web": 6},
        events=[FAILED_GET, FAILED_COMPUTE, threshold_event(4, 6), rescale_ev(6, fallback_reason(6, 4))],
        states=[out_state("web", [(4, EARLIER), (6, NOW)], up=[(2, NOW, False)])])

    in_fallback = [rescaled(6, EARLIER), failing(), reached(ltt=EARLIER), limited("DesiredWithinRange", EARLIER),
                   stz(False, EARLIER)]
    case("kep5053-fallback-continues-without-a-new-event", about="""
Count 7, already in fallback at 6 = current: count 8, the fallback proposes 6, nothing to do (no window
changes it: ReadyForNewScale). No second
FallbackThresholdReached; FallbackActive keeps its time.
""", snapshot=[deploy(replicas=6), web(st=counted(status(6, 6, [EMPTY_STATUS], in_fallback), 7)),
               state("web", [(6, EARLIER)], up=[], down=[])],
        spec={"web": spec_of()},
        hpas={"web": counted(status(6, 6, [EMPTY_STATUS],
                                    [able("ReadyForNewScale", EARLIER), failing(), reached(ltt=EARLIER),
                                     limited("DesiredWithinRange", EARLIER), stz(False, EARLIER)]), 8)},
        events=[FAILED_GET, FAILED_COMPUTE],
        states=[out_state("web", [(6, EARLIER), (6, NOW)], up=[], down=[])])

    case("kep5053-success-resets-the-count", about="""
Count 7 and in fallback at 6; queue_depth answers again: 120 over 6 pods = 20 per pod vs 30, ratio 0.667,
ceil(6 x 0.667) = 4. The count is reset (the field is omitted at 0), FallbackActive False
SucceededToComputeDesiredReplicas, ScalingActive True. 4 < 6 but the down window keeps 6 (6@-60s):
ScaleDownStabilized, no scale.
""", snapshot=[deploy(replicas=6), external_list([ext_item("queue_depth", "120")]),
               web(st=counted(status(6, 6, [EMPTY_STATUS], in_fallback), 7)),
               state("web", [(6, EARLIER)], up=[], down=[])],
        spec={"web": spec_of()},
        hpas={"web": status(6, 6, [s_ext("queue_depth", avg="20")],
                            [able("ScaleDownStabilized", EARLIER), active(QUEUE), succeeded(),
                             limited("DesiredWithinRange", EARLIER), stz(False, EARLIER)])},
        states=[out_state("web", [(6, EARLIER), (4, NOW)], up=[], down=[])])

    two = [ext_avg("queue_depth", "30"), cpu_util(50)]
    prior_two = [able("SucceededGetScale", EARLIER), failing(), not_reached(3, EARLIER)]
    case("kep5053-valid-scale-up-resets-the-count", about="""
Two metrics: queue_depth fails, CPU at 90 % of a 50 % target (4 pods, 900m of 1): ratio 1.8, ceil(7.2) = 8 > 4.
A failed metric does not stop a scale-up, so the metrics did give a count: the count 3 is reset and there is no
fallback. Up limit max(4 + 4, 8) = 8: 4 -> 8 for the CPU metric (ScalingActive True from it). FallbackActive
stays False (its time kept) with reason SucceededToComputeDesiredReplicas.
""", snapshot=[d4, *cpu_pods(["900m"] * 4), web(metrics=two, st=counted(status(4, 4, None, prior_two), 3)),
               state("web", [(4, EARLIER)])],
        spec={"web": spec_of(metrics=two)},
        hpas={"web": status(4, 8, [EMPTY_STATUS, s_util(90, "900m")],
                            [rescaled(8, EARLIER), active(CPU_UTIL), succeeded(EARLIER), limited("DesiredWithinRange"),
                             stz(False)], NOW)},
        scaled={"web": 8}, events=[FAILED_GET, rescale_ev(8, f"{CPU_UTIL} above target")],
        states=[out_state("web", [(4, EARLIER), (8, NOW)], up=[(4, NOW, False)])])

    case("kep5053-blocked-scale-down-counts-as-a-failure", about="""
Two metrics: queue_depth fails, CPU idle (10 % of 50 %: ceil(0.8) = 1 < 4). A failed metric blocks a scale-down,
so the metrics gave no count: this is a failure (count 0 -> 1), not yet a fallback.
""", snapshot=[d4, *cpu_pods(["100m"] * 4), web(metrics=two), state("web", [(4, EARLIER)])],
        spec={"web": spec_of(metrics=two)},
        hpas={"web": counted(status(4, 0, [EMPTY_STATUS, s_util(10, "100m")],
                                    [able("SucceededGetScale"), failing(NOW), not_reached(1)]), 1)},
        events=[FAILED_GET, ev("Warning", "FailedComputeMetricsReplicas", ONE_OF_TWO)],
        states=[out_state("web", [(4, EARLIER)])])

    prior8 = [able("SucceededGetScale", EARLIER), failing(), not_reached(3, EARLIER)]
    case("kep5053-fallback-capped-by-max-replicas", about="""
Fallback 20, maxReplicas 10, current 8, count 3 -> 4: 20 replaces the recommendation; the up limit is
max(8 + 4, 16) = 16 > maxReplicas, so maxReplicas binds: 10, ScalingLimited True TooManyReplicas. 8 -> 10.
""", snapshot=[d8, web(replicas=20, st=counted(status(8, 8, [EMPTY_STATUS], prior8), 3)),
               state("web", [(8, EARLIER)])],
        spec={"web": spec_of(replicas=20)},
        hpas={"web": counted(status(8, 10, [EMPTY_STATUS],
                                    [rescaled(10, EARLIER), failing(), reached(), limited("TooManyReplicas"),
                                     stz(False)], NOW), 4)},
        scaled={"web": 10},
        events=[FAILED_GET, FAILED_COMPUTE, threshold_event(4, 20), rescale_ev(10, fallback_reason(20, 4))],
        states=[out_state("web", [(8, EARLIER), (20, NOW)], up=[(2, NOW, False)])])

    case("kep5053-fallback-scale-down-waits-for-the-window", about="""
Fallback 2, current 8, count 3 -> 4: in fallback, but the 300 s down window still holds 8 (8@-60s):
ScaleDownStabilized, no scale. The fallback is active (Warning FallbackThresholdReached) and recorded as a
recommendation, so it wins once the window has passed.
""", snapshot=[d8, web(replicas=2, st=counted(status(8, 8, [EMPTY_STATUS], prior8), 3)),
               state("web", [(8, EARLIER)])],
        spec={"web": spec_of(replicas=2)},
        hpas={"web": counted(status(8, 8, [EMPTY_STATUS],
                                    [able("ScaleDownStabilized", EARLIER), failing(), reached(),
                                     limited("DesiredWithinRange")]), 4)},
        events=[FAILED_GET, FAILED_COMPUTE, threshold_event(4, 2)],
        states=[out_state("web", [(8, EARLIER), (2, NOW)])])

    case("kep5053-fallback-scales-down-after-the-window", about="""
As above, but the only recommendation is 8@-301s, outside the window (and replaced by this pass's 2): down
limit Percent 100 per 15 s allows 0, minReplicas 1; 2 is within: 8 -> 2, a scale-down event -6.
""", snapshot=[d8, web(replicas=2, st=counted(status(8, 8, [EMPTY_STATUS], prior8), 3)),
               state("web", [(8, t(-301))])],
        spec={"web": spec_of(replicas=2)},
        hpas={"web": counted(status(8, 2, [EMPTY_STATUS],
                                    [rescaled(2, EARLIER), failing(), reached(), limited("DesiredWithinRange"),
                                     stz(False)], NOW), 4)},
        scaled={"web": 2},
        events=[FAILED_GET, FAILED_COMPUTE, threshold_event(4, 2), rescale_ev(2, fallback_reason(2, 4))],
        states=[out_state("web", [(2, NOW)], down=[(6, NOW, False)])])

    case("kep5053-threshold-one", about="""
failureThreshold 1: the second failure in a row (count 1 -> 2 > 1) activates. Fallback 5, current 4: the up
limit 8 does not bind: 4 -> 5.
""", snapshot=[d4, web(replicas=5, threshold=1, st=counted(status(4, 4, [EMPTY_STATUS], [
            able("SucceededGetScale", EARLIER), failing(), not_reached(1, EARLIER, threshold=1)]), 1)),
            state("web", [(4, EARLIER)])],
        spec={"web": spec_of(replicas=5, threshold=1)},
        hpas={"web": counted(status(4, 5, [EMPTY_STATUS],
                                    [rescaled(5, EARLIER), failing(), reached(), limited("DesiredWithinRange"),
                                     stz(False)], NOW), 2)},
        scaled={"web": 5},
        events=[FAILED_GET, FAILED_COMPUTE, threshold_event(2, 5, threshold=1), rescale_ev(5, fallback_reason(5, 2))],
        states=[out_state("web", [(4, EARLIER), (5, NOW)], up=[(1, NOW, False)])])

    suspend = {"annotations": {"autoscaling.kubernetes.io/suspend": "true"}}
    case("kep5053-suspend-keeps-the-count", about="""
A suspended HPA (KEP-3428) computes nothing: the count 3 is neither raised nor reset, the condition stays.
ScalingActive False Suspended, desired = current, no metrics in the status.
""", snapshot=[d4, web(st=counted(status(4, 4, [EMPTY_STATUS], prior3), 3), meta_extra=suspend),
               state("web", [(4, EARLIER)])],
        spec={"web": spec_of()},
        hpas={"web": counted(status(4, 4, None, [
            able("SucceededGetScale", EARLIER),
            inactive("Suspended", "", EARLIER) | {"message": "scaling is suspended by the autoscaling.kubernetes.io/suspend "
                                                          "annotation"},
            not_reached(3, EARLIER)]), 3)},
        states=[out_state("web", [(4, EARLIER)])])

    case("kep5053-gate-off-ignores-the-fallback", about="""
--feature-gates HPAFallback=false: the API drops behavior.fallback from the (new) object, the count is reported
as unset and FallbackActive removed; the failure is plain upstream's (no scale).
""", snapshot=[d4, web(st=counted(status(4, 4, [EMPTY_STATUS], [able("SucceededGetScale", EARLIER), failing(),
                                                                 reached(ltt=EARLIER)]), 5)),
               state("web", [(4, EARLIER)])],
        args="--feature-gates HPAFallback=false",
        spec={"web": {**spec_of(), "behavior": {"scaleUp": DEFAULT_UP, "scaleDown": DEFAULT_DOWN}}},
        hpas={"web": status(4, 4, [EMPTY_STATUS], [able("SucceededGetScale", EARLIER), failing()])},
        events=[FAILED_GET, FAILED_COMPUTE], states=[out_state("web", [(4, EARLIER)])])

    for name, fallback, message in (
            ("replicas-zero", {"replicas": 0}, "spec.behavior.fallback.replicas: Invalid value: 0: must be greater than 0"),
            ("threshold-zero", {"replicas": 3, "failureThreshold": 0},
             "spec.behavior.fallback.failureThreshold: Invalid value: 0: must be greater than 0")):
        case(f"err-kep5053-{name}", about=f"behavior.fallback {fallback} is invalid.",
             snapshot=[d4, hpa(metrics=[ext_avg("queue_depth", "30")], behavior={"fallback": fallback})],
             error=f"document 1|{message}")


if __name__ == "__main__":
    main()
