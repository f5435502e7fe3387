"""CUDA's Tensor Core fragments (`nvcuda::wmma`, the bundled <mma.h>) in the clang lowering.

A fragment is a register-only value: `fill_fragment`, `mma_sync` and `load_matrix_sync` give its
elements unknown values (they live in the fragment's private buffer, so a later `frag.x[i]` reads
an unknown). `load_matrix_sync(frag, p, ldm[, layout])` reads and `store_matrix_sync(p, frag, ldm,
layout)` writes the fragment's rows x cols tile of memory: element (r, c) at `p[r * ldm + c]`
(row-major) or `p[c * ldm + r]` (column-major). The warp's 32 lanes split the tile's elements;
which lane moves which element is the hardware's and unspecified, so kernelrace assumes a split:
an accumulator's elements in runs (lane l: elements E*l .. E*l + E - 1, E = rows*cols/32), a
matrix_a's or matrix_b's strided (lane l: l, l + 32, ...). Between warps the accesses are exact
(a warp touches the whole tile); inside a warp, a store and a load of one accumulator type and
layout are taken to move each element by the same lane, any other pair by different lanes (so
reading back another fragment kind without `__syncwarp()` is a race inside the warp).
Sub-byte precisions (u4, s4, b1) and `bmma_sync` make the kernel unknown."""

from __future__ import annotations

import re
from dataclasses import replace

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import LocalStruct, Pointer, Scalar, Value, _add, _mul
from analyzer.frontend.clang.cursors import CK, TK, canonical, children, strip, template_args
from analyzer.frontend.clang.dependent import overloaded_count, overloaded_decl

WMMA_OPS = frozenset({"load_matrix_sync", "store_matrix_sync", "fill_fragment", "mma_sync", "bmma_sync"})
_USES = ("matrix_a", "matrix_b", "accumulator")


class ClangWmma:
    """Tensor Core fragments; mixed into ClangLowering."""

    def wmma_call(self, c, fn, ref, kids, args):
        """(function, arguments) of a call of the bundled header's wmma functions, resolved or (in
        a template, on arguments of dependent types) an overloaded name; None for any other call."""
        if ref is None and kids and strip(kids[0]).kind == CK.DECL_REF_EXPR:
            over = [g for g in children(strip(kids[0])) if g.kind == CK.OVERLOADED_DECL_REF]
            if over and over[0].spelling in WMMA_OPS and overloaded_count(over[0]):
                ref, fn, args = overloaded_decl(over[0], 0), over[0].spelling, kids[1:]
        parent = ref.semantic_parent if ref is not None else None
        if fn in WMMA_OPS and parent is not None and parent.spelling == "wmma" and self.in_headers(ref):
            return fn, args
        return None

    def dependent_fragment(self, t) -> bool:
        """Whether a type is a fragment of the bundled header's whose arguments a template gives."""
        if canonical(t).kind not in (TK.UNEXPOSED, TK.DEPENDENT) or "fragment<" not in t.spelling:
            return False
        decl = canonical(t).get_declaration()
        parent = decl.semantic_parent if decl is not None and decl.kind != CK.NO_DECL_FOUND else None
        return parent is not None and parent.spelling == "wmma" and self.in_headers(decl)

    def declare_fragment(self, d) -> None:
        """A local fragment of a template's type: a private buffer of this lane's elements."""
        use, rows, cols, elem, _ = self._fragment_shape(d, d)
        ty = self._storage_type(elem)
        size = self.size(ty)
        if not size:
            raise Unsupported(d, f"a Tensor Core fragment of elements of an unknown size ('{elem}')")
        name = self.fresh_var(d.spelling)
        n = self._per_lane(rows, cols)[1] * size
        self.kernel.buffers[name] = ir.Buffer(name, ir.PRIVATE, ty, size, size_bytes=n)
        self.scopes[-1][d.hash] = Pointer(name, ir.PRIVATE, ty, ir.Const(0))

    def fragment_lanes(self, d) -> tuple[str, int]:
        """An array of fragments of a template's type: its element type, and each fragment's lane
        elements, a row of the array (at most 16 where the shape is symbolic, as `_per_lane` bounds)."""
        _, rows, cols, elem, _ = self._fragment_shape(d, d)
        ty = self._storage_type(elem)
        if not self.size(ty):
            raise Unsupported(d, f"a Tensor Core fragment of elements of an unknown size ('{elem}')")
        return ty, self._per_lane(rows, cols)[1]

    def _storage_type(self, elem: str) -> str:
        elem = re.sub(r"\b(const|volatile)\b", "", elem).strip()
        if elem.endswith("tf32"):
            return "float"
        bound = self.template_types.get(elem)
        return bound if bound is not None else {"__half": "half", "_Float16": "half", "nv_bfloat16": "bfloat",
                                                 "__nv_bfloat16": "bfloat"}.get(elem, elem)

    def _fragment_shape(self, arg, c) -> tuple[str, ir.Expr, ir.Expr, str, str]:
        """(use, rows, cols, element type argument, layout argument) of the fragment an argument
        names; a template's parameter in the shape is its binding or its symbolic parameter."""
        t = strip(arg).type if arg.kind != CK.VAR_DECL else arg.type
        args = template_args(canonical(t).spelling, "fragment<")
        if args is None or len(args) < 5:
            raise Unsupported(c, f"a Tensor Core fragment of a type not read ('{t.spelling}')")
        use = next((u for u in _USES if args[0].endswith(u)), None)
        dims = [self._shape_value(a, i, arg) for i, a in enumerate(args[1:4])]
        if use is None or any(d is None for d in dims):
            raise Unsupported(c, f"a Tensor Core fragment of a shape not read ('{t.spelling}')")
        m, n, k = dims
        rows, cols = {"matrix_a": (m, k), "matrix_b": (k, n), "accumulator": (m, n)}[use]
        if isinstance(rows, ir.Const) and isinstance(cols, ir.Const) and (
                rows.value * cols.value % 32 or rows.value * cols.value <= 0):
            raise Unsupported(c, f"a Tensor Core fragment of {rows.value} x {cols.value} elements")
        sugar = template_args(t.spelling, "fragment<")
        elem = sugar[4] if sugar is not None and len(sugar) == len(args) else args[4]   # (`T`, not its index)
        if re.search(r"\b(u4|s4|b1)\b", elem):
            raise Unsupported(c, f"a Tensor Core fragment of sub-byte precision ('{elem}')")
        return use, rows, cols, elem, args[5] if len(args) > 5 else "void"

    def _shape_value(self, text: str, i: int, arg) -> ir.Expr | None:
        """The i-th dimension of a fragment's canonical type: a number, or a template's parameter
        (`value-parameter-0-1`), read from the declaration's i-th argument expression."""
        if re.fullmatch(r"\d+", text):
            return ir.Const(int(text))
        decl = arg
        while decl is not None and decl.kind != CK.VAR_DECL:
            s = strip(decl)
            if s.kind == CK.DECL_REF_EXPR:
                decl = s.referenced
            elif s.kind == CK.ARRAY_SUBSCRIPT_EXPR and children(s):
                decl = children(s)[0]
            else:
                decl = None
        if decl is None:
            return None
        exprs = [k for k in children(decl) if k.kind.is_expression()]
        ref = strip(exprs[i]) if i < len(exprs) else None
        if ref is None or ref.kind != CK.DECL_REF_EXPR or ref.referenced is None or \
                ref.referenced.kind != CK.TEMPLATE_NON_TYPE_PARAMETER:
            return None
        bound = self.template_values.get(ref.spelling)
        if isinstance(bound, Scalar) and isinstance(bound.expr, (ir.Const, ir.Param)):
            return bound.expr
        return None

    @staticmethod
    def _per_lane(rows: ir.Expr, cols: ir.Expr) -> tuple[ir.Expr, int]:
        """This lane's share of a tile, and a constant bound on it: every Tensor Core shape has at
        most 16 elements a lane (m32n8k16's and m8n32k16's 32 x 16 operand)."""
        if isinstance(rows, ir.Const) and isinstance(cols, ir.Const):
            n = rows.value * cols.value // 32
            return ir.Const(n), n
        return ir.BinOp("/", ir.BinOp("*", rows, cols), ir.Const(32)), 16

    def _wmma(self, fn, args, c) -> Value:
        if fn == "bmma_sync":
            raise Unsupported(c, "bmma_sync (one-bit Tensor Core products)")
        span = self.span(c)
        if fn in ("fill_fragment", "mma_sync"):
            if fn == "mma_sync":
                for a in args[1:4]:
                    self._fragment_shape(a, c)
            if fn == "fill_fragment":
                self.rvalue(args[-1])   # (the value: read for its effects, the registers unknown)
            self._unknown_fragment(args[0], fn, c, span)
            return Scalar(ir.Const(0), "int")
        store = fn == "store_matrix_sync"
        if len(args) < 3 or store and len(args) < 4:
            raise Unsupported(c, f"{fn} with {len(args)} arguments")
        frag, mem = (args[1], args[0]) if store else (args[0], args[1])
        use, rows, cols, _, layout = self._fragment_shape(frag, c)
        ptr = self.rvalue(mem)
        if not isinstance(ptr, Pointer):
            raise Unsupported(c, f"{fn} through a non-pointer")
        ldm = self._scalar(self.rvalue(args[2]))
        if len(args) > 3:
            text = " ".join(self.source.text(args[3]).split())
            if text.endswith("mem_row_major"):
                col_major = False
            elif text.endswith("mem_col_major"):
                col_major = True
            else:
                v = self.int_value(args[3])
                if v not in (0, 1):
                    raise Unsupported(args[3], f"{fn} with a layout that is not a constant")
                col_major = v == 1
        elif use == "accumulator":
            raise Unsupported(c, f"{fn} of an accumulator without a layout")
        else:
            col_major = layout.endswith("col_major")
        per_lane, _ = self._per_lane(rows, cols)
        k = self.fresh_var(f"{fn}.k")
        kv = ir.Var(k)
        lane = ir.Builtin("lane")
        e = _add(ir.BinOp("*", lane, per_lane), kv) if use == "accumulator" else _add(_mul(kv, 32), lane)
        r, col = ir.BinOp("/", e, cols), ir.BinOp("%", e, cols)
        index = _add(ir.BinOp("*", col, ldm), r) if col_major else _add(ir.BinOp("*", r, ldm), col)
        at = self._binop("+", ptr, Scalar(index, "long"), c)
        # (a value of this lane's registers: never taken to equal another thread's, of this block or another)
        value = Scalar(self.opaque("a Tensor Core fragment's element"), at.elem) if store else None
        access = self._access_stmt(at, store, value, span)
        out: list[ir.Stmt] = [ir.Assign(k, ir.Const(0), span),
                              ir.Loop([], ir.BinOp("<", kv, per_lane),
                                      [ir.Assign(k, ir.BinOp("+", kv, ir.Const(1)), span)], [access], span,
                                      next(self.loop_ids))]
        self.pending.extend(out)
        if not store:
            self._unknown_fragment(frag, fn, c, span)
        return Scalar(ir.Const(0), "int")

    def _unknown_fragment(self, arg, fn, c, span) -> None:
        """The fragment's elements (its private buffer) take unknown values."""
        self._fragment_shape(arg, c)
        target = self.rvalue(arg)
        if isinstance(target, LocalStruct):
            target = self.address_of(strip(arg))
        if not isinstance(target, Pointer) or target.space != ir.PRIVATE:
            raise Unsupported(c, f"{fn} of a fragment that is no local variable or element of a local array")
        size = self.size(target.elem)
        if not self._is_struct(target.elem):   # (a fragment of a template's type: its elements)
            use, rows, cols, elem, _ = self._fragment_shape(arg, c)
            size = self._per_lane(rows, cols)[1] * (self.size(self._storage_type(elem)) or 0)
        if not size:
            raise Unsupported(c, f"{fn} of a fragment of a size clang does not know")
        k = self.fresh_var(f"{fn}.byte")
        kv = ir.Var(k)
        byte = replace(target, elem="char", offset=_add(target.offset, kv), inner=(), bounds=(), row=None,
                       shape_at=None)
        write = self._access_stmt(byte, True, Scalar(self.opaque(f"{fn} result"), "char"), span)
        self.pending.extend([ir.Assign(k, ir.Const(0), span),
                             ir.Loop([], ir.BinOp("<", kv, ir.Const(size)), [ir.Assign(k, ir.BinOp("+", kv, ir.Const(1)),
                                                                                         span)],
                                     [write], span, next(self.loop_ids))])
