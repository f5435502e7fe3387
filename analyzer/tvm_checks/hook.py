"""Opt-in TVM build hook: check every GPU kernel TVM builds in this process.

    from analyzer import tvm_hook               # the name users import (analyzer/tvm_hook.py)

    with tvm_hook.checking("raise"):          # or "collect"
        tvm.compile(mod, target="cuda")       # raises tvm_hook.RaceError on an error finding

    tvm_hook.install("collect")               # process-wide, until uninstall()
    tvm_hook.install_from_env()               # KERNELRACE_TVM_HOOK=raise|collect

Importing this module changes nothing and does not import TVM.

Interception point. Every TVM build of TIR (`tvm.tirx.build`, `tvm.compile`, `tvm.relax.build`,
the deprecated `tvm.build`, MetaSchedule's builder) runs `build()` in the Python module
`tvm.tirx.build`, which calls three functions of that module by their global names:
`split_host_device_mods` (the lowered module split into the host module and one device module per
target: what kernelrace's own `build()` reads host definitions from), `tir_to_runtime` (device
finalization done, turns the modules into a runtime module) and, from it, `codegen_build` once per
device module (calls the registered codegen `target.build.<kind>`; receives the device IRModule
and returns the module holding the emitted source). The hook replaces those three module globals
with wrappers, so it sees every build however `build` was reached (including a `build` imported
before the hook was installed), gets the device IRModule the codegen received (launch extents)
together with the source it emitted, the host module (scalar kernel parameters as the host
computes them) and the buffers the host declares for the parameters (their shapes), and raises
from plain Python inside the build call. Wrapping the registered codegen functions themselves
(`tvm.register_global_func("target.build.cuda", ..., override=True)`) would also work, but the
codegen sees only the device module, and an exception raised there crosses the FFI and comes back
as a bare `RuntimeError`.

Targets: CUDA, Metal, WebGPU and OpenCL are checked from TVM's emitted source. Vulkan: the `apache-tvm` wheel has
no Vulkan codegen (`target.build.vulkan` is not registered), so `tvm.tirx.build` for a vulkan
target fails inside TVM before anything is emitted, and the hook checks nothing (use
`kernelrace lint --target vulkan`, which lowers the TIR itself). With a TVM that has Vulkan codegen,
the hook checks the vulkan device module as `kernelrace lint` does (TVM's SPIR-V when the codegen
output is assembly text, otherwise the device TIR translated to GLSL). Other GPU targets (ROCm,
Hexagon) are not analysed; they are listed in `session.skipped`.

Sessions nest: a kernel is checked once, by the innermost active session (a `checking()` block
inside another, or inside a process-wide `install()`), so code that checks its own builds is not
reported again by an enclosing session (the pytest plugin's, for one).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from analyzer.errors import KernelraceError
from analyzer.findings import ERROR, SEVERITY_RANK, Finding, KernelResult

if TYPE_CHECKING:
    from analyzer.pipeline import Options

ENV_VAR = "KERNELRACE_TVM_HOOK"
MODES = ("raise", "collect")
FAIL_ON = ("error", "warning")
# TVM target kinds kernelrace analyses, and GPU kinds it knows it does not.
CHECKED_KINDS = ("cuda", "metal", "vulkan", "webgpu", "opencl")
UNCHECKED_GPU_KINDS = ("rocm", "hexagon")
_PATCHED = ("split_host_device_mods", "tir_to_runtime", "codegen_build")


class RaceError(Exception):
    """A kernel TVM built has a finding at or above the session's `fail_on` severity.

    The message is the text report of those findings; `results` holds the kernels (with only those
    findings), `findings` the findings."""

    def __init__(self, message: str, results: list[KernelResult]):
        super().__init__(message)
        self.results = results
        self.findings = [f for r in results for f in r.findings]


class HookWarning(UserWarning):
    """kernelrace could not check a kernel TVM built (the build itself is not affected)."""


@dataclass
class Session:
    """What one `checking()` block (or the process-wide `install()`) has checked."""
    mode: str = "collect"
    options: Options | None = None
    fail_on: str = ERROR
    results: list[KernelResult] = field(default_factory=list)
    # kernels kernelrace could not check: "NAME [target]: reason"
    errors: list[str] = field(default_factory=list)
    # GPU device modules of a kind kernelrace does not analyse: "NAME [target]"
    skipped: list[str] = field(default_factory=list)
    builds: int = 0         # device modules checked (one per TVM build and GPU target)

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.results for f in r.findings]

    def failing(self, results: list[KernelResult] | None = None) -> list[KernelResult]:
        """The kernels with findings at or above `fail_on`, each with only those findings."""
        return failing(self.results if results is None else results, self.fail_on)


def failing(results: list[KernelResult], fail_on: str = ERROR) -> list[KernelResult]:
    floor = SEVERITY_RANK[fail_on]
    out = []
    for r in results:
        bad = [f for f in r.findings if SEVERITY_RANK.get(f.severity, 0) >= floor]
        if bad:
            out.append(KernelResult(r.kernel, r.file, r.target, r.params, bad, r.seconds, r.queries))
    return out


def render(results: list[KernelResult]) -> str:
    """The text report (as `kernelrace lint` prints it, without colour) of these results."""
    from rich.console import Console

    from analyzer.report.text import print_text

    buf = io.StringIO()
    print_text(results, Console(file=buf, highlight=False, soft_wrap=True, no_color=True, emoji=False,
                                force_terminal=False, width=200))
    return buf.getvalue().rstrip("\n")


# --- session registry and patching -------------------------------------------------------------

_lock = threading.RLock()
_stack: list[Session] = []            # checking() blocks, innermost last
_process: Session | None = None       # install()
_originals: dict[str, Any] = {}       # name -> TVM's function, while patched
_wrappers: dict[str, Any] = {}        # name -> our wrapper, while patched
_local = threading.local()            # per thread: the last host/device split, open build frames


def current() -> Session | None:
    """The session that checks the next kernel built: the innermost active one, if any."""
    with _lock:
        return _stack[-1] if _stack else _process


def _build_module():
    import importlib

    from analyzer.tvm.version import require_tvm

    try:
        require_tvm()
    except KernelraceError as exc:      # the hook's callers raise RuntimeError
        raise RuntimeError(str(exc)) from None
    try:
        mod = importlib.import_module("tvm.tirx.build")
    except Exception as exc:  # no TVM, or a TVM without tirx
        raise RuntimeError(f"kernelrace's TVM hook needs TVM's tvm.tirx.build module: {exc}") from exc
    missing = [n for n in _PATCHED if not callable(getattr(mod, n, None))]
    if missing:
        raise RuntimeError(f"kernelrace's TVM hook: this TVM's tvm.tirx.build has no {', '.join(missing)} "
                           f"(written for apache-tvm 0.27)")
    return mod


def _sync() -> None:
    """Patch TVM while some session is active; restore its functions when none is."""
    with _lock:
        want = bool(_stack) or _process is not None
        if want and not _originals:
            mod = _build_module()
            for name in _PATCHED:
                orig = getattr(mod, name)
                wrapper = _WRAPPERS[name](orig)
                wrapper.__wrapped__ = orig
                _originals[name], _wrappers[name] = orig, wrapper
            for name in _PATCHED:
                setattr(mod, name, _wrappers[name])
        elif not want and _originals:
            mod = sys.modules.get("tvm.tirx.build")
            for name in _PATCHED:
                # Someone wrapped our wrapper since: leave theirs; ours passes through when inactive.
                if mod is not None and getattr(mod, name, None) is _wrappers[name]:
                    setattr(mod, name, _originals[name])
            _originals.clear()
            _wrappers.clear()


def is_installed() -> bool:
    """Whether TVM's build functions are currently wrapped."""
    with _lock:
        return bool(_originals)


def _make_session(mode: str, options, fail_on: str) -> Session:
    if mode not in MODES:
        raise ValueError(f"kernelrace TVM hook: mode must be one of {', '.join(MODES)}, not {mode!r}")
    if fail_on not in FAIL_ON:
        raise ValueError(f"kernelrace TVM hook: fail_on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    return Session(mode=mode, options=options, fail_on=fail_on)


@contextlib.contextmanager
def checking(mode: str = "raise", options: Options | None = None, fail_on: str = ERROR) -> Iterator[Session]:
    """Check every GPU kernel TVM builds during the block.

    mode "raise": the build call raises RaceError when a kernel has a finding at or above `fail_on`
    ("error", or "warning" to include data-dependent races and undecided pairs); the findings are
    also collected. mode "collect": only collect (`session.results`, `session.findings`).
    `options` are the analysis options (`analyzer.pipeline.Options`). TVM's functions are restored
    when the block exits, however it exits."""
    session = _make_session(mode, options, fail_on)
    with _lock:
        _stack.append(session)
        try:
            _sync()
        except BaseException:
            _stack.remove(session)
            raise
    try:
        yield session
    finally:
        with _lock:
            # remove this session even when blocks exit out of order (generators, threads)
            for i in range(len(_stack) - 1, -1, -1):
                if _stack[i] is session:
                    del _stack[i]
                    break
            _sync()


def install(mode: str = "raise", options: Options | None = None, fail_on: str = ERROR,
            report_at_exit: bool = False) -> Session:
    """Check every GPU kernel TVM builds from now on, process-wide, until `uninstall()`.

    Replaces an earlier `install()`. `checking()` blocks still take the kernels built inside them.
    With `report_at_exit`, the findings collected are printed to stderr when the process exits."""
    global _process
    session = _make_session(mode, options, fail_on)
    with _lock:
        previous = _process
        _process = session
        try:
            _sync()
        except BaseException:
            _process = previous
            raise
    if report_at_exit:
        import atexit

        atexit.register(_report_at_exit, session)
    return session


def uninstall() -> Session | None:
    """Undo `install()`; returns its session (None when not installed)."""
    global _process
    with _lock:
        session, _process = _process, None
        _sync()
    return session


def install_from_env(environ: dict[str, str] | None = None) -> Session | None:
    """`install()` as the environment variable KERNELRACE_TVM_HOOK says: "raise" or "collect"
    (collect prints its report to stderr at exit); unset, empty or "0": nothing (returns None)."""
    value = (os.environ if environ is None else environ).get(ENV_VAR, "").strip().lower()
    if value in ("", "0", "off", "no", "false"):
        return None
    if value not in MODES:
        raise ValueError(f"{ENV_VAR}={value!r}: expected one of {', '.join(MODES)} (or unset)")
    return install(value, report_at_exit=(value == "collect"))


def _report_at_exit(session: Session) -> None:
    if session.results and session.findings:
        print("kernelrace: findings in kernels TVM built in this process", file=sys.stderr)
        print(render([r for r in session.results if r.findings]), file=sys.stderr)
    for e in session.errors:
        print(f"kernelrace: could not check {e}", file=sys.stderr)


# --- the wrappers ------------------------------------------------------------------------------

def _wrap_split(orig):
    def split_host_device_mods(mod, *args, **kwargs):
        result = orig(mod, *args, **kwargs)
        if current() is not None:
            # build() hands the device modules, after finalization, to tir_to_runtime next
            _local.split = result
        return result
    return split_host_device_mods


def _wrap_tir_to_runtime(orig):
    def tir_to_runtime(host_mod, device_mod_dict, target_host, *args, **kwargs):
        if current() is None:
            return orig(host_mod, device_mod_dict, target_host, *args, **kwargs)
        frames = _frames()
        frames.append([])
        try:
            rt = orig(host_mod, device_mod_dict, target_host, *args, **kwargs)
        finally:
            built = frames.pop()
            split, _local.split = getattr(_local, "split", None), None
        _check(built, split)
        return rt
    return tir_to_runtime


def _wrap_codegen(orig):
    def codegen_build(mod, target, *args, **kwargs):
        rt = orig(mod, target, *args, **kwargs)
        if current() is None:
            return rt
        frames = _frames()
        if frames:
            frames[-1].append((mod, target, rt))
        else:   # called directly, not from a build: no host module to go with it
            _check([(mod, target, rt)], None)
        return rt
    return codegen_build


_WRAPPERS = {"split_host_device_mods": _wrap_split, "tir_to_runtime": _wrap_tir_to_runtime,
             "codegen_build": _wrap_codegen}


def _frames() -> list:
    frames = getattr(_local, "frames", None)
    if frames is None:
        frames = _local.frames = []
    return frames


# --- checking one build ------------------------------------------------------------------------

def _check(built: list, split) -> None:
    """Analyse the GPU device modules of one build; raise RaceError in a raising session."""
    session = current()
    if session is None:
        return
    new: list[KernelResult] = []
    for dev_mod, target, rt in built:
        kind = target.kind.name
        if kind not in CHECKED_KINDS:
            if kind in UNCHECKED_GPU_KINDS or "gpu" in [str(k) for k in getattr(target, "keys", ())]:
                session.skipped.append(f"{_name(dev_mod, split)} [{kind}]")
            continue
        name = _name(dev_mod, split)
        try:
            results = _analyse(dev_mod, target, rt, split, name, session.options)
        except Exception as exc:  # kernelrace failed, not the build: report it, never hide it
            lines = str(exc).strip().splitlines()
            reason = f"{type(exc).__name__}: {lines[-1] if lines else ''}".rstrip(": ")
            session.errors.append(f"{name} [{kind}]: {reason}")
            warnings.warn(f"kernelrace could not check the kernels of {name} [{kind}]: {reason}",
                          HookWarning, stacklevel=2)
            continue
        session.builds += 1
        session.results.extend(results)
        new.extend(results)
    if session.mode == "raise":
        bad = session.failing(new)
        if bad:
            n = sum(len(r.findings) for r in bad)
            raise RaceError(f"kernelrace: {n} finding(s) at or above {session.fail_on} in GPU kernel(s) "
                            f"TVM built:\n{render(bad)}", bad)


def _name(dev_mod, split) -> str:
    """What to call a build's device source: its host entry function when there is one."""
    kernels = sorted(gv.name_hint for gv in dev_mod.functions)
    if split is not None:
        host = split[0]
        entries = []
        for gv, func in host.functions.items():
            attrs = getattr(func, "attrs", None)
            if attrs is not None and attrs.get("tirx.is_entry_func", False):
                entries.append(gv.name_hint)
        if len(entries) == 1:
            return entries[0]
    if len(kernels) == 1:
        return kernels[0].removesuffix("_kernel") or kernels[0]
    return "tvm_module"


def _analyse(dev_mod, target, rt, split, name: str, options) -> list[KernelResult]:
    from analyzer.tvm.build import from_lowered
    from analyzer.pipeline import Options, check_built

    kind = target.kind.name
    try:
        source = rt.inspect_source()
    except Exception:
        if kind != "vulkan":
            raise
        source = ""          # a binary SPIR-V module: check the device TIR instead
    host, buffers = None, {}
    device = {target: dev_mod}
    if split is not None and _same_kernels(dev_mod, split[1]):
        host = split[0]
        buffers = _declared_buffers(host)
        if kind != "vulkan":
            # Before device finalization, as `kernelrace lint` reads it (the same extents, with a
            # symbolic one printed `(n + 7) // 8` rather than `n + 7 >> 3`); Vulkan, like lint,
            # takes the finalized module the codegen received.
            names = {gv.name_hint for gv in dev_mod.functions}
            for split_target, split_mod in split[1].items():
                if {gv.name_hint for gv in split_mod.functions} == names:
                    device = {split_target: split_mod}
                    break
    if host is None:
        import tvm

        host = tvm.IRModule({})
    built = from_lowered(name, kind, {}, source, host, device, buffers, what=f"{name} (TVM build hook)")
    return check_built(built, options or Options())


def _same_kernels(dev_mod, split_device) -> bool:
    """The recorded split is this build's: it holds the kernels the codegen received."""
    names = {gv.name_hint for gv in dev_mod.functions}
    have = {gv.name_hint for m in split_device.values() for gv in m.functions}
    return bool(names) and names <= have


def _declared_buffers(host) -> dict[str, tuple[tuple[int | str | None, ...], str | None]]:
    """The buffer parameters' declared shapes, from the buffers the lowered host code declares for
    them (`T.decl_buffer((N, H), data=...)`, ahead of the flattened views of the same name that
    follow): the same as `_buffer_shapes` of the module before lowering. A name declared with two
    different shapes by two functions of one module is dropped: no assumption rather than a wrong
    one."""
    import tvm

    from analyzer.tvm.sites import walk

    out: dict[str, Any] = {}
    conflicting: set[str] = set()
    for func in host.functions.values():
        body = getattr(func, "body", None)
        if body is None:
            continue
        declared: dict[str, Any] = {}

        def visit(n, declared=declared):
            if type(n).__name__ != "DeclBuffer":
                return
            b = n.buffer
            try:
                shape = tuple(int(d.value) if isinstance(d, tvm.tirx.IntImm)
                              else d.name if isinstance(d, tvm.tirx.Var) else None for d in b.shape)
            except Exception:
                return
            off = b.elem_offset
            off_name = getattr(off, "name", None) if not isinstance(off, tvm.tirx.IntImm) else None
            for key in (b.name, f"{b.name}_ptr"):
                declared.setdefault(key, (shape, off_name))   # the parameter's, not a later view's

        walk(body, visit)
        for key, value in declared.items():
            if key in out and out[key] != value:
                conflicting.add(key)
            out.setdefault(key, value)
    return {k: v for k, v in out.items() if k not in conflicting}
