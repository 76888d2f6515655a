"""The cyclic garbage collector's settings for the project's long-running loops.

Why one place: `pyhpa cluster`, `pyhpa run` and the simulator each keep a large long-lived model
(the cluster's objects, the informers' caches, the timelines) and allocate bursts of short-lived
containers (a request, a reconcile, a sync). With CPython's default young generation (700
allocations) those bursts are promoted and trigger full collections, each a pause proportional
to the whole heap (hundreds of ms at 10,000 pods; 1.8 of 4.2 CPU-s in 30 s of a 2,000-HPA
controller's steady state). A young generation larger than a burst lets them die young, and the
heap built once at start-up is moved out of the collector's reach with ``gc.freeze()`` (its
objects are trees, freed by their reference counts when they are dropped).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Callable, Iterator

YOUNG_GENERATION = 50_000  # allocations between two young collections in a server process


@contextlib.contextmanager
def young_generation(threshold: int = YOUNG_GENERATION) -> Iterator[None]:
    """A young generation of at least ``threshold`` inside the block, the process's own after
    (a command may run in-process: tests, `pyhpa demo`)."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], threshold), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


async def freeze_when(started: Callable[[], bool], poll: float = 0.2) -> None:
    """Once ``started()`` holds (the long-lived model is built), collect once and freeze the heap."""
    while not started():
        await asyncio.sleep(poll)
    gc.collect()
    gc.freeze()
