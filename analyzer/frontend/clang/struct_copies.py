"""A local struct given a value: from a constructor, an initializer list, a call that returns one
(inlined into it), another struct, or a builtin index vector (`auto b = block.dim_threads();`, `dim3 b
= blockDim;`: its members the launch's); a struct set from a call whose value is none is `unknown`,
never left unset."""

from __future__ import annotations

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import _add, BuiltinVec, LocalStruct, ParamStruct, Pointer, Scalar
from analyzer.frontend.clang.calls import _CUDA_BUILTINS
from analyzer.frontend.clang.cursors import CK, canonical, children, strip
from analyzer.frontend.types import vector_shape


class ClangStructCopies:
    """Struct values copied into locals; mixed into ClangLowering."""

    def copy_into(self, local, init, span) -> list[ir.Stmt]:
        """A local struct initialised (or a struct returned) from a value."""
        s = strip(init)
        if isinstance(local, LocalStruct) and isinstance(whole := self._index_vector(init), BuiltinVec):
            return self.index_vector_copy(local, whole, span)   # `dim3 b = blockDim;`
        if s.kind == CK.CALL_EXPR and s.referenced is not None and s.referenced.kind == CK.CONSTRUCTOR:
            args = list(s.get_arguments())
            if not args:
                return []
            if isinstance(local, (Pointer, LocalStruct)):
                built = self.construct_into(local, s, span)
                if built is not None:
                    return built
            if self.lang == "metal" and self.in_headers(s.referenced) and isinstance(local, LocalStruct) and \
                    not list(canonical(self.records[local.ty]).get_fields()):
                return []   # `simdgroup_float8x8 m(0)`: a value of no state here (metal.py)
            if len(args) == 1:
                return self.copy_into(local, args[0], span)
            if self.lang == "metal" and self.in_headers(s.referenced):
                return []   # metal_stdlib's `constexpr sampler s(filter::linear, ...)`: no state read here
        if s.kind == CK.CALL_EXPR and s.referenced is None and isinstance(local, Pointer):
            built = self.construct_dependent(local, s, span)
            if built is not None:
                return built
        if s.kind == CK.INIT_LIST_EXPR and isinstance(local, Pointer):
            raise Unsupported(init, f"initializer list of struct '{local.elem}', which holds an array")
        if s.kind == CK.INIT_LIST_EXPR:
            out = []
            record = self.records[local.ty]
            leaves = [x for x in self.struct_leaves(record)]
            vals = children(s)
            if len(vals) > len(leaves):
                raise Unsupported(init, "struct initializer with nested braces")
            pointers = dict(self.pointer_member_paths(record))
            for (path, _, ty), v in zip(leaves, vals):
                if ty is None:
                    raise Unsupported(init, "struct initializer of an array member")
                if path in pointers:
                    out.extend(self.set_member_pointer(f"{local.name}.{path}", pointers[path], self.rvalue(v), v))
                    continue
                out.append(ir.Assign(f"{local.name}.{path}", self._scalar(self.rvalue(v)), span))
            return out
        if s.kind == CK.CALL_EXPR and s.referenced is not None and s.referenced.kind != CK.CONSTRUCTOR:
            val = self.call(s, into=local)
            if isinstance(local, Pointer) and isinstance(val, Pointer) and val != local:
                return self.flush([]) + self.copy_elements(local, val, span)
            if isinstance(val, LocalStruct) and val is not local:
                return self.copy_struct_values(local, val, span)
            if isinstance(val, BuiltinVec) and isinstance(local, LocalStruct):
                return self.index_vector_copy(local, val, span)   # `auto b = block.dim_threads();`
            if val is None or val is local or isinstance(local, Pointer) and val == local:
                return []
            raise Unsupported(init, f"a struct '{getattr(local, 'ty', '')}' set from a call whose value is not one")
        lists = [k for k in children(s) if k.kind not in (CK.TYPE_REF, CK.TEMPLATE_REF)]
        if len(lists) == 1 and strip(lists[0]).kind == CK.INIT_LIST_EXPR:
            return self.copy_into(local, lists[0], span)   # `return Params{a, b};`
        src = self.struct_ref(init)
        return self.copy_struct_values(local, src, span, self.span(init))

    def index_vector_copy(self, local: LocalStruct, vec, span) -> list[ir.Stmt]:
        """A local `dim3`/`uint3` copied from a builtin index vector: its members are the launch's."""
        fields = [path for path, _, _ in self.struct_leaves(self.records[local.ty])]
        if fields != ["x", "y", "z"]:
            raise Unsupported(None, f"a struct '{local.ty}' set from a builtin index vector")
        return [ir.Assign(f"{local.name}.{f}", ir.Builtin(f"{vec.prefix}.{f}"), span) for f in fields]

    def copy_struct_values(self, dst, src, span, read_span=None) -> list[ir.Stmt]:
        """dst = src member by member; the reads are placed at the source expression."""
        struct = dst.ty if isinstance(dst, LocalStruct) else dst.elem
        if isinstance(dst, Pointer) and isinstance(src, Pointer) and self.holds_array(struct):
            return self.copy_elements(dst, src, span, read_span)
        out = []
        pointers = dict(self.pointer_member_paths(self.records[struct]))
        if pointers and isinstance(dst, LocalStruct):
            out.extend(self.copy_member_pointers(dst, src, None, span))
        for path, off, ty in self.struct_leaves(self.records[struct]):
            if path in pointers:
                # a pointer member: in memory its 8 bytes are read and written (a value of no meaning
                # here); a local's is the source's pointer (member_pointers.py)
                ty = "ulong"
                if isinstance(dst, LocalStruct) and not isinstance(src, Pointer):
                    continue
                if isinstance(dst, LocalStruct):
                    out.append(ir.Eval(self._scalar(self.load(Pointer(src.buffer, src.space, ty, _add(
                        src.offset, ir.Const(off))), read_span or span)), span))
                    continue
            if ty is None or vector_shape(ty) and isinstance(src, ParamStruct):
                raise Unsupported(None, f"copy of struct '{struct}', which has an array or vector member '{path}'")
            if path in pointers and not isinstance(src, Pointer):
                val = Scalar(self.opaque("a pointer's bits"), ty)
            elif isinstance(src, LocalStruct):
                val = Scalar(ir.Var(f"{src.name}.{path}"), ty)
            elif isinstance(src, ParamStruct):
                val = Scalar(ir.Param(self._field_param(src, path)), ty)
            else:
                val = self.load(Pointer(src.buffer, src.space, ty, _add(src.offset, ir.Const(off))), read_span or span)
            if isinstance(dst, LocalStruct):
                out.append(ir.Assign(f"{dst.name}.{path}", self._scalar(val), span))
            else:
                out.append(self._access_stmt(Pointer(dst.buffer, dst.space, ty, _add(dst.offset, ir.Const(off))), True, val,
                                             span))
        return out

    def _index_vector(self, a):
        """The builtin index vector an argument passes whole (`threadIdx`, `blockDim`), or None."""
        s = strip(a)
        while s.kind in (CK.CALL_EXPR, CK.UNEXPOSED_EXPR) and len(children(s)) == 1:
            s = strip(children(s)[0])   # (the conversion to `dim3` or `uint3`)
        if s.kind != CK.DECL_REF_EXPR or self.lang != "cuda" or s.spelling not in _CUDA_BUILTINS:
            return None
        v = self.value(s)
        return v if isinstance(v, BuiltinVec) else None
