"""Races between blocks: two threads of *different* blocks touching the same global bytes.

No block barrier orders two blocks (`__syncthreads` is per block), so every pair of instances
counts, in any iterations, in either order, and a site races with itself. Only a grid sync
(cooperative groups' `this_grid().sync()`, ir.GRID) orders blocks: in a kernel with grid syncs, two
threads of different blocks race only in the same grid interval (both left the same grid sync, or
the kernel's entry, without crossing another), the barrier intervals of concurrency.py with grid
syncs alone cutting, and the branches recorded there must agree only where every block agrees
(`Evaluation.grid_uniform_conditions`). A grid sync some blocks skip is divergent-barrier's. Only global
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
from analyzer.analysis.decision.queries import QueryCache
from analyzer.analysis.decision.solver import DIMS, ITER_LIMIT, LOOP_STATE, MAX_GRID, Encoder, as_int
from analyzer.analysis.execution.concurrency import Cfg, grid_cuts
from analyzer.analysis.execution.events import AccessEvent, Evaluation
from analyzer.analysis.execution.sym import Iter, Sym
from analyzer.analysis.execution.uniformity import remembered
from analyzer.analysis.interblock.last_block import LastBlock
from analyzer.analysis.pairing.disjoint import Disjointness, _key
from analyzer.analysis.pairing.hazards import GRID_DETAIL_CAP, KERNEL_LIMIT, Hazard, PairAnalysis, Undecided
from analyzer.analysis.pairing.pair_kinds import hazard_kind
from analyzer.analysis.pairing.races import PairChecker

# The one interval shape of a grid pair: no positions, no order, no path, nothing of warps.
_ANYWHERE = ((), (), None, None, frozenset(), frozenset())


def block_dims_read(kernel: ir.Kernel) -> frozenset[str]:
    """The grid dimensions whose block index the kernel reads, or whose launched extent exceeds 1."""
    out = {d for d in DIMS if isinstance(kernel.grid_dim.get(d), int) and kernel.grid_dim[d] > 1}
    for name in _builtins_named(kernel):
        if name.startswith(("bid.", "gdim.")):
            out.add(name.split(".")[1])
    return frozenset(out)


def thread_dims_read(kernel: ir.Kernel) -> frozenset[str]:
    """The block dimensions whose thread index or extent the kernel reads (a lane, warp or linear
    thread index reads them all)."""
    out: set[str] = set()
    for name in _builtins_named(kernel):
        if name.startswith(("tid.", "bdim.")):
            out.add(name.split(".")[1])
        elif name in ("lane", "warp", "linear_tid"):
            out.update(DIMS)
    return frozenset(out)


def _builtins_named(kernel: ir.Kernel) -> frozenset[str]:
    """Every builtin the kernel names: in its statements (loops' initialisers included), the
    addresses of its accesses and its stated assumptions. Naming one is reading it."""
    # The assumptions are looked at each time: they are added to a kernel in place.
    out = set(_body_builtins(kernel))
    seen: set[int] = set()
    for _, e in kernel.assumptions:
        _visit(e, out, seen)
    return frozenset(out)


@ir.per_kernel
def _body_builtins(kernel: ir.Kernel) -> frozenset[str]:
    out: set[str] = set()
    seen: set[int] = set()
    for s in _all_stmts(kernel.body):
        for e in _exprs(s):
            _visit(e, out, seen)
    return frozenset(out)


def _visit(e, out: set, seen: set) -> None:
    if id(e) in seen:
        return
    seen.add(id(e))
    if isinstance(e, ir.Builtin):
        out.add(e.name)
        return
    if isinstance(e, ir.Read):
        _visit(e.access.offset, out, seen)
    for x in ir.operands(e):
        _visit(x, out, seen)


def _all_stmts(body):
    """Every statement, loops' initialisers included."""
    for s in ir.walk_stmts(body, updates=True):
        yield s
        if isinstance(s, ir.Loop):
            yield from _all_stmts(s.init)


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

    def __init__(self, kernel: ir.Kernel, dims: frozenset[str], common: frozenset[str]):
        super().__init__(kernel)
        self.grid = {d: kernel.grid_dim.get(d) for d in DIMS}
        self.read = dims
        self.common = common
        # Launch extents the kernel fixes, as constants: `blockIdx.x * blockDim.x` is then a
        # block index with a coefficient, not an opaque product.
        self._known = {f"bdim.{d}": v for d, v in self.block.items() if isinstance(v, int)}
        self._known.update({f"gdim.{d}": v for d, v in self.grid.items() if isinstance(v, int)})
        self._resolved: dict[int, tuple] = {}
        self._grid_linear: dict[int, tuple] = {}
        self._atoms: dict[tuple, object] = {}      # interned products and grid-stride atoms
        self._stride_dim: dict[int, str] = {}      # id of a grid-stride atom -> its grid dimension

    # ----- terms with the launch's constants, products of atoms, grid strides -----

    def _resolve(self, t):
        return remembered(self._resolved, t, self._resolve_of)

    def _resolve_of(self, t):
        if isinstance(t, ir.Builtin) and t.name in self._known:
            return ir.Const(self._known[t.name])
        if isinstance(t, ir.BinOp):
            a, b = self._resolve(t.a), self._resolve(t.b)
            return t if a is t.a and b is t.b else ir.BinOp(t.op, a, b)
        if isinstance(t, ir.UnOp):
            a = self._resolve(t.a)
            return t if a is t.a else ir.UnOp(t.op, a)
        return t

    def linear(self, t):
        return remembered(self._grid_linear, t, self._grid_linear_of)

    def _grid_linear_of(self, t):
        r = self._resolve(t)
        f = self._linear_of(r) if r is t else self.linear(r)
        return None if f is None else self._merge_strides(f)

    def _linear_of(self, t):
        # A product of two single atoms (`i * (blockDim.x * gridDim.x)`): one atom, its
        # coefficient the product of theirs, interned so both threads' forms share its key.
        if isinstance(t, ir.BinOp) and t.op == "*" and not isinstance(t.a, ir.Const) and not isinstance(t.b, ir.Const):
            fa, fb = self.linear(t.a), self.linear(t.b)
            if fa is not None and fb is not None and fa[0] == 0 and fb[0] == 0 and len(fa[1]) == len(fb[1]) == 1:
                (ka, (xa, ca)), = fa[1].items()
                (kb, (xb, cb)), = fb[1].items()
                key = ("prod",) + tuple(sorted((ka, kb), key=repr))
                atom = self._atoms.get(key)
                if atom is None:
                    atom = self._atoms[key] = ir.BinOp("*", xa, xb)
                return 0, {key: (atom, ca * cb)}
        return super()._linear_of(t)

    def _merge_strides(self, form):
        """`c*blockIdx.d + c*(gridDim.d * X)` with X >= 0 (a grid-stride loop's iteration) is
        `c*Y` with Y = blockIdx.d + gridDim.d * X: one atom, never negative, equal in two threads
        only when their block indices are (0 <= blockIdx.d < gridDim.d)."""
        const, terms = form
        for d in self.read:
            kb = ("Builtin", f"bid.{d}")
            if kb not in terms:
                continue
            kg = ("Builtin", f"gdim.{d}")
            for key, (atom, c) in list(terms.items()):
                if not (isinstance(key, tuple) and key[0] == "prod" and kg in key[1:] and c == terms[kb][1]):
                    continue
                other = key[2] if key[1] == kg else key[1]
                x = next((o for o in (atom.a, atom.b) if _key(o) == other), None)
                if not isinstance(x, Iter):
                    continue
                skey = ("stride", d, other)
                y = self._atoms.get(skey)
                if y is None:
                    y = self._atoms[skey] = ir.BinOp("+", terms[kb][0], atom)
                    self._stride_dim[id(y)] = d
                terms = dict(terms)
                del terms[kb], terms[key]
                terms[skey] = (y, c)
                break
        return const, terms

    def _fixed_of(self, t) -> bool:
        if isinstance(t, ir.Builtin) and t.name.startswith("bid."):
            return t.name[4:] not in self.read     # an unread dimension: one block (see module)
        if isinstance(t, Sym):
            # Loop state uniform in a block may differ between blocks, and so may loads but those
            # of read-only global buffers (see solver.Encoder).
            return t.uniform and t.name in self.common and all(self.fixed(x) for x in t.args)
        return super()._fixed_of(t)

    def _interval(self, t, bounds):
        if id(t) in self._stride_dim:
            return 0, MAX_GRID * ITER_LIMIT
        if isinstance(t, ir.Builtin) and t.name.startswith("bid."):
            extent = self.grid.get(t.name[4:])
            return 0, (extent if isinstance(extent, int) else MAX_GRID) - 1
        return super()._interval(t, bounds)

    def _same_thread(self, equal: list, bounds) -> bool:
        """Do the atoms equal in both threads force the same block? (Then the pair is no grid pair.)"""
        keys = {_key(a) for a in equal}
        strides = {self._stride_dim[id(a)] for a in equal if id(a) in self._stride_dim}
        for d in self.read:
            if self.grid.get(d) == 1 or d in strides:
                continue
            if (ir.Builtin.__name__, f"bid.{d}") not in keys:
                return False
        return True


class GridChecker(PairChecker):
    """Pairs of threads in different blocks, on global memory (see the module docstring)."""

    observes = False    # a run of one block shows no race between blocks
    between_blocks = True
    detail_cap = GRID_DETAIL_CAP

    def __init__(self, kernel: ir.Kernel, ev: Evaluation, cfg: Cfg, timeout_ms: int = 10_000,
                 strict: bool = False, cache: QueryCache | None = None, detail: bool = True,
                 contracts=(), dormant=()):
        super().__init__(kernel, ev, cfg, timeout_ms, strict, cache=cache, detail=detail, contracts=contracts,
                         dormant=dormant)
        self.read = block_dims_read(kernel)
        # Loads every block sees alike: of global buffers the kernel never writes.
        self.common = frozenset(f"load{site.id}" for site in ir.read_only_loads(kernel).values()
                                if site.space == ir.GLOBAL)
        self.disjoint = GridDisjointness(kernel, self.read, self.common)
        # The threadfence-and-ticket pattern's facts (last_block.py), for the pairs it orders.
        self.last_block = LastBlock(kernel, ev, cfg, self.block_reach, self.read)
        # Grid syncs: the intervals they cut, with the branch agreement of conditions every block
        # shares (not those of one block: `if (blockIdx.x == 0)` is uniform in a block only).
        cut = grid_cuts(cfg)
        self.grid_reach = self.view(cut) if cut else None
        if cut:
            self.uniform = ev.grid_uniform_conditions

    def _encoders(self) -> None:
        if self.exact is None:
            self.exact = Encoder(self.kernel, self.kernel.warp_size, exact=True, grid=True, common_loads=self.common)
            self.fast = Encoder(self.kernel, self.kernel.warp_size, exact=False, grid=True, common_loads=self.common)
            self.enc = self.exact

    def _any_overlap(self, enc, a, b) -> list:
        return super()._any_overlap(enc, a, b) + self.last_block.facts(enc, a, b) + self._row_lemmas(enc, a, b)

    def _constraints(self, enc, a, b, combos):
        cs, alts, offsets = super()._constraints(enc, a, b, combos)
        return cs + self.last_block.facts(enc, a, b) + self._row_lemmas(enc, a, b), alts, offsets

    def _row_lemmas(self, enc, a, b) -> list:
        """`blockIdx.d * p` (p a parameter) in the pair's addresses: for two different block indices
        the two products lie at least |p| apart. True of integers (a lemma, no assumption), it spares
        the solver the nonlinear search that finds it (2.7x faster on TVM's 2-D cumsum, whose scan
        levels index `Tmp` by `blockIdx.y * n + ...`)."""
        key = (id(enc), "rows", a.access.id, b.access.id)
        hit = self._cache.get(key)
        if hit is None:
            hit = []
            for bd, p, prod in sorted(_block_products(a.offset) | _block_products(b.offset), key=repr):
                pv = as_int(enc.term(p, 1))
                m1, m2 = (as_int(enc.term(prod, k)) for k in (1, 2))    # the addresses' own terms
                b1, b2 = enc.term(bd, 1), enc.term(bd, 2)
                hit.append(z3.Implies(pv >= 0, z3.Or(b1 == b2, m1 - m2 >= pv, m2 - m1 >= pv)))
                hit.append(z3.Implies(pv < 0, z3.Or(b1 == b2, m1 - m2 >= -pv, m2 - m1 >= -pv)))
            self._cache[key] = hit
        return hit

    def _distinct(self, enc):
        """Different blocks: in a grid dimension the kernel reads (the others are one block)."""
        key = (id(enc), "distinct")
        if key not in self._cache:
            dims = [d for d in DIMS if d in self.read]
            self._cache[key] = z3.Or(*[enc.bid[d] != enc.bid2[d] for d in dims]) if dims else z3.BoolVal(False)
            # Unread dimensions: the same block index (the stated assumption).
            self._cache[key] = z3.And(self._cache[key], *[enc.bid[d] == enc.bid2[d] for d in DIMS if d not in dims])
        return self._cache[key]

    def _block_state(self, solver, model) -> tuple[tuple[str, int], ...]:
        """Does the collision need the two blocks' loop state to coincide? Ask again with every
        block-uniform loop-carried value of block 1 different from every one of block 2 of the same
        name (each block on its own tiles): if the collision goes away, it rests on that."""
        by_name: dict[str, dict[int, list]] = {}
        for x in self.exact.last_state:
            name = x.decl().name()
            if name.endswith(("@b1", "@b2")):
                by_name.setdefault(name[:-3], {}).setdefault(int(name[-1]), []).append(x)
        differ = [x != y for sides in by_name.values() for x in sides.get(1, ()) for y in sides.get(2, ())]
        if not differ:
            return ()
        # With the index maps in order too (as `_data_dependent` assumes them): the tiles of a
        # persistent kernel are found through them.
        ordered, _ = self._loads_ordered()
        if not self._refuted(solver, [z3.And(*differ)] + ordered, False, model):
            return ()
        found = {(m["var"], self.loop_line.get(int(m["loop"]), 0))
                 for name in by_name if (m := LOOP_STATE.match(name))}
        return tuple(sorted(found))

    def run(self, deadline: float | None = None) -> PairAnalysis:
        self._encoders()
        self.deadline = deadline
        out = PairAnalysis(checker=None)
        if not self.read:
            return out      # one block: nothing to pair
        for _, events in self._by_buffer():
            if events[0].access.space == ir.GLOBAL:    # shared/threadgroup/workgroup memory is per block
                self._check_grid_buffer(events, out)
        return out

    def _check_grid_buffer(self, events: list[AccessEvent], out: PairAnalysis) -> None:
        for i in range(len(events)):
            for a, b in self._partners(events, i):
                if self._out_of_time():
                    # What is left of this buffer is undecided, never clean (one finding for all).
                    n = len(events) - i
                    out.undecided.append(Undecided(a, b, KERNEL_LIMIT.format(n=n * (n + 1) // 2)))
                    return
                self.check_pair(a, b, out)

    def check_pair(self, a: AccessEvent, b: AccessEvent, out: PairAnalysis) -> bool:
        found = len(out.hazards), len(out.undecided)
        hit = not self._never_overlap(a, b, out) and self._blocks_collide(a, b, out)
        if (len(out.hazards), len(out.undecided)) == found:
            self._outside_bounds(a, b, lambda o: self._blocks_collide(a, b, o), out)   # (races.py)
        return hit

    def _blocks_collide(self, a: AccessEvent, b: AccessEvent, out: PairAnalysis) -> bool:
        if self.grid_reach is not None:
            # The interval shapes in which two blocks run them: no warps between blocks.
            entries = self._entries(a, b, self.grid_reach, self.grid_reach)
            return bool(entries) and self._query_groups(a, b, entries, out, out.hazards, self.detail)
        kind = hazard_kind(a.access, b.access)
        if kind is None:
            return False
        return self.query(kind, a, b, a, [_ANYWHERE], out, out.hazards, self.detail)


def _block_products(t) -> set[tuple]:
    """The (blockIdx.d, parameter, their product) of the products of a term."""
    out: set[tuple] = set()
    seen: set[int] = set()
    stack = [t]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, ir.BinOp) and x.op == "*":
            for u, v in ((x.a, x.b), (x.b, x.a)):
                if isinstance(u, ir.Builtin) and u.name.startswith("bid.") and isinstance(v, ir.Param):
                    out.add((u, v, x))
        stack.extend(ir.operands(x))
    return out


def analyse_grid(kernel: ir.Kernel, ev: Evaluation, cfg: Cfg, timeout_ms: int = 10_000,
                 strict: bool = False, deadline: float | None = None, cache: QueryCache | None = None,
                 detail: bool = True, contracts=(), dormant=(), explain: bool = False) -> PairAnalysis:
    """Every pair of global accesses two threads of different blocks may run, checked; hazards
    carry a witness with both blocks (`Witness.second_block`). `contracts` and `dormant` as for
    `races.analyse_pairs`; `explain` (-v) also names the pairs only a stated assumption or a
    contract keeps apart (asked here, in the grid's Z3 context)."""
    checker = GridChecker(kernel, ev, cfg, timeout_ms, strict, cache=cache, detail=detail, contracts=contracts,
                          dormant=dormant)
    out = checker.run(deadline)
    if explain:
        out.assumed = [f"{text} (threads of two blocks)"
                       for text in checker.rests_on_bounds(out) + checker.rests_on_contracts(out)]
    return out


__all__ = ["GridChecker", "GridDisjointness", "analyse_grid", "block_dims_read", "thread_dims_read", "Hazard"]
