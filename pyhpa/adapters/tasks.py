"""Ending background tasks and processes so that a shutdown always finishes.

Why one helper: "cancel, then await and swallow" was copied into every component, and it can
wait for ever. Python 3.11's ``asyncio.wait_for`` hands a cancelled caller the awaited call's
own error when that call failed in the same loop step as the cancel (bpo-42130; rewritten in
3.12): a retry loop catching that error never sees its cancellation and keeps going, and so
does whoever awaits it. :func:`cancel_and_wait` cancels again a task still running
:data:`RECANCEL_AFTER` seconds later (a cleanup that takes longer is cut short, which only a
task that ignored its first cancel can make happen twice), and gives up waiting at its
``timeout`` (the task is left to the loop's end; the caller's shutdown goes on).

:class:`StopSignals` is the other half: the first SIGTERM or SIGINT asks for a clean stop, a
second one ends the process at once (exit status 128 + the signal's number, as a shell reports
a process killed by it).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from typing import Any, Callable, Iterable

log = logging.getLogger(__name__)

RECANCEL_AFTER = 1.0  # seconds: a task still running this long after its cancel is cancelled again
SHUTDOWN_TIMEOUT = 5.0  # seconds: the most one cancel_and_wait waits by default


def raise_if_cancelling() -> None:
    """Raise ``CancelledError`` when the current task has a cancel pending: for a loop that
    catches errors around a ``wait_for``, which may have turned a cancel into that error."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def cancel_and_wait(*tasks: "asyncio.Future[Any] | None",
                          timeout: float | None = SHUTDOWN_TIMEOUT) -> bool:
    """Cancel ``tasks`` (None entries are skipped) and wait until they are done, cancelling
    again every :data:`RECANCEL_AFTER` seconds any that still run. Their results and errors
    are consumed (a stopped task's failure is not this caller's). False when some still ran
    after ``timeout`` seconds (None: wait as long as it takes)."""
    todo = [t for t in tasks if t is not None]
    for t in todo:
        t.cancel()
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    pending = {t for t in todo if not t.done()}
    try:
        while pending:
            wait = RECANCEL_AFTER if deadline is None else min(RECANCEL_AFTER,
                                                               deadline - loop.time())
            if wait <= 0:
                log.warning("gave up waiting for %s to stop",
                            ", ".join(_name(t) for t in pending))
                return False
            _, pending = await asyncio.wait(pending, timeout=wait)
            for t in pending:
                t.cancel()
        return True
    finally:
        for t in todo:
            if t.done() and not t.cancelled():
                t.exception()  # retrieved: no "exception was never retrieved" at exit


def _name(task: "asyncio.Future[Any]") -> str:
    get_name = getattr(task, "get_name", None)
    return get_name() if get_name is not None else repr(task)


class StopSignals:
    """SIGTERM and SIGINT on a running loop: the first calls ``stop``, the next exits at once.

    After the first, the signals are handled by a plain signal handler, which runs even while
    the loop is blocked (a thread join in a cleanup), not by the loop. ``exit`` is ``os._exit``
    (no cleanup: the point is to get out of one that hangs); tests pass their own. Outside the
    main thread, or where the loop cannot handle signals, it does nothing (the caller keeps
    its default handling)."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self, stop: Callable[[], Any], *, exit: Callable[[int], Any] = os._exit,
                 signals: Iterable[int] = SIGNALS) -> None:
        self.stop = stop
        self.exit = exit
        self.signals = tuple(signals)
        self.received = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._saved: dict[int, Any] = {}  # the handlers before install, put back by remove()
        self._armed = False

    def install(self) -> "StopSignals":
        loop = asyncio.get_running_loop()
        saved = {sig: signal.getsignal(sig) for sig in self.signals}
        for sig in self.signals:
            try:
                loop.add_signal_handler(sig, self.on_signal, sig)
            except (NotImplementedError, RuntimeError, ValueError):
                return self
        self._loop, self._saved = loop, saved
        return self

    def remove(self) -> None:
        loop, self._loop = self._loop, None
        if loop is None:
            return
        for sig in self.signals:
            if self._armed:
                signal.signal(sig, self._saved[sig])
            elif not loop.is_closed():
                loop.remove_signal_handler(sig)

    def on_signal(self, sig: int) -> None:
        self.received += 1
        if self.received > 1:
            self.exit_now(sig)
            return
        self._arm()
        self.stop()

    def _arm(self) -> None:
        """From now on a signal exits from the signal handler itself."""
        if self._loop is None or self._armed:
            return
        for sig in self.signals:
            self._loop.remove_signal_handler(sig)
            signal.signal(sig, lambda signum, _frame: self.exit_now(signum))
        self._armed = True

    def exit_now(self, sig: int) -> None:
        print(f"{signal.Signals(sig).name} again: exiting at once", file=sys.stderr, flush=True)
        self.exit(128 + sig)
