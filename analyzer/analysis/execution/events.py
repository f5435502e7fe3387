"""What symbolic execution produces for one kernel: an event per access and barrier (its
address, value and guard as terms), loop facts, and the kernel's `Evaluation`."""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer import ir


Term = object  # ir.Expr | Iter | Sym


@dataclass
class AccessEvent:
    access: ir.Access
    offset: Term
    value: Term | None
    guard: tuple            # terms that are all nonzero when the access executes
    loops: tuple[int, ...]  # enclosing loop ids, outermost first
    order: int              # position in program order
    # Terms nonzero whenever the access executes because the thread got past a loop before it:
    # the loop ended (`ended_facts`). Kept apart from the guard: they say nothing about which threads
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


