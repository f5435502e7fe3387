"""WGSL statements: declarations (`var`, `let`, `const`), assignments, control flow (`if`,
`switch`, `for`, `while`, `loop` with `continuing` and `break if`) and the barriers.

A `loop`'s `continuing` block runs after each iteration's body: it is appended to the body when
the body has no `continue` (then a `break if` is a conditional break at its end), otherwise it is
the loop's update clause; with both a `continue` and a `break if`, the `continue` sets a flag
guarding the rest of the body, and the continuing block with its `break if` follows the body. A `switch` is a chain of `if`s, in a
one-trip loop when a case `break`s out of it.
"""

from __future__ import annotations

from lark import Token, Tree

from analyzer import ir
from analyzer.frontend import atomics
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.wgsl.exprs import BARRIER_SCOPES, BARRIERS, _add, _float_lit
from analyzer.frontend.wgsl.types import (ArrayVal, Lane, Local, MatPlace, Pointer, Ref, Scalar, StructVal, Vec, layout,
                                          size_of, stride_of)


def _place_vars(place) -> set[str]:
    """The IR variables a variable place (a vector's lanes, a struct's members) is made of."""
    if isinstance(place, StructVal):
        return {n for m in place.members.values() for n in _place_vars(m)}
    if isinstance(place, MatPlace):
        return {n for c in place.cols for n in _place_vars(c)}
    if isinstance(place, Local):
        return {f"{place.name}.{i}" for i in range(place.ty.n)} if place.ty.kind == "vec" else {place.name}
    return set()


def _reads_any(val, names: set[str]) -> bool:
    exprs = list(val.comps) if isinstance(val, Vec) else [val.expr] if isinstance(val, Scalar) else []
    if isinstance(val, StructVal):
        return any(_reads_any(m, names) for m in val.members.values())
    return any(ir.reads_names(x, names) for x in exprs)


def _continues_guarded(stmts: list, flag: str) -> list:
    """A loop body whose `continue`s (those of this loop, not of loops inside it) set `flag`, the
    statements after one that may continue running only while `flag` is 0."""
    out: list = []
    for i, s in enumerate(stmts):
        if isinstance(s, ir.Continue):
            out.append(ir.Assign(flag, ir.Const(1), s.span))
            return out
        if isinstance(s, ir.If) and _top_level([s], ir.Continue):
            out.append(ir.If(s.cond, _continues_guarded(s.then, flag), _continues_guarded(s.orelse, flag), s.span,
                             s.assumed))
            rest = _continues_guarded(stmts[i + 1:], flag)
            if rest:
                out.append(ir.If(ir.BinOp("==", ir.Var(flag), ir.Const(0)), rest, [], s.span))
            return out
        out.append(s)
    return out


def _top_level(stmts, cls) -> bool:
    """Whether a statement of type `cls` sits in `stmts` outside nested loops."""
    return any(isinstance(s, cls) for s in ir.walk_stmts(stmts, into_loops=False))


class StmtLowering:
    """Statements, mixed into KernelLowering."""

    def block(self, node: Tree) -> list[ir.Stmt]:
        self.scopes.append({})
        try:
            return self.stmts(node.children)
        finally:
            self.scopes.pop()

    def stmts(self, items) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in items:
            if isinstance(s, Tree):
                out.extend(self.stmt(s))
        return out

    def stmt(self, node: Tree) -> list[ir.Stmt]:
        out = self.dispatch(node, "st", "statement")
        return self.flush(out)

    def flush(self, stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        pending, self.pending = self.pending, []
        return pending + stmts

    # ----- declarations -----
    def st_var_stmt(self, node):
        return self.declare_var(node.children[0])

    def declare_var(self, decl: Tree, scope: dict | None = None) -> list[ir.Stmt]:
        name = next(str(c) for c in decl.children if isinstance(c, Token) and c.type == "NAME")
        ty_node, init_node = decl.children[3], decl.children[4]
        span = self.span(decl)
        init = self.rvalue(init_node) if init_node is not None else None
        if ty_node is not None:
            ty = self.type_of(ty_node)
        elif isinstance(init, (Scalar, Vec, ArrayVal)) or (isinstance(init, StructVal) and init.ty is not None):
            ty = init.ty
        else:
            raise Unsupported(decl, f"variable '{name}' without a type")
        scope = self.scopes[-1] if scope is None else scope
        if ty.kind == "ray_query":   # a traversal the analysis does not follow (wgsl/ray_queries.py)
            scope[name] = Local(self.fresh(name), ty)
            return []
        if ty.kind in ("scalar", "vec"):
            local = Local(self.fresh(name, ty.n if ty.kind == "vec" else 0), ty)
            scope[name] = local
            if init is None:   # WGSL zero-initialises variables
                zero = _float_lit("0.0") if ty.is_float else ir.Const(0)
                init = Vec((zero,) * ty.n, ty) if ty.kind == "vec" else Scalar(zero, ty)
            return self.store(local, init, decl, span)
        if ty.kind == "struct":
            place = self.struct_place(name, ty)
            if place is not None:
                scope[name] = place
                return self.store(place, init if init is not None else self.zero(ty, decl), decl, span)
        if ty.kind == "ptr":
            if not isinstance(init, Pointer):
                raise Unsupported(decl, "a pointer variable without an address")
            scope[name] = init
            return []
        if init is not None and not isinstance(init, ArrayVal):
            raise Unsupported(decl, f"variable '{name}' of type {ty} with an initial value")
        size = size_of(ty, self.module.structs)
        if size is None:
            raise Unsupported(decl, f"variable '{name}' of runtime-sized type")
        buf = self.fresh(name)
        elem = ty.scalar()
        self.kernel.buffers[buf] = ir.Buffer(buf, ir.PRIVATE, str(elem), size_of(elem, self.module.structs) or 4,
                                             size, declared=True)
        scope[name] = Ref(buf, ir.PRIVATE, ir.Const(0), ty)
        return self.store(scope[name], init, decl, span) if init is not None else []

    def st_let_stmt(self, node):
        return self._bind_value(node)

    def st_const_stmt(self, node):
        return self._bind_value(node)

    def _bind_value(self, node):
        name = next(str(c) for c in node.children if isinstance(c, Token) and c.type == "NAME")
        v = self.value(node.children[-1])
        if isinstance(v, (Local, Ref, StructVal)):
            v = self.load(v, node)
        span = self.span(node)
        held = self.hold(v, name, span)
        self.bind(name, held)
        # Evaluated where it stands, used or not, as a C declaration is: the thread and block
        # indices it names count as read, alike in every dialect (analysis/grid.block_dims_read).
        parts = held.comps if isinstance(held, Vec) else (held.expr,) if isinstance(held, Scalar) else ()
        self.pending.extend(ir.Eval(e, span) for e in parts if not isinstance(e, (ir.Const, ir.Var, ir.Param)))
        return []

    # ----- assignments -----
    def st_assign_eq(self, node):
        target, value = node.children
        span = self.span(node)
        if isinstance(target, Tree) and target.data == "name" and str(target.children[0]) == "_":
            v = self.rvalue(value)
            return self.flush(self._eval(v, span))
        place = self.value(target)
        return self.store(place, self.rvalue(value), node, span)

    def st_assign(self, node):
        target, op, value = node.children
        place = self.value(target)
        rhs = self.rvalue(value)
        cur = self.load(place, node)
        return self.store(place, self.binop(str(op)[:-1], cur, rhs, node), node, self.span(node))

    def st_incdec(self, node):
        target, op = node.children
        place = self.value(target)
        cur = self.load(place, node)
        one = Scalar(ir.Const(1), cur.ty) if isinstance(cur, Scalar) else None
        if one is None:
            raise Unsupported(node, "increment of a vector")
        return self.store(place, self.binop("+" if str(op) == "++" else "-", cur, one, node), node, self.span(node))

    def store(self, place, val, node, span) -> list[ir.Stmt]:
        if isinstance(place, Lane) and isinstance(val, Scalar):
            # `v[i] = x`: each lane keeps its value unless it is lane i
            held = self.hold(val, "lane", span)
            n = place.vec.ty.n
            return self.flush([ir.Assign(f"{place.vec.name}.{j}",
                                         ir.Select(ir.BinOp("==", place.index, ir.Const(j)), held.expr,
                                                   ir.Var(f"{place.vec.name}.{j}")), span) for j in range(n)])
        if isinstance(place, (Local, StructVal)) and isinstance(val, (Vec, StructVal)) \
                and _reads_any(val, _place_vars(place)):
            # `v = v.yx`, `p = Pair(p.hi, p.lo)`: every lane is read before any is written.
            val = self.hold(val, "swap", span)
        if isinstance(val, StructVal) and isinstance(place, (StructVal, Ref)):
            return self._store_members(place, val, node, span)
        if isinstance(place, MatPlace) and isinstance(val, ArrayVal) and len(val.elems) == len(place.cols):
            return self.flush([s for c, e in zip(place.cols, val.elems) for s in self.store(c, e, node, span)])
        if isinstance(val, ArrayVal) and isinstance(place, Ref) and place.ty.kind in ("array", "mat") \
                and place.ty.n == len(val.elems):
            step = stride_of(place.ty, self.module.structs)
            out: list[ir.Stmt] = []
            for i, e in enumerate(val.elems):
                out.extend(self.store(Ref(place.buffer, place.space, _add(place.offset, ir.Const(i * step)),
                                          place.ty.elem, place.writable), e, node, span))
            return self.flush(out)
        if isinstance(place, Local):
            if place.ty.kind == "vec":
                comps = val.comps if isinstance(val, Vec) else (val.expr,) * place.ty.n
                return self.flush([ir.Assign(f"{place.name}.{i}", c, span) for i, c in enumerate(comps)])
            if not isinstance(val, Scalar):
                raise Unsupported(node, "a vector stored into a scalar")
            return self.flush([ir.Assign(place.name, val.expr, span)])
        if isinstance(place, Ref):
            if place.ty.kind == "scalar" and isinstance(val, Scalar):
                value = val.expr
            elif place.ty.kind == "vec" and isinstance(val, (Vec, Scalar)):
                value = ir.Call("vec", val.comps if isinstance(val, Vec) else (val.expr,) * place.ty.n)
            elif place.ty.kind == "atomic" and isinstance(val, Scalar):
                # naga takes `a = v` on an atomic as atomicStore(&a, v) (its SPIR-V is OpAtomicStore)
                elem = Ref(place.buffer, place.space, place.offset, place.ty.elem, place.writable)
                acc = self.access(elem, True, node, atomic=True, value=val.expr)
                return self.flush([ir.MemOp(atomics.mark(acc, "store"))])
            else:
                raise Unsupported(node, f"a store of a whole {place.ty}")
            return self.flush([ir.MemOp(self.access(place, True, node, value=value))])
        raise Unsupported(node, "assignment to something other than a variable or memory")

    def _store_members(self, place, val: StructVal, node, span) -> list[ir.Stmt]:
        """A struct stored member by member (into member variables or memory)."""
        if isinstance(place, Ref):
            if place.ty.kind != "struct":
                raise Unsupported(node, f"a struct stored into a {place.ty}")
            offsets, _ = layout(place.ty.name, self.module.structs)
            targets = {m: Ref(place.buffer, place.space, _add(place.offset, ir.Const(off)), mt, place.writable)
                       for m, (off, mt) in offsets.items()}
        else:
            targets = place.members
        if set(targets) != set(val.members):
            raise Unsupported(node, "a struct stored into a struct of other members")
        out: list[ir.Stmt] = []
        for m, target in targets.items():
            out.extend(self.store(target, val.members[m], node, span))
        return self.flush(out)

    def _eval(self, v, span) -> list[ir.Stmt]:
        if isinstance(v, Scalar):
            return [ir.Eval(v.expr, span)]
        if isinstance(v, Vec):
            return [ir.Eval(ir.Call("vec", v.comps), span)]
        return []

    def st_expr_stmt(self, node):
        expr = node.children[0]
        span = self.span(node)
        if isinstance(expr, Tree) and expr.data == "call" and isinstance(expr.children[0], Token):
            fn = str(expr.children[0])
            if fn in BARRIERS and fn not in self.module.functions:
                return [ir.Barrier(BARRIER_SCOPES.get(fn, ir.BLOCK), BARRIERS[fn], span, f"{fn}()")]
        v = self.value(expr)
        if isinstance(v, (Local, Ref, Pointer, StructVal)):
            return self.flush([])
        return self.flush(self._eval(v, span))

    # ----- control flow -----
    def cond(self, node) -> ir.Expr:
        return self.scalar_of(node)

    def st_if_stmt(self, node):
        parts = [c for c in node.children if isinstance(c, Tree)]
        cond = self.cond(parts[0])
        pre = self.flush([])
        then = self.block(parts[1])
        orelse: list[ir.Stmt] = []
        if len(parts) > 2:
            orelse = self.block(parts[2]) if parts[2].data == "block" else self.stmt(parts[2])
        return pre + [ir.If(cond, then, orelse, self.span(node))]

    def st_block(self, node):
        return self.block(node)

    def st_stmt(self, node):      # an empty statement
        return []

    def st_const_assert(self, node):
        return []

    def st_switch_stmt(self, node):
        sel = self.scalar_of(node.children[1])
        pre = self.flush([])
        span = self.span(node)
        clauses: list[tuple[list[ir.Expr], list[ir.Stmt]]] = []
        default: list[ir.Stmt] = []
        for c in node.children[2:]:
            if not isinstance(c, Tree) or c.data not in ("case_clause", "default_clause"):
                continue
            body = self.block(c.children[-1])
            selectors = [s for s in c.children if isinstance(s, Tree) and s.data == "selector"]
            is_default = c.data == "default_clause" or any(
                isinstance(s.children[0], Token) and s.children[0].type == "DEFAULT" for s in selectors)
            if is_default:
                default = body
                continue
            values = [self.scalar_of(s.children[0]) for s in selectors]
            clauses.append((values, body))
        chain = default
        for values, body in reversed(clauses):
            test = None
            for v in values:
                eq = ir.BinOp("==", sel, v)
                test = eq if test is None else ir.BinOp("||", test, eq)
            chain = [ir.If(test, body, chain, span)]
        if any(_top_level(b, ir.Break) for b in [default] + [b for _, b in clauses]):
            if any(_top_level(b, ir.Continue) for b in [default] + [b for _, b in clauses]):
                raise Unsupported(node, "a switch whose cases both break and continue")
            return pre + [ir.Loop([], None, [], chain + [ir.Break(span)], span, next(self.loop_ids))]
        return pre + chain

    def st_for_stmt(self, node):
        init_n, cond_n, upd_n, body_n = node.children[1:]
        self.scopes.append({})
        try:
            init = self.stmt(init_n) if init_n is not None else []
            cond = self.cond(cond_n) if cond_n is not None else None
            if self.pending:
                raise Unsupported(cond_n, "a call with effects in a loop condition")
            update = self.stmt(upd_n) if upd_n is not None else []
            body = self.block(body_n)
        finally:
            self.scopes.pop()
        return init + [ir.Loop([], cond, update, body, self.span(node), next(self.loop_ids))]

    def st_while_stmt(self, node):
        cond = self.cond(node.children[1])
        if self.pending:
            raise Unsupported(node.children[1], "a call with effects in a loop condition")
        body = self.block(node.children[2])
        return [ir.Loop([], cond, [], body, self.span(node), next(self.loop_ids))]

    def st_loop_stmt(self, node):
        span = self.span(node)
        items = [c for c in node.children[1:] if isinstance(c, Tree) and c.data != "attrs"]
        cont_n = items[-1] if items and items[-1].data == "continuing" else None
        if cont_n is not None:
            items = items[:-1]
        self.scopes.append({})          # the continuing block sees the body's declarations
        try:
            body = self.stmts(items)
            cont: list[ir.Stmt] = []
            break_if = None
            if cont_n is not None:
                cont_items = [c for c in cont_n.children if isinstance(c, Tree)]
                if cont_items and cont_items[-1].data == "break_if_stmt":
                    break_if = cont_items.pop()
                self.scopes.append({})
                try:
                    cont = self.stmts(cont_items)
                    if break_if is not None:
                        cond = self.cond(break_if.children[-1])
                        cont = self.flush(cont) + [ir.If(cond, [ir.Break(self.span(break_if))], [],
                                                         self.span(break_if))]
                finally:
                    self.scopes.pop()
        finally:
            self.scopes.pop()
        if not _top_level(body, ir.Continue):
            return [ir.Loop([], None, [], body + cont, span, next(self.loop_ids))]
        if break_if is not None:
            # `continue` must still reach `continuing` and its `break if`: it sets a flag that
            # guards the rest of the body, and the continuing block follows the body.
            flag = self.fresh("continued")
            body = [ir.Assign(flag, ir.Const(0), span)] + _continues_guarded(body, flag)
            return [ir.Loop([], None, [], body + cont, span, next(self.loop_ids))]
        return [ir.Loop([], None, cont, body, span, next(self.loop_ids))]

    def st_break_stmt(self, node):
        return [ir.Break(self.span(node))]

    def st_break_if_stmt(self, node):
        raise Unsupported(node, "'break if' other than at the end of a continuing block")

    def st_continue_stmt(self, node):
        return [ir.Continue(self.span(node))]

    def st_return_stmt(self, node):
        span = self.span(node)
        expr = node.children[1]
        pre: list[ir.Stmt] = []
        if expr is not None:
            v = self.rvalue(expr)
            if isinstance(self.return_var, (StructVal, MatPlace)):
                pre = self.store(self.return_var, v, expr, span)
            elif self.return_var is not None and isinstance(v, Vec):
                pre = [ir.Assign(f"{self.return_var}.{i}", c, span) for i, c in enumerate(v.comps)]
            elif self.return_var is not None and isinstance(v, Scalar):
                pre = [ir.Assign(self.return_var, v.expr, span)]
            else:
                pre = self._eval(v, span)
        return self.flush(pre) + [ir.Return(span)]

    def st_discard_stmt(self, node):
        raise Unsupported(node, "'discard' (a fragment-shader statement)")
