"""Acceptance cases for what pyhpa builds ahead of upstream, in upstream's proposed shapes
(/work/shared/spec/keps.md): KEP-3428 suspend and KEP-6003 per-HPA sync period.

Same rules as `corpus.py`: the numbers and texts are written by hand from the KEP facts and
the controller spec; `casekit` only writes the echo. Kept apart from `corpus.py` (which follows
upstream as released) so the two stay readable.

Usage: python tests/reconcile/corpus_beyond.py   (rewrites the kep* case directories)
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from casekit import (  # noqa: E402
    CPU_UTIL, NOW, able, active, case, cond, cpu_pods, cpu_util, deploy, hpa, limited, out_state, rescale_ev, rescaled,
    s_util, state, status, stz, t,
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


if __name__ == "__main__":
    main()
