"""A persistent kernel's witness with its walk unrolled on a concrete plan of batches.

walk_witness.py states the walk with the batches symbolic (an unknown function P over them), on
a few batches only: enough for two blocks at neighbouring tiles, not for the walk to bring back a
row c tiles later. A batch of F tiles holds up to a tile's rows less than F tiles' worth, so the
rows fall behind the tiles by less than a tile per batch, and meeting a row again c tiles later
takes more than c batches (on TVM's prefill kernels, 18 to 32): the symbolic statement over that
many was undecided.

Here the batch each iteration of L works on is fixed in advance (a plan: a list of batches, one
per iteration, from the first), and the batches the walk passes between two of the plan's are
empty (no tiles: an unsorted index map's steps back, each bringing the rows back by less than a
tile's), so the walk's prefix sums are sums of a few known sizes and every load of the index map
sits at a known place; what is left for the solver is the index map's contents. With the
witness's threads, blocks and iterations fixed, a plan is

    P(b0) = 0,  P(j+1) = P(j) + F(j)                  for j in [b0, the plan's last batch]
    iteration i, from batch l (b0, else the plan's batch for i-1), position p = I + c*i:
        L's head:        batch = l,  tile = p - P(l)
        K's head, m-th:  batch = l + m,  tile = p - P(l + m)     for l + m <= the plan's batch B
        K's exit:        batch = B,  tile = p - P(B)
        K moves on:      C(j) and P(j+1) <= p       for j in [l, B)
        K stops at B:    not C(B) or p < P(B + 1)
        the size cell:   F(batch) wherever C(batch)
        empty batches:   F(j) = 0                   for j in (l, B)

the walk's own computation (tile_order.py's walk, F and C as walk_witness.py reads them) on the
model's index map, the empty batches a choice of the plan's. A model is still only a candidate,
replayed like any other (replay.py). (Batches of any size between were slower to solve, and
undecided at 4 rows a tile; on MLA prefill, where no plan has a model, they took a second each
to stay undecided, the empty ones milliseconds to be refuted.)
"""

from __future__ import annotations

import z3

from analyzer import ir
from analyzer.analysis.decision.solver import as_int, truth
from analyzer.analysis.execution import tile_order
from analyzer.analysis.execution.progress import state_name
from analyzer.analysis.witness.walk_witness import WalkProgram, _encoded, _points, query_reads

# The largest number of batches between the first iteration's and a later one's that a plan
# spans (each is one more load of the index map in the question), and the most iterations of L
# it lays out (a witness's are mostly 0 and 1: the readability wishes ask for few).
MAX_SPAN = 64
MAX_ITERATIONS = 16


def guard_params(prog: WalkProgram) -> set[str]:
    """The parameters K's guard reads (a batch count): a plan of many batches needs them free."""
    out = set()
    stack = list(prog.guard)
    while stack:
        e = stack.pop()
        if isinstance(e, ir.Param):
            out.add(e.name)
        elif isinstance(e, ir.Read):
            stack.append(e.access.offset)
        else:
            stack.extend(ir.operands(e))
    return out


def walk_start(enc, walk, side: int):
    """I, the walk's first tile, for side (block) `side`."""
    return _encoded(enc, walk.start, side)[0]


def spans(gap: int) -> list[int]:
    """The batch spans to try for two sides `gap` tiles apart on the walk, in order: none for one
    tile, else one batch, then two and four times the tiles between them (an empty batch brings
    the rows back by less than a tile's, so a row met again c tiles later takes more than c
    batches: about c * R / (R - 1) with R rows a tile, 8 or 4 on TVM's prefill kernels), up to
    MAX_SPAN."""
    if gap == 0:
        return [0]
    return [1] + [n for n in (2 * gap, 4 * gap) if 1 < n <= MAX_SPAN]


def plan_of(b0: int, start: int, step: int, iterations: int, low: int, span: int) -> list[int]:
    """The batch of each of `iterations` iterations of a walk from tile `start`: the first batch
    up to tile `low`, the batch `span` further after it."""
    return [b0 if start + step * i <= low else b0 + span for i in range(iterations)]


def plan_constraints(enc, prog: WalkProgram, plans: dict[int, list[int]]) -> list | None:
    """The walk state the last query reads (`enc.last_state`), for each side (block; 1 within one
    block) as its plan (`plans[side]`: the batch of each iteration) makes the walk compute it;
    None when the query reads none of it, or the walk's size or guard is not in a form
    walk_witness.py reads."""
    walk, b0 = prog.walk, prog.b0
    roles = {"batch": walk.batch, "tile": walk.tile, "size": prog.size}
    sides, _, _ = query_reads(enc, prog, enc.last_state)
    if not any(side in plans for side in sides):
        return None
    read = {x.decl().name() for x in enc.last_state}
    last = max((max(p) for p in plans.values()), default=b0)
    try:
        sizes = [_encoded(enc, prog.size_at(j), 1) for j in range(b0, last + 1)]
        guards = [[_encoded(enc, g, 1) for g in prog.guard_at(j)] for j in range(b0, last + 1)]
    except tile_order._Unfit:
        return None
    out: list = []
    F, C = {}, {}
    for n, ((size, cs), guard) in enumerate(zip(sizes, guards)):
        out += cs + [c for _, cs in guard for c in cs]
        F[b0 + n] = as_int(size)
        C[b0 + n] = z3.And(*[truth(g) for g, _ in guard])
    # The prefix sums as names of their own: each is one sum, not a chain of them in every term.
    P = {b0: z3.IntVal(0)}
    for j in range(b0, last + 1):
        P[j + 1] = z3.Int(f"walkplan.prefix{walk.loop.id}.{j + 1}")
        out.append(P[j + 1] == P[j] + F[j])
    head, k_head, k_exit = _points(walk)
    for side, prefixes in sorted(sides.items()):
        plan = plans.get(side)
        if plan is None:
            continue
        suffix = f"@b{side}" if enc.grid else ""
        start, cs = _encoded(enc, walk.start, side)
        out += cs

        def values(point, at: tuple, b: int, p) -> list:
            """The state the query reads at `point` and arguments `at`: batch b, its tile, its size."""
            eqs = []
            for role, v in (("batch", b), ("tile", p - P[b]), ("size", F[b])):
                name = state_name(roles[role], point[1], point[0]) + suffix
                if name in read:
                    x = enc.func(name, len(at))(*at) == v
                    eqs.append(z3.Implies(C[b], x) if role == "size" else x)
            return eqs

        for prefix in prefixes.values():
            for i, batch in enumerate(plan):
                p = start + walk.step * i
                lb = b0 if i == 0 else plan[i - 1]
                at = prefix + (z3.IntVal(i),)
                out += values(head, at, lb, p) + values(k_exit, at, batch, p)
                out += [z3.And(C[j], P[j + 1] <= p) for j in range(lb, batch)]
                out += [F[j] == 0 for j in range(lb + 1, batch)]     # the empty batches between
                out.append(z3.Or(z3.Not(C[batch]), p < P[batch + 1]))
                for m in range(batch - lb + 1):
                    out += values(k_head, at + (z3.IntVal(m),), lb + m, p)
    return out
