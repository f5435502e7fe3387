"""Arrays of pointers in private memory, in the clang lowering: mlx's conv input loaders hold
`const device T* src[n_rows]`, set one row at a time in the constructor (`src[i] = src_ + ...`),
advanced in `next()` (`src[i] += jump`) and read as `src[i][j]`. A pointer is a value of the lowering
(a buffer and a byte offset), never a number in memory, so such an array is held as its elements'
byte offsets, in a private buffer of `long`s of its own (`NAME.ptr`: private memory's values are
followed exactly, through loops too), all into the one buffer the first store names. A store of a
pointer into another buffer, or of null, is `unknown`, and so is a read before any store (a pointer
of unknown origin). An element never set reads an unknown offset into that buffer (dereferencing it
is undefined in every dialect). Mixed into ClangLowering ahead of the expressions and stores."""

from __future__ import annotations

from clang.cindex import StorageClass

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import Pointer, Scalar, Value, const_int
from analyzer.frontend.clang.cursors import CK, TK, canonical, children, strip
from analyzer.frontend.clang.symbolic_dims import scaled

ARRAY = "pointer-array"
MAX_ELEMENTS = 64   # (a larger array of pointers is not followed)


class ClangPointerArrays:
    """Elements of local (or member) arrays of pointers; mixed into ClangLowering."""

    def _pointer_array(self, c):
        """For `a[i]` of a pointer type whose base is an array of pointers in private memory at a
        constant place: (the binding key, its extent, the index); else None."""
        if c.kind != CK.ARRAY_SUBSCRIPT_EXPR or canonical(c.type).kind != TK.POINTER:
            return None
        base_c, idx_c = children(c)
        t = self._array_type(strip(base_c))
        if t.kind != TK.CONSTANTARRAY or canonical(t.element_type).kind != TK.POINTER:
            return None
        base = self.rvalue(base_c)
        # (a Metal or OpenCL function's `threadgroup T* rows[2]` is one a thread, whatever space the
        # lowering gave it after its pointees'; CUDA's `__shared__ T* rows[2]` is one a block)
        sb = strip(base_c)
        local = self.lang in ("metal", "opencl") and sb.kind == CK.DECL_REF_EXPR and sb.referenced is not None \
            and sb.referenced.kind == CK.VAR_DECL and sb.referenced.storage_class != StorageClass.STATIC
        at = const_int(base.offset) if isinstance(base, Pointer) and (base.space == ir.PRIVATE or local) else None
        if at is None:
            raise Unsupported(c, "an array of pointers that is not a thread's own at a fixed place")
        if t.element_count > MAX_ELEMENTS:
            raise Unsupported(c, f"an array of {t.element_count} pointers")
        return (ARRAY, base.buffer, at), t.element_count, self.cond(idx_c)

    def _array_type(self, sb):
        """The base's array type; a member's in a class template's body (where `T* src[n_rows]` is
        dependent) as the object's instantiated record has it."""
        t = canonical(sb.type)
        if t.kind == TK.DEPENDENTSIZEDARRAY and sb.kind == CK.MEMBER_REF_EXPR and sb.referenced is not None \
                and sb.referenced.kind == CK.FIELD_DECL:
            kids = children(sb)
            obj = self.this_val if not kids or strip(kids[0]).kind == CK.CXX_THIS_EXPR else None
            if isinstance(obj, Pointer):
                return self._field_type(obj.elem, sb.referenced)
        return t

    def _offsets(self, key, n: int, idx: ir.Expr) -> Pointer:
        """The place of element `idx`'s offset in the array's own private buffer of offsets."""
        name = f"{key[1]}.{key[2]}.ptr"
        if name not in self.kernel.buffers:
            self.kernel.buffers[name] = ir.Buffer(name, ir.PRIVATE, "long", 8 * n, size_bytes=8 * n)
        return Pointer(name, ir.PRIVATE, "long", scaled(idx, 8))

    def _subscript(self, c) -> Value:
        found = self._pointer_array(strip(c))
        if found is None:
            return super()._subscript(c)
        key, n, idx = found
        bound = self.scopes[0].get(key)
        if bound is None:
            return Pointer("?", ir.GLOBAL, self.note_type(c.type), ir.Const(0))
        offset = self._scalar(self.load(self._offsets(key, n, idx), self.span(c)))
        return Pointer(bound.buffer, bound.space, self.note_type(c.type), offset)

    def store(self, target_c, val: Value, span) -> list[ir.Stmt]:
        t = strip(target_c)
        found = self._pointer_array(t)
        if found is None:
            return super().store(target_c, val, span)
        key, n, idx = found
        if not isinstance(val, Pointer) or val.buffer == "?":
            raise Unsupported(t, "an array of pointers given a value that is not a known pointer")
        bound = self.scopes[0].get(key)
        if bound is None:
            self.scopes[0][key] = bound = Pointer(val.buffer, val.space, val.elem, ir.Const(0))
        elif (bound.buffer, bound.space) != (val.buffer, val.space):
            raise Unsupported(t, "an array of pointers into two buffers")
        k = const_int(idx)
        if k is not None and not 0 <= k < n:
            raise Unsupported(t, f"element {k} of an array of {n} pointers")
        return [self._access_stmt(self._offsets(key, n, idx), True, Scalar(val.offset, "long"), span)]
