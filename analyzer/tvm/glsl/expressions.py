"""Expressions: one method per TIR expression node, each returning GLSL text.

Separate from intrinsics (`Call`) and statements; loads that must run in TIR's order are
hoisted into temporaries before the statement (see `value`).
"""

from __future__ import annotations

from analyzer.tvm.glsl.syntax import _SWIZZLE, _strip
from analyzer.tvm.glsl.tir_walk import _BINARY, _needs_ordering

# GLSL's component-wise comparisons, for vector operands.
_VEC_CMP = {"EQ": "equal", "NE": "notEqual", "LT": "lessThan", "LE": "lessThanEqual",
            "GT": "greaterThan", "GE": "greaterThanEqual"}


class ExpressionMixin:
    """Expression nodes of a `_Translator` (`Call` is in `IntrinsicMixin`)."""

    def ex(self, e) -> str:
        kind = type(e).__name__
        fn = getattr(self, f"ex_{kind}", None)
        if fn is None:
            raise self.fail(f"expression node {kind}")
        return fn(e)

    def ex_IntImm(self, e) -> str:
        return self.int_lit(int(e.value), self.type_of(e))

    def ex_FloatImm(self, e) -> str:
        return self.float_lit(float(e.value), self.type_of(e))

    def ex_StringImm(self, e) -> str:
        raise self.fail(f"string immediate {e} in an expression")

    def ex_Var(self, e) -> str:
        text = self.lookup(e)
        if text is None:
            if e.__chandle__() in self.handles:
                raise self.fail(f"handle parameter {e.name} used as a value")
            raise self.fail(f"free variable {e.name}")
        return text

    def ex_TensorLoad(self, e) -> str:
        t = self.type_of(e)
        st, idx, _ = self.access(e.source, e.indices, t, "load")
        if len(idx) == 1:
            text = f"{st.name}[{idx[0]}]"
        else:
            text = f"{t.glsl}(" + ", ".join(f"{st.name}[{i}]" for i in idx) + ")"
        if self.hoist:
            return self.temp(t, text)
        return text

    ex_BufferLoad = ex_TensorLoad

    def binary(self, e, op: str) -> str:
        a = self.ex(e.a)
        b = self.ex(e.b)
        return f"({a} {op} {b})"

    def ex_Add(self, e):
        return self.binary(e, "+")

    def ex_Sub(self, e):
        return self.binary(e, "-")

    def ex_Mul(self, e):
        return self.binary(e, "*")

    def ex_Div(self, e):
        return self.binary(e, "/")

    def ex_Mod(self, e):
        t = self.type_of(e)
        if t.code == "uint":
            return self.binary(e, "%")
        if t.is_bool:
            raise self.fail("Mod on bool")
        a, b = self.ex(e.a), self.ex(e.b)
        return f"{self.helper('tir_truncmod', t)}({_strip(a)}, {_strip(b)})"

    def ex_FloorDiv(self, e):
        t = self.type_of(e)
        if t.code == "uint":
            return self.binary(e, "/")
        a, b = self.ex(e.a), self.ex(e.b)
        if t.is_float:
            return f"floor({a} / {b})"
        if t.is_bool:
            raise self.fail("FloorDiv on bool")
        return f"{self.helper('tir_floordiv', t)}({_strip(a)}, {_strip(b)})"

    def ex_FloorMod(self, e):
        t = self.type_of(e)
        if t.code == "uint":
            return self.binary(e, "%")
        a, b = self.ex(e.a), self.ex(e.b)
        if t.is_float:
            return f"mod({_strip(a)}, {_strip(b)})"
        if t.is_bool:
            raise self.fail("FloorMod on bool")
        return f"{self.helper('tir_floormod', t)}({_strip(a)}, {_strip(b)})"

    def ex_Min(self, e):
        if self.type_of(e).is_bool:
            raise self.fail("Min on bool")
        return f"min({_strip(self.ex(e.a))}, {_strip(self.ex(e.b))})"

    def ex_Max(self, e):
        if self.type_of(e).is_bool:
            raise self.fail("Max on bool")
        return f"max({_strip(self.ex(e.a))}, {_strip(self.ex(e.b))})"

    def compare(self, e):
        kind = type(e).__name__
        a, b = self.ex(e.a), self.ex(e.b)
        if self.type_of(e).lanes > 1:
            return f"{_VEC_CMP[kind]}({_strip(a)}, {_strip(b)})"
        return f"({a} {_BINARY[kind]} {b})"

    ex_EQ = ex_NE = ex_LT = ex_LE = ex_GT = ex_GE = compare

    def logical(self, e):
        kind = type(e).__name__
        t = self.type_of(e)
        a = self.ex(e.a)
        b = self.ex(e.b)
        if t.lanes > 1:
            u = f"uvec{t.lanes}"
            op = "&" if kind == "And" else "|"
            return f"bvec{t.lanes}({u}({_strip(a)}) {op} {u}({_strip(b)}))"
        return f"({a} {_BINARY[kind]} {b})"

    ex_And = ex_Or = logical

    def ex_Not(self, e):
        t = self.type_of(e)
        a = self.ex(e.a)
        return f"not({_strip(a)})" if t.lanes > 1 else f"(!{a})"

    def bitwise(self, e, op: str):
        t = self.type_of(e)
        if not t.is_int:
            raise self.fail(f"bitwise {type(e).__name__} on {t.tir}")
        return self.binary(e, op)

    def ex_BitwiseAnd(self, e):
        return self.bitwise(e, "&")

    def ex_BitwiseOr(self, e):
        return self.bitwise(e, "|")

    def ex_BitwiseXor(self, e):
        return self.bitwise(e, "^")

    def ex_LShift(self, e):
        return self.bitwise(e, "<<")

    def ex_RShift(self, e):
        return self.bitwise(e, ">>")

    def ex_BitwiseNot(self, e):
        if not self.type_of(e).is_int:
            raise self.fail("BitwiseNot on a non-integer")
        return f"(~{self.ex(e.a)})"

    def ex_Select(self, e):
        c = self.ex(e.condition)
        a = self.ex(e.true_value)
        b = self.ex(e.false_value)
        if self.type_of(e.condition).lanes > 1:
            return f"mix({_strip(b)}, {_strip(a)}, {_strip(c)})"
        return f"({c} ? {a} : {b})"

    def ex_Cast(self, e):
        t = self.type_of(e)
        src = self.type_of(e.value)
        v = self.ex(e.value)
        if src == t:
            return v
        if src.lanes != t.lanes:
            raise self.fail(f"Cast from {src.tir} to {t.tir}")
        return f"{t.glsl}({_strip(v)})"

    def ex_Broadcast(self, e):
        t = self.type_of(e)
        v = self.ex(e.value)
        return f"{t.glsl}({_strip(v)})"

    def ex_Ramp(self, e):
        t = self.type_of(e)
        st = t.scalar
        base = self.ex(e.base)
        n = t.lanes
        if type(e.stride).__name__ == "IntImm":
            s = int(e.stride.value)
            offs = ", ".join(self.int_lit(k * s, st) for k in range(n))
            return f"({t.glsl}({_strip(base)}) + {t.glsl}({offs}))"
        stride = self.ex(e.stride)
        offs = ", ".join(self.int_lit(k, st) for k in range(n))
        return f"({t.glsl}({_strip(base)}) + {t.glsl}({offs}) * {stride})"

    def ex_Shuffle(self, e):
        t = self.type_of(e)
        lanes = []
        for v in e.vectors:
            vt = self.type_of(v)
            text = self.ex(v)
            if vt.lanes == 1:
                lanes.append(text)
                continue
            if not text.isidentifier():
                text = self.temp(vt, text)
            lanes.extend(f"{text}.{_SWIZZLE[k]}" for k in range(vt.lanes))
        picks = []
        for i in e.indices:
            if type(i).__name__ != "IntImm":
                raise self.fail("Shuffle with a non-constant index")
            picks.append(lanes[int(i.value)])
        if t.lanes == 1:
            return picks[0]
        return f"{t.glsl}({', '.join(picks)})"

    def ex_Let(self, e):
        vt = self.type_of(e.var)
        value = self.ex(e.value)
        name = self.ident(e.var.name)
        self.emit(f"{vt.glsl} {name} = {_strip(value)};")
        self.bind(e.var, name)
        return self.ex(e.body)
    def value(self, e) -> str:
        """Translate the expression of one statement, keeping its loads' evaluation faithful."""
        saved = self.hoist
        self.hoist = _needs_ordering(e, self.memo)
        try:
            return self.ex(e)
        finally:
            self.hoist = saved
