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


def _c_eval(t, env):
    """C's value of an IR term (replay.py's operators) for the atoms in `env`."""
    from analyzer.analysis.replay import _binop
    if isinstance(t, ir.Const):
        return t.value
    if isinstance(t, ir.Builtin | ir.Param):
        return env[t.name]
    if isinstance(t, ir.Select):
        return _c_eval(t.a, env) if _c_eval(t.cond, env) else _c_eval(t.b, env)
    if t.op in ("&&", "||"):
        a, b = bool(_c_eval(t.a, env)), bool(_c_eval(t.b, env))
        return int(a and b if t.op == "&&" else a or b)
    return _binop(t.op, _c_eval(t.a, env), _c_eval(t.b, env))


def test_tvm_division_spellings_read_back_keep_their_value():
    """division_forms.py: `n - (n/d)*d`, `x/c + ((x%c) >> 63)` and the sign fix-ups of `n/d` read
    back as `%`, floor division and floor modulo: the same value for every sign of n and d."""
    from analyzer.analysis.division_forms import binop, select
    n, d = ir.Param("n"), ir.Param("d")
    q, r = ir.BinOp("/", n, d), ir.BinOp("%", n, d)
    zero = ir.Const(0)
    fix = ir.BinOp("||", ir.BinOp("&&", ir.BinOp(">=", d, zero), ir.BinOp(">=", r, zero)),
                   ir.BinOp("&&", ir.BinOp("<", d, zero), ir.BinOp("<=", r, zero)))
    c = ir.Const(96)
    spelled = [ir.BinOp("-", n, ir.BinOp("*", q, d)),
               ir.BinOp("+", ir.BinOp("/", n, c), ir.BinOp(">>", ir.BinOp("%", n, c), ir.Const(63))),
               ir.Select(fix, q, ir.BinOp("-", q, ir.Const(1))),
               ir.Select(fix, r, ir.BinOp("+", r, d))]
    read = [binop("-", n, spelled[0].b), binop("+", spelled[1].a, spelled[1].b),
            select(fix, q, spelled[2].b), select(fix, r, spelled[3].b)]
    assert [t.op for t in read] == ["%", "fdiv", "fdiv", "fmod"]
    for nv, dv in itertools.product((-2000, -97, -96, -1, 0, 1, 95, 96, 1000, 4095), (-7, -1, 1, 3, 96)):
        env = {"n": nv, "d": dv}
        assert [_c_eval(t, env) for t in read] == [_c_eval(t, env) for t in spelled], env


def test_page_index_encodings_keep_cs_meaning():
    """The encoder's shortcuts (Encoder._by_constant): a flat non-negative index divides by a
    constant as Euclid's, `(x + (y >> s)) / c` as one division, and in the query with products
    as functions (which leave the quotient by n*96 free) every true value stays possible
    (an over-approximation, never a false unsat)."""
    kernel = ir.Kernel("k", "k.cu", "cuda", [], {}, [], block_dim={"x": 1024})
    bx, tx, n = ir.Builtin("bid.x"), ir.Builtin("tid.x"), ir.Param("n")
    i = ir.BinOp("+", ir.BinOp("*", bx, ir.Const(1024)), tx)
    nc = ir.BinOp("*", n, ir.Const(96))
    terms = [ir.BinOp("%", i, ir.Const(96)), ir.BinOp("/", i, ir.Const(2560)),
             ir.BinOp("/", ir.BinOp("+", ir.BinOp("*", bx, ir.Const(2)), ir.BinOp(">>", tx, ir.Const(9))), ir.Const(5)),
             ir.BinOp("fdiv", i, nc), ir.BinOp("fdiv", ir.BinOp("fmod", i, nc), ir.Const(96)),
             ir.BinOp("fmod", ir.BinOp("fmod", i, nc), ir.Const(96)), ir.BinOp("/", ir.BinOp("%", i, nc), ir.Const(96))]
    for exact in (True, False):
        enc = Encoder(kernel, 32, exact=exact)
        enc.collecting()
        zs = [enc.term(t, 1) for t in terms]
        side = enc.needed()
        for b, t, nv in itertools.product((0, 3, 77), (0, 5, 1023), (-3, 0, 1, 2, 5)):
            env = {"bid.x": b, "tid.x": t, "n": nv}
            fix = [enc.tid[1]["x"] == t, enc.bid["x"] == b, enc.param("n") == nv]
            for term, z in zip(terms, zs):
                if nv == 0 and term not in terms[:3]:
                    continue    # a division by n*96 = 0: C leaves it undefined
                want = _c_eval(term, env)
                s = z3.Solver()
                s.add(side + fix)
                assert s.check(z == want) == z3.sat, (exact, term, env)     # the true value is possible
                if exact or term in terms[:3]:
                    assert s.check(z != want) == z3.unsat, (exact, term, env)   # and the only one
