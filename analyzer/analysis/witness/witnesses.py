"""A hazard's witness: read off the solver's model, made easy to read (threads in two warps, block 0,
small parameters; which warp placements collide), and replayed on concrete values (replay.py),
with other models asked for when it does not replay.

Split from races.py: what happens once the exact query is satisfiable, besides asking what the
collision rests on (collision_causes.py).
"""

from __future__ import annotations

from functools import cached_property

import z3

from analyzer import ir
from analyzer.analysis.decision.solver import DIMS, as_int
from analyzer.analysis.execution.events import AccessEvent
from analyzer.analysis.pairing.hazards import NOT_SEARCHED, PairAnalysis, Thread, Witness
from analyzer.analysis.witness.progress import progress_steps
from analyzer.analysis.witness.replay import Launch, Side, access_lines, check_witness
from analyzer.analysis.witness.walk_plan import MAX_ITERATIONS, guard_params, plan_constraints, plan_of, spans, walk_start
from analyzer.analysis.witness.walk_witness import programs, walk_constraints

# Models asked for before a finding is reported with a witness that does not replay.
REPLAY_ATTEMPTS = 4
# The least resource budget of the first question a persistent kernel's witness rests on (see
# `WitnessSearch._walk_models`): about 5 s of Z3 work. On TVM's prefill kernels, at the default
# one-second budget, it was undecided for one finding in three; MLA prefill's stay undecided at 10 s.
WALK_RLIMIT = 15_000_000
# The resource budget of each of a plan's questions (walk_plan.py): about a sixth of a second of
# Z3 work. On TVM's prefill and tree attention kernels (head_dim 64 to 512) the plans that have a
# model find it in 0.02 to 0.08 s; MLA prefill's, which have none (each tile is one row there, so
# a row never comes back), are refuted in milliseconds. What stays undecided (on Vulkan at
# head_dim 512, one of a site's two orders, whose other order's plan has a model) costs this.
PLAN_RLIMIT = 500_000
# Loops whose progress is wished for one at a time when not all can move (`_moving_loops`): each such
# wish the model does not meet already is one more question.
PROGRESS_ALONE = 4
# What replay.py says of a thread that runs too long (a loop that never ends with these parameters).
LOOPS_FOREVER = "statements in one thread"
# Uninterpreted values the symbolic executor keeps per thread (the solver names them `...@t1`).
PER_THREAD = ("opaque", "undef:", "ticket", "gticket", "aload")


def _blocks_and_iterations(x, enc) -> bool:
    return any(x.eq(v) for v in list(enc.bid.values()) + list(enc.bid2.values()) + list(enc.iter_vars.values()))


def _not_threads(x, enc) -> bool:
    return not any(x.eq(v) for k in (1, 2) for v in enc.tid[k].values())


# Which of a witness's values stay as they are when the walk's state is asked to be what the walk
# computes (`WitnessSearch._walk_models`): all, with the walk state the query reads (the index
# map's loads are then at known places: easy), then all but that state, all but the threads too,
# and blocks and iterations only (the threads and parameters an index map can serve may differ).
_PINS = ((True, lambda x, enc: True), (False, lambda x, enc: True), (False, _not_threads),
         (False, _blocks_and_iterations))


class WitnessSearch:
    """Part of `races.PairChecker`: models of the exact encoder (`self.enc` when these run). Uses
    the checker's `kernel`, `exact`, `loop_line`, `rlimit` and `clock_ms`."""

    # Collisions per buffer whose witness is searched, made readable and replayed (None: all);
    # past it a collision is reported unsearched, a warning (GridChecker's).
    detail_cap: int | None = None

    def _detail_spent(self, second: AccessEvent, sink: list) -> bool:
        """Have `detail_cap` collisions on this buffer had their witness searched already?"""
        if self.detail_cap is None:
            return False
        buf = second.access.buffer
        return sum(1 for h in sink if h.second.access.buffer == buf and h.replay_failure != NOT_SEARCHED
                   and not h.benign) >= self.detail_cap

    def _replayed(self, solver, model, a, b, off1, off2, space, out: PairAnalysis):
        """A model whose witness replays (see replay.py), and None; or, when none is found within
        REPLAY_ATTEMPTS models, the first model and why its witness does not replay. Each failed
        model is blocked (its threads, block, iterations and launch) before the solver is asked
        again. `solver` carries one pushed scope (the readability wishes), popped here."""
        reason = self._replay_failure(model, a, b, off1, off2, space)
        solver.pop()
        found = model if reason is None else self._search(solver, model, reason, a, b, off1, off2, space, out)
        # A site against itself collides in two orders, and the report keeps one finding per rule
        # and pair of lines, the first whose witness replays (pipeline._dedupe): once one order's
        # witness replays, the other's plans (`_plan_models`: seconds, when none has a model)
        # would buy nothing.
        if found is not None and a.access.id == b.access.id:
            self.__dict__.setdefault("_replayed_sites", set()).add((a.access.id, space, self.enc.grid))
        return (found, None) if found is not None else (model, reason)

    def _search(self, solver, model, reason, a, b, off1, off2, space, out: PairAnalysis):
        """A model whose witness replays, after `model`'s did not (for `reason`), or None."""
        # Between blocks only: within one block the two threads stand in two iterations of the
        # walk, c tiles apart, and on TVM's kernels no index map of walk_witness.py's few batches
        # brings their rows together (its first question was unsat for all 20 such findings of the
        # corpus, at a second or two each); walk_plan.py's plans can.
        walk = self._walk_constraints() if self.enc.grid else None
        if walk is not None and not self._out_of_time():
            found = self._walk_models(solver, walk, a, b, off1, off2, space, out)
            if found is not None:
                return found
        site = (a.access.id, space, self.enc.grid)
        if site not in self.__dict__.get("_replayed_sites", ()) and not self._out_of_time():
            found = self._plan_models(solver, model, a, b, off1, off2, space, out)
            if found is not None:
                return found
        return self._other_models(solver, model, reason, a, b, off1, off2, space, out)

    def _walk_models(self, solver, walk, a, b, off1, off2, space, out: PairAnalysis):
        """A model whose witness replays, of a query reading a persistent kernel's walk state
        (walk_witness.py), or None. The state is asked to keep the walk's invariant with m the
        iteration number (cheap: the collision's witness then has threads, blocks and iterations
        the walk can bring together); then, with those fixed, to be what the walk computes from the
        model's loads (the full statement, too hard for the query at large, is small once the
        witness is fixed; with fewer of its values fixed when that has no model). Each witness
        that still does not replay is blocked, as in `_other_models`."""
        full, light = walk
        solver.push()
        try:
            solver.add(*light)
            for _ in range(REPLAY_ATTEMPTS):
                out.queries += 1
                solver.set("rlimit", max(self.rlimit, WALK_RLIMIT))
                solver.set("timeout", self._clock(self.clock_ms))    # the kernel's time limit holds
                if self._out_of_time() or solver.check() != z3.sat:
                    break
                solver.set("rlimit", max(self.rlimit // 10, 200_000))   # the pinned questions are small
                model = solver.model()
                if self._replay_failure(model, a, b, off1, off2, space) is None:
                    return model
                seen = [x for x in self._witness_vars(a, b) if not z3.is_int_value(x)]
                values = [model.eval(x, model_completion=True) for x in seen]
                state = [x == model.eval(x, model_completion=True) for x in self.enc.last_state]
                for with_state, keep in _PINS:
                    solver.push()
                    solver.add(*[x == v for x, v in zip(seen, values) if keep(x, self.enc)], *full)
                    if with_state:
                        solver.add(*state)
                    out.queries += 1
                    if solver.check() == z3.sat:
                        model = solver.model()
                        if self._replay_failure(model, a, b, off1, off2, space) is None:
                            solver.pop()
                            return model
                    solver.pop()
                solver.add(z3.Or(*[x != v for x, v in zip(seen, values)]))
        finally:
            solver.pop()
            solver.set("rlimit", max(self.rlimit // 10, 200_000))   # as `_readable` left it
        return None

    def _plan_models(self, solver, model, a, b, off1, off2, space, out: PairAnalysis):
        """A model whose witness replays, with `model`'s threads, blocks and iterations and a
        persistent kernel's walk unrolled on a concrete plan of batches (walk_plan.py), for a few
        spans of batches; or None."""
        enc = self.enc
        for prog in self._walk_programs_of():
            walk = prog.walk
            # Each side's (block's) iteration of L and first tile.
            at = {k: tuple(model.eval(x, model_completion=True) for x in
                           (enc.iteration(k, walk.loop.id), as_int(walk_start(enc, walk, k))))
                  for k, e in ((1, a), (2, b)) if walk.loop.id in e.loops}
            if not at or not all(z3.is_int_value(x) for v in at.values() for x in v):
                continue
            at = {k: (i.as_long(), start.as_long()) for k, (i, start) in at.items()}
            if max(i for i, _ in at.values()) >= MAX_ITERATIONS:
                continue
            tiles = [start + walk.step * i for i, start in at.values()]
            low = min(tiles)
            free = guard_params(prog)
            seen = [x for x in self._witness_vars(a, b) if not z3.is_int_value(x)
                    and not (x.decl().name() in free and x.num_args() == 0)]
            pins = [x == model.eval(x, model_completion=True) for x in seen]
            for span in spans(max(tiles) - low):
                if self._out_of_time():
                    return None
                if enc.grid:
                    plans = {k: plan_of(prog.b0, start, walk.step, i + 1, low, span) for k, (i, start) in at.items()}
                else:
                    i, start = max(at.values())
                    plans = {1: plan_of(prog.b0, start, walk.step, i + 1, low, span)}
                cs = plan_constraints(enc, prog, plans)
                if cs is None:
                    break
                solver.push()
                try:
                    solver.add(*pins, *cs)
                    solver.set("rlimit", PLAN_RLIMIT)
                    solver.set("timeout", self._clock(self.clock_ms))
                    out.queries += 1
                    res = solver.check()
                    if res == z3.unknown:
                        return None     # a longer plan is no easier
                    if res == z3.sat:
                        found = solver.model()
                        if self._replay_failure(found, a, b, off1, off2, space) is None:
                            return found
                finally:
                    solver.pop()
                    solver.set("rlimit", max(self.rlimit // 10, 200_000))   # as `_readable` left it
        return None

    def _other_models(self, solver, model, reason, a, b, off1, off2, space, out: PairAnalysis):
        """`model` if its witness replays (`reason`: why it does not, when known), else the first of
        up to REPLAY_ATTEMPTS - 1 more models whose witness does, each failed one blocked before
        the solver is asked again; None when there is none."""
        if reason is None:
            reason = self._replay_failure(model, a, b, off1, off2, space)
            if reason is None:
                return model
        solver.push()    # the blocked models go too: the solver may be asked this query again
        try:
            for _ in range(REPLAY_ATTEMPTS - 1):
                if self._out_of_time():
                    break
                seen = [x for x in self._witness_vars(a, b) if not z3.is_int_value(x)]
                params = [x for n, x in sorted(self.enc.shared.items())
                          if n in self.kernel.params and not z3.is_int_value(x)]
                weight = self._iteration_weight(a, b) if LOOPS_FOREVER in (reason or "") else None
                now = model.eval(weight, model_completion=True) if weight is not None else None
                if now is not None and z3.is_int_value(now) and now.as_long() > 0:
                    # A loop that never ends with these parameters, before the iterations the model
                    # chose (the query asks each access's iterations, not that the ones before end):
                    # earlier iterations, where the threads may meet before it.
                    solver.push()
                    solver.add(weight < now)
                    out.queries += 1
                    early = solver.model() if solver.check() == z3.sat else None
                    solver.pop()
                    if early is not None:
                        model = early
                        reason = self._replay_failure(model, a, b, off1, off2, space)
                        if reason is None:
                            return model
                        continue
                if LOOPS_FOREVER in (reason or "") and params:
                    # A loop that never ends with these parameters: other threads would not help,
                    # other values of every parameter may (else of at least one).
                    solver.push()
                    solver.add(*[x != model.eval(x, model_completion=True) for x in params])
                    out.queries += 1
                    if solver.check() == z3.sat:
                        model = solver.model()
                        solver.pop()
                        reason = self._replay_failure(model, a, b, off1, off2, space)
                        if reason is None:
                            return model
                        continue
                    solver.pop()
                    seen = params
                solver.add(z3.Or(*[x != model.eval(x, model_completion=True) for x in seen]))
                out.queries += 1
                if not seen or solver.check() != z3.sat:
                    break
                model = solver.model()
                reason = self._replay_failure(model, a, b, off1, off2, space)
                if reason is None:
                    return model
        finally:
            solver.pop()
        return None

    def _iteration_weight(self, a: AccessEvent, b: AccessEvent):
        """What replaying the two threads up to their iterations costs, at least (an outer loop's
        iteration weighs 2**(loops inside it)); None when neither access is in a loop."""
        enc = self.enc
        steps = [enc.iteration(k, l) * 2 ** min(len(e.loops) - 1 - j, 30)
                 for k, e in ((1, a), (2, b)) for j, l in enumerate(e.loops)]
        return z3.Sum(steps) if steps else None

    def _witness_vars(self, a: AccessEvent, b: AccessEvent) -> list:
        enc = self.enc
        xs = [enc.tid[k][d] for k in (1, 2) for d in DIMS] + [enc.bid[d] for d in DIMS]
        if enc.grid:
            xs += [enc.bid2[d] for d in DIMS]
        xs += [enc.bdim[d] for d in DIMS] + [enc.gdim[d] for d in DIMS]
        xs += [enc.iteration(1, l) for l in a.loops] + [enc.iteration(2, l) for l in b.loops]
        xs += [v for n, v in sorted(enc.shared.items()) if n in self.kernel.params]
        return xs

    def _walk_programs_of(self) -> list:
        """The walks whose size and guard walk_witness.py reads (none before a query reads walk state)."""
        progs = self.__dict__.get("_walk_programs")
        if progs is None:
            walks = getattr(self, "_walks", None)
            if walks is None:     # set by the tile order facts (tile_order.py) of a query reading walk state
                return []
            progs = self._walk_programs = programs(self.kernel, [w for w, _ in walks])
        return progs

    def _walk_constraints(self):
        """walk_witness.py's constraints for the last query's walk state (None without a walk)."""
        progs = self._walk_programs_of()
        return walk_constraints(self.enc, progs, self.enc.last_state) if progs else None

    def _replay_failure(self, model, a: AccessEvent, b: AccessEvent, off1, off2, space) -> str | None:
        enc = self.enc
        val = lambda e: enc.value_of(model, e)  # noqa: E731
        params = dict(self.kernel.bindings)
        for name in self.kernel.params:
            if name not in params:
                params[name] = val(enc.shared.get(name, z3.Int(name)))
        launch = Launch(params, {d: val(enc.bdim[d]) for d in DIMS}, {d: val(enc.gdim[d]) for d in DIMS},
                        self.kernel.warp_size)

        memo: dict = {}

        def unknown(name: str, args: tuple, k: int) -> int:
            if k and name.startswith(PER_THREAD):
                name = f"{name}@t{k}"
            elif k and enc.grid and name.startswith("load") and name not in enc.common_loads:
                name = f"{name}@b{k}"     # per block in a grid query (solver.Encoder)
            hit = memo.get((name, args))
            if hit is None:
                if not args:
                    hit = val(z3.Int(name))
                else:
                    f = enc.funcs.get((name, len(args)))
                    hit = val(f(*map(z3.IntVal, args))) if f is not None else 0
                memo[(name, args)] = hit
            return hit

        sides = [Side(tuple(val(enc.tid[k][d]) for d in DIMS), e.access.id,
                      {l: val(enc.iteration(k, l)) for l in e.loops}, val(enc.warp(k)))
                 for k, e in ((1, a), (2, b))]
        o1, o2 = val(off1), val(off2)
        return check_witness(self.kernel, launch, unknown, tuple(val(enc.bid[d]) for d in DIMS),
                             sides[0], sides[1], max(o1, o2), space,
                             tuple(val(enc.bid2[d]) for d in DIMS) if enc.grid else None, self._read_only,
                             self._access_lines)

    @cached_property
    def _read_only(self) -> dict:
        """The kernel's read-only buffers for every replay (a walk over the whole kernel each)."""
        return ir.read_only_loads(self.kernel)

    @cached_property
    def _access_lines(self) -> dict[int, int]:
        """Access id -> line, for the replays' failure messages (a walk over the whole kernel)."""
        return access_lines(self.kernel)

    def _readable(self, solver, model, a: AccessEvent, b: AccessEvent):
        """Prefer a witness that is easy to read: threads in two warps, block 0, early iterations,
        small parameters. Also which warp placements can collide. A wish the model already meets
        costs no query."""
        enc = self.exact

        def holds(cs) -> bool:
            return all(z3.is_true(model.eval(c, model_completion=True)) for c in cs)

        warps = set()
        # Which warp placements collide only explains the finding (a note): asked on the wishes'
        # tenth of the budget below, not on the query's whole (or escalated) budget, which these two
        # questions spent again on every collision (the largest share of MNN's Winograd
        # convolution's time, a fifth of SGEMM's double-buffering kernel's). A placement not
        # settled in it leaves no "only ..." note: the note would claim what was not shown.
        solver.set("timeout", self._clock(self.clock_ms))
        solver.set("rlimit", max(self.rlimit // 10, 200_000))
        settled = True
        for same in (True, False):
            c = enc.warp(1) == enc.warp(2) if same else enc.warp(1) != enc.warp(2)
            if holds([c]):
                warps.add("same" if same else "different")
                continue
            solver.push()
            solver.add(c)
            res = solver.check()
            if res == z3.sat:
                warps.add("same" if same else "different")
                if not same:    # two warps: the first wish below, met
                    model = solver.model()
                    solver.pop()
                    solver.add(c)
                    continue
            settled = settled and res == z3.unsat
            solver.pop()
        if not settled:
            warps = set()
        # Operations C defines, first: a run that divides by zero replays nowhere (`a[i % rows]`
        # with `rows = 0` was a witness "not validated" beside a race `rows = 3` shows). Then loops
        # that end, which a replay must leave (progress.py).
        progress = self._moving_loops(enc)
        wishes = [[c for c in enc.defined.values() if z3.is_false(model.eval(c, model_completion=True))],
                  *progress, [enc.warp(1) != enc.warp(2)], [enc.bid[d] == 0 for d in DIMS]]
        if enc.grid:
            wishes.append([enc.bid2[d] <= 1 for d in DIMS])    # neighbouring blocks
        small = [v for n, v in sorted(enc.shared.items()) if not n.startswith(("sync.", "load", "opaque"))
                 and z3.is_int(v)]
        # Early iterations first: a witness is replayed (and read) by running both threads up to
        # it, and reaching iteration i of a loop runs every iteration of the loops inside it
        # before: an outer loop's iteration weighs 2**(loops inside it), the least a replay costs.
        iters = list(enc.iter_vars.values())
        weight = self._iteration_weight(a, b)
        iteration_wishes = ([[weight <= 2], [weight <= 64]] if weight is not None else []) + \
            [[v <= 1 for v in iters], [v <= 3 for v in iters]]
        wishes += iteration_wishes
        wishes.append([z3.And(v >= 0, v <= 16) for v in small])
        wishes.append([z3.And(v >= 0, v <= 4096) for v in small])
        # Each thread's own values (atomic results, ...) near 0: counters that start small.
        own = list(enc.own_values.values())
        wishes.append([z3.And(v >= -2, v <= 2) for v in own])
        wishes.append([z3.And(v >= -16, v <= 16) for v in own])
        # A tenth of the budget, in solver work only (set above): the clock stays the query's
        # backstop. (The solver goes on to the checks that classify the finding, with these
        # limits: a 3 s clock here made a loaded machine turn a data-dependent warning into an error.)
        # The wishes a replay needs (C's defined operations, early iterations: a replay runs both
        # threads up to the witness) are asked even after another wish ran out of budget.
        replay = {id(w) for w in [wishes[0], *progress, *iteration_wishes]}
        spent = False
        for wish in wishes:
            if not wish or (spent and id(wish) not in replay):
                continue
            if holds(wish):
                solver.add(*wish)
                continue
            solver.push()
            solver.add(*wish)
            res = solver.check()
            if res == z3.sat:
                model = solver.model()
                solver.pop()
                solver.add(*wish)
            else:
                solver.pop()
                if res == z3.unknown:
                    # Past its budget with this wish, the solver rarely meets the narrower ones
                    # after it, and each costs a budget: the witness stays as readable as it is
                    # (ncnn's gemm_sg, ~20 collisions between workgroups: a third of its time),
                    # but for the wishes a replay needs.
                    spent = True
        return model, frozenset(warps)

    def _moving_loops(self, enc) -> list[list]:
        """Wishes that the loops stepped by a launch-only value move toward their bounds
        (progress.py), with the side constraints of the values they read: all of them, then (when
        a race needs one of them stuck, as a loop the threads never leave) each of the first few
        alone. None in a kernel without such loops."""
        steps = progress_steps(self.kernel)
        if not steps:
            return []
        terms, deps = enc.recorded(lambda: [as_int(enc.term(s, 1)) for s, _ in steps])
        side = [enc.base[i] for i in sorted(deps) if i >= 0]
        moving = [t > 0 if sign == ">" else t < 0 for t, (_, sign) in zip(terms, steps)]
        return [side + moving] + ([[*side, m] for m in moving[:PROGRESS_ALONE]] if len(moving) > 1 else [])

    def _witness(self, model, a: AccessEvent, b: AccessEvent, off1, off2) -> Witness:
        enc = self.enc
        val = lambda e: enc.value_of(model, e)  # noqa: E731
        t1 = tuple(val(enc.tid[1][d]) for d in DIMS)
        t2 = tuple(val(enc.tid[2][d]) for d in DIMS)
        o1, o2 = val(off1), val(off2)
        byte = max(o1, o2)
        elem = byte // max(a.access.elem_size, 1)

        def thread(k, ev, idx):
            iters = {self.loop_line.get(l, l): val(enc.iteration(k, l)) for l in ev.loops}
            return Thread(idx, val(enc.warp(k)), iters)

        first, second = thread(1, a, t1), thread(2, b, t2)
        # Every parameter the replay gave a value (those the launch or host does not fix), the ones
        # the query never read included: a loop bound it left free may be what lets the threads
        # meet (no barrier runs when it is 0), and the witness is the replay's values.
        params = {name: val(enc.shared.get(name, z3.Int(name))) for name in self.kernel.params
                  if name not in self.kernel.bindings}
        return Witness(first, second, tuple(val(enc.bid[d]) for d in DIMS), elem, byte,
                       first.warp == second.warp and not enc.grid, params,
                       tuple(val(enc.bid2[d]) for d in DIMS) if enc.grid else None)
