"""Pairs of access instances of two threads that touch the same bytes with nothing ordering them.

For every pair of access sites on one buffer (at least one a write, not both atomic) that can
share a barrier interval, one solver query per hazard kind asks for two distinct threads of one
block, their loop iterations, and an overlapping byte. Cheap tests run first: sites on different
buffers, read-only pairs, and pairs no barrier interval contains never reach the solver.

On demand (`PairAnalysis.barrier_scope`), the same queries run for the pairs that barriers keep
apart in execution but not in memory: concurrent when only the barriers ordering the pair's memory
space cut intervals, not concurrent when every barrier does. Kernels whose barriers order every
space they access (CUDA) never compute that view.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

import z3

from analyzer import ir
from analyzer.analysis.addresses import contains_param, inner_index, peel_scale, radix_split, split, split_rows
from analyzer.analysis.concurrency import ANY, MANY, Cfg, agree, barriers_between, cuts, intervals_between
from analyzer.analysis.disjoint import Disjointness
from analyzer.analysis.queries import QueryCache
from analyzer.analysis.replay import Launch, Side, check_witness
from analyzer.analysis.solver import DIMS, LOOP_STATE, Encoder, as_int, num, truth
from analyzer.analysis.symbolic import AccessEvent, Evaluation

WAR, RAW, WAW = "write-after-read", "read-after-write", "write-after-write"
# Z3 resource units per second of budget: about what Z3 spends in a second on these queries here
# (measured on the corpus), so `--timeout 1` means about a second, on every run the same verdict.
RLIMIT_PER_SECOND = 3_000_000
# The share of a query's budget a question that only explains a finding gets (see `_refuted`).
EXPLAIN_SHARE = 100
# KERNELRACE_CROSS_CHECK=1: every pair the solver-free proof settles is also asked of the solver.
CROSS_CHECK = os.environ.get("KERNELRACE_CROSS_CHECK") == "1"
# Models asked for before a finding is reported with a witness that does not replay.
REPLAY_ATTEMPTS = 4
# Uninterpreted values the symbolic executor keeps per thread (the solver names them `...@t1`).
PER_THREAD = ("opaque", "undef:")
# What a disjunct requires of the two threads' warps (None: nothing).
DIFFERENT, SAME = "different", "same"
# The memory spaces a barrier can order (a barrier-scope view is computed per space).
ORDERED_SPACES = (ir.SHARED, ir.GLOBAL)

_tactic: tuple = (None, None)   # (context, tactic): one per Z3 context (see solver.fresh_context)


def _preprocessed_solver():
    global _tactic
    ctx = z3.main_ctx()
    if _tactic[0] is not ctx:
        _tactic = (ctx, z3.Then("simplify", "propagate-values", "solve-eqs", "smt", ctx=ctx))
    return _tactic[1].solver()


@dataclass
class Thread:
    index: tuple[int, int, int]
    warp: int
    iterations: dict[int, int]      # loop line -> iteration number


@dataclass
class Witness:
    first: Thread
    second: Thread
    block: tuple[int, int, int]
    element: int
    byte: int
    same_warp: bool
    params: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "first_thread": list(self.first.index), "second_thread": list(self.second.index),
            "block": list(self.block),
            "first_iterations": {str(k): v for k, v in self.first.iterations.items()},
            "second_iterations": {str(k): v for k, v in self.second.iterations.items()},
            "element": self.element, "byte_offset": self.byte,
            "first_warp": self.first.warp, "second_warp": self.second.warp,
            "same_warp": self.same_warp, "params": dict(self.params),
        }


@dataclass
class Hazard:
    kind: str
    first: AccessEvent      # the access one thread executes first
    second: AccessEvent
    witness: Witness
    benign: bool = False    # a write-write pair that provably stores the same value
    warp_synchronised: bool = False  # only warp-level barriers separate them
    warps: frozenset = frozenset()   # {"same", "different"}: which warp placements can collide
    # Buffers whose contents decide the collision: the addresses meet only if two different
    # elements of these hold equal values (indirect indexing through a map the analysis cannot see).
    data_dependent: tuple[str, ...] = ()
    # Loop-carried values (and the lines of the loops that update them) the collision needs to
    # repeat between two iterations: kept as unknown functions of the iteration, they may.
    loop_state: tuple[tuple[str, int], ...] = ()
    # ... or else needs particular contents of these buffers (no severity change: see races).
    loop_state_or_data: tuple[str, ...] = ()
    # For barrier-scope hazards: the barriers that separate the two accesses in execution but do
    # not order the memory space of their buffer.
    unordered_by: tuple[ir.Barrier, ...] = ()
    # Why the witness does not replay on concrete values (None: it does, or was not asked to).
    replay_failure: str | None = None


@dataclass
class Undecided:
    first: AccessEvent
    second: AccessEvent
    reason: str


@dataclass
class BarrierVerdict:
    """Whether a barrier is needed: True with the race its removal exposes, False when removing
    it lets no two accesses collide, None when that cannot be shown (`reason`)."""
    barrier: ir.Barrier
    needed: bool | None
    hazard: Hazard | None = None
    reason: str | None = None
    pairs: int = 0          # access pairs that could collide only across this barrier


@dataclass
class PairAnalysis:
    hazards: list[Hazard] = field(default_factory=list)
    undecided: list[Undecided] = field(default_factory=list)
    queries: int = 0
    # The race pass's checker, with its encodings, barrier intervals, settled pairs and deadline:
    # the passes on demand (barrier scope, redundant barriers) continue from it.
    checker: "PairChecker | None" = field(default=None, repr=False)
    _scope_hazards: list[Hazard] | None = field(default=None, repr=False)
    _barrier_verdicts: list[BarrierVerdict] | None = field(default=None, repr=False)

    def barrier_verdicts(self) -> list[BarrierVerdict]:
        """For every barrier statement, whether a race appears without it (computed on first use,
        like `barrier_scope`, within the kernel's time limit)."""
        if self._barrier_verdicts is None:
            self._barrier_verdicts = [] if self.checker is None else self.checker.run_redundant(self)
        return self._barrier_verdicts

    def barrier_scope(self) -> list[Hazard]:
        """Hazards between accesses that barriers order in execution but not in memory: every
        barrier between them leaves out their memory space. Computed on first use, by
        the race pass's checker; pairs it cannot decide join `undecided`."""
        if self._scope_hazards is None:
            self._scope_hazards = [] if self.checker is None else self.checker.run_scope(self)
        return self._scope_hazards


def _first(pa, pb, ea: AccessEvent, eb: AccessEvent) -> str:
    """'a', 'b' or 'either': which instance one thread would execute first."""
    ka = [(p.loop, p.relative, p.k) for p in pa]
    kb = [(p.loop, p.relative, p.k) for p in pb]
    for (la, ra, xa), (lb, rb, xb) in zip(ka, kb):
        if la != lb or ra != rb:
            return "either"
        if xa >= MANY or xb >= MANY:
            if xa < MANY and xb >= MANY and xb != ANY:
                return "a"
            if xb < MANY and xa >= MANY and xa != ANY:
                return "b"
            return "either"
        if xa != xb:
            return "a" if xa < xb else "b"
    if ea.access is eb.access:
        return "same"
    return "a" if ea.order < eb.order else "b"


def _kind(first: ir.Access, second: ir.Access) -> str | None:
    if first.is_write and second.is_write:
        return WAW
    if first.is_write:
        return RAW
    if second.is_write:
        return WAR
    return None


class PairChecker:
    def __init__(self, kernel: ir.Kernel, ev: Evaluation, cfg: Cfg, timeout_ms: int = 10_000,
                 strict: bool = False, cache: QueryCache | None = None, detail: bool = True):
        self.kernel = kernel
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
        # The clock is only a backstop, well above the resource budget, so that a loaded machine
        # does not change verdicts.
        self.clock_ms = 5 * max(timeout_ms, 100)
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

    def _encoders(self) -> None:
        if self.exact is None:
            self.exact = Encoder(self.kernel, self.kernel.warp_size, exact=True)
            self.fast = Encoder(self.kernel, self.kernel.warp_size, exact=False)
            self.enc = self.exact

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

    @staticmethod
    def _pairable(a: AccessEvent, b: AccessEvent) -> bool:
        """At least one a write, not both atomic."""
        return (a.access.is_write or b.access.is_write) and not (a.access.atomic and b.access.atomic)

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

    def run(self, deadline: float | None = None) -> PairAnalysis:
        self._encoders()
        self.deadline = deadline
        out = PairAnalysis(checker=self)
        for _, events in self._by_buffer():
            self._check_buffer(events, out)
        return out

    def _out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def _check_buffer(self, events: list[AccessEvent], out: PairAnalysis) -> None:
        for i in range(len(events)):
            for a, b in self._partners(events, i):
                if self._out_of_time():
                    # Out of time: what is left of this buffer is undecided, never clean. One
                    # finding stands for them all (a long kernel has millions of pairs).
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

    def _combos(self, a: AccessEvent, b: AccessEvent, reach):
        ra = reach.get(self.cfg.access_node[a.access.id], [])
        rb = reach.get(self.cfg.access_node[b.access.id], [])
        by_start = defaultdict(list)
        for r in rb:
            by_start[r.start].append(r)
        for x in ra:
            for y in by_start.get(x.start, ()):
                if agree(x.decisions, y.decisions, self.uniform):
                    yield x.start, x.pos, y.pos, self._path(x.decisions), self._path(y.decisions)

    def _path(self, decisions) -> frozenset:
        """The branches a path took on conditions the executor knows as terms (outside loops)."""
        terms = self.ev.condition_terms
        return frozenset((key, br) for key, _, br in decisions if key in terms)

    def _entries(self, a: AccessEvent, b: AccessEvent, block_reach, warp_reach):
        """The interval shapes (positions, path decisions) in which a and b can run concurrently,
        each with what it needs of the warps: DIFFERENT when only warp barriers separate."""
        combos = list(self._combos(a, b, block_reach))
        warp_combos = None
        if combos and warp_reach is not block_reach:
            warp_combos = {(s, pa, pb) for s, pa, pb, _, _ in self._combos(a, b, warp_reach)}
        return [(pa, pb, DIFFERENT if warp_combos is not None and (s, pa, pb) not in warp_combos else None, da, db)
                for s, pa, pb, da, db in combos]

    def check_pair(self, a: AccessEvent, b: AccessEvent, out: PairAnalysis) -> bool:
        """Query the pair's races; True when the solver found a collision or could not decide."""
        entries = self._entries(a, b, self.block_reach, self.warp_reach)
        if not entries:
            return False
        # Most pairs never touch the same bytes at all (measured on TVM's kernels: 9 in 10): one
        # query without interval shapes settles them, for the passes on demand too.
        if self._never_overlap(a, b, out):
            return False
        return self._query_groups(a, b, entries, out, out.hazards, self.detail)

    def _query_groups(self, a, b, entries, out: PairAnalysis, sink: list, detail: bool) -> bool:
        # Interval starts only matter through the positions they give: one disjunct per distinct
        # (positions, order, warps) shape, however many barriers share it.
        groups: dict[str, dict] = defaultdict(dict)
        for pa, pb, warps, da, db in entries:
            who = _first(pa, pb, a, b)
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
        for who in ("a", "b", "same"):
            if who not in groups:
                continue
            first, second = (a, b) if who in ("a", "same") else (b, a)
            kind = _kind(first.access, second.access)
            if kind is None:
                continue
            hit |= self.query(kind, a, b, first, list(groups[who]), out, sink, detail)
        return hit

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
        normal: dict[tuple, str | None] = {}
        for pa, pb, warps, da, db in self._entries(a, b, *(base or (self.block_reach, self.warp_reach))):
            key = (pa, pb, da, db)
            normal[key] = None if key in normal and normal[key] is None else warps
        out = []
        for pa, pb, warps, da, db in filtered:
            key = (pa, pb, da, db)
            if key not in normal:
                out.append((pa, pb, warps, da, db))      # a block barrier separates them
            elif normal[key] == DIFFERENT and warps is None:
                out.append((pa, pb, SAME, da, db))       # a warp barrier separates one warp's threads
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
        the new shapes."""
        undecided, checked = None, 0
        # Only accesses whose barrier intervals change can gain a partner: those in the intervals
        # the barrier ended or began.
        moved = set()
        for new, old in zip(views, base):
            moved |= {self.cfg.node_access[n].id for n in new.keys() | old.keys()
                      if new.get(n) != old.get(n) and n in self.cfg.node_access}
        for a, b in self._pairs_touching(moved):
            if self._out_of_time():
                return BarrierVerdict(bar, None, reason=OUT_OF_TIME, pairs=checked)
            extra = self._extra_entries(a, b, *views, base)
            if not extra:
                continue
            racing = (a.access.id, b.access.id) in self._hit
            if not racing and self._never_overlap(a, b, out):
                continue
            checked += 1
            if racing:
                undecided = undecided or (f"the {a.access.kind} at line {a.access.span.line} and the "
                                          f"{b.access.kind} at line {b.access.span.line} it orders already race")
                continue
            sink: list[Hazard] = []
            n = len(out.undecided)
            self._query_groups(a, b, extra, out, sink, detail=False)   # only whether they collide matters
            if sink:
                return BarrierVerdict(bar, True, sink[0], pairs=checked)
            if len(out.undecided) > n:
                undecided = undecided or out.undecided[n].reason
                del out.undecided[n:]
        return BarrierVerdict(bar, None if undecided else False, reason=undecided, pairs=checked)

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
        return tuple(b for b in barriers if space not in b.spaces and (same_warp or b.scope == ir.BLOCK))

    def _never_overlap(self, a: AccessEvent, b: AccessEvent, out: PairAnalysis) -> bool:
        """Cheap and once per pair: can two threads' instances of a and b touch the same bytes at
        all, in any iterations and whatever orders them? If not, no view of the barriers matters."""
        key = ("apart", a.access.id, b.access.id)
        hit = self._cache.get(key)
        if hit is None:
            # The solver-free proof first: it settles most pairs (see disjoint.py).
            proved = self.disjoint.apart(a, b)
            if proved and CROSS_CHECK:
                self._cross_check(a, b, out)
            hit = self._cache[key] = proved or self._apart_by_solver(a, b, out)
            if hit:
                self._apart_pairs.append((a, b))
        return hit

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
        res, _ = self._solve(self._any_overlap(self.fast, a, b), out)
        return res == z3.unsat

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
            for k, dec in ((1, da), (2, db)):
                for key, br in dec:
                    c = truth(enc.term(self.ev.condition_terms[key], k))
                    rel.append(c if br else z3.Not(c))
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
        return cs + enc.needed(), alts, (off1, off2)

    def _distinct(self, enc):
        key = (id(enc), "distinct")
        if key not in self._cache:
            self._cache[key] = z3.Or(*[enc.tid[1][d] != enc.tid[2][d] for d in DIMS])
        return self._cache[key]

    def _side(self, e: AccessEvent, k: int) -> list:
        """In-bounds facts and the guard of one access by thread k (built once per encoder)."""
        enc = self.enc
        key = (id(enc), "side", e.access.id, k, self.bounded)
        hit = self._cache.get(key)
        if hit is None:
            off = enc.term(e.offset, k)
            hit = self._in_bounds(e.access, e.offset, off, k) + [truth(enc.term(g, k)) for g in e.guard]
            self._cache[key] = hit
        else:
            # replay the terms so that their side constraints are collected for this query
            enc.term(e.offset, k)
            for g in e.guard:
                enc.term(g, k)
            self._replay_bounds(e, k)
        return hit

    def _solve(self, constraints, out: PairAnalysis, live: bool = False):
        """The verdict and the solver (or the remembered answer, which has its model and reason);
        `live` asks for a solver of a satisfiable query, to ask it more."""
        key = None
        if self.cache is not None:
            key = self.cache.key(constraints, self.rlimit)
            hit = self.cache.get(key)
            if hit is not None and not (live and hit.result == z3.sat):
                return hit.result, hit
        # Preprocessing (simplify, propagate values, solve equalities) before the SMT core: the
        # queries are mostly definitions of indices, which this collapses (2-3x faster here).
        solver = _preprocessed_solver()
        # A resource limit, not only a clock: the same kernel gets the same verdicts on every run
        # and every machine. The clock stays as a backstop.
        solver.set("rlimit", self.rlimit)
        solver.set("timeout", self.clock_ms)
        # Asserted through the C API: Solver.add re-checks and converts each constraint in Python,
        # which cost more than many of these queries take to solve.
        ctx, handle = solver.ctx.ref(), solver.solver
        for c in constraints:
            z3.Z3_solver_assert(ctx, handle, c.as_ast())
        out.queries += 1
        res = solver.check()
        if key is not None:
            self.cache.put(key, constraints, res, solver)
        return res, solver

    def query(self, kind, a, b, first, combos, out: PairAnalysis, sink: list, detail: bool) -> bool:
        """Ask for a collision; a hazard goes to `sink`. True when the accesses collide (benign
        same-value writes included) or the solver could not decide."""
        second = b if first is a else a
        # Cheap first: products read as uninterpreted functions; only a hit is re-checked exactly.
        fast, _, _ = self._constraints(self.fast, a, b, combos)
        valued = kind == WAW and a.value is not None and b.value is not None
        benign = False
        res, fast_solver = self._solve(fast, out)
        if res == z3.unsat:
            return False
        if res == z3.unknown:
            # The over-approximation is already out of budget; the exact query would be harder.
            self._undecided(first, second, fast_solver, out)
            return True
        if valued:
            # Same value stored by both threads? Then the pair is benign, and without --strict
            # it needs no exact query at all.
            self.enc = self.fast
            res, fast_solver = self._solve(fast + [self._differ(a, b)], out)
            if res == z3.unsat:
                benign = True
                if not self.strict:
                    return True
            elif res == z3.unknown:
                # Out of budget with the values; without them the query is no easier to decide.
                self._undecided(first, second, fast_solver, out)
                return True
        exact, alts, (off1, off2) = self._constraints(self.exact, a, b, combos)
        if valued and not benign:
            exact.append(self._differ(a, b))
        res, solver = self._solve(exact, out, live=detail)
        if res == z3.unsat and valued and not benign:
            # They collide only where they store equal values: benign.
            benign = True
            if not self.strict:
                return True
            exact.pop()
            res, solver = self._solve(exact, out, live=detail)
        if res == z3.unknown:
            self._undecided(first, second, solver, out)
            return True
        if res == z3.unsat:
            return False
        self.enc = self.exact
        model = solver.model()
        data_dependent, warps, loop_state, or_data = (), frozenset(), (), ()
        replay = None
        if detail:
            # A race's data dependence decides its severity; a barrier-scope finding is a warning
            # whatever it rests on, so there the question only explains, on a smaller budget.
            data_dependent = self._data_dependent(solver, model, explain=sink is not out.hazards)
            if not data_dependent:
                loop_state, or_data = self._loop_state_repeats(solver, model)
            solver.push()    # the readability wishes go if the witness must be asked for again
            model, warps = self._readable(solver, model)
            space = a.access.space if sink is not out.hazards else None
            model, replay = self._replayed(solver, model, a, b, off1, off2, space, out)
        warp_sync = all(c[3] == DIFFERENT for alt, c in zip(alts, combos)
                        if z3.is_true(model.eval(alt, model_completion=True)))
        wit = self._witness(model, a, b, off1, off2)
        if first is b:
            wit.first, wit.second = wit.second, wit.first
        sink.append(Hazard(kind, first, second, wit, benign, warp_sync, warps, data_dependent, loop_state, or_data,
                           replay_failure=replay))
        return True

    def _replayed(self, solver, model, a, b, off1, off2, space, out: PairAnalysis):
        """A model whose witness replays (see replay.py), and None; or, when none is found within
        REPLAY_ATTEMPTS models, the first model and why its witness does not replay. Each failed
        model is blocked (its threads, block, iterations and launch) before the solver is asked
        again. `solver` carries one pushed scope (the readability wishes), popped here."""
        reason = self._replay_failure(model, a, b, off1, off2, space)
        solver.pop()
        if reason is None:
            return model, None
        first = (model, reason)
        solver.push()    # the blocked models go too: the solver may be asked this query again
        try:
            for _ in range(REPLAY_ATTEMPTS - 1):
                if self._out_of_time():
                    break
                seen = [x for x in self._witness_vars(a, b) if not z3.is_int_value(x)]
                solver.add(z3.Or(*[x != model.eval(x, model_completion=True) for x in seen]))
                out.queries += 1
                if not seen or solver.check() != z3.sat:
                    break
                model = solver.model()
                if self._replay_failure(model, a, b, off1, off2, space) is None:
                    return model, None
        finally:
            solver.pop()
        return first

    def _witness_vars(self, a: AccessEvent, b: AccessEvent) -> list:
        enc = self.enc
        xs = [enc.tid[k][d] for k in (1, 2) for d in DIMS] + [enc.bid[d] for d in DIMS]
        xs += [enc.bdim[d] for d in DIMS] + [enc.gdim[d] for d in DIMS]
        xs += [enc.iteration(1, l) for l in a.loops] + [enc.iteration(2, l) for l in b.loops]
        xs += [v for n, v in sorted(enc.shared.items()) if n in self.kernel.params]
        return xs

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
                             sides[0], sides[1], max(o1, o2), space)

    def _undecided(self, first, second, solver, out: PairAnalysis) -> None:
        out.undecided.append(Undecided(first, second, "the solver reached its limit "
                                       f"({self.timeout_ms / 1000:g} s budget, --timeout): "
                                       f"{solver.reason_unknown()}"))

    def _differ(self, a: AccessEvent, b: AccessEvent):
        enc = self.enc
        return as_int(enc.term(a.value, 1)) != as_int(enc.term(b.value, 2))

    def _data_dependent(self, solver, model, explain: bool = False) -> tuple[str, ...]:
        """Does the race need particular memory contents? Ask again with every value loaded from
        memory strictly increasing in its address, as an index map that is a sorted permutation or
        a cumulative distribution is, and each load inside its buffer's declared shape: if the
        race goes away, it depends on the data."""
        ordered, bufs = self._loads_ordered()
        return bufs if ordered and self._refuted(solver, ordered, explain, model) else ()

    def _refuted(self, solver, assumptions, explain: bool = False, model=None) -> bool:
        """Is the solver's (satisfiable) query unsatisfiable once `assumptions` hold too? A
        question asked only to explain a finding gets a hundredth of the budget (the refutations
        are hard where loop state has floors, and a finding needs no explanation to stand), and
        one the solver cannot settle in it counts as no: the finding keeps verdict and severity.
        When the query's `model` already meets the assumptions, the answer is no without asking."""
        if model is not None and all(z3.is_true(model.eval(a, model_completion=True)) for a in assumptions):
            return False
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

    def _loads_ordered(self) -> tuple[list, tuple[str, ...]]:
        """The assumptions of `_data_dependent` for the last query, and the buffers they are about:
        buffers the kernel only reads (an index map; what the kernel itself writes, shared memory
        above all, holds whatever it stored, in order or not)."""
        apps = [(b, x) for x in self.exact.last_loads if (b := self._load_buffer(x)) not in self._written]
        pairs = [(x, y) for i, (bx, x) in enumerate(apps) for by, y in apps[i + 1:] if bx and bx == by]
        if not pairs:
            return [], ()
        ordered = [z3.And(z3.Implies(x.arg(0) < y.arg(0), x < y), z3.Implies(y.arg(0) < x.arg(0), y < x),
                          z3.Implies(x.arg(0) == y.arg(0), x == y))
                   for x, y in pairs]
        bufs = tuple(sorted({self._load_buffer(x) for pair in pairs for x in pair}))
        return ordered + self._load_bounds(x for _, x in apps), bufs

    @cached_property
    def _written(self) -> set[str]:
        return {e.access.buffer for e in self.ev.accesses.values() if e.access.is_write}

    def _loop_state_repeats(self, solver, model) -> tuple[tuple[tuple[str, int], ...], tuple[str, ...]]:
        """Does the collision need loop state to hold the same values in two iterations? For each
        loop-carried value the query reads, ask again with it different wherever the iterations
        it is read in differ; if no such value is needed so, ask again with the loads ordered as
        `_data_dependent` orders them. Returns the values the collision needs to repeat (with the line of the loop
        that updates each), and the buffers whose contents are the other way to collide. A
        persistent kernel's tile counters never repeat; a double buffer's `stage ^= 1` does:
        neither verdict nor severity changes, the note says what the collision rests on."""
        by_fn: dict[str, list] = defaultdict(list)
        for x in self.exact.last_state:
            by_fn[x.decl().name()].append(x)
        # Injective in the iteration: the state differs wherever the iterations do (a race within
        # one iteration reads one state value and needs nothing to repeat).
        differ = {name: z3.And(*[z3.Or(x != y, z3.And(*[p == q for p, q in zip(x.children(), y.children())]))
                                 for i, x in enumerate(apps) for y in apps[i + 1:]])
                  for name, apps in by_fn.items() if len(apps) > 1}
        needed = [name for name, d in differ.items() if self._refuted(solver, [d], True, model)]
        bufs: tuple[str, ...] = ()
        if not needed and differ:
            ordered, bufs = self._loads_ordered()
            if ordered:
                needed = [name for name, d in differ.items() if self._refuted(solver, [d] + ordered, True, model)]
        found = {(m["var"], self.loop_line.get(int(m["loop"]), 0))
                 for name in needed if (m := LOOP_STATE.match(name))}
        return tuple(sorted(found)), (bufs if found else ())

    def _load_bounds(self, apps) -> list:
        """In-bounds facts of the loads whose values the addresses use."""
        facts = []
        for x in apps:
            sym, k = self.enc.loads.get(x.get_id(), (None, 0))
            ev = self._load_event(x)
            if sym is not None and ev is not None:
                facts += self._in_bounds(ev.access, sym.args[0], x.arg(0), k)
        return facts

    def _load_event(self, app) -> AccessEvent | None:
        """The access site a load function reads (`load17` is site 17)."""
        site = app.decl().name()[4:]
        return self.ev.accesses.get(int(site)) if site.isdigit() else None

    def _load_buffer(self, app) -> str | None:
        ev = self._load_event(app)
        return ev.access.buffer if ev is not None else None

    def _readable(self, solver, model):
        """Prefer a witness that is easy to read: threads in two warps, block 0, small parameters.
        Also which warp placements can collide. A wish the model already meets costs no query."""
        enc = self.exact

        def holds(cs) -> bool:
            return all(z3.is_true(model.eval(c, model_completion=True)) for c in cs)

        warps = set()
        for same in (True, False):
            c = enc.warp(1) == enc.warp(2) if same else enc.warp(1) != enc.warp(2)
            if holds([c]):
                warps.add("same" if same else "different")
                continue
            solver.push()
            solver.add(c)
            if solver.check() == z3.sat:
                warps.add("same" if same else "different")
                if not same:    # two warps: the first wish below, met
                    model = solver.model()
                    solver.pop()
                    solver.add(c)
                    continue
            solver.pop()
        wishes = [[enc.warp(1) != enc.warp(2)], [enc.bid[d] == 0 for d in DIMS]]
        small = [v for n, v in sorted(enc.shared.items()) if not n.startswith(("sync.", "load", "opaque"))
                 and z3.is_int(v)]
        wishes.append([v <= 3 for v in enc.iter_vars.values()])
        wishes.append([z3.And(v >= 0, v <= 16) for v in small])
        wishes.append([z3.And(v >= 0, v <= 4096) for v in small])
        solver.set("timeout", max(self.clock_ms // 10, 200))
        solver.set("rlimit", max(self.rlimit // 10, 200_000))
        for wish in wishes:
            if not wish:
                continue
            if holds(wish):
                solver.add(*wish)
                continue
            solver.push()
            solver.add(*wish)
            if solver.check() == z3.sat:
                model = solver.model()
                solver.pop()
                solver.add(*wish)
            else:
                solver.pop()
        return model, frozenset(warps)

    def _replay_bounds(self, e: AccessEvent, k: int) -> None:
        buf = self.kernel.buffers.get(e.access.buffer)
        if buf is not None and (buf.strides or buf.param_row):
            scale, index = peel_scale(e.offset)
            if scale == buf.elem_size:
                for stride in buf.strides:
                    self.enc.term(self._inner(index, stride, buf.offset_param), k)
                column = self._param_column(index, buf)
                if column is not None:
                    self.enc.term(column, k)

    def _inner(self, index, stride, offset_param):
        key = ("inner", id(index), stride)
        hit = self._cache.get(key)
        if hit is None or hit[0] is not index:
            hit = self._cache[key] = (index, inner_index(index, stride, offset_param))
        return hit[1]

    def _param_column(self, index, buf: ir.Buffer):
        """The index within its row when the row length is a parameter (`buf.param_row`): the
        part of `index == row * length + column` not multiplied by the parameter, the buffer's
        offset excluded. None when the index does not have that shape."""
        if buf.param_row is None:
            return None
        key = ("column", id(index), buf.name)
        hit = self._cache.get(key)
        if hit is None or hit[0] is not index:
            column = None
            parts = split(index, buf.param_row[0])
            if parts is not None and not contains_param(parts[1], buf.param_row[0]):
                column = parts[1]
                if buf.offset_param and contains_param(column, buf.offset_param):
                    column = ir.BinOp("-", column, ir.Param(buf.offset_param))
            hit = self._cache[key] = (index, column)
        return hit[1]

    def _in_bounds(self, access: ir.Access, offset, off, k: int) -> list:
        """Accesses stay inside their buffer: from its base, within a fixed-size array, and, where
        the declared shape is known, each inner index within its dimension (`offset` the IR term,
        `off` its encoding for thread k)."""
        buf = self.kernel.buffers.get(access.buffer)
        if buf is None or not buf.bounded or not self.bounded:
            return []   # a raw pointer: no bounds, not even its base (it may point into an array)
        facts = [off >= 0]
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
            return [o1 < o2 + num(wb), o2 < o1 + num(wa)]
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
                r1, c1 = split_rows(i1, stride, buf.offset_param)
                r2, c2 = split_rows(i2, stride, buf.offset_param)
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
        return out

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
        params = {}
        for name in self.kernel.params:
            if name in enc.shared:
                params[name] = val(enc.shared[name])
        return Witness(first, second, tuple(val(enc.bid[d]) for d in DIMS), elem, byte,
                       first.warp == second.warp, params)


OUT_OF_TIME = "the kernel's time limit (--kernel-timeout) ran out"
KERNEL_LIMIT = ("the kernel's time limit (--kernel-timeout) ran out before this pair and the rest of this "
                "buffer's pairs (at most {n}) were checked")


def analyse_pairs(kernel: ir.Kernel, ev: Evaluation, cfg: Cfg, timeout_ms: int = 10_000,
                  strict: bool = False, deadline: float | None = None, cache: QueryCache | None = None,
                  detail: bool = True) -> PairAnalysis:
    """Every pair of accesses two threads may run concurrently, checked; `deadline` (a
    time.monotonic() value) bounds the kernel's wall-clock time, after which pairs are undecided.
    Analyses sharing `cache` never ask the solver the same query twice; without `detail`, witnesses
    are the solver's first and hazards are not classified (data dependence, warps)."""
    return PairChecker(kernel, ev, cfg, timeout_ms, strict, cache=cache, detail=detail).run(deadline)


__all__ = ["Hazard", "Undecided", "Witness", "analyse_pairs", "WAR", "RAW", "WAW"]
