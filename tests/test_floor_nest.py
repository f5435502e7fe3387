"""A floor of a floor by positive constants as one floor (analyzer/analysis/decision/floor_nest.py): the
same value for every integer of every sign, and C's nested shifts keep their meaning through it."""

import itertools

import z3

from analyzer import ir
from analyzer.analysis.decision.floor_nest import one_floor
from analyzer.analysis.decision.solver import Encoder



def _value(term, **values) -> int:
    # Made in the term's own context: other tests' analyses replace Z3's main context.
    subs = [(z3.Int(n, term.ctx), z3.IntVal(v, term.ctx)) for n, v in values.items()]
    return z3.simplify(z3.substitute(term, *subs)).as_long()


def _is_one_floor(term, divisor: int) -> bool:
    """A `div` by `divisor` at the top, and x outside any other."""
    return (z3.is_app_of(term, z3.Z3_OP_IDIV) and z3.is_int_value(term.arg(1))
            and term.arg(1).as_long() == divisor and "(div x" not in term.arg(0).sexpr()
            and "(div (+ (* x" not in term.arg(0).sexpr())


def test_a_floor_of_a_floored_sum_is_one_floor_for_every_sign():
    X, K, J = z3.Ints("x k j")
    for d, c in itertools.product((1, 2, 3, 4), (1, 3, 4)):
        for term, want in ((one_floor(X / d + K, c), lambda x, k, j: (x // d + k) // c),
                           (one_floor(K + X / d, c), lambda x, k, j: (k + x // d) // c),
                           (one_floor(X / d + K + 3 * J, c), lambda x, k, j: (x // d + k + 3 * j) // c),
                           (one_floor(X / d, c), lambda x, k, j: (x // d) // c)):
            assert _is_one_floor(term, d * c), term
            for x, k, j in itertools.product(range(-9, 10), (-5, -1, 0, 2, 7), (-2, 1)):
                assert _value(term, x=x, k=k, j=j) == want(x, k, j), (term, x, k, j)
        # and for every integer, not only the small ones
        s = z3.Solver()
        s.add(z3.Or(one_floor(X / d + K, c) != (X / d + K) / c,
                    one_floor(X / d + K + 3 * J, c) != (X / d + K + 3 * J) / c))
        assert s.check() == z3.unsat


def test_other_dividends_are_left_as_they_are():
    X, K = z3.Ints("x k")
    for a in (X + K, X * 3, X % 4 + K, X / K + 1):
        assert z3.eq(one_floor(a, 4), a / 4)
    # a floor by a negative divisor is not a floor by a positive one: left alone
    neg = X / -2 + K
    assert z3.eq(one_floor(neg, 4), neg / 4)


def test_nested_shifts_keep_cs_meaning():
    """TVM's MLA prefill row `(((t*8 + i) >> 2) + (y >> 1)) >> 2`: one floor by 16 in the query,
    C's arithmetic shifts for every sign."""
    enc = Encoder(ir.Kernel("k", "k.cu", "cuda", [], {}, []), 32)
    X, K, J = z3.Ints("x k j")
    inner = enc.binop(">>", X * 8 + K, z3.IntVal(2))
    term = enc.binop(">>", inner + enc.binop(">>", J, z3.IntVal(1)), z3.IntVal(2))
    assert _is_one_floor(term, 16), term
    for x, k, j in itertools.product(range(-9, 10), range(-9, 10), (-5, -1, 0, 3, 6)):
        assert _value(term, x=x, k=k, j=j) == (((x * 8 + k) >> 2) + (j >> 1)) >> 2, (x, k, j)
