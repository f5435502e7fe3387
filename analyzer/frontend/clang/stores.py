"""Stores of the clang lowering: assignments (`=`, `op=`, `++`), expression statements, and whole
structs copied member by member (locals and structs in memory)."""

from __future__ import annotations

from dataclasses import replace

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import (LocalRef, LocalStruct, ParamStruct, Pointer, Scalar, SharedScalar, Value, Vector,
                                        _add, const_int)
from analyzer.frontend.clang.cursors import CK, TK, canonical, children, in_union, strip, type_name
from analyzer.frontend.clang.exprs import _ASSIGN_OPS, _reads
from analyzer.frontend.clang.macro_accessors import accessor
from analyzer.frontend.clang.reader import unary_op
from analyzer.frontend.opencl import _swizzle
from analyzer.frontend.types import COMPONENTS, vector_shape


class ClangStores:
    """Assignments, expression statements and struct copies; mixed into ClangLowering."""

    # ---------- stores ----------

    def assign(self, c) -> list[ir.Stmt]:
        """`a = b` and `a op= b`."""
        target, value_c = children(c)
        span = self.span(c)
        if c.kind == CK.BINARY_OPERATOR:
            if canonical(target.type).kind == TK.RECORD and self._is_struct(type_name(target.type)):
                return self.copy_struct(target, value_c, span)
            rhs = self.rvalue(value_c)
        else:
            op = _ASSIGN_OPS.get(c.binary_operator.name)
            if op is None:
                raise Unsupported(c, f"assignment operator '{c.binary_operator.name}'")
            rhs = self.rvalue(value_c)
            rhs = self._binop(op, self.rvalue(target), rhs, c)
        return self.store(target, rhs, span)

    def store(self, target_c, val: Value, span) -> list[ir.Stmt]:
        t = strip(target_c)
        k = t.kind
        if self.lang == "metal" and self.stores_thread_elements(t):
            # a SIMD-group matrix's lane elements (metal.py): no memory, the value's own reads kept
            return [ir.Eval(self._scalar(val), span)] if _reads(val) else []
        if self.lang == "metal" and k in (CK.CALL_EXPR, CK.ARRAY_SUBSCRIPT_EXPR):
            column = self.matrix_store(t, val, span)
            if column is not None:
                return column
        if isinstance(val, Pointer) and self.holds_array(val.elem) and canonical(t.type).kind != TK.POINTER:
            # a struct holding an array stored whole (in a template, where its type is dependent)
            dst = self.value(t) if k == CK.DECL_REF_EXPR else self.place(t)
            dst = dst.ptr if isinstance(dst, SharedScalar) else dst
            if not isinstance(dst, Pointer):
                raise Unsupported(t, f"assignment of a '{val.elem}' to a value that is not one")
            return self.flush([]) + self.copy_elements(replace(dst, elem=val.elem, inner=()), val, span)
        if isinstance(val, (LocalStruct, ParamStruct)) and k != CK.DECL_REF_EXPR:
            # a struct value stored in a template, where the target's type is dependent (`buf[i] = value`
            # with `T value` a struct argument): member by member, as the element's struct
            dst = self.place(t)
            if dst.elem not in self.records:
                raise Unsupported(t, f"a struct value stored as a '{dst.elem}'")
            return self.flush([]) + self.copy_struct_values(dst, val, span)
        if k == CK.DECL_REF_EXPR:
            ref = self.value(t)
            if isinstance(ref, LocalRef):
                return self._assign_local(ref, val, span)
            if isinstance(ref, SharedScalar):
                return [self._access_stmt(ref.ptr, True, val, span)]
            if isinstance(ref, Pointer) and isinstance(val, Pointer):
                return self.rebind(t, val, span)   # (pointer_moves.py)
            if isinstance(ref, Pointer) and ref.buffer == "?":
                raise Unsupported(t, "pointer variable given a value that is not a pointer")
            raise Unsupported(t, f"assignment to '{t.spelling}'")
        if k == CK.MEMBER_REF_EXPR:
            moved = self.store_member_pointer(t, val)   # (member_pointers.py)
            if moved is not None:
                return moved
            kids = children(t)
            sb = strip(kids[0]) if kids else None
            base = self.value(sb) if sb is not None and sb.kind in (CK.DECL_REF_EXPR, CK.MEMBER_REF_EXPR) else None
            if isinstance(base, LocalStruct) and in_union(t.referenced):
                raise Unsupported(t, f"member '{t.spelling}' of a local union (its bytes are another member's)")
            if isinstance(base, LocalStruct):
                return [ir.Assign(f"{base.name}.{t.spelling}", self._scalar(val), span)]
            if not kids or strip(kids[0]).kind == CK.CXX_THIS_EXPR:
                # `this->state = v` (or `state = v`) in a member function of a local struct: its variable
                this = self.this_member(t)
                if isinstance(this, Scalar) and isinstance(this.expr, ir.Var):
                    return [ir.Assign(this.expr.name, self._scalar(val), span)]
            comp = COMPONENTS.get(t.spelling)
            if isinstance(base, LocalRef) and comp is not None and vector_shape(base.ty):
                return [ir.Assign(f"{base.name}.{comp}", self._scalar(val), span)]
            shape = vector_shape(base.ty) if isinstance(base, Scalar) and isinstance(base.expr, ir.Var) else None
            if shape and comp is not None and comp < shape[1]:   # a lane of a local struct's packed vector member
                lanes = [ir.Call(f"lane{i}", (base.expr,)) for i in range(shape[1])]
                lanes[comp] = self._scalar(val)
                return [ir.Assign(base.expr.name, ir.Call("vec", tuple(lanes)), span)]
            ptr = self.member_place(t)
            if ptr is not None:
                return [self._access_stmt(ptr, True, val, span)]
            raise Unsupported(t, "assignment to a struct member")
        if k == CK.UNEXPOSED_EXPR:
            kids = children(t)
            field = accessor(t, kids, self.source)
            if field is not None:   # `v.xy = ...` on an ext_vector local
                base = self.value(strip(kids[0]))
                if isinstance(base, LocalRef) and vector_shape(base.ty):
                    lanes = _swizzle(field, vector_shape(base.ty)[1])
                    if lanes is None:
                        raise Unsupported(t, f"vector component '.{field}'")
                    comps = self._components(val, len(lanes)) if len(lanes) > 1 else (self._scalar(val),)
                    return [ir.Assign(f"{base.name}.{i}", x, span) for i, x in zip(lanes, comps)]
                stores = self.lane_stores(kids[0], field, val, span)
                if stores is not None:
                    return stores
                if strip(kids[0]).kind in (CK.ARRAY_SUBSCRIPT_EXPR, CK.UNARY_OPERATOR, CK.MEMBER_REF_EXPR):
                    return self._store_lanes(t, self.place(strip(kids[0])), field, val, span)
        if k == CK.ARRAY_SUBSCRIPT_EXPR:
            base_c, idx_c = children(t)
            base = self.value(base_c)
            if isinstance(base, LocalRef) and vector_shape(base.ty):
                idx = const_int(self.cond(idx_c))
                if idx is None:
                    raise Unsupported(t, "vector lane selected by a variable")
                return [ir.Assign(f"{base.name}.{idx}", self._scalar(val), span)]
        ptr = self.place(t)
        return [self._access_stmt(ptr, True, val, span)]

    def _store_lanes(self, t, ptr: Pointer, field: str, val: Value, span) -> list[ir.Stmt]:
        """`p[i].x = v`, `p[i].lo = w` on a vector in memory (OpenCL's float2 elements): a write of
        each lane named, at its byte offset in the vector."""
        shape = vector_shape(ptr.elem)
        lanes = _swizzle(field, shape[1]) if shape else None
        if lanes is None:
            raise Unsupported(t, f"vector component '.{field}' of a '{ptr.elem}' in memory")
        size = self.size(shape[0]) or 4
        comps = self._components(val, len(lanes)) if len(lanes) > 1 else (self._scalar(val),)
        return [self._access_stmt(Pointer(ptr.buffer, ptr.space, shape[0], _add(ptr.offset, ir.Const(i * size))), True,
                                  Scalar(x, shape[0]), span) for i, x in zip(lanes, comps)]

    def effect(self, c) -> list[ir.Stmt]:
        """An expression statement's statements (its pending effects are flushed by the caller)."""
        s = strip(c)
        if s.kind == CK.BINARY_OPERATOR and s.binary_operator.name == "Assign" or s.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR:
            return self.assign(s)
        if s.kind == CK.UNARY_OPERATOR and unary_op(s) in ("pre++", "pre--", "post++", "post--"):
            a_c = children(s)[0]
            old = self.rvalue(a_c)
            op = "+" if "++" in unary_op(s) else "-"
            return self.store(a_c, self._binop(op, old, Scalar(ir.Const(1)), s), self.span(s))
        if s.kind == CK.BINARY_OPERATOR and s.binary_operator.name == "Comma":
            a, b = children(s)
            first = self.flush(self.effect(a))
            return first + self.flush(self.effect(b))
        if s.kind == CK.CALL_EXPR and s.spelling == "operator=" and len(list(s.get_arguments())) == 2:
            dst, src = s.get_arguments()
            if not self._is_struct(type_name(dst.type)):   # a vector type's (CUDA's float4 is a struct)
                return self.store(dst, self.rvalue(src), self.span(s))
            return self.copy_struct(dst, src, self.span(s))   # a struct's implicit copy assignment
        if s.kind == CK.CALL_EXPR and s.referenced is None and _assigns(s) and \
                self.dependent_operator(s, children(s)) is not None:
            return []   # its store is pending (the caller flushes it); its value, unused, is not read again
        if s.kind == CK.CALL_EXPR:
            handled = self.call_stmt(s)
            if handled is not None:
                return handled
        val = self.rvalue(s)
        if isinstance(val, Scalar):
            return [ir.Eval(val.expr, self.span(s))] if _reads(val) else []
        if isinstance(val, Vector):
            return [ir.Eval(ir.Call("vec", val.comps), self.span(s))] if _reads(val) else []
        return []

    # ---------- structs ----------

    def copy_struct(self, target_c, src_c, span) -> list[ir.Stmt]:
        """`dst = src` for structs, member by member."""
        dst = self.struct_ref(target_c)
        if isinstance(dst, ParamStruct):
            raise Unsupported(target_c, "assignment to a struct argument")
        s = strip(src_c)
        # a vector built for a struct of as many lanes (TVM's `half4 = make_half4(a, b, c, d)`, a struct
        # template of x, y, z, w): the lanes in the members' order
        built = self.call(s) if s.kind == CK.CALL_EXPR and s.spelling.startswith("make_") else None
        src = built if isinstance(built, Vector) else self.struct_ref(src_c)
        struct = dst.ty if isinstance(dst, LocalStruct) else dst.elem
        record = self.records.get(struct)
        if record is None:
            raise Unsupported(src_c, f"copy of struct '{struct}'")
        if isinstance(dst, Pointer) and isinstance(src, Pointer) and self.holds_array(struct):
            return self.flush([]) + self.copy_elements(dst, src, span, self.span(src_c))
        if not isinstance(src, Vector) and self.pointer_member_paths(record):   # (member_pointers.py)
            return self.flush([]) + self.copy_struct_values(dst, src, span, self.span(src_c))
        out: list[ir.Stmt] = []
        leaves = list(self.struct_leaves(record))
        if isinstance(src, Vector) and len(src.comps) != len(leaves):
            raise Unsupported(src_c, f"struct '{struct}' built from {len(src.comps)} values")
        for i, (path, off, ty) in enumerate(leaves):
            # a vector member is one packed value: a local's copied whole, memory's read or written in
            # one access of its width; an argument's (one parameter a lane) and a vector's lanes are not
            if ty is None or vector_shape(ty) and isinstance(src, (ParamStruct, Vector)):
                raise Unsupported(src_c, f"copy of struct '{struct}', which has an array or vector member '{path}'")
            if isinstance(src, Vector):
                val = Scalar(src.comps[i], ty)
            elif isinstance(src, LocalStruct):
                val = Scalar(ir.Var(f"{src.name}.{path}"), ty)
            elif isinstance(src, ParamStruct):   # a struct argument passed by value: its members' parameters
                val = Scalar(ir.Param(self._field_param(src, path)), ty)
            else:
                val = self.load(Pointer(src.buffer, src.space, ty, _add(src.offset, ir.Const(off))), self.span(src_c))
            if isinstance(dst, LocalStruct):
                out.append(ir.Assign(f"{dst.name}.{path}", self._scalar(val), span))
            else:
                out.append(self._access_stmt(Pointer(dst.buffer, dst.space, ty, _add(dst.offset, ir.Const(off))),
                                             True, val, span))
        return out

    def struct_ref(self, c):
        s = strip(c)
        if s.kind == CK.DECL_REF_EXPR:
            val = self.value(s)
            if isinstance(val, (LocalStruct, Pointer, ParamStruct)):
                return val
            if isinstance(val, SharedScalar):
                return val.ptr
        if s.kind == CK.MEMBER_REF_EXPR:
            val = self._member(s)
            if isinstance(val, (LocalStruct, Pointer)):
                return val
        if s.kind in (CK.ARRAY_SUBSCRIPT_EXPR, CK.UNARY_OPERATOR):
            return self.place(s)
        if s.kind in (CK.CALL_EXPR, CK.CXX_FUNCTIONAL_CAST_EXPR):
            built = self.header_constructed(s)
            if built is not None:
                return built
        if s.kind == CK.CALL_EXPR:
            val = self.call(s)
            if isinstance(val, LocalStruct) or isinstance(val, Pointer) and self.holds_array(val.elem):
                return val
        raise Unsupported(c, "struct value that is not a variable or an element in memory")

    def header_constructed(self, s) -> LocalStruct | None:
        """A struct of scalar members built by a constructor of the bundled headers (`__nv_fp8_e4m3(x)`,
        a conversion): a new value whose members are uninterpreted functions of the arguments (the
        same arguments, the same value). None for anything else (a copy, a constructor of the user's)."""
        if s.kind == CK.CXX_FUNCTIONAL_CAST_EXPR:   # `T(x)`: its constructor call, or (a template's operand
            decl = canonical(s.type).get_declaration()   # hides it) its operand
            args = [k for k in children(s) if k.kind not in (CK.TYPE_REF, CK.TEMPLATE_REF, CK.NAMESPACE_REF)]
            if len(args) == 1 and strip(args[0]).kind == CK.CALL_EXPR and strip(args[0]).referenced is not None \
                    and strip(args[0]).referenced.kind == CK.CONSTRUCTOR:
                return self.header_constructed(strip(args[0]))
            if decl is None or decl.kind == CK.NO_DECL_FOUND or not self.in_headers(decl) or len(args) != 1 or \
                    canonical(args[0].type).kind == TK.RECORD:
                return None
        else:
            ref = s.referenced
            if ref is None or ref.kind != CK.CONSTRUCTOR or not self.in_headers(ref) or ref.is_copy_constructor() or \
                    ref.is_move_constructor():
                return None
            args = list(s.get_arguments())
        ty = self.note_type(s.type)
        record = self.records.get(ty)
        if record is None or vector_shape(ty):
            return None
        leaves = list(self.struct_leaves(record))
        if not leaves or any(t is None or vector_shape(t) for _, _, t in leaves):
            return None
        vals = tuple(self._scalar(self.rvalue(a)) for a in args)
        local = LocalStruct(self.fresh_var(f"{ty}.built"), ty)
        given = _members_given(s.referenced) if s.kind == CK.CALL_EXPR else {}
        for path, _, t in leaves:
            # a member the constructor initialises with a parameter as it is (`__half2(a, b) : x(a), y(b)`)
            # holds that argument, converted; any other an uninterpreted function of the arguments
            i = given.get(path)
            val = self._scalar(self._convert(Scalar(vals[i], self.note_type(args[i].type)), t)) \
                if i is not None and i < len(vals) else ir.Call(f"ctor:{ty}.{path}", vals)
            self.pending.append(ir.Assign(f"{local.name}.{path}", val, self.span(s)))
        return local

    def struct_leaves(self, record, prefix: str = "", offset: int = 0):
        """(member path, byte offset, type) of every scalar or vector member of a record type, nested
        ones flattened; array members give type None."""
        t = canonical(record)
        for f in t.get_fields():
            ft = canonical(f.type)
            off = offset + (t.get_offset(f.spelling) or 0) // 8
            if ft.kind == TK.CONSTANTARRAY:
                yield f"{prefix}{f.spelling}", off, None
            elif ft.kind == TK.RECORD and self._is_struct(type_name(ft)):
                yield from self.struct_leaves(ft, f"{prefix}{f.spelling}.", off)
            else:
                yield f"{prefix}{f.spelling}", off, self.note_type(ft)


def _members_given(ctor) -> dict[str, int]:
    """member -> parameter index, for the members a constructor initialises with a parameter as it is."""
    params = [p.hash for p in ctor.get_children() if p.kind == CK.PARM_DECL]
    out, member = {}, None
    for k in ctor.get_children():
        if k.kind == CK.MEMBER_REF:
            member = k.spelling
        elif member is not None and k.kind.is_expression():
            s = strip(k)
            if s.kind == CK.DECL_REF_EXPR and s.referenced is not None and s.referenced.hash in params:
                out[member] = params.index(s.referenced.hash)
            member = None
    return out


def _assigns(c) -> bool:
    """An unresolved call of an assignment operator (`x += n`, `x = v`, `++x` on a dependent type)."""
    names = [g.spelling for k in children(c) if k.kind == CK.DECL_REF_EXPR and not k.spelling
             for g in children(k) if g.kind == CK.OVERLOADED_DECL_REF and g.spelling.startswith("operator")]
    sym = names[0][len("operator"):] if len(names) == 1 else ""
    return sym in ("++", "--", "=") or (sym.endswith("=") and sym not in ("==", "!=", "<=", ">="))
