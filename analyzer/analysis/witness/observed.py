"""Races seen in a run of the kernel, for the pairs the solver cannot decide.

Some pairs keep every query past its budget: bit tricks such as a bitonic sort's `tid ^ stride`,
with `stride` a power of two shifted by loop counters, are hard for integer arithmetic, and the
pair is `unknown`. Run on concrete values, the same kernel often shows the collision at once. So,
at a kernel's first undecided pair, its first block runs once on seeded inputs (analyzer/dynamic,
the interpreter and detector `kernelrace confirm` uses; buffer contracts in force shape the
inputs). A pair seen there, two threads on the same bytes in one barrier interval, is a race with
a concrete witness by construction; it is reported instead of `unknown`, and from then on a pair
seen colliding skips its queries. Pairs decided before the run keep their verdicts and witnesses.

Nothing here can make a pair clean: a run that cannot be made adds nothing (a block extent not
given, more steps than OBSERVE_STEPS, a construct the interpreter has no rule for, a buffer with a
declared shape: the analysis assumes each of its indices inside its dimension, and a run sees only
flattened offsets), nor does one that touches a buffer outside its declared size (which the
analysis assumes never happens); the pairs it did not see collide stay as the solver left them.
"""

from __future__ import annotations

from analyzer import ir
from analyzer.analysis.execution.events import AccessEvent
from analyzer.analysis.execution.sym import Sym
from analyzer.analysis.pairing.hazards import Hazard, Thread, Witness
from analyzer.analysis.pairing.pair_kinds import hazard_kind
from analyzer.analysis.stated.contracts import PARAM
from analyzer.dynamic import schedule
from analyzer.dynamic.detector import Detector, Race
from analyzer.dynamic.launch import make_launch
from analyzer.dynamic.values import InterpretError

# Statements the run may take, all threads together: about a second of interpreting. The run is
# asked for only once a query has spent its whole budget.
OBSERVE_STEPS = 400_000
SEED = 0


class _InBounds(Detector):
    """A detector that also notes the first access outside its buffer's declared size."""

    def __init__(self, kernel: ir.Kernel):
        super().__init__()
        self.kernel = kernel
        self.outside: str | None = None

    def observe(self, t, acc: ir.Access, offset: int, is_write: bool, value=None, size: int = 1) -> None:
        buf = self.kernel.buffers.get(acc.buffer)
        if (self.outside is None and buf is not None and buf.bounded and buf.size_bytes
                and not 0 <= offset <= buf.size_bytes - acc.width):
            self.outside = f"byte {offset} of {buf.display or buf.name} at line {acc.span.line}"
        super().observe(t, acc, offset, is_write, value, size)


class Observation:
    """One run of a kernel's first block, made on first use; `race(a, b)` is the collision of
    the two access sites it saw, or None."""

    def __init__(self, kernel: ir.Kernel, contracts: list, loop_line: dict[int, int], ev):
        """`contracts`: the (contract, buffer) pairs in force (contracts.in_force); `ev` the
        kernel's symbolic evaluation (its accesses name the loads of an address)."""
        self.kernel = kernel
        self.ev = ev
        self.contracts = [str(c) for c, name in contracts if not name.startswith(PARAM)]
        # Scalar parameters a range contract bounds: a value the run picks stays inside.
        self.ranges = {c.buffer: (c.lo, c.hi) for c, name in contracts if name.startswith(PARAM)}
        self.loop_line = loop_line
        self.races: dict[tuple[int, int], Race] | None = None
        self.params: dict[str, int] = {}
        self.failure: str | None = None     # why there is no run to go by

    @property
    def made(self) -> bool:
        return self.races is not None

    def make(self) -> None:
        if self.races is not None:
            return
        self.races = {}
        k = self.kernel
        if not all(isinstance(k.block_dim.get(d), int) for d in ("x", "y", "z")):
            self.failure = "a block extent is not given"
            return
        shaped = [b.display or b.name for b in k.buffers.values() if b.strides or b.param_row]
        if shaped:
            # The analysis assumes each index of a declared shape inside its dimension; a run sees
            # flattened offsets only, and cannot tell a row's overflow from the next row.
            self.failure = f"{shaped[0]} has a declared shape, whose dimensions a run cannot check"
            return
        threads = k.block_dim["x"] * k.block_dim["y"] * k.block_dim["z"]
        try:
            # A parameter nothing gives a value gets the block's thread count: an extent that
            # fills one block, the commonest meaning of `n` in a kernel's guard (inside the range
            # a contract states for it).
            picked = {p: min(max(threads, lo), hi) for p, (lo, hi) in self.ranges.items() if p not in k.bindings}
            launch = make_launch(k, picked, None, SEED, [(0, 0, 0)], default=threads, contracts=self.contracts)
            detector = _InBounds(k)
            schedule.run(k, launch, schedule.order("ascending", launch, SEED), [(0, 0, 0)],
                         detector=detector, run_steps=OBSERVE_STEPS)
        except (InterpretError, RecursionError) as exc:
            self.failure = str(exc)
            return
        if detector.outside is not None:
            self.failure = f"the run went outside a buffer's declared size ({detector.outside})"
            return
        self.races = detector.races
        self.params = {p: launch.params[p] for p in k.params if p in launch.params}

    def race(self, a: AccessEvent, b: AccessEvent) -> Race | None:
        if not self.races:
            return None
        x, y = a.access.id, b.access.id
        return self.races.get((x, y) if x <= y else (y, x))

    def seen(self, a: AccessEvent, b: AccessEvent) -> Hazard | None:
        """The pair (a, b)'s race in the run, as its hazard; None when the run did not see one."""
        race = self.race(a, b)
        if race is None:
            return None
        first = a if race.first.access.id == a.access.id else b
        kind = hazard_kind(first.access, (b if first is a else a).access)
        return None if kind is None else self.hazard(race, a, b, kind)

    def hazard(self, race: Race, a: AccessEvent, b: AccessEvent, kind: str) -> Hazard:
        """The race as the pair (a, b)'s hazard: the access the run made first is `first`."""
        first, second = (a, b) if race.first.access.id == a.access.id else (b, a)
        threads = [Thread(t.thread, t.warp, {self.loop_line.get(lid, lid): n for lid, n in t.iterations})
                   for t in (race.first, race.second)]
        witness = Witness(threads[0], threads[1], (0, 0, 0), race.element, race.byte,
                          race.first.warp == race.second.warp, dict(self.params))
        return Hazard(kind, first, second, witness, data_dependent=_index_maps(a, b, self.ev.accesses), observed=SEED)


def _index_maps(a: AccessEvent, b: AccessEvent, accesses: dict[int, AccessEvent]) -> tuple[str, ...]:
    """The buffers the two addresses read (loaded values are `load<access id>` terms): the run's
    seeded contents of an index map may repeat a value where the real map never does, so such a
    collision says less (a warning, as the solver's data-dependent races are)."""
    out: dict[str, None] = {}
    seen: set[int] = set()
    stack = [a.offset, b.offset]
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if isinstance(t, Sym) and t.name.startswith("load") and t.name[4:].isdigit():
            site = accesses.get(int(t.name[4:]))
            out[site.access.buffer if site is not None else t.name] = None
        stack.extend(ir.operands(t))
    return tuple(out)
