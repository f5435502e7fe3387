"""Declarations in the C-family lowering: types, kernel parameters, local variables, arrays,
pointers and shared memory, and the scopes that name them.

Separate from expressions and statements because declarations are where a C++ front end grows
most (structs, templates, references); the dialects hook in here for attribute-bound parameters
and builtin variables.
"""

from __future__ import annotations

from dataclasses import replace

from lark import Token, Tree

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported, kind, tokens_of
from analyzer.frontend.c_values import array_start, const_int, FuncRef, Group, LocalRef, LocalStruct, ParamStruct, Pointer, Scalar, SharedScalar, TypeInfo, Value
from analyzer.frontend.types import SCALAR_SIZES, normalize, size_of


# The values an unsigned parameter may take (the type names as types.normalize spells them).
UNSIGNED_RANGES = {name: (0, (1 << bits) - 1) for bits, names in (
    (8, ("uchar", "uint8_t", "unsigned char")), (16, ("ushort", "uint16_t", "unsigned short")),
    (32, ("uint", "uint32_t", "unsigned", "unsigned int")),
    (64, ("ulong", "uint64_t", "size_t", "unsigned long", "unsigned long long", "ulonglong"))) for name in names}


class DeclLowering:
    """Types, parameters and local declarations; mixed into CLowering."""

    group_types: frozenset[str] = frozenset()   # the dialect's cooperative-group types

    def _type_of(self, node: Tree) -> TypeInfo:
        """Type of a param/decl/type_name node: its specs, type_core and pointer declarators."""
        quals: list[str] = []
        base = "int"
        ptr = 0
        ref = False
        for c in node.children:
            if not isinstance(c, Tree):
                continue
            k = kind(c)
            if k == "spec":
                for q in c.children:
                    if isinstance(q, Tree) and kind(q) == "qualifier":
                        quals.append(str(q.children[0]))
            elif k == "type_core":
                words = [str(w) for w in tokens_of(c)]
                base = normalize(words) if any(w in ("unsigned", "signed", "long", "short") for w in words) else words[0]
                if base in self.aliases and len(words) == 1:
                    target = self._alias_type(base)
                    base, ptr, ref = target.base, ptr + target.ptr, ref or target.ref
                    quals.extend(target.quals)
            elif k == "elaborated_type":
                base = str(c.children[-1])
            elif k == "pointer":
                ptr += 1
            elif k == "reference":
                ref = True
        space = None
        for q in quals:
            if q in self.space_of_qualifier:
                space = self.space_of_qualifier[q]
        return TypeInfo(base, ptr, space, ref, tuple(quals))

    space_of_qualifier: dict[str, str] = {}

    def _alias_type(self, name: str) -> TypeInfo:
        """The type a typedef or using-alias names (an alias of an alias too); a struct typedef
        names the struct."""
        seen = getattr(self, "_alias_seen", set())
        if name in seen:
            return TypeInfo(name, 0, None, False, ())
        self._alias_seen = seen | {name}
        try:
            target = self.aliases[name]
            if isinstance(target, str):   # a template's type parameter bound to a builtin type
                return TypeInfo(target, 0, None, False, ())
            return self._type_of(target) if isinstance(target, Tree) else TypeInfo(name, 0, None, False, ())
        finally:
            self._alias_seen = seen

    def _declare_param(self, p: Tree) -> None:
        ty = self._type_of(p)
        names = [c for c in p.children if isinstance(c, Token) and c.type == "NAME"]
        if not names:
            return
        name = str(names[0])
        attrs = [c for c in p.children if isinstance(c, Tree) and kind(c) == "attribute"]
        bound = self._builtin_param(name, ty, attrs)
        if bound is not None:
            self.scopes[0][name] = bound
            return
        if ty.ptr:
            space = ty.space or ir.GLOBAL
            if space == ir.CONSTANT or "const" in ty.quals and space != ir.GLOBAL:
                space = ir.CONSTANT
            size = self.elem_size(ty.base) or 4
            # An OpenCL buffer argument is a cl_mem's start (ir.Buffer.declared).
            self.kernel.buffers[name] = ir.Buffer(name, space, ty.base, size,
                                                  declared=self.lang == "opencl" and space in (ir.GLOBAL, ir.CONSTANT))
            self.scopes[0][name] = Pointer(name, space, ty.base, ir.Const(0))
        elif size_of(ty.base) is None and ty.base not in SCALAR_SIZES:
            # A struct passed by value or constant reference: its scalar fields are uniform
            # parameters; its pointer fields (a structure of arrays) are buffers of their own.
            self.scopes[0][name] = ParamStruct(name)
            self._declare_pointer_fields(name, ty.base)
        else:
            self.kernel.params.append(name)
            self.scopes[0][name] = Scalar(ir.Param(name), ty.base)
            if ty.base in UNSIGNED_RANGES:
                self.kernel.param_ranges[name] = UNSIGNED_RANGES[ty.base]

    def _declare_pointer_fields(self, name: str, struct: str) -> None:
        """`struct SoA { float *x; float *y; }` passed to a kernel: `soa.x` is a buffer named so."""
        item = self.struct_defs.get(struct)
        for f in item.children if item is not None else ():
            if isinstance(f, Tree) and kind(f) == "base_clause":   # a base class's pointers too
                for base in (b for b in f.children if isinstance(b, Tree)):
                    base_name = [c for c in base.children if isinstance(c, Token)][-1]
                    if str(base_name) != struct:
                        self._declare_pointer_fields(name, str(base_name))
            if not (isinstance(f, Tree) and kind(f) == "field_decl"):
                continue
            for d, ty in self.declarators(f):
                if ty.ptr != 1:
                    continue
                space = ty.space or ir.GLOBAL
                bname = f"{name}.{d.children[0]}"
                self.kernel.buffers[bname] = ir.Buffer(bname, space, ty.base, self.elem_size(ty.base) or 4)
                self.scopes[0][bname] = Pointer(bname, space, ty.base, ir.Const(0))

    # Qualifiers of a file-scope variable that lives in device memory, and its space.
    device_variable_qualifiers: dict[str, str] = {}

    def _declare_globals(self) -> None:
        """File-scope declarations, visible to every kernel: shared arrays and scalars (one per
        block), device and constant memory (one per grid; an initializer's values are not
        tracked, so reads of them are arbitrary values), enumerators and `const`/`constexpr`
        integers (numbers). Anything else at file scope (host variables) is not in scope."""
        for enum in self.enums:
            with _placed_at(enum):
                self._declare_enum(enum)
        for decl in self.globals:
            with _placed_at(decl):
                self._declare_global(decl)

    def _declare_global(self, decl: Tree) -> None:
        quals = set(self._type_of(decl).quals)
        for d, ty in self.declarators(decl):
            if quals & self.shared_qualifiers:
                self._declare(d, replace(ty, quals=tuple(q for q in ty.quals if q != "const")), initialized=False)
                continue
            device = [self.device_variable_qualifiers[q] for q in ty.quals if q in self.device_variable_qualifiers]
            immutable = quals & {"const", "constexpr"} or (device and device[-1] == ir.CONSTANT
                                                           and self.constant_space_is_immutable)
            if ty.ptr:
                continue
            if immutable and self._declare_constant(d):
                continue
            if device:
                self._declare_device_variable(d, ty, device[-1])

    def _declare_enum(self, node: Tree) -> None:
        """Enumerators are numbers; an `enum class E`'s are also named `E::X`."""
        scoped = isinstance(node.children[0], Tree) and kind(node.children[0]) == "enum_kw"
        tag = str(node.children[1]) if node.children[1] is not None else None
        value = -1
        for e in node.children:
            if not (isinstance(e, Tree) and kind(e) == "enumerator"):
                continue
            if e.children[1] is not None:
                n = const_int(self._scalar(self.rvalue(e.children[1])))
                if n is None:
                    raise Unsupported(e, "enumerator whose value is not a constant")
                value = n
            else:
                value += 1
            name = str(e.children[0])
            if not scoped:
                self.scopes[0][name] = Scalar(ir.Const(value), "int")
            if tag:
                self.scopes[0][f"{tag}::{name}"] = Scalar(ir.Const(value), "int")

    def _declare_device_variable(self, d: Tree, ty: TypeInfo, space: str) -> None:
        name = str(d.children[0])
        dims = [c for c in d.children if isinstance(c, Tree) and kind(c) == "array_dim"]
        elem_size = self.elem_size(ty.base) or 4
        extents = []
        for dim in dims:
            n = self._scalar(self.rvalue(dim.children[0])) if dim.children[0] is not None else None
            extents.append(const_int(n) if n is not None else None)
        total = elem_size
        for n in extents:
            total = total * n if n is not None and total is not None else None
        bname = self.fresh_var(name)
        self.kernel.buffers[bname] = ir.Buffer(bname, space, ty.base, elem_size, size_bytes=total)
        ptr = array_start(bname, space, ty.base, extents)
        self.scopes[0][name] = ptr if dims else SharedScalar(ptr)

    # Metal's program-scope `constant` variables cannot change; CUDA's `__constant__` ones can
    # (cudaMemcpyToSymbol), so they are memory unless also `const`.
    constant_space_is_immutable = False

    def _declare_constant(self, d: Tree) -> bool:
        """`const int N = 64;` at file scope is the number 64; an initializer that is not a
        constant leaves the name undeclared (its uses are then reported where they are)."""
        init = d.children[-1]
        if len(d.children) < 2 or init is None or (isinstance(init, Tree) and kind(init) in ("array_dim", "attribute")):
            return False
        if any(isinstance(c, Tree) and kind(c) == "array_dim" for c in d.children):
            return False
        try:
            value = const_int(self._scalar(self.rvalue(init)))
        except Unsupported:
            return False
        if value is not None:
            self.scopes[0][str(d.children[0])] = Scalar(ir.Const(value), "int")
            return True
        return False

    def _is_template_param(self, e: ir.Expr) -> bool:
        return any(isinstance(x, ir.Param) for x in _walk(e)) and all(
            not isinstance(x, (ir.Builtin, ir.Read, ir.Opaque, ir.Var)) for x in _walk(e))

    def _builtin_param(self, name, ty, attrs) -> Value | None:
        return None

    def declare_local(self, name: str, value: Value) -> None:
        self.scopes[-1][name] = value

    def fresh_var(self, name: str) -> str:
        n = self.var_counts.get(name, 0)
        self.var_counts[name] = n + 1
        return name if n == 0 else f"{name}#{n}"

    def lookup(self, name: str, node) -> Value:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        builtin = self.builtin_name(name)
        if builtin is not None:
            return builtin
        if name in self.functions:
            return FuncRef(name)
        return FuncRef(name)  # unknown names are treated as external pure functions when called

    def builtin_name(self, name: str) -> Value | None:
        return None

    def stmt_decl_stmt(self, node):
        out: list[ir.Stmt] = []
        for d, ty in self.declarators(node):
            out.extend(self._declare(d, ty))
        return self._flush(out)

    def _declare_local_struct(self, name: str, struct: str, init, span) -> list[ir.Stmt]:
        """`Cell c = cells[i];` or `Cell c;`: one local per scalar member, copied member by member
        from the struct in memory (or another local struct) it is initialised from."""
        if self.struct_layout(struct) is None:
            raise Unsupported(init, f"local variable of struct '{struct}' (a member of unknown size)")
        local = LocalStruct(self.fresh_var(name), struct)
        out = self.copy_struct(local, init, span) if init is not None else []
        self.declare_local(name, local)
        return out

    def declarators(self, node: Tree):
        """(init_declarator, its type) of a declaration: the stars and `&` before the first name are
        the first declarator's (`float *a, b;` declares a float b); a later one has its own."""
        ty = self._type_of(node)
        first = True
        for d in node.children:
            if not isinstance(d, Tree) or kind(d) not in ("init_declarator", "pointer_declarator"):
                continue
            if first:
                yield d, ty
            else:
                own = [kind(c) for c in d.children[:-1]] if kind(d) == "pointer_declarator" else []
                yield (d.children[-1] if own else d), replace(ty, ptr=own.count("pointer"), ref="reference" in own)
            first = False

    def _declare(self, d: Tree, ty: TypeInfo, initialized: bool = True) -> list[ir.Stmt]:
        name = str(d.children[0])
        dims = [c for c in d.children if isinstance(c, Tree) and kind(c) == "array_dim"]
        init = d.children[-1] if len(d.children) > 1 and not (isinstance(d.children[-1], Tree) and kind(d.children[-1]) in ("array_dim", "attribute")) else None
        if not initialized:
            init = None   # a file-scope shared variable's initializer is not allowed by CUDA
        span = self.span(d)
        if dims:
            elem_size = self.elem_size(ty.base) or 4
            space = ir.SHARED if set(ty.quals) & self.shared_qualifiers else ir.PRIVATE
            bname = self.fresh_var(name)
            self.kernel.buffers[bname] = ir.Buffer(bname, space, ty.base, elem_size)
            extents = []
            for dim in dims:
                n = self._scalar(self.rvalue(dim.children[0])) if dim.children[0] is not None else None
                if n is not None and const_int(n) is not None:
                    n = ir.Const(const_int(n))
                if not isinstance(n, ir.Const):
                    if dim is dims[0] and (n is None or self._is_template_param(n)):
                        # `extern __shared__ float s[];` (size set at launch), or `s[N]` with N a
                        # kernel template's symbolic parameter: a size the analysis does not know
                        extents.append(None)
                        continue
                    # (an empty `[]` has no position of its own: the declarator's)
                    raise Unsupported(dim if dim.children[0] is not None else d, "array dimension that is not a constant")
                extents.append(n.value)
            if None not in extents:
                total = elem_size
                for n in extents:
                    total *= n
                self.kernel.buffers[bname].size_bytes = total
            self.declare_local(name, array_start(bname, space, ty.base, extents))
            if init is not None:
                raise Unsupported(init, "array initializer")
            return []
        if ty.ptr:
            if init is None:
                self.declare_local(name, Pointer("?", ir.GLOBAL, ty.base, ir.Const(0)))
                return []
            val = self.rvalue(init)
            if not isinstance(val, Pointer):
                raise Unsupported(init, "pointer initialised from a non-pointer value")
            self.declare_local(name, replace(val, elem=ty.base))
            return []
        if init is not None and ty.base in self.group_types:
            # `cg::thread_block b = cg::this_thread_block();`: the name stands for the group
            val = self.rvalue(init)
            if not isinstance(val, Group):
                raise Unsupported(init, f"'{ty.base}' initialised from something not a cooperative group")
            self.declare_local(name, val)
            return []
        if ty.ref:
            raise Unsupported(d, "local reference variable")
        if ty.base in self.struct_defs and not set(ty.quals) & self.shared_qualifiers:
            return self._declare_local_struct(name, ty.base, init, span)
        if set(ty.quals) & self.shared_qualifiers:
            bname = self.fresh_var(name)
            size = self.elem_size(ty.base) or 4
            self.kernel.buffers[bname] = ir.Buffer(bname, ir.SHARED, ty.base, size, size_bytes=size)
            ptr = Pointer(bname, ir.SHARED, ty.base, ir.Const(0))
            self.declare_local(name, SharedScalar(ptr))
            if init is not None:
                raise Unsupported(init, "initializer of a shared variable")
            return []
        vname = self.fresh_var(name)
        ref = LocalRef(vname, ty.base)
        out: list[ir.Stmt] = []
        if init is not None:
            val = self.rvalue(init)
            out.extend(self._assign_local(ref, val, span))
        self.declare_local(name, ref)
        return out


def _walk(e):
    yield e
    for x in ir.operands(e):
        yield from _walk(x)


class _placed_at:
    """An Unsupported raised without a node (by `_scalar`) outside any statement is placed here."""

    def __init__(self, node):
        self.node = node

    def __enter__(self):
        return self

    def __exit__(self, typ, exc, tb):
        if isinstance(exc, Unsupported) and exc.node is None:
            exc.node = self.node
        return False
