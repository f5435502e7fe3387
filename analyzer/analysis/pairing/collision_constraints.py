"""The constraints of a pair's queries: two distinct threads, each under its guard and inside its
buffer, touch overlapping bytes in one of the pair's interval shapes (iterations related as the
shape says, one instance first), and, for a write-write pair, store different values.

Split from races.py: building a query is separate from asking it (solver_budget.py) and from
reading its model (witnesses.py). Pieces many pairs share are cached per encoder in `_cache`.
"""

from __future__ import annotations

import z3

from analyzer import ir
from analyzer.analysis.conditions.race_condition import condition_query
from analyzer.analysis.decision import integral_floats, radix_lemmas
from analyzer.analysis.decision.solver import DIMS, Encoder, as_int, num, truth
from analyzer.analysis.execution.concurrency import ANY, MANY
from analyzer.analysis.execution.events import AccessEvent
from analyzer.analysis.pairing.addresses import contains_param, inner_index, peel_scale, radix_split, split, split_rows
from analyzer.analysis.pairing.pair_shapes import AT, DIFFERENT, SAME


class CollisionConstraints:
    """Part of `races.PairChecker`: constraints in the encoder `self.enc` (`_any_overlap` and
    `_constraints` set it). Uses the checker's `kernel`, `ev`, `bounded` and `_cache`."""

    def _any_overlap(self, enc: Encoder, a: AccessEvent, b: AccessEvent) -> list:
        """Two distinct threads run a and b, each under its guard, on overlapping bytes: in any
        iterations, whatever orders them."""
        self.enc = enc
        enc.collecting()
        cs = [self._distinct(enc)] + self._overlap(a, b) + self._side(a, 1) + self._side(b, 2)
        return cs + enc.needed()

    def _constraints(self, enc: Encoder, a, b, combos):
        """Thread 1 runs a, thread 2 runs b: distinct threads, both guards, overlap, an interval."""
        self.enc = enc
        enc.collecting()
        off1, off2 = enc.term(a.offset, 1), enc.term(b.offset, 2)
        cs = [self._distinct(enc)]
        cs += self._overlap(a, b) + self._side(a, 1) + self._side(b, 2)
        alts = []
        for pa, pb, before, warps, da, db in combos:
            rel = self._relation(pa, 1) + self._relation(pb, 2)
            # Each thread's path around a barrier-bearing branch: the branch it took holds for it.
            path = []
            for k, dec in ((1, da), (2, db)):
                for key, br in dec:
                    if isinstance(br, tuple) and br[0] == AT:
                        path += self._branch_at(key, br[1], br[2], k)
                        continue
                    if isinstance(br, tuple):
                        path += self._left_loop(key, br, k)
                        continue
                    c = truth(enc.term(self.ev.condition_terms[key] if key in self.ev.condition_terms
                                       else self.ev.entry_terms[key][1], k))
                    path.append(c if br else z3.Not(c))
            # A path's decisions are a set keyed by statement ids (addresses): their order follows
            # the run, and the order of an And's terms steers Z3 to one model or another. Z3's
            # structural hash gives every run the same order.
            rel += sorted(path, key=lambda c: c.hash())
            if before == "tie":
                rel += [enc.iteration(1, p.loop) == enc.iteration(2, q.loop) for p, q in zip(pa, pb) if p.loop == q.loop]
            elif before is not None:
                rel.append(self._precedes(a, b, pa, pb) if before == "a" else
                           self._precedes(b, a, pb, pa, swap=True))
            if warps == DIFFERENT:
                # Only warp barriers lie between: the threads must sit in different warps.
                rel.append(enc.warp(1) != enc.warp(2))
            elif warps == SAME:
                # A warp barrier lies between: it keeps threads of one warp apart in execution.
                rel.append(enc.warp(1) == enc.warp(2))
            alts.append(z3.And(*rel) if rel else z3.BoolVal(True))
        cs.append(z3.Or(*alts))
        if a.value is not None and b.value is not None:
            enc.term(a.value, 1), enc.term(b.value, 2)   # their side constraints too
        needed = enc.needed()
        return cs + needed + self._progress_facts(enc, a, b) + self._tile_order_facts(enc), alts, (off1, off2)

    def _left_loop(self, key, pos, k: int) -> list:
        """Thread k left loop `key` at the test of the iterations `pos` gives (each loop's
        iteration relative to the start's, or counted from its entry): the loop's condition was
        false there. A loop left after the start's iteration is then known to end there."""
        facts, cond = self._at(self.ev.loop_conds[key][1], pos, k)
        return facts + [z3.Not(cond)]

    def _branch_at(self, key, pos, br: int, k: int) -> list:
        """Thread k went the `br` way of the branch `key` (inside loops, around a barrier) in the
        iterations `pos` gives: its condition held there, or failed. (A non-uniform branch around
        a barrier is its own finding; this keeps the races found beside it to paths a thread can
        really take, whose witnesses replay.)"""
        facts, cond = self._at(self.ev.loop_branch_terms[key], pos, k)
        return facts + [cond if br else z3.Not(cond)]

    def _at(self, cond, pos, k: int):
        """(facts, condition) for thread k with each loop's iteration set as `pos` gives it."""
        enc = self.enc
        subs, out = [], []
        for p in pos:
            if p.relative:
                base = enc.param(f"sync.iter{p.loop}")
                out.append(base >= 0)
                subs.append((enc.iteration(k, p.loop), base + p.k))
            else:
                subs.append((enc.iteration(k, p.loop), z3.IntVal(p.k)))
        return out, z3.substitute(truth(enc.term(cond, k)), *subs)

    def _distinct(self, enc):
        key = (id(enc), "distinct")
        if key not in self._cache:
            self._cache[key] = z3.Or(*[enc.tid[1][d] != enc.tid[2][d] for d in DIMS])
        return self._cache[key]

    def _side(self, e: AccessEvent, k: int) -> list:
        """In-bounds facts, the guard and the loops ended of one access by thread k (built once per
        encoder)."""
        enc = self.enc
        key = (id(enc), "side", e.access.id, k, self.bounded)
        hit = self._cache.get(key)
        if hit is None or hit[0] is not e:
            off = enc.term(e.offset, k)
            # The loops before the access ended for the thread (symbolic.py, `_ended`).
            facts = self._in_bounds(e.access, e.offset, off, k, e.bounds) + [truth(enc.term(g, k)) for g in e.guard + e.ended]
            # The side constraints a later query states with these: those of the offset, guards
            # and bounds terms (all of them already built: looked up, not built again).
            hit = self._cache[key] = (e, facts, enc.recorded(lambda: self._replay(e, k))[1])
        else:
            enc.depend(hit[2])
        return hit[1]

    def _replay(self, e: AccessEvent, k: int) -> None:
        """The terms of `_side` for access e and thread k, for their side constraints."""
        self.enc.term(e.offset, k)
        for g in e.guard + e.ended:
            self.enc.term(g, k)
        self._replay_bounds(e, k)

    def _differ(self, a: AccessEvent, b: AccessEvent):
        enc = self.enc
        differ = as_int(enc.term(a.value, 1)) != as_int(enc.term(b.value, 2))
        # Floats holding integers are equal where the integers are (integral_floats.py).
        same = integral_floats.same_value(enc, a.value, b.value, 1, 2)
        return differ if same is None else z3.And(differ, z3.Not(same))

    def _replay_bounds(self, e: AccessEvent, k: int) -> None:
        for idx, _ in e.bounds:
            self.enc.term(idx, k)
        buf = self.kernel.buffers.get(e.access.buffer)
        if buf is not None and (buf.strides or buf.param_row):
            scale, index = peel_scale(e.offset)
            if scale == buf.elem_size:
                for stride in buf.strides:
                    self.enc.term(self._inner(index, stride, buf.offset_param), k)
                column = self._param_column(index, buf)
                if column is not None:
                    self.enc.term(column, k)

    def _of_index(self, what: str, index, args: tuple, make):
        """`make()`, once per index (by identity: held in the entry, so no id is reused) and `args`,
        which must name everything `make` reads besides the index: every pair the index is in then
        gets the same objects, and the encoders' memos (by identity) encode each once."""
        key = (what, id(index), *args)
        hit = self._cache.get(key)
        if hit is None or hit[0] is not index:
            hit = self._cache[key] = (index, make())
        return hit[1]

    def _split_rows(self, index, stride: int, offset_param):
        return self._of_index("rows", index, (stride, offset_param), lambda: split_rows(index, stride, offset_param))

    def _inner(self, index, stride, offset_param):
        return self._of_index("inner", index, (stride, offset_param), lambda: inner_index(index, stride, offset_param))

    def _param_column(self, index, buf: ir.Buffer):
        """The index within its row when the row length is a parameter (`buf.param_row`): the
        part of `index == row * length + column` not multiplied by the parameter, the buffer's
        offset excluded. None when the index does not have that shape."""
        if buf.param_row is None:
            return None

        def column():
            parts = split(index, buf.param_row[0])
            if parts is None or contains_param(parts[1], buf.param_row[0]):
                return None
            if buf.offset_param and contains_param(parts[1], buf.offset_param):
                return ir.BinOp("-", parts[1], ir.Param(buf.offset_param))
            return parts[1]

        return self._of_index("column", index, (buf.param_row, buf.offset_param), column)

    def _in_bounds(self, access: ir.Access, offset, off, k: int, subscripts=()) -> list:
        """Accesses stay inside their buffer: from its base, within a fixed-size array, and, where
        the declared shape is known, each inner index within its dimension (`offset` the IR term,
        `off` its encoding for thread k)."""
        if not self.bounded:
            return []
        # The subscripts the source wrote into fixed-size dimensions (the C family).
        facts = [f for idx, extent in subscripts
                 for i in (as_int(self.enc.term(idx, k)),) for f in (i >= 0, i < extent)]
        buf = self.kernel.buffers.get(access.buffer)
        if buf is None or not buf.bounded:
            return facts   # a raw pointer: no bounds, not even its base (it may point into an array)
        facts.append(off >= 0)
        if buf.size_bytes:
            facts.append(off + access.width <= buf.size_bytes)
        scale, index = peel_scale(offset)
        if scale == buf.elem_size and access.width % scale == 0:
            width = access.width // scale
            for stride in buf.strides:
                inner = self.enc.term(self._inner(index, stride, buf.offset_param), k)
                facts += [inner >= 0, inner + width <= stride]
            column = self._param_column(index, buf)
            if column is not None:
                name, below = buf.param_row
                col = as_int(self.enc.term(column, k))
                facts += [col >= 0, col + width <= self.enc.param(name) * below]
        return facts

    def _overlap(self, a: AccessEvent, b: AccessEvent) -> list:
        """`_make_overlap`, built once per encoder and pair (every query of the pair states it)."""
        enc = self.enc
        key = (id(enc), "overlap", a.access.id, b.access.id, self.bounded)
        hit = self._cache.get(key)
        if hit is None or hit[0] is not a or hit[1] is not b:
            hit = self._cache[key] = (a, b, *enc.recorded(lambda: self._make_overlap(a, b)))
        else:
            enc.depend(hit[3])
        return list(hit[2])

    def _make_overlap(self, a: AccessEvent, b: AccessEvent) -> list:
        """Constraints meaning: a's bytes (thread 1) overlap b's bytes (thread 2).

        Flattened indices are taken apart one dimension at a time under the in-bounds assumption:
        first the buffer's known constant strides (TVM builds), innermost dimensions last, then
        rows whose stride is a kernel parameter. Each step turns a product into an equality of
        rows plus a bounded column, which keeps the query linear."""
        enc = self.enc
        s1, i1 = peel_scale(a.offset)
        s2, i2 = peel_scale(b.offset)
        wa, wb = a.access.width, b.access.width
        if s1 != s2 or wa % s1 or wb % s2:
            o1, o2 = enc.term(a.offset, 1), enc.term(b.offset, 2)
            return [o1 < o2 + num(wb), o2 < o1 + num(wa)] + self._radix_lemmas(o1, o2, wa, wb)
        out: list = []
        w1, w2 = wa // s1, wb // s2
        buf = self.kernel.buffers.get(a.access.buffer)
        if not self.bounded:
            buf = None      # no shape: the indices as they are
        if buf is not None and buf.strides and s1 == buf.elem_size:
            # Both sides share the buffer's offset parameter, which cancels.
            rows = None
            for stride in sorted(buf.strides, reverse=True):
                if w1 > stride or w2 > stride:
                    break
                r1, c1 = self._split_rows(i1, stride, buf.offset_param)
                r2, c2 = self._split_rows(i2, stride, buf.offset_param)
                e1, e2 = enc.term(c1, 1), enc.term(c2, 2)
                out += [e1 >= 0, e1 + num(w1) <= stride, e2 >= 0, e2 + num(w2) <= stride]
                if rows is None:
                    rows = (r1, r2)     # the outer, possibly symbolic, dimensions
                else:
                    out.append(enc.term(r1, 1) == enc.term(r2, 2))
                i1, i2 = c1, c2
            if rows is not None:
                x1, x2 = enc.term(i1, 1), enc.term(i2, 2)
                out += [x1 < x2 + num(w2), x2 < x1 + num(w1)]
                i1, i2, w1, w2 = rows[0], rows[1], 1, 1
        while buf is not None and buf.declared:
            r = radix_split(i1, i2, buf.extent_params)
            if r is None:
                break
            stride, (r1, c1), (r2, c2) = r
            size = enc.term(stride, 1)
            e1, e2 = enc.term(c1, 1), enc.term(c2, 2)
            # In bounds of the dimension: the columns stay within a row of `stride` elements.
            out += [e1 >= 0, e1 + num(w1) <= size, e2 >= 0, e2 + num(w2) <= size,
                    e1 < e2 + num(w2), e2 < e1 + num(w1)]
            i1, i2, w1, w2 = r1, r2, 1, 1
        x1, x2 = enc.term(i1, 1), enc.term(i2, 2)
        out += [x1 < x2 + num(w2), x2 < x1 + num(w1)]
        # Rows of a symbolic length no declared shape splits: the lemmas that split them where
        # the guards bound the columns (radix_lemmas.py; valid facts, no assumption).
        return out + self._radix_lemmas(x1, x2, w1, w2)

    def _condition_query(self, exact: list, refined_by: list, model):
        """The race's `ConditionQuery` (race_condition.py): its constraints but the mixed-radix
        lemmas, with the one-value facts of the stored values' loads (unwritten.py) marked."""
        return condition_query(self.exact, self._without_lemmas(exact) + refined_by, model,
                               self.unwritten.value_facts)

    def _without_lemmas(self, constraints: list) -> list:
        """`constraints` but the mixed-radix lemmas, for a race's condition: valid facts change
        no set, and they cost its projection."""
        lemmas = self._cache.get("radix lemmas", ())
        return [c for c in constraints if c.get_id() not in lemmas]

    def _radix_lemmas(self, x1, x2, w1: int, w2: int) -> list:
        """radix_lemmas.lemmas, their ids remembered: a race's condition leaves them out."""
        # Remembered per pair of indices (held with the lemmas, so their ids stay theirs): the
        # pair's order groups and refinements ask again, and splitting walks the terms in Z3's API.
        key = ("radix", id(self.enc), x1.get_id(), x2.get_id(), w1, w2)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = (x1, x2, radix_lemmas.lemmas(x1, x2, w1, w2))
            self._cache.setdefault("radix lemmas", set()).update(c.get_id() for c in hit[2])
        return list(hit[2])

    def _precedes(self, x: AccessEvent, y: AccessEvent, px, py, swap: bool = False):
        """x's instance comes before y's in one thread's order: lexicographic on shared loops."""
        key = (id(self.enc), x.order < y.order, px, py, swap)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._make_precedes(x, y, px, py, swap)
        return hit

    def _make_precedes(self, x: AccessEvent, y: AccessEvent, px, py, swap: bool):
        enc = self.enc
        kx, ky = (2, 1) if swap else (1, 2)
        common = [p.loop for p, q in zip(px, py) if p.loop == q.loop]
        result = z3.BoolVal(x.order < y.order)
        for loop in reversed(common):
            ix, iy = enc.iteration(kx, loop), enc.iteration(ky, loop)
            result = z3.Or(ix < iy, z3.And(ix == iy, result))
        return result

    def _relation(self, pos, k: int) -> list:
        key = (id(self.enc), pos, k)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._make_relation(pos, k)
        return list(hit)

    def _make_relation(self, pos, k: int) -> list:
        enc = self.enc
        rel = []
        for p in pos:
            i = enc.iteration(k, p.loop)
            if p.relative:
                # The iteration the two threads synchronised in; one variable serves every
                # disjunct, each of which may pick its own value.
                base = enc.param(f"sync.iter{p.loop}")
                rel.append(base >= 0)
                rel.append(i == base + p.k if p.k < MANY else i >= base + (0 if p.k == ANY else MANY))
            else:
                rel.append(i == p.k if p.k < MANY else i >= (0 if p.k == ANY else MANY))
        return rel
