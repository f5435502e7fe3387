"""Expressions of the clang lowering: operators, literals, casts, places in memory (subscripts,
members, dereference, address-of), loads and stores, and the conditional expression, whose
branches' reads happen only under their condition.

The arithmetic helpers (`_binop`, `_convert`, `_components`, `_scalar`) and the accesses
(`make_access`'s shape, `load`) are the Lark C path's (c_exprs, c_access), so both front ends give
the same IR for the same source.
"""

from __future__ import annotations

from dataclasses import replace

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import (BuiltinVec, Group, LocalRef, LocalStruct, ParamStruct, Pointer, Scalar,
                                        SharedScalar, Value, Vector, _add, _mul)
from analyzer.frontend.clang.cursors import (CK, TK, canonical, children, is_pointer, is_vector,
                                             reinterpreted, strip, substituted, type_name)
from analyzer.frontend.clang.macro_accessors import accessor, astype, spelled_literal
from analyzer.frontend.clang.reader import PARAM_PREFIX, evaluate_int, unary_op
from analyzer.frontend.clang.symbolic_dims import scaled, stride
from analyzer.frontend.opencl import _NUMBERED as NUMBERED
from analyzer.frontend.opencl import _swizzle
from analyzer.frontend.types import matrix_shape, COMPONENTS, vector_shape

_BINOPS = {"Mul": "*", "Div": "/", "Rem": "%", "Add": "+", "Sub": "-", "Shl": "<<", "Shr": ">>", "LT": "<",
           "GT": ">", "LE": "<=", "GE": ">=", "EQ": "==", "NE": "!=", "And": "&", "Xor": "^", "Or": "|",
           "LAnd": "&&", "LOr": "||"}
_ASSIGN_OPS = {"MulAssign": "*", "DivAssign": "/", "RemAssign": "%", "AddAssign": "+", "SubAssign": "-",
               "ShlAssign": "<<", "ShrAssign": ">>", "AndAssign": "&", "XorAssign": "^", "OrAssign": "|"}


class ClangExprs:
    """Rvalues, places and stores over clang cursors; mixed into ClangLowering."""

    # ---------- values ----------

    def rvalue(self, c) -> Value:
        val = self.value(c)
        if isinstance(val, SharedScalar):
            return self.load(val.ptr, self.span(c))
        if isinstance(val, LocalRef):
            shape = vector_shape(val.ty)
            if shape:
                return Vector(tuple(ir.Var(f"{val.name}.{i}") for i in range(shape[1])), val.ty)
            return Scalar(ir.Var(val.name), val.ty)
        return val

    def cond(self, c) -> ir.Expr:
        return self._scalar(self.rvalue(c))

    def value(self, c) -> Value:
        """A cursor's value, where a name is still its place (LocalRef, SharedScalar)."""
        if self.nesting >= 200:
            raise Unsupported(c, "expressions nested too deeply (more than 200 levels)")
        self.nesting += 1
        try:
            return self._value(strip(c))
        except Unsupported as exc:
            if exc.node is None:
                exc.node = c
            raise
        finally:
            self.nesting -= 1

    def _value(self, c) -> Value:
        k = c.kind
        if k == CK.INTEGER_LITERAL or k == CK.CHARACTER_LITERAL or k == CK.CXX_BOOL_LITERAL_EXPR:
            n = evaluate_int(c)
            if n is None:
                raise Unsupported(c, "integer literal clang could not evaluate")
            return Scalar(ir.Const(n), "bool" if k == CK.CXX_BOOL_LITERAL_EXPR else "int")
        if k == CK.FLOATING_LITERAL:
            return Scalar(ir.Call("float:" + spelled_literal(c, self.source), ()), "float")
        if k == CK.CXX_NULL_PTR_LITERAL_EXPR or k == CK.GNU_NULL_EXPR:
            return Scalar(ir.Const(0), "int")
        if k == CK.STRING_LITERAL:
            return Scalar(ir.Call("str:" + c.spelling, ()), "int")
        if k == CK.DECL_REF_EXPR:
            return self._decl_ref(c) if c.spelling or not substituted(c) else self.value(children(c)[0])
        if k == CK.BINARY_OPERATOR:
            return self._binary(c)
        if k == CK.COMPOUND_ASSIGNMENT_OPERATOR:
            self.pending.extend(self.assign(c))
            return self.rvalue(children(c)[0])
        if k == CK.UNARY_OPERATOR:
            return self._unary(c)
        if k == CK.CONDITIONAL_OPERATOR:
            return self._conditional(c)
        if k == CK.ARRAY_SUBSCRIPT_EXPR:
            return self._subscript(c)
        if k == CK.MEMBER_REF_EXPR:
            return self._member(c)
        if k in (CK.CSTYLE_CAST_EXPR, CK.CXX_STATIC_CAST_EXPR, CK.CXX_REINTERPRET_CAST_EXPR,
                 CK.CXX_CONST_CAST_EXPR, CK.CXX_FUNCTIONAL_CAST_EXPR):
            return self._cast(c)
        if k == CK.CALL_EXPR:
            return self.call(c)
        if k == CK.CXX_THIS_EXPR and self.this_val is not None:
            return self.this_val
        if k == CK.UNEXPOSED_EXPR:
            return self._unexposed(c)
        if k == CK.CXX_UNARY_EXPR:   # sizeof / alignof
            n = evaluate_int(c)
            if n is not None:
                return Scalar(ir.Const(n), "int")
            return self._dependent_size(c)
        if k in (CK.COMPOUND_LITERAL_EXPR, CK.INIT_LIST_EXPR):
            return self._init_list(c)
        raise Unsupported(c, f"expression '{k.name.lower()}'")

    def _unexposed(self, c) -> Value:
        kids = children(c)
        field = accessor(c, kids, self.source)
        if field is not None:
            return self._swizzle(self.rvalue(kids[0]) if not isinstance(self.value(kids[0]), BuiltinVec)
                                 else self.value(kids[0]), field, c)
        if not kids:
            n = evaluate_int(c)   # a default argument
            if n is not None:
                return Scalar(ir.Const(n), "int")
            if canonical(c.type).kind in (TK.CONSTANTARRAY, TK.POINTER) and type_name(c.type) == "char":
                return Scalar(ir.Call("str:" + self.source.text(c), ()), "int")   # __func__, __FUNCTION__
            if canonical(c.type).kind == TK.DEPENDENT:
                # a leaf clang leaves dependent in a template (`__FUNCTION__` there): nothing under it
                # reads memory; its value is unknown
                return Scalar(self.opaque("a value clang leaves dependent"), "int")
        if len(kids) == 1:   # as_ushort8(v) of a uint4: the bits read as another type
            return astype(self, c, kids[0]) if reinterpreted(c, kids[0]) else self.value(kids[0])
        raise Unsupported(c, f"expression '{self.source.text(c)[:40]}'")

    def _swizzle(self, base: Value, field: str, c) -> Value:
        if isinstance(base, BuiltinVec):
            if field not in ("x", "y", "z"):
                raise Unsupported(c, f"member '.{field}' of a builtin index vector")
            return Scalar(ir.Builtin(f"{base.prefix}.{field}"), "uint")
        if isinstance(base, Vector):
            comps = base.comps
            elem = (vector_shape(base.ty) or ("float", 0))[0]
        else:
            raise Unsupported(c, f"component '.{field}' of a non-vector")
        lanes = _swizzle(field, len(comps))
        if lanes is None:
            raise Unsupported(c, f"vector component '.{field}' of a {len(comps)}-lane vector")
        if len(lanes) == 1:
            return Scalar(comps[lanes[0]], elem)
        return Vector(tuple(comps[i] for i in lanes), f"{elem}{len(lanes)}")

    def _decl_ref(self, c) -> Value:
        ref = c.referenced
        name = c.spelling
        if ref is not None:
            key = ref.hash
            for scope in reversed(self.scopes):
                if key in scope:
                    return scope[key]
            if ref.kind == CK.VAR_DECL and ref.spelling.startswith(PARAM_PREFIX):
                pname = ref.spelling[len(PARAM_PREFIX):]
                if pname not in self.kernel.params:
                    self.kernel.params.append(pname)
                return Scalar(ir.Param(pname), "int")
            if ref.kind == CK.ENUM_CONSTANT_DECL:
                # OpenCL's memory orders and scopes as the dialect's tables number them (opencl.py
                # reads an atomic's scope from them), not as clang's headers do
                return Scalar(ir.Const(NUMBERED.get(ref.spelling, ref.enum_value)), "int")
            if ref.kind in (CK.FUNCTION_DECL, CK.FUNCTION_TEMPLATE, CK.CXX_METHOD):
                # a function named as a value (`(void)f`, a function pointer): its address, a constant
                return Scalar(ir.Call(f"function:{ref.spelling}", ()), "int")
            if ref.kind == CK.TEMPLATE_NON_TYPE_PARAMETER:
                bound = self.template_values.get(ref.spelling)
                if bound is not None:
                    return bound
            builtin = self.builtin_name(name, ref)
            if builtin is not None:
                return builtin
            if ref.kind == CK.VAR_DECL:
                if ref.semantic_parent is not None and ref.semantic_parent.kind != CK.TRANSLATION_UNIT and \
                        ref.type.is_const_qualified():
                    n = self.int_value(c)   # a constant of a library namespace (`std::is_same_v<A, B>`)
                    if n is not None:
                        return Scalar(ir.Const(n), "int")
                    init = [k for k in ref.get_children() if k.kind.is_expression()]
                    if init and ref.semantic_parent.kind in (CK.CLASS_TEMPLATE, CK.STRUCT_DECL, CK.CLASS_DECL):
                        # a class template's `static constexpr int size = 16 / sizeof(T);` seen from
                        # its own member functions: its initializer under the class's bound types
                        return self.rvalue(init[-1])
                return self.global_var(ref, c)
        builtin = self.builtin_name(name, ref)
        if builtin is not None:
            return builtin
        if ref is None and not name:
            return self._dependent_member(c)
        n = self.int_value(c)   # a library's constant (`std::is_same_v<A, B>`, a variable template)
        if n is not None:
            return Scalar(ir.Const(n), "int")
        if ref is not None and ref.kind == CK.OVERLOADED_DECL_REF and canonical(c.type).kind == TK.DEPENDENT:
            return self._dependent_trait(c)   # `std::is_same_v<MaskT, bool>` of a type parameter
        raise Unsupported(c, f"'{name}', which is not a declared variable of the kernel")

    def _binary(self, c) -> Value:
        op = c.binary_operator.name
        a_c, b_c = children(c)
        if op == "Assign":
            self.pending.extend(self.assign(c))
            return self.rvalue(a_c)
        if op == "Comma":
            self.pending.extend(self.effect(a_c))
            return self.rvalue(b_c)
        sym = _BINOPS.get(op)
        if sym is None:
            raise Unsupported(c, f"operator '{op}'")
        if sym in ("&&", "||"):
            return Scalar(ir.BinOp(sym, self.cond(a_c), self.cond(b_c)), "bool")
        a, b = self.rvalue(a_c), self.rvalue(b_c)
        if isinstance(a, Pointer) and isinstance(b, Pointer) and sym == "-":
            size = self.size(a.elem) or 1
            return Scalar(ir.BinOp("/", ir.BinOp("-", a.offset, b.offset), ir.Const(size)), "long")
        return self._binop(sym, a, b, c)

    def _binop(self, op: str, a: Value, b: Value, node) -> Value:
        if isinstance(a, Pointer) and op in "+-" and isinstance(b, Scalar):
            step = _mul(b.expr, self.size(a.elem) or 1)
            return replace(a, offset=_add(a.offset, step) if op == "+" else ir.BinOp("-", a.offset, step))
        if isinstance(b, Pointer) and op == "+" and isinstance(a, Scalar):
            return self._binop("+", b, a, node)
        return super()._binop(op, a, b, node)

    def _unary(self, c) -> Value:
        op = unary_op(c)
        (a_c,) = children(c)
        if op in ("pre++", "pre--", "post++", "post--"):
            old = self.rvalue(a_c)
            self.pending.extend(self.store(a_c, self._binop("+" if "++" in op else "-", old, Scalar(ir.Const(1)), c),
                                           self.span(c)))
            return old if op.startswith("post") else self.rvalue(a_c)
        if op == "&":
            return self.address_of(a_c)
        if op == "*":
            ptr = self.rvalue(a_c)
            if not isinstance(ptr, Pointer):
                raise Unsupported(c, "dereference of a non-pointer")
            if canonical(c.type).kind == TK.RECORD and type_name(c.type) in self.struct_names():
                return ptr   # a struct in memory: its members are read where named
            return self.load(ptr, self.span(c))
        if op == "+" or op == "__extension__":
            return self.rvalue(a_c)
        a = self.rvalue(a_c)
        if op == "-":
            if isinstance(a, Vector):
                return Vector(tuple(ir.Call("f-", (x,)) for x in a.comps), a.ty)
            if isinstance(a, Scalar) and isinstance(a.expr, ir.Const):
                return Scalar(ir.Const(-a.expr.value), a.ty)
            if isinstance(a, Scalar) and self._is_float(a.ty):
                return Scalar(ir.Call("f-", (a.expr,)), a.ty)
            return Scalar(ir.UnOp("-", self._scalar(a)), getattr(a, "ty", "int"))
        if op in ("!", "~"):
            if isinstance(a, Scalar) and self._is_float(a.ty):
                return Scalar(ir.Call("f" + op, (a.expr,)), a.ty)
            return Scalar(ir.UnOp(op, self._scalar(a)), "int" if op == "!" else getattr(a, "ty", "int"))
        raise Unsupported(c, f"unary operator '{op}'")

    def _conditional(self, c) -> Value:
        """`c ? a : b`: where a branch reads memory (or has effects), it is evaluated only under
        its condition: an If that sets a fresh variable; otherwise a Select."""
        cond_c, a_c, b_c = children(c)
        cond = self.cond(cond_c)
        outer, self.pending = self.pending, []
        try:
            a = self.rvalue(a_c)
            a_pre, self.pending = self.pending, []
            b = self.rvalue(b_c)
            b_pre = self.pending
        finally:
            self.pending = outer
        if (ptr := self.pointer_choice(cond, a, b, (a_pre, b_pre), self.span(c))) is not None:   # chosen.py
            return ptr
        guarded = a_pre or b_pre or _reads(a) or _reads(b)
        if isinstance(a, Vector) or isinstance(b, Vector):
            n = len(a.comps) if isinstance(a, Vector) else len(b.comps)
            ty = a.ty if isinstance(a, Vector) else b.ty
            ca, cb = self._components(a, n), self._components(b, n)
            if not guarded:
                return Vector(tuple(ir.Select(cond, x, y) for x, y in zip(ca, cb)), ty)
            ref = LocalRef(self.fresh_var("cond"), ty)
            span = self.span(c)
            self.pending.append(ir.If(cond, a_pre + self._assign_local(ref, Vector(ca, ty), span),
                                      b_pre + self._assign_local(ref, Vector(cb, ty), span), span))
            return self.rvalue_ref(ref)
        if not guarded:
            return Scalar(ir.Select(cond, self._scalar(a), self._scalar(b)), self._result_type(a, b))
        var = self.fresh_var("cond")
        span = self.span(c)
        self.pending.append(ir.If(cond, a_pre + [ir.Assign(var, self._scalar(a), span)],
                                  b_pre + [ir.Assign(var, self._scalar(b), span)], span))
        return Scalar(ir.Var(var), self._result_type(a, b))

    def rvalue_ref(self, ref: LocalRef) -> Value:
        shape = vector_shape(ref.ty)
        if shape:
            return Vector(tuple(ir.Var(f"{ref.name}.{i}") for i in range(shape[1])), ref.ty)
        return Scalar(ir.Var(ref.name), ref.ty)

    def _cast(self, c) -> Value:
        kids = [k for k in children(c) if k.kind != CK.TYPE_REF and not k.kind.is_reference()]
        if not kids:
            raise Unsupported(c, "cast without an operand")
        target = c.type
        inner = strip(kids[-1])
        if inner.kind == CK.PAREN_EXPR or (inner.kind == CK.INIT_LIST_EXPR and is_vector(target)):
            return self._vector_literal(inner, type_name(target), c)   # OpenCL `(float4)(a, b, c, d)`
        val = self.rvalue(kids[-1])
        if is_pointer(target):
            if isinstance(val, Pointer):
                return replace(val, elem=self.note_type(canonical(target).get_pointee()), inner=())
            if isinstance(val, Scalar) and isinstance(val.expr, ir.Const) and val.expr.value == 0:
                return val
            raise Unsupported(c, "cast of an integer to a pointer")
        name = self.note_type(target)
        if isinstance(val, LocalStruct) and name in (val.ty, "void"):
            return val   # `Tag{}`: the struct value built; `(void)tag`
        if is_vector(target) and not isinstance(val, Vector):
            # a scalar converted to a vector is in every lane (OpenCL's `(float4)(2.0f)`)
            return Vector((self._scalar(self._convert(val, (vector_shape(name) or ("float", 0))[0])),)
                          * canonical(target).element_count, name)
        return self._convert(val, name)

    def _vector_literal(self, node, ty: str, c) -> Value:
        shape = vector_shape(ty)
        parts = []
        stack = [node]
        while stack:   # (a, b, c): a comma operator's operands, in order
            n = strip(stack.pop())
            if n.kind == CK.BINARY_OPERATOR and n.binary_operator.name == "Comma":
                a, b = children(n)
                stack.extend([b, a])
            elif n.kind == CK.INIT_LIST_EXPR:
                stack.extend(reversed(children(n)))
            else:
                parts.append(n)
        comps: list[ir.Expr] = []
        for p in parts:
            v = self.rvalue(p)
            comps.extend(v.comps if isinstance(v, Vector) else (self._scalar(v),))
        if shape and len(comps) == 1:
            comps = comps * shape[1]
        if not shape or len(comps) != shape[1]:
            raise Unsupported(c, f"{ty} built from {len(comps)} values")
        return Vector(tuple(comps), ty)

    def _init_list(self, c) -> Value:
        ty = type_name(c.type)
        if vector_shape(ty):
            kids = [k for k in children(c) if k.kind != CK.TYPE_REF]
            inner = kids[-1] if kids else c
            return self._vector_literal(inner, ty, c)
        if canonical(c.type).kind not in (TK.RECORD, TK.CONSTANTARRAY, TK.INCOMPLETEARRAY, TK.DEPENDENT) and \
                not canonical(c.type).spelling.startswith("type-parameter"):
            # a scalar in braces, `ulong loc{0}`, `int n{}`: its one value, converted; none: zero
            kids = [k for k in children(c) if k.kind != CK.TYPE_REF]
            if len(kids) <= 1:
                return self._convert(self.rvalue(kids[0]) if kids else Scalar(ir.Const(0), "int"), self.note_type(c.type))
        if canonical(c.type).kind == TK.RECORD and not list(canonical(c.type).get_fields()):
            return LocalStruct(self.fresh_var("tag"), self.note_type(c.type))   # of no state (`Align<true>{}`)
        raise Unsupported(c, "initializer list")

    # ---------- places ----------

    def _subscript(self, c) -> Value:
        base_c, idx_c = children(c)
        if self.lang == "metal" and (element := self.param_array_element(c, base_c, idx_c)) is not None:
            return element
        base = self.value(base_c)
        if self.lang == "metal" and isinstance(base, (LocalRef, Vector)) and matrix_shape(base.ty):
            return self.matrix_column_of(c, self.rvalue(base_c), self.cond(idx_c))   # (in a template)
        if isinstance(base, LocalRef) and vector_shape(base.ty):
            lane_t, n = vector_shape(base.ty)
            return Scalar(self._lane(c, self.cond(idx_c), [ir.Var(f"{base.name}.{i}") for i in range(n)]), lane_t)
        if isinstance(base, Vector):
            return Scalar(self._lane(c, self.cond(idx_c), list(base.comps)), (vector_shape(base.ty) or ("int", 0))[0])
        ptr = self.place(c)
        if isinstance(base, Pointer) and base.inner or self._is_struct(ptr.elem) or canonical(c.type).kind in (
                TK.CONSTANTARRAY, TK.INCOMPLETEARRAY):
            return ptr   # a row of a multi-dimensional array, or a struct element
        return self.load(ptr, self.span(c))

    def place(self, c) -> Pointer:
        """The memory a place expression names: `p[i]`, `*p`, `p->f`, `s.f` of a struct in memory."""
        c = strip(c)
        k = c.kind
        if k == CK.ARRAY_SUBSCRIPT_EXPR:
            base_c, idx_c = children(c)
            base = self.rvalue(base_c)
            if not isinstance(base, Pointer):
                raise Unsupported(c, "memory access through a non-pointer")
            idx = self.cond(idx_c)
            step = stride(self.size(base.elem) or 4, base.inner)   # an expression where a row is symbolic
            return base.index(idx, _add(base.offset, scaled(idx, step)))
        if k == CK.UNARY_OPERATOR and unary_op(c) == "*":
            ptr = self.rvalue(children(c)[0])
            if isinstance(ptr, Pointer):
                return ptr
        if k == CK.MEMBER_REF_EXPR:
            ptr = self.member_place(c)
            if ptr is not None:
                return ptr
        if k == CK.CALL_EXPR:
            ptr = self.dependent_deref(c) or self.method_call(c, want_place=True)   # `v[k]` through a reference-returning operator[]
            if isinstance(ptr, Pointer):
                return ptr
        if k == CK.DECL_REF_EXPR:
            val = self.value(c)
            if isinstance(val, SharedScalar):
                return val.ptr
            if isinstance(val, Pointer):
                return val
        if k in (CK.CXX_REINTERPRET_CAST_EXPR, CK.CXX_STATIC_CAST_EXPR, CK.CSTYLE_CAST_EXPR, CK.CXX_CONST_CAST_EXPR):
            # `reinterpret_cast<half&>(p[i].x) = v`: a place cast to a reference is the same memory
            # read as the cast's type (C++ allows no other cast on the left of an assignment)
            kids = [n for n in children(c) if n.kind != CK.TYPE_REF and not n.kind.is_reference()]
            if kids:
                ptr = self.place(kids[-1])
                return replace(ptr, elem=self.note_type(c.type), inner=())
        raise Unsupported(c, "memory access through a non-pointer")

    def address_of(self, c) -> Value:
        target = strip(c)
        if target.kind == CK.DECL_REF_EXPR:
            val = self.value(target)
            if isinstance(val, SharedScalar):
                return val.ptr
            if isinstance(val, Pointer):
                return val
            if isinstance(val, (LocalRef, LocalStruct)):
                return val    # `&local` (a curand state): the local itself
            raise Unsupported(c, "address of a non-memory value")
        return self.place(target)

    def member_place(self, c) -> Pointer | None:
        """`p[i].f`, `p->f`, `(*p).f`, `p[i].a.b`: the member's place in memory, or None."""
        kids = children(c)
        if not kids or strip(kids[0]).kind == CK.CXX_THIS_EXPR:
            this = self.this_member(c)   # inside a member function, the member of its object (in memory)
            return this if isinstance(this, Pointer) and not isinstance(self.this_val, LocalStruct) else None
        base_c = kids[0]
        base_t = canonical(strip(base_c).type)
        if base_t.kind == TK.POINTER:
            record_t = canonical(base_t.get_pointee())
            ptr = self.rvalue(base_c)
        elif base_t.kind == TK.RECORD:
            record_t = base_t
            sb = strip(base_c)
            if sb.kind == CK.DECL_REF_EXPR:
                val = self.value(sb)
                ptr = val.ptr if isinstance(val, SharedScalar) else val
            elif sb.kind in (CK.ARRAY_SUBSCRIPT_EXPR, CK.MEMBER_REF_EXPR) or (
                    sb.kind == CK.UNARY_OPERATOR and unary_op(sb) == "*"):
                try:
                    ptr = self.place(sb)
                except Unsupported:
                    return None
            else:
                return None
        else:
            return None
        if not isinstance(ptr, Pointer):
            return None
        field = c.referenced
        if field is None or field.kind != CK.FIELD_DECL:
            return None
        return self.member_of(ptr, field, c, record_t)

    def _member(self, c) -> Value:
        kids = children(c)
        field = c.spelling
        if c.referenced is not None and c.referenced.kind == CK.VAR_DECL:
            return self.static_member(c)   # `packed.size`
        if (held := self.held_member_pointer(c)) is not None:   # (member_pointers.py)
            return held
        if not kids or strip(kids[0]).kind == CK.CXX_THIS_EXPR:
            this = self.this_member(c)   # inside a member function, the member of its object
            if this is None:
                raise Unsupported(c, f"member '{field}' of this object")
            if not isinstance(this, Pointer) or self._is_struct(this.elem) or isinstance(self.this_val, LocalStruct) \
                    or canonical(c.type).kind in (TK.CONSTANTARRAY, TK.DEPENDENTSIZEDARRAY):
                return this
            return self.load(this, self.span(c))
        base_c = kids[0]
        base = None
        sb = strip(base_c)
        if sb.kind == CK.DECL_REF_EXPR or sb.kind == CK.MEMBER_REF_EXPR:
            try:
                base = self.value(sb) if sb.kind == CK.DECL_REF_EXPR else None
            except Unsupported:
                base = None
        elif sb.kind == CK.CALL_EXPR and type_name(canonical(sb.type)) in ("dim3", "uint3"):
            base = self.rvalue(sb)   # `block.dim_threads().x`: a member of the index vector a call gives
        if isinstance(base, BuiltinVec):
            if field not in ("x", "y", "z"):
                raise Unsupported(c, f"member '.{field}' of a builtin index vector")
            return Scalar(ir.Builtin(f"{base.prefix}.{field}"), "uint")
        if isinstance(base, ParamStruct):
            return self.param_field(base, field, c)
        if isinstance(base, LocalStruct):
            return self.local_member(base, field, c.type, c)
        if sb.kind == CK.MEMBER_REF_EXPR:
            inner = self.value(sb)
            if isinstance(inner, LocalStruct):
                return self.local_member(inner, field, c.type, c)
            if isinstance(inner, ParamStruct):
                return self.param_field(inner, field, c)
        comp = COMPONENTS.get(field)
        if comp is not None and base is None or isinstance(base, (LocalRef, Vector, Scalar)):
            vec = base if base is not None else None
            if vec is None and vector_shape(type_name(sb.type)) and not self._is_struct(type_name(sb.type)):
                vec = self.value(sb) if sb.kind != CK.DECL_REF_EXPR else base
            if (lane := self.lane_of(vec, comp)) is not None:   # (member_pointers.py)
                return lane
        ptr = self.member_place(c)
        if ptr is not None:
            if ptr.inner is not None and canonical(c.type).kind == TK.CONSTANTARRAY:
                return ptr   # an array member: its place, as an array's name is
            if self._is_struct(ptr.elem):
                return ptr
            return self.load(ptr, self.span(c))
        val = self.rvalue(base_c)
        if isinstance(val, Vector) and comp is not None and comp < len(val.comps):
            return Scalar(val.comps[comp], (vector_shape(val.ty) or ("int", 0))[0])
        if isinstance(val, Group):
            raise Unsupported(c, f"member '{field}' of a cooperative group")
        raise Unsupported(c, f"member '.{field}'")


def _reads(val) -> bool:
    """Whether a value reads memory (or holds an atomic's result) anywhere inside."""
    exprs = list(val.comps) if isinstance(val, Vector) else [val.expr] if isinstance(val, Scalar) else []
    seen = set()
    while exprs:
        e = exprs.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, ir.Read) or isinstance(e, ir.Opaque) and e.fetch is not None:
            return True
        exprs.extend(ir.operands(e))
    return False


def field_offset(record_t, field) -> int | None:
    """A data member's offset in bits in a record type, a base class's member too (clang's layout:
    the base subobject's offset plus the member's in the base); None where clang gives none (a
    dependent type, a virtual base)."""
    off = record_t.get_offset(field.spelling)
    if off is not None and off >= 0:
        return off
    decl = record_t.get_declaration()
    off = _anonymous_offset(field, record_t) if field.kind == CK.FIELD_DECL else None
    if off is not None:
        return off
    for base in decl.get_children():
        if base.kind != CK.CXX_BASE_SPECIFIER or base.is_virtual_base():
            continue
        inner = field_offset(canonical(base.type), field)
        if inner is None:
            continue
        at = base.get_base_offsetof(decl)
        if at is not None and at >= 0:
            return at + inner
    return None


def _anonymous_offset(field, record_t) -> int | None:
    """The offset in bits in `record_t` of a member of an anonymous struct or union nested in it
    (its name cannot be looked up): its offset in that anonymous record plus the record's, which is
    a named member's offset in `record_t` less its offset in the anonymous record (clang's layout)."""
    parent = field.semantic_parent
    inner = field.get_field_offsetof()
    if parent is None or inner is None or inner < 0:
        return None
    if parent == record_t.get_declaration():
        return inner
    named = next((f for f in parent.walk_preorder() if f.kind == CK.FIELD_DECL and f.spelling
                  and "(anonymous" not in f.spelling), None)
    if named is None or not parent.is_anonymous():
        return None
    outer, there = record_t.get_offset(named.spelling), parent.type.get_offset(named.spelling)
    if outer is None or there is None or outer < 0 or there < 0:
        return None
    return outer - there + inner
