"""A builder, loaded and lowered: `module:function` resolved and called under its target, the
result scheduled as TVM's own pipeline schedules it, and lowered to the host/device split where
TVM's code generators read the kernels. Shared by the build (`build.py`) and the GLSL path
(`tir_glsl.py`), which translates the device TIR this module returns."""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import os
import sys
from typing import Any, Callable

from analyzer.errors import KernelraceError
from analyzer.tvm.version import require_tvm

TARGETS = ("cuda", "metal", "vulkan", "webgpu", "opencl")
CUDA_ARCH = "sm_80"


def load_builder(spec: str) -> Callable[..., Any]:
    """Resolve ``module:function`` (the function part may be dotted) to a callable."""
    if ":" not in spec:
        raise KernelraceError(f"builder '{spec}' must be written MODULE:FUNCTION")
    mod_name, _, attr = spec.partition(":")
    require_tvm()       # before the builder's module imports TVM itself
    # Builders live in the user's repository: import them from the working directory, as pytest does.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(mod_name)
    except Exception as exc:  # any import failure is a usage error, reported in one line
        raise KernelraceError(f"cannot import module '{mod_name}' of builder '{spec}': {exc}") from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise KernelraceError(f"module '{mod_name}' has no attribute '{attr}'") from None
    if not callable(obj):
        raise KernelraceError(f"builder '{spec}' is not callable")
    return obj


def make_target(name: str):
    import tvm

    if name == "cuda":
        return tvm.target.Target({"kind": "cuda", "arch": CUDA_ARCH})
    if name == "metal":
        return tvm.target.Target("metal")
    if name == "vulkan":
        return tvm.target.Target("vulkan")
    if name == "webgpu":
        return tvm.target.Target("webgpu")
    if name == "opencl":
        return tvm.target.Target("opencl")
    raise KernelraceError(f"unsupported target '{name}' (expected one of: {', '.join(TARGETS)})")


def call_builder(fn: Callable[..., Any], spec: str, params: dict[str, Any], target) -> Any:
    kwargs = dict(params)
    try:
        sig = inspect.signature(fn)
        if "target" in sig.parameters and "target" not in kwargs:
            kwargs["target"] = target
    except (TypeError, ValueError):
        pass
    shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
    try:
        with target:
            return fn(**kwargs)
    except Exception as exc:
        msg = str(exc).strip().splitlines()
        first = msg[-1] if msg else type(exc).__name__
        raise KernelraceError(f"builder {spec}({shown}) raised {type(exc).__name__}: {first}") from exc


def as_module(obj: Any, spec: str):
    import tvm

    if isinstance(obj, tvm.IRModule):
        relax = [gv.name_hint for gv, f in obj.functions.items() if not isinstance(f, tvm.tirx.PrimFunc)]
        if relax:
            raise KernelraceError(f"builder {spec} returned a Relax IRModule (function {relax[0]}): "
                                  f"`kernelrace model {spec}` checks the kernels a Relax model lowers to")
        return _named(obj)
    if isinstance(obj, tvm.tirx.PrimFunc):
        name = spec.rpartition(":")[2].split(".")[-1].lstrip("_") or "kernel"
        if obj.attrs is None or "global_symbol" not in obj.attrs:
            obj = obj.with_attr("global_symbol", name)
        return tvm.IRModule({obj.attrs["global_symbol"]: obj})
    raise KernelraceError(
        f"builder {spec} returned {type(obj).__name__}, expected a TIR PrimFunc or IRModule"
    )


def _named(mod):
    """Every PrimFunc with a `global_symbol` (its name in the module), as TVM's own build gives
    them before its host/device split: the PrimFuncs a Relax module lowers to have none (Relax's
    VM build adds them), and TVM then fails ("This pass must be called after MakePackedAPI")."""
    import tvm

    if all(f.attrs is not None and "global_symbol" in f.attrs for f in mod.functions.values()):
        return mod
    return tvm.IRModule({gv: f if f.attrs is not None and "global_symbol" in f.attrs
                         else f.with_attr("global_symbol", gv.name_hint) for gv, f in mod.functions.items()})


def schedule(mod, target):
    """Schedule PrimFuncs that carry no schedule with dlight's Fallback, as TVM's own pipeline does."""
    import tvm
    from tvm.s_tir import dlight as dl

    needs = [
        gv for gv, f in mod.functions.items()
        if isinstance(f, tvm.tirx.PrimFunc) and not (f.attrs and f.attrs.get("tirx.is_scheduled", False))
    ]
    if not needs:
        return mod
    with target:
        return dl.ApplyDefaultSchedule(dl.gpu.Fallback())(mod)


def lower_device(mod, target):
    """TVM's default pipeline up to the host/device split, where its codegen reads the kernels.

    For Vulkan the device finalization passes (LowerWarpMemory, StmtSimplify, LowerIntrin) that
    `tvm.tirx.build` runs right before codegen are applied too: the SPIR-V codegen would see their
    output (power-of-two `//` and `%` as shifts and masks, let-bound indices substituted)."""
    import tvm

    b = importlib.import_module("tvm.tirx.build")
    bound = tvm.tirx.transform.BindTarget(target.with_host("llvm"))(mod)
    pipeline, _, finalize_device = tvm.tirx.get_default_tir_pipeline(target)
    host, device = b.split_host_device_mods(pipeline(bound))
    if target.kind.name == "vulkan":
        device = {t: finalize_device()(m) for t, m in device.items()}
    return host, device


def emit_and_lower(mod, target) -> tuple[str, Any, dict]:
    """`tvm.tirx.build`'s steps with one run of TVM's pipeline, for a build that needs both the
    device source and the host/device split (`lower_device`, whose modules it returns): the
    pipeline, the split, the device finalization, the codegen. The source is empty where TVM has
    no codegen for the target (Vulkan in the wheel)."""
    import tvm

    b = importlib.import_module("tvm.tirx.build")
    bound = tvm.tirx.transform.BindTarget(target.with_host("llvm"))(mod)
    pipeline, _, finalize_device = tvm.tirx.get_default_tir_pipeline(target)
    host, device = b.split_host_device_mods(pipeline(bound))
    finalized = {t: finalize_device()(m) for t, m in device.items()}
    source = ""
    if tvm.get_global_func(f"target.build.{target.kind.name}", allow_missing=True):
        source = "".join(b.codegen_build(m, t).inspect_source() for t, m in finalized.items() if len(m.functions))
    return source, host, finalized if target.kind.name == "vulkan" else device


def device_functions(spec: str, params: dict[str, Any]) -> list[tuple[str, Any]]:
    """A builder (`module:function`) built for Vulkan as `kernelrace lint` builds it, up to the
    device TIR the codegen sees: (kernel name, device PrimFunc) pairs sorted by name."""
    import tvm

    target = tvm.target.Target("vulkan")
    mod = as_module(call_builder(load_builder(spec), spec, params, target), spec)
    shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            _, device = lower_device(schedule(mod, target), target)
    except Exception as exc:
        lines = str(exc).strip().splitlines()
        raise KernelraceError(
            f"TVM failed to lower {spec}({shown}) for vulkan: {lines[-1] if lines else type(exc).__name__}"
        ) from exc
    out = [(gv.name_hint, f) for m in device.values() for gv, f in m.functions.items()]
    return sorted(out, key=lambda kv: kv[0])
