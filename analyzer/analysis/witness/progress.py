"""Loops whose step is a value of the launch or the parameters, and which way it must point for the
loop to end: a witness the replay can run prefers such steps moving toward the loop's bound.

A witness is a model of the race query, which asks that each thread reach its access in the given
iterations, not that the loops it runs before the access end: with `while (w < 3) { ...; w += P; }`
the query may set `P = 0`, and the replay of the other thread, which must get past that loop to its
own access, never ends (the brute-force campaigns' "not validated" witnesses). Only a preference
(witnesses.py asks it as a wish): a race whose every model needs the loop stuck keeps its witness.
"""

from __future__ import annotations

from analyzer import ir

# Where the counter goes when the step is positive, per comparison with the counter on the left.
_UPWARD = {"<": True, "<=": True, ">": False, ">=": False}
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _launch_only(e: ir.Expr) -> bool:
    """Does `e` read only constants, parameters and launch extents (one value for every thread)?"""
    if isinstance(e, (ir.Const, ir.Param)):
        return True
    if isinstance(e, ir.Builtin):
        return e.name.startswith(("bdim.", "gdim."))
    if isinstance(e, ir.BinOp):
        return e.op in ("+", "-", "*") and _launch_only(e.a) and _launch_only(e.b)
    if isinstance(e, ir.UnOp):
        return e.op == "-" and _launch_only(e.a)
    return False


def _counter(cond: ir.Expr | None) -> tuple[str, bool] | None:
    """(the counter `v`, whether it must grow) for a condition `v < B` and its relatives, B any
    expression that does not name v; None for any other condition."""
    if not isinstance(cond, ir.BinOp) or cond.op not in _MIRROR:
        return None
    for var, other, op in ((cond.a, cond.b, cond.op), (cond.b, cond.a, _MIRROR[cond.op])):
        if isinstance(var, ir.Var) and var.name not in _names(other):
            return var.name, _UPWARD[op]
    return None


def _names(e: ir.Expr) -> set[str]:
    out: set[str] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, ir.Var):
            out.add(x.name)
        stack.extend(ir.operands(x))
    return out


def _step(var: str, value: ir.Expr) -> ir.Expr | None:
    """s for `var = var + s` (or `s + var`), -s as the expression `0 - s` for `var = var - s`, with
    s a launch-only value that is not a constant; None for any other update."""
    if not isinstance(value, ir.BinOp) or value.op not in ("+", "-"):
        return None
    a, b = value.a, value.b
    if value.op == "+" and isinstance(b, ir.Var) and b.name == var:
        a, b = b, a
    if not (isinstance(a, ir.Var) and a.name == var) or not _launch_only(b) or isinstance(b, ir.Const):
        return None
    return b if value.op == "+" else ir.BinOp("-", ir.Const(0), b)


@ir.per_kernel
def progress_steps(kernel: ir.Kernel) -> list[tuple[ir.Expr, bool]]:
    """(the step s, whether the loop ends only when s > 0 (else s < 0)) for every loop whose counter
    one assignment moves by a launch-only value: in the update clause, or at the top level of a body
    (a `while`); a counter assigned anywhere else in the loop makes it none of these."""
    out = []
    for loop in ir.walk_stmts(kernel.body):
        if not isinstance(loop, ir.Loop):
            continue
        found = _counter(loop.cond)
        if found is None:
            continue
        var, upward = found
        sets = [s for s in ir.walk_stmts(loop.body + loop.update, updates=True)
                if isinstance(s, ir.Assign) and s.target == var]
        tops = [s for s in loop.update + loop.body if isinstance(s, ir.Assign) and s.target == var]
        if len(sets) != 1 or len(tops) != 1:
            continue
        step = _step(var, tops[0].value)
        if step is not None:
            out.append((step, upward))
    return out
