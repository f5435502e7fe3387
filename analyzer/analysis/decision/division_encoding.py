"""How the encoder divides: C's truncating and TIR's flooring division and remainder by constants
and by products `x*c`, read without sign cases where the program's values cannot be negative, and
nests of them over one flat index read as its digits (quotients `i // e` of one term). A mixin of
`solver.Encoder`: it uses the encoder's `kernel`, `exact`, `base`, `func`, `mul`, `term` and the
memo tables `__init__` makes (`_remainders`, `_signs`, `_flat`, `_quotients`, `_digit_forms`,
`_keep`); every identity holds for the integers the program can take (tests/test_solver.py)."""

from __future__ import annotations

import z3

from analyzer import ir
from analyzer.analysis.decision.z3_terms import as_int
from analyzer.analysis.execution.sym import Iter, Sym
from analyzer.analysis.execution.uniformity import remembered


class DivisionEncoding:
    """Part of `solver.Encoder`: its divisions (see the module docstring)."""

    def _division(self, a, x, c: int = 1, floor: bool = False):
        """Quotient and remainder by b = x*c as functions, tied by a = q*b + r, 0 <= r < b for
        a >= 0 < b (C's truncation agrees with flooring there): linear, and exact enough to prove
        two quotient/remainder pairs equal only when the dividends are.

        With c > 1 the remainder is r = c*s + a mod c, s a function in [0, x): whatever the signs,
        r - a is a multiple of c, so this over-approximates as the functions do, and the remainder's
        own quotient and remainder by c are s and a mod c (`_by_constant`). TVM flattens
        (h, s, d) of extents (., x, c) into one index and takes it apart as `i // (x*c)`,
        `i % (x*c) // c` and `i % c`: the query then reads h, s and d as linear parts of i."""
        b = x * c
        q = self.func("fdiv" if floor else "div", 2)(a, b)
        # Floor division satisfies the identity for every dividend; C's truncation for a >= 0.
        when = b > 0 if floor else z3.And(a >= 0, b > 0)
        if c > 1:
            s = self.func("fmodq" if floor else "remq", 2)(a, b)
            # a mod c as `_digit` spells it: one term with the digits of a flat index a.
            flat = z3.simplify(a)
            m = flat - c * self._quotient(flat, c)
            r = s * c + m
            self._remainders[r.get_id()] = (r, s, m, c)
            self.base.append(z3.Implies(when, z3.And(a == self.mul(q, x) * c + r, s >= 0, s < x)))
            return q, r
        r = self.func("fmod" if floor else "rem", 2)(a, b)
        self.base.append(z3.Implies(when, z3.And(a == self.mul(q, x) * c + r, r >= 0, r < b)))
        return q, r

    def _by_constant(self, t, k: int):
        """`t.a op c` (c = t.b > 0) encoded without C's sign cases where they cannot arise: a
        digit of a never-negative flat index (`_digits`: a nest of shifts, quotients and remainders
        by constants over `blockIdx.x * 1024 + threadIdx.x` and the like) as quotients of that
        index, and a remainder `_division` split into c*s + m divided into s and m. None otherwise
        (C's encoding)."""
        c = t.b.value
        digit = self._digits(t)
        if digit is not None:
            return self._digit(*digit, k)
        if not (isinstance(t.a, ir.BinOp) and t.a.op in ("%", "fmod")) or self.exact:
            return None
        hit = self._remainders.get(as_int(self.term(t.a, k)).get_id())
        if hit is None or hit[3] != c:
            return None
        _, s, m, _ = hit
        if t.op == "fdiv":
            return s
        if t.op == "fmod":
            return m
        # C truncates: c*s + m is negative exactly when s is.
        exact = z3.Or(s >= 0, m == 0)
        return z3.If(exact, s, s + 1) if t.op == "/" else z3.If(exact, m, m - c)

    def _digits(self, t):
        """`t` as a digit `(i mod M) // D` of a flat index: `(i, M, D)` (M None: no modulus), with
        i a sum never negative by `_nonnegative` and itself no quotient; None when `t` is not one.
        TVM takes the flat index `i = b * 1024 + t` of (row, head, d) apart as nests such as
        `((b * 64 + (t >> 4)) % 160) / 5` (head_dim 80): the solver relates those only when each
        is a digit of the same i. Every step is an identity of integers for i >= 0, where C's
        truncation is a floor: `x + (y >> s)` is `(x * 2**s + y) >> s` (whatever the signs),
        `((i mod M) // D) // c` is `(i mod M) // (D * c)`, and `((i mod M) // D) % c` is
        `(i mod (D * c)) // D` when D * c divides M. Memoised by identity."""
        return remembered(self._digit_forms, t, self._digits_of)

    def _digits_of(self, t):
        out = None
        if self._undivided(t):
            out = (t, None, 1) if self._nonnegative(t) else None
        elif isinstance(t, ir.BinOp) and t.op in (">>", "/", "fdiv", "%", "fmod"):
            inner = self._digits(t.a) if isinstance(t.b, ir.Const) and t.b.value > 0 else None
            if inner is not None:
                i, m, d = inner
                c = 1 << t.b.value if t.op == ">>" else t.b.value
                if t.op == ">>" and t.b.value >= 63:
                    out = None
                elif t.op in (">>", "/", "fdiv"):
                    out = (i, m, d * c)
                elif m is None or m % (d * c) == 0:
                    out = (i, d * c, d)
        elif isinstance(t, ir.BinOp) and t.op == "+":
            for x, y in ((t.a, t.b), (t.b, t.a)):
                inner = self._digits(y) if self._undivided(x) and self._nonnegative(x) else None
                if inner is not None and inner[1] is None and inner[2] > 1:
                    i, _, d = inner
                    out = (ir.BinOp("+", ir.BinOp("*", x, ir.Const(d)), i), None, d)
                    self._keep.append(out[0])    # alive: the memo is keyed by identity
                    break
        return out

    def _digit(self, i, m, d, k: int):
        """Z3's `(i mod m) // d` of a flat index i for thread k, linear in quotients `i // e` of one
        canonical (simplified) term of i: with d dividing m, `i // d - (m / d) * (i // m)`. Every
        digit of i then shares the same few quotients, which `_quotient` relates."""
        flat = z3.simplify(as_int(self.term(i, k)))
        if m is None:
            return self._quotient(flat, d)
        if m % d == 0:
            return self._quotient(flat, d) - (m // d) * self._quotient(flat, m)
        return (flat % m) / d

    def _quotient(self, flat, d: int):
        """`flat // d` (d > 0). Two quotients of one index by e and d, e dividing d, are stated
        related as floors are: `0 <= i // e - (d / e) * (i // d) < d / e` (`i // d` is the floor
        of `(i // e) / (d / e)`), so the solver reads them as digits of one mixed radix."""
        if d == 1:
            return flat
        _, seen, lemmas = self._quotients.setdefault(flat.get_id(), (flat, {}, []))
        q = seen.get(d)
        if q is None:
            q = flat / d
            for e, other in seen.items():
                if d % e == 0 or e % d == 0:
                    (small, n), (big, f) = sorted(((q, d), (other, e)), key=lambda x: x[1])
                    lemmas.append(len(self.base))
                    self.base.append(z3.And(small - (f // n) * big >= 0, small - (f // n) * big < f // n))
            seen[d] = q
        # Every quotient of i carries the relations known so far: a query using two of them holds
        # the later-built one, built after their relation was stated.
        if self._using:
            self._using[-1].update(lemmas)
        return q

    def _undivided(self, t) -> bool:
        """No quotient, remainder, shift or mask inside `t` (memoised by identity)."""
        return remembered(self._flat, t, self._undivided_of)

    def _undivided_of(self, t) -> bool:
        if isinstance(t, ir.BinOp):
            return t.op not in ("/", "%", "fdiv", "fmod", ">>", "&") and self._undivided(t.a) and self._undivided(t.b)
        return all(self._undivided(x) for x in ir.operands(t)) if isinstance(t, ir.UnOp | ir.Select) else True

    def _nonnegative(self, t) -> bool:
        """Whether every value of `t` is >= 0 by the bounds every query states for its atoms:
        thread, block and launch indices, iterations, parameters of a non-negative range, loaded
        values of a non-negative lower bound; sums, products, quotients and shifts of such,
        remainders by a positive constant, masks. Of the program's values, not of their encoding:
        an over-approximating product (`mul`) may be negative in a model, but the real product,
        which the model may also take, divides as Euclid's. Memoised by identity."""
        return remembered(self._signs, t, self._nonnegative_of)

    def _nonnegative_of(self, t) -> bool:
        if isinstance(t, ir.Const):
            out = t.value >= 0
        elif isinstance(t, ir.Builtin | Iter):
            out = True
        elif isinstance(t, ir.Param):
            if t.name in self.kernel.bindings:
                out = self.kernel.bindings[t.name] >= 0
            else:
                bounds = self.kernel.param_ranges.get(t.name)
                out = bounds is not None and bounds[0] >= 0
        elif isinstance(t, Sym):
            out = t.lower is not None and t.lower >= 0
        elif isinstance(t, ir.BinOp):
            cb = t.b.value if isinstance(t.b, ir.Const) else None
            if t.op in ("+", "*"):
                out = self._nonnegative(t.a) and self._nonnegative(t.b)
            elif t.op in ("/", "%", "fdiv"):
                out = cb is not None and cb > 0 and self._nonnegative(t.a)
            elif t.op in (">>", "<<"):     # by a constant: a division or product by a power of two
                out = cb is not None and 0 <= cb < 63 and self._nonnegative(t.a)
            elif t.op == "fmod":
                out = cb is not None and cb > 0
            elif t.op == "&":              # with a constant of clear sign bit, whatever the other side
                out = any(isinstance(x, ir.Const) and 0 <= x.value < 1 << 63 for x in (t.a, t.b))
            else:
                out = False
        elif isinstance(t, ir.Select):
            out = self._nonnegative(t.a) and self._nonnegative(t.b)
        else:
            out = False
        return out
