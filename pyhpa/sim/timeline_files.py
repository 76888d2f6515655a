"""The timeline files of a run: ``timeline.csv`` (the default) or ``timeline.json``, or none.

Why a columnar CSV writer: a fleet run (50 HPAs x 24 h: ~290,000 rows) spent most of its output
time building each row as a dict (``report.timeline_row``, the JSON shape) and reading it back.
The CSV is written straight from each HPA's ``SyncLog`` columns; what repeats (time stamps shared
by the HPAs, condition sets, the per-run metric layout) is formatted once. The JSON rows keep the
dict form, written one at a time, one per line (a long run's timeline does not fit in memory as
one list).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Iterable

from pyhpa.api.timefmt import format_epoch

TIMELINE_FORMATS = ("csv", "json", "none")
CSV_HEADER = ("time", "offset_seconds", "hpa", "demand", "capacity", "replicas", "ready_replicas", "desired_replicas")


def write_timeline(result: Any, out_dir: Path, fmt: str = "csv") -> list[Path]:
    """Write the run's timeline as ``fmt`` (``csv``, ``json`` or ``none``); the paths written."""
    if fmt not in TIMELINE_FORMATS:
        raise ValueError(f"timeline format: Unsupported value: {fmt!r}: supported values: {', '.join(TIMELINE_FORMATS)}")
    if fmt == "none":
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    if fmt == "json":
        path = out_dir / "timeline.json"
        with path.open("w", encoding="utf-8") as fh:
            _write_json_list((row for run in result.hpas for row in run.iter_rows()), fh)
        return [path]
    path = out_dir / "timeline.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        write_timeline_csv(result, fh)
    return [path]


def _write_json_list(items: Iterable[Any], fh: Any) -> None:
    """A JSON list, one item per line, written item by item. One line per row, not an indented
    tree: ``json`` encodes without indentation in C, about 5x faster at fleet size."""
    first = True
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    for item in items:
        fh.write("[\n" if first else ",\n")
        fh.write(dumps(item))
        first = False
    fh.write("[]\n" if first else "\n]\n")


def _num(v: float) -> str:
    """A float cell (NaN: empty), 6 significant digits."""
    return "" if v != v else f"{v:.6g}"


def write_timeline_csv(result: Any, fh: Any) -> None:
    """One row per HPA and sync: the columns of ``report.timeline_row`` flattened, a current and
    a target column per metric label (the union over the run's HPAs, in first-seen order)."""
    labels: list[str] = []
    for run in result.hpas:
        for label in run.metric_labels:
            if label not in labels:
                labels.append(label)
    header = list(CSV_HEADER)
    for label in labels:
        header += [f"{label} current", f"{label} target"]
    header += ["conditions", "events"]
    w = csv.writer(fh)
    w.writerow(header)
    iso: dict[float, str] = {}  # sync time -> its stamp (the HPAs of a run share their sync times)
    for run in result.hpas:
        w.writerows(_run_rows(run, labels, iso))


def _run_rows(run: Any, labels: list[str], iso: dict[float, str]) -> Iterable[list[Any]]:
    log = run.log
    n = len(log)
    floats, ints, nf, ni, is_ints = log.raw_columns()
    times = log.t
    # Where each label's current sits in this run's columns: ("f"|"i", offset), or None.
    where: list[tuple[str, int] | None] = []
    targets: list[str] = []
    fi, ii = 1, 4
    slots: dict[str, tuple[str, int]] = {}  # a label twice: the last one shows (as in the JSON rows' order)
    target_of: dict[str, Any] = {}
    for col, is_int in zip(run.metrics, is_ints):
        if is_int:
            slots[col["metric"]] = ("i", ii)
            ii += 1
        else:
            slots[col["metric"]] = ("f", fi)
            fi += 1
        target_of[col["metric"]] = col["target"]
    for label in labels:
        where.append(slots.get(label))
        t = target_of.get(label)
        targets.append("" if label not in target_of or t is None else (f"{t:.6g}" if isinstance(t, float) else str(t)))
    conditions = [";".join(f"{k}={s}:{r}" for k, (s, r) in {k: (s, r) for k, s, r in cs}.items())
                  for cs in log.condition_sets]
    cap = log.capacity
    start = run.start
    name = run.name
    events = log.events
    none_int = -(2**63)
    for i in range(n):
        t = times[i]
        stamp = iso.get(t)
        if stamp is None:
            stamp = iso[t] = format_epoch(t)
        f0, i0 = i * nf, i * ni
        replicas, ready, desired, cid = ints[i0], ints[i0 + 1], ints[i0 + 2], ints[i0 + 3]
        row = [stamp, round(t - start, 3), name, _num(floats[f0]),
               "" if cap is None or ready < 0 else _num(cap.of(ready)),
               "" if replicas < 0 else replicas, "" if ready < 0 else ready, "" if desired < 0 else desired]
        for slot, target in zip(where, targets):
            if slot is None:
                row += ["", ""]
            elif slot[0] == "f":
                row += [_num(floats[f0 + slot[1]]), target]
            else:
                v = ints[i0 + slot[1]]
                row += ["" if v == none_int else v, target]
        row.append(conditions[cid])
        ev = events.get(i)
        row.append(" | ".join(ev) if ev else "")
        yield row


__all__ = ["TIMELINE_FORMATS", "write_timeline", "write_timeline_csv"]
