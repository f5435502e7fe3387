"""Calls in the C-family lowering: the dialects' builtins (barriers, intrinsics that produce values,
vector constructors) and device functions, inlined where they touch memory or synchronise.

Separate because calls are where each dialect's vocabulary hooks in, and where device functions
(and, with a C++ front end, overloads and templates) are resolved.
"""

from __future__ import annotations

from dataclasses import replace

from lark import Token, Tree

from analyzer import ir
from analyzer.frontend.c_stmts import jumps_to_flag, leftover_goto
from analyzer.frontend.c_tree import Unsupported, kind, position, tokens_of
from analyzer.frontend.c_values import LocalRef, LocalStruct, Pointer, Scalar, SharedScalar, Value, Vector
from analyzer.frontend.types import vector_shape


# Annotations of earlier GPU verifiers (GPUVerify, GKLEE) that kernels of their suites carry: claims
# to prove (invariants, postconditions, access sets), not facts the analysis may rely on, so they
# are skipped (never evaluated: the predicates inside them, `__implies`, `__read(p)`, are no values).
# `__requires`, a precondition, is a fact: c_stmts.ASSUMPTIONS.
VERIFIER_ANNOTATIONS = frozenset("""__invariant __global_invariant __candidate_invariant
    __candidate_global_invariant __function_wide_invariant __function_wide_candidate_invariant
    __ensures __global_ensures __global_requires __assert __global_assert __no_read __no_write""".split())


class CallLowering:
    """Builtin calls, barriers and device-function inlining; mixed into CLowering."""

    def _callee_name(self, node: Tree) -> str | None:
        callee = node.children[0]
        k = kind(callee)
        if k == "name":
            return str(callee.children[0])
        if k == "scoped_name":
            return "::".join(str(c) for c in callee.children)
        if k == "template_ref":   # f<4>(...): a function template with explicit arguments
            return str(callee.children[0])
        return None

    def expr_call(self, node):
        fn = self._callee_name(node)
        if fn is None:
            raise Unsupported(node, "call through an expression")
        if fn in VERIFIER_ANNOTATIONS:   # neither evaluated nor used (GPUVerify writes them in loop
            return Scalar(ir.Const(1), "int")   # conditions too: `__invariant(e), i < n`)
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
        if fn in self.functions and (self._inlined(fn) or id(self.functions[fn]) in self.template_params):
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

    def call_text(self, node) -> str:
        """The barrier call as written: from its name to the parenthesis closing its arguments."""
        n, col = position(node)   # in the text as parsed (after any preprocessing)
        line = self.parsed_lines[n - 1] if 0 < n <= len(self.parsed_lines) else ""
        rest, depth = line[max(col - 1, 0):], 0
        for i, ch in enumerate(rest):
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    return rest[:i + 1]
        return line.strip().rstrip(";")

    def opaque(self, why: str) -> ir.Opaque:
        return ir.Opaque(why, next(self.opaque_ids))

    def _inlined(self, fn: str) -> bool:
        cache = self.__dict__.setdefault("_inline_cache", {})
        key = id(self.functions[fn])   # a name may stand for another namespace's function
        if key not in cache:
            cache[key] = self._should_inline(fn)
        return cache[key]

    def _should_inline(self, fn: str, seen: frozenset[str] = frozenset()) -> bool:
        """Inline device functions that touch memory, synchronise, or read anything but their
        parameters (thread indices, file-scope variables, other such functions): their result is
        not a function of their arguments. The others stay calls, which the analysis reads as
        the same value for the same arguments."""
        tree = self.functions[fn]
        head = tree.children[0]
        params = next(c for c in head.children if isinstance(c, Tree) and kind(c) == "params")
        if any(p is not None and (self._type_of(p).ptr or self._type_of(p).ref) for p in params.children):
            return True
        words = {str(t) for t in tokens_of(tree.children[1])}
        if words & set(self.barrier_names) or words & self.thread_state_names():
            return True
        return any(self._should_inline(g, seen | {fn}) for g in words & self.functions.keys() - seen - {fn})

    def thread_state_names(self) -> set[str]:
        """Names whose value differs between threads or lives in memory: the dialect's builtin
        variables and the file's variables."""
        names = set(getattr(self, "_builtins", ()))
        for decl in self.globals:
            names |= {str(d.children[0]) for d, _ in self.declarators(decl)}
        return names

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
        callee = node.children[0]
        targs = callee.children[1] if kind(callee) == "template_ref" else None
        aliases = self._bind_template(self.template_params.get(id(tree), []), targs, scope, node)
        try:
            return self._inline_body(fn, tree, plist, args, scope, stmts, span, node)
        finally:
            self._restore_aliases(aliases)

    def _inline_body(self, fn, tree, plist, args, scope, stmts, span, node) -> Value:
        head, body = tree.children
        for p, a in zip(plist, args):
            ty = self._type_of(p)
            pname = next((str(c) for c in p.children if isinstance(c, Token) and c.type == "NAME"), None)
            if ty.ref and not ty.ptr and isinstance(a, Tree) and kind(a) == "name":
                # `T &x` bound to a caller's variable: the parameter is that variable (its IR name),
                # so the callee's stores are the caller's (swap(a, b) of two locals).
                bound = self.lookup(str(a.children[0]), a)
                if isinstance(bound, (LocalRef, LocalStruct, SharedScalar)):
                    if pname is not None:
                        scope[pname] = bound
                    continue
            if ty.ref and "const" in ty.quals and not (isinstance(a, Tree) and kind(a) in ("index", "deref")):
                ty = replace(ty, ref=False)   # `const T &x = a + b`: a value (a temporary's)
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
        goto = leftover_goto(body_ir)
        if goto is not None:
            raise Unsupported(goto.node, f"goto {goto.label} (to an earlier label, into a block or out of a loop)")
        if any(isinstance(s, ir.Loop) and _has_return(s.body) for s in ir.walk_stmts(body_ir, into_loops=False)):
            raise Unsupported(node, f"'return' inside a loop of inlined function '{fn}'")
        # A `return` inside an inlined body ends the call, not the kernel: what follows a return
        # runs only while a flag says none was taken (straight-line code, no loop: the returned
        # value stays a plain value, not loop state).
        if any(isinstance(s, ir.Return) for s in ir.walk_stmts(body_ir, into_loops=False)):
            flag = self.fresh_var(f"{fn}.returned")
            self.pending.append(ir.Assign(flag, ir.Const(0), span))
            self.pending.extend(jumps_to_flag(body_ir, flag, span, ir.Return, _has_return))   # no return in a loop
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
