"""meta.k8s.io/v1 Table documents: what ``kubectl get`` asks for and prints.

Why apart from the columns: a Table is a response format (column definitions, one row per
object, the object itself or just its metadata), the same for every kind; :mod:`.columns` says
what each kind's cells are.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable

import msgspec

from pyhpa.cluster.apiserver.columns import POD_COLUMNS, PodCells, TableClock, age_col, name_col
from pyhpa.cluster.apiserver.resources import Resource

Obj = dict[str, Any]

# Pods are the kind listed by the thousand: their rows are built from a partial decode.
_decode_pod_cells = msgspec.json.Decoder(PodCells).decode
_decode_whole = msgspec.json.Decoder().decode


def row_decoder(res: Resource) -> Callable[[bytes], Obj] | None:
    """A decoder of ``res``'s stored JSON into just what its Table cells and row metadata read
    (faster to decode and to free than the whole object), or None when it has none. The result
    is only for :func:`table` with ``include_object`` other than ``Object``."""
    if res.columns != POD_COLUMNS:
        return None
    partial = _decode_pod_cells

    def decode(raw: bytes) -> Obj:
        try:
            return partial(raw)
        except msgspec.ValidationError:  # a field of an unexpected JSON type: the cells cope
            return _decode_whole(raw)
    return decode


def partial_metadata(obj: Obj) -> Obj:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata") or {}}


def table(res: Resource, objects: Iterable[Obj], *, resource_version: str = "",
          include_object: str = "Metadata", with_columns: bool = True,
          continue_token: str | None = None, now: float | None = None,
          minor: int | None = None) -> Obj:
    """A meta.k8s.io/v1 Table: column definitions plus one row per object.

    ``minor``: the emulated release whose columns to print (None: pyhpa's own).
    ``include_object`` follows the API: ``Metadata`` (PartialObjectMetadata, needed for -A and
    --show-labels), ``Object`` (the full object, for --sort-by) or ``None``.
    """
    clock = TableClock(time.time() if now is None else now, minor)
    columns = [c for c in res.columns or (name_col(), age_col()) if c.shown_in(minor)]
    rows = []
    for obj in objects:
        row: Obj = {"cells": [c.cell(obj, clock) for c in columns]}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = partial_metadata(obj)
        rows.append(row)
    meta: Obj = {"resourceVersion": resource_version} if resource_version else {}
    if continue_token:
        meta["continue"] = continue_token
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
            "columnDefinitions": [c.definition() for c in columns] if with_columns else None,
            "rows": rows}
