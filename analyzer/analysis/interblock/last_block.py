"""The threadfence-and-ticket "last block" pattern, between blocks (the CUDA samples'
threadFenceReduction):

    if (threadIdx.x == 0) {
        partials[blockIdx.x] = s[0];                          // X: before the fence
        __threadfence();                                      // F
        unsigned t = atomicInc(&count, gridDim.x);            // T: one ticket per block
        amLast = (t == gridDim.x - 1);                        // S: broadcast in shared memory
    }
    __syncthreads();
    if (amLast) ... partials[b] ...                           // Y: after the block's ticket

Two accesses of different blocks A and B are ordered when A's thread made X, then a device fence,
then drew its ticket, B's lead thread drew a larger ticket, and Y follows a block barrier after B's
draw: the counter's values grow in the order of its read-modify-writes, so A's draw came first, the
fence orders X before it, and B's barrier orders its draw before Y (the atomic's read and the
barrier acting as the acquire, as the samples rely on). The reader's condition `t == gridDim.x - 1`
makes B's ticket the largest one, so every other block's draw came first.

What this takes from the program, checked here, and one assumption:
- T is a fetch-and-add of 1 (or `atomicInc` bounded by `gridDim.x` in a 1-D grid: it never wraps)
  on a global counter no other access of the kernel touches, outside every loop, under a guard
  that pins one thread of the block (`threadIdx.x == 0`, every dimension of extent above 1): one
  draw per block, by its lead thread (0,0,0), so every ticket lies in [0, blocks - 1] and two
  blocks' tickets differ;
- assumed: the counter holds 0 when the kernel starts (the samples' last block resets it);
- F is `__threadfence()` outside loops, before T on every way to T, and X comes before F;
- Y's block barrier intervals all start at barriers that come after T (T outside loops), or Y
  follows T in the drawing thread on every way to it;
- S, the only write of its shared buffer, outside loops, under a guard that pins the lead thread
  alone: a read of the same element after a block barrier that follows S reads the lead's value
  (its ticket as the block's), which is how the reader's condition reaches the ticket.

Each query of a pair involving these accesses gets the facts (solver.Encoder terms): the lead's
ticket per block (`lead:NAME@bK`), the thread's own ticket equal to it when the thread is the lead,
the range, two blocks' leads different, the broadcast reads equal to the lead's value, and the
exclusion of the ordered case. The facts only constrain functions the replay also asks the model
about (loads, tickets), so a witness still replays.
"""

from __future__ import annotations

import dataclasses

from dataclasses import dataclass

import z3

from analyzer import ir
from analyzer.analysis.decision.solver import DIMS, as_int
from analyzer.analysis.execution.concurrency import Cfg
from analyzer.analysis.execution.events import AccessEvent, Evaluation
from analyzer.analysis.execution.sym import Iter, Sym

# Builtins that are functions of the thread index alone: the lead thread's value is 0.
_THREAD = ("tid.", "lane", "warp", "linear_tid")


@dataclass
class _Site:
    ticket: ir.Access
    own: Sym                 # the ticket of the thread that draws it (non-uniform)
    lead: Sym                # the block's ticket, as its lead thread drew it (uniform: per block)
    pos: int                 # program position of T


@dataclass
class _Broadcast:
    load: Sym                # the value a read of the broadcast element returns
    value: object            # the lead thread's stored value, with the lead's ticket


class LastBlock:
    """The facts of the last-block pattern for the grid pass's queries (see the module docstring)."""

    def __init__(self, kernel: ir.Kernel, ev: Evaluation, cfg: Cfg, block_reach: dict, read_dims: frozenset):
        self.kernel = kernel
        self.read = read_dims
        self.sites: list[_Site] = []
        self.fenced: dict[int, _Site] = {}      # access id -> the site it is fenced before
        self.after: dict[int, _Site] = {}       # access id -> the site its block drew before it
        self.broadcasts: dict[str, _Broadcast] = {}   # load name -> its broadcast
        self._memo: dict = {}
        if not any(acc.atomic and acc.space == ir.GLOBAL for acc in ir.accesses(kernel.body)):
            return      # no global atomic: no ticket (the common case costs one walk)
        self._index(kernel.body, (), False)
        for site in self._sites(ev):
            self.sites.append(site)
            self._fenced(site, ev)
            self._after(site, ev, cfg, block_reach)
            self._broadcast(site, ev, cfg, block_reach)

    # ----- program positions -----

    def _index(self, stmts: list, chain: tuple, in_loop: bool) -> None:
        """Each statement's position in program order, the (list, index) chain from the top, and
        whether it is inside a loop; each access's, from the statement holding it."""
        if not hasattr(self, "pos"):
            self.pos: dict[int, int] = {}
            self.chain: dict[int, tuple] = {}
            self.looped: dict[int, bool] = {}
            self.acc_pos: dict[int, int] = {}
            self.acc_looped: dict[int, bool] = {}
            self.acc_chain: dict[int, tuple] = {}
            self.fences: list[ir.Eval] = []
        for i, s in enumerate(stmts):
            here = chain + ((id(stmts), i),)
            self.pos[id(s)] = len(self.pos)
            self.chain[id(s)] = here
            self.looped[id(s)] = in_loop
            if isinstance(s, ir.Eval) and isinstance(s.value, ir.Call) and s.value.fn in ir.FENCES:
                self.fences.append(s)
            for acc in ir.accesses([s] if not isinstance(s, (ir.If, ir.Loop)) else []):
                self.acc_pos[acc.id], self.acc_looped[acc.id], self.acc_chain[acc.id] = self.pos[id(s)], in_loop, here
            if isinstance(s, ir.If):
                for acc in _reads(s.cond):
                    self.acc_pos[acc.id], self.acc_looped[acc.id], self.acc_chain[acc.id] = self.pos[id(s)], in_loop, here
                self._index(s.then, here, in_loop)
                self._index(s.orelse, here, in_loop)
            elif isinstance(s, ir.Loop):
                for part in (s.init, s.update):
                    self._index(part, here, True)
                for acc in _reads(s.cond) if s.cond is not None else ():
                    self.acc_pos[acc.id], self.acc_looped[acc.id], self.acc_chain[acc.id] = self.pos[id(s)], True, here
                self._index(s.body, here, True)

    # ----- the pieces of the pattern -----

    def _pins(self, guard) -> bool:
        """The guard holds for the lead thread (0,0,0) alone: `threadIdx.d == 0` for every thread
        dimension of extent above 1, and nothing else (so the lead always runs the access)."""
        pinned = set()
        stack = list(guard)
        while stack:
            g = stack.pop()
            if isinstance(g, ir.BinOp) and g.op == "&&":
                stack += [g.a, g.b]
                continue
            if not (isinstance(g, ir.BinOp) and g.op == "=="):
                return False
            tid, zero = (g.a, g.b) if isinstance(g.a, ir.Builtin) else (g.b, g.a)
            if not (isinstance(tid, ir.Builtin) and tid.name.startswith("tid.") and isinstance(zero, ir.Const)
                    and zero.value == 0):
                return False
            pinned.add(tid.name[4:])
        return all(d in pinned or self.kernel.block_dim.get(d) == 1 for d in DIMS)

    def _sites(self, ev: Evaluation):
        """Ticket sites: one draw per block by its lead, of a counter nothing else touches."""
        results = {}
        for s in ir.walk_stmts(self.kernel.body, updates=True):
            for e in _exprs(s):
                for o in _opaques(e):
                    if o.fetch is not None:
                        results[o.fetch.id] = o
        for acc_id, o in results.items():
            e = ev.accesses.get(acc_id)
            if e is None or self.acc_looped.get(acc_id, True) or not self._pins(e.guard):
                continue
            acc = e.access
            if acc.space != ir.GLOBAL or any(x.buffer == acc.buffer and x is not acc
                                             for x in ir.accesses(self.kernel.body)):
                continue
            if o.ticket is not None and o.grid_counter and o.step == 1 and acc.atomic_op == "increment":
                own = Sym(ir.ticket_name(o), False, (e.offset,))
            elif self._bounded_inc(acc):
                own = Sym(f"opaque{o.site}", False, ())
            else:
                continue
            yield _Site(acc, own, Sym(f"lead:{own.name}", True, own.args), self.acc_pos[acc_id])

    def _bounded_inc(self, acc: ir.Access) -> bool:
        """`atomicInc(&c, gridDim.x)` (or `gridDim.x - 1`) in a grid of blocks along x only: with one
        draw per block it never reaches its bound, so it counts as a fetch-and-add of 1."""
        v = acc.value
        if not (isinstance(v, ir.Call) and v.fn == "atomicInc" and len(v.args) == 1) or not self.read <= {"x"}:
            return False
        bound = v.args[0]
        gx = ir.Builtin("gdim.x")
        return bound == gx or bound == ir.BinOp("-", gx, ir.Const(1))

    def _fenced(self, site: _Site, ev: Evaluation) -> None:
        """Accesses before a device fence that comes before T on every way to T."""
        chain = self.acc_chain[site.ticket.id]
        fence_pos = [self.pos[id(f)] for f in self.fences
                     if not self.looped[id(f)] and self.pos[id(f)] < site.pos and _dominates(self.chain[id(f)], chain)]
        if not fence_pos:
            return
        first = min(fence_pos)
        for e in ev.accesses.values():
            if e.access.space == ir.GLOBAL and self.acc_pos.get(e.access.id, first) < first:
                self.fenced[e.access.id] = site

    def _after_barrier(self, acc: ir.Access, pos: int, cfg: Cfg, block_reach: dict) -> bool:
        """Every block barrier interval of `acc` starts at a barrier that comes after position `pos`."""
        reach = block_reach.get(cfg.access_node.get(acc.id), [])
        order = {id(b): self.pos.get(id(b), -1) for b in cfg.barrier_node.values()}
        return bool(reach) and all(r.start in cfg.barrier_node and order[id(cfg.barrier_node[r.start])] > pos
                                   for r in reach)

    def _after(self, site: _Site, ev: Evaluation, cfg: Cfg, block_reach: dict) -> None:
        """Accesses after the block's draw: past a block barrier that follows T, or in the drawing
        thread itself, after T on every way there (`if (t == gridDim.x - 1)` right after the draw)."""
        chain = self.acc_chain[site.ticket.id]
        for e in ev.accesses.values():
            if e.access.space != ir.GLOBAL or e.access.id == site.ticket.id:
                continue
            own = e.access.id in self.acc_chain and _dominates(chain, self.acc_chain[e.access.id])
            if own or self._after_barrier(e.access, site.pos, cfg, block_reach):
                self.after[e.access.id] = site

    def _broadcast(self, site: _Site, ev: Evaluation, cfg: Cfg, block_reach: dict) -> None:
        """A shared element the lead alone stores once, its value naming the ticket: reads of it
        after a barrier that follows the store return the lead's value."""
        by_buffer: dict[str, list[AccessEvent]] = {}
        for e in ev.accesses.values():
            if e.access.space == ir.SHARED:
                by_buffer.setdefault(e.access.buffer, []).append(e)
        for events in by_buffer.values():
            writes = [e for e in events if e.access.is_write]
            if len(writes) != 1 or writes[0].access.atomic:
                continue
            w = writes[0]
            if self.acc_looped.get(w.access.id, True) or not self._pins(w.guard) or w.value is None:
                continue
            value = self._lead_value(w.value, site)
            if value is None or not _mentions(value, site.lead.name):
                continue
            at = self.acc_pos[w.access.id]
            for r in events:
                if r.access.is_write or r.offset != w.offset or r.access.width != w.access.width:
                    continue
                if not self._after_barrier(r.access, at, cfg, block_reach):
                    continue
                load = Sym(f"load{r.access.id}", True, (r.offset,) + tuple(Iter(l) for l in r.loops))
                self.broadcasts[load.name] = _Broadcast(load, value)

    def _lead_value(self, t, site: _Site):
        """The term as the lead thread (0,0,0) of the block computes it, its ticket the block's;
        None when it holds another value of its own thread."""
        if isinstance(t, ir.Builtin):
            return ir.Const(0) if t.name.startswith(_THREAD) else t
        if isinstance(t, ir.Const | ir.Param | Iter):
            return t
        if isinstance(t, Sym):
            args = [self._lead_value(a, site) for a in t.args]
            if any(a is None for a in args):
                return None
            if not t.uniform:
                return Sym(site.lead.name, True, tuple(args)) if t.name == site.own.name else None
            return Sym(t.name, True, tuple(args), t.lower)
        if isinstance(t, ir.BinOp):
            a, b = self._lead_value(t.a, site), self._lead_value(t.b, site)
            return None if a is None or b is None else ir.BinOp(t.op, a, b)
        if isinstance(t, ir.UnOp):
            a = self._lead_value(t.a, site)
            return None if a is None else ir.UnOp(t.op, a)
        if isinstance(t, ir.Select):
            parts = [self._lead_value(x, site) for x in (t.cond, t.a, t.b)]
            return None if any(p is None for p in parts) else ir.Select(*parts)
        if isinstance(t, ir.Call):
            args = [self._lead_value(a, site) for a in t.args]
            return None if any(a is None for a in args) else dataclasses.replace(t, args=tuple(args))
        return None

    # ----- the facts of one query -----

    def active(self) -> bool:
        return bool(self.sites)

    def facts(self, enc, a: AccessEvent, b: AccessEvent) -> list:
        """The pattern's facts for thread 1 at `a` and thread 2 at `b` (of different blocks), in
        the encoder `enc`: none unless the pair involves an access of the pattern."""
        if not self.sites:
            return []
        loads = [self.broadcasts[n] for n in self._load_names(a) | self._load_names(b) if n in self.broadcasts]
        orient = [(i, x, j, y) for i, x, j, y in ((1, a, 2, b), (2, b, 1, a))
                  if x.access.id in self.fenced and self.fenced[x.access.id] is self.after.get(y.access.id)]
        if not loads and not orient:
            return []
        out = []
        blocks_differ = z3.Or(*[enc.bid[d] != enc.bid2[d] for d in DIMS])
        for site in self.sites:
            lead = {k: as_int(enc.term(site.lead, k)) for k in (1, 2)}
            own = {k: as_int(enc.term(site.own, k)) for k in (1, 2)}
            blocks = 1
            for d in sorted(self.read):
                blocks = blocks * enc.gdim[d]
            for k in (1, 2):
                out += [z3.Implies(_lead_thread(enc, k), own[k] == lead[k]), lead[k] >= 0, lead[k] <= blocks - 1]
            out.append(z3.Implies(blocks_differ, lead[1] != lead[2]))
        for bc in loads:
            out += [as_int(enc.term(bc.load, k)) == as_int(enc.term(bc.value, k)) for k in (1, 2)]
        for i, x, j, y in orient:
            site = self.fenced[x.access.id]
            # Thread i, the lead of its block, drew a smaller ticket than thread j's block did
            # before y: ordered, so not a race.
            out.append(z3.Not(z3.And(_lead_thread(enc, i),
                                     as_int(enc.term(site.own, i)) < as_int(enc.term(site.lead, j)))))
        return out

    def _load_names(self, e: AccessEvent) -> set[str]:
        hit = self._memo.get(e.access.id)
        if hit is None:
            hit = self._memo[e.access.id] = {n for g in e.guard for n in _sym_names(g) if n.startswith("load")}
        return hit


def _lead_thread(enc, k: int):
    return z3.And(*[enc.tid[k][d] == 0 for d in DIMS])


def _dominates(fence: tuple, target: tuple) -> bool:
    """A statement at chain `fence` runs before one at chain `target` whenever that one runs: it
    sits in a list that encloses the target, before the target's branch of it."""
    n = len(fence)
    return (len(target) >= n and target[:n - 1] == fence[:n - 1] and target[n - 1][0] == fence[-1][0]
            and fence[-1][1] < target[n - 1][1])


def _reads(e):
    stack = [e] if e is not None else []
    while stack:
        x = stack.pop()
        if isinstance(x, ir.Read):
            yield x.access
            stack.append(x.access.offset)
        else:
            stack.extend(ir.operands(x))


def _exprs(s) -> list:
    out = [getattr(s, n, None) for n in ("value", "cond")]
    if isinstance(s, ir.MemOp):
        out += [s.access.offset, s.access.value]
    return [x for x in out if x is not None and not isinstance(x, list)]


def _opaques(e):
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, ir.Opaque):
            yield x
        if isinstance(x, ir.Read):
            stack.append(x.access.offset)
        stack.extend(ir.operands(x))


def _sym_names(t, seen=None) -> set[str]:
    out: set[str] = set()
    stack = [t]
    while stack:
        x = stack.pop()
        if isinstance(x, Sym):
            out.add(x.name)
        stack.extend(ir.operands(x))
    return out


def _mentions(t, name: str) -> bool:
    return name in _sym_names(t)
