"""The C library's `memset(p, v, n)`: each of the n bytes at p written with v's low byte, in a loop
over the bytes (one access site), so that a memset of memory other threads touch is checked as its
stores. Also where clang leaves the call unresolved inside a template (`memset(acc, 0,
sizeof(acc))` of an array of a template's type: a callee clang names only by its overloads)."""

from __future__ import annotations

from dataclasses import replace

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import Pointer, Scalar, SharedScalar, _add
from analyzer.frontend.clang.cursors import CK, children, strip
from analyzer.frontend.clang.dependent import overloaded_decl


class ClangMemset:
    """Mixed into ClangLowering."""

    def is_library_memset(self, fn: str, c, kids) -> bool:
        """Whether a call is the C library's memset (the bundled header's), resolved or not."""
        if c.referenced is not None:
            return fn == "memset" and self.in_headers(c.referenced)
        if fn not in ("", "memset") or not kids:
            return False
        callee = strip(kids[0])
        over = [k for k in children(callee) if k.kind == CK.OVERLOADED_DECL_REF] if callee.kind != \
            CK.OVERLOADED_DECL_REF else [callee]
        if len(over) != 1 or over[0].spelling != "memset":
            return False
        decl = overloaded_decl(over[0], 0)
        if decl is None:
            # no declaration in sight, the lookup left to the template's instantiation: nvcc's own
            # headers, which every CUDA file is compiled with, declare the C library's memset
            return self.lang == "cuda"
        return self.in_headers(decl)

    def memset_stmt(self, args, c) -> list[ir.Stmt]:
        dst_c, v_c, n_c = args
        dst = self.rvalue(dst_c)
        if isinstance(dst, SharedScalar):
            dst = dst.ptr
        if not isinstance(dst, Pointer) or dst.buffer == "?":
            raise Unsupported(c, "memset of something that is not memory or a local array")
        n = self._memset_size(dst, dst_c, n_c)
        span = self.span(c)
        byte = ir.BinOp("&", self.cond(v_c), ir.Const(255))
        k = self.fresh_var("memset.byte")
        kv = ir.Var(k)
        at = replace(dst, elem="char", offset=_add(dst.offset, kv), inner=(), bounds=(), row=None, shape_at=None)
        write = self._access_stmt(at, True, Scalar(byte, "char"), span)
        return self.flush([ir.Assign(k, ir.Const(0), span),
                           ir.Loop([], ir.BinOp("<", kv, n), [ir.Assign(k, ir.BinOp("+", kv, ir.Const(1)), span)],
                                   [write], span, next(self.loop_ids))])

    def _memset_size(self, dst: Pointer, dst_c, n_c) -> ir.Expr:
        """The bytes written: the size argument's value; `sizeof(a)` of the array written, whose
        type a template leaves open, the array's bytes where they are known."""
        s = strip(n_c)
        if s.kind == CK.CXX_UNARY_EXPR and not self.int_value(s):
            words = [t.spelling for t in s.get_tokens()]
            target = strip(dst_c)
            if words[:2] == ["sizeof", "("] and words[-1] == ")" and " ".join(words[2:-1]) == target.spelling:
                buf = self.kernel.buffers.get(dst.buffer)
                whole = isinstance(dst.offset, ir.Const) and dst.offset.value == 0
                if buf is not None and whole and buf.size_bytes is not None and self.size(buf.elem_type):
                    return ir.Const(buf.size_bytes)
                if buf is not None and whole and dst.space == ir.PRIVATE:
                    # a thread's own array of a type the template leaves open: no other thread sees
                    # it; its bytes, as many as it has, take the value
                    return self.opaque("the size of an array of a template's type")
                raise Unsupported(n_c, "memset of an array whose size in bytes a template leaves open")
        return self.cond(n_c)
