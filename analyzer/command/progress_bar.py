"""A progress bar on stderr for `check` and `lint` runs that take a while, as ruff and pip show one.

Only on a terminal: a pipe, a file or a CI log gets nothing (the report on stdout is the same in
either case). Only after `DELAY_S` seconds: a run that ends sooner shows no bar at all, so quick
runs in an editor do not flicker. The bar is transient (erased when the run ends).
"""

from __future__ import annotations

import os
import threading

from rich.console import Console
from rich.markup import escape

DELAY_S = 2.0
DELAY_ENV = "KERNELRACE_PROGRESS_DELAY"   # seconds before the bar appears (tests set 0)


class DelayedBar:
    """`advance(label)` after each unit of `total`; the bar appears `delay` seconds after the
    start when the console is a terminal and the run has not ended."""

    def __init__(self, console: Console, total: int, what: str, enabled: bool = True, delay: float | None = None):
        self.console = console
        self.total = total
        self.what = what
        self.done = 0
        self.label = ""
        self.progress = None
        self._task = None
        self._lock = threading.Lock()
        self._closed = False
        self._timer = None
        if delay is None:
            delay = float(os.environ.get(DELAY_ENV) or DELAY_S)
        if enabled and console.is_terminal:
            self._timer = threading.Timer(delay, self._show)
            self._timer.daemon = True
            self._timer.start()

    def _show(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with self._lock:
            if self._closed:
                return
            self.progress = Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                                     MofNCompleteColumn(), TimeElapsedColumn(), console=self.console,
                                     transient=True)
            self._task = self.progress.add_task(self._description(), total=self.total, completed=self.done)
            self.progress.start()

    def _description(self) -> str:
        return escape(f"{self.what} {self.label}".strip())

    def advance(self, label: str = "") -> None:
        with self._lock:
            self.done += 1
            self.label = label
            if self.progress is not None:
                self.progress.update(self._task, completed=self.done, description=self._description())

    @property
    def shown(self) -> bool:
        return self.progress is not None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            if self.progress is not None:
                self.progress.stop()

    def __enter__(self) -> "DelayedBar":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
