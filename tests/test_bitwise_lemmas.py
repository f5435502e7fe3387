"""`^ & |` of two unknown values, and shifts of an unknown value by an unknown amount, in the
cheap encoding (analyzer/analysis/decision/bitwise_lemmas.py): an uninterpreted function whose facts must
all be true of the exact operation, or a query the cheap encoding refutes could have a collision
the exact one finds."""

import itertools
import json

import pytest
import z3

from analyzer.analysis.decision import bitwise_lemmas
from analyzer.analysis.decision import solver
from analyzer.analysis.decision.bitwise_lemmas import BitwiseLemmas
from conftest import TESTS, cli_in_process

# Long: in the slow set, which .ci/run runs after the default run (pyproject.toml's markers).
pytestmark = pytest.mark.slow

EDGES = [0, 1, 2, 3, 5, 8, 255, 256, 1023, -1, -2, -256, (1 << 62) + 3, (1 << 63) - 1, -(1 << 63),
         1 << 63, (1 << 64) + 1, -(1 << 63) - 1]


def _c(op: str, x: int, y: int) -> int:
    """The exact encoding's value (solver.py's 64-bit vectors), which the facts' own
    `bitwise_lemmas._exact` (the exact values `exact_points` states) must also give."""
    if op in bitwise_lemmas.SHIFTS:     # one case per amount (solver._shift)
        value = z3.simplify(solver.Encoder._shift(op, z3.IntVal(x), z3.IntVal(y))).as_long()
    else:
        bits = bitwise_lemmas.OPERATORS[op](solver.to_bits(z3.IntVal(x)), solver.to_bits(z3.IntVal(y)))
        value = z3.simplify(solver.from_bits(bits)).as_long()
    assert bitwise_lemmas._exact(op, x, y) == value
    return value


class _Facts(BitwiseLemmas):
    """The mixin alone, with the two things it uses from the encoder."""

    def __init__(self):
        self.base, self._funcs = [], {}

    def func(self, name, arity):
        return self._funcs.setdefault(name, z3.Function(name, *[z3.IntSort()] * (arity + 1)))


@pytest.mark.parametrize("op", ["^", "&", "|", ">>", "<<"])
def test_every_fact_holds_of_the_exact_operation(op):
    """Two applications p = a op b and q = c op d, their facts (each alone, and between them) under
    the exact values, for operands at the edges of 64 bits and past them, and for the related
    operands the one-to-one and inverse facts speak of (c = a ^ b, d = b; for a shift, the same
    amount d = b with c above and below a)."""
    checked = 0
    a, b, c, d = z3.Ints("a b c d")
    shift = op in bitwise_lemmas.SHIFTS
    amounts = [0, 1, 2, 5, 31, 62, 63, 64, 255, -1, -(1 << 63), 1 << 63] if shift else EDGES
    for va, vb in itertools.product(EDGES[:12], amounts):
        related = {(va + 1, vb), (va - 3, vb), (vb, va)} if shift else {(_c(op, va, vb), vb), (_c(op, va, vb), va)}
        for vc, vd in related | {(vb, va), (va, vb), (7, vb), (vb, 0)}:
            facts = _Facts()
            p, q = facts._bitwise(op, a, b), facts._bitwise(op, c, d)
            s = z3.Solver()
            s.add(a == va, b == vb, c == vc, d == vd, p == _c(op, va, vb), q == _c(op, vc, vd))
            s.add(*facts.base)
            assert s.check() == z3.sat, (op, va, vb, vc, vd)
            checked += 1
    assert checked > 400


def test_xor_facts_prove_the_partner_of_a_partner():
    """What the bitonic step needs: i1 ^ j == i2 makes i2 ^ j == i1 (no bit is blasted)."""
    facts = _Facts()
    i1, i2, j = z3.Ints("i1 i2 j")
    x1, x2 = facts._bitwise("^", i1, j), facts._bitwise("^", i2, j)
    ranges = [i1 >= 0, i2 >= 0, i1 < 1 << 31, i2 < 1 << 31, j >= -(1 << 31), j < 1 << 31]   # an int j
    s = z3.Solver()
    s.add(*facts.base, *ranges, x1 == i2, x2 != i1)
    assert s.check() == z3.unsat
    s2 = z3.Solver()    # and they leave the values free where nothing says otherwise
    s2.add(*facts.base, *ranges, x1 == i2)
    assert s2.check() == z3.sat


def test_global_bitonic_step_is_clean_and_quick():
    path = TESTS / "handwritten" / "cuda" / "bitonic_sort_global_step.cu"
    code, out, _ = cli_in_process(["check", str(path), "--block-dim", "256", "--format", "json", "--hints", "off",
                                   "--timeout", "1"])
    report = json.loads(out)
    assert code == 0 and report["findings"] == [], report["findings"]
    assert report["summary"]["clean"] == 1


def test_a_shift_of_an_unbounded_value_is_a_function_in_the_cheap_query_only():
    """A loaded key shifted by the pass's `shift` (a radix sort's digit): a function with its facts
    in the cheap encoding, one case per amount in the exact one; a value the launch bounds keeps
    its cases in both (a right shift: one per bit of it)."""
    from analyzer import ir
    kernel = ir.Kernel("k", "k.cu", "cuda", [], {}, [])
    kernel.block_dim.update(x=256, y=1, z=1)
    key, shift, tid = ir.Param("key"), ir.Param("shift"), ir.Builtin("tid.x")
    cheap, exact = solver.Encoder(kernel, 32, exact=False), solver.Encoder(kernel, 32)
    for op, name in ((">>", "shr"), ("<<", "shl")):
        term = ir.BinOp(op, key, shift)
        assert cheap.term(term, 1).decl().name() == name
        assert exact.term(term, 1).sexpr().count("ite") == 63
    bounded = ir.BinOp(">>", tid, shift)
    assert cheap.term(bounded, 1).sexpr().count("ite") == exact.term(bounded, 1).sexpr().count("ite") == 8


def test_radix_digit_race_is_found_quickly_with_a_defined_shift():
    """The counting step of a radix sort without its barrier after the zeroing: the race, with a
    witness whose shift amount C defines (it replays)."""
    path = TESTS / "handwritten" / "cuda" / "radix_histogram_shared_no_sync.cu"
    code, out, _ = cli_in_process(["check", str(path), "--block-dim", "256", "--format", "json", "--hints", "off"])
    report = json.loads(out)
    races = [f for f in report["findings"] if f["rule"] == "write-after-write"]
    assert code == 1 and races, report["findings"]
    assert all(0 <= f["witness"]["params"]["shift"] <= 63 and f["witness"]["replayed"] for f in races)
