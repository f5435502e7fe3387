"""Subgroup builtins (Vulkan's `gl_SubgroupInvocationID`, `gl_SubgroupID`, `gl_NumSubgroups`,
`gl_SubgroupSize`; WebGPU's `subgroup_invocation_id`, `subgroup_size`) as the IR's warps.

A subgroup is read as a CUDA warp is: S invocations, contiguous in the linear local invocation
index, so that index = SubgroupID * S + SubgroupInvocationID, 0 <= SubgroupInvocationID < S, and
NumSubgroups = ceil(workgroup size / S). S is a scalar parameter the user binds
(`--scalar gl_SubgroupSize=64`), DEFAULT_SIZE otherwise. Vulkan guarantees neither the size (a
power of two from 1 to 128, the device's) nor the contiguity (the driver's mapping), so both are a
stated assumption, printed with every result of a kernel that reads them (`assumption`). Without
it these builtins are free values, and `if (lane == 0) x[subgroup] = ...` a false
write-after-write. A kernel that reads none keeps the front end's warp size (1: no subgroups).
"""

from __future__ import annotations

from analyzer import ir

DEFAULT_SIZE = 32
LANE, SUBGROUP, COUNT, SIZE = "invocation", "subgroup", "count", "size"


def builtin(kernel: ir.Kernel, which: str, size_param: str) -> ir.Expr:
    """The IR expression of a subgroup builtin (`which`: LANE, SUBGROUP, COUNT or SIZE), marking
    the kernel as one whose warps are subgroups of the size `size_param` holds."""
    if kernel.subgroup_size_param is None:
        kernel.subgroup_size_param = size_param
        if size_param not in kernel.params:
            kernel.params.append(size_param)
    size = ir.Param(kernel.subgroup_size_param)
    if which == LANE:
        return ir.Builtin("lane")
    if which == SUBGROUP:
        return ir.Builtin("warp")
    if which == SIZE:
        return size
    if which == COUNT:
        x, y, z = (ir.Builtin(f"bdim.{d}") for d in "xyz")
        threads = ir.BinOp("*", ir.BinOp("*", x, y), z)
        return ir.BinOp("/", ir.BinOp("+", threads, ir.BinOp("-", size, ir.Const(1))), size)
    raise ValueError(which)


def bind_size(kernel: ir.Kernel) -> str | None:
    """Fix the subgroup size of a kernel that reads subgroup builtins (the user's binding, else
    DEFAULT_SIZE) as its warp size; the error text when the binding is no subgroup size."""
    name = kernel.subgroup_size_param
    if name is None:
        return None
    size = kernel.bindings.setdefault(name, DEFAULT_SIZE)
    if not (1 <= size <= 128 and size & (size - 1) == 0):
        return f"--scalar {name}={size}: a subgroup size is a power of two from 1 to 128"
    kernel.warp_size = size
    return None


def assumption(kernel: ir.Kernel) -> str | None:
    """The stated assumption a kernel reading subgroup builtins rests on, as the output shows it."""
    name = kernel.subgroup_size_param
    if name is None:
        return None
    return (f"subgroups of {kernel.warp_size} invocations ({name}; --scalar {name}=N for another), each a "
            f"contiguous range of the local invocation index: index = subgroup id * {kernel.warp_size} + "
            f"subgroup invocation id (Vulkan and WebGPU leave size and mapping to the device)")
