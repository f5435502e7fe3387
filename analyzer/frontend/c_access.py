"""Where the C-family lowering reads and writes: assignments, indexing, members, dereference and
address-of, and the memory accesses (ir.Access) that loads and stores through pointers make.

Separate from the arithmetic of expressions: this is where a value's place (a local, a buffer
element, a member of an argument struct) is resolved, and where struct members will grow.
"""

from __future__ import annotations

from dataclasses import replace

from lark import Token, Tree

from analyzer import ir
from analyzer.errors import KernelraceError
from analyzer.frontend.c_tree import Unsupported, kind
from analyzer.frontend.c_values import (BuiltinVec, LocalRef, LocalStruct, ParamStruct, Pointer, Scalar, SharedScalar, Value,
                                        Vector, _add, _mul)
from analyzer.frontend.types import COMPONENTS, size_of, vector_shape


class AccessLowering:
    """Assignments, lvalues, loads and stores; mixed into CLowering."""

    def effect(self, node) -> list[ir.Stmt]:
        k = kind(node) if isinstance(node, Tree) else ""
        span = self.span(node)
        if k == "assign":
            target, op, value = node.children
            op = str(op)
            dst = self._struct_target(target) if op == "=" else None
            if dst is not None:   # a whole struct, member by member
                return self.copy_struct(dst, value, span)
            rhs = self.rvalue(value)
            if op != "=":
                cur = self.rvalue(target)
                rhs = self._binop(op[:-1], cur, rhs, node)
            return self.store(target, rhs, span)
        if k == "comma":   # `i++, j++`: both, in order
            first = self._flush(self.effect(node.children[0]))
            return first + self._flush(self.effect(node.children[1]))
        if k in ("pre_incdec", "post_incdec"):
            target = node.children[1] if k == "pre_incdec" else node.children[0]
            op = str(node.children[0] if k == "pre_incdec" else node.children[1])
            cur = self.rvalue(target)
            rhs = self._binop("+" if op == "++" else "-", cur, Scalar(ir.Const(1)), node)
            return self.store(target, rhs, span)
        if k == "call":
            handled = self.call_stmt(node)
            if handled is not None:
                return handled
        val = self.rvalue(node)
        if isinstance(val, Scalar):
            return [ir.Eval(val.expr, span)]
        if isinstance(val, Vector):
            return [ir.Eval(ir.Call("vec", val.comps), span)]
        return []

    def store(self, target, val: Value, span) -> list[ir.Stmt]:
        k = kind(target) if isinstance(target, Tree) else ""
        if k == "name":
            ref = self.lookup(str(target.children[0]), target)
            if isinstance(ref, LocalRef):
                return self._assign_local(ref, val, span)
            if isinstance(ref, SharedScalar):
                return [self._access_stmt(ref.ptr, True, val, span)]
            if isinstance(ref, Pointer) and isinstance(val, Pointer):
                return self.move_pointer(str(target.children[0]), val, target, span)
            raise Unsupported(target, f"assignment to '{target.children[0]}'")
        if k in ("member", "arrow"):
            ptr = self.struct_member_pointer(target)
            if ptr is not None:
                if ptr.elem in self.struct_defs:
                    raise Unsupported(target, f"assignment of a whole struct '{ptr.elem}'")
                return [self._access_stmt(ptr, True, val, span)]
            base = self.rvalue_or_ref(target.children[0]) if k == "member" and kind(target.children[0]) in (
                "name", "member") else None
            if isinstance(base, LocalStruct):
                ty = self._local_member_type(base, target)
                if ty in self.struct_defs:
                    raise Unsupported(target, f"assignment of a whole struct '{ty}'")
                return [ir.Assign(f"{base.name}.{target.children[1]}", self._scalar(val), span)]
            if k == "arrow":
                raise Unsupported(target, "'->' member access")
            base = self.rvalue_or_ref(target.children[0])
            comp = COMPONENTS.get(str(target.children[1]))
            if isinstance(base, LocalRef) and comp is not None:
                return [ir.Assign(f"{base.name}.{comp}", self._scalar(val), span)]
            ptr = self._member_pointer(base, target)
            if ptr is not None:
                return [self._access_stmt(ptr, True, val, span)]
            raise Unsupported(target, "assignment to a struct member")
        if k in ("index", "deref"):
            if k == "index":
                base = self.rvalue_or_ref(target.children[0])
                if isinstance(base, LocalRef) and vector_shape(base.ty):
                    idx = self._scalar(self.rvalue(target.children[1]))
                    if isinstance(idx, ir.Const):
                        return [ir.Assign(f"{base.name}.{idx.value}", self._scalar(val), span)]
                    raise Unsupported(target, "vector lane selected by a variable")
            ptr = self.lvalue_pointer(target)
            return [self._access_stmt(ptr, True, val, span)]
        raise Unsupported(target, f"assignment target '{k}'")

    def _assign_local(self, ref: LocalRef, val: Value, span) -> list[ir.Stmt]:
        shape = vector_shape(ref.ty)
        if shape:
            comps = self._components(val, shape[1])
            return [ir.Assign(f"{ref.name}.{i}", c, span) for i, c in enumerate(comps)]
        return [ir.Assign(ref.name, self._scalar(val), span)]

    def _access_stmt(self, ptr: Pointer, is_write: bool, val: Value | None, span, atomic=False) -> ir.MemOp:
        acc = self.make_access(ptr, is_write, span, atomic)
        if val is not None:
            acc.value = self._value_expr(val)
        return ir.MemOp(acc)

    def make_access(self, ptr: Pointer, is_write: bool, span, atomic=False) -> ir.Access:
        if ptr.buffer == "?":
            raise KernelraceError(f"{span}: pointer of unknown origin")
        buf = self.kernel.buffers[ptr.buffer]
        width = size_of(ptr.elem) or buf.elem_size
        view = str(ptr.elem) if str(ptr.elem) != buf.elem_type and size_of(ptr.elem) else ""
        return ir.Access(ptr.buffer, ptr.space, ptr.offset, width, is_write, span,
                         elem_size=buf.elem_size, atomic=atomic, id=next(self.access_ids), view=view,
                         bounds=ptr.access_bounds())

    def lvalue_pointer(self, node) -> Pointer:
        k = kind(node)
        if k == "index":
            base = self.rvalue(node.children[0])
            if isinstance(base, Pointer):
                idx = self._scalar(self.rvalue(node.children[1]))
                size = self.elem_size(base.elem) or 4
                for n in base.inner:
                    size *= n
                return base.index(idx, _add(base.offset, _mul(idx, size)))
        if k == "deref":
            base = self.rvalue(node.children[-1])
            if isinstance(base, Pointer):
                return base
        raise Unsupported(node, "memory access through a non-pointer")

    def load(self, ptr: Pointer, span) -> Value:
        acc = self.make_access(ptr, False, span)
        read = ir.Read(acc)
        shape = vector_shape(ptr.elem)
        if shape:
            return Vector(tuple(ir.Call(f"lane{i}", (read,)) for i in range(shape[1])), ptr.elem)
        return Scalar(read, ptr.elem)

    def expr_addr_of(self, node):
        target = node.children[-1]
        if isinstance(target, Tree) and kind(target) == "name":
            ref = self.lookup(str(target.children[0]), target)
            if isinstance(ref, SharedScalar):
                return ref.ptr
        if isinstance(target, Tree) and kind(target) in ("index", "deref"):
            return self.lvalue_pointer(target)
        raise Unsupported(node, "address of a non-memory value")

    def expr_deref(self, node):
        ptr = self.rvalue(node.children[-1])
        if not isinstance(ptr, Pointer):
            raise Unsupported(node, "dereference of a non-pointer")
        return self.load(ptr, self.span(node))

    def _param_struct_pointer(self, node) -> Pointer | None:
        """`soa.x` for a pointer field of a struct argument (see _declare_pointer_fields)."""
        if not (isinstance(node, Tree) and kind(node) == "member" and kind(node.children[0]) == "name"):
            return None
        val = self.scopes[0].get(f"{node.children[0].children[0]}.{node.children[1]}")
        return val if isinstance(val, Pointer) and isinstance(
            self.lookup(str(node.children[0].children[0]), node.children[0]), ParamStruct) else None

    def _root_is_param_struct(self, node) -> bool:
        while isinstance(node, Tree) and kind(node) in ("member", "index"):
            if self._param_struct_pointer(node) is not None:
                return False
            node = node.children[0]
        return (isinstance(node, Tree) and kind(node) == "name"
                and isinstance(self.lookup(str(node.children[0]), node), ParamStruct))

    def expr_index(self, node):
        if self._root_is_param_struct(node):
            return self._param_path(node)
        base = self.rvalue_or_ref(node.children[0])
        if isinstance(base, LocalRef) and vector_shape(base.ty):
            idx = self._scalar(self.rvalue(node.children[1]))
            if isinstance(idx, ir.Const):
                return Scalar(ir.Var(f"{base.name}.{idx.value}"), vector_shape(base.ty)[0])  # type: ignore[index]
            raise Unsupported(node, "vector lane selected by a variable")
        if isinstance(base, Vector):
            idx = self._scalar(self.rvalue(node.children[1]))
            if isinstance(idx, ir.Const) and idx.value < len(base.comps):
                return Scalar(base.comps[idx.value], (vector_shape(base.ty) or ("int", 0))[0])
            raise Unsupported(node, "vector lane selected by a variable")
        if isinstance(base, ParamStruct):
            return self._param_path(node)
        ptr = self.lvalue_pointer(node)
        if isinstance(base, Pointer) and base.inner:
            return ptr  # a row of a multi-dimensional array
        return self.load(ptr, self.span(node))

    def _param_path(self, node) -> Scalar:
        """arg.H[0] on a constant argument struct: a uniform scalar parameter named by its path."""
        def text(n) -> str:   # a loop, not recursion: `arg.a.a.a...` may be any length
            parts = []
            while kind(n) != "name":
                k = kind(n)
                if k == "member":
                    parts.append(f".{n.children[1]}")
                elif k == "index":
                    idx = self._scalar(self.rvalue(n.children[1]))
                    if not isinstance(idx, ir.Const):
                        raise Unsupported(n, "argument struct indexed by a variable")
                    parts.append(f"[{idx.value}]")
                else:
                    raise Unsupported(n, "argument struct expression")
                n = n.children[0]
            return str(n.children[0]) + "".join(reversed(parts))
        name = text(node)
        # TVM's Metal argument struct holds each scalar as `arg.NAME[0]`: call it NAME.
        root, _, rest = name.partition(".")
        if rest.endswith("[0]") and "." not in rest and rest.count("[") == 1:
            name = rest[:-3]
        elif rest and "." not in rest and "[" not in rest:
            name = rest
        if name not in self.kernel.params:
            self.kernel.params.append(name)
        return Scalar(ir.Param(name), "int")

    def expr_member(self, node):
        ptr = self.struct_member_pointer(node)
        if ptr is not None:
            return self._member_value(ptr, node)
        ptr = self._param_struct_pointer(node)
        if ptr is not None:
            return ptr
        base = self.rvalue_or_ref(node.children[0]) if kind(node.children[0]) in ("name", "member") else None
        if isinstance(base, LocalStruct):
            ty = self._local_member_type(base, node)
            path = f"{base.name}.{node.children[1]}"
            return LocalStruct(path, ty) if ty in self.struct_defs else Scalar(ir.Var(path), ty)
        if self._root_is_param_struct(node):
            return self._param_path(node)
        base = self.rvalue_or_ref(node.children[0])
        field = str(node.children[1])
        if isinstance(base, BuiltinVec):
            if field not in ("x", "y", "z"):
                raise Unsupported(node, f"member '.{field}' of a builtin index vector (it has .x, .y, .z)")
            return Scalar(ir.Builtin(f"{base.prefix}.{field}"), "uint")
        if isinstance(base, ParamStruct):
            return self._param_path(node)
        comp = COMPONENTS.get(field)
        if isinstance(base, LocalRef) and comp is not None:
            return Scalar(ir.Var(f"{base.name}.{comp}"), (vector_shape(base.ty) or ("int", 0))[0])
        if isinstance(base, Vector) and comp is not None and comp < len(base.comps):
            return Scalar(base.comps[comp], (vector_shape(base.ty) or ("int", 0))[0])
        raise Unsupported(node, f"member '.{field}'")

    def _member_pointer(self, base, node) -> Pointer | None:
        return None

    def struct_layout(self, name: str) -> tuple[dict[str, tuple[int, str, tuple[int, ...]]], int] | None:
        """A struct's data members, {name: (byte offset, type, array extents)}, and its size, with C's
        natural alignment; None for a name that is no struct of the file (or has a member of unknown
        size, a pointer: then its accesses stay unsupported rather than guessed)."""
        cache = self.__dict__.setdefault("_layouts", {})
        if name in cache:
            return cache[name]
        cache[name] = None   # a struct containing itself stays unknown
        item = self.struct_defs.get(name)
        if item is None:
            return None
        fields: dict[str, tuple[int, str, tuple[int, ...]]] = {}
        offset, align_all = 0, 1
        # Base classes first, each a subobject at its own aligned offset (the Itanium layout of a
        # base without virtual functions); a virtual base has a layout the analysis does not know.
        for base in (b for c in item.children if isinstance(c, Tree) and kind(c) == "base_clause"
                     for b in c.children if isinstance(b, Tree)):
            names = [c for c in base.children if isinstance(c, Token)]
            if any(c.type == "VIRTUAL" for c in names):
                return None
            inner = self.struct_layout(str(names[-1]))
            if inner is None:
                return None
            offset = -(-offset // 4) * 4
            for field, (off, ty, dims) in inner[0].items():
                fields.setdefault(field, (offset + off, ty, dims))   # a derived member hides it below
            offset += inner[1]
            align_all = max(align_all, 4)
        for f in item.children:
            if not (isinstance(f, Tree) and kind(f) == "field_decl"):
                continue
            for d, ty in self.declarators(f):
                if ty.ptr or ty.ref:
                    return None
                inner = self.struct_layout(ty.base) if size_of(ty.base) is None else None
                size = size_of(ty.base) or (inner[1] if inner else None)
                if size is None:
                    return None
                # a scalar or vector aligns to its size (float3, 12 bytes, to its element's 4)
                align = 4 if inner is not None or size not in (1, 2, 4, 8, 16) else size
                dims = []
                for dim in (c for c in d.children if isinstance(c, Tree) and kind(c) == "array_dim"):
                    n = self._scalar(self.rvalue(dim.children[0])) if dim.children[0] is not None else None
                    if not isinstance(n, ir.Const):
                        return None
                    dims.append(n.value)
                offset = -(-offset // align) * align
                fields[str(d.children[0])] = (offset, ty.base, tuple(dims))
                total = size
                for n in dims:
                    total *= n
                offset += total
                align_all = max(align_all, align)
        cache[name] = (fields, -(-offset // align_all) * align_all)
        return cache[name]

    def struct_leaves(self, struct: str, prefix: str = "", offset: int = 0):
        """(member path, byte offset, type) of every scalar or vector member, nested ones flattened;
        array members are left out (a local copy of one is not modelled: see copy_struct)."""
        fields, _ = self.struct_layout(struct)
        for field, (off, ty, dims) in fields.items():
            if dims:
                yield f"{prefix}{field}", offset + off, None
            elif ty in self.struct_defs:
                yield from self.struct_leaves(ty, f"{prefix}{field}.", offset + off)
            else:
                yield f"{prefix}{field}", offset + off, ty

    def struct_source(self, node):
        """What a struct value is copied from: a LocalStruct, or the Pointer to a struct in memory."""
        if isinstance(node, Tree) and kind(node) == "name":
            val = self.lookup(str(node.children[0]), node)
            if isinstance(val, LocalStruct):
                return val
        if isinstance(node, Tree) and kind(node) in ("member", "arrow"):
            ptr = self.struct_member_pointer(node)
            if ptr is not None:
                return ptr
            base = self.rvalue_or_ref(node.children[0]) if kind(node) == "member" else None
            if isinstance(base, LocalStruct):
                return LocalStruct(f"{base.name}.{node.children[1]}", self._local_member_type(base, node))
        if isinstance(node, Tree) and kind(node) in ("index", "deref") and self._is_struct_place(node):
            return self.lvalue_pointer(node)
        raise Unsupported(node, "struct value that is not a variable or an element in memory")

    def copy_struct(self, dst, src_node, span) -> list[ir.Stmt]:
        """`dst = src` for structs, member by member (reads and writes of each member)."""
        src = self.struct_source(src_node)
        struct = dst.ty if isinstance(dst, LocalStruct) else dst.elem
        if (src.ty if isinstance(src, LocalStruct) else src.elem) != struct:
            raise Unsupported(src_node, f"copy of a struct of another type into '{struct}'")
        out: list[ir.Stmt] = []
        for path, off, ty in self.struct_leaves(struct):
            if ty is None:
                raise Unsupported(src_node, f"copy of struct '{struct}', which has an array member '{path}'")
            if isinstance(src, LocalStruct):
                val = Scalar(ir.Var(f"{src.name}.{path}"), ty)
            else:
                val = self.load(Pointer(src.buffer, src.space, ty, _add(src.offset, ir.Const(off))), span)
            if vector_shape(ty):
                raise Unsupported(src_node, f"copy of struct '{struct}', which has a vector member '{path}'")
            if isinstance(dst, LocalStruct):
                out.append(ir.Assign(f"{dst.name}.{path}", self._scalar(val), span))
            else:
                out.append(self._access_stmt(Pointer(dst.buffer, dst.space, ty, _add(dst.offset, ir.Const(off))),
                                             True, val, span))
        return out

    def _struct_target(self, target):
        """The struct a whole-struct assignment writes (a local struct, or a struct element in
        memory whose members are all scalars), or None for any other assignment."""
        if isinstance(target, Tree) and kind(target) == "name":
            val = self.lookup(str(target.children[0]), target)
            return val if isinstance(val, LocalStruct) else None
        if isinstance(target, Tree) and kind(target) in ("index", "deref") and self._is_struct_place(target):
            struct = self._root_elem(target)
            if struct in self.struct_defs and self.struct_layout(struct) is not None and all(
                    ty is not None and not vector_shape(ty) for _, _, ty in self.struct_leaves(struct)):
                ptr = self.lvalue_pointer(target)
                return ptr if ptr.elem == struct else None
        return None

    def _local_member_type(self, base: LocalStruct, node) -> str:
        fields, _ = self.struct_layout(base.ty)
        field = str(node.children[1])
        if field not in fields:
            raise Unsupported(node, f"'{field}', which is no data member of struct '{base.ty}'")
        off, ty, dims = fields[field]
        if dims:
            raise Unsupported(node, f"array member '{field}' of a local struct")
        return ty

    def elem_size(self, ty: str) -> int | None:
        """Bytes of one element of type `ty`: a scalar, vector or struct of the file."""
        size = size_of(ty)
        if size is None and ty in self.struct_defs:
            layout = self.struct_layout(ty)
            size = layout[1] if layout else None
        return size

    def _is_struct_place(self, node) -> bool:
        """Whether `node` is an element of memory holding a struct of the file (`p[i]`, `*p`,
        `p[i].inner`, `p->inner`), judged from the names alone so that nothing is lowered twice."""
        while isinstance(node, Tree) and kind(node) in ("index", "deref", "member", "arrow"):
            node = node.children[-1] if kind(node) == "deref" else node.children[0]
        if not (isinstance(node, Tree) and kind(node) == "name" and self.struct_defs):
            return False
        val = self.lookup(str(node.children[0]), node)
        return isinstance(val, Pointer) and val.elem in self.struct_defs

    def struct_member_pointer(self, node) -> Pointer | None:
        """`p[i].f`, `p->f`, `(*p).f`, `p[i].a.b`: the member's place in memory, or None when the
        node is no member of a struct in memory."""
        if kind(node) not in ("member", "arrow") or not self._is_struct_place(node.children[0]):
            return None
        base_node, field = node.children[0], str(node.children[1])
        if kind(node) == "arrow":
            ptr = self.rvalue(base_node)
        elif kind(base_node) in ("member", "arrow"):
            ptr = self.struct_member_pointer(base_node)
        else:
            ptr = self.lvalue_pointer(base_node)
        if not isinstance(ptr, Pointer) or ptr.inner:
            return None
        layout = self.struct_layout(ptr.elem)
        if layout is None:
            raise Unsupported(node, f"member '{field}' of struct '{ptr.elem}' (a member of unknown size)")
        if field not in layout[0]:
            raise Unsupported(node, f"'{field}', which is no data member of struct '{ptr.elem}'")
        offset, ty, dims = layout[0][field]
        return Pointer(ptr.buffer, ptr.space, ty, _add(ptr.offset, ir.Const(offset)), dims[1:] if dims else ())

    def _member_value(self, ptr: Pointer, node) -> Value:
        layout = self.struct_layout(self._struct_of(node))
        dims = layout[0][str(node.children[1])][2] if layout else ()
        if dims:   # an array member: its place, as an array's name is
            return ptr
        if ptr.elem in self.struct_defs:
            raise Unsupported(node, f"a whole struct '{ptr.elem}' used as a value")
        return self.load(ptr, self.span(node))

    def _struct_of(self, node) -> str:
        base = node.children[0]
        ptr = self.rvalue(base) if kind(node) == "arrow" else None
        if isinstance(ptr, Pointer):
            return ptr.elem
        inner = self.struct_member_pointer(base) if kind(base) in ("member", "arrow") else None
        return inner.elem if inner is not None else self._root_elem(base)

    def _root_elem(self, node) -> str:
        while isinstance(node, Tree) and kind(node) in ("index", "deref"):
            node = node.children[-1] if kind(node) == "deref" else node.children[0]
        val = self.lookup(str(node.children[0]), node)
        return val.elem if isinstance(val, Pointer) else ""

    def expr_arrow(self, node):
        ptr = self.struct_member_pointer(node)
        if ptr is not None:
            return self._member_value(ptr, node)
        raise Unsupported(node, "'->' member access")

    def expr_pre_incdec(self, node):
        raise Unsupported(node, "'++'/'--' inside an expression")

    expr_post_incdec = expr_pre_incdec

    def expr_assign(self, node):
        """`s[t] = sum = sum + s[t + k]`, `a = b = 0`: the inner assignment is done first (a pending
        statement, in evaluation order) and its value is what the target then holds."""
        target, op, value = node.children
        op = str(op)
        rhs = self.rvalue(value)
        if op != "=":
            rhs = self._binop(op[:-1], self.rvalue(target), rhs, node)
        self.pending.extend(self.store(target, rhs, self.span(node)))
        if kind(target) == "name" and isinstance(self.lookup(str(target.children[0]), target), LocalRef):
            # a local: read it back (the value may refer to the variable's old value, `i = i + 1`)
            return self.rvalue(target)
        return rhs
