"""Atomic accesses and their results, alike in every dialect.

Every front end (CUDA, Metal, OpenCL C, WGSL, SPIR-V) marks its atomic accesses here and asks
here what an atomic read-modify-write returns, so that the dialects cannot drift apart:

- an atomic access carries its operation (`ir.ATOMIC_OPS`) and its scope: the threads it is atomic
  with. A device-memory atomic is atomic across the grid unless the dialect narrows it
  (`atomicAdd_block`, `memory_scope_work_group`, SPIR-V's Workgroup scope); a shared-memory one is
  the block's, as its memory is;
- the old value an atomic returns is the thread's own (an `ir.Opaque`) where another atomic may
  change the element (`ir.changed_atomically`); of an element no atomic changes (only loaded, or
  added 0), it is the element's one value, as a plain load's is;
- a fetch-add or fetch-sub of a constant non-zero step is a ticket: threads drawing at one site
  from one counter, within the counter's scope, receive values at least the step apart, where
  every atomic write of the counter moves it the same way (`ir.ticket_holds`, decided on the IR);
- a fetch-add of an unsigned amount not known as a constant (`atomicAdd(&bump.segs, hi - lo)`) is
  a range ticket: it moves the counter up (a counter never wraps around), and two draws from a
  counter that only grows hold apart ranges, `r1 + n1 <= r2` or `r2 + n2 <= r1`, where the IR's
  values of both amounts are non-negative (analysis/decision/tickets.py). A signed amount may be
  negative: its fetch-add ("add") is a read-modify-write whose result is the thread's own value,
  unless the IR proves the amount in [0, 2**31) in every thread (`ir.atomic_op_of`:
  `atomicAdd(&count, __popc(mask))` on an `int`), where it is a grow as an unsigned one is.
"""

from __future__ import annotations

from analyzer import ir


def unsigned_c(ty: str) -> bool:
    """Whether a C-family counter's type (a pointer's element: `unsigned int`, `uint`, Metal's
    `atomic_uint`, OpenCL's `volatile __global uint`) is unsigned, so what a fetch-add adds is."""
    from analyzer.frontend.c_decls import UNSIGNED_RANGES
    words = [w for w in ty.replace("*", " ").split() if w not in ("volatile", "const", "__global", "global",
                                                                    "__local", "local", "device", "threadgroup")]
    name = " ".join(words).removeprefix("atomic_")
    return name in UNSIGNED_RANGES


def mark(acc: ir.Access, op: str, scope: str | None = None) -> ir.Access:
    """`acc` as an atomic access doing `op` (one of ir.ATOMIC_OPS) within `scope`: ir.GRID,
    ir.BLOCK, or ir.WARP for a scope narrower than the block (atomic with no thread the analysis
    can name); by default its memory's (the grid for global memory, the block otherwise)."""
    assert op in ir.ATOMIC_OPS, op
    acc.atomic = True
    acc.atomic_op = op
    acc.scope = scope if scope in (ir.WARP, ir.BLOCK) else ir.default_scope(acc.space)
    return acc


def fetch_result(fn: str, site: int, acc: ir.Access, step: ir.Expr | None, subtract: bool = False,
                 scope: str | None = None, unsigned: bool = False) -> ir.Opaque:
    """What the read-modify-write `fn` on `acc` returns, `acc` marked atomic: a ticket when it adds
    (or, with `subtract`, subtracts) the constant non-zero `step`; a range ticket when it adds an
    amount that is not a constant (a signed one where proven non-negative, `ir.atomic_op_of`);
    otherwise the thread's own value. `step` is None
    for operations other than add and subtract."""
    if step is not None and not isinstance(step, ir.Const) and not subtract:
        # a signed amount grows the counter only where the IR proves it non-negative (`ir.atomic_op_of`)
        mark(acc, "grow" if unsigned else "add", scope)
        return ir.Opaque(f"result of {fn}", site, ticket=acc.offset, grid_counter=acc.scope == ir.GRID,
                         amount=step, fetch=acc)
    value = step.value if isinstance(step, ir.Const) else 0
    value = -value if subtract else value
    if value == 0:
        # Adding 0 leaves the element as it is (CUDA's `atomicAdd(c, 0)` is its atomic load).
        mark(acc, "load" if isinstance(step, ir.Const) else "rmw", scope)
        return ir.Opaque(f"result of {fn}", site, fetch=acc)
    mark(acc, "increment" if value > 0 else "decrement", scope)
    acc.step = value
    return ir.Opaque(f"result of {fn}", site, ticket=acc.offset,
                     grid_counter=acc.scope == ir.GRID, step=abs(value), fetch=acc)

