"""The TVM versions kernelrace is tested against, and the check made where TVM is first imported.

kernelrace reads what TVM emits and walks its TIR: a TVM outside the tested range can change either
silently, so importing one is a one-line error (exit 2) rather than a traceback deep in a build or,
worse, a wrong verdict. `KERNELRACE_ANY_TVM=1` lets a user try another build (a nightly, an MLC
one) anyway. pyproject.toml's `apache-tvm` requirement is the same range (tests/test_packaging.py).
"""

from __future__ import annotations

import os
import re

from analyzer.errors import KernelraceError

TESTED = (0, 27)            # major, minor: every 0.27.x release (post releases included)
REQUIREMENT = "apache-tvm>=0.27,<0.28"
ANY_TVM_ENV = "KERNELRACE_ANY_TVM"

_checked = False


def release(version: str) -> tuple[int, ...] | None:
    """The leading release numbers of a version string ('0.27.0.post1' -> (0, 27, 0)); None when
    it does not start with one."""
    m = re.match(r"\s*v?(\d+(?:\.\d+)*)", version)
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def supported(version: str) -> bool:
    """Within the tested range: the same major and minor release, and not a pre-release of it
    (a '0.27.dev0' nightly precedes 0.27.0)."""
    got = release(version)
    if got is None or got[:2] != TESTED:
        return False
    rest = version.strip().lstrip("v")[len(".".join(map(str, got))):].lower()
    return not re.match(r"[._-]?(dev|a|alpha|b|beta|c|rc|pre|preview)\d*", rest)


def require_tvm():
    """Import TVM and return it, or raise a one-line KernelraceError: not installed, or a version
    outside the tested range (unless $KERNELRACE_ANY_TVM is set)."""
    global _checked
    try:
        import tvm
    except ImportError as exc:
        raise KernelraceError(f"TVM is not installed (python -m pip install '{REQUIREMENT}'): {exc}") from None
    if not _checked:
        version = str(getattr(tvm, "__version__", "unknown"))
        if not supported(version) and os.environ.get(ANY_TVM_ENV, "") in ("", "0"):
            raise KernelraceError(f"TVM {version} (from {os.path.dirname(getattr(tvm, '__file__', '') or '?')}) is "
                                  f"not a version kernelrace is tested with ({REQUIREMENT}); install that, or set "
                                  f"{ANY_TVM_ENV}=1 to try this one anyway")
        _checked = True
    return tvm
