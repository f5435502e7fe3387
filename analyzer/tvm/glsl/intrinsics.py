"""Intrinsics: TIR `Call` nodes (math, bitwise, reinterpret, `if_then_else`) as GLSL built-ins.

Separate from the other expression nodes: a table-driven dispatch over intrinsic names, with
the name tables it needs.
"""

from __future__ import annotations

from analyzer.tvm.glsl.syntax import _EXT_I16, _Type, _strip
from analyzer.tvm.glsl.tir_walk import _has_load, _op_name, _short

# Pure float intrinsics with a GLSL built-in of the same arity (component-wise on vectors).
_FLOAT_FUNCS = {
    "exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "sqrt": "sqrt",
    "rsqrt": "inversesqrt", "fabs": "abs", "pow": "pow", "tanh": "tanh", "sinh": "sinh",
    "cosh": "cosh", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos",
    "atan": "atan", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh", "floor": "floor",
    "ceil": "ceil", "trunc": "trunc", "round": "roundEven", "nearbyint": "roundEven",
    "atan2": "atan", "fma": "fma", "isnan": "isnan", "isinf": "isinf",
}
# C math library names LowerIntrin's default rules call through `call_pure_extern`.
_C_MATH = {"exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "sqrt": "sqrt",
           "pow": "pow", "tanh": "tanh", "sin": "sin", "cos": "cos", "tan": "tan",
           "fabs": "abs", "floor": "floor", "ceil": "ceil", "trunc": "trunc", "fmin": "min",
           "fmax": "max", "sinh": "sinh", "cosh": "cosh", "asin": "asin", "acos": "acos",
           "atan": "atan", "atan2": "atan", "nearbyint": "roundEven", "rint": "roundEven"}
# Intrinsics that only carry a hint: the value is their first argument.
_IDENTITY_CALLS = ("tvm_thread_invariant", "likely", "assume")


class IntrinsicMixin:
    """`Call` expressions of a `_Translator`."""

    def ex_Call(self, e):
        full = _op_name(e)
        name = _short(full)
        t = self.type_of(e)
        args = list(e.args)
        if name == "if_then_else":
            return self.if_then_else(e, t)
        if name in _IDENTITY_CALLS and args:
            return self.ex(args[0])
        if name in _FLOAT_FUNCS:
            ats = [self.type_of(a) for a in args]
            if not all(a.is_float for a in ats):
                raise self.fail(f"intrinsic {full} on {', '.join(a.tir for a in ats)}")
            vals = [_strip(self.ex(a)) for a in args]
            return f"{_FLOAT_FUNCS[name]}({', '.join(vals)})"
        if name == "erf":
            self.require_float(e, full)
            return f"{self.helper('tir_erf', t)}({_strip(self.ex(args[0]))})"
        if name == "sigmoid":
            self.require_float(e, full)
            one = self.float_lit(1.0, t.scalar)
            return f"({one} / ({one} + exp(-{self.ex(args[0])})))"
        if name in ("exp10", "log10"):
            self.require_float(e, full)
            x = self.ex(args[0])
            if name == "exp10":
                return f"exp2({self.float_lit(3.321928094887362, t.scalar)} * {x})"
            return f"(log2({_strip(x)}) * {self.float_lit(0.30102999566398120, t.scalar)})"
        if name == "log1p":
            self.require_float(e, full)
            return f"log({self.float_lit(1.0, t.scalar)} + {self.ex(args[0])})"
        if name in ("bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right"):
            if not t.is_int:
                raise self.fail(f"intrinsic {full} on {t.tir}")
            op = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
                  "shift_left": "<<", "shift_right": ">>"}[name]
            return f"({self.ex(args[0])} {op} {self.ex(args[1])})"
        if name == "bitwise_not":
            if not t.is_int:
                raise self.fail(f"intrinsic {full} on {t.tir}")
            return f"(~{self.ex(args[0])})"
        if name == "popcount" and t.is_int and t.bits == 32:
            return f"{t.glsl}(bitCount({_strip(self.ex(args[0]))}))"
        if name == "reinterpret":
            return self.reinterpret(args[0], t, full)
        if name in ("call_pure_extern", "call_extern") and args and type(args[0]).__name__ == "StringImm":
            # LowerIntrin's default rules turn math intrinsics into C library calls (`log2f`).
            ext = str(args[0].value)
            base = ext[:-1] if ext.endswith("f") and ext[:-1] in _C_MATH else ext
            if name == "call_pure_extern" and base in _C_MATH:
                ats = [self.type_of(a) for a in args[1:]]
                if t.is_float and all(a.is_float for a in ats):
                    vals = [_strip(self.ex(a)) for a in args[1:]]
                    return f"{_C_MATH[base]}({', '.join(vals)})"
            raise self.fail(f"intrinsic {full}(\"{ext}\")")
        raise self.fail(f"intrinsic {full}")

    def require_float(self, e, full: str) -> None:
        if not self.type_of(e).is_float:
            raise self.fail(f"intrinsic {full} on {self.type_of(e).tir}")

    def reinterpret(self, arg, t: _Type, full: str) -> str:
        src = self.type_of(arg)
        v = _strip(self.ex(arg))
        if src == t:
            return v
        if src.bits != t.bits or src.lanes != t.lanes:
            raise self.fail(f"intrinsic {full} from {src.tir} to {t.tir}")
        if src.is_int and t.is_int:
            return f"{t.glsl}({v})"
        names = {
            (32, "float", "int"): "floatBitsToInt", (32, "float", "uint"): "floatBitsToUint",
            (32, "int", "float"): "intBitsToFloat", (32, "uint", "float"): "uintBitsToFloat",
            (16, "float", "int"): "float16BitsToInt16", (16, "float", "uint"): "float16BitsToUint16",
            (16, "int", "float"): "int16BitsToFloat16", (16, "uint", "float"): "uint16BitsToFloat16",
            (64, "float", "int"): "doubleBitsToInt64", (64, "float", "uint"): "doubleBitsToUint64",
            (64, "int", "float"): "int64BitsToDouble", (64, "uint", "float"): "uint64BitsToDouble",
        }
        fn = names.get((t.bits, src.code, t.code))
        if fn is None:
            raise self.fail(f"intrinsic {full} from {src.tir} to {t.tir}")
        if t.bits == 16:
            self.ext.add(_EXT_I16)
        return f"{fn}({v})"

    def if_then_else(self, e, t: _Type) -> str:
        cond, a, b = e.args
        ct = self.type_of(cond)
        if ct.lanes != 1:
            raise self.fail("if_then_else with a vector condition")
        c = self.ex(cond)
        if not (_has_load(a, self.memo) or _has_load(b, self.memo)):
            return f"({c} ? {self.ex(a)} : {self.ex(b)})"
        # A guarded load stays guarded: evaluate the branches under an `if`, into a temporary.
        name = self.fresh("ite")
        self.emit(f"{t.glsl} {name};")
        self.emit(f"if ({_strip(c)}) {{")
        with self.block():
            self.emit(f"{name} = {_strip(self.ex(a))};")
        self.emit("} else {")
        with self.block():
            self.emit(f"{name} = {_strip(self.ex(b))};")
        self.emit("}")
        return name
