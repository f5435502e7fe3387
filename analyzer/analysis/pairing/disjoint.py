"""A solver-free proof that two threads' instances of two accesses never touch the same bytes.

Most pairs of a kernel never overlap, and the SMT query that says so is the costliest part of an
analysis: tile copies index shared memory as `i*1024 + (tid.x & 7)*128 + j*16 + tid.y*4 +
(tid.x >> 3)`, a mixed-radix number Z3's integer arithmetic takes 20-60 ms to refute. Read as a
linear form over bounded *atoms* (iteration numbers, thread indices and their bit fields), the
same question is a few interval steps:

    index1 - index2 = D + sum(c_k * (atom_k(thread 1) - atom_k(thread 2)))

must fall inside the two accesses' widths. Atoms are taken as independent of one another, which
only widens the differences, so "no solution" stays a proof; when every atom is equal in both
threads, the thread-index atoms must show that the threads are the same one. Anything the form
cannot express returns False, and the solver decides as before.
"""

from __future__ import annotations

import math

from analyzer import ir
from analyzer.analysis.decision.solver import DIMS, ITER_LIMIT, MAX_BLOCK
from analyzer.analysis.execution.events import AccessEvent
from analyzer.analysis.execution.sym import Iter, Sym
from analyzer.analysis.execution.uniformity import remembered
from analyzer.analysis.pairing.addresses import peel_scale

# Branches the search may take before it gives the pair to the solver.
NODE_BUDGET = 256
_CMP = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "=="}
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": None}


class Disjointness:
    """Per kernel: memoised linear forms, atom classes and thread decodings."""

    def __init__(self, kernel: ir.Kernel):
        self.block = {d: kernel.block_dim.get(d, 1) for d in DIMS}
        # Memos by identity (see `uniformity.remembered`): terms are interned DAGs, events live as long as we do.
        self._linear: dict[int, tuple] = {}
        self._fixed: dict[int, tuple] = {}
        self._dims: dict[int, tuple] = {}
        self._bounds: dict[int, tuple] = {}
        self._decodes: dict[tuple, bool] = {}

    # ----- the question -----

    def apart(self, a: AccessEvent, b: AccessEvent) -> bool:
        """True only when no two distinct threads of a block run a and b on overlapping bytes, in
        any iterations (the guards, in-bounds facts and barriers are not even needed)."""
        s1, i1 = peel_scale(a.offset)
        s2, i2 = peel_scale(b.offset)
        wa, wb = a.access.width, b.access.width
        if s1 != s2 or wa % s1 or wb % s2:
            return False
        f1, f2 = self.linear(i1), self.linear(i2)
        if f1 is None or f2 is None:
            return False
        (c1, m1), (c2, m2) = f1, f2
        bounds1, bounds2 = self.bounds(a), self.bounds(b)
        # (coefficient, lowest and highest value, atom, its modulus and residue): the difference
        # of an atom both indices scale alike, or one thread's own value of an atom the two
        # scale differently (`tid.x*32 + i` against `tid.x*32 + j`, two loops' counters), which
        # never counts as equal in both threads (atom None).
        diffs = []
        for key in [*m1, *(k for k in m2 if k not in m1)]:
            atom, k1 = m1.get(key, (None, 0))
            atom, k2 = m2.get(key, (atom, 0))
            if self.fixed(atom):
                if k1 != k2:
                    return False     # a shared value, scaled differently: no range to go by
                continue     # the same value in both threads: it cancels
            if k1 != k2:
                for k, bb, sign in ((k1, bounds1, 1), (k2, bounds2, -1)):
                    if k:
                        r = self.interval(atom, bb)
                        if r is None:
                            return False
                        n, q = _residue(atom, bb)
                        diffs.append((sign * k, r[0], r[1], None, n, q % n))
                continue
            r1, r2 = self.interval(atom, bounds1), self.interval(atom, bounds2)
            if r1 is None or r2 is None:
                return False
            # Residues both threads' guards fix (`tid.x % 16 == 0`) fix the difference's residue.
            (n1, q1), (n2, q2) = _residue(atom, bounds1), _residue(atom, bounds2)
            n = math.gcd(n1, n2)
            diffs.append((k1, r1[0] - r2[1], r1[1] - r2[0], atom, n, (q1 - q2) % n))
        diffs.sort(key=lambda d: -abs(d[0]))
        # The range of sum(c_j * delta_j for j >= k), for pruning each step of the search.
        rest = [(0, 0)] * (len(diffs) + 1)
        for k in range(len(diffs) - 1, -1, -1):
            c, dlo, dhi = diffs[k][:3]
            rlo, rhi = rest[k + 1]
            rest[k] = (rlo + min(c * dlo, c * dhi), rhi + max(c * dlo, c * dhi))
        # index1 - index2 overlaps when -w1 < diff < w2 (widths in elements).
        d = c1 - c2
        lo, hi = 1 - wa // s1 - d, wb // s2 - 1 - d
        budget = [NODE_BUDGET]
        return not self._reachable(diffs, rest, 0, lo, hi, [], (bounds1, bounds2), budget)

    def _reachable(self, diffs, rest, k, lo, hi, equal, bounds, budget) -> bool:
        """Can sum(c_j * delta_j for j >= k) land in [lo, hi], with distinct threads? True when
        it can, or when the search ran out of budget (so the caller asks the solver)."""
        budget[0] -= 1
        if budget[0] < 0:
            return True
        if k == len(diffs):
            return lo <= 0 <= hi and not self._same_thread(equal, bounds)
        c, dlo, dhi, atom, mod, residue = diffs[k]
        rlo, rhi = rest[k + 1]
        # c * delta must lie in [lo - rhi, hi - rlo]: delta's range, by |c| and the sign of c.
        a, b = lo - rhi, hi - rlo
        m = abs(c)
        first, last = -(-a // m), b // m
        if c < 0:
            first, last = -last, -first
        first, last = max(first, dlo), min(last, dhi)
        first += (residue - first) % mod
        if (last - first) // mod > budget[0]:
            return True
        for delta in range(first, last + 1, mod):
            now = equal + [atom] if delta == 0 and atom is not None else equal
            if self._reachable(diffs, rest, k + 1, lo - c * delta, hi - c * delta, now, bounds, budget):
                return True
        return False

    def _same_thread(self, equal: list, bounds) -> bool:
        """Do the atoms equal in both threads force the same thread index in every dimension?"""
        by_dim: dict[str, list] = {d: [] for d in DIMS}
        for atom in equal:
            dims = self.dims(atom)
            if dims is not None and len(dims) == 1:
                by_dim[next(iter(dims))].append(atom)
        for d in DIMS:
            extent = self.block[d]
            if not isinstance(extent, int):
                return False
            # The index's range over both threads (a guard `tid.y == 0` leaves one value).
            ranges = [bb.get(("tid", d), (None, None)) for bb in bounds]
            lo = max(0, min(0 if r[0] is None else r[0] for r in ranges))
            hi = min(extent - 1, max(extent - 1 if r[1] is None else r[1] for r in ranges))
            if lo >= hi:
                continue
            if not by_dim[d] or not self._decodes_dim(d, tuple(by_dim[d]), lo, hi):
                return False
        return True

    def _decodes_dim(self, d: str, atoms: tuple, lo: int, hi: int) -> bool:
        """Do the values of `atoms` (functions of tid.d alone) tell apart every tid.d in [lo, hi]?"""
        if hi - lo >= MAX_BLOCK:
            return False     # no real block is that large; the solver answers for a bad launch
        key = (d, tuple(map(id, atoms)), lo, hi)
        hit = self._decodes.get(key)
        if hit is None:
            seen: set = set()
            hit = True
            for v in range(lo, hi + 1):
                values = tuple(_evaluate(x, d, v) for x in atoms)
                if None in values or values in seen:
                    hit = False
                    break
                seen.add(values)
            self._decodes[key] = hit
        return hit

    # ----- linear forms -----

    def linear(self, t):
        """(constant, {key(atom): (atom, coefficient)}) with t == constant + sum(c * atom)."""
        return remembered(self._linear, t, self._linear_of)

    def _linear_of(self, t):
        if isinstance(t, ir.Const):
            return t.value, {}
        if isinstance(t, ir.BinOp) and t.op in ("+", "-"):
            fa, fb = self.linear(t.a), self.linear(t.b)
            if fa is None or fb is None:
                return None
            sign = 1 if t.op == "+" else -1
            terms = dict(fa[1])
            for key, (atom, c) in fb[1].items():
                total = terms.get(key, (atom, 0))[1] + sign * c
                if total:
                    terms[key] = (atom, total)
                else:
                    terms.pop(key, None)
            return fa[0] + sign * fb[0], terms
        scale = None
        if isinstance(t, ir.BinOp) and t.op == "*":
            if isinstance(t.b, ir.Const):
                scale, inner = t.b.value, t.a
            elif isinstance(t.a, ir.Const):
                scale, inner = t.a.value, t.b
        elif isinstance(t, ir.BinOp) and t.op == "<<" and isinstance(t.b, ir.Const) and 0 <= t.b.value < 63:
            scale, inner = 1 << t.b.value, t.a
        elif isinstance(t, ir.UnOp) and t.op == "-":
            scale, inner = -1, t.a
        if scale is not None:
            f = self.linear(inner)
            if f is None:
                return None
            if scale == 0:
                return 0, {}
            return f[0] * scale, {k: (atom, c * scale) for k, (atom, c) in f[1].items()}
        if isinstance(t, ir.BinOp | ir.UnOp | ir.Select | ir.Call | ir.Builtin | ir.Param | Iter | Sym):
            return 0, {_key(t): (t, 1)}
        return None

    # ----- atoms -----

    def fixed(self, t) -> bool:
        """The same value in both threads: no thread index, lane, iteration or per-thread value."""
        return remembered(self._fixed, t, self._fixed_of)

    def _fixed_of(self, t) -> bool:
        if isinstance(t, ir.Const | ir.Param):
            return True
        if isinstance(t, ir.Builtin):
            return t.name.startswith(("bid.", "bdim.", "gdim."))
        if isinstance(t, Sym):
            return t.uniform and all(self.fixed(x) for x in t.args)
        if isinstance(t, ir.BinOp | ir.UnOp | ir.Select | ir.Call):
            return all(self.fixed(x) for x in ir.operands(t))
        return False   # Iter, opaque values

    def dims(self, t) -> frozenset | None:
        """The thread dimensions a thread-only term reads (None: it reads anything else varying)."""
        return remembered(self._dims, t, self._dims_of)

    def _dims_of(self, t) -> frozenset | None:
        if isinstance(t, ir.Const):
            return frozenset()
        if isinstance(t, ir.Builtin) and t.name.startswith("tid."):
            return frozenset(t.name[4:])
        if isinstance(t, ir.BinOp | ir.UnOp | ir.Select):
            parts = [self.dims(x) for x in ir.operands(t)]
            return None if None in parts else frozenset().union(*parts)
        return None

    def bounds(self, e: AccessEvent) -> dict:
        """Ranges the access's guards give single atoms (`i < 4` for a loop, `tid.x < 16`)."""
        return remembered(self._bounds, e, self._bounds_of)

    def _bounds_of(self, e: AccessEvent) -> dict:
        out: dict = {}
        for g in e.guard:
            self._bound_from(g, out, True)
        return out

    def _residue_from(self, g, out: dict) -> None:
        """`x % m == r` or `(x & (m - 1)) == r` with x an atom that is never negative: x = r mod m."""
        if isinstance(g.b, ir.BinOp) and isinstance(g.a, ir.Const):
            g = ir.BinOp("==", g.b, g.a)
        rem, r = g.a, g.b
        if not (isinstance(rem, ir.BinOp) and isinstance(rem.b, ir.Const) and isinstance(r, ir.Const)):
            return
        m = rem.b.value
        if rem.op == "&" and m >= 0 and (m + 1) & m == 0:
            m += 1                   # a mask of the low bits: the residue for every x
        elif rem.op != "%" or m <= 0:
            return
        x = rem.a
        if self.fixed(x) or self.linear(x) != (0, {_key(x): (x, 1)}):
            return
        if rem.op == "%":
            lo = self._interval(x, {})
            if lo is None or lo[0] < 0:
                return               # C's remainder of a negative x is negative
        key = ("mod", _key(x))
        old_m, old_r = out.get(key, (1, 0))
        if m % old_m == 0 and r.value % old_m == old_r % old_m:
            out[key] = (m, r.value % m)   # the finer of two agreeing residues

    def _bound_from(self, g, out: dict, holds: bool) -> None:
        if isinstance(g, ir.UnOp) and g.op == "!":
            self._bound_from(g.a, out, not holds)
            return
        if not isinstance(g, ir.BinOp):
            return
        if g.op == "&&" and holds:
            self._bound_from(g.a, out, True)
            self._bound_from(g.b, out, True)
            return
        op = _CMP.get(g.op) if holds else _NEGATED.get(g.op)
        if op is None:
            return
        if op == "==":
            self._residue_from(g, out)
        f = self.linear(ir.BinOp("-", g.a, g.b))
        if f is None or len(f[1]) != 1:
            return
        const, terms = f
        (atom, c), = terms.values()
        if self.fixed(atom):
            return
        # c*atom + const OP 0, as lo <= atom <= hi
        lo, hi = None, None
        if op == "==":
            if const % c:
                return
            lo = hi = -const // c
        else:
            if op in (">", ">="):
                c, const = -c, -const      # -(c*atom + const) < / <= 0
            strict = op in ("<", ">")
            bound = -const - 1 if strict else -const   # c*atom <= bound
            if c > 0:
                hi = bound // c
            else:
                lo = -(bound // -c)
        key = _key(atom)
        old_lo, old_hi = out.get(key, (None, None))
        lo = lo if old_lo is None else old_lo if lo is None else max(lo, old_lo)
        hi = hi if old_hi is None else old_hi if hi is None else min(hi, old_hi)
        out[key] = (lo, hi)

    def interval(self, t, bounds: dict):
        """[lo, hi] of a varying atom in one thread, or None when it has no known finite range."""
        r = self._interval(t, bounds)
        given = bounds.get(_key(t))
        if given is not None:
            glo, ghi = given
            if r is None:
                if glo is None or ghi is None:
                    return None
                r = (glo, ghi)
            else:
                r = (r[0] if glo is None else max(r[0], glo), r[1] if ghi is None else min(r[1], ghi))
        return r

    def _interval(self, t, bounds):
        if isinstance(t, ir.Const):
            return t.value, t.value
        if isinstance(t, Iter):
            return 0, ITER_LIMIT - 1
        if isinstance(t, ir.Builtin) and t.name.startswith("tid."):
            extent = self.block.get(t.name[4:])
            return 0, (extent if isinstance(extent, int) else MAX_BLOCK) - 1
        if not isinstance(t, ir.BinOp):
            return None
        if t.op == "&" and isinstance(t.b, ir.Const) and t.b.value >= 0:
            x = self.interval(t.a, bounds)
            # x & m lies in [0, m] for every x; for 0 <= x it is also at most x
            return 0, t.b.value if x is None or x[0] < 0 else min(t.b.value, x[1])
        x = self.interval(t.a, bounds)
        if x is None:
            return None
        if isinstance(t.b, ir.Const):
            c = t.b.value
            if t.op == ">>" and 0 <= c < 63:
                return x[0] >> c, x[1] >> c
            if t.op in ("/", "fdiv") and c > 0 and (x[0] >= 0 or t.op == "fdiv"):
                return x[0] // c, x[1] // c
            if t.op in ("%", "fmod") and c > 0 and (x[0] >= 0 or t.op == "fmod"):
                return (x[0], x[1]) if x[1] < c and x[0] >= 0 else (0, c - 1)
        y = self.interval(t.b, bounds)
        if y is None:
            return None
        if t.op == "+":
            return x[0] + y[0], x[1] + y[1]
        if t.op == "-":
            return x[0] - y[1], x[1] - y[0]
        if t.op == "*":
            products = [p * q for p in x for q in y]
            return min(products), max(products)
        return None


def _residue(atom, bounds: dict) -> tuple[int, int]:
    """(m, r) with atom = r mod m by a thread's guards (`Disjointness._residue_from`); (1, 0)
    when they fix none."""
    return bounds.get(("mod", _key(atom)), (1, 0))


def _key(atom):
    """Leaves by what they are, other atoms by identity (the executor's terms are interned)."""
    if isinstance(atom, ir.Builtin) and atom.name.startswith("tid."):
        return ("tid", atom.name[4:])
    if isinstance(atom, Iter):
        return ("iter", atom.loop)
    if isinstance(atom, ir.Builtin | ir.Param):
        return (type(atom).__name__, atom.name)
    return id(atom)


def _evaluate(t, d: str, v: int) -> int | None:
    """The value of a term over tid.d alone at tid.d == v, with C's integer semantics."""
    if isinstance(t, ir.Const):
        return t.value
    if isinstance(t, ir.Builtin):
        return v if t.name == f"tid.{d}" else None
    if isinstance(t, ir.UnOp):
        x = _evaluate(t.a, d, v)
        if x is None:
            return None
        return {"-": -x, "~": ~x, "!": int(not x)}.get(t.op)
    if isinstance(t, ir.Select):
        c = _evaluate(t.cond, d, v)
        return None if c is None else _evaluate(t.a if c else t.b, d, v)
    if not isinstance(t, ir.BinOp):
        return None
    x, y = _evaluate(t.a, d, v), _evaluate(t.b, d, v)
    if x is None or y is None:
        return None
    return _apply(t.op, x, y)


def _apply(op: str, x: int, y: int) -> int | None:
    if op in ("/", "%"):
        if y == 0:
            return None
        q = abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1)   # truncates toward zero
        return q if op == "/" else x - q * y
    if op in ("fdiv", "fmod"):
        if y == 0:
            return None
        return x // y if op == "fdiv" else x % y
    if op in ("<<", ">>"):
        if not 0 <= y < 63:
            return None
        return x << y if op == "<<" else x >> y
    table = {"+": x + y, "-": x - y, "*": x * y, "&": x & y, "|": x | y, "^": x ^ y,
             "==": int(x == y), "!=": int(x != y), "<": int(x < y), "<=": int(x <= y),
             ">": int(x > y), ">=": int(x >= y), "&&": int(bool(x and y)), "||": int(bool(x or y))}
    return table.get(op)
