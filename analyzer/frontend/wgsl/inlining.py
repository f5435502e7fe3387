"""Inlining of WGSL functions at their calls (mixed into KernelLowering): arguments copied,
pointers passed as places, the result in fresh variables. A `return` before the end of the body
sets a flag that guards the rest and breaks out of each enclosing loop of the body, so that the
result is a value, not loop state."""

from __future__ import annotations

from lark import Token, Tree

from analyzer import ir
from analyzer.frontend.c_calls import _has_return
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.wgsl.types import I32, Local, MatPlace, Pointer, Scalar, StructVal, Vec


class InlineLowering:
    """User functions, mixed into KernelLowering."""

    def inline(self, fn: str, args: list, node):
        if fn in self.inline_stack or len(self.inline_stack) > 16:
            raise Unsupported(node, f"recursion through '{fn}'")
        tree = self.module.functions[fn]
        params = [c for c in tree.children if isinstance(c, Tree) and c.data == "param"]
        if len(params) != len(args):
            raise Unsupported(node, f"call of '{fn}' with {len(args)} arguments")
        span = self.span(node)
        scope: dict = {}
        for p, a in zip(params, args):
            pname = next(str(c) for c in p.children if isinstance(c, Token) and c.type == "NAME")
            v = self.value(a)
            if not isinstance(v, Pointer):
                v = self.hold(self.load(v, a), f"{fn}.{pname}", span)
            scope[pname] = v
        ret_types = [c for c in tree.children if isinstance(c, Tree) and c.data in ("named_type", "template_type")]
        ret_ty = self.type_of(ret_types[-1]) if ret_types else None
        saved = self.scopes, self.return_var, self.pending
        if ret_ty is not None and ret_ty.kind == "struct":
            self.return_var = self.struct_place(f"{fn}.ret", ret_ty)
            if self.return_var is None:
                raise Unsupported(node, f"function '{fn}' returning a {ret_ty} with a member that is not a "
                                        f"scalar, a vector, a matrix or such a struct")
        elif ret_ty is not None and ret_ty.kind in ("mat", "array"):   # its columns or elements
            self.return_var = self.elems_place(f"{fn}.ret", ret_ty)
            if self.return_var is None:
                raise Unsupported(node, f"function '{fn}' returning a {ret_ty}")
        else:
            self.return_var = (self.fresh(f"{fn}.ret", ret_ty.n if ret_ty.kind == "vec" else 0)
                               if ret_ty is not None else None)
        ret_var = self.return_var
        self.scopes = [self.scopes[0], scope]
        self.pending = []
        self.inline_stack.append(fn)
        try:
            body_ir = self.block(next(c for c in tree.children if isinstance(c, Tree) and c.data == "block"))
        finally:
            self.inline_stack.pop()
            self.scopes, self.return_var, self.pending = saved
        # A `return` inside an inlined body ends the call, not the kernel. Not a loop around the
        # body (its result would then be loop state): a flag set where it returns guards what
        # follows, and inside a loop of the body also breaks out of each enclosing loop in turn.
        if body_ir and isinstance(body_ir[-1], ir.Return):
            body_ir = body_ir[:-1]
        if _has_return(body_ir):
            flag = self.fresh(f"{fn}.returned")
            # The result starts at zero, as a WGSL variable would: a variable first assigned
            # in branches is one the analysis cannot follow through them.
            start = _zeroed(ret_var, self.zero(ret_ty, node), span) if ret_ty is not None else []
            body_ir = start + [ir.Assign(flag, ir.Const(0), span)] + _returns_guarded(body_ir, flag)
        self.pending.extend(body_ir)
        if ret_ty is None:
            return Scalar(ir.Const(0), I32)
        if ret_ty.kind == "vec":
            return Vec(tuple(ir.Var(f"{ret_var}.{i}") for i in range(ret_ty.n)), ret_ty)
        if ret_ty.kind in ("struct", "mat", "array"):
            return self.load(ret_var, node)
        if ret_ty.kind != "scalar":
            raise Unsupported(node, f"function '{fn}' returning a {ret_ty}")
        return Scalar(ir.Var(ret_var), ret_ty)


def _zeroed(place, zero, span) -> list:
    """Assignments of a zero value to a function's result variables (a name, or a struct's)."""
    if isinstance(place, StructVal):
        return [a for m, p in place.members.items() for a in _zeroed(p, zero.members[m], span)]
    if isinstance(place, MatPlace):
        return [a for c, z in zip(place.cols, zero.elems) for a in _zeroed(c, z, span)]
    name = place.name if isinstance(place, Local) else place
    if isinstance(zero, Vec):
        return [ir.Assign(f"{name}.{i}", c, span) for i, c in enumerate(zero.comps)]
    return [ir.Assign(name, zero.expr, span)]


def _returns_guarded(stmts: list, flag: str) -> list:
    """A function body whose `return`s set `flag`, and the statements after one that may return
    run only while `flag` is 0."""
    out: list = []
    for i, s in enumerate(stmts):
        if isinstance(s, ir.Return):
            out.append(ir.Assign(flag, ir.Const(1), s.span))
            return out
        if isinstance(s, ir.If) and _has_return([s]):
            out.append(ir.If(s.cond, _returns_guarded(s.then, flag), _returns_guarded(s.orelse, flag), s.span,
                             s.assumed))
        elif isinstance(s, ir.Loop) and _has_return(s.body):
            out.append(ir.Loop(s.init, s.cond, s.update, _returns_to_flag(s.body, flag), s.span, s.id))
        else:
            out.append(s)
            continue
        rest = _returns_guarded(stmts[i + 1:], flag)
        if rest:
            out.append(ir.If(ir.BinOp("==", ir.Var(flag), ir.Const(0)), rest, [], s.span))
        return out
    return out


def _returns_to_flag(stmts: list, flag: str) -> list:
    """Each `return` as `flag = 1; break`, and after each loop that holds one, `if flag: break`."""
    out: list = []
    for s in stmts:
        if isinstance(s, ir.Return):
            out += [ir.Assign(flag, ir.Const(1), s.span), ir.Break(s.span)]
        elif isinstance(s, ir.If):
            out.append(ir.If(s.cond, _returns_to_flag(s.then, flag), _returns_to_flag(s.orelse, flag), s.span,
                             s.assumed))
        elif isinstance(s, ir.Loop) and _has_return(s.body):
            out.append(ir.Loop(s.init, s.cond, s.update, _returns_to_flag(s.body, flag), s.span, s.id))
            out.append(ir.If(ir.BinOp("!=", ir.Var(flag), ir.Const(0)), [ir.Break(s.span)], [], s.span))
        else:
            out.append(s)
    return out
