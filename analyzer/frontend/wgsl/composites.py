"""WGSL composite values: structs, arrays and matrices built, zeroed, indexed and combined
(mixed into KernelLowering). A struct is its members, an array or matrix its elements (a
matrix's are its columns); float arithmetic on matrices is uninterpreted lane by lane."""

from __future__ import annotations

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.wgsl.exprs import _float_lit, _lanes, _pick
from analyzer.frontend.wgsl.types import F32, ArrayVal, Local, MatPlace, Scalar, StructVal, Ty, Vec


class CompositeLowering:
    """Struct, array and matrix values, mixed into KernelLowering."""

    def _array_element(self, arr: ArrayVal, idx: ir.Expr, node):
        """An element of an array value: itself at a constant index; at another, a chain of selects
        (up to 16 elements) or the value of an uninterpreted function of the index (equal indices,
        equal elements; nothing else assumed)."""
        if isinstance(idx, ir.Const):
            if not 0 <= idx.value < len(arr.elems):
                raise Unsupported(node, f"index {idx.value} outside an array value of {len(arr.elems)} elements")
            return arr.elems[idx.value]
        elem = arr.ty.elem
        if len(arr.elems) <= 16 and all(isinstance(e, (Scalar, Vec)) for e in arr.elems):
            # A short table: a chain of selects, which the interpreter computes too.
            if all(isinstance(e, Scalar) for e in arr.elems):
                return Scalar(_pick([e.expr for e in arr.elems], idx), elem)
            if all(isinstance(e, Vec) for e in arr.elems):
                return Vec(tuple(_pick([e.comps[i] for e in arr.elems], idx) for i in range(elem.n)), elem)
        if elem is not None and elem.kind == "scalar":
            return Scalar(ir.Call(f"array_value{arr.key}", (idx,)), elem)
        if elem is not None and elem.kind == "vec":
            return Vec(tuple(ir.Call(f"array_value{arr.key}.{i}", (idx,)) for i in range(elem.n)), elem)
        raise Unsupported(node, f"a non-constant index into an array value of {elem}")

    def _matrix_op(self, op: str, a, b, node):
        """Matrix arithmetic (`m * v`, `v * m`, `m * m`, `s * m`, `m + m`): float math, so each
        lane of the result is an uninterpreted function of every lane of the operands."""
        mats = [x for x in (a, b) if isinstance(x, ArrayVal)]
        if any(m.ty.kind != "mat" for m in mats) or op not in ("+", "-", "*"):
            raise Unsupported(node, f"operands of '{op}'")
        flat = tuple(c for x in (a, b) for c in _lanes(x))
        ma, mb = (a if isinstance(a, ArrayVal) else None), (b if isinstance(b, ArrayVal) else None)
        if op == "*" and ma is not None and isinstance(b, Vec):          # columns combined: rows lanes
            shape = Ty("vec", elem=ma.ty.elem.elem, n=ma.ty.elem.n)
        elif op == "*" and mb is not None and isinstance(a, Vec):        # one lane per column
            shape = Ty("vec", elem=mb.ty.elem.elem, n=mb.ty.n)
        elif op == "*" and ma is not None and mb is not None:
            shape = Ty("mat", elem=ma.ty.elem, n=mb.ty.n)
        else:
            shape = (ma or mb).ty
        key = next(self.opaque_ids)
        if shape.kind == "vec":
            return Vec(tuple(ir.Call(f"mat{op}{key}.{i}", flat) for i in range(shape.n)), shape)
        cols = tuple(Vec(tuple(ir.Call(f"mat{op}{key}.{c}.{r}", flat) for r in range(shape.elem.n)), shape.elem)
                     for c in range(shape.n))
        return ArrayVal(cols, shape, key)

    def construct(self, ty: Ty, args: list, node):
        vals = [self.rvalue(a) for a in args]
        if ty.kind == "mat":
            col = ty.elem
            if not vals:
                return self.zero(ty, node)
            if len(vals) == 1 and isinstance(vals[0], ArrayVal) and vals[0].ty.kind == "mat":
                return vals[0]
            if all(isinstance(v, Vec) for v in vals) and len(vals) == ty.n:
                return ArrayVal(tuple(Vec(v.comps, col) for v in vals), ty, next(self.opaque_ids))
            if all(isinstance(v, Scalar) for v in vals) and len(vals) == ty.n * col.n:
                return ArrayVal(tuple(Vec(tuple(v.expr for v in vals[c * col.n:(c + 1) * col.n]), col)
                                      for c in range(ty.n)), ty, next(self.opaque_ids))
            raise Unsupported(node, f"{ty} built from {len(vals)} values")
        if ty.kind == "array":
            if ty.n is not None and not vals and ty.n > 4096:
                raise Unsupported(node, f"a zero value of {ty} (more than 4096 elements)")
            if not vals:
                return self.zero(ty, node)
            elem = ty.elem or vals[0].ty
            if ty.n is not None and ty.n != len(vals):
                raise Unsupported(node, f"{ty} built from {len(vals)} values")
            return ArrayVal(tuple(vals), Ty("array", elem=elem, n=len(vals)), next(self.opaque_ids))
        if ty.kind == "struct":
            members = self.module.structs[ty.name].members
            if not vals:
                return self.zero(ty, node)
            if len(vals) != len(members):
                raise Unsupported(node, f"{ty} built from {len(vals)} values")
            return StructVal({m: v for (m, _, _), v in zip(members, vals)}, ty)
        if ty.kind == "scalar":
            if not vals:
                return Scalar(_float_lit("0.0") if ty.is_float else ir.Const(0), ty)
            if isinstance(vals[0], Scalar):   # `i32(lid)`: the value converted, of the type named
                return Scalar(self._convert(vals[0].expr, vals[0].ty, ty), ty)
            return self._map(vals[0], lambda x, t: self._convert(x, t, ty), node)
        if ty.kind == "vec":
            elem = ty.elem
            if elem is None:
                elem = next((v.ty.elem if isinstance(v, Vec) else v.ty for v in vals if isinstance(v, (Scalar, Vec))), F32)
                ty = Ty("vec", elem=elem, n=ty.n)
            if not vals:
                zero = _float_lit("0.0") if elem.is_float else ir.Const(0)
                return Vec((zero,) * ty.n, ty)
            comps = []
            for v in vals:
                if isinstance(v, Vec):
                    comps.extend(self._convert(c, v.ty.elem, elem) for c in v.comps)
                elif isinstance(v, Scalar):
                    comps.append(self._convert(v.expr, v.ty, elem))
                else:
                    raise Unsupported(node, "a vector built from a composite")
            if len(comps) == 1:
                comps *= ty.n
            if len(comps) != ty.n:
                raise Unsupported(node, f"{ty} built from {len(comps)} values")
            return Vec(tuple(comps), ty)
        raise Unsupported(node, f"a value of type {ty} built in an expression")

    def zero(self, ty: Ty, node):
        """WGSL's zero value of a type held in variables: scalars, vectors, structs of them."""
        if ty.kind == "scalar":
            return Scalar(_float_lit("0.0") if ty.is_float else ir.Const(0), ty)
        if ty.kind == "vec":
            return Vec(((_float_lit("0.0") if ty.is_float else ir.Const(0)),) * ty.n, ty)
        if ty.kind == "struct":
            return StructVal({m: self.zero(mt, node) for m, mt, _ in self.module.structs[ty.name].members}, ty)
        if ty.kind in ("array", "mat") and ty.n is not None and ty.n <= 4096:
            return ArrayVal(tuple(self.zero(ty.elem, node) for _ in range(ty.n)), ty, next(self.opaque_ids))
        raise Unsupported(node, f"a zero value of type {ty}")

    def elems_place(self, name: str, ty: Ty):
        """A matrix or a small fixed-size array held in variables: a place per column or element
        (scalars and vectors, structs and matrices of them), or None."""
        if ty.n is None or ty.n > 64:
            return None
        elems = []
        for i in range(ty.n):
            e = ty.elem
            if e.kind in ("scalar", "vec"):
                elems.append(Local(self.fresh(f"{name}.{i}", e.n if e.kind == "vec" else 0), e))
            else:
                elems.append(self.struct_place(f"{name}.{i}", e) if e.kind == "struct" else
                             self.elems_place(f"{name}.{i}", e) if e.kind in ("mat", "array") else None)
            if elems[-1] is None:
                return None
        return MatPlace(tuple(elems), ty)

    def struct_place(self, name: str, ty: Ty):
        """A function-scope struct variable as one IR variable per member (nested structs too, a
        matrix's columns), or None when a member is neither a scalar, a vector, a matrix nor such
        a struct."""
        members = {}
        for m, mt, _ in self.module.structs[ty.name].members:
            if mt.kind in ("scalar", "vec"):
                members[m] = Local(self.fresh(f"{name}.{m}", mt.n if mt.kind == "vec" else 0), mt)
            elif mt.kind in ("mat", "array"):
                members[m] = self.elems_place(f"{name}.{m}", mt)
                if members[m] is None:
                    return None
            elif mt.kind == "struct":
                members[m] = self.struct_place(f"{name}.{m}", mt)
                if members[m] is None:
                    return None
            else:
                return None
        return StructVal(members, ty)
