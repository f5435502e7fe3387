"""Symbolic execution of one thread over the IR (`SymbolicExecutor`), with the uniformity analysis
that rides on it (uniformity.py); its events are in events.py, its terms in terms.py, the facts of
loops it reads in loop_facts.py.

Every access and barrier becomes an event whose address, value and guard are terms over the
thread's builtins, the kernel's parameters and the iteration numbers of its enclosing loops. A
term is *uniform* when it has the same value in every thread of a block at the same point of the
(aligned) execution: it mentions no thread index, lane or warp index, and no value derived from
one. Loop state kept in private arrays (`batch_idx_ptr[0]`) and loads at uniform addresses stay
uniform, which is what keeps TVM's `while (1)` tile loops from looking divergent.
"""

from __future__ import annotations

import dataclasses

import itertools
from dataclasses import dataclass, field

from analyzer import ir
from analyzer.analysis.decision import division_forms
from analyzer.analysis.decision.memory_guard import checkpoint
from analyzer.analysis.execution import term_walks
from analyzer.analysis.execution.atomic_order import AtomicOrder, joined, through_loop
from analyzer.analysis.execution.events import AccessEvent, BarrierEvent, Evaluation, LoopInfo
from analyzer.analysis.execution.float_constants import folded
from analyzer.analysis.execution.loop_facts import (ALL_DIMS, FLOATING, assigned_cells, assigned_names, at_least, bound_terms,
                                                    breaks_non_uniformly, cell_name, closed_form, ended_facts, floor_shaped, has_exit,
                                                    has_return, join_states, lower_bound, mentions, norm_dims, step_key, this_loop)
from analyzer.analysis.execution.sym import Iter, Sym
from analyzer.analysis.execution.terms import TermTable, at_first_iteration, cell_offset, fold_binop, negate
from analyzer.analysis.execution.uniformity import GridUniformity, divergent_loops, is_uniform


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
        self._depth_memo: dict[int, tuple] = {}
        self._iters: tuple = ()
        self._iters_of: list[int] = []
        self.terms = TermTable()
        # Floors of loop state, assumed at loop entry and checked at every store (an induction on
        # the iterations): the loops being executed, each with the floors it assumes, and the
        # (loop, state) pairs a store broke.
        self._frames: list[tuple[int, dict]] = []
        self._broken: set[tuple[int, tuple]] = set()
        self._shaped: dict[int, set] = {}
        self._offsets: dict[int, tuple] = {}   # symbolic private offsets (see `cell_offset`)
        # Per private array: the thread dimensions its contents may depend on (see `run`).
        self.private_dims: dict[str, frozenset] = {}
        # Per loop being executed: the states at its `break`s and `continue`s.
        self._exits: list[list[_State]] = []
        self.grid = GridUniformity(kernel, self.read_only)
        divergent_loops.clear()
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
                self.private_dims[b] = norm_dims(self.private_dims.get(b, frozenset()) | d)
        return self.result

    # ---------- expressions ----------
    def term(self, e, st: _State):
        return self.intern(self._term(e, st))

    def _undefined(self, name: str):
        """The value of a variable read before any assignment (undefined behaviour: any value)."""
        return self.intern(Sym(f"undef:{name}", False))

    def intern(self, t):
        return self.terms.intern(t)

    def _term(self, e, st: _State):
        kind = type(e)
        if kind is ir.Var:
            if e.name in st.env:
                return st.env[e.name]
            return self._undefined(e.name)
        if kind is ir.BinOp:
            return self.terms.binop(e.op, self.term(e.a, st), self.term(e.b, st))
        if isinstance(e, ir.Const | ir.Param | ir.Builtin):
            return e
        if isinstance(e, ir.BinOp):
            return fold_binop(e.op, self.term(e.a, st), self.term(e.b, st))
        if isinstance(e, ir.UnOp):
            return ir.UnOp(e.op, self.term(e.a, st))
        if isinstance(e, ir.Select):
            return division_forms.select(self.term(e.cond, st), self.term(e.a, st), self.term(e.b, st))
        if isinstance(e, ir.Call):
            if (name := folded(e, self.kernel.lang)) is not None:
                return ir.Call(name, ())
            return dataclasses.replace(e, args=tuple(self.term(a, st) for a in e.args))
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
            key = (acc.buffer, cell_offset(self._offsets, offset), acc.width)
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
                                                   next(self.order), st.ended, bound_terms(self, acc, st))

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
            if self.depth(st.env[s.target]) > term_walks.MAX_TERM_DEPTH:
                # a value thousands of operations deep (an unrolled chain of multiply-adds): an
                # unknown value of the thread and iteration, so that no later walk recurses through it
                st.env[s.target] = Sym(f"deep:{s.target}@{s.span.line}:{s.span.col}", False, self.iters())
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
        self._stored_dims[acc.buffer] = norm_dims(self._stored_dims.get(acc.buffer, frozenset()) | stored)
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
            at = cell_offset(self._offsets, offset)
            dims = self.thread_dims(offset).union(*(self.thread_dims(g) for g in st.guard))
            if value is not None:
                dims |= self.thread_dims(value)
            for key in [k for k in st.private if k[0] == acc.buffer and k[1] != at]:
                st.private[key] = self._state(f"private:{acc.buffer}@{next(self.fresh)}",
                                              norm_dims(dims | self.thread_dims(st.private[key])), self.iters(), None)
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
        f = self._branch(s.orelse, st, negate(cond), s.span)
        if t.dead and f.dead:
            st.dead = True
            return
        if t.dead or f.dead:
            live, dead_cond = (f, cond) if t.dead else (t, negate(cond))
            st.env, st.private, st.ended, st.atomics = live.env, live.private, live.ended, live.atomics
            # The rest runs only where the terminating branch was not taken.
            st.guard = st.guard + (negate(dead_cond),)
            if not st.divergent and not is_uniform(cond):
                st.divergent = (cond, s.span)
            st.grid_divergent = self.grid.first(st.grid_divergent, cond, s.span)
            return
        st.env = join_states(cond, t.env, f.env, self._undefined)
        st.private = join_states(cond, t.private, f.private)
        st.atomics = joined(t.atomics, f.atomics)
        # A loop a branch got past ended where that branch was taken.
        n = len(st.ended)
        st.ended += tuple(self.intern(ir.BinOp("||", negate(c), g))
                          for c, b in ((cond, t), (negate(cond), f)) for g in b.ended[n:])
        if not is_uniform(cond) and not st.divergent and (has_exit(s.then) or has_exit(s.orelse)):
            st.divergent = (cond, s.span)
        if has_exit(s.then) or has_exit(s.orelse):
            st.grid_divergent = self.grid.first(st.grid_divergent, cond, s.span)

    def loop(self, s: ir.Loop, st: _State) -> None:
        lid = s.id
        info = self.result.loops.get(lid)
        if info is None:
            info = self.result.loops[lid] = LoopInfo(s, tuple(self.loop_stack))
        assigned = assigned_names(s.body) | assigned_names(s.update)
        inductions = self._inductions(s, st, assigned)
        # Uniformity of loop-carried state is a fixpoint: start from "all uniform", widen. Outer
        # passes only ever make things less uniform, so a nested loop resumes from its last result.
        deps = self.thread_deps.setdefault(lid, {})
        # State entering the loop with a thread-dependent value holds it in iteration 0.
        cells = assigned_cells(s.body)
        entries = [(v, st.env[v]) for v in sorted(assigned - inductions.keys()) if v in st.env]
        entries += [(("cell", k), v) for k, v in st.private.items() if k[0] in cells and ("cell", k) not in inductions]
        for key, value in entries:
            deps[key] = norm_dims(deps.get(key, frozenset()) | self.thread_dims(value))
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
        """The thread builtins a term's value is a function of (term_walks.thread_dims)."""
        return term_walks.thread_dims(t, self._dims_memo)

    def depth(self, t) -> int:
        return term_walks.depth(t, self._depth_memo)

    def _floor(self, lid: int, key: tuple, entry) -> int | None:
        """The floor assumed for loop state `key` of loop `lid`: its value on entry, unless a store
        in the loop was seen that might take it below (see `_keeps_floor`)."""
        if (lid, key) in self._broken or key not in self._floor_shaped(lid):
            return None
        return lower_bound(entry)

    def _floor_shaped(self, lid: int) -> set:
        """The loop state of loop `lid` worth assuming a floor for: integer private cells, and
        variables stored only as themselves plus a constant or minus something. An accumulator
        (`acc += a * b`, a float array) then never costs the loop a second pass."""
        hit = self._shaped.get(lid)
        if hit is None:
            loop = self.result.loops[lid].loop
            floating = {name for name, b in self.kernel.buffers.items() if b.elem_type.startswith(FLOATING)}
            hit = self._shaped[lid] = floor_shaped(loop.body + loop.update, floating)
        return hit

    def _keeps_floor(self, key: tuple, value, st: _State) -> None:
        """A store of `value` to loop state `key`: every enclosing loop that assumes a floor for it
        must see the value at or above it, or drop the floor (and run its pass again)."""
        for lid, floors in self._frames:
            floor = floors.get(key)
            if floor is not None and (value is None or not at_least(value, floor, st.guard)):
                self._broken.add((lid, key))
                floors.pop(key)

    def _inductions(self, s: ir.Loop, st: _State, assigned: set[str]) -> dict[str, object]:
        """Variables stepped once per iteration by a loop-invariant amount: closed forms in the
        iteration number, whatever thread-dependent value they start from. A step is either the
        update clause's only store to the variable, or the body's, as a statement of the body
        itself (not under a branch) before any statement that may `continue` (every iteration
        that reaches the `continue` has stepped; a `break` ends the iterations)."""
        out: dict = {}
        counts: dict = {}
        for x in ir.walk_stmts(s.body + s.update, updates=True):
            key = step_key(x)
            if key is not None:
                counts[key] = counts.get(key, 0) + 1
        steps = list(s.update)
        for x in s.body:
            if any(isinstance(y, ir.Continue) for y in this_loop([x])):
                break
            steps.append(x)
        for u in steps:
            key = step_key(u)
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
                    and is_self(v.a) and not mentions(v.b, assigned)):
                form = closed_form(v.op, init, self.term(v.b, st), self.iter(s.id))
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
        assigned_private = assigned_cells(s.body)
        private = {k: (inductions[("cell", k)] if ("cell", k) in inductions else
                       self._state(f"private:{cell_name(k)}@L{lid}", deps.get(("cell", k), frozenset()),
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
            first = at_first_iteration(self.intern, cond, lid, {})
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
            divergent_loops.add(lid)
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
            new = norm_dims(new)
            if new != old:
                deps[key] = new
                changed = True
        if breaks_non_uniformly(s.body, body_st) and info.uniform:
            info.uniform = False
            divergent_loops.add(lid)
            is_uniform.cache_clear()
            changed = True
        if self.grid.enter_loop(info, None, None) != grid_uniform:
            changed = True      # an exit found in this pass: the body's grid syncs diverge, run again
        if final and self.emit:
            self.result.condition_uniform[id(s)] = info.uniform
            self.result.condition_grid_uniform[id(s)] = info.grid_uniform
        if final and info.grid_exit is not None and not st.grid_divergent and has_return(s.body):
            st.grid_divergent = self.grid.why_loop(info, None)   # some blocks may have returned in it
        if final and cond is not None:
            st.ended += ended_facts(s, first, inductions, body_st.ended[len(st.ended):], self.intern)
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
                    st.private[k] = self._state(f"private:{cell_name(k)}@exit{lid}", dims, self.iters(),
                                                self._floor(lid, ("cell", k), st.private[k]))
        return changed


