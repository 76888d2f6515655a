"""The `pyhpa reconcile` acceptance corpus: every case, with hand-computed expectations.

Each `case(...)` below states a situation and what the upstream controller does with it, per
upstream's pkg/controller/podautoscaler (function names in the comments). Numbers were worked out
by hand (a calculator for float ceilings); `casekit` only writes the echo around them.
Defaults: tolerance 0.1, downscale stabilization 5m, CPU init 5m, readiness delay 30s; pyhpa's
default gates (HPAScaleToZero and HPAConfigurableTolerance on). NOW = 2026-01-01T00:10:00Z,
pods started 10 minutes earlier and turned Ready 10 s after start, metrics taken 15 s ago over 30 s.

Usage: python tests/offline/corpus.py   (rewrites tests/offline/cases/)
"""

from __future__ import annotations

import pathlib
import sys

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from casekit import *  # noqa: E402,F401,F403
from casekit import CASES, NOW, T0, case, t  # noqa: E402

ABOVE = CPU_UTIL + " above target"
BELOW = "All metrics below target"
GET = able("SucceededGetScale")


def std_up(n, metric_status, name=CPU_UTIL, limit="DesiredWithinRange"):
    """Conditions of an ordinary successful rescale (fresh HPA)."""
    return [rescaled(n), active(name), limited(limit), stz(False)]


def legacy_hold(name, reason="ReadyForNewScale", limit="DesiredWithinRange"):
    return [able(reason), active(name), limited(limit)]


# =============================================================== A. Resource utilization (legacy path)

case("cpu-util-scale-up", about="""
TestReplicaCalcScaleUp: 3 pods request 1 CPU, usage 300m/500m/700m, target 30% -> util 50, ratio 1.667, ceil(5.0) = 5.
Legacy: no memory -> recommendations [3@now]; max(5,3)=5 ReadyForNewScale; limit max(2*3,4)=6 -> within.
""", snapshot=[deploy(), *cpu_pods(["300m", "500m", "700m"]), hpa(metrics=[cpu_util(30)])],
    hpas={"web": status(3, 5, [s_util(50, "500m")], std_up(5, None), NOW)}, scaled={"web": 5},
    events=[rescale_ev(5, ABOVE)], states=[out_state("web", [(3, NOW), (5, NOW)])])

case("cpu-util-scale-down-stabilized", about="""
TestReplicaCalcScaleDown: 5 pods, usage 100/300/500/250/250m of 1 CPU, target 50 -> util 28, 0.56, ceil(2.8)=3.
No AutoscalerState: the pass first records 5@now, so the 5m window holds at 5 (ScaleDownStabilized).
""", snapshot=[deploy(replicas=5), *cpu_pods(["100m", "300m", "500m", "250m", "250m"]), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(5, 5, [s_util(28, "280m")], legacy_hold(CPU_UTIL, "ScaleDownStabilized"))},
    states=[out_state("web", [(5, NOW), (3, NOW)])])

case("cpu-util-scale-down-old-history", about="""
Same as cpu-util-scale-down-stabilized, but the controller remembers only 5@-10m (older than the window):
stabilized = 3, rescale to 3 "All metrics below target"; the old slot is overwritten by 3@now.
""", snapshot=[deploy(replicas=5), *cpu_pods(["100m", "300m", "500m", "250m", "250m"]), hpa(metrics=[cpu_util(50)]),
               state("web", [(5, t(-600))])],
    hpas={"web": status(5, 3, [s_util(28, "280m")], std_up(3, None), NOW)}, scaled={"web": 3},
    events=[rescale_ev(3, BELOW)], states=[out_state("web", [(3, NOW)])])

case("cpu-util-within-tolerance", about="""
4 pods at 520m of 1 CPU, target 50 -> util 52, ratio 1.04 within 0.1 -> current 4. No rescale.
""", snapshot=[deploy(replicas=4), *cpu_pods(["520m"] * 4), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(4, 4, [s_util(52, "520m")], legacy_hold(CPU_UTIL))},
    states=[out_state("web", [(4, NOW), (4, NOW)])])

case("tolerance-boundary-inclusive", about="""
Tolerances.isWithin: within(r) is inclusive. util 55 / target 50 = 1.1 = 1.0+0.1 -> within -> 2 stays.
""", snapshot=[deploy(replicas=2), *cpu_pods(["550m", "550m"]), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(2, 2, [s_util(55, "550m")], legacy_hold(CPU_UTIL))},
    states=[out_state("web", [(2, NOW), (2, NOW)])])

case("tolerance-just-outside", about="""
util 56 / 50 = 1.12 > 1.1 -> ceil(1.12*2)=ceil(2.24)=3.
""", snapshot=[deploy(replicas=2), *cpu_pods(["560m", "560m"]), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(2, 3, [s_util(56, "560m")], std_up(3, None), NOW)}, scaled={"web": 3},
    events=[rescale_ev(3, ABOVE)], states=[out_state("web", [(2, NOW), (3, NOW)])])

case("tolerance-flag-wider", about="""
--horizontal-pod-autoscaler-tolerance 0.2: util 56/50 = 1.12 is now within -> stays 2.
""", snapshot=[deploy(replicas=2), *cpu_pods(["560m", "560m"]), hpa(metrics=[cpu_util(50)])],
    args="--horizontal-pod-autoscaler-tolerance 0.2",
    hpas={"web": status(2, 2, [s_util(56, "560m")], legacy_hold(CPU_UTIL))},
    states=[out_state("web", [(2, NOW), (2, NOW)])])

case("tolerance-flag-zero", about="""
--horizontal-pod-autoscaler-tolerance 0: util 51/50 = 1.02 -> ceil(2.04) = 3.
""", snapshot=[deploy(replicas=2), *cpu_pods(["510m", "510m"]), hpa(metrics=[cpu_util(50)])],
    args="--horizontal-pod-autoscaler-tolerance 0",
    hpas={"web": status(2, 3, [s_util(51, "510m")], std_up(3, None), NOW)}, scaled={"web": 3},
    events=[rescale_ev(3, ABOVE)], states=[out_state("web", [(2, NOW), (3, NOW)])])

case("cpu-util-two-containers", about="""
Pods with 2 containers each requesting 500m; usage 400m+200m per pod -> pod 600m of 1000m; 3 pods -> util 60,
target 40 -> 1.5 -> ceil(4.5) = 5; averageValue per pod 600m.
""", snapshot=[deploy(), *[o for i in range(3) for o in (
        pod(f"web-{i}", requests="500m", containers=("app", "side")),
        podmetrics(f"web-{i}", {"app": {"cpu": "400m"}, "side": {"cpu": "200m"}}))],
    hpa(metrics=[cpu_util(40)])],
    hpas={"web": status(3, 5, [s_util(60, "600m")], std_up(5, None), NOW)}, scaled={"web": 5},
    events=[rescale_ev(5, ABOVE)], states=[out_state("web", [(3, NOW), (5, NOW)])])

case("cpu-util-default-metric", about="""
SetDefaults_HorizontalPodAutoscaler: no metrics -> default 80% CPU. 2 pods at 900m of 1 CPU -> 90/80 = 1.125 -> ceil(2.25) = 3.
The output spec shows the defaulted metric.
""", snapshot=[deploy(replicas=2), *cpu_pods(["900m", "900m"]), hpa(metrics=None)],
    hpas={"web": status(2, 3, [s_util(90, "900m")], std_up(3, None), NOW)}, scaled={"web": 3},
    events=[rescale_ev(3, ABOVE)], states=[out_state("web", [(2, NOW), (3, NOW)])])

case("min-replicas-defaulted", about="""
SetDefaults_HorizontalPodAutoscaler: minReplicas absent -> 1 in the output spec. Within tolerance: no change.
""", snapshot=[deploy(replicas=2), *cpu_pods(["500m", "500m"]), hpa(metrics=[cpu_util(50)], min_r=None)],
    hpas={"web": status(2, 2, [s_util(50, "500m")], legacy_hold(CPU_UTIL))},
    states=[out_state("web", [(2, NOW), (2, NOW)])])

case("missing-cpu-request", about="""
calculatePodRequests: a container without a cpu request fails utilization:
`missing request for cpu in container app of Pod web-1`. Hard failure (the only metric).
""", snapshot=[deploy(replicas=2), pod("web-0"), podmetrics("web-0", "500m"), pod("web-1", requests=None),
               podmetrics("web-1", "500m"), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(2, 0, [EMPTY_STATUS], [GET, inactive(
        "FailedGetResourceMetric", "failed to get cpu utilization: missing request for cpu in container app of Pod web-1")])},
    events=[ev("Warning", "FailedGetResourceMetric", "failed to get cpu utilization: missing request for cpu in container app of Pod web-1"),
            ev("Warning", "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: missing request for cpu in container app of Pod web-1")],
    states=[out_state("web", [(2, NOW)])])

NO_RES = "failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API"
case("no-pod-metrics", about="""
horizontal.go's events: CPU with no PodMetrics at all. ScalingActive False FailedGetResourceMetric; events for the metric and
FailedComputeMetricsReplicas; desiredReplicas keeps the previous status value (none -> 0); currentMetrics has
upstream's empty placeholder.
""", snapshot=[deploy(replicas=2), pod("web-0"), pod("web-1"), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(2, 0, [EMPTY_STATUS], [GET, inactive("FailedGetResourceMetric", NO_RES)])},
    events=[ev("Warning", "FailedGetResourceMetric", NO_RES),
            ev("Warning", "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: " + NO_RES)],
    states=[out_state("web", [(2, NOW)])])

case("pod-metrics-labels-not-selected", about="""
PodMetrics are selected by their own labels: PodMetrics labelled app=other are not served to app=web -> same as no metrics.
""", snapshot=[deploy(replicas=2), pod("web-0"), pod("web-1"), podmetrics("web-0", "500m", labels={"app": "other"}),
               podmetrics("web-1", "500m", labels={"app": "other"}), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(2, 0, [EMPTY_STATUS], [GET, inactive("FailedGetResourceMetric", NO_RES)])},
    events=[ev("Warning", "FailedGetResourceMetric", NO_RES),
            ev("Warning", "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: " + NO_RES)],
    states=[out_state("web", [(2, NOW)])])

case("pod-metrics-other-namespace", about="""
PodMetrics in namespace `other` are not served to an HPA in `default` (same labels) -> no metrics.
""", snapshot=[deploy(replicas=2), pod("web-0"), pod("web-1"), podmetrics("web-0", "500m", ns="other"),
               podmetrics("web-1", "500m", ns="other"), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(2, 0, [EMPTY_STATUS], [GET, inactive("FailedGetResourceMetric", NO_RES)])},
    events=[ev("Warning", "FailedGetResourceMetric", NO_RES),
            ev("Warning", "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: " + NO_RES)],
    states=[out_state("web", [(2, NOW)])])

case("no-pods-selected", about="""
GetResourceReplicas: metrics exist (PodMetrics labelled app=web) but no Pod objects -> `no pods returned by selector while calculating replica count`.
""", snapshot=[deploy(replicas=2), podmetrics("web-0", "500m"), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(2, 0, [EMPTY_STATUS], [GET, inactive("FailedGetResourceMetric", "failed to get cpu utilization: no pods returned by selector while calculating replica count")])},
    events=[ev("Warning", "FailedGetResourceMetric", "failed to get cpu utilization: no pods returned by selector while calculating replica count"),
            ev("Warning", "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: no pods returned by selector while calculating replica count")],
    states=[out_state("web", [(2, NOW)])])

# =============================================================== B. Resource AverageValue, memory

case("cpu-average-value", about="""
GetMetricReplicas: cpu AverageValue 400m; usage 300/600/900m -> 600m, ratio 1.5 -> ceil(4.5)=5. Name `cpu resource`.
""", snapshot=[deploy(), *cpu_pods(["300m", "600m", "900m"]), hpa(metrics=[res_avg("cpu", "400m")])],
    hpas={"web": status(3, 5, [s_avg("600m")], std_up(5, None, "cpu resource"), NOW)}, scaled={"web": 5},
    events=[rescale_ev(5, "cpu resource above target")], states=[out_state("web", [(3, NOW), (5, NOW)])])

MEM = lambda q: {"memory": q}  # noqa: E731
case("memory-average-value", about="""
Memory AverageValue 100Mi; usage 100Mi/200Mi/300Mi -> 200Mi, ratio 2 -> 6; legacy limit 6 -> within.
Memory statuses print in BinarySI (200Mi).
""", snapshot=[deploy(), *[o for i, u in enumerate(["100Mi", "200Mi", "300Mi"]) for o in (
        pod(f"web-{i}", requests=MEM("256Mi")), podmetrics(f"web-{i}", {"app": MEM(u)}))],
    hpa(metrics=[res_avg("memory", "100Mi")])],
    hpas={"web": status(3, 6, [s_avg("200Mi", "memory")], std_up(6, None, "memory resource"), NOW)}, scaled={"web": 6},
    events=[rescale_ev(6, "memory resource above target")], states=[out_state("web", [(3, NOW), (6, NOW)])])

case("memory-utilization", about="""
Memory Utilization 50; request 256Mi, usage 128Mi and 192Mi -> 320Mi*100/512Mi = 62 (int), 62/50=1.24 -> ceil(2.48)=3.
averageValue 160Mi.
""", snapshot=[deploy(replicas=2), *[o for i, u in enumerate(["128Mi", "192Mi"]) for o in (
        pod(f"web-{i}", requests=MEM("256Mi")), podmetrics(f"web-{i}", {"app": MEM(u)}))],
    hpa(metrics=[res_util("memory", 50)])],
    hpas={"web": status(2, 3, [s_util(62, "160Mi", "memory")], std_up(3, None, "memory resource utilization (percentage of request)"), NOW)},
    scaled={"web": 3}, events=[rescale_ev(3, "memory resource utilization (percentage of request) above target")],
    states=[out_state("web", [(2, NOW), (3, NOW)])])

case("memory-ignores-readiness", about="""
groupPods: readiness is consulted only for cpu. A Ready=False (never ready) pod still counts for memory:
usage 100Mi x3 of target 50Mi -> ratio 2 -> 6.
""", snapshot=[deploy(), *[o for i in range(3) for o in (
        pod(f"web-{i}", requests=MEM("256Mi"), ready="False" if i == 0 else "True"), podmetrics(f"web-{i}", {"app": MEM("100Mi")}))],
    hpa(metrics=[res_avg("memory", "50Mi")])],
    hpas={"web": status(3, 6, [s_avg("100Mi", "memory")], std_up(6, None, "memory resource"), NOW)}, scaled={"web": 6},
    events=[rescale_ev(6, "memory resource above target")], states=[out_state("web", [(3, NOW), (6, NOW)])])

# =============================================================== C. ContainerResource

SIDE = lambda i, app, side: (pod(f"web-{i}", requests="500m", containers=("app", "side")),  # noqa: E731
                             podmetrics(f"web-{i}", {"app": {"cpu": app}, "side": {"cpu": side}}))
case("container-util", about="""
ContainerResource cpu of container `app` (request 500m), usage app 400m, side 100m in 2 pods:
util 800*100/1000 = 80, target 50 -> 1.6 -> ceil(3.2) = 4; legacy limit max(4,4)=4.
""", snapshot=[deploy(replicas=2), *SIDE(0, "400m", "100m"), *SIDE(1, "400m", "100m"), hpa(metrics=[cont_util("cpu", "app", 50)])],
    hpas={"web": status(2, 4, [s_cont("app", "400m", 80)], std_up(4, None, "cpu container resource utilization (percentage of request)"), NOW)},
    scaled={"web": 4}, events=[rescale_ev(4, "cpu container resource utilization (percentage of request) above target")],
    states=[out_state("web", [(2, NOW), (4, NOW)])])

case("container-average-value", about="""
ContainerResource AverageValue 200m on container `app`: app usage 400m (side ignored) -> ratio 2 -> 4.
Metric name is `cpu resource` (upstream reuses the resource wording).
""", snapshot=[deploy(replicas=2), *SIDE(0, "400m", "900m"), *SIDE(1, "400m", "900m"), hpa(metrics=[cont_avg("cpu", "app", "200m")])],
    hpas={"web": status(2, 4, [s_cont("app", "400m")], std_up(4, None, "cpu resource"), NOW)},
    scaled={"web": 4}, events=[rescale_ev(4, "cpu resource above target")], states=[out_state("web", [(2, NOW), (4, NOW)])])

case("container-missing-in-metrics", about="""
GetResourceMetric: pod web-2's PodMetrics lacks container `app` -> missing pod. Ready: 900m+900m of 1000m each -> 90 vs 50 = 1.8;
scale-up: missing pod counted at 0: 1800*100/3000 = 60 -> 1.2 -> ceil(3.6) = 4.
""", snapshot=[deploy(), pod("web-0", containers=("app",)), podmetrics("web-0", "900m"), pod("web-1"), podmetrics("web-1", "900m"),
               pod("web-2"), podmetrics("web-2", {"other": {"cpu": "900m"}}), hpa(metrics=[cont_util("cpu", "app", 50)])],
    hpas={"web": status(3, 4, [s_cont("app", "900m", 90)], std_up(4, None, "cpu container resource utilization (percentage of request)"), NOW)},
    scaled={"web": 4}, events=[rescale_ev(4, "cpu container resource utilization (percentage of request) above target")],
    states=[out_state("web", [(3, NOW), (4, NOW)])])

CNF = "failed to get cpu utilization: container app not found in Pod web-1"
case("container-not-in-pod-spec", about="""
calculatePodRequests: the metrics have container `app` but pod web-1's spec has only `web` -> `container app not found in Pod web-1`.
""", snapshot=[deploy(replicas=2), pod("web-0"), podmetrics("web-0", "500m"), pod("web-1", containers=("web",)),
               podmetrics("web-1", "500m"), hpa(metrics=[cont_util("cpu", "app", 50)])],
    hpas={"web": status(2, 0, [EMPTY_STATUS], [GET, inactive("FailedGetContainerResourceMetric", CNF)])},
    events=[ev("Warning", "FailedGetContainerResourceMetric", CNF),
            ev("Warning", "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first error is: failed to get app container metric value: " + CNF)],
    states=[out_state("web", [(2, NOW)])])

# =============================================================== D. readiness and missing pods (groupPods, GetResourceReplicas)

case("unready-pod-scale-up", about="""
TestReplicaCalcScaleUpUnreadyLessScale: pod web-0 Ready=False since 10 s after start (never ready) -> unready for cpu. Ready 1200/2000 = 60, target 30 -> 2.0;
scale-up with unready: unready counted 0 -> 1200/3000 = 40 -> 1.333 -> ceil(4.0) = 4. Reported util 60, value 600m.
""", snapshot=[deploy(), pod("web-0", ready="False"), podmetrics("web-0", "300m"), *cpu_pods([None, "500m", "700m"])[1:],
               hpa(metrics=[cpu_util(30)])],
    hpas={"web": status(3, 4, [s_util(60, "600m")], std_up(4, None), NOW)}, scaled={"web": 4},
    events=[rescale_ev(4, ABOVE)], states=[out_state("web", [(3, NOW), (4, NOW)])])

case("unready-later-counts-as-ready", about="""
groupPods (initialized pod): Ready=False counts as unready only if it turned unready within the initial readiness delay
(start+30s > lastTransition). web-0 turned unready 5 minutes after start -> ready -> all three count: 50% of 30 -> 5.
""", snapshot=[deploy(), pod("web-0", ready="False", ready_at=t(-300)), podmetrics("web-0", "300m"), *cpu_pods([None, "500m", "700m"])[1:],
               hpa(metrics=[cpu_util(30)])],
    hpas={"web": status(3, 5, [s_util(50, "500m")], std_up(5, None), NOW)}, scaled={"web": 5},
    events=[rescale_ev(5, ABOVE)], states=[out_state("web", [(3, NOW), (5, NOW)])])

case("initial-readiness-delay-default", about="""
web-0 Ready=False, lastTransition 40 s after start: with the default 30s delay it is not `never ready` -> counted: 5.
""", snapshot=[deploy(), pod("web-0", ready="False", ready_at=t(-560)), podmetrics("web-0", "300m"), *cpu_pods([None, "500m", "700m"])[1:],
               hpa(metrics=[cpu_util(30)])],
    hpas={"web": status(3, 5, [s_util(50, "500m")], std_up(5, None), NOW)}, scaled={"web": 5},
    events=[rescale_ev(5, ABOVE)], states=[out_state("web", [(3, NOW), (5, NOW)])])

case("initial-readiness-delay-flag", about="""
Same pods, --horizontal-pod-autoscaler-initial-readiness-delay 1m: start+60s > transition at +40s -> unready ->
ready 1200/2000=60 vs 30 -> 2.0 -> unready at 0 -> 40 -> ceil(4.0) = 4.
""", snapshot=[deploy(), pod("web-0", ready="False", ready_at=t(-560)), podmetrics("web-0", "300m"), *cpu_pods([None, "500m", "700m"])[1:],
               hpa(metrics=[cpu_util(30)])], args="--horizontal-pod-autoscaler-initial-readiness-delay 1m",
    hpas={"web": status(3, 4, [s_util(60, "600m")], std_up(4, None), NOW)}, scaled={"web": 4},
    events=[rescale_ev(4, ABOVE)], states=[out_state("web", [(3, NOW), (4, NOW)])])

case("no-ready-condition-is-unready", about="""
groupPods: for cpu a pod without a Ready condition is unready. web-0 has none -> as unready-pod-scale-up: 4.
""", snapshot=[deploy(), pod("web-0", ready=None), podmetrics("web-0", "300m"), *cpu_pods([None, "500m", "700m"])[1:],
               hpa(metrics=[cpu_util(30)])],
    hpas={"web": status(3, 4, [s_util(60, "600m")], std_up(4, None), NOW)}, scaled={"web": 4},
    events=[rescale_ev(4, ABOVE)], states=[out_state("web", [(3, NOW), (4, NOW)])])

case("no-start-time-is-unready", about="""
groupPods: for cpu a pod without status.startTime is unready -> 4 as in unready-pod-scale-up.
""", snapshot=[deploy(), pod("web-0", start=None, ready_at=t(-590)), podmetrics("web-0", "300m"), *cpu_pods([None, "500m", "700m"])[1:],
               hpa(metrics=[cpu_util(30)])],
    hpas={"web": status(3, 4, [s_util(60, "600m")], std_up(4, None), NOW)}, scaled={"web": 4},
    events=[rescale_ev(4, ABOVE)], states=[out_state("web", [(3, NOW), (4, NOW)])])

case("ready-unknown-counts", about="""
groupPods: a Ready status of Unknown is not False -> an initialized pod with Ready=Unknown is ready: all count -> 5.
""", snapshot=[deploy(), pod("web-0", ready="Unknown"), podmetrics("web-0", "300m"), *cpu_pods([None, "500m", "700m"])[1:],
               hpa(metrics=[cpu_util(30)])],
    hpas={"web": status(3, 5, [s_util(50, "500m")], std_up(5, None), NOW)}, scaled={"web": 5},
    events=[rescale_ev(5, ABOVE)], states=[out_state("web", [(3, NOW), (5, NOW)])])

case("pending-pod-flips-direction", about="""
GetResourceReplicas: web-2 Pending (no metrics) is unready. Ready 1200/2000 = 60 vs 50 -> 1.2 > 1 with unready -> unready at 0:
1200/3000 = 40 -> 0.8: direction flipped -> current 3. No change.
""", snapshot=[deploy(), *cpu_pods(["600m", "600m"]), pod("web-2", phase="Pending", ready="False"), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(3, 3, [s_util(60, "600m")], legacy_hold(CPU_UTIL))},
    states=[out_state("web", [(3, NOW), (3, NOW)])])

case("failed-pod-ignored", about="""
groupPods: a Failed pod is ignored (its metric too). 2 running pods at 900m of 1 CPU, target 50 -> 1.8 ->
ceil(1.8*2) = 4 (current 3).
""", snapshot=[deploy(), *cpu_pods(["900m", "900m"]), pod("web-2", phase="Failed", ready="False"), podmetrics("web-2", "10m"),
               hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(3, 4, [s_util(90, "900m")], std_up(4, None), NOW)}, scaled={"web": 4},
    events=[rescale_ev(4, ABOVE)], states=[out_state("web", [(3, NOW), (4, NOW)])])

case("deleted-pod-ignored", about="""
groupPods: a pod with deletionTimestamp is ignored even though its metric (5 CPU) exists -> as failed-pod-ignored: 4.
""", snapshot=[deploy(), *cpu_pods(["900m", "900m"]), pod("web-2", deleted=True), podmetrics("web-2", "5"),
               hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(3, 4, [s_util(90, "900m")], std_up(4, None), NOW)}, scaled={"web": 4},
    events=[rescale_ev(4, ABOVE)], states=[out_state("web", [(3, NOW), (4, NOW)])])

case("missing-metrics-scale-down", about="""
TestReplicaCalcMissingMetrics: 4 pods requesting 2 CPU, metrics for 2 (800m, 190m), target 100 -> util 24 -> missing pods at 100%:
4990*100/8000 = 62 -> ceil(0.62*4) = 3. Memory has empty lists (nothing to stabilize against): scale 4 -> 3.
""", snapshot=[deploy(replicas=4), *cpu_pods(["800m", "190m", None, None], requests="2"), hpa(metrics=[cpu_util(100)]),
               state("web", [], [], [])],
    hpas={"web": status(4, 3, [s_util(24, "495m")], std_up(3, None), NOW)}, scaled={"web": 3},
    events=[rescale_ev(3, BELOW)], states=[out_state("web", [(3, NOW)], [], [])])

case("missing-metrics-scale-up", about="""
Metrics for 2 of 3 pods (900m each of 1 CPU), target 50 -> 1.8; missing pod at 0 -> 60 -> 1.2 -> ceil(3.6) = 4.
""", snapshot=[deploy(), *cpu_pods(["900m", "900m", None]), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(3, 4, [s_util(90, "900m")], std_up(4, None), NOW)}, scaled={"web": 4},
    events=[rescale_ev(4, ABOVE)], states=[out_state("web", [(3, NOW), (4, NOW)])])

case("missing-metrics-ratio-one", about="""
Metrics for 2 of 3 pods at exactly the target (500m of 1 CPU, target 50): ratio 1.0 -> missing pods stay out,
within tolerance -> current 3.
""", snapshot=[deploy(), *cpu_pods(["500m", "500m", None]), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(3, 3, [s_util(50, "500m")], legacy_hold(CPU_UTIL))},
    states=[out_state("web", [(3, NOW), (3, NOW)])])

case("missing-metrics-flip-to-current", about="""
Metrics for 1 of 3 pods: 400m of 1 CPU, target 50 -> 0.8; missing pods at 100% of request: 2400*100/3000 = 80 -> 1.6:
direction flipped -> current 3.
""", snapshot=[deploy(), *cpu_pods(["400m", None, None]), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(3, 3, [s_util(40, "400m")], legacy_hold(CPU_UTIL))},
    states=[out_state("web", [(3, NOW), (3, NOW)])])

case("missing-metrics-target-over-100", about="""
TestReplicaCalcMissingMetricsScaleDownTargetOver100: requests 2/2/4/4 CPU; web-0 never ready (400m), web-1 200m, web-2 200m, web-3 missing; target 300.
Ready 400/6000 = 6 -> 0.02; missing filled at 300% of 4000m = 12000m; unready dropped: 12400/10000 = 124 -> 0.4133
-> ceil(0.4133*3) = 2. Empty memory -> 4 -> 2.
""", snapshot=[deploy(replicas=4), pod("web-0", requests="2", ready="False"), podmetrics("web-0", "400m"),
               pod("web-1", requests="2"), podmetrics("web-1", "200m"), pod("web-2", requests="4"), podmetrics("web-2", "200m"),
               pod("web-3", requests="4"), hpa(metrics=[cpu_util(300)]), state("web", [])],
    hpas={"web": status(4, 2, [s_util(6, "200m")], std_up(2, None), NOW)}, scaled={"web": 2},
    events=[rescale_ev(2, BELOW)], states=[out_state("web", [(2, NOW)])])

case("unready-ignored-on-scale-down", about="""
Unready pods only matter when scaling up. web-0 never ready; ready pods 100m each of 1 CPU, target 50 -> util 10 -> 0.2
-> ceil(0.2*2 ready) = 1. Empty memory: 3 -> 1.
""", snapshot=[deploy(), pod("web-0", ready="False"), podmetrics("web-0", "0"), *cpu_pods([None, "100m", "100m"])[1:],
               hpa(metrics=[cpu_util(50)]), state("web", [])],
    hpas={"web": status(3, 1, [s_util(10, "100m")], std_up(1, None), NOW)}, scaled={"web": 1},
    events=[rescale_ev(1, BELOW)], states=[out_state("web", [(1, NOW)])])

case("all-pods-unready", about="""
Every pod is never-ready -> all cpu metrics dropped -> `did not receive metrics for targeted pods (pods might be unready)`.
""", snapshot=[deploy(replicas=2), pod("web-0", ready="False"), podmetrics("web-0", "500m"), pod("web-1", ready="False"),
               podmetrics("web-1", "500m"), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(2, 0, [EMPTY_STATUS], [GET, inactive("FailedGetResourceMetric", "failed to get cpu utilization: did not receive metrics for targeted pods (pods might be unready)")])},
    events=[ev("Warning", "FailedGetResourceMetric", "failed to get cpu utilization: did not receive metrics for targeted pods (pods might be unready)"),
            ev("Warning", "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: did not receive metrics for targeted pods (pods might be unready)")],
    states=[out_state("web", [(2, NOW)])])

NEW = t(-120)  # a pod started 2 minutes ago (inside the 5m CPU initialization period)
case("cpu-init-sample-before-ready", about="""
groupPods (initializing pod): web-2 started 2m ago, Ready=True since 40s ago, sample at -15s over 30s: -15s < -40s+30s -> unready.
Ready 1800/2000 = 90 vs 50 -> 1.8, unready at 0: 1800/3000 = 60 -> 1.2 -> ceil(3.6) = 4.
""", snapshot=[deploy(), *cpu_pods(["900m", "900m"]), pod("web-2", start=NEW, ready_at=t(-40)), podmetrics("web-2", "900m"),
               hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(3, 4, [s_util(90, "900m")], std_up(4, None), NOW)}, scaled={"web": 4},
    events=[rescale_ev(4, ABOVE)], states=[out_state("web", [(3, NOW), (4, NOW)])])

case("cpu-init-sample-after-ready", about="""
Initializing web-2 Ready=True since 60s ago: sample -15s is not before -60s+30s -> ready. All at 900m -> 1.8 -> ceil(5.4) = 6;
legacy limit max(6,4) = 6 -> within.
""", snapshot=[deploy(), *cpu_pods(["900m", "900m"]), pod("web-2", start=NEW, ready_at=t(-60)), podmetrics("web-2", "900m"),
               hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(3, 6, [s_util(90, "900m")], std_up(6, None), NOW)}, scaled={"web": 6},
    events=[rescale_ev(6, ABOVE)], states=[out_state("web", [(3, NOW), (6, NOW)])])

case("cpu-init-period-flag", about="""
As cpu-init-sample-before-ready, with --horizontal-pod-autoscaler-cpu-initialization-period 1m: web-2 (2m old) is
initialized and Ready=True -> ready -> 6.
""", snapshot=[deploy(), *cpu_pods(["900m", "900m"]), pod("web-2", start=NEW, ready_at=t(-40)), podmetrics("web-2", "900m"),
               hpa(metrics=[cpu_util(50)])], args="--horizontal-pod-autoscaler-cpu-initialization-period 1m",
    hpas={"web": status(3, 6, [s_util(90, "900m")], std_up(6, None), NOW)}, scaled={"web": 6},
    events=[rescale_ev(6, ABOVE)], states=[out_state("web", [(3, NOW), (6, NOW)])])

case("cpu-init-ready-false", about="""
Initializing pod with Ready=False is unready whatever its sample: web-2 -> as cpu-init-sample-before-ready: 4.
""", snapshot=[deploy(), *cpu_pods(["900m", "900m"]), pod("web-2", start=NEW, ready="False", ready_at=t(-100)), podmetrics("web-2", "900m"),
               hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(3, 4, [s_util(90, "900m")], std_up(4, None), NOW)}, scaled={"web": 4},
    events=[rescale_ev(4, ABOVE)], states=[out_state("web", [(3, NOW), (4, NOW)])])

case("pods-in-other-namespace-not-listed", about="""
Pods and metrics of the same labels in namespace `other` do not count for the HPA in `default`: 2 pods at 900m -> 4.
""", snapshot=[deploy(), *cpu_pods(["900m", "900m"]), pod("web-x", ns="other"), podmetrics("web-x", "100m", ns="other"),
               hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(3, 4, [s_util(90, "900m")], std_up(4, None), NOW)}, scaled={"web": 4},
    events=[rescale_ev(4, ABOVE)], states=[out_state("web", [(3, NOW), (4, NOW)])])

# =============================================================== E. Pods (custom) metrics

def qps_pods(values, prefix="web", selector_labels=None, ready="True"):
    pods = [pod(f"{prefix}-{i}", ready=ready) for i in range(len(values))]
    items = [pod_value(f"{prefix}-{i}", "qps", v, selector_labels) for i, v in enumerate(values) if v is not None]
    return [*pods, custom_list(items)]


case("pods-metric-scale-up-limited", about="""
TestReplicaCalcScaleUpCMUnreadyHotCpuScaleWouldScaleDown: values 50/15/30, target 15 -> floor(95000m/3) = 31666m -> 2.111 -> ceil(6.33) = 7;
legacy limit max(2*3,4) = 6 < max 10 -> 6 with ScalingLimited True ScaleUpLimit.
""", snapshot=[deploy(), *qps_pods(["50", "15", "30"]), hpa(metrics=[pods_m("qps", "15")])],
    hpas={"web": status(3, 6, [s_pods("qps", "31666m")], std_up(6, None, "pods metric qps", "ScaleUpLimit"), NOW)},
    scaled={"web": 6}, events=[rescale_ev(6, "pods metric qps above target")], states=[out_state("web", [(3, NOW), (7, NOW)])])

case("pods-metric-missing-scale-down", about="""
GetMetricReplicas: values 5 and 5, third pod missing, target 10 -> 0.5; missing pod gets the target (10): 20000m/3 = 6666m ->
0.6666 -> ceil(1.9998) = 2. Empty memory -> 3 -> 2.
""", snapshot=[deploy(), *qps_pods(["5", "5", None]), hpa(metrics=[pods_m("qps", "10")]), state("web", [])],
    hpas={"web": status(3, 2, [s_pods("qps", "5")], std_up(2, None, "pods metric qps"), NOW)},
    scaled={"web": 2}, events=[rescale_ev(2, "All metrics below target")], states=[out_state("web", [(2, NOW)])])

case("pods-metric-readiness-irrelevant", about="""
groupPods: readiness is not consulted for Pods metrics: never-ready pods with values 20,20 of target 10 -> 2.0 -> 4.
""", snapshot=[deploy(replicas=2), *qps_pods(["20", "20"], ready="False"), hpa(metrics=[pods_m("qps", "10")])],
    hpas={"web": status(2, 4, [s_pods("qps", "20")], std_up(4, None, "pods metric qps"), NOW)},
    scaled={"web": 4}, events=[rescale_ev(4, "pods metric qps above target")], states=[out_state("web", [(2, NOW), (4, NOW)])])

case("pods-metric-selector", about="""
Series labelled verb=GET (30, 30) and verb=POST (1, 1) on the same pods; the source selects verb=GET:
average 30 vs target 10 -> 3.0 -> ceil(6) = 6; legacy limit max(2*2,4) = 4 -> ScaleUpLimit.
""", snapshot=[deploy(replicas=2), pod("web-0"), pod("web-1"), custom_list(
        [pod_value("web-0", "qps", "30", {"verb": "GET"}), pod_value("web-1", "qps", "30", {"verb": "GET"}),
         pod_value("web-0", "qps", "1", {"verb": "POST"}), pod_value("web-1", "qps", "1", {"verb": "POST"})]),
    hpa(metrics=[pods_m("qps", "10", {"matchLabels": {"verb": "GET"}})])],
    hpas={"web": status(2, 4, [s_pods("qps", "30", {"matchLabels": {"verb": "GET"}})], std_up(4, None, "pods metric qps", "ScaleUpLimit"), NOW)},
    scaled={"web": 4}, events=[rescale_ev(4, "pods metric qps above target")], states=[out_state("web", [(2, NOW), (6, NOW)])])

case("pods-metric-other-pods-ignored", about="""
Items describing pods the HPA does not select (app=other) are not served: web-0/web-1 at 10 with target 10 -> 1.0 -> 2.
""", snapshot=[deploy(replicas=2), pod("web-0"), pod("web-1"), pod("other-0", app="other"),
               custom_list([pod_value("web-0", "qps", "10"), pod_value("web-1", "qps", "10"), pod_value("other-0", "qps", "500")]),
               hpa(metrics=[pods_m("qps", "10")])],
    hpas={"web": status(2, 2, [s_pods("qps", "10")], legacy_hold("pods metric qps"))},
    states=[out_state("web", [(2, NOW), (2, NOW)])])

NO_CUSTOM = "unable to get metric qps: no metrics returned from custom metrics API"
case("pods-metric-no-data", about="""
No MetricValueList: FailedGetPodsMetric with the calculator's text; FailedComputeMetricsReplicas wraps
`failed to get pods metric value: ...`.
""", snapshot=[deploy(), pod("web-0"), hpa(metrics=[pods_m("qps", "10")])],
    hpas={"web": status(3, 0, [EMPTY_STATUS], [GET, inactive("FailedGetPodsMetric", NO_CUSTOM)])},
    events=[ev("Warning", "FailedGetPodsMetric", NO_CUSTOM),
            ev("Warning", "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first error is: failed to get pods metric value: " + NO_CUSTOM)],
    states=[out_state("web", [(3, NOW)])])

case("pods-metric-missing-scale-up", about="""
values 30, 30, third pod missing, target 10 -> 3.0 -> missing at 0: 60000m/3 = 20000m -> 2.0 -> ceil(6) = 6.
""", snapshot=[deploy(), *qps_pods(["30", "30", None]), hpa(metrics=[pods_m("qps", "10")])],
    hpas={"web": status(3, 6, [s_pods("qps", "30")], std_up(6, None, "pods metric qps"), NOW)},
    scaled={"web": 6}, events=[rescale_ev(6, "pods metric qps above target")], states=[out_state("web", [(3, NOW), (6, NOW)])])

# =============================================================== F. Object metrics (GetObjectMetricReplicas, GetObjectPerPodMetricReplicas)

SVC = "Service metric requests"
case("object-value-scale-up", about="""
Object Value on Service/front: 20 vs target 10 -> 2.0 x 3 ready pods -> 6 (legacy limit 6).
""", snapshot=[deploy(), *[pod(f"web-{i}") for i in range(3)], custom_list([object_value("Service", "front", "requests", "20")]),
               hpa(metrics=[obj_value("Service", "front", "requests", "10")])],
    hpas={"web": status(3, 6, [s_obj("Service", "front", "requests", value="20")], std_up(6, None, SVC), NOW)},
    scaled={"web": 6}, events=[rescale_ev(6, SVC + " above target")], states=[out_state("web", [(3, NOW), (6, NOW)])])

case("object-value-ready-pods-only", about="""
TestReplicaCalcScaleUpCMObjectIgnoresUnreadyPods: 2 of 3 pods not Ready; value 50 vs 10 -> 5.0 x 1 ready pod = 5.
""", snapshot=[deploy(), pod("web-0"), pod("web-1", ready="False"), pod("web-2", ready="False"),
               custom_list([object_value("Service", "front", "requests", "50")]),
               hpa(metrics=[obj_value("Service", "front", "requests", "10")])],
    hpas={"web": status(3, 5, [s_obj("Service", "front", "requests", value="50")], std_up(5, None, SVC), NOW)},
    scaled={"web": 5}, events=[rescale_ev(5, SVC + " above target")], states=[out_state("web", [(3, NOW), (5, NOW)])])

case("object-value-within-tolerance", about="""
Object Value 10500m vs 10 -> 1.05 within -> current 3.
""", snapshot=[deploy(), *[pod(f"web-{i}") for i in range(3)], custom_list([object_value("Service", "front", "requests", "10500m")]),
               hpa(metrics=[obj_value("Service", "front", "requests", "10")])],
    hpas={"web": status(3, 3, [s_obj("Service", "front", "requests", value="10500m")], legacy_hold(SVC))},
    states=[out_state("web", [(3, NOW), (3, NOW)])])

case("object-average-value", about="""
TestReplicaCalcScaleDownPerPodCMObject: statusReplicas 5, value 6 vs averageValue 2 -> ratio 6/(2*5) = 0.6 -> ceil(6/2) = 3; status averageValue
ceil(6000m/5) = 1200m. Metric name reuses the external wording: `external metric requests(nil)`. Empty memory: 5 -> 3.
""", snapshot=[deploy(replicas=5), *[pod(f"web-{i}") for i in range(5)], custom_list([object_value("Service", "front", "requests", "6")]),
               hpa(metrics=[obj_avg("Service", "front", "requests", "2")]), state("web", [])],
    hpas={"web": status(5, 3, [s_obj("Service", "front", "requests", avg="1200m")], std_up(3, None, "external metric requests(nil)"), NOW)},
    scaled={"web": 3}, events=[rescale_ev(3, BELOW)], states=[out_state("web", [(3, NOW)])])

case("object-metric-selector", about="""
Two series for Service/front: path=/api = 40 and path=/static = 1; the source selects path=/api -> 40 vs 20 -> 2.0 x 2 = 4.
""", snapshot=[deploy(replicas=2), pod("web-0"), pod("web-1"), custom_list([
        object_value("Service", "front", "requests", "1", selector_labels={"path": "static"}),
        object_value("Service", "front", "requests", "40", selector_labels={"path": "api"})]),
    hpa(metrics=[obj_value("Service", "front", "requests", "20", selector={"matchLabels": {"path": "api"}})])],
    hpas={"web": status(2, 4, [s_obj("Service", "front", "requests", value="40", selector={"matchLabels": {"path": "api"}})], std_up(4, None, SVC), NOW)},
    scaled={"web": 4}, events=[rescale_ev(4, SVC + " above target")], states=[out_state("web", [(2, NOW), (4, NOW)])])

OBJ_ERR = ("unable to get metric requests: Service on default front/unable to fetch metrics from custom metrics API: "
           "the server could not find the metric requests for services front")
case("object-metric-no-data", about="""
No item describes Service/front (only Service/back): FailedGetObjectMetric; the calculator's text keeps upstream's
argument-order quirk `unable to get metric <name>: <kind> on <ns> <name>/<err>` (GetObjectMetricReplicas).
""", snapshot=[deploy(), pod("web-0"), custom_list([object_value("Service", "back", "requests", "20")]),
               hpa(metrics=[obj_value("Service", "front", "requests", "10")])],
    hpas={"web": status(3, 0, [EMPTY_STATUS], [GET, inactive("FailedGetObjectMetric", OBJ_ERR)])},
    events=[ev("Warning", "FailedGetObjectMetric", OBJ_ERR),
            ev("Warning", "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first error is: failed to get object metric value: " + OBJ_ERR)],
    states=[out_state("web", [(3, NOW)])])

case("object-value-no-ready-pods", about="""
GetObjectMetricReplicas: all pods not Ready -> ready count 0 -> proposal ceil(2.0*0) = 0; legacy: stabilize max(0, 3@now) = 3 ->
ScaleDownStabilized, no change (min 1).
""", snapshot=[deploy(), *[pod(f"web-{i}", ready="False") for i in range(3)], custom_list([object_value("Service", "front", "requests", "20")]),
               hpa(metrics=[obj_value("Service", "front", "requests", "10")])],
    hpas={"web": status(3, 3, [s_obj("Service", "front", "requests", value="20")], legacy_hold(SVC, "ScaleDownStabilized"))},
    states=[out_state("web", [(3, NOW), (0, NOW)])])

# =============================================================== G. External metrics (GetExternalMetricReplicas)

EXT = "external metric queue(nil)"
case("external-value-sum", about="""
External Value: series 3000m + 5600m = 8600m vs 4400m -> 1.9545 x 3 ready pods = 5.86 -> 6.
""", snapshot=[deploy(), *[pod(f"web-{i}") for i in range(3)], external_list([ext_item("queue", "3"), ext_item("queue", "5600m")]),
               hpa(metrics=[ext_value("queue", "4400m")])],
    hpas={"web": status(3, 6, [s_ext("queue", value="8600m")], std_up(6, None, EXT), NOW)},
    scaled={"web": 6}, events=[rescale_ev(6, EXT + " above target")], states=[out_state("web", [(3, NOW), (6, NOW)])])

case("external-value-ready-pods", about="""
TestReplicaCalcScaleUpCMExternalIgnoresUnreadyPods: 8600m vs 4400m -> 1.9545 x 1 ready pod (2 not Ready) = ceil(1.95) = 2; empty memory: 3 -> 2.
""", snapshot=[deploy(), pod("web-0"), pod("web-1", ready="False"), pod("web-2", phase="Pending", ready="False"),
               external_list([ext_item("queue", "8600m")]), hpa(metrics=[ext_value("queue", "4400m")]), state("web", [])],
    hpas={"web": status(3, 2, [s_ext("queue", value="8600m")], std_up(2, None, EXT), NOW)},
    scaled={"web": 2}, events=[rescale_ev(2, BELOW)], states=[out_state("web", [(2, NOW)])])

case("external-average-value", about="""
TestReplicaCalcScaleUpPerPodCMExternal: statusReplicas 3, sum 8600m, per-pod 2150m -> 8600/6450 = 1.33 -> ceil(8600/2150) = 4; status averageValue
ceil(8600/3) = 2867m.
""", snapshot=[deploy(), external_list([ext_item("queue", "8600m")]), hpa(metrics=[ext_avg("queue", "2150m")])],
    hpas={"web": status(3, 4, [s_ext("queue", avg="2867m")], std_up(4, None, EXT), NOW)},
    scaled={"web": 4}, events=[rescale_ev(4, EXT + " above target")], states=[out_state("web", [(3, NOW), (4, NOW)])])

case("external-average-uses-status-replicas", about="""
AverageValue divides by status.replicas (4), not spec.replicas (2): 4000m / (1000m x 4) = 1.0 -> within -> statusReplicas 4.
The proposal 4 > current 2: legacy limit 4 -> scale to 4. Status averageValue 4000m/4 = 1.
""", snapshot=[deploy(replicas=2, status_replicas=4), external_list([ext_item("queue", "4")]), hpa(metrics=[ext_avg("queue", "1")])],
    hpas={"web": status(2, 4, [s_ext("queue", avg="1")], std_up(4, None, EXT), NOW)},
    scaled={"web": 4}, events=[rescale_ev(4, EXT + " above target")], states=[out_state("web", [(2, NOW), (4, NOW)])])

case("external-selector-filters-series", about="""
Series queue=a (10) and queue=b (30); the External source selects queue=b: Value 30 vs 10 -> 3.0 x 2 ready = 6;
a CPU metric (util 90 vs 30 -> 3.0 x 2 = 6) ties and, being first, names the result. Legacy limit 4 -> ScaleUpLimit.
""", snapshot=[deploy(replicas=2), *cpu_pods(["900m", "900m"]),
               external_list([ext_item("queue", "10", {"queue": "a"}), ext_item("queue", "30", {"queue": "b"})]),
               hpa(metrics=[cpu_util(30), ext_value("queue", "10", {"matchLabels": {"queue": "b"}})])],
    hpas={"web": status(2, 4, [s_util(90, "900m"), s_ext("queue", value="30", selector={"matchLabels": {"queue": "b"}})],
                        std_up(4, None, CPU_UTIL, "ScaleUpLimit"), NOW)},
    scaled={"web": 4}, events=[rescale_ev(4, ABOVE)], states=[out_state("web", [(2, NOW), (6, NOW)])])

case("external-selector-expressions", about="""
Selector `queue In (a,b)` sums a (10) + b (30) = 40 but not c (100): Value 40 vs 10 -> 4 x 1 ready pod = 4 (shown in
currentMetrics). The CPU metric (util 90 vs 10 -> 9) is the max, so messages name it (Go's rendering of a selector in
an external metric name is not reproduced exactly). Legacy limit max(2*1,4) = 4 -> 4, ScaleUpLimit.
""", snapshot=[deploy(replicas=1), *cpu_pods(["900m"]),
               external_list([ext_item("queue", "10", {"queue": "a"}), ext_item("queue", "30", {"queue": "b"}), ext_item("queue", "100", {"queue": "c"})]),
               hpa(metrics=[cpu_util(10), ext_value("queue", "10", {"matchExpressions": [{"key": "queue", "operator": "In", "values": ["a", "b"]}]})])],
    hpas={"web": status(1, 4, [s_util(90, "900m"), s_ext("queue", value="40", selector={"matchExpressions": [{"key": "queue", "operator": "In", "values": ["a", "b"]}]})],
                        std_up(4, None, CPU_UTIL, "ScaleUpLimit"), NOW)},
    scaled={"web": 4}, events=[rescale_ev(4, ABOVE)], states=[out_state("web", [(1, NOW), (9, NOW)])])

EXT_ERR = "unable to get external metric default/queue/nil: no metrics returned from external metrics API"
case("external-other-namespace", about="""
An ExternalMetricValueList with metadata.namespace `other` serves only HPAs in `other`: FailedGetExternalMetric.
""", snapshot=[deploy(), pod("web-0"), external_list([ext_item("queue", "10")], ns="other"), hpa(metrics=[ext_value("queue", "1")])],
    hpas={"web": status(3, 0, [EMPTY_STATUS], [GET, inactive("FailedGetExternalMetric", EXT_ERR)])},
    events=[ev("Warning", "FailedGetExternalMetric", EXT_ERR),
            ev("Warning", "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first error is: failed to get queue external metric value: failed to get external metric queue: " + EXT_ERR)],
    states=[out_state("web", [(3, NOW)])])

case("external-same-namespace", about="""
The list with metadata.namespace `default` serves the HPA: 10 vs 5 per pod (AverageValue, statusReplicas 3):
10/15 = 0.667 -> ceil(10/5) = 2; empty memory: 3 -> 2; averageValue ceil(10000m/3) = 3334m.
""", snapshot=[deploy(), external_list([ext_item("queue", "10")], ns="default"), hpa(metrics=[ext_avg("queue", "5")]), state("web", [])],
    hpas={"web": status(3, 2, [s_ext("queue", avg="3334m")], std_up(2, None, EXT), NOW)},
    scaled={"web": 2}, events=[rescale_ev(2, BELOW)], states=[out_state("web", [(2, NOW)])])

case("external-average-no-data", about="""
AverageValue source with no series: the returned error is `failed to get queue external metric: ...`.
""", snapshot=[deploy(), hpa(metrics=[ext_avg("queue", "5")])],
    hpas={"web": status(3, 0, [EMPTY_STATUS], [GET, inactive("FailedGetExternalMetric", EXT_ERR)])},
    events=[ev("Warning", "FailedGetExternalMetric", EXT_ERR),
            ev("Warning", "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first error is: failed to get queue external metric value: failed to get queue external metric: " + EXT_ERR)],
    states=[out_state("web", [(3, NOW)])])

# =============================================================== H. several metrics (computeReplicasForMetrics)

case("multi-max-wins", about="""
CPU 600m of 1 CPU vs 50 -> 1.2 -> ceil(2.4) = 3; pods qps 20 vs 10 -> 4. Max 4 from `pods metric qps` (limit 4).
""", snapshot=[deploy(replicas=2), *cpu_pods(["600m", "600m"]), custom_list([pod_value("web-0", "qps", "20"), pod_value("web-1", "qps", "20")]),
               hpa(metrics=[cpu_util(50), pods_m("qps", "10")])],
    hpas={"web": status(2, 4, [s_util(60, "600m"), s_pods("qps", "20")], std_up(4, None, "pods metric qps"), NOW)},
    scaled={"web": 4}, events=[rescale_ev(4, "pods metric qps above target")], states=[out_state("web", [(2, NOW), (4, NOW)])])

case("multi-tie-first-wins", about="""
pods qps 20 vs 10 -> 4 and CPU 900m vs 50 -> ceil(3.6) = 4 tie: the earlier metric (pods) names the result.
""", snapshot=[deploy(replicas=2), *cpu_pods(["900m", "900m"]), custom_list([pod_value("web-0", "qps", "20"), pod_value("web-1", "qps", "20")]),
               hpa(metrics=[pods_m("qps", "10"), cpu_util(50)])],
    hpas={"web": status(2, 4, [s_pods("qps", "20"), s_util(90, "900m")], std_up(4, None, "pods metric qps"), NOW)},
    scaled={"web": 4}, events=[rescale_ev(4, "pods metric qps above target")], states=[out_state("web", [(2, NOW), (4, NOW)])])

case("multi-four-kinds", about="""
CPU 500m vs 50 -> 1.0 -> 3; pods qps 12 vs 10 -> 1.2 -> ceil(3.6) = 4; Object 25 vs 10 -> 2.5 x 3 = ceil(7.5) = 8;
External AverageValue 9 vs 2 per pod (statusReplicas 3): 9/6 = 1.5 -> ceil(4.5) = 5. Max 8 (Object); legacy limit 6.
""", snapshot=[deploy(), *cpu_pods(["500m"] * 3), custom_list([pod_value(f"web-{i}", "qps", "12") for i in range(3)] +
                                                                 [object_value("Service", "front", "requests", "25")]),
               external_list([ext_item("queue", "9")]),
               hpa(metrics=[cpu_util(50), pods_m("qps", "10"), obj_value("Service", "front", "requests", "10"), ext_avg("queue", "2")])],
    hpas={"web": status(3, 6, [s_util(50, "500m"), s_pods("qps", "12"), s_obj("Service", "front", "requests", value="25"), s_ext("queue", avg="3")],
                        std_up(6, None, SVC, "ScaleUpLimit"), NOW)},
    scaled={"web": 6}, events=[rescale_ev(6, SVC + " above target")], states=[out_state("web", [(3, NOW), (8, NOW)])])

EXT_VALUE_ERR = "failed to get queue external metric value: failed to get external metric queue: " + EXT_ERR
case("multi-one-invalid-scale-up", about="""
TestScaleUpOneMetricEmpty: CPU 400m vs 30 -> 40/30 -> ceil(4.0) = 4 > current 3; the External metric has no data. A partial failure
does not block scaling up: ScalingActive True, scale to 4; the failed metric leaves an empty currentMetrics entry.
""", snapshot=[deploy(), *cpu_pods(["400m"] * 3), hpa(metrics=[cpu_util(30), ext_value("queue", "1")])],
    hpas={"web": status(3, 4, [s_util(40, "400m"), EMPTY_STATUS], std_up(4, None), NOW)},
    scaled={"web": 4}, events=[ev("Warning", "FailedGetExternalMetric", EXT_ERR), rescale_ev(4, ABOVE)],
    states=[out_state("web", [(3, NOW), (4, NOW)])])

case("multi-one-invalid-scale-down", about="""
TestNoScaleDownOneMetricInvalid: current 5, CPU proposes 3 (util 28 vs 50), External fails -> 3 < 5: hard failure, no scaling.
desiredReplicas keeps the previous status value (5); ScalingActive False with the failed metric's reason.
""", snapshot=[deploy(replicas=5), *cpu_pods(["100m", "300m", "500m", "250m", "250m"]),
               hpa(metrics=[cpu_util(50), ext_value("queue", "1")], status=status(5, 5)), state("web", [])],
    hpas={"web": status(5, 5, [s_util(28, "280m"), EMPTY_STATUS], [GET, inactive("FailedGetExternalMetric", EXT_ERR)])},
    events=[ev("Warning", "FailedGetExternalMetric", EXT_ERR),
            ev("Warning", "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 2), first error is: " + EXT_VALUE_ERR)],
    states=[out_state("web", [])])

case("multi-all-invalid", about="""
Both metrics fail: the first failure's condition (pods) and `invalid metrics (2 invalid out of 2), first error is: ...`.
""", snapshot=[deploy(), pod("web-0"), hpa(metrics=[pods_m("qps", "10"), ext_value("queue", "1")])],
    hpas={"web": status(3, 0, [EMPTY_STATUS, EMPTY_STATUS], [GET, inactive("FailedGetPodsMetric", NO_CUSTOM)])},
    events=[ev("Warning", "FailedGetPodsMetric", NO_CUSTOM), ev("Warning", "FailedGetExternalMetric", EXT_ERR),
            ev("Warning", "FailedComputeMetricsReplicas", "invalid metrics (2 invalid out of 2), first error is: failed to get pods metric value: " + NO_CUSTOM)],
    states=[out_state("web", [(3, NOW)])])

case("multi-invalid-proposal-equals-current", about="""
Valid CPU proposes current (within tolerance), External fails: max 3 is not below current 3 -> ValidMetricFound, no change.
""", snapshot=[deploy(), *cpu_pods(["500m"] * 3), hpa(metrics=[cpu_util(50), ext_value("queue", "1")])],
    hpas={"web": status(3, 3, [s_util(50, "500m"), EMPTY_STATUS], legacy_hold(CPU_UTIL))},
    events=[ev("Warning", "FailedGetExternalMetric", EXT_ERR)], states=[out_state("web", [(3, NOW), (3, NOW)])])

# =============================================================== I. min/max limits (reconcileAutoscaler, normalizeDesiredReplicas)

case("legacy-too-many-replicas", about="""
pods qps 30 vs 10 -> 9; max 5 < limit 6 -> upper = max, TooManyReplicas -> 5.
""", snapshot=[deploy(), *qps_pods(["30", "30", "30"]), hpa(metrics=[pods_m("qps", "10")], max_r=5)],
    hpas={"web": status(3, 5, [s_pods("qps", "30")], std_up(5, None, "pods metric qps", "TooManyReplicas"), NOW)},
    scaled={"web": 5}, events=[rescale_ev(5, "pods metric qps above target")], states=[out_state("web", [(3, NOW), (9, NOW)])])

case("legacy-scale-up-limit-four", about="""
current 1, pods qps 100 vs 10 -> 10; legacy limit max(2*1, 4) = 4 -> 4 ScaleUpLimit.
""", snapshot=[deploy(replicas=1), *qps_pods(["100"]), hpa(metrics=[pods_m("qps", "10")])],
    hpas={"web": status(1, 4, [s_pods("qps", "100")], std_up(4, None, "pods metric qps", "ScaleUpLimit"), NOW)},
    scaled={"web": 4}, events=[rescale_ev(4, "pods metric qps above target")], states=[out_state("web", [(1, NOW), (10, NOW)])])

case("legacy-at-max-held", about="""
current 10 = max, CPU 900m vs 50 -> ceil(1.8*10) = 18: limit 20 > max -> TooManyReplicas -> 10, no rescale.
""", snapshot=[deploy(replicas=10), *cpu_pods(["900m"] * 10), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(10, 10, [s_util(90, "900m")], legacy_hold(CPU_UTIL, "ReadyForNewScale", "TooManyReplicas"))},
    states=[out_state("web", [(10, NOW), (18, NOW)])])

case("legacy-too-few-replicas", about="""
current 3, min 2, CPU 100m vs 50 -> 0.2 -> ceil(0.6) = 1; empty memory -> 1 < min -> 2 TooFewReplicas.
""", snapshot=[deploy(), *cpu_pods(["100m"] * 3), hpa(metrics=[cpu_util(50)], min_r=2), state("web", [])],
    hpas={"web": status(3, 2, [s_util(10, "100m")], std_up(2, None, CPU_UTIL, "TooFewReplicas"), NOW)},
    scaled={"web": 2}, events=[rescale_ev(2, BELOW)], states=[out_state("web", [(1, NOW)])])

case("legacy-at-min-held", about="""
current 2 = min, proposal 1 (CPU 100m vs 50, 0.2 x 2 -> 1): TooFewReplicas -> 2, no rescale.
""", snapshot=[deploy(replicas=2), *cpu_pods(["100m"] * 2), hpa(metrics=[cpu_util(50)], min_r=2), state("web", [])],
    hpas={"web": status(2, 2, [s_util(10, "100m")], legacy_hold(CPU_UTIL, "ReadyForNewScale", "TooFewReplicas"))},
    states=[out_state("web", [(1, NOW)])])

case("current-above-max", about="""
reconcileAutoscaler, above maxReplicas: target at 12 with max 10 -> 10, reason `Current number of replicas above Spec.MaxReplicas`; no metrics
(currentMetrics null), no ScalingActive/ScalingLimited; memory just the initial 12@now; no events stored (no behavior).
""", snapshot=[deploy(replicas=12), *cpu_pods(["900m"] * 2), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(12, 10, None, [rescaled(10), stz(False)], NOW)}, scaled={"web": 10},
    events=[rescale_ev(10, "Current number of replicas above Spec.MaxReplicas")], states=[out_state("web", [(12, NOW)])])

case("current-below-min", about="""
reconcileAutoscaler, below minReplicas: target at 1 with min 3 -> 3, reason `Current number of replicas below Spec.MinReplicas`.
""", snapshot=[deploy(replicas=1), *cpu_pods(["10m"]), hpa(metrics=[cpu_util(50)], min_r=3)],
    hpas={"web": status(1, 3, None, [rescaled(3), stz(False)], NOW)}, scaled={"web": 3},
    events=[rescale_ev(3, "Current number of replicas below Spec.MinReplicas")], states=[out_state("web", [(1, NOW)])])

case("current-above-max-with-behavior", about="""
Branch 2 with spec.behavior: the out-of-range correction is stored as a scale-down event of 2 (storeScaleEvent).
""", snapshot=[deploy(replicas=12), hpa(metrics=[cpu_util(50)], behavior={})],
    hpas={"web": status(12, 10, None, [rescaled(10), stz(False)], NOW)}, scaled={"web": 10},
    events=[rescale_ev(10, "Current number of replicas above Spec.MaxReplicas")],
    states=[out_state("web", [(12, NOW)], down=[(2, NOW, False)])])

OLD = t(-3600)
case("current-below-min-keeps-conditions", about="""
Branch 3 leaves ScalingActive/ScalingLimited as they were (with their old lastTransitionTime); AbleToScale stays True
so its lastTransitionTime is kept while reason/message change; currentMetrics is cleared; ScaledToZero False is appended.
""", snapshot=[deploy(replicas=1), hpa(metrics=[cpu_util(50)], min_r=2, status=status(
        2, 2, [s_util(50, "500m")], [able("ReadyForNewScale", OLD), active(CPU_UTIL, OLD), limited("DesiredWithinRange", OLD)], OLD))],
    hpas={"web": status(1, 2, None, [rescaled(2, OLD), active(CPU_UTIL, OLD), limited("DesiredWithinRange", OLD), stz(False)], NOW)},
    scaled={"web": 2}, events=[rescale_ev(2, "Current number of replicas below Spec.MinReplicas")],
    states=[out_state("web", [(1, NOW)])])

# =============================================================== J. legacy stabilization with memory (normalizeDesiredReplicas)

case("legacy-stabilization-history", about="""
TestStabilizeDownscale: current 4, CPU proposes 2 (200m vs 50 -> 0.4 x 4 = 1.6 -> 2); memory {10@-10m, 4@-1m}, window 5m:
max(2, 4) = 4 -> ScaleDownStabilized, no rescale. The old slot (index 0) is overwritten with 2@now.
""", snapshot=[deploy(replicas=4), *cpu_pods(["200m"] * 4), hpa(metrics=[cpu_util(50)]), state("web", [(10, t(-600)), (4, t(-60))])],
    hpas={"web": status(4, 4, [s_util(20, "200m")], legacy_hold(CPU_UTIL, "ScaleDownStabilized"))},
    states=[out_state("web", [(2, NOW), (4, t(-60))])])

case("legacy-stabilization-window-flag", about="""
As legacy-stabilization-history with --horizontal-pod-autoscaler-downscale-stabilization 30s: both entries are old,
the last old index (1) is reused; stabilized 2 -> scale 4 -> 2.
""", snapshot=[deploy(replicas=4), *cpu_pods(["200m"] * 4), hpa(metrics=[cpu_util(50)]), state("web", [(10, t(-600)), (4, t(-60))])],
    args="--horizontal-pod-autoscaler-downscale-stabilization 30s",
    hpas={"web": status(4, 2, [s_util(20, "200m")], std_up(2, None), NOW)}, scaled={"web": 2},
    events=[rescale_ev(2, BELOW)], states=[out_state("web", [(10, t(-600)), (2, NOW)])])

case("legacy-stabilization-raises", about="""
Legacy stabilization takes the max of recent recommendations even above current: memory {6@-4m, 3@-2m}, current 5,
proposal 2 (200m vs 50 x 5 pods) -> 6: ScaleDownStabilized then a rescale to 6 whose reason still says
`All metrics below target` (reason comes from the metric proposal, computeReplicasForMetrics).
""", snapshot=[deploy(replicas=5), *cpu_pods(["200m"] * 5), hpa(metrics=[cpu_util(50)]), state("web", [(6, t(-240)), (3, t(-120))])],
    hpas={"web": status(5, 6, [s_util(20, "200m")], std_up(6, None), NOW)}, scaled={"web": 6},
    events=[rescale_ev(6, BELOW)], states=[out_state("web", [(6, t(-240)), (3, t(-120)), (2, NOW)])])

case("legacy-stabilization-boundary", about="""
An entry exactly at the cutoff (now-5m) is not old (strictly before is old): memory {6@-300s}, current 5, proposal 2 ->
max(2, 6) = 6 -> rescale to 6 (as legacy-stabilization-raises); the entry is kept and 2@now appended.
""", snapshot=[deploy(replicas=5), *cpu_pods(["200m"] * 5), hpa(metrics=[cpu_util(50)]), state("web", [(6, t(-300))])],
    hpas={"web": status(5, 6, [s_util(20, "200m")], std_up(6, None), NOW)}, scaled={"web": 6},
    events=[rescale_ev(6, BELOW)], states=[out_state("web", [(6, t(-300)), (2, NOW)])])

# =============================================================== K. behavior (normalizeDesiredReplicasWithBehaviors, storeScaleEvent)
# Proposals come from an External AverageValue metric `jobs` (target 1 per pod): with statusReplicas = current,
# a value V outside the tolerance band proposes ceil(V/1) = V, independent of pod counts.

JOBS = "external metric jobs(nil)"


def jobs(value, current, **kw):
    return [deploy(replicas=current, **kw), external_list([ext_item("jobs", value)])]


JOBS_M = [ext_avg("jobs", "1")]


def s_jobs(avg):
    return [s_ext("jobs", avg=avg)]


case("behavior-default-scale-up-rate", about="""
TestScalingWithRules: default rules, current 10, proposal 50: max(10+4, ceil(10*2)) = 20 -> ScaleUpLimit. The event (+10) is stored.
""", snapshot=[*jobs("50", 10), hpa(metrics=JOBS_M, max_r=100, behavior={})],
    hpas={"web": status(10, 20, s_jobs("5"), std_up(20, None, JOBS, "ScaleUpLimit"), NOW)}, scaled={"web": 20},
    events=[rescale_ev(20, JOBS + " above target")], states=[out_state("web", [(10, NOW), (50, NOW)], up=[(10, NOW, False)])])

case("behavior-percent-one", about="""
scaleUp Percent 1%/60s, current 3, proposal 30 -> ceil(3*1.01) = 4 (ScaleUpLimit).
""", snapshot=[*jobs("30", 3), hpa(metrics=JOBS_M, behavior={"scaleUp": {"policies": [{"type": "Percent", "value": 1, "periodSeconds": 60}]}})],
    hpas={"web": status(3, 4, s_jobs("10"), std_up(4, None, JOBS, "ScaleUpLimit"), NOW)}, scaled={"web": 4},
    events=[rescale_ev(4, JOBS + " above target")], states=[out_state("web", [(3, NOW), (30, NOW)], up=[(1, NOW, False)])])

case("behavior-scale-down-pods", about="""
scaleDown Pods 5/60s, window 0, current 10, proposal 2, min 1 -> 10-5 = 5 ScaleDownLimit; down event 5.
""", snapshot=[*jobs("2", 10), hpa(metrics=JOBS_M, behavior={"scaleDown": {"stabilizationWindowSeconds": 0,
                                                                          "policies": [{"type": "Pods", "value": 5, "periodSeconds": 60}]}})],
    hpas={"web": status(10, 5, s_jobs("200m"), std_up(5, None, JOBS, "ScaleDownLimit"), NOW)}, scaled={"web": 5},
    events=[rescale_ev(5, BELOW)], states=[out_state("web", [(10, NOW), (2, NOW)], down=[(5, NOW, False)])])

case("behavior-scale-down-percent-past-events", about="""
TestScalingWithRules: scaleDown Percent 50%/120s, past down events 2+4+6 inside the period, current 100, proposal 1:
periodStart 112 -> int(56.0) = 56, ScaleDownLimit. New down event 44 appended.
""", snapshot=[*jobs("1", 100), hpa(metrics=JOBS_M, max_r=200, behavior={"scaleDown": {"stabilizationWindowSeconds": 0,
                                     "policies": [{"type": "Percent", "value": 50, "periodSeconds": 120}]}}),
               state("web", [], [], [(2, t(-30), False), (4, t(-60), False), (6, t(-90), False)])],
    hpas={"web": status(100, 56, s_jobs("10m"), std_up(56, None, JOBS, "ScaleDownLimit"), NOW)}, scaled={"web": 56},
    events=[rescale_ev(56, BELOW)],
    states=[out_state("web", [(1, NOW)], [], [(2, t(-30), False), (4, t(-60), False), (6, t(-90), False), (44, NOW, False)])])

case("behavior-scale-up-percent-past-events", about="""
TestScalingWithRules: scaleUp Percent 300%/300s, past +4 up and -2 down, current 6, proposal 24: periodStart 6-4+2 = 4 ->
ceil(4*4) = 16 ScaleUpLimit. Up event 10 appended.
""", snapshot=[*jobs("24", 6), hpa(metrics=JOBS_M, max_r=100, behavior={"scaleUp": {"policies": [{"type": "Percent", "value": 300, "periodSeconds": 300}]}}),
               state("web", [], [(4, t(-100), False)], [(2, t(-50), False)])],
    hpas={"web": status(6, 16, s_jobs("4"), std_up(16, None, JOBS, "ScaleUpLimit"), NOW)}, scaled={"web": 16},
    events=[rescale_ev(16, JOBS + " above target")],
    states=[out_state("web", [(24, NOW)], [(4, t(-100), False), (10, NOW, False)], [(2, t(-50), False)])])

case("behavior-scale-down-limit-above-current", about="""
TestScalingWithRules: scaleDown Percent 10%/120s after down events 10+10+10, current 100, proposal 1: int(130*0.9) = 117 > current ->
capped to 100 -> held at 100, ScalingLimited True ScaleDownLimit, no rescale.
""", snapshot=[*jobs("1", 100), hpa(metrics=JOBS_M, max_r=200, behavior={"scaleDown": {"stabilizationWindowSeconds": 0,
                                     "policies": [{"type": "Percent", "value": 10, "periodSeconds": 120}]}}),
               state("web", [], [], [(10, t(-30), False), (10, t(-60), False), (10, t(-90), False)])],
    hpas={"web": status(100, 100, s_jobs("10m"), legacy_hold(JOBS, "ReadyForNewScale", "ScaleDownLimit"))},
    states=[out_state("web", [(1, NOW)], [], [(10, t(-30), False), (10, t(-60), False), (10, t(-90), False)])])

case("behavior-up-stabilization-window", about="""
TestNormalizeDesiredReplicasWithBehavior: memory {4@-2m, 5@-1m}, current 1, proposal 7, up-window 300s, down-window 0: min(7,4,5) = 4 (ScaleUpStabilized),
rate limit max(1+4, 2) = 5 -> 4 within. Rescale 4; up event 3; 7@now appended.
""", snapshot=[*jobs("7", 1), hpa(metrics=JOBS_M, behavior={"scaleUp": {"stabilizationWindowSeconds": 300}, "scaleDown": {"stabilizationWindowSeconds": 0}}),
               state("web", [(4, t(-120)), (5, t(-60))])],
    hpas={"web": status(1, 4, s_jobs("7"), std_up(4, None, JOBS), NOW)}, scaled={"web": 4},
    events=[rescale_ev(4, JOBS + " above target")],
    states=[out_state("web", [(4, t(-120)), (5, t(-60)), (7, NOW)], up=[(3, NOW, False)])])

case("behavior-up-stabilization-condition", about="""
As behavior-up-stabilization-window but the up rate allows only +1 (Pods 1/60s): stabilized 4 is limited to 2;
the final AbleToScale is SucceededRescale, ScalingLimited True ScaleUpLimit.
""", snapshot=[*jobs("7", 1), hpa(metrics=JOBS_M, behavior={"scaleUp": {"stabilizationWindowSeconds": 300, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]},
                                                             "scaleDown": {"stabilizationWindowSeconds": 0}}),
               state("web", [(4, t(-120)), (5, t(-60))])],
    hpas={"web": status(1, 2, s_jobs("7"), std_up(2, None, JOBS, "ScaleUpLimit"), NOW)}, scaled={"web": 2},
    events=[rescale_ev(2, JOBS + " above target")],
    states=[out_state("web", [(4, t(-120)), (5, t(-60)), (7, NOW)], up=[(1, NOW, False)])])

case("behavior-stabilization-clamp", about="""
TestNormalizeDesiredReplicasWithBehavior: memory {2@-100m, 3@-3m}, current 2, proposal 1, both windows 300s: clamp 2 into [1, 3] -> 2,
ScaleDownStabilized; the -100m slot (older than both windows) is reused for 1@now.
""", snapshot=[*jobs("1", 2), hpa(metrics=JOBS_M, behavior={"scaleUp": {"stabilizationWindowSeconds": 300}, "scaleDown": {"stabilizationWindowSeconds": 300}}),
               state("web", [(2, t(-6000)), (3, t(-180))])],
    hpas={"web": status(2, 2, s_jobs("500m"), legacy_hold(JOBS, "ScaleDownStabilized"))},
    states=[out_state("web", [(1, NOW), (3, t(-180))])])

case("behavior-select-min-up", about="""
scaleUp selectPolicy Min over Pods 4/60s and Percent 100/60s: current 10, proposal 50 -> min(14, 20) = 14.
""", snapshot=[*jobs("50", 10), hpa(metrics=JOBS_M, max_r=100, behavior={"scaleUp": {"selectPolicy": "Min", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 60}, {"type": "Percent", "value": 100, "periodSeconds": 60}]}})],
    hpas={"web": status(10, 14, s_jobs("5"), std_up(14, None, JOBS, "ScaleUpLimit"), NOW)}, scaled={"web": 14},
    events=[rescale_ev(14, JOBS + " above target")], states=[out_state("web", [(10, NOW), (50, NOW)], up=[(4, NOW, False)])])

case("behavior-select-disabled-up", about="""
scaleUp selectPolicy Disabled: the limit is current (10) -> held, ScalingLimited True ScaleUpLimit (max 100 > 10).
""", snapshot=[*jobs("50", 10), hpa(metrics=JOBS_M, max_r=100, behavior={"scaleUp": {"selectPolicy": "Disabled"}})],
    hpas={"web": status(10, 10, s_jobs("5"), legacy_hold(JOBS, "ReadyForNewScale", "ScaleUpLimit"))},
    states=[out_state("web", [(10, NOW), (50, NOW)])])

case("behavior-select-disabled-down", about="""
scaleDown selectPolicy Disabled (window 0): proposal 2 < current 10 -> limit current -> held, ScaleDownLimit.
""", snapshot=[*jobs("2", 10), hpa(metrics=JOBS_M, behavior={"scaleDown": {"selectPolicy": "Disabled", "stabilizationWindowSeconds": 0}})],
    hpas={"web": status(10, 10, s_jobs("200m"), legacy_hold(JOBS, "ReadyForNewScale", "ScaleDownLimit"))},
    states=[out_state("web", [(10, NOW), (2, NOW)])])

DOWN2 = [{"type": "Pods", "value": 2, "periodSeconds": 60}, {"type": "Percent", "value": 50, "periodSeconds": 60}]
case("behavior-select-min-down", about="""
scaleDown Min over Pods 2/60s (-> 8) and Percent 50/60s (-> 5): the smallest change, 8.
""", snapshot=[*jobs("2", 10), hpa(metrics=JOBS_M, behavior={"scaleDown": {"selectPolicy": "Min", "stabilizationWindowSeconds": 0, "policies": DOWN2}})],
    hpas={"web": status(10, 8, s_jobs("200m"), std_up(8, None, JOBS, "ScaleDownLimit"), NOW)}, scaled={"web": 8},
    events=[rescale_ev(8, BELOW)], states=[out_state("web", [(10, NOW), (2, NOW)], down=[(2, NOW, False)])])

case("behavior-select-max-down", about="""
scaleDown Max over Pods 2/60s (-> 8) and Percent 50/60s (-> 5): the largest change, 5.
""", snapshot=[*jobs("2", 10), hpa(metrics=JOBS_M, behavior={"scaleDown": {"selectPolicy": "Max", "stabilizationWindowSeconds": 0, "policies": DOWN2}})],
    hpas={"web": status(10, 5, s_jobs("200m"), std_up(5, None, JOBS, "ScaleDownLimit"), NOW)}, scaled={"web": 5},
    events=[rescale_ev(5, BELOW)], states=[out_state("web", [(10, NOW), (2, NOW)], down=[(5, NOW, False)])])

case("behavior-down-window-from-flag", about="""
behavior {}: scaleDown window unset -> the 5m flag value; a fresh controller remembers 4@now -> proposal 1 is held at 4
(ScaleDownStabilized, DesiredWithinRange).
""", snapshot=[*jobs("1", 4), hpa(metrics=JOBS_M, behavior={})],
    hpas={"web": status(4, 4, s_jobs("250m"), legacy_hold(JOBS, "ScaleDownStabilized"))},
    states=[out_state("web", [(4, NOW), (1, NOW)])])

case("behavior-down-window-flag-short", about="""
behavior {} with --horizontal-pod-autoscaler-downscale-stabilization 1m and memory {4@-2m}: nothing in the window ->
1; default down policy Percent 100 gives limit 0 < min -> lower = min 1 (TooFewReplicas candidate), 1 is not below -> within.
The -2m slot is reused.
""", snapshot=[*jobs("1", 4), hpa(metrics=JOBS_M, behavior={}), state("web", [(4, t(-120))])],
    args="--horizontal-pod-autoscaler-downscale-stabilization 1m",
    hpas={"web": status(4, 1, s_jobs("250m"), std_up(1, None, JOBS), NOW)}, scaled={"web": 1},
    events=[rescale_ev(1, BELOW)], states=[out_state("web", [(1, NOW)], down=[(3, NOW, False)])])

case("behavior-events-outdated-reuse", about="""
Default up rules (longest period 15s); past up events {2@-10m, 3@-5s}: periodStart 5-3 = 2 -> max(2+4, ceil(2*2)) = 6.
On storing, the -10m event is flagged outdated and its slot takes the new event (+1).
""", snapshot=[*jobs("20", 5), hpa(metrics=JOBS_M, behavior={}), state("web", [], [(2, t(-600), False), (3, t(-5), False)])],
    hpas={"web": status(5, 6, s_jobs("4"), std_up(6, None, JOBS, "ScaleUpLimit"), NOW)}, scaled={"web": 6},
    events=[rescale_ev(6, JOBS + " above target")],
    states=[out_state("web", [(20, NOW)], [(1, NOW, False), (3, t(-5), False)])])

case("behavior-too-many-replicas", about="""
Default up rules, current 8, proposal 50, max 10: limit max(12, 16) = 16 >= max -> upper = max, TooManyReplicas -> 10.
""", snapshot=[*jobs("50", 8), hpa(metrics=JOBS_M, behavior={})],
    hpas={"web": status(8, 10, s_jobs("6250m"), std_up(10, None, JOBS, "TooManyReplicas"), NOW)}, scaled={"web": 10},
    events=[rescale_ev(10, JOBS + " above target")], states=[out_state("web", [(8, NOW), (50, NOW)], up=[(2, NOW, False)])])

case("behavior-too-few-replicas", about="""
scaleDown window 0, default Percent 100: current 4, proposal 1, min 3 -> limit 0, min 3 not < 0 -> lower = min,
TooFewReplicas -> 3. Down event 1.
""", snapshot=[*jobs("1", 4), hpa(metrics=JOBS_M, min_r=3, behavior={"scaleDown": {"stabilizationWindowSeconds": 0}})],
    hpas={"web": status(4, 3, s_jobs("250m"), std_up(3, None, JOBS, "TooFewReplicas"), NOW)}, scaled={"web": 3},
    events=[rescale_ev(3, BELOW)], states=[out_state("web", [(4, NOW), (1, NOW)], down=[(1, NOW, False)])])

case("behavior-up-window-fresh-controller", about="""
scaleUp window 60s and no memory: the pass records 2@now first, so the up-window minimum is 2 -> held at 2
(ScaleUpStabilized).
""", snapshot=[*jobs("8", 2), hpa(metrics=JOBS_M, behavior={"scaleUp": {"stabilizationWindowSeconds": 60}})],
    hpas={"web": status(2, 2, s_jobs("4"), legacy_hold(JOBS, "ScaleUpStabilized"))},
    states=[out_state("web", [(2, NOW), (8, NOW)])])

case("behavior-tolerance-up", about="""
Tolerances.isWithin: behavior.scaleUp.tolerance 0.5 (printed canonically as 500m): CPU 70 vs 50 = 1.4 within [0.9, 1.5] -> 2 held.
""", snapshot=[deploy(replicas=2), *cpu_pods(["700m", "700m"]), hpa(metrics=[cpu_util(50)], behavior={"scaleUp": {"tolerance": "0.5"}})],
    spec={"web": defaulted_spec({**hpa(metrics=[cpu_util(50)], behavior={"scaleUp": {"tolerance": "500m"}})["spec"]})},
    hpas={"web": status(2, 2, [s_util(70, "700m")], legacy_hold(CPU_UTIL))}, states=[out_state("web", [(2, NOW), (2, NOW)])])

case("behavior-tolerance-down", about="""
behavior.scaleDown.tolerance 0.5: CPU 30 vs 50 = 0.6 >= 0.5 -> within -> 2 held.
""", snapshot=[deploy(replicas=2), *cpu_pods(["300m", "300m"]), hpa(metrics=[cpu_util(50)], behavior={"scaleDown": {"tolerance": "0.5"}})],
    spec={"web": defaulted_spec({**hpa(metrics=[cpu_util(50)], behavior={"scaleDown": {"tolerance": "500m"}})["spec"]})},
    hpas={"web": status(2, 2, [s_util(30, "300m")], legacy_hold(CPU_UTIL))}, states=[out_state("web", [(2, NOW), (2, NOW)])])

case("behavior-tolerance-zero-up", about="""
scaleUp tolerance 0: CPU 51 vs 50 = 1.02 > 1.0 -> ceil(2.04) = 3 (the global 0.1 would have held).
""", snapshot=[deploy(replicas=2), *cpu_pods(["510m", "510m"]), hpa(metrics=[cpu_util(50)], behavior={"scaleUp": {"tolerance": "0"}})],
    hpas={"web": status(2, 3, [s_util(51, "510m")], std_up(3, None), NOW)}, scaled={"web": 3},
    events=[rescale_ev(3, ABOVE)], states=[out_state("web", [(2, NOW), (3, NOW)], up=[(1, NOW, False)])])

case("behavior-tolerance-gate-off", about="""
--feature-gates HPAConfigurableTolerance=false: the API drops the tolerance field (registry strategy.go) and the controller uses
0.1: CPU 70 vs 50 = 1.4 -> ceil(2.8) = 3.
""", snapshot=[deploy(replicas=2), *cpu_pods(["700m", "700m"]), hpa(metrics=[cpu_util(50)], behavior={"scaleUp": {"tolerance": "0.5"}})],
    args="--feature-gates HPAConfigurableTolerance=false",
    spec={"web": defaulted_spec({**hpa(metrics=[cpu_util(50)], behavior={})["spec"]})},
    hpas={"web": status(2, 3, [s_util(70, "700m")], std_up(3, None), NOW)}, scaled={"web": 3},
    events=[rescale_ev(3, ABOVE)], states=[out_state("web", [(2, NOW), (3, NOW)], up=[(1, NOW, False)])])

case("behavior-partial-defaulting", about="""
SetDefaults_HorizontalPodAutoscaler: behavior {scaleDown: {stabilizationWindowSeconds: 60}} -> scaleUp fully defaulted, scaleDown keeps 60 and gets
selectPolicy Max and Percent 100/15s. Within tolerance -> held.
""", snapshot=[deploy(replicas=2), *cpu_pods(["500m", "500m"]), hpa(metrics=[cpu_util(50)], behavior={"scaleDown": {"stabilizationWindowSeconds": 60}})],
    spec={"web": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}, "minReplicas": 1, "maxReplicas": 10,
                  "metrics": [cpu_util(50)], "behavior": {
                      "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                          {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]},
                      "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "policies": [
                          {"type": "Percent", "value": 100, "periodSeconds": 15}]}}}},
    hpas={"web": status(2, 2, [s_util(50, "500m")], legacy_hold(CPU_UTIL))}, states=[out_state("web", [(2, NOW), (2, NOW)])])

case("behavior-policies-replace-defaults", about="""
SetDefaults_HorizontalPodAutoscaler: user policies replace the whole default list: scaleUp [Pods 1/60s] only -> current 2, CPU 900 vs 50 -> 4 -> 3.
""", snapshot=[deploy(replicas=2), *cpu_pods(["900m", "900m"]), hpa(metrics=[cpu_util(50)], behavior={"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}})],
    hpas={"web": status(2, 3, [s_util(90, "900m")], std_up(3, None, CPU_UTIL, "ScaleUpLimit"), NOW)}, scaled={"web": 3},
    events=[rescale_ev(3, ABOVE)], states=[out_state("web", [(2, NOW), (4, NOW)], up=[(1, NOW, False)])])

# =============================================================== L. zero replicas (reconcileAutoscaler, KEP-2021's ScaledToZero; HPAScaleToZero on in pyhpa)

DISABLED = cond("ScalingActive", "False", "ScalingDisabled")
case("maintenance-mode", about="""
reconcileAutoscaler, scaling disabled: target scaled to 0 by hand and no ScaledToZero=True marker -> scaling disabled: desired 0, no metrics,
ScalingActive False ScalingDisabled. currentReplicas 0 is omitted (omitempty in v2).
""", snapshot=[deploy(replicas=0), *cpu_pods(["900m"]), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(0, 0, None, [GET, DISABLED])}, states=[out_state("web", [(0, NOW)])])

case("maintenance-mode-gate-off-removes-marker", about="""
--feature-gates HPAScaleToZero=false, target at 0, an old ScaledToZero=True condition: disabled, and the marker is
removed; AbleToScale stays True (its old lastTransitionTime kept).
""", snapshot=[deploy(replicas=0), hpa(metrics=[ext_value("queue", "1")], status=status(0, 0, None, [rescaled(0, OLD), stz(True, OLD)], OLD))],
    args="--feature-gates HPAScaleToZero=false",
    hpas={"web": status(0, 0, None, [able("SucceededGetScale", OLD), DISABLED], OLD)}, states=[out_state("web", [(0, NOW)])])

case("zero-without-marker-gate-on", about="""
Gate on, minReplicas 0 with an External metric, target at 0 but no ScaledToZero=True -> disabled (paused target).
""", snapshot=[deploy(replicas=0), external_list([ext_item("queue", "5")]), hpa(metrics=[ext_value("queue", "1")], min_r=0)],
    hpas={"web": status(0, 0, None, [GET, DISABLED])}, states=[out_state("web", [(0, NOW)])])

case("scale-to-zero", about="""
KEP-2021's ScaledToZero: minReplicas 0, External Value 0 vs 1 -> ratio 0 x 2 ready = 0; empty memory -> 0 (within [0, limit 4]).
Rescale to 0 and ScaledToZero=True.
""", snapshot=[deploy(replicas=2), pod("web-0"), pod("web-1"), external_list([ext_item("queue", "0")]),
               hpa(metrics=[ext_value("queue", "1")], min_r=0), state("web", [])],
    hpas={"web": status(2, 0, [s_ext("queue", value="0")], [rescaled(0), active(EXT), limited("DesiredWithinRange"), stz(True)], NOW)},
    scaled={"web": 0}, events=[rescale_ev(0, BELOW)], states=[out_state("web", [(0, NOW)])])

ZERO_CONDS = [rescaled(0, OLD), active(EXT, OLD), limited("DesiredWithinRange", OLD), stz(True, OLD)]
case("scale-from-zero", about="""
reconcileAutoscaler: gate on, ScaledToZero=True, minReplicas 0, External metric -> compute: current 0 -> ceil(ratio) = ceil(5/1) = 5
(no tolerance, no pod count); legacy limit int(max(0, 4)) = 4 -> ScaleUpLimit. ScaledToZero turns False.
""", snapshot=[deploy(replicas=0), external_list([ext_item("queue", "5")]),
               hpa(metrics=[ext_value("queue", "1")], min_r=0, status=status(2, 0, [s_ext("queue", value="0")], ZERO_CONDS, OLD))],
    hpas={"web": status(0, 4, [s_ext("queue", value="5")], [rescaled(4, OLD), active(EXT, OLD), limited("ScaleUpLimit"), stz(False)], NOW)},
    scaled={"web": 4}, events=[rescale_ev(4, EXT + " above target")], states=[out_state("web", [(0, NOW), (5, NOW)])])

case("scale-from-zero-idle", about="""
ScaledToZero=True, minReplicas 0, metric still 0 -> proposal 0 = current: nothing happens, the marker stays True.
""", snapshot=[deploy(replicas=0), external_list([ext_item("queue", "0")]),
               hpa(metrics=[ext_value("queue", "1")], min_r=0, status=status(2, 0, [s_ext("queue", value="0")], ZERO_CONDS, OLD))],
    hpas={"web": status(0, 0, [s_ext("queue", value="0")], [able("ReadyForNewScale", OLD), active(EXT, OLD), limited("DesiredWithinRange", OLD), stz(True, OLD)], OLD)},
    states=[out_state("web", [(0, NOW), (0, NOW)])])

case("scale-from-zero-min-floor", about="""
reconcileAutoscaler/computeReplicasForMetrics: ScaledToZero=True with minReplicas 1 computes metrics; External 0 -> 0; legacy clamp raises it to
min 1 (TooFewReplicas), so the floor of step 7 has nothing to do and the rescale reason stays empty.
""", snapshot=[deploy(replicas=0), external_list([ext_item("queue", "0")]),
               hpa(metrics=[ext_value("queue", "1")], min_r=1, status=status(2, 0, [s_ext("queue", value="0")], ZERO_CONDS, OLD))],
    hpas={"web": status(0, 1, [s_ext("queue", value="0")], [rescaled(1, OLD), active(EXT, OLD), limited("TooFewReplicas"), stz(False)], NOW)},
    scaled={"web": 1}, events=[rescale_ev(1, "")], states=[out_state("web", [(0, NOW), (0, NOW)])])

case("scale-from-zero-object", about="""
Object Value metric at 0 replicas with ScaledToZero=True: ceil(30/10) = 3 (legacy limit 4).
""", snapshot=[deploy(replicas=0), custom_list([object_value("Service", "front", "requests", "30")]),
               hpa(metrics=[obj_value("Service", "front", "requests", "10")], min_r=0,
                   status=status(2, 0, None, [rescaled(0, OLD), stz(True, OLD)], OLD))],
    hpas={"web": status(0, 3, [s_obj("Service", "front", "requests", value="30")], [rescaled(3, OLD), stz(False), active(SVC), limited("DesiredWithinRange")], NOW)},
    scaled={"web": 3}, events=[rescale_ev(3, SVC + " above target")], states=[out_state("web", [(0, NOW), (3, NOW)])])

# =============================================================== M. scale target and selector (reconcileAutoscaler, validateAndParseSelector)

case("missing-scale-target", about="""
The target Deployment `nope` is not in the snapshot: a failed GET -> AbleToScale False FailedGetScale, Warning event;
nothing else changes and the controller's memory is not created (the scale read comes first).
""", snapshot=[deploy(), hpa(target="nope")],
    hpas={"web": status(0, 0, None, [cond("AbleToScale", "False", "FailedGetScale",
                                          "the HPA controller was unable to get the target's current scale: deployments.apps \"nope\" not found")])},
    events=[ev("Warning", "FailedGetScale", 'deployments.apps "nope" not found')], states=[out_state("web")])

case("unknown-target-kind", about="""
scaleTargetRef Rollout in argoproj.io: no scale mapping -> FailedGetScale with the mapper's error.
""", snapshot=[deploy(), hpa(kind="Rollout", api_version="argoproj.io/v1alpha1", target="web")],
    hpas={"web": status(0, 0, None, [cond("AbleToScale", "False", "FailedGetScale",
                                          "the HPA controller was unable to get the target's current scale: no matches for kind \"Rollout\" in group \"argoproj.io\"")])},
    events=[ev("Warning", "FailedGetScale", 'no matches for kind "Rollout" in group "argoproj.io"')], states=[out_state("web")])

case("target-in-other-namespace", about="""
The target lives in the HPA's namespace: a Deployment `web` in namespace `other` does not count -> not found.
""", snapshot=[deploy(ns="other"), hpa()],
    hpas={"web": status(0, 0, None, [cond("AbleToScale", "False", "FailedGetScale",
                                          "the HPA controller was unable to get the target's current scale: deployments.apps \"web\" not found")])},
    events=[ev("Warning", "FailedGetScale", 'deployments.apps "web" not found')], states=[out_state("web")])

SEL_REQ = cond("ScalingActive", "False", "InvalidSelector", "the HPA target's scale is missing a selector")
case("selector-missing", about="""
validateAndParseSelector: a Deployment without spec.selector gives a Scale without selector: SelectorRequired event, ScalingActive False
InvalidSelector, hard failure `selector is required` (FailedComputeMetricsReplicas); currentMetrics stays empty.
""", snapshot=[deploy(selector=None), *cpu_pods(["900m"]), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(3, 0, None, [GET, SEL_REQ])},
    events=[ev("Warning", "SelectorRequired", "selector is required"), ev("Warning", "FailedComputeMetricsReplicas", "selector is required")],
    states=[out_state("web", [(3, NOW)])])

case("selector-empty", about="""
An empty selector {} renders as the empty string -> same as selector-missing.
""", snapshot=[deploy(selector={}), *cpu_pods(["900m"]), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(3, 0, None, [GET, SEL_REQ])},
    events=[ev("Warning", "SelectorRequired", "selector is required"), ev("Warning", "FailedComputeMetricsReplicas", "selector is required")],
    states=[out_state("web", [(3, NOW)])])

AMB = "pods by selector app=web are controlled by multiple HPAs: [default/a default/b]"
AMB_C = cond("ScalingActive", "False", "AmbiguousSelector", AMB)
case("ambiguous-selector", about="""
hpaSelectors/validateAndParseSelector: HPAs a and b both target Deployment web. pyhpa reconcile models a controller that has been running (every
HPA's selector is known), so both see pods selected by two HPAs -> AmbiguousSelector on both (keys sorted).
""", snapshot=[deploy(), *cpu_pods(["900m"] * 3), hpa("a", metrics=[cpu_util(50)]), hpa("b", metrics=[cpu_util(50)])],
    hpas={"a": status(3, 0, None, [GET, AMB_C]), "b": status(3, 0, None, [GET, AMB_C])},
    events=[ev("Warning", "AmbiguousSelector", AMB, "a"), ev("Warning", "FailedComputeMetricsReplicas", AMB, "a"),
            ev("Warning", "AmbiguousSelector", AMB, "b"), ev("Warning", "FailedComputeMetricsReplicas", AMB, "b")],
    states=[out_state("a", [(3, NOW)]), out_state("b", [(3, NOW)])])

case("statefulset-target", about="""
A StatefulSet target: 50% of 30 -> 5, as cpu-util-scale-up.
""", snapshot=[deploy(kind="StatefulSet"), *cpu_pods(["300m", "500m", "700m"]), hpa(metrics=[cpu_util(30)], kind="StatefulSet")],
    hpas={"web": status(3, 5, [s_util(50, "500m")], std_up(5, None), NOW)}, scaled={"web": 5},
    events=[rescale_ev(5, ABOVE)], states=[out_state("web", [(3, NOW), (5, NOW)])])

case("replicaset-target", about="""
A ReplicaSet target: 50% of 30 -> 5.
""", snapshot=[deploy(kind="ReplicaSet"), *cpu_pods(["300m", "500m", "700m"]), hpa(metrics=[cpu_util(30)], kind="ReplicaSet")],
    hpas={"web": status(3, 5, [s_util(50, "500m")], std_up(5, None), NOW)}, scaled={"web": 5},
    events=[rescale_ev(5, ABOVE)], states=[out_state("web", [(3, NOW), (5, NOW)])])

case("replicationcontroller-target", about="""
A v1 ReplicationController (selector is a plain map, empty API group allowed): 50% of 30 -> 5.
""", snapshot=[deploy(kind="ReplicationController", api_version="v1"), *cpu_pods(["300m", "500m", "700m"]),
               hpa(metrics=[cpu_util(30)], kind="ReplicationController", api_version="v1")],
    hpas={"web": status(3, 5, [s_util(50, "500m")], std_up(5, None), NOW)}, scaled={"web": 5},
    events=[rescale_ev(5, ABOVE)], states=[out_state("web", [(3, NOW), (5, NOW)])])

case("deployment-default-replicas", about="""
A Deployment without spec.replicas has 1 (API default): 1 pod at 900m vs 30 -> 3 (limit 4). The echo gains spec.replicas.
""", snapshot=[deploy(replicas=None), *cpu_pods(["900m"]), hpa(metrics=[cpu_util(30)])],
    hpas={"web": status(1, 3, [s_util(90, "900m")], std_up(3, None), NOW)}, scaled={"web": 3},
    events=[rescale_ev(3, ABOVE)], states=[out_state("web", [(1, NOW), (3, NOW)])])

case("selector-match-expressions", about="""
Deployment selector with matchExpressions (tier In (api, web)); pods tier=web and tier=api count, tier=db does not.
2 counted pods at 900m vs 50 -> ceil(3.6) = 4 with current 2.
""", snapshot=[deploy(replicas=2, selector={"matchExpressions": [{"key": "tier", "operator": "In", "values": ["api", "web"]}]}),
               pod("w-0", labels={"tier": "web"}), podmetrics("w-0", "900m", labels={"tier": "web"}),
               pod("w-1", labels={"tier": "api"}), podmetrics("w-1", "900m", labels={"tier": "api"}),
               pod("w-2", labels={"tier": "db"}), podmetrics("w-2", "10m", labels={"tier": "db"}), hpa(metrics=[cpu_util(50)])],
    hpas={"web": status(2, 4, [s_util(90, "900m")], std_up(4, None), NOW)}, scaled={"web": 4},
    events=[rescale_ev(4, ABOVE)], states=[out_state("web", [(2, NOW), (4, NOW)])])

# =============================================================== N. autoscaling/v1 input (upstream's autoscaling/v1 conversion.go)

def v1hpa(name="web", target_cpu=None, annotations=None, min_r=1, max_r=10):
    spec = {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}, "minReplicas": min_r, "maxReplicas": max_r}
    if target_cpu is not None:
        spec["targetCPUUtilizationPercentage"] = target_cpu
    meta = {"name": name, "namespace": NS}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": meta, "spec": spec}


V2SPEC = lambda metrics: {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},  # noqa: E731
                          "minReplicas": 1, "maxReplicas": 10, "metrics": metrics}

case("v1-target-cpu", about="""
An autoscaling/v1 HPA with targetCPUUtilizationPercentage 30 is converted to a v2 CPU Utilization metric and printed
as autoscaling/v2: 50% of 30 -> 5.
""", snapshot=[deploy(), *cpu_pods(["300m", "500m", "700m"]), v1hpa(target_cpu=30)], spec={"web": V2SPEC([cpu_util(30)])},
    hpas={"web": status(3, 5, [s_util(50, "500m")], std_up(5, None), NOW)}, scaled={"web": 5},
    events=[rescale_ev(5, ABOVE)], states=[out_state("web", [(3, NOW), (5, NOW)])])

case("v1-default-target", about="""
v1 without a target: conversion adds the 80% CPU metric. 900m vs 80 -> 1.125 -> ceil(2.25) = 3.
""", snapshot=[deploy(replicas=2), *cpu_pods(["900m", "900m"]), v1hpa()], spec={"web": V2SPEC([cpu_util(80)])},
    hpas={"web": status(2, 3, [s_util(90, "900m")], std_up(3, None), NOW)}, scaled={"web": 3},
    events=[rescale_ev(3, ABOVE)], states=[out_state("web", [(2, NOW), (3, NOW)])])

case("v1-metrics-annotation", about="""
v1 with a metrics annotation (a Pods metric) and targetCPU 50: v2 metrics = annotation metrics followed by the CPU one;
the round-trip annotation is dropped, other annotations stay. CPU 500m -> 2 held; qps 20 vs 10 -> 4 (limit 4).
""", snapshot=[deploy(replicas=2), *cpu_pods(["500m", "500m"]), custom_list([pod_value("web-0", "qps", "20"), pod_value("web-1", "qps", "20")]),
               v1hpa(target_cpu=50, annotations={"team": "checkout", "autoscaling.alpha.kubernetes.io/metrics":
                                                 '[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]'})],
    spec={"web": V2SPEC([pods_m("qps", "10"), cpu_util(50)])}, meta={"web": {"name": "web", "namespace": NS, "annotations": {"team": "checkout"}}},
    hpas={"web": status(2, 4, [s_pods("qps", "20"), s_util(50, "500m")], std_up(4, None, "pods metric qps"), NOW)}, scaled={"web": 4},
    events=[rescale_ev(4, "pods metric qps above target")], states=[out_state("web", [(2, NOW), (4, NOW)])])

case("v1-behavior-annotation", about="""
v1 with a behavior annotation in Go field names: becomes spec.behavior (v1 has no behavior defaulting, so the annotation
is complete); scale-up Disabled -> CPU 900m vs 50 (4 proposed) held at 2, ScaleUpLimit.
""", snapshot=[deploy(replicas=2), *cpu_pods(["900m", "900m"]), v1hpa(target_cpu=50, annotations={
        "autoscaling.alpha.kubernetes.io/behavior":
            '{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Disabled","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15}]},'
            '"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}]}}'})],
    spec={"web": {**V2SPEC([cpu_util(50)]), "behavior": {
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Disabled", "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "policies": DEFAULT_DOWN["policies"]}}}},
    meta={"web": {"name": "web", "namespace": NS}},
    hpas={"web": status(2, 2, [s_util(90, "900m")], legacy_hold(CPU_UTIL, "ReadyForNewScale", "ScaleUpLimit"))},
    states=[out_state("web", [(2, NOW), (4, NOW)])])

# =============================================================== O. input/output structure

BASE = [deploy(), *cpu_pods(["300m", "500m", "700m"]), hpa(metrics=[cpu_util(30)])]
BASE_EXPECT = dict(hpas={"web": status(3, 5, [s_util(50, "500m")], std_up(5, None), NOW)}, scaled={"web": 5},
                   events=[rescale_ev(5, ABOVE)], states=[out_state("web", [(3, NOW), (5, NOW)])])

case("list-input", about="A v1 List with items is flattened: same as cpu-util-scale-up.",
     snapshot=[{"apiVersion": "v1", "kind": "List", "metadata": {}, "items": BASE}], **BASE_EXPECT)

case("json-input", about="The snapshot may be JSON (a List object): same as cpu-util-scale-up.",
     snapshot=BASE, snapshot_text=dump_json({"apiVersion": "v1", "kind": "List", "items": BASE}), **BASE_EXPECT)

case("output-json", about="-o json prints the same List as JSON.", snapshot=BASE, args="-o json", **BASE_EXPECT)

case("several-files", about="""
-f may repeat: the PodMetrics come from a second file (metrics.yaml). Same as cpu-util-scale-up.
""", snapshot=[deploy(), *[pod(f"web-{i}") for i in range(3)], hpa(metrics=[cpu_util(30)])], args="-f metrics.yaml",
    extra_files={"metrics.yaml": yaml.safe_dump_all([podmetrics(f"web-{i}", u) for i, u in enumerate(["300m", "500m", "700m"])], sort_keys=False)},
    **BASE_EXPECT)

case("unknown-kinds-ignored", about="""
Kinds the reconcile does not use (ConfigMap, Service, Namespace) are ignored (a warning goes to stderr).
""", snapshot=[{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": NS}, "data": {"a": "b"}},
               {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}, *BASE,
               {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "front", "namespace": NS}, "spec": {"ports": [{"port": 80}]}}],
    **BASE_EXPECT)

case("state-of-unknown-hpa-ignored", about="""
An AutoscalerState whose HPA is not in the snapshot is not used and not printed.
""", snapshot=[*BASE, state("ghost", [(9, t(-10))])], **BASE_EXPECT)

case("empty-documents-skipped", about="Empty YAML documents (--- with nothing) are skipped.",
     snapshot=BASE, snapshot_text="---\n" + yaml.safe_dump_all(BASE, sort_keys=False, explicit_start=True) + "---\n", **BASE_EXPECT)

case("no-hpas", about="A snapshot without HPAs: the List holds only the workloads.",
     snapshot=[deploy(), *cpu_pods(["500m"])], hpas={}, states=[])


def ns_app(ns, name, replicas, usages, target):
    objs = [deploy(name, replicas=replicas, ns=ns)]
    for i, u in enumerate(usages):
        objs += [pod(f"{name}-{i}", ns=ns, app=name), podmetrics(f"{name}-{i}", u, ns=ns, app=name)]
    return objs


case("hpa-order", about="""
HPAs are reconciled and printed ordered by namespace/name: a/beta (900m vs 50, 2 -> 4), a/zeta (within -> 2),
b/alpha (900m vs 30, 1 -> 3); events follow that order; workloads are echoed in input order.
""", snapshot=[*ns_app("b", "alpha", 1, ["900m"], 30), *ns_app("a", "zeta", 2, ["500m", "500m"], 50), *ns_app("a", "beta", 2, ["900m", "900m"], 50),
               hpa("zeta", [cpu_util(50)], target="zeta", ns="a"), hpa("alpha", [cpu_util(30)], target="alpha", ns="b"),
               hpa("beta", [cpu_util(50)], target="beta", ns="a")],
    hpas={("a", "beta"): status(2, 4, [s_util(90, "900m")], std_up(4, None), NOW),
          ("a", "zeta"): status(2, 2, [s_util(50, "500m")], legacy_hold(CPU_UTIL)),
          ("b", "alpha"): status(1, 3, [s_util(90, "900m")], std_up(3, None), NOW)},
    scaled={"beta": 4, "alpha": 3},
    events=[rescale_ev(4, ABOVE, "beta", "a"), rescale_ev(3, ABOVE, "alpha", "b")],
    states=[out_state("beta", [(2, NOW), (4, NOW)], ns="a"), out_state("zeta", [(2, NOW), (2, NOW)], ns="a"),
            out_state("alpha", [(1, NOW), (3, NOW)], ns="b")])

case("status-preserved-when-unchanged", about="""
An HPA with a previous status within tolerance keeps its conditions' lastTransitionTime and lastScaleTime; only
currentMetrics and the reasons that changed are updated.
""", snapshot=[deploy(replicas=4), *cpu_pods(["520m"] * 4), hpa(metrics=[cpu_util(50)], status=status(
        4, 4, [s_util(50, "500m")], [able("ReadyForNewScale", OLD), active(CPU_UTIL, OLD), limited("DesiredWithinRange", OLD)], OLD))],
    hpas={"web": status(4, 4, [s_util(52, "520m")], [able("ReadyForNewScale", OLD), active(CPU_UTIL, OLD), limited("DesiredWithinRange", OLD)], OLD)},
    states=[out_state("web", [(4, NOW), (4, NOW)])])

case("status-condition-transition", about="""
A previous ScalingActive=False (metrics failed earlier) becomes True: its lastTransitionTime moves to now, while
AbleToScale (True before and after) keeps its old one. CPU 900m x 2 vs 50 -> 4.
""", snapshot=[deploy(replicas=2), *cpu_pods(["900m", "900m"]), hpa(metrics=[cpu_util(50)], status=status(
        2, 2, None, [able("SucceededGetScale", OLD), inactive("FailedGetResourceMetric", NO_RES, OLD)], OLD))],
    hpas={"web": status(2, 4, [s_util(90, "900m")], [rescaled(4, OLD), active(CPU_UTIL), limited("DesiredWithinRange"), stz(False)], NOW)},
    scaled={"web": 4}, events=[rescale_ev(4, ABOVE)], states=[out_state("web", [(2, NOW), (4, NOW)])])

case("now-flag-moves-the-clock", about="""
--now 2026-01-01T00:20:00Z with memory {5@00:10:00}: the 5m window at 00:20 no longer holds it -> CPU proposes 3
(as cpu-util-scale-down-stabilized) -> 5 -> 3 at 00:20; every new timestamp is 00:20.
""", snapshot=[deploy(replicas=5), *cpu_pods(["100m", "300m", "500m", "250m", "250m"]), hpa(metrics=[cpu_util(50)]), state("web", [(5, NOW)])],
    args="--now 2026-01-01T00:20:00Z",
    hpas={"web": status(5, 3, [s_util(28, "280m")], [rescaled(3, t(600)), active(CPU_UTIL, t(600)), limited("DesiredWithinRange", t(600)), stz(False, t(600))], t(600))},
    scaled={"web": 3}, events=[rescale_ev(3, BELOW)], states=[out_state("web", [(3, t(600))])], now=t(600))


# =============================================================== P. invalid input: exit != 0, one line naming file, document, field

def bad(name, about, snapshot, error, args="", **kw):
    case(name, about=about, snapshot=snapshot, error=error, args=args, **kw)


bad("err-max-replicas-zero", "maxReplicas 0 fails API validation (validation.go).",
    [deploy(), hpa(max_r=0)], "snapshot.yaml: document 1|spec.maxReplicas")
bad("err-metric-type-unknown", "An unknown metric type is rejected as the API server does.",
    [hpa(metrics=[{"type": "Foo"}]), deploy()], "snapshot.yaml: document 0|spec.metrics[0].type|Unsupported value")
bad("err-min-zero-cpu-only", "minReplicas 0 needs an Object or External metric.",
    [deploy(), *cpu_pods(["1"]), hpa(metrics=[cpu_util(50)], min_r=0)], "document 3|spec.metrics|Object or External")
bad("err-min-zero-gate-off", "minReplicas 0 with HPAScaleToZero=false is below the lower bound 1.",
    [deploy(), hpa(metrics=[ext_value("queue", "1")], min_r=0)], "document 1|spec.minReplicas",
    args="--feature-gates HPAScaleToZero=false")
bad("err-policy-value-zero", "A scaling policy value of 0 is invalid.",
    [deploy(), hpa(behavior={"scaleDown": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 60}]}})],
    "document 1|spec.behavior.scaleDown.policies[0].value")
bad("err-target-apiversion-no-group", "A Deployment reference with apiVersion v1 (no group) is invalid.",
    [deploy(), hpa(api_version="v1")], "document 1|spec.scaleTargetRef.apiVersion")
bad("err-hpa-without-name", "An HPA without metadata.name.",
    [deploy(), {**hpa(), "metadata": {"namespace": NS}}], "document 1|metadata.name")
bad("err-quantity-invalid", "An unparsable quantity names its field.",
    [deploy(), hpa(metrics=[pods_m("qps", "lots")])], "document 1|spec.metrics[0].pods.target.averageValue")
bad("err-tolerance-negative", "A negative tolerance is invalid.",
    [deploy(), hpa(behavior={"scaleUp": {"tolerance": "-0.1"}})], "document 1|spec.behavior.scaleUp.tolerance")
bad("err-yaml-syntax", "Broken YAML names the file, document and line.", None, "snapshot.yaml|document 1|line",
    snapshot_text="apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\nkind: [unclosed\n")
bad("err-state-bad-timestamp", "An AutoscalerState with an unparsable timestamp.",
    [deploy(), hpa(), {**state("web", [(3, NOW)]), "recommendations": [{"timestamp": "yesterday", "replicas": 3}]}],
    "document 2|recommendations[0].timestamp")
bad("err-state-replicas-not-int", "An AutoscalerState recommendation with a non-integer replica count.",
    [deploy(), hpa(), {**state("web"), "recommendations": [{"timestamp": NOW, "replicas": "three"}]}],
    "document 2|recommendations[0].replicas")
bad("err-in-second-file", "An invalid HPA in the second -f file names that file.",
    [deploy()], "bad.yaml: document 0|spec.maxReplicas", args="-f bad.yaml",
    extra_files={"bad.yaml": yaml.safe_dump(hpa(max_r=0), sort_keys=False)})
bad("err-pod-bad-quantity", "A Pod whose CPU request is not a quantity.",
    [deploy(), pod("web-0", requests="fast"), hpa()], "document 1|spec.containers[0].resources.requests[cpu]")
bad("err-hpa-twice", "The same HPA twice: the second one is named, with where the first one is.",
    [deploy(), hpa(), hpa()], 'document 2|metadata.name|Duplicate value: "web"|is also|document 1')
bad("err-list-item-invalid", "An invalid HPA inside a v1 List: the error names the List's item.",
    [{"apiVersion": "v1", "kind": "List", "items": [deploy(), hpa(max_r=0)]}], "document 0|items[1]|spec.maxReplicas")
bad("err-workload-replicas-not-int", "A Deployment whose spec.replicas is not an integer.",
    [deploy(replicas="three"), hpa()], "document 0|spec.replicas")
bad("err-v1-behavior-without-policies", """
v1 has no behavior defaulting: a behavior annotation that leaves policies out fails validation as upstream.
""", [deploy(), v1hpa(target_cpu=50, annotations={"autoscaling.alpha.kubernetes.io/behavior": '{"ScaleUp":{"SelectPolicy":"Disabled"}}'})],
    "document 1|spec.behavior.scaleUp.policies")
