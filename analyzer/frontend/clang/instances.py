"""Kernel templates a Metal file instantiates explicitly, read as clang instantiates them (the markers
reader.instance_markers writes name each specialization); the values a parameter's type allows, and
the members of struct arguments as parameters. Mixed into ClangLowering."""

from __future__ import annotations

import re

from analyzer import ir
from analyzer.frontend.c_decls import UNSIGNED_RANGES
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import ParamStruct, Scalar, Vector
from analyzer.frontend.clang.cursors import CK, SCALAR_KINDS, canonical, is_vector, type_name
from analyzer.frontend.clang.launches import under_launches
from analyzer.frontend.clang.reader import INSTANCE_MARKER
from analyzer.frontend.types import vector_shape


class ClangInstances:
    """Explicit instantiations, parameter ranges, struct arguments' members; mixed into ClangLowering."""

    def _instance_marker(self, c) -> None:
        """`static_assert(__kr_instance(&k<float, 4>))`, written after an explicit instantiation
        (reader.instance_markers): the specialization clang instantiated, kept under its template."""
        call = next((n for n in c.walk_preorder() if n.kind == CK.CALL_EXPR and n.spelling == INSTANCE_MARKER), None)
        ref = next((n for n in call.walk_preorder() if n.kind == CK.DECL_REF_EXPR and n.referenced is not None and
                    n.referenced.kind == CK.FUNCTION_DECL and n.spelling != INSTANCE_MARKER), None) if call else None
        spec = ref.referenced if ref is not None else None
        template = spec.specialized_template if spec is not None else None
        if template is None or not spec.is_definition():
            return
        self.instances.setdefault(template.hash, [])
        if all(s.hash != spec.hash for s in self.instances[template.hash]):
            self.instances[template.hash].append(spec)

    def lower_runs(self, template, tparams, runs, launches) -> list[ir.Kernel]:
        """The kernels of a kernel (template): one a (function, its template parameters, arguments) run,
        under the host's launches of those arguments; one that does not read is unknown."""
        out = []
        for fn, tps, targs in runs:
            try:
                kernel = self._lower_instance(template, tparams, fn, tps, targs)
                out.extend(under_launches(kernel, [x for x in launches.get(template.hash, [])
                                                   if targs is None or tuple(x.targs) == targs]))
            except Unsupported as exc:
                node = exc.node if exc.node is not None else template
                self.kernel.body = []
                self.kernel.unsupported = (self.span(node), exc.what)
                out.append(self.kernel)
            except (ValueError, IndexError, KeyError, AttributeError, TypeError, StopIteration) as exc:
                # an AST shape this lowering does not expect: that kernel is unknown, never a traceback
                self.kernel.body = []
                self.kernel.unsupported = (self.span(template), f"a construct the clang front end does not read "
                                                                f"({type(exc).__name__})")
                out.append(self.kernel)
        return out

    def _lower_instance(self, template, tparams, fn, tps, targs) -> ir.Kernel:
        """A kernel, or one instantiation of a kernel template. A specialization in which clang
        reports an error (our reading of Metal as C++ refuses what Metal allows: a copy between
        address spaces of a class with a constructor) is read as the template's pattern under its
        arguments, as a template no instantiation names is; so is one whose body holds a construct
        the lowering does not read (the pattern, where types are left open, may read it)."""
        try:
            return self.lower_kernel(fn, tps, targs)
        except Unsupported as exc:
            if fn is template:
                raise
            failed, reason = self.kernel, exc
        try:
            return self.lower_kernel(template, tparams, targs)
        except Unsupported:
            self.kernel = failed   # (the instantiation's own reason is the one reported)
            raise reason from None

    def param_range(self, name: str, ty: str) -> None:
        """The values a parameter of a type can hold: an unsigned integer's, a bool's 0 and 1 (a
        wider reading lets two threads take values no host can pass: false alarms)."""
        rng = (0, 1) if ty == "bool" else UNSIGNED_RANGES.get(ty)
        if rng is not None:
            self.kernel.param_ranges[name] = rng

    @property
    def param_pointers(self) -> dict:
        return self.__dict__.setdefault("_param_pointers", {})

    def param_field(self, base: ParamStruct, field: str, c):
        ptr = self.param_pointers.get((base.name, field))
        if ptr is not None:
            return ptr
        ty = self.note_type(c.type)
        shape = vector_shape(ty)
        if shape and self.lang == "metal":
            # a vector member of a constant argument (`s.size.x`): one parameter a lane
            names = [self._field_param(base, f"{field}_{d}") for d in "xyzw"[:shape[1]]] if shape[1] <= 4 else \
                [self._field_param(base, f"{field}_{i}") for i in range(shape[1])]
            for n in names:
                self.param_range(n, shape[0])
            return Vector(tuple(ir.Param(n) for n in names), ty)
        name = self._field_param(base, field)
        self.param_range(name, ty)   # a member of a struct argument: its type's values too
        return Scalar(ir.Param(name), ty)

    def _field_param(self, base: ParamStruct, field: str) -> str:
        """The parameter a scalar member of a struct argument is: `p.n` (two arguments' members, or a
        member and an argument, are different values even where their names are the same); Metal's
        constant arguments keep the member's own name where no other parameter has it."""
        owners = self.__dict__.setdefault("_field_owners", {}).setdefault(id(self.kernel), {})
        name = field if self.lang == "metal" and owners.get(field, base.name) == base.name and (
            field not in self.kernel.params or field in owners) else f"{base.name}.{field}"
        owners.setdefault(name, base.name)
        if name not in self.kernel.params:
            self.kernel.params.append(name)
        return name


def same_instance(instance: str, name: str) -> bool:
    """Whether clang's name of a specialization (`ns::k<float, true>`) is the kernel's (`k<float, 1>`)."""
    def norm(x: str) -> str:
        head, _, args = x.partition("<")
        args = re.sub(r"\btrue\b", "1", re.sub(r"\bfalse\b", "0", args))
        args = re.sub(r"\b_Float16\b", "half", re.sub(r"\b__bf16\b", "bfloat", args))
        return head.rsplit("::", 1)[-1].strip() + "<" + re.sub(r"\s+", "", args)
    return norm(instance) == norm(name)


def instance_arguments(spec) -> tuple:
    """A specialization's template arguments as the kernel's name shows them: integers, type names."""
    out = []
    for i in range(max(spec.get_num_template_arguments(), 0)):
        kind = spec.get_template_argument_kind(i).name
        if kind == "INTEGRAL":
            v = spec.get_template_argument_value(i)
            # (`true` reads back as a one-bit -1)
            out.append(1 if v == -1 and spec.get_template_argument_unsigned_value(i) == 1 else v)
        elif kind == "TYPE":
            t = spec.get_template_argument_type(i)
            # (a scalar or vector by its Metal name: `half`, not clang's `_Float16`)
            out.append(type_name(t) if canonical(t).kind in SCALAR_KINDS or is_vector(t) else t.spelling)
        else:
            out.append("?")
    return tuple(out)
