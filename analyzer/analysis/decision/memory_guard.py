"""`--kernel-memory MB`: a kernel whose analysis grows the process by more than MB stops, and is
reported `unknown` with that reason, instead of exhausting the machine.

A watcher thread reads the process's resident size (/proc/self/statm) every few milliseconds while
one kernel is analysed. Past the limit it raises a flag and interrupts Z3, whose search runs in C
and would otherwise finish its query first. The analysis stops at its next `checkpoint()`: every
statement the symbolic executor or the replay runs, every state of an interval walk, every
solver query. (An exception thrown into the analysing thread from outside would stop it sooner,
but wherever it lands: inside Z3's Python layer, between a C call and its reference counting,
it corrupted Z3's memory, and the process crashed or hung at exit.)
Without /proc (not Linux) there is no guard and the limit is not enforced.
"""

from __future__ import annotations

import os
import threading

import z3

DEFAULT_MB = 2048
POLL_S = 0.02
_STATM = "/proc/self/statm"
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_over = False    # the analysis under the active guard has outgrown its limit


class KernelMemoryExceeded(BaseException):
    """Raised at a checkpoint once the kernel grew the process past the limit. (A BaseException,
    as KeyboardInterrupt is: no `except Exception` on the way may swallow it.)"""


def checkpoint() -> None:
    """Stop here if the analysis has outgrown its limit."""
    if _over:
        raise KernelMemoryExceeded


def rss_bytes() -> int:
    with open(_STATM) as f:
        return int(f.read().split()[1]) * _PAGE


class MemoryGuard:
    """`with MemoryGuard(mb):` around one kernel's analysis (0 or None: no limit)."""

    def __init__(self, limit_mb: int | None):
        self.limit = (limit_mb or 0) * 1024 * 1024
        self.exceeded = False    # past the limit (Z3 interrupted: its calls may raise `canceled`)
        self.base = 0
        self._thread: threading.Thread | None = None

    def __enter__(self) -> "MemoryGuard":
        global _over
        _over = False
        if not self.limit or not os.path.exists(_STATM):
            return self
        self.base = rss_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="kernelrace-memory-guard", daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        global _over
        while not self._stop.wait(POLL_S):
            if rss_bytes() - self.base > self.limit:
                self.exceeded = _over = True
                ctx = z3.z3._main_ctx
                if ctx is not None:
                    ctx.interrupt()
                return

    def __exit__(self, *exc) -> None:
        global _over
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
        _over = False
