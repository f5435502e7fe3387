"""A pointer a kernel gets from a class's conversion operator: `T *s = SharedMemory<T>();`, the
CUDA samples' way to give extern shared memory a template's type (or from a method of such a class
holding nothing, `shobj.GetPointer()`, shoc's). The operator's body, its
declarations and its `return`, is lowered where the pointer is declared; one that does more, or that
reads the object's members, leaves the kernel `unknown`."""

from __future__ import annotations

from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import Pointer
from analyzer.frontend.clang.cursors import CK, TK, canonical, children, strip


class ClangConversions:
    """Conversion operators to pointers; mixed into ClangLowering."""

    def converted_pointer(self, init) -> Pointer | None:
        s = strip(init)
        if s.kind != CK.CALL_EXPR:
            return None
        ref = s.referenced
        if ref is not None and ref.kind == CK.CONVERSION_FUNCTION:
            return self._run_conversion(ref, {}, init)   # resolved: the instantiated operator
        if ref is None and not list(s.get_arguments()):
            # `T *sh = shobj.GetPointer();` on a `SharedMemory<T> shobj;` (shoc): the specialisation's
            # method, declarations and a return as a conversion operator's
            kids = children(s)
            callee = strip(kids[0]) if kids else None
            obj = children(callee) if callee is not None and callee.kind == CK.MEMBER_REF_EXPR else []
            name = self.source.text(callee).rsplit(".", 1)[-1].strip() if obj else ""
            fn = self.stateless_specialisation_method(obj[0], name, 0) if name.isidentifier() else None
            if fn is not None and canonical(fn.result_type).kind == TK.POINTER:
                return self._run_conversion(fn, {}, init)
        if ref is not None or list(s.get_arguments()):
            return None
        # in a template: `SharedMemory<T>()` of a dependent type, the operator found in the class template
        tref = next((k for k in s.get_children() if k.kind == CK.TEMPLATE_REF), None)
        tmpl = tref.referenced if tref is not None else None
        if tmpl is None or tmpl.kind != CK.CLASS_TEMPLATE:
            return None
        targs = [self.note_type(k.type) for k in s.get_children() if k.kind == CK.TYPE_REF]
        params = [p.spelling for p in tmpl.get_children() if p.kind == CK.TEMPLATE_TYPE_PARAMETER]
        owner = self._specialisation(tmpl, targs) or tmpl
        fn = next((m for m in owner.get_children() if m.kind == CK.CONVERSION_FUNCTION and
                   canonical(m.result_type).kind == TK.POINTER and not m.is_const_method()), None)
        if fn is None:
            return None
        return self._run_conversion(fn, dict(zip(params, targs)) if owner is tmpl else {}, init)

    def _specialisation(self, tmpl, targs):
        """The explicit specialisation of the class template for these arguments (`SharedMemory<double>`)."""
        want = f"{tmpl.spelling}<{', '.join(targs)}>"
        parent = tmpl.semantic_parent
        for k in parent.get_children() if parent is not None else ():
            if k.kind in (CK.STRUCT_DECL, CK.CLASS_DECL) and k.spelling == tmpl.spelling and \
                    k.displayname.replace(" ", "") == want.replace(" ", ""):
                return k
        return None

    def _run_conversion(self, fn, types: dict, init) -> Pointer:
        body = next((k for k in fn.get_children() if k.kind == CK.COMPOUND_STMT), None)
        stmts = children(body) if body is not None else []
        if not stmts or stmts[-1].kind != CK.RETURN_STMT or not children(stmts[-1]) or \
                any(k.kind != CK.DECL_STMT for k in stmts[:-1]):
            raise Unsupported(init, f"conversion '{fn.spelling}' that is not declarations and a return")
        self.check_errors(fn)
        saved = self.scopes, self.this_val, dict(self.template_types)
        self.scopes, self.this_val = [self.scopes[0], {}], None
        self.template_types.update(types)
        try:
            pre = [x for d in stmts[:-1] for x in self.stmt(d)]
            val = self.rvalue(children(stmts[-1])[0])
        finally:
            self.scopes, self.this_val, self.template_types = saved
        if pre or not isinstance(val, Pointer) or val.buffer == "?":
            raise Unsupported(init, f"conversion '{fn.spelling}' that does not return a buffer's pointer")
        return val
