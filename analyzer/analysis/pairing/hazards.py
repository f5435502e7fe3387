"""What the pair checks find: hazards with their witnesses, undecided pairs, barrier verdicts, and
one kernel's `PairAnalysis` holding them; the hazard kinds and the out-of-time reasons.

Separate from races.py so that the parts `PairChecker` is composed of can build findings without
importing the checker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from analyzer import ir
from analyzer.analysis.execution.events import AccessEvent

WAR, RAW, WAW = "write-after-read", "read-after-write", "write-after-write"


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
    # A grid witness (grid.py): thread 2's block, another than `block` (thread 1's).
    second_block: tuple[int, int, int] | None = None

    def as_dict(self) -> dict:
        out = {
            "first_thread": list(self.first.index), "second_thread": list(self.second.index),
            "block": list(self.block),
            "first_iterations": {str(k): v for k, v in self.first.iterations.items()},
            "second_iterations": {str(k): v for k, v in self.second.iterations.items()},
            "element": self.element, "byte_offset": self.byte,
            "first_warp": self.first.warp, "second_warp": self.second.warp,
            "same_warp": self.same_warp, "params": dict(self.params),
        }
        if self.second_block is not None:
            out["first_block"], out["second_block"] = list(self.block), list(self.second_block)
            out["blocks"] = [list(self.block), list(self.second_block)]
        return out


@dataclass
class Outside:
    """Where a collision found without the in-bounds facts leaves them (the out-of-bounds rule):
    the access, the thread that makes it, the index it uses there, and what that index is outside."""
    access: AccessEvent
    thread: tuple[int, int, int]
    index: int
    bound: str
    k: int = 1              # the solver's thread (1 runs the pair's first site, 2 its second)
    first: bool = False     # whether that thread is the witness's first


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
    # Between blocks (grid.py): block-uniform loop state (name, loop line) the collision needs to
    # hold the same values in the two blocks, as a persistent kernel's tile counter would if two
    # blocks drew the same tile. kernelrace cannot rule that out: a warning, like data dependence.
    block_state: tuple[tuple[str, int], ...] = ()
    # Buffer contracts --no-contracts turned off that would refute the collision (contracts.py).
    contracts: tuple[str, ...] = ()
    # Seen in a run of the block on inputs drawn from this seed, where the solver could not decide
    # the pair (observed.py); None: found by the solver.
    observed: int | None = None
    # What the race's condition is computed from (race_condition.ConditionQuery), once per finding.
    query: object | None = field(default=None, repr=False, compare=False)
    # Set when the collision needs an access outside its buffer or a fixed-size dimension: an
    # out-of-bounds finding, not a race (races.PairChecker._outside_bounds).
    outside: Outside | None = None


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


class Checker(Protocol):
    """The race pass's checker (`races.PairChecker`) as its analysis uses it, named by what it
    offers: races.py imports this module."""

    def run_scope(self, out: PairAnalysis) -> list[Hazard]: ...

    def run_redundant(self, out: PairAnalysis) -> list[BarrierVerdict]: ...

    def rests_on_bounds(self, out: PairAnalysis) -> list[str]: ...


@dataclass
class PairAnalysis:
    hazards: list[Hazard] = field(default_factory=list)
    undecided: list[Undecided] = field(default_factory=list)
    queries: int = 0
    # The race pass's checker, with its encodings, barrier intervals, settled pairs and deadline:
    # the passes on demand (barrier scope, redundant barriers) continue from it.
    checker: Checker | None = field(default=None, repr=False)
    # Between blocks (grid.py, with `explain`): the pairs found never to collide only thanks to a
    # stated assumption (declared shapes) or a contract, said; within a block the checker says them.
    assumed: list[str] = field(default_factory=list)
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


OUT_OF_TIME = "the kernel's time limit (--kernel-timeout) ran out"
# A collision found but given no witness search (`PairChecker.detail_cap`): its `replay_failure`.
NOT_SEARCHED = "not searched"
# Between blocks, where a kernel's many store sites all collide when a row stride is free (ncnn's
# gemm_sg: 16 stores of one output, ~100 pairs, each witness search seconds long).
GRID_DETAIL_CAP = 8
KERNEL_LIMIT = ("the kernel's time limit (--kernel-timeout) ran out before this pair and the rest of this "
                "buffer's pairs (at most {n}) were checked")
