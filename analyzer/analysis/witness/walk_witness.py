"""A witness that walks the work list as the kernel does: loop state tied to the program.

The symbolic executor keeps a persistent kernel's walk state (batch, tile, the batch's tiles) as
unknown functions of the iterations, per block (symbolic.py, solver.py), and tile_order.py proves
only how they relate (`P(batch) + tile == blockIdx.x + c*m`, P unknown). A model of a collision
may so give the state values the walk never computes from the model's own index map, and the
replay, which runs the real loops on the model's loads, then takes another path: the witness does
not replay. For the witness only (the verdict is settled before), this module states what the
walk computes, on a bounded stretch:

    P(b0) = 0,  P(j+1) = P(j) + F(j)          for the batches j in [b0, b0 + BATCHES]
    L's head, iteration 0:     batch = b0, tile = I
    L's head, iteration i > 0: batch, tile = K's exit in iteration i-1, with tile + c
    K's head, iteration j:     batch = batch at L's head + j, tile = that tile - (P(batch) - P(L's))
    K's exit:                  the first batch from L's where K's guard fails: C(batch) false,
                               or the tile left is below F(batch)

for L's iterations up to ITERATIONS, with F(j) and C(j) the walk's own `tiles = E(batch)` and
guard conjuncts on the batch (tile_order.py finds them) over the model's loads, and the size cell
F(batch) wherever the guard holds (the walk's invariant J). Z3's congruence carries the values to
the query's state terms once their iterations are in those ranges.

Stated whole in the collision query, this was too hard for the solver (each batch's size is a load
of the index map, which every load of the query may alias). So it comes in two parts
(`WitnessSearch._walk_models`): the query first gets the cheap part (`_light`: the invariant with
m the iteration number, the first state, the exit bound), whose models put the two sides where a
walk can bring them; then, with that witness's values fixed (its blocks and iterations at least),
the whole statement. What either gives is still only a candidate, replayed like any other. A
walk that must cover more batches than BATCHES to bring the two sides together (a row met again
c tiles later) is walk_plan.py's: there the batches are fixed in advance.
"""

from __future__ import annotations

import dataclasses

import z3

from analyzer import ir
from analyzer.analysis.decision.solver import as_int, truth
from analyzer.analysis.execution import tile_order
from analyzer.analysis.execution.float_constants import folded
from analyzer.analysis.execution.progress import _cell_written, _increment, _lists, state_name
from analyzer.analysis.execution.sym import Sym
from analyzer.analysis.execution.tile_order import (Walk, _conjuncts, _decrement_by, _normal_lists, _reads_only, _step,
                                                    local_value)

# Batches past the first that the witness's walk may reach, and L's iterations it may run: a
# witness wants few (the readability wishes prefer iterations <= 3), and each batch is one more
# load of the index map that the query's own loads may alias (with 8, TVM's prefill on cuda took
# 7.1 s instead of 4.5).
BATCHES = 4
ITERATIONS = 4


class _Unfit(tile_order._Unfit):
    """The walk's size or guard is not in a form this module reads (no witness constraints); a
    tile_order._Unfit, so a local `local_value` does not find is one too."""


class WalkProgram:
    """What the walk computes, read from its (normalized) statements: the first batch b0, the size
    cell, and F(j) and C(j) as symbolic terms (the executor's vocabulary) for a constant batch j."""

    def __init__(self, kernel: ir.Kernel, walk: Walk):
        self.walk = walk
        self.read_only = ir.read_only_loads(kernel)
        self.lang = kernel.lang
        self.b0 = self._first_batch(kernel)
        k_loop = walk.inner
        body = k_loop.body
        g = next((i for i, x in enumerate(body) if not isinstance(x, ir.Assign)), len(body))
        if k_loop.cond is not None:
            guard, start = _conjuncts(k_loop.cond), 0
        else:   # `if (!G) break` (tile_order.py proved the shape)
            guard, start = _conjuncts(body[g].cond.a), g + 1
        self.guard = [c for c in guard if _reads_only(c, walk.batch)]
        dec = inc = None
        for i in range(start, len(body)):
            if dec is None and (x := _decrement_by(body[i], walk.tile)) is not None:
                self.size, dec = x, i
            elif inc is None and _increment(body[i], walk.batch) and _step(body[i], walk.batch) == 1:
                inc = i
        if dec is None or inc is None:
            raise _Unfit("no step")
        self.rest = body[max(dec, inc) + 1:]

    def _first_batch(self, kernel: ir.Kernel) -> int:
        for lst in _normal_lists(kernel):
            for i, s in enumerate(lst):
                if s is self.walk.loop:
                    sets = [x for x in lst[:i] if _cell_written(x) == self.walk.batch]
                    value = sets[-1].value if sets and isinstance(sets[-1], ir.Assign) else \
                        sets[-1].access.value if sets else None
                    if isinstance(value, ir.Const):
                        return value.value
                    raise _Unfit("the first batch is no constant")
        raise _Unfit("the walk's loop is not in the kernel")

    def size_at(self, j: "int | ir.Expr"):
        """F(j): the size the walk's K writes once the batch is j (a constant, or an expression)."""
        env: dict = {_key(self.walk.batch): ir.Const(j) if isinstance(j, int) else j}
        for s in self.rest:
            if _cell_written(s) == self.size:
                return self._value(s, env)
            if isinstance(s, ir.If) and any(_cell_written(x) == self.size for x in s.then):
                for x in s.then:
                    if _cell_written(x) == self.size:
                        return self._value(x, env)
                    self._run(x, env)
                continue
            self._run(s, env)
        raise _Unfit("no write of the size")

    def guard_at(self, j: int) -> list:
        env = {_key(self.walk.batch): ir.Const(j)}
        return [self._term(c, env) for c in self.guard]

    def _run(self, s, env: dict) -> None:
        w = _cell_written(s)
        if w is None:
            if isinstance(s, (ir.If, ir.Loop)):
                for lst in _lists([s]):
                    for x in lst:
                        if (w := _cell_written(x)) is not None:
                            env.pop(_key(w), None)
            return
        try:
            env[_key(w)] = self._value(s, env)
        except tile_order._Unfit:
            env.pop(_key(w), None)

    def _value(self, s, env: dict):
        return self._term(s.value if isinstance(s, ir.Assign) else s.access.value, env)

    def _term(self, e, env: dict):
        """An IR expression as the symbolic executor has it (symbolic.py): locals and private
        cells from `env`, a read-only buffer's load `load<site>(offset)`."""
        if isinstance(e, (ir.Const, ir.Param, ir.Builtin)):
            return e
        if isinstance(e, ir.Var) or (isinstance(e, ir.Read) and e.access.space == ir.PRIVATE):
            return local_value(e, env)
        if isinstance(e, ir.Read):
            acc = e.access
            site = self.read_only.get(acc.buffer)
            if site is None:
                raise _Unfit(f"load of {acc.buffer}")
            return Sym(f"load{site.id}", True, (self._term(acc.offset, env),))
        if isinstance(e, ir.BinOp):
            return ir.BinOp(e.op, self._term(e.a, env), self._term(e.b, env))
        if isinstance(e, ir.UnOp):
            return ir.UnOp(e.op, self._term(e.a, env))
        if isinstance(e, ir.Select):
            return ir.Select(self._term(e.cond, env), self._term(e.a, env), self._term(e.b, env))
        if isinstance(e, ir.Call):
            if (name := folded(e, self.lang)) is not None:
                return ir.Call(name, ())
            return dataclasses.replace(e, args=tuple(self._term(a, env) for a in e.args))
        raise _Unfit(type(e).__name__)


def _key(cell):
    return cell[1] if cell[0] == "var" else cell


def programs(kernel: ir.Kernel, walks) -> list[WalkProgram]:
    """The walks whose size and guard this module reads."""
    out = []
    for walk in walks:
        try:
            out.append(WalkProgram(kernel, walk))
        except tile_order._Unfit:
            pass
    return out


def _encoded(enc, t, k: int):
    """`enc.term(t, k)` with the side constraints it needs (division identities and the like)."""
    v = enc.term(t, k)
    deps = enc.memo[(id(t), k)][2]
    return v, [enc.base[i] for i in sorted(deps) if i >= 0]


def walk_constraints(enc, progs: list[WalkProgram], state: list):
    """For a witness: the walk state the query reads (`state`, the encoder's `last_state`) as the
    walk computes it (see the module docstring), and the cheap part of it (`_light`); None when
    the query reads none."""
    out: list = []
    light: list = []
    for prog in progs:
        walk = prog.walk
        roles = {"batch": walk.batch, "tile": walk.tile, "size": prog.size}
        sides, apps, reads = query_reads(enc, prog, state)
        if not sides:
            continue
        try:
            # Encoded for block 1: the index map is memory the kernel never writes, one value per
            # address in every block (grid.py). (Were it not, block 2's walk would only replay less.)
            sizes = [_encoded(enc, prog.size_at(j), 1) for j in range(prog.b0, prog.b0 + BATCHES + 1)]
            guards = [[_encoded(enc, g, 1) for g in prog.guard_at(j)]
                      for j in range(prog.b0, prog.b0 + BATCHES + 1)]
        except tile_order._Unfit:
            continue
        out += reads
        light += reads + _light(enc, prog, apps, roles, sizes, guards)
        for side, prefixes in sorted(sides.items()):
            out += _side(enc, prog, side, list(prefixes.values()), sizes, guards, roles)
    return (out, light) if out else None


def query_reads(enc, prog: WalkProgram, state: list):
    """The query's terms of this walk in `state`: per side (block; 1 within one block) the outer
    loops' iterations they are at (argument ids -> arguments), the applications as (side, point,
    arguments), and their iterations within ITERATIONS (and K's within BATCHES)."""
    walk = prog.walk
    names = walk.names()
    sides: dict[int, dict] = {}
    reads: list = []
    apps: dict = {}     # (side, point, argument ids) -> (side, point, arguments)
    for x in state:
        name = x.decl().name()
        side = 1
        if name.endswith(("@b1", "@b2")):
            name, side = name[:-3], int(name[-1])
        size_point = next((p for p in _points(walk) if name == state_name(prog.size, p[1], p[0])), None)
        if name not in names and size_point is None:
            continue
        point = names[name][0] if name in names else size_point
        args = x.children()
        inner = point == ("L", walk.inner.id)
        if len(args) < 1 + inner:
            continue
        prefix = tuple(args[:len(args) - 1 - inner])
        sides.setdefault(side if enc.grid else 1, {})[tuple(a.get_id() for a in prefix)] = prefix
        apps.setdefault((side, point, tuple(a.get_id() for a in args)), (side if enc.grid else 1, point, args))
        i = args[len(args) - 1 - inner]
        reads.append(z3.And(i >= 0, i < ITERATIONS))
        if inner:
            reads.append(z3.And(args[-1] >= 0, args[-1] <= BATCHES))
    return sides, list(apps.values()), reads


def _light(enc, prog: WalkProgram, apps: list, roles: dict, sizes: list, guards: list) -> list:
    """For the collision query itself: the walk's invariant with m the iteration number,
    `P(batch) + tile == I + c*i` (P from F, as in `_side`), the first iteration's state, K's steps,
    and the exit's tile below its batch's size, at the state the query reads. Cheap, and without it
    the query's model mostly puts the witness where no index map brings the two sides together."""
    walk, b0 = prog.walk, prog.b0
    P, F, C, out = _tables(prog, "light", sizes, guards)
    head, k_head, _ = _points(walk)
    for side, point, args in apps:
        suffix = f"@b{side}" if enc.grid else ""

        def fn(role: str, where, n: int):
            return enc.func(state_name(roles[role], where[1], where[0]) + suffix, n)

        inner = point == k_head
        i = args[len(args) - 1 - inner]
        start, cs = _encoded(enc, walk.start, side)
        batch, tile = (fn(r, point, len(args))(*args) for r in ("batch", "tile"))
        out += cs + [P(batch) + tile == start + walk.step * i, batch >= b0, batch <= b0 + BATCHES]
        at_head = args[:-1] if inner else args
        b_head = fn("batch", head, len(at_head))(*at_head)
        if point == head:
            out.append(z3.Implies(i == 0, z3.And(batch == b0, tile == start)))
        elif inner:
            out.append(batch == b_head + args[-1])
        else:
            out += [tile >= 0, batch >= b_head, z3.Or(z3.Not(C(batch)), tile < F(batch))]
    return out


def _tables(prog: WalkProgram, tag: str, sizes: list, guards: list):
    """P, F and C over the batches [b0, b0 + BATCHES] (see the module docstring), with their
    definitions."""
    b0 = prog.b0
    P = z3.Function(f"walkwitness.{tag}.prefix{prog.walk.loop.id}", z3.IntSort(), z3.IntSort())
    F = z3.Function(f"walkwitness.{tag}.size{prog.walk.loop.id}", z3.IntSort(), z3.IntSort())
    C = z3.Function(f"walkwitness.{tag}.guard{prog.walk.loop.id}", z3.IntSort(), z3.BoolSort())
    out = [P(b0) == 0]
    for n, ((size, side_cs), guard) in enumerate(zip(sizes, guards)):
        j = b0 + n
        out += side_cs + [c for _, cs in guard for c in cs]
        out += [F(j) == as_int(size), C(j) == z3.And(*[truth(g) for g, _ in guard])]
        out.append(P(j + 1) == P(j) + F(j))
    return P, F, C, out


def _points(walk: Walk) -> list:
    return [("L", walk.loop.id), ("L", walk.inner.id), ("exit", walk.inner.id)]


def _side(enc, prog: WalkProgram, side: int, prefixes: list, sizes: list, guards: list, roles: dict) -> list:
    walk, b0 = prog.walk, prog.b0
    P, F, C, out = _tables(prog, f"side{side}", sizes, guards)
    start, start_cs = _encoded(enc, walk.start, side)
    out += start_cs
    suffix = f"@b{side}" if enc.grid else ""
    last = b0 + BATCHES

    def fn(role: str, point, arity: int):
        return enc.func(state_name(roles[role], point[1], point[0]) + suffix, arity)

    head, k_head, k_exit = _points(walk)
    for prefix in prefixes:
        n = len(prefix)
        prev = None
        for i in range(ITERATIONS):
            at = prefix + (z3.IntVal(i),)
            lb, lt, ls = (fn(r, head, n + 1)(*at) for r in ("batch", "tile", "size"))
            eb, et, es = (fn(r, k_exit, n + 1)(*at) for r in ("batch", "tile", "size"))
            if prev is None:
                out += [lb == b0, lt == start]
            else:
                out += [lb == prev[0], lt == prev[1] + walk.step]
            out += [lb >= b0, eb >= lb, eb <= last]
            # K moves past every batch before the exit (its guard held), and stops at the exit's.
            for j in range(b0, last + 1):
                out.append(z3.Implies(z3.And(lb <= j, j < eb), z3.And(C(j), P(j + 1) - P(lb) <= lt)))
            out.append(et == lt - (P(eb) - P(lb)))
            out.append(z3.Or(z3.Not(C(eb)), et < F(eb)))
            for b, s in ((lb, ls), (eb, es)):
                out.append(z3.Implies(C(b), s == F(b)))
            for j in range(BATCHES + 1):
                kat = at + (z3.IntVal(j),)
                kb, kt, ks = (fn(r, k_head, n + 2)(*kat) for r in ("batch", "tile", "size"))
                out += [kb == lb + j, kt == lt - (P(kb) - P(lb)), z3.Implies(C(kb), ks == F(kb))]
            prev = (eb, et)
    return out
