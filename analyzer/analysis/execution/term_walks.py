"""Walks over the symbolic executor's terms that keep their own stack (a term thousands of
operations deep, an unrolled chain of multiply-adds, never recurses), memoised by identity: the
thread dimensions a term depends on, and its depth."""

from __future__ import annotations

from analyzer import ir
from analyzer.analysis.execution.loop_facts import ALL_DIMS, NO_DIMS, norm_dims
from analyzer.analysis.execution.sym import Iter, Sym
from analyzer.analysis.execution.uniformity import NON_UNIFORM_BUILTINS

# Past this depth a variable's value is an unknown value of its thread (symbolic.py): Python's
# recursion limit is 1000 and the solver's encoding recurses once a level.
MAX_TERM_DEPTH = 300


def walk_dag(t, memo: dict, leaf, inner, combine):
    """The value of `t`, with memo[id(node)] = (node, value) for t and every node below it, operands
    first: `leaf(node)` where `inner(node)` is false or it has no operands, else
    `combine(node, [operands' values])`."""
    hit = memo.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    stack = [(t, False)]
    while stack:
        node, ready = stack.pop()
        hit = memo.get(id(node))
        if hit is not None and hit[0] is node:
            continue
        kids = ir.operands(node) if inner(node) else ()
        if kids and not ready:
            stack.append((node, True))
            stack.extend((x, False) for x in kids)
            continue
        memo[id(node)] = (node, combine(node, [memo[id(x)][1] for x in kids]) if kids else leaf(node))
    return memo[id(t)][1]


def _dims_inner(t) -> bool:
    return isinstance(t, Sym | ir.BinOp | ir.UnOp | ir.Select | ir.Call) and not (isinstance(t, Sym) and not t.uniform)


def _dims_leaf(t) -> frozenset:
    if isinstance(t, ir.Builtin):
        return frozenset((t.name,)) if t.name.startswith(NON_UNIFORM_BUILTINS) else frozenset()
    if isinstance(t, Sym) and not t.uniform:
        return ALL_DIMS
    if isinstance(t, ir.Const | ir.Param | Iter | Sym | ir.BinOp | ir.UnOp | ir.Select | ir.Call):
        return frozenset()   # (a uniform Sym or a call of no operands)
    return ALL_DIMS


def _dims_combine(t, dims: list) -> frozenset:
    out = NO_DIMS
    for d in dims:
        if d and not d <= out:
            out = out | d
    return norm_dims(out)


def thread_dims(t, memo: dict) -> frozenset:
    """The thread builtins a term's value is a function of, besides what every thread of the
    block shares (`tid.x`, `warp`, ...; all three thread indices for a per-thread value the
    analysis cannot see into, which every other builtin is a function of)."""
    return walk_dag(t, memo, _dims_leaf, _dims_inner, _dims_combine)


def depth(t, memo: dict) -> int:
    """How many operations deep a term is."""
    return walk_dag(t, memo, lambda _: 1, lambda n: not isinstance(n, ir.Const | ir.Param | ir.Builtin | Iter),
                 lambda _, ds: 1 + max(ds))
