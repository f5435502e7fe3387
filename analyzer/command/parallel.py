"""Work in worker processes, results taken in the order it was submitted.

`kernelrace check`, `lint`, `llm` and the configured run hand each unit of work (a file, a build)
to `Workers.submit`, then read the results in submission order: the report is the same, byte for
byte, whatever `--jobs` is. One worker (`--jobs 1`) runs nothing ahead: a unit runs when its result
is asked for, in this process, exactly as before there were workers.

Workers start from a fork server (the `forkserver` start method): a clean process forks them, not
this one, which may already hold TVM's and Z3's threads. A worker's exception (a KernelraceError
for bad input, anything else for a bug) is raised again where its result is read.

A worker that dies (TVM's own segfault, the kernel's out-of-memory killer) breaks the pool and every
unit in it. The units not yet read go to a fresh pool; the one being read runs again alone in a
process of its own, and if that process dies too, its result is a `WorkerDied` error (a
KernelraceError naming the signal), raised where the result is read: one unit, not the run.

`--cluster ADDRESS` hands the same units to a Dask distributed scheduler instead (each unit one
task, its result read in submission order as above, so the report is the same again). A worker
needs kernelrace (and the project's builder modules) importable. A task runs in this process's
working directory when the worker has that directory (the same checkout at the same path, or a
shared file system), so relative file names and builder modules resolve as they do here; and the
tasks of one worker process run one at a time, whatever its thread count: the memory guard and
Z3's interruption are per process (analyzer/analysis/decision/memory_guard.py).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import sys
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable

from analyzer.errors import KernelraceError

CONNECT_TIMEOUT_S = 10


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


class WorkerDied(KernelraceError):
    """The process running a unit of work died (a signal, or an exit without a result)."""


class _Pooled:
    """A unit of work in the pool; survives the pool's breaking (see the module docstring)."""

    def __init__(self, workers: "Workers", fn: Callable[..., Any], args: tuple) -> None:
        self.workers, self.fn, self.args = workers, fn, args
        self.read = False
        self.pool, self.future = workers._pool_submit(fn, args)

    def result(self) -> Any:
        try:
            return self.future.result()
        except BrokenProcessPool:
            self.workers._restart(self)
            return run_alone(self.fn, self.args)
        finally:
            self.read = True


class Workers:
    """`with Workers(jobs) as w: handles = [w.submit(fn, *args) ...]; [h.result() for h in handles]`.
    `fn` must be a module-level function and its arguments picklable when jobs > 1 or on a
    `cluster` (a Dask scheduler's address; `jobs` is then the cluster's business)."""

    def __init__(self, jobs: int, cluster: str | None = None, isolate: bool = False) -> None:
        self.jobs = max(1, jobs)
        # isolate: even one job runs in a worker process, so that a crash there is one unit's
        # (`kernelrace model`, whose TVM steps are known to segfault)
        self.isolate = isolate
        self._pool: ProcessPoolExecutor | None = None
        self._cluster = Cluster(cluster) if cluster else None
        self._units: list[_Pooled] = []

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, *exc) -> None:
        if self._pool is not None:
            # An error on the way out (a bad file) must not wait for the work queued behind it.
            self._pool.shutdown(wait=exc[0] is None, cancel_futures=True)
        if self._cluster is not None:
            self._cluster.close(cancel=exc[0] is not None)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        if self._cluster is not None:
            return self._cluster.submit(fn, *args)
        if self.jobs == 1 and not self.isolate:
            return _Deferred(fn, args)
        unit = _Pooled(self, fn, args)
        self._units.append(unit)
        return unit

    def _pool_submit(self, fn: Callable[..., Any], args: tuple) -> tuple[ProcessPoolExecutor, Future]:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context("forkserver"))
        return self._pool, self._pool.submit(fn, *args)

    def _restart(self, reading: _Pooled) -> None:
        """The pool `reading` ran in broke: the units it held that are not read yet, and did not
        finish before it broke, go to a fresh pool (`reading` itself runs alone)."""
        broken = reading.pool
        if broken is not self._pool:
            return      # already replaced when an earlier unit of it was read
        self._pool = None
        broken.shutdown(wait=False, cancel_futures=True)
        for u in self._units:
            if u.pool is broken and u is not reading and not u.read and (not u.future.done() or _broke(u.future)):
                u.pool, u.future = self._pool_submit(u.fn, u.args)


def _broke(f: Future) -> bool:
    return f.cancelled() or isinstance(f.exception(), BrokenProcessPool)


def run_alone(fn: Callable[..., Any], args: tuple) -> Any:
    """`fn(*args)` in a process of its own; WorkerDied when that process dies."""
    ctx = multiprocessing.get_context("forkserver")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_alone, args=(send, fn, args), daemon=True)
    proc.start()
    send.close()
    try:
        ok, value = receive.recv()
    except EOFError:
        proc.join()
        raise WorkerDied(f"the worker process died ({_death(proc.exitcode)}) while running "
                         f"{getattr(fn, '__name__', 'a unit')}{_shown_args(args)}: a crash in TVM or a native "
                         f"library it calls, or the system's out-of-memory killer") from None
    finally:
        receive.close()
    proc.join()
    if ok:
        return value
    raise value


def _alone(send, fn: Callable[..., Any], args: tuple) -> None:
    try:
        out = (True, fn(*args))
    except BaseException as exc:  # noqa: BLE001  (raised again in the parent, as a pool would)
        out = (False, exc)
    send.send(out)
    send.close()


def _death(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def _shown_args(args: tuple) -> str:
    """The unit's leading string arguments (a file, a builder and its target), for the message."""
    words = [a for a in args[:4] if isinstance(a, str)]
    return f" ({', '.join(words)})" if words else ""


# --- a Dask distributed cluster ------------------------------------------------------------------

def check_address(address: str) -> None:
    """A one-line error unless `address` names a scheduler that accepts connections. A TCP address
    is tried with a plain socket first: nothing listening is an immediate refusal, where Dask's own
    client retries until its timeout."""
    from distributed.comm.addressing import get_address_host_port, parse_address

    try:
        scheme, _ = parse_address(address)
        if scheme not in ("tcp", "tls"):
            return      # ucx://, inproc://: only Dask's client can tell
        host, port = get_address_host_port(address)
    except ValueError as exc:
        raise KernelraceError(f"--cluster {address}: not a Dask scheduler address (expected HOST:PORT or "
                              f"tcp://HOST:PORT): {exc}") from None
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise KernelraceError(f"--cluster {address}: cannot reach the Dask scheduler: "
                              f"{exc.strerror or exc}") from None


class Cluster:
    """A client of the Dask scheduler at `address`; its tasks run `fn(*args)` through `_task`."""

    def __init__(self, address: str) -> None:
        try:
            import distributed
        except ImportError:
            raise KernelraceError("--cluster needs Dask distributed: python -m pip install 'kernelrace[cluster]'") from None
        check_address(address)
        try:
            self.client = distributed.Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
        except Exception as exc:  # noqa: BLE001  (OSError, TimeoutError, a version mismatch)
            raise KernelraceError(f"--cluster {address}: cannot connect to the Dask scheduler: "
                                  f"{' '.join(str(exc).split()) or type(exc).__name__}") from None
        try:
            self._same_kernelrace(address)
        except BaseException:
            self.client.close()
            raise
        self._futures: list[Any] = []
        # What a task needs to see the files and modules this process sees.
        self._where = (os.getcwd(), [p for p in sys.path if p and os.path.isabs(p)])

    def _same_kernelrace(self, address: str) -> None:
        """The scheduler unpickles our tasks and the workers run them: both must import this
        kernelrace, and the workers must analyse with the same sources, Z3 and TVM, or the report
        would depend on where a unit ran."""
        here = fingerprint()
        try:
            self.client.run_on_scheduler(_importable)
            there = self.client.run(fingerprint)
        except Exception as exc:  # noqa: BLE001  (whatever unpickling or importing raised there)
            first = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
            raise KernelraceError(f"--cluster {address}: the cluster cannot run kernelrace's tasks ({first.strip()}); "
                                  f"its scheduler and workers need this kernelrace importable") from None
        if not there:
            raise KernelraceError(f"--cluster {address}: the scheduler has no workers")
        for worker, theirs in sorted(there.items()):
            if theirs != here:
                raise KernelraceError(f"--cluster {address}: worker {worker} runs another kernelrace, Z3 or TVM "
                                      f"than this process ({_shown(theirs)} there, {_shown(here)} here)")

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        # pure=False: every unit runs, even two with equal arguments (and nothing is shared
        # between runs through Dask's own result keys).
        f = self.client.submit(_task, self._where, fn, *args, pure=False)
        self._futures.append(f)
        return f

    def close(self, cancel: bool) -> None:
        if cancel and self._futures:
            self.client.cancel(self._futures)
        self._futures = []
        self.client.close()


def _importable() -> bool:
    return True


def fingerprint() -> tuple:
    """What a verdict depends on besides its inputs: kernelrace's version and source hash, Z3's and
    TVM's versions (the result cache's key has the same)."""
    from analyzer.command.cache import _versions, tvm_version
    return (*_versions(), tvm_version())


def _shown(fp: tuple) -> str:
    _, version, digest, z3, tvm = fp
    return f"kernelrace {version} sources {digest[:12]}, Z3 {z3}, TVM {tvm}"


_one_at_a_time = threading.Lock()


def _task(where: tuple[str, list[str]], fn: Callable[..., Any], *args: Any) -> Any:
    """A unit of work on a Dask worker: one at a time per worker process, in the client's working
    directory when the worker has it, with the client's import path directories it has."""
    cwd, paths = where
    with _one_at_a_time:
        for p in paths:
            if p not in sys.path and os.path.isdir(p):
                sys.path.append(p)   # after the worker's own: its installation comes first
        before = os.getcwd()
        moved = cwd != before and os.path.isdir(cwd)
        if moved:
            os.chdir(cwd)
        try:
            return fn(*args)
        finally:
            if moved:
                os.chdir(before)
