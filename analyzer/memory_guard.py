"""`--kernel-memory MB`: a kernel whose analysis grows the process by more than MB stops, and is
reported `unknown` with that reason, instead of exhausting the machine.

A watcher thread reads the process's resident size (/proc/self/statm) every few milliseconds while
one kernel is analysed. Past the limit it raises `KernelMemoryExceeded` in the analysing thread
(CPython's asynchronous exception, delivered at its next bytecode) and interrupts Z3, whose search
runs in C and would otherwise finish its query first. Every part of the analysis is stopped the same
way, whatever it is doing: symbolic execution, interval walks, solver queries, fix re-checks.
Without /proc (not Linux) there is no guard and the limit is not enforced.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from pathlib import Path

import z3

DEFAULT_MB = 2048
POLL_S = 0.02
_STATM = "/proc/self/statm"
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_Z3 = str(Path(z3.__file__).resolve().parent)


class KernelMemoryExceeded(BaseException):
    """Raised in the analysing thread when its kernel grew the process past the limit. (A
    BaseException, as KeyboardInterrupt is: no `except Exception` on the way may swallow it.)"""


def rss_bytes() -> int:
    with open(_STATM) as f:
        return int(f.read().split()[1]) * _PAGE


class MemoryGuard:
    """`with MemoryGuard(mb):` around one kernel's analysis (0 or None: no limit)."""

    def __init__(self, limit_mb: int | None):
        self.limit = (limit_mb or 0) * 1024 * 1024
        self.exceeded = False    # past the limit (Z3 interrupted: its calls may raise `canceled`)
        self.tripped = False     # the exception was raised in the analysing thread
        self.base = 0
        self._thread: threading.Thread | None = None

    def __enter__(self) -> "MemoryGuard":
        if not self.limit or not os.path.exists(_STATM):
            return self
        self.base = rss_bytes()
        self._target = threading.get_ident()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="kernelrace-memory-guard", daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._stop.wait(POLL_S):
            if rss_bytes() - self.base > self.limit:
                self.exceeded = True
                ctx = z3.z3._main_ctx
                if ctx is not None:
                    ctx.interrupt()
                # Not delivered inside Z3's Python layer (tried again at the next poll): an
                # exception in the middle of its bookkeeping (a context half built) breaks it.
                frame = sys._current_frames().get(self._target)
                if frame is not None and frame.f_code.co_filename.startswith(_Z3):
                    continue
                self.tripped = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._target),
                                                           ctypes.py_object(KernelMemoryExceeded))
                return

    def __exit__(self, *exc) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        if self.tripped:
            # Tripped as the block ended: the exception may still be pending; it must not fire
            # in whatever runs next.
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._target), None)
