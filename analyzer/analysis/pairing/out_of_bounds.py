"""Bounds and the pairs that leave them: the `out-of-bounds` finding, and witnesses kept inside.

An index into a fixed-size dimension (ir.Access.bounds) stays below its extent, and an offset into
a buffer that starts where its binding does (ir.Buffer.declared, fixed-size arrays) stays inside
it: an access outside is undefined behaviour (or another element than the one meant), so a race
query states both (collision_constraints.py, `_in_bounds`). A pair that collides only without them
is asked again without them, and a collision there is an out-of-bounds finding, not a race
(`_outside_bounds`, `Hazard.outside`). A race's witness keeps every access its two threads execute
outside loops in bounds too (`_executed_in_bounds`), so that a run of it (`kernelrace confirm`)
stays inside the shapes the host declared.

Part of `races.PairChecker` (and `grid.GridChecker`): uses its `kernel`, `ev`, `exact`, `bounded`,
`_cache` and query methods.
"""

from __future__ import annotations

import copy

import z3

from analyzer.analysis.decision.solver import DIMS, as_int, truth
from analyzer.analysis.decision.solver_budget import at_a_point
from analyzer.analysis.execution.events import AccessEvent
from analyzer.analysis.pairing.addresses import peel_scale
from analyzer.analysis.pairing.hazards import Outside, PairAnalysis

# A witness keeps in bounds at most this many other accesses (outside loops) of each thread: a
# refinement of found collisions only, whose cost grows with the accesses it states.
EXECUTED_LIMIT = 64
# The queries without the bounds run on this share of the budget: undecided there says nothing
# (the pair's verdict in bounds stands), and a pair whose in-bounds queries were quick to refute
# rarely needs more to collide outside.
OUTSIDE_SHARE = 4


class OutOfBounds:
    """Part of `races.PairChecker` (see the module docstring)."""

    def rests_on_bounds(self, out: PairAnalysis) -> list[str]:
        """The pairs found never to overlap only because accesses stay inside their buffers'
        declared shapes (a stated assumption): each asked again without it (`-v`)."""
        said = []
        self._encoders()
        self.bounded = False
        try:
            for a, b in self._apart_pairs:
                buf = self.kernel.buffers.get(a.access.buffer)
                if buf is None or not buf.bounded or self._out_of_time():
                    continue
                res, _ = self._solve(self._any_overlap(self.exact, a, b), out)
                if res != z3.unsat:
                    said.append(f"the {a.access.kind} at line {a.access.span.line} and the {b.access.kind} at line "
                                f"{b.access.span.line} on {buf.display or buf.name} never overlap only because "
                                f"accesses stay inside its declared {'shape' if buf.declared else 'size'}")
        finally:
            self.bounded = True
        return said

    def _outside_bounds(self, a: AccessEvent, b: AccessEvent, ask, out: PairAnalysis) -> None:
        """A pair that never collides in bounds, asked again without the in-bounds facts: a
        collision there needs an index outside a buffer or a fixed-size dimension, the
        `out-of-bounds` finding (hazards with `outside` set), not a race. Only where bounds were
        stated for the pair and the solver-free proof (which uses none) did not settle it; one
        overlap query first, and the pair's queries (`ask(analysis)`) only when that finds an overlap."""
        if not self.bounded or ("proved", a.access.id, b.access.id) in self._cache or self._out_of_time():
            return
        buf = self.kernel.buffers.get(a.access.buffer)
        if buf is not None and (buf.param_row or buf.extent_params or buf.host_shape):
            # A host's shape (TVM's, ir.Buffer.host_shape) is a stated assumption, which `-v`
            # lists (`rests_on_bounds`). (Without a symbolic shape's rows, `(N, H, D)`, the
            # flattened products were nonlinear too, and each query ran to its budget.)
            return
        if not (a.bounds or b.bounds or (buf is not None and buf.bounded)):
            return
        outside = PairAnalysis()
        # Undecided here leaves the verdict in bounds as it is: no escalation is spent, which the
        # race pass's own undecided queries may need (each kernel has a few).
        self.bounded, escalations, self.escalations = False, self.escalations, 0
        try:
            with self._scaled(share=OUTSIDE_SHARE):
                if not self._apart_by_solver(a, b, outside):
                    ask(outside)
        finally:
            self.bounded, self.escalations = True, escalations
            out.queries += outside.queries
        # Undecided without the bounds: the verdict in bounds stands (no race), and nothing is said.
        out.hazards.extend(h for h in outside.hazards if not h.benign and h.outside is not None)

    def _thread(self, model, k: int) -> tuple[int, int, int]:
        return tuple(self.exact.value_of(model, self.exact.tid[k][d]) for d in DIMS)

    def _executed(self, k: int, skip: AccessEvent) -> list[AccessEvent]:
        """The access events outside every loop with bounds to keep, but `skip` (for thread k)."""
        return [e for e in sorted(self.ev.accesses.values(), key=lambda e: e.order)
                if not e.loops and e is not skip and (e.bounds or self._bounded(e))][:EXECUTED_LIMIT]

    def _bounded(self, e: AccessEvent) -> bool:
        buf = self.kernel.buffers.get(e.access.buffer)
        return buf is not None and buf.bounded

    def _kept_in_bounds(self, solver, model, replay, warps, a, b, off1, off2, space, out: PairAnalysis):
        """(model, replay failure, warps, facts, outside) for a race's witness once found and
        replayed: where an access its threads execute leaves the bounds, the witness asked again
        with them (`_executed_in_bounds`), made readable and replayed as the first was, and taken
        when it replays; kept as it was otherwise (the race stands either way). Asked last, so that a
        witness already in bounds is the one the search found without them."""
        refined, facts, scopes, outside = self._executed_in_bounds(solver, model, a, b)
        if not facts:
            return model, replay, warps, [], outside
        solver.push()
        again, again_warps = self._readable(solver, refined, a, b)
        again, again_replay = self._replayed(solver, again, a, b, off1, off2, space, out)
        for _ in range(scopes):
            solver.pop()
        if again_replay is None:
            return again, again_replay, again_warps, facts, None
        return model, replay, warps, [], None

    def _executed_in_bounds(self, solver, model, a: AccessEvent, b: AccessEvent):
        """(model, facts, scopes, outside): the witness moved to one where every access outside
        loops that either thread executes (its guard holds) stays in bounds, as the colliding two
        do (TVM's merge_state at head_dim 256: the race on `S` with `D = 0`, where every access to
        `V` is outside its rows), with the facts it meets (pushed on `solver` in `scopes` scopes,
        which the caller pops should no witness of them replay); where none exists, the witness as found and
        the access it leaves the bounds with (an out-of-bounds finding, not a race). Undecided
        within the budget: the witness as found, nothing said."""
        enc = self.exact
        marks = enc._mark, enc._using
        enc.collecting()
        facts, events, facts_of_1 = [], [], []
        for k, skip in ((1, a), (2, b), (1, None)):
            for e in self._executed(k, skip):
                bounds = self._in_bounds(e.access, e.offset, enc.term(e.offset, k), k, e.bounds)
                if bounds:
                    ran = [truth(enc.term(g, k)) for g in e.guard + e.ended]
                    fact = z3.Implies(z3.And(*ran), z3.And(*bounds)) if ran else z3.And(*bounds)
                    if skip is None:
                        facts_of_1.append(fact)
                    else:
                        facts.append(fact)
                        events.append((e, k))
        # What the query's model stands on (its loads and loop state, read by the witness and its
        # replay) stays the query's, with the facts' own added.
        kept = enc.last_loads, enc.last_state, enc.last_base
        facts += enc.needed()
        enc._mark, enc._using = marks
        loads, state, base = enc.last_loads, enc.last_state, enc.last_base
        enc.last_loads, enc.last_state, enc.last_base = kept
        # Evaluated as the witness will read the model (completed), on a copy: completing the
        # model itself would change the witness.
        completed = copy.copy(model)
        if not events or all(z3.is_true(completed.eval(f, model_completion=True)) for f in facts):
            return model, [], 0, None
        enc.last_loads = kept[0] + [x for x in loads if all(x.get_id() != y.get_id() for y in kept[0])]
        enc.last_state = kept[1] + [x for x in state if all(x.get_id() != y.get_id() for y in kept[1])]
        enc.last_base = kept[2] | base
        solver.push()
        solver.add(*facts)
        res = solver.check()
        if res == z3.sat:
            # Taken now: asking again after the wish below was refused may not find it again (the
            # kernel's deadline passed meanwhile: `canceled`, and no model; ncnn's gemm_sg).
            found = solver.model()
            # A wish besides: the block's first and last threads in bounds too (a run of the whole
            # block, `kernelrace confirm`, executes theirs: `V[tx * 4 + row * D]` wants D >= 4 *
            # blockDim.x). Thread 1's facts at those threads; unsatisfiable or undecided, the
            # witness stays.
            wish = self._block_corners(facts_of_1)
            solver.push()
            solver.add(*wish)
            if wish and solver.check() == z3.sat:
                # (The race's condition keeps to the two threads' facts: the corners' products of
                # extents leave ISL's quasi-affine sets.)
                return solver.model(), facts, 2, None
            solver.pop()
            return found, facts, 1, None
        solver.pop()
        if res == z3.unsat and not at_a_point(solver):
            # (Asked at one point of the inputs, unsat says nothing: another point may collide
            # in bounds, and the race stands.)
            self.bounded = False    # the index as the model has it
            try:
                return model, [], 0, self._outside_at(model, events)
            finally:
                self.bounded = True
        return model, [], 0, None

    def _block_corners(self, facts: list) -> list:
        """Thread 1's `facts` at the block's first thread and at its last."""
        enc = self.exact
        tid = [enc.tid[1][d] for d in DIMS]
        corners = ([(t, z3.IntVal(0)) for t in tid], [(t, enc.bdim[d] - 1) for t, d in zip(tid, DIMS)])
        return [z3.substitute(f, *corner) for corner in corners for f in facts]

    def _outside_at(self, model, events) -> Outside | None:
        """Where a collision found without the in-bounds facts leaves them: the first access of
        `events` ((event, solver thread)) whose subscript or offset the model puts outside, and how."""
        enc = self.exact
        val = lambda t: model.eval(as_int(enc.term(t, k)), model_completion=True).as_long()  # noqa: E731
        for e, k in events:
            thread = self._thread(model, k)
            for idx, extent in e.bounds:
                v = val(idx)
                if not 0 <= v < extent:
                    return Outside(e, thread, v, f"a dimension of {extent}", k)
            buf = self.kernel.buffers.get(e.access.buffer)
            if buf is None or not buf.bounded:
                continue
            off = val(e.offset)
            elem = off // max(buf.elem_size, 1)
            if off < 0:
                return Outside(e, thread, elem, "the buffer, which starts at element 0", k)
            if buf.size_bytes and off + e.access.width > buf.size_bytes:
                return Outside(e, thread, elem, f"the buffer's {buf.size_bytes // max(buf.elem_size, 1)} elements", k)
            scale, index = peel_scale(e.offset)
            if scale == buf.elem_size:
                for stride in buf.strides:
                    v = val(self._inner(index, stride, buf.offset_param))
                    if not 0 <= v < stride:
                        return Outside(e, thread, v, f"a row of {stride} elements", k)
                column = self._param_column(index, buf)
                if column is not None:
                    v, n = val(column), model.eval(enc.param(buf.param_row[0]), model_completion=True).as_long()
                    if not 0 <= v < n * buf.param_row[1]:
                        return Outside(e, thread, v, f"a row of {buf.param_row[0]}"
                                       + (f" * {buf.param_row[1]}" if buf.param_row[1] != 1 else "")
                                       + f" = {n * buf.param_row[1]} elements", k)
        return None
