"""What one thread's atomics on a counter tell of their results, for the symbolic executor.

Two threads' atomic results are each the thread's own value (frontend/atomics.py), but what a
thread's atomics return is tied, in every interleaving, to its own earlier atomics and to the
counter's initial value:

- a counter that only moves one way (`ir.atomic_direction`: every write of it an atomic
  increment, or every one a decrement): a later atomic of the thread sees at least (at most) what
  its own earlier one left, the earlier result plus the earlier step. Two draws of one thread are
  so ordered, and an atomic load after the thread's own fetch-add of +s sees at least old + s;
- block memory (shared, threadgroup, workgroup) in a block of one thread: nothing but the thread
  touches the element, so its next atomic there sees exactly what its last one left;
- a counter only atomic increments and decrements write: every result is its initial value plus a
  multiple of the steps' divisor (a counter drawn two at a time keeps its parity); moving one way,
  with its write sites outside loops and the launch given, it lies within what the whole launch
  adds; and where the launch gives its memory two threads and every thread runs one sequence of
  atomics on it (`sequence`), a pair's results are exactly those of one interleaving of the two.

The executor keeps, per path, the thread's latest atomic of each buffer (`Link`) and gives the next
atomic result at the same offset term these bounds (`Sym.after`), which the solver states
(solver.py). What the path cannot vouch for is dropped: a plain store of the thread to the buffer,
a branch that ends on another atomic, a loop's iterations (only bounds from before the loop hold
through it, and no exact value).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from analyzer import ir
from analyzer.analysis.execution.sym import Sym

# Sym.after relations: the value is at least / at most the bound, or, where the block has one
# thread, equal to it.
AT_LEAST, AT_MOST, ALONE = "at-least", "at-most", "alone"
CONGRUENT = "mod"   # "modN": the value minus the bound is a multiple of N
PAIR = "pair:"      # "pair:BUFFER:J": the J-th atomic of the buffer's sequence, the pair alone with it


@dataclass(frozen=True)
class Link:
    """The thread's latest atomic of a buffer on this path."""
    acc: int                  # its access id
    offset: object            # its offset term
    bound: object = None      # what the next atomic result at this offset is at least (at most)
    exact: object = None      # what the element holds after it, where the thread is alone with it
    pending: bool = False     # a read-modify-write whose result term is not built yet
    before: "Link | None" = None   # a pending one's predecessor
    value: object = None      # its result's term, once built


def _settled(link: Link | None) -> Link | None:
    """A pending link as the next atomic sees it: its result never built (the program drops it),
    only its predecessor's bound, if at the same offset, still holds."""
    if link is None or not link.pending:
        return link
    b = link.before
    return Link(link.acc, link.offset, b.bound if b is not None and b.offset is link.offset else None)


def _delta(acc: ir.Access) -> int | None:
    """The change an atomic makes to its element: 0 for a load, its step for an increment or a
    decrement; None when the IR does not say."""
    return 0 if acc.atomic_op == "load" else acc.step if acc.atomic_op in ("increment", "decrement") else None


def joined(a: dict, b: dict) -> dict:
    """Links both paths of a branch end on."""
    return {buf: link for buf, link in a.items() if b.get(buf) is link}


def through_loop(links: dict) -> dict:
    """Links that hold in every iteration of a loop and after it: bounds only."""
    return {buf: Link(s.acc, s.offset, s.bound) for buf, s in ((b, _settled(x)) for b, x in links.items())}


class AtomicOrder:
    """Part of SymbolicExecutor: uses its `kernel`, `term`, `intern`, `iters` and `loaded`."""

    def atomic_memop(self, acc: ir.Access, offset, st) -> None:
        """A store or atomic of the thread to `acc`'s buffer: a plain store drops the buffer's link;
        an atomic starts a pending one, completed where its result is built (`atomic_result`)."""
        if not acc.atomic:
            if acc.is_write:
                st.atomics.pop(acc.buffer, None)
            return
        st.atomics[acc.buffer] = Link(acc.id, offset, pending=True, before=_settled(st.atomics.get(acc.buffer)))

    def atomic_result(self, e: ir.Opaque, st):
        """The term of an atomic's result (`e.fetch` its access): the element's one value where
        no atomic changes it, else the thread's own (a ticket where `ir.ticket_holds`), bounded
        by the thread's earlier atomic of the element."""
        acc = e.fetch
        if ir.loaded_unchanged(self.kernel, e):   # the element's one value, as a plain load's
            return self.loaded(acc, self.term(acc.offset, st))
        iters = self._draw_iters(acc) if ir.ticket_holds(self.kernel, e) else None
        if iters is not None:   # the solver keeps draws apart (decision/tickets.py)
            name, args = ir.ticket_name(e), (self.term(e.ticket, st),) + self._amount(e, st) + iters
        else:
            name, args = f"opaque{e.site}", self.iters()
        head = st.atomics.get(acc.buffer)
        if head is None or head.acc != acc.id:   # not the thread's latest atomic of the buffer here
            return self.intern(_sym(name, args, ()))
        if not head.pending:
            return head.value
        return self._ordered(acc, head.offset, head.before, name, args, st)

    def _draw_iters(self, acc: ir.Access) -> tuple | None:
        """The iterations that name a draw: those of the loops around its atomic (`ir.draw_loops`),
        where they all enclose this point; else None (the result is then the thread's own value)."""
        loops = ir.draw_loops(self.kernel).get(acc.id)
        if loops is None or not set(loops) <= set(self.loop_stack):
            return None
        return tuple(self.iter(lid) for lid in loops)

    def _amount(self, e: ir.Opaque, st) -> tuple:
        """A range ticket's amount, as its term's second argument (none for a constant step). Its
        reads were recorded where the atomic evaluated it: not again here."""
        if e.amount is None:
            return ()
        emit, self.emit = self.emit, False
        try:
            return (self.term(e.amount, st),)
        finally:
            self.emit = emit

    def atomic_load(self, acc: ir.Access, offset, st):
        """The term of an atomic load that reads the element (`Read(acc)`) of a buffer some atomic
        changes: the thread's own value, bounded by its earlier atomic of the element."""
        return self._ordered(acc, offset, _settled(st.atomics.get(acc.buffer)),
                             f"aload{acc.id}", (offset,) + self.iters(), st)

    def _ordered(self, acc: ir.Access, offset, prev: Link | None, name: str, args: tuple, st):
        way = ir.atomic_direction(self.kernel, acc.buffer)
        delta = _delta(acc)
        after = []
        if prev is not None and prev.offset is offset:
            if way and prev.bound is not None:
                after.append((AT_LEAST if way > 0 else AT_MOST, prev.bound))
            if prev.exact is not None:
                after.append((ALONE, prev.exact))
        counter = _counters(self.kernel).get(acc.buffer)
        if counter is not None and delta is not None:
            # Every write of the element adds a multiple of the steps' divisor to its initial value;
            # on a counter that moves one way, all the launch adds before this atomic's own write.
            init = self.intern(Sym(f"{'ginit' if acc.space == ir.GLOBAL else 'init'}:{acc.buffer}", True, (offset,)))
            divisor, per_thread = counter
            if divisor > 1:
                after.append((f"{CONGRUENT}{divisor}", init))
            total = launch_total(self.kernel, acc.space, per_thread) if way else None
            if total is not None:
                far = self.terms.binop("+", init, self.intern(ir.Const(way * (total - abs(delta)))))
                after += [(AT_LEAST, init), (AT_MOST, far)] if way > 0 else [(AT_MOST, init), (AT_LEAST, far)]
            j = pair_index(self.kernel, acc)
            if j is not None:
                after.append((f"{PAIR}{acc.buffer}:{j}", init))
        value = self.intern(_sym(name, args, tuple(after)))
        left = (None if delta is None else value if delta == 0 else
                self.terms.binop("+", value, self.intern(ir.Const(delta))))
        st.atomics[acc.buffer] = Link(acc.id, offset, left if way else None,
                                      left if acc.space == ir.SHARED else None, value=value)
        return value


def launch_total(kernel: ir.Kernel, space: str, per_thread: int | None) -> int | None:
    """The most all threads that share memory `space` move an element by, each moving it by at
    most `per_thread`; None where that or the launch is not known."""
    dims = [kernel.block_dim.get(d, 1) for d in "xyz"]
    if space == ir.GLOBAL:
        dims += [kernel.grid_dim.get(d) for d in "xyz"]
    if per_thread is None or space not in (ir.GLOBAL, ir.SHARED) or not all(isinstance(n, int) for n in dims):
        return None
    return per_thread * math.prod(dims)


@ir.per_kernel
def _counters(kernel: ir.Kernel) -> dict:
    """Buffers that only atomic increments and decrements write, each with the divisor of its
    steps and what one thread's writes of it add up to at most (None where a write site is in a
    loop: it may run any number of times)."""
    outside = {id(s.access) for s in ir.walk_stmts(kernel.body, into_loops=False) if isinstance(s, ir.MemOp)}
    plain, steps, totals = set(), {}, {}
    for s in ir.walk_stmts(kernel.body, updates=True):
        acc = s.access if isinstance(s, ir.MemOp) else None
        if acc is None or not acc.is_write or acc.atomic_op == "load":
            continue
        if acc.atomic_op not in ("increment", "decrement") or not acc.step or not ir.atomic_among_all(acc):
            plain.add(acc.buffer)
            continue
        steps[acc.buffer] = math.gcd(steps.get(acc.buffer, 0), acc.step)
        total = totals.get(acc.buffer, 0)
        totals[acc.buffer] = total + abs(acc.step) if total is not None and id(acc) in outside else None
    return {b: (g, totals[b]) for b, g in steps.items() if b not in plain}


def pair_index(kernel: ir.Kernel, acc: ir.Access) -> int | None:
    """Where `acc` stands in the sequence of atomics every thread runs on its buffer's one element
    (`sequence`), where the launch gives that memory two threads: the two threads of a pair are
    then the only ones, and what each sees is its own atomics' and some of the other's."""
    seq = _sequences(kernel).get(acc.buffer)
    if seq is None or launch_total(kernel, acc.space, 1) != 2:
        return None
    ids = [a for a, _ in seq]
    return ids.index(acc.id) if acc.id in ids else None


def sequence(kernel: ir.Kernel, buffer: str) -> tuple:
    """What each atomic of the buffer's sequence adds (0 for a load), in program order."""
    return tuple(d for _, d in _sequences(kernel)[buffer])


@ir.per_kernel
def _sequences(kernel: ir.Kernel) -> dict:
    """Counters (`_counters`) of one element whose atomics all stand at the kernel's top level, one
    a statement: every thread runs the same sequence of them, up to where it returns."""
    counters = _counters(kernel)
    top = {id(s) for s in kernel.body}
    seqs: dict = {}
    bad = set()
    for s in ir.walk_stmts(kernel.body, updates=True):
        mine = [a for a in ir.accesses([s]) if a.atomic and a.buffer in counters]
        if isinstance(s, (ir.If, ir.Loop)):   # its own condition's atomics; its body's come by themselves
            cond = [] if s.cond is None else [ir.Eval(s.cond, s.span)]
            mine = [a for a in ir.accesses(cond) if a.atomic and a.buffer in counters]
        for a in mine:
            seqs.setdefault(a.buffer, []).append((a.id, a.step if a.atomic_op != "load" else 0))
            # (a loop's condition runs once an iteration)
            if id(s) not in top or isinstance(s, ir.Loop) or len(mine) > 1 or not isinstance(a.offset, ir.Const):
                bad.add(a.buffer)
    offsets = {}
    for a in ir.accesses(kernel.body):
        if a.atomic and a.buffer in seqs:
            offsets.setdefault(a.buffer, set()).add(getattr(a.offset, "value", None))
    return {b: tuple(seq) for b, seq in seqs.items() if b not in bad and len(offsets[b]) == 1}


def _sym(name: str, args: tuple, after: tuple) -> Sym:
    return Sym(name, False, args, None, after)
