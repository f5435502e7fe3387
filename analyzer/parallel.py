"""Work in worker processes, results taken in the order it was submitted.

`kernelrace check`, `lint`, `llm` and the configured run hand each unit of work (a file, a build)
to `Workers.submit`, then read the results in submission order: the report is the same, byte for
byte, whatever `--jobs` is. One worker (`--jobs 1`) runs nothing ahead: a unit runs when its result
is asked for, in this process, exactly as before there were workers.

Workers start from a fork server (the `forkserver` start method): a clean process forks them, not
this one, which may already hold TVM's and Z3's threads. A worker's exception (a KernelraceError
for bad input, anything else for a bug) is raised again where its result is read.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Callable


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:   # not on Linux
        return max(1, os.cpu_count() or 1)


class _Deferred:
    """A unit of work run in this process when its result is first asked for."""

    def __init__(self, fn: Callable[..., Any], args: tuple) -> None:
        self.fn, self.args = fn, args

    def result(self) -> Any:
        return self.fn(*self.args)


class Workers:
    """`with Workers(jobs) as w: handles = [w.submit(fn, *args) ...]; [h.result() for h in handles]`.
    `fn` must be a module-level function and its arguments picklable when jobs > 1."""

    def __init__(self, jobs: int) -> None:
        self.jobs = max(1, jobs)
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, *exc) -> None:
        if self._pool is not None:
            # An error on the way out (a bad file) must not wait for the work queued behind it.
            self._pool.shutdown(wait=exc[0] is None, cancel_futures=True)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future | _Deferred:
        if self.jobs == 1:
            return _Deferred(fn, args)
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context("forkserver"))
        return self._pool.submit(fn, *args)
