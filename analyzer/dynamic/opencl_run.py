"""`kernelrace confirm --runtime opencl`: a TVM builder's OpenCL build run on a real OpenCL device,
as built and with each race finding's verified fix hint applied, and the outputs compared.

TVM's wheel has no OpenCL runtime, so the host part is played here: the launches come from the
lowered host TIR (`analyzer.tvm.launches`), in its order, with its arguments and extents (global
size = grid x block, local size = block), buffers in the kernel's parameter order and scalars in
the type the OpenCL signature declares. Inputs are seeded random values. The device comes from
pyopencl; PoCL on a CPU (`pip install 'kernelrace[opencl]'` installs both) runs the work-items of a
work-group one after another between barriers, which is what exposes these races. An output that
differs between the build and the fixed build shows the race; the same output says only that
this device and these inputs did not expose it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from analyzer.errors import KernelraceError
from analyzer.findings import RACE_RULES, Finding

INSTALL = "python -m pip install 'kernelrace[opencl]'"   # pyopencl and PoCL
CL_SCALARS = {"char": "int8", "uchar": "uint8", "short": "int16", "ushort": "uint16", "int": "int32",
              "uint": "uint32", "long": "int64", "ulong": "uint64", "float": "float32", "double": "float64",
              "half": "float16", "bool": "int32"}


class NoDevice(KernelraceError):
    """No OpenCL device to run on (exit 2, with what to install)."""


def find_device():
    """The first OpenCL device pyopencl finds (a GPU or CPU one alike)."""
    try:
        import pyopencl as cl
    except ImportError:
        raise NoDevice(f"--runtime opencl needs an OpenCL device and pyopencl is not installed: `{INSTALL}` "
                       f"gives PoCL, one that runs on the CPU") from None
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []   # the ICD loader reports "no platform" as an error
    for p in platforms:
        try:
            devices = p.get_devices()
        except cl.Error:
            continue
        if devices:
            return devices[0]
    raise NoDevice(f"--runtime opencl found no OpenCL device (no platform): `{INSTALL}` gives PoCL, one that "
                   f"runs on the CPU")


# ---------------------------------------------------------------------------------------------
# The source: TVM 0.27's declarations inside expressions, and fix hints applied as text

_MID_DECLS = re.compile(r"\((\s*(?:(?:int|long)\s+r(?:mod|div)_\d+\s*=[^;]*;\s*)+)")


def compilable(source: str) -> str:
    """TVM 0.27 prints `int rmod_N = ...; int rdiv_N = ...;` in the middle of an expression (the
    prefill kernels' `vstore2` statements), which no OpenCL compiler accepts: each group moves
    before the line it sits in. No access or barrier changes."""
    while True:
        m = _MID_DECLS.search(source)
        if m is None:
            return source
        start = source.rfind("\n", 0, m.start()) + 1
        indent = re.match(r"[ \t]*", source[start:]).group(0)
        decls = [d.strip() + ";" for d in m.group(1).split(";") if d.strip()]
        body = source[:m.start(1)] + source[m.end(1):]
        source = body[:start] + "".join(f"{indent}{d}\n" for d in decls) + body[start:]


def _line_start(lines: list[str], line: int) -> int:
    return sum(len(x) for x in lines[:line - 1])


def _statement_end(text: str, start: int) -> int:
    """The offset just after the statement starting at `start` (a `;` outside brackets, or a braced
    body with its `else` arms)."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == ";" and depth == 0:
            return i + 1
        elif c == "{" and depth == 0:
            braces, i = 1, i + 1
            while braces and i < len(text):
                braces += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            tail = re.match(r"\s*else\b", text[i:])
            if tail is None:
                return i
            i += tail.end()
            continue
        i += 1
    raise ValueError("statement without an end")


_INSERT = re.compile(r"insert `([^`]*)` (before line (\d+)|at the end of the enclosing block, after the statement "
                     r"starting at line (\d+))")
_GUARD = re.compile(r"guard line (\d+) with `if \(([^`]*)\)`")


def apply_fix(source: str, fix: dict) -> str:
    """The source with a fix hint's text applied: the guard wraps its statement (on its own lines),
    then the barrier goes in on a line of its own."""
    text = fix.get("text", "")
    lines = source.splitlines(keepends=True)
    guard = _GUARD.search(text)
    if guard:
        line, cond = int(guard.group(1)), guard.group(2)
        start = _line_start(lines, line)
        start += len(lines[line - 1]) - len(lines[line - 1].lstrip())
        end = _statement_end(source, start)
        source = f"{source[:start]}if ({cond}) {{ {source[start:end]} }}{source[end:]}"
        lines = source.splitlines(keepends=True)
    insert = _INSERT.search(text)
    if insert:
        barrier = insert.group(1)
        if insert.group(3):
            line = int(insert.group(3))
            indent = re.match(r"[ \t]*", lines[line - 1]).group(0)
            lines.insert(line - 1, f"{indent}{barrier}\n")
            source = "".join(lines)
        else:
            line = int(insert.group(4))
            start = _line_start(lines, line)
            indent = re.match(r"[ \t]*", lines[line - 1]).group(0)
            end = _statement_end(source, start + len(indent))
            source = f"{source[:end]}\n{indent}{barrier}{source[end:]}"
    if not guard and not insert:
        raise ValueError(f"a fix hint kernelrace cannot apply to the source: {text}")
    return source


def signatures(source: str) -> dict[str, list[str | None]]:
    """Per kernel, per parameter: the numpy dtype of a scalar, None for a pointer."""
    out: dict[str, list[str | None]] = {}
    for m in re.finditer(r"__kernel\s+void\s+(\w+)\s*\(([^)]*)\)", source):
        params = []
        for p in m.group(2).split(","):
            p = p.strip()
            if not p:
                continue
            if "*" in p:
                params.append(None)
            else:
                words = [w for w in re.findall(r"\w+", p)[:-1] if w not in ("const", "unsigned", "__private")]
                ctype = words[-1] if words else "int"
                if "unsigned" in p and not ctype.startswith("u"):
                    ctype = "u" + ctype
                params.append(CL_SCALARS.get(ctype, "int32"))
        out[m.group(1)] = params
    return out


# ---------------------------------------------------------------------------------------------
# Running

@dataclass
class Plan:
    launches: list                  # analyzer.tvm.launches.Launch
    storages: dict                  # name -> analyzer.tvm.launches.Storage
    inputs: dict[str, Any]          # parameter buffer -> numpy array (the seeded inputs)


def plan(mod, host, values: dict[str, int], seed: int) -> Plan:
    import numpy as np

    from analyzer.tvm.launches import launches, missing_shapes

    missing = missing_shapes(mod, values)
    if missing:
        raise KernelraceError("the builder's buffers have symbolic extents without values: give "
                              + " ".join(f"--scalar {m}=INT" for m in missing))
    runs, storages = launches(mod, host, values)
    rng = np.random.default_rng(seed)
    inputs = {}
    for name, s in storages.items():
        if not s.param:
            continue
        dtype = _np_dtype(s.dtype)
        if np.issubdtype(dtype, np.floating):
            inputs[name] = rng.uniform(-2.0, 2.0, s.shape).astype(dtype)
        else:
            inputs[name] = rng.integers(0, 4, s.shape).astype(dtype)
    return Plan(runs, storages, inputs)


def _np_dtype(dtype: str):
    import numpy as np

    try:
        return np.dtype(dtype)
    except TypeError:
        raise KernelraceError(f"--runtime opencl: no host type for TVM's dtype {dtype}") from None


def run(device, source: str, p: Plan) -> dict[str, Any]:
    """Every launch of the plan on the device, in order; the parameter buffers afterwards."""
    import numpy as np
    import pyopencl as cl

    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx)
    try:
        program = cl.Program(ctx, source).build()
    except cl.Error as exc:
        log = [x for x in str(exc).splitlines() if "error" in x.lower()]
        raise KernelraceError(f"the OpenCL compiler of {device.name.strip()} rejects the source: "
                              f"{log[1] if len(log) > 1 else (log or [type(exc).__name__])[0]}") from None
    mf = cl.mem_flags
    arrays = {name: (p.inputs[name].copy() if s.param else np.zeros(s.shape, _np_dtype(s.dtype)))
              for name, s in p.storages.items()}
    buffers = {name: cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) if a.size else
               cl.Buffer(ctx, mf.READ_WRITE, 16) for name, a in arrays.items()}
    sigs = signatures(source)
    for launch in p.launches:
        kernel = cl.Kernel(program, launch.kernel)
        types = sigs.get(launch.kernel) or [None if isinstance(a, str) else "int32" for a in launch.args]
        for i, (a, t) in enumerate(zip(launch.args, types)):
            kernel.set_arg(i, buffers[a] if isinstance(a, str) else np.dtype(t or "int32").type(a))
        if 0 in launch.grid:
            continue
        size = tuple(g * b for g, b in zip(launch.grid, launch.block))
        cl.enqueue_nd_range_kernel(queue, kernel, size, launch.block)
    out = {}
    for name, s in p.storages.items():
        if s.param:
            if arrays[name].size:
                cl.enqueue_copy(queue, arrays[name], buffers[name])
            out[name] = arrays[name]
    queue.finish()
    return out


def run_isolated(sources: list[str], p: Plan) -> list[dict[str, Any]]:
    """`run` of each source in a child process (the `forkserver` start method, as `--jobs` uses):
    kernels fed random inputs can index out of bounds, and a device driver that crashes on that
    must not take kernelrace down without a word."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver")) as pool:
        try:
            status, value = pool.submit(_run_child, sources, p).result()
        except BrokenProcessPool:
            raise KernelraceError("the OpenCL run crashed (the device's process died): a kernel may index out of "
                                  "bounds on these random inputs (integer buffers hold 0..3), or the shapes given "
                                  "do not fit what the kernel assumes") from None
    if status == "error":
        raise KernelraceError(value)
    return value


def _run_child(sources: list[str], p: Plan):
    try:
        device = find_device()
        return "ok", [run(device, s, p) for s in sources]
    except KernelraceError as exc:
        return "error", str(exc)


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """Per buffer, the elements that differ (NaN equals NaN), in flat index order."""
    import numpy as np

    out = []
    for name in a:
        x, y = a[name].ravel(), b[name].ravel()
        same = (x == y)
        if np.issubdtype(x.dtype, np.floating):
            same |= np.isnan(x) & np.isnan(y)
        bad = np.flatnonzero(~same)
        if bad.size:
            i = int(bad[0])
            out.append({"buffer": name, "differ": int(bad.size), "elements": int(x.size),
                        "first": {"index": i, "build": _show(x[i]), "fixed": _show(y[i])}})
    return out


def _show(v) -> str:
    import numpy as np

    return f"{float(v):.6g}" if np.issubdtype(type(v), np.floating) else str(int(v))


# ---------------------------------------------------------------------------------------------
# For `kernelrace confirm`

def confirm_build(built, mod, host, results, values: dict[str, int], seed: int, device) -> None:
    """Attach a `confirmation` to every race finding of one OpenCL build's results: the build run
    on the device against the build with the finding's verified fix hint applied."""
    races = [f for r in results for f in r.findings if f.rule in RACE_RULES]
    if not races:
        return
    p = plan(mod, host, values, seed)
    source = built.source
    where = (f"{len(p.launches)} launch(es) of {len({launch.kernel for launch in p.launches})} kernel(s) with "
             f"{_values(values)}, seed {seed}, on {device.name.strip()} ({device.platform.name.strip()})")
    # Every source to run, the build first: one child process runs them all.
    fixed: dict[int, str | ValueError] = {}
    for i, f in enumerate(races):
        if (f.fix or {}).get("removes"):
            try:
                fixed[i] = compilable(apply_fix(source, f.fix))
            except ValueError as exc:
                fixed[i] = exc
    sources = list(dict.fromkeys([compilable(source)] + [s for s in fixed.values() if isinstance(s, str)]))
    outputs = dict(zip(sources, run_isolated(sources, p)))
    as_built = outputs[sources[0]]
    for i, f in enumerate(races):
        fixed_out = fixed.get(i)
        f.confirmation = _confirm_one(f, p, device, as_built, outputs.get(fixed_out) if isinstance(fixed_out, str)
                                      else fixed_out, where, seed, values)


def _confirm_one(f: Finding, p: Plan, device, as_built, fixed_out, where, seed, values):
    base = {"runtime": "opencl", "device": device.name.strip(), "seed": seed, "params": dict(values),
            "launches": len(p.launches)}
    if fixed_out is None:
        return base | {"status": "no-fix", "against": None, "buffers": [], "lines": [
            f"ran the build: {where}",
            "no verified fix hint to run against: the outputs were not compared (the Python API, "
            "analyzer.dynamic.opencl_run.run, gives them)"]}
    if isinstance(fixed_out, ValueError):
        return base | {"status": "cannot-run", "reason": str(fixed_out),
                       "lines": [f"cannot apply the fix hint: {fixed_out}"]}
    diffs = differences(as_built, fixed_out)
    lines = [f"ran the build and the build with the fix hint applied: {where}"]
    for d in diffs:
        lines.append(f"{d['buffer']}: {d['differ']}/{d['elements']} elements differ between the build and the "
                     f"fixed build, first {d['buffer']}[{d['first']['index']}]: {d['first']['build']} vs "
                     f"{d['first']['fixed']}")
    if not diffs:
        lines.append("no difference observed with these inputs on this device (the race may still be real: "
                     "another device, schedule or inputs may expose it)")
    return base | {"status": "differs" if diffs else "no-difference", "against": "the fix hint applied",
                   "buffers": diffs, "lines": lines}


def _values(values: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items()) or "no parameters"
