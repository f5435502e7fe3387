"""The device kernels a compiled Relax model ships, one at a time: the Relax module lowered to its
PrimFuncs as MLC-LLM's pipeline lowers it, each scheduled with dlight's default rules in MLC's
order and built alone for one target (`kernelrace model`).

Why one kernel at a time, not `relax.build`: TVM 0.27's wheel crashes the process in places a
model build passes through (`relax.build` for Metal; dlight's tensor-core and simdgroup matmuls
segfault in `Tensorize`; serialising a PrimFunc segfaults in `ToJSONGraph`), and one crash would
lose every kernel. Each kernel is scheduled and built in a worker process of its own choosing
(analyzer/command/parallel.py), where a crash is that kernel's `unknown` on that target.

The Relax passes are those of MLC's phases 1-3 (TVM's "zero" pipeline): transpose-matmul fusion,
LegalizeOps, op pattern annotation, constant folding, FuseOps, FuseTIR, dead code elimination,
then reshapes turned into views (RewriteDataflowReshape), so the PrimFuncs left are the kernels the
model's VM launches. MLC's own passes (FuseAddRMSNorm, LowBatchGemvSpecialize, dequantize fusion)
are not in TVM and are not run. Kernels that are equal up to their names (one per layer) are one
kernel, listed with every name and Relax function that calls it.

Schedules (`schedule`): Matmul, GEMV, Reduction, GeneralReduction, Fallback, the first that
applies, under the kernel's target, then (not CUDA) ForceNarrowIndexToInt32 as MLC does. Two
deviations where this wheel crashes, both taking the schedule dlight itself falls back to:
CUDA's float16 matmul gets dlight's SIMT schedule (its tensor-core schedule segfaults in
`Tensorize`, and importing TVM's CUDA tensor intrinsics first takes a minute), and Metal's matmul
gets the SIMT schedule dlight uses when its simdgroup schedule (`MetalMatmul`) fails.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass, field
from typing import Any

from analyzer.errors import KernelraceError

RULES = ("Matmul", "GEMV", "Reduction", "GeneralReduction", "Fallback")   # MLC-LLM's order
SIMT_NOTE = {"cuda": "SIMT matmul: dlight's tensor-core schedule crashes TVM 0.27's wheel",
             "metal": "SIMT matmul: dlight's simdgroup schedule crashes TVM 0.27's wheel"}


@dataclass
class Kernel:
    """One distinct PrimFunc of the lowered model."""
    name: str                                   # the first name TVM gave it
    aliases: list[str] = field(default_factory=list)     # the other names of equal PrimFuncs
    callers: list[str] = field(default_factory=list)     # the Relax functions that call it


def lower_relax(mod, target):
    """MLC's phases 1-3 on a Relax IRModule, under `target`."""
    import tvm
    from tvm import relax

    seq = tvm.transform.Sequential([
        relax.transform.FuseTransposeMatmul(),
        relax.backend.DispatchSampling(),
        relax.backend.DispatchSortScan(),
        relax.transform.LegalizeOps(),
        relax.transform.AnnotateTIROpPattern(),
        relax.transform.FoldConstant(),
        relax.transform.FuseOps(),
        relax.transform.FuseTIR(),
        relax.transform.DeadCodeElimination(),
        relax.transform.RewriteDataflowReshape(),
        relax.transform.DeadCodeElimination(),
    ])
    with target, contextlib.redirect_stdout(io.StringIO()):
        return seq(mod)


def kernels(lowered) -> list[Kernel]:
    """The distinct PrimFuncs of a lowered module (equal ones once), in name order, with the Relax
    functions that call each."""
    import tvm
    import tvm_ffi

    calls: dict[str, set[str]] = {}
    for gv, func in lowered.functions.items():
        if isinstance(func, tvm.relax.Function):
            for callee in _callees(func):
                calls.setdefault(callee, set()).add(gv.name_hint)
    by_hash: dict[int, Kernel] = {}
    out: list[Kernel] = []
    for gv, func in sorted(lowered.functions.items(), key=lambda kv: kv[0].name_hint):
        if not isinstance(func, tvm.tirx.PrimFunc):
            continue
        h = tvm_ffi.structural_hash(func.without_attr("global_symbol") if func.attrs and "global_symbol" in func.attrs
                                    else func)
        same = by_hash.get(h)
        if same is not None:
            same.aliases.append(gv.name_hint)
        else:
            same = by_hash[h] = Kernel(gv.name_hint)
            out.append(same)
        same.callers = sorted(set(same.callers) | calls.get(gv.name_hint, set()))
    return out


def _callees(func) -> set[str]:
    """The names of the PrimFuncs a Relax function calls (call_tir and friends)."""
    import tvm

    found: set[str] = set()

    def visit(e):
        if isinstance(e, tvm.ir.GlobalVar):
            found.add(e.name_hint)

    tvm.relax.analysis.post_order_visit(func, visit)
    return found


def schedule(func, target) -> tuple[Any, str]:
    """`func` scheduled by the first of MLC's dlight rules that applies under `target`, and the
    rule's name (with the deviation, if any, see the module docstring)."""
    import tvm
    from tvm.s_tir import dlight as dl

    if func.attrs and func.attrs.get("tirx.is_scheduled", False):
        return func, "scheduled by the model"
    for name in RULES:
        rule = getattr(dl.gpu, name)()
        rule_target = target
        if name == "Matmul" and target.kind.name == "cuda":
            # Below sm_70 dlight's Matmul skips its tensor-core attempt (and its intrinsics' import)
            # and gives the SIMT schedule it gives sm_80 without tensor cores: only that attempt
            # reads the arch.
            rule_target = tvm.target.Target({"kind": "cuda", "arch": "sm_60"})
        elif name == "Matmul" and target.kind.name == "metal":
            # The SIMT schedule reads no target but its kind's config, Metal's being the default
            # one, as plain OpenCL's is; only the simdgroup attempt is Metal's own.
            rule_target = tvm.target.Target("opencl")
        with target, contextlib.redirect_stdout(io.StringIO()):
            space = rule.apply(func, rule_target, False)
        if space is None:
            continue
        sch = space[0] if isinstance(space, list) else space
        note = SIMT_NOTE.get(target.kind.name) if name == "Matmul" else None
        return sch.mod["main"].with_attr("tirx.is_scheduled", True), f"{name} ({note})" if note else name
    raise KernelraceError("no dlight rule schedules it (not even Fallback)")


def prepare(func, name: str, target) -> tuple[Any, str]:
    """A PrimFunc of the model ready to build alone for `target`: scheduled, indices narrowed to
    32 bits where MLC narrows them (every target but CUDA), named (`global_symbol`) and bound to
    its target. Returns the one-function IRModule and the schedule's name."""
    import tvm

    func, rule = schedule(func, target)
    mod = tvm.IRModule({name: func.with_attr("global_symbol", name)})
    if target.kind.name != "cuda":
        mod = tvm.tirx.transform.ForceNarrowIndexToInt32()(mod)
    return mod, rule
