"""Float constants by value: `0.0f * 0.0f`, `(float)0` and `0.f` are one value.

The analysis leaves floating-point values uninterpreted (`ir.Call`, a function of its name and
arguments), so equal expressions are provably equal, but two spellings of one constant were two
unrelated values: a write-write of one constant by two threads, a benign race the analysis leaves
out (docs/usage.md, `--strict`), was reported as storing two values. A call built only of float
literals, integer constants, float arithmetic and conversions to a float type stands for the
constant it computes, computed as the interpreter computes it (IEEE arithmetic in the operands'
precision, `dynamic/calls.py`) and named by its type and bits. The symbolic executor, the witness
walk and the replay name it alike, so the solver and the replay share one constant.

Left as they are: NaN (its bits vary), infinities and subnormal results (a flush-to-zero build
computes them differently from the literal's bits), vectors, and any call the interpreter cannot
evaluate.
"""

from __future__ import annotations

import numpy as np

from analyzer import ir
from analyzer.dynamic.calls import call, canonical
from analyzer.dynamic.values import INT, InterpretError, kind_of

# Float arithmetic, as the front ends name it once `canonical` has read SPIR-V's and WGSL's names.
ARITHMETIC = frozenset({"f+", "f-", "f*", "f/", "fneg", "fbits"})


def folded(e: ir.Call, lang: str) -> str | None:
    """The name of the constant `e` computes (`fconst:float32:0000803f`), or None."""
    if not _constant(e):
        return None
    try:
        with np.errstate(all="ignore"):
            v = _value(e, lang)
    except (InterpretError, ArithmeticError, ValueError, TypeError):
        return None
    if not isinstance(v, np.floating) or not np.isfinite(v):
        return None
    if v != 0 and abs(v) < np.finfo(v.dtype).tiny:
        return None
    return f"fconst:{v.dtype.name}:{v.tobytes().hex()}"


def _constant(e) -> bool:
    """Is `e` made only of constants and the operations folded? (Stops at the first leaf that is not.)"""
    if isinstance(e, ir.Const):
        return True
    if not isinstance(e, ir.Call):
        return False
    fn = canonical(e.fn)
    if fn.startswith("float:"):
        return not e.args
    if fn not in ARITHMETIC and not (fn.startswith("cvt:") and kind_of(fn[4:]) != INT):
        return False
    return all(_constant(a) for a in e.args)


def _value(e, lang: str):
    if isinstance(e, ir.Const):
        return e.value
    return call(e.fn, tuple(_value(a, lang) for a in e.args), lang)
