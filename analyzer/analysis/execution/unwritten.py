"""One value at one address: loads of an element that no write of the kernel can reach read the
value it held when the kernel started, whatever their sites, iterations, threads or blocks.

The symbolic executor names a load of a buffer the kernel writes after its site and iterations
(`load{site}(offset, iterations...)`, symbolic.py), as it must where a write may come between two
loads. Nothing then relates `lo = F[d]` at one site to `hi = F[d + 1]` at another, though for two
neighbouring groups both read F[1]: the ranges [F[d], F[d+1]) of the two groups seem to overlap
wherever the kernel also writes some element of F. For a load at byte offset o of such a buffer,
the fact stated is

    value == init(o)   or   some write of the buffer may touch the bytes at o,

where the write's thread is any thread of any block (`stranger`), in any iteration,
with the write's guard holding: an over-approximation of the writes that could come between two
loads, so the fact holds in every execution (writes to other buffers never touch this one: distinct
buffers do not alias, a stated assumption). Memory other than global is each block's own, so its
initial contents are per block. Vector loads read several elements: their initial value is a
function of the width too.

Like a contract's facts (contracts.py), these only refine a collision the exact query found
(races.py), for the loads its addresses and guards read: fewer facts only ever mean more findings,
so loads past `MAX_INSTANCES` writer copies get none.
"""

from __future__ import annotations

import z3

from analyzer import ir
from analyzer.analysis.decision.z3_terms import as_int, truth
from analyzer.analysis.execution.events import AccessEvent, Evaluation
from analyzer.analysis.stated.contracts import ContractFacts

DIMS = ("x", "y", "z")
MAX_INSTANCES = 48    # writer copies (a load times a write site) one query's facts may encode
UNWRITTEN_SHARE = 30  # the share of a query's budget the refinement is asked on (races.py)
SAME_VALUE = "same value"   # `refine_collision`: the facts make the two stored values one


class UnwrittenFacts:
    """The facts of `init(o)` for the loads of a query, on one kernel's written buffers."""

    def __init__(self, kernel: ir.Kernel, ev: Evaluation):
        self.kernel = kernel
        self.writes: dict[str, list[AccessEvent]] = {}
        for e in sorted(ev.accesses.values(), key=lambda e: e.access.id):
            acc = e.access
            if acc.is_write and acc.space != ir.PRIVATE and acc.atomic_op != "load":
                self.writes.setdefault(acc.buffer, []).append(e)
        self.events = ev.accesses
        self._sites = ContractFacts(kernel, ev, [])     # its `value_only`: loads only values read
        self._memo: dict = {}
        self.value_facts: frozenset[int] = frozenset()   # the last `refine_collision`'s facts for values

    def facts(self, enc, loads: list, a: AccessEvent, b: AccessEvent, model, values: bool = False,
              force: bool = False) -> list:
        """Facts about `loads` (Z3 applications of the query just built in `enc` for the pair a, b),
        with the side constraints their new terms need; [] when none is a load of a written buffer,
        or when `model` (the query's) already extends to one that satisfies them: no two loads of
        one element (and, but for global memory, one block) there read different values, so
        init(o) can be what they read. Most collisions are so, and cost no query.
        `values`: about the loads only the pair's stored values read (otherwise left out: they
        cannot keep the accesses apart), for a query that asks the two values to differ. `force`:
        even where `model` extends (for a race's condition, which is over every model)."""
        if not self.writes:
            return []
        value_only = self._sites.value_only(a, b)
        picked = []
        for app in loads:
            sym, k = enc.loads.get(app.get_id(), (None, 0))
            if sym is None or not sym.name.startswith("load") or not sym.name[4:].isdigit() \
                    or (int(sym.name[4:]) in value_only) != values:
                continue
            e = self.events.get(int(sym.name[4:]))
            if e is not None and e.access.buffer in self.writes and not e.access.is_write:
                picked.append((app, k, e.access))
        if not picked or (not force and self._extends(model, picked, enc)):
            return []
        key = (id(enc), tuple(app.get_id() for app, _, _ in picked))
        hit = self._memo.get(key)
        saved = enc.last_loads, enc.last_state, enc.last_base
        enc.collecting()
        if hit is None:
            out, deps = enc.recorded(lambda: self._facts(enc, picked))
            hit = self._memo[key] = (out, deps)
        else:
            enc.depend(hit[1])
        out = hit[0] + enc.needed()
        enc.last_loads, enc.last_state, enc.last_base = saved
        return out

    @staticmethod
    def _extends(model, picked: list, enc) -> bool:
        seen: dict[tuple, object] = {}
        for app, k, acc in picked:
            where = [model.eval(app.arg(0), model_completion=True)]
            if acc.space != ir.GLOBAL:
                where += [model.eval(enc.blocks[k][d], model_completion=True) for d in DIMS]
            key = (acc.buffer, acc.width, *(str(w) for w in where))
            value = model.eval(app, model_completion=True)
            if seen.setdefault(key, value) is not value and not seen[key].eq(value):
                return False
        return True

    def _facts(self, enc, picked: list) -> list:
        out, budget = [], MAX_INSTANCES
        for app, k, acc in picked:
            writes = self.writes[acc.buffer]
            if len(writes) > budget:
                break
            budget -= len(writes)
            o = app.arg(0)
            args = [o] + ([enc.blocks[k][d] for d in DIMS] if acc.space != ir.GLOBAL else [])
            init = enc.func(f"init:{acc.buffer}:{acc.width}", len(args))(*args)
            out.append(z3.Or([app == init] + [self._may_touch(enc, w, o, acc.width) for w in writes]))
        return out

    def _may_touch(self, enc, w: AccessEvent, o, width: int):
        """Some thread's instance of the write `w` touches bytes [o, o + width): in a thread of
        its own (fresh, one per fact: each fact's writer is its own existential)."""
        k = self._fresh(enc)
        bounds = stranger(enc, k)
        at = as_int(enc.term(w.offset, k))
        guard = [truth(enc.term(g, k)) for g in w.guard]
        return z3.And(bounds + guard + [at < o + width, o < at + w.access.width])

    def refine_collision(self, checker, exact: list, refined_by: list, loads: list, a, b, solver, out,
                         detail: bool, values: bool):
        """`refine` by the loads the pair's addresses and guards read, then, for a query whose two
        stored values must differ (`values`), by the loads only the values read: two threads storing
        `g0[24] + 2.0f`, where no write reaches g0[24], store one value. SAME_VALUE when the second
        refinement rules the collision out."""
        self.value_facts = frozenset()
        kept = self.refine(checker, exact, refined_by, loads, a, b, solver, out, detail)
        if kept is None or not values:
            return kept
        again = self.refine(checker, exact, kept[1], loads, a, b, kept[0], out, detail, values=True)
        if again is None:
            return SAME_VALUE
        if len(again[1]) == len(kept[1]) and detail:
            # The witness needed none; the race's condition, over every launch, states them all
            # the same (else it takes in launches where the two values are one).
            facts = self.facts(checker.exact, loads, a, b, again[0].model(), values=True, force=True)
            again = (again[0], again[1] + facts)
        # A race's condition is projected with these facts where ISL can, else without them (their
        # writer threads can run the projection past its budget: row_merge's write-write).
        core = {c.get_id() for c in exact + kept[1]}   # (side constraints the facts share with the query)
        self.value_facts = frozenset(i for f in again[1][len(kept[1]):] if (i := f.get_id()) not in core)
        return again

    def refine(self, checker, exact: list, refined_by: list, loads: list, a, b, solver, out, detail: bool,
               values: bool = False):
        """The pair checker's refinement (races.py) of a collision its exact query found, with
        `solver` the query's: None when the facts rule it out; otherwise (the solver to read the
        witness from, the refinements in force), refined or not. `values`: the refinement by the
        loads only the stored values read (`facts`), for a query whose values must differ: None
        then means the two threads store one value."""
        facts = self.facts(checker.exact, loads, a, b, solver.model(), values)
        if not facts:
            return solver, refined_by
        # On a share of the budget: where every write may reach every element the loads read (a
        # sort's compare-and-swap), the facts change nothing and Z3 spent its whole budget to say
        # unknown (11 pairs of a global bitonic step, 15 s each on the contracts' budget); unknown
        # keeps the collision.
        with checker._scaled(1, UNWRITTEN_SHARE):
            res, refined = checker._solve_once(exact + refined_by + facts, out, detail)
        if res == z3.unsat:
            return None
        return (refined, refined_by + facts) if res == z3.sat else (solver, refined_by)

    @staticmethod
    def _fresh(enc) -> int:
        k = max(enc.tid) + 1
        stranger(enc, k)
        return k


def stranger(enc, k: int) -> list:
    """Thread k (3 and up) of the encoder `enc` (solver.Encoder) as any thread of any block, apart
    from the query's two: its indices and their bounds (which a fact about it states). Its
    block-uniform values are its block's own (`@b{k}`), its per-thread values and iterations its own."""
    assert k > 2
    if k not in enc.tid:
        enc.tid[k] = {d: z3.Int(f"t{k}.{d}") for d in DIMS}
        enc.blocks[k] = {d: z3.Int(f"block{k}.{d}") for d in DIMS}
    t, b = enc.tid[k], enc.blocks[k]
    return [c for d in DIMS for c in (t[d] >= 0, t[d] < enc.bdim[d], b[d] >= 0, b[d] < enc.gdim[d])]
