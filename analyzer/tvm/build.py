"""Build layer: run a kernel builder, build it with TVM, collect emitted source and launch extents.

TVM's runtime module for CUDA, Metal, OpenCL and WebGPU is source only: it carries no launch metadata, so the
extents are read from the lowered device TIR (the ``thread_extent`` attributes) after the
host/device split, exactly where TVM's own codegen reads them.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass, field
from typing import Any

from analyzer.errors import KernelraceError
from analyzer.tvm import sites
from analyzer.tvm.builders import (as_module, call_builder, load_builder, lower_device,
                                     make_target, schedule)

LANG_OF_TARGET = {"cuda": "cuda", "metal": "metal", "vulkan": "spirv", "webgpu": "wgsl", "opencl": "opencl"}
# Where a Vulkan build's SPIR-V came from: TVM's own codegen, or our translation of its device TIR.
FROM_TVM = "SPIR-V from TVM's Vulkan codegen"
# TVM's web runtime (web/src/webgpu.ts, `createShadeInternal`) launches a grid whose x extent reaches
# 2**16 (WebGPU's default `maxComputeWorkgroupsPerDimension` is 65535) packed: it halves the x
# extent (rounding up) and doubles z until x is below 2**16, and passes the x extent the kernel
# was lowered for as `podArgs.packGridDimX`. The WGSL takes `blockIdx.z * gridDim.x + blockIdx.x`
# as its block index and returns when that exceeds `packGridDimX` (a TIR blockIdx.z is refused).
WEBGPU_PACK_LIMIT = 1 << 16
FROM_GLSL = ("SPIR-V from kernelrace: TVM's lowered device TIR for the vulkan target, translated to GLSL, "
             "compiled by glslangValidator and validated by spirv-val (this TVM has no Vulkan codegen)")


@dataclass
class BuiltKernel:
    name: str
    # threadIdx.x/y/z and blockIdx.x/y/z -> int, or a string for a symbolic extent
    extents: dict[str, int | str]


@dataclass
class BuiltModule:
    builder: str
    target: str
    params: dict[str, Any]
    source: str
    kernels: list[BuiltKernel] = field(default_factory=list)
    # buffer parameter -> (shape with None for symbolic extents, name of its elem_offset variable)
    buffers: dict[str, tuple[tuple[int | None, ...], str | None]] = field(default_factory=dict)
    # per kernel: its scalar parameters as the host computes them (`cse_v37 = cse_v36 - 1`), as IR
    definitions: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Vulkan: one SPIR-V module per kernel, as (file name, assembly text), and how it was made
    units: list[tuple[str, str]] = field(default_factory=list)
    provenance: str = ""
    # Where the builder's Python wrote each access (analyzer/tvm/sites.py): (buffer, "read"/"write")
    # -> its lines, and the builder function's `def` line; what reports show as the user's line.
    sites: dict[tuple[str, str], tuple[tuple[str, int, int], ...]] = field(default_factory=dict)
    builder_def: tuple[str, int, int] | None = None

    @property
    def lang(self) -> str:
        return LANG_OF_TARGET[self.target]

    def files(self) -> list[tuple[str, str]]:
        """What kernelrace analyses, as (virtual file name, text): the emitted source named after the
        builder (`FUNCTION.cu`, `.metal`), or for Vulkan one SPIR-V module per kernel."""
        if self.units:
            return list(self.units)
        fn_name = self.builder.rpartition(":")[2].split(".")[-1]
        return [(f"{fn_name}.{ {'cuda': 'cu', 'wgsl': 'wgsl', 'opencl': 'cl'}.get(self.lang, 'metal')}", self.source)]


def _extents(func) -> dict[str, int | str]:
    import tvm

    found: dict[str, int | str] = {}

    def visit(n):
        if getattr(n, "attr_key", None) == "thread_extent":
            tag = n.node.thread_tag
            value = n.value
            found[tag] = int(value.value) if isinstance(value, tvm.tirx.IntImm) else str(value)

    sites.walk(func.body, visit)
    return found


def build(spec: str, params: dict[str, Any], target_name: str) -> BuiltModule:
    """Build one builder for one target; raise KernelraceError with a one-line reason on failure."""
    return build_lowered(spec, params, target_name)[0]


def build_lowered(spec: str, params: dict[str, Any], target_name: str):
    """`build`, and the builder's module before lowering and the lowered host module (what
    `launches.py` needs to run the device kernels)."""
    import tvm

    fn = load_builder(spec)
    target = make_target(target_name)
    mod = as_module(call_builder(fn, spec, params, target), spec)
    shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
    try:
        # TVM prints schedule warnings to stdout; keep our output clean.
        with contextlib.redirect_stdout(io.StringIO()):
            mod = schedule(mod, target)
            source = ""
            if target_name != "vulkan" or tvm.get_global_func("target.build.vulkan", allow_missing=True):
                rt = tvm.tirx.build(mod, target=target)
                source = rt.imports[0].inspect_source()
            host, device = lower_device(mod, target)
    except KernelraceError:
        raise
    except Exception as exc:
        lines = str(exc).strip().splitlines()
        raise KernelraceError(
            f"TVM failed to build {spec}({shown}) for {target_name}: {lines[-1] if lines else type(exc).__name__}"
        ) from exc
    built = from_lowered(spec, target_name, params, source, host, device, _buffer_shapes(mod),
                         what=f"{spec}({shown})")
    built.builder_def = sites.definition(fn)
    return built, mod, host


def from_lowered(builder: str, target_name: str, params: dict[str, Any], source: str, host, device,
                 buffers: dict[str, tuple[tuple[int | None, ...], str | None]],
                 what: str | None = None) -> BuiltModule:
    """A BuiltModule from what one TVM build of an IRModule for a target produced.

    `source` is the emitted device source (empty when there is none), `host` and `device` the host
    module and the ``{Target: IRModule}`` device modules of the host/device split (what
    `lower_device` returns; for Vulkan the device modules after TVM's device finalization),
    `buffers` the declared buffer shapes (`_buffer_shapes` of the module before lowering). Shared by
    `build` and the TVM build hook (`analyzer.tvm_checks.hook`), which takes them from TVM's own build."""
    definitions = _host_definitions(host, device)
    kernels = []
    for dev_mod in device.values():
        for gv, func in dev_mod.functions.items():
            extents = _extents(func)
            if target_name == "webgpu":
                extents = webgpu_dispatch(extents, gv.name_hint, definitions)
            kernels.append(BuiltKernel(gv.name_hint, extents))
    kernels.sort(key=lambda k: k.name)
    built = BuiltModule(builder, target_name, dict(params), source, kernels, buffers, definitions,
                        sites=sites.access_sites(device))
    if target_name == "vulkan":
        _vulkan_units(built, device, what or builder)
    return built


def webgpu_dispatch(extents: dict[str, int | str], kernel: str,
                    definitions: dict[str, dict[str, Any]]) -> dict[str, int | str]:
    """The launch TVM's web runtime makes for a kernel lowered with `extents`: a static x extent of
    2**16 or more packed into x and z as `WEBGPU_PACK_LIMIT` describes, and `packGridDimX` bound to
    the lowered x extent among the kernel's host definitions. A symbolic x extent, or a kernel
    with its own blockIdx.z (which the runtime refuses to launch), keeps its lowered extents."""
    from analyzer import ir

    x = extents.get("blockIdx.x", 1)
    if not isinstance(x, int) or extents.get("blockIdx.z", 1) != 1:
        return extents
    defs = definitions.setdefault(kernel, dict(definitions.get("*", {})))
    defs["packGridDimX"] = ir.Const(x)
    wl_x, wl_z = x, 1
    while wl_x >= WEBGPU_PACK_LIMIT:
        wl_x, wl_z = (wl_x + 1) // 2, wl_z * 2
    if wl_z == 1:
        return extents
    return {**extents, "blockIdx.x": wl_x, "blockIdx.z": wl_z}


def _vulkan_units(built: BuiltModule, device, what: str) -> None:
    """The SPIR-V of each kernel: TVM's own when its Vulkan codegen produced assembly text, otherwise
    the device TIR translated to GLSL and compiled (TVM's Python wheel has no Vulkan codegen)."""
    from analyzer.frontend import spirv_tools
    from analyzer.tvm import tir_glsl

    if built.source and "OpCapability" in built.source:
        built.units = [(f"{built.builder.rpartition(':')[2]}.spvasm", built.source)]
        built.provenance = FROM_TVM
        return
    units = []
    for dev_mod in device.values():
        for gv, func in sorted(dev_mod.functions.items(), key=lambda kv: kv[0].name_hint):
            name = gv.name_hint
            glsl = tir_glsl.translate(func, name)
            binary = spirv_tools.compile_glsl(glsl, f"{name}.comp")
            spirv_tools.validate(binary, f"{name}.comp ({what})")
            units.append((f"{name}.spvasm", spirv_tools.disassemble(binary, f"{name}.comp")))
    built.units = units
    built.provenance = FROM_GLSL


def _host_definitions(host, device) -> dict[str, dict[str, Any]]:
    """For each kernel, what the host passes for its scalar parameters, as IR over host values.

    Walks the host code in scope order: a loop variable becomes `NAME@k` with its range, a `let`
    its value (over renamed variables), and each `call_ffi_kernel` binds the kernel's parameters to
    its arguments, so that `cse_v37 = cse_v36 - 1` and `0 <= i < rounds` reach the analysis.
    """
    from analyzer import ir

    params = {gv.name_hint: [p.name for p in f.params] for m in device.values() for gv, f in m.functions.items()}
    values: dict[str, Any] = {}          # host variable (renamed) -> IR definition
    per_kernel: dict[str, dict[str, Any]] = {}
    counter = [0]

    def conv(e, env):
        return _to_ir(e, env)

    def walk(n, env):
        kind = type(n).__name__
        if kind == "SeqStmt":
            for c in n.seq:
                env = walk(c, env)
            return env
        if kind == "For":
            counter[0] += 1
            name = f"{n.loop_var.name}@{counter[0]}"
            lo, extent = conv(n.min, env), conv(n.extent, env)
            if lo is not None and extent is not None:
                values[name] = ir.Call("range", (lo, ir.BinOp("+", lo, extent)))
            walk(n.body, {**env, n.loop_var.name: name})
            return env
        if kind in ("LetStmt", "Bind"):
            value = conv(n.value, env)
            if value is not None:
                values.setdefault(n.var.name, value)
            if getattr(n, "body", None) is not None:
                walk(n.body, env)
            return env
        if kind == "Evaluate":
            call = n.value
            if getattr(getattr(call, "op", None), "name", "") == "tirx.call_ffi_kernel":
                kernel = str(call.args[0].value)
                bound = per_kernel.setdefault(kernel, {})
                for pname, arg in zip(params.get(kernel, ()), list(call.args)[1:]):
                    value = conv(arg, env)
                    if value is not None and not (isinstance(value, ir.Param) and value.name == pname):
                        bound[pname] = value
            return env
        for attr in ("body", "then_case", "else_case"):
            child = getattr(n, attr, None)
            if child is not None and hasattr(child, "span"):
                walk(child, env)
        return env

    for _, func in host.functions.items():
        body = getattr(func, "body", None)
        if body is not None:
            try:
                walk(body, {})
            except Exception:  # an unfamiliar host node: fewer known relations, never a wrong one
                continue
    return {k: {**values, **bound} for k, bound in per_kernel.items()} | {"*": values}


def _to_ir(e, env=None):
    """A TIR integer expression as a kernel-IR expression; None when it has no IR counterpart.
    `env` renames variables (host loop variables are made unique)."""
    import tvm

    from analyzer import ir

    t = tvm.tirx
    binops = {"Add": "+", "Sub": "-", "Mul": "*", "Div": "/", "Mod": "%", "FloorDiv": "fdiv",
              "FloorMod": "fmod", "LT": "<", "LE": "<=", "GT": ">", "GE": ">=", "EQ": "==", "NE": "!=",
              "And": "&&", "Or": "||", "RShift": ">>", "LShift": "<<"}
    name = type(e).__name__
    if isinstance(e, t.IntImm):
        return ir.Const(int(e.value))
    if name == "Var" or isinstance(e, t.Var):
        return ir.Param((env or {}).get(e.name, e.name))
    if name in binops:
        a, b = _to_ir(e.a, env), _to_ir(e.b, env)
        return None if a is None or b is None else ir.BinOp(binops[name], a, b)
    if name in ("Min", "Max"):
        a, b = _to_ir(e.a, env), _to_ir(e.b, env)
        return None if a is None or b is None else ir.Call(name.lower(), (a, b))
    if name == "Cast":
        inner = _to_ir(e.value, env)
        return inner if inner is not None and "int" in str(getattr(e, "ty", getattr(e, "dtype", ""))) else None
    if name == "Select":
        c, a, b = _to_ir(e.condition, env), _to_ir(e.true_value, env), _to_ir(e.false_value, env)
        return None if None in (c, a, b) else ir.Select(c, a, b)
    if name == "Call" and str(getattr(e.op, "name", "")) in ("tirx.shift_right", "tirx.shift_left"):
        a, b = _to_ir(e.args[0], env), _to_ir(e.args[1], env)
        op = ">>" if "right" in str(e.op.name) else "<<"
        return None if a is None or b is None else ir.BinOp(op, a, b)
    return None


def _buffer_shapes(mod) -> dict[str, tuple[tuple[int | str | None, ...], str | None]]:
    """Declared shapes of the buffer parameters: the dimensions every in-bounds access respects
    (an extent that is a variable by its name, which is also the kernel's parameter; other
    symbolic extents None)."""
    import tvm

    out = {}
    for _, func in mod.functions.items():
        for p in getattr(func, "params", ()):
            try:
                shape = tuple(int(d.value) if isinstance(d, tvm.tirx.IntImm)
                              else d.name if isinstance(d, tvm.tirx.Var) else None for d in p.shape)
            except Exception:  # a scalar parameter has no shape
                continue
            off = p.elem_offset
            off_name = getattr(off, "name", None) if not isinstance(off, tvm.tirx.IntImm) else None
            for name in (p.name, f"{p.name}_ptr"):
                out[name] = (shape, off_name)
    return out
