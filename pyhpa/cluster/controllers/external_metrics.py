"""The values of ExternalMetric objects over time, as ``external.metrics.k8s.io`` serves them.

Why a history and not the current object: the metrics APIs answer as of the latest scrape, so
an edit made after it must not show until the next one; each series keeps the entries still in
force at a scrape someone can read.
"""

from __future__ import annotations

from pyhpa.cluster.controllers.context import SimulationContext, Snapshot
from pyhpa.cluster.controllers.objects import Key, name_of, namespace_of
from pyhpa.cluster.apiserver.external_metric import read_series


def sync_external_metrics(ctx: SimulationContext, snap: Snapshot, now: float) -> None:
    seen: set[Key] = set()
    for o in snap.external:
        key = (namespace_of(o), name_of(o))
        seen.add(key)
        series = read_series(o)
        hist = ctx.external_history.setdefault(key, [])
        if not hist or hist[-1][1] != series:
            hist.append((now, series))  # None: the object is invalid now, nothing is served
        # keep the entry in force at the oldest scrape anyone can still see
        cutoff = now - 2 * ctx.resolution
        while len(hist) > 1 and hist[1][0] <= cutoff:
            del hist[0]
    for key in [k for k in ctx.external_history if k not in seen and snap.covers(k[0])]:
        del ctx.external_history[key]
