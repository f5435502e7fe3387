"""Which access instances two threads can execute between the same pair of barriers.

Barriers are aligned (a barrier reached divergently is its own finding), so two threads are in the
same barrier interval exactly when both left the same synchronisation point S (kernel entry or a
barrier) and reached their accesses without crossing another barrier. We walk the control-flow
graph from each S, counting how many times each loop's back edge is crossed on the way; those
counts become the loop-iteration relation of the two threads' accesses: same iteration, one
iteration apart, or unbounded when a loop body has a barrier-free path around it.

Which barriers end an interval is a parameter. The race rules cut at every block barrier (and at
warp barriers for threads of one warp): the threads' execution order. Cutting only at the barriers
whose memory spaces include one space S gives the order of the accesses to S; a pair of accesses
that shares an interval in that view but not in the execution view is separated by a barrier that
does not order its memory (`threadgroup_barrier(mem_flags::mem_threadgroup)` and device memory).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import NamedTuple

from analyzer import ir
from analyzer.analysis.decision.memory_guard import checkpoint
from analyzer.analysis.execution.terms import fold_constant

MANY = 2  # back-edge crossings are counted 0, 1, or "2 or more"
ANY = 3   # after compression: any number of crossings


class LoopPos(NamedTuple):
    """The iteration of one loop where an access instance sits, relative to the sync point.
    (A named tuple: these are hashed by the million in the reachability walk.)"""
    loop: int
    relative: bool   # True: iteration = (iteration of S) + k; False: iteration = k (entered after S)
    k: int           # 0, 1, or MANY meaning k >= MANY


@dataclass
class Cfg:
    succ: dict[int, list[tuple[int, tuple | None]]] = field(default_factory=dict)
    access_node: dict[int, int] = field(default_factory=dict)     # access id -> node
    node_access: dict[int, ir.Access] = field(default_factory=dict)
    barrier_node: dict[int, ir.Barrier] = field(default_factory=dict)
    node_loops: dict[int, tuple[int, ...]] = field(default_factory=dict)
    entry: int = 0
    # Recorded branches (uniform conditions whose branches shape intervals): the barrier nodes
    # inside each, and which contain a jump (break, continue, return).
    branch_barriers: dict[int, frozenset[int]] = field(default_factory=dict)
    branch_jumps: set[int] = field(default_factory=set)
    branch_loops: dict[int, tuple[int, ...]] = field(default_factory=dict)   # the loops around the branch
    loop_repeats: set[int] = field(default_factory=set)   # loops whose back edge can be taken
    # The walks from each interval start, shared by the views of many cut sets (`intervals_between`).
    walks: dict[tuple, list] = field(default_factory=dict, repr=False, compare=False)
    # Walks that outgrew WALK_STATES and were redone coarsely (see `intervals_between`).
    coarse_walks: int = 0


# A frontier wider than this after a branch goes through one join node.
JOIN_WIDTH = 4


class _Builder:
    def __init__(self, tracked: set[int]) -> None:
        self.uniform = tracked      # ids of Ifs and Loops whose branch direction paths record
        self.cfg = Cfg()
        self.ids = itertools.count()
        self.loops: list[int] = []
        self.exit = self.node()

    def _record(self, cond: int, lo: int, stmts, loops: tuple[int, ...]) -> None:
        """A recorded branch's barriers: the barrier nodes made since node `lo`, its statements'."""
        self.cfg.branch_barriers[cond] = frozenset(n for n in self.cfg.barrier_node if n >= lo)
        self.cfg.branch_loops[cond] = loops
        if any(isinstance(x, (ir.Break, ir.Continue, ir.Return)) for x in ir.walk_stmts(stmts, into_loops=True)):
            self.cfg.branch_jumps.add(cond)

    def node(self) -> int:
        n = next(self.ids)
        self.cfg.succ[n] = []
        self.cfg.node_loops[n] = tuple(getattr(self, "loops", ()))
        return n

    def edge(self, a: int, b: int, label=None) -> None:
        self.cfg.succ[a].append((b, label))

    def join(self, cur: list[int]) -> list[int]:
        """The frontier after a branch: each node once, and one join node for a wide one. A branch
        with nothing to record returns both arms' frontiers; kept as lists, every such branch in a
        row would double the frontier (and the edges to the next node)."""
        cur = list(dict.fromkeys(cur))
        if len(cur) <= JOIN_WIDTH:
            return cur
        n = self.node()
        for c in cur:
            self.edge(c, n)
        return [n]

    def reads(self, e, cur: list[int]) -> list[int]:
        for acc in reads_in(e):
            cur = self.access(acc, cur)
        return cur

    def access(self, acc: ir.Access, cur: list[int]) -> list[int]:
        n = self.node()
        self.cfg.access_node[acc.id] = n
        self.cfg.node_access[n] = acc
        for c in cur:
            self.edge(c, n)
        return [n]

    def block(self, stmts, cur: list[int], loop_ctx) -> list[int]:
        for s in stmts:
            cur = self.stmt(s, cur, loop_ctx)
        return cur

    def stmt(self, s, cur: list[int], loop_ctx) -> list[int]:
        checkpoint()
        if isinstance(s, ir.Assign):
            return self.reads(s.value, cur)
        if isinstance(s, ir.Eval):
            return self.reads(s.value, cur)
        if isinstance(s, ir.MemOp):
            cur = self.reads(s.access.offset, cur)
            if s.access.value is not None:
                cur = self.reads(s.access.value, cur)
            return self.access(s.access, cur)
        if isinstance(s, ir.Barrier):
            n = self.node()
            self.cfg.barrier_node[n] = s
            for c in cur:
                self.edge(c, n)
            return [n]
        if isinstance(s, ir.If):
            cur = self.reads(s.cond, cur)
            taken = _constant(s.cond)
            if taken is not None:
                # `if (6 > 5)`: no thread takes the other branch, nor passes its barriers.
                return self.block(s.then if taken else s.orelse, cur, loop_ctx)
            if id(s) in self.uniform and (_shapes_intervals(s.then) or _shapes_intervals(s.orelse)):
                # Remember which branch a path took: for a uniform condition two threads' paths
                # must agree, and outside loops the branch's condition holds for that thread.
                t, f = self.node(), self.node()
                for c in cur:
                    self.edge(c, t, ("branch", id(s), 1))
                    self.edge(c, f, ("branch", id(s), 0))
                lo = len(self.cfg.succ)
                out = self.join(self.block(s.then, [t], loop_ctx) + self.block(s.orelse, [f], loop_ctx))
                self._record(id(s), lo, s.then + s.orelse, tuple(self.loops))
                return out
            return self.join(self.block(s.then, cur, loop_ctx) + self.block(s.orelse, cur, loop_ctx))
        if isinstance(s, ir.Loop):
            recorded = None
            head = self.node()
            for c in cur:
                self.edge(c, head, ("enter", s.id))
            self.loops.append(s.id)
            latch = self.node()
            exit_join = []
            body_start = [head]
            if s.cond is not None:
                body_start = self.reads(s.cond, body_start)
                if id(s) in self.uniform and _shapes_intervals(s.body):
                    stay, leave = self.node(), self.node()
                    for c in body_start:
                        self.edge(c, stay, ("branch", id(s), 1))
                        self.edge(c, leave, ("branch", id(s), 0))
                    body_start = [stay]
                    exit_join.append(leave)
                    recorded = id(s)
                else:
                    exit_join.extend(body_start)
            ctx = {"latch": latch, "breaks": [], "loop": s.id}
            lo = len(self.cfg.succ)
            end = self.block(s.body, body_start, ctx)
            for c in end:
                self.edge(c, latch)
            upd_end = self.block(s.update, [latch], ctx)
            for c in upd_end:
                self.edge(c, head, ("back", s.id))
            self.loops.pop()
            if recorded is not None:
                self._record(recorded, lo, s.body + s.update, tuple(self.loops) + (s.id,))
            if end or ctx.get("continued"):
                self.cfg.loop_repeats.add(s.id)
            out = self.node()
            for c in dict.fromkeys(exit_join + ctx["breaks"]):
                self.edge(c, out, ("exit", s.id))
            return [out]
        if isinstance(s, ir.Break):
            if loop_ctx is not None:
                loop_ctx["breaks"].extend(cur)
            return []
        if isinstance(s, ir.Continue):
            if loop_ctx is not None:
                for c in cur:
                    self.edge(c, loop_ctx["latch"])
                loop_ctx["continued"] = True
            return []
        if isinstance(s, ir.Return):
            for c in cur:
                self.edge(c, self.exit)
            return []
        raise TypeError(f"unknown IR statement {s!r}")


def _constant(e) -> int | None:
    """The value of an expression of constants only (C's integer semantics), or None."""
    if isinstance(e, ir.Const) and isinstance(e.value, int):
        return e.value
    if isinstance(e, ir.UnOp):
        a = _constant(e.a)
        if a is None:
            return None
        return {"-": -a, "!": int(not a), "~": ~a}.get(e.op)
    if isinstance(e, ir.BinOp):
        a, b = _constant(e.a), _constant(e.b)
        if a is None or b is None:
            return None
        if e.op in ("&&", "||"):
            return int(bool(a) and bool(b)) if e.op == "&&" else int(bool(a) or bool(b))
        return fold_constant(e.op, a, b)
    return None


def reads_in(e):
    """Memory reads of an expression, in evaluation order (an index is read before its access)."""
    if isinstance(e, ir.Read):
        yield from reads_in(e.access.offset)
        yield e.access
    else:
        for x in ir.operands(e):
            yield from reads_in(x)


def _shapes_intervals(stmts) -> bool:
    """Whether a branch holds a barrier or a jump, so that taking it changes barrier intervals."""
    for s in stmts:
        if isinstance(s, (ir.Barrier, ir.Break, ir.Continue, ir.Return)):
            return True
        if isinstance(s, ir.If) and (_shapes_intervals(s.then) or _shapes_intervals(s.orelse)):
            return True
        if isinstance(s, ir.Loop) and any(isinstance(x, ir.Barrier) for x in ir.walk_stmts(s.body)):
            return True
    return False


def build_cfg(kernel: ir.Kernel, uniform: set[int] | None = None) -> Cfg:
    b = _Builder(uniform or set())
    entry = b.node()
    b.cfg.entry = entry
    end = b.block(kernel.body, [entry], None)
    for c in end:
        b.edge(c, b.exit)
    return b.cfg


Positions = tuple[LoopPos, ...]
# Branch decisions on uniform conditions: (condition id, loop positions when taken, branch).
Decisions = frozenset


@dataclass(frozen=True)
class Reach:
    start: int
    pos: Positions
    decisions: Decisions = frozenset()


def agreeing(a: Decisions, uniform: set[int]):
    """Whether a path agrees with `a`: on every uniform condition both met in the same instance,
    both took the same branch. A test per path `a`, asked of many: built once."""
    taken = {(key, pos): br for key, pos, br in a if key in uniform and all(p.k < MANY for p in pos)}
    if not taken:
        return lambda b: True
    return lambda b: all(taken.get((key, pos), br) == br for key, pos, br in b)


def agree(a: Decisions, b: Decisions, uniform: set[int]) -> bool:
    """Two threads' paths agree on every uniform condition both met in the same instance."""
    return agreeing(a, uniform)(b)


def cuts(cfg: Cfg, cut_warp_barriers: bool, space: str | None = None) -> frozenset[int]:
    """The barrier nodes that end a barrier interval: the block barriers (a grid sync is one too),
    and the warp barriers too when asked. With a memory space, only the barriers that order that
    space: the view in which the accesses to it are ordered, rather than the threads' execution."""
    return frozenset(n for n, b in cfg.barrier_node.items()
                     if (b.scope != ir.WARP or cut_warp_barriers) and (space is None or space in b.spaces))


def grid_cuts(cfg: Cfg) -> frozenset[int]:
    """The barrier nodes that end an interval for two threads of different blocks: grid syncs."""
    return frozenset(n for n, b in cfg.barrier_node.items() if b.scope == ir.GRID)


def intervals(cfg: Cfg, cut_warp_barriers: bool, space: str | None = None) -> dict[int, list[Reach]]:
    """For each access node, the (sync point, loop positions, uniform branch decisions) from which
    it is reachable without crossing a barrier (with `space`: a barrier that orders that space)."""
    return intervals_between(cfg, cuts(cfg, cut_warp_barriers, space))


def intervals_between(cfg: Cfg, cut: frozenset[int]) -> dict[int, list[Reach]]:
    """`intervals` for an explicit set of cutting barrier nodes; the others are passed through."""
    starts = [cfg.entry] + [n for n in cfg.barrier_node if n in cut]
    # Only a branch with a cutting barrier or a jump inside changes which interval a path is in;
    # recording the others would only multiply paths (exponentially, through a loop, when few
    # barriers cut, as in the view of a memory space no barrier orders).
    # A loop no cutting barrier is in runs any number of iterations within one interval: its
    # position is ANY from the start, which is what 0, 1 and MANY compress to, without walking
    # them (and branches inside it are not recorded: over-approximate, never miss a pair).
    cut_loops = {loop for b in cut for loop in cfg.node_loops[b]}
    free = frozenset(cfg.loop_repeats - cut_loops)
    relevant = frozenset(c for c, bars in cfg.branch_barriers.items()
                         if (bars & cut or c in cfg.branch_jumps) and not free.intersection(cfg.branch_loops.get(c, ())))
    out: dict[int, list[Reach]] = {}
    for s in starts:
        # A walk from s is the same under any cut that holds the barriers it stopped at and none
        # of those it passed: the views the redundant-barrier pass asks for, one barrier fewer
        # each, mostly re-walk only the interval that ended at the barrier taken out.
        walks = cfg.walks.setdefault((s, free, relevant), [])
        for stopped, passed, found in walks:
            if stopped <= cut and passed.isdisjoint(cut):
                break
        else:
            try:
                stopped, passed, found = _walk_from(cfg, s, cut, free, relevant)
            except _TooManyStates:
                # Loop positions multiply with the nesting depth (a barrier in the innermost of
                # n loops: 3**n positions) and decisions with the branches in a row. Redone with
                # every loop at any iteration and no branch recorded: more paths, never fewer.
                cfg.coarse_walks += 1
                every_loop = frozenset(l for ls in cfg.node_loops.values() for l in ls)
                stopped, passed, found = _walk_from(cfg, s, cut, every_loop, frozenset(), limit=None)
            walks.append((stopped, passed, found))
        for n, r in found.items():
            out.setdefault(n, []).extend(r)
    return out


class _TooManyStates(Exception):
    pass


# States (node, loop positions, branch decisions) one walk may visit before it is redone coarsely.
WALK_STATES = 50_000


def _walk_from(cfg: Cfg, s: int, cut: frozenset[int], free: frozenset[int], relevant: frozenset[int],
               limit: int | None = WALK_STATES):
    """The accesses reached from start s without crossing `cut`, each with its compressed
    (start, positions, decisions); and the barrier nodes the walk stopped at and passed. Raises
    _TooManyStates past `limit` states."""
    # A free loop around the start (only in a coarse walk) is at any iteration from the start on.
    init = tuple(LoopPos(l, True, ANY if l in free else 0) for l in cfg.node_loops[s])
    seen: set = set()
    reached: dict[int, list[Reach]] = {}
    stopped, passed = set(), set()
    stack = [(t, _step(init, lab, free), _decide(frozenset(), init, lab, relevant)) for t, lab in cfg.succ[s]]
    while stack:
        state = stack.pop()
        if state in seen:
            continue
        checkpoint()
        seen.add(state)
        if limit is not None and len(seen) + len(stack) > limit:
            raise _TooManyStates
        n, pos, dec = state
        if n in cut:
            stopped.add(n)
            continue
        if n in cfg.barrier_node:
            passed.add(n)
        if n in cfg.node_access:
            reached.setdefault(n, []).append(Reach(s, pos, dec))
        for t, lab in cfg.succ[n]:
            stack.append((t, _step(pos, lab, free), _decide(dec, pos, lab, relevant)))
    return frozenset(stopped), frozenset(passed), {n: _compress(r) for n, r in reached.items()}


def barriers_between(cfg: Cfg, src: int, dst: int, cut: frozenset[int],
                     steps: dict[int, int] | None = None) -> list[int]:
    """The barrier nodes outside `cut` on a path from node src to node dst that crosses no barrier
    of `cut`: what one thread passes between two accesses in a filtered view. `steps` pins, for
    loops around both, how often the path crosses the loop's back edge (the second access's
    iteration minus the first's); other loops are free."""
    steps = steps or {}
    loops = tuple(sorted(steps))
    want = tuple(steps[l] for l in loops)
    preds: dict[int, list] = {}
    for n, succ in cfg.succ.items():
        for t, lab in succ:
            preds.setdefault(t, []).append((n, lab))
    forward = _walk(cfg.succ, src, cut, loops, want)
    backward = _walk(preds, dst, cut, loops, want)
    found = []
    for n in cfg.barrier_node:
        if n in cut:
            continue
        fc, bc = forward.get(n, ()), backward.get(n, ())
        if any(tuple(x + y for x, y in zip(f, b)) == want for f in fc for b in bc):
            found.append(n)
    return found


def _walk(edges: dict[int, list], start: int, cut: frozenset[int], loops: tuple, limit: tuple) -> dict[int, set]:
    """Nodes reached from `start` along `edges` without entering `cut`, each with the back-edge
    counts (of `loops`, at most `limit`) of the ways there."""
    seen: dict[int, set] = {}
    stack = [(t, _count(tuple(0 for _ in loops), lab, loops, limit)) for t, lab in edges.get(start, ())]
    while stack:
        n, c = stack.pop()
        if c is None or n in cut or c in seen.get(n, ()):
            continue
        seen.setdefault(n, set()).add(c)
        stack.extend((t, _count(c, lab, loops, limit)) for t, lab in edges.get(n, ()))
    return seen


def _count(c: tuple | None, label, loops: tuple, limit: tuple) -> tuple | None:
    if c is None or label is None or label[0] != "back" or label[1] not in loops:
        return c
    i = loops.index(label[1])
    return None if c[i] >= limit[i] else c[:i] + (c[i] + 1,) + c[i + 1:]


def _decide(dec: Decisions, pos: Positions, label, relevant) -> Decisions:
    if label is not None and label[0] == "branch" and label[1] in relevant:
        return dec | {(label[1], pos, label[2])}
    return dec


def _compress(reached: list[Reach]) -> list[Reach]:
    """Merge positions that differ only in one loop's count and cover 0, 1 and MANY into ANY:
    a loop with a barrier-free way around allows every iteration, and one disjunct says so."""
    by_start: dict[tuple, set[Positions]] = {}
    for r in reached:
        by_start.setdefault((r.start, r.decisions), set()).add(r.pos)
    out = []
    for (s, dec), positions in by_start.items():
        # One sweep per loop, innermost first (a node's positions all name its own loops), again
        # while a sweep merged something: each sweep is linear in the positions.
        changed = True
        while changed:
            changed = False
            depth = max((len(p) for p in positions), default=0)
            for j in reversed(range(depth)):
                groups: dict[tuple, set[int]] = {}
                for pos in positions:
                    if j < len(pos) and pos[j].k != ANY:
                        groups.setdefault((pos[:j], pos[j].loop, pos[j].relative, pos[j + 1:]), set()).add(pos[j].k)
                for (pre, loop, rel, post), ks in groups.items():
                    if len(ks) == 3:    # 0, 1 and MANY
                        positions -= {pre + (LoopPos(loop, rel, k),) + post for k in (0, 1, MANY)}
                        positions.add(pre + (LoopPos(loop, rel, ANY),) + post)
                        changed = True
        out.extend(Reach(s, pos, dec) for pos in sorted(positions, key=_pos_key))
    return out


def _pos_key(pos: Positions):
    return tuple((p.loop, p.relative, p.k) for p in pos)


def _step(pos: Positions, label, free: frozenset = frozenset()) -> Positions:
    if label is None or label[0] == "branch":
        return pos
    what, loop = label
    if what == "enter":
        return pos + (LoopPos(loop, False, ANY if loop in free else 0),)
    if what == "exit":
        return tuple(p for p in pos if p.loop != loop)
    if loop in free:
        return pos
    # back edge
    return tuple(LoopPos(p.loop, p.relative, min(p.k + 1, MANY)) if p.loop == loop else p for p in pos)
