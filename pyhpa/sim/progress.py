"""Progress of a long command on stderr: a live bar on a terminal, plain lines elsewhere (CI,
``nohup``, a pipe), so a run of minutes is never silent.

One helper for every long command (``simulate``, ``tune``, reads of history)::

    mode = progress_mode(flag)  # --progress/--no-progress: True, False or None (not given)
    with Progress("tuning: 60 candidates", total=60, unit="candidates", mode=mode) as p:
        for ...:
            p.advance()  # or p.update(done): the amount done so far

``mode`` is ``"bar"`` (a rich bar, redrawn in place, gone when done), ``"lines"`` (a line
``label: done/total unit (pct %), elapsed h:mm:ss`` at most every :data:`LINE_INTERVAL` seconds,
then one saying it finished; a run shorter than that prints nothing) or ``"off"``. Nothing here
starts a thread until a bar is entered: callers that fork workers enter it after forking.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any, Callable, TextIO

LINE_INTERVAL = 10.0  # seconds between two progress lines
MODES = ("bar", "lines", "off")


def progress_mode(flag: bool | None, stream: TextIO | None = None) -> str:
    """The mode for a ``--progress/--no-progress`` flag: off when refused, else a bar when the
    stream (stderr) is a terminal and lines when it is not."""
    if flag is False:
        return "off"
    out = stream if stream is not None else sys.stderr
    isatty = getattr(out, "isatty", None)
    return "bar" if isatty is not None and isatty() else "lines"


def elapsed_text(seconds: float) -> str:
    """``0:03:29``: hours, minutes, seconds."""
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Progress:
    """Work done out of ``total`` (in ``unit``), shown per ``mode``; ``show`` formats an amount
    (default: as it is); ``clock`` and ``stream`` are for tests."""

    def __init__(self, label: str, total: float, unit: str = "", mode: str = "lines", *,
                 show: Callable[[float], str] | None = None, stream: TextIO | None = None,
                 interval: float | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        if mode not in MODES:
            raise ValueError(f"progress mode {mode!r}: expected one of {', '.join(MODES)}")
        self.label, self.total, self.unit, self.mode = label, total, unit, mode
        self.show = show or (lambda v: f"{v:g}")
        self.stream = stream
        self.interval = LINE_INTERVAL if interval is None else interval
        self.clock = clock
        self.done = 0.0
        self.lines = 0  # lines written
        self._started = self._last = 0.0
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> "Progress":
        self._started = self._last = self.clock()
        if self.mode == "bar":
            from rich.console import Console
            from rich.progress import BarColumn, Progress as Bar, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            console = Console(file=self.stream or sys.stderr)
            self._bar = Bar(TextColumn("[bold]{task.description}"), BarColumn(),
                            TextColumn("{task.percentage:>5.1f}%"), TimeElapsedColumn(), TimeRemainingColumn(),
                            console=console, transient=True)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.label, total=self.total)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.__exit__(kind, exc, tb)
            self._bar = None
        elif self.mode == "lines" and self.lines and kind is None:
            self._write(f"{self.label}: done, {self.show(self.done)}/{self.show(self.total)} {self.unit} in "
                        f"{elapsed_text(self.clock() - self._started)}")

    def update(self, done: float, total: float | None = None) -> None:
        """The amount done so far (absolute), and the total when it has turned out larger."""
        self.done = done
        if total is not None:
            self.total = total
        if self._bar is not None:
            self._bar.update(self._task, completed=done, total=self.total)
        elif self.mode == "lines":
            now = self.clock()
            if now - self._last >= self.interval:
                self._last = now
                self._write(self.line(now))

    def advance(self, amount: float = 1.0) -> None:
        self.update(self.done + amount)

    def line(self, now: float | None = None) -> str:
        """The progress line as of ``now`` (default: the clock's now)."""
        now = self.clock() if now is None else now
        pct = 100.0 * self.done / self.total if self.total else 100.0
        return (f"{self.label}: {self.show(self.done)}/{self.show(self.total)} {self.unit} ({pct:.0f} %), "
                f"elapsed {elapsed_text(now - self._started)}")

    def _write(self, text: str) -> None:
        out = self.stream or sys.stderr
        out.write(text.rstrip() + "\n")
        out.flush()
        self.lines += 1
