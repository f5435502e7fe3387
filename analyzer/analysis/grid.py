"""Races between blocks: two threads of *different* blocks touching the same global bytes.

No barrier inside a kernel orders two blocks (`__syncthreads` is per block), so every pair of
instances counts, in any iterations, in either order, and a site races with itself. Only global
(device, storage-buffer) memory is shared between blocks; shared/threadgroup/workgroup memory is
per block. Kernel boundaries order everything: each kernel is checked on its own. Atomics never
race with atomics (as within a block).

The pass reuses the block pass's parts (`races.PairChecker`): the same queries, with an encoder in
grid mode (`solver.Encoder(grid=True)`: a block index per thread, loop state uniform in a block
is per block) and "different blocks" in place of "different threads"; the same solver-free test
first, with the block indices per thread (`GridDisjointness`): `a[blockIdx.x*blockDim.x +
threadIdx.x]` is settled without a query. One finding per pair of sites, named by program
order (write then read: read-after-write; read then write: write-after-read).

A grid dimension the kernel never reads (no `blockIdx.y` anywhere) and whose extent the launch
does not give is taken to be 1: blocks that differ only there would repeat one another's work, and
every write would race with itself (a stated assumption, docs/how-it-works.md).
"""

from __future__ import annotations

import z3

from analyzer import ir
from analyzer.analysis.concurrency import Cfg
from analyzer.analysis.disjoint import Disjointness, _key
from analyzer.analysis.hazards import KERNEL_LIMIT, Hazard, PairAnalysis, Undecided
from analyzer.analysis.queries import QueryCache
from analyzer.analysis.races import PairChecker, _kind
from analyzer.analysis.solver import DIMS, MAX_GRID, Encoder
from analyzer.analysis.symbolic import AccessEvent, Evaluation, Sym

# The one interval shape of a grid pair: no positions, no order, no path, nothing of warps.
_ANYWHERE = ((), (), None, None, frozenset(), frozenset())


def block_dims_read(kernel: ir.Kernel) -> frozenset[str]:
    """The grid dimensions whose block index the kernel reads, or whose launched extent exceeds 1."""
    out = {d for d in DIMS if isinstance(kernel.grid_dim.get(d), int) and kernel.grid_dim[d] > 1}
    seen: set[int] = set()

    def visit(e) -> None:
        if id(e) in seen:
            return
        seen.add(id(e))
        if isinstance(e, ir.Builtin):
            if e.name.startswith(("bid.", "gdim.")):
                out.add(e.name[5:] if e.name.startswith("gdim.") else e.name[4:])
            return
        if isinstance(e, ir.Read):
            visit(e.access.offset)
        for x in ir.operands(e):
            visit(x)

    for s in ir.walk_stmts(kernel.body, updates=True):
        for e in _exprs(s):
            visit(e)
    return frozenset(out)


def _exprs(s) -> list:
    out = []
    for name in ("value", "cond", "offset"):
        x = getattr(s, name, None)
        if x is not None and not isinstance(x, list):
            out.append(x)
    acc = getattr(s, "access", None)
    if acc is not None:
        out.append(acc.offset)
        if acc.value is not None:
            out.append(acc.value)
    return out


class GridDisjointness(Disjointness):
    """The solver-free test with the block indices per thread: they no longer cancel, and the
    search ends in a collision only where the equal atoms leave the two blocks possibly different."""

    def __init__(self, kernel: ir.Kernel, dims: frozenset[str]):
        super().__init__(kernel)
        self.grid = {d: kernel.grid_dim.get(d) for d in DIMS}
        self.read = dims

    def _fixed_of(self, t) -> bool:
        if isinstance(t, ir.Builtin) and t.name.startswith("bid."):
            return t.name[4:] not in self.read     # an unread dimension: one block (see module)
        if isinstance(t, Sym):
            # Loop state uniform in a block may differ between blocks; a load is one function of
            # its address (see solver.Encoder).
            return t.uniform and t.name.startswith("load") and all(self.fixed(x) for x in t.args)
        return super()._fixed_of(t)

    def _interval(self, t, bounds):
        if isinstance(t, ir.Builtin) and t.name.startswith("bid."):
            extent = self.grid.get(t.name[4:])
            return 0, (extent if isinstance(extent, int) else MAX_GRID) - 1
        return super()._interval(t, bounds)

    def _same_thread(self, equal: list, bounds) -> bool:
        """Do the atoms equal in both threads force the same block? (Then the pair is no grid pair.)"""
        keys = {_key(a) for a in equal}
        for d in self.read:
            if self.grid.get(d) == 1:
                continue
            if (ir.Builtin.__name__, f"bid.{d}") not in keys:
                return False
        return True


class GridChecker(PairChecker):
    """Pairs of threads in different blocks, on global memory (see the module docstring)."""

    def __init__(self, kernel: ir.Kernel, ev: Evaluation, cfg: Cfg, timeout_ms: int = 10_000,
                 strict: bool = False, cache: QueryCache | None = None, detail: bool = True):
        super().__init__(kernel, ev, cfg, timeout_ms, strict, cache=cache, detail=detail)
        self.read = block_dims_read(kernel)
        self.disjoint = GridDisjointness(kernel, self.read)

    def _encoders(self) -> None:
        if self.exact is None:
            self.exact = Encoder(self.kernel, self.kernel.warp_size, exact=True, grid=True)
            self.fast = Encoder(self.kernel, self.kernel.warp_size, exact=False, grid=True)
            self.enc = self.exact

    def _distinct(self, enc):
        """Different blocks: in a grid dimension the kernel reads (the others are one block)."""
        key = (id(enc), "distinct")
        if key not in self._cache:
            dims = [d for d in DIMS if d in self.read]
            self._cache[key] = z3.Or(*[enc.bid[d] != enc.bid2[d] for d in dims]) if dims else z3.BoolVal(False)
            # Unread dimensions: the same block index (the stated assumption).
            self._cache[key] = z3.And(self._cache[key], *[enc.bid[d] == enc.bid2[d] for d in DIMS if d not in dims])
        return self._cache[key]

    def run(self, deadline: float | None = None) -> PairAnalysis:
        self._encoders()
        self.deadline = deadline
        out = PairAnalysis(checker=None)
        if not self.read:
            return out      # one block: nothing to pair
        for _, events in self._by_buffer():
            if events[0].access.space != ir.GLOBAL:
                continue    # shared/threadgroup/workgroup memory is per block
            for i in range(len(events)):
                for a, b in self._partners(events, i):
                    if self._out_of_time():
                        n = len(events) - i
                        out.undecided.append(Undecided(a, b, KERNEL_LIMIT.format(n=n * (n + 1) // 2)))
                        break
                    else:
                        self.check_pair(a, b, out)
                        continue
                    break
        return out

    def check_pair(self, a: AccessEvent, b: AccessEvent, out: PairAnalysis) -> bool:
        if self._never_overlap(a, b, out):
            return False
        kind = _kind(a.access, b.access)
        if kind is None:
            return False
        return self.query(kind, a, b, a, [_ANYWHERE], out, out.hazards, self.detail)


def analyse_grid(kernel: ir.Kernel, ev: Evaluation, cfg: Cfg, timeout_ms: int = 10_000,
                 strict: bool = False, deadline: float | None = None, cache: QueryCache | None = None,
                 detail: bool = True) -> PairAnalysis:
    """Every pair of global accesses two threads of different blocks may run, checked; hazards
    carry a witness with both blocks (`Witness.second_block`)."""
    return GridChecker(kernel, ev, cfg, timeout_ms, strict, cache=cache, detail=detail).run(deadline)


__all__ = ["GridChecker", "GridDisjointness", "analyse_grid", "block_dims_read", "Hazard"]
