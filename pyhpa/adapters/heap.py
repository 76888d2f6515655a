"""The memory settings of the project's long-running loops: the cyclic garbage collector's,
and the C allocator's for the API server.

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
import ctypes
import gc
from collections.abc import Callable, Iterator

YOUNG_GENERATION = 50_000  # allocations between two young collections in a server process
SERVER_BUFFERS = 64 * 1024 * 1024  # freed memory the API server's allocator keeps for reuse
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)


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


@contextlib.contextmanager
def server_process() -> Iterator[None]:
    """The API server process's memory settings, in one place for `pyhpa cluster` and for the
    bench's API server alone (which must run as the command does): freed buffers kept, and a
    young generation larger than a request's burst."""
    keep_freed_buffers()
    with young_generation():
        yield


async def freeze_when(started: Callable[[], bool], poll: float = 0.2) -> None:
    """Once ``started()`` holds (the long-lived model is built), collect once and freeze the heap."""
    while not started():
        await asyncio.sleep(poll)
    gc.collect()
    gc.freeze()


def keep_freed_buffers(limit: int = SERVER_BUFFERS) -> bool:
    """glibc only (elsewhere nothing happens and False comes back): keep up to ``limit`` bytes
    of freed memory for reuse instead of handing it back to the system at once.

    Why: a list or Table of 1,000 pods builds megabyte buffers (the body, its JSON). Past
    glibc's thresholds each is mapped with mmap and unmapped when freed, or trimmed off the
    heap's top, so every request paid page faults for fresh pages; measured on the API
    server's JSON list of 1,000 pods, 2.5-3 -> 1.5-2 ms of CPU. The cost is a process that keeps up to
    ``limit`` of freed memory (docs/benchmarks.md). For server processes: the call is for the
    whole process and is not undone."""
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own symbols: its C library's
    except (OSError, AttributeError):  # no mallopt: not glibc
        return False
    return bool(mallopt(_M_TRIM_THRESHOLD, limit)) and bool(mallopt(_M_MMAP_THRESHOLD, limit))
