"""The Z3 encoding keeps C's meaning of the operators the kernels' index arithmetic uses."""

import itertools

import pytest
import z3

from analyzer import ir
from analyzer.analysis.decision.solver import Encoder


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
    from analyzer.analysis.execution.sym import Iter, Sym
    enc.collecting()
    floored = enc.term(Sym("private:idx+0@L1", True, (Iter(1),), lower=0), 1)
    free = enc.term(Sym("private:other+0@L1", True, (Iter(1),)), 1)
    s = z3.Solver()
    s.add(enc.needed())
    assert s.check(floored < 0) == z3.unsat
    assert s.check(free < 0) == z3.sat


def _c_eval(t, env):
    """C's value of an IR term (replay.py's operators) for the atoms in `env`."""
    from analyzer.analysis.witness.replay import _binop
    if isinstance(t, ir.Const):
        return t.value
    if isinstance(t, ir.Builtin | ir.Param):
        return env[t.name]
    if isinstance(t, ir.Call):
        return ir.bit_intrinsic(t.fn, _c_eval(t.args[0], env))
    if isinstance(t, ir.Select):
        return _c_eval(t.a, env) if _c_eval(t.cond, env) else _c_eval(t.b, env)
    if t.op in ("&&", "||"):
        a, b = bool(_c_eval(t.a, env)), bool(_c_eval(t.b, env))
        return int(a and b if t.op == "&&" else a or b)
    return _binop(t.op, _c_eval(t.a, env), _c_eval(t.b, env))


def test_tvm_division_spellings_read_back_keep_their_value():
    """division_forms.py: `n - (n/d)*d`, `x/c + ((x%c) >> 63)` and the sign fix-ups of `n/d` read
    back as `%`, floor division and floor modulo: the same value for every sign of n and d."""
    from analyzer.analysis.decision.division_forms import binop, select
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


def test_digits_of_a_flat_index_keep_cs_meaning():
    """Encoder._digits: TVM's nests over a flat index read as digits `(i mod M) // D` of it
    (`x + (y >> s)` as `(x * 2**s + y) >> s`, a quotient of a quotient as one, a remainder of a
    quotient as a quotient of a remainder), each quotient related to the others as floors are.
    Every term keeps C's value on small values of every sign: a digit where the index is never
    negative (u, v, bid, tid), C's truncation where it may be (p, q); the true value is the only
    one in the exact encoder, and possible in the over-approximation."""
    kernel = ir.Kernel("k", "k.cu", "cuda", [], {}, [], block_dim={"x": 1024},
                       param_ranges={"u": (0, 600), "v": (0, 600), "p": (-600, 600), "q": (-600, 600)})
    c = ir.Const

    def b(op, x, y):
        return ir.BinOp(op, x, y if isinstance(y, ir.Expr) else c(y))

    bx, tx = ir.Builtin("bid.x"), ir.Builtin("tid.x")
    i = b("+", b("*", bx, 1024), tx)
    terms = {}
    for name, (x, y) in {"nonneg": (ir.Param("u"), ir.Param("v")), "signed": (ir.Param("p"), ir.Param("q")),
                         "thread": (bx, tx)}.items():
        flat = b("+", b("*", x, 1024), y)
        terms[name] = [
            b("/", b("%", b("+", b("*", x, 64), b(">>", y, 4)), 160), 5),     # the head at head_dim 80
            b("/", b("+", b("*", x, 2), b(">>", y, 9)), 5),                     # its row
            b("%", flat, 80), b("%", b("/", flat, 80), 32), b("/", b("/", flat, 80), 32),
            b(">>", b("%", flat, 2560), 4), b("/", flat, 2560), b("/", b("%", flat, 160), 3),
            b("%", b(">>", flat, 4), 7), b("%", b("%", flat, 100), 8),
            b("fdiv", b("fmod", b("+", b("*", x, 16), b(">>", y, 6)), 9), 2), b("fmod", b("fdiv", flat, 5), 4),
            b("+", b(">>", b("+", b("*", x, 4), b(">>", y, 2)), 3), b("%", y, 12)),
        ]
    enc = Encoder(kernel, 32)
    # The rewrites apply where the index is never negative, and only there.
    assert enc._digits(terms["thread"][0])[1:] == (2560, 80)
    assert enc._digits(terms["nonneg"][4])[1:] == (None, 2560)
    assert enc._digits(terms["thread"][9]) is None          # 8 does not divide 100: C's encoding
    assert all(enc._digits(t) is None for t in terms["signed"][:9])
    for exact in (True, False):
        enc = Encoder(kernel, 32, exact=exact)
        enc.collecting()
        zs = {name: [enc.term(t, 1) for t in ts] for name, ts in terms.items()}
        side = enc.needed()
        for (x, y), name in itertools.product(
                itertools.product((-300, -161, -17, -1, 0, 1, 2, 5, 79, 300), (-300, -80, -16, -1, 0, 3, 15, 80, 511, 300)),
                ("nonneg", "signed", "thread")):
            if name != "signed" and (x < 0 or y < 0):
                continue
            env = {"u": x, "v": y, "p": x, "q": y, "bid.x": x, "tid.x": y}
            fix = ([enc.param("u") == x, enc.param("v") == y] if name == "nonneg" else
                   [enc.param("p") == x, enc.param("q") == y] if name == "signed" else
                   [enc.bid["x"] == x, enc.tid[1]["x"] == y])
            s = z3.Solver()
            s.add(side + fix)
            for term, z in zip(terms[name], zs[name]):
                want = _c_eval(term, env)
                assert s.check(z == want) == z3.sat, (exact, name, term, env)
                if exact:
                    assert s.check(z != want) == z3.unsat, (exact, name, term, env)


def test_a_thread_index_under_a_fixed_block_is_linear():
    """In the cheap query, with the block's extents known, the thread's linear index, its lane and
    its warp are linear terms: a product of two numbers is a number, never the uninterpreted `mul`
    the cheap query gives a product of two unknowns (which left Tensor Core tiles' queries
    undecided at 1 s)."""
    kernel = ir.Kernel("k", "k.cu", "cuda", [], {}, [], block_dim={"x": 128, "y": 1, "z": 1})
    enc = Encoder(kernel, 32, exact=False)
    for name in ("linear_tid", "lane", "warp"):
        assert "mul" not in enc.builtin(name, 1).sexpr(), name
    assert z3.is_int_value(enc.mul(z3.IntVal(128), z3.IntVal(1)))
    # a product with an unknown extent stays uninterpreted in the cheap query
    free = ir.Kernel("k", "k.cu", "cuda", [], {}, [], block_dim={"x": None, "y": None, "z": None})
    assert "mul" in Encoder(free, 32, exact=False).builtin("linear_tid", 1).sexpr()
