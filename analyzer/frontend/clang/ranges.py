"""Range-for loops of the clang lowering, `for (auto r : table[i])` over an array of a size clang
knows: a counted loop whose variable is each element in turn. Mixed into ClangLowering."""

from __future__ import annotations

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import LocalRef, Pointer, SharedScalar, _add, _mul
from analyzer.frontend.clang.cursors import CK, TK, canonical, children


class ClangRanges:
    """Range-for over arrays; mixed into ClangLowering."""

    def _for_range(self, c) -> list[ir.Stmt]:
        """`for (auto r : table[i])` over an array of a size clang knows: a counted loop whose variable
        is each element in turn (a copy, or with `&` the element's place)."""
        kids = children(c)
        var_c, range_c, body_c = (kids[0], kids[-2], kids[-1]) if len(kids) >= 3 else (None, None, None)
        rt = canonical(range_c.type) if range_c is not None else None
        if var_c is None or var_c.kind != CK.VAR_DECL or rt.kind != TK.CONSTANTARRAY or rt.element_count <= 0:
            raise Unsupported(c, "range-for over something other than an array of a known size")
        arr = self.rvalue(range_c)
        if not isinstance(arr, Pointer):
            raise Unsupported(range_c, "range-for over an array not in memory")
        span = self.span(c)
        pre = self.flush([])
        var = self.fresh_var("range")
        size = canonical(rt.element_type).get_size()   # (a row of a 2-D table: the whole row)
        if size <= 0:
            raise Unsupported(range_c, "range-for over elements of a size clang does not know")
        elem = arr.index(ir.Var(var), _add(arr.offset, _mul(ir.Var(var), size)))
        self.scopes.append({})
        vt = canonical(var_c.type)
        row = canonical(rt.element_type).kind == TK.CONSTANTARRAY   # (a row of a 2-D table: its place)
        if vt.kind in (TK.LVALUEREFERENCE, TK.RVALUEREFERENCE):
            self.scopes[-1][var_c.hash] = elem if row or self._is_struct(elem.elem) else SharedScalar(elem)
            first = []
        elif row or self._is_struct(self.note_type(vt)):
            self.scopes.pop()
            raise Unsupported(var_c, "range-for variable that is a copy of a struct or an array")
        else:
            local = LocalRef(self.fresh_var(var_c.spelling), self.note_type(vt))
            self.scopes[-1][var_c.hash] = local
            first = self.flush(self._assign_local(local, self._convert(self.load(elem, span), local.ty), span))
        body = first + self.stmt(body_c)
        self.scopes.pop()
        return pre + [ir.Assign(var, ir.Const(0), span),
                      ir.Loop([], ir.BinOp("<", ir.Var(var), ir.Const(rt.element_count)),
                              [ir.Assign(var, ir.BinOp("+", ir.Var(var), ir.Const(1)), span)], body, span,
                              next(self.loop_ids))]
