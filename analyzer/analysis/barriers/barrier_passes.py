"""The passes on demand, run after the race pass by its checker: the barrier-scope view (pairs that
barriers order in execution but not in memory) and redundant barriers (whether a race appears
without each barrier statement).

Split from races.py: both query pairs only in the interval shapes that views with fewer barriers
cutting add to the race pass's; the race pass itself never needs them.
"""

from __future__ import annotations

from collections import defaultdict

from analyzer import ir
from analyzer.analysis.execution.concurrency import barriers_between, cuts
from analyzer.analysis.execution.events import AccessEvent
from analyzer.analysis.pairing.hazards import OUT_OF_TIME, BarrierVerdict, Hazard, PairAnalysis, Undecided
from analyzer.analysis.pairing.pair_shapes import DIFFERENT, SAME

# The memory spaces a barrier can order (a barrier-scope view is computed per space).
ORDERED_SPACES = (ir.SHARED, ir.GLOBAL)


class BarrierPasses:
    """Part of `races.PairChecker`: `run_scope` and `run_redundant`, which continue from the race
    pass (its barrier intervals, the pairs it found colliding in `_hit`, its deadline)."""

    # ----- barrier scope -----

    def _scope_spaces(self) -> list[str]:
        """The memory spaces, written by the kernel, that some barrier leaves out of its order."""
        written = {e.access.space for e in self.ev.accesses.values() if e.access.is_write}
        out = []
        for space in ORDERED_SPACES:
            if space not in written:
                continue
            if cuts(self.cfg, False, space) != cuts(self.cfg, False) or (
                    self.has_warp_barriers and cuts(self.cfg, True, space) != cuts(self.cfg, True)):
                out.append(space)
        return out

    def run_scope(self, out: PairAnalysis) -> list[Hazard]:
        """Hazards of the pairs that are concurrent when only the barriers ordering their memory
        space separate, and not when every barrier does. Pairs the race pass found colliding or
        could not decide are left to it."""
        found: list[Hazard] = []
        spaces = self._scope_spaces()
        if not spaces:
            return found
        candidates = []
        for a, b in self._pairs():
            space = a.access.space
            if space not in spaces or (a.access.id, b.access.id) in self._hit:
                continue
            if self._out_of_time():
                out.undecided.append(Undecided(a, b, f"whether barriers order its memory (barrier-scope): "
                                                     f"{OUT_OF_TIME} before this pair and the rest were checked"))
                break
            if self._never_overlap(a, b, out):
                continue
            entries = self._scope_entries(a, b, space)
            if entries:
                candidates.append((a, b, space, entries))
        for a, b, space, entries in candidates:
            n, nu = len(found), len(out.undecided)
            self._query_groups(a, b, entries, out, found, self.detail)
            for h in found[n:]:
                h.unordered_by = self._unordered_by(h, space)
            for u in out.undecided[nu:]:
                u.reason = f"whether the barriers between them order its memory (barrier-scope): {u.reason}"
        return found

    def _scope_entries(self, a: AccessEvent, b: AccessEvent, space: str) -> list:
        """Shapes concurrent in the view of `space` but ordered in execution."""
        block = self.view(cuts(self.cfg, False, space))
        warp = self.view(cuts(self.cfg, True, space)) if self.has_warp_barriers else block
        return self._extra_entries(a, b, block, warp)

    def _extra_entries(self, a: AccessEvent, b: AccessEvent, block: dict, warp: dict,
                       base: tuple[dict, dict] | None = None) -> list:
        """Shapes concurrent in the views `block` and `warp` (fewer barriers cutting) but not in
        `base` (the kernel's own views unless given), with the warps they need: two threads any
        barrier separates, or threads of one warp a warp barrier separates."""
        filtered = self._entries(a, b, block, warp)
        if not filtered:
            return []
        # What the base views already allow, per shape: any two threads (None), two of different
        # warps, two of one warp. A filtered shape adds what none of those covers.
        normal: dict[tuple, set] = {}
        for pa, pb, warps, da, db in self._entries(a, b, *(base or (self.block_reach, self.warp_reach))):
            normal.setdefault((pa, pb, da, db), set()).add(warps)
        out = []
        for pa, pb, warps, da, db in filtered:
            have = normal.get((pa, pb, da, db), set())
            if None in have or warps in have or {DIFFERENT, SAME} <= have:
                continue
            if warps is None and have:
                # One of the two warp cases is covered: the other is new.
                out.append((pa, pb, SAME if DIFFERENT in have else DIFFERENT, da, db))
            else:
                out.append((pa, pb, warps, da, db))    # a barrier separates them in the base views
        return out

    # ----- redundant barriers -----

    def run_redundant(self, out: PairAnalysis) -> list["BarrierVerdict"]:
        """For each barrier statement, in source order, whether the kernel would race without it
        and without the barriers already found redundant: the pairs its removal lets run
        concurrently, queried in just the new interval shapes. So the barriers found redundant can
        all go together, not only one at a time (of two barriers back to back, one stays).

        A pair the race pass already found colliding or left undecided decides nothing, and
        neither does a query the solver cannot decide: the barrier is then `needed=None`."""
        nodes: dict[int, list[int]] = defaultdict(list)
        for n, bar in sorted(self.cfg.barrier_node.items(), key=lambda nb: (nb[1].span.line, nb[1].span.col)):
            nodes[id(bar)].append(n)
        block_cut = cuts(self.cfg, False)
        warp_cut = cuts(self.cfg, True) if self.has_warp_barriers else block_cut
        removed: frozenset[int] = frozenset()
        base = (self.block_reach, self.warp_reach)
        verdicts = []
        for group in nodes.values():
            bar = self.cfg.barrier_node[group[0]]
            if bar.scope == ir.GRID:
                # A grid sync also orders blocks: what its removal does between blocks is the grid
                # pass's, which this one does not run (never `redundant` on a block view alone).
                verdicts.append(BarrierVerdict(bar, None, reason="a grid sync orders blocks too"))
                continue
            if self._out_of_time():
                verdicts.append(BarrierVerdict(bar, None, reason=OUT_OF_TIME))
                continue
            gone = removed | frozenset(group)
            block = self.view(block_cut - gone)
            views = (block, self.view(warp_cut - gone) if self.has_warp_barriers else block)
            verdict = self._verdict(bar, views, base, out)
            if verdict.needed is False:
                removed, base = gone, views
            verdicts.append(verdict)
        return verdicts

    def _verdict(self, bar: ir.Barrier, views, base, out: PairAnalysis) -> "BarrierVerdict":
        """`views` are the barrier intervals without the barrier, `base` with it; a pair that gains
        interval shapes is tested for any overlap at all (cheap, once per pair), then queried in
        the new shapes, expecting a collision (most pairs a barrier orders collide without it:
        on TVM's kernels, every one that overlaps at all), which ends the verdict."""
        checked = 0
        # Only accesses whose barrier intervals change can gain a partner: those in the intervals
        # the barrier ended or began.
        moved = set()
        for new, old in zip(views, base):
            moved |= {self.cfg.node_access[n].id for n in new.keys() | old.keys()
                      if new.get(n) != old.get(n) and n in self.cfg.node_access}
        # Only `needed is False` is reported (a barrier that can go), and one pair racing or
        # undecided rules it out: the verdict is then None, whatever the other pairs say (True,
        # with a collision, is no finding either). So the pairs the race pass found colliding
        # are looked for first, before any query, and the first undecided pair ends the verdict.
        candidates = []
        for a, b in self._pairs_touching(moved):
            extra = self._extra_entries(a, b, *views, base)
            if not extra:
                continue
            if (a.access.id, b.access.id) in self._hit:
                return BarrierVerdict(bar, None, pairs=len(candidates) + 1, reason=(
                    f"the {a.access.kind} at line {a.access.span.line} and the "
                    f"{b.access.kind} at line {b.access.span.line} it orders already race"))
            candidates.append((a, b, extra))
        for a, b, extra in candidates:
            if self._out_of_time():
                return BarrierVerdict(bar, None, reason=OUT_OF_TIME, pairs=checked)
            if self._never_overlap(a, b, out):
                continue
            checked += 1
            sink: list[Hazard] = []
            n = len(out.undecided)
            # Only whether they collide matters: the first hazard will do, asked exactly first.
            self._query_groups(a, b, extra, out, sink, detail=False, expect_hazard=True)
            if sink:
                return BarrierVerdict(bar, True, sink[0], pairs=checked)
            if len(out.undecided) > n:
                undecided = out.undecided[n].reason
                del out.undecided[n:]
                return BarrierVerdict(bar, None, reason=undecided, pairs=checked)
        return BarrierVerdict(bar, False, pairs=checked)

    def _unordered_by(self, h: Hazard, space: str) -> tuple[ir.Barrier, ...]:
        """The barriers between the hazard's accesses that do not order `space` (for threads of two
        warps, block barriers only: a warp barrier does not separate them at all)."""
        same_warp = h.witness.same_warp
        cut = cuts(self.cfg, same_warp, space)
        src = self.cfg.access_node[h.first.access.id]
        dst = self.cfg.access_node[h.second.access.id]
        # The witness's iterations fix how often the way from one access to the other goes around
        # each loop enclosing both, down to the first loop where they differ.
        steps: dict[int, int] = {}
        for la, lb in zip(h.first.loops, h.second.loops):
            if la != lb:
                break
            line = self.loop_line.get(la, la)
            ia, ib = h.witness.first.iterations.get(line), h.witness.second.iterations.get(line)
            if ia is None or ib is None or ib < ia:
                steps = {}
                break
            steps[la] = ib - ia
            if ib != ia:
                break
        barriers = [self.cfg.barrier_node[n] for n in barriers_between(self.cfg, src, dst, cut, steps)]
        if not barriers and steps:
            barriers = [self.cfg.barrier_node[n] for n in barriers_between(self.cfg, src, dst, cut)]
        return tuple(b for b in barriers if space not in b.spaces and (same_warp or b.scope != ir.WARP))
