"""Asking Z3 within budgets: a resource limit per query (the same verdict on every run and machine)
with the clock as a backstop, a smaller share for questions that only explain a finding, the
kernel's deadline, and the query cache analyses share.

Split from races.py: how a query is asked and bounded does not depend on what it asks.
"""

from __future__ import annotations

import contextlib
import time

import z3

from analyzer.analysis.decision import decide
from analyzer.analysis.decision.memory_guard import checkpoint
from analyzer.analysis.decision.queries import Answer
from analyzer.analysis.pairing.hazards import OUT_OF_TIME, PairAnalysis, Undecided

# Z3 resource units per second of budget: about what Z3 spends in a second on these queries here
# (measured on the corpus), so `--timeout 1` means about a second, on every run the same verdict.
RLIMIT_PER_SECOND = 3_000_000
# The share of a query's budget a question that only explains a finding gets (see `_refuted`).
EXPLAIN_SHARE = 100
# A query the budget leaves undecided is asked once more with ESCALATE times the budget, for the
# first ESCALATIONS such queries of a kernel: a few queries at the edge of the budget (a grid
# query's nested divisions by constants) are decided then, instead of reported unknown, at a
# cost bounded per kernel. Still a resource limit: the same verdict on every run.
ESCALATE = 4
ESCALATIONS = 3
# Models of the cheap query an exact query is asked at (`_at_cheap_model`): with every input
# between -SMALL and SMALL, then without bounds.
CHEAP_MODELS = (24, 4)
SMALL = 16
# A query whose inputs are all fixed and that its budget still leaves undecided is hard for what
# the inputs do not fix (loaded values, atomics' results, floats read as functions): the next points
# are no easier. vello's `path_count` asked 28 points of one pair, each to its whole budget (97 s of
# its 99 s). After the first such point, the others are asked on this share of the budget (a
# resource limit still; what stays undecided goes on to the whole query, never to clean).
POINT_SHARE_AFTER_UNKNOWN = 10
# Where those models settle nothing, the exact query is asked whole on this share of its budget,
# never escalated: over 64-bit vectors it ran to its budget every time (all 21 such queries of a
# global bitonic step without its guard, 49 of the kernel's 54 s), and unknown is what it said.
WHOLE_AFTER_MODELS_SHARE = 10

# The preprocessing before the SMT core, by name. "purify" also names every division and
# remainder by a fresh variable with its defining constraints (purify-arith): slower on most of
# the corpus's queries, but it decides the prefix sums' closed-form refinements (telescope.py),
# which ran out of 30x their budget without it, in milliseconds.
TACTICS = {"preprocess": ("simplify", "propagate-values", "solve-eqs", "smt"),
           "purify": ("simplify", "propagate-values", "solve-eqs", "purify-arith", "smt")}
_tactics: tuple = (None, {})    # (context, name -> tactic): one per Z3 context (see solver.fresh_context)


def _preprocessed_solver(name: str = "preprocess"):
    global _tactics
    ctx = z3.main_ctx()
    if _tactics[0] is not ctx:
        _tactics = (ctx, {})
    tactic = _tactics[1].get(name)
    if tactic is None:
        tactic = _tactics[1][name] = z3.Then(*TACTICS[name], ctx=ctx)
    return tactic.solver()


def at_a_point(solver) -> bool:
    """Is `solver` a query asked at one point of its inputs (`_at_cheap_model`)? Its model is a
    collision, but an unsatisfiable question asked of it more (bounds, ordered loads, contracts)
    is so at that point only: nothing to conclude about the query."""
    return getattr(solver, "at_a_point", False)


class SolverBudget:
    """Part of `races.PairChecker`: `_solve` and the budget checks. Uses the checker's `rlimit`,
    `clock_ms`, `timeout_ms`, `deadline`, `cache` and `escalations` (left, from ESCALATIONS)."""

    def _decider(self) -> decide.Decider:
        d = self.__dict__.get("_isl")
        if d is None:
            d = self._isl = decide.Decider()
        return d

    def _escalation_spared(self) -> bool:
        """Is asking an undecided query again with more budget spared? (The race pass spares it
        for a pair a run of the block saw collide: races.py.)"""
        return False

    def _out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def _clock(self, ms: int) -> int:
        """A query's clock, cut to what is left of the kernel's time: a pair asks many queries
        (the collision, witness wishes and replays, refinements), and a kernel whose every query
        runs to its budget ran ten times past --kernel-timeout. A query the cut leaves undecided
        is `unknown`, never clean."""
        if self.deadline is None:
            return ms
        return max(1, min(ms, int((self.deadline - time.monotonic()) * 1000)))

    def _solve(self, constraints, out: PairAnalysis, live: bool = False, verdict: bool = False):
        """The verdict and the solver (or the remembered answer, which has its model and reason);
        `live` asks for a solver of a satisfiable query, to ask it more; `verdict`, for the verdict
        alone (see `_solve_once`). Undecided within the budget: asked again with more (see
        ESCALATE), while the kernel has escalations left."""
        res, solver = self._solve_once(constraints, out, live, verdict=verdict)
        if res == z3.unknown and self.escalations > 0 and not self._out_of_time() and not self._escalation_spared():
            self.escalations -= 1
            with self._scaled(ESCALATE):
                res, solver = self._solve_once(constraints, out, live)
        return res, solver

    @contextlib.contextmanager
    def _scaled(self, times: int = 1, share: int = 1):
        """The queries asked inside on `times` the budget, or a `share` of it (resource limit and
        clock alike, never below 1), the budget restored after."""
        saved = self.rlimit, self.clock_ms
        self.rlimit, self.clock_ms = (max(x * times // share, 1) for x in saved)
        try:
            yield
        finally:
            self.rlimit, self.clock_ms = saved

    def _solve_once(self, constraints, out: PairAnalysis, live: bool, tactic: str = "preprocess",
                    verdict: bool = False):
        """The verdict of `constraints` and a solver holding it (see `_solve`). With the decision
        layer's ISL path on (KERNELRACE_DECISION=isl), where the caller asks the `verdict` alone (a
        gate: no model read), a Presburger query is decided by integer sets (decide.py): an empty
        set is unsat, a point sat, as Z3 would say; a caller that reads a model gets Z3's, as
        before (the witnesses stay Z3's)."""
        key = None
        if self.cache is not None:
            key = self.cache.key(constraints, self.rlimit if tactic == "preprocess" else (self.rlimit, tactic))
            hit = self.cache.get(key)
            if hit is not None and not (live and hit.result == z3.sat):
                return hit.result, hit
        # Only where the verdict alone is asked: there both of ISL's answers spare a Z3 check
        # (elsewhere only unsat would, and its translations cost more: docs/benchmarks.md).
        decided = self._decider().presburger(constraints) if decide.ENABLED and verdict else None
        if decided is not None:
            out.queries += 1
            answer = Answer(z3.unsat if decided.result == decide.UNSAT else z3.sat, None, "")
            if key is not None and answer.result == z3.unsat:
                self.cache.put(key, constraints, z3.unsat, answer)
            return answer.result, answer
        # Preprocessing (simplify, propagate values, solve equalities) before the SMT core: the
        # queries are mostly definitions of indices, which this collapses (2-3x faster here).
        solver = _preprocessed_solver(tactic)
        # A resource limit, not only a clock: the same kernel gets the same verdicts on every run
        # and every machine. The clock stays as a backstop.
        solver.set("rlimit", self.rlimit)
        solver.set("timeout", self._clock(self.clock_ms))
        # Asserted through the C API: Solver.add re-checks and converts each constraint in Python,
        # which cost more than many of these queries take to solve.
        ctx, handle = solver.ctx.ref(), solver.solver
        for c in constraints:
            z3.Z3_solver_assert(ctx, handle, c.as_ast())
        out.queries += 1
        decide.STATS["z3 checks"] += 1
        t0 = time.perf_counter()
        res = solver.check()
        decide.STATS["z3 seconds"] += time.perf_counter() - t0
        if decide.RECORD is not None:
            decide.RECORD.append((list(constraints), res))
        checkpoint()    # an unknown may be the guard's interrupt
        if key is not None:
            self.cache.put(key, constraints, res, solver)
        return res, solver

    def _at_cheap_model(self, constraints, cheap: list, cheap_solver, inputs, out: PairAnalysis, live: bool):
        """An exact query asked with its inputs (threads, blocks, extents, iterations, parameters)
        set to the values of a model of the cheap query `cheap`, before it is asked whole (races.py:
        where the cheap query read bitwise functions, whose exact 64-bit vectors kept a global
        bitonic step's pairs past their budget): with its inputs fixed, 64-bit vectors and
        products are constants, decided at once. Where that model's bitwise functions
        (bitwise_lemmas.py) were not the exact operations, the exact values at its points join the
        cheap query (true facts: it stays an over-approximation) for its next model, up to
        CHEAP_MODELS of them: first with every input between -SMALL and SMALL (finitely many
        points, and a witness easy to read), then without.
        Sat is a collision of the exact query (the values only narrow it); the cheap query
        unsatisfiable with the facts, unbounded, is the exact one unsatisfiable; anything else
        (None) leaves the query to be asked whole."""
        small = [z3.And(v >= -SMALL, v <= SMALL) for v in inputs if not z3.is_int_value(v)]
        small += self.fast.defined_shifts()
        share = 1   # of the budget a point's exact query gets (see POINT_SHARE_AFTER_UNKNOWN)
        for box, rounds in zip((small, []), CHEAP_MODELS):
            facts: dict = {}     # Z3 id -> fact
            res, solver = self._solve_once(cheap + box, out, False) if box else (z3.sat, cheap_solver)
            if res != z3.sat:
                continue
            for _ in range(rounds):
                model = solver.model()
                pins = [v == model.eval(v, model_completion=True) for v in inputs]
                with self._scaled(share=share):
                    res, pinned = self._solve_once(constraints + pins, out, live)
                if res == z3.unknown:
                    share = POINT_SHARE_AFTER_UNKNOWN
                if res == z3.sat:
                    if isinstance(pinned, z3.Solver):
                        pinned.at_a_point = True    # see `at_a_point`
                    return res, pinned
                points = {f.get_id(): f for f in self.fast.exact_points(model)}
                if points.keys() <= facts.keys():
                    break
                facts.update(points)
                res, solver = self._solve_once(cheap + box + list(facts.values()), out, False)
                if res != z3.sat:
                    if res == z3.unsat and not box:
                        return z3.unsat, solver
                    break
        return None

    def _solve_exact(self, constraints, out: PairAnalysis, live: bool, cheap: tuple | bool = False):
        """An exact query. With `cheap` (the cheap query, its solver and the query's inputs), where
        the cheap query read bitwise functions: at its models first, then whole on a share of the
        budget (`_solve_after_models`); otherwise as `_solve` asks it."""
        if not cheap:
            return self._solve(constraints, out, live=live)
        query, solver, inputs = cheap
        return (self._at_cheap_model(constraints, query, solver, inputs, out, live)
                or self._solve_after_models(constraints, out, live))

    def _solve_after_models(self, constraints, out: PairAnalysis, live: bool):
        """The exact query whole, after `_at_cheap_model` settled nothing: on a
        WHOLE_AFTER_MODELS_SHARE of the budget, without escalation (a resource limit still: the
        same verdict on every run). Unknown stays unknown, never clean."""
        with self._scaled(share=WHOLE_AFTER_MODELS_SHARE):
            res, solver = self._solve_once(constraints, out, live)
        if res == z3.unknown:
            solver.budget_note = (f"; 1/{WHOLE_AFTER_MODELS_SHARE} of it for bitwise operations or shifts "
                                  "that fixed inputs did not settle")
        return res, solver

    def _undecided(self, first, second, solver, out: PairAnalysis) -> None:
        if self._out_of_time():
            out.undecided.append(Undecided(first, second, OUT_OF_TIME))
            return
        out.undecided.append(Undecided(first, second, "the solver reached its limit "
                                       f"({self.timeout_ms / 1000:g} s budget, --timeout"
                                       f"{getattr(solver, 'budget_note', '')}): {solver.reason_unknown()}"))

    def _refuted(self, solver, assumptions, explain: bool = False, model=None) -> bool:
        """Is the solver's (satisfiable) query unsatisfiable once `assumptions` hold too? A
        question asked only to explain a finding gets a hundredth of the budget (the refutations
        are hard where loop state has floors, and a finding needs no explanation to stand), and
        one the solver cannot settle in it counts as no: the finding keeps verdict and severity.
        When the query's `model` already meets the assumptions, the answer is no without asking."""
        if model is not None and all(z3.is_true(model.eval(a, model_completion=True)) for a in assumptions):
            return False
        if at_a_point(solver):
            return False    # unsatisfiable at the point says nothing of the query
        solver.push()
        solver.add(*assumptions)
        if explain:
            solver.set("rlimit", max(self.rlimit // EXPLAIN_SHARE, 1))
        try:
            return solver.check() == z3.unsat
        finally:
            solver.pop()
            if explain:
                solver.set("rlimit", self.rlimit)
