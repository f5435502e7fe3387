"""Uniformity: whether a term has the same value in every thread of a block (`is_uniform`), or
of the grid (`GridUniformity`), at the same point of the aligned execution."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analyzer import ir
from analyzer.analysis.execution.sym import Iter, Sym

if TYPE_CHECKING:
    from analyzer.analysis.execution.events import LoopInfo


NON_UNIFORM_BUILTINS = ("tid.", "lane", "warp", "linear_tid")


Term = object  # ir.Expr | Iter | Sym


_uniform_memo: dict[int, tuple[object, bool]] = {}


def remembered(table: dict, x, compute):
    """compute(x), remembered in `table` by identity: terms are shared DAGs, and hashing them
    structurally is quadratic. The entry keeps x alive, so its id is not reused."""
    hit = table.get(id(x))
    if hit is None or hit[0] is not x:
        hit = table[id(x)] = (x, compute(x))
    return hit[1]


def is_uniform(t) -> bool:
    return remembered(_uniform_memo, t, _is_uniform)


def _clear_uniform_memo() -> None:
    _uniform_memo.clear()


is_uniform.cache_clear = _clear_uniform_memo  # type: ignore[attr-defined]


def _is_uniform(t) -> bool:
    if isinstance(t, ir.Const | ir.Param):
        return True
    if isinstance(t, ir.Builtin):
        return not t.name.startswith(NON_UNIFORM_BUILTINS)
    if isinstance(t, ir.BinOp | ir.UnOp | ir.Select | ir.Call):
        return all(is_uniform(x) for x in ir.operands(t))
    if isinstance(t, Iter):
        return t.loop not in divergent_loops
    if isinstance(t, Sym):
        return t.uniform and all(is_uniform(a) for a in t.args)
    return False  # Opaque


# Loops whose trip count differs between threads: their iteration number is not uniform.
divergent_loops: set[int] = set()



class GridUniformity:
    """Which conditions every block of the grid agrees on, for grid syncs (ir.GRID): the same value
    in every thread of the grid at the same point of the (aligned) execution, i.e. uniform in a
    block and nothing that may differ between blocks (a block index, loop state or a load the grid
    pass keeps per block, solver.Encoder). In a kernel without grid syncs nothing asks: all agree."""

    def __init__(self, kernel: ir.Kernel, read_only: dict):
        # Loads every block sees alike (global buffers the kernel never writes), as grid.py has them.
        self.common = frozenset(f"load{site.id}" for site in read_only.values() if site.space == ir.GLOBAL)
        self.syncs = any(isinstance(x, ir.Barrier) and x.scope == ir.GRID
                         for x in ir.walk_stmts(kernel.body, updates=True))
        self._memo: dict[int, tuple] = {}

    def uniform(self, t) -> bool:
        return not self.syncs or (is_uniform(t) and self._free(t))

    def _free(self, t) -> bool:
        hit = self._memo.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        if isinstance(t, ir.Builtin):
            out = not t.name.startswith("bid.")
        elif isinstance(t, ir.Const | ir.Param | Iter):
            out = True
        elif isinstance(t, Sym):
            out = t.name in self.common and all(self._free(a) for a in t.args)
        elif isinstance(t, ir.BinOp | ir.UnOp | ir.Select | ir.Call):
            out = all(self._free(x) for x in ir.operands(t))
        else:
            out = False
        self._memo[id(t)] = (t, out)
        return out

    def exit(self, s, guard: tuple, loop_stack: list, loops: dict) -> None:
        """A break or return under a condition that may differ between blocks: the loops it leaves
        run a trip count of their own in some blocks (a return: every loop around it)."""
        why = next((g for g in guard if not self.uniform(g)), None) if loop_stack else None
        if why is None:
            return
        for lid in (loop_stack[-1:] if isinstance(s, ir.Break) else loop_stack):
            if loops[lid].grid_exit is None:
                loops[lid].grid_exit = (why, s.span)

    def enter_loop(self, info: "LoopInfo", cond, first) -> bool:
        """Whether every block runs the loop's iterations alike, as far as known at this pass."""
        if cond is not None and (not self.uniform(cond) or (first is not cond and not self.uniform(first))):
            info.grid_uniform = False
        if info.grid_exit is not None:
            info.grid_uniform = False
        return info.grid_uniform

    def first(self, current: tuple, cond, span) -> tuple:
        """The first enclosing condition blocks may disagree on: `current`, else `cond` if so."""
        return current or (() if self.uniform(cond) else (cond, span, False))

    @staticmethod
    def why_loop(info: "LoopInfo", cond) -> tuple:
        """(condition, span, by an exit) that makes blocks run different numbers of iterations."""
        if info.grid_exit is None:
            return (cond if cond is not None else ir.Const(1)), info.loop.span, False
        return info.grid_exit[0], info.grid_exit[1], True


