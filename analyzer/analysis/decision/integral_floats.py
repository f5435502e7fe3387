"""Floats that hold integers: `(float)((y - P) >> 1) + 1.0f` and `1.0f` are one value where `y - P`
is 0 or 1.

The analysis leaves float arithmetic uninterpreted (`ir.Call`): two stores are provably of one
value only where their terms are equal, so two threads storing `1.0f` and `(float)(i - P) + 1.0f`
were said to store two values even where `i == P`, a benign write-write reported as a race. A
float built of conversions of integers, integral constants, `+`, `-`, `*` and negation holds the
integer its shadow (the same arithmetic on the integers) computes, exactly, while the shadow and
every intermediate stay within the type's exact-integer range: IEEE arithmetic on integers that
small is exact, in the type or any wider evaluation precision. Where both stored values have a
shadow in one type, the values are equal where the shadows are and in range, and the pair's
"values differ" constraint (collision_constraints.py) says so. Nothing else changes: a value
without a shadow (a load, a float parameter, a division) stays uninterpreted, so this only ever
removes points where the two values are provably equal.

Equal numbers are equal bits but for zero: `-0.0f` (a negated zero, `0.0f * -1.0f`) is stored
as other bits than `0.0f`. Each shadow carries when its float is a negative zero, as IEEE
round-to-nearest computes it (a conversion never is; `-0 + -0` is; `x - y` is where `x` is and `y`
a positive zero; a product of zero is where the operands' signs differ), and the claim asks the
two to agree.
"""

from __future__ import annotations

import numpy as np
import z3

from analyzer import ir
from analyzer.analysis.decision.z3_terms import as_int
from analyzer.dynamic.calls import canonical
from analyzer.dynamic.values import BF16, F16, F32, F64, kind_of

# The largest magnitude up to which every integer is exact in the type (2 ** significand bits).
EXACT = {F32: 2 ** 24, F16: 2 ** 11, BF16: 2 ** 8, F64: 2 ** 53}
ARITHMETIC = {"f+": lambda a, b: a + b, "f-": lambda a, b: a - b, "f*": lambda a, b: a * b}
INTEGER_VALUED = (ir.Const, ir.Builtin, ir.BinOp, ir.UnOp)   # the IR's integer-valued nodes
FROM_INTEGER = ("OpConvertSToF", "OpConvertUToF")   # SPIR-V's conversions of integers
MAX_NODES = 64    # a shadow larger than this is left out: values are rarely built of more


def same_value(enc, a, b, ka: int, kb: int):
    """A Z3 condition under which the float terms `a` (thread ka) and `b` (thread kb) hold one
    value, or None where either has no shadow or their types differ."""
    sa, sb = _shadow(enc, a, ka, [MAX_NODES]), _shadow(enc, b, kb, [MAX_NODES])
    if sa is None or sb is None or sa[1] != sb[1]:
        return None
    (xa, _, ga, za), (xb, _, gb, zb) = sa, sb
    return z3.And(ga + gb + [xa == xb, z3.simplify(za == zb)])


def _shadow(enc, t, k: int, budget: list):
    """(integer term, float type, range guards, when it is a negative zero) of a float term, or None."""
    budget[0] -= 1
    if budget[0] < 0 or not isinstance(t, ir.Call):
        return None
    fn = canonical(t.fn)
    if fn.startswith("fconst:") and not t.args:
        _, dtype, bits = fn.split(":")
        kind = kind_of(dtype)
        value = _integral(dtype, bits)
        if kind not in EXACT or value is None or abs(value) > EXACT[kind]:
            return None
        return z3.IntVal(value), kind, [], z3.BoolVal(value == 0 and bytes.fromhex(bits)[-1] & 0x80 != 0)
    if fn.startswith("cvt:") and len(t.args) == 1:
        kind = kind_of(fn[4:])
        if kind not in EXACT or not (t.int_arg or t.fn in FROM_INTEGER or isinstance(t.args[0], INTEGER_VALUED)):
            return None
        x = as_int(enc.term(t.args[0], k))
        return x, kind, _in_range(x, kind), z3.BoolVal(False)
    if fn == "fneg" and len(t.args) == 1:
        inner = _shadow(enc, t.args[0], k, budget)
        return None if inner is None else (-inner[0], inner[1], inner[2], z3.And(inner[0] == 0, z3.Not(inner[3])))
    if fn in ARITHMETIC and len(t.args) == 2:
        left = _shadow(enc, t.args[0], k, budget)
        right = _shadow(enc, t.args[1], k, budget) if left is not None else None
        if right is None or left[1] != right[1]:
            return None
        x = ARITHMETIC[fn](left[0], right[0])
        return x, left[1], left[2] + right[2] + _in_range(x, left[1]), _negative_zero(fn, left, right, x)
    return None


def _negative_zero(fn: str, left, right, x):
    """When `left fn right` is a negative zero (round to nearest)."""
    (xa, _, _, za), (xb, _, _, zb) = left, right
    if fn == "f+":
        return z3.And(za, zb)
    if fn == "f-":     # x + (-y)
        return z3.And(za, xb == 0, z3.Not(zb))
    na, nb = z3.Or(xa < 0, za), z3.Or(xb < 0, zb)
    return z3.And(x == 0, z3.Or(z3.And(na, z3.Not(nb)), z3.And(nb, z3.Not(na))))


def _in_range(x, kind: str) -> list:
    return [x <= EXACT[kind], x >= -EXACT[kind]]


def _integral(dtype: str, bits: str) -> int | None:
    """The integer a folded constant (float_constants.py: its dtype and little-endian bytes) is."""
    try:
        v = np.frombuffer(bytes.fromhex(bits), dtype=np.dtype(dtype))[0]
    except (TypeError, ValueError):
        return None
    if not np.isfinite(v) or v != np.floor(v):
        return None
    return int(v)

