"""Z3 encoding of two threads of one block executing symbolic terms, with C integer semantics.

Values are mathematical integers (no wrap-around: C leaves signed overflow undefined, and an
in-bounds index never overflows), which keeps queries in linear integer arithmetic plus
uninterpreted functions, where Z3 is fast. C's operators keep their meaning: `/` and `%` truncate
toward zero, `>>` is an arithmetic (flooring) shift, `& (2**k - 1)` is a Euclidean remainder.
Powers of two whose exponent follows the run are read on the exponent (power_encoding.py); other
bitwise operations go through 64-bit vectors, exactly (and in the cheap encoding, between two
unknowns, through functions with their facts: bitwise_lemmas.py).
"""

from __future__ import annotations

import contextlib
import re

import z3

from analyzer import ir
from analyzer.analysis.decision import power_bits, radix_lemmas
from analyzer.analysis.decision.bitwise_lemmas import BitwiseLemmas
from analyzer.analysis.decision.division_encoding import DivisionEncoding
from analyzer.analysis.decision.floor_nest import one_floor
from analyzer.analysis.decision.power_encoding import PowerEncoding
from analyzer.analysis.decision.tickets import Tickets
from analyzer.analysis.decision.z3_terms import as_int, const_value, from_bits, num, to_bits, trunc_div, truth  # noqa: F401  (re-exported)
from analyzer.analysis.execution import atomic_order
from analyzer.analysis.execution.sym import Iter, Sym

DIMS = ("x", "y", "z")
# No thread runs 2**64 iterations of one loop (centuries at a GHz): a physical bound, stated in
# docs/how-it-works.md, where a loop's own condition gives none.
ITER_LIMIT = 1 << 64
MAX_BLOCK, MAX_GRID = 1024, (1 << 31) - 1     # threads per block on CUDA and Metal; blocks a dimension
# Values each thread holds of its own, which a witness prefers small (witnesses.py): an atomic's
# result (a ticket, an atomic load's) or another value the front end cannot see into; and the
# value of a counter no atomic changes (a load at an atomic's site).
OWN_VALUES = ("ticket", "gticket", "aload", "opaque")
INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1


# Loop-carried state: `v@L12`, `private:buf+0@exit12`; a block's own copy `v@L12@b1` (grid.py).
LOOP_STATE = re.compile(r"(?:private:)?(?P<var>.+?)(?:\+\d+)?@(?:L|exit)(?P<loop>\d+)(?:@b[12])?$")


def fresh_context() -> None:
    """Give the next kernel a Z3 context of its own (as Z3's default, which every constructor here
    uses). Z3's search depends on every term its context has seen, and with it the model a witness
    is read from and a verdict at the edge of the resource budget: one context per kernel makes a
    kernel's results the same whatever the process analysed before it. The old context is freed
    with the last of its terms."""
    z3.z3._main_ctx = None    # z3.main_ctx() creates the next one on first use


@contextlib.contextmanager
def own_context():
    """Run a pass in a Z3 context of its own, then give the previous one back (its terms stay
    valid). The grid pass runs after the block pass: in the block pass's context, grown by its
    terms, the same grid queries took Z3 4-5x longer (TVM's sampling kernels on Metal). Nothing of
    one context may meet the other: the pass builds its own encoders and query cache."""
    saved = z3.z3._main_ctx
    z3.z3._main_ctx = None
    try:
        yield
    finally:
        z3.z3._main_ctx = saved


class Encoder(DivisionEncoding, PowerEncoding, BitwiseLemmas, Tickets):
    """Builds Z3 terms for thread 1 and thread 2 of the same block."""

    def __init__(self, kernel: ir.Kernel, warp_size: int, exact: bool = True, grid: bool = False,
                 common_loads: frozenset[str] = frozenset()):
        self.kernel = kernel
        # Grid mode (grid.py): the two threads may sit in different blocks. Each gets its own block
        # index, and what is uniform within a block is per block: loop state, and loads, except
        # `common_loads` (global memory the kernel never writes: the same in every block).
        self.grid = grid
        self.common_loads = common_loads
        self.warp_size = warp_size
        # Inexact mode reads a product or quotient of two non-constants as an uninterpreted
        # function: an over-approximation (unsat stays unsat) that keeps the query linear.
        self.exact = exact
        self.base: list = []          # constraints that always hold
        self.shared: dict[str, object] = {}
        self.funcs: dict[tuple[str, int], object] = {}
        self.memo: dict[tuple[int, int], tuple[object, object]] = {}
        self.iter_vars: dict[tuple[int, int], object] = {}
        self.loads: dict[int, tuple[Sym, int]] = {}   # Z3 id of a loaded value -> its term, thread
        self.own_values: dict[int, object] = {}   # Z3 id -> a thread's own value (an atomic's result, ...)
        self.atomic_sites = ir.atomic_sites(kernel)
        self._remainders: dict[int, tuple] = {}       # Z3 id of a remainder c*s + m -> (it, s, m, c)
        self._signs: dict[int, tuple[object, bool]] = {}   # id of a term -> (it, never negative)
        self._flat: dict[int, tuple[object, bool]] = {}    # id of a term -> (it, no quotient inside)
        self._keep: list = []                               # terms built here (`_digits`)
        # What C needs of an operand the run computes, for the operation to be defined: a divisor
        # nonzero, a shift amount within 0..63 (Z3 id of the operand -> the condition). A witness
        # wishes them (witnesses.py): the replay runs no undefined operation.
        self.defined: dict[int, object] = {}
        self._digit_forms: dict[int, tuple[object, tuple | None]] = {}   # id of a term -> (it, digit)
        self._quotients: dict[int, tuple] = {}   # id of a flat index -> (it, divisor -> quotient, relations)
        # Loaded values and loop state ride in the dependency sets as negative numbers (-1 - index
        # here), so a query knows them without walking its terms.
        self._apps: list = []
        self.last_loads: list = []    # the loads of the terms collected for the last query
        self.last_state: list = []    # the loop state (uniform, per iteration) of the last query
        self.last_base: set = set()   # the indices into `base` the last query states (see `params_read`)
        # The closed forms a walk's prefix sums may take in the last query (tile_order.py, telescope.py).
        self.closed_forms: list = []
        bdims = {d: kernel.block_dim.get(d, 1) for d in DIMS}
        self.tid = {k: {d: z3.Int(f"t{k}.{d}") for d in DIMS} for k in (1, 2)}
        self.bid = {d: z3.Int(f"block.{d}") for d in DIMS}
        # Thread 2's block: thread 1's own in block mode.
        self.bid2 = {d: z3.Int(f"block2.{d}") for d in DIMS} if grid else self.bid
        self.blocks = {1: self.bid, 2: self.bid2}
        self.bdim = {d: self._extent("blockDim", d, bdims[d], MAX_BLOCK) for d in DIMS}
        self.gdim = {d: self._extent("gridDim", d, kernel.grid_dim.get(d), MAX_GRID) for d in DIMS}
        for d in DIMS:
            for k in (1, 2):
                t = self.tid[k][d]
                self.base += [t >= 0, t < self.bdim[d]]
            self.base += [self.bid[d] >= 0, self.bid[d] < self.gdim[d]]
            if grid:
                self.base += [self.bid2[d] >= 0, self.bid2[d] < self.gdim[d]]
        self._using: list[set[int]] = []
        self._param_deps: dict[str, frozenset[int]] = {}   # parameter -> its side constraints
        for d, name in sorted(kernel.grid_params.items()):
            if not isinstance(kernel.grid_dim.get(d), int):
                # The launch's own extent: a parameter the host computed (with its definition).
                self.base.append(self.gdim[d] == self.param(name))
        if kernel.max_threads_per_block is not None:
            # The source's launch bound (`__launch_bounds__`): a fact of every launch.
            self.base.append(self.mul(self.mul(self.bdim["x"], self.bdim["y"]), self.bdim["z"])
                             <= kernel.max_threads_per_block)
        for _, expr in kernel.assumptions:
            # A stated assumption (analysis/stated/assumptions.py) holds in every query, as __builtin_assume's.
            self.base.append(truth(self.term(expr, 1)))
        self._fixed = len(self.base)
        self._mark = self._fixed
        self.iter_bounds: list = []   # always included: relations use iterations outside terms

    def _extent(self, what: str, d: str, value, limit: int):
        if isinstance(value, int):
            return num(value)
        v = z3.Int(f"{what}.{d}")
        self.base += [v >= 1, v <= limit]
        self.shared[f"{what}.{d}"] = v
        return v

    def _c_int(self, name: str):
        v = self.shared.get(name)
        if v is None:
            v = z3.Int(name)
            self.shared[name] = v
            self.base += [v >= INT_MIN, v <= INT_MAX]
        return v

    def param(self, name: str):
        if name in self.kernel.bindings:
            return num(self.kernel.bindings[name])
        deps = self._param_deps.get(name)
        if deps is not None:
            # Every query using this parameter needs its bounds and host definition, not only the
            # first one that met it.
            if self._using:
                self._using[-1] |= deps
            return self.shared[name]
        before = len(self.base)
        self._using.append(set())
        try:
            if name in self.kernel.param_ranges:
                v = z3.Int(name)
                self.shared[name] = v
                lo, hi = self.kernel.param_ranges[name]
                self.base += [v >= lo, v <= hi]
            else:
                v = self._c_int(name)
            definition = self.kernel.definitions.get(name)
            if isinstance(definition, ir.Call) and definition.fn == "range":
                # A host loop variable: within its loop's range.
                lo, hi = (as_int(self.term(a, 1)) for a in definition.args)
                self.base += [v >= lo, v < hi]
            elif definition is not None:
                # The host computed this value: keep the relation (not the value) it was computed by.
                self.base.append(v == as_int(self.term(definition, 1)))
        finally:
            inner = self._using.pop()
        deps = frozenset(inner | set(range(before, len(self.base))))
        self._param_deps[name] = deps
        if self._using:
            self._using[-1] |= deps
        return v

    def iteration(self, k: int, loop: int):
        v = self.iter_vars.get((k, loop))
        if v is None:
            v = z3.Int(f"t{k}.iter{loop}")
            self.iter_vars[(k, loop)] = v
            self.iter_bounds += [v >= 0, v < ITER_LIMIT]
        return v

    def linear(self, k: int):
        t = self.tid[k]
        bx, by = self.bdim["x"], self.bdim["y"]
        out = t["x"] + self.mul(t["y"], bx) + self.mul(t["z"], self.mul(bx, by))
        if self.exact and k in (1, 2) and "_linear_lemmas" not in self.__dict__:
            # One lane of one warp is one thread, with symbolic extents too (radix_lemmas.py).
            self._linear_lemmas = True
            self.base += radix_lemmas.lemmas(out, self.linear(3 - k), 1, 1)
        return out

    def warp(self, k: int):
        return self.linear(k) / self.warp_size

    def func(self, name: str, arity: int):
        key = (name, arity)
        f = self.funcs.get(key)
        if f is None:
            f = z3.Function(name, *([z3.IntSort()] * arity), z3.IntSort())
            self.funcs[key] = f
        return f

    def term(self, t, k: int):
        """Z3 term for thread k. Memoised by identity (terms are shared DAGs); records which
        side constraints (bounds, division identities) the term depends on."""
        hit = self.memo.get((id(t), k))
        if hit is not None and hit[0] is t:
            if self._using:
                self._using[-1] |= hit[2]
            return hit[1]
        before = len(self.base)
        self._using.append(set())
        try:
            out = self._term(t, k)
        finally:
            deps = self._using.pop()
        deps |= set(range(before, len(self.base)))
        self.memo[(id(t), k)] = (t, out, frozenset(deps))
        if self._using:
            self._using[-1] |= deps
        return out

    def collecting(self):
        """Start recording the side constraints the next terms need (see `needed`)."""
        self._using = [set()]
        self._mark = len(self.base)

    def recorded(self, build):
        """(build(), the side constraints (base indices) its terms need): a piece of a query kept and
        used again (stated with `depend`), or terms built outside any query (a witness's wishes)."""
        self._using.append(set())
        try:
            out = build()
        finally:
            deps = self._using.pop()
        if self._using:
            self._using[-1] |= deps
        return out, frozenset(deps)

    def depend(self, deps) -> None:
        """The side constraints of a piece built before (`recorded`), for the next `needed`."""
        self._using[-1] |= deps

    def needed(self) -> list:
        """Thread and block bounds, plus the side constraints of the terms built since `collecting`."""
        idx = self._using[0] | set(range(self._mark, len(self.base))) | set(range(self._fixed))
        self._using = []
        order = sorted(idx)
        apps = list({x.get_id(): x for x in (self._apps[-1 - i] for i in order if i < 0)}.values())
        self.last_loads = [x for x in apps if x.get_id() in self.loads]
        self.last_state = [x for x in apps if x.get_id() not in self.loads]
        self.last_base = idx
        return [self.base[i] for i in order if i >= 0] + self.iter_bounds

    def params_read(self, names) -> list[str]:
        """Those of the scalar parameters `names` whose side constraints the last query states."""
        return [n for n in names if (d := self._param_deps.get(n)) and d <= self.last_base]

    def _track(self, app) -> None:
        """Ride `app` (a load or loop state) in the dependency set of the term being built."""
        self._apps.append(app)
        self._using[-1].add(-len(self._apps))

    def _term(self, t, k: int):
        if isinstance(t, ir.Const):
            return num(t.value)
        if isinstance(t, ir.Param):
            return self.param(t.name)
        if isinstance(t, ir.Builtin):
            return self.builtin(t.name, k)
        if isinstance(t, Iter):
            return self.iteration(k, t.loop)
        if isinstance(t, Sym):
            name = t.name if t.uniform else f"{t.name}@t{k}"
            if (self.grid or k > 2) and t.uniform and t.name not in self.common_loads and not t.name.startswith("ginit:"):
                # Uniform in a block, not across blocks: a loop's state may follow blockIdx, shared
                # memory is per block, and blocks load a written buffer at unrelated times. (A
                # global counter's initial value, `ginit:` (atomic_order.py), is the grid's one.)
                name = f"{t.name}@b{k}"
            args = [as_int(self.term(a, k)) for a in t.args]
            out = self.func(name, len(args))(*args) if args else self._c_int(name)
            if t.lower is not None:
                self.base.append(out >= t.lower)
            if not t.uniform and t.name.startswith(("ticket", "gticket")) and args and k <= 2:
                self._ticket(t.name, k, args, out)
            if (not t.uniform and t.name.startswith(OWN_VALUES)) or (
                    t.name.startswith("load") and t.name[4:].isdigit() and int(t.name[4:]) in self.atomic_sites):
                self.own_values[out.get_id()] = out
            for rel, bound in t.after:
                self._atomic_order(rel, out, as_int(self.term(bound, k)), k)
            if args and t.name.startswith("load"):
                self.loads[out.get_id()] = (t, k)
                self._track(out)
            elif args and t.uniform and LOOP_STATE.match(t.name):
                self._track(out)
            return out
        if isinstance(t, ir.BinOp):
            if t.op in power_bits.OPS:
                power = self._power(t, k)
                if power is not None:
                    return power
            fields = power_bits.disjoint_fields(t, self.kernel) if t.op in ("|", "^", "&") else None
            if fields is not None:
                # Bit fields apart (`(warp << 5) | lane`, `(t & ~31) | ((t + 1) & 31)`): exact and
                # linear, where 64-bit vectors or (cheap) a function with its facts would stand.
                return num(0) if t.op == "&" else as_int(self.term(fields[0], k)) + as_int(self.term(fields[1], k))
            if t.op in ("/", "%", "fdiv", "fmod") and isinstance(t.b, ir.Const) and t.b.value > 0:
                by_constant = self._by_constant(t, k)
                if by_constant is not None:
                    return by_constant
            if t.op in ("/", "%", "fdiv", "fmod") and not self.exact and not isinstance(t.b, ir.Const):
                # Keep the divisor's constant factor visible: with b = x*c the identity reads
                # a = (q*x)*c + r, so the solver still knows q*b is a multiple of c.
                x, c = t.b, 1
                if isinstance(x, ir.BinOp) and x.op == "*" and isinstance(x.b, ir.Const):
                    x, c = x.a, x.b.value
                elif isinstance(x, ir.BinOp) and x.op == "*" and isinstance(x.a, ir.Const):
                    x, c = x.b, x.a.value
                q, r = self._division(as_int(self.term(t.a, k)), as_int(self.term(x, k)), c,
                                      floor=t.op in ("fdiv", "fmod"))
                return q if t.op in ("/", "fdiv") else r
            if t.op in (">>", "<<") and not isinstance(t.b, ir.Const):
                a, b = as_int(self.term(t.a, k)), as_int(self.term(t.b, k))
                if const_value(b) is None:
                    w = power_bits.width(t.a, self.kernel)
                    if t.op == ">>" and w is not None and w < 63:
                        # A value of known width w shifted right by w or more is 0: w cases, not
                        # 64 (`(threadIdx.x >> shift) & 1`: 8 for a block of 256, where 64 made
                        # each query of a kernel with it take a second).
                        return self._defined_shift(">>", a, b, below=w)
                    if w is None and not self.exact and const_value(a) is None:
                        # Cheap: a function with its facts (bitwise_lemmas.py), where nothing
                        # bounds the value (a loaded key, a parameter).
                        return self._bitwise(t.op, a, b)
                return self.binop(t.op, a, b)
            return self.binop(t.op, self.term(t.a, k), self.term(t.b, k))
        if isinstance(t, ir.UnOp):
            a = self.term(t.a, k)
            if t.op == "!":
                return z3.Not(truth(a))
            if t.op == "-":
                return -as_int(a)
            if t.op == "~":
                c = const_value(as_int(a))
                # A constant stays one (`x & ~31` is then a mask: a remainder, not 64-bit vectors).
                return num(~c) if c is not None else -as_int(a) - 1
        if isinstance(t, ir.Select):
            return z3.If(truth(self.term(t.cond, k)), as_int(self.term(t.a, k)), as_int(self.term(t.b, k)))
        if isinstance(t, ir.Call):
            if t.fn in ir.BIT_INTRINSICS and len(t.args) == 1:
                bits = self._bits(t.args[0], k)
                if bits is not None:
                    return power_bits.bit_intrinsic(t.fn, bits)
            args = [as_int(self.term(a, k)) for a in t.args]
            if t.fn.startswith("fcmp") and len(args) == 2:
                # Floating-point values are opaque but ordered: compare them as such (NaN aside).
                return self.binop(t.fn[4:], args[0], args[1])
            if t.fn in ("min", "max") and len(args) == 2:
                a, b = args
                return z3.If(a < b, a, b) if t.fn == "min" else z3.If(a < b, b, a)
            return self.func(t.fn, len(args))(*args) if args else self._c_int(t.fn)
        raise TypeError(f"cannot encode {t!r}")

    def _pair_order(self, buffer: str, j: int, k: int, out, init) -> None:
        """Thread k's j-th atomic of the counter's sequence (atomic_order.sequence), the two threads
        of the pair alone with it: it sees the initial value plus its own earlier atomics' steps
        and those of the other thread's first x_kj atomics, the x's of one order of the two."""
        steps = atomic_order.sequence(self.kernel, buffer)
        m = len(steps)
        x = {t: [z3.Int(f"order:{buffer}:{t}:{i}") for i in range(m)] for t in (1, 2)}
        prefix = [0]
        for d in steps:
            prefix.append(prefix[-1] + d)

        def sum_of(n):   # the first n steps
            out = num(prefix[m])
            for i in reversed(range(m)):
                out = z3.If(n == i, num(prefix[i]), out)
            return out
        for t in (1, 2):
            self.base += [z3.And(v >= 0, v <= m) for v in x[t]] + [a <= b for a, b in zip(x[t], x[t][1:])]
        # The other thread's i-th atomic comes before the first's j-th, or after it: one order.
        self.base += [(x[1][a] >= b + 1) == (x[2][b] <= a) for a in range(m) for b in range(m)]
        apart = z3.Or([self.tid[1][d] != self.tid[2][d] for d in DIMS] + [self.bid[d] != self.bid2[d] for d in DIMS])
        if getattr(self.kernel.buffers.get(buffer), "space", None) != ir.GLOBAL:   # the pair in one block
            apart = z3.And([apart] + [self.bid[d] == self.bid2[d] for d in DIMS])
        self.base.append(z3.Implies(apart, out == init + prefix[j] + sum_of(x[k][j])))

    def _atomic_order(self, rel: str, out, bound, k: int) -> None:
        """A thread's atomic result bounded by its earlier atomic of the element (atomic_order.py):
        at least or at most `bound`, or equal to it where the block has one thread."""
        if rel == atomic_order.ALONE:
            self.base.append(z3.Implies(z3.And([self.bdim[d] == 1 for d in DIMS]), out == bound))
        elif rel.startswith(atomic_order.PAIR):
            if k > 2:    # one order of the pair's sequences: nothing of a third thread (unwritten.py)
                return
            buffer, _, j = rel[len(atomic_order.PAIR):].rpartition(":")
            self._pair_order(buffer, int(j), k, out, bound)
        elif rel.startswith(atomic_order.CONGRUENT):
            self.base.append((out - bound) % int(rel[len(atomic_order.CONGRUENT):]) == 0)
        else:
            self.base.append(out >= bound if rel == atomic_order.AT_LEAST else out <= bound)

    def builtin(self, name: str, k: int):
        if name.startswith("tid."):
            return self.tid[k][name[4:]]
        if name.startswith("bid."):
            return self.blocks[k][name[4:]]
        if name.startswith("bdim."):
            return self.bdim[name[5:]]
        if name.startswith("gdim."):
            return self.gdim[name[5:]]
        if name == "lane":
            return self.linear(k) % self.warp_size
        if name == "warp":
            return self.warp(k)
        if name == "linear_tid":
            return self.linear(k)
        raise TypeError(f"unknown builtin {name}")

    def mul(self, a, b):
        ca, cb = const_value(a), const_value(b)
        if self.exact or ca is not None or cb is not None:
            # two numbers: a number (`128 * 1` as a term left a product with it to the uninterpreted mul)
            return z3.IntVal(ca * cb) if ca is not None and cb is not None and not self.exact else a * b
        return self.func("mul", 2)(a, b)

    def binop(self, op: str, a, b):
        if op == "&&":
            return z3.And(truth(a), truth(b))
        if op == "||":
            return z3.Or(truth(a), truth(b))
        if op in ("==", "!=", "<", "<=", ">", ">="):
            a, b = as_int(a), as_int(b)
            return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        a, b = as_int(a), as_int(b)
        ca, cb = const_value(a), const_value(b)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return self.mul(a, b)
        if op in ("/", "%", "fdiv", "fmod") and cb is None:
            self.defined.setdefault(b.get_id(), b != 0)
        if op in ("fdiv", "fmod"):   # flooring division (TIR's, and TVM's spelled-out C form)
            q = z3.If(b > 0, a / b, (-a) / (-b))
            return q if op == "fdiv" else a - b * q
        if op in ("/", "%"):
            if cb is None and not self.exact:
                return self._division(a, b)[0 if op == "/" else 1]
            if cb is not None and cb > 0:
                if op == "/":
                    return trunc_div(a, b)
                return a - b * trunc_div(a, b)
            q = trunc_div(a, b)
            return q if op == "/" else a - b * q
        if op == ">>" and cb is not None and 0 <= cb < 63:
            return one_floor(a, 1 << cb)   # Euclid's div by 2**cb = floor (floor_nest: nested, one)
        if op == "<<" and cb is not None and 0 <= cb < 63:
            return a * (1 << cb)
        if op in (">>", "<<") and cb is None:
            return self._defined_shift(op, a, b)
        if op in ("^", "&", "|"):
            for x, c in ((a, cb), (b, ca)):
                # With a constant of few runs of one bits (a mask of the low bits is one):
                # remainders by powers of two (power_bits.py).
                runs = power_bits.with_runs(op, x, c) if c is not None else None
                if runs is not None:
                    return runs
        if not self.exact and op in ("^", "&", "|") and ca is None and cb is None:
            return self._bitwise(op, a, b)    # cheap: a function with its facts (bitwise_lemmas.py)
        # Other bitwise operations: exactly, on 64-bit vectors.
        x, y = to_bits(a), to_bits(b)
        if op == "&":
            return from_bits(x & y)
        if op == "|":
            return from_bits(x | y)
        if op == "^":
            return from_bits(x ^ y)
        if op == "<<":
            return from_bits(x << y)
        if op == ">>":
            return from_bits(x >> y)
        raise TypeError(f"unknown operator {op}")

    def _defined_shift(self, op: str, a, s, below: int = 64):
        """`_shift`, with what C needs of the amount for a witness to wish (`defined`)."""
        self.defined.setdefault(s.get_id(), z3.And(s >= 0, s <= 63))
        return self._shift(op, a, s, below)

    @staticmethod
    def _shift(op: str, a, s, below: int = 64):
        """A shift by a non-constant amount: one linear case per amount from 0 to 63 (C leaves the
        others undefined, read as 63). Through 64-bit vectors the same shift costs the solver
        seconds: it blasts the barrel shifter and converts between integers and vectors. `below`:
        `a` is known to lie in [0, 2**below) (a right shift only), so any amount from `below` on
        gives 0, as every amount outside 0..63 does: one case per amount under `below`."""
        # Built through Z3's C API: z3py's operators would coerce and wrap each of the 64 cases
        # (3 ms a shift, most of the encoding time of a kernel whose loops double a stride).
        a, s = (x if z3.is_expr(x) else z3.IntVal(x) for x in (a, s))
        ctx = a.ctx
        ref, sort = ctx.ref(), z3.IntSort(ctx).ast
        core = z3.z3core
        a_ast, s_ast = a.as_ast(), s.as_ast()
        held = []   # the context counts references: each node is held until the result holds it

        def hold(ast):
            core.Z3_inc_ref(ref, ast)
            held.append(ast)
            return ast

        out = hold(core.Z3_mk_numeral(ref, "0", sort)) if below < 64 else None
        for k in range(min(below, 64) - 1, -1, -1):
            c = hold(core.Z3_mk_numeral(ref, str(1 << k), sort))
            # floor division: an arithmetic shift (the same term as z3py's `a / c`)
            v = hold(core.Z3_mk_div(ref, a_ast, c) if op == ">>" else
                     core.Z3_mk_mul(ref, 2, (z3.z3.Ast * 2)(a_ast, c)))
            if out is not None:
                eq = hold(core.Z3_mk_eq(ref, s_ast, hold(core.Z3_mk_numeral(ref, str(k), sort))))
                v = hold(core.Z3_mk_ite(ref, eq, v, out))
            out = v
        result = z3.ArithRef(out, ctx)   # holds its own reference
        for ast in held:
            core.Z3_dec_ref(ref, ast)
        return result

    def value_of(self, model, e) -> int:
        return model.eval(e, model_completion=True).as_long()


def without_loads(enc: Encoder, constraints) -> list:
    """The constraints that mention no value `enc` loaded from memory: a subset, so unsatisfiable
    whenever it is (the index arithmetic alone keeps two accesses apart, whatever memory holds), and
    often far easier (each loaded index brings its own divisions and in-bounds facts)."""
    loads = enc.loads
    memo: dict[int, bool] = {}
    # Walked through Z3's C API: z3py's children() wraps every node in a Python object (and
    # counts references to it), which cost more than the refinement this slice serves.
    core = z3.z3core
    app = z3.Z3_APP_AST

    def mentions(e) -> bool:
        ref = e.ctx.ref()
        stack = [(e.as_ast(), False)]
        while stack:
            x, ready = stack.pop()
            i = core.Z3_get_ast_id(ref, x)
            if i in memo:
                continue
            if i in loads:
                memo[i] = True
                continue
            kids = ([core.Z3_get_app_arg(ref, x, k) for k in range(core.Z3_get_app_num_args(ref, x))]
                    if core.Z3_get_ast_kind(ref, x) == app else [])
            if not ready:
                stack.append((x, True))
                stack.extend((c, False) for c in kids if core.Z3_get_ast_id(ref, c) not in memo)
                continue
            memo[i] = any(memo[core.Z3_get_ast_id(ref, c)] for c in kids)
        return memo[e.get_id()]

    return [c for c in constraints if not mentions(c)]
