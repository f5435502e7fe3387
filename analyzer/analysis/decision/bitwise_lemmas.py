"""`^ & |` of two values the encoder knows nothing of bit by bit, and `>> <<` of an unknown value
by an unknown amount, in the cheap encoding: an uninterpreted function with the facts of the exact
encoding that race queries need.

The exact encoding takes both operands to 64-bit vectors (solver.py), which the solver must then
blast: a global-memory bitonic sort step, `ixj = i ^ j` with `j` the host's stride, kept every
pair of its accesses past the budget (78 s, `unknown`). Yet its proof needs no bit at all: `^` by
the same `j` is one-to-one and undoes itself, so `i1 ^ j == i2` makes `i2 ^ j == i1`, and the
guard `ixj > i` then holds for one thread of the two only.

A shift by an amount the run computes is exactly one case per amount from 0 to 63 (solver.py,
`_shift`), each a division or product by a power of two: 64 of them in every query of a kernel
that shifts a loaded key by its `shift` parameter (a radix sort's digit) or a value by a loop's
counter, a second or more each. As a function it keeps what a collision needs: an amount of 0
changes nothing, `>>` moves a value toward 0 and `<<` away from it, and both keep the order of
two values shifted by the same amount.

Every fact stated here is true of the exact operation (for `^ & |` on values inside 64 bits, the
only values `_from_bits` reads back; for shifts on any value, an amount outside 0..63 read as 63
as `_shift` reads it), so a query unsatisfiable with them is unsatisfiable exactly: the cheap
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
SHIFTS = {">>": operator.rshift, "<<": operator.lshift}
_NAMES = {"^": "bxor", "&": "band", "|": "bor", ">>": "shr", "<<": "shl"}


def _in64(*xs):
    return z3.And(*[z3.And(x >= _LO, x < _HI) for x in xs])


class BitwiseLemmas:
    """Part of `solver.Encoder`: `_bitwise` (see the module docstring)."""

    def _bitwise(self, op: str, a, b):
        """a op b for op in `^ & | >> <<`, as `bxor`, `band`, `bor`, `shr` or `shl` of (a, b) with
        its facts in `base`."""
        out = self.func(_NAMES[op], 2)(a, b)
        if op in SHIFTS:
            return self._remember(op, out, a, b, _shift_facts(op, out, a, b))
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
        return self._remember(op, out, a, b, facts)

    def _remember(self, op: str, out, a, b, facts: list):
        """State `facts` and those between this application and the last RELATED of its operation."""
        apps = self.__dict__.setdefault("_bitwise_apps", {}).setdefault(op, [])
        for other, c, d in apps[-RELATED:]:
            facts += _related(op, (out, a, b), (other, c, d))
        apps.append((out, a, b))
        self.__dict__.setdefault("_bitwise_first", {})[out.get_id()] = len(self.base)
        self.__dict__.setdefault("_bitwise_base", set()).update(range(len(self.base), len(self.base) + len(facts)))
        self.base += facts
        return out

    def read_bitwise(self) -> bool:
        """Does the last query (`needed`) read one of these functions? (Asked of every cheap query.)"""
        base = self.__dict__.get("_bitwise_base")
        return bool(base) and not base.isdisjoint(self.last_base)

    def defined_shifts(self) -> list:
        """Each amount of a shift the last query reads within 0..63, where C defines it: a
        preference for the models the exact query is asked at (a witness must replay, and the
        replay runs no undefined shift), never a fact (a shift a guard skips may have any amount)."""
        first = self.__dict__.get("_bitwise_first", {})
        return [z3.And(s >= 0, s <= 63) for op in SHIFTS for out, _, s in self.__dict__.get("_bitwise_apps", {}).get(op, ())
                if first[out.get_id()] in self.last_base]     # the last query's shifts only

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


def _shift_facts(op: str, out, a, s) -> list:
    """Facts of `a >> s` (floor(a / 2**s)) or `a << s` (a * 2**s), any amount (see the docstring)."""
    if op == ">>":
        return [z3.Implies(s == 0, out == a),
                z3.Implies(a >= 0, z3.And(out >= 0, out <= a)),
                z3.Implies(a < 0, z3.And(out >= a, out <= -1))]
    return [z3.Implies(s == 0, out == a), z3.Implies(a >= 0, out >= a), z3.Implies(a <= 0, out <= a),
            (out == 0) == (a == 0)]


def _exact(op: str, x: int, y: int) -> int:
    """The exact encoding's value: for `^ & |` both operands taken to 64 bits and the result read
    signed; for a shift, by the amount, or by 63 where C leaves it undefined (solver._shift)."""
    if op in SHIFTS:
        return SHIFTS[op](x, y if 0 <= y <= 63 else 63)
    m = (1 << 64) - 1
    r = OPERATORS[op](x & m, y & m)
    return r - (1 << 64) if r >= 1 << 63 else r


def _related(op: str, x, y) -> list:
    """Facts between two applications of one operation: commutative; for `^`, one-to-one in each
    operand and its own inverse (x ^ y ^ y == x), each in every order of the operands."""
    (p, a, b), (q, c, d) = x, y
    if op in SHIFTS:
        # The same amount keeps the order of the shifted values (a floor of a quotient, a product).
        return [z3.Implies(z3.And(b == d, a <= c), p <= q), z3.Implies(z3.And(b == d, c <= a), q <= p)]
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
