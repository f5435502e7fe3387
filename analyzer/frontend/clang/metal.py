"""Metal's own calls in the clang lowering: SIMD-group matrices (register-only values whose loads
and stores are accesses of an 8x8 tile), texture methods (values of their coordinates; a write is not
modelled), `any`/`all` over a vector's lanes, array members of a constant argument struct
(`params.oS[i]`), `sincos`'s store through its reference, and a vector built from its arguments'
lanes (Metal's `float4(a, b.xy)`, also a constructor call elsewhere). Mixed into ClangLowering."""

from __future__ import annotations

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import LocalStruct, ParamStruct, Pointer, Scalar, Value, Vector, _add, _mul, const_int
from analyzer.frontend.clang.cursors import CK, TK, canonical, children, strip
from analyzer.frontend.types import vector_shape

SIMDGROUP_OPS = frozenset({"simdgroup_load", "simdgroup_store", "simdgroup_multiply", "simdgroup_multiply_accumulate",
                           "make_filled_simdgroup_matrix"})


class ClangMetal:
    """Metal's SIMD-group matrices, textures and lane reductions; mixed into ClangLowering."""

    def _vector_of(self, c, ty: str, vals) -> Vector:
        """A vector built from its arguments' lanes in order (one scalar: in every lane; none: zeros)."""
        shape = vector_shape(ty)
        comps: list[ir.Expr] = []
        for v in vals:
            comps.extend(v.comps if isinstance(v, Vector) else (self._scalar(v),))
        if len(comps) == 1:
            comps = comps * shape[1]
        if not comps:
            comps = [ir.Const(0)] * shape[1]
        if len(comps) != shape[1]:
            raise Unsupported(c, f"{ty} built from {len(comps)} values")
        return Vector(tuple(comps), ty)

    def param_array_element(self, c, base_c, idx_c) -> Value | None:
        """`params.oS[i]` of a constant argument struct (read as its members' uniform parameters):
        element k is the parameter `oS[k]`; a variable index selects among them. None for anything
        else (an array of arrays, a struct element, a struct not given as a constant argument)."""
        s = strip(base_c)
        t = canonical(s.type)
        if s.kind != CK.MEMBER_REF_EXPR or t.kind != TK.CONSTANTARRAY or t.element_count <= 0 or \
                canonical(t.element_type).kind in (TK.CONSTANTARRAY, TK.RECORD):
            return None
        kids = children(s)
        sb = strip(kids[0]) if kids else None
        if sb is None or sb.kind != CK.DECL_REF_EXPR:
            return None
        try:
            base = self.value(sb)
        except Unsupported:
            return None
        if not isinstance(base, ParamStruct):
            return None
        names = [f"{s.spelling}[{i}]" for i in range(t.element_count)]
        idx = self.cond(idx_c)
        k = const_int(idx)
        ty = self.note_type(t.element_type)
        for n in (names[k:k + 1] if k is not None and 0 <= k < len(names) else names):
            if n not in self.kernel.params:
                self.kernel.params.append(n)
                self.param_range(n, ty)
        return Scalar(self._lane(c, idx, [ir.Param(n) for n in names]), ty)

    def _any_all(self, fn, arg) -> Value:
        """any lane / every lane of a vector of comparisons, read lane by lane."""
        val = self.rvalue(arg)
        lanes = [ir.BinOp("!=", x, ir.Const(0)) for x in val.comps] if isinstance(val, Vector) else \
            [ir.BinOp("!=", self._scalar(val), ir.Const(0))]
        out = lanes[0]
        for x in lanes[1:]:
            out = ir.BinOp("||" if fn == "any" else "&&", out, x)
        return Scalar(out, "bool")

    def _simdgroup(self, fn, args, c, into) -> Value:
        """A SIMD-group matrix operation. The matrices are register-only values of no state here;
        simdgroup_load/simdgroup_store(m, p, elements_per_row = 8, origin = 0, transpose = false)
        access the 8x8 tile at p + origin.y * elements_per_row + origin.x, each lane two of its 64
        elements (element 2 * lane + k, row-major; which lane moves which element is the
        implementation's: kernelrace assumes this disjoint split)."""
        if fn in ("simdgroup_load", "simdgroup_store"):
            if len(args) < 2:
                raise Unsupported(c, f"{fn} without a pointer")
            ptr = self.rvalue(args[1])
            if not isinstance(ptr, Pointer):
                raise Unsupported(c, f"{fn} through a non-pointer")
            stride = self._scalar(self.rvalue(args[2])) if len(args) > 2 else ir.Const(8)
            origin = self.rvalue(args[3]) if len(args) > 3 else Scalar(ir.Const(0))
            ox, oy = (origin.comps[0], origin.comps[1]) if isinstance(origin, Vector) else (self._scalar(origin),) * 2
            transpose = self.int_value(args[4]) if len(args) > 4 else 0
            if transpose is None:
                raise Unsupported(args[4], f"{fn} with a transpose flag that is not a constant")
            span = self.span(c)
            for k in (0, 1):
                e = _add(_mul(ir.Builtin("lane"), 2), ir.Const(k))
                row, col = ir.BinOp("/", e, ir.Const(8)), ir.BinOp("%", e, ir.Const(8))
                if transpose:
                    row, col = col, row
                index = _add(ir.BinOp("*", _add(oy, row), stride), _add(ox, col))
                at = self._binop("+", ptr, Scalar(index, "long"), c)
                # (a value of this lane's registers: never taken to equal another thread's, of this
                # threadgroup or another; `simdgroup_element(warp, e)` made two threadgroups' equal)
                value = Scalar(self.opaque("a SIMD-group matrix's element"), at.elem) if fn == "simdgroup_store" else None
                self.pending.append(self._access_stmt(at, fn == "simdgroup_store", value, span))
            return Scalar(ir.Const(0), "int")
        for a in args:   # the arguments' own effects (a matrix of an array: `mq[i]`)
            if canonical(a.type).kind != TK.RECORD:
                self.rvalue(a)
        if isinstance(into, LocalStruct):
            return into
        return LocalStruct(self.fresh_var("simdgroup"), self.note_type(c.type))

    def thread_elements(self, c) -> Value:
        """`m.thread_elements()`: the lane's own elements of a SIMD-group matrix, which holds no state
        here: values of this lane's registers, never taken to equal another thread's (a store to them
        is no access: stores_thread_elements)."""
        ty = self.note_type(c.type)
        shape = vector_shape(ty)
        if not shape:
            return Scalar(self.opaque("a SIMD-group matrix's element"), ty)
        return Vector(tuple(self.opaque("a SIMD-group matrix's element") for _ in range(shape[1])), ty)

    def stores_thread_elements(self, t) -> bool:
        """Whether a store's target is (a lane of, or a cast of) `m.thread_elements()`."""
        s = strip(t)
        while s.kind in (CK.ARRAY_SUBSCRIPT_EXPR, CK.CXX_REINTERPRET_CAST_EXPR, CK.CSTYLE_CAST_EXPR, CK.PAREN_EXPR,
                         CK.UNEXPOSED_EXPR) and children(s):
            kids = [k for k in children(s) if k.kind.is_expression()]
            if not kids:
                return False
            s = strip(kids[0] if s.kind == CK.ARRAY_SUBSCRIPT_EXPR else kids[-1])
        return s.kind == CK.CALL_EXPR and s.spelling == "thread_elements" and s.referenced is not None and \
            self.in_headers(s.referenced)

    def _sincos(self, args, c) -> Value:
        """sincos(x, cosval): the sine of x; the cosine is stored through the reference, a local or
        memory (a write like any other), before the expression that uses the sine."""
        x = self.rvalue(args[0])
        ty = self.note_type(args[0].type)

        def of(name: str) -> Value:
            if isinstance(x, Vector):
                return Vector(tuple(ir.Call(name, (e,)) for e in x.comps), x.ty)
            return Scalar(ir.Call(name, (self._scalar(x),)), ty)
        self.pending.extend(self.store(args[1], of("cos"), self.span(c)))
        return of("sin")

    def _metal_texture(self, tex, method, args, c) -> Value:
        """A Metal texture's method: a read, sample or size is a value of the texture and its
        coordinates (the kernel writes no texture, or it is unknown: so no write can change it)."""
        if method == "write":
            raise Unsupported(c, "a texture write (textures are not modelled as memory)")
        name = strip(tex).spelling or "texture"
        vals = [self.rvalue(a) for a in args if canonical(a.type).kind != TK.RECORD]
        coords = tuple(x for v in vals for x in (v.comps if isinstance(v, Vector) else (self._scalar(v),)))
        shape = vector_shape(self.note_type(c.type))
        if shape:
            return Vector(tuple(ir.Call(f"texture:{name}.{method}.{i}", coords) for i in range(shape[1])),
                          self.note_type(c.type))
        return Scalar(ir.Call(f"texture:{name}.{method}", coords), self.note_type(c.type))
