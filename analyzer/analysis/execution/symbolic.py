"""Symbolic execution of one thread over the IR, and the uniformity analysis that rides on it.

Every access and barrier becomes an event whose address, value and guard are terms over the
thread's builtins, the kernel's parameters and the iteration numbers of its enclosing loops. A
term is *uniform* when it has the same value in every thread of a block at the same point of the
(aligned) execution: it mentions no thread index, lane or warp index, and no value derived from
one. Loop state kept in private arrays (`batch_idx_ptr[0]`) and loads at uniform addresses stay
uniform, which is what keeps TVM's `while (1)` tile loops from looking divergent.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from analyzer import ir
from analyzer.analysis.decision import division_forms
from analyzer.analysis.decision import power_bits
from analyzer.analysis.execution.atomic_order import AtomicOrder, joined, through_loop
from analyzer.analysis.decision.memory_guard import checkpoint
from analyzer.analysis.execution.sym import Iter, Sym

NON_UNIFORM_BUILTINS = ("tid.", "lane", "warp", "linear_tid")


Term = object  # ir.Expr | Iter | Sym


_uniform_memo: dict[int, tuple[object, bool]] = {}


def remembered(table: dict, x, compute):
    """compute(x), remembered in `table` by identity: terms are shared DAGs, and hashing them
    structurally is quadratic. The entry keeps x alive, so its id is not reused."""
    hit = table.get(id(x))
    if hit is None or hit[0] is not x:
        hit = table[id(x)] = (x, compute(x))
    return hit[1]


def is_uniform(t) -> bool:
    return remembered(_uniform_memo, t, _is_uniform)


def _clear_uniform_memo() -> None:
    _uniform_memo.clear()


is_uniform.cache_clear = _clear_uniform_memo  # type: ignore[attr-defined]


def _is_uniform(t) -> bool:
    if isinstance(t, ir.Const | ir.Param):
        return True
    if isinstance(t, ir.Builtin):
        return not t.name.startswith(NON_UNIFORM_BUILTINS)
    if isinstance(t, ir.BinOp | ir.UnOp | ir.Select | ir.Call):
        return all(is_uniform(x) for x in ir.operands(t))
    if isinstance(t, Iter):
        return t.loop not in _divergent_loops
    if isinstance(t, Sym):
        return t.uniform and all(is_uniform(a) for a in t.args)
    return False  # Opaque


# Loops whose trip count differs between threads: their iteration number is not uniform.
_divergent_loops: set[int] = set()


@dataclass
class AccessEvent:
    access: ir.Access
    offset: Term
    value: Term | None
    guard: tuple            # terms that are all nonzero when the access executes
    loops: tuple[int, ...]  # enclosing loop ids, outermost first
    order: int              # position in program order
    # Terms nonzero whenever the access executes because the thread got past a loop before it:
    # the loop ended (`_ended`). Kept apart from the guard: they say nothing about which threads
    # take which branch, only that none of them looped forever on the way.
    ended: tuple = ()
    # The access's subscripts into fixed-size dimensions (ir.Access.bounds), evaluated: (term, extent).
    bounds: tuple = ()


@dataclass
class BarrierEvent:
    barrier: ir.Barrier
    guard: tuple
    loops: tuple[int, ...]
    divergent_because: Term | None   # the first non-uniform condition it sits under
    divergent_span: ir.Span | None
    # The first condition it sits under that may differ between blocks (a grid sync must be
    # reached by every block alike), and whether that is a loop's exit taken in some blocks only.
    grid_divergent_because: Term | None = None
    grid_divergent_span: ir.Span | None = None
    grid_divergent_exit: bool = False
    assumed: tuple = ()   # the stated facts among its guard (ir.If.assumed): every thread's


@dataclass
class LoopInfo:
    loop: ir.Loop
    parent_loops: tuple[int, ...]
    uniform: bool = True
    # The same trip count in every block: a condition and exits uniform across the grid. Else the
    # first exit (term, span) taken under a condition that may differ between blocks, if any.
    grid_uniform: bool = True
    grid_exit: tuple | None = None


@dataclass
class Evaluation:
    accesses: dict[int, AccessEvent] = field(default_factory=dict)
    barrier_events: dict[int, BarrierEvent] = field(default_factory=dict)   # by id of the barrier
    loops: dict[int, LoopInfo] = field(default_factory=dict)
    # id of an If or Loop -> whether its condition is uniform (the last pass over it decides)
    condition_uniform: dict[int, bool] = field(default_factory=dict)
    # id of an If outside every loop -> its condition (one instance per thread, so a term suffices)
    condition_terms: dict[int, object] = field(default_factory=dict)
    # id of a Loop outside every loop -> (its IR id, its condition on entry): a thread that
    # leaves it at the first test found that false.
    entry_terms: dict[int, tuple] = field(default_factory=dict)
    # id of an If or Loop -> whether its condition (and a loop's exits) is the same in every block
    condition_grid_uniform: dict[int, bool] = field(default_factory=dict)
    # id of a Loop -> (its IR id, its condition with the loop's iteration free): a thread that
    # leaves it at a test found that false in that iteration.
    loop_conds: dict[int, tuple] = field(default_factory=dict)
    # id of an If inside loops with a barrier in a branch -> its condition, the enclosing loops'
    # iterations free (the last pass over it decides): a thread's path around that barrier in
    # given iterations says which way the condition went there.
    loop_branch_terms: dict[int, object] = field(default_factory=dict)

    @property
    def barriers(self) -> list[BarrierEvent]:
        return sorted(self.barrier_events.values(), key=lambda b: (b.barrier.span.line, b.barrier.span.col))

    @property
    def uniform_conditions(self) -> set[int]:
        return {k for k, v in self.condition_uniform.items() if v}

    @property
    def grid_uniform_conditions(self) -> set[int]:
        """The uniform conditions that are uniform across the grid too: every block agrees."""
        return {k for k in self.uniform_conditions if self.condition_grid_uniform.get(k, False)}

    @property
    def tracked_conditions(self) -> set[int]:
        """Branches whose direction the interval walk records: uniform ones (all threads agree),
        those outside loops (each thread's direction is a known condition), and those inside loops
        around a barrier (a known condition in the iterations a path pins). Branches inside loops
        with only jumps are left out: they are common, and each recorded one multiplies the walk."""
        return self.uniform_conditions | set(self.condition_terms) | set(self.loop_branch_terms)


class _Terminated(Exception):
    pass


@dataclass
class _State:
    env: dict
    private: dict          # (buffer, byte offset) -> term, for private arrays at constant offsets
    guard: tuple
    divergent: tuple       # (cond term, span) of the first non-uniform enclosing condition, or ()
    # (cond term, span, by an exit) of the first enclosing condition that may differ between blocks
    grid_divergent: tuple = ()
    dead: bool = False
    ended: tuple = ()      # facts of loops this path got past (AccessEvent.ended)
    assumed: tuple = ()    # the stated facts among the guard (ir.If.assumed)
    atomics: dict = field(default_factory=dict)   # buffer -> the thread's latest atomic of it (atomic_order.py)


def _cell_offset(offsets: dict, offset):
    """A private cell's offset as a key: the byte offset, or ("at", n) for the n-th distinct
    symbolic offset term in `offsets` (terms are interned: one term, one key)."""
    if isinstance(offset, ir.Const):
        return offset.value
    hit = offsets.get(id(offset))
    if hit is None:
        hit = offsets[id(offset)] = (offset, ("at", len(offsets)))
    return hit[1]


def _simplify_not(t):
    if isinstance(t, ir.UnOp) and t.op == "!":
        return t.a
    return ir.UnOp("!", t)


def _at_first(intern, t, lid: int, memo: dict):
    """The term `t` with loop `lid`'s iteration number 0 (folded where constants meet)."""
    hit = memo.get(id(t))
    if hit is not None:
        return hit
    if isinstance(t, Iter):
        out = intern(ir.Const(0)) if t.loop == lid else t
    elif isinstance(t, ir.BinOp):
        a, b = _at_first(intern, t.a, lid, memo), _at_first(intern, t.b, lid, memo)
        folded = fold_constant(t.op, a.value, b.value) if isinstance(a, ir.Const) and isinstance(b, ir.Const) else None
        out = (t if a is t.a and b is t.b else
               intern(ir.Const(folded)) if folded is not None else intern(ir.BinOp(t.op, a, b)))
    elif isinstance(t, ir.UnOp):
        a = _at_first(intern, t.a, lid, memo)
        out = t if a is t.a else intern(ir.UnOp(t.op, a))
    elif isinstance(t, ir.Select):
        parts = [_at_first(intern, x, lid, memo) for x in (t.cond, t.a, t.b)]
        out = t if all(p is q for p, q in zip(parts, (t.cond, t.a, t.b))) else intern(ir.Select(*parts))
    elif isinstance(t, ir.Call | Sym):
        args = tuple(_at_first(intern, x, lid, memo) for x in t.args)
        out = t if all(p is q for p, q in zip(args, t.args)) else intern(
            ir.Call(t.fn, args) if isinstance(t, ir.Call) else
            Sym(t.name, t.uniform, args, t.lower, tuple((r, _at_first(intern, x, lid, memo)) for r, x in t.after)))
    else:
        out = t
    memo[id(t)] = out
    return out


class GridUniformity:
    """Which conditions every block of the grid agrees on, for grid syncs (ir.GRID): the same value
    in every thread of the grid at the same point of the (aligned) execution, i.e. uniform in a
    block and nothing that may differ between blocks (a block index, loop state or a load the grid
    pass keeps per block, solver.Encoder). In a kernel without grid syncs nothing asks: all agree."""

    def __init__(self, kernel: ir.Kernel, read_only: dict):
        # Loads every block sees alike (global buffers the kernel never writes), as grid.py has them.
        self.common = frozenset(f"load{site.id}" for site in read_only.values() if site.space == ir.GLOBAL)
        self.syncs = any(isinstance(x, ir.Barrier) and x.scope == ir.GRID
                         for x in ir.walk_stmts(kernel.body, updates=True))
        self._memo: dict[int, tuple] = {}

    def uniform(self, t) -> bool:
        return not self.syncs or (is_uniform(t) and self._free(t))

    def _free(self, t) -> bool:
        hit = self._memo.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        if isinstance(t, ir.Builtin):
            out = not t.name.startswith("bid.")
        elif isinstance(t, ir.Const | ir.Param | Iter):
            out = True
        elif isinstance(t, Sym):
            out = t.name in self.common and all(self._free(a) for a in t.args)
        elif isinstance(t, ir.BinOp | ir.UnOp | ir.Select | ir.Call):
            out = all(self._free(x) for x in ir.operands(t))
        else:
            out = False
        self._memo[id(t)] = (t, out)
        return out

    def exit(self, s, guard: tuple, loop_stack: list, loops: dict) -> None:
        """A break or return under a condition that may differ between blocks: the loops it leaves
        run a trip count of their own in some blocks (a return: every loop around it)."""
        why = next((g for g in guard if not self.uniform(g)), None) if loop_stack else None
        if why is None:
            return
        for lid in (loop_stack[-1:] if isinstance(s, ir.Break) else loop_stack):
            if loops[lid].grid_exit is None:
                loops[lid].grid_exit = (why, s.span)

    def enter_loop(self, info: "LoopInfo", cond, first) -> bool:
        """Whether every block runs the loop's iterations alike, as far as known at this pass."""
        if cond is not None and (not self.uniform(cond) or (first is not cond and not self.uniform(first))):
            info.grid_uniform = False
        if info.grid_exit is not None:
            info.grid_uniform = False
        return info.grid_uniform

    def first(self, current: tuple, cond, span) -> tuple:
        """The first enclosing condition blocks may disagree on: `current`, else `cond` if so."""
        return current or (() if self.uniform(cond) else (cond, span, False))

    @staticmethod
    def why_loop(info: "LoopInfo", cond) -> tuple:
        """(condition, span, by an exit) that makes blocks run different numbers of iterations."""
        if info.grid_exit is None:
            return (cond if cond is not None else ir.Const(1)), info.loop.span, False
        return info.grid_exit[0], info.grid_exit[1], True


def _intern(table: dict, t):
    """One object per structurally equal term. Its parts are interned first, so their
    identities make the key; the table keeps them alive, so no identity is reused. The
    uniformity memo and the solver encoding are keyed by identity: each shared part is
    then checked and encoded once, however many statements spell it out again."""
    # The commonest classes by exact type first (this runs for every term the executor makes).
    kind = type(t)
    if kind is ir.BinOp:
        return table.setdefault((ir.BinOp, t.op, id(t.a), id(t.b)), t)
    if kind is ir.Const:
        return table.setdefault((ir.Const, t.value), t)
    if isinstance(t, ir.BinOp):
        key: tuple = (ir.BinOp, t.op, id(t.a), id(t.b))
    elif isinstance(t, ir.Const):
        key = (ir.Const, t.value)
    elif isinstance(t, ir.Param | ir.Builtin):
        key = (type(t), t.name)
    elif isinstance(t, Sym):
        key = (Sym, t.name, t.uniform, t.lower, tuple((r, id(x)) for r, x in t.after), *map(id, t.args))
    elif isinstance(t, ir.UnOp):
        key = (ir.UnOp, t.op, id(t.a))
    elif isinstance(t, ir.Select):
        key = (ir.Select, id(t.cond), id(t.a), id(t.b))
    elif isinstance(t, ir.Call):
        key = (ir.Call, t.fn, *map(id, t.args))
    elif isinstance(t, Iter):
        key = (Iter, t.loop)
    else:
        return t
    return table.setdefault(key, t)


def _binop(op: str, a, b):
    if op in ("&&", "||"):
        return ir.BinOp(op, a, b)
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        folded = fold_constant(op, a.value, b.value)
        if folded is not None:
            return ir.Const(folded)
    return division_forms.binop(op, a, b)


class _TermTable:
    """The executor's terms, one object per structurally equal term (`_intern`), and those it
    asks for again at every pass of a loop, each made once: an interned term comes back as itself
    (found by identity before its key is built), an operation over interned operands is built once
    per operator and operands, loop state is looked up by its key before a Sym is made. Each pass
    then gets back the same objects for the state that did not change, and what is remembered by
    identity (thread dimensions, uniformity, the solver's encoding) is computed once for them."""

    def __init__(self):
        self.interned: dict[tuple, object] = {}
        self._canonical: dict[int, object] = {}   # id -> the interned term
        self._built: dict[tuple, object] = {}     # (op, id a, id b) -> interned term
        self._iters: dict[int, Iter] = {}
        self._threads: dict[frozenset, tuple] = {}

    def intern(self, t):
        hit = self._canonical.get(id(t))
        if hit is t:
            return t
        out = _intern(self.interned, t)
        self._canonical[id(out)] = out
        return out

    def binop(self, op: str, a, b):
        """`a op b` over interned terms, folded and read back (`_binop`), interned."""
        key = (op, id(a), id(b))
        hit = self._built.get(key)
        if hit is None:
            hit = self._built[key] = self.intern(_binop(op, a, b))
        return hit

    def iter(self, loop: int) -> Iter:
        hit = self._iters.get(loop)
        if hit is None:
            hit = self._iters[loop] = self.intern(Iter(loop))
        return hit

    def threads(self, dims: frozenset) -> tuple:
        """The thread builtins of `dims`, interned, in a fixed order."""
        hit = self._threads.get(dims)
        if hit is None:
            hit = self._threads[dims] = tuple(self.intern(ir.Builtin(d)) for d in sorted(dims))
        return hit

    def state(self, name: str, args: tuple, lower: int | None) -> Sym:
        """Loop state `name` (a uniform Sym of interned `args`), interned."""
        hit = self.interned.get((Sym, name, True, lower, (), *map(id, args)))
        return hit if hit is not None else self.intern(Sym(name, True, args, lower))


class SymbolicExecutor(AtomicOrder):
    """Executes a kernel once, emitting one event per access site and barrier."""

    def __init__(self, kernel: ir.Kernel):
        self.kernel = kernel
        self.read_only = ir.read_only_loads(kernel)
        self.result = Evaluation()
        self.emit = True
        self.order = itertools.count()
        self.loop_stack: list[int] = []
        self.fresh = itertools.count()
        # Per loop: the thread dimensions each piece of its state may depend on (a variable by
        # name, a private cell as ("cell", key)); widened to a fixpoint like uniformity.
        self.thread_deps: dict[int, dict] = {}
        self._dims_memo: dict[int, tuple] = {}
        self._iters: tuple = ()
        self._iters_of: list[int] = []
        self.terms = _TermTable()
        # Floors of loop state, assumed at loop entry and checked at every store (an induction on
        # the iterations): the loops being executed, each with the floors it assumes, and the
        # (loop, state) pairs a store broke.
        self._frames: list[tuple[int, dict]] = []
        self._broken: set[tuple[int, tuple]] = set()
        self._shaped: dict[int, set] = {}
        self._offsets: dict[int, tuple] = {}   # symbolic private offsets (see `_cell_offset`)
        # Per private array: the thread dimensions its contents may depend on (see `run`).
        self.private_dims: dict[str, frozenset] = {}
        # Per loop being executed: the states at its `break`s and `continue`s.
        self._exits: list[list[_State]] = []
        self.grid = GridUniformity(kernel, self.read_only)
        _divergent_loops.clear()
        is_uniform.cache_clear()

    def run(self) -> Evaluation:
        # What a private element holds where the executor lost track of it depends on the thread
        # dimensions of everything stored into its array: assumed, then checked by the run
        # itself, and run again with more dimensions until the stores add none.
        for _ in range(4 * len(self.kernel.buffers) + 1):
            self.result = Evaluation()
            self.order = itertools.count()
            self.fresh = itertools.count()
            self._stored_dims: dict[str, frozenset] = {}
            st = _State({}, {}, (), ())
            try:
                self.block(self.kernel.body, st)
            except _Terminated:
                pass
            if all(d <= self.private_dims.get(b, frozenset()) for b, d in self._stored_dims.items()):
                break
            for b, d in self._stored_dims.items():
                self.private_dims[b] = _norm(self.private_dims.get(b, frozenset()) | d)
        return self.result

    # ---------- expressions ----------
    def term(self, e, st: _State):
        return self.intern(self._term(e, st))

    def intern(self, t):
        return self.terms.intern(t)

    def _term(self, e, st: _State):
        kind = type(e)
        if kind is ir.Var:
            if e.name in st.env:
                return st.env[e.name]
            return Sym(f"undef:{e.name}", False)
        if kind is ir.BinOp:
            return self.terms.binop(e.op, self.term(e.a, st), self.term(e.b, st))
        if isinstance(e, ir.Const | ir.Param | ir.Builtin):
            return e
        if isinstance(e, ir.BinOp):
            return _binop(e.op, self.term(e.a, st), self.term(e.b, st))
        if isinstance(e, ir.UnOp):
            return ir.UnOp(e.op, self.term(e.a, st))
        if isinstance(e, ir.Select):
            return division_forms.select(self.term(e.cond, st), self.term(e.a, st), self.term(e.b, st))
        if isinstance(e, ir.Call):
            return ir.Call(e.fn, tuple(self.term(a, st) for a in e.args))
        if isinstance(e, ir.Read):
            return self.read(e.access, st)
        if isinstance(e, ir.Opaque):
            if e.source is not None:
                return Sym(f"opaque{e.site}", True, (self.term(e.source, st),) + self.iters())
            return self.atomic_result(e, st) if e.fetch is not None else Sym(f"opaque{e.site}", False, self.iters())
        raise TypeError(f"unknown IR expression {e!r}")

    def iter(self, loop: int) -> Iter:
        return self.terms.iter(loop)

    def iters(self) -> tuple:
        if self._iters_of != self.loop_stack:
            self._iters = tuple(self.iter(lid) for lid in self.loop_stack)
            self._iters_of = list(self.loop_stack)
        return self._iters

    def read(self, acc: ir.Access, st: _State):
        offset = self.term(acc.offset, st)
        if acc.space == ir.PRIVATE:
            key = (acc.buffer, _cell_offset(self._offsets, offset), acc.width)
            if key in st.private:
                return st.private[key]
            # An element the executor lost track of holds what a store of this thread left
            # there (a thread reads no private element it did not write: undefined behaviour in
            # C++ and MSL, an undefined value in SPIR-V): a function of the read, its offset and
            # iterations, and the thread dimensions the array's stores depend on.
            return self._state(f"private:{acc.buffer}@r{acc.id}", self.private_dims.get(acc.buffer, frozenset()),
                               (offset,) + self.iters(), None)
        self.record(acc, offset, None, st)
        if acc.atomic and ir.changed_atomically(self.kernel, acc.buffer):
            # The thread's own value: another thread's atomic may change the element between two
            # threads' loads of it, and atomics never race with each other to say so.
            return self.atomic_load(acc, offset, st)
        return self.loaded(acc, offset)

    def loaded(self, acc: ir.Access, offset) -> Sym:
        """The value a load (or an atomic that leaves its element alone) of `acc` at `offset` gets."""
        site = self.read_only.get(acc.buffer)
        if site is not None:   # nothing writes the buffer: one value per address, at every site and iteration
            return Sym(f"load{site.id}", True, (offset,))
        # Same site, same address, same iterations: the same value in every thread (race-free reading).
        return Sym(f"load{acc.id}", True, (offset,) + self.iters())

    def record(self, acc: ir.Access, offset, value, st: _State) -> None:
        if not self.emit or st.dead or acc.space in (ir.PRIVATE, ir.CONSTANT):
            return
        self.result.accesses[acc.id] = AccessEvent(acc, offset, value, st.guard, tuple(self.loop_stack),
                                                   next(self.order), st.ended, _subscripts(self, acc, st))

    # ---------- statements ----------
    def block(self, stmts, st: _State) -> None:
        for s in stmts:
            if st.dead:
                return
            self.stmt(s, st)

    def stmt(self, s, st: _State) -> None:
        checkpoint()
        if isinstance(s, ir.Assign):
            st.env[s.target] = self.term(s.value, st)
            self._keeps_floor(("var", s.target), st.env[s.target], st)
        elif isinstance(s, ir.MemOp):
            acc = s.access
            offset = self.term(acc.offset, st)
            value = self.term(acc.value, st) if acc.value is not None else None
            if acc.space == ir.PRIVATE:
                self.write_private(acc, offset, value, st)
            else:
                self.record(acc, offset, value, st)
                self.atomic_memop(acc, offset, st)
        elif isinstance(s, ir.Eval):
            self.term(s.value, st)
        elif isinstance(s, ir.Barrier):
            if self.emit and not st.dead:
                cond, span = st.divergent if st.divergent else (None, None)
                self.result.barrier_events[id(s)] = BarrierEvent(s, st.guard, tuple(self.loop_stack), cond, span,
                                                                 *(st.grid_divergent or (None, None, False)),
                                                                 assumed=st.assumed)
        elif isinstance(s, ir.If):
            self.if_(s, st)
        elif isinstance(s, ir.Loop):
            self.loop(s, st)
        elif isinstance(s, (ir.Break, ir.Continue, ir.Return)):
            if not isinstance(s, ir.Continue) and self.emit and not st.dead:
                self.grid.exit(s, st.guard, self.loop_stack, self.result.loops)
            if not isinstance(s, ir.Return) and self._exits and not st.dead:
                # What loop state holds where an iteration ends early counts as much as what it
                # holds at the end of the body (see `_loop_pass`).
                self._exits[-1].append(_State(dict(st.env), dict(st.private), st.guard, st.divergent,
                                              st.grid_divergent, ended=st.ended, assumed=st.assumed))
            st.dead = True
        else:
            raise TypeError(f"unknown IR statement {s!r}")

    def write_private(self, acc: ir.Access, offset, value, st: _State) -> None:
        stored = self.thread_dims(offset).union(*(self.thread_dims(g) for g in st.guard))
        stored |= ALL_DIMS if value is None else self.thread_dims(value)
        self._stored_dims[acc.buffer] = _norm(self._stored_dims.get(acc.buffer, frozenset()) | stored)
        for _, floors in self._frames:
            for key in [k for k in floors if k[0] == "cell" and k[1][0] == acc.buffer]:
                if not (isinstance(offset, ir.Const) and key[1] == (acc.buffer, offset.value, acc.width)):
                    self._keeps_floor(key, None, st)    # another store to the array: no floor
        if isinstance(offset, ir.Const):
            self._keeps_floor(("cell", (acc.buffer, offset.value, acc.width)), value, st)
            # A store of `width` bytes replaces every tracked cell it overlaps, and may replace
            # any cell at a symbolic offset.
            lo, hi = offset.value, offset.value + acc.width
            for key in [k for k in st.private if k[0] == acc.buffer and (
                    not isinstance(k[1], int) or (k[1] < hi and lo < k[1] + k[2]))]:
                del st.private[key]
            st.private[(acc.buffer, offset.value, acc.width)] = value
            if value is not None and acc.width > acc.elem_size and isinstance(value, ir.Call) and value.fn == "vec":
                for i, comp in enumerate(value.args):
                    st.private[(acc.buffer, offset.value + i * acc.elem_size, acc.elem_size)] = comp
        else:
            # A symbolic element: every other cell of the array may now hold this value or its
            # old one, an unknown function of the thread dimensions either depends on, of the
            # offset's and of the conditions under which the store runs. The element itself holds
            # the value, for reads at the same offset term.
            at = _cell_offset(self._offsets, offset)
            dims = self.thread_dims(offset).union(*(self.thread_dims(g) for g in st.guard))
            if value is not None:
                dims |= self.thread_dims(value)
            for key in [k for k in st.private if k[0] == acc.buffer and k[1] != at]:
                st.private[key] = self._state(f"private:{acc.buffer}@{next(self.fresh)}",
                                              _norm(dims | self.thread_dims(st.private[key])), self.iters(), None)
            st.private[(acc.buffer, at, acc.width)] = value if value is not None else \
                self._state(f"private:{acc.buffer}@{next(self.fresh)}", ALL_DIMS, self.iters(), None)

    def _branch(self, stmts, st: _State, cond, span) -> _State:
        sub = _State(dict(st.env), dict(st.private), st.guard + (cond,), st.divergent, st.grid_divergent,
                     ended=st.ended, assumed=st.assumed, atomics=dict(st.atomics))
        if not st.divergent and not is_uniform(cond):
            sub.divergent = (cond, span)
        sub.grid_divergent = self.grid.first(st.grid_divergent, cond, span)
        self.block(stmts, sub)
        return sub

    def if_(self, s: ir.If, st: _State) -> None:
        cond = self.term(s.cond, st)
        if self.emit:
            self.result.condition_uniform[id(s)] = is_uniform(cond)
            self.result.condition_grid_uniform[id(s)] = self.grid.uniform(cond)
            if not self.loop_stack:
                self.result.condition_terms[id(s)] = cond
            elif any(isinstance(x, ir.Barrier) for x in ir.walk_stmts(s.then + s.orelse, into_loops=True)):
                self.result.loop_branch_terms[id(s)] = cond
        if isinstance(cond, ir.Const):
            self.block(s.then if cond.value else s.orelse, st)
            return
        if s.assumed:
            # Every thread satisfies a stated fact: it guards what follows, and parts no threads.
            st.guard, st.assumed = st.guard + (cond,), st.assumed + (cond,)
            self.block(s.then, st)
            return
        t = self._branch(s.then, st, cond, s.span)
        f = self._branch(s.orelse, st, _simplify_not(cond), s.span)
        if t.dead and f.dead:
            st.dead = True
            return
        if t.dead or f.dead:
            live, dead_cond = (f, cond) if t.dead else (t, _simplify_not(cond))
            st.env, st.private, st.ended, st.atomics = live.env, live.private, live.ended, live.atomics
            # The rest runs only where the terminating branch was not taken.
            st.guard = st.guard + (_simplify_not(dead_cond),)
            if not st.divergent and not is_uniform(cond):
                st.divergent = (cond, s.span)
            st.grid_divergent = self.grid.first(st.grid_divergent, cond, s.span)
            return
        st.env = _join(cond, t.env, f.env)
        st.private = _join(cond, t.private, f.private)
        st.atomics = joined(t.atomics, f.atomics)
        # A loop a branch got past ended where that branch was taken.
        n = len(st.ended)
        st.ended += tuple(self.intern(ir.BinOp("||", _simplify_not(c), g))
                          for c, b in ((cond, t), (_simplify_not(cond), f)) for g in b.ended[n:])
        if not is_uniform(cond) and not st.divergent and (_has_exit(s.then) or _has_exit(s.orelse)):
            st.divergent = (cond, s.span)
        if _has_exit(s.then) or _has_exit(s.orelse):
            st.grid_divergent = self.grid.first(st.grid_divergent, cond, s.span)

    def loop(self, s: ir.Loop, st: _State) -> None:
        lid = s.id
        info = self.result.loops.get(lid)
        if info is None:
            info = self.result.loops[lid] = LoopInfo(s, tuple(self.loop_stack))
        assigned = _assigned(s.body) | _assigned(s.update)
        inductions = self._inductions(s, st, assigned)
        # Uniformity of loop-carried state is a fixpoint: start from "all uniform", widen. Outer
        # passes only ever make things less uniform, so a nested loop resumes from its last result.
        deps = self.thread_deps.setdefault(lid, {})
        # State entering the loop with a thread-dependent value holds it in iteration 0.
        cells = _assigned_private(s.body)
        entries = [(v, st.env[v]) for v in sorted(assigned - inductions.keys()) if v in st.env]
        entries += [(("cell", k), v) for k, v in st.private.items() if k[0] in cells and ("cell", k) not in inductions]
        for key, value in entries:
            deps[key] = _norm(deps.get(key, frozenset()) | self.thread_dims(value))
        # Every pass is complete (events, exit values); a later pass overwrites an earlier one's
        # events, so the last, stable pass is what remains. One pass when nothing changes.
        env, private, ended = dict(st.env), dict(st.private), st.ended
        st.atomics = through_loop(st.atomics)   # for the body and after the loop
        # Each extra pass widens something (a piece of state depends on one more thread
        # dimension, a floor goes), so this many always end with a pass that changed nothing.
        for _ in range(4 * (len(assigned) + len(st.private)) + 3):
            st.env, st.private, st.ended = dict(env), dict(private), ended
            if not self._loop_pass(s, st, assigned, inductions, deps, info, final=True):
                break

    def _state(self, name: str, dims: frozenset, args: tuple, lower: int | None) -> Sym:
        """Loop state as an unknown function of the thread indices it may depend on and of the
        iterations: two threads that agree on those dimensions hold the same value (a value of
        every dimension is one of each thread's own, as an opaque value is)."""
        return self.terms.state(name, self.terms.threads(dims) + args, lower)

    def thread_dims(self, t) -> frozenset:
        """The thread builtins a term's value is a function of, besides what every thread of the
        block shares (`tid.x`, `warp`, ...; all three thread indices for a per-thread value the
        analysis cannot see into, which every other builtin is a function of)."""
        hit = self._dims_memo.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        if isinstance(t, ir.Builtin):
            out = frozenset((t.name,)) if t.name.startswith(NON_UNIFORM_BUILTINS) else frozenset()
        elif isinstance(t, Sym) and not t.uniform:
            out = ALL_DIMS
        elif isinstance(t, ir.Const | ir.Param | Iter):
            out = frozenset()
        elif isinstance(t, Sym | ir.BinOp | ir.UnOp | ir.Select | ir.Call):
            out = _NO_DIMS
            for x in ir.operands(t):
                dims = self.thread_dims(x)
                if dims and not dims <= out:
                    out = out | dims
            out = _norm(out)
        else:
            out = ALL_DIMS
        self._dims_memo[id(t)] = (t, out)
        return out

    def _floor(self, lid: int, key: tuple, entry) -> int | None:
        """The floor assumed for loop state `key` of loop `lid`: its value on entry, unless a store
        in the loop was seen that might take it below (see `_keeps_floor`)."""
        if (lid, key) in self._broken or key not in self._floor_shaped(lid):
            return None
        return _lower(entry)

    def _floor_shaped(self, lid: int) -> set:
        """The loop state of loop `lid` worth assuming a floor for: integer private cells, and
        variables stored only as themselves plus a constant or minus something. An accumulator
        (`acc += a * b`, a float array) then never costs the loop a second pass."""
        hit = self._shaped.get(lid)
        if hit is None:
            loop = self.result.loops[lid].loop
            floating = {name for name, b in self.kernel.buffers.items() if b.elem_type.startswith(_FLOATING)}
            hit = self._shaped[lid] = _floor_shaped(loop.body + loop.update, floating)
        return hit

    def _keeps_floor(self, key: tuple, value, st: _State) -> None:
        """A store of `value` to loop state `key`: every enclosing loop that assumes a floor for it
        must see the value at or above it, or drop the floor (and run its pass again)."""
        for lid, floors in self._frames:
            floor = floors.get(key)
            if floor is not None and (value is None or not _at_least(value, floor, st.guard)):
                self._broken.add((lid, key))
                floors.pop(key)

    def _inductions(self, s: ir.Loop, st: _State, assigned: set[str]) -> dict[str, object]:
        """Variables stepped once per iteration by a loop-invariant amount: closed forms in the
        iteration number, whatever thread-dependent value they start from. A step is either the
        update clause's only store to the variable, or the body's, as a statement of the body
        itself (not under a branch) in a body no `continue` can cut short."""
        out: dict = {}
        counts: dict = {}
        for x in ir.walk_stmts(s.body + s.update, updates=True):
            key = _stepped(x)
            if key is not None:
                counts[key] = counts.get(key, 0) + 1
        steps = list(s.update)
        if not any(isinstance(x, ir.Continue) for x in _this_loop(s.body)):
            steps += s.body
        for u in steps:
            key = _stepped(u)
            if key is None or counts.get(key) != 1:
                continue
            if isinstance(u, ir.Assign):
                v, init = u.value, st.env.get(u.target)
                is_self = lambda e: isinstance(e, ir.Var) and e.name == u.target  # noqa: E731
            else:   # one cell of a private array, the only store to that array in the loop
                acc = u.access
                if not isinstance(acc.offset, ir.Const):
                    continue
                v, init = acc.value, st.private.get((acc.buffer, acc.offset.value, acc.width))
                key = ("cell", (acc.buffer, acc.offset.value, acc.width))
                is_self = lambda e: (isinstance(e, ir.Read) and e.access.buffer == acc.buffer  # noqa: E731
                                     and e.access.offset == acc.offset and e.access.width == acc.width)
            if (init is not None and isinstance(v, ir.BinOp) and v.op in ("+", "-", ">>", "<<", "*", "/")
                    and is_self(v.a) and not _mentions(v.b, assigned)):
                form = _closed_form(v.op, init, self.term(v.b, st), self.iter(s.id))
                if form is not None:
                    out[key] = form
        return out

    def _loop_pass(self, s, st: _State, assigned, inductions, deps: dict, info: LoopInfo,
                   final: bool) -> bool:
        lid = s.id
        env = dict(st.env)
        for v in sorted(assigned):     # sorted: terms are made (and named to Z3) in a fixed order
            if v in inductions:
                env[v] = inductions[v]
            else:
                env[v] = self._state(f"{v}@L{lid}", deps.get(v, frozenset()), self.iters() + (self.iter(lid),),
                                     self._floor(lid, ("var", v), st.env.get(v)))
        assigned_private = _assigned_private(s.body)
        private = {k: (inductions[("cell", k)] if ("cell", k) in inductions else
                       self._state(f"private:{_cell_name(k)}@L{lid}", deps.get(("cell", k), frozenset()),
                                   self.iters() + (self.iter(lid),), self._floor(lid, ("cell", k), v))
                       if k[0] in assigned_private else v)
                   for k, v in st.private.items()}
        self.loop_stack.append(lid)
        body_st = _State(env, private, st.guard, st.divergent, st.grid_divergent, ended=st.ended,
                         assumed=st.assumed, atomics=dict(st.atomics))
        cond = self.term(s.cond, body_st) if s.cond is not None else None
        if cond is not None:
            body_st.guard = body_st.guard + (cond,)
            # A thread in any iteration passed the test of the first one: the condition with
            # this loop's iteration at 0 held too (for a condition linear in the iteration, it
            # then holds in every iteration between).
            first = _at_first(self.intern, cond, lid, {})
            if first is not cond:
                body_st.guard = body_st.guard + (first,)
            if final and self.emit and len(self.loop_stack) == 1:
                self.result.entry_terms[id(s)] = (lid, first)
            if final and self.emit:
                self.result.loop_conds[id(s)] = (lid, cond)
            if not is_uniform(cond):
                info.uniform = False
        grid_uniform = self.grid.enter_loop(info, cond, first if cond is not None else None)
        if not grid_uniform and not body_st.grid_divergent:
            # Blocks run different numbers of iterations: a grid sync in the body diverges.
            body_st.grid_divergent = self.grid.why_loop(info, cond)
        if not info.uniform:
            _divergent_loops.add(lid)
            is_uniform.cache_clear()
            if not body_st.divergent:
                body_st.divergent = (cond if cond is not None else ir.Const(1), s.span)
        floors = {("var", v): env[v].lower for v in sorted(assigned)
                  if v not in inductions and isinstance(env[v], Sym) and env[v].lower is not None}
        floors.update({("cell", k): t.lower for k, t in private.items()
                       if k[0] in assigned_private and isinstance(t, Sym) and t.lower is not None})
        broken = len(self._broken)
        self._frames.append((lid, floors))
        self._exits.append([])
        try:
            self.block(s.body, body_st)
            exits = self._exits.pop()
            cont = _State(body_st.env, body_st.private, body_st.guard, body_st.divergent, body_st.grid_divergent,
                          ended=body_st.ended, assumed=body_st.assumed)
            self.block(s.update, cont)
        finally:
            self._frames.pop()
        self.loop_stack.pop()
        # A floor this pass assumed and a store broke: the pass read terms built on it, run again.
        changed = len(self._broken) > broken
        # Loop state depends on the thread dimensions that any way an iteration can end gives
        # it: the end of the body (and update), each `break` and `continue`, and, where one of
        # those leaves another value, the conditions that chose it.
        ends = ([] if body_st.dead else [cont]) + exits
        guard_dims: dict[int, set] = {}     # per end, its conditions' dimensions: the same for every key
        for key, value_in in [(v, lambda e, v=v: e.env.get(v)) for v in sorted(assigned) if v not in inductions] + \
                [(("cell", k), lambda e, k=k: e.private.get(k)) for k in private
                 if k[0] in assigned_private and ("cell", k) not in inductions]:
            old = deps.get(key, frozenset())
            new = set(old)
            values = [(value_in(e), e) for e in ends]
            for x, e in values:
                if x is None:
                    continue
                new |= self.thread_dims(x)
                if x is not values[0][0]:
                    dims = guard_dims.get(id(e))
                    if dims is None:
                        dims = guard_dims[id(e)] = set().union(*map(self.thread_dims, e.guard))
                    new |= dims
            new = _norm(new)
            if new != old:
                deps[key] = new
                changed = True
        if _breaks_non_uniformly(s.body, body_st) and info.uniform:
            info.uniform = False
            _divergent_loops.add(lid)
            is_uniform.cache_clear()
            changed = True
        if self.grid.enter_loop(info, None, None) != grid_uniform:
            changed = True      # an exit found in this pass: the body's grid syncs diverge, run again
        if final and self.emit:
            self.result.condition_uniform[id(s)] = info.uniform
            self.result.condition_grid_uniform[id(s)] = info.grid_uniform
        if final and info.grid_exit is not None and not st.grid_divergent and _has_return(s.body):
            st.grid_divergent = self.grid.why_loop(info, None)   # some blocks may have returned in it
        if final and cond is not None:
            st.ended += _ended(s, first, inductions, body_st.ended[len(st.ended):], self.intern)
        if final:
            # After the loop: carried state is whatever the last iteration left, unknown here.
            loop_uniform = info.uniform
            # Where the trip count may differ between threads, so may every exit value.
            settled = loop_uniform and not st.divergent
            for v in sorted(assigned):
                dims = (ALL_DIMS if not settled else self.thread_dims(inductions[v]) if v in inductions
                        else deps.get(v, frozenset()))
                st.env[v] = self._state(f"{v}@exit{lid}", dims, self.iters(), self._floor(lid, ("var", v), st.env.get(v)))
            for k in list(st.private):
                if k[0] in assigned_private:
                    dims = (ALL_DIMS if not settled else self.thread_dims(inductions[("cell", k)])
                            if ("cell", k) in inductions else deps.get(("cell", k), frozenset()))
                    st.private[k] = self._state(f"private:{_cell_name(k)}@exit{lid}", dims, self.iters(),
                                                self._floor(lid, ("cell", k), st.private[k]))
        return changed


ALL_DIMS = frozenset(("tid.x", "tid.y", "tid.z"))
_NO_DIMS: frozenset = frozenset()


def _norm(dims) -> frozenset:
    """Every thread builtin is a function of the three thread indices: those suffice."""
    return ALL_DIMS if ALL_DIMS <= dims else frozenset(dims)


def _cell_name(key) -> str:
    """`buf+8` for the cell at byte 8, `buf[at3]` for one at the 3rd symbolic offset."""
    buf, at, _ = key
    return f"{buf}+{at}" if isinstance(at, int) else f"{buf}[at{at[1]}]"


def _lower(t) -> int | None:
    """A value the term never goes below, where one is plain (a constant, an index, a counter,
    a sum of those)."""
    if isinstance(t, ir.Const):
        return t.value
    if isinstance(t, ir.Builtin) and t.name.startswith(("tid.", "bid.")):
        return 0
    if isinstance(t, ir.Builtin) and t.name.startswith(("bdim.", "gdim.")):
        return 1    # an extent: a launch with none runs no thread to see it
    if isinstance(t, Sym):
        return t.lower
    if isinstance(t, ir.BinOp) and t.op == "+":
        a, b = _lower(t.a), _lower(t.b)
        return None if a is None or b is None else a + b
    if isinstance(t, ir.BinOp) and t.op == "-" and isinstance(t.b, ir.Const):
        a = _lower(t.a)
        return None if a is None else a - t.b.value
    if isinstance(t, ir.BinOp) and t.op == "*":
        a, b = _lower(t.a), _lower(t.b)
        return a * b if a is not None and b is not None and a >= 0 and b >= 0 else None
    if isinstance(t, Iter):
        return 0
    return None


# Element types of private arrays that hold no index (their cells get no floor).
_FLOATING = ("float", "half", "double", "bfloat", "nv_bfloat", "__half", "__nv_bfloat")


def _floor_shaped(stmts, floating: set) -> set:
    """Keys ("var", name) of variables stored in `stmts` only as themselves plus a constant or
    minus something, and ("cell", (buffer, offset, width)) of integer private cells stored at a
    constant offset (SPIR-V stores a temporary: their values are checked as terms)."""
    def shaped(value, is_self) -> bool:
        return isinstance(value, ir.BinOp) and (
            (value.op == "-" and is_self(value.a))
            or (value.op == "+" and ((is_self(value.a) and isinstance(value.b, ir.Const))
                                     or (is_self(value.b) and isinstance(value.a, ir.Const)))))

    good: set = set()
    bad: set = set()
    for s in ir.walk_stmts(stmts, updates=True):
        if isinstance(s, ir.Assign):
            key = ("var", s.target)
            ok = shaped(s.value, lambda e: isinstance(e, ir.Var) and e.name == s.target)
        elif isinstance(s, ir.MemOp) and s.access.space == ir.PRIVATE and s.access.is_write:
            acc = s.access
            if not isinstance(acc.offset, ir.Const):
                bad.add(("array", acc.buffer))
                continue
            key = ("cell", (acc.buffer, acc.offset.value, acc.width))
            ok = acc.buffer not in floating
        else:
            continue
        (good if ok else bad).add(key)
    return {k for k in good - bad if not (k[0] == "cell" and ("array", k[1][0]) in bad)}


def _at_least(value, floor: int, guard: tuple) -> bool:
    """Is `value` at or above `floor` wherever the guard holds? A plain lower bound, or `x - y`
    stored under `y <= x` (TVM's tile scheduler: `tile_id -= batch_tiles` once `batch_tiles <= tile_id`)."""
    low = _lower(value)
    if low is not None and low >= floor:
        return True
    if isinstance(value, ir.BinOp) and value.op == "-" and floor <= 0:
        return any(_implies_at_most(g, value.b, value.a) for g in guard)
    return False


def _implies_at_most(g, small, big) -> bool:
    """Does guard term g imply small <= big?"""
    if isinstance(g, ir.Const):
        return g.value == 0          # a guard that never holds implies anything
    if isinstance(g, ir.Select):     # `c ? x : y`, as a short-circuit `&&` joins (SPIR-V's OpPhi)
        return (_implies_at_most(g.cond, small, big) or _implies_at_most(g.a, small, big)) \
            and _implies_at_most(g.b, small, big)
    if not isinstance(g, ir.BinOp):
        return False
    if g.op == "&&":
        return _implies_at_most(g.a, small, big) or _implies_at_most(g.b, small, big)
    if g.op in ("<=", "<"):
        return g.a is small and g.b is big
    if g.op in (">=", ">"):
        return g.a is big and g.b is small
    return False


def _breaks_non_uniformly(body, st: _State) -> bool:
    # Divergent exits are recorded by the If handling in `st.divergent`; a loop whose body made it
    # divergent via a break or continue has a thread-dependent trip count.
    return bool(st.divergent) and _has_exit(body)


def _stepped(s):
    """What a statement stores to, when it may step loop state: a variable's name, or a
    private array's name (a store at a constant offset), else None."""
    if isinstance(s, ir.Assign):
        return s.target
    if isinstance(s, ir.MemOp) and s.access.space == ir.PRIVATE and s.access.is_write:
        return ("array", s.access.buffer)
    return None


def _this_loop(stmts):
    """The statements of a loop body that belong to this loop (not to a loop inside it)."""
    return ir.walk_stmts(stmts, into_loops=False)


def _ended(s: ir.Loop, first, inductions: dict, inner: tuple, intern) -> tuple:
    """Facts true of a thread that got past loop `s` (entered when `first`, its condition in
    iteration 0, held), for a loop whose condition is its only way out (no break, continue or
    return), so that a thread leaves it only when the condition fails:

    - `v < B` (or `<=`, `>`, `>=`, `!=`) with `v` stepped by a loop-invariant amount (an
      induction, `v = init + i * step`) and a bound `B` nothing in the loop changes: the loop
      was not entered, or the step moves `v` toward `B` (`step > 0` for `<`; nonzero for `!=`).
      Otherwise the condition holds in every iteration (integers are mathematical, as in the
      whole encoding: `init + i * step` is `v` in iteration `i`) and the thread never leaves.
    - the facts of loops its body got past (`inner`), in iteration 0: true of a thread that ran
      that iteration to its end, as every thread that entered the loop and left it did.

    Each is implied by the thread reaching what follows the loop, so adding them to the queries
    of the accesses there removes only models in which a thread never gets to its access (models
    whose witnesses do not replay: the replay loops until its step limit), never a real collision.
    """
    if any(isinstance(x, (ir.Break, ir.Continue)) for x in _this_loop(s.body)) or _has_return(s.body):
        return ()
    out = [intern(ir.BinOp("||", _simplify_not(first), _at_first(intern, g, s.id, {}))) for g in inner]
    c = s.cond
    if isinstance(c, ir.BinOp) and c.op in _TOWARD:
        op, v, bound = (c.op, c.a, c.b) if isinstance(c.a, ir.Var) else (_MIRROR.get(c.op), c.b, c.a)
        closed = inductions.get(v.name) if isinstance(v, ir.Var) else None
        assigned = _assigned(s.body) | _assigned(s.update)
        # The step as the program spells it: `_inductions` takes its value once, on entry.
        stepped = [x.value.b for x in ir.walk_stmts(s.body + s.update, updates=True)
                   if isinstance(x, ir.Assign) and x.target == getattr(v, "name", None) and isinstance(x.value, ir.BinOp)]
        if (op is not None and isinstance(closed, ir.BinOp) and closed.op in ("+", "-") and len(stepped) == 1
                and _invariant(stepped[0], assigned) and _invariant(bound, assigned)):
            step = closed.b.b       # closed = init +/- Iter * step (`_inductions`)
        else:
            step = None
        # A constant step's direction is the program's, not the model's to choose; and it is the
        # one way a loop relies on wrap-around (`i--` over an unsigned `i < n`): left alone.
        if step is not None and not isinstance(step, ir.Const):
            sign = _TOWARD[op] if closed.op == "+" else {">": "<", "<": ">", "!=": "!="}[_TOWARD[op]]
            out.append(intern(ir.BinOp("||", _simplify_not(first), intern(ir.BinOp(sign, step, intern(ir.Const(0)))))))
    return tuple(out)


# The direction a counter must move for `v OP bound` to become false: the sign of its step.
_TOWARD = {"<": ">", "<=": ">", ">": "<", ">=": "<", "!=": "!="}
# `bound OP v` as `v OP' bound`.
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}


def _invariant(e, assigned: set[str]) -> bool:
    """`e` has one value in every iteration of a loop assigning `assigned`: constants, parameters,
    builtins and variables the loop does not assign (no memory read, no call)."""
    if isinstance(e, ir.Const | ir.Param | ir.Builtin):
        return True
    if isinstance(e, ir.Var):
        return e.name not in assigned
    if isinstance(e, ir.BinOp):
        return _invariant(e.a, assigned) and _invariant(e.b, assigned)
    if isinstance(e, ir.UnOp):
        return _invariant(e.a, assigned)
    return False


def _has_exit(stmts) -> bool:
    for s in stmts:
        if isinstance(s, (ir.Break, ir.Return)):
            return True
        if isinstance(s, ir.If) and (_has_exit(s.then) or _has_exit(s.orelse)):
            return True
    return False


def _has_return(stmts) -> bool:
    return any(isinstance(s, ir.Return) for s in ir.walk_stmts(stmts))


@ir.per_node(4096)    # each pass of a loop asks for its body, and so for every loop inside
def _assigned(stmts) -> frozenset[str]:
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, ir.Assign):
            out.add(s.target)
        elif isinstance(s, ir.If):
            out |= _assigned(s.then) | _assigned(s.orelse)
        elif isinstance(s, ir.Loop):
            out |= _assigned(s.body) | _assigned(s.update)
    return frozenset(out)


@ir.per_node(4096)
def _assigned_private(stmts) -> frozenset[str]:
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, ir.MemOp) and s.access.space == ir.PRIVATE:
            out.add(s.access.buffer)
        elif isinstance(s, ir.If):
            out |= _assigned_private(s.then) | _assigned_private(s.orelse)
        elif isinstance(s, ir.Loop):
            out |= _assigned_private(s.body) | _assigned_private(s.update)
    return frozenset(out)


def _closed_form(op: str, init, step, it):
    """The value after `it` steps of `x op= step` from `init`, or None where it has no closed form."""
    if op in ("/", "*"):
        k = power_bits.log2(step.value) if isinstance(step, ir.Const) else None
        if k is None:
            return None     # other factors and divisors have no closed form
        if op == "/":
            # `s /= 2^k` (a reduction's or a bitonic sort's halving stride): C's division
            # truncates, and truncations compose, so n steps divide by 2^(k*n) at once.
            return ir.BinOp("/", init, ir.BinOp("<<", ir.Const(1), ir.BinOp("*", it, ir.Const(k))))
        # `s *= 2^k` (the CUDA samples' reductions and scans) is `s <<= k`: the same value in
        # modular and in unbounded arithmetic.
        op, step = "<<", ir.Const(k)
    if op == "-" and isinstance(step, ir.Const):
        op, step = "+", ir.Const(-step.value)   # x - (-2) grows: its floor shows
    # Shifts compose as one shift by the sum (arithmetically, without wrap-around).
    return ir.BinOp(op, init, ir.BinOp("*", it, step))


def _mentions(e, names: set[str]) -> bool:
    """Whether e may change between iterations: it reads one of `names`, or memory."""
    if isinstance(e, ir.Var):
        return e.name in names
    if isinstance(e, ir.Read | ir.Opaque):
        return True
    return any(_mentions(x, names) for x in ir.operands(e))


def _join(cond, a: dict, b: dict) -> dict:
    out = {}
    for k in a:     # in a's order: a set of the keys would follow string hashing (PYTHONHASHSEED)
        if k not in b:
            continue
        va, vb = a[k], b[k]
        # Identity, not structural equality: comparing deep terms would cost more than a select.
        out[k] = va if va is vb else division_forms.select(cond, va, vb)
    return out


def fold_constant(op: str, a: int, b: int) -> int | None:
    try:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/" and b:
            q = abs(a) // abs(b)
            return q if (a >= 0) == (b >= 0) else -q
        if op == "%" and b:
            return a - b * fold_constant("/", a, b)  # type: ignore[operator]
        if op == "<<" and 0 <= b < 64:
            return a << b
        if op == ">>" and 0 <= b < 64:
            return a >> b
        if op == "&":
            return a & b
        if op == "|":
            return a | b
        if op == "^":
            return a ^ b
        if op in ("==", "!=", "<", "<=", ">", ">="):
            return int({"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op])
    except (ValueError, OverflowError):
        return None
    return None


def _subscripts(executor: "SymbolicExecutor", acc: ir.Access, st) -> tuple:
    """An access's subscripts (ir.Access.bounds) evaluated, but those that read memory (evaluating
    one again would record its read again)."""
    return tuple((executor.term(i, st), n) for i, n in acc.bounds if not _reads(i))


def _reads(e) -> bool:
    """Whether an IR expression reads memory."""
    return isinstance(e, ir.Read) or any(_reads(x) for x in ir.operands(e))
