"""Vector lanes of the clang lowering that are not a constant lane of a local: a lane chosen by a
variable (a select over the lanes) and lanes of a vector in memory stored one by one. Mixed into
ClangLowering."""

from __future__ import annotations

from dataclasses import replace

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import Pointer, Scalar, Value, _add, const_int
from analyzer.frontend.clang.cursors import CK, strip
from analyzer.frontend.opencl import _swizzle
from analyzer.frontend.types import vector_shape


class ClangLanes:
    """Variable lanes and lanes of vectors in memory; mixed into ClangLowering."""

    def _lane(self, c, idx: ir.Expr, lanes: list) -> ir.Expr:
        """Lane `idx` of a vector's lanes: the lane itself for a constant; for a variable, the lane it
        selects (`i == 0 ? v.0 : i == 1 ? v.1 : ...`; past the last lane, which Metal and OpenCL leave
        undefined, a value of its own)."""
        k = const_int(idx)
        if k is not None:
            if not 0 <= k < len(lanes):
                raise Unsupported(c, f"lane {k} of a {len(lanes)}-lane vector")
            return lanes[k]
        out: ir.Expr = self.opaque("a vector lane past the last")
        for i in reversed(range(len(lanes))):
            out = ir.Select(ir.BinOp("==", idx, ir.Const(i)), lanes[i], out)
        return out

    def lane_stores(self, vec_c, field: str, val: Value, span) -> list[ir.Stmt] | None:
        """`s.v.x = a` (or `.xy`) where `s.v` is a vector in memory (a member of a private struct
        holding an array, of a union, of a buffer's element): a store of each lane's own bytes; None
        where the vector is not in memory."""
        if strip(vec_c).kind != CK.MEMBER_REF_EXPR:
            return None
        try:
            vec = self.place(vec_c)
        except Unsupported:
            return None
        shape = vector_shape(vec.elem) if isinstance(vec, Pointer) else None
        lanes = _swizzle(field, shape[1]) if shape else None
        size = self.size(shape[0]) if shape else None
        if not lanes or not size:
            return None
        comps = self._components(val, len(lanes)) if len(lanes) > 1 else (self._scalar(val),)
        return [self._access_stmt(replace(vec, elem=shape[0], inner=(), offset=_add(vec.offset, ir.Const(i * size)),
                                          bounds=(), shape_at=None), True, Scalar(x, shape[0]), span)
                for i, x in zip(lanes, comps)]
