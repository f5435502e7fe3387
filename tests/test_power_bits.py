"""Powers of two with a run-time exponent, and `^ & |` with them (analyzer/analysis/decision/power_bits.py):
encoded on the exponent, with the value C computes for every in-range operand, and linear (no
bit-vector) where the old encoding sent Z3 through 64-bit vectors and nested shift cases."""

import itertools
import json

import pytest
import z3

from analyzer import ir
from analyzer.analysis.decision import power_bits
from analyzer.analysis.decision.solver import Encoder
from conftest import TESTS, cli_in_process
from test_solver import _c_eval as _eval

I, J, N = ir.Param("i"), ir.Param("j"), ir.Param("n")
TID = ir.Builtin("tid.x")


def B(op, a, b):
    return ir.BinOp(op, a, b)


def C(v):
    return ir.Const(v)


# The bitonic sort's size and stride, a butterfly's half, and powers shifted past their last bit.
SIZE = B("<<", C(2), I)
STRIDE = B(">>", B("/", SIZE, C(2)), J)
POWERS = [SIZE, STRIDE, B("<<", C(1), I), B("*", B("<<", C(1), I), B("<<", C(4), J)),
          B(">>", B("<<", C(8), I), J), B("fdiv", B("<<", C(1), I), C(4)), B(">>", C(16), J)]


def _agrees_with_c(terms, params, values, undefined=lambda env: False, block=64):
    """Each term's encoding (thread 1, side constraints included) equals C's value for every
    assignment of `params` (i, j, n) in `values` and thread index tried, where C defines one."""
    kernel = ir.Kernel("k", "k.cu", "cuda", [], {}, [])
    kernel.block_dim.update(x=block, y=1, z=1)
    enc = Encoder(kernel, 32)
    enc.collecting()
    encoded = [enc.term(t, 1) for t in terms]
    assert not any("bv" in e.sexpr() for e in encoded)
    s = z3.Solver()
    s.add(enc.needed())     # the side constraints: a thread index's bits, its bounds
    i, j, n, tid = z3.Ints("i j n t1.x")
    for (iv, jv), (nv, tv) in itertools.product(params, values):
        env = {"i": iv, "j": jv, "n": nv, "tid.x": tv}
        s.push()
        s.add(i == iv, j == jv, n == nv, tid == tv)
        assert s.check() == z3.sat     # the values meet the side constraints: no vacuous unsat
        for t, e in zip(terms, encoded):
            if not (isinstance(t, ir.BinOp) and t.op in ("/", "%") and undefined(env)):
                assert s.check(e != _eval(t, env)) == z3.unsat, (str(t), env)
        s.pop()


@pytest.mark.parametrize("power", POWERS, ids=str)
def test_power_of_two_terms_keep_cs_value(power):
    """Each form is read as 2**e (0 past the last bit), and the encoding of the term alone and of
    x ^ p, x & p, x | p agrees with C for every thread index, exponent and sign of x tried."""
    assert power_bits.exponent(power) is not None
    terms = [power] + [B(op, x, power) for op in ("^", "&", "|") for x in (TID, N)] + [B("^", power, TID)]
    _agrees_with_c(terms, list(itertools.product(range(0, 6), range(0, 7))),
                   [(-37, 0), (-1, 5), (0, 63), (1, 17), (1000, 42), (2_000_000_003, 31)])


@pytest.mark.parametrize("power", POWERS[:3], ids=str)
def test_masks_quotients_and_remainders_by_a_power_keep_cs_value(power):
    """`x & (p - 1)` (a FFT's position in its group), `x / p` and `x % p` (a reduction's
    `tid % (2 * s)`): one case per exponent, C's value wherever C defines one (p > 0)."""
    wide = B("+", TID, C(128))
    terms = [B("&", x, B("-", power, C(1))) for x in (TID, N, wide)] + \
        [B(op, x, power) for op in ("/", "%") for x in (TID, N, wide)]
    _agrees_with_c(terms, list(itertools.product(range(0, 5), range(0, 6))),
                   [(-37, 0), (-1, 5), (1, 17), (1000, 63)], lambda env: _eval(power, env) == 0)


def test_bitwise_operations_of_known_bits_with_a_constant_keep_cs_value():
    """`tid ^ 5`, `tid & 6`, `(tid + 128) | 3`, `tid ^ -3`: bit by bit on the index's bits, no
    bit-vector, C's value for every thread."""
    wide = B("+", TID, C(128))
    terms = [B("^", TID, C(5)), B("&", C(6), TID), B("|", wide, C(3)), B("^", TID, C(-3)), B("&", wide, C(-64))]
    _agrees_with_c(terms, [(0, 0)], [(0, t) for t in (0, 1, 5, 6, 31, 62, 63)])
    # A constant whose bits clear every bit of a one-bit index (a block of two threads): 0.
    _agrees_with_c([B(">>", B("&", TID, C(6)), C(0))], [(0, 0)], [(0, 0), (0, 1)], block=2)


def test_bitwise_operations_of_any_value_with_a_constant_of_few_runs_keep_cs_value():
    """`n & 14`, `n | 0x70`, `n ^ -15`, `(n * i) & 0xF0F0`: of a value whose bits nobody knows, as
    remainders by powers of two (one pair per run of ones), C's value for every sign and size; no
    bit-vector. A constant of more runs keeps them."""
    prod = B("*", N, I)
    terms = [B("&", N, C(14)), B("|", C(0x70), N), B("^", N, C(-15)), B("&", prod, C(0xF0F0)),
             B("|", prod, C(~0x300)), B("^", N, C(0x5 << 40))]
    values = [(n, 0) for n in (-2**31, -1000, -15, -1, 0, 1, 14, 255, 2**31 - 1)]
    _agrees_with_c(terms, [(0, 0), (3, 0), (-7, 0), (2**31 - 1, 0)], values)    # products up to 2**62
    assert power_bits.with_runs("&", z3.Int("x"), 0x155) is None     # five runs

def test_bit_fields_apart_are_sums_with_cs_value():
    """`(t & ~31) | ((t + 1) & 31)` (a lane rotation within its warp), `(n << 5) ^ lane`,
    `(n * 64) & t`: no bit in both operands, so `|` and `^` are the sum and `&` is 0, for every
    sign of the other operand; linear, no bit-vector. Where a bit may be in both, no such reading."""
    lane = B("&", B("+", TID, C(1)), C(31))
    terms = [B("|", B("&", TID, C(~31)), lane), B("^", B("<<", N, C(5)), B("&", TID, C(31))),
             B("&", B("*", N, C(64)), TID), B("|", TID, B("-", B("<<", N, C(6)), B("*", I, C(128))))]
    _agrees_with_c(terms, [(0, 0), (3, 0), (-5, 0)], [(n, t) for n in (-2**31, -1000, -3, 0, 1, 7, 2**31 - 1) for t in (0, 1, 31, 32, 63)])
    kernel = ir.Kernel("k", "k.cu", "cuda", [], {}, [])
    kernel.block_dim.update(x=64, y=1, z=1)
    for t in terms + [B("|", B("&", TID, ir.UnOp("~", C(31))), lane)]:     # `~31` as C spells it
        assert power_bits.disjoint_fields(t, kernel) is not None, t
    # Bits that may meet: the thread index reaches bit 5 and the shift starts there; 64 threads
    # of unknown width (no launch extent); and a field wider than the other's zero bits.
    unknown = ir.Kernel("k", "k.cu", "cuda", [], {}, [])
    for t, k in ((B("|", B("<<", N, C(5)), TID), kernel), (B("|", B("<<", N, C(6)), TID), unknown),
                 (B("^", B("&", N, C(-32)), B("&", TID, C(63))), kernel)):
        assert power_bits.disjoint_fields(t, k) is None, t


def test_a_right_shift_of_a_known_width_by_any_amount_keeps_cs_value():
    """`tid >> n` and `(tid >> n) & 1` (a bit of the thread index picked at run time) with tid under
    2**6: one case per amount below 6, 0 for every other amount (C's value for 6..63, and what the
    64-case encoding reads an undefined amount as), so 7 cases instead of 64."""
    terms = [B(">>", TID, N), B("&", B(">>", TID, N), C(1)), B(">>", B("+", TID, C(5)), N)]
    _agrees_with_c(terms, [(0, 0)], [(n, t) for n in range(0, 64, 3) for t in (0, 1, 37, 63)])
    kernel = ir.Kernel("k", "k.cu", "cuda", [], {}, [])
    kernel.block_dim.update(x=64, y=1, z=1)
    enc = Encoder(kernel, 32)
    assert enc.term(terms[0], 1).sexpr().count("ite") == 6     # amounts 0..5, then 0
    assert enc.term(B(">>", N, I), 1).sexpr().count("ite") == 63    # a width nobody knows: 64 cases


def test_bit_intrinsics_of_known_bits_are_exact():
    """`__brev` and `__popc` of a thread index (a FFT's bit-reversed load slot) are their values,
    so two threads' slots differ as their indices do; of an operand whose bits are unknown they
    stay uninterpreted."""
    kernel = ir.Kernel("k", "k.cu", "cuda", [], {}, [])
    kernel.block_dim.update(x=128, y=1, z=1)
    enc = Encoder(kernel, 32)
    calls = [B(">>", ir.Call("__brev", (TID,)), C(24)), ir.Call("__brev", (B("+", TID, C(128)),)),
             ir.Call("__popc", (TID,)), ir.Call("__popcll", (B("&", N, C(255)),))]
    s = z3.Solver()
    tid, n = z3.Ints("t1.x n")
    for t in calls:
        enc.collecting()
        e = enc.term(t, 1)
        s.add(enc.needed())
        for tv, nv in ((0, 0), (1, -1), (77, 300), (127, 255)):
            env = {"tid.x": tv, "n": nv}
            assert s.check(tid == tv, n == nv) == z3.sat
            assert s.check(tid == tv, n == nv, e != _eval(t, env)) == z3.unsat, (str(t), env)
    assert "__brev" in enc.term(ir.Call("__brev", (N,)), 1).sexpr()


def test_other_terms_are_not_powers():
    for t in (B("+", SIZE, C(1)), B("<<", N, I), B("<<", B(">>", C(8), J), I), C(6), C(0), C(-4)):
        assert power_bits.exponent(t) is None, t


def test_a_mask_stays_a_remainder():
    """`x & 7` is still x mod 8 (the encoding TVM's indices rely on), not a single-bit test."""
    kernel = ir.Kernel("k", "k.cu", "cuda", [], {}, [])
    enc = Encoder(kernel, 32)
    assert "mod" in enc.term(B("&", N, C(7)), 1).sexpr()


@pytest.mark.slow   # a whole bitonic sort at the smallest budget, twice (test_observed runs it in the default set)
@pytest.mark.parametrize("halving", ["stride >>= 1", "stride /= 2"])
def test_the_bitonic_sort_is_decided(tmp_path, halving):
    """Its pairs ran to their budget and the kernel ended unknown after 17 to 37 s; read on the
    exponent, the sort with its barriers is clean, and without them every race has a witness that
    replays. The stride halves by a shift or by a division (a closed form in the iteration too)."""
    sorts = TESTS / "handwritten" / "cuda"
    args = ["--block-dim", "64", "--hints", "off", "--format", "json"]
    paths = []
    for name in ("bitonic_sort_shared.cu", "bitonic_sort_shared_no_sync.cu"):
        paths.append(tmp_path / name)
        paths[-1].write_text((sorts / name).read_text().replace("stride >>= 1", halving))
    code, out, err = cli_in_process(["check", str(paths[0]), *args])
    assert code == 0, out + err
    code, out, err = cli_in_process(["check", str(paths[1]), *args])
    races = [f for f in json.loads(out)["findings"] if f["rule"] != "unknown"]
    assert code == 1 and races
    assert all(f["witness"]["replayed"] and "observed" not in f["witness"] for f in races)


def test_stores_of_a_value_masked_by_a_constant_are_decided(tmp_path):
    """Every thread with `q < 0` stores `(p * threadIdx.y) & 14` to one element: whether two
    stores differ went through 64-bit vectors of a product, which ran past its budget, escalated,
    and left the kernel unknown after 26 s (a differential campaign's kernel, in Vulkan GLSL). As
    remainders by powers of two it is a race with a witness that replays."""
    path = tmp_path / "square_index.cu"
    path.write_text("""__global__ void square_index(float* g, int p, int q) {
    if (q + (int)threadIdx.y < (int)threadIdx.y) {
        g[p * p + q] = (p * (int)threadIdx.y) & 14;
    }
}
""")
    code, out, err = cli_in_process(["check", str(path), "--block-dim", "15,4", "--hints", "off", "--format", "json"])
    report = json.loads(out)
    assert code == 1 and report["summary"]["unknown"] == 0, out + err
    races = [f for f in report["findings"] if f["rule"] == "write-after-write"]
    assert races and all(f["witness"]["replayed"] for f in races)
