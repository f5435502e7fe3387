"""A walk whose batch sizes are differences of one index map: its prefix sums in closed form.

tile_order.py's fact names the walk's prefix sums P (P(b0) = 0, P(j+1) = P(j) + F(j)) as an
unknown function, so a query may pick any P. Where one tile is one row, as in TVM's MLA prefill
(`F(j) = ((32*q[j+1] - 32*q[j]) + 31) >> 5`, which is `q[j+1] - q[j]` for every integer), the
blocks' tiles p1 != p2 stand on rows q[b0] + p1 != q[b0] + p2, but only a P that telescopes says
so. When F(j) == G(j+1) - G(j) holds for every integer j, G(j) = k * L(j) with L(j) a load of
memory the kernel never writes (one value per address, as everywhere F is read) and k a constant
(k tiles a row: head_dim 256 and 512 split each row's 32 heads over 2 tiles), then
P(j) == G(j) - G(b0) for every batch j the walk reaches (it starts at b0 and steps by 1): the sum
of the differences. The identity is proven by the solver in the query's own encoding (divisions
and shifts exact), for each load of F, with k read from a model where the load steps by 1;
none proven, no fact. The fact refines a collision the query found without it (races.query), as a
contract does: encoded into every query, it made some of TVM's MLA queries at head_dim 512 too hard
for their budget; too hard as a refinement, the collision stands as it was. The refinement is asked
with its divisions and remainders named (solver_budget.TACTICS["purify"]): at two tiles a row
(head_dim 256 and 512) it ran out of 30x its budget without, and takes milliseconds with.
"""

from __future__ import annotations

import z3

from analyzer import ir
from analyzer.analysis.execution import tile_order
from analyzer.analysis.execution.sym import Sym
from analyzer.analysis.pairing.addresses import contains_param
from analyzer.analysis.witness.walk_witness import WalkProgram, _encoded

# The batch as a free integer while F and G are encoded (a name no program has).
_J = ir.Param("tileorder.telescope.j")
# The identity is small (one division, two loads): far below a pair query's budget.
_RLIMIT = 200_000


class TelescopeFacts:
    """Part of `races.PairChecker`: P in closed form where F telescopes (for tile_order.py's
    `_make_tile_order_facts`). Uses the checker's `kernel`."""

    def _prefix_closed_form(self, enc, walk: tile_order.Walk, prefix, batch) -> list:
        forms = self.__dict__.setdefault("_closed_forms", {})
        key = (id(enc), walk.loop.id)
        if key not in forms:
            forms[key] = (enc, _closed_form(enc, self.kernel, walk))    # enc kept: its id stays its own
        form = forms[key][1]
        if form is None:
            return []
        g, j, b0 = form
        return [prefix(batch) == z3.substitute(g, (j, batch)) - z3.substitute(g, (j, z3.IntVal(b0)))]


def _closed_form(enc, kernel: ir.Kernel, walk: tile_order.Walk):
    """(G as a term in j, j, b0) when F(j) == G(j+1) - G(j) is valid, else None."""
    try:
        prog = WalkProgram(kernel, walk)
        size = prog.size_at(_J)
        f, deps = _encoded(enc, size, 1)
    except tile_order._Unfit:
        return None
    j = enc.term(_J, 1)
    for load in _loads(size):
        if not contains_param(load, _J.name):
            continue
        g, more = _encoded(enc, load, 1)
        step = z3.substitute(g, (j, j + 1)) - g
        # The factor k: F where the load steps by 1 (a tile of 1/k rows); then the identity.
        s = z3.Solver()
        s.set("rlimit", _RLIMIT)
        s.add(*deps, *more, step == 1)
        if s.check() != z3.sat:
            continue
        k = s.model().eval(f, model_completion=True)
        if not z3.is_int_value(k) or k.as_long() == 0:
            continue
        s = z3.Solver()
        s.set("rlimit", _RLIMIT)
        s.add(*deps, *more, f != k * step)
        if s.check() == z3.unsat:
            return k * g, j, prog.b0
    return None


def _loads(t) -> list:
    """The loads of read-only memory in an executor term (walk_witness's `load<site>` Syms)."""
    out, stack, seen = [], [t], set()
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, Sym) and e.name.startswith("load"):
            out.append(e)
        stack.extend(ir.operands(e))
    return out

