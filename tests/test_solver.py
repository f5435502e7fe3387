"""The Z3 encoding keeps C's meaning of the operators the kernels' index arithmetic uses."""

import itertools

import pytest
import z3

from analyzer import ir
from analyzer.analysis.solver import Encoder


@pytest.fixture(scope="module")
def enc():
    kernel = ir.Kernel("k", "k.cu", "cuda", [], {}, [])
    return Encoder(kernel, 32)


@pytest.mark.parametrize("op", [">>", "<<"])
def test_shift_by_a_symbolic_amount_is_cs_shift(enc, op):
    """`n >> s` with `s` a kernel parameter (TVM's cumsum computes its levels so) is C's shift for
    every in-range amount, negative values shifting arithmetically, and stays linear: no bit-vector."""
    a, s = z3.Int("a"), z3.Int("s")
    term = enc.binop(op, a, s)
    assert "bv" not in term.sexpr()
    for x, k in itertools.product((-1025, -7, -1, 0, 1, 5, 511, 1 << 40), (0, 1, 3, 9, 18, 31, 62)):
        want = x >> k if op == ">>" else x << k
        got = z3.simplify(z3.substitute(term, (a, z3.IntVal(x)), (s, z3.IntVal(k))))
        assert got.as_long() == want, (x, op, k)


def test_loop_state_with_a_floor_never_goes_below_it(enc):
    """A counter the executor knows only grows from 0 (`Sym.lower`) cannot be -1 in any iteration:
    the witness of a persistent kernel then shows a batch that exists."""
    from analyzer.analysis.symbolic import Iter, Sym
    enc.collecting()
    floored = enc.term(Sym("private:idx+0@L1", True, (Iter(1),), lower=0), 1)
    free = enc.term(Sym("private:other+0@L1", True, (Iter(1),)), 1)
    s = z3.Solver()
    s.add(enc.needed())
    assert s.check(floored < 0) == z3.unsat
    assert s.check(free < 0) == z3.sat
