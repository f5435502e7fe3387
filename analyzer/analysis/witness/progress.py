"""Loops whose step is a value of the launch or the parameters, and which way it must point for the
loop to end: a witness the replay can run prefers such steps moving toward the loop's bound.

A witness is a model of the race query, which asks that each thread reach its access in the given
iterations. The symbolic executor states that the loops a thread got past ended (`loop_facts.
ended_facts`), for the accesses after them; an access in a later iteration of a loop around such a
loop is not after it in the program, and with `while (w < 3) { ...; w += P; }` the query may set
`P = 0`: the replay of the thread that must get past that loop to reach its access never ends (the
brute-force campaigns' "not validated" witnesses). Only a preference (witnesses.py asks it as a
wish): a race whose every model needs the loop stuck keeps its witness.
"""

from __future__ import annotations

from analyzer import ir
from analyzer.analysis.execution.loop_facts import loop_counter, step_sign


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


def _step(var: str, value: ir.Expr) -> tuple[ir.Expr, bool] | None:
    """(s, whether it is added) for `var = var + s`, `var = s + var` or `var = var - s`, with s a
    launch-only value that is not a constant (a constant's direction is the program's); else None."""
    if not isinstance(value, ir.BinOp) or value.op not in ("+", "-"):
        return None
    a, b = value.a, value.b
    if value.op == "+" and isinstance(b, ir.Var) and b.name == var:
        a, b = b, a
    if not (isinstance(a, ir.Var) and a.name == var) or not _launch_only(b) or isinstance(b, ir.Const):
        return None
    return b, value.op == "+"


@ir.per_kernel
def progress_steps(kernel: ir.Kernel) -> list[tuple[ir.Expr, str]]:
    """(the step s, the comparison with 0 it needs for the loop to end: `>` or `<`) for every loop
    `v OP bound` (OP one of `<`, `<=`, `>`, `>=`) whose counter one assignment moves by a launch-only value: in the update
    clause, or at the top level of a body (a `while`); a counter assigned anywhere else in the loop
    makes it none of these."""
    out = []
    for loop in ir.walk_stmts(kernel.body):
        counter = loop_counter(loop.cond) if isinstance(loop, ir.Loop) else None
        # `!=` bounds are left alone: a wish that the step be nonzero may still overshoot.
        if counter is None or counter[0] == "!=" or ir.reads_names(counter[2], {counter[1].name}):
            continue
        op, v, _ = counter
        sets = [s for s in ir.walk_stmts(loop.body + loop.update, updates=True)
                if isinstance(s, ir.Assign) and s.target == v.name]
        tops = [s for s in loop.update + loop.body if isinstance(s, ir.Assign) and s.target == v.name]
        step = _step(v.name, tops[0].value) if len(sets) == 1 and len(tops) == 1 else None
        if step is not None:
            out.append((step[0], step_sign(op, step[1])))
    return out
