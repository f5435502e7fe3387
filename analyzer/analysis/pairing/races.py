"""Pairs of access instances of two threads that touch the same bytes with nothing ordering them.

For every pair of access sites on one buffer (at least one a write, not both atomic) that can
share a barrier interval, one solver query per hazard kind asks for two distinct threads of one
block, their loop iterations, and an overlapping byte. Cheap tests run first: sites on different
buffers, read-only pairs, and pairs no barrier interval contains never reach the solver.

On demand (`PairAnalysis.barrier_scope`), the same queries run for the pairs that barriers keep
apart in execution but not in memory: concurrent when only the barriers ordering the pair's memory
space cut intervals, not concurrent when every barrier does. Kernels whose barriers order every
space they access (CUDA) never compute that view.

`PairChecker` is composed of one part per concern: pair_shapes.py (which pairs, in which interval
shapes), collision_constraints.py (the queries), solver_budget.py (asking them within budgets),
witnesses.py and collision_causes.py (a collision's witness and what it rests on),
barrier_passes.py (the passes on demand) and out_of_bounds.py (collisions only outside the bounds,
witnesses inside them); hazards.py holds what they find.
"""

from __future__ import annotations

import os
from collections import defaultdict

import z3

from analyzer import ir
from analyzer.analysis.barriers.barrier_passes import BarrierPasses
from analyzer.analysis.decision.queries import QueryCache
from analyzer.analysis.decision.solver import Encoder, without_loads
from analyzer.analysis.decision.solver_budget import ESCALATIONS, RLIMIT_PER_SECOND, SolverBudget
from analyzer.analysis.execution.concurrency import Cfg, cuts
from analyzer.analysis.execution.events import AccessEvent, Evaluation
from analyzer.analysis.execution.progress import ProgressFacts
from analyzer.analysis.execution.telescope import TelescopeFacts
from analyzer.analysis.execution.tile_order import TileOrderFacts
from analyzer.analysis.execution.unwritten import SAME_VALUE, UnwrittenFacts
from analyzer.analysis.pairing.collision_causes import CollisionCauses
from analyzer.analysis.pairing.collision_constraints import CollisionConstraints
from analyzer.analysis.pairing.disjoint import Disjointness
from analyzer.analysis.pairing.hazards import (KERNEL_LIMIT, NOT_SEARCHED, OUT_OF_TIME, RAW, WAR, WAW, Hazard, Outside,
                                               PairAnalysis, Undecided, Witness)
from analyzer.analysis.pairing.out_of_bounds import OutOfBounds
from analyzer.analysis.pairing.pair_kinds import first_instance, hazard_kind, stands_in_report
from analyzer.analysis.pairing.pair_shapes import DIFFERENT, PairShapes
from analyzer.analysis.stated.contracts import ContractFacts
from analyzer.analysis.witness.observed import Observation
from analyzer.analysis.witness.witnesses import WitnessSearch

# The budget of a query refined by buffer contracts, in queries' budgets: few pairs get one (a
# collision whose addresses read a contracted buffer), and one that runs out leaves a warning.
# Measured on `kernelrace llm` (32/8 heads, head_dim 128, three targets): contracts refute 17 of
# 26 warnings at 3; 10 refuted a few more but made the prefill kernels several times slower.
CONTRACT_BUDGET = 3
# A refinement still undecided is asked once more split in three, on the order of two columns its
# facts compare (c1 < c2, c1 == c2, c1 > c2; contracts.ContractFacts.last_split), each case on
# the same budget, for the first CONTRACT_SPLITS such pairs of a checker (a kernel's block pairs,
# its grid pairs). Tree attention's `lse` between blocks: the facts settle the cases of different
# batches at once, the tile order the case of one batch in a fifth of the budget, while the three
# together ran out of it.
CONTRACT_SPLITS = 2
# KERNELRACE_CROSS_CHECK=1: every pair the solver-free proof settles is also asked of the solver.
CROSS_CHECK = os.environ.get("KERNELRACE_CROSS_CHECK") == "1"


class PairChecker(PairShapes, CollisionConstraints, SolverBudget, WitnessSearch, CollisionCauses, BarrierPasses,
                  ProgressFacts, TelescopeFacts, TileOrderFacts, OutOfBounds):
    """Decides the pairs of one kernel: solver-free disjointness first, then the queries (see the
    module docstring for the parts). The state all parts share lives here."""

    observes = True     # undecided pairs are looked for in a run of one block (observed.py)

    def __init__(self, kernel: ir.Kernel, ev: Evaluation, cfg: Cfg, timeout_ms: int = 10_000,
                 strict: bool = False, cache: QueryCache | None = None, detail: bool = True,
                 contracts=(), dormant=(), lines: frozenset[int] | None = None):
        self.kernel = kernel
        self.lines = lines     # `run` checks only the pairs of accesses on these lines (None: all)
        # Buffer contracts in force (contracts.py), and those --no-contracts turned off, which only
        # name themselves in the notes of the findings they would refute.
        self.contract_facts = ContractFacts(kernel, ev, list(contracts)) if contracts else None
        self.dormant_facts = ContractFacts(kernel, ev, list(dormant)) if dormant else None
        self.unwritten = UnwrittenFacts(kernel, ev)
        # (a, b, kind or None, contracts, shapes): refuted only with contracts; the interval shapes
        # when the refutation was asked first, before whether they collide without (`_refuted_first`).
        self._by_contract: list = []
        self.contract_splits = CONTRACT_SPLITS   # left for this kernel
        self.cache = cache
        # Without detail a hazard's witness is the solver's first model, with no data-dependence
        # or warp classification: enough for an analysis that only asks whether a race remains.
        self.detail = detail
        self.strict = strict
        self.ev = ev
        self.cfg = cfg
        self.exact: Encoder | None = None     # built on the first query (`_encoders`)
        self.fast: Encoder | None = None
        self.enc: Encoder | None = None
        self._cache: dict = {}   # per-encoder constraint pieces shared by many pairs
        self.uniform = ev.uniform_conditions
        self.timeout_ms = timeout_ms
        self.rlimit = RLIMIT_PER_SECOND * max(timeout_ms, 100) // 1000
        # The clock is only a backstop, far above the resource budget, so that a loaded machine
        # does not change verdicts (at 5x, a CPU shared with two other jobs turned a query at the
        # edge of its budget into `unknown`).
        self.clock_ms = 30 * max(timeout_ms, 100)
        self.escalations = ESCALATIONS
        self.has_warp_barriers = any(b.scope == ir.WARP for b in cfg.barrier_node.values())
        self._views: dict[frozenset, dict] = {}   # cutting barriers -> intervals
        self.block_reach = self.view(cuts(cfg, cut_warp_barriers=False))
        self.warp_reach = (self.view(cuts(cfg, cut_warp_barriers=True)) if self.has_warp_barriers
                           else self.block_reach)
        self.loop_line = {lid: info.loop.span.line for lid, info in ev.loops.items()}
        self._hit: set[tuple[int, int]] = set()   # pairs the race pass found colliding or left undecided
        self.deadline: float | None = None         # the kernel's: the passes on demand stop there too
        self._buffers: list | None = None
        self.disjoint = Disjointness(kernel)
        # Whether queries state the in-bounds facts of declared buffers (see `rests_on_bounds`).
        self.bounded = True
        self._apart_pairs: list[tuple[AccessEvent, AccessEvent]] = []   # pairs found never to overlap
        # A run of the block, made at the race pass's first undecided pair (observed.py), and
        # the race pass's pair being checked.
        self._current: tuple[AccessEvent, AccessEvent] | None = None
        self.observation = (Observation(kernel, list(contracts), self.loop_line, ev) if self.observes
                            else None)

    def _encoders(self) -> None:
        if self.exact is None:
            self.exact = Encoder(self.kernel, self.kernel.warp_size, exact=True)
            self.fast = Encoder(self.kernel, self.kernel.warp_size, exact=False)
            self.enc = self.exact

    def run(self, deadline: float | None = None) -> PairAnalysis:
        self._encoders()
        self.deadline = deadline
        out = PairAnalysis(checker=self)
        for _, events in self._by_buffer():
            if self.lines is not None:
                events = [e for e in events if e.access.span.line in self.lines]
            self._check_buffer(events, out)
        return out

    def _check_buffer(self, events: list[AccessEvent], out: PairAnalysis) -> None:
        for i in range(len(events)):
            for a, b in self._partners(events, i):
                if self._out_of_time():
                    # Out of time: what is left of this buffer is undecided, never clean. One
                    # finding stands for them all (a long kernel has millions of pairs), beside
                    # the races among them a run of the block made before saw.
                    self._seen_among(events[i:], out)
                    n = len(events) - i
                    out.undecided.append(Undecided(a, b, KERNEL_LIMIT.format(n=n * (n + 1) // 2)))
                    self._hit.add((a.access.id, b.access.id))
                    return
                hazards, undecided = len(out.hazards), len(out.undecided)
                # A pair that collides only benignly (same value) still gets the passes on demand:
                # in another view (barrier scope) its instances may store different values.
                if self.check_pair(a, b, out) and (len(out.undecided) > undecided or any(
                        not h.benign for h in out.hazards[hazards:])):
                    self._hit.add((a.access.id, b.access.id))

    def check_pair(self, a: AccessEvent, b: AccessEvent, out: PairAnalysis) -> bool:
        """Query the pair's races; True when the solver found a collision or could not decide."""
        entries = self._entries(a, b, self.block_reach, self.warp_reach)
        if not entries:
            return False
        if self.observation is not None and self.observation.made and self._seen(a, b, out):
            return True     # seen colliding in the run made at an undecided pair: no queries
        self._current = (a, b)
        try:
            # Most pairs never touch the same bytes at all (measured on TVM's kernels: 9 in 10):
            # one query without interval shapes settles them, for the passes on demand too.
            found = len(out.hazards), len(out.undecided)
            hit = not self._never_overlap(a, b, out) and self._query_groups(a, b, entries, out, out.hazards,
                                                                              self.detail)
            if (len(out.hazards), len(out.undecided)) == found:
                # (A pair that collides only with same-value writes leaves nothing either.)
                self._outside_bounds(a, b, lambda o: self._query_groups(a, b, entries, o, o.hazards, self.detail), out)
            return hit
        finally:
            self._current = None

    def _query_groups(self, a, b, entries, out: PairAnalysis, sink: list, detail: bool,
                      expect_hazard: bool = False) -> bool:
        """Query the pair in its interval shapes, one query per order group. `expect_hazard`: the
        caller only asks whether the pair collides, and expects it does: each group's exact query
        is asked first (see `query`), and the first group that puts a hazard in `sink` ends it
        (the others could only add to what the caller ignores)."""
        # Interval starts only matter through the positions they give: one disjunct per distinct
        # (positions, order, warps) shape, however many barriers share it.
        groups: dict[str, dict] = defaultdict(dict)
        for pa, pb, warps, da, db in entries:
            who = first_instance(pa, pb, a, b)
            if who == "either" and a.access is b.access:
                # One site against itself: besides either thread's instance first, the two
                # instances may run in the same iterations, a tie neither order admits. Three
                # narrow queries, each easier than one that allows all three.
                groups["a"][(pa, pb, "a", warps, da, db)] = None
                groups["b"][(pa, pb, "b", warps, da, db)] = None
                groups["same"][(pa, pb, "tie", warps, da, db)] = None
            elif who == "either":
                # The iteration numbers decide which runs first: constrain each group accordingly.
                groups["a"][(pa, pb, "a", warps, da, db)] = None
                groups["b"][(pa, pb, "b", warps, da, db)] = None
            else:
                groups[who][(pa, pb, None, warps, da, db)] = None
        hit = False
        if len(groups) > 1 and not expect_hazard and self._refuted_first(
                a, b, None, [c for who in ("a", "b", "same") for c in groups.get(who, ())], out):
            # The contracts rule the collision out in every order group at once: one refinement,
            # not one per group.
            return False
        for who in ("a", "b", "same"):
            if who not in groups:
                continue
            first, second = (a, b) if who in ("a", "same") else (b, a)
            kind = hazard_kind(first.access, second.access)
            if kind is None:
                continue
            n = len(sink)
            hit |= self.query(kind, a, b, first, list(groups[who]), out, sink, detail, exact_first=expect_hazard)
            if expect_hazard and len(sink) > n:
                break
        return hit

    def _never_overlap(self, a: AccessEvent, b: AccessEvent, out: PairAnalysis) -> bool:
        """Cheap and once per pair: can two threads' instances of a and b touch the same bytes at
        all, in any iterations and whatever orders them? If not, no view of the barriers matters."""
        key = ("apart", a.access.id, b.access.id)
        hit = self._cache.get(key)
        if hit is None:
            # The solver-free proof first: it settles most pairs (see disjoint.py).
            proved = self.disjoint.apart(a, b)
            if proved:
                self._cache[("proved", a.access.id, b.access.id)] = True   # with no bounds at all
            if proved and CROSS_CHECK:
                self._cross_check(a, b, out)
            hit = self._cache[key] = proved or self._apart_by_solver(a, b, out)
            if hit:
                self._apart_pairs.append((a, b))
        return hit

    def _contract_facts(self, enc, a, b) -> list:
        """The facts of the contracts in force on the loads of the query just built in `enc` (of
        the pair a, b), but for loads only the stored values read."""
        cf = self.contract_facts
        return cf.facts(enc, cf.value_only(a, b)) if cf is not None else []

    def _solve_refined(self, constraints, out: PairAnalysis, live: bool = False, tactic: str = "preprocess",
                       verdict: bool = False):
        """`_solve` on `CONTRACT_BUDGET` times the budget (deterministic: a resource limit; no
        escalation: an undecided refinement keeps the collision, and asking again cost much and
        decided little on the corpus)."""
        with self._scaled(CONTRACT_BUDGET):
            return self._solve_once(constraints, out, live, tactic, verdict)

    def _refuted_first(self, a, b, kind, combos, out: PairAnalysis) -> bool:
        """Do the contracts in force on the pair's loads rule its collision out, asked before the
        usual order? Most pairs contracts apply to are ones they refute (on TVM's paged-KV kernels,
        nearly every global pair between blocks), and the usual order gets there only after the
        cheap query, the exact one and the refinement: here the refinement alone, as the usual
        order asks it (the segments a distinct-across contract leaves, the exhaustive cases), on
        its budget. Anything but unsat goes on in the usual order, which finds these answers
        remembered. Whether the pair collided without the contracts is asked only if `-v` names it
        (`rests_on_contracts`).

        Why as the usual order asks it: its terms now meet Z3's context before the cheap query's,
        and a first version that asked the facts alone (no other segments, no cases) moved two
        published configs' page kernels past their budget (docs/benchmarks.md)."""
        if self.contract_facts is None:
            return False
        exact, _, _ = self._constraints(self.exact, a, b, combos)
        facts = self._contract_facts(self.exact, a, b)
        cf = self.contract_facts
        used, same, split = cf.last_used, cf.last_same, cf.last_split
        self.enc = self.fast
        if not facts:
            return False
        refined = exact + facts + self._other_segments(exact, same, same, out)[0]
        res = self._solve_refined(refined, out, verdict=True)[0]
        if res == z3.unsat or (res == z3.unknown and self._by_cases(refined, split, out)):
            self._by_contract.append((a, b, kind, used, combos))
            return True
        return False

    def _by_cases(self, constraints, split, out: PairAnalysis) -> bool:
        """A refinement out of its budget, asked again in the three cases of the order of the two
        columns its facts compare (`ContractFacts.last_split`), while the kernel has such splits
        left: the cases cover every model, so all three unsat is the query unsat."""
        if split is None or self.contract_splits <= 0:
            return False
        self.contract_splits -= 1
        c1, c2 = split
        return all(self._solve_refined(constraints + [case], out, verdict=True)[0] == z3.unsat
                   for case in (c1 < c2, c1 == c2, c1 > c2))

    def _other_segments(self, exact: list, same, fast_same, out: PairAnalysis) -> tuple[list, list]:
        """([not same] in the exact encoder's terms, the same in the fast one's) when the exact
        query with both threads in one segment (`same`, ContractFacts.last_same) is unsatisfiable
        without the constraints that read memory (a subset of it: `solver.without_loads`); ([],
        []) otherwise. Then the collision needs two segments, where the contract's facts hold:
        in TVM's `_compact_kv_copy` at head_dim 80 or 96, two threads of one sequence copy
        different (head, column) cells, which the slice shows at once, while the whole query, with
        each thread's loaded slot split into page and offset, ran out of its budget."""
        if same is None or fast_same is None:
            return [], []
        if self._solve_once(without_loads(self.exact, exact) + [same], out, False, verdict=True)[0] != z3.unsat:
            return [], []
        return [z3.Not(same)], [z3.Not(fast_same)]

    def rests_on_contracts(self, out: PairAnalysis) -> list[str]:
        """The pairs found never to collide only thanks to buffer contracts (`-v`): each collided
        without them (contracts only refine a collision; one refuted first is asked that now, and
        left out unless it does)."""
        said = {}
        for a, b, kind, used, combos in self._by_contract:
            if combos is not None and (self._out_of_time() or self._solve(
                    self._constraints(self.exact, a, b, combos)[0], out)[0] != z3.sat):
                continue
            buf = self.kernel.buffers.get(a.access.buffer)
            name = (buf.display or buf.name) if buf is not None else a.access.buffer
            text = (f"the {a.access.kind} at line {a.access.span.line} and the {b.access.kind} at line "
                    f"{b.access.span.line} on {name} never collide only because of the contract"
                    f"{'s' if len(used) > 1 else ''} {', '.join(used)}")
            said[text] = None
        return list(said)

    def _cross_check(self, a: AccessEvent, b: AccessEvent, out: PairAnalysis) -> None:
        """A fast path is a proof or nothing: the exact query must agree that the pair never
        overlaps (KERNELRACE_CROSS_CHECK=1; the tests run it over fixtures and random kernels)."""
        self._encoders()
        res, solver = self._solve(self._any_overlap(self.exact, a, b), out, live=True)
        if res == z3.sat:
            raise AssertionError(f"disjoint.py proved the {a.access.kind} at {a.access.span} and the "
                                 f"{b.access.kind} at {b.access.span} apart, but the solver finds them "
                                 f"overlapping: {solver.model()}")

    def _apart_by_solver(self, a: AccessEvent, b: AccessEvent, out: PairAnalysis) -> bool:
        self._encoders()
        res, _ = self._solve(self._any_overlap(self.fast, a, b), out, verdict=True)
        return res == z3.unsat

    def query(self, kind, a, b, first, combos, out: PairAnalysis, sink: list, detail: bool,
              exact_first: bool = False) -> bool:
        """Ask for a collision; a hazard goes to `sink`. True when the accesses collide (benign
        same-value writes included) or the solver could not decide. `exact_first`: see below."""
        second = b if first is a else a
        # An atomic's stored value is made from the element's old value: never "the same value".
        valued = (kind == WAW and a.value is not None and b.value is not None
                  and not (a.access.atomic or b.access.atomic))
        benign = False
        exact = fast = None
        expected = exact_first and not valued and not detail
        if expected:
            # A caller that expects a collision (the redundant-barrier pass: most pairs a barrier
            # orders collide without it) asks the exact query first: a collision there is one the
            # usual order reaches too (the cheap query over-approximates it), without the cheap
            # query. Any other answer is asked again in the usual order, for the usual verdict
            # (on its budget alone: an escalation is the usual order's to spend; a query whose
            # cheap form would have run out of budget is then found colliding, not undecided:
            # needed either way, never reported).
            exact, alts, (off1, off2) = self._constraints(self.exact, a, b, combos)
            res, solver = self._solve_once(exact, out, False)
            if res != z3.sat:
                exact = None
        if exact is None:
            # Cheap first: products read as uninterpreted functions; only a hit is re-checked exactly.
            fast, _, _ = self._constraints(self.fast, a, b, combos)
            if not expected and self._refuted_first(a, b, kind, combos, out):
                return False
            # Its model is read only where it read bitwise functions (`_solve_exact`).
            bitwise = self.fast.read_bitwise()
            res, fast_solver = self._solve(fast, out, verdict=not bitwise)
            cheap = fast
            if res == z3.unsat:
                return False
            if res == z3.unknown:
                # The over-approximation is already out of budget; the exact query would be harder.
                if not (sink is out.hazards and self._seen_instead(a, b, out)):
                    self._undecided(first, second, fast_solver, out)
                return True
            if valued:
                # Same value stored by both threads? Then the pair is benign, and without --strict
                # it needs no exact query at all.
                self.enc = self.fast
                differ = fast + [self._differ(a, b)]
                res, differ_solver = self._solve(differ, out, verdict=not bitwise)
                if res == z3.sat:
                    cheap, fast_solver = differ, differ_solver
                if res == z3.unsat:
                    benign = True
                    if not self.strict:
                        return True
                elif res == z3.unknown:
                    # Out of budget with the values; without them the query is no easier to decide.
                    self._undecided(first, second, differ_solver, out)
                    return True
            exact, alts, (off1, off2) = self._constraints(self.exact, a, b, combos)
            if valued and not benign:
                exact.append(self._differ(a, b))
            # Where the cheap query read bitwise functions, at its models first (solver_budget.py).
            res, solver = self._solve_exact(exact, out, detail, bitwise and (cheap, fast_solver, self._witness_vars(a, b)))
            if res == z3.unsat and valued and not benign:
                # They collide only where they store equal values: benign.
                benign = True
                if not self.strict:
                    return True
                exact.pop()
                res, solver = self._solve(exact, out, live=detail)
        # Contract facts are built only now: new terms change Z3's search, and a query at the edge
        # of its budget must get the verdict it gets without contracts.
        query_loads = self.exact.last_loads     # before any refinement builds terms of its own
        exact_facts = self._contract_facts(self.exact, a, b) if res == z3.sat else []
        refined_by: list = []     # the refinements the final model satisfies (for the race's condition)
        split = self.contract_facts.last_split if exact_facts else None
        # The facts of the contracts --no-contracts turned off, for this query's loads (to name them).
        dormant = (self.dormant_facts.facts(self.exact, self.dormant_facts.value_only(a, b))
                   if self.dormant_facts is not None and detail and res == z3.sat else [])
        dormant_used = self.dormant_facts.last_used if dormant else ()
        if res == z3.sat and exact_facts:
            # Contracts only refine a collision the exact query found (few pairs), and a query too
            # hard with them keeps the collision: never unknown because of a contract. The
            # over-approximation with the facts first: easier, and unsat there is unsat here.
            used = self.contract_facts.last_used
            same = self.contract_facts.last_same
            if fast is None:    # asked exactly first: the cheap query, for its facts, only now
                fast, _, _ = self._constraints(self.fast, a, b, combos)
                self.enc = self.exact
            fast_facts = self._contract_facts(self.fast, a, b)
            # A distinct-across contract says nothing of two threads in one segment: when the index
            # arithmetic alone rules that case out, the refinements ask only for different segments.
            apart = self._other_segments(exact, same, self.contract_facts.last_same, out)
            exact_facts = exact_facts + apart[0]
            with_facts = None
            if expected:
                # Expecting the collision to stand: the exact refinement first; anything but a
                # collision is asked again in the usual order (this query is then remembered).
                with_facts, solver_facts = self._solve_refined(exact + exact_facts, out, live=detail)
                if with_facts != z3.sat:
                    with_facts = None
            if with_facts is None:
                if fast_facts and self._solve_refined(fast + fast_facts + apart[1], out, verdict=True)[0] == z3.unsat:
                    self._by_contract.append((a, b, kind, self.contract_facts.last_used, None))
                    return False
                with_facts, solver_facts = self._solve_refined(exact + exact_facts, out, live=detail)
            if with_facts == z3.unknown and self._by_cases(exact + exact_facts, split, out):
                with_facts = z3.unsat
            if with_facts == z3.unsat:
                self._by_contract.append((a, b, kind, used, None))
                return False
            if with_facts == z3.sat:
                solver = solver_facts
                refined_by = list(exact_facts)
        # A persistent walk's prefix sums in closed form (telescope.py) refine a collision as a
        # contract does: unsat rules it out; too hard keeps it (and its verdict without them).
        closed = [f for walk, prefix, batch in self.exact.closed_forms
                  for f in self._prefix_closed_form(self.exact, walk, prefix, batch)] if res == z3.sat else []
        if closed:
            # Their divisions and remainders named (purify-arith): decided in milliseconds there,
            # out of 30x the budget without (TVM's MLA prefill at head_dim 256 and 512).
            refined, solver_closed = self._solve_refined(exact + exact_facts + closed, out, live=detail,
                                                         tactic="purify")
            if refined == z3.unsat:
                return False
            if refined == z3.sat:
                solver = solver_closed
                refined_by = list(exact_facts) + closed
        # Loads of one element no write reaches read one value (unwritten.py): a refinement too.
        if res == z3.sat:
            kept = self.unwritten.refine_collision(self, exact, refined_by, query_loads, a, b, solver, out,
                                                   detail, values=valued and not benign)
            if kept is None:
                return False
            if kept is SAME_VALUE:
                if not self.strict:
                    return True
                benign, _ = True, exact.pop()    # (the values' inequality) reported as benign
                res, solver = self._solve(exact + refined_by, out, live=detail)
            else:
                solver, refined_by = kept
        if res == z3.unknown:
            if not (sink is out.hazards and self._seen_instead(a, b, out)):
                self._undecided(first, second, solver, out)
            return True
        if res == z3.unsat:
            return False
        self.enc = self.exact
        model = solver.model()
        data_dependent, warps, loop_state, or_data, block_state = (), frozenset(), (), (), ()
        replay = None
        # A race another one already stands for in the report gets none of the details below.
        shadowed = detail and sink is out.hazards and stands_in_report(kind, first, second, sink)
        outside = None
        if detail and not shadowed and self._detail_spent(second, sink):
            replay = NOT_SEARCHED   # reported, as a warning: see `detail_cap`
        elif detail and not shadowed:
            # A race's data dependence decides its severity; a barrier-scope finding is a warning
            # whatever it rests on, so there the question only explains, on a smaller budget.
            data_dependent = self._data_dependent(solver, model, explain=sink is not out.hazards)
            if not data_dependent:
                loop_state, or_data = self._loop_state_repeats(solver, model)
            block_state = self._block_state(solver, model)
            solver.push()    # the readability wishes go if the witness must be asked for again
            model, warps = self._readable(solver, model, a, b)
            space = a.access.space if sink is not out.hazards else None
            model, replay = self._replayed(solver, model, a, b, off1, off2, space, out)
            if self.bounded:
                # Every access the two threads execute stays in bounds too, not only these two.
                model, replay, warps, executed, outside = self._kept_in_bounds(
                    solver, model, replay, warps, a, b, off1, off2, space, out)
                refined_by += executed
        # One more query, on the full budget: do the contracts turned off rule the collision out?
        would = dormant_used if dormant and not shadowed and self._refuted(solver, dormant, False, model) else ()
        warp_sync = all(c[3] == DIFFERENT for alt, c in zip(alts, combos)
                        if z3.is_true(model.eval(alt, model_completion=True)))
        wit = self._witness(model, a, b, off1, off2)
        if first is b:
            wit.first, wit.second = wit.second, wit.first
            if wit.second_block is not None:    # a grid witness (grid.py): each thread keeps its block
                wit.block, wit.second_block = wit.second_block, wit.block
        # A shadowed race keeps its query: the finding that stands for it says the condition of both.
        query = self._condition_query(exact, refined_by, model) if detail else None
        if not self.bounded:
            outside = self._outside_at(model, [(a, 1), (b, 2)]) or Outside(a, self._thread(model, 1), 0,
                                                                        "its declared shape", 1)
        if outside is not None:
            outside.first = (outside.k == 1) == (first is a)
        sink.append(Hazard(kind, first, second, wit, benign, warp_sync, warps, data_dependent, loop_state, or_data,
                           replay_failure=replay, block_state=block_state, contracts=would, query=query,
                           outside=outside))
        return True

    def _seen_instead(self, a: AccessEvent, b: AccessEvent, out: PairAnalysis) -> bool:
        """The race pass's pair the solver left undecided: seen colliding in a run of the block (made
        now, once per kernel; observed.py)? Then it is that race, not unknown. (Not between blocks.)"""
        if self.observation is None or not self.bounded:
            return False    # (a run stays in bounds: it shows nothing of a collision outside them)
        self.observation.make()
        return self._seen(a, b, out)

    def _escalation_spared(self) -> bool:
        """Before a query out of budget is asked again with more: is the race pass's pair it
        belongs to seen colliding in the run? Then the more is spent for nothing."""
        if self.observation is None or self._current is None:
            return False
        self.observation.make()
        return self.observation.race(*self._current) is not None

    def _seen_among(self, events: list[AccessEvent], out: PairAnalysis) -> None:
        """The races between `events` the run saw, when one was made (not for this: time is up)."""
        if self.observation is None or not self.observation.made:
            return
        left = {e.access.id: e for e in events}
        for x, y in list(self.observation.races):
            if x in left and y in left and (x, y) not in self._hit and (y, x) not in self._hit:
                if self._seen(left[x], left[y], out):
                    self._hit.add((x, y))

    def _seen(self, a: AccessEvent, b: AccessEvent, out: PairAnalysis) -> bool:
        hazard = self.observation.seen(a, b)
        if hazard is not None:
            out.hazards.append(hazard)
        return hazard is not None

    def _block_state(self, solver, model) -> tuple[tuple[str, int], ...]:
        """Loop state two blocks must share for the collision (grid.py); none within a block."""
        return ()


def analyse_pairs(kernel: ir.Kernel, ev: Evaluation, cfg: Cfg, timeout_ms: int = 10_000,
                  strict: bool = False, deadline: float | None = None, cache: QueryCache | None = None,
                  detail: bool = True, contracts=(), dormant=(), lines: frozenset[int] | None = None) -> PairAnalysis:
    """Every pair of accesses two threads may run concurrently, checked; `deadline` (a
    time.monotonic() value) bounds the kernel's wall-clock time, after which pairs are undecided.
    Analyses sharing `cache` never ask the solver the same query twice; without `detail`, witnesses
    are the solver's first and hazards are not classified (data dependence, warps). `contracts`: the
    (contract, buffer) pairs in force (contracts.in_force); `dormant`: those --no-contracts turned off;
    `lines`: only the pairs of accesses on these source lines (a fix hint's re-analysis), None for all."""
    return PairChecker(kernel, ev, cfg, timeout_ms, strict, cache=cache, detail=detail, contracts=contracts,
                       dormant=dormant, lines=lines).run(deadline)


__all__ = ["Hazard", "Undecided", "Witness", "analyse_pairs", "WAR", "RAW", "WAW", "OUT_OF_TIME"]
