"""The members of a kernel's struct argument that live in memory: a pointer member is a buffer
(`p.data`, a base class's too), and arrays inside one the kernel cannot write (`const __grid_constant__
cuda::std::array<int32_t, 8> shape`, mlx; a `const Params p` holding `int dims[4]`): the argument's
bytes, the same for every thread, read as a constant buffer of the argument's own (`p.dims[i]`,
`shape[i]`, `shape.data()`). Elements equal where their indices are, and nothing writes them.
A struct argument that is not `const` may be written by the thread (its own copy): its arrays stay
unmodelled.
"""

from __future__ import annotations

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import _add, ParamStruct, Pointer, array_start, const_int, Scalar
from analyzer.frontend.clang.cursors import CK, TK, canonical, space_of
from analyzer.frontend.clang.symbolic_dims import scaled, stride

# the member functions of the C++ library's array a kernel reads it through
_ARRAY_METHODS = frozenset({"data", "operator[]", "size"})


class ClangParamArrays:
    """The memory members of struct arguments; mixed into ClangLowering."""

    def _pointer_fields(self, name, t) -> None:
        """A buffer (`name.field`) for each pointer member, a base class's too."""
        decl = t.get_declaration()
        for base in decl.get_children() if decl is not None else ():
            if base.kind == CK.CXX_BASE_SPECIFIER:   # a base class's pointers too (`struct P : Base`)
                self._pointer_fields(name, canonical(base.type))
        for f in t.get_fields():
            ft = canonical(f.type)
            if ft.kind == TK.POINTER:
                bname = f"{name}.{f.spelling}"
                elem = self.note_type(ft.get_pointee())
                space = space_of(ft.get_pointee()) or ir.GLOBAL
                self.kernel.buffers[bname] = ir.Buffer(bname, space, elem, self.size(elem) or 4)
                self.param_pointers[(name, f.spelling)] = Pointer(bname, space, elem, ir.Const(0))

    def declare_param_members(self, name: str, t, const: bool) -> None:
        """The pointer members' buffers, and a constant buffer (`name.field`) for each array member of
        a `const` struct argument."""
        self._pointer_fields(name, t)
        if not const:
            return
        for f in t.get_fields():
            ft = canonical(f.type)
            if ft.kind != TK.CONSTANTARRAY:
                continue
            extents, et = [], ft
            while et.kind == TK.CONSTANTARRAY:
                extents.append(et.element_count)
                et = canonical(et.element_type)
            elem = self.note_type(et)
            size = self.size(elem)
            if not size or et.kind in (TK.RECORD, TK.POINTER):
                continue   # (an array of structs or pointers: not read this way)
            total = size
            for n in extents:
                total *= n
            bname = f"{name}.{f.spelling}"
            self.__dict__.setdefault("_param_arrays", set()).add(bname)
            self.kernel.buffers[bname] = ir.Buffer(bname, ir.CONSTANT, elem, size, size_bytes=total)
            self.param_pointers[(name, f.spelling)] = array_start(bname, ir.CONSTANT, elem, extents)

    def load(self, ptr, span):
        """An element at a constant index is the argument's own member, a parameter (`d.n.1`): the
        same value wherever it is read (two reads of memory are two values)."""
        if ptr.buffer in self.__dict__.get("_param_arrays", ()) and ptr.buffer in self.kernel.buffers:
            buf = self.kernel.buffers[ptr.buffer]
            at = const_int(ptr.offset)
            if at is not None and ptr.elem == buf.elem_type and not ptr.inner and at % buf.elem_size == 0 and \
                    0 <= at < (buf.size_bytes or 0):
                name = f"{ptr.buffer}.{at // buf.elem_size}"
                if name not in self.kernel.params:
                    self.kernel.params.append(name)
                    self.param_range(name, ptr.elem)
                return Scalar(ir.Param(name), ptr.elem)
        return super().load(ptr, span)

    def library_array_call(self, obj, obj_c, fn: str, args, c):
        """`shape.data()`, `shape[i]`, `shape.size()` of a `const` argument of the C++ library's
        `array` type: its one array member (None where that is not what is called)."""
        if not isinstance(obj, ParamStruct) or fn not in _ARRAY_METHODS:
            return None
        t = canonical(obj_c.type)
        if t.kind in (TK.LVALUEREFERENCE, TK.RVALUEREFERENCE):
            t = canonical(t.get_pointee())
        decl = t.get_declaration()
        if decl is None or decl.spelling != "array" or not _in_std(decl):
            return None
        fields = [f for f in t.get_fields() if canonical(f.type).kind == TK.CONSTANTARRAY]
        if len(fields) != 1:
            return None
        if fn == "size":
            return Scalar(ir.Const(canonical(fields[0].type).element_count), "int")
        ptr = self.param_pointers.get((obj.name, fields[0].spelling))
        if ptr is None:
            raise Unsupported(c, f"'{fn}' of an array argument the kernel may write (not const)")
        if fn == "data":
            return ptr
        (idx_c,) = args
        idx = self.cond(idx_c)
        elem = ptr.index(idx, _add(ptr.offset, scaled(idx, stride(self.size(ptr.elem) or 4, ptr.inner))))
        return self.load(elem, self.span(c))


def _in_std(decl) -> bool:
    """Whether a declaration is the C++ library's (inside namespace `std`, an inline one too)."""
    p = decl.semantic_parent
    while p is not None and p.kind != CK.TRANSLATION_UNIT:
        if p.kind == CK.NAMESPACE and p.spelling == "std":
            return True
        p = p.semantic_parent
    return False
