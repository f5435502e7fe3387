"""Floats that hold integers (analysis/decision/integral_floats.py): the shadow of a float term and
the condition under which two of them hold one value, decided by Z3."""

import z3

from analyzer import ir
from analyzer.analysis.decision import integral_floats


class _Enc:
    """The one thing `same_value` asks of an encoder: an integer term's Z3 term for thread k."""

    def term(self, t, k):
        if isinstance(t, ir.Const):
            return z3.IntVal(t.value)
        if isinstance(t, ir.Builtin):
            return z3.Int(f"{t.name}@{k}")
        if isinstance(t, ir.BinOp) and t.op in ("+", "-", "/"):
            a, b = self.term(t.a, k), self.term(t.b, k)
            return a + b if t.op == "+" else a - b if t.op == "-" else a / b
        raise AssertionError(t)


def fconst(dtype: str, value: float) -> ir.Call:
    import numpy as np
    return ir.Call(f"fconst:{dtype}:{np.array(value, dtype=dtype).tobytes().hex()}", ())


TID = ir.Builtin("tid.x")


def _valid(claim) -> bool:
    s = z3.Solver()
    s.add(z3.Not(claim))
    return s.check() == z3.unsat


def test_a_conversion_plus_a_constant_is_the_integer_sum():
    a = ir.Call("f+", (ir.Call("cvt:float", (ir.BinOp("-", TID, ir.Const(3)),)), fconst("float32", 1.0)))
    same = integral_floats.same_value(_Enc(), a, fconst("float32", 1.0), 1, 2)
    x = z3.Int("tid.x@1")
    assert _valid(z3.Implies(x == 3, same))          # (float)(3 - 3) + 1.0f is 1.0f
    assert _valid(z3.Implies(x == 4, z3.Not(same)))  # 2.0f is not


def test_outside_the_exact_range_nothing_is_claimed():
    big = ir.Call("cvt:half", (ir.BinOp("+", TID, ir.Const(4096)),))
    same = integral_floats.same_value(_Enc(), big, ir.Call("cvt:half", (ir.BinOp("+", TID, ir.Const(4096)),)), 1, 2)
    # half holds every integer up to 2048 only: 4096 + x and 4096 + y may round to one value or
    # not; no claim is made there (the uninterpreted values decide, as before)
    x, y = z3.Int("tid.x@1"), z3.Int("tid.x@2")
    assert _valid(z3.Implies(z3.And(x >= 0, y >= 0), z3.Not(same)))


def test_no_shadow_for_non_integers_parameters_divisions_or_mixed_types():
    enc = _Enc()
    half = fconst("float32", 0.5)
    assert integral_floats.same_value(enc, half, half, 1, 2) is None
    a = ir.Call("f+", (ir.Call("cvt:float", (TID,)), ir.Param("a")))     # a float parameter: any value
    assert integral_floats.same_value(enc, a, a, 1, 2) is None
    q = ir.Call("f/", (ir.Call("cvt:float", (TID,)), fconst("float32", 2.0)))
    assert integral_floats.same_value(enc, q, q, 1, 2) is None
    f16 = ir.Call("cvt:half", (TID,))
    f32 = ir.Call("cvt:float", (TID,))
    assert integral_floats.same_value(enc, f16, f32, 1, 2) is None
    # a conversion of a value that may be a float (a parameter) is no integer's
    assert integral_floats.same_value(enc, ir.Call("cvt:float", (ir.Param("a"),)), f32, 1, 2) is None


def test_a_negative_zero_is_not_claimed_equal_to_zero():
    enc = _Enc()
    x = z3.Int("tid.x@1")
    neg = ir.Call("f*", (ir.Call("cvt:float", (TID,)), fconst("float32", -1.0)))   # -0.0f at tid.x == 0
    same = integral_floats.same_value(enc, neg, ir.Call("cvt:float", (ir.Const(0),)), 1, 2)
    assert _valid(z3.Implies(x == 0, z3.Not(same)))
    minus_zero = fconst("float32", -0.0)
    assert _valid(z3.Not(integral_floats.same_value(enc, minus_zero, fconst("float32", 0.0), 1, 2)))
    # a sum of conversions is never a negative zero: (float)x + (float)(-x) is +0.0f
    s = ir.Call("f+", (ir.Call("cvt:float", (TID,)), ir.Call("cvt:float", (ir.BinOp("-", ir.Const(0), TID),))))
    small = z3.And(x >= 0, x < 1024)
    assert _valid(z3.Implies(small, integral_floats.same_value(enc, s, ir.Call("cvt:float", (ir.Const(0),)), 1, 2)))


def test_a_conversion_the_front_end_says_is_of_an_integer_has_its_shadow():
    class Params(_Enc):
        def term(self, t, k):
            return z3.Int(t.name) if isinstance(t, ir.Param) else super().term(t, k)
    n = ir.Call("cvt:float", (ir.Param("n"),), int_arg=True)     # (float)n of an `int n`
    same = integral_floats.same_value(Params(), n, fconst("float32", 0.0), 1, 2)
    assert _valid(z3.Implies(z3.Int("n") == 0, same)) and _valid(z3.Implies(z3.Int("n") == 1, z3.Not(same)))
    spirv = ir.Call("OpConvertSToF", (ir.Param("n"),))           # SPIR-V says so by its opcode
    assert integral_floats.same_value(Params(), spirv, fconst("float32", 0.0), 1, 2) is not None
