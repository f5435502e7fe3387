"""Which fetch-adds of a signed computed amount grow their counter (frontend/atomics.py's "add").

A signed amount may be negative and move the counter down: such a fetch-add is a read-modify-write
whose result is the thread's own value. It grows the counter (a range ticket's draw, `ir.GROWS`)
only where the IR proves its amount in [0, 2**31) in every thread and every execution: built from
constants, thread and block indices and extents, bit counts, comparisons and parameters whose type
allows no negative value, by operations that keep a non-negative value non-negative (+, *, /, %,
>>, &, |, min, max, a selection), or from local variables assigned before the atomic on every way
to it whose every assignment in the kernel is such a value. A read of memory (a shared counter's
value, a host's buffer) is never proven: its contents may be anything. The bound below 2**31 keeps
the amount inside a signed 32-bit counter's range, where the IR's integer is what the atomic adds.

Example: `atomicAdd(&count, __popc(mask))` on an `int` counter, GLSL's `atomicAdd(c, bitCount(m))`,
WGSL's `atomicAdd(&c, i32(countOneBits(m)))` grow; `atomicAdd(tail, tot_sum)` with `tot_sum` read
from shared memory (Parboil's bfs) does not.
"""

from __future__ import annotations

from analyzer import ir

LIMIT = 1 << 31
# The most threads a block has on every target (solver.MAX_BLOCK), the most blocks a dimension.
MAX_BLOCK, MAX_GRID = 1024, (1 << 31) - 1
BIT_COUNTS = {"__popc": 32, "__popcll": 64, "popcount": 64, "popc": 64, "countOneBits": 64,
              "bitCount": 64, "OpBitCount": 64}
COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!=", "&&", "||"})


def grows(kernel: ir.Kernel, acc: ir.Access) -> bool:
    """Whether the signed fetch-add `acc` ("add") adds an amount the IR proves in [0, 2**31)."""
    amount = _amounts(kernel).get(acc.id)
    known = _definite(kernel).get(acc.id)
    return amount is not None and known is not None and Bounds(kernel).of(amount, known) is not None


@ir.per_kernel
def _amounts(kernel: ir.Kernel) -> dict[int, ir.Expr]:
    """Per signed fetch-add's access id, its amount (its result's `amount`; one whose result the
    IR drops has none: not proven)."""
    out: dict[int, ir.Expr] = {}
    for o in ir.ticket_draws(kernel).values():
        if o.fetch is not None and o.fetch.atomic_op == "add" and o.amount is not None:
            out[o.fetch.id] = o.amount
    return out


@ir.per_kernel
def _assignments(kernel: ir.Kernel) -> dict[str, list[tuple[ir.Expr, frozenset[str]]]]:
    """Per variable, each assignment's value and the variables assigned on every way to it."""
    out: dict[str, list] = {}
    known = _definite(kernel)
    for key, (target, value) in _assigns(kernel).items():
        out.setdefault(target, []).append((value, known[key]))
    return out


@ir.per_kernel
def _assigns(kernel: ir.Kernel) -> dict[int, tuple[str, ir.Expr]]:
    return {id(s): (s.target, s.value) for s in _all_stmts(kernel.body) if isinstance(s, ir.Assign)}


def _all_stmts(stmts):
    for s in stmts:
        yield s
        if isinstance(s, ir.If):
            yield from _all_stmts(s.then)
            yield from _all_stmts(s.orelse)
        elif isinstance(s, ir.Loop):
            yield from _all_stmts(s.init)
            yield from _all_stmts(s.body)
            yield from _all_stmts(s.update)


@ir.per_kernel
def _definite(kernel: ir.Kernel) -> dict[int, frozenset[str]]:
    """Per atomic access id and per assignment (its `id`), the variables assigned on every way
    from the kernel's start to it (structured code: an earlier statement of an enclosing block, a
    loop's init)."""
    out: dict[int, frozenset[str]] = {}

    def walk(stmts, known: frozenset[str]) -> frozenset[str]:
        for s in stmts:
            if isinstance(s, ir.Assign):
                out[id(s)] = known
                known = known | {s.target}
            elif isinstance(s, ir.MemOp) and s.access.atomic:
                seen = out.get(s.access.id)
                out[s.access.id] = known if seen is None else seen & known
            elif isinstance(s, ir.If):
                then, orelse = walk(s.then, known), walk(s.orelse, known)
                known = then & orelse
            elif isinstance(s, ir.Loop):
                known = walk(s.init, known)
                walk(s.body, known)
                walk(s.update, known)   # a `continue` skips the rest of the body
        return known
    walk(kernel.body, frozenset())
    return out


class Bounds:
    """An upper bound of a non-negative IR value below 2**31, or None where none is proven."""

    def __init__(self, kernel: ir.Kernel):
        self.kernel = kernel
        self.defs = _assignments(kernel)
        self.vars: dict[str, int | None] = {}

    def of(self, e, known: frozenset[str]) -> int | None:
        """`e`'s bound where the variables `known` are assigned on every way to it."""
        b = self._bound(e, known)
        return b if b is not None and 0 <= b < LIMIT else None

    def _bound(self, e, known: frozenset[str]) -> int | None:
        if isinstance(e, ir.Const):
            return e.value if isinstance(e.value, int) and 0 <= e.value < LIMIT else None
        if isinstance(e, ir.Builtin):
            return _builtin(e.name)
        if isinstance(e, ir.Param):
            lo, hi = self.kernel.param_ranges.get(e.name, (-1, 0))
            return hi if lo >= 0 and hi < LIMIT else None
        if isinstance(e, ir.Var):
            return self._var(e.name) if e.name in known else None   # else it may hold anything
        if isinstance(e, ir.BinOp):
            return self._binop(e, known)
        if isinstance(e, ir.UnOp):
            return 1 if e.op == "!" else None
        if isinstance(e, ir.Select):
            a, b = self.of(e.a, known), self.of(e.b, known)
            return None if a is None or b is None else max(a, b)
        if isinstance(e, ir.Call):
            if e.fn in BIT_COUNTS:
                return BIT_COUNTS[e.fn]
            args = [self.of(a, known) for a in e.args]
            if e.fn == "min" and len(args) == 2:
                known = [a for a in args if a is not None]
                return min(known) if len(known) == 2 else None
            if e.fn == "max" and len(args) == 2 and None not in args:
                return max(args)
        return None

    def _var(self, name: str) -> int | None:
        if name not in self.defs:
            return None
        if name in self.vars:
            return self.vars[name]
        self.vars[name] = None   # a variable its own assignments read (a loop's sum): not proven
        bounds = [self.of(v, known) for v, known in self.defs[name]]
        out = None if None in bounds else max(bounds)
        self.vars[name] = out
        return out

    def _binop(self, e: ir.BinOp, known: frozenset[str]) -> int | None:
        if e.op in COMPARISONS:
            return 1
        a, b = self.of(e.a, known), self.of(e.b, known)
        if e.op == "&":   # one non-negative operand clears the sign
            known = [x for x in (a, b) if x is not None]
            return min(known) if known else None
        if a is None or b is None:
            return None
        if e.op == "+":
            return a + b
        if e.op == "*":
            return a * b
        if e.op in ("/", ">>"):
            return a
        if e.op == "%":
            return min(a, max(b - 1, 0))
        if e.op == "|":
            return (1 << max(a, b).bit_length()) - 1
        return None


def _builtin(name: str) -> int | None:
    if name.startswith(("tid.", "bdim.")) or name in ("lane", "warp", "linear_tid"):
        return MAX_BLOCK
    if name.startswith(("bid.", "gdim.")):
        return MAX_GRID
    return None
