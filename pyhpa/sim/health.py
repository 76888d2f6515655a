"""Whether each HPA of a run could compute a scale: the share of its syncs with
``ScalingActive=False`` and the reasons it gave.

Why: an HPA whose metric never resolves (a container without a CPU request, a Pods metric nobody
serves, two HPAs on one target) keeps its replicas, and its summary then looks like a calm run.
The summary gets ``unableToCompute`` (the share of syncs, 0..1) and ``unableToComputeReasons``
for such an HPA, ``pyhpa simulate`` a warning line on stderr, and ``--strict`` exit code 2 when an
HPA never computed. ``ScalingDisabled`` (a target scaled to zero on purpose) and ``Suspended``
(an HPA suspended on purpose) are not failures.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from pyhpa.controller.suspend import REASON_SUSPENDED

NOT_A_FAILURE = frozenset({"ScalingDisabled", REASON_SUSPENDED})


def _failed_syncs(run: Any) -> tuple[int, int, Counter[str]]:
    """(syncs, syncs unable to compute, how often each reason was given); the first timeline
    row is the start, before any sync, and is not counted."""
    syncs = max(0, len(run.log) - 1)
    reasons: Counter[str] = Counter()
    for conditions, n in run.log.condition_set_counts(first=1).items():
        for ctype, status, reason in conditions:
            if ctype == "ScalingActive" and status == "False" and reason not in NOT_A_FAILURE:
                reasons[reason or "Unknown"] += n
    return syncs, sum(reasons.values()), reasons


def unable_to_compute(run: Any) -> dict[str, Any]:
    """The summary fields of an HPA that spent syncs unable to compute (none for a healthy one,
    so the summaries of healthy runs do not change). The share is 1 only when every sync failed."""
    syncs, failed, reasons = _failed_syncs(run)
    if not failed:
        return {}
    share = 1.0 if failed == syncs else min(round(failed / syncs, 4), 0.9999)
    return {"unableToCompute": share, "unableToComputeReasons": [r for r, _ in reasons.most_common()]}


def never_computed(summary: dict[str, Any]) -> bool:
    return summary.get("unableToCompute") == 1.0


def _first_message(run: Any, reason: str) -> str | None:
    """The message of the first event the HPA gave for ``reason`` (``Warning <reason>: <message>``)."""
    prefix = f"Warning {reason}: "
    for i in sorted(run.log.events):
        for line in run.log.events[i]:
            if line.startswith(prefix):
                return line[len(prefix):]
    return None


def warnings(results: Iterable[Any]) -> list[str]:
    """One stderr line per HPA that spent syncs unable to compute, with the first reason's message."""
    out = []
    for result in results:
        for run in result.hpas:
            fields = unable_to_compute(run)
            if not fields:
                continue
            reasons = fields["unableToComputeReasons"]
            variant = f" ({result.label})" if result.label else ""
            detail = _first_message(run, reasons[0])
            out.append(f"warning: HPA {run.key}{variant} was unable to compute a scale in "
                       f"{format_share(fields['unableToCompute'])} of its syncs (ScalingActive=False: "
                       f"{', '.join(reasons)})" + (f": {detail}" if detail else ""))
    return out


def format_share(share: float) -> str:
    """``100%``, ``37.5%``, ``<0.1%``."""
    pct = share * 100
    if share == 1.0:
        return "100%"
    if pct < 0.1:
        return "<0.1%"
    text = f"{pct:.1f}" if pct < 99.95 else "99.9"
    return (text[:-2] if text.endswith(".0") else text) + "%"


def summary_cell(summary: dict[str, Any]) -> str:
    """The Markdown table cell: ``100% (FailedGetResourceMetric)``, ``-`` for a healthy HPA."""
    share = summary.get("unableToCompute")
    if share is None:
        return "-"
    return f"{format_share(share)} ({', '.join(summary.get('unableToComputeReasons') or [])})"
