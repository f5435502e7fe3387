"""What a template kernel no launch instantiates leaves dependent on its type parameters, read as
symbolic values: a member of a type parameter (`Traits::WARPS_N`) and `sizeof(T)`. (An operator on
a dependent operand that clang leaves an unresolved call is calls.py's `dependent_operator`.)"""

from __future__ import annotations

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import Scalar, Value


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
