"""Which pairs of access events a checker looks at, and the interval shapes (positions, path
decisions, warps) in which two threads can run them concurrently.

Split from races.py: the race pass and the passes on demand (barrier_passes.py) walk the same
pairs and barrier intervals, and none of it needs the solver.
"""

from __future__ import annotations

from collections import defaultdict

from analyzer import ir
from analyzer.analysis.execution.concurrency import MANY, LoopPos, agreeing, intervals_between
from analyzer.analysis.execution.events import AccessEvent

# What a disjunct requires of the two threads' warps (None: nothing).
DIFFERENT, SAME = "different", "same"
# A path decision on a branch inside loops: (key, (AT, positions, branch taken)).
AT = "at"


class PairShapes:
    """Part of `races.PairChecker`: the pairs and their interval shapes. Uses the checker's `ev`,
    `cfg`, `uniform`, `_views` and `_buffers`."""

    def view(self, cut: frozenset) -> dict:
        """Barrier intervals when the barrier nodes `cut` (and only they) separate; one walk per set."""
        hit = self._views.get(cut)
        if hit is None:
            hit = self._views[cut] = intervals_between(self.cfg, cut)
        return hit

    def _by_buffer(self) -> list[tuple[str, list[AccessEvent]]]:
        """Each buffer's access events in program order (computed once per checker)."""
        if self._buffers is None:
            by_buffer: dict[str, list[AccessEvent]] = defaultdict(list)
            for e in sorted(self.ev.accesses.values(), key=lambda e: e.order):
                by_buffer[e.access.buffer].append(e)
            self._buffers = sorted(by_buffer.items())
        return self._buffers

    between_blocks = False   # the grid pass's pairs are of threads in different blocks

    def _pairable(self, a: AccessEvent, b: AccessEvent) -> bool:
        """At least one a write, not two atomics atomic with each other."""
        return ((a.access.is_write or b.access.is_write)
                and not ir.atomic_together(a.access, b.access, self.between_blocks))

    def _partners(self, events: list[AccessEvent], i: int):
        """The pairs (events[i], b), b at or after i."""
        a = events[i]
        return ((a, b) for b in events[i:] if self._pairable(a, b))

    def _pairs(self):
        """Pairs of access events on one buffer, at least one a write, not both atomic."""
        for _, events in self._by_buffer():
            for i in range(len(events)):
                yield from self._partners(events, i)

    def _pairs_touching(self, ids: set[int]):
        """The pairs of `_pairs` with an access in `ids`, in the same order, without walking the rest."""
        for _, events in self._by_buffer():
            hit = [i for i, e in enumerate(events) if e.access.id in ids]
            marked = set(hit)
            for i in range(len(events) if hit else 0):
                if i in marked:
                    yield from self._partners(events, i)
                else:   # events[i] first, a marked access second
                    yield from ((events[i], events[j]) for j in hit
                                if j >= i and self._pairable(events[i], events[j]))

    def _combos(self, a: AccessEvent, b: AccessEvent, reach):
        ra = reach.get(self.cfg.access_node[a.access.id], [])
        rb = reach.get(self.cfg.access_node[b.access.id], [])
        by_start = defaultdict(list)
        for r in rb:
            by_start[r.start].append(r)
        # A node's reach has one entry per position and path, and two nodes in loops with branches
        # have thousands of pairs of them: a's agreement test and each path's decisions are made
        # once, not once per pair.
        paths = self.__dict__.setdefault("_paths", {})
        for x in ra:
            ys = by_start.get(x.start)
            if not ys:
                continue
            agrees, px = agreeing(x.decisions, self.uniform), self._path(x.decisions, paths)
            for y in ys:
                if agrees(y.decisions):
                    yield x.start, x.pos, y.pos, px, self._path(y.decisions, paths)

    def _path(self, decisions, memo: dict) -> frozenset:
        """`_path_of(decisions)`, remembered in `memo`."""
        hit = memo.get(decisions)
        if hit is None:
            hit = memo[decisions] = self._path_of(decisions)
        return hit

    def _path_of(self, decisions) -> frozenset:
        """The branches a path took on conditions the executor knows as terms (outside loops, or
        inside loops in iterations the positions pin), and the loops (outside loops) it left at
        their first test: their entry condition failed."""
        terms, entry, conds = self.ev.condition_terms, self.ev.entry_terms, self.ev.loop_conds
        out = set()
        for key, pos, br in decisions:
            if key in terms or (br == 0 and key in entry and LoopPos(entry[key][0], False, 0) in pos):
                out.add((key, br))
            elif key in self.ev.loop_branch_terms and all(p.k < MANY for p in pos):
                out.add((key, (AT, pos, br)))
            elif br == 0 and key in conds and all(p.k < MANY for p in pos):
                # A loop it left at a later test, in iterations the positions pin (relative to
                # the start's): its condition failed there. (key, positions) says so.
                out.add((key, pos))
        return frozenset(out)

    def _entries(self, a: AccessEvent, b: AccessEvent, block_reach, warp_reach):
        """The interval shapes (positions, path decisions) in which a and b can run concurrently,
        each with what it needs of the warps: DIFFERENT when only warp barriers separate."""
        combos = list(self._combos(a, b, block_reach))
        if not combos or warp_reach is block_reach:
            return [(pa, pb, None, da, db) for _, pa, pb, da, db in combos]
        # (The warp view cuts at every barrier the block view does: no block shape, no warp one.)
        warp = list(self._combos(a, b, warp_reach))
        in_warp = {(s, pa, pb) for s, pa, pb, _, _ in warp}
        in_block = {(s, pa, pb) for s, pa, pb, _, _ in combos}
        out = [(pa, pb, DIFFERENT if (s, pa, pb) not in in_warp else None, da, db) for s, pa, pb, da, db in combos]
        # Threads of one warp that left the same warp barrier: a start the block view does not
        # have (it sees through warp barriers), so these shapes are the warp view's own.
        out += [(pa, pb, SAME, da, db) for s, pa, pb, da, db in warp if (s, pa, pb) not in in_block]
        return out
