"""Calls in the C-family lowering: the dialects' builtins (barriers, intrinsics that produce values,
vector constructors) and device functions, inlined where they touch memory or synchronise.

Separate because calls are where each dialect's vocabulary hooks in, and where device functions
(and, with a C++ front end, overloads and templates) are resolved.
"""

from __future__ import annotations

from dataclasses import replace

from lark import Token, Tree

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported, kind, tokens_of
from analyzer.frontend.c_values import LocalRef, Pointer, Scalar, Value, Vector
from analyzer.frontend.types import vector_shape


class CallLowering:
    """Builtin calls, barriers and device-function inlining; mixed into CLowering."""

    def _callee_name(self, node: Tree) -> str | None:
        callee = node.children[0]
        k = kind(callee)
        if k == "name":
            return str(callee.children[0])
        if k == "scoped_name":
            return "::".join(str(c) for c in callee.children)
        return None

    def expr_call(self, node):
        fn = self._callee_name(node)
        if fn is None:
            raise Unsupported(node, "call through an expression")
        args = list(node.children[1].children) if node.children[1] is not None else []
        special = self.call_value(fn, args, node)
        if special is not None:
            return special
        if fn.startswith("make_") and vector_shape(fn[5:]):
            ty = fn[5:]
            comps = tuple(self._scalar(self.rvalue(a)) for a in args)
            if len(comps) != vector_shape(ty)[1]:  # type: ignore[index]
                raise Unsupported(node, f"{fn} with {len(comps)} values")
            return Vector(comps, ty)
        if self.barrier(fn, node) is not None:
            raise Unsupported(node, f"barrier '{fn}' inside an expression")
        if fn in self.functions and self._should_inline(fn):
            return self._inline(fn, args, node)
        vals = [self.rvalue(a) for a in args]
        ty = "float" if any(isinstance(v, Scalar) and self._is_float(v.ty) for v in vals) else "int"
        if any(isinstance(v, Pointer) for v in vals):
            raise Unsupported(node, f"call of '{fn}' with a pointer argument")
        return Scalar(ir.Call(fn, tuple(self._scalar(v) for v in vals)), ty)

    def call_value(self, fn: str, args: list, node: Tree) -> Value | None:
        """Dialect builtins that produce values (shuffles, atomics); None for ordinary calls."""
        return None

    def call_stmt(self, node: Tree) -> list[ir.Stmt] | None:
        """Barriers and other calls that are statements; None when the call is a plain value."""
        fn = self._callee_name(node)
        barrier = self.barrier(fn, node)
        if barrier is not None:
            return [barrier]
        return None

    def barrier(self, fn: str | None, node: Tree) -> ir.Barrier | None:
        return None

    def opaque(self, why: str) -> ir.Opaque:
        return ir.Opaque(why, next(self.opaque_ids))

    def _should_inline(self, fn: str) -> bool:
        """Inline device functions that touch memory or synchronise; others stay pure calls."""
        tree = self.functions[fn]
        head = tree.children[0]
        params = next(c for c in head.children if isinstance(c, Tree) and kind(c) == "params")
        if any(p is not None and (self._type_of(p).ptr or self._type_of(p).ref) for p in params.children):
            return True
        body_text = " ".join(str(t) for t in tokens_of(tree.children[1]))
        return any(b in body_text.split() for b in self.barrier_names)

    barrier_names: tuple[str, ...] = ()

    def _inline(self, fn: str, args: list, node: Tree) -> Value:
        if self.inline_depth > 8:
            raise Unsupported(node, f"recursion through '{fn}'")
        tree = self.functions[fn]
        head, body = tree.children
        params = next(c for c in head.children if isinstance(c, Tree) and kind(c) == "params")
        plist = [p for p in params.children if p is not None]
        if len(plist) != len(args):
            raise Unsupported(node, f"call of '{fn}' with {len(args)} arguments")
        scope: dict[str, Value] = {}
        stmts: list[ir.Stmt] = []
        span = self.span(node)
        for p, a in zip(plist, args):
            ty = self._type_of(p)
            pname = next((str(c) for c in p.children if isinstance(c, Token) and c.type == "NAME"), None)
            val = self.rvalue(a) if not ty.ref else self.lvalue_pointer(a)
            if pname is None:   # an unnamed parameter: the argument is evaluated, never read
                continue
            if isinstance(val, Pointer):
                scope[pname] = replace(val, elem=ty.base) if ty.ptr else val
            else:
                ref = LocalRef(self.fresh_var(f"{fn}.{pname}"), ty.base)
                stmts.extend(self._assign_local(ref, val, span))
                scope[pname] = ref
        ret_ty = self._type_of(head).base
        saved = self.scopes, getattr(self, "return_var", None)
        self.return_var = self.fresh_var(f"{fn}.ret")
        self.scopes = [self.scopes[0], scope]
        self.inline_depth += 1
        # Effects of the arguments come first, then the parameter bindings, then the body.
        outer, self.pending = self.pending + stmts, []
        try:
            body_ir = self._block(body)
        finally:
            self.inline_depth -= 1
            ret_var = self.return_var
            self.scopes, self.return_var = saved
            self.pending = outer
        if any(isinstance(s, ir.Loop) and _has_return(s.body) for s in ir.walk_stmts(body_ir, into_loops=False)):
            raise Unsupported(node, f"'return' inside a loop of inlined function '{fn}'")
        # A `return` inside an inlined body ends the call, not the kernel: wrap it in a one-trip loop.
        if any(isinstance(s, ir.Return) for s in ir.walk_stmts(body_ir, into_loops=False)):
            body_ir = _returns_to_breaks(body_ir)
            body_ir.append(ir.Break(span))
            self.pending.append(ir.Loop([], None, [], body_ir, span, next(self.loop_ids)))
        else:
            self.pending.extend(body_ir)
        if ret_ty == "void":
            return Scalar(ir.Const(0), "int")
        return Scalar(ir.Var(ret_var), ret_ty)


def _has_return(stmts) -> bool:
    for s in stmts:
        if isinstance(s, ir.Return):
            return True
        if isinstance(s, ir.If) and (_has_return(s.then) or _has_return(s.orelse)):
            return True
        if isinstance(s, ir.Loop) and _has_return(s.body):
            return True
    return False


def _returns_to_breaks(stmts):
    out = []
    for s in stmts:
        if isinstance(s, ir.Return):
            out.append(ir.Break(s.span))
        elif isinstance(s, ir.If):
            out.append(ir.If(s.cond, _returns_to_breaks(s.then), _returns_to_breaks(s.orelse), s.span))
        else:
            out.append(s)
    return out
