"""`^ & |` of two values the encoder knows nothing of bit by bit, in the cheap encoding: an
uninterpreted function with the facts of 64-bit two's complement that race queries need.

The exact encoding takes both operands to 64-bit vectors (solver.py), which the solver must then
blast: a global-memory bitonic sort step, `ixj = i ^ j` with `j` the host's stride, kept every
pair of its accesses past the budget (78 s, `unknown`). Yet its proof needs no bit at all: `^` by
the same `j` is one-to-one and undoes itself, so `i1 ^ j == i2` makes `i2 ^ j == i1`, and the
guard `ixj > i` then holds for one thread of the two only.

Every fact stated here is true of the exact operation on values inside 64 bits (the only values
`_from_bits` reads back), so a query unsatisfiable with them is unsatisfiable exactly: the cheap
encoding stays an over-approximation, and a collision it finds is asked again exactly, as for its
products and quotients. A mixin of `solver.Encoder`: it uses the encoder's `base`, `last_base` and `func`.
"""

from __future__ import annotations

import operator

import z3

# Applications related pairwise to the newest one: the facts are quadratic in their number, and
# a query that meets more of them is asked exactly anyway when the cheap one finds a collision.
RELATED = 16
_LO, _HI = -(1 << 63), 1 << 63
OPERATORS = {"^": operator.xor, "&": operator.and_, "|": operator.or_}


def _in64(*xs):
    return z3.And(*[z3.And(x >= _LO, x < _HI) for x in xs])


class BitwiseLemmas:
    """Part of `solver.Encoder`: `_bitwise` (see the module docstring)."""

    def _bitwise(self, op: str, a, b):
        """a op b for op in `^ & |`, as `bxor`, `band` or `bor` of (a, b) with its facts in `base`."""
        out = self.func({"^": "bxor", "&": "band", "|": "bor"}[op], 2)(a, b)
        facts = [_in64(out)]
        nonneg = z3.And(a >= 0, b >= 0, a < _HI, b < _HI)
        if op == "^":
            # x ^ y = x + y - 2 (x & y); 0 only for x == y; x ^ 0 == x
            facts += [z3.Implies(nonneg, z3.And(out >= 0, out <= a + b)),
                      z3.Implies(_in64(a, b), (out == 0) == (a == b)),
                      z3.Implies(z3.And(b == 0, _in64(a)), out == a),
                      z3.Implies(z3.And(a == 0, _in64(b)), out == b)]
        else:
            # x & x == x | x == x; x & 0 == 0, x & -1 == x; x | 0 == x, x | -1 == -1
            none, every = (0, -1) if op == "&" else (-1, 0)
            facts += [z3.Implies(nonneg, z3.And(out >= 0, out <= a, out <= b) if op == "&" else
                                 z3.And(out >= a, out >= b, out <= a + b)),
                      z3.Implies(z3.And(a == b, _in64(a)), out == a)]
            for x, y in ((a, b), (b, a)):
                facts += [z3.Implies(y == none, out == none), z3.Implies(z3.And(y == every, _in64(x)), out == x)]
        apps = self.__dict__.setdefault("_bitwise_apps", {}).setdefault(op, [])
        for other, c, d in apps[-RELATED:]:
            facts += _related(op, (out, a, b), (other, c, d))
        apps.append((out, a, b))
        self.__dict__.setdefault("_bitwise_base", set()).update(range(len(self.base), len(self.base) + len(facts)))
        self.base += facts
        return out

    def read_bitwise(self) -> bool:
        """Does the last query (`needed`) read one of these functions? (Asked of every cheap query.)"""
        base = self.__dict__.get("_bitwise_base")
        return bool(base) and not base.isdisjoint(self.last_base)

    def exact_points(self, model) -> list:
        """For each application, its exact value at the operands' values in `model` (a fact true
        of the exact operation: the cheap encoding stays an over-approximation with it)."""
        out = []
        for op, apps in self.__dict__.get("_bitwise_apps", {}).items():
            for app, a, b in apps:
                x, y = (model.eval(v, model_completion=True) for v in (a, b))
                if not (z3.is_int_value(x) and z3.is_int_value(y)):
                    continue
                value = _exact(op, x.as_long(), y.as_long())
                if model.eval(app, model_completion=True).as_long() != value:
                    out.append(z3.Implies(z3.And(a == x, b == y), app == value))
        return out


def _exact(op: str, x: int, y: int) -> int:
    """The exact encoding's value: both operands taken to 64 bits, the result read signed."""
    m = (1 << 64) - 1
    r = OPERATORS[op](x & m, y & m)
    return r - (1 << 64) if r >= 1 << 63 else r


def _related(op: str, x, y) -> list:
    """Facts between two applications of one operation: commutative; for `^`, one-to-one in each
    operand and its own inverse (x ^ y ^ y == x), each in every order of the operands."""
    (p, a, b), (q, c, d) = x, y
    facts = [z3.Implies(z3.And(a == d, b == c), p == q)]
    if op != "^":
        return facts
    for (s, u, v) in ((a, b, p), (b, a, p)):        # p = s ^ u
        for (t, w, r) in ((c, d, q), (d, c, q)):    # q = t ^ w
            same = z3.And(u == w, _in64(s, t, u))
            facts += [z3.Implies(same, (v == r) == (s == t)),     # one-to-one
                      z3.Implies(z3.And(same, v == t), r == s),   # t = s ^ u: t ^ u = s
                      z3.Implies(z3.And(same, r == s), v == t)]
    return facts
