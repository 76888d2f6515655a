"""Acceptance cases for what pyhpa builds ahead of upstream, in upstream's proposed shapes
(docs/beyond-upstream.md): KEP-3428 suspend and KEP-6003 per-HPA sync period.

Same rules as `corpus.py`: the numbers and texts are written by hand from the KEP facts and
the controller spec; `casekit` only writes the echo. Kept apart from `corpus.py` (which follows
upstream as released) so the two stay readable.

Usage: python tests/offline/corpus_beyond.py   (rewrites the kep* case directories)
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from casekit import (  # noqa: E402
    CPU_UTIL, DEFAULT_DOWN, DEFAULT_UP, NOW, NS, able, active, case, cond, cpu_pods, cpu_util, deploy, hpa, limited,
    out_state, rescale_ev, rescaled, s_util, state, status, stz, t,
)

SUSPEND = {"annotations": {"autoscaling.kubernetes.io/suspend": "true"}}
SUSPENDED_MSG = "scaling is suspended by the autoscaling.kubernetes.io/suspend annotation"
BELOW = "All metrics below target"


def suspended(ltt=NOW):
    return cond("ScalingActive", "False", "Suspended", SUSPENDED_MSG, ltt)


# 4 pods of 1 CPU at 100m against a 50 % target: utilization 10, ratio 0.2, proposal ceil(4 x 0.2) = 1.
PODS = cpu_pods(["100m"] * 4)

def main() -> None:
    # ============================================================ KEP-3428: suspend
    case("kep3428-suspend-holds-during-window", about="""
KEP-3428: the HPA carries autoscaling.kubernetes.io/suspend: "true". The scale is read (AbleToScale
SucceededGetScale) but nothing is computed: the load would propose 1, yet desired = current = 4, no
currentMetrics, ScalingActive False/Suspended, no event, and the memory {4@-60s} is returned untouched.
""", snapshot=[deploy(replicas=4), *PODS, hpa(metrics=[cpu_util(50)], meta_extra=SUSPEND),
               state("web", [(4, t(-60))])],
        hpas={"web": status(4, 4, None, [able("SucceededGetScale"), suspended()])},
        states=[out_state("web", [(4, t(-60))])])

    resumed_status = status(4, 4, None, [able("SucceededGetScale", t(-120)), suspended(t(-120))])
    case("kep3428-resume-inside-the-window", about="""
The pass after the annotation was removed (the status is the suspended one of 2 minutes ago). The memory kept
through the suspension, {4@-180s}, is inside the 5m window: max(1, 4) = 4, ScaleDownStabilized, no rescale;
ScalingActive turns True now; 1@now is appended (no sample older than the cutoff).
""", snapshot=[deploy(replicas=4), *PODS, hpa(metrics=[cpu_util(50)], status=resumed_status),
               state("web", [(4, t(-180))])],
        hpas={"web": status(4, 4, [s_util(10, "100m")],
                            [able("ScaleDownStabilized", t(-120)), active(CPU_UTIL), limited("DesiredWithinRange")])},
        states=[out_state("web", [(4, t(-180)), (1, NOW)])])

    case("kep3428-resume-after-the-window", about="""
As kep3428-resume-inside-the-window, but the kept 4 is 301 s old: before the cutoff (now-300s), so it no longer
counts and its slot is reused for 1@now: 4 -> 1, the ordinary scale-down.
""", snapshot=[deploy(replicas=4), *PODS, hpa(metrics=[cpu_util(50)], status=resumed_status),
               state("web", [(4, t(-301))])],
        hpas={"web": status(4, 1, [s_util(10, "100m")],
                            [rescaled(1, t(-120)), active(CPU_UTIL), limited("DesiredWithinRange"), stz(False)], NOW)},
        scaled={"web": 1}, events=[rescale_ev(1, BELOW)],
        states=[out_state("web", [(1, NOW)])])

    # ============================================================ KEP-6003: per-HPA sync period
    # One pass does not depend on the period: these cases pin the field's API (echo, defaulting,
    # validation, gate, v1 conversion). 2 pods at 500m of 1 CPU against 50 %: ratio 1, held at 2.
    steady = [deploy(replicas=2), *cpu_pods(["500m", "500m"])]
    spec_base = {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                 "minReplicas": 1, "maxReplicas": 10, "metrics": [cpu_util(50)]}
    held = status(2, 2, [s_util(50, "500m")], [able("ReadyForNewScale"), active(CPU_UTIL), limited("DesiredWithinRange")])

    case("kep6003-sync-period-echoed", about="""
behavior.syncPeriodSeconds: 5 is kept as written. Like any non-null behavior, scaleUp and scaleDown are completed
with the API defaults (SetDefaults_HorizontalPodAutoscalerBehavior). The pass itself is the usual one: ratio 1 -> 2, ReadyForNewScale.
""", snapshot=[*steady, hpa(metrics=[cpu_util(50)], behavior={"syncPeriodSeconds": 5})],
        spec={"web": {**spec_base, "behavior": {"scaleUp": DEFAULT_UP, "scaleDown": DEFAULT_DOWN, "syncPeriodSeconds": 5}}},
        hpas={"web": held}, states=[out_state("web", [(2, NOW), (2, NOW)])])

    case("kep6003-gate-off-drops-the-field", about="""
--feature-gates HPAConfigurableSyncPeriod=false: the API drops syncPeriodSeconds from a new object (as for tolerance);
the behavior it sat in stays, defaulted.
""", snapshot=[*steady, hpa(metrics=[cpu_util(50)], behavior={"syncPeriodSeconds": 5})],
        args="--feature-gates HPAConfigurableSyncPeriod=false",
        spec={"web": {**spec_base, "behavior": {"scaleUp": DEFAULT_UP, "scaleDown": DEFAULT_DOWN}}},
        hpas={"web": held}, states=[out_state("web", [(2, NOW), (2, NOW)])])

    case("kep6003-v1-behavior-annotation", about="""
autoscaling/v1 keeps syncPeriodSeconds in the behavior annotation, in Go field names like the rest of behavior:
{"SyncPeriodSeconds":30} alone becomes spec.behavior {syncPeriodSeconds: 30} with both directions defaulted.
""", snapshot=[*steady, {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                         "metadata": {"name": "web", "namespace": NS,
                                      "annotations": {"autoscaling.alpha.kubernetes.io/behavior": '{"SyncPeriodSeconds":30}'}},
                         "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                                  "minReplicas": 1, "maxReplicas": 10, "targetCPUUtilizationPercentage": 50}}],
        spec={"web": {**spec_base, "behavior": {"scaleUp": DEFAULT_UP, "scaleDown": DEFAULT_DOWN, "syncPeriodSeconds": 30}}},
        meta={"web": {"name": "web", "namespace": NS}},
        hpas={"web": held}, states=[out_state("web", [(2, NOW), (2, NOW)])])

    for name, value, message in (("zero", 0, "must be greater than or equal to 1"),
                                 ("above-an-hour", 3601, "must be less than or equal to 3600")):
        case(f"err-kep6003-sync-period-{name}", about=f"syncPeriodSeconds {value} is outside 1..3600.",
             snapshot=[deploy(), hpa(behavior={"syncPeriodSeconds": value})],
             error=f"document 1|spec.behavior.syncPeriodSeconds: Invalid value: {value}: {message}")


if __name__ == "__main__":
    main()
