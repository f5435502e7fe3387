"""Metal's matrices in the clang lowering. metal_stdlib declares `floatCxR`/`halfCxR` as structs of
their C columns (`__metal_float4x3`, Metal's size and layout: a 3-lane column as long as a 4-lane
one); the lowering holds a matrix as a vector of all those lanes, column after column
(types.matrix_shape), so that a load, a store or a copy is one of its bytes. What metal_stdlib only
declares is computed here: the constructors (columns, lanes, a diagonal, another matrix of the same
shape), `m[i]` (a column: of a matrix in memory, that column's bytes alone), and the operators
`m * v`, `v * m`, `m * n`, `m * s`, `m + n`, `m - n` and `transpose`, each lane the sum of products
it is. Anything else of a matrix is refused (the kernel `unknown`). Mixed into ClangLowering."""

from __future__ import annotations

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import LocalRef, Pointer, Scalar, Value, Vector, _add, const_int
from analyzer.frontend.clang.cursors import CK, TK, children, strip
from analyzer.frontend.types import matrix_shape, vector_shape

_INDEXED = (CK.ARRAY_SUBSCRIPT_EXPR, CK.UNARY_OPERATOR, CK.MEMBER_REF_EXPR)
_UNDEDUCED = (TK.AUTO, TK.DEPENDENT, TK.UNEXPOSED)


class ClangMetalMatrices:
    """Metal's matrix constructors, columns and products; mixed into ClangLowering."""

    def _matrix_of(self, c) -> tuple | None:
        return matrix_shape(self.note_type(c.type))

    def matrix_call(self, c, fn: str, args) -> Value | None:
        """A call of metal_stdlib's matrix functions, computed; None for any other call."""
        ref = c.referenced
        if ref is None or not self.in_headers(ref):
            return None
        own = ref.kind in (CK.CONSTRUCTOR, CK.CXX_METHOD) and matrix_shape(ref.semantic_parent.spelling or "")
        if not own and not (fn.startswith("operator") or fn == "transpose") or \
                not own and not any(self._matrix_of(x) for x in [c, *args]):
            return None
        if ref.kind == CK.CONSTRUCTOR:
            return self._matrix_built(c, self.note_type(c.type), args)
        if fn == "operator[]" and len(args) == 2:
            return self._matrix_column(c, args[0], args[1])
        if fn in ("operator*", "operator+", "operator-") and len(args) == 2:
            return self._matrix_op(c, fn[-1], self.rvalue(args[0]), self.rvalue(args[1]))
        if fn == "transpose" and len(args) == 1:
            m = self.rvalue(args[0])
            elem, cols, rows, _ = matrix_shape(m.ty)
            ty = self.note_type(c.type)
            return self._matrix_from(ty, [[self._entry(m, r, k) for r in range(cols)] for k in range(rows)])
        raise Unsupported(c, f"'{fn}' of a Metal matrix (not modelled)")

    def _binop(self, op: str, a: Value, b: Value, node) -> Value:
        if self.lang == "metal" and op in ("*", "+", "-") and any(
                isinstance(x, Vector) and matrix_shape(x.ty) for x in (a, b)):
            return self._matrix_op(node, op, a, b)   # (in a template, where clang resolves no operator)
        return super()._binop(op, a, b, node)

    def undeduced_local(self, d, t, ref: LocalRef, val) -> LocalRef | None:
        """A local declared `auto` in a template's pattern (its type left undeduced): `auto p = in + k`
        the pointer, bound as one declared so (None: nothing more to do); `auto w = p[k]` a local of the
        vector (a matrix) it holds; anything else `ref` as declared."""
        if t.kind not in _UNDEDUCED:
            return ref
        if isinstance(val, Pointer) and val.buffer != "?":
            self.scopes[-1][d.hash] = val
            return None
        if isinstance(val, Vector) and not vector_shape(ref.ty):
            return LocalRef(ref.name, val.ty)
        return ref

    # ---------- values ----------

    def _entry(self, m: Vector, col: int, row: int) -> ir.Expr:
        """Row `row` of column `col` of a matrix value."""
        return m.comps[col * matrix_shape(m.ty)[3] + row]

    def _matrix_from(self, ty: str, columns) -> Vector:
        """The matrix of these columns' entries (a 3-lane column's fourth lane 0)."""
        lanes = matrix_shape(ty)[3]
        comps: list[ir.Expr] = []
        for col in columns:
            comps.extend(col)
            comps.extend([ir.Const(0)] * (lanes - len(col)))
        return Vector(tuple(comps), ty)

    def _matrix_built(self, c, ty: str, args) -> Vector:
        """`float4x4(d)` (the diagonal d), `float4x4(c0, c1, c2, c3)` (columns), `float2x2(a, b, c, d)`
        (entries column after column), `float4x4(m)` (a matrix of the same shape, converted), or
        `float4x4()` (zeros)."""
        _, cols, rows, _ = matrix_shape(ty)
        vals = [self.rvalue(a) for a in args]
        if not vals:
            return self._matrix_from(ty, [[ir.Const(0)] * rows] * cols)
        if len(vals) == 1 and isinstance(vals[0], Vector) and matrix_shape(vals[0].ty):
            shape = matrix_shape(vals[0].ty)
            if shape[1:3] != (cols, rows):
                raise Unsupported(c, f"a {cols}x{rows} matrix built from a {shape[1]}x{shape[2]} one")
            return self._matrix_from(ty, [[self._entry(vals[0], k, r) for r in range(rows)] for k in range(cols)])
        if len(vals) == 1 and not isinstance(vals[0], Vector):
            d = self._scalar(vals[0])
            return self._matrix_from(ty, [[d if r == k else ir.Const(0) for r in range(rows)] for k in range(cols)])
        if len(vals) == cols and all(isinstance(v, Vector) and len(v.comps) == rows for v in vals):
            return self._matrix_from(ty, [list(v.comps) for v in vals])
        if len(vals) == cols * rows and not any(isinstance(v, Vector) for v in vals):
            flat = [self._scalar(v) for v in vals]
            return self._matrix_from(ty, [flat[k * rows:(k + 1) * rows] for k in range(cols)])
        raise Unsupported(c, f"a {cols}x{rows} matrix built from {len(vals)} values of these kinds")

    def _matrix_op(self, c, op: str, a: Value, b: Value) -> Value:
        """`a op b` where a or b is a matrix (also in a template, where clang leaves the operator
        unresolved: the result's type is the operands')."""
        ma = matrix_shape(a.ty) if isinstance(a, Vector) else None
        mb = matrix_shape(b.ty) if isinstance(b, Vector) else None
        elem = (ma or mb)[0]

        def mul(x: ir.Expr, y: ir.Expr) -> ir.Expr:
            return self._scalar(self._binop("*", Scalar(x, elem), Scalar(y, elem), c))

        def total(terms: list[ir.Expr]) -> ir.Expr:
            out = terms[0]
            for t in terms[1:]:
                out = self._scalar(self._binop("+", Scalar(out, elem), Scalar(t, elem), c))
            return out
        if ma and mb:
            if op in "+-":
                if ma != mb:
                    raise Unsupported(c, f"'operator{op}' of matrices of two shapes")
                return Vector(tuple(self._scalar(self._binop(op, Scalar(x, elem), Scalar(y, elem), c))
                                    for x, y in zip(a.comps, b.comps)), a.ty)
            _, ca, ra, _ = ma   # (ca x ra) * (cb x ca): column k of the product is a * b[k]
            if mb[2] != ca:
                raise Unsupported(c, f"a {ca}x{ra} matrix times a {mb[1]}x{mb[2]} one")
            return self._matrix_from(f"__metal_{elem}{mb[1]}x{ra}", [[total([mul(self._entry(a, j, r), self._entry(b, k, j)) for j in range(ca)])
                                           for r in range(ra)] for k in range(mb[1])])
        if op != "*":
            raise Unsupported(c, f"'operator{op}' of a Metal matrix and a value that is not one")
        if ma and isinstance(b, Vector):   # m * v: the columns weighted by v's lanes
            _, ca, ra, _ = ma
            if len(b.comps) != ca:
                raise Unsupported(c, f"a {ca}x{ra} matrix times a {len(b.comps)}-lane vector")
            return Vector(tuple(total([mul(self._entry(a, j, r), b.comps[j]) for j in range(ca)]) for r in range(ra)),
                          f"{elem}{ra}")
        if mb and isinstance(a, Vector):   # v * m: lane k is v's dot product with column k
            _, cb, rb, _ = mb
            if len(a.comps) != rb:
                raise Unsupported(c, f"a {len(a.comps)}-lane vector times a {cb}x{rb} matrix")
            return Vector(tuple(total([mul(a.comps[r], self._entry(b, k, r)) for r in range(rb)]) for k in range(cb)),
                          f"{elem}{cb}")
        m, s, shape = (a, b, ma) if ma else (b, a, mb)
        if not isinstance(s, Scalar):
            raise Unsupported(c, "a Metal matrix times a value that is neither a number nor a vector")
        s = self._scalar(s)
        return self._matrix_from(m.ty, [[mul(self._entry(m, k, r), s) for r in range(shape[2])] for k in range(shape[1])])

    # ---------- columns ----------

    def _matrix_column(self, c, obj_c, idx_c) -> Value:
        """`m[i]`: column i, of a matrix in memory its own bytes (a read of that column only)."""
        ptr = self._column_pointer(obj_c, idx_c, c)
        if ptr is not None:
            return self.load(ptr, self.span(c))
        return self.matrix_column_of(c, self.rvalue(obj_c), self.cond(idx_c))

    def matrix_column_of(self, c, m: Vector, idx: ir.Expr) -> Vector:
        """Column `idx` of a matrix value (a variable index selects among the columns)."""
        elem, cols, rows, lanes = matrix_shape(m.ty)
        return Vector(tuple(self._lane(c, idx, [m.comps[k * lanes + r] for k in range(cols)]) for r in range(rows)),
                      f"{elem}{rows}")

    def _column_pointer(self, obj_c, idx_c, c) -> Pointer | None:
        """The pointer to column i of a matrix in memory (`w[z][i]`, `p->m[i]`), None for a local one."""
        s = strip(obj_c)
        if s.kind not in _INDEXED and not (s.kind == CK.DECL_REF_EXPR and not isinstance(self.value(s), LocalRef)):
            return None
        at = self.place(s) if s.kind in _INDEXED else self.value(s)
        at = getattr(at, "ptr", at)
        if not isinstance(at, Pointer):
            return None
        elem, _, _, lanes = matrix_shape(at.elem)
        step = ir.BinOp("*", self.cond(idx_c), ir.Const(lanes * (self.size(elem) or 4)))
        return Pointer(at.buffer, at.space, self.note_type(c.type), _add(at.offset, step))

    def matrix_store(self, t, val: Value, span) -> list[ir.Stmt] | None:
        """`m[i] = v` and `m[i][r] = x` on a matrix; None for any other target."""
        lane_c, col_c = None, t
        column = self._column_target(t)
        if column is None and t.kind == CK.ARRAY_SUBSCRIPT_EXPR:
            base_c, lane_c = children(t)
            col_c = strip(base_c)
            column = self._column_target(col_c)
        if column is None:
            return None
        obj_c, idx_c = column
        ptr = self._column_pointer(obj_c, idx_c, col_c)
        if ptr is not None:
            if lane_c is None:
                return [self._access_stmt(ptr, True, val, span)]
            elem = vector_shape(ptr.elem)[0]
            step = ir.BinOp("*", self.cond(lane_c), ir.Const(self.size(elem) or 4))
            return [self._access_stmt(Pointer(ptr.buffer, ptr.space, elem, _add(ptr.offset, step)), True, val, span)]
        m = self.value(strip(obj_c))
        if not isinstance(m, LocalRef):
            raise Unsupported(t, "a column stored in a matrix that is neither a local nor in memory")
        _, cols, rows, lanes = matrix_shape(m.ty)
        new = (self._components(val, rows) if lane_c is None else None)
        idx, row = self.cond(idx_c), self.cond(lane_c) if lane_c is not None else None
        out = []
        for k in range(cols):
            for r in range(rows):
                here = ir.BinOp("==", idx, ir.Const(k))
                if row is not None:
                    here = ir.BinOp("&&", here, ir.BinOp("==", row, ir.Const(r)))
                x = new[r] if new is not None else self._scalar(val)
                name = f"{m.name}.{k * lanes + r}"
                hit = _known(here)
                if hit is False:
                    continue
                out.append(ir.Assign(name, x if hit else ir.Select(here, x, ir.Var(name)), span))
        return out


    def _column_target(self, t):
        """(the matrix, the index) of `m[i]`: metal_stdlib's operator[], or a subscript in a template
        of a local matrix; None for anything else."""
        if t.kind == CK.CALL_EXPR and t.spelling == "operator[]" and t.referenced is not None and \
                matrix_shape(t.referenced.semantic_parent.spelling or ""):
            return tuple(t.get_arguments())
        if t.kind == CK.ARRAY_SUBSCRIPT_EXPR:
            base_c, idx_c = children(t)
            if strip(base_c).kind == CK.DECL_REF_EXPR:
                base = self.value(strip(base_c))
                if isinstance(base, LocalRef) and matrix_shape(base.ty):
                    return base_c, idx_c
        return None


def _known(e: ir.Expr) -> bool | None:
    """A condition of constants decided (`2 == 1`), None where it depends on a variable."""
    if isinstance(e, ir.BinOp) and e.op == "&&":
        a, b = _known(e.a), _known(e.b)
        return False if False in (a, b) else (True if a and b else None)
    if isinstance(e, ir.BinOp) and e.op == "==":
        x, y = const_int(e.a), const_int(e.b)
        return None if x is None or y is None else x == y
    return None
