"""Independent tasks run on a Dask cluster (``--dask-scheduler``): ``pyhpa tune``'s candidates and
``pyhpa simulate``'s parts.

Why one place: both commands connect, submit, watch for a failed worker and gather the same
way, and report the same errors (exit code 1: the run failed, not its input). Tasks and their
results travel pickled; the workers need the same pyhpa installed. Results come back in the
tasks' order, whatever order they finish in, so a run gives the same outputs as without Dask.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

CONNECT_SECONDS = 15.0  # how long to keep trying to reach --dask-scheduler


class RunFailure(RuntimeError):
    """Running the tasks failed, not their input (a Dask scheduler or worker): exit code 1."""


def dask_map(fn: Callable[..., Any], args: Sequence[tuple], address: str, *, what: str, hint: str = "pyhpa",
             on_done: Callable[[int], None] | None = None, connect_seconds: float | None = None) -> list[Any]:
    """``[fn(*a) for a in args]``, computed by the workers of the Dask scheduler at ``address``;
    ``on_done(i)`` is told of each task that finished. ``what`` names a task and ``hint`` what
    the workers need, in the error a failed task gives; ``connect_seconds``: how long to try to
    connect (default ``CONNECT_SECONDS``)."""
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - distributed is a dependency
        raise RunFailure("--dask-scheduler: the 'distributed' package is not installed") from None
    try:
        client = Client(address, timeout=CONNECT_SECONDS if connect_seconds is None else connect_seconds,
                        set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise RunFailure(f"--dask-scheduler: {address}: cannot connect: {exc}") from None
    with client:
        futures = [client.submit(fn, *a, pure=False) for a in args]
        pending = dict(enumerate(futures))
        while pending:  # polled: distributed's as_completed wants a default client, which we do not set
            for i, f in list(pending.items()):
                if not f.done():
                    continue
                if f.status == "error":
                    exc = f.exception()
                    raise RunFailure(f"--dask-scheduler: {address}: a worker failed on {what}: {type(exc).__name__}: "
                                     f"{exc} (do the workers have {hint}?)")
                del pending[i]
                if on_done is not None:
                    on_done(i)
            if pending:
                time.sleep(0.1)
        return list(client.gather(futures))
