"""What a template kernel no launch instantiates leaves dependent on its type parameters, read as
symbolic values: a member of a type parameter (`Traits::WARPS_N`) and `sizeof(T)`. (An operator on
a dependent operand that clang leaves an unresolved call, the built-in operator (`dependent_operator`);
an unresolved construction `IdxT(x)`; a functor of a type parameter over constant memory (Metal). A
call of a function template with dependent arguments, which clang leaves unresolved, is bound here
by its explicit arguments and the types of its pointer and scalar arguments (`unresolved_callee`)."""

from __future__ import annotations

import re

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import Pointer, Scalar, Value, Vector
from analyzer.frontend.clang.cursors import CK, TK, canonical, children, strip


_ARITH = frozenset({"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"})
_COMPARE = frozenset({"<", ">", "<=", ">=", "==", "!="})


class ClangDependent:
    """Dependent names and sizes; mixed into ClangLowering."""

    def _dependent_size(self, c) -> Value:
        """`sizeof(T)` of a template's type parameter: the size of the type a launch binds it to, else
        a symbolic parameter named as written, from 1 to 256 bytes."""
        words = [t.spelling for t in c.get_tokens()]
        if len(words) == 4 and words[0] in ("sizeof", "alignof") and words[1] == "(" and words[3] == ")" and \
                words[2].isidentifier():
            bound = self.template_types.get(words[2]) if words[0] == "sizeof" else None
            size = self.size(bound) if bound else None
            if size:
                return Scalar(ir.Const(size), "int")
            name = "".join(words)
            if name not in self.kernel.params:
                self.kernel.params.append(name)
                self.kernel.param_ranges[name] = (1, 256)
            return Scalar(ir.Param(name), "int")
        raise Unsupported(c, f"'{' '.join(words)[:40]}', a size clang does not know")

    def _dependent_member(self, c) -> Value:
        """`Traits::WARPS_N` where Traits is a template's type parameter: a value of the type the
        template is never given here, so a symbolic parameter named as written (as a template's
        non-type parameter is)."""
        words = [t.spelling for t in c.get_tokens()]
        text = "".join(words)
        plain = len(words) >= 3 and words[1::2] == ["::"] * (len(words) // 2) and len(words) % 2 == 1 and all(
            w.isidentifier() and w != "template" for w in words[0::2])
        # `traits<T, 4>::qk`: a member of a class template's specialisation on the parameters
        specialised = len(words) >= 6 and words[-2] == "::" and words[-1].isidentifier() and "template" not in words \
            and all(w.isidentifier() or w.isdigit() or w in ("::", "<", ">", ",") for w in words) and \
            words.count("<") == words.count(">")
        if plain or specialised:
            if text not in self.kernel.params:
                self.kernel.params.append(text)
            return Scalar(ir.Param(text), "int")
        raise Unsupported(c, f"'{text[:60]}', a member of a template's type parameter")

    def _dependent_trait(self, c) -> Value:
        """`std::is_same_v<MaskT, bool>`, a variable template on a template's type parameter, which
        clang leaves unresolved: the instantiation decides it, so a symbolic parameter named as
        written (`if constexpr` on it: both branches, as for a non-type parameter); a `_v` trait of
        the standard library is 0 or 1."""
        words = [t.spelling for t in c.get_tokens()]
        text = "".join(words)
        if not words or not all(w.isidentifier() or w.isdigit() or w in ("::", "<", ">", ",", "*", "&") for w in words) \
                or words.count("<") != words.count(">") or "<" not in words:
            raise Unsupported(c, f"'{text[:60]}', a variable template of a template's type parameter")
        if text not in self.kernel.params:
            self.kernel.params.append(text)
            name = words[words.index("<") - 1]
            if words[0] == "std" and name.endswith("_v") and name.startswith(("is_", "has_")):
                self.kernel.param_ranges[text] = (0, 1)
        return Scalar(ir.Param(text), "int")

    def unresolved_callee(self, c, kids):
        """(name, arguments, the function template, its bindings) of an unresolved call `f<A>(x, y)`:
        explicit template arguments bound in order, type parameters deduced from pointer and scalar
        arguments; None when the callee is no overloaded name."""
        callee = strip(kids[0])
        over = next((k for k in callee.walk_preorder() if k.kind == CK.OVERLOADED_DECL_REF), None)
        if over is None:
            return None
        args = kids[1:]
        decls = [overloaded_decl(over, i) for i in range(overloaded_count(over))]
        fns = [d for d in decls if d is not None and d.kind in (CK.FUNCTION_TEMPLATE, CK.FUNCTION_DECL)]
        fn = next((d for d in fns if len([p for p in d.get_children() if p.kind == CK.PARM_DECL]) == len(args)),
                  fns[0] if fns else None)
        if fn is None:
            return None
        if self.in_headers(fn):
            return over.spelling, args, None, None
        tparams = [p for p in fn.get_children() if p.kind in (CK.TEMPLATE_NON_TYPE_PARAMETER,
                                                              CK.TEMPLATE_TYPE_PARAMETER)]
        # (a namespace that qualifies the name, `db::load<BM>(...)`, is no template argument)
        explicit = [k for k in callee.get_children() if k.kind not in (CK.OVERLOADED_DECL_REF, CK.NAMESPACE_REF)]
        values, types = {}, {}
        for tp, a in zip(tparams, explicit):
            if tp.kind == CK.TEMPLATE_TYPE_PARAMETER:
                types[tp.spelling] = self.note_type(a.type)
            else:
                values[tp.spelling] = self.rvalue(a)
        params = [p for p in fn.get_children() if p.kind == CK.PARM_DECL]
        for p, a in zip(params, args):
            base = re.sub(r"\b(const|volatile)\b|[*&]", "", p.type.spelling).strip()
            if any(tp.spelling == base and tp.kind == CK.TEMPLATE_TYPE_PARAMETER for tp in tparams) \
                    and base not in types:
                outer, self.pending = self.pending, []
                try:
                    v = self.rvalue(a)
                finally:
                    self.pending = outer
                types[base] = v.elem if isinstance(v, Pointer) else getattr(v, "ty", "float")
        return over.spelling, args, fn, (values, types)

    def dependent_operator(self, c, kids) -> Value | None:
        """`a op b`, `op a`, `a++` clang leaves unresolved on operands of a dependent type: the
        built-in operator on the operands' values (a class's own operator would have resolved
        in an instantiation; here the operands are the kernel's scalars, pointers or vectors)."""
        at = [i for i, k in enumerate(kids) if k.kind == CK.DECL_REF_EXPR and not k.spelling and any(
            n.kind == CK.OVERLOADED_DECL_REF and n.spelling.startswith("operator") for n in children(k))]
        if len(at) != 1:
            return None
        i = at[0]
        sym = next(n.spelling for n in children(kids[i]) if n.kind == CK.OVERLOADED_DECL_REF)[len("operator"):]
        span = self.span(c)
        if len(kids) == 3 and i == 1:
            a_c, b_c = kids[0], kids[2]
            if sym in ("&&", "||"):
                return Scalar(ir.BinOp(sym, self.cond(a_c), self.cond(b_c)), "bool")
            # An assignment's value is the value stored (reading the place again would be an
            # access the program does not make: a false read-after-write with other threads).
            if sym == "=":
                value = self.rvalue(b_c)
                if not isinstance(value, (Pointer, Scalar, Vector)):
                    return None
                self.pending.extend(self.store(a_c, value, span))
                return value
            if sym.endswith("=") and sym[:-1] in _ARITH:
                old, rhs = self.rvalue(a_c), self.rvalue(b_c)
                if not all(isinstance(v, (Pointer, Scalar, Vector)) for v in (old, rhs)):
                    return None
                new = self._binop(sym[:-1], old, rhs, c)
                self.pending.extend(self.store(a_c, new, span))
                return new
            if sym in _ARITH or sym in _COMPARE:
                a, b = self.rvalue(a_c), self.rvalue(b_c)
                if not all(isinstance(v, (Pointer, Scalar, Vector)) for v in (a, b)):
                    return None   # a class's own operator, not the built-in one
                return self._binop(sym, a, b, c)
            return None
        if len(kids) == 2:
            operand = kids[1 - i]
            if sym in ("++", "--"):
                old = self.rvalue(operand)
                new = self._binop(sym[0], old, Scalar(ir.Const(1)), c)
                self.pending.extend(self.store(operand, new, span))
                return old if i == 1 else new
            if sym == "*" and isinstance(self.rvalue(operand), Pointer):   # (no postfix `*`: either order)
                return self.load(self.place(c), span)   # `*p` of a pointer whose type is the template's
            if i == 0 and sym in ("-", "!", "~", "+"):
                a = self.rvalue(operand)
                if sym == "+":
                    return a
                if isinstance(a, Scalar) and self._is_float(a.ty) or isinstance(a, Vector):
                    return self._binop("-", Scalar(ir.Const(0), "int"), a, c) if sym == "-" else \
                        Scalar(ir.Call("f" + sym, (self._scalar(a),)), getattr(a, "ty", "float"))
                return Scalar(ir.UnOp(sym, self._scalar(a)), "int" if sym == "!" else getattr(a, "ty", "int"))
        return None


    def dependent_deref(self, c) -> Pointer | None:
        """The place `*p` names where clang leaves the `*` unresolved (p's type is a template's)."""
        kids = children(c)
        ops = [i for i, k in enumerate(kids) if k.kind == CK.DECL_REF_EXPR and not k.spelling and any(
            n.kind == CK.OVERLOADED_DECL_REF and n.spelling == "operator*" for n in children(k))]
        if c.referenced is not None or len(kids) != 2 or len(ops) != 1:
            return None
        ptr = self.rvalue(kids[1 - ops[0]])
        return ptr if isinstance(ptr, Pointer) else None

    def unresolved_construct(self, c, kids) -> Value:
        """`float(x)` with x of a dependent type, `IdxT(s[i])`: an unresolved construction, its children
        (but the type's name) its operands, read for their effects."""
        operands = [k for k in kids if k.kind not in (CK.TYPE_REF, CK.TEMPLATE_REF, CK.NAMESPACE_REF)]
        if canonical(c.type).kind not in (TK.DEPENDENT, TK.UNEXPOSED) and "type-parameter" not in \
                canonical(c.type).spelling:
            return self._construct(c, "", operands)
        vals = [self.rvalue(k) for k in operands]
        if any(isinstance(v, Pointer) for v in vals):
            raise Unsupported(c, f"a pointer converted to '{c.type.spelling}', a template's type")
        # (a value of a type the template leaves open: a function of its operands, a vector's every lane;
        # an operand of another kind a value of this thread's own, so that two threads' never agree)
        return Scalar(ir.Call("", tuple(x for v in vals for x in (
            v.comps if isinstance(v, Vector) else (self._scalar(v),) if isinstance(v, Scalar) else
            (self.opaque(f"a '{c.type.spelling}' built from a value of another kind"),)))), "int")

    def reader_of_constants(self, fn, vals, c) -> Value:
        """A callee not read (a functor of the template's type parameter, `l_index(i, dims, strides)`,
        default-constructed) whose pointers are all to constant memory: it can read them, never write
        (Metal has no device memory a function reaches but through its arguments or its object): a
        value of its arguments."""
        return Scalar(ir.Call(fn, tuple(ir.Call(f"ptr:{v.buffer}", (v.offset,)) if isinstance(v, Pointer)
                                        else self._scalar(v) for v in vals)), self.note_type(c.type))


def overloaded_count(cursor) -> int:
    import clang.cindex as ci
    lib = ci.conf.lib
    lib.clang_getNumOverloadedDecls.argtypes = [ci.Cursor]
    lib.clang_getNumOverloadedDecls.restype = __import__("ctypes").c_uint
    return lib.clang_getNumOverloadedDecls(cursor)


def overloaded_decl(cursor, i: int):
    import clang.cindex as ci
    lib = ci.conf.lib
    lib.clang_getOverloadedDecl.argtypes = [ci.Cursor, __import__("ctypes").c_uint]
    lib.clang_getOverloadedDecl.restype = ci.Cursor
    d = lib.clang_getOverloadedDecl(cursor, i)
    d = ci.Cursor.from_cursor_result(d, cursor)   # keeps the translation unit alive
    return None if d is None or d.kind.is_invalid() else d


def holds_no_pointer(kids) -> bool:
    """Whether a call's callee is a function, or an object declared without an initialiser (a
    default-constructed functor: none of the kernel's pointers is in it)."""
    if not kids:
        return False
    callee = strip(kids[0])
    ref = callee.referenced if callee.kind == CK.DECL_REF_EXPR else None
    if ref is None:
        return callee.kind == CK.OVERLOADED_DECL_REF or any(k.kind == CK.OVERLOADED_DECL_REF for k in children(callee))
    if ref.kind in (CK.FUNCTION_DECL, CK.FUNCTION_TEMPLATE):
        return True
    return ref.kind == CK.VAR_DECL and all(k.kind in (CK.TYPE_REF, CK.TEMPLATE_REF, CK.NAMESPACE_REF)
                                           for k in ref.get_children())

