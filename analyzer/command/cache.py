"""The result cache: a kernel source analysed once is not analysed again while nothing that can
change its verdict changed.

An entry holds what `pipeline.check_file` returns for one file, or what `pipeline.check_built`
returns for one TVM build (the build itself is not cached: it is what produces the source). Its key
is a SHA-256 over everything the results depend on:

- the source as analysed (a file's text after SPIR-V disassembly; a build's emitted sources, launch
  extents, buffer shapes, host definitions, target and parameters), the file names findings carry,
  block/grid dimensions and defines;
- every option that can change a verdict (`pipeline.Options`: strict, solver and kernel timeouts,
  selected rules, hints, explain);
- kernelrace's version and a hash of its own source files (analyzer/, rules/, grammars/), so that
  editing a checkout invalidates every entry; Z3's version; TVM's version for builds.

Entries live in `<dir>/v<FORMAT>/<key[:2]>/<key>.pickle`, written to a temporary file in the same
directory and moved in place with `os.replace`: a reader sees a whole entry or none, and two runs
writing the same key leave one of two equal entries. An entry is a header, the SHA-256 of the
payload and the payload, a pickle of {"key": ..., "results": ...} read by an unpickler that builds
only the finding classes and plain values. Anything else — a truncated, corrupt, foreign-version
entry, or one renamed under another key — is a miss: analysed again and overwritten, never trusted.

A cached `KernelResult` says so (`cached`), and its `seconds` is what this run spent reading it:
`-v`'s analysis total is the work this run did. Its `queries` are the first analysis's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import pickle
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from analyzer.findings import Finding, KernelResult, Location

FORMAT = 1
MAGIC = b"kernelrace-cache %d\n" % FORMAT
ENV = "KERNELRACE_CACHE_DIR"
NO_CACHE_ENV = "KERNELRACE_NO_CACHE"   # set (not "0"): as --no-cache
ROOT = Path(__file__).resolve().parents[2]    # the checkout (or site-packages) holding OWN_SOURCES
OWN_SOURCES = ("analyzer", "rules", "grammars")


def default_dir() -> str:
    """`KERNELRACE_CACHE_DIR`, else the platform's user cache directory (~/.cache/kernelrace on Linux)."""
    if os.environ.get(ENV):
        return os.environ[ENV]
    import platformdirs
    return platformdirs.user_cache_dir("kernelrace", appauthor=False)


@lru_cache(maxsize=None)
def _versions() -> tuple:
    """kernelrace's version and source hash, and Z3's version: part of every key."""
    import z3

    digest = hashlib.sha256()
    for pkg in OWN_SOURCES:
        for p in sorted((ROOT / pkg).rglob("*")):
            if p.suffix in (".py", ".lark") and "__pycache__" not in p.parts:
                digest.update(p.relative_to(ROOT).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return (FORMAT, _dist_version("kernelrace"), digest.hexdigest(), z3.get_version_string())


def _dist_version(name: str) -> str:
    from importlib import metadata
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


@lru_cache(maxsize=None)
def tvm_version() -> str:
    return _dist_version("apache-tvm")


class Uncacheable(Exception):
    """An input with no stable description (an object printed by address): not cached."""


def _canon(obj: Any) -> Any:
    """A value that `repr`s the same in every process for equal inputs: dataclasses by their
    fields, sets sorted; dicts keep their order (it is deterministic, and may matter)."""
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return obj
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_canon(v) for v in obj])
    if isinstance(obj, dict):
        return ("dict", [(_canon(k), _canon(v)) for k, v in obj.items()])
    if isinstance(obj, (set, frozenset)):
        return ("set", sorted(repr(_canon(v)) for v in obj))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return (type(obj).__qualname__, [(f.name, _canon(getattr(obj, f.name))) for f in dataclasses.fields(obj)])
    text = repr(obj)
    if " at 0x" in text:
        raise Uncacheable(type(obj).__name__)
    return (type(obj).__qualname__, text)


class _Unpickler(pickle.Unpickler):
    """Builds the finding classes and plain values only: an entry cannot run code."""
    ALLOWED = {("analyzer.findings", c.__name__) for c in (KernelResult, Finding, Location)} | {
        ("builtins", n) for n in ("set", "frozenset", "complex", "slice", "range", "bytearray")}

    def find_class(self, module: str, name: str):
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a cache entry")
        return super().find_class(module, name)


def _loads(payload: bytes) -> Any:
    return _Unpickler(io.BytesIO(payload)).load()


@dataclass(frozen=True)
class ResultCache:
    """The cache in directory `root` (created when first written). Picklable: workers get it."""
    root: str

    def key(self, kind: str, inputs: Any) -> str | None:
        try:
            described = repr((_versions(), kind, _canon(inputs)))
        except Uncacheable:
            return None
        return hashlib.sha256(described.encode()).hexdigest()

    def path(self, key: str) -> Path:
        return Path(self.root) / f"v{FORMAT}" / key[:2] / f"{key}.pickle"

    def get(self, key: str) -> list[KernelResult] | None:
        try:
            data = self.path(key).read_bytes()
        except OSError:
            return None
        body = data[len(MAGIC):]
        if not data.startswith(MAGIC) or len(body) < 32 or hashlib.sha256(body[32:]).digest() != body[:32]:
            return None
        try:
            entry = _loads(body[32:])
        except Exception:   # noqa: BLE001  (whatever a damaged pickle raises, it is a miss)
            return None
        if (not isinstance(entry, dict) or entry.get("key") != key or not isinstance(entry.get("results"), list)
                or not all(isinstance(r, KernelResult) for r in entry["results"])):
            return None
        return entry["results"]

    def put(self, key: str, results: list[KernelResult]) -> None:
        """Store atomically; a cache that cannot be written (read-only, full) is no error."""
        payload = pickle.dumps({"key": key, "results": results}, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            _loads(payload)    # a value the reader would refuse (an unexpected class) is not stored
        except Exception:   # noqa: BLE001
            return
        target = self.path(key)
        tmp = None
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".pickle", dir=target.parent)
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, target)
            tmp = None
        except OSError:
            pass
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def through(self, kind: str, inputs: Any, compute: Callable[[], list[KernelResult]],
                kernel_timeout_s: float) -> list[KernelResult]:
        """The cached results for `inputs`, or `compute()`'s, stored for next time."""
        t0 = time.perf_counter()
        key = self.key(kind, inputs)
        if key is not None:
            hit = self.get(key)
            if hit is not None:
                share = (time.perf_counter() - t0) / max(len(hit), 1)
                for r in hit:
                    r.seconds, r.cached = share, True
                return hit
        results = compute()
        # A kernel stopped by the wall-clock or memory limit has `unknown`s another run may decide: not kept.
        if key is not None and all(r.seconds < kernel_timeout_s and not r.stopped for r in results):
            self.put(key, results)
        return results
