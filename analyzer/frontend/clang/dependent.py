"""What a template kernel no launch instantiates leaves dependent on its type parameters, read as
symbolic values: a member of a type parameter (`Traits::WARPS_N`) and `sizeof(T)`. (An operator on
a dependent operand that clang leaves an unresolved call is calls.py's `dependent_operator`.) A call
of a function template with dependent arguments, which clang leaves unresolved, is bound here by
its explicit arguments and the types of its pointer and scalar arguments (`unresolved_callee`)."""

from __future__ import annotations

import re

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import Pointer, Scalar, Value
from analyzer.frontend.clang.cursors import CK, strip


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
        explicit = [k for k in callee.get_children() if k.kind != CK.OVERLOADED_DECL_REF]
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
