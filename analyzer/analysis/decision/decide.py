"""The decision layer: is a set of constraints satisfiable, which point satisfies it, and what it
says of some of its names; two procedures behind one interface, chosen per query by its terms.

The queries kernels pose (two threads, their blocks, loop iterations, parameters, with loaded
values as opaque atoms) are mostly Presburger: linear integer arithmetic with floor and remainder
by constants, guards, and/or/not. Those ISL (islpy) decides exactly, in a fraction of a
millisecond (presburger.py translates Z3's terms); the rest (products of unknowns, bit vectors,
divisions by unknowns) Z3 decides, as before (solver_budget.py asks it within budgets).

What an ISL answer is worth: the translation is exact (an uninterpreted application is a variable
related to the function's other applications by Ackermann's constraints, which keep
congruence), so an empty set is an unsatisfiable query and a point is a model of it: its values of
Z3's constants, and of each application. Under `KERNELRACE_DECISION_CHECK=1` (the tests) every ISL
answer is checked: an empty set against Z3's verdict, a point by evaluating every constraint at it.

`project` gives a set of constraints' shadow on some of its names (the race conditions' projection
onto parameters is this, with brackets for products: conditions/race_condition.py).
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from dataclasses import dataclass

import islpy as isl
import z3

from analyzer.analysis.decision.presburger import NotPresburger, Translation

SAT, UNSAT = "sat", "unsat"
# ISL's budget for one decision (its own count of operations): the corpus's Presburger queries
# take at most a few thousand; one out of it goes to Z3.
ISL_OPERATIONS = 20_000
CHECK = os.environ.get("KERNELRACE_DECISION_CHECK") == "1"
# KERNELRACE_DECISION=isl asks ISL first where a caller wants the verdict alone; by default every
# query goes to Z3: on the corpus, ISL through islpy cost more than the Z3 checks it spared
# (docs/benchmarks.md, "The decision layer").
ENABLED = os.environ.get("KERNELRACE_DECISION", "z3") == "isl"

# Disjuncts of a query's set above which they are merged where they can be (`_conjunction`).
COALESCE_ABOVE = 32
# A list to record every query Z3 decides in, with its verdict (the differential benchmark and test).
RECORD: list | None = None
# Counts and seconds by procedure, over the process (benchmarks/decision_layer.py prints them).
STATS: Counter = Counter()


@dataclass
class Decision:
    """An answer of the integer-set procedure: `result` SAT or UNSAT; for SAT, `point` (Z3
    constant's name -> value) and the applications' values (`model_of` reads them)."""
    result: str
    point: dict[str, int] | None = None
    apps: list | None = None            # (Z3 application, its set variable), inner ones first
    values: dict[str, int] | None = None    # every set variable's value (applications' included)
    z3_ctx: object = None                   # the Z3 context of the query's terms


class Decider:
    """The integer-set procedure for one analysis (one ISL context, reused)."""

    def __init__(self) -> None:
        self.ctx = isl.Context()
        self.ctx.set_max_operations(ISL_OPERATIONS)
        # One translation for all queries: each constraint is translated once (most of a
        # query's constraints are the launch's bounds and pieces other queries stated).
        self.tr = Translation([], "lower", {})
        self.tr.app_limit = 1 << 30
        self.z3_ctx = None     # the Z3 context the translation's memo (by term id) is of
        self.pieces: dict[str, isl.Set] = {}    # a constraint's text -> its set (`_piece`)

    def presburger(self, constraints: list) -> Decision | None:
        """ISL's answer to the conjunction of `constraints` (Z3 booleans), or None where they are
        not Presburger or ISL runs out of its budget (then Z3's is the answer)."""
        t0 = time.perf_counter()
        try:
            out = self._decide(constraints)
        except (NotPresburger, isl.Error, RecursionError) as exc:
            STATS["not presburger" if isinstance(exc, NotPresburger) else "isl out of budget"] += 1
            out = None
        finally:
            STATS["isl seconds"] += time.perf_counter() - t0
        if out is not None:
            STATS[f"isl {out.result}"] += 1
            if CHECK:
                _check(out, constraints)
        return out

    def _decide(self, constraints: list) -> Decision:
        self.ctx.reset_operations()
        if constraints and constraints[0].ctx is not self.z3_ctx:
            # Term ids name terms within one Z3 context (solver.fresh_context: one per kernel).
            self.tr = Translation([], "lower", {})
            self.tr.app_limit = 1 << 30
            self.z3_ctx = constraints[0].ctx
            self.pieces = {}
        tr = self.tr
        items: set = set()
        pieces = []
        for c in constraints:
            text, used = tr.constraint(c)
            items |= used
            pieces.append(self._piece(text))
        extras, apps = tr.extras(items)
        pieces += [self._piece(text) for text in extras]
        s = _conjunction(self.ctx, pieces)
        if s is None or s.is_empty():
            return Decision(UNSAT)
        p = s.sample_point()
        space = p.get_space()
        values = {space.get_dim_name(isl.dim_type.param, i): p.get_coordinate_val(isl.dim_type.param, i).to_python()
                  for i in range(space.dim(isl.dim_type.param))}
        # A constant no constraint bounds is absent from the set: any value, 0 (model completion).
        point = {name: values.get(v, 0) for name, v in tr.vars.items() if v in values}
        return Decision(SAT, point, apps, {**{v: 0 for _, v in apps}, **values}, self.z3_ctx)

    def _piece(self, text: str) -> isl.Set:
        """The set of one constraint's text over its variables as ISL parameters, parsed once per
        kernel: a query intersects its constraints' sets (ISL aligns the parameters by name),
        where parsing the query whole took ISL 10 to 300 ms."""
        hit = self.pieces.get(text)
        if hit is None:
            names = sorted(set(_VARIABLE.findall(text)))
            hit = self.pieces[text] = isl.Set.read_from_str(self.ctx, "[" + ", ".join(names) + "] -> { : " + text + " }")
        return hit


_VARIABLE = re.compile(r"\b[ve]\d+_")


def _conjunction(ctx, pieces: list[isl.Set]) -> isl.Set | None:
    """The intersection of `pieces`, the conjunctive ones first, so that the disjuncts of the next
    meet a set already narrowed; None as soon as it is empty."""
    pieces = sorted(pieces, key=lambda x: x.n_basic_set())
    acc = pieces[0] if pieces else isl.Set.read_from_str(ctx, "{ : }")
    for piece in pieces[1:]:
        acc = acc.intersect(piece)     # drops the disjuncts it finds empty
        if piece.n_basic_set() > 1:
            n = acc.n_basic_set()
            if n == 0:
                return None
            if n > COALESCE_ABOVE:     # coalescing costs more than it saves on fewer
                acc = acc.coalesce()
    return acc


def model_of(d: Decision) -> z3.ModelRef:
    """A Z3 model of the query ISL found `d`'s point of: its constants, and each function at the
    arguments its applications take there (the applications in the order the translation met
    them, inner ones first, so that their arguments evaluate)."""
    assert d.result == SAT and d.apps is not None and d.values is not None
    ctx = d.z3_ctx
    m = z3.Model(ctx)
    for name, value in d.point.items():
        m.update_value(z3.Int(name, ctx), z3.IntVal(value, ctx))
    interps: dict = {}    # function's name -> (its interpretation, the argument values entered)
    for app, var in d.apps:
        f = app.decl()
        args = tuple(m.eval(a, model_completion=True).as_long() for a in app.children())
        if not args:
            m.update_value(f(), z3.IntVal(d.values[var], ctx))
            continue
        if f.name() not in interps:
            fi = z3.FuncInterp(z3.Z3_add_func_interp(ctx.ref(), m.model, f.ast, z3.IntVal(0, ctx).as_ast()), ctx)
            interps[f.name()] = (fi, set())
        fi, seen = interps[f.name()]
        if args not in seen:     # equal arguments have equal values (Ackermann's constraints)
            seen.add(args)
            vec = z3.AstVector(ctx=ctx)
            for a in args:
                vec.push(z3.IntVal(a, ctx))
            z3.Z3_func_interp_add_entry(ctx.ref(), fi.f, vec.vector, z3.IntVal(d.values[var], ctx).as_ast())
    return m


def holds_at(d: Decision, constraints: list) -> bool:
    """Does every constraint evaluate to true at `d`'s point (`model_of`)?"""
    m = model_of(d)
    return all(z3.is_true(m.eval(c, model_completion=True)) for c in constraints)


def _check(d: Decision, constraints: list) -> None:
    """KERNELRACE_DECISION_CHECK: an ISL answer must be Z3's (a point, a model of the query)."""
    if d.result == SAT:
        if not holds_at(d, constraints):
            raise AssertionError(f"ISL's point {d.point} does not satisfy the query")
        return
    s = z3.Solver(ctx=constraints[0].ctx)
    s.set("timeout", 10_000)
    s.add(*constraints)
    if s.check() == z3.sat:
        raise AssertionError(f"ISL found the query empty, Z3 satisfies it: {s.model()}")


def project(constraints: list, names: list[str]) -> isl.Set:
    """The values of the constants `names` for which `constraints` are satisfiable (the others
    projected out), an ISL set whose parameters are `names` in order, spelled `p0_`, `p1_`, ...
    Raises NotPresburger where the constraints are not (a product with a parameter among them
    included: conditions/race_condition.py brackets those)."""
    ctx = isl.Context()
    ctx.set_max_operations(ISL_OPERATIONS)
    tr = Translation(names, "lower", {})
    body = tr.translate(constraints)
    if tr.products or tr.atoms:
        raise NotPresburger("a product with a parameter")
    head = "[" + ", ".join(tr.ident(n) for n in names) + "] -> "
    return tr.projected(ctx, head, body)
