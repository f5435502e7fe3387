"""Expressions in the C-family lowering: rvalues, literals, operators, conversions and casts.

Separate from where values live (c_access) and from calls (c_calls): this is the typed arithmetic
on values, the part templates and new types extend.
"""

from __future__ import annotations

from dataclasses import replace

from lark import Tree

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported, kind
from analyzer.frontend.c_values import (BuiltinVec, FuncRef, LocalRef, ParamStruct, Pointer, Scalar, SharedScalar,
                                        Value, Vector, _add, _mul)
from analyzer.frontend.types import size_of, vector_shape


class ExprLowering:
    """Rvalues and operators; mixed into CLowering."""

    def rvalue_or_ref(self, node) -> Value:
        if isinstance(node, Tree) and kind(node) == "name":
            return self.lookup(str(node.children[0]), node)
        return self.rvalue(node)

    def rvalue(self, node) -> Value:
        val = self._dispatch(node, "expr", "expression")
        if isinstance(val, SharedScalar):
            return self.load(val.ptr, self.span(node))
        if isinstance(val, LocalRef):
            shape = vector_shape(val.ty)
            if shape:
                return Vector(tuple(ir.Var(f"{val.name}.{i}") for i in range(shape[1])), val.ty)
            return Scalar(ir.Var(val.name), val.ty)
        return val

    def cond(self, node) -> ir.Expr:
        return self._scalar(self.rvalue(node))

    def _scalar(self, val: Value) -> ir.Expr:
        if isinstance(val, Scalar):
            return val.expr
        if isinstance(val, Vector):
            return ir.Call("vec", val.comps)
        if isinstance(val, LocalRef):
            return ir.Var(val.name)
        if isinstance(val, Pointer):
            return ir.Call("ptr:" + val.buffer, (val.offset,))
        raise Unsupported(None, f"{_describe(val)} used as a number")   # located by rvalue/stmt

    def _value_expr(self, val: Value) -> ir.Expr:
        return self._scalar(val)

    def _components(self, val: Value, n: int) -> tuple[ir.Expr, ...]:
        if isinstance(val, Vector):
            comps = val.comps
            return comps if len(comps) == n else tuple(ir.Call(f"lane{i}", (ir.Call("vec", comps),)) for i in range(n))
        if isinstance(val, BuiltinVec) and n == 3:   # `uint3 t = threadIdx;`
            return tuple(ir.Builtin(f"{val.prefix}.{f}") for f in "xyz")
        e = self._scalar(val)
        return tuple(ir.Call(f"lane{i}", (e,)) for i in range(n))

    def expr_name(self, node):
        return self.lookup(str(node.children[0]), node)

    def expr_scoped_name(self, node):
        name = "::".join(str(c) for c in node.children)
        if name in self.scopes[0]:   # an enum class's enumerator
            return self.scopes[0][name]
        return Scalar(ir.Call("::".join(str(c) for c in node.children), ()), "int")

    def expr_int_lit(self, node):
        text = str(node.children[0]).rstrip("uUlL")
        # C, not Python: a leading 0 means octal (`0777`), and a literal must fit in 64 bits.
        digits, base = (text[2:], 16) if text[:2] in ("0x", "0X") else (text, 8) if text[:1] == "0" else (text, 10)
        try:
            value = int(digits.lstrip("0") or "0", base) if len(digits) <= 70 else None
        except ValueError:
            raise Unsupported(node, f"invalid integer literal '{_clip(text)}'") from None
        if value is None or value >= 2 ** 64:
            raise Unsupported(node, f"integer literal '{_clip(text)}' does not fit in 64 bits")
        return Scalar(ir.Const(value), "int")

    def expr_float_lit(self, node):
        return Scalar(ir.Call("float:" + str(node.children[0]), ()), "float")

    def expr_true_lit(self, node):
        return Scalar(ir.Const(1), "bool")

    def expr_false_lit(self, node):
        return Scalar(ir.Const(0), "bool")

    def expr_string_lit(self, node):
        return Scalar(ir.Call("str:" + str(node.children[0]), ()), "int")

    def expr_binop(self, node):
        a, op, b = node.children
        return self._binop(str(op), self.rvalue(a), self.rvalue(b), node)

    def _binop(self, op: str, a: Value, b: Value, node) -> Value:
        if isinstance(a, Pointer) and op in "+-" and isinstance(b, Scalar):
            size = size_of(a.elem) or 1
            step = _mul(b.expr, size)
            return replace(a, offset=_add(a.offset, step) if op == "+" else ir.BinOp("-", a.offset, step))
        if isinstance(b, Pointer) and op == "+" and isinstance(a, Scalar):
            return self._binop("+", b, a, node)
        if isinstance(a, Vector) or isinstance(b, Vector):
            n = len(a.comps) if isinstance(a, Vector) else len(b.comps)
            ca = self._components(a, n) if isinstance(a, Vector) else (self._scalar(a),) * n
            cb = self._components(b, n) if isinstance(b, Vector) else (self._scalar(b),) * n
            ty = a.ty if isinstance(a, Vector) else b.ty  # type: ignore[union-attr]
            return Vector(tuple(self._arith(op, x, y, ty) for x, y in zip(ca, cb)), ty)
        ty = self._result_type(a, b)
        return Scalar(self._arith(op, self._scalar(a), self._scalar(b), ty), ty)

    @staticmethod
    def _result_type(a: Value, b: Value) -> str:
        ta = a.ty if isinstance(a, Scalar) else "int"
        tb = b.ty if isinstance(b, Scalar) else "int"
        for t in ("double", "float", "half", "bfloat"):
            if t in (ta, tb) or f"__{t}" in (ta, tb):
                return t
        return ta if ta == tb else "int"

    @staticmethod
    def _is_float(ty: str) -> bool:
        shape = vector_shape(ty)
        base = shape[0] if shape else ty
        return base in ("float", "double", "half", "__half", "bfloat", "__nv_bfloat16", "nv_bfloat16")

    def _arith(self, op: str, a: ir.Expr, b: ir.Expr, ty: str) -> ir.Expr:
        if self._is_float(ty) and op not in ("==", "!=", "<", "<=", ">", ">=", "&&", "||"):
            return ir.Call("f" + op, (a, b))
        if self._is_float(ty):
            return ir.Call("fcmp" + op, (a, b))
        if isinstance(a, ir.Const) and isinstance(b, ir.Const) and op in ("+", "-", "*"):
            return ir.Const({"+": a.value + b.value, "-": a.value - b.value, "*": a.value * b.value}[op])
        return ir.BinOp(op, a, b)

    def expr_lor(self, node):
        return Scalar(ir.BinOp("||", self.cond(node.children[0]), self.cond(node.children[1])), "bool")

    def expr_land(self, node):
        return Scalar(ir.BinOp("&&", self.cond(node.children[0]), self.cond(node.children[1])), "bool")

    def expr_bor(self, node):
        return self._binop("|", self.rvalue(node.children[0]), self.rvalue(node.children[1]), node)

    def expr_bxor(self, node):
        return self._binop("^", self.rvalue(node.children[0]), self.rvalue(node.children[1]), node)

    def expr_band(self, node):
        return self._binop("&", self.rvalue(node.children[0]), self.rvalue(node.children[-1]), node)

    def expr_ternary(self, node):
        c = self.cond(node.children[0])
        a, b = self.rvalue(node.children[1]), self.rvalue(node.children[2])
        if isinstance(a, Vector) or isinstance(b, Vector):
            n = len(a.comps) if isinstance(a, Vector) else len(b.comps)  # type: ignore[union-attr]
            ca, cb = self._components(a, n), self._components(b, n)
            return Vector(tuple(ir.Select(c, x, y) for x, y in zip(ca, cb)), a.ty if isinstance(a, Vector) else b.ty)  # type: ignore[union-attr]
        if isinstance(a, Pointer) and isinstance(b, Pointer) and a.buffer == b.buffer:
            return replace(a, offset=ir.Select(c, a.offset, b.offset))
        return Scalar(ir.Select(c, self._scalar(a), self._scalar(b)), self._result_type(a, b))

    def expr_unary(self, node):
        op, a = str(node.children[0]), self.rvalue(node.children[1])
        if isinstance(a, Scalar) and self._is_float(a.ty):
            return Scalar(ir.Call("f" + op, (a.expr,)), a.ty)
        return Scalar(ir.UnOp(op, self._scalar(a)), "int" if op == "!" else getattr(a, "ty", "int"))

    def expr_neg(self, node):
        a = self.rvalue(node.children[0])
        if isinstance(a, Vector):
            return Vector(tuple(ir.Call("f-", (c,)) for c in a.comps), a.ty)
        if isinstance(a, Scalar) and isinstance(a.expr, ir.Const):
            return Scalar(ir.Const(-a.expr.value), a.ty)
        if isinstance(a, Scalar) and self._is_float(a.ty):
            return Scalar(ir.Call("f-", (a.expr,)), a.ty)
        return Scalar(ir.UnOp("-", self._scalar(a)), getattr(a, "ty", "int"))

    def expr_pos(self, node):
        return self.rvalue(node.children[0])

    def expr_comma(self, node):
        """`(a, b)`: a's effects happen first; the value is b's."""
        self.pending.extend(self.effect(node.children[0]))
        return self.rvalue(node.children[1])

    def expr_cast(self, node):
        ty = self._type_of(node.children[0])
        val = self.rvalue(node.children[1])
        if ty.ptr:
            if isinstance(val, Pointer):
                return replace(val, elem=ty.base)
            raise Unsupported(node, "cast of an integer to a pointer")
        return self._convert(val, ty.base)

    def _convert(self, val: Value, ty: str) -> Value:
        shape = vector_shape(ty)
        if shape:
            return Vector(self._components(val, shape[1]), ty)
        if isinstance(val, Vector):
            return Scalar(ir.Call("cvt:" + ty, (ir.Call("vec", val.comps),)), ty)
        e = self._scalar(val)
        src = val.ty if isinstance(val, Scalar) else "int"
        if isinstance(e, ir.Call) and e.fn.startswith("fcmp"):
            src = "bool"   # a comparison of floats is a truth value: `(bool)(a < b)` is the comparison
        if self._is_float(ty) != self._is_float(src) or (self._is_float(ty) and ty != src):
            return Scalar(ir.Call("cvt:" + ty, (e,), int_arg=self._is_float(ty) and not self._is_float(src)), ty)
        return Scalar(e, ty)

    def expr_construct(self, node):
        ty = self._type_of(node)
        args = node.children[-1]
        vals = [self.rvalue(a) for a in args.children] if args is not None else []
        shape = vector_shape(ty.base)
        if shape:
            comps: list[ir.Expr] = []
            for v in vals:
                comps.extend(v.comps if isinstance(v, Vector) else (self._scalar(v),))
            if len(comps) == 1:
                comps = comps * shape[1]
            if len(comps) != shape[1]:
                raise Unsupported(node, f"{ty.base} built from {len(comps)} values")
            return Vector(tuple(comps), ty.base)
        if len(vals) == 1:
            return self._convert(vals[0], ty.base)
        return Scalar(ir.Call("ctor:" + ty.base, tuple(self._scalar(v) for v in vals)), ty.base)

    def expr_sizeof_type(self, node):
        ty = self._type_of(node.children[0])
        return Scalar(ir.Const(8 if ty.ptr else (size_of(ty.base) or 4)), "int")

    def expr_init_list(self, node):
        raise Unsupported(node, "initializer list")


def _clip(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _describe(val) -> str:
    """A value that is not a number, as the message about its use names it."""
    if isinstance(val, FuncRef):
        return f"'{val.name}', which is not a declared variable,"
    if isinstance(val, BuiltinVec):
        return "a builtin index vector (without .x, .y or .z)"
    if isinstance(val, ParamStruct):
        return f"the argument struct '{val.name}'"
    return type(val).__name__.lower()
