"""Running libclang where its crashes cannot reach kernelrace: the parse and the lowering happen in
a forked child that sends back its result (the kernels, the notes) pickled; a child killed by a
signal (libclang dereferencing what it should not on some real files) is a one-line
KernelraceError for that file. Where fork is missing (not POSIX) the work runs in this process.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys

from analyzer.errors import KernelraceError


def in_child(fn, args: tuple, filename: str):
    """fn(*args) run in a forked child: its result, or the KernelraceError it raised; a crash is a
    KernelraceError naming the signal."""
    if not hasattr(os, "fork") or os.environ.get("KERNELRACE_CLANG_IN_PROCESS"):
        return fn(*args)
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:   # the child: never returns into the caller's code
        code = 0
        try:
            import faulthandler
            faulthandler.disable()   # a crash is reported by the parent, in one line
            os.close(read_end)
            try:
                out = ("ok", fn(*args))
            except KernelraceError as exc:
                out = ("error", str(exc))
            except RecursionError:
                out = ("error", f"{filename}: nested too deeply for the clang front end")
            except Exception as exc:   # noqa: BLE001 (one line for the file, never a traceback)
                out = ("error", f"{filename}: the clang front end could not read the file "
                                f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})")
            data = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as f:
                f.write(data)
        except BaseException:   # anything else: the parent reports it in one line
            code = 3
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        raise KernelraceError(f"{filename}: libclang crashed reading the file ({name}); the clang front end "
                              f"cannot read it")
    if os.WEXITSTATUS(status) != 0 or not data:
        raise KernelraceError(f"{filename}: the clang front end failed on the file (exit {os.WEXITSTATUS(status)})")
    kind, value = pickle.loads(data)
    if kind == "error":
        raise KernelraceError(value)
    return value
