"""meta.k8s.io/v1 Table documents: what ``kubectl get`` asks for and prints.

Why apart from the columns: a Table is a response format (column definitions, one row per
object, the object itself or just its metadata), the same for every kind; :mod:`.columns` says
what each kind's cells are.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable, NamedTuple, Sequence, TypedDict

import msgspec

from pyhpa.cluster.apiserver.columns import POD_COLUMNS, PodCells, TableClock, age_col, name_col
from pyhpa.cluster.apiserver.resources import Resource

Obj = dict[str, Any]


class RowSource(NamedTuple):
    """One object as its Table row reads it: ``view`` holds what the cells read (a partial
    decode), ``metadata`` the object's metadata the row carries (the stored JSON bytes of it)."""

    view: Obj
    metadata: Any


class _RowMetadata(TypedDict, total=False):
    """The metadata the cells read, and the labels a label selector reads."""

    name: Any
    creationTimestamp: Any
    deletionTimestamp: Any
    labels: Any


# Pods are the kind listed by the thousand: their rows are built from a partial decode.
_decode_pod_row = msgspec.json.Decoder(PodCells).decode
_decode_row_metadata = msgspec.json.Decoder(_RowMetadata).decode
_decode_whole = msgspec.json.Decoder().decode


def row_decoder(res: Resource) -> Callable[[bytes], RowSource] | None:
    """A decoder of ``res``'s stored JSON into a :class:`RowSource` (faster to decode, free and
    encode than the whole object), or None when it has none. Its views are only for
    :func:`table` with ``include_object`` other than ``Object``."""
    if res.columns != POD_COLUMNS:
        return None

    def decode(raw: bytes) -> RowSource:
        try:
            view = _decode_pod_row(raw)
            stored = view.get("metadata")
            if stored is not None:
                view["metadata"] = _decode_row_metadata(stored)
            return RowSource(view, stored)  # type: ignore[arg-type]
        except msgspec.ValidationError:  # a field of an unexpected JSON type: the cells cope
            whole = _decode_whole(raw)
            return RowSource(whole, whole.get("metadata"))
    return decode


def partial_metadata(obj: Obj) -> Obj:
    return metadata_object(obj.get("metadata"))


def metadata_object(metadata: Any) -> Obj:
    """The PartialObjectMetadata a row carries for an object's ``metadata``."""
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": metadata or {}}


def table(res: Resource, objects: Iterable[Obj], *, resource_version: str = "",
          include_object: str = "Metadata", with_columns: bool = True,
          continue_token: str | None = None, now: float | None = None,
          minor: int | None = None, metadata: Sequence[Any] | None = None) -> Obj:
    """A meta.k8s.io/v1 Table: column definitions plus one row per object.

    ``minor``: the emulated release whose columns to print (None: pyhpa's own).
    ``include_object`` follows the API: ``Metadata`` (PartialObjectMetadata, needed for -A and
    --show-labels), ``Object`` (the full object, for --sort-by) or ``None``.
    ``metadata``: each row's metadata, when ``objects`` are the views of :func:`row_decoder`
    (else each object's own).
    """
    clock = TableClock(time.time() if now is None else now, minor)
    columns = [c for c in res.columns or (name_col(), age_col()) if c.shown_in(minor)]
    cells = [c.cell for c in columns]  # looked up once, not per row
    objects = list(objects)
    if include_object == "Object":
        carried: Sequence[Any] = objects
    elif include_object == "None":
        carried = ()
    else:
        carried = [metadata_object(m) for m in (
            metadata if metadata is not None else [obj.get("metadata") for obj in objects])]
    rows: list[Obj] = [{"cells": [cell(obj, clock) for cell in cells]} for obj in objects]
    for row, shown in zip(rows, carried):
        row["object"] = shown
    meta: Obj = {"resourceVersion": resource_version} if resource_version else {}
    if continue_token:
        meta["continue"] = continue_token
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
            "columnDefinitions": [c.definition() for c in columns] if with_columns else None,
            "rows": rows}
