"""OpenCL's sub-group work-item functions (`get_sub_group_local_id`, `get_sub_group_id`,
`get_sub_group_size`, `get_max_sub_group_size`, `get_num_sub_groups`), read as CUDA's warps are
laid out, with a size of no assumed value.

OpenCL leaves both the sub-group size and which work-items form a sub-group to the implementation.
kernelrace reads them as a stated assumption, printed with every result of a kernel that calls one:
each sub-group is a contiguous range of S work-items of the local linear id (id = sub-group id * S +
sub-group local id), S the kernel's scalar parameter `get_max_sub_group_size`, symbolic (any
value from 1 up) unless `--scalar get_max_sub_group_size=N` gives it. The functions are then
expressions of the work-item's index and S, so that `if (get_sub_group_local_id() == 0)
x[get_sub_group_id()] = ...` is one writer per sub-group, and `a[get_sub_group_local_id()]` written
by two sub-groups collides. No lockstep is assumed: the kernel keeps a warp size of 1 (a sub-group's
work-items order nothing between them without a barrier).
"""

from __future__ import annotations

from analyzer import ir

SIZE = "get_max_sub_group_size"   # the builtin's name: no kernel parameter can take it
FUNCTIONS = ("get_sub_group_local_id", "get_sub_group_id", "get_sub_group_size", "get_max_sub_group_size",
             "get_num_sub_groups", "get_enqueued_num_sub_groups")
ASSUMPTION = (f"sub-groups of {SIZE} work-items, each a contiguous range of the local linear id "
              f"(OpenCL leaves size and mapping to the implementation; --scalar {SIZE}=N gives the size)")


def value(kernel: ir.Kernel, fn: str) -> ir.Expr | None:
    """The IR expression of one sub-group function of no argument (None for another name),
    declaring the size parameter and the stated assumption on the kernel at its first use."""
    if fn not in FUNCTIONS:
        return None
    if SIZE not in kernel.params:
        kernel.params.append(SIZE)
        kernel.param_ranges[SIZE] = (1, 2 ** 31 - 1)   # a sub-group holds at least one work-item
    if all(text != ASSUMPTION for text, _ in kernel.assumptions):
        kernel.assumptions.append((ASSUMPTION, ir.BinOp(">=", ir.Param(SIZE), ir.Const(1))))
    size = ir.Param(SIZE)
    linear = ir.Builtin("linear_tid")
    x, y, z = (ir.Builtin(f"bdim.{d}") for d in "xyz")
    threads = ir.BinOp("*", ir.BinOp("*", x, y), z)
    if fn == "get_sub_group_local_id":
        return ir.BinOp("%", linear, size)
    if fn == "get_sub_group_id":
        return ir.BinOp("/", linear, size)
    if fn == "get_max_sub_group_size":
        return size
    if fn in ("get_num_sub_groups", "get_enqueued_num_sub_groups"):   # uniform work-groups
        return ir.BinOp("/", ir.BinOp("+", threads, ir.BinOp("-", size, ir.Const(1))), size)
    # get_sub_group_size: S, or what is left of the work-group for the last, partial sub-group
    left = ir.BinOp("-", threads, ir.BinOp("*", ir.BinOp("/", linear, size), size))
    return ir.Select(ir.BinOp("<", left, size), left, size)
