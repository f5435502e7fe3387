"""Float constants by value (analysis/execution/float_constants.py)."""

from analyzer import ir
from analyzer.analysis.execution.float_constants import folded


def lit(text: str) -> ir.Call:
    return ir.Call("float:" + text, ())


def test_spellings_of_one_constant_share_a_name():
    half = folded(lit("0.5f"), "cuda")
    assert half is not None
    assert folded(ir.Call("f*", (lit("1.0f"), lit("0.5f"))), "cuda") == half
    assert folded(ir.Call("f/", (ir.Call("cvt:float", (ir.Const(1),)), lit("2.0f"))), "cuda") == half
    assert folded(lit(".5F"), "cuda") == half


def test_different_values_and_types_keep_different_names():
    assert folded(lit("0.5f"), "cuda") != folded(lit("0.25f"), "cuda")
    # An unsuffixed C literal is a double; in WGSL and Metal a float.
    assert folded(lit("0.5"), "cuda") != folded(lit("0.5f"), "cuda")
    assert folded(lit("0.5"), "wgsl") == folded(lit("0.5f"), "cuda")
    # -0.0 and 0.0 compare equal but are different bits in memory.
    assert folded(ir.Call("fneg", (lit("0.0f"),)), "cuda") != folded(lit("0.0f"), "cuda")


def test_what_is_not_folded():
    load = ir.Read(ir.Access("in", ir.GLOBAL, ir.Const(0), 4, False, ir.Span("k.cu", 1, 1)))
    assert folded(ir.Call("f*", (lit("2.0f"), load)), "cuda") is None         # not a constant
    assert folded(ir.Call("expf", (lit("1.0f"),)), "cuda") is None             # math functions
    assert folded(ir.Call("f/", (lit("0.0f"), lit("0.0f"))), "cuda") is None   # NaN
    assert folded(ir.Call("f/", (lit("1.0f"), lit("0.0f"))), "cuda") is None   # infinity
    assert folded(ir.Call("f*", (lit("1e-30f"), lit("1e-10f"))), "cuda") is None   # subnormal
    assert folded(ir.Call("cvt:int", (lit("1.5f"),)), "cuda") is None          # an integer result
