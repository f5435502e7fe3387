"""Statements of the clang lowering: blocks, declarations of locals (scalars, vectors, structs,
private and shared arrays with their initialisers), if/for/while/do/switch, break/continue/return.

The IR shapes are the Lark C path's (c_stmts): a do-while is a loop that tests at its end, a
switch a chain of guarded groups, an inlined function's return a flag.
"""

from __future__ import annotations

from dataclasses import replace

from clang.cindex import StorageClass

from analyzer import ir
from analyzer.frontend.c_stmts import Goto, Label, _continues_test, _resolve_labels, switch_groups
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import (array_start, Group, LocalRef, LocalStruct, Pointer, Scalar, SharedScalar, Vector, const_int)
from analyzer.frontend.clang.cursors import CK, TK, canonical, children, reference_cast, space_of, strip
from analyzer.frontend.clang.symbolic_dims import dimension_extents
from analyzer.frontend.types import vector_shape

ASSUMPTIONS = frozenset({"__kernelrace_assert", "assert", "__assume", "__builtin_assume", "__requires"})


class ClangStmts:
    """Statements and local declarations; mixed into ClangLowering."""

    def block(self, c) -> list[ir.Stmt]:
        self.scopes.append({})
        out: list[ir.Stmt] = []
        guarded = out
        for s in children(c):
            fact = self._assumption(s)
            if fact is None:
                guarded.extend(self.stmt(s))
                continue
            cond = self.cond(fact)
            guarded.extend(self.flush([]))
            inner: list[ir.Stmt] = []
            guarded.append(ir.If(cond, inner, [], self.span(s), assumed=True))
            guarded = inner
        self.scopes.pop()
        return _resolve_labels(out, self.fresh_var)

    def _assumption(self, c):
        s = strip(c)
        if s.kind == CK.CALL_EXPR and s.spelling in ASSUMPTIONS:
            args = list(s.get_arguments())
            return args[0] if len(args) == 1 else None
        return None

    def flush(self, stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        pending, self.pending = self.pending, []
        return pending + stmts

    def stmt(self, c) -> list[ir.Stmt]:
        if self.nesting >= 200:
            raise Unsupported(c, "statements nested too deeply (more than 200 levels)")
        self.nesting += 1
        try:
            return self._stmt(c)
        except Unsupported as exc:
            if exc.node is None:
                exc.node = c
            raise
        finally:
            self.nesting -= 1

    def _stmt(self, c) -> list[ir.Stmt]:
        k = c.kind
        span = self.span(c)
        if k == CK.COMPOUND_STMT:
            return self.block(c)
        if k == CK.DECL_STMT:
            out: list[ir.Stmt] = []
            for d in children(c):
                if d.kind == CK.VAR_DECL:
                    out.extend(self.declare_var(d))
                elif d.kind in (CK.STRUCT_DECL, CK.TYPEDEF_DECL, CK.TYPE_ALIAS_DECL, CK.ENUM_DECL,
                                CK.USING_DIRECTIVE, CK.USING_DECLARATION, CK.STATIC_ASSERT, CK.NAMESPACE_ALIAS,
                                CK.CLASS_DECL, CK.UNION_DECL, CK.TYPE_ALIAS_TEMPLATE_DECL):
                    continue
                else:
                    raise Unsupported(d, f"declaration '{d.kind.name.lower()}'")
            return self.flush(out)
        if k == CK.NULL_STMT:
            return []
        if k == CK.BREAK_STMT:
            return [ir.Break(span)]
        if k == CK.CONTINUE_STMT:
            return [ir.Continue(span)]
        if k == CK.RETURN_STMT:
            pre: list[ir.Stmt] = []
            kids = children(c)
            if kids:
                if self.inline_depth and self.return_struct is not None:
                    pre.extend(self.copy_into(self.return_struct, kids[0], span))
                else:
                    val = self.rvalue(kids[0])
                    if self.inline_depth and isinstance(val, (Scalar, Vector)):
                        pre.append(ir.Assign(self.return_var, self._scalar(val), span))
                    elif isinstance(val, Scalar):
                        pre.append(ir.Eval(val.expr, span))
            return self.flush(pre) + [ir.Return(span)]
        if k == CK.IF_STMT:
            return self._if(c)
        if k == CK.FOR_STMT:
            return self._for(c)
        if k == CK.CXX_FOR_RANGE_STMT:
            return self._for_range(c)
        if k == CK.WHILE_STMT:
            cond_c, body_c = self._cond_and_body(c)
            self.scopes.append({})
            pre = self.flush([])
            carry = self.carry_pointers(c)
            cond = self.cond(cond_c)
            if self.pending:
                raise Unsupported(cond_c, "side effect in a loop condition")
            if isinstance(cond, ir.Const) and cond.value != 0:
                cond = None
            body = self.stmt(body_c)
            self.scopes.pop()
            return pre + carry + [ir.Loop([], cond, [], body, span, next(self.loop_ids))]
        if k == CK.DO_STMT:
            body_c, cond_c = children(c)
            carry = self.carry_pointers(c)
            self.scopes.append({})
            body = self.stmt(body_c)
            self.scopes.pop()
            cond = self.cond(cond_c)
            if self.pending:
                raise Unsupported(cond_c, "side effect in a loop condition")
            cspan = self.span(cond_c)
            body = _continues_test(body, cond, cspan) + [ir.If(ir.UnOp("!", cond), [ir.Break(cspan)], [], cspan)]
            return carry + [ir.Loop([], None, [], body, span, next(self.loop_ids))]
        if k == CK.SWITCH_STMT:
            return self._switch(c)
        if k in (CK.UNEXPOSED_STMT,):   # an attributed statement (`[[likely]]`, `#pragma unroll`)
            kids = children(c)
            if len(kids) == 1:
                return self.stmt(kids[0])
            if not kids:
                return []
        if k == CK.ASM_STMT or k == CK.MS_ASM_STMT:
            return self.asm(c)
        if k == CK.GOTO_STMT:
            label = next((x.spelling for x in c.get_children() if x.kind == CK.LABEL_REF), None)
            if label is None:
                raise Unsupported(c, "goto without a label")
            self.after_goto = True   # (pointer_moves.py)
            return self.flush([Goto(label, c, span)])
        if k == CK.LABEL_STMT:
            inner = children(c)
            return [Label(c.spelling, span)] + (self.stmt(inner[-1]) if inner else [])
        if k == CK.INDIRECT_GOTO_STMT:
            raise Unsupported(c, "computed goto")
        if k.is_expression() or k == CK.UNEXPOSED_EXPR:
            return self.flush(self.effect(c))
        raise Unsupported(c, f"statement '{k.name.lower()}'")

    def _cond_and_body(self, c):
        kids = children(c)
        body = kids[-1]
        conds = [k for k in kids[:-1] if k.kind != CK.VAR_DECL and k.kind != CK.DECL_STMT]
        if not conds:
            raise Unsupported(c, "loop condition that declares a variable")
        return conds[-1], body

    def _if(self, c) -> list[ir.Stmt]:
        kids = children(c)
        self.scopes.append({})
        pre: list[ir.Stmt] = []
        rest = []
        for k in kids:
            if k.kind == CK.DECL_STMT:
                pre.extend(self.stmt(k))
            elif k.kind == CK.VAR_DECL:
                pre.extend(self.declare_var(k))
            else:
                rest.append(k)
        cond_c, then_c = rest[0], rest[1]
        else_c = rest[2] if len(rest) > 2 else None
        cond = self.cond(cond_c)
        pre = self.flush(pre)
        then, orelse = self.branches(c, cond, then_c, else_c)   # (pointer_moves.py)
        self.scopes.pop()
        n = const_int(cond)
        if n is not None and self.source.after(c, 40).replace(" ", "").startswith("ifconstexpr"):
            return pre + (then if n else orelse)
        # (`!M_aligned` of a template's `true`: folded, so that the executor, like the graph of the
        # threads' paths, runs only the branch taken: an access of the other is in neither)
        return pre + [ir.If(ir.Const(n) if n is not None else cond, then, orelse, self.span(c))]

    def _for(self, c) -> list[ir.Stmt]:
        kids = children(c)
        body_c = kids[-1]
        init_c = cond_c = inc_c = None
        parts = kids[:-1]
        if len(parts) == 3:
            init_c, cond_c, inc_c = parts
        elif parts:
            semis = self._for_semicolons(c)
            for p in parts:
                off = p.extent.start.offset
                if semis is None:
                    raise Unsupported(c, "for header clang's cursors do not delimit")
                if off < semis[0]:
                    init_c = p
                elif off < semis[1]:
                    cond_c = p
                else:
                    inc_c = p
        self.scopes.append({})
        init = self.stmt(init_c) if init_c is not None else []
        carry = self.carry_pointers(c)
        cond = self.cond(cond_c) if cond_c is not None else None
        if self.pending:
            raise Unsupported(cond_c, "side effect in a loop condition")
        body = self.stmt(body_c)   # (before the update, which may move a pointer the body uses)
        update = self.flush(self.effect(inc_c)) if inc_c is not None else []
        self.scopes.pop()
        return init + carry + [ir.Loop([], cond, update, body, self.span(c), next(self.loop_ids))]

    def _for_semicolons(self, c) -> tuple[int, int] | None:
        """File offsets of the two `;` of a for header, read from the source text."""
        start = c.extent.start
        if start.file is None:
            return None
        data = self.source.bytes_of(start.file.name)
        i = data.find(b"(", start.offset)
        if i < 0:
            return None
        depth, semis = 0, []
        for j in range(i, min(len(data), i + 4000)):
            ch = data[j:j + 1]
            if ch == b"(":
                depth += 1
            elif ch == b")":
                depth -= 1
                if depth == 0:
                    break
            elif ch == b";" and depth == 1:
                semis.append(j)
        return (semis[0], semis[1]) if len(semis) >= 2 else None

    def _switch(self, c) -> list[ir.Stmt]:
        """`switch` as a chain of guarded groups (as c_stmts): a group runs when an earlier group fell
        into it or one of its labels matches, and no `break` of the switch was taken."""
        kids = children(c)
        value_c, body_c = kids[-2], kids[-1]
        span = self.span(c)
        value = self.cond(value_c)
        sel, fell, broke = self.fresh_var("switch"), self.fresh_var("switch.fell"), self.fresh_var("switch.broke")
        out = self.flush([ir.Assign(sel, value, span), ir.Assign(fell, ir.Const(0), span),
                          ir.Assign(broke, ir.Const(0), span)]) + self.carry_pointers(body_c)
        groups: list[tuple[list, list]] = []
        items = children(body_c) if body_c.kind == CK.COMPOUND_STMT else [body_c]
        for it in items:
            while it.kind in (CK.CASE_STMT, CK.DEFAULT_STMT):
                if not groups or groups[-1][1]:
                    groups.append(([], []))
                if it.kind == CK.CASE_STMT:
                    label_c, inner = children(it)[0], children(it)[-1]
                    groups[-1][0].append(self.cond(label_c))
                else:
                    inner = children(it)[-1]
                    groups[-1][0].append(None)
                it = inner
            if groups:
                groups[-1][1].append(it)
        return out + switch_groups(self, groups, sel, fell, broke, span)

    # ---------- local declarations ----------

    def declare_var(self, d) -> list[ir.Stmt]:
        t = canonical(d.type)
        name = d.spelling
        span = self.span(d)
        kids = [k for k in children(d) if not k.kind.is_attribute() and k.kind not in (CK.TYPE_REF, CK.TEMPLATE_REF,
                                                                                          CK.NAMESPACE_REF)]
        shared = _is_shared(d)
        if t.kind in (TK.CONSTANTARRAY, TK.INCOMPLETEARRAY, TK.DEPENDENTSIZEDARRAY, TK.VARIABLEARRAY):
            return self.declare_array(d, t, kids, shared)
        if self.lang == "cuda" and self.library_local(d, shared):
            return []
        init = kids[-1] if kids else None
        if d.storage_class == StorageClass.STATIC and not shared and init is not None and "const" in d.type.spelling:
            n = self.int_value(init)
            if n is not None:
                self.scopes[-1][d.hash] = Scalar(ir.Const(n), "int")
                return []
        if t.kind == TK.POINTER:
            if init is None:
                self.scopes[-1][d.hash] = Pointer("?", ir.GLOBAL, self.note_type(t.get_pointee()), ir.Const(0))
                return []
            val = self.converted_pointer(init) or self.rvalue(init)
            if isinstance(val, Scalar) and isinstance(val.expr, ir.Const) and val.expr.value == 0:
                self.scopes[-1][d.hash] = Pointer("?", ir.GLOBAL, self.note_type(t.get_pointee()), ir.Const(0))
                return []
            if not isinstance(val, Pointer):
                raise Unsupported(init, "a function pointer (calls through one are not modelled)" if canonical(
                    t.get_pointee()).kind in (TK.FUNCTIONPROTO, TK.FUNCTIONNOPROTO) else
                                  "pointer initialised from a non-pointer value")
            self.scopes[-1][d.hash] = val.__class__(val.buffer, val.space, self.note_type(t.get_pointee()),
                                                    val.offset, val.inner if val.elem == self.note_type(
                                                        t.get_pointee()) else ())
            return []
        if t.kind in (TK.LVALUEREFERENCE, TK.RVALUEREFERENCE):
            if init is None:
                raise Unsupported(d, "reference without a referent")
            s = strip(init)
            if s.kind == CK.DECL_REF_EXPR:
                val = self.value(s)
                if isinstance(val, (LocalRef, LocalStruct, SharedScalar, Pointer)):
                    self.scopes[-1][d.hash] = val
                    return []
            val = self.place(init) if s.kind in (CK.ARRAY_SUBSCRIPT_EXPR, CK.MEMBER_REF_EXPR,
                                                  CK.UNARY_OPERATOR) or reference_cast(s, self.source.text(s)) else None
            if isinstance(val, Pointer):
                if self._is_struct(val.elem) or val.inner:
                    self.scopes[-1][d.hash] = val
                else:
                    self.scopes[-1][d.hash] = SharedScalar(val)
                return []
            if self.lang == "metal" and self.stores_thread_elements(init):
                # `auto& e = m.thread_elements();`: the lane's elements as a local of their own (metal.py)
                ref = LocalRef(self.fresh_var(name), self.note_type(t))
                self.scopes[-1][d.hash] = ref
                return self._assign_local(ref, self.rvalue(init), span)
            raise Unsupported(d, "local reference variable")
        ty = self.note_type(t)
        if self.group_type(t):
            if init is None:
                raise Unsupported(d, "cooperative group without a value")
            val = self.rvalue(init)
            if not isinstance(val, Group):
                raise Unsupported(init, f"'{ty}' initialised from something not a cooperative group")
            self.scopes[-1][d.hash] = val
            return []
        if shared:
            bname = self.fresh_var(name)
            size = self.size(ty) or 4
            self.kernel.buffers[bname] = ir.Buffer(bname, ir.SHARED, ty, size, size_bytes=size)
            self.scopes[-1][d.hash] = SharedScalar(Pointer(bname, ir.SHARED, ty, ir.Const(0)))
            return []
        if t.kind == TK.RECORD and self._is_struct(ty):
            local = self.private_struct(name, ty) if self.holds_array(ty) else LocalStruct(self.fresh_var(name), ty)
            out: list[ir.Stmt] = []
            if init is not None:
                out = self.copy_into(local, init, span)
            self.scopes[-1][d.hash] = local
            return out
        if self.address_passed(d) and self.size(ty):
            return self.private_scalar(d, name, ty, init, span)
        ref = LocalRef(self.fresh_var(name), ty)
        out = []
        if init is not None and t.kind in (TK.UNEXPOSED, TK.DEPENDENT) and strip(init).kind == CK.UNEXPOSED_EXPR and \
                self.source.text(strip(init)).startswith("("):
            # `Reducer reducer(params, ...)` of `typename Traits::Reducer`: which class (and constructor)
            # is the instantiation's, which no launch in the file names
            raise Unsupported(d, f"an object of the dependent type '{d.type.spelling}' built by its constructor")
        if init is not None:
            s = strip(init)
            if s.kind == CK.CALL_EXPR and not list(s.get_arguments()) and vector_shape(ty) and s.spelling == ty:
                val = None   # `float4 v;` default construction
            else:
                val = self.rvalue(init)
            if isinstance(val, Pointer) and t.kind in _INTEGERS and val.buffer != "?":
                # an integer holding an address (`uint32_t a = __cvta_generic_to_shared(p)`): the
                # pointer, counted in bytes
                self.scopes[-1][d.hash] = replace(val, elem="char", inner=())
                return []
            ref = self.undeduced_local(d, t, ref, val) if self.lang == "metal" else ref   # (metal_matrices.py)
            if ref is None:
                return []
            if val is not None:
                out.extend(self._assign_local(ref, val, span))
        self.scopes[-1][d.hash] = ref
        return out

    def declare_array(self, d, t, kids, shared: bool) -> list[ir.Stmt]:
        name = d.spelling
        init = kids[-1] if kids and strip(kids[-1]).kind == CK.INIT_LIST_EXPR else None
        dim_exprs = [k for k in kids if k is not init]
        elem_t = t
        extents: list[int | None] = []
        while elem_t.kind in (TK.CONSTANTARRAY, TK.INCOMPLETEARRAY, TK.DEPENDENTSIZEDARRAY, TK.VARIABLEARRAY):
            if elem_t.kind == TK.CONSTANTARRAY:
                extents.append(elem_t.element_count)
            else:
                extents.append(None)
            elem_t = canonical(elem_t.element_type) if elem_t.kind != TK.DEPENDENTSIZEDARRAY else canonical(
                elem_t.get_array_element_type())
        dims, pre = dimension_extents(self, d, extents, dim_exprs, init, t.kind == TK.INCOMPLETEARRAY)   # symbolic_dims.py
        space = ir.SHARED if shared else ir.PRIVATE
        elem = self.note_type(elem_t)
        if self.lang == "cuda" and not shared and self.dependent_fragment(elem_t):   # wmma.py
            elem, lanes = self.fragment_lanes(d)
            extents.append(lanes)
        elem_size = self.size(elem) or 4
        if not self.size(elem) and not all(isinstance(n, int) for n in extents[1:]):
            raise Unsupported(d, f"array of '{elem}', of a size clang does not know, with a symbolic row")
        total = elem_size if all(isinstance(n, int) for n in extents) else None
        for n in extents:
            total = total * n if total is not None and n is not None else None
        dynamic = shared and d.storage_class == StorageClass.EXTERN and total is None
        if dynamic and self.dynamic_shared is not None:
            bname = self.dynamic_shared   # every extern shared array is the launch's one dynamic allocation
        else:
            bname = self.fresh_var(name)
            self.kernel.buffers[bname] = ir.Buffer(bname, space, elem, elem_size, size_bytes=total)
            self.dynamic_shared = bname if dynamic else self.dynamic_shared
        ptr = array_start(bname, space, elem, extents)
        self.scopes[-1][d.hash] = ptr
        if init is None:
            return self.flush(pre)
        if shared:
            raise Unsupported(init, "initializer of a shared array")
        count = None
        if None in extents and len(dims) == len(extents):
            # a private array sized by a symbolic value (`float r[N_READS] = {0}` in a template
            # kernel never instantiated): the zeros run to that value
            count = self.cond(dims[0])
            for n in extents[1:]:
                count = ir.BinOp("*", count, ir.Const(n))
        return self.array_init(ptr, init, extents, elem_size, count)

    def array_init(self, ptr: Pointer, init, extents, elem_size: int, count_expr: ir.Expr | None = None) -> list[
            ir.Stmt]:
        """`float a[8] = {1, 2}`: each element written, the ones not given with zero (a loop); an
        array of a symbolic size (count_expr) the same, to that size."""
        span = self.span(init)
        flat: list = []
        stack = [strip(init)]
        while stack:
            n = stack.pop()
            if n.kind == CK.INIT_LIST_EXPR:
                stack.extend(reversed(children(n)))
            else:
                flat.append(n)
        count = 1
        for n in extents:
            if n is None and count_expr is None:
                raise Unsupported(init, "initializer of an array of unknown size")
            count = count * n if n is not None and count is not None else None
        elem = Pointer(ptr.buffer, ptr.space, ptr.elem, ptr.offset)
        out: list[ir.Stmt] = []
        if count is None:
            if not all(_is_zero(self.source.text(strip(v))) for v in flat):
                raise Unsupported(init, "initializer of an array of unknown size with values other than zero")
            flat = []   # `= {0}`: every element zero, the loop below writes them
        for i, v in enumerate(flat[:count]):
            val = self.rvalue(v)
            out.extend(self.flush([self._access_stmt(
                Pointer(elem.buffer, elem.space, elem.elem, ir.Const(i * elem_size)), True, val, span)]))
        if count is None or len(flat) < count:
            var = self.fresh_var("init")
            body = [self._access_stmt(Pointer(elem.buffer, elem.space, elem.elem,
                                              ir.BinOp("*", ir.Var(var), ir.Const(elem_size))), True,
                                      Scalar(ir.Const(0)), span)]
            out.append(ir.Assign(var, ir.Const(len(flat)), span))
            out.append(ir.Loop([], ir.BinOp("<", ir.Var(var), ir.Const(count) if count is not None else count_expr),
                               [ir.Assign(var, ir.BinOp("+", ir.Var(var), ir.Const(1)), span)], body, span,
                               next(self.loop_ids)))
        return out


def _is_shared(d) -> bool:
    return any(k.kind == CK.CUDASHARED_ATTR for k in d.get_children()) or space_of(d.type) == ir.SHARED


_INTEGERS = (TK.UINT, TK.INT, TK.ULONG, TK.LONG, TK.ULONGLONG, TK.LONGLONG)


def _is_zero(text: str) -> bool:
    try:
        return float(text.strip().rstrip("fFuUlLhH") or "x") == 0
    except ValueError:
        return False

